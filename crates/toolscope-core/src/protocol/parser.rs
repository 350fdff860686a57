//! The stream parser: UTF-8 decoding, then the family's end tokens, code fences around calls and
//! the reasoning splitter, then the protocol's scanner; and the whole-text parse, which runs it
//! over one chunk.

use crate::part::{ErrorPart, Part};
use crate::tool::ToolSet;

use super::scan::json_calls::{JsonScanner, JsonScannerConfig};
use super::span::{Parsed, Span};
use super::spec::Protocol;
use super::text::emit::Emitter;
use super::text::end_tokens::EndTokens;
use super::text::fences::CallFences;
use super::text::reasoning::ReasoningSplitter;
use super::text::run::{DirectRun, Lead};
use super::text::scanner::Scanner;
use super::text::stops::Stops;
use super::text::utf8::Utf8Decoder;

impl Protocol {
    /// A stream parser for this protocol and these tools.
    pub fn stream_parser(&self, tools: &ToolSet) -> StreamParser {
        let mut parser = StreamParser::with_scanner(self.spec.scanner(self, tools));
        parser.origin = Some(Origin::Protocol(Box::new((self.clone(), tools.clone()))));
        let r = self.spec.reasoning();
        if let Some((open, close)) = r.markers {
            let mut splitter =
                if let Some((open, close, spellings)) = self.spec.reasoning_spellings() {
                    // The markers' heads, completed by any of their spellings.
                    ReasoningSplitter::with_endings(
                        open,
                        close,
                        spellings,
                        r.calls_inside,
                        self.reasoning_open(),
                    )
                } else if self.spec.reasoning_suffix() {
                    // Whole markers, which may also carry a suffix.
                    ReasoningSplitter::optional_suffix(
                        open,
                        close,
                        self.marker_suffix(),
                        r.calls_inside,
                        self.reasoning_open(),
                    )
                } else if self.spec.takes_marker_suffix() {
                    // The markers are stems (`<think:`) that a suffix and `>` complete.
                    ReasoningSplitter::suffixed(
                        open,
                        close,
                        self.marker_suffix(),
                        r.calls_inside,
                        self.reasoning_open(),
                    )
                } else if !self.spec.reasoning_endings().is_empty() {
                    // The markers are stems that one of the endings completes.
                    ReasoningSplitter::with_endings(
                        open,
                        close,
                        self.spec.reasoning_endings(),
                        r.calls_inside,
                        self.reasoning_open(),
                    )
                } else {
                    ReasoningSplitter::new(open, close, r.calls_inside, self.reasoning_open())
                };
            if self.reasoning_open_setting().is_some() {
                // Set, not presumed: the template opened reasoning, and a call in it is the
                // family's to judge.
                splitter.not_presumed();
            }
            splitter.begin(&mut parser.em);
            parser.stages.reasoning = Some(splitter);
        }
        if !self.spec.reads_end_tokens() {
            parser.stages.end_tokens =
                EndTokens::new(self.spec.end_tokens(), self.spec.lead_tokens());
        }
        parser.stages.fences = CallFences::new(&self.spec.markers(tools)).map(Box::new);
        parser.stages.make_stops();
        parser
    }

    /// Parses a whole text (bytes; invalid UTF-8 is replaced and reported). Runs the stream
    /// parser over one chunk, so the two paths cannot disagree.
    pub fn parse_generated(&self, tools: &ToolSet, text: &[u8]) -> Parsed {
        self.stream_parser(tools).parse_whole(text)
    }

    /// Parses a whole text that is a string already (a non-streamed answer's content): as
    /// [`Protocol::parse_generated`], without validating its UTF-8 again.
    pub fn parse_text(&self, tools: &ToolSet, text: &str) -> Parsed {
        self.stream_parser(tools).parse_whole_text(text)
    }
}

/// A stream parser for a tool-choice answer: the JSON `{"name": …, "arguments": {…}}` a model
/// writes under a response format that forces a call (`required` or a named tool). Text around
/// the JSON stays text; JSON that is not a valid call is kept as text with an `error` part.
pub fn answer_parser(tools: &ToolSet) -> StreamParser {
    let mut parser = answer_scanner(tools);
    parser.origin = Some(Origin::Answer(tools.clone()));
    parser.stages.make_stops();
    parser
}

fn answer_scanner(tools: &ToolSet) -> StreamParser {
    StreamParser::with_scanner(Box::new(JsonScanner::new(
        tools.clone(),
        JsonScannerConfig {
            call_start: None,
            call_end: String::new(),
            loose_json: true,
            commit_loose: true,
            alt_start: None,
            bare_arrays: false,
        },
    )))
}

