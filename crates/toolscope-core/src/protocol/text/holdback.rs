//! What every scanner needs between chunks: the text it held back because it may be the start of
//! a delimiter (joined to the next chunk), the absolute offset of each chunk, and element values
//! stripped of their separating newlines as they stream.

use std::borrow::Cow;

use super::emit::Emitter;
use super::scanner::Scanner;

/// Held-back text and the offset of the input.
#[derive(Default)]
pub(crate) struct Holdback {
    /// Offset of the next byte to arrive.
    pos: usize,
    held: String,
    held_start: usize,
    /// The buffer of the text last joined, kept for the next hold (see [`Holdback::recycle`]):
    /// a stream arriving a byte at a time inside a tag then allocates nothing per byte.
    spare: String,
}

impl Holdback {
    /// The text to scan now (what was held, then `piece`) and the offset of its first byte.
    pub(crate) fn join<'a>(&mut self, piece: &'a str) -> (Cow<'a, str>, usize) {
        let start = self.pos;
        self.pos += piece.len();
        if self.held.is_empty() {
            (Cow::Borrowed(piece), start)
        } else {
            let spare = std::mem::take(&mut self.spare);
            let mut joined = std::mem::replace(&mut self.held, spare);
            joined.push_str(piece);
            (Cow::Owned(joined), self.held_start)
        }
    }

    /// The text [`Holdback::join`] gave, once scanned: its buffer is kept for the next hold.
    pub(crate) fn recycle(&mut self, text: Cow<'_, str>) {
        if let Cow::Owned(mut t) = text {
            t.clear();
            self.spare = t;
        }
    }

    /// Holds `text[j..]` (which starts at offset `base + j`) for the next chunk; returns the end
    /// of `text`, where scanning stops.
    pub(crate) fn hold(&mut self, text: &str, j: usize, base: usize) -> usize {
        self.held.push_str(&text[j..]);
        self.held_start = base + j;
        text.len()
    }

    /// The offset of the held text's first byte.
    pub(crate) fn held_start(&self) -> usize {
        if self.held.is_empty() {
            self.pos
        } else {
            self.held_start
        }
    }

    /// Whether nothing is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// What is held.
    pub(crate) fn text(&self) -> &str {
        &self.held
    }

    /// How many bytes are held.
    pub(crate) fn len(&self) -> usize {
        self.held.len()
    }

    /// `piece` arrives and is held after what is, unread (the scanner knows it decides
    /// nothing yet).
    pub(crate) fn wait(&mut self, piece: &str) {
        self.held.push_str(piece);
        self.pos += piece.len();
    }

    /// The fast path of the tag scanners: a `piece` read as plain text, when nothing is held and
    /// it has no `<` that could start a tag. Returns whether it was taken.
    #[inline]
    pub(crate) fn pass_plain_text(&mut self, piece: &str, em: &mut super::emit::Emitter) -> bool {
        if !self.held.is_empty() || crate::json::lexer::find1(b'<', piece.as_bytes()).is_some() {
            return false;
        }
        self.advance(piece.len());
        em.text(piece);
        true
    }

    /// `len` bytes were read without going through [`Holdback::join`].
    pub(crate) fn advance(&mut self, len: usize) {
        self.pos += len;
    }

    /// The held text, at the end of the input.
    pub(crate) fn take(&mut self) -> String {
        std::mem::take(&mut self.held)
    }

    /// Offset of the next byte to arrive.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Rewinds the offset to read text again from `pos` (see the JSON scanner's re-feed).
    pub(crate) fn rewind(&mut self, pos: usize) {
        self.pos = pos;
    }
}

/// An element's value as it streams, byte-exact but for the separators the XML-like formats
/// define: the one newline right after the opening tag and the one right before the closing tag
/// (`\n`, or `\r\n`). Indentation, blank lines and further newlines are content. A newline at
/// the end is held back until more content follows it (then it is content) or the element closes
/// (then it was the separator), so what goes out never has to be taken back.
#[derive(Default)]
pub(crate) struct Separated {
    lead: Lead,
    /// A trailing `\n`, `\r\n` or `\r` held back.
    tail: String,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum Lead {
    /// Nothing of the value seen yet.
    #[default]
    Start,
    /// A `\r` first: the separator if a `\n` follows.
    Cr,
    /// Past where the opening separator could be.
    Past,
}

impl Separated {
    /// Raw value text (after entity decoding, for a format that has entities).
    #[inline]
    pub(crate) fn push(&mut self, s: &str, mut out: impl FnMut(&str)) {
        // The common case, a piece in the middle of a value: nothing held, no newline at its
        // end, so it is content as it is.
        if self.lead == Lead::Past
            && self.tail.is_empty()
            && s.as_bytes()
                .last()
                .is_some_and(|&b| b != b'\n' && b != b'\r')
        {
            out(s);
            return;
        }
        let mut s = s;
        if s.is_empty() {
            return;
        }
        match self.lead {
            Lead::Start => {
                self.lead = Lead::Past;
                if let Some(rest) = s.strip_prefix('\n') {
                    s = rest;
                } else if s == "\r" {
                    self.lead = Lead::Cr;
                    return;
                } else if let Some(rest) = s.strip_prefix("\r\n") {
                    s = rest;
                }
            }
            Lead::Cr => {
                self.lead = Lead::Past;
                match s.strip_prefix('\n') {
                    Some(rest) => s = rest,
                    None => self.tail.push('\r'),
                }
            }
            Lead::Past => {}
        }
        if s.is_empty() {
            return;
        }
        if !self.tail.is_empty() {
            if self.tail == "\r" && s == "\n" {
                self.tail.push('\n');
                return;
            }
            out(&self.tail);
            self.tail.clear();
        }
        let keep = if s.ends_with("\r\n") {
            2
        } else if s.ends_with(['\n', '\r']) {
            1
        } else {
            0
        };
        let (now, later) = s.split_at(s.len() - keep);
        if !now.is_empty() {
            out(now);
        }
        self.tail.push_str(later);
    }

