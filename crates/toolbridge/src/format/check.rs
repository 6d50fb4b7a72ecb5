//! What conversion changed, per tool and provider, and what the provider would
//! have rejected without the change. Backs `toolbridge tools --check`, which
//! users run to debug a server whose tools a provider refuses.

use super::dispatch::{CHECKED, provider};
use super::names::{MAX_NAME_LEN, NameTable};
use super::options::{Format, FormatOptions};
use crate::{hidden_chars, tools::McpTool};
use serde::Serialize;
use std::collections::HashSet;

pub use super::changes::{Change, ChangeKind};

/// The outcome of converting one tool for one provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
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
#[serde(rename_all = "camelCase")]
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

/// Per server, how many of its tools conversion changed and how many a
/// provider would have refused unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSummary {
    /// The config name of the server.
    pub server_id: String,
    /// How many tools it has.
    pub tools: usize,
    /// How many of them conversion changed for at least one provider.
    pub changed: usize,
    /// How many of them at least one provider would have refused unchanged.
    pub would_reject: usize,
}

impl std::fmt::Display for ServerSummary {
    /// One line for a person: `files: 14 tools, 3 changed, 1 would be rejected`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = if self.tools == 1 { "" } else { "s" };
        write!(
            f,
            "{}: {} tool{plural}, {} changed, {} would be rejected",
            self.server_id, self.tools, self.changed, self.would_reject
        )
    }
}

/// The report of [`check`], one entry per tool in input order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// How many tools at least one provider would have refused unchanged.
    pub would_reject: usize,
    /// One summary per server, in the order its first tool came.
    pub servers: Vec<ServerSummary>,
    /// The tools.
    pub tools: Vec<ToolCheck>,
}

/// Converts every tool for OpenAI (Chat Completions; the Responses API takes
/// the same schema), Anthropic and Gemini with `options`, and reports what
/// changed and what would have been rejected.
pub fn check(tools: &[McpTool], names: &NameTable, options: &FormatOptions) -> CheckReport {
    check_formats(&CHECKED, tools, names, options)
}

