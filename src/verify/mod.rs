//! `toolscope verify`: a battery of tool-calling scenarios sent to an endpoint, each streamed
//! and whole, judged check by check, and scored.
//!
//! - [`suite`]: the scenario file (the bundled one, or `--suite FILE`);
//! - [`battery`]: sending the requests, at most K at once;
//! - [`score`]: judging each answer, and each streamed answer against its whole twin;
//! - [`report`]: the scorecard, its JSON form and its text;
//! - [`failure`]: a failed answer as a session;
//! - [`html`]: the one-page HTML report.

pub mod battery;
pub mod failure;
pub mod html;
pub mod report;
pub mod score;
pub mod suite;
