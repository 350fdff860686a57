//! Reasoning written in the output text between a protocol's markers (`<think>` … `</think>`),
//! split off before the protocol's scanner sees the text.
//!
//! Outside reasoning, the text goes to the scanner; an open marker found where the scanner is not
//! inside a call opens a reasoning block (one inside a call is the call's own text). Inside
//! reasoning, the text becomes `reasoning` parts up to the close marker; for a family that makes
//! calls from its reasoning, the scanner reads it instead, with its plain text written as
//! reasoning. The markers themselves become neither text nor reasoning: they are reported as a
//! reasoning span, with the reasoning they enclose. A marker split across chunks is held back only
//! while the chunk's end could still be its beginning, so the cost stays linear and the result is
//! the same for every chunking.
//!
//! Where the output starts inside reasoning by the family's default (its template usually opens
//! the block), that is a presumption: for a family whose reasoning holds no calls, the scanner
//! reads the text (written as reasoning), and a call ends the presumed block (a run whose
//! template did not open it). Where it starts outside, a close marker before any open marker or
//! call is read as format with a notice: the prompt opened reasoning, and the text before the marker,
//! already sent as answer text, was reasoning.

use std::borrow::Cow;

use super::emit::Emitter;
use super::scanner::Scanner;
use crate::json::lexer::find1;
use crate::part::Warning;
use crate::protocol::span::SpanKind;

pub(crate) struct ReasoningSplitter {
    open: Cow<'static, str>,
    close: Cow<'static, str>,
    /// For markers that carry a per-checkpoint suffix not known yet (`<think:SUFFIX>`): the
    /// markers' stems (`<think:`, `</think:`), until the first marker teaches the suffix.
    learning: Option<(&'static str, &'static str)>,
    /// For markers that are stems a family ends several ways (K2 Horizon's `<ifm|think` by
    /// effort: `>`, `_fast>`, `_faster>`): the endings; any opener goes with any closer.
    endings: &'static [&'static str],
    /// For whole markers that may also carry a suffix (`<think>`, or `<think:high>` by effort):
    /// the suffix, once known (given, or learned from the first marker that carries one); the
    /// markers looked for are then the stems (`<think`, `</think`).
    optional: Option<Option<String>>,
    calls_inside: bool,
    inside: bool,
    /// Inside reasoning only because the family's template usually opens it (no open marker
    /// was read), in a family whose reasoning holds no calls: the scanner reads the text, so a
    /// call (a run where the template did not open reasoning) ends the presumed block.
    presumed: bool,
    /// A marker was read (an open marker, or a close marker without one): until then, a close
    /// marker outside reasoning is looked for too (the prompt opened reasoning unannounced).
    seen: bool,
    /// Text that may begin the marker being looked for, held for the next chunk.
    held: String,
    /// Offset in the decoded text of the next byte to arrive.
    pos: usize,
    /// Bytes fed to the scanner so far (its coordinates).
    fed: usize,
    /// Where the open reasoning block began (its open marker, or the start of the text).
    block_start: usize,
}

/// A text is searched with a substring searcher when at least this many bytes are left, and
/// at least `DENSE_MISSES` places that begin with the marker's first byte but are not the marker
/// came, one every `DENSE_SPACING` bytes or closer.
const LONG_TEXT: usize = 4096;
const DENSE_MISSES: usize = 32;
const DENSE_SPACING: usize = 64;

/// Where `needle` first occurs in `hay` at or after `from`, where its first byte is: markers are
/// short and pieces small, so candidates found by their first byte are compared in place (a
/// substring searcher's set-up costs more than the search), unless a long text keeps giving
/// candidates that are not the marker (see below).
fn find_from(hay: &[u8], needle: &[u8], mut from: usize) -> Option<usize> {
    let (&lead, _) = needle.split_first()?;
    let start = from;
    let mut misses = 0;
    loop {
        if hay.len() - from < needle.len() {
            return None;
        }
        if hay[from..].starts_with(needle) {
            return Some(from);
        }
        // A long text whose first byte keeps coming back without the rest (a whole output's
        // call markup, every tag of which begins with the marker's `<`) is searched for the
        // whole marker at once: there a substring searcher's set-up is worth it. (Not where the
        // byte is rare, as in prose: such a searcher is slower there than finding the byte.)
        misses += 1;
        if misses >= DENSE_MISSES
            && (from - start) < misses * DENSE_SPACING
            && hay.len() - from >= LONG_TEXT
        {
            return memchr::memmem::find(&hay[from + 1..], needle).map(|k| from + 1 + k);
        }
        from += 1 + find1(lead, &hay[from + 1..])?;
    }
}

