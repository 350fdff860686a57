//! Replaying a session: its recorded wire events, one at a time, through a fresh decoder.
//!
//! Each step is one wire event and the run events it produces, with the time it arrived at in
//! the live run; the last step closes the answer. Pacing (recorded pace, faster, instant, step
//! by step, paused) is the caller's: a step only says when it happened. A replay may change the
//! protocol or the tools, which re-reads the same output under another parser or schema.

use crate::protocol::Protocol;
use crate::provider::{Decoder, RawEvent, Request, RunEvent};
use crate::tool::ToolSet;

use super::Session;

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
