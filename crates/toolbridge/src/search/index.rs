//! [`ToolIndex`]: BM25 over tool definitions, as the `bm25` crate weighs
//! it (hashed terms, Okapi BM25 with k1 = 1.2, b = 0.75, the average length
//! fitted to the tools indexed), with a posting list per term, scored term
//! at a time.
//!
//! A tool's document is its name (three times: the name is the strongest
//! hint), title (twice), server's config name and reported name,
//! description, and the names and descriptions of its parameters (two
//! levels of `properties` deep). Words come from [`Words`]: identifiers
//! split, stop words dropped, stemmed; a query's words also look for their
//! synonyms (`synonyms`).
//!
//! The index is immutable: a changed tool list builds a new one, which
//! keeps the average length, and so every score, true to the list.
//!
//! # Why the weights are computed here, not by `bm25::Embedder`
//!
//! `Embedder::embed` takes a document as one text and runs its tokenizer
//! over it (a `Tokenizer` returns a `String` per word), hashes every word
//! and counts the hashes in a new `HashMap` per document. A build had the
//! words already (each distinct run tokenized once, [`WordMemo`]), so it
//! joined them into a text for the embedder to split, allocate and hash
//! again: at 10,000 tools that build ([`ToolIndex::with_bm25_embedder`])
//! takes 1.6-2.3x this one's time on a CPU (`cargo bench --bench search` times
//! both).
//! The crate has no way to embed words already hashed, so the build hashes
//! each distinct word once with the embedder's own hash
//! ([`term_hash`]), counts a document's terms in an array by term id and
//! computes the embedder's weight, `tf × (k1 + 1) / (tf + k1 × (1 − b + b
//! × len / avgdl))`, with the same `f32` operations in the same order: the
//! same weights to the bit, so the same scores and ranking. A test checks
//! that, weight for weight, against the embedder and, query for query,
//! against `bm25::Scorer` on the 21 real servers of the benchmark.

use std::sync::Arc;

use bm25::EmbedderBuilder;
use rustc_hash::FxHashMap;
use serde_json::Value;

use super::tokenize::{Spaces, WordMemo, Words, term_hash};
use crate::tools::McpTool;

/// How many times the name's words count.
const NAME_WEIGHT: usize = 3;
/// How many times the title's words count.
const TITLE_WEIGHT: usize = 2;
/// How deep parameters are read (`properties` of `properties`).
const PARAMETER_DEPTH: usize = 2;
/// From how many tools a build reads the tools' words on more than one
/// thread (the tokenizer is most of a build; docs/performance.md, "Tool
/// search", has the figures); below this a thread costs more than it
/// saves.
const PARALLEL_FROM: usize = 2_000;
/// At most this many threads read words.
const MAX_THREADS: usize = 4;
/// BM25's k1 and b, `bm25::Embedder`'s defaults.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// A tool found by [`ToolIndex::search`], with its BM25 score (higher is a
/// better match; only comparable within one search).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredTool<'a> {
    /// The tool, as listed.
    pub tool: &'a McpTool,
    /// Its score for the query; always above zero.
    pub score: f32,
}

/// A search index over tool lists (one per server, or any other grouping).
pub struct ToolIndex {
    /// The lists indexed, as given.
    lists: Vec<Arc<Vec<McpTool>>>,
    /// Document id → (list, position in it).
    docs: Vec<(u32, u32)>,
    words: Words,
    /// A term's hash ([`term_hash`]) → its id, the position of its posting
    /// list.
    terms: FxHashMap<u32, u32>,
    /// Per term id, the documents that have it, each with the term's BM25
    /// weight in it, in document order: a search adds up `idf × weight`
    /// term at a time, the sum `bm25::Scorer` computes document at a time
    /// (which scanned each document's terms for each query term: 16 ms at
    /// 10,000 tools).
    postings: Vec<Vec<(u32, f32)>>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.docs.len())
            .finish_non_exhaustive()
    }
}

/// Every tool's terms, read once for a build.
struct Documents {
    docs: Vec<(u32, u32)>,
    /// Every document's terms, one after another.
    terms: Vec<u32>,
    /// Where each document's terms end in `terms`.
    ends: Vec<usize>,
    avgdl: f32,
}