impl ReasoningSplitter {
    pub(crate) fn new(
        open: &'static str,
        close: &'static str,
        calls_inside: bool,
        starts_inside: bool,
    ) -> Self {
        ReasoningSplitter {
            open: Cow::Borrowed(open),
            close: Cow::Borrowed(close),
            learning: None,
            endings: &[],
            optional: None,
            calls_inside,
            inside: starts_inside,
            presumed: starts_inside && !calls_inside,
            seen: false,
            held: String::new(),
            pos: 0,
            fed: 0,
            block_start: 0,
        }
    }

    /// A splitter for markers written as a stem, a suffix and `>` (`<think:` SUFFIX `>`): with
    /// the suffix given, or learned from the first marker (and said in a notice).
    pub(crate) fn suffixed(
        open_stem: &'static str,
        close_stem: &'static str,
        suffix: Option<&str>,
        calls_inside: bool,
        starts_inside: bool,
    ) -> Self {
        let mut s = Self::new(open_stem, close_stem, calls_inside, starts_inside);
        match suffix {
            Some(sfx) => s.set_suffix(open_stem, close_stem, sfx),
            None => s.learning = Some((open_stem, close_stem)),
        }
        s
    }

    /// A splitter for markers written as a stem and one of `endings` (`<ifm|think` then `>`,
    /// `_fast>` or `_faster>`).
    pub(crate) fn with_endings(
        open_stem: &'static str,
        close_stem: &'static str,
        endings: &'static [&'static str],
        calls_inside: bool,
        starts_inside: bool,
    ) -> Self {
        let mut s = Self::new(open_stem, close_stem, calls_inside, starts_inside);
        s.endings = endings;
        s
    }

    /// A splitter for whole markers (`<think>`) that may also carry a suffix before their `>`
    /// (`<think:high>`): the suffix given, or learned from the first marker that carries one
    /// (and said in a notice); a marker with another suffix is not one.
    pub(crate) fn optional_suffix(
        open: &'static str,
        close: &'static str,
        suffix: Option<&str>,
        calls_inside: bool,
        starts_inside: bool,
    ) -> Self {
        let stem = |m: &'static str| m.strip_suffix('>').unwrap_or(m);
        let mut s = Self::new(stem(open), stem(close), calls_inside, starts_inside);
        s.optional = Some(suffix.map(str::to_string));
        s
    }

    fn set_suffix(&mut self, open_stem: &str, close_stem: &str, sfx: &str) {
        self.open = Cow::Owned(format!("{open_stem}{sfx}>"));
        self.close = Cow::Owned(format!("{close_stem}{sfx}>"));
        self.learning = None;
    }

    /// The marker looked for now, or its stem while the suffix is not known.
    fn marker(&self) -> &str {
        match self.learning {
            Some((open, close)) => {
                if self.inside {
                    close
                } else {
                    open
                }
            }
            None if self.inside => &self.close,
            None => &self.open,
        }
    }

    /// Where the marker looked for is in `rest` (its start and length), or how many bytes at
    /// the end may begin it (to hold for the next piece).
    fn find_marker(&self, rest: &str) -> Result<(usize, usize), usize> {
        let marker = self.marker();
        let bytes = rest.as_bytes();
        let Some(first) = find1(marker.as_bytes()[0], bytes) else {
            return Err(0);
        };
        if let Some(known) = &self.optional {
            return find_optional(rest, bytes, marker, known.as_deref(), first);
        }
        if self.learning.is_none() && self.endings.is_empty() {
            return match find_from(bytes, marker.as_bytes(), first) {
                Some(k) => Ok((k, marker.len())),
                None => Err(partial_suffix(rest, marker)),
            };
        }
        // A stem, then a suffix and `>`.
        let mut from = first;
        loop {
            let Some(k) = find_from(bytes, marker.as_bytes(), from) else {
                return Err(partial_suffix(rest, marker));
            };
            let tail = &bytes[k + marker.len()..];
            if !self.endings.is_empty() {
                // The longest ending that completes the stem here.
                let mut best = None;
                for e in self.endings {
                    let e = e.as_bytes();
                    if tail.starts_with(e) {
                        best = best.max(Some(e.len()));
                    } else if e.starts_with(tail) {
                        // The text ends inside it: hold from the stem.
                        return Err(rest.len() - k);
                    }
                }
                match best {
                    Some(n) => return Ok((k, marker.len() + n)),
                    None => {
                        from = k + 1;
                        continue;
                    }
                }
            }
            let run = tail
                .iter()
                .take(MAX_SUFFIX + 1)
                .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
                .count();
            if run == tail.len() && run <= MAX_SUFFIX {
                // The text ends inside the suffix: hold from the stem.
                return Err(rest.len() - k);
            }
            if (1..=MAX_SUFFIX).contains(&run) && tail[run] == b'>' {
                return Ok((k, marker.len() + run + 1));
            }
            from = k + 1;
        }
    }

    /// Where the marker looked for is in `rest`, as [`ReasoningSplitter::find_marker`] says;
    /// and, outside reasoning before any marker or call was read, a close marker too (the second
    /// value says the one found is a close marker outside reasoning).
    fn find_either(&mut self, rest: &str, em: &Emitter) -> (Result<(usize, usize), usize>, bool) {
        let open = self.find_marker(rest);
        // (After a call, a close marker is no longer looked for: the reasoning a template
        // opened comes first.)
        self.seen |= em.call_count() > 0;
        if self.seen || self.inside {
            return (open, false);
        }
        self.inside = true;
        let close = self.find_marker(rest);
        self.inside = false;
        match (open, close) {
            (Ok((a, _)), Ok((b, lb))) if b < a => (Ok((b, lb)), true),
            (Ok(o), _) => (Ok(o), false),
            (Err(_), Ok(c)) => (Ok(c), true),
            (Err(a), Err(b)) => (Err(a.max(b)), false),
        }
    }

    /// A close marker outside reasoning, before any open marker or call: the prompt opened reasoning
    /// (a template that pre-opens the think block, read with the family's default). The text
    /// before it went out as answer text (a stream cannot take it back); the marker is format,
    /// and a notice says how to read such outputs.
    fn lone_close(&mut self, at: usize, marker: &str, learns: bool, em: &mut Emitter) {
        if learns {
            self.inside = true;
            self.learn(marker, em);
            self.inside = false;
        }
        em.text_span(at, at + marker.len(), SpanKind::Reasoning);
        em.notice(Warning::new(
            "reasoning-close-without-open",
            format!(
                "the output closes reasoning it did not open ({marker}): the prompt opened it, so the text before the marker is reasoning, read here as answer text; read such outputs as starting inside reasoning (--reasoning-open)"
            ),
        ));
    }

    /// A marker whose suffix is optional was `marker`: the first with a suffix teaches it.
    fn learn_optional(&mut self, marker: &str, em: &mut Emitter) {
        let Some(None) = self.optional else {
            return;
        };
        let Some(colon) = marker.find(':') else {
            return;
        };
        let sfx = &marker[colon + 1..marker.len() - 1];
        let (open, close) = (&self.open, &self.close);
        em.notice(Warning::new(
            "learned-marker-suffix",
            format!(
                "the reasoning markers carry the suffix \"{sfx}\" (learned from {marker}): {open}:{sfx}> … {close}:{sfx}>; markers with another suffix are text"
            ),
        ));
        self.optional = Some(Some(sfx.to_string()));
    }

    /// The first marker was `marker`: its suffix is the markers' from now on.
    fn learn(&mut self, marker: &str, em: &mut Emitter) {
        if self.optional.is_some() {
            self.learn_optional(marker, em);
            return;
        }
        let Some((open, close)) = self.learning else {
            return;
        };
        let stem = if self.inside { close } else { open };
        let sfx = &marker[stem.len()..marker.len() - 1];
        em.notice(Warning::new(
            "learned-marker-suffix",
            format!(
                "the reasoning markers carry the suffix \"{sfx}\" (learned from {marker}): {open}{sfx}> … {close}{sfx}>"
            ),
        ));
        self.set_suffix(open, close, sfx);
    }

    /// The output starts inside reasoning because the setting says so, not by presumption.
    pub(crate) fn not_presumed(&mut self) {
        self.presumed = false;
    }

    /// Whether the output starts inside reasoning: the emitter must then route the scanner's
    /// text to reasoning from the first byte, when calls count inside reasoning.
    pub(crate) fn begin(&self, em: &mut Emitter) {
        if self.inside && self.calls_inside {
            em.set_text_is_reasoning(true);
        }
        if self.presumed {
            em.presume_reasoning();
        }
    }

    /// Whether the text inside reasoning goes to the scanner (which may find calls in it).
    #[inline(always)]
    fn scanner_reads_reasoning(&self) -> bool {
        self.calls_inside || self.presumed
    }

    fn give_scanner(&mut self, text: &str, scanner: &mut dyn Scanner, em: &mut Emitter) {
        if !text.is_empty() {
            self.fed += text.len();
            scanner.feed(text, em);
        }
    }

    /// Text that holds no marker: reasoning, or the scanner's (which may read reasoning that
    /// holds calls).
    #[inline(always)]
    fn pass(&mut self, text: &str, scanner: &mut dyn Scanner, em: &mut Emitter) {
        if self.inside && !self.scanner_reads_reasoning() {
            em.reasoning(text);
            self.skip(text.len(), em);
        } else {
            self.give_scanner(text, scanner, em);
        }
    }

    /// Text the scanner does not see: reasoning, or a marker.
    fn skip(&mut self, len: usize, em: &mut Emitter) {
        em.skip(self.fed, len);
    }

    fn enter(&mut self, at: usize, em: &mut Emitter) {
        self.inside = true;
        self.seen = true;
        self.block_start = at;
        if self.calls_inside {
            em.set_text_is_reasoning(true);
        }
    }

    /// Reasoning ends at `end`, after a close marker of `marker_len` bytes (none at the end of
    /// the output).
    fn leave(&mut self, end: usize, marker_len: usize, em: &mut Emitter) {
        self.inside = false;
        self.seen = true;
        let presumed = std::mem::take(&mut self.presumed);
        em.end_reasoning();
        em.set_text_is_reasoning(false);
        if presumed && em.end_presumed_reasoning() {
            // A call ended the presumed block before this close marker: the block's span went
            // with the call's, and the marker is format after an answer.
            em.text_span(end - marker_len, end, SpanKind::Markup);
        } else {
            em.text_span(self.block_start, end, SpanKind::Reasoning);
        }
    }

    #[inline(always)]
    pub(crate) fn feed(&mut self, piece: &str, scanner: &mut dyn Scanner, em: &mut Emitter) {
        // The common case, without the machinery of `feed_marked` (a stream arriving a few
        // bytes at a time): nothing held, and no byte of the piece can begin the marker looked
        // for (a close marker begins with the open marker's byte: a test checks every family).
        if self.held.is_empty() && find1(self.marker().as_bytes()[0], piece.as_bytes()).is_none() {
            self.pos += piece.len();
            // What `pass` does, spelled out: through `pass` this path costs about 1% more
            // instructions at 1-byte chunks (cachegrind).
            if self.inside && !self.scanner_reads_reasoning() {
                em.reasoning(piece);
                self.skip(piece.len(), em);
            } else if !piece.is_empty() {
                self.fed += piece.len();
                scanner.feed(piece, em);
            }
            return;
        }
        self.feed_marked(piece, scanner, em);
    }

    /// The bytes that may begin a marker looked for, open or close, stem or whole (the stream
    /// parser's [`Stops`]).
    ///
    /// [`Stops`]: super::stops::Stops
    pub(crate) fn stop_bytes(&self) -> Vec<u8> {
        [&*self.open, &*self.close]
            .into_iter()
            .chain(self.learning.iter().flat_map(|(o, c)| [*o, *c]))
            .filter_map(|m| m.as_bytes().first().copied())
            .collect()
    }

    /// Nothing is held: a piece without [`ReasoningSplitter::stop_bytes`] holds no marker.
    #[inline(always)]
    pub(crate) fn quiet(&self) -> bool {
        self.held.is_empty()
    }

    /// A piece known to hold no byte that may begin a marker, while
    /// [`ReasoningSplitter::quiet`] and the scanner [`Scanner::quiet`]: reasoning, or the
    /// scanner's plain text.
    #[inline(always)]
    pub(crate) fn feed_known_quiet(
        &mut self,
        piece: &str,
        scanner: &mut dyn Scanner,
        em: &mut Emitter,
    ) {
        if self.quiet_to_scanner() {
            self.pass_known_quiet(piece);
            scanner.feed_quiet(piece, em);
        } else {
            self.pos += piece.len();
            em.reasoning(piece);
            self.skip(piece.len(), em);
        }
    }

    /// Whether a piece known to be quiet goes to the scanner (not into reasoning the scanner
    /// never sees).
    #[inline(always)]
    pub(crate) fn quiet_to_scanner(&self) -> bool {
        !self.inside || self.scanner_reads_reasoning()
    }

    /// A piece known to be quiet, going to the scanner ([`ReasoningSplitter::quiet_to_scanner`]):
    /// counted as passed on.
    #[inline(always)]
    pub(crate) fn pass_known_quiet(&mut self, piece: &str) {
        self.pass_len(piece.len());
    }

    /// `len` bytes known to be quiet, going to the scanner, counted at once.
    #[inline(always)]
    pub(crate) fn pass_len(&mut self, len: usize) {
        self.pos += len;
        self.fed += len;
    }

    /// A piece that may hold or begin a marker.
    #[inline(never)]
    fn feed_marked(&mut self, piece: &str, scanner: &mut dyn Scanner, em: &mut Emitter) {
        let base = self.pos - self.held.len();
        self.pos += piece.len();
        let text: Cow<'_, str> = if self.held.is_empty() {
            Cow::Borrowed(piece)
        } else {
            let mut t = std::mem::take(&mut self.held);
            t.push_str(piece);
            Cow::Owned(t)
        };
        // Where the text that may begin a marker starts: it is held for the next piece.
        let mut hold_from = text.len();
        let mut i = 0;
        while i < text.len() {
            let rest = &text[i..];
            match self.find_either(rest, em) {
                (Ok((k, len)), lone) => {
                    let before = &rest[..k];
                    let marker = &rest[k..k + len];
                    let at = base + i + k;
                    let learns = self.learning.is_some() || matches!(self.optional, Some(None));
                    if lone {
                        self.give_scanner(before, scanner, em);
                        if scanner.in_call() || em.call_count() > 0 {
                            // The call's text, or after a call: text.
                            self.seen = true;
                            self.give_scanner(marker, scanner, em);
                        } else {
                            self.seen = true;
                            scanner.cut(em);
                            self.skip(len, em);
                            self.lone_close(at, marker, learns, em);
                        }
                    } else if !self.inside || self.scanner_reads_reasoning() {
                        let inside = self.inside;
                        self.give_scanner(before, scanner, em);
                        if scanner.in_call() {
                            // Inside a call, the marker is the call's own text.
                            self.give_scanner(marker, scanner, em);
                        } else {
                            if learns {
                                self.learn(marker, em);
                            }
                            // What the scanner holds is on the side of the marker it came on
                            // (text before an opening marker, reasoning before a closing one).
                            scanner.cut(em);
                            self.skip(len, em);
                            if inside {
                                self.leave(at + len, len, em);
                            } else {
                                self.enter(at, em);
                            }
                        }
                    } else {
                        em.reasoning(before);
                        if learns {
                            self.learn(marker, em);
                        }
                        self.skip(k + len, em);
                        self.leave(at + len, len, em);
                    }
                    i += k + len;
                }
                (Err(keep), _) => {
                    // The end may begin the marker: hold that much back.
                    self.pass(&rest[..rest.len() - keep], scanner, em);
                    hold_from = text.len() - keep;
                    break;
                }
            }
        }
        match text {
            // The joined text's buffer becomes the held text's again (no allocation per held
            // byte when a stream arrives a byte at a time).
            Cow::Owned(mut t) => {
                t.drain(..hold_from);
                self.held = t;
            }
            Cow::Borrowed(t) => self.held.push_str(&t[hold_from..]),
        }
    }

    /// The text is over: held text is what it is, and reasoning left open ends here.
    pub(crate) fn finish(&mut self, scanner: &mut dyn Scanner, em: &mut Emitter) {
        let held = std::mem::take(&mut self.held);
        if self.inside && !self.scanner_reads_reasoning() {
            em.reasoning(&held);
            self.skip(held.len(), em);
        } else {
            self.give_scanner(&held, scanner, em);
        }
        if self.inside && self.presumed {
            // Presumed reasoning never closed: a call ended it (its span went with the call's),
            // or it was all reasoning.
            scanner.finish(em);
            if em.end_presumed_reasoning() {
                self.inside = false;
                self.presumed = false;
                em.end_reasoning();
                em.set_text_is_reasoning(false);
            } else {
                self.leave(self.pos, 0, em);
            }
        } else if self.inside && self.calls_inside {
            // What the scanner still holds is reasoning too.
            scanner.finish(em);
            self.leave(self.pos, 0, em);
        } else {
            if self.inside {
                self.leave(self.pos, 0, em);
            }
            scanner.finish(em);
        }
    }
}