/// An incremental parser of one model output. Feed it chunks of any size (byte chunks may split
/// UTF-8 sequences), then call [`StreamParser::finish`]. It emits `text-start/delta/end`,
/// `tool-input-start/delta/end`, `tool-call` and `error` parts, never `finish`.
pub struct StreamParser {
    decoder: Utf8Decoder,
    stages: Stages,
    em: Emitter,
    invalid_reported: bool,
    finished: bool,
    /// Whether the last piece went straight to the caller's parts ([`Stages::feed_direct`])
    /// and nothing else happened since: every condition of that way but the piece's own bytes
    /// still holds (a piece that goes that way changes none of them), so the next piece is
    /// asked about its bytes only. (Unset while a `lead` waits.)
    direct: bool,
    /// While `direct`, the pieces that went that way since it began and that the stages have
    /// not counted yet, when they may be counted at once (see [`DirectRun`]).
    run: Option<DirectRun>,
    /// The run's end that the scanner would hold, when a piece of it ended with one (see
    /// [`Lead`]): `run` is then in it, and the next piece goes with it.
    lead: Option<Lead>,
    /// The held bytes of a lead and the piece after them, put together (kept for its buffer).
    joined: String,
    /// What made it, so that [`StreamParser::reset`] can make it again.
    origin: Option<Origin>,
}

/// The stages a decoded piece of text goes through, in order: end tokens, fences, reasoning,
/// the scanner.
struct Stages {
    /// Takes the family's end tokens out first, for a protocol that declares them.
    end_tokens: Option<EndTokens>,
    /// Then code fences around calls.
    fences: Option<Box<CallFences>>,
    /// Splits reasoning off before the scanner, for a protocol with reasoning markers.
    reasoning: Option<ReasoningSplitter>,
    // One indirect call per piece of text (not per byte): the cost of a table of protocols.
    scanner: Box<dyn Scanner>,
    /// Every byte at which a stage has anything to do, when the scanner has a quiet path: a
    /// piece without any, while every stage is quiet, is text (checked once, not per stage).
    stops: Option<Box<Stops>>,
    /// Whether the scanner may take a piece alone ([`Scanner::take`]), once the stops are made.
    takes: bool,
    /// In a debug build, whether the next piece the scanner would hold as a tag cut off (see
    /// [`Stages::take`]) goes through the stages instead, and what that did is checked.
    #[cfg(debug_assertions)]
    check_wait: bool,
}

/// What a stream parser was made from.
enum Origin {
    Protocol(Box<(Protocol, ToolSet)>),
    Answer(ToolSet),
}

impl StreamParser {
    pub(crate) fn with_scanner(scanner: Box<dyn Scanner>) -> Self {
        StreamParser {
            decoder: Utf8Decoder::new(),
            stages: Stages {
                end_tokens: None,
                fences: None,
                reasoning: None,
                scanner,
                stops: None,
                takes: false,
                #[cfg(debug_assertions)]
                check_wait: false,
            },
            em: Emitter::new(),
            invalid_reported: false,
            finished: false,
            direct: false,
            run: None,
            lead: None,
            joined: String::new(),
            origin: None,
        }
    }

    /// Makes the parser new again, for the next output with the same protocol, settings and
    /// tools: nothing of the last output is kept (not its held-back bytes, its open call, its
    /// spans or its call ids).
    pub fn reset(&mut self) {
        let fresh = match self.origin.take() {
            Some(Origin::Protocol(made)) => made.0.stream_parser(&made.1),
            Some(Origin::Answer(tools)) => answer_parser(&tools),
            // Only the engines' own tests make a parser from a bare scanner; they never reset.
            None => return,
        };
        *self = fresh;
    }

