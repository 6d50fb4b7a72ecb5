//! The tests that bound a process's peak memory (`common::run_measured`):
//! the hostile servers' floods against the real binary, and the figure
//! itself. A binary of their own: a child's peak as `wait4` reports it
//! includes the memory the test process had when it spawned the child,
//! and the larger `cli` binary's process is past the bounds (seen: the
//! figure's own test failed there).
//!
//! Each file of this folder is one module (named as the file) of one test
//! binary: run one file's tests with `cargo test -p toolbridge-cli --test memory NAME::`.
//! The shared helpers are in ../common (one module for the crate's tests).

#[path = "../common/mod.rs"]
mod common;

mod hostile_protocol;
mod measure;
