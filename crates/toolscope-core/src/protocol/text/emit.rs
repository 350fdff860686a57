//! The part emitter every protocol scanner writes through.
//!
//! It adds to the [`PartWriter`] (the part grammar: blocks, ids) what is particular to parsing
//! text a chunk at a time: coalescing deltas so that one chunk of input gives at most one text or
//! reasoning delta per block and one input delta per call (the number of parts stays
//! proportional to the number of chunks, not bytes), and the spans of the text that became calls
//! or reasoning. Nothing is flushed before the scanner says the chunk is done, so the parts of one
//! chunk come out in the order they were found.
//!
//! Offsets: a scanner reports spans in its own coordinates, the bytes it was fed. When reasoning
//! is split off before the scanner (see `reasoning.rs`), the bytes it never saw are recorded with
//! [`Emitter::skip`], and spans are moved to offsets of the whole decoded text.

use std::collections::HashSet;

use crate::args::Args;
use crate::part::{Delta, ErrorPart, Part, PartId, PartWriter, ToolCall};
use crate::protocol::span::{Span, SpanKind};

/// Whitespace that lays calls out: spaces, tabs and line breaks.
fn is_layout_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Which block plain text goes to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Block {
    #[default]
    Text,
    Reasoning,
}

/// Where presumed reasoning stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Presumed {
    #[default]
    No,
    /// The output is read as starting inside reasoning nobody opened in it.
    Open,
    /// A call ended it; its span is written before the call's.
    EndedByCall { span_written: bool },
}

#[derive(Default)]
pub(crate) struct Emitter {
    parts: Vec<Part>,
    spans: Vec<Span>,
    writer: PartWriter,
    /// The text or reasoning delta of this chunk, and which block it goes to.
    pending: Delta,
    pending_block: Block,
    /// Where [`Emitter::text`] writes: the text block, or (inside reasoning that may hold calls)
    /// the reasoning block.
    text_block: Block,
    /// The input delta of this chunk, and the call it belongs to.
    pending_input: Delta,
    input_id: Option<PartId>,
    /// The ids of the calls begun so far: an id the markup gives twice is not reused.
    call_ids: HashSet<PartId>,
    calls: usize,
    /// Bytes of the text the scanner was not fed: `(scanner offset, bytes skipped there and
    /// before)`, in order.
    skipped: Vec<(usize, usize)>,
    /// Bytes taken out of the text as end tokens, before anything read it: `(offset in the
    /// text after them, bytes taken out there and before)`, in order.
    removed: Vec<(usize, usize)>,
    /// Bytes taken out as fence lines around calls, after the end tokens: `(offset in the text
    /// after them, bytes taken out there and before)`.
    fenced: Vec<(usize, usize)>,
    /// The output was cut off (a token limit, a broken stream): at the end, a call whose close
    /// was not read is unfinished, never recovered.
    cut: bool,
    /// A call ended, and no text other than whitespace came after it yet.
    after_call: bool,
    /// Reasoning the family's template usually opens was presumed open at the start of the
    /// output (see [`Emitter::presume_reasoning`]).
    presumed: Presumed,
    /// The whitespace after the last call, held back: it is the call's layout (and not text)
    /// when another call or the end of the output follows, and text when more text follows.
    held_space: String,
    /// A whole text is parsed (see [`Emitter::set_whole`]): text and reasoning go out as
    /// `text` and `reasoning` parts, gathered here, and no input deltas are written.
    whole: bool,
    whole_text: String,
}

impl Emitter {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The text is parsed whole, for its generate parts: a run of text or reasoning goes out as
    /// one `text` or `reasoning` part (not as deltas of a block), and calls as their
    /// `tool-call` parts without the `tool-input-*` deltas a stream shows them growing by.
    /// [`generate_parts`](super::super::parser::generate_parts) makes the same parts of either.
    pub(crate) fn set_whole(&mut self) {
        self.whole = true;
    }

    /// Whether the text is parsed whole (see [`Emitter::set_whole`]).
    pub(crate) fn is_whole(&self) -> bool {
        self.whole
    }

    /// The output being finished was cut off (see [`StreamParser::finish_cut`]).
    ///
    /// [`StreamParser::finish_cut`]: crate::protocol::parser::StreamParser::finish_cut
    pub(crate) fn set_output_cut(&mut self) {
        self.cut = true;
    }

