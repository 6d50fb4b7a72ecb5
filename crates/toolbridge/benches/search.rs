//! Tool search: how often the right tool is found, what search mode saves
//! a model per turn, and how fast the index is.
//!
//! Data (in the repository): the tool lists of 21 real servers, captured
//! by `scripts/capture-tool-fixtures.sh` into `tests/fixtures/search/`
//! (314 tools), and `tests/fixtures/search/tasks.json`, tasks in a user's
//! words each with the tools that do it.
//!
//! - Accuracy: top-1 and top-3 over the tasks (a task whose answer is one
//!   of several equal tools counts when any of them is there), the
//!   held-out tasks (written after the synonym groups) apart, and the
//!   tasks missed in the top 3.
//! - Tokens (tiktoken's o200k_base, bundled with `tiktoken-rs`): the
//!   Anthropic and OpenAI definitions of every tool, which a model gets on
//!   every turn, against the two definitions of search mode
//!   (`adapter::search`), and what one search answer costs when the model
//!   searches (5 tools, the median over the tasks).
//! - Speed at 10,000 tools (the real lists repeated under other server
//!   names): index build and one search, medians, against issue 28's goals
//!   (build at most 200 ms, search at most 1 ms); the baselines measured in
//!   the same run are the same search over the 314 real tools and a plain
//!   every-word substring scan of names and descriptions at 10,000.
//!
//! `cargo bench -p toolbridge --bench search`

use std::{
    path::{Path, PathBuf},
    sync::Arc,
    time::{Duration, Instant},
};

use serde_json::Value;
use toolbridge::{
    Format, FormatOptions, McpTool, NameTable,
    adapter::search::{call_tool_definition, search_result, search_tool_definition},
    convert_tools,
    search::ToolIndex,
};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search")
}

/// Every fixture's tools, the server named after its file.
fn real_tools() -> Vec<McpTool> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    let mut tools = Vec::new();
    for file in files {
        let server = file
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".tools.json"))
            .expect("name")
            .to_owned();
        let fixture: Value =
            serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
        let reported = fixture["serverInfo"]["name"]
            .as_str()
            .unwrap_or(&server)
            .to_owned();
        for tool in fixture["tools"].as_array().expect("tools") {
            let tool: rmcp::model::Tool = serde_json::from_value(tool.clone()).expect("a tool");
            tools.push(McpTool::from_rmcp(&server, &reported, &tool));
        }
    }
    tools
}

struct Task {
    task: String,
    expect: Vec<String>,
    /// Written after the synonym groups: reported apart.
    held_out: bool,
}

fn tasks() -> Vec<Task> {
    let file: Value =
        serde_json::from_slice(&std::fs::read(fixtures().join("tasks.json")).expect("tasks"))
            .expect("json");
    file["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| Task {
            task: t["task"].as_str().expect("task").to_owned(),
            expect: t["expect"]
                .as_array()
                .expect("expect")
                .iter()
                .map(|e| e.as_str().expect("server/tool").to_owned())
                .collect(),
            held_out: t["heldOut"].as_bool().unwrap_or(false),
        })
        .collect()
}

fn key(tool: &McpTool) -> String {
    format!("{}/{}", tool.server_id, tool.name)
}

