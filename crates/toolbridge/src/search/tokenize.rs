//! Words for the search index: tool names split where people see word
//! breaks (`read_file`, `readFile`, `ReadFile`, `read-file`, `fs.read` are
//! all "read file"), then English words as the `bm25` crate's tokenizer
//! makes them ([`English`]: ASCII folding, lowercase, Unicode word
//! boundaries, stop words dropped, Snowball stemming), so that "reading
//! files" meets "read_file".
//!
//! An index build gets its documents' words as terms from a [`WordMemo`]:
//! each distinct run of words tokenized once, each distinct word hashed
//! once.

use std::collections::{BTreeSet, HashMap};

use std::hash::BuildHasher;

use bm25::Tokenizer;
use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use super::english::{English, fold};
use super::synonyms::GROUPS;

/// The tokenizer the index uses for documents and queries alike.
#[derive(Debug)]
pub(crate) struct Words {
    english: English,
    /// A word (stemmed) → the group of [`GROUPS`] it is in (stemmed).
    synonyms: HashMap<String, usize>,
    groups: Vec<Vec<String>>,
}

impl Default for Words {
    fn default() -> Self {
        let english = English::default();
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
            runs: HashTable::new(),
            runs_text: String::new(),
            runs_terms: Vec::new(),
            ids: FxHashMap::default(),
            terms: Vec::new(),
            terms_text: String::new(),
            lower: String::new(),
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
    /// Each run between spaces seen (identifiers already split), by its
    /// FxHash: where its text is in `runs_text` and where its terms are in
    /// `runs_terms`. The texts live in one buffer rather than a `Box<str>`
    /// each: at 10,000 distinct tools allocating and freeing a key per run
    /// was a tenth of a build.
    runs: HashTable<Run>,
    /// Every run's text, one after another.
    runs_text: String,
    /// Every run's terms, one after another.
    runs_terms: Vec<u32>,
    /// The hash of each term → its id (ids count up from 0 in the order
    /// the terms are first seen).
    ids: FxHashMap<u32, u32>,
    /// Each id's hash and where the first word seen with it is in
    /// `terms_text`.
    terms: Vec<(u32, u32, u32)>,
    /// Every term's first word, one after another.
    terms_text: String,
    /// The tokenizer's buffer for a run's lowercase text.
    lower: String,
}

/// A run of [`WordMemo::runs`]: its text's and its terms' ranges.
#[derive(Clone, Copy)]
struct Run {
    text: (u32, u32),
    terms: (u32, u32),
}

impl Run {
    /// Its text, in `runs_text`.
    fn text_in(self, runs_text: &str) -> &str {
        &runs_text[self.text.0 as usize..self.text.1 as usize]
    }
}

impl WordMemo<'_> {
    /// The terms of `text`, appended to `out`.
    pub(crate) fn extend(&mut self, text: &str, out: &mut Vec<u32>) {
        let each = |run: &str| {
            let (start, end) = self.run(run);
            out.extend_from_slice(&self.runs_terms[start as usize..end as usize]);
        };
        if text.is_ascii() {
            // Most texts: folding changes nothing, and the runs are read
            // in place.
            return ascii_runs(text, each);
        }
        let split = split_identifiers(text);
        // The tokenizer's folding, on the whole text as the tokenizer does
        // it (see above); on the ASCII it gives, the tokenizer's own is a
        // no-op.
        let folded = fold(&split);
        folded
            .split(' ')
            .filter(|run| !run.is_empty())
            .for_each(each);
    }

