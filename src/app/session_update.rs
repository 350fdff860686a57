//! The session half of [`super::update`]: saving (Ctrl+S), the picker (Ctrl+O), opening a
//! session into the panes, playing it back (pause, step, speed), and the what-ifs (re-parse
//! under the current protocol and tools, re-send beside the recorded answer).
//!
//! `update` calls into this module and never the other way: what both need (notices, the views
//! of runs, cancelling) comes from [`super::notice`] and [`super::runs`].

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use toolscope_core::provider::RunEvent;
use toolscope_core::session::{self, ReplayOptions, Session};
use toolscope_core::tool::ToolChoice;

use super::compare::{Compare, CompareKind};
use super::confirm::{Confirm, Pending};
use super::fuzzy::FilterKey;
use super::notice::notice;
use super::prompt::Prompt;
use super::run_view::{RunId, RunView};
use super::runs::{cancel_all, detected_notice, run_finished, view_of};
use super::session::{Opened, Pace, Playback, SessionEntry, SessionPicker};
use super::{App, Effect, FilePurpose, Focus, Overlay, editor};

/// Ctrl+S: asks where to save the main run, proposing a timestamped file.
pub(super) fn ask_save(app: &mut App) {
    if app.compare.is_some() {
        notice(
            app,
            "close the side-by-side view (Esc) to save the main run",
            true,
        );
        return;
    }
    if app.run.record.request.is_none() {
        notice(
            app,
            "nothing to save yet: run a request (Ctrl+R) or open a session (Ctrl+O)",
            true,
        );
        return;
    }
    let name = format!(
        "session-{}.json",
        session::rfc3339((app.clock)()).replace(':', "-")
    );
    let path = app.sessions.save_dir().join(name);
    let mut e = editor::editor(&path.display().to_string());
    e.move_cursor(ratatui_textarea::CursorMove::End);
    app.overlay = Some(Overlay::Path {
        purpose: FilePurpose::Session,
        save: true,
        editor: Box::new(e),
    });
}

/// The path overlay's Enter for a session: saves the main run there.
pub(super) fn save_to(app: &mut App, mut path: PathBuf, fx: &mut Vec<Effect>) {
    if path.extension().is_none() {
        path.set_extension("json");
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.starts_with("session-"));
    let Some(mut session) = session_of(app, name) else {
        notice(app, "nothing to save yet", true);
        return;
    };
    session.created_at = session::rfc3339((app.clock)());
    // The session folders are made when first saved to; any other folder must exist, or the
    // user is asked (a typo in the path must not leave new folders behind).
    let create_folder = path
        .parent()
        .is_some_and(|d| d.as_os_str().is_empty() || app.sessions.all().iter().any(|s| s == d));
    let save = Effect::SaveSession {
        path,
        session: Box::new(session),
        then_remove: None,
        overwrite: false,
        create_folder,
    };
    app.pending_save = Some(Box::new(save.clone()));
    fx.push(save);
}

