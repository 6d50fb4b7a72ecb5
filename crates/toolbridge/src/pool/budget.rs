//! [`Budget`]: what one request may take, decided once as it is made, and
//! how a timeout error names it. Every request ([`Pool::request`], and so
//! [`Pool::call_tool`] and the typed operations) takes its limits from here.
//!
//! [`Pool::request`]: super::Pool::request
//! [`Pool::call_tool`]: super::Pool::call_tool

use std::time::Duration;

use tokio::time::Instant;

use super::{PoolError, PoolOptions, progress::Limits};
use crate::config::ServerSpec;

/// One request's limits: the caller's bound on the whole, the server's start
/// and every step on the way (a listing, a check) included, or else the
/// server's `timeout` on each silence, progress restarting it up to
/// [`PoolOptions::max_total_call_time`].
#[derive(Debug, Clone, Copy)]
pub(super) struct Budget {
    /// The caller's bound ([`CallOptions::timeout`](super::CallOptions::timeout)):
    /// what a timeout error names.
    pub(super) caller: Option<Duration>,
    /// When the caller's bound passes.
    deadline: Option<Instant>,
    /// The server's own limits, for a request the caller does not bound.
    own: Limits,
}

impl Budget {
    /// The budget of a request to `spec`'s server made now, bounded by
    /// `caller` when it is set.
    pub(super) fn new(options: &PoolOptions, spec: &ServerSpec, caller: Option<Duration>) -> Self {
        let timeout = spec.call_timeout();
        Budget {
            caller,
            deadline: caller.map(|limit| super::progress::later(Instant::now(), limit)),
            own: Limits {
                idle: timeout,
                total: options.max_total_call_time.max(timeout),
            },
        }
    }

    /// What is left now: of the caller's bound, progress or not; else the
    /// server's own limits, whatever came before.
    pub(super) fn left(&self) -> Limits {
        match self.deadline {
            None => self.own,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                Limits {
                    idle: left,
                    total: left,
                }
            }
        }
    }

    /// `error` naming the caller's bound, not what was left of it when the
    /// step that timed out began.
    pub(super) fn bounded(&self, error: PoolError) -> PoolError {
        bounded(error, self.caller)
    }
}

/// `error` with the caller's bound `caller` (when there is one) as the
/// time a timeout took.
pub(super) fn bounded(error: PoolError, caller: Option<Duration>) -> PoolError {
    let Some(limit) = caller else {
        return error;
    };
    match error {
        PoolError::Timeout { server, tool, .. } => PoolError::Timeout {
            server,
            tool,
            after: limit,
        },
        PoolError::RequestTimeout { server, method, .. } => PoolError::RequestTimeout {
            server,
            method,
            after: limit,
        },
        PoolError::StartTimeout { server, stderr, .. } => PoolError::StartTimeout {
            server,
            after: limit,
            stderr,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(timeout: u64) -> ServerSpec {
        let mut spec = ServerSpec::stdio("s", "true", Vec::<String>::new());
        spec.timeout = Some(Duration::from_secs(timeout));
        spec
    }

    #[test]
    fn an_unbounded_request_keeps_the_servers_limits_and_a_bounded_one_what_is_left() {
        let options = PoolOptions::default();
        let own = Budget::new(&options, &spec(7), None).left();
        assert_eq!(own.idle, Duration::from_secs(7));
        assert_eq!(own.total, options.max_total_call_time);

        let bounded = Budget::new(&options, &spec(7), Some(Duration::from_secs(3))).left();
        assert!(bounded.idle <= Duration::from_secs(3) && bounded.idle > Duration::from_secs(2));
        assert_eq!(bounded.idle, bounded.total);
    }

    #[test]
    fn a_timeout_names_the_callers_bound() {
        let budget = Budget::new(
            &PoolOptions::default(),
            &spec(7),
            Some(Duration::from_secs(3)),
        );
        let error = budget.bounded(PoolError::RequestTimeout {
            server: "s".into(),
            method: "prompts/get".into(),
            after: Duration::from_millis(1200),
        });
        assert!(
            matches!(error, PoolError::RequestTimeout { after, .. } if after == Duration::from_secs(3)),
            "{error:?}"
        );
        let unbounded = Budget::new(&PoolOptions::default(), &spec(7), None);
        let error = unbounded.bounded(PoolError::Timeout {
            server: "s".into(),
            tool: None,
            after: Duration::from_secs(7),
        });
        assert!(
            matches!(error, PoolError::Timeout { after, .. } if after == Duration::from_secs(7)),
            "{error:?}"
        );
    }
}
