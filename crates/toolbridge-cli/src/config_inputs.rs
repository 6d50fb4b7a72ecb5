//! Answers to a config's `${input:ID}` (VS Code inputs): from
//! `$TOOLBRIDGE_INPUT_<ID>`, else asked on the terminal, hidden when the
//! input says `"password": true`. Each input is asked for once per run.

use std::{
    collections::HashMap,
    io::{BufRead, IsTerminal, Write},
    sync::Mutex,
};

use toolbridge::config::{Env, Input, ProcessEnv, input_variable};

/// The process environment, and a person at the terminal for inputs.
#[derive(Default)]
pub struct TerminalEnv {
    /// Answers given so far, by input id (`None`: could not ask).
    answers: Mutex<HashMap<String, Option<String>>>,
}

impl Env for TerminalEnv {
    fn var(&self, name: &str) -> Option<String> {
        ProcessEnv.var(name)
    }

    fn ask(&self, input: &Input) -> Option<String> {
        let mut answers = self.answers.lock().ok()?;
        answers
            .entry(input.id.clone())
            .or_insert_with(|| ask_terminal(input))
            .clone()
    }
}

/// Asks on stderr and reads stdin, when both are a terminal.
fn ask_terminal(input: &Input) -> Option<String> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return None;
    }
    let what = input
        .description
        .clone()
        .unwrap_or_else(|| format!("Value for input \"{}\"", input.id));
    // Echo goes off before the prompt shows, so nothing typed after it is seen.
    let echo = (input.password).then(EchoOff::new).flatten();
    eprint!(
        "{what} (${{input:{}}}; or set {}): ",
        input.id,
        input_variable(&input.id)
    );
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    // With echo off, ECHONL still shows the newline.
    let read = std::io::stdin().lock().read_line(&mut line);
    drop(echo);
    read.ok().filter(|n| *n > 0)?;
    Some(line.trim_end_matches(['\r', '\n']).to_owned())
}

/// The terminal's echo turned off until dropped.
struct EchoOff(libc::termios);

impl EchoOff {
    fn new() -> Option<Self> {
        // SAFETY: tcgetattr/tcsetattr on stdin with a termios we own.
        unsafe {
            let mut term: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(libc::STDIN_FILENO, &mut term) != 0 {
                return None;
            }
            let saved = term;
            term.c_lflag &= !libc::ECHO;
            term.c_lflag |= libc::ECHONL;
            if libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &term) != 0 {
                return None;
            }
            Some(EchoOff(saved))
        }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        // SAFETY: restores the settings read in `new`.
        unsafe {
            libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.0);
        }
    }
}
