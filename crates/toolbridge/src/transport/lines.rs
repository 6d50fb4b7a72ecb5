//! Newline-delimited JSON-RPC over a byte stream pair: the write and read
//! halves the stdio client uses with a child's pipes, and a server-side
//! transport over any reader and writer (the example server's stdin/stdout).
//!
//! Writes go through an [`Outbox`]: `send` serializes into a shared buffer at
//! once, and whichever send task gets to the stream first writes everything
//! queued so far in one `write`; a burst longer than a few KiB starts out
//! from `send` itself, so the peer can work on its start while the rest is
//! still being queued. With many messages in flight that is one syscall per
//! few KiB instead of one per message (rmcp's own transport locks, writes
//! and flushes per message). Reads go through a [`LineReader`], which
//! parses a line in place when it is whole in the read buffer.

use std::{
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    task::Poll,
};

use rmcp::{
    RoleServer,
    model::ErrorData,
    service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage},
    transport::Transport,
};
use serde::Serialize;
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    sync::Notify,
};

use super::codec::{Decoded, decode_for_server, encode_line};

/// How much may queue up before [`Outbox::queue`] writes it at once.
///
/// Without a bound, the whole burst of a busy connection went out in one
/// write: with 64 calls in flight the peer got 64 requests at once, answered
/// them all, and sent 64 answers at once, each side idle while the other
/// worked (58k calls/s against the example server, whose ceiling is twice
/// that). Writing every 4 KiB (a dozen requests) keeps both sides busy
/// (95–100k calls/s) and still saves most syscalls.
const BURST_BYTES: usize = 4 * 1024;

/// The write half: serialized messages waiting for the stream, and the
/// stream, held by at most one writer at a time.
pub(crate) struct Outbox<W> {
    state: Mutex<OutboxState<W>>,
    /// Set once a write has failed (the peer stopped reading).
    failed: AtomicBool,
    /// Woken once when a write fails.
    write_failed: Notify,
}

struct OutboxState<W> {
    /// Serialized messages not yet handed to the stream.
    queued: Vec<u8>,
    /// The stream; `None` while a writer holds it, or after close.
    stream: Option<W>,
    /// Bytes [`Outbox::write_now`] handed to the stream that it has not
    /// flushed yet (a buffered stream could not flush without waiting).
    unflushed: bool,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, OutboxState<W>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
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
    /// takes it without waiting.
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

    /// Writes the front of the queue without waiting, while the stream takes
    /// it, and flushes it if that needs no wait; what is left goes with the
    /// next flush.
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
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
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

    /// Writes everything queued, unless another writer holds the stream (it
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
        // cut: the guard then closes the stream and fails the connection.
        let mut writer = Writer {
            outbox: self,
            stream: Some(stream),
        };
        loop {
            let stream = writer.stream.as_mut().expect("held until done");
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

    /// Closes the stream now, or as soon as the writer holding it is done.
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

/// Most bytes one incoming message may have (the same cap as rmcp's).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The read half: newline-delimited messages.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    /// The start of a line that did not fit in the read buffer.
    partial: Vec<u8>,
    /// Dropping the rest of a line that was too long.
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(stream: R) -> Self {
        LineReader {
            read: BufReader::with_capacity(64 * 1024, stream),
            partial: Vec::new(),
            discarding: false,
        }
    }

    /// The next non-empty line, passed to `decode`; `None` at end of stream.
    /// Cancel-safe: a line read in part stays in `partial` for the next call.
    pub(crate) async fn next_line<D>(&mut self, mut decode: impl FnMut(&[u8]) -> D) -> Option<D> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) => return None,
                Ok(available) => available,
                Err(e) => {
                    tracing::debug!(error = %e, "reading messages failed");
                    return None;
                }
            };
            let newline = available.iter().position(|&b| b == b'\n');
            let taken = newline.map_or(available.len(), |i| i + 1);
            let mut decoded = None;
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.partial.len() + taken > MAX_LINE_BYTES {
                tracing::warn!(
                    max_bytes = MAX_LINE_BYTES,
                    "dropped an incoming message over the size limit"
                );
                self.partial = Vec::new();
                self.discarding = newline.is_none();
            } else if let Some(end) = newline {
                // Most lines are whole in the read buffer: parse them there.
                let line = if self.partial.is_empty() {
                    &available[..end]
                } else {
                    self.partial.extend_from_slice(&available[..end]);
                    &self.partial[..]
                };
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if !line.is_empty() {
                    decoded = Some(decode(line));
                }
                self.partial.clear();
            } else {
                self.partial.extend_from_slice(available);
            }
            self.read.consume(taken);
            if let Some(decoded) = decoded {
                return Some(decoded);
            }
        }
    }
}

