//! Tool names as providers see them, and the table that maps them back.
//!
//! Every name toolbridge sends to a provider matches
//! `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`, the intersection of OpenAI's, Anthropic's
//! and Gemini's rules. The raw name of a tool is `mcp__{server}__{tool}` (pool
//! tools) or `{server}__{tool}` (direct adapters); characters outside the
//! alphabet become `_`, a leading digit or hyphen gets a `_` in front, and a
//! name that is too long or that collides with another gets a short hash
//! suffix computed from the full original (server, tool) pair, so it is the
//! same on every run and every platform.
//!
//! A model answers with the exposed name; [`NameTable::resolve`] gives back the
//! server and the tool. Names are never split to recover them: `a__b__c` could
//! be tool `b__c` of server `a` or tool `c` of server `a__b`.

use crate::tools::McpTool;
use serde::Serialize;
use std::borrow::{Borrow, Cow};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

/// The longest name any provider accepts.
pub const MAX_NAME_LEN: usize = 64;

/// Hex digits of the hash suffix.
const HASH_LEN: usize = 8;

/// One tool of one server: what a provider-facing name routes to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ToolRef {
    /// The config name of the server, as in [`McpTool::server_id`].
    pub server_id: String,
    /// The tool's name as the server knows it; what `tools/call` takes.
    pub tool: String,
}

impl ToolRef {
    /// The tool `tool` of server `server_id`.
    pub fn new(server_id: impl Into<String>, tool: impl Into<String>) -> Self {
        ToolRef {
            server_id: server_id.into(),
            tool: tool.into(),
        }
    }
}

/// A (server id, tool) pair, so the table can be searched with two `&str`s
/// instead of a [`ToolRef`] built (two strings allocated) for every lookup.
trait ToolKey {
    fn parts(&self) -> (&str, &str);
}

impl ToolKey for ToolRef {
    fn parts(&self) -> (&str, &str) {
        (&self.server_id, &self.tool)
    }
}

impl ToolKey for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

impl<'a> Borrow<dyn ToolKey + 'a> for ToolRef {
    fn borrow(&self) -> &(dyn ToolKey + 'a) {
        self
    }
}

// Equal and hashed like the derived `Eq` and `Hash` of `ToolRef`: server id,
// then tool.
impl PartialEq for dyn ToolKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn ToolKey + '_ {}

impl Hash for dyn ToolKey + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        let (server_id, tool) = self.parts();
        server_id.hash(state);
        tool.hash(state);
    }
}

/// Which raw name a tool gets before sanitizing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NameStyle {
    /// Tools reached through the pool: `mcp__{server}__{tool}`.
    #[default]
    Mcp,
    /// Direct (built-in) adapters: `{server}__{tool}`.
    Direct,
}

impl NameStyle {
    /// The raw, unsanitized name of `tool` of `server` in this style.
    pub fn raw_name(self, server: &str, tool: &str) -> String {
        match self {
            NameStyle::Mcp => McpTool::id_for(server, tool),
            NameStyle::Direct => format!("{server}__{tool}"),
        }
    }
}

/// The name one tool is exposed under, and why it differs from the raw name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExposedName {
    /// The name sent to providers; always passes [`is_valid_name`].
    pub name: String,
    /// The raw name (`mcp__{server}__{tool}` or `{server}__{tool}`).
    pub raw: String,
    /// Characters outside `[a-zA-Z0-9_-]` were replaced, or a `_` was put in front.
    pub sanitized: bool,
    /// The name was longer than 64 characters and got a hash suffix.
    pub shortened: bool,
    /// The sanitized name collided with another tool's and got a hash suffix.
    pub deduplicated: bool,
}

/// The exposed names of a set of tools, and the way back from a name to its tool.
///
/// Built once from all the tools offered to a model; the same tools always get
/// the same names, whatever order they are listed in.
#[derive(Debug, Clone, Default)]
pub struct NameTable {
    /// The raw-name style every entry was built with.
    style: NameStyle,
    /// Tool → its name. Hashed, so converting many tools does not compare
    /// strings all the way down a tree; [`iter`](Self::iter) sorts.
    by_tool: HashMap<ToolRef, ExposedName>,
    /// Exposed name → tool, for routing a model's calls.
    by_name: HashMap<String, ToolRef>,
}

