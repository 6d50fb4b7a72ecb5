//! The event stream parser (the WHATWG "server-sent events" format), with
//! a cap on what it holds.
//!
//! [`EventParser`] turns bytes into events one at a time; [`Events`] reads
//! them from an HTTP body. What they hold is bounded whatever the server
//! sends: the current line and the current event's data together are at
//! most the cap ([`MAX_MESSAGE_BYTES`] for the transport), and one body
//! chunk. A line or an event that would grow past it is an error
//! ([`EventTooLarge`]), which ends the stream: skipping it would leave a
//! caller waiting for an answer that was in it.

use futures::{Stream, StreamExt};

/// One event: its type (empty when the server named none, which means
/// `message`) and its data lines joined with `\n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event:` field, or empty.
    pub(crate) event: String,
    /// The `data:` lines, joined with `\n`.
    pub(crate) data: String,
}

/// A line or an event over the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an event on the stream is larger than {} MiB, the most toolbridge accepts", .max / (1024 * 1024))]
pub(crate) struct EventTooLarge {
    /// The cap, in bytes.
    pub(crate) max: usize,
}

/// Parses an event stream fed to it in pieces of any size.
#[derive(Debug)]
pub(crate) struct EventParser {
    /// The current line, not yet ended.
    line: Vec<u8>,
    /// The current event's data lines, each followed by `\n`.
    data: Vec<u8>,
    /// The current event's type.
    event: Vec<u8>,
    /// The last byte fed was `\r`: a `\n` right after it ends no new line.
    after_cr: bool,
    /// No line has ended yet (a byte order mark may start the first).
    first_line: bool,
    /// Most bytes the line and the data may hold together.
    max: usize,
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

impl EventParser {
    /// A parser that holds at most `max` bytes of line and event data.
    pub(crate) fn new(max: usize) -> Self {
        EventParser {
            line: Vec::new(),
            data: Vec::new(),
            event: Vec::new(),
            after_cr: false,
            first_line: true,
            max,
        }
    }

    /// Reads lines from the front of `input` until one completes an event,
    /// which it returns, with `input` advanced past it; `None` once `input`
    /// is used up (what it held of an unfinished line or event is kept for
    /// the next call).
    pub(crate) fn next_event(&mut self, input: &mut &[u8]) -> Result<Option<Event>, EventTooLarge> {
        while !input.is_empty() {
            if std::mem::take(&mut self.after_cr) && input[0] == b'\n' {
                *input = &input[1..];
                continue;
            }
            let Some(end) = input.iter().position(|&b| b == b'\n' || b == b'\r') else {
                self.hold(input.len())?;
                self.line.extend_from_slice(input);
                *input = &[];
                return Ok(None);
            };
            self.hold(end)?;
            self.line.extend_from_slice(&input[..end]);
            self.after_cr = input[end] == b'\r';
            *input = &input[end + 1..];
            let line = std::mem::take(&mut self.line);
            let event = self.end_line(&line);
            // Keep the line's buffer unless a long line made it large.
            if line.capacity() <= 64 * 1024 {
                self.line = line;
                self.line.clear();
            }
            if let Some(event) = event? {
                return Ok(Some(event));
            }
        }
        Ok(None)
    }

    /// Fails when `more` bytes on the current line would pass the cap.
    fn hold(&self, more: usize) -> Result<(), EventTooLarge> {
        if self.line.len() + self.data.len() + more > self.max {
            return Err(EventTooLarge { max: self.max });
        }
        Ok(())
    }

    /// Interprets one line; a blank line completes an event.
    fn end_line(&mut self, mut line: &[u8]) -> Result<Option<Event>, EventTooLarge> {
        if std::mem::take(&mut self.first_line) {
            line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
        }
        if line.is_empty() {
            return Ok(self.dispatch());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(0) => return Ok(None), // a comment
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.data.len() + value.len() + 1 > self.max {
                    return Err(EventTooLarge { max: self.max });
                }
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"event" => {
                self.event.clear();
                self.event.extend_from_slice(value);
            }
            // `id` and `retry` matter to a client that reconnects, which the
            // legacy transport does not; unknown fields are ignored.
            _ => {}
        }
        Ok(None)
    }

