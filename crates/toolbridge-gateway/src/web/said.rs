//! [`Said`]: a message of the server's that the page says in its reader's
//! language: a key of the page's strings (`servers.errors.nameMissing`) and
//! the values of its `{placeholders}`. Its English, for the API's `message`
//! (and any client that reads only that), is rendered here from the page's
//! own English strings (the embedded `locales/en/`), so the two never
//! differ; `locales_check` holds every key the API says in all three
//! languages.

use std::{collections::HashMap, sync::LazyLock};

use serde_json::{Map, Value};

use super::assets;

/// A key of the page's strings and the values of its placeholders.
#[derive(Debug, Clone, PartialEq)]
pub struct Said {
    /// `namespace.path.to.string`, as the page's `t()` takes it.
    pub key: &'static str,
    /// Each placeholder's value.
    pub vars: Map<String, Value>,
}

impl Said {
    /// `key` with `vars` (a JSON object; anything else counts as none).
    pub fn new(key: &'static str, vars: Value) -> Said {
        let vars = match vars {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Said { key, vars }
    }

    /// The message in English, as the page's English strings say it (the
    /// key itself when English has no such string, which `locales_check`
    /// does not let pass).
    pub fn english(&self) -> String {
        let Some(template) = english_string(self.key) else {
            return self.key.to_owned();
        };
        fill(template, &self.vars)
    }

    /// As the API sends it: `{"key", "vars"}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({ "key": self.key, "vars": self.vars })
    }
}

/// The page's English strings, by namespace (the embedded files).
static ENGLISH: LazyLock<HashMap<String, Value>> = LazyLock::new(|| {
    assets::paths()
        .filter_map(|path| {
            let namespace = path.strip_prefix("locales/en/")?.strip_suffix(".json")?;
            let bytes = assets::get_file(&path)?;
            Some((namespace.to_owned(), serde_json::from_slice(&bytes).ok()?))
        })
        .collect()
});

fn english_string(key: &str) -> Option<&'static str> {
    let mut parts = key.split('.');
    let mut value = ENGLISH.get(parts.next()?)?;
    for part in parts {
        value = value.get(part)?;
    }
    value.as_str()
}

/// `template` with each `{name}` replaced by its value, as the page's
/// `t()` does (a name without a value is left as written).
fn fill(template: &str, vars: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        match vars.get(name) {
            Some(value) if !name.is_empty() && after[name_len..].starts_with('}') => {
                match value {
                    Value::String(text) => out.push_str(text),
                    other => out.push_str(&other.to_string()),
                }
                rest = &after[name_len + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn placeholders_are_filled_as_the_page_fills_them() {
        let vars = json!({"key": "TZ", "n": 2});
        let vars = vars.as_object().unwrap();
        assert_eq!(
            fill("\"{key}\" is given twice", vars),
            "\"TZ\" is given twice"
        );
        assert_eq!(
            fill("argument {n} of {missing}", vars),
            "argument 2 of {missing}"
        );
        assert_eq!(fill("${{key}} and {", vars), "${TZ} and {");
    }

    #[test]
    fn the_english_is_the_pages_english_string() {
        let said = Said::new("servers.errors.nameMissing", json!({}));
        assert_eq!(said.english(), "give the server a name");
        assert_eq!(
            Said::new("servers.errors.nope", json!({})).english(),
            "servers.errors.nope"
        );
    }
}
