//! Replaying a session: its recorded wire events, one at a time, through a fresh decoder.
//!
//! Each step is one wire event and the run events it produces, with the time it arrived at in
//! the live run; the last step closes the answer. Pacing (recorded pace, faster, instant, step
//! by step, paused) is the caller's: a step only says when it happened. A replay may change the
//! protocol or the tools, which re-reads the same output under another parser or schema.
//!
//! [`Replay`] plays one model turn (of a loop session, the first). A loop is played by
//! [`LoopReplay`], or piece by piece from [`Session::segments`]: each turn through its own
//! [`Replay`] (so [`ReplayOptions`] apply to every turn), each recorded tool call as the parts
//! the live loop printed for it. The recorded calls are shown as they ran, even where a
//! re-reading makes other calls; no tool is ever run again and no server is needed.

use crate::part::Part;
use crate::protocol::Protocol;
use crate::provider::{Decoder, RawEvent, Request, RunEvent};
use crate::tool::ToolSet;

use super::Session;
use super::steps::{RecordedCall, Step};

/// What to read differently from the recording.
#[derive(Clone, Debug, Default)]
pub struct ReplayOptions {
    /// Re-parse the output under this protocol (`Some(None)`: as native output, no protocol).
    pub protocol: Option<Option<Protocol>>,
    /// With `protocol: Some(None)`: read the native output's text with protocol detection
    /// (`--protocol auto`). Ignored when `protocol` is `None` (the recorded reading stands).
    pub detect_protocol: bool,
    /// Re-coerce and re-validate against these tools.
    pub tools: Option<ToolSet>,
}

/// One step of a replay.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayStep {
    /// Milliseconds after the request at which this happened live.
    pub at_ms: u64,
    /// The raw event (absent for the closing step) followed by what it produced.
    pub events: Vec<RunEvent>,
}

/// A session being replayed.
pub struct Replay {
    request: Request,
    decoder: Decoder,
    events: Vec<RawEvent>,
    next: usize,
    end: Vec<crate::part::Part>,
    /// With recorded closing parts: how many decoded parts the live run had before them. The
    /// decoder's own ending (an error worded without the live URL, or a cut-stream error where
    /// the live run timed out) is replaced by the recorded one.
    keep: Option<usize>,
    emitted: usize,
    ended_at_ms: u64,
    done: bool,
}

impl Replay {
    /// A replay of `session` from its first wire event, read as `options` says. With a changed
    /// protocol or tools the recorded closing parts are dropped, and the decoder's own ending
    /// stands.
    pub fn new(session: &Session, options: ReplayOptions) -> Self {
        let mut request = session.request.clone();
        let changed = options.protocol.is_some() || options.tools.is_some();
        if let Some(p) = options.protocol {
            request.detect_protocol = p.is_none() && options.detect_protocol;
            request.protocol = p;
        }
        if let Some(t) = options.tools {
            request.tools = t;
        }
        // Closing parts recorded for the original reading only make sense for it.
        let end = if changed {
            Vec::new()
        } else {
            session.end.clone()
        };
        let keep = (!end.is_empty()).then(|| session.parts.len().saturating_sub(end.len()));
        Replay {
            decoder: Decoder::new(&request),
            request,
            events: session.events.clone(),
            next: 0,
            end,
            keep,
            emitted: 0,
            ended_at_ms: session.ended_at_ms,
            done: false,
        }
    }

    /// The model's output text as the wire carried it (read with no protocol): what a text
    /// protocol parses, and what `--protocol auto` looks at.
    pub fn output_text(session: &Session) -> String {
        let options = ReplayOptions {
            protocol: Some(None),
            detect_protocol: false,
            tools: None,
        };
        let mut text = String::new();
        for event in Replay::new(session, options).run_to_end() {
            if let RunEvent::Part(crate::part::Part::TextDelta { delta, .. }) = event {
                text.push_str(&delta);
            }
        }
        text
    }

    /// The request as this replay reads it (with any changed protocol or tools).
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// How many steps there are in all (the wire events, and the close).
    pub fn len(&self) -> usize {
        self.events.len() + 1
    }

