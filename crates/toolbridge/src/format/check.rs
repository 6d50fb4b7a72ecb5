//! What conversion changed, per tool and provider, and what the provider would
//! have rejected without the change. Backs `toolbridge tools --check`, which
//! users run to debug a server whose tools a provider refuses.

use super::names::{MAX_NAME_LEN, NameTable};
use super::options::{Format, FormatOptions};
use super::{anthropic, gemini, openai};
use crate::tools::McpTool;
use serde::Serialize;
use std::fmt;

/// What kind of change conversion made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// Characters of the tool name were replaced.
    NameSanitized,
    /// The tool name was too long and got a hash suffix.
    NameShortened,
    /// The tool name collided with another and got a hash suffix.
    NameDeduplicated,
    /// A keyword the provider does not accept was removed.
    KeywordDropped,
    /// A `$ref` was replaced by the schema it points to.
    RefInlined,
    /// A `$ref` pointing outside the schema (or nowhere) was removed.
    RefUnresolved,
    /// A recursive `$ref` was cut at the point it recurs.
    RefCycle,
    /// A part nested deeper than the limit was cut.
    DepthLimit,
    /// A `type` was added, changed or removed.
    TypeRewritten,
    /// `["T","null"]` or `anyOf [T, null]` became `nullable: true`.
    NullableRewritten,
    /// `oneOf`/`allOf`/type lists were rewritten as `anyOf` or merged.
    CompositionRewritten,
    /// `const` became a one-value `enum`.
    ConstToEnum,
    /// Enum values were turned into strings, or nulls moved to `nullable`.
    EnumRewritten,
    /// A `format` the provider does not accept was removed.
    FormatDropped,
    /// `required` named something that is not a property.
    RequiredFiltered,
    /// An array without `items` got one.
    ItemsAdded,
    /// A property whose schema is `false` (never valid) was removed.
    PropertyDropped,
    /// A tool without arguments is declared without `parameters`.
    ParametersOmitted,
    /// An object whose keys are free cannot be described to this provider;
    /// the model sees a plain object.
    FreeFormObject,
    /// A value that is not a schema was replaced.
    InvalidSchema,
    /// Strict mode closed an object or made an optional property required
    /// and nullable.
    StrictAdjusted,
    /// Strict mode was asked for but the schema cannot be made strict; the
    /// tool is sent non-strict.
    StrictFallback,
}

/// One change conversion made to one tool for one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// JSON pointer into the tool's input schema (`""` for the tool itself).
    pub path: String,
    /// What kind of change.
    pub kind: ChangeKind,
    /// Whether the provider would have refused the tool without this change.
    pub would_reject: bool,
    /// A sentence for the user.
    pub detail: String,
}

impl Change {
    /// A change at `path`.
    pub fn new(
        path: impl Into<String>,
        kind: ChangeKind,
        would_reject: bool,
        detail: impl Into<String>,
    ) -> Self {
        Change {
            path: path.into(),
            kind,
            would_reject,
            detail: detail.into(),
        }
    }
}

/// Where one conversion records its changes.
///
/// Converting tools for a request throws the changes away, so a discarding
/// list does not even format their paths and messages; only `check` and the
/// public per-tool functions record them.
#[derive(Debug, Default)]
pub(crate) struct Notes {
    changes: Vec<Change>,
    keep: bool,
}

impl Notes {
    /// A list that keeps every change.
    pub(crate) fn recording() -> Self {
        Notes {
            changes: Vec::new(),
            keep: true,
        }
    }

    /// A list that keeps nothing.
    pub(crate) fn discarding() -> Self {
        Notes::default()
    }

    /// A new, empty list that records if this one does; for changes kept
    /// only when a step succeeds.
    pub(crate) fn fork(&self) -> Self {
        Notes {
            changes: Vec::new(),
            keep: self.keep,
        }
    }

    /// Records a change at `path`; `path` and `detail` are only formatted
    /// when the list keeps changes.
    pub(crate) fn add(
        &mut self,
        path: impl fmt::Display,
        kind: ChangeKind,
        would_reject: bool,
        detail: impl fmt::Display,
    ) {
        if self.keep {
            self.changes.push(Change::new(
                path.to_string(),
                kind,
                would_reject,
                detail.to_string(),
            ));
        }
    }

