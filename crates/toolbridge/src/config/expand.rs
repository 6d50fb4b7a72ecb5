//! `${VAR}` and `${VAR:-default}` expansion.
//!
//! - `${VAR}` is VAR's value; unset is an error (the caller names the server
//!   and field).
//! - `${VAR:-default}` is `default` when VAR is unset or empty. The default
//!   ends at the first `}` and cannot contain another `${`.
//! - `${env:VAR}` (VS Code's spelling) is the same as `${VAR}`.
//! - `${userHome}` is the home directory; `${workspaceFolder}` the folder
//!   holding a `.vscode/` config (else the config file's folder), as VS Code
//!   and Cursor write them.
//! - `${input:ID}` (a VS Code input) is `$TOOLBRIDGE_INPUT_<ID>` when set
//!   (see [`input_variable`]), else what [`Env::ask`] answers (the CLI asks
//!   on a terminal); else an error naming the input.
//! - `$$` is a literal `$`; any other `$` is kept as it is.

use std::path::Path;

use super::env::{Env, Input};

/// What references are resolved against: the environment, the workspace
/// folder and the file's declared inputs.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    /// Variables (and answers to inputs).
    pub(crate) env: &'a dyn Env,
    /// `${workspaceFolder}`; `None` leaves the reference an error.
    pub(crate) workspace: Option<&'a Path>,
    /// The file's `inputs` (VS Code), for the prompt text and `password`.
    pub(crate) inputs: &'a [Input],
}

impl<'a> Scope<'a> {
    /// A scope with only an environment.
    pub(crate) fn env(env: &'a dyn Env) -> Self {
        Scope {
            env,
            workspace: None,
            inputs: &[],
        }
    }
}

/// The environment variable that answers `${input:ID}`:
/// `TOOLBRIDGE_INPUT_` and the id in upper case, every character other than
/// a letter or a digit as `_` (`${input:api-key}` is `TOOLBRIDGE_INPUT_API_KEY`).
pub fn input_variable(id: &str) -> String {
    let id: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("TOOLBRIDGE_INPUT_{id}")
}

/// Why a string could not be expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandError {
    /// `${NAME}` without a default, and NAME is not set.
    Unset(String),
    /// `${input:ID}` with neither its variable set nor an answer.
    Input(String),
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
    /// `${input:ID}`.
    Input(&'a str),
    /// `${userHome}`.
    UserHome,
    /// `${workspaceFolder}`.
    WorkspaceFolder,
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

        match body {
            "userHome" => {
                each(Piece::UserHome)?;
                continue;
            }
            "workspaceFolder" => {
                each(Piece::WorkspaceFolder)?;
                continue;
            }
            _ => {}
        }
        if let Some(id) = body.strip_prefix("input:").filter(|id| !id.is_empty()) {
            each(Piece::Input(id))?;
            continue;
        }
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
    expand_in(text, Scope::env(env))
}

/// `text` with every `${...}` replaced by its value in `scope`.
pub(crate) fn expand_in(text: &str, scope: Scope<'_>) -> Result<String, ExpandError> {
    let env = scope.env;
    let mut out = String::with_capacity(text.len());
    walk(text, |piece| {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::UserHome => match user_home(env) {
                Some(home) => out.push_str(&home),
                None => return Err(ExpandError::Unset("HOME".to_string())),
            },
            Piece::WorkspaceFolder => match scope.workspace {
                Some(dir) => out.push_str(&dir.to_string_lossy()),
                None => {
                    return Err(ExpandError::Syntax(
                        "uses ${workspaceFolder}, but the config file has no folder".to_string(),
                    ));
                }
            },
            Piece::Input(id) => {
                let input = scope
                    .inputs
                    .iter()
                    .find(|input| input.id == id)
                    .cloned()
                    .unwrap_or_else(|| Input {
                        id: id.to_string(),
                        ..Input::default()
                    });
                match env.var(&input_variable(id)).or_else(|| env.ask(&input)) {
                    Some(value) => out.push_str(&value),
                    None => return Err(ExpandError::Input(id.to_string())),
                }
            }
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
        let name = match piece {
            Piece::Ref {
                name,
                default: None,
            } => name.to_string(),
            Piece::Input(id) => input_variable(id),
            Piece::UserHome if user_home(env).is_none() => "HOME".to_string(),
            _ => return Ok(()),
        };
        if env.var(&name).is_none() && !unset.contains(&name) {
            unset.push(name);
        }
        Ok(())
    })?;
    Ok(unset)
}

/// `${userHome}`: `$HOME` (`%USERPROFILE%` on Windows), else the system's idea.
fn user_home(env: &dyn Env) -> Option<String> {
    env.var("HOME")
        .or_else(|| env.var("USERPROFILE"))
        .filter(|home| !home.is_empty())
        .or_else(|| std::env::home_dir().map(|home| home.to_string_lossy().into_owned()))
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
    Err(ExpandError::Syntax(format!(
        "has \"${{{name}}}\", which is not a variable reference; \
         write ${{NAME}} or ${{NAME:-default}} (or $$ for a literal $)"
    )))
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
    fn vs_code_variables_and_inputs_are_resolved() {
        let mut vars = env();
        vars.insert("HOME".into(), "/home/a".into());
        vars.insert("TOOLBRIDGE_INPUT_API_KEY".into(), "k3y".into());
        let workspace = Path::new("/src/proj");
        let scope = Scope {
            env: &vars,
            workspace: Some(workspace),
            inputs: &[],
        };
        assert_eq!(
            expand_in("${userHome}/x ${workspaceFolder}/y ${input:api-key}", scope),
            Ok("/home/a/x /src/proj/y k3y".to_string())
        );
        assert_eq!(
            expand_in("${input:other}", scope),
            Err(ExpandError::Input("other".to_string()))
        );
        assert_eq!(
            unset_variables("${input:other}${input:api-key}", &vars),
            Ok(vec!["TOOLBRIDGE_INPUT_OTHER".to_string()])
        );
        assert_eq!(input_variable("a.b-c9"), "TOOLBRIDGE_INPUT_A_B_C9");
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
            "${input:}",
            "${A:-${B}}",
        ] {
            assert!(
                matches!(expand(text, &env()), Err(ExpandError::Syntax(_))),
                "{text}"
            );
        }
    }
}
