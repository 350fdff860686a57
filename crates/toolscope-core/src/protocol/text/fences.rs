//! A code fence around a call: a model that writes ```` ```json ```` (or ```` ```python ````, or
//! a bare ```` ``` ````) on the line before its call and ```` ``` ```` on the line after it. The
//! fence is format, not text, in every protocol: its opening line is taken out when one of the
//! protocol's own call markers follows it (after whitespace), and its closing line when it
//! follows the call, only whitespace between. Both stay in the raw output under a markup span.
//! A fence around anything else (code in prose, a JSON envelope that the JSON scanner unwraps
//! itself) is left as it is, and so is a fence inside a call's arguments (the scanner is in the
//! call then).
//!
//! The filter sits before the reasoning splitter and the scanner, like the end-token filter, and
//! holds back only an undecided fence line, so every chunking gives the same result.

use super::emit::Emitter;
use crate::json::lexer::find1;
use crate::protocol::span::SpanKind;
use crate::protocol::text::run::DirectRun;

/// The most whitespace between a fence's line and the call it wraps.
const MAX_GAP: usize = 64;

/// The longest opening fence line (its newline included): a longer one is text, whether the
/// whole line is read at once or held across chunks.
const MAX_OPENER: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// No fence open.
    Out,
    /// A fence opened before a call: its close may follow the call.
    In,
}

pub(crate) struct CallFences {
    /// The protocol's call markers, as pieces that whitespace may separate.
    markers: Vec<Vec<Vec<u8>>>,
    state: State,
    /// Text that may begin a fence line, held for the next piece.
    held: String,
    /// Offset in the whole text of the next byte to arrive.
    pos: usize,
    /// Bytes passed on so far (the coordinates of what reads the text after this filter).
    passed: usize,
    /// The text read so far ends at the start of a line (after spaces or tabs).
    line_start: bool,
}

/// What the reader after this filter is given: a piece of text to read, or an empty piece, which
/// asks whether the scanner is inside a call (the answer to a piece with text means nothing:
/// asking is a call the common path of a stream's pieces does without).
pub(crate) trait Pass: FnMut(&str, &mut Emitter) -> bool {}
impl<F: FnMut(&str, &mut Emitter) -> bool> Pass for F {}

impl CallFences {
    /// A filter for a protocol whose calls begin with one of `markers` (a space in a marker
    /// stands for any run of whitespace).
    ///
    /// A protocol whose own call is a fence (gemma's ```` ```tool_call ````) gets none: the close
    /// of one call and the opener of the next would read as a fence around the next.
    pub(crate) fn new(markers: &[String]) -> Option<Self> {
        if markers.iter().any(|m| m.trim_start().starts_with("```")) {
            return None;
        }
        let markers: Vec<Vec<Vec<u8>>> = markers
            .iter()
            .map(|m| {
                m.split(' ')
                    .filter(|p| !p.is_empty())
                    .map(|p| p.as_bytes().to_vec())
                    .collect::<Vec<_>>()
            })
            .filter(|p: &Vec<Vec<u8>>| !p.is_empty())
            .collect();
        (!markers.is_empty()).then(|| CallFences {
            markers,
            state: State::Out,
            held: String::new(),
            pos: 0,
            passed: 0,
            line_start: true,
        })
    }

    /// The path of nearly every piece of a stream: no fence is open, nothing is held and the
    /// piece has no backtick, so all of it passes on as it is. Counts it as passed (what
    /// [`CallFences::give`] does, without asking whether the scanner is in a call) and answers
    /// `true`; on `false` nothing changed, and the piece is [`CallFences::feed_marked`]'s.
    #[inline(always)]
    pub(crate) fn pass_quiet(&mut self, piece: &str) -> bool {
        if !self.quiet() || find1(Self::STOP, piece.as_bytes()).is_some() {
            return false;
        }
        self.pass_known_quiet(piece);
        true
    }

    /// The byte that may begin a fence (the stream parser's [`Stops`]).
    ///
    /// [`Stops`]: super::stops::Stops
    pub(crate) const STOP: u8 = b'`';

    /// No fence is open and nothing is held: a piece without a backtick passes on whole.
    #[inline(always)]
    pub(crate) fn quiet(&self) -> bool {
        self.state == State::Out && self.held.is_empty()
    }

    /// A piece known to hold no backtick, while [`CallFences::quiet`]: counted as passed on.
    #[inline(always)]
    pub(crate) fn pass_known_quiet(&mut self, piece: &str) {
        self.pos += piece.len();
        self.count_passed(piece);
    }

    /// A run of quiet pieces without a backtick passed on, counted at once (the stream parser's
    /// run of direct pieces).
    pub(crate) fn pass_run(&mut self, run: &DirectRun) {
        debug_assert!(self.quiet());
        self.pos += run.len;
        self.passed += run.len;
        self.line_start = run.ends_at_line_start(self.line_start);
    }

    /// `text` was passed on: counted, and whether it leaves the text at a line's start.
    #[inline(always)]
    fn count_passed(&mut self, text: &str) {
        if !text.is_empty() {
            self.passed += text.len();
            self.line_start = ends_at_line_start(text, self.line_start);
        }
    }