/// The longest marker suffix read.
const MAX_SUFFIX: usize = 64;

/// Where a marker whose suffix is optional is in `rest`: the stem (from `first`, where its
/// first byte is), then `>`, or `:` SUFFIX `>` (the `known` one once known); or how many bytes
/// at the end may begin one.
fn find_optional(
    rest: &str,
    bytes: &[u8],
    stem: &str,
    known: Option<&str>,
    first: usize,
) -> Result<(usize, usize), usize> {
    let mut from = first;
    loop {
        let Some(k) = find_from(bytes, stem.as_bytes(), from) else {
            return Err(partial_suffix(rest, &format!("{stem}>")));
        };
        let tail = &bytes[k + stem.len()..];
        match tail.first() {
            None => return Err(rest.len() - k),
            Some(b'>') => return Ok((k, stem.len() + 1)),
            Some(b':') => {
                let run = tail[1..]
                    .iter()
                    .take(MAX_SUFFIX + 1)
                    .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
                    .count();
                if run + 1 == tail.len() && run <= MAX_SUFFIX {
                    // The text ends inside the suffix: hold from the stem.
                    return Err(rest.len() - k);
                }
                let sfx = &tail[1..1 + run];
                if (1..=MAX_SUFFIX).contains(&run)
                    && tail[1 + run] == b'>'
                    && known.is_none_or(|s| s.as_bytes() == sfx)
                {
                    return Ok((k, stem.len() + run + 2));
                }
            }
            Some(_) => {}
        }
        from = k + 1;
    }
}

