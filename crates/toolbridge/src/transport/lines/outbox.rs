//! [`Outbox`]: outgoing lines queued in one buffer and written in bursts.
//!
//! # How it stays correct
//!
//! The state (the queue, and the stream when no one is writing to it) sits
//! under a `std` mutex that is never held across an `.await`: a sender
//! appends its line under the lock, and at most one [`Outbox::flush`] at a
//! time takes the stream out of the state, writes the queue's bytes with
//! ordinary awaits, and puts the stream back only once the queue is empty.
//! So the bytes on the stream are the queue's bytes, in queue order, each
//! once:
//!
//! - A sender whose flush finds the stream taken returns at once: the
//!   holder looks at the queue again after each write and writes what was
//!   added before it puts the stream back.
//! - [`Outbox::queue`] may start a long burst itself ([`Outbox::write_now`]):
//!   it polls the stream once with a no-op waker while holding the lock and
//!   removes from the queue exactly the bytes the stream took. That poll
//!   never waits, so the lock is held only for a non-blocking `write`
//!   syscall; and nothing waits on the no-op waker: a `Pending` leaves the
//!   bytes queued, and every queued line is followed by a flush (see
//!   [`Lines::send`](super::Lines::send)), which writes them with a real
//!   waker. A buffered stream that took bytes but could not flush them
//!   without waiting is marked `unflushed`, so that flush flushes it even
//!   when the queue is empty by then.
//! - A flush dropped mid-write (its caller cancelled) may have left half a
//!   message on the stream: its guard marks the outbox failed rather than
//!   put the stream back, so nothing is written after the cut.
//!
//! The property test in `super::properties` checks this with concurrent
//! senders queueing and flushing in arbitrary interleavings against a slow
//! reader.

use crate::lock::LockUnpoisoned as _;
use std::{
    pin::Pin,
    sync::{
        Mutex, MutexGuard,
        atomic::{AtomicBool, Ordering},
    },
    task::{Context, Poll, Waker},
};

use serde::Serialize;
use tokio::{
    io::{AsyncWrite, AsyncWriteExt},
    sync::Notify,
};

use crate::transport::codec::encode_line;

/// How much may queue up before [`Outbox::queue`] writes it at once.
///
/// Without a bound, the whole burst of a busy connection went out in one
/// write: with 64 calls in flight the peer got 64 requests at once, answered
/// them all, and sent 64 answers at once, each side idle while the other
/// worked (58k calls/s against the example server, whose ceiling is twice
/// that). Writing every 4 KiB (a dozen requests) keeps both sides busy
/// (95–100k calls/s) and still saves most syscalls.
pub(super) const BURST_BYTES: usize = 4 * 1024;

/// The write half: serialized messages waiting for the stream, and the
/// stream, held by at most one writer at a time.
pub(crate) struct Outbox<W> {
    state: Mutex<OutboxState<W>>,
    /// Set once a write has failed (the peer stopped reading).
    failed: AtomicBool,
    /// Woken once when a write fails.
    write_failed: Notify,
}

pub(super) struct OutboxState<W> {
    /// Serialized messages not yet handed to the stream.
    pub(super) queued: Vec<u8>,
    /// The stream; `None` while a flush holds it, or after close or failure.
    stream: Option<W>,
    /// Bytes [`Outbox::write_now`] handed to the stream that it has not
    /// flushed yet (a buffered stream could not flush without waiting).
    unflushed: bool,
    /// Set by [`Outbox::close`]; the stream is dropped as soon as no flush
    /// holds it.
    closed: bool,
}

fn closed_error() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the stream is closed")
}