    /// Always `false`: even a session without wire events has its closing step.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// How many steps were taken.
    pub fn position(&self) -> usize {
        self.next + usize::from(self.done)
    }

    /// Whether the closing step was taken; no step follows it.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// When the next step happened live, if there is one.
    pub fn next_at_ms(&self) -> Option<u64> {
        match self.events.get(self.next) {
            Some(raw) => Some(raw.at_ms),
            None if !self.done => Some(self.ended_at_ms),
            None => None,
        }
    }

    /// Takes the next step.
    pub fn step(&mut self) -> Option<ReplayStep> {
        if let Some(raw) = self.events.get(self.next) {
            self.next += 1;
            let mut events = vec![RunEvent::Raw(raw.clone())];
            for e in self.decoder.push_raw(raw) {
                if let RunEvent::Part(_) = e {
                    if self.keep.is_some_and(|k| self.emitted >= k) {
                        continue;
                    }
                    self.emitted += 1;
                }
                events.push(e);
            }
            return Some(ReplayStep {
                at_ms: raw.at_ms,
                events,
            });
        }
        if self.done {
            return None;
        }
        self.done = true;
        let events = if self.end.is_empty() {
            self.decoder.finish()
        } else {
            std::mem::take(&mut self.end)
                .into_iter()
                .map(RunEvent::Part)
                .collect()
        };
        Some(ReplayStep {
            at_ms: self.ended_at_ms,
            events,
        })
    }

    /// Every remaining event at once (an instant replay).
    pub fn run_to_end(&mut self) -> Vec<RunEvent> {
        let mut all = Vec::new();
        while let Some(step) = self.step() {
            all.extend(step.events);
        }
        all
    }
}

/// One piece of a session, in the order it happened.
#[derive(Clone, Debug)]
pub enum Segment {
    /// A model turn, as a one-turn session (replay it with [`Replay::new`]), its request sent
    /// `at_ms` after the session's first request.
    Turn {
        /// When the turn's request was sent, in milliseconds since the first request.
        at_ms: u64,
        /// The turn alone: its request, wire events, closing parts and parts.
        session: Box<Session>,
    },
    /// A recorded `tools/call` and what the live loop printed for it when it ended
    /// ([`RecordedCall::parts`]: a `tool-result`, or an `error` with category
    /// `tool_execution_failed`).
    Call {
        /// The call as recorded, with its times.
        call: Box<RecordedCall>,
        /// The parts printed at `call.ended_at_ms`.
        parts: Vec<Part>,
    },
    /// The loop stopped by itself and printed `parts` at `at_ms` (the `max-steps` warning).
    Stop {
        /// When, in milliseconds since the first request.
        at_ms: u64,
        /// What it printed.
        parts: Vec<Part>,
    },
}

impl Segment {
    /// When the segment began, in milliseconds since the session's first request.
    pub fn at_ms(&self) -> u64 {
        match self {
            Segment::Turn { at_ms, .. } | Segment::Stop { at_ms, .. } => *at_ms,
            Segment::Call { call, .. } => call.at_ms,
        }
    }
}

impl Session {
    /// The session in the order it ran: its first model turn, then each tool call, further turn
    /// and stop of its loop. A one-turn session is one [`Segment::Turn`].
    pub fn segments(&self) -> Vec<Segment> {
        let mut out = vec![Segment::Turn {
            at_ms: 0,
            session: Box::new(self.first_turn()),
        }];
        for step in &self.steps {
            out.push(match step {
                Step::Turn(t) => Segment::Turn {
                    at_ms: t.at_ms,
                    session: Box::new(self.turn_session(t)),
                },
                Step::ToolCall(c) => Segment::Call {
                    parts: c.parts(),
                    call: c.clone(),
                },
                Step::Stop(s) => Segment::Stop {
                    at_ms: s.at_ms,
                    parts: s.parts.clone(),
                },
            });
        }
        out
    }
}

