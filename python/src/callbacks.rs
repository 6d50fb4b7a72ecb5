//! Python callables as the library's client-side handlers: an elicitation
//! callback as an [`ElicitationHandler`], a progress callback as a
//! [`ProgressForward`].
//!
//! Both are called from the library's tokio threads. A callback that
//! returns an awaitable (an `async def`) runs on the asyncio loop of the
//! call that caused it; progress callbacks are always scheduled on that
//! loop (`call_soon_threadsafe`), so they run where the caller's code runs.

// Logging is deprecated by SEP-2577 (rmcp 3.11 warns), but the protocols
// servers speak still carry it, and the LangChain drop-in relays it.
#![allow(deprecated)]

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use pyo3::prelude::*;
use pyo3_async_runtimes::TaskLocals;
use rmcp::model::{
    ElicitRequestParams, ElicitResult, ErrorData, LoggingMessageNotificationParam,
    ProgressNotificationParam,
};
use toolbridge::pool::{ElicitationHandler, LogHandler, ProgressForward, RequestOrigin};

use crate::{bridge, convert};

/// The asyncio loop (and context) of the latest call into the pool, where
/// async callbacks run.
#[derive(Default)]
pub struct LoopSlot(Mutex<Option<TaskLocals>>);

impl LoopSlot {
    /// A slot holding the running loop of the calling coroutine.
    pub fn current(py: Python<'_>) -> PyResult<LoopSlot> {
        let slot = LoopSlot::default();
        slot.remember(py)?;
        Ok(slot)
    }

    /// Remembers the running loop of the calling coroutine.
    pub fn remember(&self, py: Python<'_>) -> PyResult<()> {
        let locals = pyo3_async_runtimes::tokio::get_current_locals(py)?;
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(locals);
        Ok(())
    }

    fn get(&self) -> Option<TaskLocals> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// `callback(server, request)` answers elicitations: `request` is the
/// `elicitation/create` params as a dict (`message`, `requestedSchema`),
/// the answer a dict (`{"action": "accept", "content": {...}}`, or
/// `"decline"`, `"cancel"`), returned or awaited.
pub struct PyElicitation {
    pub callback: Py<PyAny>,
    pub loop_slot: Arc<LoopSlot>,
}

impl ElicitationHandler for PyElicitation {
    fn elicit(
        &self,
        origin: RequestOrigin,
        params: ElicitRequestParams,
    ) -> BoxFuture<'_, Result<ElicitResult, ErrorData>> {
        Box::pin(async move {
            let failed = |e: PyErr| {
                ErrorData::internal_error(
                    format!(
                        "the application's elicitation callback failed for server \"{}\": {e}",
                        origin.server
                    ),
                    None,
                )
            };
            let answer = call_maybe_async(&self.callback, &self.loop_slot, |py| {
                Ok((origin.server.clone(), convert::to_py(py, &params)?))
            })
            .await
            .map_err(failed)?;
            bridge::attach(|py| {
                convert::from_py::<ElicitResult>(answer.bind(py), "the elicitation answer")
            })
            .unwrap_or_else(|| Err(interpreter_gone()))
            .map_err(failed)
        })
    }
}

/// Calls `callback` with the arguments `args` makes; awaits the result on
/// the remembered loop when it is awaitable.
async fn call_maybe_async<A>(
    callback: &Py<PyAny>,
    loop_slot: &LoopSlot,
    args: impl FnOnce(Python<'_>) -> PyResult<A>,
) -> PyResult<Py<PyAny>>
where
    A: for<'py> pyo3::call::PyCallArgs<'py>,
{
    let pending = bridge::attach(|py| -> PyResult<Result<Py<PyAny>, _>> {
        let result = callback.bind(py).call1(args(py)?)?;
        if !result.hasattr("__await__")? {
            return Ok(Ok(result.unbind()));
        }
        let locals = loop_slot.get().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("no asyncio loop to run the callback on")
        })?;
        Ok(Err(pyo3_async_runtimes::into_future_with_locals(
            &locals, result,
        )?))
    })
    .unwrap_or_else(|| Err(interpreter_gone()))?;
    match pending {
        Ok(done) => Ok(done),
        Err(future) => future.await,
    }
}

/// `callback(server, message)` receives the servers' log messages
/// (`notifications/message` params as a dict: `level`, `logger`, `data`),
/// on the loop of the latest call into the pool.
pub struct PyLogs {
    pub callback: Py<PyAny>,
    pub loop_slot: Arc<LoopSlot>,
}

impl LogHandler for PyLogs {
    fn log(&self, origin: RequestOrigin, message: LoggingMessageNotificationParam) {
        let Some(locals) = self.loop_slot.get() else {
            return;
        };
        bridge::attach(|py| {
            let Ok(message) = convert::to_py(py, &message) else {
                return;
            };
            // An error means the loop is closed: nobody listens.
            let _ = locals.event_loop(py).call_method1(
                "call_soon_threadsafe",
                (self.callback.clone_ref(py), origin.server, message),
            );
        });
    }
}

/// The error of a callback while the interpreter shuts down.
fn interpreter_gone() -> PyErr {
    pyo3::exceptions::PyRuntimeError::new_err("the interpreter is shutting down")
}

/// `callback(progress, total, message)` on the calling coroutine's loop,
/// for each progress notification of one call.
pub fn progress_forward(py: Python<'_>, callback: Py<PyAny>) -> PyResult<ProgressForward> {
    let event_loop = pyo3_async_runtimes::get_running_loop(py)?.unbind();
    Ok(Arc::new(move |p: ProgressNotificationParam| {
        bridge::attach(|py| {
            // An error means the loop is closed: nobody waits for the call.
            let _ = event_loop.bind(py).call_method1(
                "call_soon_threadsafe",
                (callback.clone_ref(py), p.progress, p.total, p.message),
            );
        });
    }))
}