impl NameTable {
    /// Assigns names to `tools`, given as (server id, tool name) pairs.
    ///
    /// Duplicated pairs get one name. A name that needs no change is kept as
    /// is unless it is too long; when several tools sanitize to the same name,
    /// the one whose raw name is already valid (if exactly one is) keeps it and
    /// the others get a hash suffix.
    pub fn new<I, S, T>(style: NameStyle, tools: I) -> Self
    where
        I: IntoIterator<Item = (S, T)>,
        S: Into<String>,
        T: Into<String>,
    {
        let mut keys: Vec<ToolRef> = tools
            .into_iter()
            .map(|(server, tool)| ToolRef::new(server, tool))
            .collect();
        keys.sort();
        keys.dedup();

        struct Draft {
            key: ToolRef,
            raw: String,
            sanitized: String,
        }
        let drafts: Vec<Draft> = keys
            .into_iter()
            .map(|key| {
                let raw = style.raw_name(&key.server_id, &key.tool);
                let sanitized = sanitize(&raw);
                Draft {
                    key,
                    raw,
                    sanitized,
                }
            })
            .collect();

        // Group the names that fit by their sanitized form to find collisions
        // (the sort is stable: each group lists its tools in order).
        let mut fitting: Vec<usize> = (0..drafts.len())
            .filter(|&i| drafts[i].sanitized.len() <= MAX_NAME_LEN)
            .collect();
        fitting.sort_by(|&a, &b| drafts[a].sanitized.cmp(&drafts[b].sanitized));
        let mut plain = vec![false; drafts.len()];
        let mut collided = vec![false; drafts.len()];
        for members in fitting.chunk_by(|&a, &b| drafts[a].sanitized == drafts[b].sanitized) {
            if let [only] = members {
                plain[*only] = true;
                continue;
            }
            let exact: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&i| drafts[i].raw == drafts[i].sanitized)
                .collect();
            for &i in members {
                collided[i] = true;
            }
            if let [keeper] = exact.as_slice() {
                plain[*keeper] = true;
                collided[*keeper] = false;
            }
        }

        // The other names get a hash suffix. Plain names are taken first so
        // a hashed name never steals one.
        let mut hashed: Vec<Option<String>> = vec![None; drafts.len()];
        if plain.contains(&false) {
            let mut used: HashSet<Cow<'_, str>> = drafts
                .iter()
                .zip(&plain)
                .filter(|(_, p)| **p)
                .map(|(d, _)| Cow::Borrowed(d.sanitized.as_str()))
                .collect();
            for (i, d) in drafts.iter().enumerate().filter(|(i, _)| !plain[*i]) {
                let mut salt = 0u32;
                hashed[i] = loop {
                    let candidate = suffixed(&d.sanitized, &d.key, salt);
                    if used.insert(Cow::Owned(candidate.clone())) {
                        break Some(candidate);
                    }
                    salt = salt.wrapping_add(1);
                };
            }
        }

