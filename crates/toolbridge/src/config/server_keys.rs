//! The keys of a server entry that toolbridge reads, in one list: which kind
//! of server reads each, and which the settings page's form owns. The
//! unknown-key warning (`config/warning.rs`), the record's reading
//! (`config/record.rs`) and the page's form (toolbridge-gateway's
//! `web/api/servers/form.rs`) take their lists from here, so a new key is
//! added once.

/// Which servers read a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBy {
    /// Every server.
    Any,
    /// Stdio servers only: dropped when a server becomes a network one.
    Stdio,
    /// Network servers only: dropped when a server becomes a stdio one.
    Remote,
}

/// One key of a server entry.
#[derive(Clone, Copy, Debug)]
pub struct ServerKey {
    /// The key as written in the file.
    pub name: &'static str,
    /// Which servers read it.
    pub read_by: ReadBy,
    /// The settings page's server form writes it (every other key of a
    /// stored entry is kept as it was when the form saves).
    pub in_form: bool,
}

const fn key(name: &'static str, read_by: ReadBy, in_form: bool) -> ServerKey {
    ServerKey {
        name,
        read_by,
        in_form,
    }
}

/// The keys that declare a server's transport, in the order they are read:
/// `type`, else `transport`, else Cline's `transportType`.
pub const TRANSPORT_KEYS: [&str; 3] = ["type", "transport", "transportType"];

/// Every key of a server entry that toolbridge reads.
pub const SERVER_KEYS: [ServerKey; 21] = [
    key(TRANSPORT_KEYS[0], ReadBy::Any, true),
    key(TRANSPORT_KEYS[1], ReadBy::Any, true),
    key(TRANSPORT_KEYS[2], ReadBy::Any, true),
    key("command", ReadBy::Stdio, true),
    key("args", ReadBy::Stdio, true),
    key("env", ReadBy::Stdio, true),
    key("envFile", ReadBy::Stdio, false),
    key("cwd", ReadBy::Stdio, false),
    key("url", ReadBy::Remote, true),
    key("serverUrl", ReadBy::Remote, true),
    key("headers", ReadBy::Remote, true),
    key("timeout", ReadBy::Any, false),
    key("startupTimeout", ReadBy::Any, false),
    key("disabled", ReadBy::Any, false),
    key("disabledTools", ReadBy::Any, false),
    key("enabledTools", ReadBy::Any, false),
    key("resultBudget", ReadBy::Any, false),
    key("inheritEnv", ReadBy::Stdio, false),
    key("oauth", ReadBy::Remote, false),
    key("pin", ReadBy::Any, false),
    key("sandbox", ReadBy::Stdio, false),
];

/// The names of [`SERVER_KEYS`], in the same order.
pub const SERVER_KEY_NAMES: [&str; SERVER_KEYS.len()] = {
    let mut names = [""; SERVER_KEYS.len()];
    let mut i = 0;
    while i < SERVER_KEYS.len() {
        names[i] = SERVER_KEYS[i].name;
        i += 1;
    }
    names
};

/// The key named `name`, if toolbridge reads it.
pub fn server_key(name: &str) -> Option<&'static ServerKey> {
    SERVER_KEYS.iter().find(|key| key.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_listed_once() {
        for (i, key) in SERVER_KEY_NAMES.iter().enumerate() {
            assert!(!SERVER_KEY_NAMES[..i].contains(key), "{key} twice");
            assert_eq!(server_key(key).map(|k| k.name), Some(*key));
        }
        assert!(server_key("comand").is_none());
    }

    /// The form owns the keys that say what and where the server is, and
    /// the transport keys are read by every server.
    #[test]
    fn the_form_owns_the_transport_and_the_endpoint() {
        let owned: Vec<&str> = SERVER_KEYS
            .iter()
            .filter(|key| key.in_form)
            .map(|key| key.name)
            .collect();
        assert_eq!(
            owned,
            [
                "type",
                "transport",
                "transportType",
                "command",
                "args",
                "env",
                "url",
                "serverUrl",
                "headers"
            ]
        );
        for name in TRANSPORT_KEYS {
            assert_eq!(server_key(name).map(|k| k.read_by), Some(ReadBy::Any));
        }
    }
}
