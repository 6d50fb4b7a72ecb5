//! `toolbridge completions SHELL`: the shell completion script for bash, zsh,
//! fish or PowerShell, on stdout, generated from the command line itself so
//! it never falls behind it.

use std::process::ExitCode;

use clap::CommandFactory;
use clap_complete::Shell;

use crate::{
    cli::Cli,
    context::Context,
    outcome::{Failure, Outcome, exit},
};

#[derive(Debug, clap::Args)]
#[command(after_help = "Install, for example:
  bash:        toolbridge completions bash > ~/.local/share/bash-completion/completions/toolbridge
  zsh:         toolbridge completions zsh > ~/.zfunc/_toolbridge   (with ~/.zfunc in $fpath)
  fish:        toolbridge completions fish > ~/.config/fish/completions/toolbridge.fish
  PowerShell:  toolbridge completions powershell >> $PROFILE")]
pub struct Args {
    /// The shell: bash, zsh, fish or powershell.
    #[arg(value_parser = ["bash", "zsh", "fish", "powershell"])]
    pub shell: String,
}

pub async fn run(args: Args, _ctx: &Context) -> Outcome {
    let shell = match args.shell.as_str() {
        "bash" => Shell::Bash,
        "zsh" => Shell::Zsh,
        "fish" => Shell::Fish,
        _ => Shell::PowerShell,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "toolbridge", &mut script);
    let script = String::from_utf8(script).map_err(|e| Failure::new(exit::CONNECTION, e))?;
    crate::output::text(&script)?;
    Ok(ExitCode::SUCCESS)
}
