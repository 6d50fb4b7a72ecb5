//! Rust futures as asyncio awaitables, and the one way library threads
//! enter the interpreter.
//!
//! pyo3-async-runtimes gives the tokio runtime and the asyncio loop of the
//! caller; the completion is done here rather than by its
//! `future_into_py`, for two reasons measured or seen here:
//!
//! - it hands every result to a `spawn_blocking` thread before setting it
//!   on the loop: one thread hand-off per call;
//! - a library thread that enters the interpreter while it shuts down
//!   aborts the process ("PyGILState_Release: thread state must be current";
//!   CPython < 3.13 ends such a thread from inside the Rust frames). Here
//!   every entry goes through [`attach`], which counts the threads inside,
//!   and [`drain`] (an `atexit` hook) closes the door and waits for them,
//!   so a program that ends right after its last `await` exits cleanly.
//!
//! A Python future cancelled (a task cancelled, `asyncio.wait_for` timing
//! out) aborts the Rust future: the library then tells the server to
//! cancel the request.

use std::{
    sync::atomic::{AtomicBool, AtomicUsize, Ordering},
    time::{Duration, Instant},
};

use pyo3::{prelude::*, types::PyCFunction};
use serde::Serialize;

use crate::{convert, errors::Failure};

/// Library threads inside the interpreter now.
static INSIDE: AtomicUsize = AtomicUsize::new(0);
/// Set at interpreter exit: library threads no longer enter.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Runs `f` in the interpreter from a library thread; `None` once the
/// interpreter is shutting down (the result is dropped: nobody waits).
pub fn attach<R>(f: impl for<'py> FnOnce(Python<'py>) -> R) -> Option<R> {
    INSIDE.fetch_add(1, Ordering::SeqCst);
    let result = if CLOSED.load(Ordering::SeqCst) {
        None
    } else {
        Some(Python::attach(f))
    };
    INSIDE.fetch_sub(1, Ordering::SeqCst);
    result
}

/// Closes the interpreter to library threads and waits (a second at most,
/// without holding the interpreter) for those inside to leave.
#[pyfunction]
pub fn drain(py: Python<'_>) {
    CLOSED.store(true, Ordering::SeqCst);
    py.detach(|| {
        let deadline = Instant::now() + Duration::from_secs(1);
        while INSIDE.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    });
}

/// Sets `future`'s result or exception unless it was cancelled meanwhile:
/// run on the loop by `call_soon_threadsafe`.
fn complete(args: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<()> {
    let future = args.get_item(0)?;
    if future.call_method0("cancelled")?.is_truthy()? {
        return Ok(());
    }
    let value = args.get_item(2)?;
    if args.get_item(1)?.is_truthy()? {
        future.call_method1("set_result", (value,))?;
    } else {
        future.call_method1("set_exception", (value,))?;
    }
    Ok(())
}

/// Aborts the Rust task when its Python future is cancelled.
#[pyclass]
struct AbortOnCancel(tokio::task::AbortHandle);

#[pymethods]
impl AbortOnCancel {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.0.abort();
        }
        Ok(())
    }
}

/// `fut` as an awaitable on the calling coroutine's loop; its output is
/// converted to Python (or to the exception) when it is set.
pub fn spawn<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, Failure>> + Send + 'static,
    T: Serialize + Send + 'static,
{
    let event_loop = pyo3_async_runtimes::get_running_loop(py)?;
    let py_future = event_loop.call_method0("create_future")?;
    let target = py_future.clone().unbind();
    let event_loop = event_loop.unbind();
    let task = pyo3_async_runtimes::tokio::get_runtime().spawn(async move {
        let output = fut.await;
        attach(|py| {
            let (ok, value) = match output
                .map_err(Failure::into_py)
                .and_then(|v| convert::to_py(py, &v))
            {
                Ok(value) => (true, value),
                Err(e) => (false, e.into_value(py).into_any()),
            };
            let setter = PyCFunction::new_closure(py, None, None, |args, _| complete(args));
            let scheduled = setter.and_then(|setter| {
                event_loop
                    .bind(py)
                    .call_method1("call_soon_threadsafe", (setter, target.bind(py), ok, value))
            });
            // The loop is closed: nobody awaits the result.
            if let Err(e) = scheduled {
                e.print(py);
            }
        });
    });
    py_future.call_method1("add_done_callback", (AbortOnCancel(task.abort_handle()),))?;
    Ok(py_future)
}