/// The reply JSON-RPC asks for to a well-formed message that is not valid.
fn invalid_request<R: ServiceRole>() -> TxJsonRpcMessage<R> {
    TxJsonRpcMessage::<R>::error(ErrorData::invalid_request("Invalid request", None), None)
}

/// Newline-delimited JSON-RPC over a reader and a writer, for either role:
/// what the stdio client transport and [`ServerLines`] are made of.
pub(crate) struct Lines<R, W> {
    outbox: Arc<Outbox<W>>,
    reader: LineReader<R>,
}

impl<R, W> Lines<R, W>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(crate) fn new(read: R, write: W) -> Self {
        Lines {
            outbox: Arc::new(Outbox::new(write)),
            reader: LineReader::new(read),
        }
    }

    /// Queues the line `encode` writes now; the future puts it on the
    /// stream, with whatever else is queued by then. (`encode` is a `dyn`
    /// so the future, which does not use it, is not tied to what it borrows.)
    pub(crate) fn send(
        &self,
        encode: &mut dyn FnMut(&mut Vec<u8>) -> serde_json::Result<()>,
    ) -> impl Future<Output = std::io::Result<()>> + Send + use<R, W> {
        let queued = self.outbox.queue_with(encode);
        let outbox = self.outbox.clone();
        async move {
            queued?;
            outbox.flush().await
        }
    }

    /// The next message `decode` makes of a line; a well-formed message
    /// that is not valid gets "Invalid Request" in reply. `None` at the end
    /// of the stream, and once a write has failed: the peer stopped reading,
    /// so nothing sent can arrive, and the connection ends rather than wait
    /// for answers.
    pub(crate) async fn receive<Role: ServiceRole>(
        &mut self,
        mut decode: impl FnMut(&[u8]) -> Decoded<Role>,
    ) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            if self.outbox.failed() {
                return None;
            }
            let decoded = tokio::select! {
                biased;
                line = self.reader.next_line(&mut decode) => line?,
                () = self.outbox.write_failed() => return None,
            };
            match decoded {
                Decoded::Message(message) => return Some(message),
                Decoded::Skip => {}
                Decoded::Invalid => {
                    if self.outbox.queue(&invalid_request::<Role>()).is_ok() {
                        let _ = self.outbox.flush().await;
                    }
                }
            }
        }
    }

    /// Closes the write half now, or as soon as a write in progress ends.
    pub(crate) fn close(&self) {
        self.outbox.close();
    }
}

/// A server's side of newline-delimited JSON-RPC over `read` and `write`
/// (for example a process's stdin and stdout), with coalesced writes and
/// `tools/call` requests parsed without trying every request type first.
pub struct ServerLines<R, W> {
    lines: Lines<R, W>,
}

impl<R, W> ServerLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// Serves over `read` (requests in) and `write` (responses out).
    pub fn new(read: R, write: W) -> Self {
        ServerLines {
            lines: Lines::new(read, write),
        }
    }
}

impl<R, W> Transport<RoleServer> for ServerLines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.lines.send(&mut |out| encode_line(&item, out))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.lines.receive(decode_for_server).await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lines.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

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
