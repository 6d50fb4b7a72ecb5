//! Listing a server's tools page by page, safely against a hostile or broken
//! server.
//!
//! rmcp's `list_all_tools` follows `nextCursor` for as long as the server
//! gives one and parses each page as a whole. That let a server whose pages
//! point to themselves take 4 GB in 26 s, and one tool with a malformed
//! `inputSchema` fail the whole list with "Unexpected response type". This
//! loop sends the `tools/list` requests itself and:
//!
//! - stops with [`PoolError::EndlessListing`] at a cursor it has seen before
//!   (a page pointing to itself, or a cycle), after [`MAX_TOOL_PAGES`] pages,
//!   or past [`MAX_LISTED_TOOLS`] tools;
//! - reads a page rmcp could not read as a tool list (it arrives as rmcp's
//!   catch-all `CustomResult`) one tool at a time, keeping the valid tools and
//!   reporting each broken one by name as a [`SkippedTool`];
//! - keeps the first of two tools with the same name and reports the second,
//!   so no consumer (provider formats, adapters, the gateway) ever sees two
//!   definitions under one name.

use std::collections::HashSet;

use rmcp::{
    RoleClient,
    model::{
        ClientRequest, CustomResult, ListToolsRequest, PaginatedRequestParams, ServerResult, Tool,
    },
    service::{Peer, ServiceError},
};

use super::PoolError;

/// Most `tools/list` pages one listing follows (a server with more is taken
/// to be looping). Real servers send one page, or a few dozen at most.
pub const MAX_TOOL_PAGES: usize = 1_000;

/// Most tools one server may list. Converting 100,000 tools for a provider
/// works (and takes about 100 MB); past that a server is taken to be broken.
pub const MAX_LISTED_TOOLS: usize = 100_000;

/// A tool the server listed that toolbridge left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedTool {
    /// The server's config name.
    pub server: String,
    /// The tool's name, or `#N` (its place in the page) when it has none.
    pub tool: String,
    /// Why it was left out.
    pub reason: SkipReason,
}

/// Why a listed tool was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// The definition is not a valid MCP tool (an `inputSchema` that is not
    /// an object, say); the text says what is wrong with it.
    Invalid(String),
    /// A tool with the same name came earlier in the list; that one is kept.
    DuplicateName,
}

impl std::fmt::Display for SkippedTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (server, tool) = (&self.server, &self.tool);
        match &self.reason {
            SkipReason::Invalid(why) => write!(
                f,
                "server \"{server}\": tool \"{tool}\" is left out because its definition \
                 is invalid ({why}); the other tools are listed. Tell the server's authors"
            ),
            SkipReason::DuplicateName => write!(
                f,
                "server \"{server}\" lists two tools named \"{tool}\"; the first is kept and \
                 the second left out. Tell the server's authors"
            ),
        }
    }
}

/// The tools of every page, in order, and those left out.
#[derive(Debug, Default)]
pub(super) struct Listed {
    pub(super) tools: Vec<Tool>,
    pub(super) skipped: Vec<SkippedTool>,
}

/// Why a listing failed.
#[derive(Debug)]
pub(super) enum PagesError {
    /// The request failed (the service error is turned into a
    /// [`PoolError`] by the pool, which knows the connection).
    Service(ServiceError),
    /// The server broke the listing's rules.
    Pool(PoolError),
}

/// Every page of `server`'s tools, through `peer`.
pub(super) async fn list_all_tools(
    server: &str,
    peer: &Peer<RoleClient>,
) -> Result<Listed, PagesError> {
    let mut listing = Pages::new(server);
    let mut cursor: Option<String> = None;
    loop {
        let params = PaginatedRequestParams::default().with_cursor(cursor.clone());
        let request = ClientRequest::ListToolsRequest(ListToolsRequest::with_param(params));
        let result = peer
            .send_request(request)
            .await
            .map_err(PagesError::Service)?;
        cursor = listing.add(result).map_err(PagesError::Pool)?;
        if cursor.is_none() {
            return Ok(listing.done);
        }
    }
}