/// The main run as a session; after an MCP loop, the whole loop: its first turn, each call
/// with its result as the server sent it, each further turn, on one clock (the time the model
/// and the servers took; pauses between keys are not counted), and the servers used.
fn session_of(app: &App, name: Option<String>) -> Option<Session> {
    use super::mcp::TrailStep;
    use toolscope_core::session::Recorder;

    // The main run is the open session played back: save that session, what was sent and
    // received, with the reading on screen (a re-parse) beside it, never in its place.
    if let Some(o) = &app.opened
        && app
            .playback
            .as_ref()
            .is_some_and(|p| Some(p.id) == app.run.record.id)
    {
        let mut s = (*o.session).clone();
        s.name = name.or(s.name);
        s.reparse = reparse_of(o, &app.run.record.parts.parts);
        return Some(s);
    }

    let current = app.run.session(None)?;
    let Some(TrailStep::Turn { session: first, .. }) = app.trail.first() else {
        // No loop: the run alone, with the servers its tools came from.
        let mut s = current;
        s.name = name;
        s.mcp = mcp_record(app);
        return Some(s);
    };
    let mut r = Recorder::from_run(
        first.request.clone(),
        first.events.clone(),
        first.parts.clone(),
    );
    r.end_turn(first.ended_at_ms);
    let mut clock = first.ended_at_ms;
    let mut last_end = first.ended_at_ms;
    let mut turn = |r: &mut Recorder, s: &Session, clock: &mut u64| {
        r.next_turn(s.request.clone(), *clock);
        r.extend(s.events.clone(), s.parts.clone());
        r.end_turn(s.ended_at_ms);
        *clock += s.ended_at_ms;
        last_end = s.ended_at_ms;
    };
    let mut current_in_trail = false;
    for step in &app.trail[1..] {
        match step {
            TrailStep::Turn { run, session } => {
                current_in_trail |= Some(*run) == app.run.record.id;
                turn(&mut r, session, &mut clock);
            }
            TrailStep::Call { call, server } => {
                // Kept timed from its own start: placed on the loop's clock now.
                let mut call = (**call).clone();
                let took = call.ended_at_ms;
                call.at_ms = clock;
                call.ended_at_ms = clock + took;
                clock += took;
                r.tool_call(call);
                r.mcp(toolscope_core::session::McpRecord {
                    servers: vec![server.clone()],
                    tools: Vec::new(),
                });
            }
        }
    }
    let first_is_current = matches!(app.trail.first(), Some(TrailStep::Turn { run, .. }) if Some(*run) == app.run.record.id);
    if !current_in_trail && !first_is_current {
        turn(&mut r, &current, &mut clock);
    }
    if let Some(m) = mcp_record(app) {
        r.mcp(m);
    }
    Some(r.finish(name, last_end))
}

/// The MCP servers added now and which offered tool each serves; `None` without any.
fn mcp_record(app: &App) -> Option<toolscope_core::session::McpRecord> {
    (!app.mcp.servers.is_empty()).then(|| toolscope_core::session::McpRecord {
        servers: app
            .mcp
            .servers
            .iter()
            .map(|s| s.spec.record(&s.name))
            .collect(),
        tools: app.mcp.catalog.tool_records(),
    })
}

/// What opening a session would replace, when the user made something there: the edited tools,
/// the conversation, and text typed into the prompt's fields.
pub(super) fn would_replace(app: &App) -> Vec<String> {
    let mut out = Vec::new();
    if app.tools.is_edited() {
        out.push("the edited tools".to_string());
    }
    if app.unsaved_turns && app.prompt.has_conversation() {
        let n = app.prompt.history().len();
        out.push(format!(
            "the conversation ({n} message{})",
            if n == 1 { "" } else { "s" }
        ));
    }
    out.extend(app.prompt.typed().into_iter().map(str::to_string));
    out
}

/// Ctrl+O: the picker, filled in when the folders have been read.
pub(super) fn open_picker(app: &mut App, fx: &mut Vec<Effect>) {
    let dirs = app.sessions.all();
    fx.push(Effect::ListSessions { dirs: dirs.clone() });
    app.overlay = Some(Overlay::Sessions(Box::new(SessionPicker::new(dirs))));
}

pub(super) fn listed(app: &mut App, entries: Vec<SessionEntry>) {
    if let Some(Overlay::Sessions(p)) = &mut app.overlay {
        p.set_entries(entries);
    }
}

