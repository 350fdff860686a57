//! Everything one run produced, as the Raw and Parts panes (and a compare column) show it.
//!
//! A [`RunView`] holds three things apart: what was recorded ([`RunRecord`]: the request, the
//! wire events, the parts, the timings and the outcome), what the Raw pane shows made from it
//! ([`RawText`]: the output text with its labels, notes and highlights), and where the panes'
//! cursors are ([`RunCursor`]). The wire's payloads are held once, in the text the Raw pane shows
//! ([`Wire`]); a session saved from the run copies them out.
//!
//! A [`RunView`] is fed [`RunEvent`]s in order, each with the milliseconds since the run was
//! started, and never reads a clock itself: a recorded run fed again gives the same view, and
//! tests can give fixed times.

use std::collections::HashMap;
use std::ops::Range;

use toolscope_core::error::ErrorCategory;
use toolscope_core::part::{ErrorPart, FinishReason, Part, PartId, Usage};
use toolscope_core::protocol::SpanKind;
use toolscope_core::provider::{RawEvent, Request, RunEvent};
use toolscope_core::session::{Recorder, Session, raw_dropped_warning};

use super::parts::PartList;
use super::text_log::{Scroll, TextLog};
use super::timeline::Timeline;

/// Identifies a run; events of a run that is no longer shown are dropped.
pub type RunId = u64;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Nothing was sent yet.
    Idle,
    Streaming,
    Done,
    /// The provider or the request failed.
    Failed {
        category: ErrorCategory,
        message: String,
    },
    /// Esc stopped it.
    Cancelled,
    /// A check before sending refused it (the tools, the tool choice, the conversation): nothing
    /// left the playground, so no provider was involved.
    NotSent {
        message: String,
    },
}

impl RunState {
    pub fn is_running(&self) -> bool {
        matches!(self, RunState::Streaming)
    }

    /// The word the status line shows.
    pub fn word(&self) -> String {
        match self {
            RunState::Idle => "idle".into(),
            RunState::Streaming => "streaming".into(),
            RunState::Done => "done".into(),
            RunState::Failed { category, .. } => format!("error {category}"),
            RunState::Cancelled => "cancelled".into(),
            RunState::NotSent { .. } => "not sent".into(),
        }
    }
}

/// A highlighted byte range of the output text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Highlight {
    pub range: Range<usize>,
    pub kind: HighlightKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HighlightKind {
    /// Text protocol markup that became a tool call.
    Call,
    /// Markup that looked like a call but could not be read.
    Malformed,
    /// A native tool call's argument text.
    NativeArgs,
    /// A line toolscope writes about what the wire carried besides text: a refusal, a server
    /// tool's result, a source, redacted reasoning, a lint finding.
    Note,
    /// Reasoning: written in the text with its markers (a text protocol), or carried by the wire
    /// apart from the answer (native mode).
    Reasoning,
    /// Format markup around text and reasoning (harmony's message headers).
    Markup,
    /// A label the Raw pane puts before a native call's arguments or a reasoning block.
    Label,
}

/// What a piece of the Raw pane's output is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Answer,
    Call(PartId),
    Reasoning(PartId),
    /// A note of toolscope's own (never passed to `push_output`).
    Note,
}

/// Which text the Raw pane shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RawMode {
    /// The model's output as it streams.
    #[default]
    Output,
    /// The wire events (SSE data payloads, NDJSON lines).
    Wire,
}

/// One run as the playground holds it: what was recorded, what the panes show of it, and where
/// their cursors are.
#[derive(Clone, Debug)]
pub struct RunView {
    /// What the run was and what it gave (with the results of executed calls, what Ctrl+S
    /// saves).
    pub record: RunRecord,
    /// The Raw pane's output text, made from the record as it arrives.
    pub shown: RawText,
    /// Where the Raw pane is scrolled and which Parts row is selected.
    pub cursor: RunCursor,
}