    /// Where the terms of `run` are in `runs_terms`, tokenizing it if it
    /// is new.
    fn run(&mut self, run: &str) -> (u32, u32) {
        let hash = FxBuildHasher.hash_one(run);
        let runs_text = &self.runs_text;
        if let Some(found) = self.runs.find(hash, |r| r.text_in(runs_text) == run) {
            return found.terms;
        }
        let start = self.runs_terms.len() as u32;
        let (ids, terms, terms_text, runs_terms) = (
            &mut self.ids,
            &mut self.terms,
            &mut self.terms_text,
            &mut self.runs_terms,
        );
        self.words
            .english
            .words_of_folded(run, &mut self.lower, |word| {
                let hash = term_hash(&word);
                let id = *ids.entry(hash).or_insert_with(|| {
                    let at = terms_text.len() as u32;
                    terms_text.push_str(&word);
                    terms.push((hash, at, terms_text.len() as u32));
                    (terms.len() - 1) as u32
                });
                runs_terms.push(id);
            });
        let terms = (start, self.runs_terms.len() as u32);
        let at = self.runs_text.len() as u32;
        self.runs_text.push_str(run);
        let entry = Run {
            text: (at, self.runs_text.len() as u32),
            terms,
        };
        let runs_text = &self.runs_text;
        self.runs.insert_unique(hash, entry, |r| {
            FxBuildHasher.hash_one(r.text_in(runs_text))
        });
        terms
    }

    /// The terms of `text`.
    #[cfg(test)]
    pub(crate) fn of(&mut self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        self.extend(text, &mut out);
        out
    }

    /// Takes in the terms `other` saw (another part of the same build's
    /// tools) after this memo's own, each hash keeping the first word seen
    /// with it; gives each of `other`'s ids its id here.
    pub(crate) fn absorb(&mut self, other: WordMemo<'_>) -> Vec<u32> {
        other
            .terms
            .iter()
            .map(|&(hash, start, end)| {
                *self.ids.entry(hash).or_insert_with(|| {
                    let at = self.terms_text.len() as u32;
                    self.terms_text
                        .push_str(&other.terms_text[start as usize..end as usize]);
                    self.terms.push((hash, at, self.terms_text.len() as u32));
                    (self.terms.len() - 1) as u32
                })
            })
            .collect()
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
        let (_, start, end) = self.terms[id as usize];
        &self.terms_text[start as usize..end as usize]
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

/// Calls `each` with the runs `split_identifiers(text).split(' ')` gives
/// for an ASCII `text` (the empty ones left out), read in place: the same
/// breaks, found byte by byte (for ASCII, `char`'s case tests are the
/// ASCII ones), with no text written. At 10,000 distinct tools writing the
/// split text and splitting it again was a sixth of a build.
fn ascii_runs(text: &str, mut each: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut emit = |from: usize, to: usize| {
        if to > from {
            each(&text[from..to]);
        }
    };
    for (i, &c) in bytes.iter().enumerate() {
        if matches!(c, b' ' | b'_' | b'-' | b'.' | b'/' | b':') {
            emit(start, i);
            start = i + 1;
        } else if c.is_ascii_uppercase() && i > 0 {
            let before = bytes[i - 1];
            let after_is_lower = bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            if before.is_ascii_lowercase()
                || (before.is_ascii_digit() || before.is_ascii_uppercase()) && after_is_lower
            {
                emit(start, i);
                start = i;
            }
        }
    }
    emit(start, bytes.len());
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
pub(super) mod tests {
    use super::*;

    /// Every text (key and string) the search benchmark's 21 real servers
    /// have.
    pub(in crate::search) fn fixture_texts() -> Vec<String> {
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
        let fixtures =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/search");
        let mut texts = Vec::new();
        for entry in std::fs::read_dir(fixtures).unwrap() {
            let path = entry.unwrap().path();
            if !path.to_string_lossy().ends_with(".tools.json") {
                continue;
            }
            let fixture: serde_json::Value =
                serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
            strings(&fixture, &mut texts);
        }
        texts
    }

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
    fn ascii_runs_are_the_split_texts_runs() {
        let mut texts: Vec<String> = ["read_file", "HTTPServer", "getS3Object", "aB", "A B", ""]
            .map(str::to_owned)
            .into();
        texts.extend(fixture_texts().into_iter().filter(|t| t.is_ascii()));
        for text in &texts {
            let mut runs = Vec::new();
            ascii_runs(text, |run| runs.push(run.to_owned()));
            let split = split_identifiers(text);
            let expected: Vec<&str> = split.split(' ').filter(|r| !r.is_empty()).collect();
            assert_eq!(runs, expected, "{text:?}");
        }
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
        texts.extend(fixture_texts());
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
