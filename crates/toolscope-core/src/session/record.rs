//! Recording a run, or an MCP tool loop, into a [`Session`] as its events arrive.
//!
//! The recorder keeps each model turn's raw wire events and parts. Most turns end with a part
//! their last wire event produced (a `finish`, or the error a failed response's body maps to),
//! which replay gives back by itself; a turn that ended without one (a refused connection, an
//! idle timeout, a validation failure before anything was sent) keeps those closing parts in
//! `end`, so that the replay ends the same way.
//!
//! A loop is recorded in the order it runs, on one clock that starts when the first request is
//! sent:
//!
//! ```text
//! let mut r = Recorder::new(first_request);       // the first turn begins at 0
//! r.push(&event); …                               // its run events, as they come
//! r.end_turn(ms_since_its_request);
//! r.tool_call(RecordedCall { at_ms, ended_at_ms, … });   // each tools/call
//! r.next_turn(second_request, ms_since_first_request);
//! r.push(&event); …  r.end_turn(…);
//! r.stop(ms, vec![max_steps_warning]);            // only when the loop printed why it stopped
//! r.mcp(McpRecord { servers, tools });            // any time
//! let session = r.finish(name, 0);
//! ```
//!
//! A caller that kept each turn's events and parts (the playground) can give them whole:
//! [`Recorder::from_run`] for the first turn, [`Recorder::next_turn`] then [`Recorder::extend`]
//! for each later one.

use crate::part::{Part, Warning};
use crate::provider::{Decoder, RawEvent, Request, RunEvent};

use super::steps::{LoopStop, McpRecord, RecordedCall, RecordedTurn, Step};
use super::{FORMAT, Session, now_rfc3339};

/// One model turn being recorded.
struct TurnBuf {
    request: Request,
    events: Vec<RawEvent>,
    parts: Vec<Part>,
    last_at_ms: u64,
    /// Set by [`Recorder::end_turn`]; else the turn ends at its last event (or, for the last
    /// turn, when [`Recorder::finish`] says).
    ended_at_ms: Option<u64>,
    /// The bytes of raw wire text held in `events`.
    raw_held: usize,
    /// The oldest raw events dropped to stay within the request's raw limit, and their bytes.
    dropped: (usize, usize),
}

impl TurnBuf {
    fn new(request: Request) -> Self {
        TurnBuf {
            request,
            events: Vec::new(),
            parts: Vec::new(),
            last_at_ms: 0,
            ended_at_ms: None,
            raw_held: 0,
            dropped: (0, 0),
        }
    }

    /// Keeps the raw text held within the request's [`Limits::raw_bytes`]: beyond it the oldest
    /// events are dropped (down to three quarters of the limit, so that dropping stays cheap),
    /// the newest always kept. The parts are never touched.
    ///
    /// [`Limits::raw_bytes`]: crate::provider::Limits::raw_bytes
    fn bound_raw(&mut self) {
        let limit = self.request.limits.raw_bytes;
        if self.raw_held <= limit {
            return;
        }
        let target = limit - limit / 4;
        let mut n = 0;
        let mut bytes = 0;
        while n + 1 < self.events.len() && self.raw_held - bytes > target {
            bytes += self.events[n].data.len();
            n += 1;
        }
        self.events.drain(..n);
        self.raw_held -= bytes;
        self.dropped.0 += n;
        self.dropped.1 += bytes;
    }