    /// Parses the next chunk of bytes and appends the parts it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        // The common case inline: a whole valid chunk (one byte, often).
        if let Some(piece) = self.decoder.whole(chunk) {
            return self.push_piece(piece, out);
        }
        self.end_direct();
        self.give_lead(out);
        let StreamParser {
            decoder,
            stages,
            em,
            invalid_reported,
            ..
        } = self;
        em.attach(out);
        decoder.decode(chunk, |piece, invalid_at| {
            stages.feed(em, piece);
            if let Some(at) = invalid_at {
                report_invalid(invalid_reported, at, em);
            }
        });
        em.detach(out);
    }

    /// Parses the next chunk of text. Text is valid UTF-8 already: unless a character was left
    /// split by a byte chunk before it, it is not validated again.
    #[inline]
    pub fn push_str(&mut self, chunk: &str, out: &mut Vec<Part>) {
        // The run of plain text goes on with this piece (a stream a character or a few dozen
        // bytes at a time): in the caller's loop, without the rest of the parser. (A finished
        // parser has no run.)
        if let Some(run) = &mut self.run
            && self.stages.still_direct_in_run(chunk, run)
            && self.decoder.carries_nothing()
            && self.em.direct_text(chunk, out)
        {
            self.decoder.pass(chunk.len());
            run.add(chunk);
            return;
        }
        self.push_str_any(chunk, out)
    }

    /// [`StreamParser::push_str`] for any piece.
    #[inline(never)]
    fn push_str_any(&mut self, chunk: &str, out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        let Some(piece) = self.decoder.text(chunk) else {
            return self.push(chunk.as_bytes(), out);
        };
        self.push_piece(piece, out)
    }

    /// A chunk's one decoded piece: straight to the caller's parts when it is plain text every
    /// stage passes on (see [`Stages::feed_direct`]), through the stages otherwise.
    #[inline(always)]
    fn push_piece(&mut self, piece: &str, out: &mut Vec<Part>) {
        if piece.is_empty() {
            return;
        }
        if self.direct {
            let StreamParser {
                stages, em, run, ..
            } = self;
            // The run of plain text goes on, unless this piece holds a stop byte.
            if stages.still_direct(piece, run.as_ref()) && em.direct_text(piece, out) {
                match run {
                    Some(run) => run.add(piece),
                    None => stages.pass_direct(piece),
                }
                return;
            }
            // Or it goes on but for the piece's end, which waits for the next piece.
            if run.is_some() && self.lead_from(piece, out) {
                return;
            }
            self.end_direct();
        } else if self.lead.is_some() {
            // (Off the direct way's path: a lead is rare, and waits with `direct` unset.)
            return self.push_after_lead(piece, out);
        } else if self.stages.feed_direct(&self.em, piece, out) {
            self.direct = true;
            self.run = self.stages.direct_run();
            return;
        } else if self.stages.take(&mut self.em, piece, out) {
            return;
        }
        self.em.attach(out);
        self.stages.feed(&mut self.em, piece);
        self.em.detach(out);
    }

    /// A piece that does not go on the run as it is, when a run is going: whether the run goes
    /// on but for the piece's end, which the scanner would hold (a [`Lead`] for the next piece).
    #[inline(never)]
    fn lead_from(&mut self, piece: &str, out: &mut Vec<Part>) -> bool {
        let StreamParser {
            stages,
            em,
            direct,
            run,
            lead,
            ..
        } = self;
        let Some(r) = run else {
            return false;
        };
        let Some(held) = stages.run_on(em, r, piece, piece, out) else {
            return false;
        };
        if !held.is_empty() {
            *lead = run.take().map(|run| Lead {
                run,
                held: held.into(),
            });
            *direct = false;
        }
        true
    }

    /// The pieces stop going the direct way: the stages count the run's.
    fn end_direct(&mut self) {
        self.direct = false;
        self.stages.end_run(&mut self.run);
    }

    /// The next piece after a lead (see [`Lead`]), with its held bytes before it: the run goes
    /// on with what is plain text of the two, up to what the scanner would hold of their end
    /// (a lead again); when they are more than that, the run ends, and they go through the
    /// stages as one piece.
    #[inline(never)]
    fn push_after_lead(&mut self, piece: &str, out: &mut Vec<Part>) {
        let Some(Lead { mut run, held }) = self.lead.take() else {
            return;
        };
        let StreamParser {
            stages,
            em,
            direct,
            run: this_run,
            lead,
            joined,
            ..
        } = self;
        joined.clear();
        joined.push_str(&held);
        joined.push_str(piece);
        match stages.run_on(em, &mut run, piece, joined, out) {
            Some("") => {
                *direct = true;
                *this_run = Some(run);
            }
            Some(held) => {
                *lead = Some(Lead {
                    run,
                    held: held.into(),
                })
            }
            None => {
                stages.pass_run(run);
                em.attach(out);
                stages.feed(em, joined);
                em.detach(out);
            }
        }
    }

    /// A lead's run and held bytes, given to the stages (before anything else is): the scanner
    /// holds the bytes, as it would have from the piece they ended.
    #[inline(never)]
    fn give_lead(&mut self, out: &mut Vec<Part>) {
        if let Some(Lead { run, held }) = self.lead.take() {
            self.stages.pass_run(run);
            self.em.attach(out);
            self.stages.feed(&mut self.em, &held);
            self.em.detach(out);
        }
    }

    /// A whole text: its start, up to the first byte any stage looks at, is plain text to every
    /// stage and goes on as such at once, searched once for those bytes instead of once by each
    /// stage for its own (an answer that explains before it calls, or whose calls come last);
    /// the rest goes as any piece does.
    fn push_whole_str(&mut self, text: &str, out: &mut Vec<Part>) {
        let (head, rest) = text.split_at(self.stages.quiet_len(text));
        if !head.is_empty() {
            match self.decoder.text(head) {
                Some(head) => {
                    self.em.attach(out);
                    self.stages.feed_known_quiet(&mut self.em, head);
                    self.em.detach(out);
                }
                None => self.push_str(head, out),
            }
        }
        self.push_str(rest, out);
    }

    /// Ends the stream: closes open text, recovers or reports an unfinished call. The output
    /// ended as the model meant it to (a stop): a call missing only its close marker at the end
    /// is recovered, as the formats' tolerances say.
    pub fn finish(&mut self, out: &mut Vec<Part>) {
        self.finish_as(false, out)
    }

    /// Ends a stream that was cut off (the token limit, a content filter, a broken stream): a
    /// call is finished only when its close marker arrived, or, in a format whose call body is
    /// one JSON value, when that value closed. Any other call still open is reported as an
    /// `unfinished-tool-call` error with its markup kept as text, never recovered, so that a
    /// call with arguments cut short is never taken for a complete one.
    pub fn finish_cut(&mut self, out: &mut Vec<Part>) {
        self.finish_as(true, out)
    }

    pub(super) fn finish_as(&mut self, cut: bool, out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.end_direct();
        self.give_lead(out);
        if cut {
            self.em.set_output_cut();
        }
        let StreamParser {
            decoder,
            stages,
            em,
            invalid_reported,
            ..
        } = self;
        em.attach(out);
        decoder.finish(|piece, invalid_at| {
            stages.feed(em, piece);
            if let Some(at) = invalid_at {
                report_invalid(invalid_reported, at, em);
            }
        });
        stages.finish(em);
        em.end_output();
        em.detach(out);
    }

    /// The spans recognised so far, in order; byte offsets into the decoded text.
    pub fn spans(&self) -> &[Span] {
        self.em.spans()
    }

    /// How many tool calls were completed so far.
    pub fn call_count(&self) -> usize {
        self.em.call_count()
    }

    /// The writer of this parser's parts, shared with a caller that writes into the same answer
    /// (ids then come from one count, and blocks never overlap). Only between pushes.
    pub(crate) fn writer(&mut self) -> &mut crate::part::PartWriter {
        // The caller may close the open block: the next piece is looked at again.
        self.end_direct();
        self.em.writer()
    }

    /// Parses a whole text that is a string already and gives the generate parts.
    pub fn parse_whole_text(mut self, text: &str) -> Parsed {
        self.em.set_whole();
        let mut stream = Vec::new();
        self.push_whole_str(text, &mut stream);
        self.finish(&mut stream);
        Parsed {
            parts: generate_parts(stream),
            spans: self.em.spans().to_vec(),
        }
    }

    /// Parses a whole text and gives the generate parts (`text`, `tool-call`, `error`).
    pub fn parse_whole(mut self, text: &[u8]) -> Parsed {
        self.em.set_whole();
        let mut stream = Vec::new();
        // A whole text is validated in one pass over it (vectorised); only a text with invalid
        // bytes goes through the decoder that replaces and reports them.
        match simdutf8::basic::from_utf8(text) {
            Ok(s) => self.push_whole_str(s, &mut stream),
            Err(_) => self.push(text, &mut stream),
        }
        self.finish(&mut stream);
        Parsed {
            parts: generate_parts(stream),
            spans: self.em.spans().to_vec(),
        }
    }
}

