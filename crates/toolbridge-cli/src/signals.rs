//! SIGINT, SIGTERM and SIGHUP: the signals that stop toolbridge while it has
//! servers to close.

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
        let number = match self {
            Signal::Hangup => libc::SIGHUP,
            Signal::Interrupt => libc::SIGINT,
            Signal::Terminate => libc::SIGTERM,
        };
        ExitCode::from(128 + number as u8)
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
