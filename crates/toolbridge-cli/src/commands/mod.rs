//! One module per subcommand.

pub mod example_server;
pub mod servers;