    /// Whether the output was cut off: scanners then recover no call whose close (its close
    /// marker, or for a call whose body is one JSON value, the end of that value) was not
    /// read, and report it as unfinished instead.
    pub(crate) fn output_cut(&self) -> bool {
        self.cut
    }

    /// Plain text: into the open text block (opened if needed), or into the reasoning block when
    /// the scanner reads reasoning that may hold calls.
    pub(crate) fn text(&mut self, s: &str) {
        let block = self.text_block;
        self.write(block, s);
    }

    /// Whether plain text that is a chunk's only text can go out straight away as the delta of
    /// the open block [`Emitter::text`] writes to ([`Emitter::direct_text`]), as the chunk's
    /// end would flush it: nothing of the chunk pending, a block open, no whitespace after a
    /// call to settle, not a whole text.
    #[inline(always)]
    pub(crate) fn takes_direct_text(&self) -> bool {
        !self.after_call
            && !self.whole
            && self.pending.is_empty()
            && self.pending_input.is_empty()
            && match self.text_block {
                Block::Text => self.writer.text_id().is_some(),
                Block::Reasoning => self.writer.reasoning_id().is_some(),
            }
    }

    /// Plain text `s` (not empty), when [`Emitter::takes_direct_text`]: its delta, written to
    /// `out` now. `false`, having written nothing, when the block is not open (as
    /// [`Emitter::takes_direct_text`] says it is, unless the caller closed it through the
    /// writer since).
    // Inlined, now that the piece that goes on a run is taken in `push_str`, which is inlined
    // into the caller's loop: one character a piece, 1.15 times fewer instructions on
    // minimax-m2's prose alone and about 6% less time (the peers benchmark). (Inlined into the
    // parser's own piece loop, before, it had cost about 10% more time with 11% fewer
    // instructions: the part was built on the stack, then copied into the vector.)
    #[inline(always)]
    pub(crate) fn direct_text(&self, s: &str, out: &mut Vec<Part>) -> bool {
        match self.text_block {
            Block::Text => match self.writer.text_id() {
                Some(id) => out.push(Part::TextDelta {
                    id: id.clone(),
                    delta: Delta::from(s),
                }),
                None => return false,
            },
            Block::Reasoning => match self.writer.reasoning_id() {
                Some(id) => out.push(Part::ReasoningDelta {
                    id: id.clone(),
                    delta: Delta::from(s),
                }),
                None => return false,
            },
        }
        true
    }

    /// Reasoning text, into the open reasoning block (opened if needed).
    pub(crate) fn reasoning(&mut self, s: &str) {
        self.write(Block::Reasoning, s);
    }

    /// From now on, plain text from the scanner is reasoning (`true`) or text (`false`).
    pub(crate) fn set_text_is_reasoning(&mut self, reasoning: bool) {
        self.text_block = if reasoning {
            Block::Reasoning
        } else {
            Block::Text
        };
    }

    /// The output is read as starting inside reasoning that the family's template usually
    /// opens, in a family whose reasoning holds no calls: the scanner's text is reasoning until
    /// a call begins, which ends it (a run where the template did not open it).
    pub(crate) fn presume_reasoning(&mut self) {
        self.presumed = Presumed::Open;
        self.set_text_is_reasoning(true);
    }

    /// The presumed reasoning is over (its close marker, or the end of the output): whether a
    /// call had ended it already.
    pub(crate) fn end_presumed_reasoning(&mut self) -> bool {
        let ended = matches!(self.presumed, Presumed::EndedByCall { .. });
        self.presumed = Presumed::No;
        ended
    }

