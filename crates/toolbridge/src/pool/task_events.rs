//! [`TaskEvents`]: the task status notifications a server sent, by task
//! id, from the connection that reads them to the pollers in `tasks` that
//! wait for them. Apart from `tasks` so that the connection and the slot,
//! which `tasks` uses, do not depend on it.

/// The ids of the tasks a server sent a status notification for, to wake
/// their pollers. Kept by the server's slot, across reconnects.
pub(super) type TaskEvents = tokio::sync::broadcast::Sender<String>;

/// How many status notifications a poller may fall behind by; one that
/// falls further behind polls at once.
pub(super) const TASK_EVENT_BACKLOG: usize = 64;
