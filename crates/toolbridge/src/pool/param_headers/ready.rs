//! The call side of tool headers: before a call on a connection whose
//! calls carry them, the server's tools are listed on that connection when
//! rmcp may not know the tool's schema yet, and a tool the list does not
//! have is refused (the parent module says why). A module of its own so the
//! connection's state ([`super::ParamHeaders`]) does not depend on the
//! pool's slots and connections.

use std::sync::Arc;

use super::designates_headers;
use crate::pool::{Pool, PoolError, connection::Connection, slot::Slot};

impl Pool {
    /// Before `tool` of `slot`'s server is called on `conn`: on a connection
    /// whose calls carry tool headers, lists the server's tools on it first
    /// when rmcp may not know the tool's schema yet, and refuses a tool the
    /// list does not have (see the module's documentation). Elsewhere,
    /// nothing.
    pub(in crate::pool) async fn ready_for_headers(
        &self,
        slot: &Arc<Slot>,
        conn: &Connection,
        tool: &str,
    ) -> Result<(), PoolError> {
        let Some(headers) = &conn.param_headers else {
            return Ok(());
        };
        let cached = slot.cache.get_or_load();
        let known = cached
            .as_deref()
            .and_then(|tools| tools.iter().find(|t| t.name == tool));
        let listed = headers.has_listed();
        if known.is_some_and(|t| listed || !designates_headers(&t.input_schema)) {
            return Ok(());
        }
        let tools = match cached {
            // Listed on this connection, and the tool is not in the list.
            Some(cached) if listed && known.is_none() => cached,
            _ => self.list_uncached(slot).await?.0,
        };
        if tools.iter().any(|t| t.name == tool) {
            return Ok(());
        }
        Err(PoolError::unknown_tool(&slot.spec.name, tool, &tools))
    }
}
