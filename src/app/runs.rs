//! The runs the state follows, seen from every half of the state machine: building the request
//! the panes describe, starting the main run or the compare columns, which view shows a run,
//! cancelling every run in flight, and what a finished main run leaves in the conversation.
//!
//! [`super::update`], its overlay half and its session half all need these; they live here so
//! that the dependencies go one way, from those modules to this one.

use toolscope_core::error::ProviderError;
use toolscope_core::provider::{Message, Request};
use toolscope_core::tool::ToolChoice;

use super::compare::Compare;
use super::confirm::{Confirm, Pending, ask};
use super::notice::notice;
use super::remember::Remembered;
use super::request_view::{RequestView, UNKNOWN_BASE};
use super::run_view::{RunId, RunState, RunView};
use super::{App, Effect, Focus, choice};

/// The view showing run `id`: the main one or a compare column.
pub(super) fn view_of(app: &mut App, id: RunId) -> Option<&mut RunView> {
    if app.run.record.id == Some(id) {
        return Some(&mut app.run);
    }
    app.compare
        .as_mut()?
        .columns
        .iter_mut()
        .find(|v| v.record.id == Some(id))
}

/// The main run's text is read with protocol detection and the choice was just made: the
/// notice says which protocol and why (the status line keeps the protocol).
pub(super) fn detected_notice(app: &mut App, id: RunId) {
    if app.run.record.id != Some(id) {
        return;
    }
    if let Some(d) = &app.run.record.detected {
        let text = format!("auto: read as {} ({})", d.protocol, d.reason);
        super::notice::notice(app, text, false);
    }
}

/// A run stopped streaming. The main run's answer joins the conversation at once, with a
/// result field for each call; the focus goes to the first result field, or to the (empty)
/// message field, when it was in the Prompt pane.
pub(super) fn run_finished(app: &mut App, id: RunId) {
    if app.run.record.id != Some(id) {
        return;
    }
    if app.run.record.state != RunState::Done {
        rerun_ended(app, Some(id), false);
        return;
    }
    // A replayed answer is in its session file already; a live one is not saved yet.
    let replayed = app.playback.as_ref().is_some_and(|p| p.id == id);
    let Some(sent) = app.run.record.request.as_ref().map(|r| r.messages.clone()) else {
        return;
    };
    // A server tool's call was answered by the provider; the client answers the others.
    let calls: Vec<_> = app
        .run
        .record
        .parts
        .tool_calls()
        .filter(|c| !c.provider_executed)
        .cloned()
        .collect();
    let has_calls = !calls.is_empty();
    let reasoning = match Message::answer(&app.run.record.parts.parts) {
        Some(Message::Assistant { reasoning, .. }) => reasoning,
        _ => Vec::new(),
    };
    let joined = app
        .prompt
        .answered(&sent, app.run.record.parts.text(), calls, reasoning);
    if !replayed {
        app.unsaved_turns = true;
    }
    if rerun_ended(app, Some(id), joined) {
        // The earlier answer is back, with its own result fields.
    } else if !joined {
        notice(
            app,
            "the answer was empty; it does not join the conversation",
            true,
        );
    }
    if app.focus.in_prompt() && app.focus != Focus::System {
        app.focus = if has_calls {
            Focus::Result(0)
        } else {
            Focus::Composer
        };
    }
    app.restyle();
}

/// A re-run (`r` in the conversation, or Ctrl+R with nothing new typed) ended, or never
/// started (`id` none): without an answer, the messages it dropped come back, and a notice says
/// so. Returns whether they came back.
fn rerun_ended(app: &mut App, id: Option<RunId>, answered: bool) -> bool {
    let back = app.prompt.rerun_ended(id, answered);
    if back {
        notice(
            app,
            "the re-run brought no answer: the conversation is as it was before it",
            true,
        );
    }
    back
}

/// `r` on message `i` of the conversation: the turn runs again from there, its later messages
/// set aside until the new answer arrives (they come back if none does). A run still streaming
/// is stopped first, so the conversation is cut as it stands after it.
pub(super) fn rerun_from(app: &mut App, i: usize, fx: &mut Vec<Effect>) {
    cancel_all(app, fx);
    app.prompt.cut_after(i);
    start_run(app, fx);
}

