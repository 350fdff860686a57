//! The interface between the text pipeline and a protocol's scanner: what the stream parser
//! feeds, piece by piece, once the UTF-8 is decoded and the end tokens, fences and reasoning
//! are taken out.

use super::emit::Emitter;
use crate::part::Part;
use crate::protocol::text::run::DirectRun;

/// A scanner: the part of a stream parser that knows one protocol's markup. It receives the
/// decoded text piece by piece and writes parts through the [`Emitter`]; it must give the same
/// parts (up to how deltas are split) however the text is cut into pieces.
pub(crate) trait Scanner: Send {
    /// The next piece of text.
    fn feed(&mut self, text: &str, em: &mut Emitter);
    /// The text is over: recover or report what is still open.
    fn finish(&mut self, em: &mut Emitter);

    /// Whether the text fed so far left the scanner inside a call (a reasoning marker there is
    /// the call's own text). Text held back because it may begin a call does not count.
    fn in_call(&self) -> bool;

    /// Whether the text fed so far left the scanner inside a call's arguments or before its
    /// required close (so that a code fence line there is the call's own text). Past the end of
    /// a call, waiting only for markup that may follow it (a close that may be left out, a
    /// separator to another call), it is not. By default, [`Scanner::in_call`].
    fn in_args(&self) -> bool {
        self.in_call()
    }

    /// A reasoning marker follows the text fed so far (and the scanner is not inside a call):
    /// text held back because it might begin a marker cannot, and is written now, on its side
    /// of the marker. Needed where calls count inside reasoning (the scanner's text is then
    /// reasoning on one side of the marker and text on the other); by default nothing is held
    /// across markers that matters.
    fn cut(&mut self, _em: &mut Emitter) {}

    /// The bytes that may begin anything while the scanner reads plain text with nothing held
    /// (see [`Scanner::quiet`]), asked once when the parser is made; `None` (the default): the
    /// scanner has no such path, and every piece goes to [`Scanner::feed`].
    fn quiet_stops(&self) -> Option<Vec<u8>> {
        None
    }

    /// Whether the scanner reads plain text now with nothing held, so that `piece`, if it has
    /// none of [`Scanner::quiet_stops`]'s bytes, is text and nothing else (a scanner whose
    /// stops leave out a byte that may begin something only at a piece's end looks at the end).
    fn quiet(&self, _piece: &str) -> bool {
        false
    }

    /// [`Scanner::quiet`] for a piece that follows `run`, which the scanner has not been given
    /// yet ([`Scanner::pass_quiet_run`] comes when the run ends): by default the same, for a
    /// scanner whose quiet check does not look at the text before the piece.
    fn quiet_in_run(&self, piece: &str, _run: &DirectRun) -> bool {
        self.quiet(piece)
    }

    /// Of a piece after `run` that holds none of [`Scanner::quiet_stops`]'s bytes (the scanner
    /// was quiet when the run began and has not been given it yet): how many bytes at its end
    /// the scanner would hold, as they may begin something with what follows (gemma4's `c`,
    /// `ca`, `cal` or `call` after a word's end, where a bare `call:` may begin); what is
    /// before them is text, and the parser keeps the run going, with those bytes kept for the
    /// next piece. `Some(0)`: the piece is quiet ([`Scanner::quiet_in_run`]); `None`: it is
    /// not, and ends the run. By default, `Some(0)` or `None` as [`Scanner::quiet_in_run`] says.
    fn run_end_held(&self, piece: &str, run: &DirectRun) -> Option<usize> {
        self.quiet_in_run(piece, run).then_some(0)
    }

    /// The bytes that, ending a piece, make [`Scanner::quiet`] look at it although it holds
    /// none of [`Scanner::quiet_stops`]'s bytes (something may begin at the piece's end: gemma4's
    /// bare `call:` after `c`, `ca`, `cal` or `call`). None (the default): the quiet check looks
    /// at the scanner's state alone. Either way, a scanner that was quiet stays quiet while it
    /// passes plain text on, for every piece that does not end with one of these.
    fn quiet_end_bytes(&self) -> &'static [u8] {
        &[]
    }

    /// A piece without any of [`Scanner::quiet_stops`]'s bytes, given when
    /// [`Scanner::quiet`]: counted as read, as the plain text it is, which the caller writes. A
    /// scanner that gives [`Scanner::quiet_stops`] implements it (nothing else calls it).
    fn pass_quiet(&mut self, _text: &str) {}

    /// Whether, now, all [`Scanner::pass_quiet`] keeps of the text it is given is what a
    /// [`DirectRun`] keeps (its length, whether it leaves a line's start or a blank line, its
    /// last byte), and so on while it is given quiet text: the stream parser then hands it a run
    /// of such pieces once, at the run's end ([`Scanner::pass_quiet_run`]). `false` (the
    /// default): each piece is passed.
    fn passes_by_run(&self) -> bool {
        false
    }

    /// A run of quiet pieces, given (only) when [`Scanner::passes_by_run`]: what
    /// [`Scanner::pass_quiet`] would have done with each.
    fn pass_quiet_run(&mut self, _run: &DirectRun) {
        debug_assert!(false, "a scanner that passes by runs takes them");
    }

    /// A piece without any of [`Scanner::quiet_stops`]'s bytes, which every other stage passes
    /// on untouched, taken alone when the scanner can, doing what [`Scanner::feed`] would
    /// without its machinery: a value's text, whose delta goes to `out`; or, while the scanner
    /// holds text it cannot decide yet (a tag cut off), a piece that leaves it so (nothing
    /// written, the piece held with the rest, the state as it was), held without reading the
    /// text again. `false`, having done nothing, otherwise (the default). One character a
    /// piece, a tag is then read once or a few times, not at each of its bytes.
    fn take(&mut self, _piece: &str, _em: &mut Emitter, _out: &mut Vec<Part>) -> bool {
        false
    }

    /// Whether [`Scanner::take`] may ever take a piece, asked once when the parser is made (the
    /// parser asks no scanner that never does).
    fn takes_pieces(&self) -> bool {
        false
    }

    /// Whether [`Scanner::take`] would hold `piece` as a tag cut off, asked in a debug build,
    /// where the piece is fed instead and what the feed did is checked against holding it.
    #[cfg(debug_assertions)]
    fn waits(&self, _piece: &str) -> bool {
        false
    }

    /// What the scanner holds, with the name of its state: in a debug build, what
    /// [`Scanner::take`] is checked by.
    #[cfg(debug_assertions)]
    fn held_for_check(&self) -> String {
        String::new()
    }

    /// A piece without any of [`Scanner::quiet_stops`]'s bytes, given when
    /// [`Scanner::quiet`]: what [`Scanner::feed`] would do with it, without looking.
    fn feed_quiet(&mut self, text: &str, em: &mut Emitter) {
        self.pass_quiet(text);
        em.text(text);
    }
}

/// Whitespace between the parts of a call: space, tab, the line breaks and form feed.
#[inline]
pub(crate) const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

/// Where the whitespace that starts at `i` in `bytes` ends.
#[inline]
pub(crate) fn ws_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ws(bytes[i]) {
        i += 1;
    }
    i
}