    /// Moves the changes of `other` (a fork) to the end of this list.
    pub(crate) fn append(&mut self, mut other: Notes) {
        self.changes.append(&mut other.changes);
    }

    /// Runs `convert` with a recording list and moves what it recorded to
    /// the end of `out`: the public per-tool functions, which report every
    /// change, over converters that take a [`Notes`].
    pub(crate) fn record_into<T>(
        out: &mut Vec<Change>,
        convert: impl FnOnce(&mut Notes) -> T,
    ) -> T {
        let mut recorded = Notes::recording();
        let converted = convert(&mut recorded);
        out.append(&mut recorded.changes);
        converted
    }
}

/// The outcome of converting one tool for one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProviderCheck {
    /// The provider format.
    pub format: Format,
    /// OpenAI only: whether the tool is sent strict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
    /// Whether the provider would have refused the tool as the server sent it.
    pub would_reject: bool,
    /// Everything conversion changed, in the order it was done.
    pub changes: Vec<Change>,
}

/// The outcome of converting one tool for every provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolCheck {
    /// The config name of the server.
    pub server_id: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The name sent to providers.
    pub exposed_name: String,
    /// One entry per provider: OpenAI, Anthropic, Gemini.
    pub providers: Vec<ProviderCheck>,
}

/// The report of [`check`], one entry per tool in input order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// How many tools at least one provider would have refused unchanged.
    pub would_reject: usize,
    /// The tools.
    pub tools: Vec<ToolCheck>,
}

