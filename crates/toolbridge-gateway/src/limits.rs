//! What one client may hold of the gateway at once, over HTTP: MCP sessions
//! (per client, and in all) and requests in flight (per client); and that a
//! session's request id is in flight once at most.
//!
//! A *client* is who the connection's peer is ([`crate::peer::Peer`]): the
//! local user (uid) behind a loopback connection, else the remote IP
//! address. Not the token: every holder of the gateway's one token is the
//! same bearer, and what a flood costs is per machine or per account. Behind
//! a reverse proxy every client is the proxy's address (raise the per-client
//! limits there, or cap per client in the proxy).
//!
//! Counted at `/mcp` ([`crate::endpoint::Endpoint`]) before rmcp or the
//! stateless path sees the request:
//! - an `initialize` without `Mcp-Session-Id` takes a session slot, past the
//!   client's limit answered `429`, past the gateway's `503`, each with a
//!   JSON-RPC error that names the limit and its flag. The slot goes with
//!   the session ([`take_opening`], called by the session factory) and is
//!   freed when rmcp drops it: a `DELETE`, an idle expiry, a closed gateway.
//! - any other request takes a call slot until it is answered: until its
//!   handler is done (the slot rides in the request's extensions, which rmcp
//!   hands the session's handler: a client that drops the event stream does
//!   not free it while the call goes on) and its answer is written; past the
//!   client's limit it is answered at once with a JSON-RPC error (HTTP 200,
//!   so every MCP client shows the message). Other clients are not slowed.
//! - a request whose id is that of a request of the same session still in
//!   flight is answered at once with a JSON-RPC error (-32600), where rmcp
//!   would hold it, unanswered, for as long as the session lives.
//!
//! The stdio gateway has one client, the program that started it, and the
//! web page's calls are the gateway's own user: neither is counted.

use std::{
    cell::RefCell,
    collections::{HashMap, HashSet},
    fmt,
    net::IpAddr,
    sync::{Arc, Mutex},
};

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};
use rmcp::model::ErrorCode;
use serde_json::{Value, json};
use toolbridge::lock::LockUnpoisoned as _;

use crate::peer::Peer;

/// The caps (`toolbridge serve --max-sessions`, `--max-sessions-per-client`,
/// `--max-calls-per-client`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// MCP sessions open at once, all clients together.
    pub sessions: usize,
    /// MCP sessions one client may have open at once.
    pub sessions_per_client: usize,
    /// Requests one client may have in flight at once.
    pub calls_per_client: usize,
}

impl Limits {
    /// Sessions in all: at ~90 KiB each, ~90 MiB.
    pub const DEFAULT_SESSIONS: usize = 1024;
    /// Sessions per client: an editor opens a few, a busy agent host tens.
    pub const DEFAULT_SESSIONS_PER_CLIENT: usize = 64;
    /// Requests in flight per client: four times the 64 of the gateway's
    /// busiest benchmark (docs/performance.md).
    pub const DEFAULT_CALLS_PER_CLIENT: usize = 256;
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            sessions: Self::DEFAULT_SESSIONS,
            sessions_per_client: Self::DEFAULT_SESSIONS_PER_CLIENT,
            calls_per_client: Self::DEFAULT_CALLS_PER_CLIENT,
        }
    }
}

/// Who a client is to the caps: see the module's documentation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Client {
    /// The local user behind a loopback connection.
    User(u32),
    /// The remote address (off loopback, or a loopback socket the kernel
    /// no longer listed).
    Address(IpAddr),
}

impl Client {
    /// The client behind `peer`.
    pub fn of(peer: &Peer) -> Client {
        match peer.uid {
            Some(uid) => Client::User(uid),
            None => Client::Address(peer.addr.ip().to_canonical()),
        }
    }
}

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Client::User(uid) => write!(f, "local user {uid}"),
            Client::Address(ip) => write!(f, "address {ip}"),
        }
    }
}

/// The counts against [`Limits`]. Shared by the gateway's endpoint.
pub struct Caps {
    limits: Limits,
    counts: Mutex<Counts>,
}

