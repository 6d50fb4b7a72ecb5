//! [`ToolIndex`]: BM25 over tool definitions, with the `bm25` crate's
//! embedder (hashed terms weighted by Okapi BM25 with k1 = 1.2, b = 0.75,
//! the average length fitted to the tools indexed) and a posting list per
//! term, scored term at a time.
//!
//! A tool's document is its name (three times: the name is the strongest
//! hint), title (twice), server's config name and reported name,
//! description, and the names and descriptions of its parameters (two
//! levels of `properties` deep). Words come from [`Words`]: identifiers
//! split, stop words dropped, stemmed; a query's words also look for their
//! synonyms (`synonyms`).
//!
//! The index is immutable: a changed tool list builds a new one (10,000
//! tools take 0.3-0.6 s: `cargo bench --bench search`),
//! which keeps the average length, and so every score, true to the list.

use std::{collections::HashMap, sync::Arc};

use bm25::{Embedder, EmbedderBuilder};
use serde_json::Value;

use super::tokenize::{Spaces, WordMemo, Words};
use crate::tools::McpTool;

/// How many times the name's words count.
const NAME_WEIGHT: usize = 3;
/// How many times the title's words count.
const TITLE_WEIGHT: usize = 2;
/// How deep parameters are read (`properties` of `properties`).
const PARAMETER_DEPTH: usize = 2;

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
    embedder: Embedder<u32, Spaces>,
    /// Term → the documents that have it, each with the term's BM25 weight
    /// in it (the embedder's), in document order: a search adds up
    /// `idf × weight` term at a time, the sum `bm25::Scorer` computes
    /// document at a time (which scanned each document's terms for each
    /// query term: 16 ms at 10,000 tools).
    postings: HashMap<u32, Vec<(u32, f32)>>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.docs.len())
            .finish_non_exhaustive()
    }
}

impl ToolIndex {
    /// Indexes every tool of `lists`.
    pub fn new(lists: impl IntoIterator<Item = Arc<Vec<McpTool>>>) -> Self {
        let lists: Vec<Arc<Vec<McpTool>>> = lists.into_iter().collect();
        let words = Words::default();
        let mut memo = words.memo();
        let mut docs = Vec::new();
        let mut texts = Vec::new();
        let mut total = 0usize;
        for (l, list) in lists.iter().enumerate() {
            for (t, tool) in list.iter().enumerate() {
                let terms = document(&mut memo, tool);
                total += terms.len();
                texts.push(terms.join(" "));
                docs.push((l as u32, t as u32));
            }
        }
        let avgdl = match docs.len() {
            0 => 1.0,
            n => (total as f32 / n as f32).max(1.0),
        };
        let embedder = EmbedderBuilder::<u32, Spaces>::with_avgdl(avgdl).build();
        let mut postings: HashMap<u32, Vec<(u32, f32)>> = HashMap::new();
        for (id, text) in texts.iter().enumerate() {
            let id = id as u32;
            for term in embedder.embed(text).iter() {
                let list = postings.entry(term.index).or_default();
                // A term twice in one embedding (a hash collision): the
                // first counts, as in `bm25::Scorer`.
                if list.last().is_none_or(|(doc, _)| *doc != id) {
                    list.push((id, term.value));
                }
            }
        }
        drop(memo);
        ToolIndex {
            lists,
            docs,
            words,
            embedder,
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
        let query = self.embedder.embed(&terms.join(" "));
        // Okapi BM25: the sum over the query's terms of idf × the term's
        // weight in the document, added in the query's order.
        let n = self.docs.len() as f32;
        let mut scores = vec![0f32; self.docs.len()];
        let mut seen = vec![false; self.docs.len()];
        let mut touched = Vec::new();
        for term in query.iter() {
            let Some(list) = self.postings.get(&term.index) else {
                continue;
            };
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

/// The words `tool` is found by.
fn document(words: &mut WordMemo<'_>, tool: &McpTool) -> Vec<String> {
    let mut terms = Vec::new();
    let name = words.of(&tool.name);
    for _ in 0..NAME_WEIGHT {
        terms.extend(name.iter().cloned());
    }
    if let Some(title) = &tool.title {
        let title = words.of(title);
        for _ in 0..TITLE_WEIGHT {
            terms.extend(title.iter().cloned());
        }
    }
    words.extend(&tool.server_id, &mut terms);
    if tool.server_name != tool.server_id {
        words.extend(&tool.server_name, &mut terms);
    }
    words.extend(&tool.description, &mut terms);
    parameters(words, &tool.input_schema, PARAMETER_DEPTH, &mut terms);
    terms
}

/// The names and descriptions of `schema`'s properties, `depth` levels deep.
fn parameters(
    words: &mut WordMemo<'_>,
    schema: &serde_json::Map<String, Value>,
    depth: usize,
    terms: &mut Vec<String>,
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

    #[test]
    fn limit_caps_the_hits() {
        let index = sample();
        assert_eq!(index.search("file", 1).len(), 1);
        assert_eq!(index.search("file", 10).len(), 2);
    }
}
