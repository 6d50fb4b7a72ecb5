//! Listing what a server offers besides tools (resources, resource
//! templates, prompts): every page, within the bounds tool listings have
//! (`pages::Bounds`: a cursor seen before, more than
//! [`MAX_TOOL_PAGES`](super::MAX_TOOL_PAGES) pages or
//! [`MAX_LISTED_TOOLS`](super::MAX_LISTED_TOOLS) items end it with
//! [`PoolError::EndlessListing`]), cached per server in its [`Catalog`]
//! until the server says the list changed. The CLI, the gateway and the
//! page all list through here.
//!
//! Each page is one [`Pool::request`]: the server's `timeout` bounds each,
//! and a page that takes too long is cancelled on the server.

use std::sync::Arc;

use futures::future::join_all;
use rmcp::model::{
    ClientRequest, ListPromptsRequest, ListResourceTemplatesRequest, ListResourcesRequest,
    PaginatedRequestParams, Prompt, Resource, ResourceTemplate, ServerResult,
};

use super::{
    CallOptions, Pool, PoolError, cache::ListCache, catalog::Catalog, error::Feature,
    error::unexpected, pages::Bounds,
};

/// How many times a listing is tried while the server keeps saying its list
/// changed during it (as for tools).
const LIST_ATTEMPTS: usize = 3;

/// The items of several servers (resources, resource templates or prompts),
/// from the all-servers listings such as [`Pool::list_resources_of`].
#[derive(Debug)]
pub struct Listing<T> {
    /// Each server that answered and its items, in the order the servers
    /// were given. A server that does not offer the feature at all is here
    /// with no items: it is not a failure.
    pub servers: Vec<(String, Arc<Vec<T>>)>,
    /// The servers that could not be listed, and why.
    pub failures: Vec<(String, PoolError)>,
}

impl<T> Default for Listing<T> {
    fn default() -> Self {
        Listing {
            servers: Vec::new(),
            failures: Vec::new(),
        }
    }
}

/// A kind of item a server lists page by page.
pub(super) trait Listed: Sized + Send + Sync + 'static {
    /// The list's name in messages ("resource" list).
    const LIST: &'static str;
    /// The request's method, for messages.
    const METHOD: &'static str;
    /// What the server must declare.
    const FEATURE: Feature;
    /// The request for the page at `cursor`.
    fn request(cursor: Option<String>) -> ClientRequest;
    /// The page's items and the next cursor, or `result` back if it is not
    /// this list.
    fn page(result: ServerResult) -> Result<Page<Self>, Box<ServerResult>>;
    /// Where the server's list is cached.
    fn cache(catalog: &Catalog) -> &ListCache<Self>;
}

/// One page: its items and the cursor of the next.
pub(super) type Page<T> = (Vec<T>, Option<String>);

fn params(cursor: Option<String>) -> PaginatedRequestParams {
    PaginatedRequestParams::default().with_cursor(cursor)
}

impl Listed for Resource {
    const LIST: &'static str = "resource";
    const METHOD: &'static str = "resources/list";
    const FEATURE: Feature = Feature::Resources;
    fn request(cursor: Option<String>) -> ClientRequest {
        ClientRequest::ListResourcesRequest(ListResourcesRequest::with_param(params(cursor)))
    }
    fn page(result: ServerResult) -> Result<Page<Self>, Box<ServerResult>> {
        match result {
            ServerResult::ListResourcesResult(page) => Ok((page.resources, page.next_cursor)),
            other => Err(Box::new(other)),
        }
    }
    fn cache(catalog: &Catalog) -> &ListCache<Self> {
        &catalog.resources
    }
}

impl Listed for ResourceTemplate {
    const LIST: &'static str = "resource template";
    const METHOD: &'static str = "resources/templates/list";
    const FEATURE: Feature = Feature::Resources;
    fn request(cursor: Option<String>) -> ClientRequest {
        ClientRequest::ListResourceTemplatesRequest(ListResourceTemplatesRequest::with_param(
            params(cursor),
        ))
    }
    fn page(result: ServerResult) -> Result<Page<Self>, Box<ServerResult>> {
        match result {
            ServerResult::ListResourceTemplatesResult(page) => {
                Ok((page.resource_templates, page.next_cursor))
            }
            // rmcp reads `{"resources": []}`-like answers in the first
            // variant that fits; an empty page may arrive as another list.
            ServerResult::ListResourcesResult(page) if page.resources.is_empty() => {
                Ok((Vec::new(), page.next_cursor))
            }
            other => Err(Box::new(other)),
        }
    }
    fn cache(catalog: &Catalog) -> &ListCache<Self> {
        &catalog.templates
    }
}

impl Listed for Prompt {
    const LIST: &'static str = "prompt";
    const METHOD: &'static str = "prompts/list";
    const FEATURE: Feature = Feature::Prompts;
    fn request(cursor: Option<String>) -> ClientRequest {
        ClientRequest::ListPromptsRequest(ListPromptsRequest::with_param(params(cursor)))
    }
    fn page(result: ServerResult) -> Result<Page<Self>, Box<ServerResult>> {
        match result {
            ServerResult::ListPromptsResult(page) => Ok((page.prompts, page.next_cursor)),
            other => Err(Box::new(other)),
        }
    }
    fn cache(catalog: &Catalog) -> &ListCache<Self> {
        &catalog.prompts
    }
}

impl Pool {
    /// `server`'s list of `T`, all pages, from its cache when it is fresh.
    pub(super) async fn list_items<T: Listed>(
        &self,
        server: &str,
    ) -> Result<Arc<Vec<T>>, PoolError> {
        let slot = &self.slot(server)?;
        let cache = T::cache(&slot.catalog);
        if let Some(items) = cache.get() {
            return Ok(items);
        }
        self.offering(slot, T::FEATURE).await?;
        let mut attempt = 1;
        loop {
            let ticket = cache.ticket();
            let items = Arc::new(self.all_pages::<T>(server).await?);
            // A list_changed during the listing: the answer may be the old
            // list, returned but not cached; list again, a few times.
            if cache.put(ticket, items.clone()) || attempt == LIST_ATTEMPTS {
                return Ok(items);
            }
            attempt += 1;
        }
    }

    /// Every page of `server`'s list of `T`, from the server, within the
    /// bounds every listing has ([`Bounds`]).
    async fn all_pages<T: Listed>(&self, server: &str) -> Result<Vec<T>, PoolError> {
        let mut bounds = Bounds::new(server, T::LIST);
        let mut items = Vec::new();
        let mut cursor = None;
        loop {
            let result = self
                .request(server, T::request(cursor), &CallOptions::default())
                .await?;
            let (mut more, next) =
                T::page(result).map_err(|other| unexpected(server, T::METHOD, &other))?;
            bounds.count(more.len())?;
            items.append(&mut more);
            cursor = bounds.next(next)?;
            if cursor.is_none() {
                return Ok(items);
            }
        }
    }

    /// The list of `T` of each of `servers`, listed in parallel, in the
    /// order given; a server without the feature has none.
    pub(super) async fn list_items_of<T: Listed>(&self, servers: &[String]) -> Listing<T> {
        let listings = servers
            .iter()
            .map(|server| async move { (server.clone(), self.list_items::<T>(server).await) });
        let mut listing = Listing::default();
        for (server, result) in join_all(listings).await {
            match result {
                Ok(items) => listing.servers.push((server, items)),
                Err(PoolError::NotOffered { .. }) => {
                    listing.servers.push((server, Arc::new(Vec::new())));
                }
                Err(e) => listing.failures.push((server, e)),
            }
        }
        listing
    }
}
