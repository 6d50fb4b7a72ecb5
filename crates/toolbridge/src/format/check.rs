//! What conversion changed, per tool and provider, and what the provider would
//! have rejected without the change. Backs `toolbridge tools --check`, which
//! users run to debug a server whose tools a provider refuses.

use super::dispatch::{CHECKED, provider};
use super::names::{MAX_NAME_LEN, NameTable};
use super::options::{Format, FormatOptions};
use crate::tools::McpTool;
use serde::Serialize;
use std::collections::HashSet;

pub use super::changes::{Change, ChangeKind};

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
    let mut seen = HashSet::with_capacity(tools.len());
    for tool in tools {
        let exposed = names.name_for(tool).into_owned();
        if !seen.insert((tool.server_id.as_str(), tool.name.as_str())) {
            report.would_reject += 1;
            report.tools.push(duplicate(tool, exposed));
            continue;
        }
        let providers: Vec<ProviderCheck> = CHECKED
            .into_iter()
            .filter_map(|format| provider(format).map(|p| (format, p)))
            .map(|(format, provider)| {
                let mut changes = name_changes(names, tool, |name| provider.accepts_name(name));
                let strict = provider.check_schema(&tool.input_schema, options, &mut changes);
                ProviderCheck {
                    format,
                    strict,
                    would_reject: changes.iter().any(|c| c.would_reject),
                    changes,
                }
            })
            .collect();
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

/// The finding for a second tool with the same name on one server, which
/// conversion leaves out: every provider refuses two tools of one name.
fn duplicate(tool: &McpTool, exposed: String) -> ToolCheck {
    let change = Change::new(
        "",
        ChangeKind::DuplicateTool,
        true,
        format!(
            "server \"{}\" lists a second tool named `{}`; it is left out and the first is sent",
            tool.server_id, tool.name
        ),
    );
    ToolCheck {
        server_id: tool.server_id.clone(),
        tool: tool.name.clone(),
        exposed_name: exposed,
        providers: CHECKED
            .into_iter()
            .map(|format| ProviderCheck {
                format,
                // Not sent at all, so not strict either.
                strict: (format == Format::OpenAi).then_some(false),
                would_reject: true,
                changes: vec![change.clone()],
            })
            .collect(),
    }
}

/// The name changes of `tool`, flagged with whether the provider, which
/// `accepts` the names it takes, would refuse the raw name.
fn name_changes(names: &NameTable, tool: &McpTool, accepts: impl Fn(&str) -> bool) -> Vec<Change> {
    let mut out = Vec::new();
    let Some(entry) = names.entry(&tool.server_id, &tool.name) else {
        return out;
    };
    if entry.sanitized {
        out.push(Change::new(
            "",
            ChangeKind::NameSanitized,
            !accepts(&entry.raw),
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

    /// Regression (issue 16 item 9): two tools of one server with the same
    /// name went to every provider twice, and `--check` said nothing.
    #[test]
    fn a_second_tool_with_the_same_name_is_reported_and_left_out() {
        let schema =
            json!({"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]});
        let tools = [
            tool("srv", "echo", schema.clone()),
            tool("srv", "echo", schema),
        ];
        let names = NameTable::for_tools(&tools);
        let report = check(&tools, &names, &FormatOptions::default());
        assert_eq!(report.would_reject, 1);
        assert!(report.tools[0].providers.iter().all(|p| !p.would_reject));
        let second = &report.tools[1];
        assert_eq!(second.providers.len(), 3);
        for provider in &second.providers {
            assert!(provider.would_reject);
            assert_eq!(provider.changes[0].kind, ChangeKind::DuplicateTool);
        }
        for format in CHECKED {
            let converted =
                crate::format::convert_tools(format, &tools, &names, &FormatOptions::default());
            let text = converted.to_string();
            assert_eq!(
                text.matches("mcp__srv__echo").count(),
                1,
                "{format:?}: {text}"
            );
        }
    }
}
