//! Results a model can hold: a size budget for the text a model is given.
//!
//! A 15 MB tool result passed to a model fails in every provider (context
//! limits) and costs money when it does not. A result over its budget is
//! cut to its head and tail, with a note in the middle that says how much
//! was cut and where the whole result was saved (the caller saves it; this
//! module does no I/O). What a budget counts is characters of text plus the
//! base64 characters of images, audio and blobs, which cost a model about
//! the same.
//!
//! The default, [`DEFAULT_RESULT_BUDGET`], is 100,000 characters: about
//! 25,000 tokens at the usual 4 characters per token, an eighth of a
//! 200k-token context window and well within OpenAI's, Anthropic's and
//! Gemini's per-message limits, while leaving whole files, pages and
//! listings of ordinary size untouched. Servers whose results are meant to
//! be large get their own budget (`resultBudget` in the config).

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

use super::flatten::flatten_content;

/// The default budget of one result, in characters (about 25k tokens).
pub const DEFAULT_RESULT_BUDGET: usize = 100_000;

/// Characters of a result as a model would be given it: text, and the
/// base64 data of media.
pub fn result_size(result: &CallToolResult) -> usize {
    if result.content.is_empty() {
        return result
            .structured_content
            .as_ref()
            .map_or(0, |v| v.to_string().len());
    }
    result.content.iter().map(block_size).sum()
}

fn block_size(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text(t) => t.text.len(),
        ContentBlock::Image(i) => i.data.len(),
        ContentBlock::Audio(a) => a.data.len(),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents { text, .. } => text.len(),
            ResourceContents::BlobResourceContents { blob, .. } => blob.len(),
            _ => 0,
        },
        ContentBlock::ResourceLink(link) => link.uri.len() + link.name.len(),
        _ => 0,
    }
}

/// Whether `result` is over `budget` characters.
pub fn over_budget(result: &CallToolResult, budget: usize) -> bool {
    result_size(result) > budget
}

/// `result` fitted into `budget` characters: as it is when it fits; else
/// one text item holding the head and the tail of its flattened text
/// ([`flatten_content`]: media become `[Image: mime]` lines) and a note
/// saying how much was cut and, when `saved_at` is given, where the whole
/// result is. `isError` is kept.
pub fn fit_result(result: CallToolResult, budget: usize, saved_at: Option<&str>) -> CallToolResult {
    if !over_budget(&result, budget) {
        return result;
    }
    let total = result_size(&result);
    let text = fit_text(&flatten_content(&result), budget, total, saved_at);
    let mut fitted = CallToolResult::success(vec![ContentBlock::text(text)]);
    fitted.is_error = result.is_error;
    fitted
}

/// `text` cut to its head and tail around a note, in at most `budget`
/// characters (the note included, unless the budget is smaller than the
/// note). `total` is the size of the whole result the note reports.
pub fn fit_text(text: &str, budget: usize, total: usize, saved_at: Option<&str>) -> String {
    // Bytes bound characters from above: most texts end here.
    if text.len() <= budget {
        return text.to_owned();
    }
    let chars = text.chars().count();
    if chars <= budget {
        return text.to_owned();
    }
    let where_saved = match saved_at {
        Some(path) => format!("; the whole result is saved in {path}"),
        None => String::new(),
    };
    // The note's own length depends on the numbers in it; these bound it.
    let note_for = |cut: usize| {
        format!(
            "\n\n[… {} of {} characters cut here to fit the result budget of {}{where_saved} …]\n\n",
            thousands(cut),
            thousands(total.max(chars)),
            thousands(budget),
        )
    };
    let note_len = note_for(chars).chars().count();
    let keep = budget.saturating_sub(note_len);
    let head = keep - keep / 3;
    let tail = keep / 3;
    let cut = chars - head - tail;
    // Walk only the kept ends, not the whole text.
    let head_end = text.char_indices().nth(head).map_or(text.len(), |(i, _)| i);
    let tail_start = match tail {
        0 => text.len(),
        n => text.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i),
    };
    let mut out = String::with_capacity(budget + 16);
    out.push_str(&text[..head_end]);
    out.push_str(&note_for(cut));
    out.push_str(&text[tail_start..]);
    out
}

/// `n` with thousands separators: 15,000,000.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_within_budget_is_untouched() {
        let result = CallToolResult::success(vec![ContentBlock::text("small")]);
        let fitted = fit_result(result.clone(), 100, Some("/x"));
        assert_eq!(fitted, result);
    }

    #[test]
    fn a_huge_result_keeps_head_and_tail_and_says_what_was_cut_and_where() {
        let text = format!("HEAD{}TAIL", "x".repeat(15_000_000));
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.is_error = Some(true);
        let fitted = fit_result(result, 100_000, Some("/cache/results/r.json"));
        assert_eq!(fitted.is_error, Some(true));
        let out = flatten_content(&fitted);
        assert!(out.chars().count() <= 100_000, "{}", out.len());
        assert!(out.chars().count() > 99_000, "{}", out.len());
        assert!(out.starts_with("HEADxxx"));
        assert!(out.ends_with("xxxTAIL"));
        assert!(out.contains("characters cut here to fit the result budget of 100,000"));
        assert!(
            out.contains("of 15,000,008 characters"),
            "{}",
            &out[66_000..66_300]
        );
        assert!(out.contains("the whole result is saved in /cache/results/r.json"));
    }

    #[test]
    fn images_count_toward_the_budget_and_become_their_description() {
        let result = CallToolResult::success(vec![
            ContentBlock::text("chart:"),
            ContentBlock::image("A".repeat(5_000), "image/png"),
        ]);
        assert_eq!(result_size(&result), 5_006);
        let fitted = fit_result(result, 1_000, None);
        let out = flatten_content(&fitted);
        assert_eq!(out, "chart:\n[Image: image/png]");
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let text = "é".repeat(10_000);
        let out = fit_text(&text, 1_000, 20_000, None);
        assert!(out.chars().count() <= 1_000);
        assert!(out.starts_with('é') && out.ends_with('é'));
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(15_000_000), "15,000,000");
    }
}
