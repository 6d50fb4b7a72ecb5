//! [`ServerView`]: one configured server as the Servers view shows it: its
//! config as `servers list` shows it (secrets masked) and its state in the
//! gateway's pool.

use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use toolbridge::{
    auth::TokenStore,
    config::{Config, ServerListing, ServerSpec, TransportSpec},
    pool::{FailureKind, ServerStatus},
    redact::Redactor,
};

use crate::Gateway;

/// One server: config and state.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerView {
    /// The record as written, secrets masked (the same view as
    /// `toolbridge servers list --json`).
    #[serde(flatten)]
    pub config: ServerListing,
    /// What the page puts in a server's URLs (`/api/servers/{ref}`): any
    /// name, `.`, `..` and one of a megabyte included, fits a path segment
    /// ([`reference()`]).
    #[serde(rename = "ref")]
    pub reference: String,
    /// True when this gateway serves it (enabled, resolvable, and not left
    /// out by `serve --server`).
    pub served: bool,
    /// `running`, `stopped`, `failed` or `disabled`.
    pub status: &'static str,
    /// Why it failed (status `failed`), secrets removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What kind of failure `error` says, as data (`{"kind", ...}`): the
    /// page says it in its reader's language, `error` in English.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<FailureKind>,
    /// The last lines it wrote to stderr, secrets removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
    /// How many tools it has, when its list is known (never starts it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_count: Option<usize>,
    /// When it started, in milliseconds since the Unix epoch (running only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at_ms: Option<u64>,
    /// How long its start and handshake took, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ms: Option<u64>,
    /// The protocol version it speaks (running only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Why it is not served, when it is enabled and not served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_served: Option<super::variable::NotServed>,
    /// Its OAuth sign-in, for a served streamable HTTP server that takes
    /// one (its config sends no `Authorization` of its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<SignInView>,
}

/// Where a remote server's OAuth sign-in stands, for the card's Sign in
/// and Sign out buttons.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignInView {
    /// toolbridge holds tokens for it (in the store the gateway reads).
    pub signed_in: bool,
    /// Its last start failed for want of a sign-in.
    pub needed: bool,
}

/// Every server of `config`, in file order, with its state in `gateway`.
pub fn views(config: &Config, gateway: &Gateway) -> Vec<ServerView> {
    let pool = gateway.pool();
    config
        .listing()
        .into_iter()
        .map(|listing| {
            let upstream = pool.spec(&listing.name);
            let mut view = ServerView {
                reference: reference(&listing.name),
                served: upstream.is_some(),
                status: if listing.enabled {
                    "stopped"
                } else {
                    "disabled"
                },
                config: listing,
                error: None,
                error_kind: None,
                stderr: None,
                tool_count: None,
                started_at_ms: None,
                start_ms: None,
                protocol_version: None,
                not_served: None,
                sign_in: None,
            };
            if view.config.enabled && !view.served {
                view.not_served = Some(super::variable::why(config, &view.config.name));
            }
            // A server disabled in the file shows as disabled at once;
            // `served` says whether the gateway has caught up yet.
            let Some(upstream) = upstream.filter(|_| view.config.enabled) else {
                return view;
            };
            view.sign_in = takes_oauth(&upstream).then(|| SignInView {
                signed_in: signed_in(&upstream),
                needed: false,
            });
            let name = view.config.name.as_str();
            let redactor = Redactor::for_server(&upstream);
            let clean = |text: &str| redactor.redact(text).into_owned();
            view.tool_count = pool.cached_tool_count(name);
            view.stderr = pool.stderr_tail(name).map(|s| clean(&s));
            match pool.status(name) {
                Some(ServerStatus::Running { info, since }) => {
                    view.status = "running";
                    view.started_at_ms = Some(epoch_ms(since));
                    view.start_ms = Some(u64::try_from(info.start_time.as_millis()).unwrap_or(0));
                    view.protocol_version = Some(info.protocol_version);
                }
                Some(ServerStatus::Failed(failure)) => {
                    view.status = "failed";
                    view.error = Some(clean(&failure.error));
                    view.error_kind = Some(failure.kind);
                    view.stderr = failure.stderr.as_deref().map(clean).or(view.stderr);
                    if let Some(sign_in) = &mut view.sign_in {
                        sign_in.needed = failure.needs_sign_in;
                    }
                }
                _ => {}
            }
            view
        })
        .collect()
}

/// A streamable HTTP server whose config sends no `Authorization` header:
/// its connection uses OAuth tokens when it has them (as the library's
/// HTTP transport decides).
fn takes_oauth(spec: &ServerSpec) -> bool {
    matches!(&spec.transport, TransportSpec::Http(remote)
        if !remote.headers.keys().any(|name| name.eq_ignore_ascii_case("authorization")))
}

/// Whether the user's token store (the one `serve` and `toolbridge auth`
/// use) holds tokens for `spec`'s URL.
fn signed_in(spec: &ServerSpec) -> bool {
    let TransportSpec::Http(remote) = &spec.transport else {
        return false;
    };
    let (Some(store), Ok(url)) = (
        TokenStore::user_default(),
        url::Url::parse(remote.url.trim()),
    ) else {
        return false;
    };
    store.status(&url).is_ok_and(|status| status.is_some())
}

fn epoch_ms(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The reference of server `name` in the page's URLs: `~` and 16 hex
/// digits of a hash of the name. A name is not always a path segment: the
/// browser resolves `.` and `..` away before the request leaves, and a
/// name of a megabyte is past any URL limit (issue 32's fifteenth finding).
/// Stable for the gateway's lifetime, which is all the page needs (it
/// reads the references from the listing).
pub fn reference(name: &str) -> String {
    use std::hash::{Hash as _, Hasher as _};
    let mut hasher = std::hash::DefaultHasher::new();
    name.hash(&mut hasher);
    format!("~{:016x}", hasher.finish())
}
