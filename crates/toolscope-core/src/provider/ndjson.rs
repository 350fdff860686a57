//! An incremental newline-delimited JSON splitter over raw bytes.
//!
//! Ollama streams `/api/chat` as one JSON object per line. Like [`super::sse`], this buffers only
//! the unfinished line, so chunks may split lines or UTF-8 sequences anywhere. `\r\n` endings and
//! blank lines are tolerated; parsing each line is the provider's business.

/// Splits a streamed body into lines; holds the unfinished line between pushes.
#[derive(Debug)]
pub struct NdjsonDecoder {
    line: Vec<u8>,
    /// The most bytes one line may hold.
    limit: usize,
    /// Set once a line passed the limit: its first bytes and how many had arrived.
    oversize: Option<(Vec<u8>, usize)>,
}

impl Default for NdjsonDecoder {
    fn default() -> Self {
        NdjsonDecoder {
            line: Vec::new(),
            limit: usize::MAX,
            oversize: None,
        }
    }
}

impl NdjsonDecoder {
    /// A decoder at the start of a body.
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that holds at most `limit` bytes of one line: a longer line stops the
    /// splitting (see [`NdjsonDecoder::oversize`]).
    pub fn with_limit(limit: usize) -> Self {
        NdjsonDecoder {
            limit,
            ..Self::default()
        }
    }

    /// Once a line passed the limit: its first bytes (at most
    /// 4,096) and how many had arrived when it did.
    pub fn oversize(&self) -> Option<(&[u8], usize)> {
        self.oversize.as_ref().map(|(h, n)| (h.as_slice(), *n))
    }

    fn over_limit(&mut self) -> bool {
        if self.line.len() <= self.limit {
            return false;
        }
        let held = self.line.len();
        let mut head = std::mem::take(&mut self.line);
        head.truncate(super::sse::OVERSIZE_HEAD);
        head.shrink_to_fit();
        self.oversize = Some((head, held));
        true
    }

    /// Feeds the next piece of the body; appends every complete, non-blank line to `out`.
    pub fn push(&mut self, mut bytes: &[u8], out: &mut Vec<String>) {
        if self.oversize.is_some() {
            return;
        }
        while let Some(i) = memchr::memchr(b'\n', bytes) {
            self.line.extend_from_slice(&bytes[..i]);
            if self.over_limit() {
                return;
            }
            self.emit(out);
            bytes = &bytes[i + 1..];
        }
        self.line.extend_from_slice(bytes);
        self.over_limit();
    }

    /// Ends the body: a last line without its newline is still a line.
    pub fn finish(&mut self, out: &mut Vec<String>) {
        if self.oversize.is_none() {
            self.emit(out);
        }
    }

    fn emit(&mut self, out: &mut Vec<String>) {
        let line = String::from_utf8_lossy(&self.line);
        let line = line.trim();
        if !line.is_empty() {
            out.push(line.to_string());
        }
        self.line.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_split_gives_the_same_lines() {
        let body = "{\"a\":\"é\"}\r\n\n{\"b\":2}\n{\"c\":3}".as_bytes();
        let want = vec!["{\"a\":\"é\"}", "{\"b\":2}", "{\"c\":3}"];
        for i in 0..=body.len() {
            let mut d = NdjsonDecoder::new();
            let mut out = Vec::new();
            d.push(&body[..i], &mut out);
            d.push(&body[i..], &mut out);
            d.finish(&mut out);
            assert_eq!(out, want, "split at {i}");
        }
    }

    #[test]
    fn a_line_over_the_limit_stops_the_splitting_keeping_its_start() {
        let body = format!("{{\"a\":1}}\n{}\n{{\"b\":2}}\n", "z".repeat(10_000));
        for piece in [1, 13, body.len()] {
            let mut d = NdjsonDecoder::with_limit(64);
            let mut out = Vec::new();
            for c in body.as_bytes().chunks(piece) {
                d.push(c, &mut out);
            }
            d.finish(&mut out);
            assert_eq!(out, vec!["{\"a\":1}"], "pieces of {piece}");
            let (head, seen) = d.oversize().expect("over the limit");
            assert!(seen > 64 && head.len() <= super::super::sse::OVERSIZE_HEAD);
        }
    }
}