impl Stages {
    /// The stops of this parser's stages (see [`Stops`]), once its stages are made: none when
    /// the scanner has no quiet path.
    fn make_stops(&mut self) {
        self.takes = self.scanner.takes_pieces();
        self.stops = self.scanner.quiet_stops().map(|scanner| {
            let mut stops = Stops::new();
            stops.add_all(&scanner);
            if let Some(f) = &self.end_tokens {
                stops.add_all(f.stop_bytes());
            }
            if self.fences.is_some() {
                stops.add(CallFences::STOP);
            }
            if let Some(r) = &self.reasoning {
                stops.add_all(&r.stop_bytes());
            }
            for &b in self.scanner.quiet_end_bytes() {
                stops.add_end(b);
            }
            Box::new(stops)
        });
        // A letter or a digit among them (gemma4's bare `call:`, `functools`) is in nearly every
        // piece of prose: the one search would fail there, and the stages search again.
        if self
            .stops
            .as_ref()
            .is_some_and(|s| s.has(|b| b.is_ascii_alphanumeric()))
        {
            self.stops = None;
        }
    }

    /// A chunk's one decoded piece, when it is plain text that every stage would pass on
    /// untouched: counted by each stage and its delta written to `out` straight away, without
    /// the emitter gathering the chunk's parts (the common case of a stream: a piece of prose,
    /// one character at a time or a few dozen bytes). `false`, having done nothing, otherwise.
    #[inline(always)]
    fn feed_direct(&mut self, em: &Emitter, piece: &str, out: &mut Vec<Part>) -> bool {
        if !self.quiet(piece)
            || !self.reasoning.as_ref().is_none_or(|r| r.quiet_to_scanner())
            || !em.takes_direct_text()
        {
            return false;
        }
        if !em.direct_text(piece, out) {
            return false;
        }
        self.pass_direct(piece);
        true
    }