pub(super) fn picker_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(Overlay::Sessions(p)) = &mut app.overlay else {
        return;
    };
    // `/` filters the list as you type (fuzzy, by file name, provider, model, mode, protocol);
    // Esc drops the filter, a second Esc closes; Enter opens the selected row either way.
    if p.list.key(&key) == FilterKey::Taken {
        return;
    }
    match key.code {
        KeyCode::Esc => app.overlay = None,
        KeyCode::Enter => match p.chosen().cloned() {
            None => {}
            Some(SessionEntry {
                path,
                summary: Err(problem),
            }) => {
                app.overlay = None;
                notice(app, format!("{}: {problem}", path.display()), true);
            }
            Some(SessionEntry { path, .. }) => {
                let lost = would_replace(app);
                let load = Effect::LoadSession { path: path.clone() };
                if lost.is_empty() {
                    app.overlay = None;
                    fx.push(load);
                } else {
                    let mut c = Confirm::new(
                        format!("Open {}?", path.display()),
                        "y open it",
                        Pending::Effect(Box::new(load)),
                    );
                    for l in lost {
                        c = c.detail(format!("it replaces {l}"));
                    }
                    app.overlay = Some(Overlay::Confirm(Box::new(c)));
                }
            }
        },
        _ => {}
    }
}

/// The restore offer's keys: Enter restores (and saves the run as a session), `d` discards,
/// Esc decides later (the journal stays and is offered again at the next start).
pub(super) fn restore_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(Overlay::Restore(r)) = &app.overlay else {
        return;
    };
    match key.code {
        KeyCode::Enter => {
            let r = r.clone();
            app.overlay = None;
            let name = format!(
                "recovered-{}.json",
                session::rfc3339((app.clock)()).replace(':', "-")
            );
            let dir = app
                .sessions
                .data
                .clone()
                .unwrap_or_else(|| app.sessions.save_dir());
            let path = dir.join(name);
            fx.push(Effect::SaveSession {
                path: path.clone(),
                session: r.session.clone(),
                then_remove: Some(r.journal.clone()),
                overwrite: false,
                create_folder: true,
            });
            open(app, Some(path), r.session, Pace::Instant, fx);
        }
        KeyCode::Char('d') | KeyCode::Delete => {
            let path = r.journal.clone();
            app.overlay = None;
            fx.push(Effect::RemoveFile { path });
            notice(app, "the interrupted run was discarded", false);
        }
        KeyCode::Esc => {
            app.overlay = None;
            notice(app, "the interrupted run is kept for the next start", false);
        }
        _ => {}
    }
}

/// A session file was read: open it, or say why not (the playground keeps running).
pub(super) fn loaded(
    app: &mut App,
    path: PathBuf,
    result: Result<Box<Session>, String>,
    fx: &mut Vec<Effect>,
) {
    match result {
        Ok(s) => {
            let pace = app.pace;
            open(app, Some(path), s, pace, fx);
        }
        Err(e) => notice(app, e, true),
    }
}

/// Shows `session` in the panes (provider, model, protocol, tool choice, tools, prompt) and
/// plays its answer back at `pace`.
pub(super) fn open(
    app: &mut App,
    path: Option<PathBuf>,
    session: Box<Session>,
    pace: Pace,
    fx: &mut Vec<Effect>,
) {
    cancel_all(app, fx);
    app.compare = None;
    app.playback = None;
    // The loop of the live conversation, if one ran, is not this session's.
    app.trail.clear();
    app.mcp.auto = None;
    let r = &session.request;
    app.provider = r.provider;
    app.model = r.model.clone();
    app.base_url = r.base_url.clone();
    app.protocol = r.protocol.clone();
    app.detect_protocol = r.protocol.is_none() && r.detect_protocol;
    app.choice = r.tool_choice.clone().unwrap_or(ToolChoice::Auto);
    let tools = serde_json::to_string_pretty(&r.tools.defs()).unwrap_or_else(|_| "[]".into());
    app.tools.set_text(&tools);
    app.tools.path = None;
    app.tools.mark_saved();
    app.prompt = Prompt::new(r.system.as_deref().unwrap_or(""), "");
    app.prompt.set_history(r.messages.clone());
    app.unsaved_turns = false;
    app.opened = Some(Opened {
        path,
        session,
        reading: "as recorded".into(),
        options: ReplayOptions::default(),
    });
    if matches!(app.focus, Focus::Result(_) | Focus::Transcript) {
        app.focus = Focus::Composer;
    }
    app.pace = pace;
    let id = app.next_id();
    let title = app.opened.as_ref().map(Opened::title).unwrap_or_default();
    let reparsed = app
        .opened
        .as_ref()
        .and_then(|o| o.session.reparse.as_ref())
        .map(|r| {
            format!(
                " · saved with a re-parse as {} (Ctrl+L {} then F8 shows it)",
                r.protocol, r.protocol
            )
        })
        .unwrap_or_default();
    play(app, id, ReplayOptions::default(), pace, false, fx);
    notice(
        app,
        format!(
            "opened {title} · F5 pause · F6 step · F7 speed · F8 re-parse · F9 re-send{reparsed}"
        ),
        false,
    );
    app.restyle();
}

