//! A synchronous client of the settings page's JSON API (`/api/...`) of a
//! `toolbridge serve` started by `gateway_support`, for the web API tests:
//! each request sends the gateway's bearer token and, for writes, the
//! header the page's own script sends.

#![allow(dead_code)]

use std::time::Duration;

use serde_json::Value;

use crate::gateway_support::TOKEN;

/// The write header every page write carries.
pub const WRITE_HEADER: &str = "X-Toolbridge-Request";

/// One answer: the status, the body as text and as JSON (`Null` if none).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub text: String,
    pub json: Value,
}

impl Reply {
    /// `error.field`, when the answer names one.
    pub fn field(&self) -> Option<&str> {
        self.json.pointer("/error/field").and_then(Value::as_str)
    }
}

/// The API of one gateway at `http://ADDR`.
pub struct Api {
    runtime: tokio::runtime::Runtime,
    http: reqwest::Client,
    base: String,
}

impl Api {
    /// The API of the gateway listening on `addr` (`127.0.0.1:PORT`).
    pub fn new(addr: &str) -> Api {
        Api {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            http: reqwest::Client::new(),
            base: format!("http://{addr}"),
        }
    }

    /// `GET /api{path}`.
    pub fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, &[])
    }

    /// `POST /api{path}` with `body`, as the page sends it.
    pub fn post(&self, path: &str, body: Value) -> Reply {
        self.send("POST", path, Some(body), &[(WRITE_HEADER, "1")])
    }

    /// `PUT /api{path}` with `body`, as the page sends it.
    pub fn put(&self, path: &str, body: Value) -> Reply {
        self.send("PUT", path, Some(body), &[(WRITE_HEADER, "1")])
    }

    /// `DELETE /api{path}`, as the page sends it.
    pub fn delete(&self, path: &str) -> Reply {
        self.send("DELETE", path, None, &[(WRITE_HEADER, "1")])
    }

    /// Any request, with exactly the extra `headers` given (besides the
    /// token and the content type).
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        self.runtime
            .block_on(self.send_async(method, path, body, headers))
    }

    /// [`Api::send`] for use inside an async block of the caller's.
    pub async fn send_async(
        &self,
        method: &str,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> Reply {
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self
            .http
            .request(method, format!("{}/api{path}", self.base))
            .bearer_auth(TOKEN)
            .timeout(Duration::from_secs(60));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request to the gateway");
        let status = response.status().as_u16();
        let text = response.text().await.expect("response body");
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, text, json }
    }

    /// Runs `future` on this client's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
