//! `.env` files, as VS Code's `envFile` names them: `KEY=VALUE` lines.
//!
//! Blank lines and lines starting with `#` are skipped; `export ` before a
//! key is allowed; a value in single or double quotes loses its quotes (in
//! double quotes, `\n` is a newline); an unquoted value ends at ` #`.
//! Values are taken as they are: no `${VAR}` expansion.

use std::{fs, path::Path};

/// The variables of the `.env` file at `path`, in file order; the error is
/// a message naming the file and the line.
pub(crate) fn read(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = fs::read_to_string(path)
        .map_err(|error| format!("\"envFile\" {} cannot be read: {error}", path.display()))?;
    parse(&text).map_err(|line| {
        format!(
            "\"envFile\" {} line {line} is not KEY=VALUE",
            path.display()
        )
    })
}

/// The variables of `text`; the error is the 1-based number of a bad line.
fn parse(text: &str) -> Result<Vec<(String, String)>, usize> {
    let mut vars = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(i + 1);
        };
        let key = key.trim();
        let valid = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(i + 1);
        }
        vars.push((key.to_string(), unquote(value.trim())));
    }
    Ok(vars)
}

fn unquote(value: &str) -> String {
    let quoted = |q: char| {
        value
            .strip_prefix(q)
            .and_then(|rest| rest.strip_suffix(q))
            .filter(|_| value.len() >= 2)
    };
    if let Some(inner) = quoted('"') {
        return inner.replace("\\n", "\n").replace("\\\"", "\"");
    }
    if let Some(inner) = quoted('\'') {
        return inner.to_string();
    }
    match value.find(" #") {
        Some(comment) => value[..comment].trim_end().to_string(),
        None => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_values_quotes_and_comments() {
        let text = "# comment\n\nexport A=1\nB = \"two words\"\nC='x # y'\nD=plain # note\nE=\n";
        assert_eq!(
            parse(text).unwrap(),
            [
                ("A", "1"),
                ("B", "two words"),
                ("C", "x # y"),
                ("D", "plain"),
                ("E", "")
            ]
            .map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(parse("A=1\nnot a pair\n"), Err(2));
        assert_eq!(parse("1A=x"), Err(1));
    }
}