/// One step of a [`LoopReplay`].
#[derive(Clone, Debug, PartialEq)]
pub struct LoopStep {
    /// When this happened live, in milliseconds since the session's first request.
    pub at_ms: u64,
    /// The index of the segment it belongs to in [`LoopReplay::segments`] (0: the first turn).
    pub segment: usize,
    /// For a turn: the raw event (absent for the turn's closing step) and what it produced;
    /// for a tool call or the loop's stop: the parts it printed.
    pub events: Vec<RunEvent>,
}

/// A whole session being replayed, MCP loop included: each turn's wire events through a fresh
/// decoder of that turn's request (read as the options say), each recorded tool call's parts
/// at the time its result came. A one-turn session replays exactly as [`Replay`] plays it.
pub struct LoopReplay {
    segments: Vec<Segment>,
    options: ReplayOptions,
    /// The segment the next step comes from.
    index: usize,
    /// The replay of that segment when it is a turn.
    turn: Option<Replay>,
}

impl LoopReplay {
    /// A replay of `session` from its first wire event, every turn read as `options` says.
    pub fn new(session: &Session, options: ReplayOptions) -> Self {
        let mut r = LoopReplay {
            segments: session.segments(),
            options,
            index: 0,
            turn: None,
        };
        r.enter(0);
        r
    }

    fn enter(&mut self, index: usize) {
        self.index = index;
        self.turn = match self.segments.get(index) {
            Some(Segment::Turn { session, .. }) => Some(Replay::new(session, self.options.clone())),
            _ => None,
        };
    }

    /// The session's pieces, in order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The index of the segment the next step comes from; `segments().len()` once done.
    pub fn segment(&self) -> usize {
        self.index
    }

    /// The replay of the turn being played, when the next step comes from a turn (its
    /// [`Replay::request`] is that turn's request as it is read).
    pub fn turn(&self) -> Option<&Replay> {
        self.turn.as_ref()
    }

    /// Whether every step was taken.
    pub fn is_done(&self) -> bool {
        self.index >= self.segments.len()
    }

    /// When the next step happened live (milliseconds since the first request), if there is
    /// one.
    pub fn next_at_ms(&self) -> Option<u64> {
        match self.segments.get(self.index)? {
            Segment::Turn { at_ms, .. } => {
                let inner = self.turn.as_ref().and_then(Replay::next_at_ms).unwrap_or(0);
                Some(at_ms + inner)
            }
            Segment::Call { call, .. } => Some(call.ended_at_ms.max(call.at_ms)),
            Segment::Stop { at_ms, .. } => Some(*at_ms),
        }
    }

    /// Takes the next step.
    pub fn step(&mut self) -> Option<LoopStep> {
        let segment = self.index;
        let step = match self.segments.get(segment)? {
            Segment::Turn { at_ms, .. } => {
                let at = *at_ms;
                let inner = self.turn.as_mut().and_then(Replay::step);
                let done = self.turn.as_ref().is_none_or(Replay::is_done);
                if done {
                    self.enter(segment + 1);
                }
                match inner {
                    Some(s) => LoopStep {
                        at_ms: at + s.at_ms,
                        segment,
                        events: s.events,
                    },
                    // Cannot happen (a turn always has its closing step); go on with the next.
                    None => return self.step(),
                }
            }
            Segment::Call { call, parts } => {
                let s = LoopStep {
                    at_ms: call.ended_at_ms.max(call.at_ms),
                    segment,
                    events: parts.iter().cloned().map(RunEvent::Part).collect(),
                };
                self.enter(segment + 1);
                s
            }
            Segment::Stop { at_ms, parts } => {
                let s = LoopStep {
                    at_ms: *at_ms,
                    segment,
                    events: parts.iter().cloned().map(RunEvent::Part).collect(),
                };
                self.enter(segment + 1);
                s
            }
        };
        Some(step)
    }

    /// Every remaining event at once (an instant replay).
    pub fn run_to_end(&mut self) -> Vec<RunEvent> {
        let mut all = Vec::new();
        while let Some(step) = self.step() {
            all.extend(step.events);
        }
        all
    }
}
