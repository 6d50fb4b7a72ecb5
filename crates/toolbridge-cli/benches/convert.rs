//! Converting 10,000 realistic tools to every provider format, against a
//! serde_json deep clone of the same schemas (the baseline: the least any
//! conversion must do is read every schema and build a new one).
//!
//! The tools are the real tool lists of server-everything and
//! server-filesystem (captured fixtures), repeated under many server names.
//! `cargo bench -p toolbridge-cli --bench convert [-- --rounds N]`.

use std::{hint::black_box, sync::Arc, time::Instant};

use serde_json::Value;
use toolbridge::{
    format::{Format, FormatOptions, NameTable, convert_tools},
    tools::McpTool,
};

/// The allocator the `toolbridge` binary ships with (see `common`); the
/// clone baseline shares it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TOOLS: usize = 10_000;

fn fixture(name: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../toolbridge/tests/fixtures")
        .join(name);
    let text = std::fs::read_to_string(&path).expect("fixture");
    let value: Value = serde_json::from_str(&text).expect("fixture JSON");
    match value {
        Value::Array(tools) => tools,
        Value::Object(mut o) => match o.remove("tools") {
            Some(Value::Array(tools)) => tools,
            _ => panic!("{} has no tools", path.display()),
        },
        _ => panic!("{} is not a tool list", path.display()),
    }
}

fn tools() -> Vec<McpTool> {
    let mut source = fixture("server-everything.tools.json");
    source.extend(fixture("server-filesystem.tools.json"));
    (0..TOOLS)
        .map(|i| {
            let raw = &source[i % source.len()];
            let server = format!("server{}", i / source.len());
            let name = raw["name"].as_str().expect("tool name");
            McpTool {
                id: McpTool::id_for(&server, name),
                name: name.to_owned(),
                description: raw["description"].as_str().unwrap_or_default().to_owned(),
                input_schema: Arc::new(raw["inputSchema"].as_object().cloned().unwrap_or_default()),
                server_id: server.clone(),
                server_name: server,
                ..Default::default()
            }
        })
        .collect()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let rounds: usize = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5);
    let tools = tools();
    let formats = [
        Format::OpenAi,
        Format::OpenAiResponses,
        Format::Anthropic,
        Format::Gemini,
    ];
    let options = FormatOptions::default();
    let strict = FormatOptions {
        strict: true,
        ..FormatOptions::default()
    };
    let mut clone_ms = Vec::new();
    let mut names_ms = Vec::new();
    let mut per_format: Vec<Vec<f64>> = vec![Vec::new(); formats.len() + 1];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); formats.len() + 1];
    for _ in 0..rounds {
        // Baseline: a deep clone of every schema (and the tool's strings).
        let start = Instant::now();
        let cloned: Vec<Value> = tools
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.id.clone(),
                    "description": t.description.clone(),
                    "schema": Value::Object((*t.input_schema).clone()),
                })
            })
            .collect();
        black_box(&cloned);
        let clone = start.elapsed().as_secs_f64() * 1000.0;
        clone_ms.push(clone);

        let start = Instant::now();
        let names = NameTable::for_tools(&tools);
        names_ms.push(start.elapsed().as_secs_f64() * 1000.0);

        for (i, (format, opts)) in formats
            .iter()
            .map(|f| (*f, &options))
            .chain(std::iter::once((Format::OpenAi, &strict)))
            .enumerate()
        {
            let start = Instant::now();
            black_box(convert_tools(format, &tools, &names, opts));
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            per_format[i].push(ms);
            ratios[i].push(ms / clone);
        }
    }
    println!("{TOOLS} tools, {rounds} rounds, medians");
    println!("{:<22} {:>10} {:>14}", "what", "ms", "× deep clone");
    println!(
        "{:<22} {:>10.2} {:>14}",
        "deep clone (baseline)",
        median(clone_ms),
        "1.00"
    );
    println!("{:<22} {:>10.2} {:>14}", "name table", median(names_ms), "");
    let labels = [
        "openai",
        "openai-responses",
        "anthropic",
        "gemini",
        "openai --strict",
    ];
    for (i, label) in labels.iter().enumerate() {
        println!(
            "{:<22} {:>10.2} {:>14.2}",
            label,
            median(per_format[i].clone()),
            median(ratios[i].clone())
        );
    }
    for (i, label) in labels.iter().enumerate() {
        println!(
            "RATIO convert {label}/clone={:.2}",
            median(ratios[i].clone())
        );
    }
}
