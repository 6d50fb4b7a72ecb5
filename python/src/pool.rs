//! `toolbridge._native.Pool`: a [`toolbridge::Pool`] with asyncio methods.
//! Each method converts its arguments, calls the library on its tokio
//! runtime and converts the answer; the Python `toolbridge.Pool` wraps it
//! (sources, `async with`, defaults).

use std::{sync::Arc, time::Duration};

use pyo3::{exceptions::PyValueError, prelude::*};
use rmcp::model::{CompletionContext, JsonObject, Reference};
use serde_json::Value;
use toolbridge::{
    CallOptions, Format, FormatOptions, NameTable, PoolError, PoolOptions, ServerSpec,
    adapter::{ExecOptions, execute_response},
    config::StdioSpec,
    convert_tools,
    pool::{ClientFeatures, ElicitationHandler, LogHandler, forward_progress},
};

use crate::{
    bridge,
    callbacks::{LoopSlot, PyElicitation, PyLogs, progress_forward},
    convert,
    errors::{self, Failure},
    source,
};

/// A pool of MCP servers (see `toolbridge.Pool`).
#[pyclass(module = "toolbridge._native", name = "Pool", frozen)]
pub struct Pool {
    pool: toolbridge::Pool,
    /// Where async callbacks run; remembered on each call when the pool
    /// has callbacks.
    loop_slot: Arc<LoopSlot>,
    has_callbacks: bool,
}

fn format_named(name: &str) -> PyResult<Format> {
    name.parse::<Format>()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

fn call_options(timeout: Option<f64>) -> PyResult<CallOptions> {
    let timeout = match timeout {
        None => None,
        Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
        Some(secs) => {
            return Err(PyValueError::new_err(format!(
                "timeout must be a positive number of seconds, not {secs}"
            )));
        }
    };
    Ok(CallOptions {
        timeout,
        ..CallOptions::default()
    })
}

impl Pool {
    fn build(specs: Vec<ServerSpec>, callbacks: Callbacks) -> Pool {
        let loop_slot = Arc::new(LoopSlot::default());
        let has_callbacks = callbacks.on_elicitation.is_some() || callbacks.on_log.is_some();
        let elicitation = callbacks.on_elicitation.map(|callback| {
            Arc::new(PyElicitation {
                callback,
                loop_slot: loop_slot.clone(),
            }) as Arc<dyn ElicitationHandler>
        });
        let logs = callbacks.on_log.map(|callback| {
            Arc::new(PyLogs {
                callback,
                loop_slot: loop_slot.clone(),
            }) as Arc<dyn LogHandler>
        });
        // With a log callback, every message is asked for (`debug`, the
        // least severe): what the MCP SDKs' clients receive by default, and
        // a 2026-07-28 server sends none unless a request names a level.
        #[allow(deprecated)] // logging (SEP-2577): see callbacks.rs
        let log_level = logs.as_ref().map(|_| rmcp::model::LoggingLevel::Debug);
        let options = PoolOptions {
            client_features: ClientFeatures {
                elicitation,
                logs,
                log_level,
                ..ClientFeatures::default()
            },
            ..PoolOptions::default()
        };
        // The library's runtime for everything the pool spawns: entered
        // here so that nothing is created outside it.
        let _runtime = pyo3_async_runtimes::tokio::get_runtime().enter();
        Pool {
            pool: toolbridge::Pool::new(specs, options),
            loop_slot,
            has_callbacks,
        }
    }

    /// `fut` as an awaitable of the calling coroutine.
    fn run<'py, F, T>(&self, py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
    where
        F: Future<Output = Result<T, Failure>> + Send + 'static,
        T: serde::Serialize + Send + 'static,
    {
        if self.has_callbacks {
            self.loop_slot.remember(py)?;
        }
        bridge::spawn(py, fut)
    }

    /// `request` of the pool as an awaitable, its error raised as the
    /// matching Python exception: the shape of every method that is one
    /// library call.
    fn request<'py, F, Fut, T>(&self, py: Python<'py>, request: F) -> PyResult<Bound<'py, PyAny>>
    where
        F: FnOnce(toolbridge::Pool) -> Fut,
        Fut: Future<Output = Result<T, PoolError>> + Send + 'static,
        T: serde::Serialize + Send + 'static,
    {
        let pending = request(self.pool.clone());
        self.run(
            py,
            async move { pending.await.map_err(|e| errors::pool(&e)) },
        )
    }
}

/// The pool-wide Python callbacks.
#[derive(FromPyObject)]
struct Callbacks {
    on_elicitation: Option<Py<PyAny>>,
    on_log: Option<Py<PyAny>>,
}

