//! Hostile input, property-tested: the config reader (the strict one of
//! `Config::parse` and the JSONC one `import` uses) and the `${VAR}` expander
//! never panic or hang, whatever the bytes; every error names the file; and
//! JSONC with comments and trailing commas reads as the plain JSON it
//! decorates.

use std::{collections::HashMap, fmt::Write as _, path::Path};

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::{
    Config,
    expand::{ExpandError, expand, unset_variables},
    jsonc,
};

const FILE: &str = "hostile.json";

/// Reads `text` as a config file; panics (failing the property) only when
/// an error does not name the file.
fn read(text: &str) -> Option<Config> {
    match Config::parse(Path::new(FILE), text) {
        Ok(config) => Some(config),
        Err(error) => {
            let message = error.to_string();
            assert!(message.starts_with(FILE), "{message}");
            None
        }
    }
}

/// Resolves every server of `config`; errors must name the file.
fn resolve_all(config: &Config) {
    let env: HashMap<String, String> = [("SET", "v"), ("EMPTY", "")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let config = config.clone().with_env(env);
    for name in config.server_names() {
        if let Err(error) = config.resolve(name) {
            let message = error.to_string();
            assert!(message.starts_with(FILE), "{message}");
        }
    }
    let _ = config.listing();
}

/// Text made of what JSON, JSONC and `${VAR}` are made of, so that the
/// interesting paths of the parsers are reached often.
fn jsonish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("{".to_string()),
            Just("}".to_string()),
            Just("[".to_string()),
            Just("]".to_string()),
            Just(",".to_string()),
            Just(":".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("//".to_string()),
            Just("/*".to_string()),
            Just("*/".to_string()),
            Just("\n".to_string()),
            Just("\"mcpServers\"".to_string()),
            Just("\"command\"".to_string()),
            Just("\"url\"".to_string()),
            Just("\"type\"".to_string()),
            Just("\"ws://h/${A}\"".to_string()),
            Just("${".to_string()),
            Just("$$".to_string()),
            Just("1e999".to_string()),
            Just("-0".to_string()),
            Just("null".to_string()),
            any::<char>().prop_map(String::from),
        ],
        0..80,
    )
    .prop_map(|pieces| pieces.concat())
}

/// Any JSON value, strings included that look like comments or references.
fn value() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        any::<String>(),
        "[a-z/*\"\\\\${}:-]{0,12}".prop_map(String::from),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        // Quarters are exact in binary, so they read back equal.
        (-4000i32..4000).prop_map(|n| Value::from(f64::from(n) / 4.0)),
        text.prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::vec(("[a-zA-Z_/*]{0,8}", inner), 0..6)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// `value` written as JSONC: before each member and item a comment or none,
/// after the last one a trailing comma or none, as `choices` say.
fn write_jsonc(value: &Value, choices: &mut impl Iterator<Item = u8>, out: &mut String) {
    let decorate =
        |out: &mut String, choices: &mut dyn Iterator<Item = u8>| match choices.next().unwrap_or(0)
            % 4
        {
            0 => {}
            1 => out.push_str(" /* a \"comment\", ] } */ "),
            2 => out.push_str(" // a line comment, ] }\n"),
            _ => out.push_str("\n\t "),
        };
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                decorate(out, choices);
                write_jsonc(item, choices, out);
            }
            if !items.is_empty() && choices.next().unwrap_or(0) % 2 == 1 {
                out.push(',');
            }
            decorate(out, choices);
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                decorate(out, choices);
                let _ = write!(out, "{}:", Value::String(key.clone()));
                decorate(out, choices);
                write_jsonc(item, choices, out);
            }
            if !members.is_empty() && choices.next().unwrap_or(0) % 2 == 1 {
                out.push(',');
            }
            decorate(out, choices);
            out.push('}');
        }
        leaf => out.push_str(&leaf.to_string()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_bytes_are_read_or_rejected_naming_the_file(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Some(config) = read(&text) {
            resolve_all(&config);
        }
        let stripped = jsonc::strip(&text);
        prop_assert_eq!(stripped.len(), text.len());
    }

    #[test]
    fn json_like_text_is_read_or_rejected_naming_the_file(text in jsonish()) {
        for text in [text.clone(), format!("{{\"mcpServers\": {{\"s\": {text}}}}}")] {
            if let Some(config) = read(&text) {
                resolve_all(&config);
            }
            let stripped = jsonc::strip(&text);
            prop_assert_eq!(stripped.len(), text.len());
            prop_assert_eq!(stripped.lines().count(), text.lines().count());
            if let Some(config) = read(&stripped) {
                resolve_all(&config);
            }
        }
    }

    #[test]
    fn any_server_record_is_read_or_rejected_naming_the_file(
        name in any::<String>(),
        record in value(),
    ) {
        let text = json!({"mcpServers": {name: record}}).to_string();
        if let Some(config) = read(&text) {
            resolve_all(&config);
        }
    }

    #[test]
    fn jsonc_reads_as_the_json_it_decorates(
        value in value(),
        choices in proptest::collection::vec(any::<u8>(), 0..200),
    ) {
        let mut text = String::new();
        write_jsonc(&value, &mut choices.into_iter().cycle(), &mut text);
        let stripped = jsonc::strip(&text);
        let read: Value = serde_json::from_str(&stripped)
            .map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(read, value);
    }

    #[test]
    fn expansion_never_panics_and_agrees_with_its_unset_list(text in "[A-Z${}:\\-env$ a]{0,40}") {
        let env: HashMap<String, String> = [("A".to_string(), "x".to_string()), ("E".to_string(), String::new())]
            .into_iter()
            .collect();
        let expanded = expand(&text, &env);
        match unset_variables(&text, &env) {
            Err(_) => prop_assert!(expanded.is_err(), "{:?}", expanded),
            Ok(unset) => match unset.first() {
                None => prop_assert!(expanded.is_ok(), "{:?}", expanded),
                Some(first) => prop_assert_eq!(expanded, Err(ExpandError::Unset(first.clone()))),
            },
        }
    }
}

#[test]
fn deep_nesting_is_an_error_naming_the_file_not_a_crash() {
    for depth in [200, 10_000, 1_000_000] {
        let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let objects = format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth));
        let open = "[".repeat(depth);
        for nested in [&arrays, &objects, &open] {
            let text = format!(
                "{{\"mcpServers\": {{\"s\": {{\"command\": \"x\", \"args\": {nested}}}}}}}"
            );
            assert!(read(&text).is_none(), "depth {depth}");
            assert_eq!(jsonc::strip(&text).len(), text.len());
        }
    }
}

#[test]
fn unterminated_comments_and_strings_are_errors_naming_the_file() {
    for text in [
        "{\"mcpServers\": {} /* never closed",
        "{\"mcpServers\": {\"s\": \"never closed",
        "// only a comment",
        "{\"mcpServers\": {\"s\": {\"command\": \"x\\",
        "\u{feff}{\"mcpServers\": {}}",
        "{\"mcpServers\": {\"s\": {\"command\": \"x\", \"args\": [\"${\"]}}}",
    ] {
        let stripped = jsonc::strip(text);
        assert_eq!(stripped.len(), text.len());
        for text in [text, stripped.as_str()] {
            if let Some(config) = read(text) {
                resolve_all(&config);
            }
        }
    }
}