/// The bounds of one paginated listing, of any list (tools here;
/// resources, templates and prompts in `listing`): the cursors it gave, its
/// pages and items so far.
pub(super) struct Bounds<'a> {
    server: &'a str,
    /// The list's name in messages ("tool").
    list: &'static str,
    pages: usize,
    items: usize,
    cursors: HashSet<String>,
}

impl<'a> Bounds<'a> {
    pub(super) fn new(server: &'a str, list: &'static str) -> Self {
        Bounds {
            server,
            list,
            pages: 0,
            items: 0,
            cursors: HashSet::new(),
        }
    }

    /// Counts `items` more, of a page about to be kept:
    /// [`PoolError::EndlessListing`] past [`MAX_LISTED_TOOLS`].
    pub(super) fn count(&mut self, items: usize) -> Result<(), PoolError> {
        self.items += items;
        if self.items > MAX_LISTED_TOOLS {
            return Err(self.endless(format!(
                "it listed more than {MAX_LISTED_TOOLS} {}s",
                self.list
            )));
        }
        Ok(())
    }

    /// After a page whose next cursor is `next`: the cursor to follow, or
    /// [`PoolError::EndlessListing`] for a cursor given before or a page
    /// past [`MAX_TOOL_PAGES`].
    pub(super) fn next(&mut self, next: Option<String>) -> Result<Option<String>, PoolError> {
        self.pages += 1;
        let Some(next) = next else {
            return Ok(None);
        };
        if !self.cursors.insert(next.clone()) {
            return Err(self.endless(format!(
                "page {} points back to cursor \"{}\", which it already gave",
                self.pages,
                shorten(&next)
            )));
        }
        if self.pages >= MAX_TOOL_PAGES {
            return Err(self.endless(format!("it still had more after {MAX_TOOL_PAGES} pages")));
        }
        Ok(Some(next))
    }

    fn endless(&self, reason: String) -> PoolError {
        PoolError::EndlessListing {
            server: self.server.to_owned(),
            list: self.list,
            reason,
        }
    }
}

/// The state of one tool listing: what was kept, its bounds, the names
/// taken.
struct Pages<'a> {
    server: &'a str,
    done: Listed,
    bounds: Bounds<'a>,
    names: HashSet<String>,
}

impl<'a> Pages<'a> {
    fn new(server: &'a str) -> Self {
        Pages {
            server,
            done: Listed::default(),
            bounds: Bounds::new(server, "tool"),
            names: HashSet::new(),
        }
    }

    /// Takes one page's result; the cursor of the next page, if any.
    fn add(&mut self, result: ServerResult) -> Result<Option<String>, PoolError> {
        let (tools, next) = match result {
            ServerResult::ListToolsResult(page) => (
                page.tools.into_iter().map(Ok).collect::<Vec<_>>(),
                page.next_cursor,
            ),
            ServerResult::CustomResult(CustomResult(value)) => self.tolerant(value)?,
            other => {
                return Err(PoolError::Protocol {
                    server: self.server.to_owned(),
                    message: format!(
                        "it answered tools/list with something else than a tool list ({})",
                        super::error::result_kind(&other)
                    ),
                });
            }
        };
        for tool in tools {
            match tool {
                Ok(tool) => self.keep(tool)?,
                Err(skipped) => self.skip(skipped),
            }
        }
        self.bounds.next(next)
    }