    /// Content that is not raw text (a CDATA section's text, a decoded character reference):
    /// the separators cannot be in it, so it goes out whole.
    #[inline]
    pub(crate) fn push_verbatim(&mut self, s: &str, mut out: impl FnMut(&str)) {
        self.mark();
        if !self.tail.is_empty() {
            out(&self.tail);
            self.tail.clear();
        }
        if !s.is_empty() {
            out(s);
        }
    }

    /// Markup that is part of the value but not text (a CDATA marker) was seen: the opening
    /// separator can no longer come, and what is held is content.
    pub(crate) fn mark(&mut self) {
        if self.lead == Lead::Cr {
            self.tail.insert(0, '\r');
        }
        self.lead = Lead::Past;
    }

    /// The element closes: a held newline was the closing separator; a lone `\r` is content.
    pub(crate) fn close(&mut self, mut out: impl FnMut(&str)) {
        if self.lead == Lead::Cr {
            out("\r");
        }
        self.lead = Lead::Past;
        if self.tail == "\r" {
            out("\r");
        }
        self.tail.clear();
    }
}

/// A complete value without its separators (see [`Separated`]).
pub(crate) fn strip_separators(s: &str) -> &str {
    let s = s
        .strip_prefix('\n')
        .or_else(|| s.strip_prefix("\r\n"))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

/// An engine that reads text in steps from its state, holding back what may begin a marker:
/// [`drive`] feeds it a piece.
pub(crate) trait Steps {
    /// Reads on from `i` in `text` (whose first byte is at the stream offset `base`) in the
    /// engine's state, and returns where it stopped: the end of `text` once it read it all or
    /// held the rest back.
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize;

    /// What the engine holds back.
    fn held(&mut self) -> &mut Holdback;

    /// `text`, which starts at `base`, has been read (what was held, then the piece).
    fn read(&mut self, _text: &str, _base: usize) {}
}

/// Feeds `piece` to `engine`: joined to what it held, read a step at a time to its end.
#[inline]
pub(crate) fn drive<S: Steps>(engine: &mut S, piece: &str, em: &mut Emitter) {
    let (joined, base) = engine.held().join(piece);
    let text = joined.as_ref();
    let mut i = 0;
    while i < text.len() {
        i = engine.step(text, i, base, em);
    }
    engine.read(text, base);
    engine.held().recycle(joined);
}

/// The end of the text, for an engine that holds text back to look ahead: what `held` holds is
/// read again (`at_end` tells the engine that nothing follows, then it is fed again from where
/// it began), and what the engine holds after that is handed back for it to close with.
pub(crate) fn read_again_at_end<S: Scanner + ?Sized>(
    engine: &mut S,
    held: fn(&mut S) -> &mut Holdback,
    at_end: fn(&mut S),
    em: &mut Emitter,
) -> String {
    let h = held(engine);
    let start = h.held_start();
    let hold = h.take();
    if !hold.is_empty() {
        at_end(engine);
        held(engine).rewind(start);
        engine.feed(&hold, em);
    }
    held(engine).take()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushes `pieces` then closes; the value as it went out.
    fn separated(pieces: &[&str]) -> String {
        let mut v = Separated::default();
        let mut out = String::new();
        for p in pieces {
            v.push(p, |s| out.push_str(s));
        }
        v.close(|s| out.push_str(s));
        out
    }

    #[test]
    fn only_the_separating_newlines_are_dropped() {
        let cases: [(&str, &str); 12] = [
            ("\n    x = 1\n", "    x = 1"),
            ("\n    x = 1\n\n", "    x = 1\n"),
            ("x", "x"),
            ("  x  ", "  x  "),
            ("\n", ""),
            ("\n\n", ""),
            ("\n\n\n", "\n"),
            ("\r\n a \r\n", " a "),
            ("\r", "\r"),
            ("a\r", "a\r"),
            ("\n\nblank first\n", "\nblank first"),
            ("", ""),
        ];
        for (value, want) in cases {
            assert_eq!(separated(&[value]), want, "{value:?} whole");
            assert_eq!(strip_separators(value), want, "{value:?} stripped");
            let bytes: Vec<String> = value.chars().map(String::from).collect();
            let pieces: Vec<&str> = bytes.iter().map(String::as_str).collect();
            assert_eq!(separated(&pieces), want, "{value:?} a byte at a time");
        }
    }

    #[test]
    fn verbatim_content_keeps_its_newlines() {
        let mut v = Separated::default();
        let mut out = String::new();
        v.push_verbatim("\ncdata\n", |s| out.push_str(s));
        v.push("\n", |s| out.push_str(s));
        v.close(|s| out.push_str(s));
        assert_eq!(out, "\ncdata\n");
    }

    #[test]
    fn held_text_joins_the_next_piece_at_its_offset() {
        let mut h = Holdback::default();
        let (text, base) = h.join("abc<to");
        assert_eq!((text.as_ref(), base), ("abc<to", 0));
        assert_eq!(h.hold(&text, 3, base), 6);
        let (text, base) = h.join("ol>x");
        assert_eq!((text.as_ref(), base), ("<tool>x", 3));
        assert_eq!(h.pos(), 10);
    }
}