    fn write(&mut self, block: Block, s: &str) {
        if s.is_empty() {
            return;
        }
        if self.after_call {
            if block == Block::Text {
                let rest = s.trim_start_matches(is_layout_space);
                if rest.is_empty() {
                    self.held_space.push_str(s);
                    return;
                }
                // Text follows the call: the whitespace before it is that text's (written
                // before it, not joined to it: the text may be a whole run of prose).
                self.after_call = false;
                if !self.held_space.is_empty() {
                    let mut held = std::mem::take(&mut self.held_space);
                    if self.whole && self.whole_text.is_empty() {
                        self.whole_text.reserve(held.len() + s.len());
                    }
                    self.write(block, &held);
                    self.write(block, s);
                    held.clear();
                    self.held_space = held;
                    return;
                }
            } else {
                self.after_call = false;
                let held = std::mem::take(&mut self.held_space);
                self.write(Block::Text, &held);
            }
        }
        if !self.pending_input.is_empty() {
            self.flush_input();
        }
        if self.pending_block != block && (!self.pending.is_empty() || !self.whole_text.is_empty())
        {
            self.flush_pending();
        }
        self.pending_block = block;
        if self.whole {
            // A whole text's parts are generate parts: its runs need no block ids, starts or
            // ends (the generate parts leave them out).
            self.whole_text.push_str(s);
            return;
        }
        match block {
            Block::Text if self.writer.text_id().is_none() => {
                self.writer.open_text(&mut self.parts);
            }
            Block::Reasoning if self.writer.reasoning_id().is_none() => {
                self.writer.open_reasoning(&mut self.parts);
            }
            _ => {}
        }
        // The first piece of a chunk is taken whole (usually the only one).
        if self.pending.is_empty() {
            self.pending = Delta::from(s);
        } else {
            self.pending.push_str(s);
        }
    }

    fn flush_pending(&mut self) {
        if self.whole {
            if !self.whole_text.is_empty() {
                let text = std::mem::take(&mut self.whole_text);
                self.parts.push(match self.pending_block {
                    Block::Text => Part::Text { text },
                    Block::Reasoning => Part::Reasoning { text },
                });
            }
            return;
        }
        if self.pending.is_empty() {
            return;
        }
        let delta = std::mem::take(&mut self.pending);
        match self.pending_block {
            Block::Text => {
                if let Some(id) = self.writer.text_id() {
                    self.parts.push(Part::TextDelta {
                        id: id.clone(),
                        delta,
                    });
                }
            }
            Block::Reasoning => {
                if let Some(id) = self.writer.reasoning_id() {
                    self.parts.push(Part::ReasoningDelta {
                        id: id.clone(),
                        delta,
                    });
                }
            }
        }
    }

    /// Writes the input delta of this chunk, if there is one. Asked after every chunk: the
    /// question is inline, the writing not.
    #[inline(always)]
    fn flush_input(&mut self) {
        if !self.pending_input.is_empty() {
            self.write_input();
        }
    }

    #[inline(never)]
    fn write_input(&mut self) {
        if let Some(id) = &self.input_id {
            let delta = std::mem::take(&mut self.pending_input);
            self.writer.input_delta(id, delta, &mut self.parts);
        }
    }

    /// Closes the open reasoning block, if any.
    pub(crate) fn end_reasoning(&mut self) {
        self.flush_pending();
        self.writer.close_reasoning(&mut self.parts);
    }

    /// Whitespace after the last call that nothing but another call or the end of the output
    /// followed: the calls' layout, not answer text (a model that pads its answer with newlines
    /// after a call until the token limit writes no text part of newlines).
    fn drop_held_space(&mut self) {
        self.held_space.clear();
    }

    /// The output ended: whitespace held after the last call is dropped, and whichever block
    /// is open is closed.
    pub(crate) fn end_output(&mut self) {
        self.drop_held_space();
        self.after_call = false;
        self.end_blocks();
    }

    /// Closes whichever block is open.
    pub(crate) fn end_blocks(&mut self) {
        self.flush_pending();
        self.writer.close_blocks(&mut self.parts);
    }

    /// A tool call begins: closes the open block and announces the call.
    pub(crate) fn begin_call(&mut self, tool_name: &str) -> PartId {
        self.begin_call_as(tool_name, None)
    }

