//! Reading and writing one schema node: its members found in one pass, its
//! types, its keys in a stable order.

use super::JsonObject;
use serde_json::Value;
use std::collections::HashSet;

/// A JSON object of `members`, in order.
///
/// Unlike `json!`, which serializes every interpolated value again (a deep
/// copy of a whole converted schema), this moves the values in.
///
/// For the large results (a tool definition per tool), the converters make
/// each map before what goes in it instead: memory then sits in the order
/// dropping the result frees it, which makes freeing thousands of converted
/// tools markedly cheaper with glibc's allocator (dropping 10,000 Chat
/// Completions tools took about a fifth less time).
pub(crate) fn object<const N: usize>(members: [(&str, Value); N]) -> Value {
    let mut out = JsonObject::with_capacity(N);
    for (key, value) in members {
        out.insert(key.to_owned(), value);
    }
    Value::Object(out)
}

/// The values of `keys` in `node`, found in one pass over its members.
///
/// A schema node has a handful of members; comparing them with a few names
/// is much cheaper than hashing every name to look it up.
pub(crate) fn members<'a, const N: usize>(
    node: &'a JsonObject,
    keys: [&str; N],
) -> [Option<&'a Value>; N] {
    let mut found = [None; N];
    for (key, value) in node {
        if let Some(i) = keys.iter().position(|k| k == key) {
            found[i] = Some(value);
        }
    }
    found
}

/// The type names in a schema's `type` (a string or a list of strings).
pub(crate) fn types_of(node: &JsonObject) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `name` is one of the types a schema's `type` member `ty` names
/// (see [`types_of`]; this collects nothing).
pub(crate) fn has_type(ty: Option<&Value>, name: &str) -> bool {
    match ty {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// Whether a schema's `type` member `ty` names no type at all.
pub(crate) fn is_untyped(ty: Option<&Value>) -> bool {
    match ty {
        Some(Value::String(_)) => false,
        Some(Value::Array(ts)) => !ts.iter().any(Value::is_string),
        _ => true,
    }
}

/// `m` with the keys in `order` first, in that order, then the others in the
/// order that swap-removing those keys from `m` leaves them (the order this
/// has always written); keeps output readable and stable.
pub(crate) fn ordered(m: JsonObject, order: &[&str]) -> JsonObject {
    if is_ordered(&m, order) {
        return m;
    }
    let mut rest: Vec<(String, Value)> = m.into_iter().collect();
    let mut out = JsonObject::with_capacity(rest.len());
    for key in order {
        if let Some(i) = rest.iter().position(|(k, _)| k == key) {
            let (k, v) = rest.swap_remove(i);
            out.insert(k, v);
        }
    }
    out.extend(rest);
    out
}

/// Whether [`ordered`] would leave `m` as it is: its keys in `order` come
/// first, in that order, followed by at most one other key (swap-removing the
/// first key moves the last one forward, so two or more would be reordered),
/// or by any number when no key is in `order`. Most converted nodes are.
fn is_ordered(m: &JsonObject, order: &[&str]) -> bool {
    let mut next = 0; // where in `order` the next key must come from
    let mut listed = 0;
    let mut others = 0;
    for key in m.keys() {
        match order[next..].iter().position(|o| o == key) {
            Some(i) if others == 0 => {
                next += i + 1;
                listed += 1;
            }
            Some(_) => return false,
            None if order[..next].contains(&key.as_str()) => return false,
            None => others += 1,
        }
    }
    listed == 0 || others <= 1
}

/// The names seen so far in a list that may repeat them (`required`, type
/// lists): a short list is searched, a long one hashed, so a hostile list
/// of many thousand names costs linear time, a usual one no allocation.
#[derive(Debug, Default)]
pub(crate) struct SeenNames<'a> {
    short: Vec<&'a str>,
    long: Option<HashSet<&'a str>>,
}

impl<'a> SeenNames<'a> {
    /// How many names are searched before they are hashed.
    const SHORT: usize = 32;

    /// Records `name`; `true` when it was not seen before.
    pub(crate) fn insert(&mut self, name: &'a str) -> bool {
        if let Some(long) = &mut self.long {
            return long.insert(name);
        }
        if self.short.contains(&name) {
            return false;
        }
        self.short.push(name);
        if self.short.len() > Self::SHORT {
            self.long = Some(self.short.drain(..).collect());
        }
        true
    }

    /// Whether `name` was recorded.
    pub(crate) fn contains(&self, name: &str) -> bool {
        match &self.long {
            Some(long) => long.contains(name),
            None => self.short.contains(&name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordering_matches_swap_removing_each_listed_key() {
        // The order `ordered` has always produced: swap_remove each key of
        // `order` into a new map, then append what is left.
        fn by_swap_remove(mut m: JsonObject, order: &[&str]) -> Vec<String> {
            let mut out = JsonObject::new();
            for key in order {
                if let Some(v) = m.swap_remove(*key) {
                    out.insert((*key).to_owned(), v);
                }
            }
            out.extend(m);
            out.keys().cloned().collect()
        }
        let order = ["type", "title", "description", "items"];
        let keys = ["type", "title", "description", "items", "a", "b", "c"];
        // Every arrangement of up to five of the keys.
        let mut cases: Vec<Vec<&str>> = vec![Vec::new()];
        let mut shorter = cases.clone();
        for _ in 0..5 {
            shorter = shorter
                .iter()
                .flat_map(|case| {
                    keys.iter().filter(|k| !case.contains(k)).map(move |k| {
                        let mut longer = case.clone();
                        longer.push(*k);
                        longer
                    })
                })
                .collect();
            cases.extend(shorter.iter().cloned());
        }
        for case in cases {
            let m: JsonObject = case
                .iter()
                .map(|k| ((*k).to_owned(), Value::Null))
                .collect();
            let got: Vec<String> = ordered(m.clone(), &order).keys().cloned().collect();
            assert_eq!(got, by_swap_remove(m, &order), "{case:?}");
        }
    }
}
