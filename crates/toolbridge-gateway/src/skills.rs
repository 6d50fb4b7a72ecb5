//! The upstreams' skills (SEP-2640) served to the gateway's clients:
//! `skills/list` is every skill of the view's servers, `skills/get` finds
//! one, and a `resources/read` of a skill's file goes to the server that
//! serves it.
//!
//! A skill is its server and its URI: two servers may both serve
//! `skill://refunds/SKILL.md`. With one server in the view, URIs are kept
//! as they are. With several, each `skill://` URI (the entry's, and its
//! files') gets the server's name as a first path segment,
//! `skill://SERVER/refunds/SKILL.md`, so no two are alike and the URI says
//! where it goes; the skill's name (the last segment) and every digest stay
//! as the server gave them, so a client verifies the files it reads as it
//! would from the server itself. A skill under another scheme keeps its
//! URI and its files are routed as other resources are.
//!
//! The listings come from each upstream's pool (`Pool::list_skills`,
//! cached until the server's resources change); nothing here reads a file.

use rmcp::model::{ErrorData, ResourceContents, Skill, SkillResources};
use toolbridge::pool::{CallOptions, PoolError};

use crate::{
    gateway::{Gateway, to_mcp_error},
    profile::View,
};

const SCHEME: &str = "skill://";

/// The view's servers, in config order.
fn servers(gateway: &Gateway, view: &View) -> Vec<String> {
    view.servers(&gateway.pool().server_names())
        .into_iter()
        .cloned()
        .collect()
}

/// `uri` of `server` as the gateway's clients see it.
fn outward(uri: &str, server: &str, several: bool) -> String {
    match uri.strip_prefix(SCHEME) {
        Some(rest) if several => format!("{SCHEME}{server}/{rest}"),
        _ => uri.to_owned(),
    }
}

/// `skill` of `server` as the gateway's clients see it.
fn outward_skill(mut skill: Skill, server: &str, several: bool) -> Skill {
    skill.uri = outward(&skill.uri, server, several);
    if let SkillResources::Files(files) = &mut skill.resources {
        for file in files {
            file.uri = outward(&file.uri, server, several);
        }
    }
    skill
}

/// Every skill of `view`'s servers, in config order; a server without the
/// extension has none, one that fails is logged and left out.
pub(crate) async fn list(gateway: &Gateway, view: &View) -> Vec<Skill> {
    let servers = servers(gateway, view);
    let several = servers.len() > 1;
    let pool = gateway.pool();
    let mut all = Vec::new();
    for server in &servers {
        match pool.list_skills(server).await {
            Ok(skills) => all.extend(
                skills
                    .iter()
                    .cloned()
                    .map(|skill| outward_skill(skill, server, several)),
            ),
            Err(PoolError::NotOffered { .. } | PoolError::UnknownServer { .. }) => {}
            Err(e) => {
                tracing::warn!(server = %server, error = %e, "leaving the server's skills out")
            }
        }
    }
    all
}

/// The server of `view` that `uri` (as the gateway's clients see it)
/// belongs to and the URI that server knows it by: `None` when `uri` is not
/// a renamed skill URI.
pub(crate) fn route(gateway: &Gateway, view: &View, uri: &str) -> Option<(String, String)> {
    let servers = servers(gateway, view);
    if servers.len() < 2 {
        return None;
    }
    let (server, rest) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    servers
        .iter()
        .any(|s| s == server)
        .then(|| (server.to_owned(), format!("{SCHEME}{rest}")))
}

/// The entry of the skill at `uri` (as the gateway's clients see it):
/// asked of its server with `skills/get`, else of each server of the view
/// until one serves it; `-32602` when none does.
pub(crate) async fn get(
    gateway: &Gateway,
    view: &View,
    uri: &str,
    options: &CallOptions,
) -> Result<Skill, ErrorData> {
    let servers = servers(gateway, view);
    let several = servers.len() > 1;
    let candidates = match route(gateway, view, uri) {
        Some((server, upstream)) => vec![(server, upstream)],
        None => servers
            .iter()
            .map(|s| (s.clone(), uri.to_owned()))
            .collect(),
    };
    let pool = gateway.pool();
    for (server, upstream) in candidates {
        match pool.get_skill(&server, &upstream, options).await {
            Ok(skill) => return Ok(outward_skill(skill, &server, several)),
            Err(
                PoolError::UnknownSkill { .. }
                | PoolError::NotOffered { .. }
                | PoolError::UnknownServer { .. },
            ) => {}
            Err(e) => return Err(to_mcp_error(e)),
        }
    }
    Err(ErrorData::invalid_params(
        format!("no server of the gateway serves a skill at {uri}; list the skills to see theirs"),
        None,
    ))
}

/// `contents` of a read of `upstream` made for the gateway URI `uri`: each
/// item for `upstream` renamed to `uri`.
pub(crate) fn rename_contents(contents: &mut [ResourceContents], upstream: &str, uri: &str) {
    for content in contents {
        match content {
            ResourceContents::TextResourceContents { uri: u, .. }
            | ResourceContents::BlobResourceContents { uri: u, .. }
                if u == upstream =>
            {
                *u = uri.to_owned();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_uris_get_the_server_as_first_segment_only_with_several_servers() {
        assert_eq!(
            outward("skill://acme/refunds/SKILL.md", "docs", true),
            "skill://docs/acme/refunds/SKILL.md"
        );
        assert_eq!(
            outward("skill://refunds/SKILL.md", "docs", false),
            "skill://refunds/SKILL.md"
        );
        assert_eq!(
            outward("github://o/r/skills/x/SKILL.md", "docs", true),
            "github://o/r/skills/x/SKILL.md"
        );
    }
}
