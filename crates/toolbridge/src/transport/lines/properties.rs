//! Property tests of the line framing: the outbox against concurrent
//! senders and a slow reader, the line reader against arbitrary chunking
//! and hostile input.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use futures::FutureExt;
use proptest::prelude::*;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use super::{outbox::Outbox, reader::LineReader};

/// One step of a sender.
#[derive(Debug, Clone)]
enum Step {
    /// Queue a message with this much padding.
    Queue(usize),
    /// Flush what is queued.
    Flush,
    /// Let the other tasks run.
    Yield,
}

fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => prop_oneof![0usize..64, 0usize..3000, Just(super::outbox::BURST_BYTES)]
            .prop_map(Step::Queue),
        3 => Just(Step::Flush),
        1 => Just(Step::Yield),
    ]
}

/// Runs `senders` concurrently on one outbox over a pipe of `pipe` bytes
/// (behind a `BufWriter` when `buffered`), against a reader that takes
/// `read_size` bytes at a time and yields between reads; returns what the
/// reader got and how many messages were queued.
async fn run(
    senders: Vec<Vec<Step>>,
    pipe: usize,
    buffered: bool,
    read_size: usize,
) -> (Vec<u8>, usize) {
    let (write, mut read) = tokio::io::duplex(pipe);
    let write: Pin<Box<dyn AsyncWrite + Send>> = if buffered {
        Box::pin(tokio::io::BufWriter::with_capacity(512, write))
    } else {
        Box::pin(write)
    };
    let outbox = Arc::new(Outbox::new(write));
    let reader = tokio::spawn(async move {
        let mut got = Vec::new();
        let mut buf = vec![0; read_size];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => return got,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
            tokio::task::yield_now().await;
        }
    });
    // Numbered as they enter the queue (the encoder runs under its lock).
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = senders
        .into_iter()
        .map(|steps| {
            let outbox = outbox.clone();
            let next = next.clone();
            tokio::spawn(async move {
                for step in steps {
                    match step {
                        Step::Queue(pad) => outbox
                            .queue_with(|out| {
                                let n = next.fetch_add(1, Ordering::SeqCst);
                                out.extend_from_slice(
                                    format!("{n} {}\n", "x".repeat(pad)).as_bytes(),
                                );
                                Ok(())
                            })
                            .unwrap(),
                        Step::Flush => outbox.flush().await.unwrap(),
                        Step::Yield => tokio::task::yield_now().await,
                    }
                }
                // A sender always flushes after its last message.
                outbox.flush().await.unwrap();
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    outbox.flush().await.unwrap();
    outbox.close();
    let got = tokio::time::timeout(Duration::from_secs(20), reader)
        .await
        .expect("the reader never saw the end of the stream")
        .unwrap();
    (got, next.load(Ordering::SeqCst))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every byte queued arrives, in queue order, exactly once, whatever the
    /// interleaving of queues and flushes and however slowly the peer reads.
    #[test]
    fn every_queued_byte_arrives_once_and_in_order(
        senders in prop::collection::vec(prop::collection::vec(arb_step(), 0..40), 1..5),
        pipe in prop_oneof![1usize..64, 64usize..8192],
        buffered in any::<bool>(),
        read_size in 1usize..4096,
        threads in 1usize..3,
    ) {
        let runtime = if threads == 1 {
            tokio::runtime::Builder::new_current_thread().enable_all().build()
        } else {
            tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()
        }
        .unwrap();
        let (got, queued) = runtime.block_on(run(senders, pipe, buffered, read_size));
        let text = String::from_utf8(got).unwrap();
        prop_assert!(text.is_empty() || text.ends_with('\n'), "a cut line");
        let numbers: Vec<usize> = text
            .lines()
            .map(|line| line.split(' ').next().unwrap().parse().unwrap())
            .collect();
        prop_assert_eq!(numbers, (0..queued).collect::<Vec<_>>());
        for line in text.lines() {
            let (_, pad) = line.split_once(' ').unwrap();
            prop_assert!(pad.bytes().all(|b| b == b'x'), "a mixed line: {}", line);
        }
    }
}

/// A reader that hands out the given chunks, one per read.
struct Chunks {
    chunks: std::collections::VecDeque<Vec<u8>>,
}

impl AsyncRead for Chunks {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if let Some(mut chunk) = self.chunks.pop_front() {
            let n = chunk.len().min(buf.remaining());
            buf.put_slice(&chunk[..n]);
            if n < chunk.len() {
                self.chunks.push_front(chunk.split_off(n));
            }
        }
        Poll::Ready(Ok(()))
    }
}

/// The lines `bytes` holds as the reader's contract states it: split at
/// `\n`, an unfinished last line dropped, a line over `max` bytes with its
/// newline dropped, one trailing `\r` removed, empty lines skipped.
fn model(bytes: &[u8], max: usize) -> Vec<Vec<u8>> {
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    lines.pop();
    lines
        .into_iter()
        .filter(|line| line.len() < max)
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line).to_vec())
        .filter(|line| !line.is_empty())
        .collect()
}

