//! `toolbridge._native`: the Python extension module over the toolbridge
//! library. It converts types and calls the library; behaviour (pooling,
//! timeouts, formats, process cleanup) stays in `crates/toolbridge`.
//!
//! - [`pool`]: `Pool`, the library's [`toolbridge::Pool`] with asyncio
//!   methods (pyo3-async-runtimes on the library's tokio runtime).
//! - [`bridge`]: Rust futures as asyncio awaitables; library threads in
//!   the interpreter.
//! - [`source`]: where a pool's servers come from (a file, a dict, the
//!   user's default config).
//! - [`callbacks`]: Python progress and elicitation callbacks as the
//!   library's handlers.
//! - [`convert`]: JSON values between Rust (serde) and Python.
//! - [`errors`]: the exception classes and the mapping of library errors.

mod bridge;
mod callbacks;
mod convert;
mod errors;
mod pool;
mod source;

use pyo3::prelude::*;

/// Serves the built-in example MCP server on stdin/stdout until stdin
/// closes (`python -m toolbridge example-server`).
#[pyfunction]
fn serve_example_server(py: Python<'_>) -> PyResult<()> {
    py.detach(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                errors::error(errors::Kind::Server, format!("cannot start a runtime: {e}"))
            })?;
        runtime
            .block_on(toolbridge::example_server::serve_stdio())
            .map_err(|e| errors::error(errors::Kind::Server, format!("example server: {e}")))
    })
}

/// The pid of the process-wide reaper (the process that kills every server
/// still registered when this interpreter dies), once a stdio server has
/// started; for tests and diagnostics.
#[pyfunction]
fn reaper_pid() -> Option<u32> {
    toolbridge::process::ProcessTracker::global().reaper_pid()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<pool::Pool>()?;
    m.add_function(wrap_pyfunction!(serve_example_server, m)?)?;
    m.add_function(wrap_pyfunction!(reaper_pid, m)?)?;
    m.add_function(wrap_pyfunction!(bridge::drain, m)?)?;
    Ok(())
}