/// What a run was and what it gave.
#[derive(Clone, Debug)]
pub struct RunRecord {
    pub id: Option<RunId>,
    /// The request as sent (absent before the first run).
    pub request: Option<Request>,
    pub state: RunState,
    /// The wire events as they arrived (the Raw pane's wire view reads them in place).
    pub wire: Wire,
    pub parts: PartList,
    pub first_output_ms: Option<u64>,
    pub last_output_ms: Option<u64>,
    pub ended_ms: Option<u64>,
    pub output_pieces: u64,
    pub finish: Option<FinishReason>,
    pub usage: Option<Usage>,
    /// How many lint warnings the run produced (the status line shows them).
    pub warnings: usize,
    /// With protocol detection: the protocol the answer text is read with, once chosen.
    pub detected: Option<Detection>,
    /// Where the results of executed MCP calls begin among the parts, once there are some.
    pub results_from: Option<usize>,
    /// When the output pieces came and each call started and ended.
    pub timeline: Timeline,
}

/// The Raw pane's output text: every output piece in arrival order (answer text, native call
/// arguments and reasoning set apart on their own lines under a label, notes), highlighted.
#[derive(Clone, Debug)]
pub struct RawText {
    pub output: TextLog,
    /// Sorted, non-overlapping ranges of `output`.
    pub highlights: Vec<Highlight>,
    /// Where each stretch of answer text starts: (offset in the answer alone, offset in
    /// `output`). Span events count answer bytes only.
    answer_starts: Vec<(usize, usize)>,
    answer_len: usize,
    /// What the last output piece was.
    last_piece: Option<Piece>,
    /// The tool name of each native call, from its `tool-input-start`, for the labels.
    call_names: HashMap<PartId, String>,
}

/// Where the panes showing a run are: the Raw pane's scroll in each of its texts, and the Parts
/// selection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunCursor {
    pub output_scroll: Scroll,
    pub wire_scroll: Scroll,
    /// Selected row of the Parts list; `None` follows the last row.
    pub selected: Option<usize>,
    /// First row shown when a row is selected.
    pub parts_top: usize,
}

/// The wire events of a run, their payloads held once: joined (one per line) in the text the Raw
/// pane shows, each event a range of it.
///
/// One answer keeps at most its request's `limits.raw_bytes` of wire text (`--max-raw-mib` in
/// `run`; 64 MiB by default): past it, the oldest events are dropped from memory, the text then
/// opens with a line that says how many, and a saved session carries a `raw-dropped` warning.
/// The parts are never dropped.
#[derive(Clone, Debug, Default)]
pub struct Wire {
    text: TextLog,
    events: Vec<WireEvent>,
    /// The most payload bytes kept; 0: no bound.
    limit: usize,
    /// Payload bytes of the events kept.
    held: usize,
    /// The events dropped from the front, and their payload bytes.
    dropped: (usize, usize),
}

#[derive(Clone, Debug)]
struct WireEvent {
    at_ms: u64,
    status: Option<u16>,
    retry_after: Option<f64>,
    /// The payload's bytes in the text.
    data: Range<usize>,
}

impl Wire {
    /// An empty wire that keeps at most `limit` payload bytes (0: no bound).
    pub fn bounded(limit: usize) -> Wire {
        Wire {
            limit,
            ..Wire::default()
        }
    }

    /// Adds an event at the end; past the bound, drops the oldest (down to three quarters of
    /// it, so that the text is rebuilt once per quarter of the bound, not once per event).
    pub fn push(&mut self, raw: RawEvent) {
        if !self.events.is_empty() || self.dropped.0 > 0 {
            self.text.push_str("\n");
        }
        let start = self.text.len();
        self.text.push_str(&raw.data);
        self.held += raw.data.len();
        self.events.push(WireEvent {
            at_ms: raw.at_ms,
            status: raw.status,
            retry_after: raw.retry_after,
            data: start..self.text.len(),
        });
        if self.limit > 0 && self.held > self.limit {
            self.drop_oldest();
        }
    }

    fn drop_oldest(&mut self) {
        let target = self.limit - self.limit / 4;
        let mut n = 0;
        let mut bytes = 0;
        while n + 1 < self.events.len() && self.held - bytes > target {
            bytes += self.events[n].data.len();
            n += 1;
        }
        self.dropped.0 += n;
        self.dropped.1 += bytes;
        self.held -= bytes;
        let kept: Vec<RawEvent> = self.events().split_off(n);
        self.text = TextLog::new();
        self.events.clear();
        self.text.push_str(&format!(
            "[the oldest {} wire event{} of this answer ({} bytes) were dropped from memory: one \
             answer keeps {} bytes of wire text; every part is kept]",
            self.dropped.0,
            if self.dropped.0 == 1 { "" } else { "s" },
            self.dropped.1,
            self.limit
        ));
        for raw in kept {
            self.text.push_str("\n");
            let start = self.text.len();
            self.text.push_str(&raw.data);
            self.events.push(WireEvent {
                at_ms: raw.at_ms,
                status: raw.status,
                retry_after: raw.retry_after,
                data: start..self.text.len(),
            });
        }
    }