    /// A piece the scanner takes alone ([`Scanner::take`]: a value's text, or a piece that
    /// goes on a tag cut off at the end of what it holds without ending it), when every other
    /// stage passes it on as quiet text: counted by each stage, without going through them.
    /// `false`, having done nothing, otherwise. (In a debug build, every other piece the scanner
    /// would hold goes through them instead, and what that did is checked against holding it.)
    #[inline(always)]
    fn take(&mut self, em: &mut Emitter, piece: &str, out: &mut Vec<Part>) -> bool {
        if !self.takes {
            return false;
        }
        let Some(stops) = &self.stops else {
            return false;
        };
        if !(self.filters_quiet()
            && self.reasoning.as_ref().is_none_or(|r| r.quiet_to_scanner())
            && stops.absent(piece.as_bytes()))
        {
            return false;
        }
        #[cfg(debug_assertions)]
        if self.scanner.waits(piece) && {
            self.check_wait = !self.check_wait;
            !self.check_wait
        } {
            let before = self.scanner.held_for_check();
            let parts = out.len();
            em.attach(out);
            self.feed(em, piece);
            em.detach(out);
            assert_eq!(
                out.len(),
                parts,
                "a piece held as a tag cut off wrote parts: {piece:?}"
            );
            assert_eq!(
                self.scanner.held_for_check(),
                before + piece,
                "a piece held as a tag cut off was read"
            );
            return true;
        }
        if !self.scanner.take(piece, em, out) {
            return false;
        }
        self.pass_filters_quiet(piece);
        if let Some(r) = &mut self.reasoning {
            r.pass_known_quiet(piece);
        }
        true
    }

    /// [`Stages::still_direct`] inside a run, for a piece that is not empty (`false` for an
    /// empty one). A piece that ends with a byte the scanner looks at there (gemma4's `c`, `a`
    /// and `l`, about one piece in seven of its prose one character at a time) is asked of the
    /// scanner from here, not by leaving the caller's loop for [`StreamParser::push_str_any`].
    #[inline(always)]
    fn still_direct_in_run(&self, piece: &str, run: &DirectRun) -> bool {
        let Some(stops) = &self.stops else {
            return false;
        };
        let bytes = piece.as_bytes();
        !bytes.is_empty()
            && stops.absent(bytes)
            && (!stops.ends_with_one(bytes) || self.quiet_end_in_run(piece, run))
    }

    /// [`Scanner::quiet_in_run`], out of the caller's loop (the loop's registers then stay its
    /// own: asked in the loop, every piece of minimax-m2's prose cost an instruction more).
    #[inline(never)]
    fn quiet_end_in_run(&self, piece: &str, run: &DirectRun) -> bool {
        self.scanner.quiet_in_run(piece, run)
    }

