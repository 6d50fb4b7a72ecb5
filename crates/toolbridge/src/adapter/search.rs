//! The "search, then call" pair: two tools a model gets instead of every
//! definition of every server. [`SEARCH_TOOL`] takes a task in words and
//! answers with the best few tools (name, description, input schema);
//! [`CALL_TOOL`] runs one of them by the name the search gave, with its
//! arguments. The model pays for two small definitions per turn and reads
//! the definitions it needs only when it looks for them.
//!
//! The names are the ones `toolbridge tools --format` gives (one
//! [`NameTable`] over every tool searched), so they are unique and the
//! search never reveals a tool the call could not reach, nor the reverse:
//! both go through the same index, built from the pool's model-facing
//! listing ([`Pool::tool_index_of`]). A real call is an
//! [`McpToolAdapter`]'s: the server's timeout, the result budget.
//!
//! What the pair says to a model ([`search_tool_definition`],
//! [`call_tool_definition`], [`search_result`]) is plain data, for a
//! gateway to serve the same pair over its own upstreams.

use crate::lock::LockUnpoisoned as _;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use serde_json::{Value, json};

use super::{McpToolAdapter, ResultBudget, Tool, ToolError};
use crate::{
    format::{NameStyle, NameTable},
    pool::Pool,
    search::ToolIndex,
    tools::McpTool,
};

/// The search tool's name.
pub const SEARCH_TOOL: &str = "search_tools";
/// The call tool's name.
pub const CALL_TOOL: &str = "call_tool";
/// How many tools a search gives unless the model asks for another number.
pub const DEFAULT_LIMIT: usize = 5;
/// The most a search gives.
pub const MAX_LIMIT: usize = 20;

/// The search tool's description and input schema.
pub fn search_tool_definition() -> (&'static str, JsonObject) {
    let description = "Find the tools for a task. Describe what you want to do in a few words \
        (\"create a GitHub issue\", \"list pods in the cluster\"); the answer lists the best \
        matching tools, best first, each with its name, description and input schema. Then run \
        one with call_tool, by that name.";
    let schema = json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "The task, in words."},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                      "description": format!("How many tools at most (default {DEFAULT_LIMIT}).")}
        },
        "required": ["query"]
    });
    (description, object(schema))
}

/// The call tool's description and input schema.
pub fn call_tool_definition() -> (&'static str, JsonObject) {
    let description = "Run a tool that search_tools found: its name exactly as the search gave \
        it, and its arguments as its input schema says.";
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The tool's name, from search_tools."},
            "arguments": {"type": "object", "description": "The tool's arguments."}
        },
        "required": ["name"]
    });
    (description, object(schema))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// What [`SEARCH_TOOL`] answers for `arguments` over `index`, each tool
/// under the name `name_of` gives it (the name [`CALL_TOOL`] takes):
/// `{"tools": [{"name", "description", "inputSchema"}]}`, as text and as
/// structured content. No match is an empty list, not an error; a missing
/// query is an error result the model can read.
pub fn search_result(
    index: &ToolIndex,
    name_of: impl Fn(&McpTool) -> String,
    arguments: &JsonObject,
) -> CallToolResult {
    search_result_where(index, name_of, |_| true, arguments)
}

/// [`search_result`] over the tools of `index` that `keep` keeps only (a
/// gateway client's rights): the best `limit` of those, none of the others
/// named.
pub fn search_result_where(
    index: &ToolIndex,
    name_of: impl Fn(&McpTool) -> String,
    keep: impl Fn(&McpTool) -> bool,
    arguments: &JsonObject,
) -> CallToolResult {
    let Some(query) = arguments.get("query").and_then(Value::as_str) else {
        return error("search_tools needs a `query`: the task, in words");
    };
    let limit = match arguments.get("limit").and_then(Value::as_u64) {
        Some(n) => (n as usize).clamp(1, MAX_LIMIT),
        None => DEFAULT_LIMIT,
    };
    let mut hits = index.search(query, limit);
    let full = hits.len() == limit;
    hits.retain(|hit| keep(hit.tool));
    if hits.len() < limit && full {
        // Some of the best were not kept: the best of the kept ones.
        hits = index.search(query, index.len());
        hits.retain(|hit| keep(hit.tool));
        hits.truncate(limit);
    }
    let tools: Vec<Value> = hits
        .into_iter()
        .map(|hit| {
            json!({
                "name": name_of(hit.tool),
                "description": hit.tool.description,
                "inputSchema": hit.tool.input_schema,
            })
        })
        .collect();
    let answer = json!({ "tools": tools });
    let mut result = CallToolResult::success(vec![ContentBlock::text(answer.to_string())]);
    result.structured_content = Some(answer);
    result
}