    /// The events dropped from memory so far, and their payload bytes.
    pub fn dropped(&self) -> (usize, usize) {
        self.dropped
    }

    /// The most payload bytes kept (0: no bound).
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// How many events arrived.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The payloads, one per line, as the Raw pane shows them.
    pub fn text(&self) -> &TextLog {
        &self.text
    }

    /// The events as they arrived (made from the text: what a session saves).
    pub fn events(&self) -> Vec<RawEvent> {
        self.events
            .iter()
            .map(|e| RawEvent {
                at_ms: e.at_ms,
                data: self.text.as_str()[e.data.clone()].to_string(),
                status: e.status,
                retry_after: e.retry_after,
            })
            .collect()
    }
}

/// Which protocol detection chose for a run's text, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Detection {
    pub protocol: String,
    pub reason: String,
}

impl Default for RunView {
    fn default() -> Self {
        RunView::idle()
    }
}

impl RunRecord {
    /// How long the run's timeline spans, in ms: to its end, else its last output, else its
    /// last call (at least 1).
    pub fn timeline_end_ms(&self) -> u64 {
        let calls = self
            .timeline
            .calls
            .iter()
            .map(|c| c.end_ms.unwrap_or(c.start_ms))
            .max();
        [self.ended_ms, self.last_output_ms, calls]
            .into_iter()
            .flatten()
            .max()
            .unwrap_or(0)
            .max(1)
    }
}

impl RunView {
    pub fn idle() -> RunView {
        RunView {
            record: RunRecord {
                id: None,
                request: None,
                state: RunState::Idle,
                wire: Wire::default(),
                parts: PartList::default(),
                first_output_ms: None,
                last_output_ms: None,
                ended_ms: None,
                output_pieces: 0,
                finish: None,
                usage: None,
                warnings: 0,
                detected: None,
                results_from: None,
                timeline: Timeline::default(),
            },
            shown: RawText {
                output: TextLog::new(),
                highlights: Vec::new(),
                answer_starts: Vec::new(),
                answer_len: 0,
                last_piece: None,
                call_names: HashMap::new(),
            },
            cursor: RunCursor::default(),
        }
    }

    /// A view for a run that has just been sent.
    pub fn started(id: RunId, request: Request) -> RunView {
        let mut view = RunView::idle();
        view.record.id = Some(id);
        view.record.wire = Wire::bounded(request.limits.raw_bytes);
        view.record.request = Some(request);
        view.record.state = RunState::Streaming;
        view
    }

    /// A view for a request that failed its pre-send check: nothing was sent; the error part
    /// (reason `not-sent`, no provider category: no provider saw it) says why.
    pub fn refused(request: Option<Request>, why: &str) -> RunView {
        let mut view = RunView::idle();
        view.record.request = request;
        view.apply(
            RunEvent::Part(Part::error(ErrorPart::reason("not-sent", why))),
            0,
        );
        view.record.state = RunState::NotSent {
            message: why.to_string(),
        };
        view.record.ended_ms = Some(0);
        view
    }

    /// Whether the run is in native mode (reasoning and call arguments come apart from the
    /// answer text, and the Raw pane labels them). A native run read with protocol detection
    /// is native until the choice: after it, reasoning comes out of the answer text, which the
    /// Raw pane already shows (a wire's own reasoning comes first, before the text).
    fn native(&self) -> bool {
        self.record
            .request
            .as_ref()
            .is_some_and(|r| r.protocol.is_none() && self.record.detected.is_none())
    }

