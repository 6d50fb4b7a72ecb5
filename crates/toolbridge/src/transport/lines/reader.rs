//! [`LineReader`]: newline-delimited messages from a byte stream, the one
//! line parser of both sides.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use crate::transport::{codec::MAX_MESSAGE_BYTES, unreadable::KEPT_EDGE_BYTES};

/// How much one read asks the stream for.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The read half: newline-delimited messages.
///
/// Memory stays bounded whatever the peer sends: the read buffer, plus at
/// most `max_line` bytes of a line that did not fit in it. A longer line is
/// dropped (logged) as it streams past, keeping only its edges for
/// [`next_or_oversize`](Self::next_or_oversize), and reading goes on with
/// the next.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    /// The start of a line that did not fit in the read buffer.
    partial: Vec<u8>,
    /// Dropping the rest of a line that was too long, keeping its edges.
    over: Option<Oversize>,
    /// Most bytes a line may have, its newline included.
    max_line: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(stream: R) -> Self {
        Self::with_max_line(stream, MAX_MESSAGE_BYTES)
    }

    /// A reader that drops lines longer than `max_line` bytes (newline
    /// included).
    pub(super) fn with_max_line(stream: R, max_line: usize) -> Self {
        LineReader {
            read: BufReader::with_capacity(READ_BUFFER_BYTES, stream),
            partial: Vec::new(),
            over: None,
            max_line,
        }
    }

    /// The bytes held for a line not yet complete.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        self.partial.capacity()
    }

    /// The next non-empty line (without its `\n` or `\r\n`), passed to
    /// `decode`; `None` at end of stream. An unfinished last line is not a
    /// line, and a line over the cap is dropped. Cancel-safe: a line read in
    /// part stays in `partial` for the next call.
    #[cfg(test)]
    pub(crate) async fn next_line<D>(&mut self, decode: impl FnMut(&[u8]) -> D) -> Option<D> {
        self.next_or_oversize(decode, |_| None).await
    }

    /// Like [`next_line`](Self::next_line), and a line over the cap is
    /// passed to `oversize` once it has streamed past (its first and last
    /// bytes and its size), which may make something of it too.
    pub(crate) async fn next_or_oversize<D>(
        &mut self,
        mut decode: impl FnMut(&[u8]) -> D,
        mut oversize: impl FnMut(&Oversize) -> Option<D>,
    ) -> Option<D> {
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
            let chunk = &available[..newline.unwrap_or(available.len())];
            let mut decoded = None;
            if let Some(over) = &mut self.over {
                over.push(chunk);
                if newline.is_some() {
                    decoded = self.over.take().and_then(|over| oversize(&over));
                }
            } else if self.partial.len() + taken > self.max_line {
                // Not a warning: the request it answers fails with the reason.
                tracing::debug!(
                    max_bytes = self.max_line,
                    "dropping an incoming message over the size limit"
                );
                let mut over = Oversize::default();
                over.push(&self.partial);
                over.push(chunk);
                self.partial = Vec::new();
                if newline.is_some() {
                    decoded = oversize(&over);
                } else {
                    self.over = Some(over);
                }
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
                if self.partial.capacity() > READ_BUFFER_BYTES {
                    // Do not keep a long line's buffer for good.
                    self.partial = Vec::new();
                } else {
                    self.partial.clear();
                }
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

/// What is kept of a line over the cap while it streams past: its first
/// and last [`KEPT_EDGE_BYTES`] bytes (where a message's id is), and its
/// size.
#[derive(Debug, Default)]
pub(crate) struct Oversize {
    /// The line's first bytes.
    pub(crate) head: Vec<u8>,
    /// The line's last bytes so far.
    pub(crate) tail: Vec<u8>,
    /// The line's size so far, in bytes.
    pub(crate) bytes: usize,
}

impl Oversize {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len();
        let room = KEPT_EDGE_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if chunk.len() >= KEPT_EDGE_BYTES {
            self.tail.clear();
            self.tail
                .extend_from_slice(&chunk[chunk.len() - KEPT_EDGE_BYTES..]);
        } else {
            self.tail.extend_from_slice(chunk);
            let excess = self.tail.len().saturating_sub(KEPT_EDGE_BYTES);
            self.tail.drain(..excess);
        }
    }
}