    /// `text` after `run`, whose new bytes are `piece` (a lead's held bytes come before it): the
    /// run goes on with its plain text, written as a delta, up to the end the scanner would hold,
    /// which is returned (empty: none); `None`, having written nothing, when the run cannot go on
    /// with it ([`Stages::run_end_held`], or the block is no longer open).
    #[inline(always)]
    fn run_on<'t>(
        &self,
        em: &Emitter,
        run: &mut DirectRun,
        piece: &str,
        text: &'t str,
        out: &mut Vec<Part>,
    ) -> Option<&'t str> {
        let held = self.run_end_held(piece, text, run)?;
        let (head, end) = text.split_at(text.len() - held);
        if !head.is_empty() {
            if !em.direct_text(head, out) {
                return None;
            }
            run.add(head);
        }
        Some(end)
    }

    /// Of `text`, plain text after `run` but for what its end may begin, whose bytes are those
    /// of a lead (known free of stop bytes) and `piece`: how many bytes at its end the scanner
    /// would hold ([`Scanner::run_end_held`]; 0 when it is plain to the end), or `None` when it
    /// is not plain text after the run (the run ends with it).
    fn run_end_held(&self, piece: &str, text: &str, run: &DirectRun) -> Option<usize> {
        let stops = self.stops.as_ref()?;
        if !stops.absent(piece.as_bytes()) {
            return None;
        }
        if !stops.ends_with_one(text.as_bytes()) {
            return Some(0);
        }
        self.scanner.run_end_held(text, run)
    }

    /// After a piece went the direct way ([`Stages::feed_direct`]), whether the next one
    /// (not empty) may too: it holds no stop byte, and, if it ends with a byte the scanner looks
    /// at there ([`Scanner::quiet_end_bytes`]), the scanner finds it quiet after the pieces
    /// before it (the `run`'s, which it is given when the run ends). Nothing else can have
    /// changed.
    #[inline(always)]
    fn still_direct(&self, piece: &str, run: Option<&DirectRun>) -> bool {
        let Some(stops) = &self.stops else {
            return false;
        };
        let bytes = piece.as_bytes();
        stops.absent(bytes)
            && (!stops.ends_with_one(bytes)
                || match run {
                    // The scanner has not been given the run yet.
                    Some(run) => self.scanner.quiet_in_run(piece, run),
                    None => self.scanner.quiet(piece),
                })
    }

    /// A run of direct pieces may begin (one just went that way, counted by [`pass_direct`]):
    /// whether the stages may count the pieces after it once, when the run ends. So when the
    /// scanner keeps no more of quiet text than the run does ([`Scanner::passes_by_run`]), and
    /// the end-token filter only counts it (no lead token can come any more); the reasoning
    /// splitter only counts, and the fences keep a line's start, which the run keeps too.
    ///
    /// [`pass_direct`]: Stages::pass_direct
    #[inline(always)]
    fn direct_run(&self) -> Option<DirectRun> {
        (self.scanner.passes_by_run()
            && self
                .end_tokens
                .as_ref()
                .is_none_or(EndTokens::counts_by_length))
        .then(DirectRun::default)
    }

    /// The run of direct pieces is over: each stage counts its bytes.
    #[inline(always)]
    fn end_run(&mut self, run: &mut Option<DirectRun>) {
        if let Some(run) = run.take() {
            self.pass_run(run);
        }
    }

    /// A run's pieces, counted by each stage at once (out of line: once a run, not once a
    /// piece).
    #[inline(never)]
    fn pass_run(&mut self, run: DirectRun) {
        if let Some(f) = &mut self.end_tokens {
            f.pass_len(run.len);
        }
        if let Some(f) = &mut self.fences {
            f.pass_run(&run);
        }
        if let Some(r) = &mut self.reasoning {
            r.pass_len(run.len);
        }
        self.scanner.pass_quiet_run(&run);
    }

    /// A piece that goes the direct way, counted by every stage as passed on.
    #[inline(always)]
    fn pass_direct(&mut self, piece: &str) {
        self.pass_filters_quiet(piece);
        if let Some(r) = &mut self.reasoning {
            r.pass_known_quiet(piece);
        }
        self.scanner.pass_quiet(piece);
    }

    /// Whether every stage is quiet and `piece` (not empty) holds no byte any stage looks at
    /// (one search of the piece, not one per stage). (The scanner is asked first: inside a
    /// call, the usual way this is not so.)
    #[inline(always)]
    fn quiet(&self, piece: &str) -> bool {
        let Some(stops) = &self.stops else {
            return false;
        };
        self.quiet_but_for(piece) && stops.absent(piece.as_bytes())
    }

    /// [`Stages::quiet`] but for the search of `piece` for stop bytes.
    #[inline(always)]
    fn quiet_but_for(&self, piece: &str) -> bool {
        !piece.is_empty() && self.scanner.quiet(piece) && self.filters_quiet()
    }

    /// Whether every stage before the scanner is quiet: holds nothing, so that a piece without
    /// a stop byte goes through each untouched.
    #[inline(always)]
    fn filters_quiet(&self) -> bool {
        self.end_tokens.as_ref().is_none_or(EndTokens::quiet)
            && self.fences.as_ref().is_none_or(|f| f.quiet())
            && self.reasoning.as_ref().is_none_or(ReasoningSplitter::quiet)
    }

    /// How much of `text`'s start is quiet ([`Stages::quiet`]): up to its first stop byte (at
    /// a character's start), or none. (The stages are asked before the search, which would be
    /// of no use when one of them is not quiet, and again of the piece found.)
    fn quiet_len(&self, text: &str) -> usize {
        let Some(stops) = &self.stops else {
            return 0;
        };
        if !self.quiet_but_for(text) {
            return 0;
        }
        let mut len = stops.first(text.as_bytes()).unwrap_or(text.len());
        while !text.is_char_boundary(len) {
            len -= 1;
        }
        if self.quiet_but_for(&text[..len]) {
            len
        } else {
            0
        }
    }

    /// A piece known quiet ([`Stages::quiet`]): counted by the end-token and fence filters as
    /// passed on.
    #[inline(always)]
    fn pass_filters_quiet(&mut self, piece: &str) {
        if let Some(f) = &mut self.end_tokens {
            f.pass_known_quiet(piece);
        }
        if let Some(f) = &mut self.fences {
            f.pass_known_quiet(piece);
        }
    }

    /// A decoded piece through every stage.
    #[inline(always)]
    fn feed(&mut self, em: &mut Emitter, piece: &str) {
        // The common path: the piece is quiet.
        if self.quiet(piece) {
            return self.feed_known_quiet(em, piece);
        }
        let Stages {
            end_tokens,
            fences,
            reasoning,
            scanner,
            ..
        } = self;
        let scanner = scanner.as_mut();
        match end_tokens {
            Some(f) => {
                // The common path, inline: nothing for the filter to take out of this piece.
                if f.pass_quiet(piece) {
                    if !piece.is_empty() {
                        feed_fenced(fences, reasoning, scanner, em, piece)
                    }
                } else {
                    f.feed_marked(piece, em, |p, em| {
                        feed_fenced(fences, reasoning, scanner, em, p)
                    })
                }
            }
            None => feed_fenced(fences, reasoning, scanner, em, piece),
        }
    }

    /// A piece known quiet ([`Stages::quiet`]): each filter counts it as passed on, and the
    /// scanner (or the reasoning) takes it as it is.
    #[inline(always)]
    fn feed_known_quiet(&mut self, em: &mut Emitter, piece: &str) {
        self.pass_filters_quiet(piece);
        let scanner = self.scanner.as_mut();
        match &mut self.reasoning {
            Some(r) => r.feed_known_quiet(piece, scanner, em),
            None => scanner.feed_quiet(piece, em),
        }
    }

    /// The end of the output through every stage: what each holds back goes on to the next.
    fn finish(&mut self, em: &mut Emitter) {
        let Stages {
            end_tokens,
            fences,
            reasoning,
            scanner,
            ..
        } = self;
        let scanner = scanner.as_mut();
        if let Some(f) = end_tokens {
            f.finish(em, |piece, em| {
                feed_fenced(fences, reasoning, scanner, em, piece)
            });
        }
        if let Some(f) = fences {
            f.finish(em, |piece, em| read_or_ask(reasoning, scanner, em, piece));
        }
        match reasoning {
            Some(r) => r.finish(scanner, em),
            None => scanner.finish(em),
        }
    }
}