    /// The event the buffers hold, if it has data; the buffers are reset.
    fn dispatch(&mut self) -> Option<Event> {
        let event = String::from_utf8_lossy(&self.event).into_owned();
        self.event.clear();
        if self.data.is_empty() {
            return None;
        }
        self.data.pop();
        let data = match String::from_utf8(std::mem::take(&mut self.data)) {
            Ok(data) => data,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        Some(Event { event, data })
    }
}

/// Why [`Events`] stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EventsError<E> {
    /// A line or an event over the cap.
    #[error(transparent)]
    TooLarge(#[from] EventTooLarge),
    /// Reading the body failed.
    #[error("{0}")]
    Body(E),
}

/// The events of an HTTP body.
pub(crate) struct Events<S, B> {
    body: S,
    /// The chunk being parsed, and how far.
    chunk: Option<(B, usize)>,
    parser: EventParser,
}

impl<S, B, E> Events<S, B>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    /// Reads events from `body`, holding at most `max` bytes of one.
    pub(crate) fn new(body: S, max: usize) -> Self {
        Events {
            body,
            chunk: None,
            parser: EventParser::new(max),
        }
    }

    /// The next event; `None` when the body ends (an unfinished event is
    /// dropped, as the format says). Cancel-safe.
    pub(crate) async fn next(&mut self) -> Option<Result<Event, EventsError<E>>> {
        loop {
            if let Some((chunk, offset)) = &mut self.chunk {
                let mut rest = &chunk.as_ref()[*offset..];
                let event = self.parser.next_event(&mut rest);
                *offset = chunk.as_ref().len() - rest.len();
                match event {
                    Err(e) => return Some(Err(e.into())),
                    Ok(Some(event)) => return Some(Ok(event)),
                    Ok(None) => self.chunk = None,
                }
            }
            match self.body.next().await? {
                Ok(chunk) => self.chunk = Some((chunk, 0)),
                Err(e) => return Some(Err(EventsError::Body(e))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Feeds `chunks` in turn; the events, and the error that ended them.
    /// Checks after every step that the parser holds at most `max` bytes.
    fn parse(chunks: &[Vec<u8>], max: usize) -> (Vec<Event>, Option<EventTooLarge>) {
        let mut parser = EventParser::new(max);
        let mut events = Vec::new();
        for chunk in chunks {
            let mut input = &chunk[..];
            loop {
                let step = parser.next_event(&mut input);
                assert!(
                    parser.line.len() + parser.data.len() <= max,
                    "holds {} + {} bytes",
                    parser.line.len(),
                    parser.data.len()
                );
                match step {
                    Ok(Some(event)) => events.push(event),
                    Ok(None) => break,
                    Err(e) => return (events, Some(e)),
                }
            }
            assert!(input.is_empty());
        }
        (events, None)
    }

    fn cut(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut start = 0;
        for c in cuts.into_iter().chain([bytes.len()]) {
            chunks.push(bytes[start..c].to_vec());
            start = c;
        }
        chunks
    }

    /// A field value: any text without line breaks.
    fn arb_value() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z /:?=.]{0,12}",
            any::<String>().prop_map(|s| s.replace(['\r', '\n'], "")),
            Just(": starts with a colon".to_owned()),
            Just(" starts with a space".to_owned()),
        ]
    }

    fn arb_newline() -> impl Strategy<Value = &'static str> {
        prop::sample::select(&["\n", "\r", "\r\n"][..])
    }

    /// An event as a server may write it: an optional type, data lines,
    /// and lines the parser must skip (comments, `id`, `retry`, unknown
    /// fields), in any order, each with any line ending.
    #[derive(Debug, Clone)]
    struct Written {
        event: Option<String>,
        data: Vec<String>,
        noise: Vec<String>,
    }

    fn arb_written() -> impl Strategy<Value = Written> {
        let noise = prop_oneof![
            arb_value().prop_map(|v| format!(":{v}")),
            arb_value().prop_map(|v| format!("id: {v}")),
            Just("retry: 1000".to_owned()),
            Just("retry: soon".to_owned()),
            Just("unknown: field".to_owned()),
            Just("lonely".to_owned()),
        ];
        (
            prop::option::of(arb_value()),
            prop::collection::vec(arb_value(), 0..4),
            prop::collection::vec(noise, 0..3),
        )
            .prop_map(|(event, data, noise)| Written { event, data, noise })
    }