fn arb_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(prop_oneof![Just(b'a'), Just(b'\r'), Just(b'{'), any::<u8>()], 0..40),
        1 => (0usize..300).prop_map(|n| vec![b'y'; n]),
    ]
}

fn split_into_chunks(bytes: Vec<u8>, cuts: Vec<usize>) -> std::collections::VecDeque<Vec<u8>> {
    let mut chunks = std::collections::VecDeque::new();
    let mut rest = bytes;
    for cut in cuts {
        if rest.is_empty() {
            break;
        }
        let tail = rest.split_off(cut % (rest.len() + 1));
        chunks.push_back(rest);
        rest = tail;
    }
    chunks.push_back(rest);
    chunks.retain(|c| !c.is_empty());
    chunks
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// However the bytes are cut into reads, the reader gives the model's
    /// lines, and never holds more than the cap.
    #[test]
    fn lines_come_out_whole_however_the_reads_are_cut(
        lines in prop::collection::vec(arb_line(), 0..30),
        newline_at_end in any::<bool>(),
        cuts in prop::collection::vec(0usize..500, 0..40),
        max in 8usize..200,
    ) {
        let mut bytes = lines.join(&b'\n');
        if newline_at_end {
            bytes.push(b'\n');
        }
        let expected = model(&bytes, max);
        let chunks = split_into_chunks(bytes, cuts);
        let got = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
            let mut reader = LineReader::with_max_line(Chunks { chunks }, max);
            let mut got = Vec::new();
            while let Some(line) = reader.next_line(<[u8]>::to_vec).await {
                assert!(reader.held() <= 2 * max, "held {}", reader.held());
                got.push(line);
            }
            got
        });
        prop_assert_eq!(got, expected);
    }
}

#[tokio::test]
async fn a_100_mb_line_is_dropped_without_being_held() {
    // One endless line written through a pipe, then a good line: the
    // reader never holds more than the cap, and goes on with the next line.
    let (mut write, read) = tokio::io::duplex(64 * 1024);
    let writer = tokio::spawn(async move {
        use tokio::io::AsyncWriteExt;
        let block = vec![b'x'; 1024 * 1024];
        for _ in 0..100 {
            write.write_all(&block).await.unwrap();
        }
        write.write_all(b"\n{\"after\":true}\n").await.unwrap();
    });
    let mut reader = LineReader::new(read);
    let mut most_held = 0;
    // `next_line` is cancel-safe: poll it once at a time and look at what
    // the reader holds in between.
    let line = loop {
        if let Some(line) = reader.next_line(<[u8]>::to_vec).now_or_never() {
            break line;
        }
        most_held = most_held.max(reader.held());
        tokio::task::yield_now().await;
    };
    assert_eq!(line.as_deref(), Some(&b"{\"after\":true}"[..]));
    assert!(
        most_held <= 2 * crate::transport::codec::MAX_MESSAGE_BYTES,
        "held {most_held} bytes"
    );
    writer.await.unwrap();
}
