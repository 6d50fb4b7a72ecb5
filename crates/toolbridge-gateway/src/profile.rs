//! Profiles: what one client of the gateway sees. `/mcp` is the view of
//! every enabled server ([`ViewName::All`], a [`Profile::everything`]);
//! `/mcp/NAME` and `serve --stdio --profile NAME` the config's profile NAME
//! ([`toolbridge::config::Profile`]). Every request of a client goes
//! through its view, so there is one path for both: the view decides which
//! servers' tools, prompts and resources the client is listed and may use,
//! under which names and descriptions, and whether it gets the tools or a
//! search over them ([`Discovery::Search`]).
//!
//! - Tools: a profile's servers, then its `tools` globs on
//!   `{server}__{tool}`, then its renames and descriptions. Named as the
//!   gateway names them: kept with one server in the view, `{server}__{tool}`
//!   with several. A tool outside the view is neither listed, nor found by
//!   a search, nor called: a call names a tool the client's view has.
//! - Prompts and resources: those of the profile's servers (the `tools`
//!   globs are about tools); a URI no server of the view has is not read,
//!   subscribed to or completed.
//! - Search mode: `tools/list` gives [`SEARCH_TOOL`] and [`CALL_TOOL`]
//!   (the library's pair, `toolbridge::adapter::search`) over the view's
//!   tools, indexed with the library's [`ToolIndex`]; a call through
//!   [`CALL_TOOL`] is the same call as one by name, with the same checks,
//!   audit and metrics.

use std::sync::{Arc, OnceLock};

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::Value;
use toolbridge::{
    adapter::search::{
        CALL_TOOL, SEARCH_TOOL, call_tool_definition, search_result, search_result_where,
        search_tool_definition,
    },
    config::{Discovery, Profile},
    search::ToolIndex,
    tools::McpTool,
};

use crate::names::Routed;

/// Which view a client has.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ViewName {
    /// Every enabled server: `/mcp`.
    All,
    /// A profile of the config: `/mcp/NAME`.
    Profile(Arc<str>),
}

impl ViewName {
    /// The view of profile `name`.
    pub fn profile(name: &str) -> ViewName {
        ViewName::Profile(name.into())
    }

    /// The profile's name; `None` for [`ViewName::All`].
    pub fn profile_name(&self) -> Option<&str> {
        match self {
            ViewName::All => None,
            ViewName::Profile(name) => Some(name),
        }
    }
}

impl std::fmt::Display for ViewName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewName::All => f.write_str("/mcp"),
            ViewName::Profile(name) => write!(f, "profile {name}"),
        }
    }
}

/// A view as it is now: its name and its profile.
#[derive(Debug, Clone)]
pub struct View {
    /// Which view.
    pub name: ViewName,
    /// What it shows.
    pub profile: Arc<Profile>,
}

impl View {
    /// True when the client gets the search pair instead of the tools.
    pub fn searches(&self) -> bool {
        self.profile.discovery == Discovery::Search
    }

    /// The servers of `order` (the gateway's, in config order) this view
    /// shows.
    pub fn servers<'a>(&self, order: &'a [String]) -> Vec<&'a String> {
        order
            .iter()
            .filter(|s| self.profile.includes_server(s))
            .collect()
    }
}

/// A view's tools: the names its clients are listed and call by, and,
/// in search mode, the search index over the same tools.
#[derive(Debug)]
pub struct ViewTools {
    /// The tools under the names the view's clients use, routed back.
    pub routed: Routed<Tool>,
    /// The same tools as the search index takes them (search mode only).
    searchable: Vec<McpTool>,
    index: OnceLock<ToolIndex>,
}

impl ViewTools {
    /// The tools of `lists` (each server's, in config order) that `view`
    /// shows, named and described as it says.
    pub fn build(view: &View, lists: Vec<(&str, &[McpTool])>) -> ViewTools {
        let profile = &view.profile;
        let lists: Vec<(&str, &[McpTool])> = lists
            .into_iter()
            .filter(|(server, _)| profile.includes_server(server))
            .collect();
        let prefixed = lists.len() > 1;
        let items = lists
            .iter()
            .flat_map(|(server, list)| {
                list.iter()
                    .filter(|t| profile.allows(server, &t.name))
                    .map(|t| {
                        let mut tool = t.clone();
                        // MCP Apps' ui:// links, unique per server as the
                        // resources are (`ui_resources`).
                        if let Some(meta) = tool.meta.as_mut() {
                            crate::ui_resources::outward_meta(meta, server, prefixed);
                        }
                        (server.to_string(), t.name.clone(), tool)
                    })
            })
            .collect();
        let mut routed = Routed::build(items, prefixed, |t: &mut McpTool, name| {
            t.name = name.to_owned()
        });
        overrides(profile, &mut routed);
        let searchable = if view.searches() {
            routed.items.clone()
        } else {
            Vec::new()
        };
        ViewTools {
            routed: Routed {
                items: routed
                    .items
                    .iter()
                    .map(crate::gateway::answers::to_rmcp_tool)
                    .collect(),
                routes: routed.routes,
            },
            searchable,
            index: OnceLock::new(),
        }
    }

