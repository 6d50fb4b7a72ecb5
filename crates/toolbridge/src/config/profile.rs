//! [`Profile`]: one entry of the config file's top-level `"profiles"`: a
//! view of the gateway's servers that it serves at `/mcp/NAME` (and over
//! `serve --stdio --profile NAME`).
//!
//! ```json
//! { "profiles": {
//!     "dev": { "servers": ["github", "fs"],
//!              "tools": ["github__*", "fs__read_*", "!github__delete_*"],
//!              "rename": { "github__create_issue": "new_issue" },
//!              "descriptions": { "fs__read_file": "Read a file of the project." },
//!              "discovery": "search" } },
//!   "mcpServers": { ... } }
//! ```
//!
//! Every field is optional: without `servers`, every enabled server;
//! without `tools`, every tool of those servers. A profile is checked when
//! the file is loaded (the servers it names must exist, its globs and new
//! names must be valid, its keys known: a typo in a profile would otherwise
//! widen what its clients may call), so a mistake names the file, the line,
//! the profile and the field.

use std::{collections::BTreeSet, fmt, path::Path};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::{Map, Value};

use super::{error::ConfigError, fields::Source, span::Step, warning::nearest};
use crate::{format::names::is_valid_name, json_kind::kind_of};

/// The key of the profiles in a config file.
pub const PROFILES_KEY: &str = "profiles";

/// The keys a profile reads.
const PROFILE_FIELDS: [&str; 5] = ["servers", "tools", "rename", "descriptions", "discovery"];

/// The longest profile name (it is a URL path segment).
const MAX_NAME: usize = 64;

/// How a profile's clients find its tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Discovery {
    /// `tools/list` gives every tool of the profile (`"list"`, the default).
    #[default]
    List,
    /// `tools/list` gives a search tool and a call tool instead of the
    /// definitions (`"search"`).
    Search,
}

impl Discovery {
    /// The word the config file uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Discovery::List => "list",
            Discovery::Search => "search",
        }
    }
}

/// One profile, checked.
///
/// Tools are named as the gateway names them over several servers:
/// `{server}__{tool}`, the server's config name and the tool's name as the
/// server gives it. [`allows`](Profile::allows) applies the `tools` globs,
/// [`new_name`](Profile::new_name) and [`description`](Profile::description)
/// the overrides.
#[derive(Clone)]
pub struct Profile {
    /// The key in `"profiles"`; the gateway serves it at `/mcp/NAME`.
    pub name: String,
    /// The servers it shows, in the order written; `None` means every
    /// enabled server.
    pub servers: Option<Vec<String>>,
    /// The `tools` globs as written, `!` exclusions included; empty means
    /// every tool of its servers.
    pub tools: Vec<String>,
    /// `{server}__{tool}` (or the tool's name in the profile) → the name its
    /// clients see and call, in file order.
    pub rename: Vec<(String, String)>,
    /// `{server}__{tool}` (or the tool's name in the profile) → the
    /// description its clients see, in file order.
    pub descriptions: Vec<(String, String)>,
    /// `"list"` or `"search"`.
    pub discovery: Discovery,
    /// The `tools` globs compiled.
    globs: ToolGlobs,
}

/// Tool-name globs as a profile's `tools` and a rule's `allow` take them:
/// `GLOB` includes, `!GLOB` excludes; a name matches when it matches an
/// include (or there is none) and no exclude.
#[derive(Clone)]
pub(crate) struct ToolGlobs {
    /// The globs without `!`; `None` when there are none (every tool).
    include: Option<GlobSet>,
    /// The `!` globs.
    exclude: GlobSet,
    /// The place in the written list of each glob of `include`, in order
    /// (to say which one matched).
    include_at: Vec<usize>,
    /// The same for `exclude`.
    exclude_at: Vec<usize>,
}

impl ToolGlobs {
    /// Every name.
    pub(crate) fn everything() -> ToolGlobs {
        ToolGlobs {
            include: None,
            exclude: GlobSet::empty(),
            include_at: Vec::new(),
            exclude_at: Vec::new(),
        }
    }

