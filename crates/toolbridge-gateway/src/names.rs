//! The names clients see, and the tables that route them back.
//!
//! With one upstream server, tools and prompts keep their names. With
//! several, they are `{server}__{name}` under the provider name rule
//! (`toolbridge::format::names`: unsafe characters replaced, a stable hash
//! suffix for names too long or colliding), so that clients which hand the
//! tools to an LLM provider never send a name it rejects. The way back is a
//! table, never a split of the string.

use std::{collections::HashMap, sync::Arc};

use toolbridge::format::names::NameTable;

/// Where an exposed name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The upstream server's config name.
    pub server: String,
    /// The name the server knows.
    pub name: String,
}

/// Exposed names for a set of (server, name) items and the table back.
#[derive(Debug, Default)]
pub struct Routed<T> {
    /// The items with their exposed names, servers in config order.
    pub items: Vec<T>,
    /// Exposed name → where it leads.
    pub routes: HashMap<String, Route>,
}

impl<T> Routed<T> {
    /// Names `items` (each with its server and upstream name) and renames
    /// each with `rename` to its exposed name; with `prefixed` false, names
    /// are kept.
    pub fn build(
        items: Vec<(String, String, T)>,
        prefixed: bool,
        rename: impl Fn(&mut T, &str),
    ) -> Routed<T> {
        let table = prefixed.then(|| {
            NameTable::direct(
                items
                    .iter()
                    .map(|(server, name, _)| (server.as_str(), name.as_str())),
            )
        });
        let mut routed = Routed {
            items: Vec::with_capacity(items.len()),
            routes: HashMap::with_capacity(items.len()),
        };
        for (server, name, mut item) in items {
            let exposed = match &table {
                Some(table) => match table.name(&server, &name) {
                    Some(exposed) => exposed.to_owned(),
                    None => continue,
                },
                None => name.clone(),
            };
            // A second item with the same exposed name (a server listing a
            // name twice) is left out: the first one is what the name means.
            if routed.routes.contains_key(&exposed) {
                continue;
            }
            rename(&mut item, &exposed);
            routed.routes.insert(exposed, Route { server, name });
            routed.items.push(item);
        }
        routed
    }

    /// Where `exposed` leads.
    pub fn resolve(&self, exposed: &str) -> Option<&Route> {
        self.routes.get(exposed)
    }
}

/// A [`Routed`] shared by the sessions until a listing changes it.
pub type SharedRouted<T> = Arc<Routed<T>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_keeps_names_several_are_prefixed_and_routed_back() {
        let single = Routed::build(
            vec![("a".into(), "echo".into(), String::from("echo"))],
            false,
            |item, name| *item = name.to_owned(),
        );
        assert_eq!(single.items, ["echo"]);
        let several = Routed::build(
            vec![
                ("a".into(), "echo".into(), String::new()),
                ("b.x".into(), "echo".into(), String::new()),
            ],
            true,
            |item, name| *item = name.to_owned(),
        );
        assert_eq!(several.items, ["a__echo", "b_x__echo"]);
        assert_eq!(
            several.resolve("b_x__echo"),
            Some(&Route {
                server: "b.x".into(),
                name: "echo".into()
            })
        );
    }
}