    /// A tool call begins under the id its markup gives (Kimi's `functions.f:0`), or a new one.
    pub(crate) fn begin_call_as(&mut self, tool_name: &str, id: Option<&str>) -> PartId {
        self.drop_held_space();
        self.after_call = false;
        self.end_blocks();
        self.flush_input();
        if self.presumed == Presumed::Open {
            self.presumed = Presumed::EndedByCall {
                span_written: false,
            };
            self.text_block = Block::Text;
        }
        let given = id.filter(|i| !i.is_empty()).map(PartId::from);
        let reused = given
            .as_ref()
            .filter(|g| self.call_ids.contains(*g))
            .cloned();
        let id = match given.filter(|_| reused.is_none()) {
            Some(i) => i,
            None => loop {
                let fresh = self.writer.next_call_id();
                if !self.call_ids.contains(&fresh) {
                    break fresh;
                }
            },
        };
        self.call_ids.insert(id.clone());
        self.input_id = Some(id.clone());
        if self.whole {
            self.writer.close_blocks(&mut self.parts);
        } else {
            self.writer.start_call(&id, tool_name, &mut self.parts);
        }
        if let Some(reused) = reused {
            // Two calls cannot share an id: the second gets its own, and the user is told.
            self.parts.push(Part::error(ErrorPart {
                tool_call_id: Some(id.clone()),
                tool_name: Some(tool_name.to_string()),
                ..ErrorPart::reason(
                    "duplicate-call-id",
                    format!("the call id \"{reused}\" was given before in this output; this call is \"{id}\""),
                )
            }));
        }
        id
    }

    /// A piece of the call's canonical input JSON (taken as it is when it is the first of
    /// this chunk, so a one-piece delta is never copied).
    ///
    /// Deltas always belong to the call begun last (scanners finish a call before they begin
    /// the next), so the id is not compared on this hot path.
    pub(crate) fn input_delta(&mut self, id: &PartId, delta: Delta) {
        if delta.is_empty() || self.whole {
            return;
        }
        debug_assert_eq!(
            self.input_id.as_ref(),
            Some(id),
            "a delta for a call not begun last"
        );
        if self.input_id.is_none() {
            self.input_id = Some(id.clone());
        }
        if self.pending_input.is_empty() {
            self.pending_input = delta;
        } else {
            self.pending_input.push_str(&delta);
        }
    }

    /// [`Emitter::input_delta`] for a piece taken alone, outside a chunk's gathering (nothing
    /// is pending, nothing attached): the delta goes to `out` at once.
    #[inline]
    pub(crate) fn input_delta_to(&mut self, id: &PartId, delta: Delta, out: &mut Vec<Part>) {
        debug_assert!(self.pending.is_empty() && self.pending_input.is_empty());
        if self.whole {
            return;
        }
        debug_assert_eq!(
            self.input_id.as_ref(),
            Some(id),
            "a delta for a call not begun last"
        );
        self.writer.input_delta(id, delta, out);
    }

    /// The call is complete.
    pub(crate) fn end_call(&mut self, id: PartId, tool_name: &str, args: Args) {
        self.flush_input();
        let call = ToolCall {
            tool_call_id: id,
            tool_name: tool_name.to_string(),
            input: args.input,
            coercions: args.coercions,
            invalid: args.invalid,
            ..Default::default()
        };
        if self.whole {
            self.parts.push(Part::tool_call(call));
        } else {
            self.writer.end_call(call, &mut self.parts);
        }
        self.calls += 1;
        self.after_call = true;
    }

    /// A call that was announced turned out malformed: its input ends, no tool-call follows.
    pub(crate) fn abort_call(&mut self, id: &PartId) {
        // What follows a malformed call is text, whitespace included.
        self.after_call_text();
        self.flush_input();
        if !self.whole {
            self.writer.abort_call(id, &mut self.parts);
        }
    }

    /// The part writer, for a caller that writes into the same answer (the provider assembler,
    /// for reasoning that arrives apart from the text this emitter parses).
    pub(crate) fn writer(&mut self) -> &mut PartWriter {
        &mut self.writer
    }

    /// Whatever follows is text: held whitespace goes out as text.
    fn after_call_text(&mut self) {
        if self.after_call {
            self.after_call = false;
            let held = std::mem::take(&mut self.held_space);
            self.write(Block::Text, &held);
        }
    }

    /// The call `id` names `name`, which is not one of the tools.
    pub(crate) fn unknown_tool(&mut self, id: PartId, name: &str) {
        self.error(ErrorPart {
            tool_call_id: Some(id),
            tool_name: Some(name.to_string()),
            ..ErrorPart::reason(
                "unknown-tool",
                format!("\"{name}\" is not one of the tools"),
            )
        });
    }

    pub(crate) fn error(&mut self, e: ErrorPart) {
        self.flush_pending();
        self.flush_input();
        self.parts.push(Part::error(e));
    }

