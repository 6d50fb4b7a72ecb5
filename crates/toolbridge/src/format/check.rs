//! What conversion changed, per tool and provider, and what the provider would
//! have rejected without the change. Backs `toolbridge tools --check`, which
//! users run to debug a server whose tools a provider refuses.

use super::dispatch::{CHECKED, provider};
use super::names::{MAX_NAME_LEN, NameTable};
use super::options::{Format, FormatOptions};
use crate::tools::McpTool;
use serde::Serialize;

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
    for tool in tools {
        let exposed = names.name_for(tool).into_owned();
        let providers: Vec<ProviderCheck> = CHECKED
            .into_iter()
            .filter_map(|format| provider(format).map(|p| (format, p)))
            .map(|(format, provider)| {
                let mut changes = Vec::new();
                if tool.requires_task() {
                    changes.push(left_out_task_required());
                }
                changes.extend(name_changes(names, tool, |name| {
                    provider.accepts_name(name)
                }));
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

/// Why a tool whose `execution.taskSupport` is `"required"` is not in the
/// provider formats.
fn left_out_task_required() -> Change {
    Change::new(
        "",
        ChangeKind::LeftOut,
        false,
        "left out: the tool can only be called as a task (execution.taskSupport is \"required\"), \
         which toolbridge does not do yet",
    )
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
                ..Default::default()
            };
        };
        McpTool {
            id: McpTool::id_for(server, name),
            name: name.into(),
            description: String::new(),
            input_schema: Arc::new(schema),
            server_id: server.into(),
            server_name: server.into(),
            ..Default::default()
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

    #[test]
    fn a_tool_that_requires_a_task_is_left_out_of_provider_formats_with_a_note() {
        let mut research = tool("s", "research", json!({"type": "object"}));
        research.execution = Some(crate::tools::ToolExecution {
            task_support: Some(crate::tools::TaskSupport::Required),
        });
        let tools = [tool("s", "echo", json!({"type": "object"})), research];
        let names = NameTable::for_tools(&tools);
        let options = FormatOptions::default();
        for format in CHECKED {
            let converted = super::super::convert_tools(format, &tools, &names, &options);
            let text = converted.to_string();
            assert!(text.contains("mcp__s__echo"), "{format}: {text}");
            assert!(!text.contains("research"), "{format}: {text}");
        }
        // The MCP model keeps it, with its execution.
        let mcp = super::super::convert_tools(Format::Mcp, &tools, &names, &options);
        assert_eq!(mcp[1]["execution"], json!({"taskSupport": "required"}));
        let report = check(&tools, &names, &options);
        for provider in &report.tools[1].providers {
            let note = &provider.changes[0];
            assert_eq!(note.kind, ChangeKind::LeftOut);
            assert!(note.detail.contains("as a task"), "{}", note.detail);
        }
        assert!(
            report.tools[0]
                .providers
                .iter()
                .all(|p| p.changes.iter().all(|c| c.kind != ChangeKind::LeftOut))
        );
    }
}