    /// Applies one event that arrived `at_ms` after the run started.
    pub fn apply(&mut self, event: RunEvent, at_ms: u64) {
        match event {
            RunEvent::Raw(raw) => self.record.wire.push(raw),
            RunEvent::Output(out) => {
                self.record.first_output_ms.get_or_insert(at_ms);
                self.record.last_output_ms = Some(at_ms);
                self.record.output_pieces += 1;
                self.record.timeline.piece(at_ms);
                let piece = match out.tool_call_id {
                    Some(id) => Piece::Call(id),
                    None => Piece::Answer,
                };
                self.shown.push_output(&out.text, piece);
            }
            RunEvent::Span(span) => {
                let kind = match span.kind {
                    SpanKind::ToolCall => HighlightKind::Call,
                    SpanKind::Malformed => HighlightKind::Malformed,
                    SpanKind::Reasoning => HighlightKind::Reasoning,
                    SpanKind::Markup => HighlightKind::Markup,
                };
                let range =
                    self.shown.answer_to_output(span.start)..self.shown.answer_to_output(span.end);
                self.shown.insert_highlight(Highlight { range, kind });
            }
            RunEvent::Detected { protocol, reason } => {
                self.record.detected = Some(Detection { protocol, reason });
            }
            RunEvent::Part(part) => {
                match &part {
                    Part::Finish {
                        finish_reason,
                        usage,
                    } => {
                        self.record.finish = Some(*finish_reason);
                        self.record.usage = usage.as_deref().copied();
                        if self.record.state == RunState::Streaming {
                            self.record.state = RunState::Done;
                        }
                        self.record.ended_ms = Some(at_ms);
                    }
                    Part::ToolInputStart { id, tool_name } => {
                        self.shown.call_names.insert(id.clone(), tool_name.clone());
                    }
                    Part::ReasoningDelta { id, delta } if self.native() => {
                        self.record.first_output_ms.get_or_insert(at_ms);
                        self.record.last_output_ms = Some(at_ms);
                        self.record.timeline.piece(at_ms);
                        self.shown.push_output(delta, Piece::Reasoning(id.clone()));
                    }
                    Part::Error(e) => {
                        if let Some(category) = e.category {
                            self.record.state = RunState::Failed {
                                category,
                                message: e.message.clone(),
                            };
                            self.record.finish.get_or_insert(FinishReason::Error);
                            self.record.ended_ms = Some(at_ms);
                        }
                    }
                    _ => {}
                }
                if let Some(note) = note(&part) {
                    self.shown.push_note(&note);
                }
                if matches!(part, Part::Warning(_)) {
                    self.record.warnings += 1;
                }
                self.record.timeline.part(&part, at_ms);
                self.record.parts.push(part);
            }
        }
    }

    /// The run as a session named `name` (up to its last event when it still streams); `None`
    /// before anything was sent.
    pub fn session(&self, name: Option<String>) -> Option<Session> {
        let request = self.record.request.clone()?;
        let ended = self
            .record
            .ended_ms
            .or(self.record.last_output_ms)
            .unwrap_or(0);
        // Results of executed MCP calls are the loop's, not the run's.
        let own = self
            .record
            .results_from
            .unwrap_or(self.record.parts.parts.len());
        let mut parts = self.record.parts.parts[..own].to_vec();
        let (n, bytes) = self.record.wire.dropped();
        if n > 0 {
            parts.push(raw_dropped_warning(self.record.wire.limit(), n, bytes));
        }
        let recorder = Recorder::from_run(request, self.record.wire.events(), parts);
        Some(recorder.finish(name, ended))
    }

    /// The result of an MCP call executed for this answer (a `tool-result` part, or the
    /// `error` of a call that failed): shown after the run's own parts, not part of the run.
    pub fn push_result(&mut self, part: Part) {
        self.record
            .results_from
            .get_or_insert(self.record.parts.parts.len());
        self.record.parts.push(part);
    }

    /// The run's event stream ended (the channel closed).
    pub fn ended(&mut self, at_ms: u64) {
        if self.record.state == RunState::Streaming {
            // A run always ends with `finish` or `error`; closing without one means the task
            // stopped early, which only a cancel does.
            self.record.state = RunState::Cancelled;
        }
        self.record.ended_ms.get_or_insert(at_ms);
    }

    pub fn cancel(&mut self) {
        if self.record.state == RunState::Streaming {
            self.record.state = RunState::Cancelled;
        }
    }

    /// Tokens per second over the output so far: the provider's output token count when known,
    /// else one token per output piece (what most servers stream).
    pub fn tokens_per_second(&self) -> Option<f64> {
        let (first, last) = (self.record.first_output_ms?, self.record.last_output_ms?);
        let tokens = self
            .record
            .usage
            .and_then(|u| u.output_tokens)
            .unwrap_or(self.record.output_pieces) as f64;
        let end = self.record.ended_ms.unwrap_or(last).max(last);
        (end > first && tokens > 1.0).then(|| tokens * 1000.0 / (end - first) as f64)
    }

