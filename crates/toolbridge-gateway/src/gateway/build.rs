//! A new [`Gateway`]: the upstreams' pool, with what no client's call claims
//! (`client_peer`), the upstreams' log tee and an audit line for each pin
//! change; the shared state; and the relay of every upstream's
//! notifications to the clients (`upstream_events`) started.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex, RwLock, atomic::AtomicU64},
};

use toolbridge::{
    config::{Profile, ServerSpec},
    pool::Pool,
};

use super::{
    Gateway, GatewayOptions, Inner,
    config_changes::{by_name, enabled},
};
use crate::{
    client_peer::Unrouted, metrics::Metrics, subscriptions::Subscriptions, upstream_events,
};

impl Gateway {
    /// A gateway over `specs` (disabled servers left out); nothing starts
    /// until a client asks.
    pub fn new(specs: Vec<ServerSpec>, options: GatewayOptions) -> Gateway {
        let mut pool_options = options.pool;
        // What no client's call claims (see `client_peer`).
        pool_options.client_features = Unrouted::features();
        let upstream_logs = crate::upstream_logs::UpstreamLogs::default();
        pool_options.client_features.logs = Some(upstream_logs.tee(None));
        // Each change pinning sees is an audit line.
        if let Some(pins) = pool_options.pins.as_mut()
            && pins.on_event.is_none()
        {
            pins.on_event = Some(Arc::new(crate::audit::pin_event));
        }
        let pins_dir = pool_options.pins.as_ref().map(|p| p.dir.clone());
        let pool = Pool::new(enabled(specs), pool_options);
        let gateway = Gateway {
            inner: Arc::new(Inner {
                pool,
                pins_dir,
                page_size: options.page_size.max(1),
                profiles: RwLock::new(Arc::new(by_name(options.profiles))),
                everything: Arc::new(Profile::everything("")),
                tools: Mutex::new(HashMap::new()),
                compared: Mutex::default(),
                prompts: Mutex::new(HashMap::new()),
                resources: Mutex::new(HashMap::new()),
                templates: Mutex::new(Vec::new()),
                clients: Mutex::new(Vec::new()),
                listeners: Arc::default(),
                subscriptions: Subscriptions::default(),
                next_client: AtomicU64::new(0),
                held: Arc::default(),
                tasks: Arc::default(),
                metrics: Metrics::default(),
                caps: crate::limits::Caps::new(options.limits),
                rights: options.rights,
                rate_limits: options.rate_limits,
                connected: Default::default(),
                activity: Default::default(),
                upstream_logs,
                tracing: options.tracing,
            }),
        };
        upstream_events::watch(&gateway, gateway.pool(), &gateway.pool().server_names());
        gateway
    }
}
