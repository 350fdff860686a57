//! A family's end-of-turn and stop tokens (`<|im_end|>`, `<｜end▁of▁sentence｜>`, gemma4's
//! `<turn|>`), taken out of the output before the reasoning splitter and the scanner see it: they
//! are format, not text. They stay in the raw output, where a `Markup` span covers each one, and
//! the spans of everything after them keep the offsets of the whole text.
//!
//! A token split across chunks is held back only while the chunk's end could still be its
//! beginning, so the cost stays linear and every chunking gives the same result.
//!
//! A family may also have lead tokens: the assistant prefix of its template that a model repeats
//! at the start of its answer (Hunyuan's `助手：`). They are format only where the output begins
//! (after whitespace), and text anywhere else.

use super::emit::Emitter;
use crate::protocol::span::SpanKind;
use memchr::{memchr, memchr2, memchr3};

pub(crate) struct EndTokens {
    tokens: &'static [&'static str],
    /// The lead tokens, format only before anything but whitespace passed.
    lead: &'static [&'static str],
    /// Nothing but whitespace has passed yet: a lead token is still format.
    leading: bool,
    /// The first bytes of the tokens, for finding candidates.
    firsts: Vec<u8>,
    /// The same bytes as a table, for the few bytes of a stream's piece (as the detector's).
    first_set: [bool; 256],
    /// Text that may begin a token, held for the next piece.
    held: String,
    /// Offset in the whole decoded text of the next byte to arrive.
    pos: usize,
    /// Bytes passed on so far (the coordinates of what reads the text after this filter).
    passed: usize,
}