    pub fn is_running(&self) -> bool {
        self.record.state.is_running()
    }

    pub fn log(&self, mode: RawMode) -> &TextLog {
        match mode {
            RawMode::Output => &self.shown.output,
            RawMode::Wire => self.record.wire.text(),
        }
    }

    pub fn scroll_mut(&mut self, mode: RawMode) -> &mut Scroll {
        match mode {
            RawMode::Output => &mut self.cursor.output_scroll,
            RawMode::Wire => &mut self.cursor.wire_scroll,
        }
    }

    pub fn scroll(&self, mode: RawMode) -> Scroll {
        match mode {
            RawMode::Output => self.cursor.output_scroll,
            RawMode::Wire => self.cursor.wire_scroll,
        }
    }

    /// Moves the Parts selection by `delta` rows in a list `height` rows tall (from following:
    /// starting at the last row). Moving past the last row follows again.
    pub fn select_by(&mut self, delta: isize, height: usize) {
        let n = self.record.parts.rows.len();
        if n == 0 {
            return;
        }
        // From following, the first step up selects the last row.
        let current = self.cursor.selected.unwrap_or(n) as isize;
        let target = current + delta;
        if target >= n as isize && delta > 0 {
            self.cursor.selected = None;
            return;
        }
        let target = target.clamp(0, n as isize - 1) as usize;
        self.select(target, height);
    }

    /// Selects row `i`, scrolling the list just enough to show it.
    pub fn select(&mut self, i: usize, height: usize) {
        let n = self.record.parts.rows.len();
        if n == 0 {
            return;
        }
        let i = i.min(n - 1);
        let height = height.max(1);
        if self.cursor.selected.is_none() {
            self.cursor.parts_top = n.saturating_sub(height);
        }
        self.cursor.selected = Some(i);
        if i < self.cursor.parts_top {
            self.cursor.parts_top = i;
        } else if i >= self.cursor.parts_top + height {
            self.cursor.parts_top = i + 1 - height;
        }
    }

    /// The first row shown by a list `height` rows tall.
    pub fn parts_top(&self, height: usize) -> usize {
        match self.cursor.selected {
            None => self.record.parts.rows.len().saturating_sub(height),
            Some(i) if i < self.cursor.parts_top || i >= self.cursor.parts_top + height => {
                i.saturating_sub(height.saturating_sub(1))
            }
            Some(_) => self.cursor.parts_top,
        }
    }
}

impl RawText {
    fn push_output(&mut self, text: &str, piece: Piece) {
        let switched = self.last_piece.as_ref() != Some(&piece);
        // Native call arguments and reasoning are set apart on their own lines under a label,
        // so that they do not run into the answer text or into each other.
        if switched && !self.output.is_empty() && !self.output.as_str().ends_with('\n') {
            self.output.push_str("\n");
        }
        if switched {
            let label = match &piece {
                Piece::Call(id) => Some(match self.call_names.get(id) {
                    Some(name) => format!("▸ {name} #{id}"),
                    None => format!("▸ call #{id}"),
                }),
                Piece::Reasoning(_) => Some("▸ reasoning".to_string()),
                // Text after a labelled block is labelled too, so each block says what it is.
                Piece::Answer
                    if matches!(self.last_piece, Some(Piece::Call(_) | Piece::Reasoning(_))) =>
                {
                    Some("▸ text".to_string())
                }
                Piece::Answer | Piece::Note => None,
            };
            if let Some(label) = label {
                let at = self.output.len();
                self.output.push_str(&label);
                self.highlights.push(Highlight {
                    range: at..self.output.len(),
                    kind: HighlightKind::Label,
                });
                self.output.push_str("\n");
            }
        }
        let at = self.output.len();
        let end = at + text.len();
        let kind = match &piece {
            Piece::Answer => {
                if switched {
                    self.answer_starts.push((self.answer_len, at));
                }
                self.answer_len += text.len();
                None
            }
            Piece::Call(_) => Some(HighlightKind::NativeArgs),
            Piece::Reasoning(_) => Some(HighlightKind::Reasoning),
            Piece::Note => None,
        };
        if let Some(kind) = kind {
            match self.highlights.last_mut() {
                Some(h) if !switched && h.kind == kind && h.range.end == at => h.range.end = end,
                _ => self.highlights.push(Highlight {
                    range: at..end,
                    kind,
                }),
            }
        }
        self.output.push_str(text);
        self.last_piece = Some(piece);
    }