        let mut table = NameTable {
            style,
            by_tool: HashMap::with_capacity(drafts.len()),
            by_name: HashMap::with_capacity(drafts.len()),
        };
        for ((d, hashed), deduplicated) in drafts.into_iter().zip(hashed).zip(collided) {
            let entry = ExposedName {
                sanitized: d.sanitized != d.raw,
                shortened: d.sanitized.len() > MAX_NAME_LEN,
                deduplicated,
                name: hashed.unwrap_or(d.sanitized),
                raw: d.raw,
            };
            table.by_name.insert(entry.name.clone(), d.key.clone());
            table.by_tool.insert(d.key, entry);
        }
        table
    }

    /// Names for pool tools (`mcp__{server}__{tool}`), keyed by each tool's
    /// `server_id` and `name`.
    pub fn for_tools(tools: &[McpTool]) -> Self {
        Self::new(
            NameStyle::Mcp,
            tools
                .iter()
                .map(|t| (t.server_id.as_str(), t.name.as_str())),
        )
    }

    /// Names for direct adapters (`{server}__{tool}`).
    pub fn direct<I, S, T>(tools: I) -> Self
    where
        I: IntoIterator<Item = (S, T)>,
        S: Into<String>,
        T: Into<String>,
    {
        Self::new(NameStyle::Direct, tools)
    }

    /// The raw-name style of this table.
    pub fn style(&self) -> NameStyle {
        self.style
    }

    /// The exposed name of `tool` of `server_id`, if the table has it.
    pub fn name(&self, server_id: &str, tool: &str) -> Option<&str> {
        self.entry(server_id, tool).map(|e| e.name.as_str())
    }

    /// The full entry of `tool` of `server_id`, if the table has it.
    pub fn entry(&self, server_id: &str, tool: &str) -> Option<&ExposedName> {
        self.by_tool.get(&(server_id, tool) as &dyn ToolKey)
    }

    /// The exposed name of `tool`.
    ///
    /// A tool missing from the table (the table was built from other tools)
    /// still gets a valid name, computed on its own, which may collide with
    /// another tool's.
    pub fn name_for(&self, tool: &McpTool) -> Cow<'_, str> {
        match self.name(&tool.server_id, &tool.name) {
            Some(name) => Cow::Borrowed(name),
            None => Cow::Owned(standalone_name(self.style, &tool.server_id, &tool.name)),
        }
    }

    /// Adds `tool`'s `name` (as [`name_for`](Self::name_for) gives it) and
    /// `description` to the provider tool definition `definition`.
    pub(crate) fn insert_name_and_description(
        &self,
        definition: &mut serde_json::Map<String, serde_json::Value>,
        tool: &McpTool,
    ) {
        definition.insert("name".into(), self.name_for(tool).into_owned().into());
        definition.insert("description".into(), tool.description.clone().into());
    }

    /// The tool a provider-facing name stands for.
    ///
    /// ```
    /// use toolbridge::{NameStyle, NameTable, ToolRef};
    ///
    /// let names = NameTable::new(NameStyle::Mcp, [("files", "read file"), ("files", "read_file")]);
    /// // Both sanitize to `mcp__files__read_file`: the already valid name
    /// // keeps it, the other gets a stable hash suffix.
    /// assert_eq!(names.name("files", "read_file"), Some("mcp__files__read_file"));
    /// let other = names.name("files", "read file").unwrap();
    /// assert!(other.starts_with("mcp__files__read_file_") && other.len() <= 64);
    /// // Going back never splits the string: it looks the name up.
    /// assert_eq!(names.resolve(other), Some(&ToolRef::new("files", "read file")));
    /// assert_eq!(names.resolve("mcp__files__write_file"), None);
    /// ```
    pub fn resolve(&self, exposed: &str) -> Option<&ToolRef> {
        self.by_name.get(exposed)
    }

    /// Every tool and its name, ordered by server then tool.
    pub fn iter(&self) -> impl Iterator<Item = (&ToolRef, &ExposedName)> {
        let mut entries: Vec<_> = self.by_tool.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        entries.into_iter()
    }

    /// How many tools the table names.
    pub fn len(&self) -> usize {
        self.by_tool.len()
    }

    /// Whether the table names no tool.
    pub fn is_empty(&self) -> bool {
        self.by_tool.is_empty()
    }
}

/// `tools` with each (server, tool name) pair once: the first definition is
/// kept, a later one with the same name is left out, so no provider format
/// ever holds two definitions under one name (providers refuse that).
/// Borrows when there is nothing to leave out.
pub fn unique_tools(tools: &[McpTool]) -> Cow<'_, [McpTool]> {
    let mut seen: HashSet<(&str, &str)> = HashSet::with_capacity(tools.len());
    if tools
        .iter()
        .all(|t| seen.insert((t.server_id.as_str(), t.name.as_str())))
    {
        return Cow::Borrowed(tools);
    }
    seen.clear();
    Cow::Owned(
        tools
            .iter()
            .filter(|t| seen.insert((t.server_id.as_str(), t.name.as_str())))
            .cloned()
            .collect(),
    )
}

/// Whether `name` is acceptable to every provider:
/// `^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$`.
pub fn is_valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    match bytes.first() {
        Some(first) if first.is_ascii_alphabetic() || *first == b'_' => {}
        _ => return false,
    }
    bytes.len() <= MAX_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
}