fn error(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.into())])
}

/// The pair over the tools of some of a pool's servers.
pub struct SearchThenCall {
    pool: Pool,
    servers: Vec<String>,
    style: NameStyle,
    budget: ResultBudget,
    /// The names of the index last used, built again with it.
    named: Mutex<Option<(Arc<ToolIndex>, Arc<NameTable>)>>,
}

impl SearchThenCall {
    /// The pair over `servers` of `pool`, tools named in `style`
    /// (`mcp__{server}__{tool}` with [`NameStyle::Mcp`]).
    pub fn new(pool: Pool, servers: Vec<String>, style: NameStyle) -> Arc<Self> {
        Arc::new(SearchThenCall {
            pool,
            servers,
            style,
            budget: ResultBudget::default(),
            named: Mutex::new(None),
        })
    }

    /// The two tools: [`SEARCH_TOOL`], then [`CALL_TOOL`].
    pub fn tools(self: &Arc<Self>) -> [Arc<dyn Tool>; 2] {
        let (search_description, search_schema) = search_tool_definition();
        let (call_description, call_schema) = call_tool_definition();
        [
            Arc::new(Meta {
                pair: self.clone(),
                kind: Kind::Search,
                description: search_description,
                schema: search_schema,
            }),
            Arc::new(Meta {
                pair: self.clone(),
                kind: Kind::Call,
                description: call_description,
                schema: call_schema,
            }),
        ]
    }

    /// The current index and the names of its tools.
    async fn named(&self) -> (Arc<ToolIndex>, Arc<NameTable>) {
        let (index, failures) = self.pool.tool_index_of(&self.servers).await;
        for (server, error) in &failures {
            tracing::warn!(server = %server, error = %error, "the server's tools are not searched");
        }
        let mut named = self.named.lock_unpoisoned();
        if let Some((cached, names)) = named.as_ref()
            && Arc::ptr_eq(cached, &index)
        {
            return (index, names.clone());
        }
        let names = Arc::new(NameTable::new(
            self.style,
            index
                .tools()
                .map(|t| (t.server_id.as_str(), t.name.as_str())),
        ));
        *named = Some((index.clone(), names.clone()));
        (index, names)
    }

    async fn search(&self, arguments: JsonObject) -> CallToolResult {
        let (index, names) = self.named().await;
        search_result(&index, |t| names.name_for(t).into_owned(), &arguments)
    }

    async fn call(&self, mut arguments: JsonObject) -> Result<CallToolResult, ToolError> {
        let Some(name) = arguments
            .get("name")
            .and_then(Value::as_str)
            .map(str::to_owned)
        else {
            return Ok(error(
                "call_tool needs a `name`: a tool's name exactly as search_tools gave it",
            ));
        };
        let (index, names) = self.named().await;
        let found: Option<McpTool> = names.resolve(&name).and_then(|key| {
            index
                .tools()
                .find(|t| t.server_id == key.server_id && t.name == key.tool)
                .cloned()
        });
        let Some(tool) = found else {
            return Ok(error(format!(
                "no tool is named `{name}`; search_tools gives the names of the tools there are"
            )));
        };
        let tool_arguments = match arguments.remove("arguments") {
            Some(Value::Object(map)) => map,
            None | Some(Value::Null) => JsonObject::new(),
            Some(_) => {
                return Ok(error(format!(
                    "`arguments` for `{name}` must be a JSON object, as its input schema says"
                )));
            }
        };
        McpToolAdapter::new(tool, name, self.pool.clone())
            .with_budget(self.budget.clone())
            .call_with_id(tool_arguments, None)
            .await
    }
}

enum Kind {
    Search,
    Call,
}

/// One of the pair, as a [`Tool`].
struct Meta {
    pair: Arc<SearchThenCall>,
    kind: Kind,
    description: &'static str,
    schema: JsonObject,
}

impl Tool for Meta {
    fn name(&self) -> &str {
        match self.kind {
            Kind::Search => SEARCH_TOOL,
            Kind::Call => CALL_TOOL,
        }
    }

    fn description(&self) -> &str {
        self.description
    }

    fn parameters(&self) -> &JsonObject {
        &self.schema
    }

    fn call(&self, arguments: JsonObject) -> BoxFuture<'_, Result<CallToolResult, ToolError>> {
        match self.kind {
            Kind::Search => Box::pin(async move { Ok(self.pair.search(arguments).await) }),
            Kind::Call => Box::pin(self.pair.call(arguments)),
        }
    }
}
