//! The locale completeness test, over the embedded assets (what users get):
//!
//! - every key of any of en, zh, ja exists in all three, with the same
//!   nesting, a non-empty string, and the same `{placeholders}`;
//! - every key the page refers to (`t('...')` calls and `data-i18n*`
//!   attributes in the embedded `.js` and `.html`) exists in English, and so
//!   in all three;
//! - every message of the server's own the page says in its language has
//!   its key: each preset's description (`presets.descriptions.ID`, English's
//!   the catalogue's word for word) and each kind of doctor's fixes
//!   (`doctor.fixes.KIND`), of a server's failures (`common.failures.KIND`)
//!   and of the changes made for a provider
//!   (`tools.changeKinds.KIND`), and every key the API says a message with
//!   (`Said::new("servers.errors.…")`).
//!
//! The checks are plain functions returning the problems they find, so the
//! tests below show on small in-memory examples that a missing key fails.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// The page's languages; English is the reference.
const LANGUAGES: [&str; 3] = ["en", "zh", "ja"];

/// One language's strings: `namespace.path.to.key` → text, or the problem
/// with that entry (not a string, empty).
type Strings = BTreeMap<String, Result<String, String>>;

/// One language's namespaces as the files hold them: namespace → JSON.
type Namespaces = BTreeMap<String, Value>;

/// A key the page refers to.
#[derive(Debug, PartialEq, Eq)]
enum KeyRef {
    /// A literal key: `t('servers.title')`, `data-i18n="common.language"`.
    Exact(String),
    /// A key built at run time (`` t(`common.nav.${name}`) ``): its static
    /// part up to the last dot before the first `${`, which must be a group.
    Group(String),
}

/// Flattens one namespace's JSON into `out` under `prefix`.
fn flatten(prefix: &str, value: &Value, out: &mut Strings) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                flatten(&format!("{prefix}.{key}"), value, out);
            }
        }
        Value::String(text) if text.trim().is_empty() => {
            out.insert(prefix.to_owned(), Err("is an empty string".to_owned()));
        }
        Value::String(text) => {
            out.insert(prefix.to_owned(), Ok(text.clone()));
        }
        other => {
            out.insert(
                prefix.to_owned(),
                Err(format!("is not a string but {other}")),
            );
        }
    }
}

/// Every string of one language.
fn strings(namespaces: &Namespaces) -> Strings {
    let mut out = Strings::new();
    for (namespace, value) in namespaces {
        flatten(namespace, value, &mut out);
    }
    out
}

/// The `{name}` placeholders of `text`.
fn placeholders(text: &str) -> BTreeSet<&str> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        if let Some(close) = rest.find('}') {
            let name = &rest[..close];
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                found.insert(name);
            }
        }
    }
    found
}

/// What differs between the languages: keys missing from one, empty or
/// non-string values, placeholders that differ from English's.
fn completeness_problems(languages: &BTreeMap<&str, Namespaces>) -> Vec<String> {
    let all: BTreeMap<&str, Strings> = languages
        .iter()
        .map(|(lang, namespaces)| (*lang, strings(namespaces)))
        .collect();
    let keys: BTreeSet<&String> = all.values().flat_map(|s| s.keys()).collect();
    let mut problems = Vec::new();
    for key in keys {
        let english = all
            .get("en")
            .and_then(|s| s.get(key))
            .and_then(|v| v.as_ref().ok());
        for lang in LANGUAGES {
            match all.get(lang).and_then(|s| s.get(key)) {
                None => problems.push(format!("{lang}: `{key}` is missing")),
                Some(Err(why)) => problems.push(format!("{lang}: `{key}` {why}")),
                Some(Ok(text)) => {
                    if let Some(english) = english {
                        let (want, got) = (placeholders(english), placeholders(text));
                        if want != got {
                            problems.push(format!(
                                "{lang}: `{key}` has placeholders {got:?}, English has {want:?}"
                            ));
                        }
                    }
                }
            }
        }
    }
    problems
}

