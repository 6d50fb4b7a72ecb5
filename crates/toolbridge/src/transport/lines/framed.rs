//! [`Lines`]: one side of newline-delimited JSON-RPC over a reader and a
//! writer.

use std::sync::Arc;

use rmcp::{
    model::ErrorData,
    service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage},
};
use tokio::io::{AsyncRead, AsyncWrite};

use super::{outbox::Outbox, reader::LineReader};
use crate::transport::{codec::Decoded, unreadable::Unreadable};

/// The reply JSON-RPC asks for to a well-formed message that is not valid.
fn invalid_request<R: ServiceRole>() -> TxJsonRpcMessage<R> {
    TxJsonRpcMessage::<R>::error(ErrorData::invalid_request("Invalid request", None), None)
}

/// Newline-delimited JSON-RPC over a reader and a writer, for either role:
/// what the stdio client transport and the example server's transport are
/// made of.
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
    /// that is not valid gets "Invalid Request" in reply, and one that
    /// cannot be read is dropped (logged). `None` at the end of the stream,
    /// and once a write has failed: the peer stopped reading, so nothing
    /// sent can arrive, and the connection ends rather than wait for
    /// answers.
    pub(crate) async fn receive<Role: ServiceRole>(
        &mut self,
        mut decode: impl FnMut(&[u8]) -> Decoded<Role>,
    ) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            match self.next(&mut decode).await? {
                Decoded::Message(message) => return Some(message),
                Decoded::Unreadable(unreadable) => {
                    tracing::warn!(reason = %unreadable.reason, "dropped a message that cannot be read");
                }
                Decoded::Skip | Decoded::Invalid => {}
            }
        }
    }

    /// Like [`receive`](Self::receive), but a message that cannot be read
    /// (over the size cap, or refused by the parser) is given to the caller
    /// as [`Decoded::Unreadable`], so the request it answered can fail now.
    /// Gives `Message`, `Unreadable` and `Skip` (a line that is no message,
    /// so a caller can tell a server that prints only noise).
    pub(crate) async fn next<Role: ServiceRole>(
        &mut self,
        mut decode: impl FnMut(&[u8]) -> Decoded<Role>,
    ) -> Option<Decoded<Role>> {
        loop {
            if self.outbox.failed() {
                return None;
            }
            let decoded = tokio::select! {
                biased;
                line = self.reader.next_or_oversize(&mut decode, |over| {
                    Some(Decoded::Unreadable(Unreadable::oversize(&over.head, &over.tail, over.bytes)))
                }) => line?,
                () = self.outbox.write_failed() => return None,
            };
            match decoded {
                Decoded::Invalid => {
                    if self.outbox.queue(&invalid_request::<Role>()).is_ok() {
                        let _ = self.outbox.flush().await;
                    }
                }
                other => return Some(other),
            }
        }
    }

    /// Closes the write half now, or as soon as a write in progress ends.
    pub(crate) fn close(&self) {
        self.outbox.close();
    }
}
