//! Doctor's findings as one JSON document, as `toolbridge doctor --json`
//! prints it and the web page's Doctor view reads it.

use serde_json::{Value, json};

use super::{Finding, ServerCheck};
use crate::{
    config::Config,
    deps::{Probe, ProbeStatus},
    sandbox::Support,
};

/// The report of `checks` (and the launcher `probes`) of `config`:
/// `{"config", "builtin", "launchers": [...], "servers": [...], "findings": [...]}`;
/// each server has its `status` (`ok`, `problem`, `disabled`); one that is
/// ok also what it said and how it started (`transport`, `protocolVersion`,
/// `serverName`, `serverVersion`, `toolCount`, `startMs`).
pub fn report_json(config: &Config, probes: &[Probe], checks: &[ServerCheck]) -> Value {
    let launchers: Vec<Value> = probes
        .iter()
        .map(|probe| match &probe.status {
            ProbeStatus::Found { path, version } => json!({
                "command": probe.command, "status": "ok",
                "version": version, "path": path.display().to_string(),
            }),
            ProbeStatus::Missing => json!({"command": probe.command, "status": "missing"}),
            ProbeStatus::Broken { path, reason } => json!({
                "command": probe.command, "status": "broken",
                "path": path.display().to_string(), "reason": reason,
            }),
        })
        .collect();
    let servers: Vec<Value> = checks
        .iter()
        .map(|check| {
            let status = if !check.enabled {
                "disabled"
            } else if !check.findings.is_empty() {
                "problem"
            } else {
                "ok"
            };
            let mut server = serde_json::Map::new();
            server.insert("name".into(), json!(check.server));
            server.insert("status".into(), json!(status));
            if let Some(sandbox) = &check.sandbox {
                server.insert("sandbox".into(), json!(sandbox.to_string()));
                if let Some(why) = Support::get().refuses(sandbox) {
                    server.insert("sandboxUnavailable".into(), json!(why));
                }
            }
            if status == "ok"
                && let Some(Value::Object(started)) = check
                    .started
                    .as_ref()
                    .and_then(|s| serde_json::to_value(s).ok())
            {
                server.extend(started);
            }
            Value::Object(server)
        })
        .collect();
    let findings: Vec<&Finding> = checks.iter().flat_map(|c| &c.findings).collect();
    let support = Support::get();
    json!({
        "sandbox": {
            "landlockAbi": support.landlock_abi,
            "networkNamespaces": support.netns_refused.is_none(),
            "unavailable": support.refused(),
        },
        "config": config.path().display().to_string(),
        "builtin": config.is_builtin(),
        "launchers": launchers,
        "servers": servers,
        "findings": findings,
    })
}