/// The length of the longest end of `text` that is a beginning of `marker` (shorter than it).
fn partial_suffix(text: &str, marker: &str) -> usize {
    let max = (marker.len() - 1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::part::{Collapsed, Part};
    use crate::protocol::span::SpanKind;
    use crate::protocol::spec::Protocol;
    use crate::tool::{ToolDef, ToolSet};

    fn tools() -> ToolSet {
        ToolSet::new(vec![ToolDef::new(
            "write_file",
            "",
            json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
        )])
        .unwrap()
    }

    /// The parts and spans of `text`, checked to be the same at every split point and one byte
    /// at a time.
    fn parse(p: &Protocol, text: &str) -> (Collapsed, Vec<(usize, usize, SpanKind)>) {
        let whole = p.parse_generated(&tools(), text.as_bytes());
        let want = Collapsed::of(&whole.parts);
        let spans = |s: &[crate::protocol::span::Span]| {
            s.iter()
                .map(|s| (s.start, s.end, s.kind))
                .collect::<Vec<_>>()
        };
        for cut in 0..=text.len() {
            let mut parser = p.stream_parser(&tools());
            let mut out = Vec::new();
            parser.push(&text.as_bytes()[..cut], &mut out);
            parser.push(&text.as_bytes()[cut..], &mut out);
            parser.finish(&mut out);
            assert_eq!(Collapsed::of(&out), want, "split at {cut}");
            assert_eq!(spans(parser.spans()), spans(&whole.spans), "split at {cut}");
        }
        let mut parser = p.stream_parser(&tools());
        let mut out = Vec::new();
        for b in text.as_bytes() {
            parser.push(std::slice::from_ref(b), &mut out);
        }
        parser.finish(&mut out);
        assert_eq!(Collapsed::of(&out), want, "one byte at a time");
        (want, spans(&whole.spans))
    }

    fn hermes() -> Protocol {
        Protocol::from_name("hermes").unwrap()
    }

    const CALL: &str =
        r#"<tool_call>{"name": "write_file", "arguments": {"path": "/a"}}</tool_call>"#;

    proptest::proptest! {
        /// A marker is found where it first stands, in a piece or a whole text (a long one
        /// where the marker's first byte keeps coming back is searched another way), from any
        /// point on.
        #[test]
        fn a_marker_is_found_where_it_first_stands(
            before in proptest::collection::vec(
                proptest::sample::select(vec!["<", "<th", "<think", "<thinks>", "think>", "a"]),
                0..80,
            ),
            plain in proptest::prop_oneof![0usize..64, 4000usize..6000],
            after in proptest::collection::vec(
                proptest::sample::select(vec!["<", "<thin", "<think>", "\n", "<think>"]),
                0..8,
            ),
            from in proptest::prop_oneof![0usize..16, 0usize..7000],
        ) {
            let hay = before.concat() + &"x".repeat(plain) + &after.concat();
            let hay = hay.as_bytes();
            let from = from.min(hay.len());
            let naive = (from..hay.len()).find(|&k| hay[k..].starts_with(b"<think>"));
            proptest::prop_assert_eq!(find_from(hay, b"<think>", from), naive);
        }
    }

    #[test]
    fn markup_inside_reasoning_is_reasoning() {
        let text = format!("<think>I could call {CALL} here.</think>Done.{CALL}");
        let (c, spans) = parse(&hermes(), &text);
        assert_eq!(c.reasoning, format!("I could call {CALL} here."));
        assert_eq!(c.text, "Done.");
        assert_eq!(c.calls.len(), 1);
        let think_end = text.find("</think>").unwrap() + "</think>".len();
        assert_eq!(spans[0], (0, think_end, SpanKind::Reasoning));
        assert_eq!(spans[1], (think_end + 5, text.len(), SpanKind::ToolCall));
    }

    #[test]
    fn a_template_that_opens_reasoning_leaves_only_the_close_marker() {
        let p = hermes().with_reasoning_open(Some(true));
        assert!(p.reasoning_open());
        let (c, spans) = parse(&p, "Let me think.\n</think>\nThe answer.");
        assert_eq!(c.reasoning, "Let me think.\n");
        assert_eq!(c.text, "\nThe answer.");
        assert_eq!(spans, [(0, 22, SpanKind::Reasoning)]);
        // Without the setting the same text is all answer, and the marker format.
        let (c, _) = parse(&hermes(), "Let me think.\n</think>\nThe answer.");
        assert_eq!(
            (c.reasoning.as_str(), c.text.as_str()),
            ("", "Let me think.\n\nThe answer.")
        );
    }

    #[test]
    fn a_marker_inside_a_call_is_the_calls_text() {
        let text = r#"<tool_call>{"name": "write_file", "arguments": {"content": "<think>x</think>"}}</tool_call>"#;
        let (c, spans) = parse(&hermes(), text);
        assert_eq!(c.reasoning, "");
        assert_eq!(c.calls[0].1, json!({"content": "<think>x</think>"}));
        assert_eq!(spans, [(0, text.len(), SpanKind::ToolCall)]);
    }

    #[test]
    fn reasoning_cut_off_is_still_reasoning_and_calls_after_it_keep_their_place() {
        let (c, _) = parse(&hermes(), "<think>still going <tool_call>{");
        assert_eq!(c.reasoning, "still going <tool_call>{");
        assert!(c.calls.is_empty() && c.errors.is_empty() && c.text.is_empty());
        let text = format!("A{CALL}B<think>t</think>C<think>u</think>");
        let (c, spans) = parse(&hermes(), &text);
        assert_eq!((c.text.as_str(), c.reasoning.as_str()), ("ABC", "tu"));
        let kinds: Vec<SpanKind> = spans.iter().map(|s| s.2).collect();
        assert_eq!(
            kinds,
            [SpanKind::ToolCall, SpanKind::Reasoning, SpanKind::Reasoning]
        );
    }

    /// Text held because it may begin a delimiter is cut off by a reasoning block: backticks
    /// before `<think>` and a `{` after `</think>` are not one fenced call across it (a property
    /// test found the span of that failed call covering the reasoning).
    #[test]
    fn a_fence_before_reasoning_does_not_join_what_comes_after_it() {
        let text = "```<think>maybe</think>\n{\"name\": \"write_file\",";
        let (c, spans) = parse(&hermes(), text);
        assert_eq!(c.reasoning, "maybe");
        let think_end = text.find("</think>").unwrap() + "</think>".len();
        assert_eq!(spans[0], (3, think_end, SpanKind::Reasoning));
        // The unfinished call after it is reported from its own `{`, the backticks are text.
        let brace = text.find('{').unwrap();
        assert_eq!(spans[1], (brace, text.len(), SpanKind::Malformed));
        assert!(c.text.starts_with("```"), "{:?}", c.text);
    }

    #[test]
    fn generate_keeps_reasoning_apart_and_in_order() {
        let parsed =
            hermes().parse_generated(&tools(), format!("<think>a</think>b{CALL}").as_bytes());
        let kinds: Vec<&str> = parsed.parts.iter().map(Part::type_name).collect();
        assert_eq!(kinds, ["reasoning", "text", "tool-call"]);
    }

    #[test]
    fn the_setting_round_trips_through_a_session() {
        let p = hermes().with_reasoning_open(Some(true));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["reasoningOpen"], true);
        assert_eq!(serde_json::from_value::<Protocol>(json).unwrap(), p);
        // No setting (the family's default) is not written; a setting equal to the default is
        // (it is a fact, where the default is a presumption).
        let json = serde_json::to_value(hermes().with_reasoning_open(None)).unwrap();
        assert!(json.get("reasoningOpen").is_none());
        let p = hermes().with_reasoning_open(Some(false));
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["reasoningOpen"], false);
        assert_eq!(serde_json::from_value::<Protocol>(json).unwrap(), p);
        // A protocol without markers never starts inside reasoning.
        let gemma = Protocol::from_name("gemma")
            .unwrap()
            .with_reasoning_open(Some(true));
        assert!(!gemma.reasoning_open());
    }

    #[test]
    fn every_familys_close_marker_begins_with_its_open_markers_byte() {
        // The splitter's fast path looks for the open marker's first byte only, also while a
        // close marker without an open one is looked for.
        for p in Protocol::all() {
            if let Some((open, close)) = p.reasoning().markers {
                assert_eq!(open.as_bytes()[0], close.as_bytes()[0], "{}", p.name());
            }
        }
    }

    #[test]
    fn a_close_marker_without_an_open_one_is_format_and_a_notice() {
        let text = format!("I should look.</think>Sure.{CALL}");
        let (c, spans) = parse(&hermes(), &text);
        assert_eq!(c.text, "I should look.Sure.");
        assert_eq!(c.calls.len(), 1);
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        assert!(spans.contains(&(14, 22, SpanKind::Reasoning)), "{spans:?}");
        let parsed = hermes().parse_generated(&tools(), text.as_bytes());
        // A notice: the stream lint does not count it.
        let notices: Vec<&Part> = parsed
            .parts
            .iter()
            .filter(|p| matches!(p, Part::Warning(w) if w.is_notice()))
            .collect();
        assert_eq!(notices.len(), 1, "{:?}", parsed.parts);
        // Only before any call: after one, a close marker is text.
        let (c, _) = parse(&hermes(), &format!("{CALL}</think>x"));
        assert_eq!((c.calls.len(), c.text.as_str()), (1, "</think>x"));
        // Only before any marker: after a reasoning block, a close marker is text.
        let (c, _) = parse(&hermes(), "<think>a</think>b</think>c");
        assert_eq!((c.reasoning.as_str(), c.text.as_str()), ("a", "b</think>c"));
        // Inside a call it is the call's.
        let (c, _) = parse(
            &hermes(),
            "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"content\": \"</think>\"}}</tool_call>",
        );
        assert_eq!(c.calls.len(), 1);
    }

    #[test]
    fn only_a_beginning_of_the_marker_is_held() {
        assert_eq!(partial_suffix("abc <th", "<think>"), 3);
        assert_eq!(partial_suffix("abc <", "<think>"), 1);
        assert_eq!(partial_suffix("abc", "<think>"), 0);
        assert_eq!(partial_suffix("<think", "<think>"), 6);
        assert_eq!(partial_suffix("é", "<think>"), 0);
        assert_eq!(partial_suffix("x｜", "<｜end｜>"), 0);
    }
}
