//! The library's pure part against files and the field's formats: the golden
//! provider formats, their properties (proptest), the presets' tool lists. No
//! server process.
//!
//! Each file of this folder is one module (named as the file) of one test
//! binary: run one file's tests with `cargo test -p toolbridge --test formats NAME::`.
//! The shared helpers are in ../common (one module for the crate's tests).

mod format_golden;
mod format_properties;
mod test_preset_tools;