/// Converts every tool for OpenAI (Chat Completions; the Responses API takes
/// the same schema), Anthropic and Gemini with `options`, and reports what
/// changed and what would have been rejected.
pub fn check(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> CheckReport {
    let mut report = CheckReport {
        would_reject: 0,
        tools: Vec::with_capacity(tools.len()),
    };
    for tool in tools {
        let exposed = names.name_for(tool).into_owned();
        let mut providers = Vec::with_capacity(3);

        let mut changes = name_changes(names, tool, Format::OpenAi);
        let converted = openai::parameters(&tool.input_schema, options.strict, &mut changes);
        providers.push(provider_check(
            Format::OpenAi,
            options.strict.then_some(converted.strict),
            changes,
        ));

        let mut changes = name_changes(names, tool, Format::Anthropic);
        anthropic::input_schema(&tool.input_schema, &mut changes);
        providers.push(provider_check(Format::Anthropic, None, changes));

        let mut changes = name_changes(names, tool, Format::Gemini);
        if options.gemini_json_schema {
            gemini::parameters_json_schema(&tool.input_schema, &mut changes);
        } else {
            gemini::parameters(&tool.input_schema, &mut changes);
        }
        providers.push(provider_check(Format::Gemini, None, changes));

        if providers.iter().any(|p| p.would_reject) {
            report.would_reject += 1;
        }
        report.tools.push(ToolCheck {
            server_id: tool.server_id.clone(),
            tool: tool.name.clone(),
            exposed_name: exposed,
            providers,
        });
    }
    report
}

fn provider_check(format: Format, strict: Option<bool>, changes: Vec<Change>) -> ProviderCheck {
    ProviderCheck {
        format,
        strict,
        would_reject: changes.iter().any(|c| c.would_reject),
        changes,
    }
}

/// The name changes of `tool`, flagged with whether `format` would refuse the
/// raw name.
fn name_changes(names: &NameTable, tool: &McpTool, format: Format) -> Vec<Change> {
    let mut out = Vec::new();
    let Some(entry) = names.entry(&tool.server_id, &tool.name) else {
        return out;
    };
    if entry.sanitized {
        out.push(Change::new(
            "",
            ChangeKind::NameSanitized,
            !provider_accepts_name(format, &entry.raw),
            format!("`{}` has characters providers refuse", entry.raw),
        ));
    }
    if entry.shortened {
        out.push(Change::new(
            "",
            ChangeKind::NameShortened,
            true,
            format!(
                "`{}` is {} characters, more than {MAX_NAME_LEN}; now `{}`",
                entry.raw,
                entry.raw.chars().count(),
                entry.name
            ),
        ));
    }
    if entry.deduplicated {
        out.push(Change::new(
            "",
            ChangeKind::NameDeduplicated,
            true,
            format!(
                "`{}` collides with another tool's name; now `{}`",
                entry.raw, entry.name
            ),
        ));
    }
    out
}

/// Each provider's own name rule, for telling whether a raw name would pass.
fn provider_accepts_name(format: Format, name: &str) -> bool {
    let len_ok = !name.is_empty() && name.len() <= MAX_NAME_LEN;
    match format {
        // ^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$
        Format::Gemini => {
            len_ok
                && name
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
        }
        // ^[a-zA-Z0-9_-]{1,64}$
        _ => {
            len_ok
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(server: &str, name: &str, schema: serde_json::Value) -> McpTool {
        let serde_json::Value::Object(schema) = schema else {
            return McpTool {
                id: McpTool::id_for(server, name),
                name: name.into(),
                description: String::new(),
                input_schema: Arc::default(),
                server_id: server.into(),
                server_name: server.into(),
            };
        };
        McpTool {
            id: McpTool::id_for(server, name),
            name: name.into(),
            description: String::new(),
            input_schema: Arc::new(schema),
            server_id: server.into(),
            server_name: server.into(),
        }
    }

    #[test]
    fn a_clean_tool_needs_no_change() {
        let tools = [tool(
            "time",
            "now",
            json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}),
        )];
        let names = NameTable::for_tools(&tools);
        let report = check(&tools, &names, &FormatOptions::default());
        assert_eq!(report.would_reject, 0);
        for p in &report.tools[0].providers {
            assert!(p.changes.is_empty(), "{:?}", p);
        }
    }

    #[test]
    fn gemini_problems_are_reported_per_provider() {
        let tools = [tool(
            "srv",
            "t",
            json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "type": "object",
                "properties": {
                    "when": {"type": "string", "format": "uri"},
                    "maybe": {"type": ["string", "null"]}
                },
                "additionalProperties": false
            }),
        )];
        let names = NameTable::for_tools(&tools);
        let report = check(&tools, &names, &FormatOptions::default());
        assert_eq!(report.would_reject, 1);
        let providers = &report.tools[0].providers;
        let by = |f: Format| providers.iter().find(|p| p.format == f);
        assert!(by(Format::OpenAi).is_some_and(|p| !p.would_reject));
        assert!(by(Format::Anthropic).is_some_and(|p| !p.would_reject));
        let gemini = by(Format::Gemini);
        assert!(gemini.is_some_and(|p| p.would_reject));
        let kinds: Vec<ChangeKind> = gemini
            .map(|p| p.changes.iter().map(|c| c.kind).collect())
            .unwrap_or_default();
        for kind in [
            ChangeKind::KeywordDropped,
            ChangeKind::FormatDropped,
            ChangeKind::NullableRewritten,
        ] {
            assert!(kinds.contains(&kind), "{kind:?} missing from {kinds:?}");
        }
        let json = serde_json::to_value(&report).unwrap_or_default();
        assert_eq!(json["tools"][0]["providers"][2]["format"], "gemini");
    }

    #[test]
    fn name_problems_are_reported() {
        let long = "x".repeat(70);
        let tools = [tool(&long, "t", json!({})), tool("a.b", "t", json!({}))];
        let names = NameTable::for_tools(&tools);
        let report = check(&tools, &names, &FormatOptions::default());
        let first = &report.tools[0].providers[0].changes;
        assert!(
            first
                .iter()
                .any(|c| c.kind == ChangeKind::NameShortened && c.would_reject)
        );
        // Gemini accepts dots, OpenAI does not.
        let dotted = &report.tools[1].providers;
        assert!(
            dotted[0]
                .changes
                .iter()
                .any(|c| c.kind == ChangeKind::NameSanitized && c.would_reject)
        );
        assert!(
            dotted[2]
                .changes
                .iter()
                .any(|c| c.kind == ChangeKind::NameSanitized && !c.would_reject)
        );
    }

    #[test]
    fn strict_fallback_is_explained() {
        let tools = [tool(
            "s",
            "t",
            json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "string"}}}}),
        )];
        let names = NameTable::for_tools(&tools);
        let options = FormatOptions {
            strict: true,
            ..FormatOptions::default()
        };
        let report = check(&tools, &names, &options);
        let openai = &report.tools[0].providers[0];
        assert_eq!(openai.strict, Some(false));
        assert!(
            openai
                .changes
                .iter()
                .any(|c| c.kind == ChangeKind::StrictFallback)
        );
    }
}
