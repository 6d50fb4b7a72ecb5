//! SIGINT, SIGTERM and SIGHUP: the signals that stop toolbridge while it has
//! servers to close.
//!
//! The first one stops the command and closes the servers, saying so at
//! once ([`closing_notice`]); closing a server that ignores its stdin
//! closing and SIGTERM takes seconds, so a second one ends toolbridge at
//! once (the reaper still kills every server's process group).

use std::process::ExitCode;

use tokio::signal::unix::{Signal as Stream, SignalKind, signal};

/// A signal that asks toolbridge to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// SIGHUP: the terminal went away.
    Hangup,
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM.
    Terminate,
}

impl Signal {
    /// The exit code of a program this signal stopped: 128 + its number.
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(self.code())
    }

    /// [`Signal::exit_code`] as a number, for `std::process::exit`.
    pub fn code(self) -> u8 {
        let number = match self {
            Signal::Hangup => libc::SIGHUP,
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
        };
        128 + number as u8
    }

    /// The signal's name, for logs.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Hangup => "SIGHUP",
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// The three signals, caught from the moment this is made: from then on
/// they no longer end the process by themselves, [`Signals::recv`] reports
/// them.
pub struct Signals {
    hangup: Stream,
    interrupt: Stream,
    terminate: Stream,
}

impl Signals {
    /// Starts catching the signals. Must run inside the tokio runtime.
    pub fn catch() -> std::io::Result<Signals> {
        Ok(Signals {
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
        })
    }

    /// The next signal caught (also one caught before this was called).
    pub async fn recv(&mut self) -> Signal {
        tokio::select! {
            _ = self.interrupt.recv() => Signal::Interrupt,
            _ = self.terminate.recv() => Signal::Terminate,
            _ = self.hangup.recv() => Signal::Hangup,
        }
    }
}

/// What toolbridge says on stderr when a signal stopped it and `running`
/// servers are being closed; nothing when none is running.
pub fn closing_notice(running: usize) -> Option<String> {
    (running > 0).then(|| {
        format!(
            "toolbridge: closing {running} server{}… (Ctrl-C again to exit now)",
            if running == 1 { "" } else { "s" }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_notice_counts_the_servers_and_says_how_to_leave_at_once() {
        assert_eq!(closing_notice(0), None);
        assert_eq!(
            closing_notice(1).as_deref(),
            Some("toolbridge: closing 1 server… (Ctrl-C again to exit now)")
        );
        assert_eq!(
            closing_notice(3).as_deref(),
            Some("toolbridge: closing 3 servers… (Ctrl-C again to exit now)")
        );
    }

    #[test]
    fn exit_codes_are_128_plus_the_signal_number() {
        assert_eq!(Signal::Interrupt.code(), 130);
        assert_eq!(Signal::Terminate.code(), 143);
        assert_eq!(Signal::Hangup.code(), 129);
    }
}