    /// `written` compiled; `Err` names the index of the glob that is not
    /// valid (`None`: the set as a whole) and why.
    pub(crate) fn compile(written: &[String]) -> Result<ToolGlobs, (Option<usize>, String)> {
        let mut include = GlobSetBuilder::new();
        let mut exclude = GlobSetBuilder::new();
        let (mut include_at, mut exclude_at) = (Vec::new(), Vec::new());
        for (i, written) in written.iter().enumerate() {
            let (negated, pattern) = match written.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, written.as_str()),
            };
            let glob = glob(pattern)
                .map_err(|e| (Some(i), format!("{written:?} is not a valid glob: {e}")))?;
            if negated {
                exclude_at.push(i);
                exclude.add(glob);
            } else {
                include_at.push(i);
                include.add(glob);
            }
        }
        let build = |builder: GlobSetBuilder| builder.build().map_err(|e| (None, e.to_string()));
        let include = if include_at.is_empty() {
            None
        } else {
            Some(build(include)?)
        };
        Ok(ToolGlobs {
            include,
            exclude: build(exclude)?,
            include_at,
            exclude_at,
        })
    }

    /// True when `name` matches an include (or there is none) and no
    /// exclude.
    pub(crate) fn matches(&self, name: &str) -> bool {
        self.include.as_ref().is_none_or(|set| set.is_match(name)) && !self.exclude.is_match(name)
    }

    /// Which written globs decide `name`: the first exclude it matches, else
    /// whether an include takes it (and the first that does; `None` with no
    /// include at all), as places in the written list.
    pub(crate) fn decide(&self, name: &str) -> Decision {
        if let Some(&first) = self.exclude.matches(name).first() {
            return Decision::Excluded(self.exclude_at[first]);
        }
        match &self.include {
            None => Decision::Included(None),
            Some(set) => match set.matches(name).first() {
                Some(&first) => Decision::Included(Some(self.include_at[first])),
                None => Decision::NotIncluded,
            },
        }
    }
}

/// What [`ToolGlobs::decide`] found for a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// In: by the glob at this place, or (`None`) because there is no
    /// include glob.
    Included(Option<usize>),
    /// Out: there are include globs and none matches.
    NotIncluded,
    /// Out: the `!` glob at this place matches.
    Excluded(usize),
}

/// Why a tool is in a profile or not ([`Profile::explain`]); the globs as
/// written in `tools`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMatch<'a> {
    /// In the profile: taken by this `tools` glob, or (`None`) because the
    /// profile has no glob that includes (every tool of its servers).
    Included(Option<&'a str>),
    /// Out: the profile has `tools` globs and none takes it.
    NotIncluded,
    /// Out: taken out by this `!` glob.
    Excluded(&'a str),
    /// Out: the profile does not show the tool's server.
    OtherServer,
}

impl ToolMatch<'_> {
    /// True when the tool is in the profile.
    pub fn is_included(&self) -> bool {
        matches!(self, ToolMatch::Included(_))
    }
}

impl Profile {
    /// A profile named `name` over every tool of every enabled server, as
    /// the gateway's `/mcp` is.
    pub fn everything(name: impl Into<String>) -> Profile {
        Profile {
            name: name.into(),
            servers: None,
            tools: Vec::new(),
            rename: Vec::new(),
            descriptions: Vec::new(),
            discovery: Discovery::List,
            globs: ToolGlobs::everything(),
        }
    }

    /// True when the profile shows server `server`'s tools, prompts and
    /// resources.
    pub fn includes_server(&self, server: &str) -> bool {
        self.servers
            .as_ref()
            .is_none_or(|servers| servers.iter().any(|s| s == server))
    }

    /// True when the profile shows tool `tool` of server `server`: the
    /// server is one of the profile's, `{server}__{tool}` matches one of
    /// the `tools` globs (or there are none) and no `!` glob.
    pub fn allows(&self, server: &str, tool: &str) -> bool {
        if !self.includes_server(server) {
            return false;
        }
        let name = format!("{server}__{tool}");
        self.globs.matches(&name)
    }