/// Starts playing the open session into the main view, read with `options`.
fn play(
    app: &mut App,
    id: RunId,
    options: ReplayOptions,
    pace: Pace,
    paused: bool,
    fx: &mut Vec<Effect>,
) {
    let Some(opened) = &app.opened else {
        return;
    };
    let replay = session::Replay::new(&opened.session, options.clone());
    let view = RunView::started(id, replay.request().clone());
    let resend = app
        .compare
        .as_ref()
        .is_some_and(|c| c.kind == CompareKind::Resend);
    // An MCP loop plays on after its first turn (in the main view; a re-send compares the first
    // turn only).
    let later: std::collections::VecDeque<_> = if resend {
        Default::default()
    } else {
        opened.session.segments().into_iter().skip(1).collect()
    };
    let turns = 1 + later
        .iter()
        .filter(|s| matches!(s, session::Segment::Turn { .. }))
        .count();
    if resend {
        if let Some(c) = &mut app.compare {
            c.columns[0] = view;
        }
    } else {
        // The conversation is what the replayed request sent; its answer joins at the end.
        app.prompt.set_history(replay.request().messages.clone());
        app.run = view;
    }
    let token = app.next_token();
    app.playback = Some(Playback {
        id,
        replay,
        pace,
        paused,
        token,
        at_ms: 0,
        turn_at_ms: 0,
        later,
        turn: 1,
        turns,
        options,
    });
    pump(app, fx);
}

/// Takes every step that is due and asks to be woken for the next one.
pub(super) fn pump(app: &mut App, fx: &mut Vec<Effect>) {
    loop {
        let Some(p) = &app.playback else {
            return;
        };
        if p.paused {
            return;
        }
        let Some(next_at) = p.next_at_ms() else {
            return;
        };
        let wait = p.pace.scale(next_at.saturating_sub(p.at_ms));
        if wait > 0 {
            fx.push(Effect::Wake {
                token: p.token,
                after_ms: wait,
            });
            return;
        }
        step(app);
    }
}

/// Takes one step of the playback into its view: a wire event of the turn being played, or,
/// once it is over, the next piece of an MCP loop.
fn step(app: &mut App) {
    let Some(p) = &mut app.playback else {
        return;
    };
    if p.replay.is_done() {
        loop_step(app);
        return;
    }
    let Some(step) = p.replay.step() else {
        return;
    };
    p.at_ms = p.at_ms.max(p.turn_at_ms + step.at_ms);
    let (id, done) = (p.id, p.replay.is_done());
    let Some(view) = view_of(app, id) else {
        app.playback = None;
        return;
    };
    let was_running = view.is_running();
    let mut detection = false;
    for e in step.events {
        detection |= matches!(e, RunEvent::Detected { .. });
        view.apply(e, step.at_ms);
    }
    if done {
        view.ended(step.at_ms);
    }
    let finished = was_running && !view.is_running();
    if detection {
        detected_notice(app, id);
    }
    if finished {
        run_finished(app, id);
    }
}