impl Documents {
    /// Every tool's terms, with the memo of the words they were made from.
    /// From [`PARALLEL_FROM`] tools on, the tools are read in contiguous
    /// parts on a thread each, every part with a memo of its own, and the
    /// parts' terms then renumbered into the first part's memo in order:
    /// the terms and first words a single thread would have seen, and so
    /// the same postings (ids aside, which a search never shows).
    fn read<'w>(
        lists: &[Arc<Vec<McpTool>>],
        words: &'w Words,
        threads: usize,
    ) -> (Self, WordMemo<'w>) {
        let tools: Vec<(u32, u32, &McpTool)> = lists
            .iter()
            .enumerate()
            .flat_map(|(l, list)| {
                list.iter()
                    .enumerate()
                    .map(move |(t, tool)| (l as u32, t as u32, tool))
            })
            .collect();
        let mut parts: Vec<Part<'w>> = if threads <= 1 || tools.is_empty() {
            vec![Part::read(words, &tools)]
        } else {
            let size = tools.len().div_ceil(threads);
            std::thread::scope(|scope| {
                let handles: Vec<_> = tools
                    .chunks(size)
                    .map(|part| scope.spawn(move || Part::read(words, part)))
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| {
                        handle
                            .join()
                            .unwrap_or_else(|e| std::panic::resume_unwind(e))
                    })
                    .collect()
            })
        };
        let first = parts.remove(0);
        let mut memo = first.memo;
        let mut terms = first.terms;
        let mut ends = first.ends;
        for part in parts {
            let ids = memo.absorb(part.memo);
            let offset = terms.len();
            terms.extend(part.terms.iter().map(|&id| ids[id as usize]));
            ends.extend(part.ends.iter().map(|end| end + offset));
        }
        let docs: Vec<(u32, u32)> = tools.iter().map(|&(l, t, _)| (l, t)).collect();
        let avgdl = match docs.len() {
            0 => 1.0,
            n => (terms.len() as f32 / n as f32).max(1.0),
        };
        let documents = Documents {
            docs,
            terms,
            ends,
            avgdl,
        };
        (documents, memo)
    }

    /// Each document's id and terms.
    fn each(&self) -> impl Iterator<Item = (u32, &[u32])> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .enumerate()
            .map(|(id, (start, &end))| (id as u32, &self.terms[start..end]))
    }
}

/// How many threads read the words of `tools` tools.
fn threads_for(tools: usize) -> usize {
    if tools < PARALLEL_FROM {
        return 1;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
}

/// The terms of some tools, read by one thread.
struct Part<'w> {
    memo: WordMemo<'w>,
    terms: Vec<u32>,
    ends: Vec<usize>,
}

impl<'w> Part<'w> {
    fn read(words: &'w Words, tools: &[(u32, u32, &McpTool)]) -> Self {
        let mut memo = words.memo();
        let mut terms = Vec::new();
        let mut ends = Vec::with_capacity(tools.len());
        for (_, _, tool) in tools {
            document(&mut memo, tool, &mut terms);
            ends.push(terms.len());
        }
        Part { memo, terms, ends }
    }
}

/// The weight `bm25::Embedder` gives a term found `frequency` times in a
/// document of `length` terms: the same operations on `f32`, in its order.
fn weight(frequency: u32, length: usize, avgdl: f32) -> f32 {
    let frequency = frequency as f32;
    let numerator = frequency * (K1 + 1.0);
    let denominator = frequency + K1 * (1.0 - B + B * (length as f32 / avgdl));
    numerator / denominator
}

impl ToolIndex {
    /// Indexes every tool of `lists`.
    pub fn new(lists: impl IntoIterator<Item = Arc<Vec<McpTool>>>) -> Self {
        let lists: Vec<Arc<Vec<McpTool>>> = lists.into_iter().collect();
        let threads = threads_for(lists.iter().map(|list| list.len()).sum());
        Self::built_on(lists, threads)
    }

    /// [`ToolIndex::new`], reading words on `threads` threads.
    fn built_on(lists: Vec<Arc<Vec<McpTool>>>, threads: usize) -> Self {
        let words = Words::default();
        let (documents, memo) = Documents::read(&lists, &words, threads);
        let mut postings: Vec<Vec<(u32, f32)>> = vec![Vec::new(); memo.len()];
        // A document's count of each term, by id, and the terms it has.
        let mut counts = vec![0u32; memo.len()];
        let mut distinct = Vec::new();
        for (id, terms) in documents.each() {
            for &term in terms {
                let count = &mut counts[term as usize];
                if *count == 0 {
                    distinct.push(term);
                }
                *count += 1;
            }
            for term in distinct.drain(..) {
                let count = std::mem::take(&mut counts[term as usize]);
                postings[term as usize].push((id, weight(count, terms.len(), documents.avgdl)));
            }
        }
        let terms = memo.into_ids();
        ToolIndex {
            lists,
            docs: documents.docs,
            words,
            terms,
            postings,
        }
    }