    /// What [`SEARCH_TOOL`] answers for `arguments`: the best of the view's
    /// tools for the query, under the names [`CALL_TOOL`] and `tools/call`
    /// take; no match is an empty list.
    pub fn search(&self, arguments: &JsonObject) -> CallToolResult {
        let index = self
            .index
            .get_or_init(|| ToolIndex::from_tools(self.searchable.clone()));
        search_result(index, |t| t.name.clone(), arguments)
    }

    /// [`search`](ViewTools::search) over the tools whose route `keep`
    /// keeps (the client's rights) only.
    pub fn search_where(
        &self,
        arguments: &JsonObject,
        keep: impl Fn(&crate::names::Route) -> bool,
    ) -> CallToolResult {
        let index = self
            .index
            .get_or_init(|| ToolIndex::from_tools(self.searchable.clone()));
        let kept = |t: &McpTool| self.routed.resolve(&t.name).is_some_and(&keep);
        search_result_where(index, |t| t.name.clone(), kept, arguments)
    }

    /// True when a client would be listed the same tools from both.
    pub fn same_as(&self, other: &ViewTools) -> bool {
        self.routed.items == other.routed.items
    }
}

/// Applies `profile`'s renames and descriptions to `routed`. A new name
/// another tool of the view already has is not applied (and logged): the
/// names stay unique.
fn overrides(profile: &Profile, routed: &mut Routed<McpTool>) {
    if profile.rename.is_empty() && profile.descriptions.is_empty() {
        return;
    }
    for item in &mut routed.items {
        let listed = item.name.clone();
        let Some(route) = routed.routes.get(&listed).cloned() else {
            continue;
        };
        if let Some(text) = profile.description(&route.server, &route.name, &listed) {
            item.description = text.to_owned();
        }
        let Some(new) = profile.new_name(&route.server, &route.name, &listed) else {
            continue;
        };
        if new == listed {
            continue;
        }
        if routed.routes.contains_key(new) {
            tracing::warn!(
                profile = %profile.name, tool = %listed, new,
                "not renaming the tool: another tool of the profile has that name"
            );
            continue;
        }
        routed.routes.remove(&listed);
        routed.routes.insert(new.to_owned(), route);
        item.name = new.to_owned();
    }
}

/// The two tools a search-mode view lists: [`SEARCH_TOOL`], [`CALL_TOOL`].
pub fn meta_tools() -> Vec<Tool> {
    [
        (SEARCH_TOOL, search_tool_definition()),
        (CALL_TOOL, call_tool_definition()),
    ]
    .into_iter()
    .map(|(name, (description, schema))| {
        let mut tool = Tool::default();
        tool.name = name.into();
        tool.description = Some(description.into());
        tool.input_schema = Arc::new(schema);
        tool
    })
    .collect()
}

/// A [`CALL_TOOL`] call as the call of the tool it names: its name and
/// arguments in place of the meta-tool's (anything else the client sent,
/// such as a retry's answers, kept); `Err` says what is wrong with the
/// meta-tool's arguments, for the model to read.
pub fn unwrap_call(mut request: CallToolRequestParams) -> Result<CallToolRequestParams, String> {
    let mut arguments = request.arguments.take().unwrap_or_default();
    let Some(Value::String(name)) = arguments.remove("name") else {
        return Err(
            "call_tool needs a `name`: a tool's name exactly as search_tools gave it".to_owned(),
        );
    };
    let inner = match arguments.remove("arguments") {
        Some(Value::Object(map)) => Some(map),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(format!(
                "`arguments` for `{name}` must be a JSON object, as its input schema says"
            ));
        }
    };
    request.name = name.into();
    request.arguments = inner;
    Ok(request)
}