/// The next piece of a recorded MCP loop: a tool call's result joins the view of the answer
/// that made the call (and fills its result field, as the live loop did), a further turn starts
/// a view of its own with the conversation it sent, the loop's stop shows its warning. Nothing
/// is executed.
fn loop_step(app: &mut App) {
    let Some(p) = &mut app.playback else {
        return;
    };
    let Some(segment) = p.later.pop_front() else {
        return;
    };
    match segment {
        session::Segment::Call { call, parts } => {
            p.at_ms = p.at_ms.max(call.ended_at_ms.max(call.at_ms));
            let id = p.id;
            push_results(app, id, parts);
            if let Some(out) = call.result() {
                app.prompt.fill_result(&call.tool_call_id, &out.text);
            }
        }
        session::Segment::Stop { at_ms, parts } => {
            p.at_ms = p.at_ms.max(at_ms);
            let id = p.id;
            push_results(app, id, parts);
        }
        session::Segment::Turn { at_ms, session } => {
            let replay = session::Replay::new(&session, p.options.clone());
            p.at_ms = p.at_ms.max(at_ms);
            p.turn_at_ms = at_ms;
            p.turn += 1;
            let request = replay.request().clone();
            p.replay = replay;
            let id = app.next_id();
            if let Some(p) = &mut app.playback {
                p.id = id;
            }
            app.prompt.set_history(request.messages.clone());
            app.run = RunView::started(id, request);
        }
    }
}

/// Parts the loop printed between turns (a call's result, the stop's warning), shown after
/// the answer's own parts in view `id`.
fn push_results(app: &mut App, id: RunId, parts: Vec<toolscope_core::part::Part>) {
    if let Some(view) = view_of(app, id) {
        for part in parts {
            view.push_result(part);
        }
    }
}

pub(super) fn woken(app: &mut App, token: u64, fx: &mut Vec<Effect>) {
    let due = app
        .playback
        .as_ref()
        .is_some_and(|p| p.token == token && !p.paused);
    if due {
        step(app);
        pump(app, fx);
    }
}

fn no_session(app: &mut App) -> bool {
    if app.opened.is_none() {
        notice(app, "no session is open; Ctrl+O opens one", true);
        return true;
    }
    false
}

/// F5: pause or go on; an ended (or cancelled) playback starts again from the beginning.
pub(super) fn play_pause(app: &mut App, fx: &mut Vec<Effect>) {
    if no_session(app) {
        return;
    }
    let token = app.next_token();
    match &mut app.playback {
        Some(p) if !p.is_done() => {
            p.paused = !p.paused;
            p.token = token;
            let word = if p.paused { "paused" } else { "playing" };
            notice(app, format!("replay {word}"), false);
            pump(app, fx);
        }
        _ => restart(app, fx),
    }
}

/// Plays the open session again from the start, read as it was last read.
fn restart(app: &mut App, fx: &mut Vec<Effect>) {
    let options = reading_options(app);
    let id = app.next_id();
    let pace = app.pace;
    play(app, id, options, pace, false, fx);
}

/// The open session's re-parse as saved beside it: how it was read and what that gave; none
/// when it is read as recorded.
fn reparse_of(o: &Opened, parts: &[toolscope_core::part::Part]) -> Option<session::Reparse> {
    let options = &o.options;
    if options.protocol.is_none() && options.tools.is_none() {
        return None;
    }
    let protocol = match &options.protocol {
        Some(Some(p)) => p.name().to_string(),
        Some(None) if options.detect_protocol => "auto".into(),
        Some(None) => "native".into(),
        None => o
            .session
            .request
            .protocol
            .as_ref()
            .map_or("native".into(), |p| p.name().to_string()),
    };
    Some(session::Reparse {
        protocol,
        tools: options.tools.as_ref().map(|t| t.to_json()),
        parts: parts.to_vec(),
    })
}

/// How the open session is read now (as recorded, or as last re-parsed).
fn reading_options(app: &App) -> ReplayOptions {
    app.opened
        .as_ref()
        .map(|o| o.options.clone())
        .unwrap_or_default()
}