/// Whether `name` follows a provider's name rule: 1 to [`MAX_NAME_LEN`]
/// bytes of ASCII letters, digits and the bytes in `extra`, starting with a
/// letter or `_` when `letter_first`. Providers state their own rule with it.
pub(crate) fn follows_rule(name: &str, extra: &[u8], letter_first: bool) -> bool {
    let bytes = name.as_bytes();
    let first_ok = bytes
        .first()
        .is_some_and(|b| !letter_first || b.is_ascii_alphabetic() || *b == b'_');
    first_ok
        && bytes.len() <= MAX_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || extra.contains(b))
}

/// `raw` with every character outside `[a-zA-Z0-9_-]` replaced by `_`: the
/// one character rule of provider names, also used for file names.
pub fn replace_unsafe(raw: &str) -> String {
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_` and puts a `_`
/// in front of a leading digit or hyphen (or of nothing). Does not shorten.
pub fn sanitize(raw: &str) -> String {
    let mut out = replace_unsafe(raw);
    match out.as_bytes().first() {
        None => out.push('_'),
        Some(b) if b.is_ascii_digit() || *b == b'-' => out.insert(0, '_'),
        Some(_) => {}
    }
    out
}

/// A valid name for one tool on its own, without looking at other tools: the
/// sanitized raw name, shortened with a hash suffix when too long.
pub fn standalone_name(style: NameStyle, server: &str, tool: &str) -> String {
    let sanitized = sanitize(&style.raw_name(server, tool));
    if sanitized.len() <= MAX_NAME_LEN {
        sanitized
    } else {
        suffixed(&sanitized, &ToolRef::new(server, tool), 0)
    }
}

/// 64-bit FNV-1a of the (server, tool) pair and a salt. Stable across runs,
/// versions and platforms, unlike std's `DefaultHasher`.
pub fn stable_hash(server: &str, tool: &str, salt: u32) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(PRIME);
        }
    };
    eat(server.as_bytes());
    // 0xff never occurs in UTF-8, so the pair is unambiguous.
    eat(&[0xff]);
    eat(tool.as_bytes());
    if salt > 0 {
        eat(&[0xff]);
        eat(&salt.to_le_bytes());
    }
    hash
}

/// `sanitized` cut to fit, then `_` and eight hex digits of the pair's hash.
fn suffixed(sanitized: &str, key: &ToolRef, salt: u32) -> String {
    let hash = stable_hash(&key.server_id, &key.tool, salt);
    let folded = (hash ^ (hash >> 32)) as u32;
    let keep = MAX_NAME_LEN - HASH_LEN - 1;
    // `sanitized` is ASCII, so any byte index is a char boundary.
    let short = match sanitized.get(..keep) {
        None => sanitized.to_owned(),
        Some(cut) => keep_tool_visible(sanitized, cut, &key.tool, keep),
    };
    format!("{short}_{folded:08x}")
}

/// The longest tool part kept at the end of a shortened name.
const MAX_TOOL_TAIL: usize = 36;

/// Shortens `sanitized` (which ends in `__{tool}`) to `keep` bytes so that the
/// tool's name stays readable: when a long server name would push the tool
/// out, the server part is cut instead. A model tells tools apart by name, so
/// `mcp__very_long_server…__search` beats `mcp__very_long_server_name…`.
fn keep_tool_visible(sanitized: &str, cut: &str, tool: &str, keep: usize) -> String {
    let tool = replace_unsafe(tool);
    let tail_len = (tool.len() + 2).min(MAX_TOOL_TAIL);
    let prefix_len = sanitized.len().saturating_sub(tool.len() + 2);
    if prefix_len + tail_len <= keep {
        // The server part is short: cutting the end keeps the tool's start.
        return cut.to_owned();
    }
    let head = sanitized.get(..keep - tail_len).unwrap_or(cut);
    let tail = format!("__{tool}");
    format!("{head}{}", tail.get(..tail_len).unwrap_or(&tail))
}

/// Whether `exposed`, a name a [`NameTable`] of [`NameStyle::Mcp`] gave,
/// may stand for a tool of `server`, without knowing the server's tools:
/// every name of a server's tool starts with `mcp__{server}__` (unsafe
/// characters replaced), except a shortened or deduplicated one (it ends in
/// a hash), which keeps at least the first `MIN_KEPT_PREFIX` bytes of it.
/// False only when the name cannot be the server's; never routes a call
/// (the table does), it only tells which servers need listing to resolve it.
pub fn may_be_of_server(exposed: &str, server: &str) -> bool {
    let prefix = format!("mcp__{}__", replace_unsafe(server));
    if exposed.starts_with(&prefix) {
        return true;
    }
    has_hash_suffix(exposed) && exposed.starts_with(&prefix[..prefix.len().min(MIN_KEPT_PREFIX)])
}

/// How much of `mcp__{server}__` a shortened name keeps at least: what
/// [`keep_tool_visible`] leaves before the tool's tail.
const MIN_KEPT_PREFIX: usize = MAX_NAME_LEN - HASH_LEN - 1 - MAX_TOOL_TAIL;

/// Whether `name` ends in `_` and [`HASH_LEN`] lower-case hex digits, as
/// [`suffixed`] writes them.
fn has_hash_suffix(name: &str) -> bool {
    name.len() > HASH_LEN
        && name.as_bytes()[name.len() - HASH_LEN - 1] == b'_'
        && name.as_bytes()[name.len() - HASH_LEN..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_may_be_of_its_server_and_not_of_an_unrelated_one() {
        let long = "s".repeat(70);
        let near = format!("{}x", "s".repeat(69));
        let tools = [
            ("files", "read_file"),
            ("files", "read file"),
            ("my.files", "read_file"),
            ("my_files", "read_file"),
            (long.as_str(), "hello"),
            (near.as_str(), "hello"),
            (long.as_str(), &*"t".repeat(80)),
            ("a__b", "c"),
            ("a", "b__c"),
        ];
        let table = NameTable::new(NameStyle::Mcp, tools);
        for (server, tool) in tools {
            let name = table.name(server, tool).unwrap();
            assert!(may_be_of_server(name, server), "{name} of {server}");
            assert!(!may_be_of_server(name, "other"), "{name} of other");
        }
        assert!(!may_be_of_server("mcp__files__read_file", "file"));
        assert!(!may_be_of_server("read_file", "files"));
    }

    #[test]
    fn a_long_server_name_is_cut_so_the_tool_name_stays_readable() {
        let server = "l".repeat(70);
        let table = NameTable::new(
            NameStyle::Mcp,
            [(server.as_str(), "hello"), (server.as_str(), "echo")],
        );
        let hello = table.name(&server, "hello").unwrap_or_default();
        let echo = table.name(&server, "echo").unwrap_or_default();
        assert!(
            is_valid_name(hello) && is_valid_name(echo),
            "{hello} {echo}"
        );
        assert!(
            hello.starts_with("mcp__lll") && hello.contains("__hello_"),
            "{hello}"
        );
        assert!(echo.contains("__echo_"), "{echo}");
        assert_eq!(
            table.resolve(hello),
            Some(&ToolRef::new(server.as_str(), "hello"))
        );
        // A long tool name on a short server keeps its start.
        let long_tool = format!("search_{}", "x".repeat(80));
        let name = standalone_name(NameStyle::Mcp, "web", &long_tool);
        assert!(
            name.starts_with("mcp__web__search_xxx") && is_valid_name(&name),
            "{name}"
        );
    }

    #[test]
    fn valid_names_are_kept() {
        let table = NameTable::new(NameStyle::Mcp, [("time", "get_current_time")]);
        assert_eq!(
            table.name("time", "get_current_time"),
            Some("mcp__time__get_current_time")
        );
        let entry = table.entry("time", "get_current_time");
        assert!(entry.is_some_and(|e| !e.sanitized && !e.shortened && !e.deduplicated));
    }

    #[test]
    fn direct_style_has_no_prefix() {
        let table = NameTable::direct([("fs", "read")]);
        assert_eq!(table.name("fs", "read"), Some("fs__read"));
        assert_eq!(table.resolve("fs__read"), Some(&ToolRef::new("fs", "read")));
    }

    #[test]
    fn bad_characters_become_underscores() {
        assert_eq!(
            sanitize("mcp__my.server__do it/now"),
            "mcp__my_server__do_it_now"
        );
        assert_eq!(sanitize("1abc"), "_1abc");
        assert_eq!(sanitize("-x"), "_-x");
        assert_eq!(sanitize(""), "_");
        assert_eq!(sanitize("ü"), "_");
        let table = NameTable::direct([("9lives", "ünïcode")]);
        let name = table.name("9lives", "ünïcode").unwrap_or_default();
        assert!(is_valid_name(name), "{name}");
        assert_eq!(name, "_9lives___n_code");
    }

    #[test]
    fn long_names_get_a_stable_suffix() {
        let server = "s".repeat(70);
        let table = NameTable::new(NameStyle::Mcp, [(server.as_str(), "echo")]);
        let name = table.name(&server, "echo").unwrap_or_default();
        assert!(is_valid_name(name), "{name}");
        assert_eq!(name.len(), MAX_NAME_LEN);
        assert!(name.starts_with("mcp__sss"));
        // Pinned: the suffix must not change between releases or platforms.
        assert_eq!(
            stable_hash(&server, "echo", 0),
            stable_hash(&server, "echo", 0)
        );
        assert_eq!(stable_hash("a", "b", 0), 0xe57d_a319_03de_37b1_u64);
        assert_eq!(table.resolve(name), Some(&ToolRef::new(server, "echo")));
    }

    #[test]
    fn collisions_get_distinct_names_and_the_exact_one_keeps_its_name() {
        let table = NameTable::new(NameStyle::Mcp, [("a.b", "x"), ("a_b", "x"), ("a b", "x")]);
        assert_eq!(table.name("a_b", "x"), Some("mcp__a_b__x"));
        let dotted = table.name("a.b", "x").unwrap_or_default();
        let spaced = table.name("a b", "x").unwrap_or_default();
        assert_ne!(dotted, spaced);
        assert_ne!(dotted, "mcp__a_b__x");
        for name in [dotted, spaced] {
            assert!(is_valid_name(name), "{name}");
            assert!(name.starts_with("mcp__a_b__x_"), "{name}");
        }
        assert_eq!(table.resolve(dotted), Some(&ToolRef::new("a.b", "x")));
        assert_eq!(table.resolve(spaced), Some(&ToolRef::new("a b", "x")));
    }

    #[test]
    fn ambiguous_raw_names_are_told_apart() {
        // Both are literally `mcp__a__b__c`.
        let table = NameTable::new(NameStyle::Mcp, [("a", "b__c"), ("a__b", "c")]);
        let one = table.name("a", "b__c").unwrap_or_default();
        let two = table.name("a__b", "c").unwrap_or_default();
        assert_ne!(one, two);
        assert_eq!(table.resolve(one), Some(&ToolRef::new("a", "b__c")));
        assert_eq!(table.resolve(two), Some(&ToolRef::new("a__b", "c")));
    }

    #[test]
    fn order_of_input_does_not_matter() {
        let pairs = [("a.b", "x"), ("a_b", "x"), ("z", "y"), ("a b", "x")];
        let forward = NameTable::new(NameStyle::Mcp, pairs);
        let backward = NameTable::new(NameStyle::Mcp, pairs.iter().rev().copied());
        for (key, entry) in forward.iter() {
            assert_eq!(
                backward.name(&key.server_id, &key.tool),
                Some(entry.name.as_str())
            );
        }
    }

    #[test]
    fn duplicates_share_one_name() {
        let table = NameTable::direct([("s", "t"), ("s", "t")]);
        assert_eq!(table.len(), 1);
        assert_eq!(table.name("s", "t"), Some("s__t"));
    }

    #[test]
    fn missing_tools_still_get_a_valid_name() {
        let table = NameTable::default();
        let tool = McpTool {
            id: McpTool::id_for("my server", "t"),
            name: "t".into(),
            description: String::new(),
            input_schema: Default::default(),
            server_id: "my server".into(),
            server_name: "my server".into(),
            ..Default::default()
        };
        assert_eq!(table.name_for(&tool), "mcp__my_server__t");
    }

    #[test]
    fn validity_rule() {
        assert!(is_valid_name("_"));
        assert!(is_valid_name("a-b_c9"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("9a"));
        assert!(!is_valid_name("-a"));
        assert!(!is_valid_name("a.b"));
        assert!(!is_valid_name(&"a".repeat(65)));
        assert!(is_valid_name(&"a".repeat(64)));
    }
}