    /// Something the parser learned from the output and says (a marker suffix): a `warning`
    /// part whose code is a notice (see [`Warning::is_notice`](crate::part::Warning::is_notice)),
    /// emitted where it was learned.
    pub(crate) fn notice(&mut self, w: crate::part::Warning) {
        self.flush_pending();
        self.flush_input();
        self.parts.push(Part::warning(w));
    }

    /// `len` bytes of the text were not fed to the scanner, before its byte `at`.
    pub(crate) fn skip(&mut self, at: usize, len: usize) {
        record(&mut self.skipped, at, len);
    }

    /// The offset in the whole text of the scanner's byte `at`: after the bytes skipped before
    /// it (and at it, for the start of a span; not for its end).
    fn text_offset(&self, at: usize, start: bool) -> usize {
        self.whole_offset(shift(&self.skipped, at, start), start)
    }

    /// The offset in the whole text of byte `at` of the text after the end tokens and fences
    /// were taken out.
    fn whole_offset(&self, at: usize, start: bool) -> usize {
        shift(&self.removed, shift(&self.fenced, at, start), start)
    }

    /// `len` bytes (a fence line around a call) were taken out of the text the end-token filter
    /// passed on, before byte `at` of what the fence filter passes on.
    pub(crate) fn remove_fence(&mut self, at: usize, len: usize) {
        record(&mut self.fenced, at, len);
    }

    /// A span in the coordinates of the text the fence filter reads (after the end tokens were
    /// taken out); kept in order among the spans the others report later.
    pub(crate) fn fence_span(&mut self, start: usize, end: usize, kind: SpanKind) {
        let start = shift(&self.removed, start, true);
        let end = shift(&self.removed, end, false);
        self.text_span_whole(start, end, kind);
    }

    /// `len` bytes (an end token) were taken out of the text before its byte `at`: nothing
    /// after the end-token filter sees them.
    pub(crate) fn remove(&mut self, at: usize, len: usize) {
        record(&mut self.removed, at, len);
    }

    /// A span in the scanner's coordinates.
    pub(crate) fn span(&mut self, start: usize, end: usize, kind: SpanKind) {
        if end > start {
            let (scanner_start, scanner_end) = (start, end);
            let start = self.text_offset(start, true);
            let end = self.text_offset(end, false);
            if let Presumed::EndedByCall { span_written } = &mut self.presumed
                && !*span_written
                && matches!(kind, SpanKind::ToolCall | SpanKind::Malformed)
            {
                // The presumed reasoning ran from the start of the output to this call.
                *span_written = true;
                let from = self.whole_offset(0, true);
                if start > from {
                    self.spans.push(Span {
                        start: from,
                        end: start,
                        kind: SpanKind::Reasoning,
                    });
                }
            }
            if kind == SpanKind::Malformed {
                return self.malformed_span(scanner_start, scanner_end);
            }
            self.spans.push(Span { start, end, kind });
        }
    }

    /// A malformed span, `start..end` in the scanner's coordinates: in the whole text, without
    /// the bytes the scanner never saw inside it (reasoning the splitter took out while the
    /// markup was open), which have spans of their own; one span for each run of the markup's
    /// own text.
    fn malformed_span(&mut self, start: usize, end: usize) {
        let first = self.skipped.partition_point(|&(at, _)| at <= start);
        let last = self.skipped.partition_point(|&(at, _)| at < end);
        let mut from = start;
        for k in first..last {
            let at = self.skipped[k].0;
            self.push_malformed(from, at);
            from = at;
        }
        self.push_malformed(from, end);
    }

    /// A run `start..end` of a malformed span, in the scanner's coordinates.
    fn push_malformed(&mut self, start: usize, end: usize) {
        if end > start {
            let span = Span {
                start: self.text_offset(start, true),
                end: self.text_offset(end, false),
                kind: SpanKind::Malformed,
            };
            self.spans.push(span);
        }
    }

    /// A span in the coordinates of the text the reasoning splitter reads (reasoning, found
    /// before the scanner).
    pub(crate) fn text_span(&mut self, start: usize, end: usize, kind: SpanKind) {
        if end > start {
            let start = self.whole_offset(start, true);
            let end = self.whole_offset(end, false);
            self.spans.push(Span { start, end, kind });
        }
    }