/// F6: one wire event, then pause.
pub(super) fn step_once(app: &mut App, fx: &mut Vec<Effect>) {
    if no_session(app) {
        return;
    }
    if app.playback.as_ref().is_none_or(|p| p.is_done()) {
        // Start over, paused before the first event.
        let options = reading_options(app);
        let id = app.next_id();
        let pace = app.pace;
        play(app, id, options, pace, true, fx);
    }
    let token = app.next_token();
    if let Some(p) = &mut app.playback {
        p.paused = true;
        p.token = token;
    }
    step(app);
    if let Some(p) = &app.playback {
        let m = format!("step {} · F6 next · F5 go on", p.position());
        notice(app, m, false);
    }
}

/// F7: the next speed, applied at once to a playback in progress.
pub(super) fn speed(app: &mut App, fx: &mut Vec<Effect>) {
    app.pace = app.pace.next();
    let token = app.next_token();
    let pace = app.pace;
    if let Some(p) = &mut app.playback {
        p.pace = pace;
        p.token = token;
    }
    notice(app, format!("replay speed: {}", pace.label()), false);
    pump(app, fx);
}

/// F8: re-reads the open session under the current protocol and the Tools pane's tools.
pub(super) fn reparse(app: &mut App, fx: &mut Vec<Effect>) {
    if no_session(app) {
        return;
    }
    if let Some(problem) = app.tools.problem() {
        notice(app, format!("fix the tools first: {problem}"), true);
        return;
    }
    cancel_all(app, fx);
    app.compare = None;
    let protocol = app.protocol_name().to_string();
    let options = ReplayOptions {
        protocol: Some(app.protocol.clone()),
        detect_protocol: app.detect_protocol,
        tools: Some(app.offered().clone()),
    };
    if let Some(o) = &mut app.opened {
        o.reading = format!("re-parsed as {protocol}");
        o.options = options.clone();
    }
    let id = app.next_id();
    play(app, id, options, Pace::Instant, false, fx);
    let calls = app.run.record.parts.tool_calls().count();
    // With detection, which protocol read the text (the status line shows it too).
    let protocol = match &app.run.record.detected {
        Some(d) if app.protocol.is_none() && app.detect_protocol => {
            format!("auto (read as {}: {})", d.protocol, d.reason)
        }
        _ => protocol,
    };
    let recorded = app.opened.as_ref().map_or(0, |o| {
        o.session
            .parts
            .iter()
            .filter(|p| matches!(p, toolscope_core::part::Part::ToolCall(_)))
            .count()
    });
    notice(
        app,
        format!(
            "re-parsed as {protocol} with the Tools pane's tools: {calls} tool call(s), {recorded} recorded"
        ),
        false,
    );
}

/// F9: the open session's request sent again, live, beside its recorded answer. The request
/// goes to the provider, model and base URL the status line shows (the recorded ones, unless
/// Ctrl+P changed them: a session recorded against a server that is gone can be re-sent to
/// another).
pub(super) fn resend(app: &mut App, fx: &mut Vec<Effect>) {
    if no_session(app) {
        return;
    }
    cancel_all(app, fx);
    let Some(opened) = &app.opened else {
        return;
    };
    let mut request = opened.session.request.clone();
    let choice = request.tool_choice.clone();
    request.provider = app.provider;
    request.model = app.model.clone();
    request.base_url = app.base_url.clone();
    let recorded_id = app.next_id();
    let live_id = app.next_id();
    let live = match request.validate() {
        Ok(()) => {
            fx.push(Effect::StartRun {
                id: live_id,
                request: Box::new(request.clone()),
            });
            RunView::started(live_id, request)
        }
        Err(e) => RunView::refused(None, &e.message),
    };
    app.compare = Some(Compare {
        titles: vec!["recorded".into(), "live".into()],
        columns: vec![RunView::idle(), live],
        choices: vec![choice.clone(), choice],
        kind: CompareKind::Resend,
        zoomed: 0,
    });
    let pace = app.pace;
    play(app, recorded_id, ReplayOptions::default(), pace, false, fx);
}