#[derive(Default)]
struct Counts {
    sessions: usize,
    sessions_of: HashMap<Client, usize>,
    calls_of: HashMap<Client, usize>,
    /// (session id, request id as JSON) of the session requests in flight.
    ids: HashSet<(String, String)>,
}

/// Why a request was refused, as the answer it gets.
#[derive(Debug)]
pub struct Refusal {
    status: StatusCode,
    code: ErrorCode,
    message: String,
}

impl Refusal {
    /// The answer to the request `id`: the JSON-RPC error, with `status`.
    pub fn response(&self, id: Option<&Value>) -> Response {
        let body = json!({
            "jsonrpc": "2.0",
            "id": id.cloned().unwrap_or(Value::Null),
            "error": { "code": self.code.0, "message": self.message },
        });
        let mut response = (self.status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        if self.status != StatusCode::OK {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }

    /// The JSON-RPC message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// The JSON-RPC code of a request refused for a cap: an implementation
/// error of JSON-RPC's server range.
const OVER_LIMIT: ErrorCode = ErrorCode(-32000);

impl Caps {
    /// Counts against `limits`.
    pub fn new(limits: Limits) -> Arc<Caps> {
        Arc::new(Caps {
            limits,
            counts: Mutex::default(),
        })
    }

    /// The caps.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// A session slot for `client`, until the returned slot drops.
    pub fn open_session(self: &Arc<Self>, client: &Client) -> Result<SessionSlot, Refusal> {
        let mut counts = self.counts.lock_unpoisoned();
        let mine = counts.sessions_of.get(client).copied().unwrap_or(0);
        if mine >= self.limits.sessions_per_client {
            return Err(Refusal {
                status: StatusCode::TOO_MANY_REQUESTS,
                code: OVER_LIMIT,
                message: format!(
                    "toolbridge: {client} has {mine} MCP sessions open, the limit per client \
                     (toolbridge serve --max-sessions-per-client); end one (DELETE /mcp with \
                     its Mcp-Session-Id) or let an unused one expire, then connect again"
                ),
            });
        }
        if counts.sessions >= self.limits.sessions {
            return Err(Refusal {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: OVER_LIMIT,
                message: format!(
                    "toolbridge: the gateway has {} MCP sessions open, its limit \
                     (toolbridge serve --max-sessions); try again when clients have \
                     ended theirs",
                    counts.sessions
                ),
            });
        }
        counts.sessions += 1;
        *counts.sessions_of.entry(client.clone()).or_default() += 1;
        Ok(SessionSlot {
            caps: self.clone(),
            client: client.clone(),
        })
    }

    /// A call slot for request `id` of `client` (of session `session`, if
    /// it has one), until the returned slot drops.
    pub fn begin_call(
        self: &Arc<Self>,
        client: &Client,
        session: Option<&str>,
        id: &Value,
    ) -> Result<CallSlot, Refusal> {
        let mut counts = self.counts.lock_unpoisoned();
        let key = session.map(|s| (s.to_owned(), id.to_string()));
        if let Some(key) = &key
            && counts.ids.contains(key)
        {
            return Err(Refusal {
                status: StatusCode::OK,
                code: ErrorCode::INVALID_REQUEST,
                message: format!(
                    "toolbridge: request id {} is already in flight in this session; \
                     give each request an id of its own",
                    key.1
                ),
            });
        }
        let mine = counts.calls_of.get(client).copied().unwrap_or(0);
        if mine >= self.limits.calls_per_client {
            return Err(Refusal {
                status: StatusCode::OK,
                code: OVER_LIMIT,
                message: format!(
                    "toolbridge: {client} has {mine} requests in flight, the limit per client \
                     (toolbridge serve --max-calls-per-client); wait for some to be answered"
                ),
            });
        }
        *counts.calls_of.entry(client.clone()).or_default() += 1;
        if let Some(key) = &key {
            counts.ids.insert(key.clone());
        }
        Ok(CallSlot {
            caps: self.clone(),
            client: client.clone(),
            key,
        })
    }
}

/// Decrements `client`'s count in `of`, forgetting it at zero.
fn release(of: &mut HashMap<Client, usize>, client: &Client) {
    if let Some(n) = of.get_mut(client) {
        *n -= 1;
        if *n == 0 {
            of.remove(client);
        }
    }
}

/// A session's place under the caps; freed on drop.
pub struct SessionSlot {
    caps: Arc<Caps>,
    client: Client,
}

impl Drop for SessionSlot {
    fn drop(&mut self) {
        let mut counts = self.caps.counts.lock_unpoisoned();
        counts.sessions -= 1;
        release(&mut counts.sessions_of, &self.client);
    }
}

/// A request's call slot as its handler holds it (in the request's
/// extensions): the slot is freed when both the answer's stream and the
/// handler are gone.
#[derive(Clone)]
pub struct Handled(pub Arc<CallSlot>);

/// A request's place under the caps; freed on drop.
pub struct CallSlot {
    caps: Arc<Caps>,
    client: Client,
    key: Option<(String, String)>,
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        let mut counts = self.caps.counts.lock_unpoisoned();
        release(&mut counts.calls_of, &self.client);
        if let Some(key) = &self.key {
            counts.ids.remove(key);
        }
    }
}

tokio::task_local! {
    /// The slot of the session an `initialize` request is opening, for the
    /// session factory rmcp calls while it handles that request.
    static OPENING: RefCell<Option<SessionSlot>>;
}

/// Runs `handling` (rmcp handling an `initialize`) with `slot` for the
/// session it opens ([`take_opening`]); unused, it is freed at the end.
pub async fn opening<F: Future>(slot: SessionSlot, handling: F) -> F::Output {
    OPENING.scope(RefCell::new(Some(slot)), handling).await
}

/// The slot of the session being opened, if this is the `initialize` that
/// opens one: the new session keeps it.
pub fn take_opening() -> Option<SessionSlot> {
    OPENING
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(sessions: usize, per_client: usize, calls: usize) -> Arc<Caps> {
        Caps::new(Limits {
            sessions,
            sessions_per_client: per_client,
            calls_per_client: calls,
        })
    }

    #[test]
    fn sessions_are_capped_per_client_and_in_all_and_freed_on_drop() {
        let caps = caps(3, 2, 1);
        let (a, b) = (Client::User(1000), Client::Address([10, 0, 0, 2].into()));
        let first = caps.open_session(&a).unwrap();
        let _second = caps.open_session(&a).unwrap();
        let over = caps.open_session(&a).err().unwrap();
        assert_eq!(over.status, StatusCode::TOO_MANY_REQUESTS);
        assert!(
            over.message.contains("--max-sessions-per-client"),
            "{over:?}"
        );
        let _third = caps.open_session(&b).unwrap();
        let full = caps.open_session(&b).err().unwrap();
        assert_eq!(full.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(full.message.contains("--max-sessions)"), "{full:?}");
        drop(first);
        assert!(caps.open_session(&a).is_ok());
    }

    #[test]
    fn a_session_request_id_is_in_flight_once_and_calls_are_capped_per_client() {
        let caps = caps(10, 10, 2);
        let a = Client::User(1000);
        let id = json!(7);
        let call = caps.begin_call(&a, Some("s1"), &id).unwrap();
        let again = caps.begin_call(&a, Some("s1"), &id).err().unwrap();
        assert_eq!(again.code, ErrorCode::INVALID_REQUEST);
        // Another session's id 7 is another request.
        let other = caps.begin_call(&a, Some("s2"), &id).unwrap();
        let over = caps.begin_call(&a, None, &json!(1)).err().unwrap();
        assert!(over.message.contains("--max-calls-per-client"), "{over:?}");
        assert!(
            caps.begin_call(&Client::User(1001), None, &json!(1))
                .is_ok()
        );
        drop((call, other));
        assert!(caps.begin_call(&a, Some("s1"), &id).is_ok());
    }
}