/// Index builds timed at 10,000 tools.
const BUILDS: usize = 7;
/// Issue 28's goals at 10,000 tools: the median index build and search.
const BUILD_GOAL: Duration = Duration::from_millis(200);
const SEARCH_GOAL: Duration = Duration::from_millis(1);

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn micros(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let tools = real_tools();
    let servers = {
        let mut s: Vec<&str> = tools.iter().map(|t| t.server_id.as_str()).collect();
        s.dedup();
        s.len()
    };
    let tasks = tasks();
    println!(
        "tool search: {} tools of {servers} servers, {} tasks ({} with more than one right tool)",
        tools.len(),
        tasks.len(),
        tasks.iter().filter(|t| t.expect.len() > 1).count()
    );

    // Accuracy.
    let index = ToolIndex::from_tools(tools.clone());
    let (mut top1, mut top3) = (0, 0);
    // The tasks written after the query thesaurus was tuned, on their own.
    let (mut held_out, mut held_out_top3) = (0, 0);
    let mut missed = Vec::new();
    for task in &tasks {
        let found: Vec<String> = index
            .search(&task.task, 3)
            .iter()
            .map(|h| key(h.tool))
            .collect();
        if found.first().is_some_and(|f| task.expect.contains(f)) {
            top1 += 1;
        }
        let hit = found.iter().any(|f| task.expect.contains(f));
        if task.held_out {
            held_out += 1;
            held_out_top3 += usize::from(hit);
        }
        if hit {
            top3 += 1;
        } else {
            missed.push((task, found));
        }
    }
    let n = tasks.len() as f64;
    println!(
        "accuracy: top-1 {top1}/{} = {:.1}%, top-3 {top3}/{} = {:.1}%",
        tasks.len(),
        100.0 * top1 as f64 / n,
        tasks.len(),
        100.0 * top3 as f64 / n
    );
    println!(
        "  held-out tasks: top-3 {held_out_top3}/{held_out} = {:.1}%",
        100.0 * held_out_top3 as f64 / held_out.max(1) as f64
    );
    for (task, found) in &missed {
        println!(
            "  missed: {:?} expected {:?}, got {:?}",
            task.task, task.expect, found
        );
    }

    // Tokens.
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base is bundled");
    let count = |value: &Value| bpe.encode_with_special_tokens(&value.to_string()).len();
    let names = NameTable::for_tools(&tools);
    let options = FormatOptions::default();
    let all_anthropic = count(&convert_tools(Format::Anthropic, &tools, &names, &options));
    let all_openai = count(&convert_tools(Format::OpenAi, &tools, &names, &options));
    let pair = |shape: fn(&str, &str, &serde_json::Map<String, Value>) -> Value| {
        let (search_description, search_schema) = search_tool_definition();
        let (call_description, call_schema) = call_tool_definition();
        Value::Array(vec![
            shape("search_tools", search_description, &search_schema),
            shape("call_tool", call_description, &call_schema),
        ])
    };
    let pair_anthropic = count(&pair(
        |name, description, schema| serde_json::json!({"name": name, "description": description, "input_schema": schema}),
    ));
    let pair_openai = count(&pair(|name, description, schema| {
        serde_json::json!({"type": "function", "function":
            {"name": name, "description": description, "parameters": schema}})
    }));
    let mut answers: Vec<usize> = tasks
        .iter()
        .map(|task| {
            let arguments = serde_json::json!({"query": task.task});
            let name_of = |t: &McpTool| names.name_for(t).into_owned();
            let result = search_result(&index, name_of, arguments.as_object().expect("object"));
            result.structured_content.as_ref().map(&count).unwrap_or(0)
        })
        .collect();
    answers.sort();
    let answer = answers[answers.len() / 2];
    println!("tokens for tool definitions per turn (o200k_base):");
    for (provider, all, pair) in [
        ("anthropic", all_anthropic, pair_anthropic),
        ("openai", all_openai, pair_openai),
    ] {
        println!(
            "  {provider}: all {} tools {all}, search mode {pair} ({:.1}% fewer); \
                  a search answer (5 tools) {answer}, so a turn that searches {} ({:.1}% fewer)",
            tools.len(),
            100.0 * (1.0 - pair as f64 / all as f64),
            pair + answer,
            100.0 * (1.0 - (pair + answer) as f64 / all as f64)
        );
    }

    // Speed at 10,000 tools.
    let mut large = Vec::with_capacity(10_000);
    'fill: for copy in 0.. {
        for tool in &tools {
            if large.len() == 10_000 {
                break 'fill;
            }
            let mut tool = tool.clone();
            tool.server_id = format!("{}-{copy}", tool.server_id);
            tool.id = McpTool::id_for(&tool.server_id, &tool.name);
            large.push(tool);
        }
    }
    let large = Arc::new(large);
    let builds: Vec<Duration> = (0..BUILDS)
        .map(|_| {
            let started = Instant::now();
            let index = ToolIndex::new([large.clone()]);
            let took = started.elapsed();
            assert_eq!(index.len(), 10_000);
            took
        })
        .collect();
    let large_index = ToolIndex::new([large.clone()]);
    let rounds = 5;
    let time_searches = |index: &ToolIndex| {
        let mut samples = Vec::new();
        for _ in 0..rounds {
            for task in &tasks {
                let started = Instant::now();
                let hits = index.search(&task.task, 5);
                samples.push(started.elapsed());
                std::hint::black_box(hits);
            }
        }
        median(samples)
    };
    let search_10k = time_searches(&large_index);
    let search_real = time_searches(&index);
    let mut scans = Vec::new();
    for _ in 0..rounds {
        for task in &tasks {
            let words: Vec<String> = task
                .task
                .split_whitespace()
                .map(str::to_lowercase)
                .collect();
            let started = Instant::now();
            let matched = large
                .iter()
                .filter(|t| {
                    let text = format!("{} {}", t.name, t.description).to_lowercase();
                    words.iter().all(|w| text.contains(w.as_str()))
                })
                .take(5)
                .count();
            scans.push(started.elapsed());
            std::hint::black_box(matched);
        }
    }
    let scan = median(scans);
    let build = median(builds);
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    println!(
        "speed (medians; {} index builds, {} searches of each kind):",
        BUILDS,
        rounds * tasks.len()
    );
    println!(
        "  index build, 10,000 tools: {} (goal at most {}: {})",
        millis(build),
        millis(BUILD_GOAL),
        verdict(build <= BUILD_GOAL)
    );
    println!(
        "  search, 10,000 tools: {} (goal at most {}: {})",
        micros(search_10k),
        millis(SEARCH_GOAL),
        verdict(search_10k <= SEARCH_GOAL)
    );
    println!(
        "  baseline: search, {} tools: {} (10,000 tools take {:.1}x as long)",
        tools.len(),
        micros(search_real),
        search_10k.as_secs_f64() / search_real.as_secs_f64()
    );
    println!(
        "  baseline: every-word substring scan, 10,000 tools: {} (the index takes {:.2}x its time)",
        micros(scan),
        search_10k.as_secs_f64() / scan.as_secs_f64()
    );
}
