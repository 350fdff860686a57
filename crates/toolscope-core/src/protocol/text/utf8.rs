//! Incremental UTF-8 decoding of byte chunks that may split a character anywhere.
//!
//! Invalid bytes become U+FFFD (as `String::from_utf8_lossy` would do to the whole text, so the
//! result does not depend on the chunking); the caller is told where each replacement happened.

/// Every ASCII character, in order: `&ASCII[b..b + 1]` is the one-character string of byte `b`.
const ASCII: &str = "\u{0}\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}\u{8}\t\n\u{b}\u{c}\r\u{e}\u{f}\
    \u{10}\u{11}\u{12}\u{13}\u{14}\u{15}\u{16}\u{17}\u{18}\u{19}\u{1a}\u{1b}\u{1c}\u{1d}\u{1e}\u{1f}\
    \u{20}!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\u{7f}";

/// Decodes a stream of byte chunks into `&str` pieces that always end on character boundaries.
#[derive(Default)]
pub(crate) struct Utf8Decoder {
    carry: Vec<u8>,
    offset: usize,
}

impl Utf8Decoder {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The common case, for the caller to take inline: nothing carried over and the whole
    /// chunk valid (one ASCII byte, a stream arriving byte by byte, comes from a static table
    /// with nothing to validate). `None`: use [`Utf8Decoder::decode`], which reads it.
    #[inline(always)]
    pub(crate) fn whole<'a>(&mut self, chunk: &'a [u8]) -> Option<&'a str> {
        if !self.carry.is_empty() {
            return None;
        }
        let s = match chunk {
            [b] if *b < 0x80 => {
                let i = *b as usize;
                &ASCII[i..i + 1]
            }
            // Vectorised past a few bytes: model output is rarely all ASCII, where the
            // standard check goes a character at a time (a third of the time at 64-byte chunks).
            _ if chunk.len() >= 16 => simdutf8::basic::from_utf8(chunk).ok()?,
            _ => std::str::from_utf8(chunk).ok()?,
        };
        self.offset += chunk.len();
        Some(s)
    }

    /// Whether no character is split across the chunk before.
    #[inline(always)]
    pub(crate) fn carries_nothing(&self) -> bool {
        self.carry.is_empty()
    }

    /// A chunk of text, when [`Utf8Decoder::carries_nothing`]: counted as read.
    #[inline(always)]
    pub(crate) fn pass(&mut self, len: usize) {
        debug_assert!(self.carry.is_empty());
        self.offset += len;
    }

    /// A chunk that is text already (valid UTF-8 by its type): itself, with nothing to
    /// validate, when no character is split across the chunk before it; `None` otherwise (use
    /// [`Utf8Decoder::decode`] on its bytes, which completes or replaces the split one).
    #[inline(always)]
    pub(crate) fn text<'a>(&mut self, chunk: &'a str) -> Option<&'a str> {
        if !self.carry.is_empty() {
            return None;
        }
        self.offset += chunk.len();
        Some(chunk)
    }

    /// Decodes `chunk`, calling `f` with each piece in order; a replacement character for
    /// invalid bytes comes with the byte offset of those bytes.
    pub(crate) fn decode(&mut self, chunk: &[u8], mut f: impl FnMut(&str, Option<usize>)) {
        // One ASCII byte (a stream arriving byte by byte): a slice of a static table, with
        // nothing to validate.
        if let [b] = chunk
            && *b < 0x80
            && self.carry.is_empty()
        {
            let i = *b as usize;
            self.offset += 1;
            f(&ASCII[i..i + 1], None);
            return;
        }
        // The common case, inline: nothing carried over and the whole chunk valid.
        if self.carry.is_empty()
            && let Ok(s) = std::str::from_utf8(chunk)
        {
            self.offset += chunk.len();
            if !s.is_empty() {
                f(s, None);
            }
            return;
        }
        self.decode_dyn(chunk, &mut f)
    }

    fn decode_dyn(&mut self, chunk: &[u8], f: &mut dyn FnMut(&str, Option<usize>)) {
        let mut rest = chunk;
        // Complete the character split by the previous chunk, byte by byte, so that an invalid
        // continuation is found exactly where a whole-text decode would find it.
        while !self.carry.is_empty() && !rest.is_empty() {
            self.carry.push(rest[0]);
            rest = &rest[1..];
            match std::str::from_utf8(&self.carry) {
                Ok(s) => {
                    f(s, None);
                    self.offset += self.carry.len();
                    self.carry.clear();
                }
                Err(e) => {
                    if let Some(bad) = e.error_len() {
                        // Replace what is invalid; the bytes after it are read again (they may
                        // start a new split character, which the loop then goes on completing).
                        let carried = std::mem::take(&mut self.carry);
                        self.invalid(f);
                        self.offset += bad;
                        self.decode_dyn(&carried[bad..], f);
                    }
                }
            }
        }
        if !self.carry.is_empty() {
            return;
        }
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    if !s.is_empty() {
                        f(s, None);
                    }
                    self.offset += rest.len();
                    return;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    if valid > 0 {
                        // The prefix was just validated.
                        f(
                            std::str::from_utf8(&rest[..valid]).unwrap_or_default(),
                            None,
                        );
                        self.offset += valid;
                    }
                    match e.error_len() {
                        Some(bad) => {
                            self.invalid(f);
                            self.offset += bad;
                            rest = &rest[valid + bad..];
                        }
                        None => {
                            self.carry.extend_from_slice(&rest[valid..]);
                            return;
                        }
                    }
                }
            }
        }
    }

    fn invalid(&mut self, f: &mut dyn FnMut(&str, Option<usize>)) {
        f("\u{fffd}", Some(self.offset));
    }

    /// The input has ended: an incomplete character becomes U+FFFD.
    pub(crate) fn finish(&mut self, mut f: impl FnMut(&str, Option<usize>)) {
        if !self.carry.is_empty() {
            self.carry.clear();
            self.invalid(&mut f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn decode_in(bytes: &[u8], sizes: &[usize]) -> String {
        let mut d = Utf8Decoder::new();
        let mut out = String::new();
        let mut rest = bytes;
        let mut k = 0;
        while !rest.is_empty() {
            let n = sizes[k % sizes.len()].clamp(1, rest.len());
            d.decode(&rest[..n], |s, _| out.push_str(s));
            rest = &rest[n..];
            k += 1;
        }
        d.finish(|s, _| out.push_str(s));
        out
    }

    #[test]
    fn the_ascii_table_holds_every_ascii_character_in_order() {
        assert_eq!(ASCII.len(), 128);
        for (i, b) in ASCII.bytes().enumerate() {
            assert_eq!(b as usize, i);
        }
    }

    #[test]
    fn split_characters_are_joined() {
        let text = "aé😀z";
        assert_eq!(decode_in(text.as_bytes(), &[1]), text);
        assert_eq!(decode_in(text.as_bytes(), &[2, 3]), text);
    }

    #[test]
    fn invalid_bytes_are_replaced_where_they_are() {
        let bytes = b"a\xffb\xe2\x82c\xf0";
        let mut d = Utf8Decoder::new();
        let mut out = String::new();
        let mut at = Vec::new();
        d.decode(bytes, |s, bad| {
            out.push_str(s);
            at.extend(bad);
        });
        d.finish(|s, bad| {
            out.push_str(s);
            at.extend(bad);
        });
        assert_eq!(out, String::from_utf8_lossy(bytes));
        assert_eq!(at, [1, 3, 6]);
    }

    proptest! {
        #[test]
        fn any_bytes_any_chunking_decode_like_from_utf8_lossy(
            bytes in prop::collection::vec(prop_oneof![any::<u8>(), Just(0xe2u8), Just(0x82u8), Just(0xacu8), Just(b'a')], 0..40),
            sizes in prop::collection::vec(1usize..5, 1..5),
        ) {
            prop_assert_eq!(decode_in(&bytes, &sizes), String::from_utf8_lossy(&bytes).into_owned());
        }
    }
}
