//! Newline-delimited JSON-RPC over a byte stream pair, for either role: the
//! stdio client transport uses it with a child's pipes, the example server
//! with its own stdin and stdout.
//!
//! - [`outbox`]: writes. `send` serializes into a shared buffer at once, and
//!   whichever send gets to the stream first writes everything queued so far
//!   in one `write`; a burst longer than a few KiB starts out from `send`
//!   itself, so the peer can work on its start while the rest is still
//!   being queued. With many messages in flight that is one syscall per few
//!   KiB instead of one per message (rmcp's own transport locks, writes and
//!   flushes per message).
//! - [`reader`]: reads, the one line parser: a line is parsed in place when
//!   it is whole in the read buffer, and a line over
//!   [`MAX_MESSAGE_BYTES`](super::codec::MAX_MESSAGE_BYTES) is dropped
//!   without being held, keeping only its first and last 4 KiB to find the
//!   id of the request it answered.
//! - [`framed`]: [`Lines`], the two together, with the JSON-RPC rules for a
//!   line that is not a valid message.

mod framed;
mod outbox;
#[cfg(test)]
mod properties;
mod reader;

pub(crate) use framed::Lines;