/// Cancels every run that is streaming.
pub(super) fn cancel_all(app: &mut App, fx: &mut Vec<Effect>) {
    let mut cancel = |v: &mut RunView| {
        if v.is_running()
            && let Some(id) = v.record.id
        {
            v.cancel();
            fx.push(Effect::CancelRun { id });
        }
    };
    let main = app.run.is_running().then_some(app.run.record.id).flatten();
    cancel(&mut app.run);
    if main.is_some() {
        rerun_ended(app, main, false);
    }
    if let Some(c) = &mut app.compare {
        c.columns.iter_mut().for_each(cancel);
    }
    // A playback whose view was cancelled stops (its pending wake-up is then ignored).
    if let Some(p) = &app.playback
        && !p.is_done()
        && view_of(app, p.id).is_none_or(|v| !v.is_running())
    {
        app.playback = None;
    }
}

/// The request the panes describe, carrying `messages`, under `choice`; refused (as "not sent")
/// when the tools do not pass their check.
pub(super) fn request_for(
    app: &mut App,
    choice: ToolChoice,
    messages: Vec<Message>,
) -> Result<Request, String> {
    app.tools.check_now();
    app.tools.for_sending()?;
    // The Tools pane's tools and every ready MCP server's.
    app.sync_offered();
    let tools = app.offered().clone();
    let mut r = Request::new(app.provider, app.model.clone());
    r.base_url = app.base_url.clone();
    r.system = app.prompt.system_text();
    r.messages = messages;
    r.tools = tools;
    r.tool_choice = Some(choice);
    r.protocol = app.protocol.clone();
    r.detect_protocol = app.protocol.is_none() && app.detect_protocol;
    let s = &app.sampling;
    r.sampling.temperature = s.temperature;
    r.sampling.max_tokens = s.max_tokens.or(r.sampling.max_tokens);
    r.sampling.top_p = s.top_p;
    r.sampling.seed = s.seed;
    r.sampling.parallel_tool_calls = s.parallel_tool_calls;
    r.sampling.reasoning_effort = s.reasoning_effort;
    r.timeouts = app.timeouts;
    r.limits = app.limits;
    Ok(r)
}

/// What Ctrl+R would send now (for the request view before anything was sent), or why nothing.
pub(super) fn next_request(app: &mut App) -> Result<Request, String> {
    let messages = match app.prompt.outgoing() {
        Ok(out) => out.messages,
        Err(e) => return Err(e.why),
    };
    let choice = app.choice.clone();
    request_for(app, choice, messages)
}

/// A request checked and started (with its effect), or refused before sending.
fn launch(app: &mut App, request: Result<Request, String>, fx: &mut Vec<Effect>) -> RunView {
    let checked = request.and_then(|r| {
        r.validate()
            .map(|()| r)
            .map_err(|e: ProviderError| e.message)
    });
    match checked {
        Ok(request) => {
            let id = app.next_id();
            fx.push(Effect::StartRun {
                id,
                request: Box::new(request.clone()),
            });
            RunView::started(id, request)
        }
        Err(why) => RunView::refused(None, &why),
    }
}

/// Ctrl+R: sends the conversation as shown with what is typed, which then joins it; or says
/// why nothing can be sent, leaving every field as it was.
pub(super) fn start_run(app: &mut App, fx: &mut Vec<Effect>) {
    cancel_all(app, fx);
    app.compare = None;
    let out = match app.prompt.outgoing() {
        Ok(out) => out,
        Err(e) => {
            if let Some(i) = e.result {
                app.focus = Focus::Result(i);
            }
            notice(app, format!("not sent: {}", e.why), true);
            app.prompt.rerun_ended(None, false);
            return;
        }
    };
    let choice = app.choice.clone();
    let request = request_for(app, choice, out.messages.clone());
    app.run = launch(app, request, fx);
    match &app.run.record.state {
        RunState::NotSent { message } => {
            let m = message.clone();
            notice(app, m, true);
            app.prompt.rerun_ended(None, false);
        }
        _ => {
            // A turn that sends the results of executed MCP calls goes on the loop; any other
            // starts anew.
            let continues = match app.trail.last() {
                Some(super::mcp::TrailStep::Call { call, .. }) => !out.again && out.messages.iter().any(|m| {
                    matches!(m, Message::Tool { tool_call_id, .. } if *tool_call_id == call.tool_call_id)
                }),
                _ => false,
            };
            if !continues {
                app.trail.clear();
            }
            app.prompt.commit(&out);
            if let Some(id) = app.run.record.id {
                app.prompt.dropped_for(id);
            }
            app.unsaved_turns = true;
            if out.again {
                notice(
                    app,
                    "nothing new was typed: the last turn runs again, its answer replaced",
                    false,
                );
            }
        }
    }
}

