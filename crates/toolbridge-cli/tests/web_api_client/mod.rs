//! A client of the settings page's JSON API (`/api/...`) of a
//! `toolbridge serve` started by `gateway_support`, for the web API tests:
//! each request sends the gateway's bearer token and, for writes, the
//! header the page's own script sends. [`AsyncApi`] is for `#[tokio::test]`s,
//! [`Api`] the same requests for plain tests.

#![allow(dead_code)]

use std::{path::PathBuf, time::Duration};

use serde_json::Value;

use crate::gateway_support::{Gateway, TOKEN, write_config};

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

/// A `toolbridge serve` over a config file of its own, and its API.
pub struct Served {
    pub gateway: Gateway,
    pub api: AsyncApi,
    /// The config file (`{"mcpServers": servers}`).
    pub config: PathBuf,
    _dir: tempfile::TempDir,
}

impl Served {
    /// A gateway over `servers` (the `mcpServers` object), in a temp folder.
    pub fn start(servers: Value) -> Served {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = write_config(dir.path(), servers);
        let gateway = Gateway::start(&config, dir.path(), &[]);
        Served {
            api: AsyncApi::new(&gateway.addr()),
            gateway,
            config,
            _dir: dir,
        }
    }

    /// The config file as it is now.
    pub fn config_text(&self) -> String {
        std::fs::read_to_string(&self.config).expect("read the config file")
    }
}

/// The API of one gateway at `http://ADDR`, for async tests.
#[derive(Clone)]
pub struct AsyncApi {
    http: reqwest::Client,
    base: String,
}

impl AsyncApi {
    /// The API of the gateway listening on `addr` (`127.0.0.1:PORT`).
    pub fn new(addr: &str) -> AsyncApi {
        AsyncApi {
            http: reqwest::Client::new(),
            base: format!("http://{addr}"),
        }
    }

    /// `GET /api{path}`.
    pub async fn get(&self, path: &str) -> Reply {
        self.send("GET", path, None, &[]).await
    }

    /// `POST /api{path}` with `body`, as the page sends it.
    pub async fn post(&self, path: &str, body: Value) -> Reply {
        self.send("POST", path, Some(body), &[(WRITE_HEADER, "1")])
            .await
    }

    /// `PUT /api{path}` with `body`, as the page sends it.
    pub async fn put(&self, path: &str, body: Value) -> Reply {
        self.send("PUT", path, Some(body), &[(WRITE_HEADER, "1")])
            .await
    }

    /// `DELETE /api{path}`, as the page sends it.
    pub async fn delete(&self, path: &str) -> Reply {
        self.send("DELETE", path, None, &[(WRITE_HEADER, "1")])
            .await
    }

    /// Any request, with exactly the extra `headers` given (besides the
    /// token and the content type).
    pub async fn send(
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
            .timeout(Duration::from_secs(90));
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
}

/// [`AsyncApi`]'s requests, answered before they return, for plain tests.
pub struct Api {
    runtime: tokio::runtime::Runtime,
    api: AsyncApi,
}

impl Api {
    /// The API of the gateway listening on `addr` (`127.0.0.1:PORT`).
    pub fn new(addr: &str) -> Api {
        Api {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime"),
            api: AsyncApi::new(addr),
        }
    }

    /// `GET /api{path}`.
    pub fn get(&self, path: &str) -> Reply {
        self.block_on(self.api.get(path))
    }

    /// `POST /api{path}` with `body`, as the page sends it.
    pub fn post(&self, path: &str, body: Value) -> Reply {
        self.block_on(self.api.post(path, body))
    }

    /// `PUT /api{path}` with `body`, as the page sends it.
    pub fn put(&self, path: &str, body: Value) -> Reply {
        self.block_on(self.api.put(path, body))
    }

    /// `DELETE /api{path}`, as the page sends it.
    pub fn delete(&self, path: &str) -> Reply {
        self.block_on(self.api.delete(path))
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
        self.block_on(self.api.send(method, path, body, headers))
    }

    /// The same requests as futures, to run several at once in
    /// [`Api::block_on`].
    pub fn asynchronous(&self) -> &AsyncApi {
        &self.api
    }

    /// Runs `future` on this client's runtime.
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }
}
