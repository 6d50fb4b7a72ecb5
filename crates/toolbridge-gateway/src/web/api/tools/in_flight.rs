//! The page's tool calls in flight, by the id the page gave each, so that
//! `DELETE /api/calls/{callId}` can cancel one.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};
use toolbridge::lock::LockUnpoisoned as _;

use tokio_util::sync::CancellationToken;

/// The calls in flight. Cheap to clone (shared).
#[derive(Clone, Default)]
pub struct Calls {
    by_id: Arc<Mutex<HashMap<String, CancellationToken>>>,
}

impl Calls {
    /// Notes the call `id` until the returned guard drops; `None` when a
    /// call with that id is already in flight.
    pub fn enter(&self, id: &str) -> Option<Entered> {
        let mut by_id = self.by_id.lock_unpoisoned();
        if by_id.contains_key(id) {
            return None;
        }
        let token = CancellationToken::new();
        by_id.insert(id.to_owned(), token.clone());
        Some(Entered {
            calls: self.clone(),
            id: id.to_owned(),
            token,
        })
    }

    /// Cancels the call `id`; false when no such call is in flight.
    pub fn cancel(&self, id: &str) -> bool {
        let token = self.by_id.lock_unpoisoned().get(id).cloned();
        match token {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
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
        self.calls.by_id.lock_unpoisoned().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_cancelled_by_its_id_only_while_in_flight() {
        let calls = Calls::default();
        let entered = calls.enter("a");
        assert!(entered.is_some());
        assert!(calls.enter("a").is_none(), "one id, one call at a time");
        assert!(!calls.cancel("b"));
        assert!(calls.cancel("a"));
        assert!(entered.as_ref().is_some_and(|e| e.token().is_cancelled()));
        drop(entered);
        assert!(!calls.cancel("a"), "a finished call is forgotten");
        assert!(calls.enter("a").is_some(), "its id may be used again");
    }
}
