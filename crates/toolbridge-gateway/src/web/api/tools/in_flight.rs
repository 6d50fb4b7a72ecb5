//! The page's tool calls in flight, by the id the page gave each, so that
//! `DELETE /api/calls/{callId}` can cancel one, `GET /api/calls/{callId}`
//! read its progress and elicitation, and `POST
//! /api/calls/{callId}/elicitation` answer that.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};
use toolbridge::lock::LockUnpoisoned as _;

use tokio_util::sync::CancellationToken;

use super::page_client::PageClient;

/// One call in flight: what cancels it, and its client side.
type Running = (CancellationToken, Arc<PageClient>);

/// The calls in flight. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Calls {
    by_id: Arc<Mutex<HashMap<String, Running>>>,
}

impl Calls {
    /// Notes the call `id`, answered by `client`, until the returned guard
    /// drops; `None` when a call with that id is already in flight.
    pub fn enter(&self, id: &str, client: Arc<PageClient>) -> Option<Entered> {
        let mut by_id = self.by_id.lock_unpoisoned();
        if by_id.contains_key(id) {
            return None;
        }
        let token = CancellationToken::new();
        by_id.insert(id.to_owned(), (token.clone(), client));
        Some(Entered {
            calls: self.clone(),
            id: id.to_owned(),
            token,
        })
    }

    /// Cancels the call `id`; false when no such call is in flight.
    pub fn cancel(&self, id: &str) -> bool {
        let token = self.by_id.lock_unpoisoned().get(id).map(|(t, _)| t.clone());
        match token {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The client side of the call `id` in flight.
    pub fn client(&self, id: &str) -> Option<Arc<PageClient>> {
        self.by_id.lock_unpoisoned().get(id).map(|(_, c)| c.clone())
    }
}

/// One call in flight; dropping it forgets the call.
pub struct Entered {
    calls: Calls,
    id: String,
    token: CancellationToken,
}

impl Entered {
    /// Cancelled when the page asks for it.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let removed = self.calls.by_id.lock_unpoisoned().remove(&self.id);
        // The call is over: an elicitation it left waiting is cancelled.
        if let Some((_, client)) = removed {
            client.end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_cancelled_by_its_id_only_while_in_flight() {
        let calls = Calls::default();
        let client = Arc::new(PageClient::default());
        let entered = calls.enter("a", client.clone());
        assert!(entered.is_some());
        assert!(calls.client("a").is_some());
        assert!(
            calls.enter("a", client.clone()).is_none(),
            "one id, one call at a time"
        );
        assert!(!calls.cancel("b"));
        assert!(calls.cancel("a"));
        assert!(entered.as_ref().is_some_and(|e| e.token().is_cancelled()));
        drop(entered);
        assert!(!calls.cancel("a"), "a finished call is forgotten");
        assert!(calls.client("a").is_none());
        assert!(
            calls.enter("a", client).is_some(),
            "its id may be used again"
        );
    }
}
