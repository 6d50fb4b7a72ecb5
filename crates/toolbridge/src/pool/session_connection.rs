//! The session connection: a second connection, at 2025-11-25 (with
//! `initialize` and a session), to a server whose current connection is at
//! 2026-07-28 and which also speaks 2025-11-25, for the requests of callers
//! whose own client is a 2025-11-25 session client that may be asked
//! something mid-call ([`CallOptions::session_client`]: the gateway's
//! session clients that declared roots, sampling or elicitation), and for
//! resource subscriptions the 2026-07-28 connection does not offer.
//!
//! Whether the server speaks 2025-11-25 too is learnt by asking, the first
//! time a session caller needs it: its `server/discover` answer does not
//! say (the conformance suite's reference server, which serves both on one
//! endpoint, lists 2026-07-28 alone). A server that refuses `initialize`,
//! or whose second connection cannot be started, is not asked again while
//! its current connection lives, and its session callers' requests take
//! the current connection, as they did before there was a session one
//! (logged once): the call works, without what only 2025-11-25 gives.
//!
//! Why a second connection and not a translation: what such a server asks
//! its client mid-call is not the same on the two generations. On
//! 2026-07-28 it comes back in the call's result (input required) and only
//! for what the request's `_meta` declared; on 2025-11-25 it is a request
//! of the server's own (`sampling/createMessage`, `elicitation/create`,
//! `roots/list`) on the call's response stream, and a server of both
//! generations asks a 2025-11-25 client only that way: over 2026-07-28 its
//! 2025-style requests have no method to ride on (-32601). Likewise its
//! resource subscriptions (`resources/subscribe`) may exist on 2025-11-25
//! only. Translating would mean inventing one generation's messages from
//! the other's, for servers that already speak both; a connection at the
//! client's generation gets the server's own behaviour for it, and its
//! requests reach the client through the routing every connection has
//! (`in_flight`: the session connection shares its slot's registry, cache,
//! catalog and logs).
//!
//! The session connection belongs to the current connection it was opened
//! beside ([`Connection::sessions`]): it is opened on first need, shared by
//! every session caller as the current one is, and closed with it (a
//! reload, [`Pool::close`], a restart, the pool dropped), its process or
//! HTTP session with it. Listings, pins, rights and every other check stay
//! where they are (they are made before a connection is chosen), so both
//! paths show and refuse the same tools; only the connection a request
//! rides on differs.
//!
//! [`CallOptions::session_client`]: super::CallOptions::session_client
//! [`Pool::close`]: super::Pool::close

use crate::lock::LockUnpoisoned as _;
use std::sync::Arc;

use super::{
    CallOptions, Pool, PoolError,
    budget::Budget,
    connection::{self, Connection, Generation},
    slot::Slot,
};

impl Pool {
    /// The connection a request of `options`' caller goes on, to `slot`'s
    /// server within `budget`: the current one, started if needed; for a
    /// session caller of a server that speaks both generations, its session
    /// connection (see the module's docs).
    pub(super) async fn connection_for(
        &self,
        slot: &Arc<Slot>,
        budget: &Budget,
        options: &CallOptions,
    ) -> Result<Arc<Connection>, PoolError> {
        let conn = self.start_for(slot, budget).await?;
        if !options.session_client || conn.sessions.is_none() {
            return Ok(conn);
        }
        // Boxed: the rare way, a second start.
        Box::pin(self.session_connection(slot, &conn, budget)).await
    }

    /// `main`'s session connection, opened now if it is not open; `main`
    /// itself when it cannot be (logged).
    pub(super) async fn session_connection(
        &self,
        slot: &Arc<Slot>,
        main: &Arc<Connection>,
        budget: &Budget,
    ) -> Result<Arc<Connection>, PoolError> {
        let Some(sessions) = &main.sessions else {
            return Ok(main.clone());
        };
        if let Some(conn) = sessions.live() {
            return Ok(conn);
        }
        let unavailable = || {
            sessions
                .unavailable
                .load(std::sync::atomic::Ordering::Acquire)
        };
        if unavailable() {
            return Ok(main.clone());
        }
        let _starting = sessions.starting.lock().await;
        if let Some(conn) = sessions.live() {
            return Ok(conn);
        }
        if unavailable() {
            return Ok(main.clone());
        }
        let options = &self.inner.options;
        let own_timeout = slot.spec.startup_timeout.unwrap_or(options.start_timeout);
        // Within what is left of the caller's bound, when it sets one.
        let start_timeout = match budget.caller {
            Some(_) => own_timeout.min(budget.left().total),
            None => own_timeout,
        };
        let weak = Arc::downgrade(main);
        let on_end = move |ended: connection::Ended| {
            // Forgotten, so that the next session request opens another.
            if let Some(main) = weak.upgrade()
                && let Some(sessions) = &main.sessions
            {
                let mut current = sessions.current.lock_unpoisoned();
                if current
                    .as_ref()
                    .is_some_and(|c| std::ptr::eq(Arc::as_ptr(c), ended.connection.as_ptr()))
                {
                    *current = None;
                }
            }
        };
        let span = tracing::info_span!(
            parent: None,
            "mcp_server",
            server = slot.spec.name.as_str(),
            generation = "2025-11-25"
        );
        let started = tracing::Instrument::instrument(
            connection::connect(
                &slot.spec,
                &self.inner.ctx,
                Generation::Sessions,
                slot.listeners(options),
                options.max_total_call_time,
                start_timeout,
                on_end,
            ),
            span,
        )
        .await;
        let conn = match started {
            Ok(conn) => conn,
            // Out of the caller's time, not the server's: tried again by
            // the next request.
            Err(PoolError::StartTimeout { .. }) if start_timeout < own_timeout => {
                return Ok(main.clone());
            }
            Err(error) => {
                sessions
                    .unavailable
                    .store(true, std::sync::atomic::Ordering::Release);
                tracing::info!(
                    server = %slot.spec.name,
                    error = %error.redacted(&slot.redactor),
                    "no 2025-11-25 connection beside the 2026-07-28 one; the requests of \
                     2025-11-25 session clients go over 2026-07-28 (the server cannot ask \
                     them for sampling, elicitation or roots, nor take resource subscriptions \
                     it offers only on 2025-11-25)"
                );
                return Ok(main.clone());
            }
        };
        {
            // Checked under the lock `close` takes it with: a start that
            // ends as its current connection closes never leaves it open.
            let mut current = sessions.current.lock_unpoisoned();
            if main.closing() {
                drop(current);
                conn.close().await;
                return Ok(main.clone());
            }
            *current = Some(conn.clone());
        }
        // Subscriptions the current connection cannot hold live here.
        if super::capability::offered(slot, main, super::error::Feature::ResourceSubscriptions)
            .is_err()
        {
            slot.catalog.resubscribe(&slot.spec.name, &conn.peer);
        }
        tracing::debug!(server = %slot.spec.name, "opened a 2025-11-25 connection for session clients");
        Ok(conn)
    }
}