    fn push(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Raw(raw) => {
                self.last_at_ms = self.last_at_ms.max(raw.at_ms);
                self.raw_held += raw.data.len();
                self.events.push(raw.clone());
                self.bound_raw();
            }
            RunEvent::Part(p) => self.parts.push(p.clone()),
            // Derived from the wire events again on replay.
            RunEvent::Output(_) | RunEvent::Span(_) | RunEvent::Detected { .. } => {}
        }
    }

    fn extend(&mut self, events: Vec<RawEvent>, parts: Vec<Part>) {
        if let Some(last) = events.iter().map(|e| e.at_ms).max() {
            self.last_at_ms = self.last_at_ms.max(last);
        }
        self.raw_held += events.iter().map(|e| e.data.len()).sum::<usize>();
        self.events.extend(events);
        self.bound_raw();
        self.parts.extend(parts);
    }

    /// The turn's events, its end time, its closing parts and its parts.
    fn close(
        mut self,
        ended_at_ms: Option<u64>,
    ) -> (Request, Vec<RawEvent>, u64, Vec<Part>, Vec<Part>) {
        if self.dropped.0 > 0 {
            // The notice closes the turn's parts; replay gives it back as a recorded ending.
            let (n, bytes) = self.dropped;
            self.parts
                .push(raw_dropped_warning(self.request.limits.raw_bytes, n, bytes));
        }
        let end = closing_parts(&self.request, &self.events, &self.parts);
        let ended = self
            .ended_at_ms
            .or(ended_at_ms)
            .unwrap_or(0)
            .max(self.last_at_ms);
        (self.request, self.events, ended, end, self.parts)
    }
}

/// What follows the first turn, as recorded so far.
enum Later {
    Turn(u64, Box<TurnBuf>),
    Step(Step),
}

/// Collects a run's events, or a whole MCP loop; [`Recorder::finish`] makes the session.
pub struct Recorder {
    first: TurnBuf,
    later: Vec<Later>,
    mcp: Option<McpRecord>,
}

impl Recorder {
    /// A recorder for a run of `request` that has produced nothing yet. Its sending starts the
    /// session's clock.
    pub fn new(request: Request) -> Self {
        Recorder {
            first: TurnBuf::new(request),
            later: Vec::new(),
            mcp: None,
        }
    }

    /// A recorder holding a run's wire events and parts as kept elsewhere (the playground's
    /// run view keeps both anyway; it makes the session only when one is saved).
    pub fn from_run(request: Request, events: Vec<RawEvent>, parts: Vec<Part>) -> Self {
        let mut r = Recorder::new(request);
        r.extend(events, parts);
        r
    }

    /// The turn being recorded: the last one begun.
    fn current(&mut self) -> &mut TurnBuf {
        for l in self.later.iter_mut().rev() {
            if let Later::Turn(_, t) = l {
                return t;
            }
        }
        &mut self.first
    }

    /// Takes in one event of the current turn's run, in the order the run gave them.
    pub fn push(&mut self, event: &RunEvent) {
        self.current().push(event);
    }

    /// Adds wire events and parts kept elsewhere to the current turn (the wire events in
    /// arrival order, the parts in the order the run produced them).
    pub fn extend(&mut self, events: Vec<RawEvent>, parts: Vec<Part>) {
        self.current().extend(events, parts);
    }

    /// The bytes of raw wire text the current turn holds.
    pub fn raw_held(&self) -> usize {
        self.turn().raw_held
    }

    /// How many raw events of the current turn were dropped to stay within its raw limit.
    pub fn raw_dropped(&self) -> usize {
        self.turn().dropped.0
    }

    fn turn(&self) -> &TurnBuf {
        for l in self.later.iter().rev() {
            if let Later::Turn(_, t) = l {
                return t;
            }
        }
        &self.first
    }

    /// The parts of the current turn recorded so far.
    pub fn parts(&self) -> &[Part] {
        &self.turn().parts
    }

    /// The current turn ended `ended_at_ms` after its own request was sent. Without it, a turn
    /// ends at its last wire event (the last turn: when [`Recorder::finish`] says).
    pub fn end_turn(&mut self, ended_at_ms: u64) {
        let t = self.current();
        t.ended_at_ms = Some(ended_at_ms.max(t.last_at_ms));
    }

    /// A `tools/call` ran (its times on the session's clock: milliseconds since the first
    /// request).
    pub fn tool_call(&mut self, call: RecordedCall) {
        self.later.push(Later::Step(Step::ToolCall(Box::new(call))));
    }

