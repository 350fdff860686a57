//! Cutting response bytes into wire events.

use super::ndjson::NdjsonDecoder;
use super::request::Request;
use super::sse::{SseDecoder, SseEvent};

/// Cuts response bytes into wire events: SSE data payloads or NDJSON lines when streaming, the
/// whole body otherwise.
pub struct WireFramer {
    kind: Framing,
    events: Vec<SseEvent>,
    /// The first bytes of an SSE body, kept until the body shows it is an event stream: what a
    /// body that is not one is quoted with.
    head: Vec<u8>,
    /// The most bytes one wire event (or a whole body) may hold.
    limit: usize,
    /// A whole body that passed the limit: its first bytes and how many had arrived.
    whole_oversize: Option<(Vec<u8>, usize)>,
}

/// A wire event larger than the limit: the answer ends there, and only its start is kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Oversize {
    /// Its first bytes (at most 4,096), as text.
    pub head: String,
    /// How many of its bytes had arrived when it passed the limit.
    pub seen: usize,
    /// The limit it passed.
    pub limit: usize,
}

/// How much of a body that is not the expected stream is kept to quote it.
pub(crate) const QUOTE_BYTES: usize = 4096;

enum Framing {
    Sse(SseDecoder),
    Ndjson(NdjsonDecoder),
    Whole(Vec<u8>),
}

impl WireFramer {
    /// A framer that reads the body whole, whatever the request asked (an error body, or a server
    /// that ignored `stream: true`).
    pub fn whole() -> Self {
        WireFramer {
            kind: Framing::Whole(Vec::new()),
            events: Vec::new(),
            head: Vec::new(),
            limit: usize::MAX,
            whole_oversize: None,
        }
    }

    /// A framer for the answer to `request`: streamed or whole, SSE or NDJSON as its wire says.
    pub fn new(request: &Request) -> Self {
        let limit = request.limits.event();
        let kind = match (request.stream, request.provider.wire().streams_sse()) {
            (false, _) => Framing::Whole(Vec::new()),
            (true, true) => Framing::Sse(SseDecoder::with_limit(limit)),
            (true, false) => Framing::Ndjson(NdjsonDecoder::with_limit(limit)),
        };
        WireFramer {
            kind,
            events: Vec::new(),
            head: Vec::new(),
            limit,
            whole_oversize: None,
        }
    }

    /// This framer, holding at most `limit` bytes of one wire event (of the whole body, for a
    /// framer that reads it whole). Call before anything is pushed.
    pub fn with_limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        match &mut self.kind {
            Framing::Sse(d) => *d = SseDecoder::with_limit(limit),
            Framing::Ndjson(d) => *d = NdjsonDecoder::with_limit(limit),
            Framing::Whole(_) => {}
        }
        self
    }

    /// Once a wire event (or the whole body) passed the limit: its start and size. Nothing
    /// after it is framed; the answer ends there.
    pub fn oversize(&self) -> Option<Oversize> {
        let (head, seen) = match &self.kind {
            Framing::Sse(d) => d.oversize()?,
            Framing::Ndjson(d) => d.oversize()?,
            Framing::Whole(_) => {
                let (h, n) = self.whole_oversize.as_ref()?;
                (h.as_slice(), *n)
            }
        };
        Some(Oversize {
            head: String::from_utf8_lossy(head).into_owned(),
            seen,
            limit: self.limit,
        })
    }

    /// Feeds body bytes; returns the wire events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        match &mut self.kind {
            Framing::Sse(d) => {
                if !d.saw_stream() && self.head.len() < QUOTE_BYTES {
                    let room = QUOTE_BYTES - self.head.len();
                    self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
                }
                d.push(bytes, &mut self.events);
                out.extend(self.events.drain(..).map(|e| e.data));
            }
            Framing::Ndjson(d) => d.push(bytes, &mut out),
            Framing::Whole(buf) => {
                if self.whole_oversize.is_some() {
                    return out;
                }
                buf.extend_from_slice(bytes);
                if buf.len() > self.limit {
                    let seen = buf.len();
                    let mut head = std::mem::take(buf);
                    head.truncate(super::sse::OVERSIZE_HEAD);
                    head.shrink_to_fit();
                    self.whole_oversize = Some((head, seen));
                }
            }
        }
        out
    }

    /// For an answer expected as server-sent events, once the body has ended: the start of the
    /// body when it had bytes but not one line of an event stream (an HTML page, a JSON object
    /// served as text), else `None`.
    pub fn not_a_stream(&self) -> Option<String> {
        match &self.kind {
            Framing::Sse(d)
                if !d.saw_stream() && !self.head.iter().all(u8::is_ascii_whitespace) =>
            {
                Some(String::from_utf8_lossy(&self.head).into_owned())
            }
            _ => None,
        }
    }

    /// Ends the body; returns the last wire events (for a whole body, the body).
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        match &mut self.kind {
            Framing::Sse(d) => {
                d.finish(&mut self.events);
                out.extend(self.events.drain(..).map(|e| e.data));
            }
            Framing::Ndjson(d) => d.finish(&mut out),
            Framing::Whole(buf) => {
                let body = std::mem::take(buf);
                if !body.is_empty() {
                    out.push(String::from_utf8_lossy(&body).into_owned());
                }
            }
        }
        out
    }
}
