//! A run of plain pieces that the stream parser counts for its stages at once, when it ends.

/// Pieces that went the stream parser's direct way (a piece of plain text every stage passes
/// on, written straight to the caller's parts) one after another, counted by the stages when the
/// run ends instead of at each piece: while every stage only counts such a piece, all a stage
/// keeps of their text is their length, whether they leave the text at a line's start and
/// whether on a blank line, and their last byte. (At one character a piece, counting at each
/// piece in each stage took 1.06 times the instructions of this on minimax-m2's and gemma4's
/// texts, 1.16 times on hermes'.)
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DirectRun {
    /// Their bytes.
    pub(crate) len: usize,
    /// Whether they leave the text at a line's start (as
    /// [`ends_at_line_start`](super::fences::ends_at_line_start) finds it);
    /// `None` while they are spaces and tabs only, which leave a line's start as it was.
    pub(crate) line_start: Option<bool>,
    /// Whether they leave a blank line (only whitespace after the last newline, as a JSON
    /// scanner asks); `None` while they are whitespace without a newline.
    pub(crate) line_blank: Option<bool>,
    /// Their last byte (none while `len` is 0).
    pub(crate) last: Option<u8>,
}

impl DirectRun {
    /// The next piece of the run (never empty: the parser passes none on).
    #[inline(always)]
    pub(crate) fn add(&mut self, piece: &str) {
        debug_assert!(!piece.is_empty());
        self.len += piece.len();
        let b = piece.as_bytes();
        let Some(&last) = b.last() else {
            return;
        };
        self.last = Some(last);
        // As a rule a piece ends with a byte above the space (a letter, a mark): then it leaves
        // the text in mid-line, on a line that is not blank.
        if last > b' ' {
            self.line_start = Some(false);
            self.line_blank = Some(false);
            return;
        }
        // The line's start and the blank line look back from the piece's end to the first byte
        // that counts, as a rule its last: past spaces and tabs, and for a blank line past
        // carriage returns and form feeds too.
        let mut i = b.len();
        while i > 0 && matches!(b[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        let Some(&last) = b[..i].last() else {
            return;
        };
        self.line_start = Some(last == b'\n');
        if matches!(last, b'\r' | 0x0c) {
            if let Some(blank) = line_blank_change(&piece[..i - 1]) {
                self.line_blank = Some(blank);
            }
        } else {
            self.line_blank = Some(last == b'\n');
        }
    }

    /// Whether the text ends at a line's start after the run, when it did at `before`.
    pub(crate) fn ends_at_line_start(&self, before: bool) -> bool {
        self.line_start.unwrap_or(before)
    }
}

/// The end of a run's last piece that the scanner would hold (see
/// [`Scanner::run_end_held`](super::scanner::Scanner::run_end_held)): not written and not given
/// to the stages yet, it goes with the next piece, which says whether it begins anything. The
/// run before it goes on meanwhile: a word that begins with `c` in gemma4's prose, one
/// character a piece, ended the run and sent that piece and the next through every stage.
#[derive(Clone, Debug)]
pub(crate) struct Lead {
    /// The run before the held bytes.
    pub(crate) run: DirectRun,
    /// The held bytes (a few ASCII letters, kept inline).
    pub(crate) held: compact_str::CompactString,
}

/// Whether the line is blank after `s`: only whitespace follows its last newline, or it has
/// none and text that is not whitespace; `None` when it is whitespace without a newline (or
/// empty), which leaves the line as it was.
#[inline(always)]
pub(crate) fn line_blank_change(s: &str) -> Option<bool> {
    // The last byte that is not whitespace on a line's own (a newline after it would have been
    // found first): a newline leaves the line blank, anything else does not.
    s.bytes()
        .rev()
        .find(|&c| !matches!(c, b' ' | b'\t' | b'\r' | 0x0c))
        .map(|c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::text::fences::ends_at_line_start;
    use crate::protocol::text::scanner::is_ws;

    proptest::proptest! {
        /// A run of pieces leaves a line's start and a blank line as the stages find them
        /// piece by piece, from either state before it (pieces of one byte and of several,
        /// whitespace of every kind among them), and its length and last byte are the text's.
        #[test]
        fn a_run_keeps_what_its_pieces_leave_of_the_line(
            pieces in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(b" \t\n\r\x0cab".to_vec()), 1..5),
                0..12,
            ),
        ) {
            let pieces: Vec<String> =
                pieces.into_iter().map(|p| String::from_utf8(p).unwrap()).collect();
            let mut run = DirectRun::default();
            for p in &pieces {
                run.add(p);
            }
            proptest::prop_assert_eq!(run.len, pieces.iter().map(String::len).sum::<usize>());
            proptest::prop_assert_eq!(run.last, pieces.concat().bytes().last());
            for before in [false, true] {
                let start = pieces.iter().fold(before, |at, p| ends_at_line_start(p, at));
                proptest::prop_assert_eq!(run.ends_at_line_start(before), start);
                // Blank: only whitespace after the last newline; without one, as before if
                // only whitespace.
                let blank = pieces.iter().fold(before, |at, p| match p.rfind('\n') {
                    Some(n) => p[n + 1..].bytes().all(is_ws),
                    None => at && p.bytes().all(is_ws),
                });
                proptest::prop_assert_eq!(run.line_blank.unwrap_or(before), blank);
            }
        }
    }
}
