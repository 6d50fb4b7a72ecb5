//! The sessions of one endpoint whose calls the gateway answers past rmcp
//! ([`crate::direct_sessions`]), by session id: each session's handler
//! code and client as its handshake left them, and its calls in flight
//! there (to cancel them). Generic over the handler (`S`, the gateway's
//! [`crate::session::Session`]) so that the handler can hold its own
//! entry without the two modules importing each other.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rmcp::{
    RoleServer,
    model::{ClientJsonRpcMessage, ClientNotification, CustomNotification, RequestId},
    service::Peer,
    transport::streamable_http_server::session::{SessionManager, local::LocalSessionManager},
};
use tokio_util::sync::CancellationToken;
use toolbridge::lock::LockUnpoisoned as _;

/// How often, at most, a session's direct calls are told to its rmcp
/// worker, whose idle expiry (5 minutes) counts only what it sees.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(10);

/// The method of the notification that tells a session's worker its
/// client is still calling (its handler ignores it).
const ALIVE_METHOD: &str = "notifications/toolbridge/session_alive";

/// The sessions of one endpoint whose `tools/call` may be answered past
/// rmcp.
pub struct SessionTable<S> {
    table: Mutex<HashMap<String, Entry<S>>>,
    sessions: Arc<LocalSessionManager>,
}

/// One session, as its handshake left it.
struct Entry<S> {
    /// The session's handler code (rmcp holds its own copy).
    session: S,
    peer: Peer<RoleServer>,
    /// Whether its client can be asked something mid-call.
    askable: bool,
    /// Its protocol version shapes the answer as rmcp's handler shapes it.
    legacy: bool,
    /// Cancelled when the session ends: its calls end too.
    closed: CancellationToken,
    /// Its calls in flight past rmcp, by request id.
    calls: HashMap<RequestId, CancellationToken>,
    /// When its worker last heard of a call.
    told: Instant,
}

/// A session's place in the table; dropped with the session (rmcp drops
/// its handler), it leaves the table and ends the session's calls.
pub struct Registration<S> {
    table: Arc<SessionTable<S>>,
    id: String,
}

impl<S> Drop for Registration<S> {
    fn drop(&mut self) {
        if let Some(entry) = self.table.table.lock_unpoisoned().remove(&self.id) {
            entry.closed.cancel();
        }
    }
}

/// A call begun past rmcp in a session of the table.
pub struct Begun<S> {
    /// The session's handler code.
    pub session: S,
    /// Its client.
    pub peer: Peer<RoleServer>,
    /// Whether the session's version is before 2026-07-28.
    pub legacy: bool,
    /// Cancelled when the client cancels the call or the session ends.
    pub ct: CancellationToken,
    /// The call's entry among its session's calls, until it drops.
    pub guard: CallGuard<S>,
}

/// A call's entry among its session's calls, until it ends.
pub struct CallGuard<S> {
    table: Arc<SessionTable<S>>,
    session: String,
    id: RequestId,
}

impl<S> Drop for CallGuard<S> {
    fn drop(&mut self) {
        if let Some(entry) = self.table.table.lock_unpoisoned().get_mut(&self.session) {
            entry.calls.remove(&self.id);
        }
    }
}

impl<S: Clone> SessionTable<S> {
    /// The table of `sessions`' sessions (rmcp's session manager, told of
    /// the calls made past it).
    pub fn new(sessions: Arc<LocalSessionManager>) -> Arc<SessionTable<S>> {
        Arc::new(SessionTable {
            table: Mutex::default(),
            sessions,
        })
    }

    /// Notes session `id`, whose handler code is `session` and whose
    /// client is `peer` (after its handshake), until the registration
    /// drops.
    pub fn register(
        self: &Arc<Self>,
        id: String,
        session: S,
        peer: Peer<RoleServer>,
    ) -> Registration<S> {
        let info = peer.peer_info();
        let askable = info.as_ref().is_none_or(|info| {
            let c = &info.capabilities;
            c.roots.is_some() || c.sampling.is_some() || c.elicitation.is_some()
        });
        let legacy = info
            .as_ref()
            .is_none_or(|info| info.protocol_version.has_initialize());
        let entry = Entry {
            session,
            peer,
            askable,
            legacy,
            closed: CancellationToken::new(),
            calls: HashMap::new(),
            told: Instant::now(),
        };
        self.table.lock_unpoisoned().insert(id.clone(), entry);
        Registration {
            table: self.clone(),
            id,
        }
    }

    /// Whether session `id` is in the table (its POSTs are looked at).
    pub fn knows(&self, id: &str) -> bool {
        self.table.lock_unpoisoned().contains_key(id)
    }

    /// Call `id` of session `session`, when its client can be asked
    /// nothing mid-call and no call of that id is in flight past rmcp.
    pub fn begin(self: &Arc<Self>, session: &str, id: RequestId) -> Option<Begun<S>> {
        let mut table = self.table.lock_unpoisoned();
        let entry = table.get_mut(session)?;
        if entry.askable || entry.calls.contains_key(&id) {
            return None;
        }
        let ct = entry.closed.child_token();
        entry.calls.insert(id.clone(), ct.clone());
        if entry.told.elapsed() >= KEEP_ALIVE_EVERY {
            entry.told = Instant::now();
            self.tell_worker(session);
        }
        Some(Begun {
            session: entry.session.clone(),
            peer: entry.peer.clone(),
            legacy: entry.legacy,
            ct,
            guard: CallGuard {
                table: self.clone(),
                session: session.to_owned(),
                id,
            },
        })
    }

    /// Cancels call `id` of session `session`, if it is in flight past
    /// rmcp.
    pub fn cancel(&self, session: &str, id: &RequestId) {
        if let Some(ct) = self
            .table
            .lock_unpoisoned()
            .get(session)
            .and_then(|entry| entry.calls.get(id))
        {
            ct.cancel();
        }
    }

    /// Tells session `session`'s worker that its client is calling, so its
    /// idle expiry does not end a session in use (a notification its
    /// handler ignores; sent from a task, the call does not wait on it).
    fn tell_worker(&self, session: &str) {
        let sessions = self.sessions.clone();
        let id = session.into();
        tokio::spawn(async move {
            let alive =
                ClientNotification::CustomNotification(CustomNotification::new(ALIVE_METHOD, None));
            let message = ClientJsonRpcMessage::notification(alive);
            if let Err(e) = sessions.accept_message(&id, message).await {
                tracing::debug!(error = %e, "cannot tell a session's worker of its calls");
            }
        });
    }
}

/// The session id of the request whose rmcp extensions are `extensions`
/// (the `initialized` notification carries its HTTP request's parts).
pub fn session_id(extensions: &rmcp::model::Extensions) -> Option<String> {
    let parts = extensions.get::<http::request::Parts>()?;
    let mut values = parts.headers.get_all("mcp-session-id").iter();
    let id = values.next()?.to_str().ok()?;
    values.next().is_none().then(|| id.to_owned())
}