/// A piece through the fence filter, when there is one.
#[inline(always)]
fn feed_fenced(
    fences: &mut Option<Box<CallFences>>,
    reasoning: &mut Option<ReasoningSplitter>,
    scanner: &mut dyn Scanner,
    em: &mut Emitter,
    piece: &str,
) {
    match fences {
        Some(f) => {
            // The common path, inline: no fence to look at in this piece.
            if f.pass_quiet(piece) {
                if !piece.is_empty() {
                    feed_piece(reasoning, scanner, em, piece)
                }
            } else {
                f.feed_marked(piece, em, |p, em| read_or_ask(reasoning, scanner, em, p))
            }
        }
        None => feed_piece(reasoning, scanner, em, piece),
    }
}

/// What the fence filter passes on (see `fences::Pass`): a piece with text is read; an empty
/// piece asks whether the scanner is inside a call's arguments.
fn read_or_ask(
    reasoning: &mut Option<ReasoningSplitter>,
    scanner: &mut dyn Scanner,
    em: &mut Emitter,
    piece: &str,
) -> bool {
    if piece.is_empty() {
        return scanner.in_args();
    }
    feed_piece(reasoning, scanner, em, piece);
    false
}

/// A decoded piece to the reasoning splitter, or straight to the scanner.
#[inline(always)]
fn feed_piece(
    reasoning: &mut Option<ReasoningSplitter>,
    scanner: &mut dyn Scanner,
    em: &mut Emitter,
    piece: &str,
) {
    match reasoning {
        Some(r) => r.feed(piece, scanner, em),
        None => scanner.feed(piece, em),
    }
}

fn report_invalid(reported: &mut bool, at: usize, em: &mut Emitter) {
    if !*reported {
        *reported = true;
        em.error(ErrorPart::reason(
            "invalid-utf8",
            format!(
                "the output is not valid UTF-8 at byte {at}; invalid bytes are shown as U+FFFD"
            ),
        ));
    }
}