    /// A piece that may hold or begin a fence, or comes after held text or inside a fence.
    #[inline(never)]
    pub(crate) fn feed_marked(&mut self, piece: &str, em: &mut Emitter, mut pass: impl Pass) {
        let mut text = std::mem::take(&mut self.held);
        let base = self.pos - text.len();
        self.pos += piece.len();
        text.push_str(piece);
        self.run(&text, base, false, em, &mut pass);
    }

    /// The text is over: a held fence line is decided without what would have followed.
    pub(crate) fn finish(&mut self, em: &mut Emitter, mut pass: impl Pass) {
        let text = std::mem::take(&mut self.held);
        let base = self.pos - text.len();
        self.run(&text, base, true, em, &mut pass);
    }

    /// Passes `text` on and answers whether the scanner is in a call after it.
    fn give(&mut self, text: &str, em: &mut Emitter, pass: &mut impl Pass) -> bool {
        if !text.is_empty() {
            self.count_passed(text);
            pass(text, em);
        }
        pass("", em)
    }

    /// Takes `text[a..b]` (at `base` in the text this filter reads) out as fence markup.
    fn remove(&mut self, text: &str, a: usize, b: usize, base: usize, em: &mut Emitter) {
        em.remove_fence(self.passed, b - a);
        em.fence_span(base + a, base + b, SpanKind::Markup);
        self.line_start = ends_at_line_start(&text[a..b], self.line_start);
    }

    fn run(
        &mut self,
        text: &str,
        base: usize,
        at_end: bool,
        em: &mut Emitter,
        pass: &mut impl Pass,
    ) {
        let bytes = text.as_bytes();
        let mut from = 0;
        let mut i = 0;
        while let Some(off) = memchr::memchr(b'`', &bytes[i..]) {
            let p = i + off;
            i = p + 1;
            let line_from = line_begin(bytes, from, p);
            let at_line_start = match line_from {
                Some(_) => true,
                None => self.line_start && bytes[from..p].iter().all(|b| matches!(b, b' ' | b'\t')),
            };
            if !at_line_start || !bytes[p..].starts_with(b"```") {
                if at_line_start && b"```".starts_with(&bytes[p..]) && !at_end {
                    // In a fence, the whitespace before a close is held with it.
                    let keep = match self.state {
                        State::In => ws_before(bytes, from, p),
                        State::Out => p,
                    };
                    return self.hold(text, from, keep, em, pass);
                }
                continue;
            }
            match self.state {
                State::Out => {
                    // Inside a call's arguments, a fence is the value's own text.
                    if self.give(&text[from..p], em, pass) {
                        from = p;
                        continue;
                    }
                    from = p;
                    // The fence may itself be the protocol's marker (gemma's ```tool_call).
                    match self.marker_at(bytes, p, at_end) {
                        Match::Partial => return self.hold(text, from, p, em, pass),
                        Match::Full(_) => continue,
                        Match::No => {}
                    }
                    let Some(line_end) = opener_line(bytes, p) else {
                        if at_end || bytes.len() - p > MAX_OPENER {
                            continue;
                        }
                        return self.hold(text, from, p, em, pass);
                    };
                    let mut k = line_end;
                    while k < bytes.len()
                        && k - line_end < MAX_GAP
                        && bytes[k].is_ascii_whitespace()
                    {
                        k += 1;
                    }
                    if k == bytes.len() && !at_end {
                        return self.hold(text, from, p, em, pass);
                    }
                    match self.marker_at(bytes, k, at_end) {
                        Match::Full(_) => {
                            self.remove(text, p, k, base, em);
                            self.state = State::In;
                            from = k;
                            i = k;
                        }
                        Match::Partial => return self.hold(text, from, p, em, pass),
                        Match::No => {}
                    }
                }
                State::In => {
                    // Whitespace before the close belongs to the fence, when the call is over.
                    let ws = ws_before(bytes, from, p);
                    let in_call = self.give(&text[from..ws], em, pass);
                    from = ws;
                    if in_call {
                        continue;
                    }
                    let mut e = p + 3;
                    while e < bytes.len() && matches!(bytes[e], b' ' | b'\t') {
                        e += 1;
                    }
                    if e == bytes.len() && !at_end {
                        // Held with the whitespace before it, which is the fence's if it closes.
                        return self.hold(text, from, from, em, pass);
                    }
                    if e == bytes.len() || matches!(bytes[e], b'\n' | b'\r') {
                        self.remove(text, ws, e, base, em);
                        self.state = State::Out;
                        from = e;
                        i = e;
                    } else {
                        // ```` ```python ```` after the call: another fence, not this one's close.
                        self.state = State::Out;
                    }
                }
            }
        }
        if self.state == State::In && !at_end {
            // Whitespace after the call may be the closing fence's: held until it is told.
            let ws = ws_before(bytes, from, bytes.len());
            if bytes.len() - ws <= MAX_GAP {
                return self.hold(text, from, ws, em, pass);
            }
        }
        self.give(&text[from..], em, pass);
    }

