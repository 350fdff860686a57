//! A failed answer as a session: what `verify` saves for each answer that failed a check, and
//! what the playground opens from its scorecard, so that `toolscope replay` and the playground
//! show exactly what was sent and what came back.

use toolscope_core::provider::{RawEvent, Request, RunEvent};
use toolscope_core::session::{Recorder, Session};

use super::score::Answer;
use super::suite::Suite;

/// The answer named for a person: `two-parallel · run 1 · streamed`.
pub fn label(suite: &Suite, answer: &Answer) -> String {
    format!(
        "{} · run {} · {}",
        suite.scenarios[answer.scenario].name,
        answer.run + 1,
        if answer.stream { "streamed" } else { "whole" }
    )
}

/// The file its session is saved as: `two-parallel-run1-streamed.json`.
pub fn file_name(suite: &Suite, answer: &Answer) -> String {
    format!(
        "{}-run{}-{}.json",
        suite.scenarios[answer.scenario].name,
        answer.run + 1,
        if answer.stream { "streamed" } else { "whole" }
    )
}

/// The session of `answer`, named after it, under the target as given (`given`): never the
/// loopback URL of a demo model started for the battery, never a key (keys are no part of a
/// request).
pub fn session(suite: &Suite, given: &Request, answer: &Answer) -> Session {
    let mut request = answer.request.clone();
    request.base_url = given.base_url.clone();
    let raw: Vec<RawEvent> = answer
        .events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Raw(r) => Some(r.clone()),
            _ => None,
        })
        .collect();
    let parts = answer
        .events
        .iter()
        .filter_map(|e| e.as_part().cloned())
        .collect();
    let name = format!("verify: {}", label(suite, answer));
    Recorder::from_run(request, raw, parts).finish(Some(name), answer.elapsed_ms)
}
