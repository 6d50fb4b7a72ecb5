//! The keys of the config file's global `"toolbridge"` object, in one place:
//! the object's own key, the fields [`Settings`](super::Settings) reads and
//! the gateway's key among them. The settings' reading, the unknown-key
//! warning (`warning`) and the gateway's rules and limits, which name their
//! place in errors, take them from here.

/// The key of the global settings in a config file.
pub const SETTINGS_KEY: &str = "toolbridge";

/// The key of the gateway's settings in the `"toolbridge"` object.
pub const GATEWAY_KEY: &str = "gateway";

/// The keys [`Settings`](super::Settings) reads.
pub(crate) const SETTINGS_FIELDS: [&str; 7] = [
    "inheritEnv",
    "toolCacheTtl",
    "resultBudget",
    "startupTimeout",
    "pin",
    "sandbox",
    GATEWAY_KEY,
];