    /// Passes `text[from..p]` and holds the rest for the next piece.
    fn hold(&mut self, text: &str, from: usize, p: usize, em: &mut Emitter, pass: &mut impl Pass) {
        self.give(&text[from..p], em, pass);
        self.held.push_str(&text[p..]);
    }

    fn marker_at(&self, bytes: &[u8], k: usize, at_end: bool) -> Match {
        let mut partial = false;
        for m in &self.markers {
            match match_at(bytes, k, m, at_end) {
                Match::Full(n) => return Match::Full(n),
                Match::Partial => partial = true,
                Match::No => {}
            }
        }
        if partial { Match::Partial } else { Match::No }
    }
}

/// Where the line holding `bytes[p]` begins, if it begins at or after `from` and only spaces
/// or tabs stand between it and `p`.
fn line_begin(bytes: &[u8], from: usize, p: usize) -> Option<usize> {
    let mut k = p;
    while k > from && matches!(bytes[k - 1], b' ' | b'\t') {
        k -= 1;
    }
    (k > from && bytes[k - 1] == b'\n').then_some(k)
}

/// The start of the whitespace (newlines included) that ends `bytes[from..p]`.
fn ws_before(bytes: &[u8], from: usize, p: usize) -> usize {
    let mut k = p;
    while k > from && bytes[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    k
}

/// The end (after its newline) of a fence's opening line at `bytes[p]`: three backticks, a
/// language word, spaces. `None` when it is no such line, or not complete yet.
fn opener_line(bytes: &[u8], p: usize) -> Option<usize> {
    let mut k = p + 3;
    while k < bytes.len()
        && (bytes[k].is_ascii_alphanumeric() || matches!(bytes[k], b'_' | b'-' | b'+'))
    {
        k += 1;
    }
    while k < bytes.len() && matches!(bytes[k], b' ' | b'\t' | b'\r') {
        k += 1;
    }
    (k < bytes.len() && bytes[k] == b'\n' && k + 1 - p <= MAX_OPENER).then_some(k + 1)
}

/// Whether the text ends at a line's start (after a newline and any spaces and tabs); `before`
/// when it is only spaces and tabs.
pub(crate) fn ends_at_line_start(text: &str, before: bool) -> bool {
    // Byte by byte from the end (space and tab are single bytes): a stream's one-character
    // pieces pass here one at a time.
    match text.bytes().rev().find(|b| !matches!(b, b' ' | b'\t')) {
        Some(b) => b == b'\n',
        None => before,
    }
}

/// How a pattern's pieces match at a position of a buffer.
pub(crate) enum Match {
    Full(usize),
    Partial,
    No,
}

/// In a marker, a slot for a function's name (any name, not only the tools' own): a run of one
/// or more letters, digits, `_`, `-`, `.`, `:` or non-ASCII bytes, as long as the text makes it.
/// Markers say `<tool_call>{NAME} <arg_key>` with it, so the shape of the markup tells the format
/// whatever the name.
pub(crate) const NAME: &str = "\u{1}";

/// The most bytes a name slot takes.
const MAX_NAME: usize = 256;

const fn name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':') || b >= 0x80
}

pub(crate) fn match_at(buf: &[u8], pos: usize, pieces: &[Vec<u8>], at_end: bool) -> Match {
    let mut k = pos;
    let short = if at_end { Match::No } else { Match::Partial };
    for (i, piece) in pieces.iter().enumerate() {
        if i > 0 {
            let gap = k;
            while k < buf.len() && buf[k].is_ascii_whitespace() {
                k += 1;
                if k - gap > MAX_GAP {
                    return Match::No;
                }
            }
        }
        // The literal runs of the piece, a name slot between two of them.
        for (r, run) in piece.split(|b| *b == NAME.as_bytes()[0]).enumerate() {
            if r > 0 {
                let start = k;
                while k < buf.len() && name_byte(buf[k]) && k - start < MAX_NAME {
                    k += 1;
                }
                if k == buf.len() && k - start < MAX_NAME {
                    return short;
                }
                if k == start {
                    return Match::No;
                }
            }
            let n = run.len().min(buf.len() - k);
            if buf[k..k + n] != run[..n] {
                return Match::No;
            }
            if n < run.len() {
                return short;
            }
            k += n;
        }
    }
    Match::Full(k - pos)
}

#[cfg(test)]
mod tests {
    use crate::protocol::spec::Protocol;
    use crate::protocol::tests_support::every_split;

    /// An opening fence line longer than the limit is text, however the output is cut (whole,
    /// the line was read as a fence; held across chunks, it was given up as text).
    #[test]
    fn a_fence_line_too_long_to_open_a_call_is_text() {
        let p = Protocol::from_name("hermes").unwrap();
        let call = "<tool_call>{\"name\": \"search\", \"arguments\": {}}</tool_call>";
        let c = every_split(&p, &format!("```json\n{call}\n```"));
        c.text("");
        let long = format!("```{}\n{call}", "a".repeat(70));
        let c = every_split(&p, &long);
        c.text(format!("```{}\n", "a".repeat(70)));
    }
}