    /// A span in the coordinates of the whole text, found before anything else reads it (an
    /// end token); kept in order among the spans the others report later.
    pub(crate) fn text_span_whole(&mut self, start: usize, end: usize, kind: SpanKind) {
        let at = self.spans.partition_point(|s| s.start <= start);
        self.spans.insert(at, Span { start, end, kind });
    }

    pub(crate) fn spans(&self) -> &[Span] {
        &self.spans
    }

    /// How many tool calls were completed.
    pub(crate) fn call_count(&self) -> usize {
        self.calls
    }

    /// Parts go straight into the caller's vector from here on (no copy at the end).
    pub(crate) fn attach(&mut self, out: &mut Vec<Part>) {
        std::mem::swap(&mut self.parts, out);
    }

    /// Ends the chunk: flushes the pending deltas into the caller's vector and gives it back.
    pub(crate) fn detach(&mut self, out: &mut Vec<Part>) {
        self.flush_pending();
        self.flush_input();
        std::mem::swap(&mut self.parts, out);
    }
}

/// Records `len` bytes left out before byte `at` in a list of `(offset, bytes left out there and
/// before)`.
fn record(list: &mut Vec<(usize, usize)>, at: usize, len: usize) {
    if len == 0 {
        return;
    }
    let total = list.last().map_or(0, |(_, t)| *t) + len;
    match list.last_mut() {
        Some(last) if last.0 == at => last.1 = total,
        _ => list.push((at, total)),
    }
}

/// Byte `at` of the shorter text as an offset in the longer one: after the bytes left out
/// before it (and at it, for the start of a span; not for its end).
fn shift(list: &[(usize, usize)], at: usize, start: bool) -> usize {
    if list.is_empty() {
        return at;
    }
    let n = list.partition_point(|(p, _)| if start { *p <= at } else { *p < at });
    at + n.checked_sub(1).map_or(0, |i| list[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spans written so far, as (start, end, kind).
    fn spans_of(em: &Emitter) -> Vec<(usize, usize, SpanKind)> {
        em.spans()
            .iter()
            .map(|s| (s.start, s.end, s.kind))
            .collect()
    }

    #[test]
    fn spans_move_past_the_bytes_the_scanner_never_saw() {
        let mut em = Emitter::new();
        // 10 bytes of reasoning before the scanner's byte 0, 5 more before its byte 20.
        em.skip(0, 10);
        em.skip(20, 5);
        em.span(0, 20, SpanKind::ToolCall);
        em.span(20, 30, SpanKind::ToolCall);
        assert_eq!(
            spans_of(&em),
            [(10, 30, SpanKind::ToolCall), (35, 45, SpanKind::ToolCall)]
        );
    }

    #[test]
    fn a_malformed_span_leaves_out_the_reasoning_inside_it() {
        let mut em = Emitter::new();
        // The scanner read 0..20 as markup that failed; the splitter took 30 bytes of
        // reasoning out before its byte 8, and 4 more right after its byte 20 (outside).
        em.skip(8, 30);
        em.skip(20, 4);
        em.span(0, 20, SpanKind::Malformed);
        em.span(20, 25, SpanKind::ToolCall);
        assert_eq!(
            spans_of(&em),
            [
                (0, 8, SpanKind::Malformed),
                (38, 50, SpanKind::Malformed),
                (54, 59, SpanKind::ToolCall),
            ]
        );
    }

    #[test]
    fn text_and_reasoning_coalesce_per_block_and_never_overlap() {
        let mut em = Emitter::new();
        let mut out = Vec::new();
        em.attach(&mut out);
        em.reasoning("a");
        em.reasoning("b");
        em.text("c");
        em.set_text_is_reasoning(true);
        em.text("d");
        em.end_blocks();
        em.detach(&mut out);
        let kinds: Vec<String> = out
            .iter()
            .map(|p| match p {
                Part::ReasoningDelta { delta, .. } | Part::TextDelta { delta, .. } => {
                    format!("{} {delta}", p.type_name())
                }
                other => other.type_name().to_string(),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "reasoning-start",
                "reasoning-delta ab",
                "reasoning-end",
                "text-start",
                "text-delta c",
                "text-end",
                "reasoning-start",
                "reasoning-delta d",
                "reasoning-end"
            ]
        );
    }
}