    /// A note on a line of its own in the output, highlighted as such. It is not answer text, so
    /// the spans of emulated calls still map past it.
    fn push_note(&mut self, note: &str) {
        if !self.output.is_empty() && !self.output.as_str().ends_with('\n') {
            self.output.push_str("\n");
        }
        let at = self.output.len();
        self.output.push_str(note);
        self.output.push_str("\n");
        self.highlights.push(Highlight {
            range: at..at + note.len(),
            kind: HighlightKind::Note,
        });
        // The next answer text starts a new stretch of answer offsets.
        self.last_piece = Some(Piece::Note);
    }

    fn answer_to_output(&self, answer_offset: usize) -> usize {
        let i = self
            .answer_starts
            .partition_point(|&(a, _)| a <= answer_offset);
        match i {
            0 => answer_offset,
            _ => {
                let (a, o) = self.answer_starts[i - 1];
                o + (answer_offset - a)
            }
        }
    }

    fn insert_highlight(&mut self, h: Highlight) {
        if h.range.is_empty() {
            return;
        }
        if h.kind == HighlightKind::Reasoning {
            // A reasoning block arrives when it closes, after the calls made inside it (in the
            // families that call from their reasoning): it takes only what they left, so that
            // highlights never overlap.
            let inside: Vec<Range<usize>> = self
                .highlights
                .iter()
                .filter(|x| x.range.start < h.range.end && h.range.start < x.range.end)
                .map(|x| x.range.clone())
                .collect();
            if !inside.is_empty() {
                let mut from = h.range.start;
                for r in inside {
                    self.insert_highlight(Highlight {
                        range: from..r.start.max(from),
                        kind: HighlightKind::Reasoning,
                    });
                    from = r.end.max(from);
                }
                self.insert_highlight(Highlight {
                    range: from..h.range.end.max(from),
                    kind: HighlightKind::Reasoning,
                });
                return;
            }
        }
        let i = self
            .highlights
            .partition_point(|x| x.range.start < h.range.start);
        self.highlights.insert(i, h);
    }
}