    /// The index [`ToolIndex::new`] builds, built as it was before it
    /// computed the weights itself: each document's words joined into a
    /// text and weighed by `bm25::Embedder`. Kept as what the fast build is
    /// checked against (the same postings, weight for weight) and timed
    /// against (`cargo bench --bench search`); not for use.
    #[doc(hidden)]
    pub fn with_bm25_embedder(lists: impl IntoIterator<Item = Arc<Vec<McpTool>>>) -> Self {
        let lists: Vec<Arc<Vec<McpTool>>> = lists.into_iter().collect();
        let words = Words::default();
        let threads = threads_for(lists.iter().map(|list| list.len()).sum());
        let (documents, memo) = Documents::read(&lists, &words, threads);
        let embedder = EmbedderBuilder::<u32, Spaces>::with_avgdl(documents.avgdl).build();
        let mut postings: Vec<Vec<(u32, f32)>> = vec![Vec::new(); memo.len()];
        let mut text = String::new();
        for (id, terms) in documents.each() {
            text.clear();
            for &term in terms {
                text.push_str(memo.word(term));
                text.push(' ');
            }
            for term in embedder.embed(&text).iter() {
                let list = &mut postings[memo.ids()[&term.index] as usize];
                // A term twice in one embedding: the first counts, as
                // in `bm25::Scorer`.
                if list.last().is_none_or(|(doc, _)| *doc != id) {
                    list.push((id, term.value));
                }
            }
        }
        let terms = memo.into_ids();
        ToolIndex {
            lists,
            docs: documents.docs,
            words,
            terms,
            postings,
        }
    }

    /// Indexes `tools`.
    pub fn from_tools(tools: Vec<McpTool>) -> Self {
        Self::new([Arc::new(tools)])
    }

    /// How many tools are indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// True when no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The lists indexed, as given to [`ToolIndex::new`].
    pub fn lists(&self) -> &[Arc<Vec<McpTool>>] {
        &self.lists
    }

    /// Every tool indexed, in the order given.
    pub fn tools(&self) -> impl Iterator<Item = &McpTool> {
        self.lists.iter().flat_map(|list| list.iter())
    }

    /// The `limit` tools that best match `query` (words describing a task,
    /// or a tool's name), best first; ties keep the order the tools were
    /// indexed in. A query that matches nothing gives an empty list.
    pub fn search(&self, query: &str, limit: usize) -> Vec<ScoredTool<'_>> {
        if limit == 0 {
            return Vec::new();
        }
        // Each word once (a word said twice is not a stronger query), and
        // its synonyms.
        let terms = self.words.query(query);
        if terms.is_empty() {
            return Vec::new();
        }
        // Okapi BM25: the sum over the query's terms of idf × the term's
        // weight in the document, added in the query's order.
        let n = self.docs.len() as f32;
        let mut scores = vec![0f32; self.docs.len()];
        let mut seen = vec![false; self.docs.len()];
        let mut touched = Vec::new();
        for word in &terms {
            let Some(&term) = self.terms.get(&term_hash(word)) else {
                continue;
            };
            let list = &self.postings[term as usize];
            let frequency = list.len() as f32;
            let idf = (1f32 + (n - frequency + 0.5) / (frequency + 0.5)).ln();
            for &(doc, weight) in list {
                if !std::mem::replace(&mut seen[doc as usize], true) {
                    touched.push(doc);
                }
                scores[doc as usize] += idf * weight;
            }
        }
        let mut matches: Vec<(u32, f32)> = touched
            .into_iter()
            .map(|doc| (doc, scores[doc as usize]))
            .filter(|(_, score)| *score > 0.0)
            .collect();
        matches.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        matches.truncate(limit);
        matches
            .into_iter()
            .map(|(id, score)| {
                let (list, at) = self.docs[id as usize];
                ScoredTool {
                    tool: &self.lists[list as usize][at as usize],
                    score,
                }
            })
            .collect()
    }
}

/// The terms `tool` is found by, appended to `terms`.
fn document(words: &mut WordMemo<'_>, tool: &McpTool, terms: &mut Vec<u32>) {
    let start = terms.len();
    words.extend(&tool.name, terms);
    let name = terms.len();
    for _ in 1..NAME_WEIGHT {
        terms.extend_from_within(start..name);
    }
    if let Some(title) = &tool.title {
        let start = terms.len();
        words.extend(title, terms);
        let title = terms.len();
        for _ in 1..TITLE_WEIGHT {
            terms.extend_from_within(start..title);
        }
    }
    words.extend(&tool.server_id, terms);
    if tool.server_name != tool.server_id {
        words.extend(&tool.server_name, terms);
    }
    words.extend(&tool.description, terms);
    parameters(words, &tool.input_schema, PARAMETER_DEPTH, terms);
}

