//! [`ConfigChanges`]: what a [`Gateway::reload`](super::Gateway::reload)
//! changed, and the steps it is worked out with: the servers the gateway
//! serves of a config, its profiles by name and which of them changed.

use std::{collections::HashMap, sync::Arc};

#[cfg(doc)]
use toolbridge::pool::Pool;
use toolbridge::{
    config::{Profile, ServerSpec},
    pool,
};

/// What a [`Gateway::reload`](super::Gateway::reload) changed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ConfigChanges {
    /// The servers added, removed and changed ([`Pool::reload`]).
    pub servers: pool::Changes,
    /// Profiles added, removed or changed, sorted.
    pub profiles: Vec<String>,
}

impl ConfigChanges {
    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty() && self.profiles.is_empty()
    }
}

/// The servers of `specs` the gateway serves: the enabled ones.
pub(super) fn enabled(specs: Vec<ServerSpec>) -> impl Iterator<Item = ServerSpec> {
    specs.into_iter().filter(|spec| !spec.disabled)
}

/// The profiles by name.
pub(super) fn by_name(profiles: Vec<Profile>) -> HashMap<String, Arc<Profile>> {
    profiles
        .into_iter()
        .map(|p| (p.name.clone(), Arc::new(p)))
        .collect()
}

/// The names of the profiles added, removed or changed from `before` to
/// `after`, sorted.
pub(super) fn profile_changes(
    before: &HashMap<String, Arc<Profile>>,
    after: &HashMap<String, Arc<Profile>>,
) -> Vec<String> {
    let mut names: Vec<String> = before
        .keys()
        .chain(after.keys())
        .filter(|name| match (before.get(*name), after.get(*name)) {
            (Some(a), Some(b)) => a != b,
            _ => true,
        })
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}