    /// Why tool `tool` of `server` is in the profile or not: which glob of
    /// `tools` takes it or takes it out ([`allows`](Profile::allows) is
    /// [`ToolMatch::is_included`] of this).
    pub fn explain(&self, server: &str, tool: &str) -> ToolMatch<'_> {
        if !self.includes_server(server) {
            return ToolMatch::OtherServer;
        }
        match self.globs.decide(&format!("{server}__{tool}")) {
            Decision::Included(at) => ToolMatch::Included(at.map(|i| self.tools[i].as_str())),
            Decision::NotIncluded => ToolMatch::NotIncluded,
            Decision::Excluded(i) => ToolMatch::Excluded(&self.tools[i]),
        }
    }

    /// Checks `record` as profile `name` of the config file at `path`,
    /// whose servers (disabled ones included) are `known`: the checks the
    /// file gets when it is loaded, for a record about to be written (or
    /// previewed). An error names the profile and the field.
    pub fn check(
        path: &Path,
        name: &str,
        record: &Value,
        known: &[&str],
    ) -> Result<Profile, ConfigError> {
        let src = Source {
            path,
            text: "",
            servers_at: &[PROFILES_KEY],
        };
        Profile::parse(&src, name, record, known)
    }

    /// The name its clients see for tool `tool` of `server`, listed in the
    /// profile as `listed` before any rename: the `rename` entry for
    /// `{server}__{tool}`, else for `listed`.
    pub fn new_name(&self, server: &str, tool: &str, listed: &str) -> Option<&str> {
        lookup(&self.rename, server, tool, listed)
    }

    /// The description its clients see for tool `tool` of `server` (listed
    /// as `listed`), when the profile overrides it.
    pub fn description(&self, server: &str, tool: &str, listed: &str) -> Option<&str> {
        lookup(&self.descriptions, server, tool, listed)
    }

    /// True when the profile shows every tool of every enabled server as
    /// they are, in list mode: what `/mcp` serves.
    pub fn is_everything(&self) -> bool {
        self.servers.is_none()
            && self.tools.is_empty()
            && self.rename.is_empty()
            && self.descriptions.is_empty()
            && self.discovery == Discovery::List
    }

    /// Reads the profile `name` (`value`, in the file of `src`, whose
    /// `servers_at` is `["profiles"]`), checking the servers it names
    /// against `known` (every server of the file, disabled ones included).
    pub(crate) fn parse(
        src: &Source<'_>,
        name: &str,
        value: &Value,
        known: &[&str],
    ) -> Result<Profile, ConfigError> {
        let fields = ProfileFields { src, name };
        check_name(&fields)?;
        let Value::Object(obj) = value else {
            return Err(fields.err(
                None,
                &[],
                format!(
                    "a profile must be an object ({{\"servers\": [...], \"tools\": [...]}}), not {}",
                    kind_of(value)
                ),
            ));
        };
        if let Some(key) = obj.keys().find(|k| !PROFILE_FIELDS.contains(&k.as_str())) {
            let hint = match nearest(key, &PROFILE_FIELDS) {
                Some(meant) => format!("did you mean \"{meant}\"?"),
                None => format!("a profile has {}", PROFILE_FIELDS.join(", ")),
            };
            return Err(fields.err(
                None,
                &[Step::Key(key)],
                format!("unknown key \"{key}\"; {hint}"),
            ));
        }
        let servers = match obj.get("servers") {
            None | Some(Value::Null) => None,
            Some(_) => Some(fields.servers(obj, known)?),
        };
        let tools = fields.strings(obj, "tools")?;
        let globs = fields.globs(&tools)?;
        let rename = fields.map(obj, "rename")?;
        let mut taken = BTreeSet::new();
        for (i, (_, new)) in rename.iter().enumerate() {
            let at = [Step::Key("rename"), Step::Key(&rename[i].0)];
            if !is_valid_name(new) {
                return Err(fields.err(
                    Some("rename"),
                    &at,
                    format!(
                        "\"rename\": {new:?} is not a tool name clients can use: letters, digits, \
                         `_` and `-`, starting with a letter or `_`, at most 64 characters"
                    ),
                ));
            }
            if !taken.insert(new.as_str()) {
                return Err(fields.err(
                    Some("rename"),
                    &at,
                    format!("\"rename\": two tools are renamed {new:?}; give each its own name"),
                ));
            }
        }
        let descriptions = fields.map(obj, "descriptions")?;
        let discovery = match obj.get("discovery") {
            None | Some(Value::Null) => Discovery::List,
            Some(Value::String(s)) if s == "list" => Discovery::List,
            Some(Value::String(s)) if s == "search" => Discovery::Search,
            Some(other) => {
                return Err(fields.err(
                    Some("discovery"),
                    &[Step::Key("discovery")],
                    format!(
                        "\"discovery\" must be \"list\" or \"search\", not {}",
                        shown(other)
                    ),
                ));
            }
        };
        Ok(Profile {
            name: name.to_string(),
            servers,
            tools,
            rename,
            descriptions,
            discovery,
            globs,
        })
    }
}

