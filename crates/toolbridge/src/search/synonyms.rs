//! Words people use for what tool definitions say otherwise: "folder" for
//! directory, "remove" for delete, "how many" for count. A query's word
//! also looks for the other words of its group (queries only: documents
//! are indexed as written), so BM25 weighs each by its own rarity.
//!
//! Groups are written here because no well-kept crate carries a thesaurus
//! of tool vocabulary (WordNet-sized ones would widen every query). They
//! were written while reading the misses of the benchmark's tasks; the
//! benchmark's held-out tasks, written after them, measure how well they
//! carry over (`cargo bench -p toolbridge --bench search`).

/// Each line is one group of words that stand for each other.
pub(crate) const GROUPS: &[&str] = &[
    "directory folder dir",
    "delete remove erase forget",
    "create make new",
    "count many number",
    "navigate open visit browse",
    "fetch grab download retrieve",
    "url link address website",
    "document record row entry",
    "memory remember memorize recall",
    "geocode latitude longitude coordinates",
    "place shop restaurant cafe coffee store business",
    "elevation altitude height high",
    "distance far travel",
    "terminal command process",
    "emulate simulate pretend throttle",
    "screenshot capture",
    "image picture photo png jpg jpeg media",
    "history log",
    "diff compare",
    "repository repo",
    "sum add plus total",
    "kill terminate",
    "message post send",
    "issue ticket bug",
    "pull pr",
    "config configuration setting preference",
];
