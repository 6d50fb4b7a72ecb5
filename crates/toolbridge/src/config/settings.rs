//! [`Settings`]: the config file's global `"toolbridge": {...}` object.

use std::time::Duration;

use serde_json::Value;

use super::{
    error::ConfigError,
    fields::{Fields, Source},
    gateway::GatewaySettings,
    sandbox::SandboxRecord,
    settings_keys::{GATEWAY_KEY, SETTINGS_KEY},
};
use crate::json_kind::kind_of;

/// Global settings, from the config file's top-level `"toolbridge"` object:
///
/// ```json
/// { "toolbridge": { "inheritEnv": ["HTTPS_PROXY", "LC_*"], "toolCacheTtl": 3600,
///                   "resultBudget": 20000, "startupTimeout": 30,
///                   "sandbox": "default" },
///   "mcpServers": { ... } }
/// ```
///
/// Every field is optional; `None` (or empty) means the library's default.
/// A server's own `inheritEnv` adds to the global list; its own
/// `startupTimeout`, `resultBudget` and `pin` take precedence over the global ones
/// (resolving a server fills its spec from these when it has none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Settings {
    /// Variables every stdio server inherits from toolbridge's environment
    /// (names, or prefixes ending in `*`), on top of each server's own list.
    pub inherit_env: Vec<String>,
    /// How long a cached tool list stays fresh (`toolCacheTtl`, seconds);
    /// `None` means the tool cache's default.
    pub tool_cache_ttl: Option<Duration>,
    /// The default result budget in characters (`resultBudget`); `None`
    /// means the library's default.
    pub result_budget: Option<usize>,
    /// The default time a server may take to start (`startupTimeout`,
    /// seconds); `None` means the pool's default.
    pub startup_timeout: Option<Duration>,
    /// Pinning of every server's tool definitions (`pin`), unless a server
    /// sets its own; `None` means `block`.
    pub pin: Option<crate::pins::PinPolicy>,
    /// The sandbox of every stdio server whose entry has none
    /// (`sandbox`); `None` means `"default"`.
    pub(crate) sandbox: Option<SandboxRecord>,
    /// The gateway's settings (`gateway`: its OAuth issuer).
    pub gateway: GatewaySettings,
}

impl Settings {
    /// Reads `value`, the `"toolbridge"` object of the file in `src`
    /// (`src.servers_at` is `["toolbridge"]`). Unknown keys are left to the
    /// caller's warnings.
    pub(crate) fn parse(src: &Source<'_>, value: &Value) -> Result<Self, ConfigError> {
        let Value::Object(obj) = value else {
            return Err(src.invalid(
                None,
                Some(SETTINGS_KEY),
                &[],
                format!(
                    "\"{SETTINGS_KEY}\" must be an object of settings, not {}",
                    kind_of(value)
                ),
            ));
        };
        let fields = Fields {
            src,
            server: None,
            obj,
        };
        Ok(Settings {
            inherit_env: fields.inherit_env("inheritEnv")?,
            tool_cache_ttl: fields.timeout("toolCacheTtl")?,
            result_budget: fields.positive_integer("resultBudget")?,
            startup_timeout: fields.timeout("startupTimeout")?,
            pin: fields.pin_policy("pin")?,
            sandbox: SandboxRecord::parse(&fields)?,
            gateway: match fields.get(GATEWAY_KEY) {
                Some(value) => GatewaySettings::parse(src, value)?,
                None => GatewaySettings::default(),
            },
        })
    }
}