impl<W: AsyncWrite + Unpin> Outbox<W> {
    pub(crate) fn new(stream: W) -> Self {
        Outbox {
            state: Mutex::new(OutboxState {
                queued: Vec::with_capacity(8 * 1024),
                stream: Some(stream),
                unflushed: false,
                closed: false,
            }),
            failed: AtomicBool::new(false),
            write_failed: Notify::new(),
        }
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, OutboxState<W>> {
        // The state is consistent between statements (no code that can
        // panic runs while it is half-updated), so a poisoned lock is safe
        // to use.
        self.state.lock_unpoisoned()
    }

    /// Whether a write has failed: nothing sent from now on can arrive.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Completes once a write has failed.
    pub(crate) async fn write_failed(&self) {
        if !self.failed() {
            self.write_failed.notified().await;
        }
    }

    /// Serializes `message` onto the queue. Once a burst's worth is queued
    /// and no writer holds the stream, writes it now, as far as the stream
    /// takes it without waiting. The caller must [`flush`](Self::flush)
    /// afterwards.
    pub(crate) fn queue(&self, message: &impl Serialize) -> std::io::Result<()> {
        self.queue_with(|out| encode_line(message, out))
    }

    /// [`Outbox::queue`] with an encoder of one's own, which appends one
    /// line to the buffer it is given (or nothing, on error).
    pub(crate) fn queue_with(
        &self,
        encode: impl FnOnce(&mut Vec<u8>) -> serde_json::Result<()>,
    ) -> std::io::Result<()> {
        let mut state = self.lock();
        if state.closed || self.failed() {
            return Err(closed_error());
        }
        encode(&mut state.queued).map_err(std::io::Error::from)?;
        if state.queued.len() >= BURST_BYTES {
            self.write_now(&mut state);
        }
        Ok(())
    }

    /// Writes the front of the queue while the stream takes it without
    /// waiting, and flushes it if that needs no wait; what is left goes with
    /// the next flush. Polls with a no-op waker: see the module docs for why
    /// nothing is lost when the stream says `Pending`.
    fn write_now(&self, state: &mut OutboxState<W>) {
        let OutboxState {
            queued,
            stream,
            unflushed,
            ..
        } = state;
        let Some(stream) = stream.as_mut() else {
            return;
        };
        let mut cx = Context::from_waker(Waker::noop());
        let mut written = 0;
        let mut result = Ok(());
        while written < queued.len() {
            match Pin::new(&mut *stream).poll_write(&mut cx, &queued[written..]) {
                Poll::Ready(Ok(n)) if n > 0 => written += n,
                Poll::Ready(Ok(_)) | Poll::Pending => break,
                Poll::Ready(Err(e)) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if written > 0 && result.is_ok() {
            match Pin::new(&mut *stream).poll_flush(&mut cx) {
                Poll::Ready(Ok(())) => {}
                Poll::Pending => *unflushed = true,
                Poll::Ready(Err(e)) => result = Err(e),
            }
        }
        if let Err(e) = result {
            tracing::debug!(error = %e, "writing a message failed");
            state.stream = None;
            self.fail();
            return;
        }
        queued.drain(..written);
    }

    /// Writes everything queued, unless another flush holds the stream (it
    /// writes what was queued before it lets go).
    pub(crate) async fn flush(&self) -> std::io::Result<()> {
        let (stream, mut batch) = {
            let mut state = self.lock();
            if state.queued.is_empty() && !state.unflushed {
                return Ok(());
            }
            let Some(stream) = state.stream.take() else {
                return if state.closed || self.failed() {
                    Err(closed_error())
                } else {
                    Ok(())
                };
            };
            state.unflushed = false;
            (stream, std::mem::take(&mut state.queued))
        };
        // If this future is dropped mid-write, the message on the stream is
        // cut: the guard then drops the stream and fails the outbox.
        let mut writer = Writer {
            outbox: self,
            stream: Some(stream),
        };
        loop {
            let Some(stream) = writer.stream.as_mut() else {
                return Err(closed_error());
            };
            let written = match stream.write_all(&batch).await {
                Ok(()) => stream.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                tracing::debug!(error = %e, "writing a message failed");
                writer.fail();
                return Err(e);
            }
            batch.clear();
            let mut state = self.lock();
            if state.queued.is_empty() || state.closed {
                if state.closed {
                    writer.stream = None;
                } else {
                    state.stream = writer.stream.take();
                    // Keep this buffer's capacity for the next burst.
                    state.queued = batch;
                }
                return Ok(());
            }
            std::mem::swap(&mut state.queued, &mut batch);
        }
    }

    /// Marks the stream failed (its holder has dropped it).
    fn fail(&self) {
        self.failed.store(true, Ordering::Release);
        self.write_failed.notify_one();
    }

    /// Closes the stream now, or as soon as the flush holding it is done.
    pub(crate) fn close(&self) {
        let mut state = self.lock();
        state.closed = true;
        drop(state.stream.take());
    }
}

/// The stream while one flush holds it.
struct Writer<'a, W: AsyncWrite + Unpin> {
    outbox: &'a Outbox<W>,
    stream: Option<W>,
}

impl<W: AsyncWrite + Unpin> Writer<'_, W> {
    fn fail(&mut self) {
        self.stream = None;
        self.outbox.fail();
    }
}

impl<W: AsyncWrite + Unpin> Drop for Writer<'_, W> {
    fn drop(&mut self) {
        if self.stream.is_some() {
            self.fail();
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use std::sync::Arc;

    use super::*;

    fn message(n: usize) -> serde_json::Value {
        serde_json::json!({"jsonrpc": "2.0", "id": n, "method": "ping", "params": {"pad": "x".repeat(200)}})
    }

    fn parse_lines(bytes: &[u8]) -> Vec<serde_json::Value> {
        bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn a_long_burst_starts_on_the_stream_before_anyone_flushes() {
        let (write, mut read) = tokio::io::duplex(1024 * 1024);
        let outbox = Outbox::new(write);
        let mut queued = 0;
        for n in 0..40 {
            outbox.queue(&message(n)).unwrap();
            queued += serde_json::to_vec(&message(n)).unwrap().len() + 1;
        }
        // No flush yet: what the stream holds went out from `queue` itself,
        // in whole bursts, and the rest is still queued, in order.
        let mut early = vec![0; queued];
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), read.read(&mut early))
            .await
            .expect("nothing reached the stream before the flush")
            .unwrap();
        assert!(
            got >= BURST_BYTES && got < queued,
            "{got} of {queued} bytes"
        );
        outbox.flush().await.unwrap();
        read.read_exact(&mut early[got..]).await.unwrap();
        assert_eq!(
            parse_lines(&early),
            (0..40).map(message).collect::<Vec<_>>()
        );
    }

    #[tokio::test]
    async fn a_short_burst_waits_for_the_flush() {
        let (write, mut read) = tokio::io::duplex(1024 * 1024);
        let outbox = Outbox::new(write);
        outbox.queue(&message(1)).unwrap();
        let mut buf = [0; 16];
        let early =
            tokio::time::timeout(std::time::Duration::from_millis(50), read.read(&mut buf)).await;
        assert!(
            early.is_err(),
            "a lone message was written before the flush"
        );
        outbox.flush().await.unwrap();
        assert!(read.read(&mut buf).await.unwrap() > 0);
    }

    #[tokio::test]
    async fn a_buffered_stream_gets_flushed_even_when_nothing_is_left_queued() {
        // The burst goes into the BufWriter at once, which cannot flush it
        // into the small pipe without waiting; the queue is then empty, and
        // the next flush must still push the buffer out.
        let (write, mut read) = tokio::io::duplex(100);
        let outbox = Arc::new(Outbox::new(tokio::io::BufWriter::new(write)));
        let mut total = 0;
        let mut n = 0;
        while total < BURST_BYTES {
            outbox.queue(&message(n)).unwrap();
            total += serde_json::to_vec(&message(n)).unwrap().len() + 1;
            n += 1;
        }
        assert!(
            outbox.lock().queued.is_empty(),
            "the burst was not written at once"
        );
        let flushing = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.flush().await }
        });
        let mut all = vec![0; total];
        tokio::time::timeout(std::time::Duration::from_secs(5), read.read_exact(&mut all))
            .await
            .expect("the buffered burst never reached the stream")
            .unwrap();
        flushing.await.unwrap().unwrap();
        assert_eq!(parse_lines(&all), (0..n).map(message).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn a_stream_that_fills_keeps_the_rest_queued_in_order() {
        // The stream takes less than one burst: `queue` writes what fits and
        // the flush writes the rest after it.
        let (write, mut read) = tokio::io::duplex(1000);
        let outbox = Arc::new(Outbox::new(write));
        let total: usize = (0..30)
            .map(|n| serde_json::to_vec(&message(n)).unwrap().len() + 1)
            .sum();
        for n in 0..30 {
            outbox.queue(&message(n)).unwrap();
        }
        let flushing = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.flush().await }
        });
        let mut all = vec![0; total];
        read.read_exact(&mut all).await.unwrap();
        flushing.await.unwrap().unwrap();
        assert_eq!(parse_lines(&all), (0..30).map(message).collect::<Vec<_>>());
    }
}