/// The names and descriptions of `schema`'s properties, `depth` levels deep.
fn parameters(
    words: &mut WordMemo<'_>,
    schema: &serde_json::Map<String, Value>,
    depth: usize,
    terms: &mut Vec<u32>,
) {
    if depth == 0 {
        return;
    }
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        words.extend(name, terms);
        let Value::Object(property) = property else {
            continue;
        };
        if let Some(Value::String(description)) = property.get("description") {
            words.extend(description, terms);
        }
        parameters(words, property, depth - 1, terms);
        if let Some(Value::Object(items)) = property.get("items") {
            parameters(words, items, depth - 1, terms);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::HashMap;

    fn tool(server: &str, name: &str, description: &str, schema: Value) -> McpTool {
        McpTool {
            id: McpTool::id_for(server, name),
            name: name.into(),
            description: description.into(),
            input_schema: Arc::new(schema.as_object().cloned().unwrap_or_default()),
            server_id: server.into(),
            server_name: server.into(),
            ..McpTool::default()
        }
    }

    fn names<'a>(hits: &[ScoredTool<'a>]) -> Vec<&'a str> {
        hits.iter().map(|h| h.tool.name.as_str()).collect()
    }

    fn sample() -> ToolIndex {
        ToolIndex::from_tools(vec![
            tool(
                "fs",
                "read_file",
                "Read the complete contents of a file.",
                json!({
                "type": "object", "properties": {"path": {"type": "string"}}}),
            ),
            tool(
                "fs",
                "write_file",
                "Create a new file or overwrite one.",
                json!({
                "type": "object", "properties": {"path": {}, "content": {}}}),
            ),
            tool(
                "time",
                "getCurrentTime",
                "Current time in a time zone.",
                json!({
                "type": "object", "properties": {"timezone": {
                    "type": "string", "description": "IANA zone name, e.g. Europe/Oslo"}}}),
            ),
            tool(
                "git",
                "git_log",
                "Show the commit history.",
                json!({
                "type": "object", "properties": {"max_count": {"type": "integer"}}}),
            ),
        ])
    }

    #[test]
    fn a_task_in_words_finds_the_tool_best_first() {
        let index = sample();
        assert_eq!(
            names(&index.search("what time is it", 2))[0],
            "getCurrentTime"
        );
        assert_eq!(
            names(&index.search("show me the commit history", 1)),
            ["git_log"]
        );
        let hits = index.search("reading a file", 5);
        assert_eq!(names(&hits)[0], "read_file");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(hits.iter().all(|h| h.score > 0.0));
    }

    #[test]
    fn parameter_descriptions_and_server_names_are_searched() {
        let index = sample();
        assert_eq!(names(&index.search("Oslo", 5)), ["getCurrentTime"]);
        assert_eq!(names(&index.search("git", 5)), ["git_log"]);
    }

    #[test]
    fn no_match_is_an_empty_list() {
        let index = sample();
        assert!(index.search("zebra xylophone", 5).is_empty());
        assert!(index.search("", 5).is_empty());
        assert!(index.search("the of and", 5).is_empty());
        assert!(index.search("file", 0).is_empty());
        assert!(ToolIndex::new([]).search("file", 5).is_empty());
    }

    /// The 21 real servers of the search benchmark (`benches/search.rs`),
    /// each list under its server.
    fn real_lists() -> Vec<Arc<Vec<McpTool>>> {
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search");
        let mut files: Vec<_> = std::fs::read_dir(fixtures)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
            .collect();
        files.sort();
        files
            .iter()
            .map(|file| {
                let server = file.file_name().unwrap().to_str().unwrap();
                let server = server.strip_suffix(".tools.json").unwrap();
                let fixture: Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
                let reported = fixture["serverInfo"]["name"].as_str().unwrap_or(server);
                let tools = fixture["tools"].as_array().unwrap().iter().map(|tool| {
                    let tool: rmcp::model::Tool = serde_json::from_value(tool.clone()).unwrap();
                    McpTool::from_rmcp(server, reported, &tool)
                });
                Arc::new(tools.collect())
            })
            .collect()
    }

    /// The benchmark's tasks, and every tool's name and description, as
    /// queries.
    fn queries(lists: &[Arc<Vec<McpTool>>]) -> Vec<String> {
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search");
        let tasks: Value =
            serde_json::from_slice(&std::fs::read(fixtures.join("tasks.json")).unwrap()).unwrap();
        let mut queries: Vec<String> = tasks["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["task"].as_str().unwrap().to_owned())
            .collect();
        assert!(queries.len() >= 100, "{}", queries.len());
        for tool in lists.iter().flat_map(|l| l.iter()) {
            queries.push(tool.name.clone());
            queries.push(tool.description.clone());
        }
        queries
    }

    /// Each term's postings, by its hash.
    fn postings_by_hash(index: &ToolIndex) -> HashMap<u32, Vec<(u32, u32)>> {
        index
            .terms
            .iter()
            .map(|(hash, &id)| {
                let list = &index.postings[id as usize];
                (
                    *hash,
                    list.iter().map(|&(doc, w)| (doc, w.to_bits())).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn the_build_weighs_every_term_as_bm25s_embedder_does() {
        let lists = real_lists();
        assert_eq!(lists.len(), 21);
        let fast = ToolIndex::new(lists.clone());
        let embedded = ToolIndex::with_bm25_embedder(lists);
        assert_eq!(fast.len(), 314);
        assert!(fast.terms.len() > 1000, "{}", fast.terms.len());
        assert_eq!(postings_by_hash(&fast), postings_by_hash(&embedded));
    }

    #[test]
    fn rankings_on_the_real_servers_are_bm25_scorers() {
        let lists = real_lists();
        let index = ToolIndex::new(lists.clone());
        // bm25's own index: each document's words (the memo's, which are
        // the tokenizer's: `tokenize` tests that) as a text, embedded and
        // scored by the crate.
        let words = Words::default();
        let threads = threads_for(lists.iter().map(|list| list.len()).sum());
        let (documents, memo) = Documents::read(&lists, &words, threads);
        let embedder = EmbedderBuilder::<u32, Spaces>::with_avgdl(documents.avgdl).build();
        let mut scorer = bm25::Scorer::<u32>::new();
        let mut keys = Vec::new();
        for (id, terms) in documents.each() {
            let text: Vec<&str> = terms.iter().map(|&t| memo.word(t)).collect();
            scorer.upsert(&id, embedder.embed(&text.join(" ")));
            let (list, at) = documents.docs[id as usize];
            let tool = &lists[list as usize][at as usize];
            keys.push(format!("{}/{}", tool.server_id, tool.name));
        }
        let key = |tool: &McpTool| format!("{}/{}", tool.server_id, tool.name);
        let mut compared = 0;
        for query in queries(&lists) {
            let ours: Vec<(String, u32)> = index
                .search(&query, usize::MAX)
                .iter()
                .map(|hit| (key(hit.tool), hit.score.to_bits()))
                .collect();
            let terms = words.query(&query);
            let mut theirs = scorer.matches(&embedder.embed(&terms.join(" ")));
            // Ties in the order the tools were indexed, as ours.
            theirs.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
            let theirs: Vec<(String, u32)> = theirs
                .iter()
                .filter(|m| m.score > 0.0)
                .map(|m| (keys[m.id as usize].clone(), m.score.to_bits()))
                .collect();
            assert_eq!(ours, theirs, "{query:?}");
            compared += usize::from(!ours.is_empty());
        }
        assert!(compared > 700, "{compared}");
    }

    #[test]
    fn words_read_on_several_threads_make_the_same_index() {
        // The real lists under 8 server names each: 2,512 tools.
        let lists: Vec<Arc<Vec<McpTool>>> = (0..8)
            .flat_map(|copy| {
                real_lists().into_iter().map(move |list| {
                    let renamed = list.iter().map(|tool| McpTool {
                        server_id: format!("{}{copy}", tool.server_id),
                        ..tool.clone()
                    });
                    Arc::new(renamed.collect::<Vec<_>>())
                })
            })
            .collect();
        let one = ToolIndex::built_on(lists.clone(), 1);
        let expected = postings_by_hash(&one);
        for threads in [2, 3, 7] {
            let several = ToolIndex::built_on(lists.clone(), threads);
            assert_eq!(several.docs, one.docs);
            assert_eq!(postings_by_hash(&several), expected, "{threads} threads");
        }
        assert!(one.len() >= PARALLEL_FROM, "{}", one.len());
        assert_eq!(threads_for(PARALLEL_FROM - 1), 1);
    }

    #[test]
    fn limit_caps_the_hits() {
        let index = sample();
        assert_eq!(index.search("file", 1).len(), 1);
        assert_eq!(index.search("file", 10).len(), 2);
    }
}