/// An error result a model can read (not a protocol error).
pub fn error_result(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;
    use toolbridge::config::Config;

    use super::*;

    fn tool(server: &str, name: &str, description: &str) -> McpTool {
        McpTool {
            id: McpTool::id_for(server, name),
            name: name.into(),
            description: description.into(),
            server_id: server.into(),
            server_name: server.into(),
            ..McpTool::default()
        }
    }

    fn view(profile: &str) -> View {
        let text = format!(
            r#"{{"mcpServers": {{"gh": {{"command": "x"}}, "fs": {{"command": "y"}}}},
                "profiles": {{"p": {profile}}}}}"#
        );
        let config = Config::parse(Path::new("c.json"), text).unwrap();
        View {
            name: ViewName::profile("p"),
            profile: Arc::new(config.profile("p").unwrap().clone()),
        }
    }

    fn lists() -> Vec<(String, Vec<McpTool>)> {
        vec![
            (
                "gh".into(),
                vec![
                    tool("gh", "create_issue", "Open an issue."),
                    tool("gh", "delete_repo", "Delete a repository."),
                ],
            ),
            (
                "fs".into(),
                vec![
                    tool("fs", "read_file", "Read a file."),
                    tool("fs", "write_file", "Write a file."),
                ],
            ),
        ]
    }

    fn build(view: &View) -> ViewTools {
        let lists = lists();
        ViewTools::build(
            view,
            lists
                .iter()
                .map(|(s, l)| (s.as_str(), l.as_slice()))
                .collect(),
        )
    }

    fn names(tools: &ViewTools) -> Vec<String> {
        tools
            .routed
            .items
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    #[test]
    fn globs_renames_and_descriptions_shape_the_catalog_and_its_routes() {
        let view = view(
            r#"{"tools": ["!*__delete_*", "!fs__write_file"],
                "rename": {"gh__create_issue": "new_issue"},
                "descriptions": {"fs__read_file": "Read a file of the project."}}"#,
        );
        let tools = build(&view);
        assert_eq!(names(&tools), ["new_issue", "fs__read_file"]);
        let route = tools.routed.resolve("new_issue").unwrap();
        assert_eq!(
            (route.server.as_str(), route.name.as_str()),
            ("gh", "create_issue")
        );
        assert!(
            tools.routed.resolve("gh__create_issue").is_none(),
            "the old name is gone"
        );
        assert!(tools.routed.resolve("gh__delete_repo").is_none());
        assert_eq!(
            tools.routed.items[1].description.as_deref(),
            Some("Read a file of the project.")
        );
    }

    #[test]
    fn one_server_keeps_the_names_and_a_rename_may_use_them() {
        let view = view(r#"{"servers": ["fs"], "rename": {"read_file": "cat"}}"#);
        let tools = build(&view);
        assert_eq!(names(&tools), ["cat", "write_file"]);
    }

    #[test]
    fn a_rename_onto_another_tools_name_is_not_applied() {
        let view = view(r#"{"servers": ["fs"], "rename": {"read_file": "write_file"}}"#);
        assert_eq!(names(&build(&view)), ["read_file", "write_file"]);
    }

    #[test]
    fn search_finds_only_the_views_tools_under_its_names() {
        let view = view(
            r#"{"tools": ["!gh__delete_repo"], "rename": {"fs__read_file": "cat"},
                "discovery": "search"}"#,
        );
        let tools = build(&view);
        let found = |query: &str| {
            let result = tools.search(json!({"query": query}).as_object().unwrap());
            let content = result.structured_content.unwrap();
            content["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(found("read a file")[0], "cat");
        assert!(!found("delete a repository").contains(&"gh__delete_repo".to_string()));
        assert!(found("zebra xylophone").is_empty());
    }

    #[test]
    fn a_call_through_the_meta_tool_becomes_the_call_it_names() {
        let mut request = CallToolRequestParams::new(CALL_TOOL);
        request.arguments = json!({"name": "cat", "arguments": {"path": "/x"}})
            .as_object()
            .cloned();
        request.request_state = Some("state".into());
        let inner = unwrap_call(request).unwrap();
        assert_eq!(inner.name, "cat");
        assert_eq!(inner.arguments.unwrap()["path"], "/x");
        assert_eq!(inner.request_state.as_deref(), Some("state"));
        let mut bad = CallToolRequestParams::new(CALL_TOOL);
        bad.arguments = json!({"name": "cat", "arguments": [1]})
            .as_object()
            .cloned();
        assert!(
            unwrap_call(bad)
                .unwrap_err()
                .contains("must be a JSON object")
        );
        assert!(unwrap_call(CallToolRequestParams::new(CALL_TOOL)).is_err());
    }
}