    /// A page rmcp could not read as a tool list, read one tool at a time.
    #[allow(clippy::type_complexity)]
    fn tolerant(
        &self,
        value: serde_json::Value,
    ) -> Result<(Vec<Result<Tool, SkippedTool>>, Option<String>), PoolError> {
        let serde_json::Value::Object(mut page) = value else {
            return Err(self.not_a_list("the result is not an object"));
        };
        let Some(serde_json::Value::Array(items)) = page.remove("tools") else {
            return Err(self.not_a_list("the result has no \"tools\" array"));
        };
        let next = match page.remove("nextCursor") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(cursor)) => Some(cursor),
            Some(_) => return Err(self.not_a_list("its \"nextCursor\" is not a string")),
        };
        let tools = items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let name = match item.get("name").and_then(serde_json::Value::as_str) {
                    Some(name) => name.to_owned(),
                    None => format!("#{}", i + 1),
                };
                serde_json::from_value::<Tool>(item).map_err(|e| SkippedTool {
                    server: self.server.to_owned(),
                    tool: name,
                    reason: SkipReason::Invalid(e.to_string()),
                })
            })
            .collect();
        Ok((tools, next))
    }

    fn keep(&mut self, tool: Tool) -> Result<(), PoolError> {
        if !self.names.insert(tool.name.to_string()) {
            self.skip(SkippedTool {
                server: self.server.to_owned(),
                tool: tool.name.to_string(),
                reason: SkipReason::DuplicateName,
            });
            return Ok(());
        }
        self.bounds.count(1)?;
        self.done.tools.push(tool);
        Ok(())
    }

    fn skip(&mut self, skipped: SkippedTool) {
        // Reported to the user through `ToolListing::skipped`.
        tracing::debug!(server = %skipped.server, tool = %skipped.tool, "{skipped}");
        // Bounded like the tools: a server cannot grow this without end.
        if self.done.skipped.len() < MAX_LISTED_TOOLS {
            self.done.skipped.push(skipped);
        }
    }

    fn not_a_list(&self, why: &str) -> PoolError {
        PoolError::Protocol {
            server: self.server.to_owned(),
            message: format!("its tools/list answer is not a tool list: {why}"),
        }
    }
}

/// A cursor as shown in a message: at most 64 characters.
fn shorten(cursor: &str) -> String {
    match cursor.char_indices().nth(64) {
        Some((cut, _)) => format!("{}…", &cursor[..cut]),
        None => cursor.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ListToolsResult;
    use serde_json::json;

    fn page(tools: serde_json::Value, next: Option<&str>) -> ServerResult {
        let mut value = json!({ "tools": tools });
        if let Some(next) = next {
            value["nextCursor"] = json!(next);
        }
        serde_json::from_value(value).unwrap()
    }

    fn tool(name: &str) -> serde_json::Value {
        json!({"name": name, "inputSchema": {"type": "object"}})
    }

    #[test]
    fn a_page_pointing_to_itself_ends_the_listing_on_the_second_page() {
        let mut pages = Pages::new("loop");
        assert_eq!(
            pages.add(page(json!([tool("a")]), Some("c"))).unwrap(),
            Some("c".to_owned())
        );
        let error = pages.add(page(json!([tool("b")]), Some("c"))).unwrap_err();
        let message = error.to_string();
        assert!(
            matches!(error, PoolError::EndlessListing { .. }),
            "{error:?}"
        );
        assert!(message.contains("server \"loop\""), "{message}");
        assert!(
            message.contains("page 2 points back to cursor \"c\""),
            "{message}"
        );
    }

    #[test]
    fn a_malformed_tool_is_left_out_by_name_and_the_others_kept() {
        let result = page(
            json!([tool("good"), {"name": "bad", "inputSchema": "object"}, tool("also")]),
            None,
        );
        assert!(
            matches!(result, ServerResult::CustomResult(_)),
            "rmcp refuses the whole page: {result:?}"
        );
        let mut pages = Pages::new("s");
        assert_eq!(pages.add(result).unwrap(), None);
        let names: Vec<_> = pages.done.tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["good", "also"]);
        assert_eq!(pages.done.skipped.len(), 1);
        assert_eq!(pages.done.skipped[0].tool, "bad");
        assert!(matches!(
            pages.done.skipped[0].reason,
            SkipReason::Invalid(_)
        ));
    }

    #[test]
    fn the_second_tool_of_a_name_is_left_out_across_pages() {
        let mut pages = Pages::new("s");
        pages.add(page(json!([tool("a")]), Some("1"))).unwrap();
        pages
            .add(page(json!([tool("a"), tool("b")]), None))
            .unwrap();
        let names: Vec<_> = pages.done.tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(pages.done.skipped[0].reason, SkipReason::DuplicateName);
        assert!(
            pages.done.skipped[0]
                .to_string()
                .contains("lists two tools named \"a\"")
        );
    }

    #[test]
    fn a_valid_page_still_takes_the_typed_path() {
        let typed = ServerResult::ListToolsResult(ListToolsResult::default());
        let mut pages = Pages::new("s");
        assert_eq!(pages.add(typed).unwrap(), None);
    }
}
