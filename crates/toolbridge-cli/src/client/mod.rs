//! What the command line offers MCP servers as a client: the folders named
//! with `--root`, elicitation asked on the terminal (or the schema's
//! defaults with `--accept-defaults`), and sampling declined (no LLM here).

mod elicitation;
mod roots;
mod sampling;

pub use elicitation::TerminalElicitation;
pub use roots::Folders;
pub use sampling::NoLlm;

use std::{path::PathBuf, sync::Arc};

use toolbridge::pool::ClientFeatures;

/// The client settings of the command line.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `--root DIR`, as given.
    pub roots: Vec<PathBuf>,
    /// `--accept-defaults`: answer elicitations with the schema's defaults
    /// without asking.
    pub accept_defaults: bool,
}

impl Settings {
    /// The handlers the command line gives its pool. Roots are offered only
    /// when `--root` was given; a folder that does not exist is an error.
    pub fn features(&self, quiet: bool) -> anyhow::Result<ClientFeatures> {
        let roots = match self.roots.as_slice() {
            [] => None,
            dirs => Some(Arc::new(Folders::from_dirs(dirs)?) as _),
        };
        Ok(ClientFeatures {
            roots,
            sampling: Some(Arc::new(NoLlm { quiet })),
            elicitation: Some(Arc::new(TerminalElicitation::new(
                self.accept_defaults,
                quiet,
            ))),
            ..ClientFeatures::default()
        })
    }
}