/// The servers to use: those given, else every enabled one.
fn servers_or_active(pool: &toolbridge::Pool, servers: Option<Vec<String>>) -> Vec<String> {
    servers.unwrap_or_else(|| pool.active_server_names())
}

#[pymethods]
impl Pool {
    /// A pool over the servers of the config file at `path`.
    #[staticmethod]
    #[pyo3(signature = (path, on_elicitation=None, on_log=None))]
    fn from_file(
        path: std::path::PathBuf,
        on_elicitation: Option<Py<PyAny>>,
        on_log: Option<Py<PyAny>>,
    ) -> PyResult<Pool> {
        let callbacks = Callbacks {
            on_elicitation,
            on_log,
        };
        Ok(Pool::build(source::from_file(&path)?, callbacks))
    }

    /// A pool over the servers of `json`, a config in the file's shape.
    #[staticmethod]
    #[pyo3(signature = (json, on_elicitation=None, on_log=None))]
    fn from_json(
        json: String,
        on_elicitation: Option<Py<PyAny>>,
        on_log: Option<Py<PyAny>>,
    ) -> PyResult<Pool> {
        let callbacks = Callbacks {
            on_elicitation,
            on_log,
        };
        Ok(Pool::build(source::from_json(json)?, callbacks))
    }

    /// A pool over the user's default config; without a file, the built-in
    /// example server run as `example_command example_args...`.
    #[staticmethod]
    #[pyo3(signature = (example_command, example_args, on_elicitation=None, on_log=None))]
    fn user_default(
        example_command: String,
        example_args: Vec<String>,
        on_elicitation: Option<Py<PyAny>>,
        on_log: Option<Py<PyAny>>,
    ) -> PyResult<Pool> {
        let callbacks = Callbacks {
            on_elicitation,
            on_log,
        };
        let example = StdioSpec {
            command: example_command,
            args: example_args,
            ..StdioSpec::default()
        };
        Ok(Pool::build(source::user_default(example)?, callbacks))
    }

    /// The configured servers' names, in config order.
    fn server_names(&self) -> Vec<String> {
        self.pool.server_names().to_vec()
    }

    /// The servers that are running now.
    fn running_server_names(&self) -> Vec<String> {
        self.pool.running_server_names()
    }