/// `source` without its comments that start a line (`// ...`, `/* ... */`):
/// examples in comments are not references. Comments after code are kept;
/// a `//` inside a string (a URL) is no comment.
fn without_line_comments(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut in_block = false;
    for line in source.lines() {
        let trimmed = line.trim_start();
        if in_block {
            if let Some(end) = line.find("*/") {
                in_block = false;
                out.push_str(&line[end + 2..]);
            }
        } else if trimmed.starts_with("//") {
        } else if trimmed.starts_with("/*") {
            match trimmed.find("*/") {
                Some(end) => out.push_str(&trimmed[end + 2..]),
                None => in_block = true,
            }
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The quoted literal at the start of `s` (`'..'`, `".."` or `` `..` ``).
fn quoted(s: &str) -> Option<(char, &str)> {
    let quote = s.chars().next().filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let body = &s[1..];
    let end = body.find(quote)?;
    Some((quote, &body[..end]))
}

/// A key as written in a literal: exact, or a group when it is built with `${}`.
fn key_ref(quote: char, literal: &str) -> Option<KeyRef> {
    if quote == '`'
        && let Some(dynamic) = literal.find("${")
    {
        let group = literal[..dynamic].rsplit_once('.')?.0;
        return Some(KeyRef::Group(group.to_owned()));
    }
    Some(KeyRef::Exact(literal.to_owned()))
}

/// Every key `source` (a `.js` or `.html` file) refers to: the literal first
/// argument of `t(...)` and the value of each `data-i18n*` attribute, in
/// HTML (`data-i18n="key"`) or in a script's attribute object
/// (`'data-i18n': 'key'`).
fn referenced_keys(source: &str) -> Vec<KeyRef> {
    let source = without_line_comments(source);
    let mut found = Vec::new();
    for (at, _) in source.match_indices("t(") {
        let before = source[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some((quote, literal)) = quoted(source[at + 2..].trim_start()) {
            found.extend(key_ref(quote, literal));
        }
    }
    for (at, _) in source.match_indices("data-i18n") {
        let rest = &source[at + "data-i18n".len()..];
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_lowercase() || c == '-');
        let rest = rest.trim_start_matches(['\'', '"']).trim_start();
        let Some(rest) = rest.strip_prefix(['=', ':']) else {
            continue;
        };
        if let Some((quote, literal)) = quoted(rest.trim_start()) {
            found.extend(key_ref(quote, literal));
        }
    }
    found
}

/// The references of `file` (its `source`) that English lacks.
fn reference_problems(file: &str, source: &str, english: &Namespaces) -> Vec<String> {
    let strings = strings(english);
    referenced_keys(source)
        .into_iter()
        .filter_map(|key| match key {
            KeyRef::Exact(key) if !strings.contains_key(&key) => Some(format!(
                "{file}: `{key}` is used but missing from locales/en"
            )),
            KeyRef::Group(group)
                if !strings.keys().any(|k| {
                    k.strip_prefix(group.as_str())
                        .is_some_and(|r| r.starts_with('.'))
                }) =>
            {
                Some(format!(
                    "{file}: keys under `{group}.` are used but locales/en has none"
                ))
            }
            _ => None,
        })
        .collect()
}

/// The server's own messages the page says in its language: each key
/// English must have (and so, by [`completeness_problems`], every
/// language), with the English text it must be when the server's is fixed
/// (a preset's description: the page's English is the catalogue's).
fn server_message_problems(
    english: &Namespaces,
    messages: &[(String, Option<&str>)],
) -> Vec<String> {
    let strings = strings(english);
    messages
        .iter()
        .filter_map(|(key, text)| match (strings.get(key), text) {
            (None, _) => Some(format!(
                "`{key}` (a message of the server's) is missing from locales/en"
            )),
            (Some(Ok(found)), Some(text)) if found != text => Some(format!(
                "`{key}` in locales/en is \"{found}\", the server's is \"{text}\""
            )),
            _ => None,
        })
        .collect()
}

/// The API's sources that say messages from the page's strings
/// ([`Said`](super::said::Said)).
const SAYERS: &[(&str, &str)] = &[("api/servers/form.rs", include_str!("api/servers/form.rs"))];

/// The keys `source` says (the literal first argument of each `Said::new`).
fn said_keys(source: &str) -> Vec<&str> {
    source
        .match_indices("Said::new(")
        .filter_map(|(at, call)| quoted(source[at + call.len()..].trim_start()))
        .map(|(_, key)| key)
        .collect()
}

/// The server's messages the page translates: every preset's description,
/// every kind of doctor's fix, every kind of a server's failure, every kind
/// of change a provider format makes,
/// every message the API says from the page's strings.
fn server_messages() -> Vec<(String, Option<&'static str>)> {
    let descriptions = toolbridge::presets::all().iter().map(|p| {
        (
            format!("presets.descriptions.{}", p.id),
            Some(p.description),
        )
    });
    let fixes = toolbridge::doctor::Fix::KINDS
        .iter()
        .map(|kind| (format!("doctor.fixes.{kind}"), None));
    let failures = toolbridge::pool::FailureKind::KINDS
        .iter()
        .map(|kind| (format!("common.failures.{kind}"), None));
    let changes = toolbridge::format::ChangeKind::ALL.into_iter().map(|kind| {
        let kind = serde_json::to_value(kind).expect("a kind serializes");
        let kind = kind.as_str().expect("a kind is a string");
        (format!("tools.changeKinds.{kind}"), None)
    });
    let said = SAYERS
        .iter()
        .flat_map(|(_, source)| said_keys(source))
        .map(|key| (key.to_owned(), None));
    descriptions
        .chain(fixes)
        .chain(failures)
        .chain(changes)
        .chain(said)
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::web::assets;

    /// The embedded locale files: language → namespace → JSON.
    fn embedded_locales() -> BTreeMap<&'static str, Namespaces> {
        let mut languages: BTreeMap<&str, Namespaces> =
            LANGUAGES.iter().map(|l| (*l, Namespaces::new())).collect();
        for path in assets::paths() {
            let Some(rest) = path.strip_prefix("locales/") else {
                continue;
            };
            let Some((lang, file)) = rest.split_once('/') else {
                continue;
            };
            let namespace = file.strip_suffix(".json").unwrap_or_else(|| {
                panic!("locales/{rest}: locale files are <lang>/<namespace>.json")
            });
            let lang = LANGUAGES
                .into_iter()
                .find(|l| *l == lang)
                .unwrap_or_else(|| panic!("locales/{rest}: {lang} is not one of {LANGUAGES:?}"));
            let bytes = assets::get_file(&path).expect("listed file");
            let value: Value = serde_json::from_slice(&bytes)
                .unwrap_or_else(|e| panic!("locales/{rest} is not valid JSON: {e}"));
            languages
                .get_mut(lang)
                .expect("known language")
                .insert(namespace.to_owned(), value);
        }
        languages
    }

    fn one(lang_values: [(&'static str, Value); 3]) -> BTreeMap<&'static str, Namespaces> {
        lang_values
            .into_iter()
            .map(|(lang, value)| {
                let namespaces = value
                    .as_object()
                    .expect("namespaces")
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                (lang, namespaces)
            })
            .collect()
    }

    #[test]
    fn every_key_is_in_english_chinese_and_japanese_with_the_same_placeholders() {
        let problems = completeness_problems(&embedded_locales());
        assert!(
            problems.is_empty(),
            "the locale files differ:\n{}",
            problems.join("\n")
        );
    }

    #[test]
    fn every_key_the_page_uses_is_in_the_locales() {
        let locales = embedded_locales();
        let english = &locales["en"];
        let mut problems = Vec::new();
        let mut scanned = 0;
        for path in assets::paths() {
            if !(path.ends_with(".js") || path.ends_with(".html")) {
                continue;
            }
            let bytes = assets::get_file(&path).expect("listed file");
            let source = String::from_utf8_lossy(&bytes);
            problems.extend(reference_problems(&path, &source, english));
            scanned += 1;
        }
        assert!(scanned >= 2, "no page files were scanned");
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn every_message_of_the_servers_the_page_translates_is_in_the_locales() {
        let messages = server_messages();
        assert!(messages.len() > 60, "{messages:?}");
        let problems = server_message_problems(&embedded_locales()["en"], &messages);
        assert!(problems.is_empty(), "{}", problems.join("\n"));
    }

    #[test]
    fn the_keys_the_api_says_are_found_in_its_source() {
        let source = r#"ApiError::said_at("url", Said::new("servers.errors.urlMissing", json!({})));
            Said::new(
                "servers.errors.argMasked",
                json!({ "n": 1 }),
            )"#;
        assert_eq!(
            said_keys(source),
            ["servers.errors.urlMissing", "servers.errors.argMasked"]
        );
        assert!(said_keys(SAYERS[0].1).len() >= 8, "form.rs says none");
    }

    #[test]
    fn a_server_message_without_its_key_or_with_other_english_fails() {
        let english: Namespaces = [(
            "presets".to_owned(),
            json!({ "descriptions": { "time": "Current time.", "fetch": "Fetches a URL." } }),
        )]
        .into_iter()
        .collect();
        let messages = [
            (
                "presets.descriptions.time".to_owned(),
                Some("Current time."),
            ),
            (
                "presets.descriptions.fetch".to_owned(),
                Some("Fetches a URL as markdown."),
            ),
            ("doctor.fixes.certificate".to_owned(), None),
        ];
        assert_eq!(
            server_message_problems(&english, &messages),
            [
                "`presets.descriptions.fetch` in locales/en is \"Fetches a URL.\", the server's is \"Fetches a URL as markdown.\"",
                "`doctor.fixes.certificate` (a message of the server's) is missing from locales/en",
            ]
        );
    }

    #[test]
    fn a_key_missing_from_one_language_fails() {
        let locales = one([
            (
                "en",
                json!({ "servers": { "title": "Servers", "add": "Add server" } }),
            ),
            (
                "zh",
                json!({ "servers": { "title": "服务器", "add": "添加服务器" } }),
            ),
            ("ja", json!({ "servers": { "title": "サーバー" } })),
        ]);
        assert_eq!(
            completeness_problems(&locales),
            ["ja: `servers.add` is missing"]
        );
    }

    #[test]
    fn a_key_only_chinese_has_fails_in_the_other_two() {
        let locales = one([
            ("en", json!({ "common": { "save": "Save" } })),
            (
                "zh",
                json!({ "common": { "save": "保存", "extra": "多余" } }),
            ),
            ("ja", json!({ "common": { "save": "保存" } })),
        ]);
        assert_eq!(
            completeness_problems(&locales),
            [
                "en: `common.extra` is missing",
                "ja: `common.extra` is missing"
            ]
        );
    }

    #[test]
    fn different_nesting_an_empty_string_and_a_lost_placeholder_fail() {
        let locales = one([
            (
                "en",
                json!({ "tools": { "took": "Took {ms} ms", "run": "Run", "form": { "name": "Name" } } }),
            ),
            (
                "zh",
                json!({ "tools": { "took": "耗时 {毫秒} 毫秒", "run": "运行", "form": "名称" } }),
            ),
            (
                "ja",
                json!({ "tools": { "took": "{ms} ms", "run": " ", "form": { "name": "名前" } } }),
            ),
        ]);
        assert_eq!(
            completeness_problems(&locales),
            [
                "en: `tools.form` is missing",
                "ja: `tools.form` is missing",
                "zh: `tools.form.name` is missing",
                "ja: `tools.run` is an empty string",
                "zh: `tools.took` has placeholders {\"毫秒\"}, English has {\"ms\"}",
            ]
        );
    }

    #[test]
    fn references_are_found_in_calls_and_attributes_but_not_in_comments() {
        let source = r#"
            // t('in.a.comment') is an example, not a reference
            /* and t('in.a.block')
               data-i18n="in.a.block.too" */
            main.append(h('h1', {}, t('servers.title')));
            const x = t("servers.add", { n: 1 }), y = t(`common.nav.${name}`);
            h('span', { 'data-i18n': 'common.language' });
            h('input', { "data-i18n-placeholder": "servers.search" });
            select.split('.'); format(value);
        "#;
        let html = r##"<a href="#/x" data-i18n="common.nav.servers">Servers</a>
            <nav data-i18n-aria-label="common.nav.label"></nav>
            for (const el of root.querySelectorAll('[data-i18n]'))"##;
        assert_eq!(
            referenced_keys(source),
            [
                KeyRef::Exact("servers.title".into()),
                KeyRef::Exact("servers.add".into()),
                KeyRef::Group("common.nav".into()),
                KeyRef::Exact("common.language".into()),
                KeyRef::Exact("servers.search".into()),
            ]
        );
        assert_eq!(
            referenced_keys(html),
            [
                KeyRef::Exact("common.nav.servers".into()),
                KeyRef::Exact("common.nav.label".into()),
            ]
        );
    }

    #[test]
    fn a_key_the_page_uses_but_english_lacks_fails() {
        let english: Namespaces = [(
            "servers".to_owned(),
            json!({ "title": "Servers", "status": { "running": "running" } }),
        )]
        .into_iter()
        .collect();
        let source = "t('servers.title'); t('servers.missing'); t(`servers.status.${s}`); \
                      t(`servers.nothing.${s}`); h('p', { 'data-i18n': 'servers.gone' });";
        assert_eq!(
            reference_problems("views/servers.js", source, &english),
            [
                "views/servers.js: `servers.missing` is used but missing from locales/en",
                "views/servers.js: keys under `servers.nothing.` are used but locales/en has none",
                "views/servers.js: `servers.gone` is used but missing from locales/en",
            ]
        );
    }
}
