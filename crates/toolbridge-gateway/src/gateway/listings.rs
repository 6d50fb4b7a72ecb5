//! What a view lists, aggregated over its upstreams: its tools (built into
//! the view's name table, and cached until a list or the profile changes),
//! prompts, resources and resource templates, and where each name a client
//! sends goes back to (a server and the name there).

use std::{collections::HashMap, future::Future, sync::Arc};
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::join_all;
use rmcp::model::{ErrorCode, Prompt, Resource, ResourceTemplate};
use toolbridge::pool::{Pool, PoolError};

use super::{Gateway, tools_cache::ToolsCache};
use crate::{
    names::{Route, Routed},
    profile::{View, ViewTools},
};

impl Gateway {
    /// The tools `view` shows, under the names its clients see. Servers
    /// that cannot be listed are left out (and logged).
    pub async fn tools(&self, view: &View) -> Arc<ViewTools> {
        let pool = self.pool();
        let servers: Vec<String> = pool
            .server_names()
            .into_iter()
            .filter(|name| view.profile.includes_server(name))
            .collect();
        let results = join_all(
            servers
                .iter()
                .map(|name| async move { pool.list_server_tools(name).await }),
        )
        .await;
        let mut lists = Vec::with_capacity(results.len());
        for (name, result) in servers.iter().zip(results) {
            match result {
                Ok(list) => lists.push(list),
                Err(e) => {
                    tracing::warn!(server = name, error = %e, "leaving the server's tools out");
                    lists.push(Arc::new(Vec::new()));
                }
            }
        }
        let mut cache = self.inner.tools.lock_unpoisoned();
        let cached = cache.get(&view.name);
        if let Some(cached) = cached
            && cached.servers == servers
            && Arc::ptr_eq(&cached.profile, &view.profile)
            && cached.lists.len() == lists.len()
            && cached
                .lists
                .iter()
                .zip(&lists)
                .all(|(a, b)| Arc::ptr_eq(a, b))
        {
            return cached.tools.clone();
        }
        let announced = cached.map(|c| c.announced.clone());
        let tools = Arc::new(ViewTools::build(
            view,
            servers
                .iter()
                .zip(&lists)
                .map(|(server, list)| (server.as_str(), list.as_slice()))
                .collect(),
        ));
        let announced = announced.unwrap_or_else(|| tools.clone());
        cache.insert(
            view.name.clone(),
            ToolsCache {
                servers,
                profile: view.profile.clone(),
                lists,
                tools: tools.clone(),
                announced,
            },
        );
        tools
    }

    /// Where the tool `view`'s clients call `name` is: itself on the one
    /// upstream when the view is every tool of just one (no listing
    /// needed), else from the view's exposed names.
    pub async fn resolve_tool(&self, view: &View, name: &str) -> Option<Route> {
        if view.profile.is_everything()
            && let Some(only) = self.pool().only_server()
        {
            return Some(Route {
                server: only,
                name: name.to_owned(),
            });
        }
        self.tools(view).await.routed.resolve(name).cloned()
    }

    /// The prompts of `view`'s servers under the names its clients see.
    pub async fn prompts(&self, view: &View) -> Arc<Routed<Prompt>> {
        let lists = self
            .list_each(view, |pool, server| async move {
                pool.list_prompts(&server).await
            })
            .await;
        let items = lists
            .into_iter()
            .flat_map(|(server, prompts)| {
                prompts
                    .iter()
                    .map(|p| (server.clone(), p.name.clone(), p.clone()))
                    .collect::<Vec<_>>()
            })
            .collect();
        let routed = Arc::new(Routed::build(
            items,
            view.servers(&self.pool().server_names()).len() > 1,
            |p, name| p.name = name.to_owned(),
        ));
        self.inner
            .prompts
            .lock_unpoisoned()
            .insert(view.name.clone(), routed.clone());
        routed
    }

    /// Where the prompt `view`'s clients call `name` is.
    pub async fn resolve_prompt(&self, view: &View, name: &str) -> Option<Route> {
        if let [only] = view.servers(&self.pool().server_names()).as_slice() {
            return Some(Route {
                server: (*only).clone(),
                name: name.to_owned(),
            });
        }
        let known = self
            .inner
            .prompts
            .lock_unpoisoned()
            .get(&view.name)
            .and_then(|c| c.resolve(name).cloned());
        match known {
            Some(route) => Some(route),
            None => self.prompts(view).await.resolve(name).cloned(),
        }
    }

