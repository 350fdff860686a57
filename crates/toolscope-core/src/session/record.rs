//! Recording a run into a [`Session`] as its events arrive.
//!
//! The recorder keeps the raw wire events and the parts. Most runs end with a part their last
//! wire event produced (a `finish`, or the error a failed response's body maps to), which replay
//! gives back by itself; a run that ended without one (a refused connection, an idle timeout, a
//! validation failure before anything was sent) keeps those closing parts in `end`, so that the
//! replay ends the same way.

use crate::part::Part;
use crate::provider::{Decoder, RawEvent, Request, RunEvent};

use super::{FORMAT, Session, VERSION, now_rfc3339};

/// Collects a run's events; [`Recorder::finish`] makes the session.
pub struct Recorder {
    request: Request,
    events: Vec<RawEvent>,
    parts: Vec<Part>,
    last_at_ms: u64,
}

impl Recorder {
    /// A recorder for a run of `request` that has produced nothing yet.
    pub fn new(request: Request) -> Self {
        Recorder {
            request,
            events: Vec::new(),
            parts: Vec::new(),
            last_at_ms: 0,
        }
    }

    /// Takes in one event of the run, in the order the run gave them.
    pub fn push(&mut self, event: &RunEvent) {
        match event {
            RunEvent::Raw(raw) => {
                self.last_at_ms = self.last_at_ms.max(raw.at_ms);
                self.events.push(raw.clone());
            }
            RunEvent::Part(p) => self.parts.push(p.clone()),
            // Derived from the wire events again on replay.
            RunEvent::Output(_) | RunEvent::Span(_) | RunEvent::Detected { .. } => {}
        }
    }

    /// The parts recorded so far.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// A recorder holding a run's wire events and parts as kept elsewhere (the playground's
    /// run view keeps both anyway; it makes the session only when one is saved).
    pub fn from_run(request: Request, events: Vec<RawEvent>, parts: Vec<Part>) -> Self {
        let last_at_ms = events.iter().map(|e| e.at_ms).max().unwrap_or(0);
        Recorder {
            request,
            events,
            parts,
            last_at_ms,
        }
    }

    /// The session, ended `ended_at_ms` after the request was sent.
    pub fn finish(self, name: Option<String>, ended_at_ms: u64) -> Session {
        let end = self.closing_parts();
        Session {
            format: FORMAT.to_string(),
            version: VERSION,
            name,
            created_at: now_rfc3339(),
            toolscope: env!("CARGO_PKG_VERSION").to_string(),
            request: self.request,
            events: self.events,
            ended_at_ms: ended_at_ms.max(self.last_at_ms),
            end,
            parts: self.parts,
        }
    }

    /// The parts the run ended with that re-decoding its wire events does not give: everything
    /// after the point where the re-decoded parts part ways with the live ones. Usually none.
    fn closing_parts(&self) -> Vec<Part> {
        let mut decoder = Decoder::new(&self.request);
        let mut replayed = Vec::new();
        for raw in &self.events {
            replayed.extend(decoder.push_raw(raw).into_iter().filter_map(part));
        }
        replayed.extend(decoder.finish().into_iter().filter_map(part));
        if replayed == self.parts {
            return Vec::new();
        }
        let common = self
            .parts
            .iter()
            .zip(&replayed)
            .take_while(|(a, b)| a == b)
            .count();
        self.parts[common..].to_vec()
    }
}

fn part(e: RunEvent) -> Option<Part> {
    match e {
        RunEvent::Part(p) => Some(p),
        _ => None,
    }
}
