//! MCP Apps' `ui://` resources (SEP-1865) served to the gateway's clients: a
//! tool links the page it shows its result in by `_meta.ui.resourceUri`
//! (or the older `_meta["ui/resourceUri"]`), and the client reads that
//! `ui://` resource with `resources/read`.
//!
//! Apps are usually named after themselves, so two servers may both have
//! `ui://widget/app.html`. With one server in the view, URIs are kept as
//! they are. With several, as [`crate::skills`] does for `skill://`, each
//! `ui://` URI gets the server's name as its first segment,
//! `ui://SERVER/widget/app.html`: in `resources/list`, in every tool's
//! `_meta` link (both keys), and in the `contents` a read answers; a read
//! of such a URI goes to that server under the URI the server knows.
//! Resources under other schemes keep their URIs.

use serde_json::{Map, Value};

const SCHEME: &str = "ui://";

/// The `_meta` key of the older spelling of a tool's link.
const LEGACY_KEY: &str = "ui/resourceUri";

/// `uri` of `server` as the gateway's clients see it (`several`: the view
/// has more than one server).
pub(crate) fn outward(uri: &str, server: &str, several: bool) -> String {
    match uri.strip_prefix(SCHEME) {
        Some(rest) if several => format!("{SCHEME}{server}/{rest}"),
        _ => uri.to_owned(),
    }
}

/// A tool's `_meta` of `server` with its `ui://` links as the gateway's
/// clients see them.
pub(crate) fn outward_meta(meta: &mut Map<String, Value>, server: &str, several: bool) {
    if !several {
        return;
    }
    let rename = |link: Option<&mut Value>| {
        if let Some(Value::String(uri)) = link {
            *uri = outward(uri, server, several);
        }
    };
    rename(
        meta.get_mut("ui")
            .and_then(Value::as_object_mut)
            .and_then(|ui| ui.get_mut("resourceUri")),
    );
    rename(meta.get_mut(LEGACY_KEY));
}

/// The server among `servers` (a view's, in order) that `uri` (as the
/// gateway's clients see it) belongs to and the URI that server knows it
/// by: `None` when `uri` is not a renamed `ui://` URI.
pub(crate) fn route(servers: &[&String], uri: &str) -> Option<(String, String)> {
    if servers.len() < 2 {
        return None;
    }
    let (server, rest) = uri.strip_prefix(SCHEME)?.split_once('/')?;
    servers
        .iter()
        .any(|s| *s == server)
        .then(|| (server.to_owned(), format!("{SCHEME}{rest}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ui_uris_get_the_server_as_first_segment_only_with_several_servers() {
        assert_eq!(
            outward("ui://counter/app.html", "apps", true),
            "ui://apps/counter/app.html"
        );
        assert_eq!(
            outward("ui://counter/app.html", "apps", false),
            "ui://counter/app.html"
        );
        assert_eq!(outward("file:///x.html", "apps", true), "file:///x.html");
    }

    #[test]
    fn both_spellings_of_a_tools_link_are_renamed() {
        let mut meta = json!({
            "ui": { "resourceUri": "ui://counter/app.html", "visibility": ["app"] },
            "ui/resourceUri": "ui://counter/app.html",
            "other": "ui://not-a-link",
        });
        let map = meta.as_object_mut().unwrap();
        outward_meta(map, "apps", true);
        assert_eq!(
            meta,
            json!({
                "ui": { "resourceUri": "ui://apps/counter/app.html", "visibility": ["app"] },
                "ui/resourceUri": "ui://apps/counter/app.html",
                "other": "ui://not-a-link",
            })
        );
    }
}
