//! Words for the search index: tool names split where people see word
//! breaks (`read_file`, `readFile`, `ReadFile`, `read-file`, `fs.read` are
//! all "read file"), then the `bm25` crate's English tokenizer (Unicode word
//! boundaries, lowercase, ASCII folding, stop words dropped, Snowball
//! stemming), so that "reading files" meets "read_file".
//!
//! An index build gets its documents' words as terms from a [`WordMemo`]:
//! each distinct run of words tokenized once, each distinct word hashed
//! once.

use std::collections::{BTreeSet, HashMap};

use bm25::{DefaultTokenizer, Language, Tokenizer};
use rustc_hash::FxHashMap;

use super::synonyms::GROUPS;

/// The tokenizer the index uses for documents and queries alike.
#[derive(Debug)]
pub(crate) struct Words {
    english: DefaultTokenizer,
    /// A word (stemmed) → the group of [`GROUPS`] it is in (stemmed).
    synonyms: HashMap<String, usize>,
    groups: Vec<Vec<String>>,
}

impl Default for Words {
    fn default() -> Self {
        let english = DefaultTokenizer::new(Language::English);
        let groups: Vec<Vec<String>> = GROUPS.iter().map(|g| english.tokenize(g)).collect();
        let mut synonyms = HashMap::new();
        for (i, group) in groups.iter().enumerate() {
            for word in group {
                synonyms.entry(word.clone()).or_insert(i);
            }
        }
        Words {
            english,
            synonyms,
            groups,
        }
    }
}

impl Words {
    /// The words of `text`, identifiers split.
    pub(crate) fn of(&self, text: &str) -> Vec<String> {
        self.english.tokenize(&split_identifiers(text))
    }

    /// A memo of [`Words::of`] for one index build: see [`WordMemo`].
    pub(crate) fn memo(&self) -> WordMemo<'_> {
        WordMemo {
            words: self,
            runs: FxHashMap::default(),
            runs_terms: Vec::new(),
            ids: FxHashMap::default(),
            terms: Vec::new(),
        }
    }

    /// The words a query looks for: its own, each once, and the other
    /// words of their synonym groups.
    pub(crate) fn query(&self, text: &str) -> Vec<String> {
        let mut terms: BTreeSet<String> = self.of(text).into_iter().collect();
        let groups: Vec<usize> = terms
            .iter()
            .filter_map(|t| self.synonyms.get(t).copied())
            .collect();
        for group in groups {
            terms.extend(self.groups[group].iter().cloned());
        }
        terms.into_iter().collect()
    }
}

/// [`Words::of`] for the many texts of one index build, as terms: each
/// distinct run of non-space characters tokenized once, and each distinct
/// word hashed once (with the hash `bm25`'s embedder uses) and given an id.
/// Tool lists repeat their words (parameter names, phrases, whole
/// descriptions across servers), and the English tokenizer (Unicode
/// normalization and word breaks, stop words, Snowball stemming) was most
/// of a build's time.
///
/// The same words as [`Words::of`]: the text is folded to ASCII first as
/// the tokenizer folds it (`deunicode`, on the whole text: a text with any
/// non-ASCII character has its line breaks dropped, so
/// "cloudsdk\n\nIMPORTANT" is one word, and a pure ASCII one keeps them),
/// then split at spaces; lowercasing, word breaks, stop words and stemming
/// never reach across a space, so the runs' words are the whole's.
///
/// A term is what the embedder counts: its hash (two words with one hash
/// are one term, as in `bm25`), so an id stands for one hash.
pub(crate) struct WordMemo<'a> {
    words: &'a Words,
    /// A run between spaces, identifiers already split → where its terms
    /// are in `runs_terms` (start, end).
    runs: FxHashMap<Box<str>, (u32, u32)>,
    /// Every run's terms, one after another.
    runs_terms: Vec<u32>,
    /// The hash of each term → its id (ids count up from 0 in the order
    /// the terms are first seen).
    ids: FxHashMap<u32, u32>,
    /// Each id's hash and the first word seen with it.
    terms: Vec<(u32, String)>,
}

impl WordMemo<'_> {
    /// The terms of `text`, appended to `out`.
    pub(crate) fn extend(&mut self, text: &str, out: &mut Vec<u32>) {
        let split = split_identifiers(text);
        // The tokenizer's folding, on the whole text as the tokenizer does
        // it (see above); on the ASCII it gives, the tokenizer's own is a
        // no-op.
        let folded = deunicode::deunicode_with_tofu_cow(&split, "[?]");
        for run in folded.split(' ').filter(|run| !run.is_empty()) {
            let (start, end) = match self.runs.get(run) {
                Some(&range) => range,
                None => {
                    let start = self.runs_terms.len() as u32;
                    for word in self.words.english.tokenize(run) {
                        let hash = term_hash(&word);
                        let id = *self.ids.entry(hash).or_insert_with(|| {
                            self.terms.push((hash, word));
                            (self.terms.len() - 1) as u32
                        });
                        self.runs_terms.push(id);
                    }
                    let range = (start, self.runs_terms.len() as u32);
                    self.runs.insert(run.into(), range);
                    range
                }
            };
            out.extend_from_slice(&self.runs_terms[start as usize..end as usize]);
        }
    }

    /// The terms of `text`.
    #[cfg(test)]
    pub(crate) fn of(&mut self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.extend(text, &mut out);
        out
    }

    /// How many distinct terms have been seen.
    pub(crate) fn len(&self) -> usize {
        self.terms.len()
    }

    /// The hash of term `id`.
    #[cfg(test)]
    pub(crate) fn hash(&self, id: u32) -> u32 {
        self.terms[id as usize].0
    }

    /// The (first) word of term `id`.
    pub(crate) fn word(&self, id: u32) -> &str {
        &self.terms[id as usize].1
    }

    /// Each term's hash → its id.
    pub(crate) fn ids(&self) -> &FxHashMap<u32, u32> {
        &self.ids
    }

    /// Each term's hash → its id.
    pub(crate) fn into_ids(self) -> FxHashMap<u32, u32> {
        self.ids
    }
}

