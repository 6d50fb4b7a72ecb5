//! [`SecretMap`]: expanded env or header values, which never print.

use std::{
    collections::{BTreeMap, btree_map},
    fmt,
};

use crate::redact::MASK;

/// Names and values where every value is a secret: a stdio server's `env`
/// or a remote server's `headers` after `${VAR}` expansion.
///
/// It reads like the map it holds ([`get`](SecretMap::get),
/// [`iter`](SecretMap::iter), `for (name, value) in &map`), so the
/// transports that send the values need nothing special; but its `Debug`
/// shows every value as `***`, so a `{:?}` of a [`ServerSpec`](super::ServerSpec)
/// in a log or a panic message leaks nothing. [`expose`](SecretMap::expose)
/// hands out the plain map where one is really needed.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretMap(BTreeMap<String, String>);

impl SecretMap {
    /// An empty map.
    pub fn new() -> Self {
        SecretMap::default()
    }

    /// The plain map, values included. Never log or print it.
    pub fn expose(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&String> {
        self.0.get(name)
    }

    /// True when `name` has a value.
    pub fn contains_key(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    /// Sets `name` to `value`, returning the value it replaces.
    pub fn insert(&mut self, name: String, value: String) -> Option<String> {
        self.0.insert(name, value)
    }

    /// Names and values, sorted by name.
    pub fn iter(&self) -> btree_map::Iter<'_, String, String> {
        self.0.iter()
    }

    /// The names, sorted.
    pub fn keys(&self) -> btree_map::Keys<'_, String, String> {
        self.0.keys()
    }

    /// The values, in name order.
    pub fn values(&self) -> btree_map::Values<'_, String, String> {
        self.0.values()
    }

    /// How many names there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl fmt::Debug for SecretMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|name| (name, MASK)))
            .finish()
    }
}

impl From<BTreeMap<String, String>> for SecretMap {
    fn from(map: BTreeMap<String, String>) -> Self {
        SecretMap(map)
    }
}

impl FromIterator<(String, String)> for SecretMap {
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        SecretMap(pairs.into_iter().collect())
    }
}

impl Extend<(String, String)> for SecretMap {
    fn extend<I: IntoIterator<Item = (String, String)>>(&mut self, pairs: I) {
        self.0.extend(pairs);
    }
}

impl<'a> IntoIterator for &'a SecretMap {
    type Item = (&'a String, &'a String);
    type IntoIter = btree_map::Iter<'a, String, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for SecretMap {
    type Item = (String, String);
    type IntoIter = btree_map::IntoIter<String, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl std::ops::Index<&str> for SecretMap {
    type Output = String;

    /// The value of `name`; panics when there is none, like a map's index
    /// (for tests; library code uses [`get`](SecretMap::get)).
    fn index(&self, name: &str) -> &String {
        &self.0[name]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_names_and_hides_values() {
        let map: SecretMap = [("Authorization".to_string(), "Bearer s3cret".to_string())]
            .into_iter()
            .collect();
        assert_eq!(format!("{map:?}"), r#"{"Authorization": "***"}"#);
        assert!(!format!("{map:#?}").contains("s3cret"));
        assert_eq!(map["Authorization"], "Bearer s3cret");
    }
}
