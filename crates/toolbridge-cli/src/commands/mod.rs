//! One module per subcommand.

pub mod config_file;
pub mod doctor;
pub mod example_server;
pub mod presets;