/// The embedder's hash of `word` (its `u32` token embedder's, FxHash):
/// what a term is known by.
pub(crate) fn term_hash(word: &str) -> u32 {
    <u32 as bm25::TokenEmbedder>::embed(word)
}

/// `text` with a space at every break inside an identifier: `_`, `-`, `.`,
/// `/`, `:` and a change from lower to upper case (`readFile`) or from an
/// acronym to a word (`HTTPServer` is "HTTP Server"); letters and digits
/// stay together (`s3`, `v2`).
pub(crate) fn split_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    let mut before: Option<char> = None;
    while let Some(c) = chars.next() {
        if matches!(c, '_' | '-' | '.' | '/' | ':') {
            out.push(' ');
        } else {
            if c.is_uppercase()
                && let Some(before) = before
            {
                let after_is_lower = chars.peek().is_some_and(|n| n.is_lowercase());
                let word_starts = before.is_lowercase()
                    || (before.is_ascii_digit() || before.is_uppercase()) && after_is_lower;
                if word_starts {
                    out.push(' ');
                }
            }
            out.push(c);
        }
        before = Some(c);
    }
    out
}

/// A tokenizer for text that is already words joined by spaces.
#[derive(Debug, Default)]
pub(crate) struct Spaces;

impl Tokenizer for Spaces {
    fn tokenize(&self, input_text: &str) -> Vec<String> {
        input_text
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_where_words_break() {
        assert_eq!(split_identifiers("read_file"), "read file");
        assert_eq!(split_identifiers("readFile"), "read File");
        assert_eq!(split_identifiers("ReadFile"), "Read File");
        assert_eq!(split_identifiers("HTTPServer"), "HTTP Server");
        assert_eq!(split_identifiers("getS3Object"), "get S3 Object");
        assert_eq!(split_identifiers("fs.read-text"), "fs read text");
        assert_eq!(split_identifiers("mcp__git__git_log"), "mcp  git  git log");
        assert_eq!(split_identifiers("plain words, kept"), "plain words, kept");
    }

    #[test]
    fn names_and_sentences_meet_in_the_same_words() {
        let words = Words::default();
        assert_eq!(
            words.of("read_multiple_files"),
            words.of("Read multiple files")
        );
        // Stemmed, stop words dropped: a user's phrasing meets the name.
        assert_eq!(words.of("reading the files"), words.of("readFile"));
        assert_eq!(words.of("getCurrentTime"), ["get", "current", "time"]);
    }

    #[test]
    fn the_build_memo_gives_the_words_of_the_whole_text() {
        let words = Words::default();
        let mut memo = words.memo();
        let mut texts: Vec<String> = [
            "Read the file.\nThen write\tit back,  twice",
            "ΌΣΟΣ ΧΡΌΝΟΣ naïve café a中文b ½ don't\u{a0}stop\u{3000}here",
            "getS3Object HTTPServer mcp__git__git_log fs.read-text",
            "",
            "   ",
        ]
        .map(str::to_owned)
        .into();
        // Every text the search benchmark's 21 real servers have.
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search");
        for entry in std::fs::read_dir(fixtures).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_string_lossy().ends_with(".tools.json") {
                continue;
            }
            let fixture: serde_json::Value =
                serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            fn strings(value: &serde_json::Value, out: &mut Vec<String>) {
                match value {
                    serde_json::Value::String(s) => out.push(s.clone()),
                    serde_json::Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
                    serde_json::Value::Object(map) => {
                        for (k, v) in map {
                            out.push(k.clone());
                            strings(v, out);
                        }
                    }
                    _ => {}
                }
            }
            strings(&fixture, &mut texts);
        }
        assert!(texts.len() > 1000, "{}", texts.len());
        let hashes = |memo: &mut WordMemo<'_>, text: &str| -> Vec<u32> {
            let ids = memo.of(text);
            ids.into_iter().map(|id| memo.hash(id)).collect()
        };
        let expected =
            |text: &str| -> Vec<u32> { words.of(text).iter().map(|w| term_hash(w)).collect() };
        for text in &texts {
            assert_eq!(hashes(&mut memo, text), expected(text), "{text:?}");
        }
        // Again, now from the memo.
        for text in &texts {
            assert_eq!(hashes(&mut memo, text), expected(text), "{text:?}");
        }
        // Each term once, under the first word seen with its hash.
        let mut seen = std::collections::HashSet::new();
        for id in 0..memo.len() as u32 {
            assert!(seen.insert(memo.hash(id)));
            assert_eq!(term_hash(memo.word(id)), memo.hash(id));
        }
    }

    #[test]
    fn a_query_also_looks_for_its_words_synonyms_once() {
        let words = Words::default();
        let terms = words.query("make a folder, a new folder");
        for expected in words.of("make create new directory folder dir") {
            assert!(terms.contains(&expected), "{expected} in {terms:?}");
        }
        assert_eq!(terms.len(), 6, "{terms:?}");
        assert_eq!(words.query("zebra"), ["zebra"]);
    }
}
