//! The verify view (Alt+S): the battery of `toolscope verify` run on the playground's provider,
//! model, base URL and protocol, with its progress while it runs and its scorecard when it ends.
//!
//! The battery runs as one task of the driver ([`Effect::StartVerify`]); each answer comes back
//! as [`Message::VerifyAnswer`] the moment it is complete, so the playground keeps taking keys
//! and the view keeps what was measured when Esc stops it halfway. When it ends (or is stopped,
//! or the endpoint cannot answer) the answers are judged and scored by the same code as the
//! command line's (`crate::verify::score` and `report`), and the scorecard is the one
//! `toolscope verify` prints. A failed answer opens as a session in the panes, as the session
//! picker opens one.
//!
//! [`Message::VerifyAnswer`]: super::Message::VerifyAnswer

use std::sync::Arc;

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use toolscope_core::provider::Request;
use toolscope_core::session::{self, Session};

use crate::verify::battery::{self, Ending};
use crate::verify::failure;
use crate::verify::report::{Meta, Report, Target, Verdict, pct, render};
use crate::verify::score::{self, Answer, Judged};
use crate::verify::suite::Suite;

use super::confirm::{Confirm, Pending, ask};
use super::notice::notice;
use super::runs::{costs, destination};
use super::{App, Effect, Overlay};

/// Requests the battery has in flight at once (as `toolscope verify`'s default).
pub const CONCURRENCY: usize = 4;

/// One battery on the playground's target, and what it measured.
pub struct Verify {
    /// Which battery the driver's messages belong to (a stopped one's late answers are not).
    pub id: u64,
    pub suite: Arc<Suite>,
    /// The target as the playground named it (no demo loopback URL, no key).
    pub target: Request,
    /// Requests the battery makes in all.
    pub total: usize,
    /// The answers so far, in the order they came.
    pub answers: Vec<Answer>,
    /// Each answer judged alone as it came (the streamed one is held against its whole twin
    /// only at the end): the progress list's marks.
    pub quick: Vec<Judged>,
    /// Milliseconds since the battery started, at its last answer or its end.
    pub elapsed_ms: u64,
    /// When it started (RFC 3339, from the playground's clock).
    pub started_at: String,
    /// `None` while it runs.
    pub ending: Option<Ending>,
    /// The scorecard, once it ended.
    pub report: Option<Report>,
    /// The scorecard as `toolscope verify` prints it, line by line.
    pub lines: Vec<String>,
    /// The answers that failed a check, once it ended: their index in `answers`, and why.
    pub failures: Vec<Failed>,
    /// The failure Enter opens.
    pub selected: usize,
    /// The first scorecard line shown (the progress list follows its end while it runs).
    pub scroll: usize,
    /// Whether the view covers the panes (Alt+S hides it and shows it again).
    pub shown: bool,
}

/// An answer that failed a check.
#[derive(Clone, Debug, PartialEq)]
pub struct Failed {
    pub answer: usize,
    /// `two-parallel · run 1 · streamed`.
    pub label: String,
    /// Why, one line per failed check.
    pub notes: Vec<String>,
}

impl Verify {
    pub fn is_running(&self) -> bool {
        self.ending.is_none()
    }

    /// Scenarios (of every run) whose streamed and whole answers have both come, and how many
    /// there are.
    pub fn scenarios_done(&self) -> (usize, usize) {
        let mut seen = std::collections::HashMap::new();
        for a in &self.answers {
            *seen.entry((a.run, a.scenario)).or_insert(0) += 1;
        }
        let done = seen.values().filter(|&&n| n >= 2).count();
        (done, self.total / 2)
    }

    /// One line for a finished answer of the progress list: its mark, what it was, and the
    /// first reason it failed.
    pub fn progress_line(&self, i: usize) -> (bool, String) {
        let a = &self.answers[i];
        let j = &self.quick[i];
        let mut line = failure::label(&self.suite, a);
        if let Some(why) = j.notes.first() {
            line.push_str(" — ");
            line.push_str(why);
        }
        (j.passed(), line)
    }

    /// How it ended, in words, for the view's header.
    pub fn ending_text(&self) -> Option<String> {
        let done = self.answers.len();
        Some(match self.ending.as_ref()? {
            Ending::Complete => format!("done: {done} requests"),
            Ending::Stopped => format!(
                "stopped after {done} of {} requests: the scorecard covers those",
                self.total
            ),
            Ending::GaveUp { category, message } => format!(
                "{} cannot answer: {category}: {message}{}; stopped after {done} of {} requests",
                Target::of(&self.target).label(),
                battery::hint(category, self.target.provider, "the model (Ctrl+P)"),
                self.total
            ),
        })
    }

