//! An incremental Server-Sent Events decoder over raw bytes.
//!
//! OpenAI, Anthropic and Gemini (`alt=sse`) stream their answers as SSE. The network hands us the
//! body in arbitrary pieces: a chunk may end inside a UTF-8 sequence, inside a `data:` line, or
//! between the `\r` and `\n` of a CRLF. This decoder buffers only the current unfinished line, so
//! it costs O(total bytes) whatever the chunking, and yields exactly the events of the WHATWG
//! event-stream format: `data:` lines of one event joined with `\n`, `event:` names kept,
//! comments (`: keep-alive`) and `id:`/`retry:` fields skipped, an event dispatched on a blank
//! line. Interpreting payloads (`[DONE]`, JSON) is the provider's business, not this module's.

/// One dispatched event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if the server named the event.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Feeds bytes in, gets events out.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the line being read (no line ending yet). Kept as bytes so a UTF-8 sequence split
    /// across chunks is decoded only once it is whole.
    line: Vec<u8>,
    /// The previous chunk ended with `\r`: a `\n` starting the next chunk belongs to that line
    /// ending and must not end an (empty) line of its own.
    after_cr: bool,
    event: Option<String>,
    data: String,
    /// At least one `data:` line was seen for the pending event (an empty `data:` counts).
    has_data: bool,
    /// A line of the event-stream format was seen: a comment or a known field. A body without
    /// one (an HTML page, a JSON object) is not an event stream at all.
    recognised: bool,
    /// The most bytes one event may hold (its data and the line being read).
    limit: usize,
    /// Set once an event passed the limit: its first bytes (at most [`OVERSIZE_HEAD`]) and how
    /// many had arrived. Nothing more is decoded.
    oversize: Option<(Vec<u8>, usize)>,
}

/// How many bytes of an event over the limit are kept to quote it.
pub(crate) const OVERSIZE_HEAD: usize = 4096;

impl Default for SseDecoder {
    fn default() -> Self {
        SseDecoder {
            line: Vec::new(),
            after_cr: false,
            event: None,
            data: String::new(),
            has_data: false,
            recognised: false,
            limit: usize::MAX,
            oversize: None,
        }
    }
}

impl SseDecoder {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that holds at most `limit` bytes of one event: a larger event stops the
    /// decoding (see [`SseDecoder::oversize`]).
    pub fn with_limit(limit: usize) -> Self {
        SseDecoder {
            limit,
            ..Self::default()
        }
    }

    /// Once an event passed the limit: its first bytes (at most 4,096) and how many
    /// of its bytes had arrived when it did. Nothing after it is decoded.
    pub fn oversize(&self) -> Option<(&[u8], usize)> {
        self.oversize.as_ref().map(|(h, n)| (h.as_slice(), *n))
    }

    /// Whether the event being read passed the limit; if so, keeps its start and drops it.
    fn over_limit(&mut self) -> bool {
        let held = self.data.len() + self.line.len();
        if held <= self.limit {
            return false;
        }
        let mut head = self.data.as_bytes().to_vec();
        head.truncate(OVERSIZE_HEAD);
        if head.len() < OVERSIZE_HEAD {
            if !head.is_empty() {
                head.push(b'\n');
            }
            let room = OVERSIZE_HEAD.saturating_sub(head.len());
            head.extend_from_slice(&self.line[..self.line.len().min(room)]);
        }
        self.oversize = Some((head, held));
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
        true
    }

    /// Feeds the next piece of the body and appends every event it completes to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) {
        if bytes.is_empty() || self.oversize.is_some() {
            return; // an empty chunk must not forget a pending `\r`
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while let Some(i) = memchr::memchr2(b'\n', b'\r', bytes) {
            self.line.extend_from_slice(&bytes[..i]);
            if self.over_limit() {
                return;
            }
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
            self.line = line;
            self.line.clear();
            if self.over_limit() {
                return;
            }
            if bytes[i] == b'\r' {
                match bytes.get(i + 1) {
                    Some(b'\n') => bytes = &bytes[i + 2..],
                    Some(_) => bytes = &bytes[i + 1..],
                    None => {
                        self.after_cr = true;
                        bytes = &[];
                    }
                }
            } else {
                bytes = &bytes[i + 1..];
            }
        }
        self.line.extend_from_slice(bytes);
        self.over_limit();
    }

