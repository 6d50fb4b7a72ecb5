//! The page as the client of the calls it makes: it keeps the log messages
//! a server sends during the call (shown with the result), gives no roots,
//! and refuses sampling and elicitation with a sentence that says why (a
//! server asking during a page's call would otherwise hear that the gateway
//! cannot tell which client asks).

// Sampling, roots and logging are deprecated by SEP-2577 in rmcp 3.11, but
// 2025-11-25 servers use them.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};
use toolbridge::lock::LockUnpoisoned as _;

use futures::future::BoxFuture;
use rmcp::{
    ErrorData,
    model::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ListRootsResult, LoggingLevel, LoggingMessageNotificationParam,
    },
};
use toolbridge::pool::{
    ClientFeatures, ElicitationHandler, LogHandler, RequestOrigin, RootsProvider, SamplingHandler,
};

/// At most this many log messages are kept per call (the first ones).
const MAX_LOGS: usize = 200;

/// One page call's client side.
#[derive(Default)]
pub struct PageClient {
    logs: Mutex<Vec<LoggingMessageNotificationParam>>,
}

impl PageClient {
    /// The features to call with, all answered by `client`. Log messages
    /// are asked for from debug up: on 2026-07-28 servers that is this
    /// request's own level; on earlier ones the connection's level stays
    /// as it is (nothing is set for the other clients).
    pub fn features(client: &Arc<PageClient>) -> ClientFeatures {
        ClientFeatures {
            roots: Some(client.clone()),
            sampling: Some(client.clone()),
            elicitation: Some(client.clone()),
            logs: Some(client.clone()),
            log_level: Some(LoggingLevel::Debug),
            // Each page call is a client of its own.
            client: Some(ClientFeatures::new_client()),
        }
    }

    /// The log messages received so far.
    pub fn logs(&self) -> Vec<LoggingMessageNotificationParam> {
        self.logs.lock_unpoisoned().clone()
    }
}

fn refused(what: &str, origin: &RequestOrigin) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "server \"{}\" asked for {what}, which the settings page cannot answer; \
             call this tool from an MCP client that supports {what} (through the gateway)",
            origin.server
        ),
        None,
    )
}

impl SamplingHandler for PageClient {
    fn create_message(
        &self,
        origin: RequestOrigin,
        _params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, ErrorData>> {
        Box::pin(async move { Err(refused("sampling", &origin)) })
    }
}

impl ElicitationHandler for PageClient {
    fn elicit(
        &self,
        origin: RequestOrigin,
        _params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move { Err(refused("elicitation", &origin)) })
    }
}

impl RootsProvider for PageClient {
    fn list_roots(
        &self,
        _origin: RequestOrigin,
    ) -> BoxFuture<'_, Result<ListRootsResult, ErrorData>> {
        Box::pin(async { Ok(ListRootsResult::default()) })
    }
}

impl LogHandler for PageClient {
    fn log(&self, _origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let mut logs = self.logs.lock_unpoisoned();
        if logs.len() < MAX_LOGS {
            logs.push(message);
        }
    }
}