/// The Raw pane's note for a part that carries something other than text or a client's call.
fn note(part: &Part) -> Option<String> {
    const MAX: usize = 300;
    let clip = |s: String| match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    };
    Some(match part {
        Part::Refusal { text } => format!("⊘ refusal: {text}"),
        Part::ToolResult(r) => clip(format!("⇐ {} result: {}", r.tool_name, r.output)),
        Part::Source(s) => format!(
            "↗ source: {}",
            s.url.as_deref().or(s.title.as_deref()).unwrap_or("")
        ),
        Part::ReasoningStart { redacted: true, .. } => {
            "▒ reasoning redacted by the provider".into()
        }
        Part::Warning(w) => format!("⚠ {}: {}", w.code, w.message),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolscope_core::protocol::Span;
    use toolscope_core::provider::{OutputText, RawEvent};

    fn out(text: &str, call: Option<&str>) -> RunEvent {
        RunEvent::Output(OutputText {
            text: text.into(),
            tool_call_id: call.map(Into::into),
        })
    }

    /// Each highlight of the shown output: its text and its kind.
    fn highlighted(v: &RunView) -> Vec<(&str, HighlightKind)> {
        v.shown
            .highlights
            .iter()
            .map(|h| (&v.shown.output.as_str()[h.range.clone()], h.kind))
            .collect()
    }

    #[test]
    fn notes_sit_on_their_own_lines_and_spans_map_past_them() {
        use toolscope_core::part::Warning;
        let mut v = RunView::idle();
        v.apply(out("ab", None), 1);
        v.apply(
            RunEvent::Part(Part::warning(Warning::new("usage-missing", "no usage"))),
            2,
        );
        v.apply(out("<c>", None), 3);
        v.apply(
            RunEvent::Span(Span {
                start: 2,
                end: 5,
                kind: SpanKind::ToolCall,
            }),
            4,
        );
        assert_eq!(
            v.shown.output.as_str(),
            "ab\n⚠ usage-missing: no usage\n<c>"
        );
        assert_eq!(v.record.warnings, 1);
        assert_eq!(
            highlighted(&v),
            [
                ("⚠ usage-missing: no usage", HighlightKind::Note),
                ("<c>", HighlightKind::Call)
            ]
        );
    }

    #[test]
    fn spans_are_answer_offsets_and_native_args_sit_apart() {
        let mut v = RunView::idle();
        v.record.state = RunState::Streaming;
        v.apply(
            RunEvent::Raw(RawEvent {
                at_ms: 1,
                data: "{}".into(),
                status: None,
                retry_after: None,
            }),
            1,
        );
        v.apply(out("Hi <tool_call>", None), 5);
        v.apply(out("{}</tool_call>", None), 6);
        v.apply(
            RunEvent::Span(Span {
                start: 3,
                end: 28,
                kind: SpanKind::ToolCall,
            }),
            6,
        );
        v.apply(
            RunEvent::Part(Part::ToolInputStart {
                id: "c1".into(),
                tool_name: "f".into(),
            }),
            7,
        );
        v.apply(out("{\"a\":", Some("c1")), 7);
        v.apply(out("1}", Some("c1")), 8);
        v.apply(out("{}", Some("c2")), 9);
        assert_eq!(
            v.shown.output.as_str(),
            "Hi <tool_call>{}</tool_call>\n▸ f #c1\n{\"a\":1}\n▸ call #c2\n{}"
        );
        assert_eq!(
            highlighted(&v),
            [
                ("<tool_call>{}</tool_call>", HighlightKind::Call),
                ("▸ f #c1", HighlightKind::Label),
                ("{\"a\":1}", HighlightKind::NativeArgs),
                ("▸ call #c2", HighlightKind::Label),
                ("{}", HighlightKind::NativeArgs),
            ]
        );
        assert_eq!(v.record.first_output_ms, Some(5));
        assert_eq!(v.tokens_per_second(), Some(5.0 * 1000.0 / 4.0));
        v.apply(
            RunEvent::Part(Part::Finish {
                finish_reason: FinishReason::ToolCalls,
                usage: None,
            }),
            10,
        );
        assert_eq!(v.record.state, RunState::Done);
    }

    #[test]
    fn native_reasoning_and_calls_are_labelled_in_the_raw_text() {
        let request = Request::new(toolscope_core::provider::ProviderKind::OPENAI, "m");
        let mut v = RunView::started(1, request);
        for delta in ["Let me ", "think."] {
            v.apply(
                RunEvent::Part(Part::ReasoningDelta {
                    id: "r".into(),
                    delta: delta.into(),
                }),
                1,
            );
        }
        v.apply(out("Sure.", None), 2);
        v.apply(
            RunEvent::Part(Part::ToolInputStart {
                id: "c".into(),
                tool_name: "get_weather".into(),
            }),
            3,
        );
        v.apply(out("{}", Some("c")), 3);
        assert_eq!(
            v.shown.output.as_str(),
            "▸ reasoning\nLet me think.\n▸ text\nSure.\n▸ get_weather #c\n{}"
        );
        let kinds: Vec<_> = v.shown.highlights.iter().map(|h| h.kind).collect();
        assert_eq!(
            kinds,
            [
                HighlightKind::Label,
                HighlightKind::Reasoning,
                HighlightKind::Label,
                HighlightKind::Label,
                HighlightKind::NativeArgs
            ]
        );
    }

    /// With protocol detection, the wire's own reasoning (before the choice) is labelled as in
    /// native mode; reasoning read out of the text after the choice is already in the text.
    #[test]
    fn with_detection_only_the_wires_own_reasoning_is_added_to_the_raw_text() {
        let mut request = Request::new(toolscope_core::provider::ProviderKind::OPENAI, "m");
        request.detect_protocol = true;
        let mut v = RunView::started(1, request);
        let reasoning = |id: &str, delta: &str| {
            RunEvent::Part(Part::ReasoningDelta {
                id: id.into(),
                delta: delta.into(),
            })
        };
        v.apply(reasoning("r1", "Native."), 1);
        v.apply(out("<think>Hm.</think>Hi", None), 2);
        v.apply(
            RunEvent::Detected {
                protocol: "hermes".into(),
                reason: "the reasoning marker".into(),
            },
            2,
        );
        v.apply(reasoning("r1", "Hm."), 2);
        assert_eq!(
            v.shown.output.as_str(),
            "▸ reasoning\nNative.\n▸ text\n<think>Hm.</think>Hi"
        );
        assert_eq!(
            v.record.detected.as_ref().map(|d| d.protocol.as_str()),
            Some("hermes")
        );
    }

    #[test]
    fn a_provider_error_fails_the_run_and_a_parser_error_does_not() {
        let mut v = RunView::idle();
        v.record.state = RunState::Streaming;
        let parser = toolscope_core::part::ErrorPart::reason("unknown-tool", "no such tool");
        v.apply(RunEvent::Part(Part::error(parser)), 1);
        assert!(v.is_running());
        let e = toolscope_core::error::ProviderError::new(
            toolscope_core::error::ErrorCategory::ProviderRateLimit,
            "slow down",
        );
        v.apply(RunEvent::Part(Part::error(e.to_part())), 2);
        assert_eq!(v.record.state.word(), "error provider_rate_limit");
    }

    #[test]
    fn the_wire_is_held_once_and_gives_its_events_back_whole() {
        let raw = |at_ms: u64, data: &str, status: Option<u16>| RawEvent {
            at_ms,
            data: data.into(),
            status,
            retry_after: status.map(|_| 2.5),
        };
        let sent = [
            raw(1, "{\"a\":1}", None),
            raw(2, "", None),
            raw(3, "two\nlines", Some(429)),
        ];
        let mut v = RunView::started(
            1,
            Request::new(toolscope_core::provider::ProviderKind::OPENAI, "m"),
        );
        for r in &sent {
            v.apply(RunEvent::Raw(r.clone()), r.at_ms);
        }
        assert_eq!(v.record.wire.len(), 3);
        assert_eq!(v.record.wire.text().as_str(), "{\"a\":1}\n\ntwo\nlines");
        assert_eq!(v.record.wire.events(), sent);
        assert_eq!(v.session(None).unwrap().events, sent);
    }

    /// Issue 25: the playground held an answer's whole raw text, whatever its size. Past the
    /// request's `limits.raw_bytes` the oldest wire events go (the text says so first), the
    /// parts all stay, and a saved session says what was dropped.
    #[test]
    fn the_wire_text_of_one_answer_is_bounded() {
        let mut request = Request::new(toolscope_core::provider::ProviderKind::OPENAI, "m");
        request.limits.raw_bytes = 1000;
        let mut v = RunView::started(1, request);
        for i in 0..500u64 {
            let data = format!("{{\"i\":{i:04}}}"); // 10 bytes
            v.apply(
                RunEvent::Raw(RawEvent {
                    at_ms: i,
                    data,
                    status: None,
                    retry_after: None,
                }),
                i,
            );
            v.apply(
                RunEvent::Part(Part::TextDelta {
                    id: "t".into(),
                    delta: "x".into(),
                }),
                i,
            );
        }
        let held: usize = v.record.wire.events().iter().map(|e| e.data.len()).sum();
        assert!(held <= 1000, "{held} bytes held");
        let (n, bytes) = v.record.wire.dropped();
        assert_eq!(
            n + v.record.wire.len(),
            500,
            "every event is kept or counted"
        );
        assert_eq!(bytes, n * 10);
        let events = v.record.wire.events();
        assert_eq!(
            events.last().unwrap().data,
            "{\"i\":0499}",
            "the newest stay"
        );
        assert_eq!(events[0].at_ms as usize, n, "the oldest went, in order");
        let text = v.record.wire.text().as_str();
        assert!(
            text.starts_with(&format!("[the oldest {n} wire events of this answer")),
            "{}",
            &text[..120]
        );
        assert_eq!(v.record.parts.parts.len(), 500, "no part is dropped");
        let session = v.session(None).unwrap();
        assert_eq!(session.events, events);
        assert!(session.parts.iter().any(
            |p| matches!(p, Part::Warning(w) if w.code == "raw-dropped" && w.message.contains(&format!("oldest {n} raw events")))
        ));
    }

    #[test]
    fn selection_scrolls_the_list() {
        let mut v = RunView::idle();
        for i in 0..10 {
            v.record.parts.push(Part::TextStart {
                id: i.to_string().into(),
            });
        }
        assert_eq!(v.parts_top(4), 6);
        v.select_by(-1, 4);
        assert_eq!((v.cursor.selected, v.parts_top(4)), (Some(9), 6));
        v.select_by(-5, 4);
        assert_eq!((v.cursor.selected, v.parts_top(4)), (Some(4), 4));
        v.select_by(20, 4);
        assert_eq!(v.cursor.selected, None);
    }
}
