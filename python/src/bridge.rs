//! Rust futures as asyncio awaitables, and the one way library threads
//! enter the interpreter.
//!
//! pyo3-async-runtimes gives the tokio runtime and the asyncio loop of the
//! caller; the completion is done here rather than by its
//! `future_into_py`, which hands every result to a `spawn_blocking` thread
//! and then enters the interpreter from it to `call_soon_threadsafe`.
//!
//! Here a finished future never enters the interpreter from a library
//! thread: it is queued on its loop's [`Completions`] and the loop is woken
//! through a socket it watches (`loop.add_reader`); the loop's thread, which
//! holds the interpreter anyway, converts the output and sets the asyncio
//! future. Measured with `bench/python` (sequential calls and 64 in flight),
//! entering the interpreter from a tokio thread per call (a thread state
//! made and dropped, the interpreter's lock taken from the loop's thread
//! while it runs Python) was the cost of the hop; and under load one wake
//! serves every call that ended meanwhile.
//!
//! A Python future cancelled (a task cancelled, `asyncio.wait_for` timing
//! out) aborts the Rust future: the library then tells the server to
//! cancel the request.
//!
//! Callbacks (progress, elicitation, logs) still run Python from library
//! threads; every such entry goes through [`attach`], which counts the
//! threads inside, and [`drain`] (an `atexit` hook) closes the door and
//! waits for them: a library thread that enters the interpreter while it
//! shuts down aborts the process ("PyGILState_Release: thread state must be
//! current"; CPython < 3.13 ends such a thread from inside the Rust frames).

use std::{
    cell::RefCell,
    io::{Read, Write},
    os::{fd::AsRawFd, unix::net::UnixStream},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
    time::{Duration, Instant},
};

use pyo3::{intern, prelude::*, sync::PyOnceLock};
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

/// A finished future's output, made a Python object (or the exception) on
/// the loop's thread.
type Output = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// One asyncio loop's finished futures, queued by library threads.
struct Completions {
    done: Mutex<Vec<(Py<PyAny>, Output)>>,
    /// A byte is on its way to the loop (or the loop has not taken the
    /// queue since): later completions need not write another.
    woken: AtomicBool,
    /// The end written to wake the loop (non-blocking).
    wake: UnixStream,
}

impl Completions {
    fn push(&self, future: Py<PyAny>, output: Output) {
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((future, output));
        if !self.woken.swap(true, Ordering::SeqCst) {
            // WouldBlock: the socket is full of bytes the loop has not
            // read, so it will wake anyway; any other error: the loop is
            // gone and nobody awaits.
            let _ = (&self.wake).write(&[1]);
        }
    }
}

/// The reader `loop.add_reader` runs on the loop when the wake socket is
/// readable: sets each queued future's result.
#[pyclass(frozen)]
struct Completer {
    completions: Arc<Completions>,
    /// The end the loop watches (non-blocking).
    readable: UnixStream,
}

#[pymethods]
impl Completer {
    fn __call__(&self, py: Python<'_>) -> PyResult<()> {
        let mut bytes = [0u8; 64];
        while matches!((&self.readable).read(&mut bytes), Ok(n) if n > 0) {}
        // Cleared before the queue is taken: a completion queued after the
        // take sees it clear and wakes the loop again.
        self.completions.woken.store(false, Ordering::SeqCst);
        let done = std::mem::take(
            &mut *self
                .completions
                .done
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        );
        for (future, output) in done {
            let future = future.bind(py);
            if future.call_method0(intern!(py, "cancelled"))?.is_truthy()? {
                continue;
            }
            match output(py) {
                Ok(value) => future.call_method1(intern!(py, "set_result"), (value,))?,
                Err(e) => future.call_method1(intern!(py, "set_exception"), (e.into_value(py),))?,
            };
        }
        Ok(())
    }
}

/// Each loop's completer, by loop, for as long as the loop lives.
static COMPLETERS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

thread_local! {
    /// The loop this thread used last and its queue: one comparison per
    /// call instead of a weak dictionary's lookup.
    static LAST: RefCell<Option<(Py<PyAny>, Arc<Completions>)>> = const { RefCell::new(None) };
}

/// The queue of `event_loop`, made (and its socket watched) on first use.
fn completions_of(event_loop: &Bound<'_, PyAny>) -> PyResult<Arc<Completions>> {
    let cached = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|(l, _)| event_loop.is(l))
            .map(|(_, c)| c.clone())
    });
    if let Some(completions) = cached {
        return Ok(completions);
    }
    let py = event_loop.py();
    let completers = COMPLETERS.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        Ok(py
            .import("weakref")?
            .getattr("WeakKeyDictionary")?
            .call0()?
            .unbind())
    })?;
    let completers = completers.bind(py);
    let completions = match completers.call_method1("get", (event_loop,))? {
        found if !found.is_none() => found.cast_into::<Completer>()?.get().completions.clone(),
        _ => {
            let socket_error = |e: std::io::Error| {
                pyo3::exceptions::PyOSError::new_err(format!(
                    "toolbridge cannot make the socket that wakes the event loop: {e}"
                ))
            };
            let (readable, wake) = UnixStream::pair().map_err(socket_error)?;
            readable.set_nonblocking(true).map_err(socket_error)?;
            wake.set_nonblocking(true).map_err(socket_error)?;
            let fd = readable.as_raw_fd();
            let completions = Arc::new(Completions {
                done: Mutex::new(Vec::new()),
                woken: AtomicBool::new(false),
                wake,
            });
            let completer = Bound::new(
                py,
                Completer {
                    completions: completions.clone(),
                    readable,
                },
            )?;
            event_loop.call_method1("add_reader", (fd, &completer))?;
            completers.set_item(event_loop, completer)?;
            completions
        }
    };
    LAST.with_borrow_mut(|last| {
        *last = Some((event_loop.clone().unbind(), completions.clone()));
    });
    Ok(completions)
}

/// Aborts the Rust task when its Python future is cancelled.
#[pyclass]
struct AbortOnCancel(tokio::task::AbortHandle);

#[pymethods]
impl AbortOnCancel {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future
            .call_method0(intern!(future.py(), "cancelled"))?
            .is_truthy()?
        {
            self.0.abort();
        }
        Ok(())
    }
}

/// `fut` as an awaitable on the calling coroutine's loop; its output is
/// converted to Python (or to the exception) on the loop when it is set.
pub fn spawn<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = Result<T, Failure>> + Send + 'static,
    T: Serialize + Send + 'static,
{
    let event_loop = pyo3_async_runtimes::get_running_loop(py)?;
    let completions = completions_of(&event_loop)?;
    let py_future = event_loop.call_method0(intern!(py, "create_future"))?;
    let target = py_future.clone().unbind();
    let task = pyo3_async_runtimes::tokio::get_runtime().spawn(async move {
        let output = fut.await;
        let output: Output = Box::new(move |py| {
            output
                .map_err(Failure::into_py)
                .and_then(|v| convert::to_py(py, &v))
        });
        completions.push(target, output);
    });
    py_future.call_method1(
        intern!(py, "add_done_callback"),
        (AbortOnCancel(task.abort_handle()),),
    )?;
    Ok(py_future)
}