    /// Every enabled server's (or `servers`') tools in `format`.
    #[pyo3(signature = (format="mcp", servers=None, strict=false))]
    fn tools<'py>(
        &self,
        py: Python<'py>,
        format: &str,
        servers: Option<Vec<String>>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let format = format_named(format)?;
        let pool = self.pool.clone();
        self.run(py, async move {
            let servers = servers_or_active(&pool, servers);
            let tools = pool.list_tools_of(&servers).await.tools_logging_failures();
            let names = NameTable::for_tools(&tools);
            let options = FormatOptions {
                strict,
                ..FormatOptions::default()
            };
            Ok::<_, Failure>(convert_tools(format, &tools, &names, &options))
        })
    }

    /// The tools of `servers` (every enabled one by default) in MCP's
    /// format, and the servers that could not be listed:
    /// `{"tools": [...], "failures": {server: message}}`.
    #[pyo3(signature = (servers=None))]
    fn list_tools<'py>(
        &self,
        py: Python<'py>,
        servers: Option<Vec<String>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool.clone();
        self.run(py, async move {
            let servers = servers_or_active(&pool, servers);
            let listing = pool.list_tools_of(&servers).await;
            let failures: serde_json::Map<String, Value> = listing
                .failures
                .iter()
                .map(|(server, e)| (server.clone(), Value::String(e.to_string())))
                .collect();
            Ok::<_, Failure>(serde_json::json!({"tools": listing.tools, "failures": failures}))
        })
    }

    /// Calls `tool` of `server` with `arguments`; the MCP result as a dict.
    #[pyo3(signature = (server, tool, arguments=None, timeout=None, on_progress=None, on_elicitation=None))]
    #[allow(clippy::too_many_arguments)]
    fn call<'py>(
        &self,
        py: Python<'py>,
        server: String,
        tool: String,
        arguments: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
        on_elicitation: Option<Py<PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments: Option<JsonObject> = convert::from_py_optional(arguments, "the arguments")?;
        let mut options = call_options(timeout)?;
        // This call's elicitations go to its own callback (the pool's
        // declares the capability; see ClientFeatures).
        if let Some(callback) = on_elicitation {
            let handler = PyElicitation {
                callback,
                loop_slot: Arc::new(LoopSlot::current(py)?),
            };
            options.client_features = Some(ClientFeatures {
                elicitation: Some(Arc::new(handler)),
                ..ClientFeatures::default()
            });
        }
        let forward = on_progress.map(|cb| progress_forward(py, cb)).transpose()?;
        self.request(py, |pool| async move {
            let call = pool.call_tool(&server, &tool, arguments, options);
            match forward {
                Some(forward) => forward_progress(forward, call).await,
                None => call.await,
            }
        })
    }

    /// Runs the tool calls in a provider `response` and returns the
    /// messages to append to the conversation.
    #[pyo3(signature = (response, format, servers=None, strict=false))]
    fn exec<'py>(
        &self,
        py: Python<'py>,
        response: &Bound<'py, PyAny>,
        format: &str,
        servers: Option<Vec<String>>,
        strict: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let format = format_named(format)?;
        let response: Value = convert::from_py(response, "the response")?;
        let pool = self.pool.clone();
        let options = ExecOptions { servers, strict };
        self.run(py, async move {
            let messages = execute_response(&pool, format, &response, &options)
                .await
                .map_err(|e| errors::exec(&e))?;
            Ok::<_, Failure>(messages)
        })
    }

    /// The resources of `server`.
    fn list_resources<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        self.request(py, |pool| async move {
            pool.list_resources(&server).await.map(Arc::unwrap_or_clone)
        })
    }

    /// The resource templates of `server`.
    fn list_resource_templates<'py>(
        &self,
        py: Python<'py>,
        server: String,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.request(py, |pool| async move {
            pool.list_resource_templates(&server)
                .await
                .map(Arc::unwrap_or_clone)
        })
    }

    /// The contents of the resource at `uri` of `server`.
    #[pyo3(signature = (server, uri, timeout=None))]
    fn read_resource<'py>(
        &self,
        py: Python<'py>,
        server: String,
        uri: String,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = call_options(timeout)?;
        self.request(py, |pool| async move {
            pool.read_resource(&server, &uri, &options).await
        })
    }

    /// The prompts of `server`.
    fn list_prompts<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        self.request(py, |pool| async move {
            pool.list_prompts(&server).await.map(Arc::unwrap_or_clone)
        })
    }

    /// Prompt `name` of `server` filled in with `arguments`.
    #[pyo3(signature = (server, name, arguments=None, timeout=None))]
    fn get_prompt<'py>(
        &self,
        py: Python<'py>,
        server: String,
        name: String,
        arguments: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arguments: Option<JsonObject> =
            convert::from_py_optional(arguments, "the prompt arguments")?;
        let options = call_options(timeout)?;
        self.request(py, |pool| async move {
            pool.get_prompt(&server, &name, arguments, &options).await
        })
    }

    /// The values `server` suggests for `argument` of `reference`
    /// (`{"type": "ref/prompt", "name": ...}` or `{"type":
    /// "ref/resource", "uri": ...}`) given `value` typed so far and the
    /// other arguments' values in `context`.
    #[pyo3(signature = (server, reference, argument, value, context=None, timeout=None))]
    #[allow(clippy::too_many_arguments)]
    fn complete<'py>(
        &self,
        py: Python<'py>,
        server: String,
        reference: &Bound<'py, PyAny>,
        argument: String,
        value: String,
        context: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let reference: Reference = convert::from_py(reference, "the completion reference")?;
        let context = convert::from_py_optional(context, "the completion context")?
            .map(CompletionContext::with_arguments);
        let options = call_options(timeout)?;
        self.request(py, |pool| async move {
            pool.complete(&server, reference, &argument, &value, context, &options)
                .await
        })
    }

    /// Closes `server`, or every server: stdin closed, then SIGTERM, then
    /// SIGKILL of each process group. A later use starts a server again.
    #[pyo3(signature = (server=None))]
    fn close<'py>(&self, py: Python<'py>, server: Option<String>) -> PyResult<Bound<'py, PyAny>> {
        let pool = self.pool.clone();
        bridge::spawn(py, async move {
            match server {
                Some(server) => pool.close(&server).await,
                None => pool.close_all().await,
            }
            Ok::<_, Failure>(())
        })
    }

    /// What `server` answered to `initialize`, starting it if needed.
    fn server_info<'py>(&self, py: Python<'py>, server: String) -> PyResult<Bound<'py, PyAny>> {
        self.request(py, |pool| async move {
            pool.server_info(&server).await.map(Arc::unwrap_or_clone)
        })
    }

    /// The last lines `server` wrote to stderr, while it runs.
    fn stderr_tail(&self, server: &str) -> Option<String> {
        self.pool.stderr_tail(server)
    }
}
