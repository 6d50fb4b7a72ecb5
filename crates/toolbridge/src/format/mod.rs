//! Pure conversions between toolbridge's tool model and LLM providers.
//!
//! [`names`] gives every tool a name all providers accept and maps it back;
//! [`options`] names the formats.
//!
//! Nothing here does I/O or blocks, and no JSON input makes it panic.

pub mod names;
pub mod options;

pub use names::{NameStyle, NameTable, ToolRef};
pub use options::{Format, FormatOptions, UnknownFormat};