/// The value of `key` in `entries`, found by `{server}__{tool}` first, then
/// by the name the tool is listed under.
fn lookup<'a>(
    entries: &'a [(String, String)],
    server: &str,
    tool: &str,
    listed: &str,
) -> Option<&'a str> {
    let full = format!("{server}__{tool}");
    entries
        .iter()
        .find(|(key, _)| *key == full)
        .or_else(|| entries.iter().find(|(key, _)| key == listed))
        .map(|(_, value)| value.as_str())
}

impl PartialEq for Profile {
    /// Equal when written the same (the compiled globs follow from `tools`).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.servers == other.servers
            && self.tools == other.tools
            && self.rename == other.rename
            && self.descriptions == other.descriptions
            && self.discovery == other.discovery
    }
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("name", &self.name)
            .field("servers", &self.servers)
            .field("tools", &self.tools)
            .field("rename", &self.rename)
            .field("descriptions", &self.descriptions.len())
            .field("discovery", &self.discovery)
            .finish()
    }
}

/// Reads the fields of one profile, with errors located in it.
struct ProfileFields<'a> {
    src: &'a Source<'a>,
    name: &'a str,
}

impl ProfileFields<'_> {
    fn err(&self, field: Option<&'static str>, steps: &[Step<'_>], message: String) -> ConfigError {
        ConfigError::Profile {
            at: self.src.locate(Some(self.name), steps),
            profile: self.name.to_string(),
            server: None,
            field,
            message,
        }
    }

    /// `servers`: names of servers the file has, each once.
    fn servers(
        &self,
        obj: &Map<String, Value>,
        known: &[&str],
    ) -> Result<Vec<String>, ConfigError> {
        let servers = self.strings(obj, "servers")?;
        if servers.is_empty() {
            return Err(self.err(
                Some("servers"),
                &[Step::Key("servers")],
                "\"servers\" is empty, so the profile would show nothing; name its servers, or \
                 leave \"servers\" out for every enabled server"
                    .to_string(),
            ));
        }
        for (i, server) in servers.iter().enumerate() {
            if !known.contains(&server.as_str()) {
                let has = if known.is_empty() {
                    "the file has no servers".to_string()
                } else {
                    format!("the file has: {}", known.join(", "))
                };
                return Err(ConfigError::Profile {
                    at: self
                        .src
                        .locate(Some(self.name), &[Step::Key("servers"), Step::Index(i)]),
                    profile: self.name.to_string(),
                    server: Some(server.as_str().into()),
                    field: Some("servers"),
                    message: format!(
                        "\"servers\" names server \"{server}\", which is not in the config; {has}"
                    ),
                });
            }
        }
        let mut seen = BTreeSet::new();
        Ok(servers
            .into_iter()
            .filter(|s| seen.insert(s.clone()))
            .collect())
    }

    /// An array of strings (absent or null: empty).
    fn strings(
        &self,
        obj: &Map<String, Value>,
        field: &'static str,
    ) -> Result<Vec<String>, ConfigError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::String(s) if !s.trim().is_empty() => Ok(s.clone()),
                    other => Err(self.err(
                        Some(field),
                        &[Step::Key(field), Step::Index(i)],
                        format!(
                            "\"{field}\" must be an array of non-empty strings; item {i} is {}",
                            shown(other)
                        ),
                    )),
                })
                .collect(),
            Some(other) => Err(self.err(
                Some(field),
                &[Step::Key(field)],
                format!(
                    "\"{field}\" must be an array of strings, not {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// An object of strings, in file order (absent or null: empty).
    fn map(
        &self,
        obj: &Map<String, Value>,
        field: &'static str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        match obj.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(entries)) => entries
                .iter()
                .map(|(key, value)| match value {
                    Value::String(s) => Ok((key.clone(), s.clone())),
                    other => Err(self.err(
                        Some(field),
                        &[Step::Key(field), Step::Key(key)],
                        format!(
                            "\"{field}\": the value for \"{key}\" must be a string, not {}",
                            kind_of(other)
                        ),
                    )),
                })
                .collect(),
            Some(other) => Err(self.err(
                Some(field),
                &[Step::Key(field)],
                format!(
                    "\"{field}\" must be an object of tool names to strings, not {}",
                    kind_of(other)
                ),
            )),
        }
    }

    /// The `tools` globs compiled.
    fn globs(&self, tools: &[String]) -> Result<ToolGlobs, ConfigError> {
        ToolGlobs::compile(tools).map_err(|(i, why)| {
            let at = match i {
                Some(i) => vec![Step::Key("tools"), Step::Index(i)],
                None => vec![Step::Key("tools")],
            };
            self.err(Some("tools"), &at, format!("\"tools\": {why}"))
        })
    }
}

/// `pattern` as a glob over tool names: `*` and `?` match any characters
/// (names have no path separators), `[...]` a class, case sensitive.
fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern)
        .literal_separator(false)
        .backslash_escape(true)
        .build()
}

