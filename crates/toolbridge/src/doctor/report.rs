//! [`diagnose`]: doctor's whole check of a config, server by server:
//! the checks on the config first, then a real start (handshake and tool
//! listing) of every enabled server that passed them, all in parallel.

use std::time::Duration;

use super::{
    Fix,
    check::{URL_TIMEOUT, record_problems},
    finding::{Finding, Problem},
    start::{START_TIMEOUT, Started, start_server},
};
use crate::{
    config::{Config, ServerRecord, ServerSpec, TransportSpec},
    deps::Platform,
    pool::{Pool, PoolOptions},
    presets,
    sandbox::Sandbox,
};

/// How doctor checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckOptions {
    /// How long every server may take to start and list its tools. `None`:
    /// the server's own `startupTimeout`, else [`START_TIMEOUT`].
    pub start_timeout: Option<Duration>,
    /// How long a remote URL may take to answer at all before it counts as
    /// down (default [`URL_TIMEOUT`]).
    pub url_timeout: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            start_timeout: None,
            url_timeout: URL_TIMEOUT,
        }
    }
}

/// What doctor found out about one configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCheck {
    /// The server's name in the config.
    pub server: String,
    /// False for a `disabled` server, which is not checked.
    pub enabled: bool,
    /// What the server said when it started, if it did and listed its tools.
    pub started: Option<Started>,
    /// Its problems, each with its fix; empty when it works.
    pub findings: Vec<Finding>,
    /// A stdio server's sandbox, as its config resolves (`None` for a
    /// network server or an entry that does not resolve).
    pub sandbox: Option<Sandbox>,
}

impl ServerCheck {
    /// True when the server is enabled, started and listed its tools.
    pub fn is_ok(&self) -> bool {
        self.enabled && self.findings.is_empty() && self.started.is_some()
    }
}

/// Checks every server of `config`, in config order (disabled ones are
/// listed, not checked). For each enabled server, first what can be known
/// without starting it (unset variables, a missing or non-executable
/// command, a missing preset key, an invalid value, a URL that does not
/// answer at all); when none of that is wrong, the server is started,
/// completes the handshake and lists its tools, within its start timeout
/// (see [`CheckOptions`]), and is closed again. All servers are checked in
/// parallel; `on_done` is told each server's name as its check ends (for a
/// progress display).
pub async fn diagnose(
    config: &Config,
    platform: &Platform,
    options: &CheckOptions,
    on_done: impl Fn(&str),
) -> Vec<ServerCheck> {
    let records: Vec<&ServerRecord> = config.records().iter().collect();
    check_records(config, &records, false, platform, options, on_done).await
}

/// Checks the one server `name` of `config` as [`diagnose`] checks each
/// server, even when it is disabled (it was asked for by name): for a
/// "test" button. `None` when the config has no
/// server of that name.
pub async fn diagnose_server(
    config: &Config,
    name: &str,
    platform: &Platform,
    options: &CheckOptions,
) -> Option<ServerCheck> {
    let record = config.records().iter().find(|r| r.name == name)?;
    check_records(config, &[record], true, platform, options, |_| {})
        .await
        .pop()
}

/// Checks `records` of `config`; disabled ones only when `even_disabled`.
async fn check_records(
    config: &Config,
    records: &[&ServerRecord],
    even_disabled: bool,
    platform: &Platform,
    options: &CheckOptions,
    on_done: impl Fn(&str),
) -> Vec<ServerCheck> {
    let pool_timeout = options.start_timeout.unwrap_or(START_TIMEOUT);
    let checked = |record: &ServerRecord| even_disabled || !record.disabled;
    let specs: Vec<ServerSpec> = records
        .iter()
        .filter(|record| checked(record))
        .filter_map(|record| config.resolve(&record.name).ok())
        .map(|mut spec| {
            // A disabled server asked for by name is started all the same.
            spec.disabled = false;
            // `--start-timeout` wins over the server's own setting.
            if options.start_timeout.is_some() {
                spec.startup_timeout = None;
            }
            spec
        })
        .collect();
    let pool = Pool::new(
        specs.clone(),
        PoolOptions {
            start_timeout: pool_timeout,
            // One check per server: nothing to listen for.
            listen_for_changes: false,
            ..PoolOptions::default()
        },
    );
    let on_done = &on_done;
    let pool = &pool;
    let specs = &specs;
    let checks = records.iter().map(|record| async move {
        let sandbox =
            specs
                .iter()
                .find(|spec| spec.name == record.name)
                .and_then(|spec| match &spec.transport {
                    TransportSpec::Stdio(stdio) => Some(stdio.sandbox.clone()),
                    _ => None,
                });
        let mut check = ServerCheck {
            server: record.name.clone(),
            enabled: !record.disabled,
            started: None,
            findings: Vec::new(),
            sandbox,
        };
        if !checked(record) {
            return check;
        }
        let preset = presets::find_by_launch(
            record.command.as_deref(),
            &record.args,
            record.url.as_deref(),
        );
        check.findings =
            record_problems(config, record, preset, platform, options.url_timeout).await;
        if check.findings.is_empty() {
            match specs.iter().find(|spec| spec.name == record.name) {
                Some(spec) => {
                    let limit = spec.startup_timeout.unwrap_or(pool_timeout);
                    match start_server(pool, spec, limit).await {
                        Ok(mut started) => {
                            check.findings.append(&mut started.hidden);
                            check.started = Some(started);
                        }
                        Err(finding) => check.findings.push(finding),
                    }
                    pool.close(&record.name).await;
                }
                // The config checks pass only when the record resolves.
                None => check.findings.push(Finding::new(
                    record.name.clone(),
                    Problem::Invalid {
                        message: format!(
                            "server \"{}\" cannot be resolved from the config",
                            record.name
                        ),
                    },
                    Fix::CorrectEntry,
                )),
            }
        }
        on_done(&record.name);
        check
    });
    let checks = futures::future::join_all(checks).await;
    pool.close_all().await;
    checks
}