    /// The session of failure `i` (named after it, dated by `now`).
    pub fn failure_session(&self, i: usize, now: u64) -> Option<Session> {
        let f = self.failures.get(i)?;
        let mut s = failure::session(&self.suite, &self.target, &self.answers[f.answer]);
        s.created_at = session::rfc3339(now);
        Some(s)
    }

    /// Judges what was measured and builds the scorecard.
    fn score(&mut self, ending: Ending) {
        let judged = score::judge_all(&self.suite, &self.answers);
        let verdicts: Vec<Verdict<'_>> = self
            .answers
            .iter()
            .zip(&judged)
            .map(|(answer, judged)| Verdict {
                answer,
                judged,
                session: None,
            })
            .collect();
        let report = Report::build(
            &self.suite,
            Meta {
                target: Target::of(&self.target),
                runs: 1,
                started_at: self.started_at.clone(),
                elapsed_ms: self.elapsed_ms,
                planned: self.total as u32,
                complete: ending == Ending::Complete,
            },
            &verdicts,
        );
        let mut failures: Vec<Failed> = judged
            .iter()
            .enumerate()
            .filter(|(_, j)| !j.passed())
            .map(|(i, j)| Failed {
                answer: i,
                label: failure::label(&self.suite, &self.answers[i]),
                notes: j.notes.clone(),
            })
            .collect();
        // In the suite's order, streamed before whole, as the report lists them.
        failures.sort_by_key(|f| {
            let a = &self.answers[f.answer];
            (a.run, a.scenario, !a.stream)
        });
        let answered = judged.iter().filter(|j| j.error.is_none()).count();
        let mut lines: Vec<String> = render(&report, None).lines().map(String::from).collect();
        if answered > 0 && judged.iter().filter(|j| j.error.is_none()).all(|j| j.empty) {
            lines.push(format!(
                "the model answered nothing (no text, no call, no reasoning) to any of the {answered} requests it answered"
            ));
        }
        self.lines = lines;
        self.failures = failures;
        self.selected = 0;
        self.scroll = 0;
        self.report = Some(report);
        self.ending = Some(ending);
    }
}

/// The request every scenario fills: the playground's provider, model, base URL and protocol,
/// its waits and bounds and its most tokens; temperature 0, as `toolscope verify` sends, so
/// that the streamed and the whole answer can be compared.
fn template(app: &App) -> Request {
    let mut r = Request::new(app.provider, app.model.clone());
    r.base_url = app.base_url.clone();
    r.protocol = app.protocol.clone();
    r.detect_protocol = app.protocol.is_none() && app.detect_protocol;
    r.sampling.temperature = Some(0.0);
    r.sampling.max_tokens = app.sampling.max_tokens.or(r.sampling.max_tokens);
    r.timeouts = app.timeouts;
    r.limits = app.limits;
    r
}

/// Alt+S: shows or hides the view of a battery there is; else starts one, at once on the demo
/// model, after asking (how many requests, to whom) on any other provider.
pub(super) fn key(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(v) = &mut app.verify {
        v.shown = !v.shown;
        if !v.shown && v.is_running() {
            let (done, total) = (v.answers.len(), v.total);
            notice(
                app,
                format!("verify goes on ({done}/{total}); Alt+S shows it again"),
                false,
            );
        }
        return;
    }
    ask_start(app, fx);
}

/// Starts a battery, asking first when the provider is not the demo.
fn ask_start(app: &mut App, fx: &mut Vec<Effect>) {
    if !costs(app) {
        return start(app, fx);
    }
    let suite = Suite::bundled();
    let n = battery::jobs(&suite, 1).len();
    ask(
        app,
        Confirm::new(
            format!("Send {n} requests to {}?", destination(app)),
            "y send them",
            Pending::Verify,
        )
        .detail(format!(
            "the verify battery: {} scenarios, each streamed and whole, {CONCURRENCY} at once",
            suite.scenarios.len()
        ))
        .detail("Esc stops it and keeps what was measured"),
    );
}

/// Starts the bundled battery on the playground's target (a battery still running stops).
pub(super) fn start(app: &mut App, fx: &mut Vec<Effect>) {
    stop(app, fx);
    let suite = Arc::new(Suite::bundled());
    let total = battery::jobs(&suite, 1).len();
    let id = app.next_token();
    let target = template(app);
    fx.push(Effect::StartVerify {
        id,
        suite: Arc::clone(&suite),
        template: Box::new(target.clone()),
        runs: 1,
        concurrency: CONCURRENCY,
    });
    app.verify = Some(Verify {
        id,
        suite,
        target,
        total,
        answers: Vec::new(),
        quick: Vec::new(),
        elapsed_ms: 0,
        started_at: session::rfc3339((app.clock)()),
        ending: None,
        report: None,
        lines: Vec::new(),
        failures: Vec::new(),
        selected: 0,
        scroll: 0,
        shown: true,
    });
}