/// A profile name is a URL path segment: letters, digits, `_` and `-`.
fn check_name(fields: &ProfileFields<'_>) -> Result<(), ConfigError> {
    let name = fields.name;
    let fine = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if fine {
        return Ok(());
    }
    Err(fields.err(
        None,
        &[],
        format!(
            "{name:?} is not a profile name: letters, digits, `_` and `-`, at most {MAX_NAME} \
             characters (it is served at /mcp/NAME)"
        ),
    ))
}

/// A short rendering of a wrong value for a message (never long).
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() <= 40 => format!("{s:?}"),
        other => kind_of(other).to_string(),
    }
}

/// Every profile of the file's top-level `"profiles"` (`value`), in file
/// order, checked against the servers `known`.
pub(crate) fn parse_profiles(
    src: &Source<'_>,
    value: &Value,
    known: &[&str],
) -> Result<Vec<Profile>, ConfigError> {
    let Value::Object(entries) = value else {
        return Err(ConfigError::Invalid {
            at: src.locate(None, &[]),
            server: None,
            field: Some(PROFILES_KEY.to_string()),
            message: format!(
                "\"{PROFILES_KEY}\" must be an object of profiles by name, not {}",
                kind_of(value)
            ),
        });
    };
    entries
        .iter()
        .map(|(name, value)| Profile::parse(src, name, value, known))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("cfg.json"), text)
    }

    fn with_profiles(profiles: &str) -> String {
        format!(
            "{{\n  \"mcpServers\": {{\n    \"github\": {{\"command\": \"gh\"}},\n    \"fs\": \
             {{\"command\": \"fs\"}},\n    \"off\": {{\"command\": \"x\", \"disabled\": true}}\n  \
             }},\n  \"profiles\": {profiles}\n}}"
        )
    }

    fn profile(body: &str) -> Profile {
        let config = parse(&with_profiles(&format!("{{\"p\": {body}}}")))
            .unwrap_or_else(|e| panic!("{body}: {e}"));
        config.profile("p").cloned().expect("profile p")
    }

    fn error(body: &str) -> String {
        match parse(&with_profiles(&format!("{{\"p\": {body}}}"))) {
            Ok(_) => panic!("{body} should be rejected"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_design_fields_are_read() {
        let p = profile(
            r#"{"servers": ["github", "fs"], "tools": ["github__*", "fs__read_*", "!github__delete_*"],
                "rename": {"github__create_issue": "new_issue"},
                "descriptions": {"read_file": "Read a project file."}, "discovery": "search"}"#,
        );
        assert_eq!(p.name, "p");
        assert_eq!(
            p.servers.as_deref(),
            Some(&["github".to_string(), "fs".to_string()][..])
        );
        assert_eq!(p.discovery, Discovery::Search);
        assert!(p.allows("github", "create_issue"));
        assert!(p.allows("fs", "read_file"));
        assert!(!p.allows("fs", "write_file"), "no glob takes it");
        assert!(!p.allows("github", "delete_repo"), "excluded");
        assert!(
            !p.allows("other", "read_file"),
            "not a server of the profile"
        );
        assert_eq!(
            p.new_name("github", "create_issue", "github__create_issue"),
            Some("new_issue")
        );
        assert_eq!(
            p.new_name("github", "list_issues", "github__list_issues"),
            None
        );
        // A key may be the name the tool is listed under.
        assert_eq!(
            p.description("fs", "read_file", "read_file"),
            Some("Read a project file.")
        );
        assert!(!p.is_everything());
    }

    #[test]
    fn explain_names_the_glob_that_takes_a_tool_in_or_out() {
        let p = profile(
            r#"{"servers": ["github", "fs"],
                "tools": ["github__*", "fs__read_*", "!github__delete_*", "!*__delete_repo"]}"#,
        );
        assert_eq!(
            p.explain("github", "create_issue"),
            ToolMatch::Included(Some("github__*"))
        );
        assert_eq!(
            p.explain("fs", "read_file"),
            ToolMatch::Included(Some("fs__read_*"))
        );
        // The first `!` glob that matches, though an include matches too.
        assert_eq!(
            p.explain("github", "delete_repo"),
            ToolMatch::Excluded("!github__delete_*")
        );
        assert_eq!(p.explain("fs", "write_file"), ToolMatch::NotIncluded);
        assert_eq!(p.explain("off", "anything"), ToolMatch::OtherServer);
        for (server, tool) in [
            ("github", "create_issue"),
            ("github", "delete_repo"),
            ("fs", "x"),
        ] {
            assert_eq!(
                p.explain(server, tool).is_included(),
                p.allows(server, tool)
            );
        }
        let all = profile(r#"{"tools": ["!fs__write_file"]}"#);
        assert_eq!(all.explain("fs", "read_file"), ToolMatch::Included(None));
        assert_eq!(
            all.explain("fs", "write_file"),
            ToolMatch::Excluded("!fs__write_file")
        );
    }

    #[test]
    fn check_reads_a_record_as_the_file_would_and_names_the_profile_and_field() {
        let record = serde_json::json!({"servers": ["fs"], "tools": ["fs__*"]});
        let p = Profile::check(Path::new("cfg.json"), "dev", &record, &["fs"]).unwrap();
        assert!(p.allows("fs", "read_file") && !p.includes_server("github"));
        let error = Profile::check(
            Path::new("cfg.json"),
            "dev",
            &serde_json::json!({"servers": ["nope"]}),
            &["fs"],
        )
        .unwrap_err();
        assert_eq!(error.profile(), Some("dev"));
        assert_eq!(error.field(), Some("servers"));
        assert_eq!(
            error.to_string(),
            "cfg.json: profile \"dev\": \"servers\" names server \"nope\", which is not in \
             the config; the file has: fs"
        );
    }

    #[test]
    fn without_fields_a_profile_is_everything_and_exclusions_alone_subtract() {
        let all = profile("{}");
        assert!(all.is_everything());
        assert!(all.includes_server("anything") && all.allows("fs", "write_file"));
        let most = profile(r#"{"tools": ["!*__delete_*", "!fs__write_file"]}"#);
        assert!(most.allows("github", "create_issue"));
        assert!(!most.allows("github", "delete_repo"));
        assert!(!most.allows("fs", "write_file"));
        assert!(most.allows("fs", "read_file"));
        // Globs are case sensitive and `?` is one character.
        let one = profile(r#"{"tools": ["fs__read_fil?"]}"#);
        assert!(one.allows("fs", "read_file") && !one.allows("fs", "READ_FILE"));
        assert!(parse(&with_profiles("{}")).unwrap().profiles().is_empty());
        assert!(parse(&with_profiles("null")).unwrap().profiles().is_empty());
    }

    #[test]
    fn an_unknown_server_names_the_file_the_line_the_profile_and_the_server() {
        let text = with_profiles("{\n    \"team\": {\"servers\": [\"github\", \"gihub\"]}\n  }");
        let error = parse(&text).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cfg.json:8:36: profile \"team\": \"servers\" names server \"gihub\", which is not \
             in the config; the file has: github, fs, off"
        );
        assert_eq!(error.server(), Some("gihub"));
        assert_eq!(error.field(), Some("servers"));
        assert_eq!(error.path(), Path::new("cfg.json"));
        // A disabled server may be named (it serves nothing while disabled).
        assert!(profile(r#"{"servers": ["off"]}"#).includes_server("off"));
    }

    #[test]
    fn each_field_is_checked() {
        for (body, expected) in [
            ("[]", "a profile must be an object"),
            (
                r#"{"tool": ["*"]}"#,
                "unknown key \"tool\"; did you mean \"tools\"?",
            ),
            (r#"{"zzzz": 1}"#, "a profile has servers, tools, rename"),
            (
                r#"{"servers": "github"}"#,
                "\"servers\" must be an array of strings, not a string",
            ),
            (r#"{"servers": []}"#, "\"servers\" is empty"),
            (r#"{"tools": ["github__*", 5]}"#, "item 1 is a number"),
            (
                r#"{"tools": ["github__[a"]}"#,
                "\"tools\": \"github__[a\" is not a valid glob",
            ),
            (r#"{"rename": ["a"]}"#, "\"rename\" must be an object"),
            (
                r#"{"rename": {"a": 1}}"#,
                "the value for \"a\" must be a string",
            ),
            (
                r#"{"rename": {"a": "has space"}}"#,
                "\"has space\" is not a tool name",
            ),
            (
                r#"{"rename": {"a": "x", "b": "x"}}"#,
                "two tools are renamed \"x\"",
            ),
            (
                r#"{"descriptions": {"a": null}}"#,
                "must be a string, not null",
            ),
            (
                r#"{"discovery": "grep"}"#,
                "\"discovery\" must be \"list\" or \"search\", not \"grep\"",
            ),
        ] {
            let message = error(body);
            assert!(
                message.contains(expected) && message.contains("profile \"p\""),
                "{body}: {message}"
            );
            assert!(message.starts_with("cfg.json:"), "{message}");
        }
        let bad_name = parse(&with_profiles(r#"{"a/b": {}}"#))
            .unwrap_err()
            .to_string();
        assert!(
            bad_name.contains("\"a/b\" is not a profile name"),
            "{bad_name}"
        );
        let not_object = parse(&with_profiles("[1]")).unwrap_err().to_string();
        assert!(
            not_object.contains("\"profiles\" must be an object of profiles by name, not an array"),
            "{not_object}"
        );
    }

    #[test]
    fn an_editors_own_profiles_are_not_read_as_toolbridges() {
        // Zed's settings.json has settings profiles of its own.
        let text = r#"{"context_servers": {"a": {"command": "x"}},
                       "profiles": {"Presenting": {"buffer_font_size": 20}}}"#;
        let config = Config::parse(Path::new("zed/settings.json"), text).unwrap();
        assert_eq!(config.server_names(), ["a"]);
        assert!(config.profiles().is_empty());
    }

    #[test]
    fn profiles_are_read_from_jsonc_and_found_by_name() {
        let text = "{ // team setup\n \"mcpServers\": {\"a\": {\"command\": \"x\"},},\n \
                    \"profiles\": {\"one\": {\"servers\": [\"a\",],}, /* two */ \"two\": {},},\n}";
        let config = parse(text).unwrap();
        let names: Vec<&str> = config.profiles().iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["one", "two"]);
        assert!(config.find_profile("one").is_ok());
        let missing = config.find_profile("three").unwrap_err().to_string();
        assert_eq!(missing, "unknown profile \"three\"; cfg.json has: one, two");
    }
}
