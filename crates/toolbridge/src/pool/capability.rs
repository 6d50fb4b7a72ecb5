//! Whether a server offers a feature (it declares the capability when it
//! starts), and requests that need one: a server without `prompts` is told
//! apart from a broken one before it is asked anything
//! ([`Pool::request_offered`](super::Pool) checks it on the way).

use std::sync::Arc;

use super::{Pool, PoolError, connection::Connection, error::Feature, slot::Slot};

impl Pool {
    /// Starts `slot`'s server if needed and checks that it declares
    /// `feature`: [`PoolError::NotOffered`] if not.
    pub(super) async fn offering(
        &self,
        slot: &Arc<Slot>,
        feature: Feature,
    ) -> Result<(), PoolError> {
        let conn = self.connection(slot).await?;
        offered(slot, &conn, feature)
    }
}

/// [`PoolError::NotOffered`] when `conn`'s server does not declare
/// `feature` (it says so as it starts); a server that told nothing is asked
/// anyway: it answers for itself.
pub(super) fn offered(slot: &Slot, conn: &Connection, feature: Feature) -> Result<(), PoolError> {
    let Some(info) = conn.peer.peer_info() else {
        return Ok(());
    };
    let caps = &info.capabilities;
    let offered = match feature {
        Feature::Resources => caps.resources.is_some(),
        Feature::ResourceSubscriptions => caps
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true)),
        Feature::Prompts => caps.prompts.is_some(),
        Feature::Completions => caps.completions.is_some(),
        Feature::Skills => caps.supports_skills(),
    };
    if offered {
        Ok(())
    } else {
        Err(PoolError::NotOffered {
            server: slot.spec.name.clone(),
            feature,
        })
    }
}
