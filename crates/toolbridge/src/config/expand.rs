//! `${VAR}` and `${VAR:-default}` expansion.
//!
//! - `${VAR}` is VAR's value; unset is an error (the caller names the server
//!   and field).
//! - `${VAR:-default}` is `default` when VAR is unset or empty. The default
//!   ends at the first `}` and cannot contain another `${`.
//! - `${env:VAR}` (VS Code's spelling) is the same as `${VAR}`.
//! - `$$` is a literal `$`; any other `$` is kept as it is.

use super::env::Env;

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// `${NAME}` without a default, and NAME is not set.
    Unset(String),
    /// The reference itself is malformed; the message says how to write it.
    Syntax(String),
}

/// One piece of a text that may hold references.
enum Piece<'a> {
    /// Text taken as it is (`$$` gives a `$` piece).
    Text(&'a str),
    /// `${name}` or `${name:-default}` (`${env:name}` gives `name`).
    Ref {
        name: &'a str,
        default: Option<&'a str>,
    },
}

/// Calls `each` for every piece of `text`, in order; stops at the first
/// malformed reference or the first error `each` returns.
fn walk<'a>(
    text: &'a str,
    mut each: impl FnMut(Piece<'a>) -> Result<(), ExpandError>,
) -> Result<(), ExpandError> {
    let mut rest = text;
    while let Some(dollar) = rest.find('$') {
        each(Piece::Text(&rest[..dollar]))?;
        let after = &rest[dollar + 1..];
        if let Some(after_escape) = after.strip_prefix('$') {
            each(Piece::Text("$"))?;
            rest = after_escape;
            continue;
        }
        let Some(body_and_rest) = after.strip_prefix('{') else {
            each(Piece::Text("$"))?;
            rest = after;
            continue;
        };
        let Some(close) = body_and_rest.find('}') else {
            return Err(ExpandError::Syntax(
                "has \"${\" without a closing \"}\"".to_string(),
            ));
        };
        let body = &body_and_rest[..close];
        rest = &body_and_rest[close + 1..];

        let (name, default) = match body.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (body, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        check_name(name)?;
        if default.is_some_and(|d| d.contains("${")) {
            return Err(ExpandError::Syntax(format!(
                "the default of ${{{name}:-...}} contains \"${{\"; nested references are not supported"
            )));
        }
        each(Piece::Ref { name, default })?;
    }
    each(Piece::Text(rest))
}

/// `text` with every `${...}` replaced by its value from `env`.
pub(crate) fn expand(text: &str, env: &dyn Env) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(text.len());
    walk(text, |piece| {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Ref { name, default } => match (env.var(name), default) {
                (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => return Err(ExpandError::Unset(name.to_string())),
            },
        }
        Ok(())
    })?;
    Ok(out)
}

/// Every variable `text` needs that `env` does not set (references without a
/// default), in order, once each; `Err` when a reference is malformed.
pub(crate) fn unset_variables(text: &str, env: &dyn Env) -> Result<Vec<String>, ExpandError> {
    let mut unset: Vec<String> = Vec::new();
    walk(text, |piece| {
        if let Piece::Ref {
            name,
            default: None,
        } = piece
            && env.var(name).is_none()
            && !unset.iter().any(|known| known == name)
        {
            unset.push(name.to_string());
        }
        Ok(())
    })?;
    Ok(unset)
}

fn check_name(name: &str) -> Result<(), ExpandError> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        return Ok(());
    }
    Err(ExpandError::Syntax(if name.starts_with("input:") {
        format!(
            "uses ${{{name}}}, a VS Code input, which toolbridge cannot ask for; \
             use an environment variable: ${{NAME}}"
        )
    } else {
        format!(
            "has \"${{{name}}}\", which is not a variable reference; \
             write ${{NAME}} or ${{NAME:-default}} (or $$ for a literal $)"
        )
    }))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env() -> HashMap<String, String> {
        HashMap::from([
            ("TOKEN".to_string(), "s3cret".to_string()),
            ("EMPTY".to_string(), String::new()),
            ("HOST".to_string(), "example.com".to_string()),
        ])
    }

    fn ok(text: &str) -> String {
        expand(text, &env()).unwrap()
    }

    #[test]
    fn set_variables_are_replaced() {
        assert_eq!(ok("Bearer ${TOKEN}"), "Bearer s3cret");
        assert_eq!(
            ok("https://${HOST}/mcp?k=${TOKEN}"),
            "https://example.com/mcp?k=s3cret"
        );
        assert_eq!(ok("${env:TOKEN}"), "s3cret");
        assert_eq!(ok("${EMPTY}"), "");
    }

    #[test]
    fn defaults_apply_when_unset_or_empty() {
        assert_eq!(ok("${NOPE:-fallback}"), "fallback");
        assert_eq!(ok("${EMPTY:-fallback}"), "fallback");
        assert_eq!(ok("${TOKEN:-fallback}"), "s3cret");
        assert_eq!(ok("${NOPE:-}"), "");
        assert_eq!(ok("${NOPE:-a:b/c}"), "a:b/c");
    }

    #[test]
    fn unset_without_default_is_an_error_naming_the_variable() {
        assert_eq!(
            expand("x ${GITHUB_TOKEN} y", &env()),
            Err(ExpandError::Unset("GITHUB_TOKEN".to_string()))
        );
    }

    #[test]
    fn text_without_references_is_unchanged() {
        assert_eq!(ok("plain $HOME cost $5 {x}"), "plain $HOME cost $5 {x}");
        assert_eq!(ok("trailing $"), "trailing $");
        assert_eq!(ok("é${HOST}é"), "éexample.comé");
    }

    #[test]
    fn unset_variables_are_listed_once_each_in_order() {
        assert_eq!(
            unset_variables("${B}${TOKEN}${A}${B}${C:-x}${env:D}$${E}", &env()),
            Ok(vec!["B".to_string(), "A".to_string(), "D".to_string()])
        );
        assert!(matches!(
            unset_variables("${A", &env()),
            Err(ExpandError::Syntax(_))
        ));
    }

    #[test]
    fn double_dollar_is_a_literal_dollar() {
        assert_eq!(ok("$${TOKEN}"), "${TOKEN}");
        assert_eq!(ok("a$$b"), "a$b");
    }

    #[test]
    fn malformed_references_are_syntax_errors() {
        for text in [
            "${TOKEN",
            "${}",
            "${1X}",
            "${A B}",
            "${input:key}",
            "${A:-${B}}",
        ] {
            assert!(
                matches!(expand(text, &env()), Err(ExpandError::Syntax(_))),
                "{text}"
            );
        }
    }
}