/// Like [`check`], only about `formats` (`Format::Mcp` stands for every
/// provider; `OpenAiResponses` is checked as such). Each format is reported
/// once, in the order given.
pub fn check_formats(
    formats: &[Format],
    tools: &[McpTool],
    names: &NameTable,
    options: &FormatOptions,
) -> CheckReport {
    let mut wanted: Vec<Format> = Vec::new();
    for format in formats {
        let expanded: &[Format] = if *format == Format::Mcp {
            &CHECKED
        } else {
            std::slice::from_ref(format)
        };
        for format in expanded {
            if !wanted.contains(format) {
                wanted.push(*format);
            }
        }
    }
    let mut report = CheckReport {
        would_reject: 0,
        servers: Vec::new(),
        tools: Vec::with_capacity(tools.len()),
    };
    let mut seen = HashSet::with_capacity(tools.len());
    for tool in tools {
        let exposed = names.name_for(tool).into_owned();
        let providers: Vec<ProviderCheck> = if !seen
            .insert((tool.server_id.as_str(), tool.name.as_str()))
        {
            duplicate(tool, &wanted)
        } else {
            let hidden: Vec<Change> = hidden_chars::tool_findings(tool)
                .iter()
                .map(hidden_change)
                .collect();
            wanted
                .iter()
                .copied()
                .filter_map(|format| provider(format).map(|p| (format, p)))
                .map(|(format, provider)| {
                    let mut changes = Vec::new();
                    if tool.requires_task() {
                        changes.push(left_out_task_required());
                    }
                    changes.extend(hidden.iter().cloned());
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
                .collect()
        };
        let would_reject = providers.iter().any(|p| p.would_reject);
        let changed = providers.iter().any(|p| !p.changes.is_empty());
        if would_reject {
            report.would_reject += 1;
        }
        let summary = match report
            .servers
            .iter_mut()
            .find(|s| s.server_id == tool.server_id)
        {
            Some(summary) => summary,
            None => {
                report.servers.push(ServerSummary {
                    server_id: tool.server_id.clone(),
                    tools: 0,
                    changed: 0,
                    would_reject: 0,
                });
                let last = report.servers.len() - 1;
                &mut report.servers[last]
            }
        };
        summary.tools += 1;
        summary.changed += usize::from(changed);
        summary.would_reject += usize::from(would_reject);
        report.tools.push(ToolCheck {
            server_id: tool.server_id.clone(),
            tool: tool.name.clone(),
            exposed_name: exposed,
            providers,
        });
    }
    report
}

/// The change for a hidden character found in a definition: removed from
/// prose, kept (and so reported) where a model sends the text back.
fn hidden_change(found: &hidden_chars::HiddenFinding) -> Change {
    let removed = found.field == "description"
        || found.field == "title"
        || found.field == "annotations/title"
        || ((found.field.ends_with("/description") || found.field.ends_with("/title"))
            && !found.field.ends_with(" (the key)"));
    let path = found
        .field
        .strip_prefix("inputSchema")
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
        .map(|rest| rest.trim_end_matches(" (the key)"))
        .unwrap_or("");
    let what = if removed {
        "removed"
    } else {
        "kept: a model sends it back as it is"
    };
    Change::new(
        path,
        ChangeKind::HiddenCharacters,
        false,
        format!("hidden character in {found}; {what}"),
    )
}

/// The finding, for each of `formats`, about a second tool with the same
/// name on one server, which conversion leaves out: every provider refuses
/// two tools of one name.
fn duplicate(tool: &McpTool, formats: &[Format]) -> Vec<ProviderCheck> {
    let change = Change::new(
        "",
        ChangeKind::DuplicateTool,
        true,
        format!(
            "server \"{}\" lists a second tool named `{}`; it is left out and the first is sent",
            tool.server_id, tool.name
        ),
    );
    formats
        .iter()
        .map(|&format| ProviderCheck {
            format,
            // Not sent at all, so not strict either.
            strict: (format == Format::OpenAi).then_some(false),
            would_reject: true,
            changes: vec![change.clone()],
        })
        .collect()
}

/// Why a tool whose `execution.taskSupport` is `"required"` is not in the
/// provider formats.
fn left_out_task_required() -> Change {
    Change::new(
        "",
        ChangeKind::LeftOut,
        false,
        "left out: the tool can only be called as a task (execution.taskSupport is \"required\"), \
         which may run for minutes while the model's turn waits; `toolbridge call` and \
         Pool::call_tool run it",
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
    fn a_check_for_one_format_reports_only_that_format_and_sums_up_each_server() {
        let tools = [
            tool(
                "a",
                "t",
                json!({"type": "object", "properties": {"u": {"type": "string", "format": "uri"}}}),
            ),
            tool(
                "a",
                "plain",
                json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            ),
            tool(
                "b",
                "t",
                json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            ),
        ];
        let names = NameTable::for_tools(&tools);
        let report = check_formats(&[Format::Gemini], &tools, &names, &FormatOptions::default());
        for t in &report.tools {
            let formats: Vec<Format> = t.providers.iter().map(|p| p.format).collect();
            assert_eq!(formats, [Format::Gemini]);
        }
        assert_eq!(
            report
                .servers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [
                "a: 2 tools, 1 changed, 1 would be rejected",
                "b: 1 tool, 0 changed, 0 would be rejected"
            ]
        );
        // `mcp` (the default format) means every provider.
        let all = check_formats(&[Format::Mcp], &tools, &names, &FormatOptions::default());
        assert_eq!(all, check(&tools, &names, &FormatOptions::default()));
        assert_eq!(all.tools[0].providers.len(), 3);
    }

    #[test]
    fn the_report_uses_camel_case_keys() {
        let tools = [tool("a.b", "t", json!({}))];
        let names = NameTable::for_tools(&tools);
        let json = serde_json::to_value(check(&tools, &names, &FormatOptions::default()))
            .unwrap_or_default();
        assert!(json.get("wouldReject").is_some(), "{json}");
        assert_eq!(json["servers"][0]["serverId"], "a.b");
        let tool = &json["tools"][0];
        assert_eq!(tool["serverId"], "a.b");
        assert!(tool.get("exposedName").is_some(), "{json}");
        let change = &tool["providers"][0]["changes"][0];
        assert_eq!(change["wouldReject"], true, "{json}");
        assert_eq!(change["kind"], "nameSanitized", "{json}");
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