/// Turns stream parts into generate parts: text deltas merged into `text` parts and reasoning
/// deltas into `reasoning` parts, between tool calls and errors.
pub fn generate_parts(stream: Vec<Part>) -> Vec<Part> {
    let mut out = Vec::new();
    // The run of text or reasoning being gathered; the other kind, a call or an error ends it.
    let mut text = String::new();
    let mut reasoning = String::new();
    fn flush(out: &mut Vec<Part>, text: &mut String, reasoning: &mut String) {
        if !reasoning.is_empty() {
            out.push(Part::Reasoning {
                text: std::mem::take(reasoning),
            });
        }
        if !text.is_empty() {
            out.push(Part::Text {
                text: std::mem::take(text),
            });
        }
    }
    for part in stream {
        match part {
            Part::TextDelta { delta, .. } => {
                if !reasoning.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                text.push_str(&delta);
            }
            Part::Text { text: t } => {
                if !reasoning.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                // Taken as it is when it starts the run (a whole text's runs come whole).
                if text.is_empty() {
                    text = t;
                } else {
                    text.push_str(&t);
                }
            }
            Part::ReasoningDelta { delta, .. } => {
                if !text.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                reasoning.push_str(&delta);
            }
            Part::Reasoning { text: t } => {
                if !text.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                if reasoning.is_empty() {
                    reasoning = t;
                } else {
                    reasoning.push_str(&t);
                }
            }
            Part::ToolCall(_) | Part::Error(_) | Part::Warning(_) => {
                flush(&mut out, &mut text, &mut reasoning);
                out.push(part);
            }
            _ => {}
        }
    }
    flush(&mut out, &mut text, &mut reasoning);
    out
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::tools;

    /// Pieces of prose that go the direct way, short and long, are counted as read: a byte that
    /// is not UTF-8 after them is reported where it stands in the output.
    #[test]
    fn an_invalid_byte_after_a_run_of_prose_is_reported_where_it_is() {
        for p in Protocol::all() {
            for pieces in [
                &["Some", " ", "words", " ", "first", "."][..],
                &[
                    "A longer piece of plain prose, well past sixteen bytes",
                    ", and one more",
                ],
            ] {
                let mut parser = p.stream_parser(&tools());
                let mut out = Vec::new();
                for piece in pieces {
                    parser.push_str(piece, &mut out);
                }
                parser.push(b"\xff", &mut out);
                parser.finish(&mut out);
                let at = pieces.concat().len();
                let said = format!("not valid UTF-8 at byte {at};");
                assert!(
                    out.iter()
                        .any(|part| matches!(part, Part::Error(e) if e.message.contains(&said))),
                    "{}: {pieces:?}: {out:?}",
                    p.name()
                );
            }
        }
    }

    /// A piece without the parser's stops goes past every stage unlooked-at: each stage's own
    /// bytes must be among them, and a scanner's letter (a word that opens a call) turns the
    /// shortcut off, as such a byte is in nearly every piece of prose.
    #[test]
    fn the_stops_hold_every_byte_a_stage_looks_at() {
        let mut with_stops = 0;
        for p in Protocol::all() {
            let parser = p.stream_parser(&tools()).stages;
            let Some(stops) = &parser.stops else {
                if let Some(bytes) = parser.scanner.quiet_stops() {
                    assert!(
                        bytes.iter().any(u8::is_ascii_alphanumeric)
                            || parser.end_tokens.as_ref().is_some_and(|f| f
                                .stop_bytes()
                                .iter()
                                .any(u8::is_ascii_alphanumeric)),
                        "{}: a quiet scanner without stops",
                        p.name()
                    );
                }
                continue;
            };
            with_stops += 1;
            let mut stage_bytes = parser.scanner.quiet_stops().unwrap();
            if let Some(f) = &parser.end_tokens {
                stage_bytes.extend_from_slice(f.stop_bytes());
            }
            if parser.fences.is_some() {
                stage_bytes.push(CallFences::STOP);
            }
            if let Some(r) = &parser.reasoning {
                stage_bytes.extend(r.stop_bytes());
            }
            for b in stage_bytes {
                assert!(stops.bytes().contains(&b), "{}: {:?}", p.name(), b as char);
                let mut piece = b"plain words, long enough to be searched".to_vec();
                piece.push(b);
                assert!(!stops.absent(&piece), "{}", p.name());
            }
            assert!(!stops.has(|b| b.is_ascii_alphanumeric()), "{}", p.name());
        }
        assert!(with_stops >= 20, "{with_stops} protocols take the shortcut");
    }
}