/// Stops a running battery: the requests in flight are dropped, and what was measured is
/// scored.
pub(super) fn stop(app: &mut App, fx: &mut Vec<Effect>) {
    if let Some(v) = app.verify.as_mut().filter(|v| v.is_running()) {
        fx.push(Effect::StopVerify { id: v.id });
        v.score(Ending::Stopped);
    }
}

/// An answer of battery `id` came, `at_ms` after it started.
pub(super) fn answered(app: &mut App, id: u64, at_ms: u64, answer: Answer) {
    let Some(v) = app.verify.as_mut().filter(|v| v.id == id && v.is_running()) else {
        return;
    };
    v.quick
        .push(score::judge(&v.suite.scenarios[answer.scenario], &answer));
    v.answers.push(answer);
    v.elapsed_ms = at_ms;
}

/// Battery `id` ended, `at_ms` after it started.
pub(super) fn ended(app: &mut App, id: u64, at_ms: u64, ending: Ending) {
    let Some(v) = app.verify.as_mut().filter(|v| v.id == id && v.is_running()) else {
        return;
    };
    v.elapsed_ms = at_ms;
    v.score(ending);
    let failed = v.failures.len();
    let text = match (&v.ending, v.report.as_ref()) {
        (Some(Ending::GaveUp { .. }), _) => v.ending_text().unwrap_or_default(),
        (_, Some(r)) => format!(
            "verify: {} of answers fully right; {failed} failed{}",
            pct(r.overall.score),
            if failed > 0 {
                " (Enter opens one as a session)"
            } else {
                ""
            }
        ),
        _ => String::new(),
    };
    let error = !matches!(v.ending, Some(Ending::Complete)) || failed > 0;
    notice(app, text, error);
}

/// The keys of the view while it shows (the global keys that make sense there are handled
/// before): Esc stops a running battery, then closes; ↑↓ choose a failure, Enter opens it;
/// PgUp/PgDn/Home/End scroll the scorecard; `r` runs the battery again.
pub(super) fn view_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(v) = &mut app.verify else {
        return;
    };
    let page = (app.size.1 as usize).saturating_sub(8).max(1);
    let last_line = v.lines.len().saturating_sub(1);
    match key.code {
        KeyCode::Esc if v.is_running() => {
            stop(app, fx);
            notice(
                app,
                "verify stopped: the scorecard covers what was measured",
                false,
            );
        }
        KeyCode::Esc => app.verify = None,
        KeyCode::Up => v.selected = v.selected.saturating_sub(1),
        KeyCode::Down => v.selected = (v.selected + 1).min(v.failures.len().saturating_sub(1)),
        KeyCode::PageUp => v.scroll = v.scroll.saturating_sub(page),
        KeyCode::PageDown => v.scroll = (v.scroll + page).min(last_line),
        KeyCode::Home => v.scroll = 0,
        KeyCode::End => v.scroll = last_line,
        KeyCode::Enter => open_failure(app, fx),
        KeyCode::Char('r') if !v.is_running() => ask_start(app, fx),
        _ => {}
    }
}

/// Enter: the chosen failure opens in the panes as a session, asking first (as the session
/// picker does) when that replaces something the user made. The view hides; Alt+S shows it
/// again.
fn open_failure(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(v) = &app.verify else {
        return;
    };
    if v.is_running() {
        notice(
            app,
            "the failures open once the battery ends (Esc stops it)",
            true,
        );
        return;
    }
    let Some(session) = v.failure_session(v.selected, (app.clock)()) else {
        notice(app, "no answer failed: nothing to open", false);
        return;
    };
    let lost = super::session_update::would_replace(app);
    if lost.is_empty() {
        open_session(app, session, fx);
    } else {
        let title = session.name.clone().unwrap_or_default();
        let mut c = Confirm::new(
            format!("Open {title}?"),
            "y open it",
            Pending::OpenSession(Box::new(session)),
        );
        for l in lost {
            c = c.detail(format!("it replaces {l}"));
        }
        app.overlay = Some(Overlay::Confirm(Box::new(c)));
    }
}

/// Opens a failure's session in the panes and hides the view.
pub(super) fn open_session(app: &mut App, session: Session, fx: &mut Vec<Effect>) {
    if let Some(v) = &mut app.verify {
        v.shown = false;
    }
    let pace = app.pace;
    super::session_update::open(app, None, Box::new(session), pace, fx);
}