    /// The resources of `view`'s servers, noting which server has each.
    /// URIs are unchanged but for MCP Apps' `ui://` ones, which get their
    /// server's name with several servers ([`crate::ui_resources`]).
    pub async fn resources(&self, view: &View) -> Vec<Resource> {
        let lists = self
            .list_each(view, |pool, server| async move {
                pool.list_resources(&server).await
            })
            .await;
        let several = view.servers(&self.pool().server_names()).len() > 1;
        let mut all = Vec::new();
        let mut routes = HashMap::new();
        let listed: Vec<String> = lists.iter().map(|(server, _)| server.clone()).collect();
        for (server, resources) in lists {
            for resource in resources.iter() {
                let mut resource = resource.clone();
                resource.uri = crate::ui_resources::outward(&resource.uri, &server, several);
                routes
                    .entry(resource.uri.clone())
                    .or_insert_with(|| server.clone());
                all.push(resource);
            }
        }
        // The routes of the servers listed are replaced; other views' stay.
        let mut known = self.inner.resources.lock_unpoisoned();
        known.retain(|_, server| !listed.contains(server));
        for (uri, server) in routes {
            known.entry(uri).or_insert(server);
        }
        all
    }

    /// The resource templates of `view`'s servers, noting which server has
    /// each.
    pub async fn resource_templates(&self, view: &View) -> Vec<ResourceTemplate> {
        let lists = self
            .list_each(view, |pool, server| async move {
                pool.list_resource_templates(&server).await
            })
            .await;
        let mut all = Vec::new();
        let mut routes = Vec::new();
        let listed: Vec<String> = lists.iter().map(|(server, _)| server.clone()).collect();
        for (server, templates) in lists {
            for template in templates.iter() {
                routes.push((template.uri_template.clone(), server.clone()));
                all.push(template.clone());
            }
        }
        let mut known = self.inner.templates.lock_unpoisoned();
        known.retain(|(_, server)| !listed.contains(server));
        known.extend(routes);
        all
    }

    /// The servers of `view` that may have resource `uri`, the likeliest
    /// first: the one that listed it, else those with a template it fits,
    /// else (when nothing is known) every server of the view in config
    /// order. Never a server the view does not show.
    pub async fn servers_for_uri(&self, view: &View, uri: &str) -> Vec<String> {
        let names = self.pool().server_names();
        let servers = view.servers(&names);
        if let [only] = servers.as_slice() {
            return vec![(*only).clone()];
        }
        let shown = |server: &String| view.profile.includes_server(server);
        for attempt in 0..2 {
            let listed = self.inner.resources.lock_unpoisoned().get(uri).cloned();
            if let Some(server) = listed.filter(shown) {
                return vec![server];
            }
            let fitting: Vec<String> = self
                .inner
                .templates
                .lock_unpoisoned()
                .iter()
                .filter(|(template, server)| shown(server) && template_fits(template, uri))
                .map(|(_, server)| server.clone())
                .collect();
            if !fitting.is_empty() {
                return fitting;
            }
            if attempt == 0 {
                self.resources(view).await;
                self.resource_templates(view).await;
            }
        }
        servers.into_iter().cloned().collect()
    }

    /// One listing (`list`: the pool's, all pages, bounded and cached
    /// until the server says it changed) of each server of `view`, in
    /// config order; a server that does not offer it gives nothing, one
    /// that fails is logged.
    async fn list_each<T, Listed>(
        &self,
        view: &View,
        list: impl Fn(Pool, String) -> Listed,
    ) -> Vec<(String, Arc<Vec<T>>)>
    where
        Listed: Future<Output = Result<Arc<Vec<T>>, PoolError>>,
    {
        let servers = self
            .pool()
            .server_names()
            .into_iter()
            .filter(|name| view.profile.includes_server(name));
        join_all(servers.map(|name| {
            let listing = list(self.pool().clone(), name.clone());
            async move {
                let items = match listing.await {
                    Ok(items) => items,
                    Err(e) if is_not_offered(&e) => Arc::new(Vec::new()),
                    Err(e) => {
                        tracing::warn!(server = name, error = %e, "leaving the server's listing out");
                        Arc::new(Vec::new())
                    }
                };
                (name, items)
            }
        }))
        .await
    }
}

/// Whether a server does not offer what was asked (it does not declare
/// it, or answers "method not found"), which in an aggregate listing means
/// "nothing", not a failure.
fn is_not_offered(error: &PoolError) -> bool {
    matches!(error, PoolError::NotOffered { .. })
        || matches!(error, PoolError::Server { code, .. } if *code == ErrorCode::METHOD_NOT_FOUND.0)
}

/// Whether `uri` may come from `template` (RFC 6570): the text before the
/// first expression is a prefix of it. Enough to pick the server; the
/// server itself decides.
fn template_fits(template: &str, uri: &str) -> bool {
    let literal = template.split('{').next().unwrap_or_default();
    !literal.is_empty() && uri.starts_with(literal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_fits_the_uris_with_its_literal_prefix() {
        assert!(template_fits(
            "test://template/{id}/data",
            "test://template/7/data"
        ));
        assert!(!template_fits("test://template/{id}", "file:///x"));
        assert!(!template_fits("{all}", "file:///x"));
    }
}
