//! English words for the index: what `bm25`'s `DefaultTokenizer` gives for
//! English (ASCII folding, lowercase, Unicode word boundaries, NLTK's stop
//! words dropped, Snowball stemming), built from the same crates
//! (`deunicode`, `unicode-segmentation`, `stop-words`, `rust-stemmers`)
//! without its costs per call.
//!
//! Why not the crate's tokenizer: an index build at 10,000 distinct tools
//! runs it on every run of words it has not seen, and per call it lowercases
//! into a new `String`, looks each word up in a `HashSet<String>` with
//! SipHash and returns a `String` per word, stemmed or not. Here the text is
//! lowercased into a reused buffer, stop words are a `FxHashSet<&str>`, and
//! a word reaches the caller borrowed unless the stemmer changed it. A unit
//! test checks the words are the crate's, text for text, over every string
//! of the benchmark's 21 real servers; `cargo bench --bench search` prints
//! the build's time (docs/performance.md, "Tool search").

use std::borrow::Cow;

use rust_stemmers::{Algorithm, Stemmer};
use rustc_hash::FxHashSet;
use unicode_segmentation::UnicodeSegmentation;

/// The folding to ASCII `bm25`'s tokenizer applies first (`deunicode`,
/// unknown characters as `[?]`).
pub(crate) fn fold(text: &str) -> Cow<'_, str> {
    deunicode::deunicode_with_tofu_cow(text, "[?]")
}

/// The English tokenizer.
pub(crate) struct English {
    stemmer: Stemmer,
    stop_words: FxHashSet<&'static str>,
}

impl std::fmt::Debug for English {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("English").finish_non_exhaustive()
    }
}

impl Default for English {
    fn default() -> Self {
        English {
            stemmer: Stemmer::create(Algorithm::English),
            // NLTK's list, as `bm25` takes it (its words are ASCII, so the
            // folding `bm25` applies to them changes none).
            stop_words: stop_words::get(stop_words::LANGUAGE::English)
                .iter()
                .copied()
                .collect(),
        }
    }
}

impl English {
    /// Calls `each` with the words of `text`, in order.
    pub(crate) fn words(&self, text: &str, lower: &mut String, each: impl FnMut(Cow<'_, str>)) {
        self.words_of_folded(&fold(text), lower, each);
    }

    /// [`English::words`] of a text already [`fold`]ed.
    pub(crate) fn words_of_folded(
        &self,
        folded: &str,
        lower: &mut String,
        mut each: impl FnMut(Cow<'_, str>),
    ) {
        lower.clear();
        if folded.is_ascii() {
            lower.push_str(folded);
            lower.make_ascii_lowercase();
        } else {
            // Not reached by `deunicode`'s output, which is ASCII; kept
            // so the words stay the crate's whatever it gives.
            lower.push_str(&folded.to_lowercase());
        }
        // Letters and digits alone are one word by every rule of Unicode's
        // word boundaries (WB5, WB8-WB10): most runs of a build are one
        // such word, and the segmenter's state machine was a fifth of a
        // build at 10,000 distinct tools.
        if lower.bytes().all(|b| b.is_ascii_alphanumeric()) {
            if !lower.is_empty() && !self.stop_words.contains(lower.as_str()) {
                each(self.stemmer.stem(lower));
            }
            return;
        }
        for word in lower.unicode_words() {
            if !self.stop_words.contains(word) {
                each(self.stemmer.stem(word));
            }
        }
    }

    /// The words of `text`.
    pub(crate) fn tokenize(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        self.words(text, &mut String::new(), |w| out.push(w.into_owned()));
        out
    }
}

#[cfg(test)]
mod tests {
    use bm25::{DefaultTokenizer, Language, Tokenizer};

    use super::*;

    #[test]
    fn the_words_are_the_bm25_tokenizers() {
        let ours = English::default();
        let theirs = DefaultTokenizer::new(Language::English);
        let mut texts: Vec<String> = [
            "Read the file.\nThen write\tit back,  twice",
            "ΌΣΟΣ ΧΡΌΝΟΣ naïve café a中文b ½ don't\u{a0}stop\u{3000}here",
            "HTTPServer getS3Object 3.14 1,000 e.g. U.S.A. it's they're isn't",
            "🍕 ⅓ Straße İstanbul ǅ ﬁle",
            "",
            "   ",
        ]
        .map(str::to_owned)
        .into();
        texts.extend(super::super::tokenize::tests::fixture_texts());
        assert!(texts.len() > 1000, "{}", texts.len());
        for text in &texts {
            assert_eq!(ours.tokenize(text), theirs.tokenize(text), "{text:?}");
        }
    }
}