impl EndTokens {
    /// A filter of `tokens`, and of `lead` at the output's start; `None` when there are none.
    pub(crate) fn new(
        tokens: &'static [&'static str],
        lead: &'static [&'static str],
    ) -> Option<Self> {
        let mut firsts: Vec<u8> = tokens
            .iter()
            .chain(lead)
            .filter_map(|t| t.as_bytes().first().copied())
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        let mut first_set = [false; 256];
        for &b in &firsts {
            first_set[usize::from(b)] = true;
        }
        (!firsts.is_empty()).then(|| EndTokens {
            tokens,
            lead,
            leading: !lead.is_empty(),
            firsts,
            first_set,
            held: String::new(),
            pos: 0,
            passed: 0,
        })
    }

    #[inline]
    fn may_begin(&self, b: u8) -> bool {
        self.first_set[usize::from(b)]
    }

    /// The offset in `bytes` of the first byte that may begin a token: searched, but looked up
    /// byte by byte in a few bytes (a stream's small pieces), where a search costs more.
    /// (Inlined always: in the parser's path for a piece inside a call it once went out of
    /// line, about 20 instructions a piece more.)
    #[inline(always)]
    fn next_first(&self, bytes: &[u8]) -> Option<usize> {
        if bytes.len() < 16 {
            return bytes.iter().position(|&b| self.may_begin(b));
        }
        match self.firsts.as_slice() {
            [a] => memchr(*a, bytes),
            [a, b] => memchr2(*a, *b, bytes),
            [a, b, c] => memchr3(*a, *b, *c, bytes),
            _ => bytes.iter().position(|b| self.may_begin(*b)),
        }
    }

    /// The next piece of text: `pass` receives what is not a token, in order.
    #[cfg(test)]
    pub(crate) fn feed(
        &mut self,
        piece: &str,
        em: &mut Emitter,
        mut pass: impl FnMut(&str, &mut Emitter),
    ) {
        if self.pass_quiet(piece) {
            if !piece.is_empty() {
                pass(piece, em);
            }
            return;
        }
        self.feed_marked(piece, em, pass);
    }

    /// The path of nearly every piece of a stream: nothing is held and no byte of `piece` may
    /// begin a token, so all of it passes on as it is. Counts it as passed (what
    /// [`EndTokens::give`] does) and answers `true`; on `false` nothing changed, and the piece
    /// is [`EndTokens::feed_marked`]'s. The caller passes the piece on itself: inline, with no
    /// closure between the filters on this path.
    #[inline(always)]
    pub(crate) fn pass_quiet(&mut self, piece: &str) -> bool {
        if !self.quiet() || self.next_first(piece.as_bytes()).is_some() {
            return false;
        }
        self.pass_known_quiet(piece);
        true
    }

    /// The bytes that may begin a token (the stream parser's [`Stops`]).
    ///
    /// [`Stops`]: super::stops::Stops
    pub(crate) fn stop_bytes(&self) -> &[u8] {
        &self.firsts
    }

    /// Nothing is held: a piece without [`EndTokens::stop_bytes`] passes on whole.
    #[inline(always)]
    pub(crate) fn quiet(&self) -> bool {
        self.held.is_empty()
    }

    /// A piece known to hold no byte that may begin a token, while [`EndTokens::quiet`]:
    /// counted as passed on.
    #[inline(always)]
    pub(crate) fn pass_known_quiet(&mut self, piece: &str) {
        self.pos += piece.len();
        self.count_passed(piece);
    }

    /// Whether quiet text passed on is only counted: no lead token can come any more (the
    /// stream parser's run of direct pieces, counted at its end).
    #[inline(always)]
    pub(crate) fn counts_by_length(&self) -> bool {
        !self.leading
    }

    /// `len` bytes of quiet text passed on, counted at once
    /// ([`EndTokens::counts_by_length`]).
    pub(crate) fn pass_len(&mut self, len: usize) {
        debug_assert!(self.quiet() && !self.leading);
        self.pos += len;
        self.passed += len;
    }

    /// `text` was passed on: counted, and whether only whitespace has passed so far.
    #[inline(always)]
    fn count_passed(&mut self, text: &str) {
        self.passed += text.len();
        if self.leading && !text.is_empty() {
            self.leading = text.trim().is_empty();
        }
    }

    /// A piece that holds a byte that may begin a token, or comes after held text.
    #[inline(never)]
    pub(crate) fn feed_marked(
        &mut self,
        piece: &str,
        em: &mut Emitter,
        mut pass: impl FnMut(&str, &mut Emitter),
    ) {
        if self.held.is_empty() {
            let first = self.next_first(piece.as_bytes()).unwrap_or(piece.len());
            // Nothing held: the piece is read where it is (a whole text is not copied).
            let base = self.pos;
            self.pos += piece.len();
            self.read(piece, first, base, false, em, &mut pass);
            return;
        }
        let mut joined = std::mem::take(&mut self.held);
        let base = self.pos - joined.len();
        self.pos += piece.len();
        joined.push_str(piece);
        self.read(&joined, 0, base, false, em, &mut pass);
    }

    /// Reads `text` (at offset `base` of the whole text) from its first possible token at `i`.
    fn read(
        &mut self,
        text: &str,
        mut i: usize,
        base: usize,
        at_end: bool,
        em: &mut Emitter,
        pass: &mut impl FnMut(&str, &mut Emitter),
    ) {
        let bytes = text.as_bytes();
        // Where the text not yet passed on begins.
        let mut from = 0;
        while i < bytes.len() {
            if !self.may_begin(bytes[i]) {
                // Jump to the next byte that may begin a token.
                match self.next_first(&bytes[i..]) {
                    Some(p) => i += p,
                    None => break,
                }
            }
            let rest = &text[i..];
            // A lead token counts only where nothing but whitespace came before it.
            let lead: &[&str] = if self.leading && text[from..i].trim().is_empty() {
                self.lead
            } else {
                &[]
            };
            // The end of the piece may begin a longer token than one it holds whole (GigaChat's
            // `<|message_sep|>\n\n` and `<|message_sep|>`): held for the next piece.
            let longer = |t: &&&str| t.len() > rest.len() && t.starts_with(rest);
            if !at_end && self.tokens.iter().chain(lead).any(|t| longer(&t)) {
                self.give(&text[from..i], em, pass);
                self.held.push_str(rest);
                return;
            }
            // The longest token here.
            if let Some(token) = self
                .tokens
                .iter()
                .chain(lead)
                .filter(|t| rest.starts_with(**t))
                .max_by_key(|t| t.len())
            {
                self.give(&text[from..i], em, pass);
                em.remove(self.passed, token.len());
                em.text_span_whole(base + i, base + i + token.len(), SpanKind::Markup);
                i += token.len();
                from = i;
                continue;
            }
            i += 1;
        }
        self.give(&text[from..], em, pass);
    }

    fn give(&mut self, text: &str, em: &mut Emitter, pass: &mut impl FnMut(&str, &mut Emitter)) {
        if !text.is_empty() {
            self.count_passed(text);
            pass(text, em);
        }
    }

    /// The text is over: what was held is read once more, as no more text will come (a token
    /// it holds whole is one; the rest is text).
    pub(crate) fn finish(&mut self, em: &mut Emitter, mut pass: impl FnMut(&str, &mut Emitter)) {
        let held = std::mem::take(&mut self.held);
        let base = self.pos - held.len();
        self.read(&held, 0, base, true, em, &mut pass);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tokens: &'static [&'static str], chunks: &[&str]) -> (String, Vec<(usize, usize)>) {
        run_led(tokens, &[], chunks)
    }

    fn run_led(
        tokens: &'static [&'static str],
        lead: &'static [&'static str],
        chunks: &[&str],
    ) -> (String, Vec<(usize, usize)>) {
        let mut f = EndTokens::new(tokens, lead).unwrap();
        let mut em = Emitter::new();
        let mut out = String::new();
        for c in chunks {
            f.feed(c, &mut em, |s, _| out.push_str(s));
        }
        f.finish(&mut em, |s, _| out.push_str(s));
        let spans = em.spans().iter().map(|s| (s.start, s.end)).collect();
        (out, spans)
    }

    #[test]
    fn tokens_are_taken_out_whole_or_split() {
        const T: &[&str] = &["<|im_end|>", "<|endoftext|>"];
        let whole = run(T, &["Hi.<|im_end|>\n<|endoftext|>"]);
        assert_eq!(whole, ("Hi.\n".to_string(), vec![(3, 13), (14, 27)]));
        let text = "Hi.<|im_end|>\n<|endoftext|>";
        let bytes: Vec<String> = text.chars().map(String::from).collect();
        let split: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(run(T, &split), whole);
    }

    #[test]
    fn the_longest_token_is_taken_whatever_the_split() {
        // GigaChat's separator is one token with its two newlines; alone, it is one too.
        const T: &[&str] = &["<|message_sep|>", "<|message_sep|>\n\n"];
        for text in [
            "Hi.<|message_sep|>\n\nYes",
            "Hi.<|message_sep|>\nYes",
            "Hi.<|message_sep|>\n",
        ] {
            let whole = run(T, &[text]);
            for cut in 0..=text.len() {
                assert_eq!(
                    run(T, &[&text[..cut], &text[cut..]]),
                    whole,
                    "{text:?} at {cut}"
                );
            }
        }
        assert_eq!(run(T, &["Hi.<|message_sep|>\n\nYes"]).0, "Hi.Yes");
        assert_eq!(run(T, &["Hi.<|message_sep|>\nYes"]).0, "Hi.\nYes");
        assert_eq!(run(T, &["Hi.<|message_sep|>\n"]).0, "Hi.\n");
    }

    #[test]
    fn what_only_looks_like_a_token_is_text() {
        const T: &[&str] = &["<|im_end|>"];
        assert_eq!(
            run(T, &["a <|im_", "start|> b <|im_en"]).0,
            "a <|im_start|> b <|im_en"
        );
        assert_eq!(run(T, &["<", "|", "x"]).0, "<|x");
    }

    #[test]
    fn a_lead_token_is_format_only_where_the_output_begins() {
        const T: &[&str] = &["<|eos|>"];
        const L: &[&str] = &["助手："];
        let text = " 助手：你好，助手：在这里。<|eos|>";
        let whole = run_led(T, L, &[text]);
        let lead = " ".len();
        assert_eq!(
            whole,
            (
                " 你好，助手：在这里。".to_string(),
                vec![(lead, lead + "助手：".len()), (text.len() - 7, text.len())]
            )
        );
        let chars: Vec<String> = text.chars().map(String::from).collect();
        let split: Vec<&str> = chars.iter().map(String::as_str).collect();
        assert_eq!(run_led(T, L, &split), whole);
        assert_eq!(run_led(T, L, &["好", "助手：x"]).0, "好助手：x");
        assert_eq!(run_led(T, L, &["助", "手"]).0, "助手");
        // Text without a token's first byte passes on its own way, and ends the lead too.
        assert_eq!(run_led(T, L, &[">", "助手："]).0, ">助手：");
    }
}