    fn write(events: &[Written], newlines: &[&str], bom: bool) -> Vec<u8> {
        let mut out = String::new();
        if bom {
            out.push('\u{FEFF}');
        }
        let mut n = 0;
        let mut line = |out: &mut String, text: &str| {
            let mut newline = newlines[n % newlines.len()];
            n += 1;
            if text.is_empty() && newline == "\n" && out.ends_with('\r') {
                // `\r` then `\n` would be one line break, not two.
                newline = "\r";
            }
            out.push_str(text);
            out.push_str(newline);
        };
        for event in events {
            for noise in &event.noise {
                line(&mut out, noise);
            }
            if let Some(kind) = &event.event {
                line(&mut out, &format!("event: {kind}"));
            }
            for data in &event.data {
                line(&mut out, &format!("data: {data}"));
            }
            line(&mut out, "");
        }
        out.into_bytes()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Events written with any line endings and cut anywhere (inside a
        /// `\r\n`, inside a character) come out as written: types, data
        /// lines joined with `\n`, events without data dropped.
        #[test]
        fn events_come_out_as_written_however_the_stream_is_cut(
            written in prop::collection::vec(arb_written(), 0..6),
            newlines in prop::collection::vec(arb_newline(), 1..4),
            bom in any::<bool>(),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
        ) {
            let bytes = write(&written, &newlines, bom);
            let expected: Vec<Event> = written
                .iter()
                .filter(|w| !w.data.is_empty())
                .map(|w| Event {
                    event: w.event.clone().unwrap_or_default(),
                    data: w.data.join("\n"),
                })
                .collect();
            let (events, error) = parse(&cut(&bytes, &cuts), usize::MAX);
            prop_assert_eq!(error, None);
            prop_assert_eq!(events, expected);
        }

        /// Any bytes, cut anywhere, with a small cap: no panic, never more
        /// held than the cap, and the same outcome as all at once.
        #[test]
        fn any_bytes_give_the_same_events_however_cut_within_the_cap(
            bytes in prop::collection::vec(
                prop_oneof![Just(b'\n'), Just(b'\r'), Just(b':'), Just(b' '), Just(b'd'), any::<u8>()],
                0..400,
            ),
            prefix in prop::sample::select(&["", "data:", "event:", "data: x\n\ndata:"][..]),
            cuts in prop::collection::vec(any::<usize>(), 0..12),
            max in 1usize..64,
        ) {
            let mut all = prefix.as_bytes().to_vec();
            all.extend_from_slice(&bytes);
            let whole = parse(std::slice::from_ref(&all), max);
            prop_assert_eq!(parse(&cut(&all, &cuts), max), whole);
        }
    }

    #[test]
    fn a_100_mb_data_line_is_an_error_at_the_cap() {
        let max = 16 * 1024 * 1024;
        let mut parser = EventParser::new(max);
        let block = vec![b'x'; 64 * 1024];
        let mut input = &b"data: "[..];
        assert_eq!(parser.next_event(&mut input), Ok(None));
        let mut fed = 0;
        let error = loop {
            let mut input = &block[..];
            match parser.next_event(&mut input) {
                Ok(None) => fed += block.len(),
                Ok(Some(event)) => panic!("an event: {} bytes", event.data.len()),
                Err(e) => break e,
            }
            assert!(fed <= 100 * 1024 * 1024, "no error after {fed} bytes");
            assert!(parser.line.capacity() <= 2 * max);
        };
        assert_eq!(error, EventTooLarge { max });
        assert_eq!(
            error.to_string(),
            "an event on the stream is larger than 16 MiB, the most toolbridge accepts"
        );
        assert!(fed <= max);
    }

    #[test]
    fn many_data_lines_count_towards_the_cap() {
        let mut parser = EventParser::new(100);
        let lines = "data: 0123456789\n".repeat(20);
        let mut input = lines.as_bytes();
        assert_eq!(
            parser.next_event(&mut input),
            Err(EventTooLarge { max: 100 })
        );
    }
}
