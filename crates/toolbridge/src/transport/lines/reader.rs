//! [`LineReader`]: newline-delimited messages from a byte stream, the one
//! line parser of both sides.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use crate::transport::codec::MAX_MESSAGE_BYTES;

/// How much one read asks the stream for.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// The read half: newline-delimited messages.
///
/// Memory stays bounded whatever the peer sends: the read buffer, plus at
/// most `max_line` bytes of a line that did not fit in it. A longer line is
/// dropped (logged) as it streams past, and reading goes on with the next.
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    /// The start of a line that did not fit in the read buffer.
    partial: Vec<u8>,
    /// Dropping the rest of a line that was too long.
    discarding: bool,
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
            discarding: false,
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
    /// line. Cancel-safe: a line read in part stays in `partial` for the
    /// next call.
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
            } else if self.partial.len() + taken > self.max_line {
                tracing::warn!(
                    max_bytes = self.max_line,
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
