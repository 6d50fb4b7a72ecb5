//! Finding the tools for a task described in words: a BM25 index over tool
//! definitions ([`ToolIndex`]), for `toolbridge tools search`,
//! [`Pool::search_tools`](crate::pool::Pool::search_tools) and the adapters'
//! "search, then call" pair.
//!
//! Ranking is BM25 as the `bm25` crate weighs it (its term hash and its
//! embedder's weights, to the bit: `index` says why it computes them
//! itself) with the crate's English tokenizer's words (`english` says why
//! it calls the tokenizer's parts itself); what is toolbridge's own is
//! what a tool's document is made of, how tool names are split into words
//! (`tokenize`), and a small thesaurus of tool vocabulary for queries
//! (`synonyms`).

mod cache;
mod english;
mod index;
mod synonyms;
mod tokenize;

pub use cache::IndexCache;
pub use index::{ScoredTool, ToolIndex};