/// Whether a request goes to a provider that costs or counts (anything but the built-in demo,
/// which answers inside the playground): sending several of them asks first.
pub(super) fn costs(app: &App) -> bool {
    app.provider != toolscope_demo::provider()
}

/// Who a request goes to, as a question names it: `openai (gpt-4o-mini)`.
pub(super) fn destination(app: &App) -> String {
    if app.model.is_empty() {
        app.provider.name().to_string()
    } else {
        format!("{} ({})", app.provider.name(), app.model)
    }
}

/// Ctrl+K: compares at once on the demo model; to any other provider it asks first, saying how
/// many requests go where (one per tool-choice mode).
pub(super) fn ask_compare(app: &mut App, fx: &mut Vec<Effect>) {
    if !costs(app) {
        return start_compare(app, fx);
    }
    app.sync_offered();
    let modes = choice::compare_modes(app.offered());
    let labels: Vec<String> = modes.iter().map(|m| m.label()).collect();
    ask(
        app,
        Confirm::new(
            format!("Send {} requests to {}?", modes.len(), destination(app)),
            "y send them",
            Pending::Compare,
        )
        .detail(format!(
            "one per tool choice, side by side: {}",
            labels.join(", ")
        )),
    );
}

/// Ctrl+K: the next request under auto, required, none and the first tool forced, side by side.
/// Nothing joins the conversation.
pub(super) fn start_compare(app: &mut App, fx: &mut Vec<Effect>) {
    cancel_all(app, fx);
    app.tools.check_now();
    let messages = match app.prompt.outgoing() {
        Ok(out) => out.messages,
        Err(e) => {
            notice(app, format!("not compared: {}", e.why), true);
            return;
        }
    };
    app.sync_offered();
    let modes = choice::compare_modes(app.offered());
    let columns = modes
        .iter()
        .map(|m| {
            let request = request_for(app, m.clone(), messages.clone());
            launch(app, request, fx)
        })
        .collect();
    app.compare = Some(Compare::modes(&modes, columns));
}

/// Quits: every run stops, and the settings, tools and prompt are remembered for next time.
pub(super) fn quit(app: &mut App, fx: &mut Vec<Effect>) {
    cancel_all(app, fx);
    remember(app, true, fx);
    fx.push(Effect::Quit);
}

/// Writes the remembered state (the settings; the tools and prompt too when `with_work`).
/// Only the settings changed since they were last remembered are written; they are the base
/// of the next time.
pub(super) fn remember(app: &mut App, with_work: bool, fx: &mut Vec<Effect>) {
    if app.state.settings.is_none() && app.state.last.is_none() {
        return;
    }
    let state = Remembered::of(app, with_work);
    app.settings_base = state.settings.clone();
    fx.push(Effect::Remember {
        files: app.state.clone(),
        state: Box::new(state),
    });
}

/// The exact request of the main run (or of compare column `column`), or, before anything was
/// sent, the one Ctrl+R would send, as the request view shows it.
pub(super) fn request_view(app: &mut App, column: Option<usize>) -> Result<RequestView, String> {
    let (title, request) = match column {
        Some(i) => {
            let c = app.compare.as_ref().ok_or("the compare view is closed")?;
            let view = c.columns.get(i).ok_or("no such column")?;
            let name = &c.titles[i];
            match &view.record.request {
                Some(r) => (format!("column {name} · ←/→ other columns"), r.clone()),
                None => return Err(format!("column {name} was not sent")),
            }
        }
        None => {
            let replayed = app
                .playback
                .as_ref()
                .is_some_and(|p| app.run.record.id == Some(p.id));
            match &app.run.record.request {
                Some(r) if replayed => {
                    let name = app.opened.as_ref().map(|o| o.title()).unwrap_or_default();
                    (format!("recorded in the session {name}"), r.clone())
                }
                Some(r) => ("the request sent".to_string(), r.clone()),
                None => (
                    "not sent yet: what Ctrl+R would send".to_string(),
                    next_request(app)?,
                ),
            }
        }
    };
    let base = request
        .resolved_base_url()
        .or_else(|| app.demo_url.clone().filter(|_| request.base_url.is_none()))
        .unwrap_or_else(|| UNKNOWN_BASE.to_string());
    let mut v = RequestView::new(title, &request, &base);
    v.column = column;
    Ok(v)
}