    /// Whether a line of the event-stream format (a comment, or a `data`, `event`, `id` or
    /// `retry` field) has been seen so far.
    pub fn saw_stream(&self) -> bool {
        self.recognised
    }

    /// Ends the body. A last event the server did not close with a blank line is still
    /// dispatched: servers that forget the final blank line are common, and dropping their last
    /// event would lose data.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if self.oversize.is_some() {
            return;
        }
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
        }
        self.dispatch(out);
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            self.recognised = true;
            return; // a comment, e.g. a keep-alive
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        if matches!(field, b"data" | b"event" | b"id" | b"retry") {
            self.recognised = true;
        }
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                self.data.push_str(&String::from_utf8_lossy(value));
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {} // id, retry and unknown fields carry nothing we use
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
            });
        }
        self.event = None;
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            d.push(c, &mut out);
        }
        d.finish(&mut out);
        out
    }

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    const BODY: &str = ": keep-alive\r\n\r\nevent: message_start\r\ndata: {\"a\":\"é\"}\r\n\r\n\
        data: line one\ndata:line two\nid: 7\nretry: 100\n\n: ping\n\ndata: [DONE]\n\n";

    fn want() -> Vec<SseEvent> {
        vec![
            ev(Some("message_start"), "{\"a\":\"é\"}"),
            ev(None, "line one\nline two"),
            ev(None, "[DONE]"),
        ]
    }

    #[test]
    fn decodes_fields_comments_and_multi_line_data() {
        assert_eq!(decode_in(&[BODY.as_bytes()]), want());
    }

    #[test]
    fn every_split_gives_the_same_events() {
        let bytes = BODY.as_bytes();
        for i in 0..=bytes.len() {
            for j in i..=bytes.len() {
                let got = decode_in(&[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                assert_eq!(got, want(), "split at {i} and {j}");
            }
        }
        let ones: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode_in(&ones), want());
    }

    #[test]
    fn lone_cr_ends_a_line_and_unterminated_last_event_is_kept() {
        assert_eq!(
            decode_in(&[b"data: a\r\rdata: b\r", b"\rdata: c"]),
            vec![ev(None, "a"), ev(None, "b"), ev(None, "c")]
        );
    }

    #[test]
    fn empty_data_line_is_an_event_and_event_name_resets() {
        assert_eq!(
            decode_in(&[b"event: x\n\ndata\n\ndata:\n\n"]),
            vec![ev(None, ""), ev(None, "")]
        );
    }

    #[test]
    fn invalid_utf8_never_panics() {
        let got = decode_in(&[b"data: \xff\xfe\n\n"]);
        assert_eq!(got.len(), 1);
    }

    #[test]
    fn an_event_over_the_limit_stops_the_decoding_keeping_its_start() {
        let big = format!("data: {}\n\n", "y".repeat(10_000));
        let body = format!("data: small\n\n{big}data: after\n\n");
        for piece in [1, 7, 4096, body.len()] {
            let mut d = SseDecoder::with_limit(100);
            let mut out = Vec::new();
            for c in body.as_bytes().chunks(piece) {
                d.push(c, &mut out);
            }
            d.finish(&mut out);
            assert_eq!(out, vec![ev(None, "small")], "pieces of {piece}");
            let (head, seen) = d.oversize().expect("over the limit");
            assert!(seen > 100 && head.len() <= OVERSIZE_HEAD && head.starts_with(b"data: yyy"));
        }
        // At the limit (16 bytes, counted as the raw line) is not over it; the data lines of
        // one event count together.
        let mut d = SseDecoder::with_limit(16);
        let mut out = Vec::new();
        d.push(b"data: 0123456789\n\n", &mut out);
        assert!(d.oversize().is_none());
        d.push(b"data: 0123456789\ndata: 0123456789\n\n", &mut out);
        assert_eq!(out.len(), 1);
        assert!(d.oversize().is_some());
    }
}