    /// A further model turn: `request` was sent `at_ms` after the first request. The events
    /// pushed from now on are this turn's, with their offsets from this request.
    pub fn next_turn(&mut self, request: Request, at_ms: u64) {
        self.later
            .push(Later::Turn(at_ms, Box::new(TurnBuf::new(request))));
    }

    /// The loop stopped by itself `at_ms` after the first request, printing `parts` (the
    /// `max-steps` warning, an error listing a server's tools again).
    pub fn stop(&mut self, at_ms: u64, parts: Vec<Part>) {
        self.later
            .push(Later::Step(Step::Stop(LoopStop { at_ms, parts })));
    }

    /// The MCP servers used and the tools they served. Called again (after a server's tools
    /// were listed again), it adds what is new.
    pub fn mcp(&mut self, record: McpRecord) {
        match &mut self.mcp {
            Some(m) => m.merge(record),
            None => self.mcp = Some(record),
        }
    }

    /// The session. `ended_at_ms` is when the last turn ended, after its own request (for a
    /// one-turn run: after the request), unless [`Recorder::end_turn`] said so already.
    pub fn finish(self, name: Option<String>, ended_at_ms: u64) -> Session {
        let last_is_first = !self.later.iter().any(|l| matches!(l, Later::Turn(..)));
        let last_turn = self
            .later
            .iter()
            .rposition(|l| matches!(l, Later::Turn(..)));
        let (request, events, ended, end, parts) =
            self.first.close(last_is_first.then_some(ended_at_ms));
        let steps = self
            .later
            .into_iter()
            .enumerate()
            .map(|(i, l)| match l {
                Later::Step(s) => s,
                Later::Turn(at_ms, t) => {
                    let (request, events, ended_at_ms, end, parts) =
                        (*t).close((Some(i) == last_turn).then_some(ended_at_ms));
                    Step::Turn(Box::new(RecordedTurn {
                        at_ms,
                        request,
                        events,
                        ended_at_ms,
                        end,
                        parts,
                    }))
                }
            })
            .collect();
        let mut session = Session {
            format: FORMAT.to_string(),
            version: 1,
            name,
            created_at: now_rfc3339(),
            toolscope: env!("CARGO_PKG_VERSION").to_string(),
            mcp: self.mcp,
            request,
            events,
            ended_at_ms: ended,
            end,
            parts,
            steps,
            reparse: None,
        };
        session.version = session.format_version();
        session
    }
}

/// The parts a turn ended with that re-decoding its wire events does not give: everything after
/// the point where the re-decoded parts part ways with the live ones. Usually none.
fn closing_parts(request: &Request, events: &[RawEvent], parts: &[Part]) -> Vec<Part> {
    let mut decoder = Decoder::new(request);
    let mut replayed = Vec::new();
    for raw in events {
        replayed.extend(decoder.push_raw(raw).into_iter().filter_map(part));
    }
    replayed.extend(decoder.finish().into_iter().filter_map(part));
    if replayed == parts {
        return Vec::new();
    }
    let common = parts
        .iter()
        .zip(&replayed)
        .take_while(|(a, b)| a == b)
        .count();
    parts[common..].to_vec()
}

fn part(e: RunEvent) -> Option<Part> {
    match e {
        RunEvent::Part(p) => Some(p),
        _ => None,
    }
}

/// The `raw-dropped` warning that ends an answer whose oldest `n` wire events (`bytes` bytes)
/// were dropped from memory, past `limit` bytes kept per answer. The parts were all kept.
pub fn raw_dropped_warning(limit: usize, n: usize, bytes: usize) -> Part {
    Part::warning(Warning::new(
        "raw-dropped",
        format!(
            "the answer's raw wire text passed the limit of {limit} bytes: the oldest {n} raw \
             event{} ({bytes} bytes) were dropped from memory and from this session; every \
             part is kept",
            if n == 1 { "" } else { "s" }
        ),
    ))
}
