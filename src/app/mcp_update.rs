//! The MCP half of [`super::update`]: servers added, listed, failed and removed; the model's calls
//! to their tools executed on an explicit key (Ctrl+G) or by the automatic loop (F12); the
//! results shown as `tool-result` parts and filled into the result fields; the next turn sent.
//!
//! Nothing runs a tool unless the user asked: Ctrl+G executes the calls of the last answer and
//! sends the results, Alt+G only the call whose result field has the focus, F12 starts a loop
//! that executes and sends until the model answers in text, something fails, Esc, or the step
//! limit. A call to a tool no server serves keeps its result field for the user to type into. A
//! result the user typed is never replaced.

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use serde_json::Value;

use toolscope_core::mcp::{McpError, McpServerSpec, outcome};
use toolscope_core::part::Part;
use toolscope_core::session::{RecordedCall, RecordedOutcome};

use super::fuzzy::FilterKey;
use super::mcp::{AutoLoop, CallId, Execution, Row, Running, ServerId, TrailStep, cut_reason};
use super::notice::notice;
use super::runs::start_run;
use super::{App, Effect, Focus, Overlay, editor};

/// Connects to `spec` (from `--mcp`, `--mcp-url`, or typed at run time).
pub(super) fn add_server(app: &mut App, spec: McpServerSpec, fx: &mut Vec<Effect>) {
    let shown = spec.to_string();
    let server = app.mcp.add(spec.clone());
    fx.push(Effect::McpConnect { server, spec });
    notice(app, format!("MCP: connecting to {shown}"), false);
}

/// Adds the server typed into the add-server field: a URL (`URL` or `URL=TOKEN_ENV`) or a
/// command line. A line that is neither says why and adds nothing.
pub(super) fn add_typed(app: &mut App, line: &str, fx: &mut Vec<Effect>) -> bool {
    let line = line.trim();
    if line.is_empty() {
        notice(app, "MCP: type a command or a URL", true);
        return false;
    }
    let spec = if line.starts_with("http://") || line.starts_with("https://") {
        McpServerSpec::http(line)
    } else {
        McpServerSpec::stdio(line)
    };
    match spec {
        Ok(spec) => {
            add_server(app, spec, fx);
            true
        }
        Err(e) => {
            notice(app, format!("MCP: {e}"), true);
            false
        }
    }
}

/// Server `server` listed its tools, or failed (to start, to list, or by dying).
pub(super) fn listed(
    app: &mut App,
    server: ServerId,
    result: Result<(String, Vec<Value>), String>,
) {
    if app.mcp.server(server).is_none() {
        // Removed meanwhile.
        return;
    }
    match result {
        Ok((name, tools)) => {
            let n = tools.len();
            app.mcp.listed(server, name.clone(), tools);
            app.sync_offered();
            let renamed = app
                .mcp
                .catalog
                .renames()
                .iter()
                .filter(|r| r.server_name == name)
                .count();
            let mut text = format!(
                "MCP server {name}: {n} tool{}",
                if n == 1 { "" } else { "s" }
            );
            if renamed > 0 {
                text += &format!(
                    ", {renamed} offered under another name (SERVER__NAME: another tool has its name)"
                );
            }
            // Tools it listed that cannot be offered (no name, not an object): the others are.
            let prefix = format!("MCP server \"{name}\": ");
            let left_out: Vec<&str> = app
                .mcp
                .catalog
                .warnings()
                .iter()
                .filter_map(|w| w.strip_prefix(&prefix))
                .filter(|w| w.contains(" is left out: "))
                .collect();
            let bad = !left_out.is_empty();
            if bad {
                text = format!(
                    "MCP server {name}: {} of {n} tools offered; {}",
                    n - left_out.len(),
                    left_out.join("; ")
                );
                if renamed > 0 {
                    text += &format!("; {renamed} offered under another name");
                }
            }
            notice(app, text, bad);
        }
        Err(why) => {
            let name = app
                .mcp
                .server(server)
                .map(|s| s.name.clone())
                .unwrap_or_default();
            app.mcp.failed(server, why.clone());
            // Its tools leave the offered ones at the end of `update`; calls in flight on it
            // end with their own error from the driver.
            notice(app, format!("MCP server {name} failed: {why}"), true);
        }
    }
}

/// The MCP list's keys (the Tools pane, below the JSON): choose a row, copy a tool into the
/// editable tools, add or remove a server, connect a failed one again.
pub(super) fn list_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    // `/` filters the list (fuzzy, by server or tool name and description); while the filter
    // is typed, letters are the filter's, Enter ends it.
    if app.mcp.list.key(&key) == FilterKey::Taken {
        return;
    }
    match key.code {
        KeyCode::Enter if app.mcp.list.typing => app.mcp.list.typing = false,
        KeyCode::Enter | KeyCode::Char('c') => copy_tool(app, fx),
        KeyCode::Char('a') => open_add_server(app),
        KeyCode::Char('d') | KeyCode::Delete => remove_selected(app, fx),
        KeyCode::Char('r') => reconnect_selected(app, fx),
        KeyCode::Char('v') => show_selected(app),
        _ => {}
    }
}

/// Copies the selected MCP tool into the Tools pane's JSON (undoable there): the user's copy is
/// theirs to edit, and a call to it waits for a typed result.
fn copy_tool(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(entry) = app.mcp.selected_tool().cloned() else {
        notice(app, "MCP: choose a tool (↑↓) to copy into the tools", true);
        return;
    };
    let tool = super::mcp::as_user_tool(&entry);
    let name = tool["name"].as_str().unwrap_or("the tool").to_string();
    let text = app.tools.text();
    match super::mcp::insertion(&text, &tool) {
        Some((line, col, insert)) => {
            let e = &mut app.tools.editor;
            e.set_cursor(super::code_editor::Pos::new(line, col));
            e.insert_str(&insert);
            fx.push(app.tools.edited_later());
            notice(
                app,
                format!("copied {name} into the tools (Ctrl+Z in the Tools pane takes it back)"),
                false,
            );
        }
        None => notice(
            app,
            "MCP: the tools are not a valid JSON array; fix them before copying a tool in",
            true,
        ),
    }
}

fn remove_selected(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(s) = app.mcp.selected_server() else {
        notice(app, "MCP: no server; a adds one", true);
        return;
    };
    let (id, name) = (s.id, s.name.clone());
    if let Some(exec) = &app.mcp.execution
        && exec.calls.iter().any(|c| c.server == id && !c.done)
    {
        notice(
            app,
            format!("MCP: a call runs on {name}; Esc cancels it first"),
            true,
        );
        return;
    }
    app.mcp.remove(id);
    fx.push(Effect::McpDisconnect { server: id });
    notice(
        app,
        format!("MCP: removed {name}; its tools are no longer offered"),
        false,
    );
}

fn reconnect_selected(app: &mut App, fx: &mut Vec<Effect>) {
    let Some(s) = app.mcp.selected_server() else {
        return;
    };
    if !matches!(s.state, super::mcp::ServerState::Failed(_)) {
        notice(app, format!("MCP: {} is not failed", s.name), false);
        return;
    }
    let (id, spec) = (s.id, s.spec.clone());
    fx.push(Effect::McpDisconnect { server: id });
    app.mcp.remove(id);
    add_server(app, spec, fx);
}

/// The selected server (how it runs, its state, its last stderr lines) or tool (its definition).
fn show_selected(app: &mut App) {
    let detail = match (app.mcp.selected_row(), app.mcp.selected_server()) {
        (Some(Row::Tool { .. }), _) => app.mcp.selected_tool().map(|t| {
            super::Detail::text(
                "MCP tool",
                &serde_json::to_string_pretty(t).unwrap_or_default(),
            )
        }),
        (Some(Row::Server(_)), Some(s)) => {
            let state = match &s.state {
                super::mcp::ServerState::Connecting => "connecting".to_string(),
                super::mcp::ServerState::Ready => format!("ready, {} tools", s.tools.len()),
                super::mcp::ServerState::Failed(why) => format!("failed: {why}"),
            };
            let mut text = format!("{}\n{}\n{state}\n", s.name, s.spec);
            if !s.stderr.is_empty() {
                text += "\nits last lines on stderr:\n";
                for l in &s.stderr {
                    text += l;
                    text.push('\n');
                }
            }
            Some(super::Detail::text("MCP server", &text))
        }
        _ => None,
    };
    if let Some(d) = detail {
        app.overlay = Some(super::Overlay::Detail(Box::new(d)));
    }
}

/// Ctrl+G: executes the last answer's calls to MCP tools whose result is not typed, and sends
/// the next turn once every result is in.
pub(super) fn execute_all(app: &mut App, fx: &mut Vec<Effect>) {
    execute(app, None, true, fx);
}

/// Alt+G: executes the call whose result field has the focus; nothing is sent.
pub(super) fn execute_focused(app: &mut App, fx: &mut Vec<Effect>) {
    match app.focus {
        Focus::Result(i) => {
            execute(app, Some(i), false, fx);
        }
        _ => notice(
            app,
            "Alt+G executes the call of the focused result field: Tab to one first (Ctrl+G executes all)",
            true,
        ),
    }
}

/// Executes pending calls (call `only`, or every one not typed yet) on their servers. Returns
/// whether any call started.
fn execute(app: &mut App, only: Option<usize>, send_after: bool, fx: &mut Vec<Effect>) -> bool {
    if app.is_running() {
        notice(
            app,
            "the answer is still streaming: Esc stops it first",
            true,
        );
        return false;
    }
    if app.mcp.executing() {
        notice(app, "MCP: calls are running; Esc cancels them", true);
        return false;
    }
    if app.prompt.pending.is_empty() {
        notice(app, "no call of the last answer waits for a result", true);
        return false;
    }
    let mut calls = Vec::new();
    let mut unserved = Vec::new();
    for (i, call) in app.prompt.pending.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let typed = app
            .prompt
            .results
            .get(i)
            .is_some_and(|r| !editor::text_of(r).trim().is_empty());
        let Some((server, route)) = app.mcp.route(&call.tool_name) else {
            unserved.push(call.tool_name.clone());
            continue;
        };
        if typed {
            if only.is_some() {
                notice(
                    app,
                    format!(
                        "the result of {} is typed already; clear it to execute the call",
                        call.tool_name
                    ),
                    true,
                );
                return false;
            }
            continue;
        }
        calls.push(Running {
            call: 0,
            server,
            index: i,
            tool_call_id: call.tool_call_id.to_string(),
            tool_name: call.tool_name.clone(),
            original: route.original.clone(),
            arguments: call.input.clone(),
            done: false,
        });
    }
    if calls.is_empty() {
        let why = if !unserved.is_empty() {
            format!(
                "no MCP server serves {}: type the result{}",
                unserved.join(", "),
                if unserved.len() == 1 { "" } else { "s" }
            )
        } else {
            "every result is typed already: Ctrl+R sends them".to_string()
        };
        notice(app, why, true);
        return false;
    }
    for c in &mut calls {
        c.call = app.mcp.next_call();
        fx.push(Effect::McpCall {
            call: c.call,
            server: c.server,
            name: c.original.clone(),
            arguments: c.arguments.clone(),
            timeout_ms: app.mcp.call_timeout_ms,
        });
    }
    let names: Vec<&str> = calls.iter().map(|c| c.tool_name.as_str()).collect();
    notice(app, format!("MCP: executing {}", names.join(", ")), false);
    app.mcp.execution = Some(Execution { calls, send_after });
    true
}

/// A call ended (`elapsed_ms` after it was sent): its result joins the Parts pane and fills its
/// result field; once all are in, the next turn goes (when asked for).
pub(super) fn called(
    app: &mut App,
    call: CallId,
    elapsed_ms: u64,
    result: Result<Value, McpError>,
    fx: &mut Vec<Effect>,
) {
    let Some(exec) = &mut app.mcp.execution else {
        return;
    };
    let Some(running) = exec.calls.iter_mut().find(|c| c.call == call && !c.done) else {
        return;
    };
    running.done = true;
    let running = running.clone();
    // The answer the call belongs to is still the one waiting (not replaced by a new run).
    let current = app
        .prompt
        .pending
        .get(running.index)
        .is_some_and(|p| p.tool_call_id.as_str() == running.tool_call_id);
    if !current {
        app.mcp.execution = None;
        return;
    }
    record_call(app, &running, elapsed_ms, &result);
    match result {
        Ok(json) => {
            let out = outcome(&running.tool_call_id, &running.tool_name, &json);
            let failed_tool = out.part.is_error;
            app.run.push_result(Part::ToolResult(Box::new(out.part)));
            let mut field = editor::prose(&out.text);
            field.move_cursor(ratatui_textarea::CursorMove::Bottom);
            if let Some(r) = app.prompt.results.get_mut(running.index) {
                *r = field;
            }
            if failed_tool {
                // The tool said it failed (isError): the model reads that, like any result.
                notice(
                    app,
                    format!(
                        "{} reported an error; the result says which",
                        running.tool_name
                    ),
                    false,
                );
            }
        }
        Err(e) => {
            let part = e.to_part(Some(&running.tool_call_id), Some(&running.tool_name));
            app.run.push_result(Part::error(part));
            notice(app, format!("MCP: {e}"), true);
            if let Some(exec) = &mut app.mcp.execution {
                exec.send_after = false;
            }
            if let Some(a) = app.mcp.auto.take() {
                notice(
                    app,
                    format!("the loop stopped at step {} of {}: {e}", a.step, a.max),
                    true,
                );
            }
            if matches!(e, McpError::Closed(_)) {
                app.mcp.failed(running.server, e.to_string());
            }
        }
    }
    app.restyle();
    let Some(exec) = &app.mcp.execution else {
        return;
    };
    if exec.calls.iter().any(|c| !c.done) {
        return;
    }
    let send = exec.send_after;
    let names: Vec<String> = exec.calls.iter().map(|c| c.tool_name.clone()).collect();
    app.mcp.execution = None;
    if !send {
        // The status said it was executing: say that the results are in (unless something
        // that went wrong is shown instead).
        if app
            .notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("MCP: executing"))
        {
            let n = names.len();
            notice(
                app,
                format!(
                    "MCP: {} answered; Ctrl+R sends the result{}",
                    names.join(", "),
                    if n == 1 { "" } else { "s" }
                ),
                false,
            );
        }
        if app.mcp.auto.is_none() {
            app.focus = focus_after(app);
        }
        return;
    }
    // Every result in? A call no server serves still waits for its typed result.
    if let Err(e) = app.prompt.outgoing() {
        if let Some(i) = e.result {
            app.focus = Focus::Result(i);
        }
        app.mcp.auto = None;
        notice(app, format!("not sent: {}", e.why), true);
        return;
    }
    if let Some(a) = &mut app.mcp.auto {
        a.step += 1;
    }
    start_run(app, fx);
}

/// Where the focus goes after results were filled without sending: the first empty result.
fn focus_after(app: &App) -> Focus {
    app.prompt
        .results
        .iter()
        .position(|r| editor::text_of(r).trim().is_empty())
        .map_or(app.focus, Focus::Result)
}

/// F12: the automatic loop. With calls waiting, it executes them and sends; otherwise it
/// sends the conversation; then each answer's calls are executed and sent back, up to the step
/// limit.
/// F12: starts the loop at once on the demo model; to any other provider it asks first, saying
/// how many requests it may send where.
pub(super) fn ask_loop(app: &mut App, fx: &mut Vec<Effect>) {
    let refused = app.is_running()
        || app.mcp.executing()
        || app.mcp.servers.is_empty()
        || (!app.prompt.pending.is_empty() && cut_reason(&app.run.record.parts.parts).is_some());
    if !super::runs::costs(app) || refused {
        // Nothing to ask (the demo), or start_loop says why it cannot start.
        return start_loop(app, fx);
    }
    let max = app.mcp.max_steps;
    let to = super::runs::destination(app);
    super::confirm::ask(
        app,
        super::confirm::Confirm::new(
            format!("Start the MCP loop: up to {max} requests to {to}?"),
            "y start it",
            super::confirm::Pending::Loop,
        )
        .detail("it sends a request after each round of tool results, until an answer has no calls (--max-steps sets the limit)"),
    );
}

pub(super) fn start_loop(app: &mut App, fx: &mut Vec<Effect>) {
    if app.is_running() || app.mcp.executing() {
        notice(app, "wait for the run to end, or Esc stops it", true);
        return;
    }
    if app.mcp.servers.is_empty() {
        notice(app, "the loop needs an MCP server: F11 adds one", true);
        return;
    }
    let max = app.mcp.max_steps;
    if !app.prompt.pending.is_empty() {
        if let Some(reason) = cut_reason(&app.run.record.parts.parts) {
            notice(
                app,
                format!(
                    "the loop does not start: the answer was cut (finish reason {}), so its calls are not run (Ctrl+G runs them by hand)",
                    reason.as_str()
                ),
                true,
            );
            return;
        }
        app.mcp.auto = Some(AutoLoop { step: 0, max });
        if !execute(app, None, true, fx) {
            app.mcp.auto = None;
        }
        return;
    }
    app.mcp.auto = Some(AutoLoop { step: 1, max });
    start_run(app, fx);
    if !app.run.is_running() {
        app.mcp.auto = None;
    }
}

/// Run `id` ended: when it is the main run of a loop, the loop goes on (executing the answer's
/// calls), or ends and says why.
pub(super) fn answer_in(app: &mut App, id: super::RunId, fx: &mut Vec<Effect>) {
    if app.run.record.id != Some(id) {
        return;
    }
    let Some(a) = app.mcp.auto else {
        return;
    };
    let failed = !matches!(app.run.record.state, super::RunState::Done);
    if failed {
        app.mcp.auto = None;
        notice(
            app,
            format!(
                "the loop stopped at step {} of {}: the run failed",
                a.step, a.max
            ),
            true,
        );
        return;
    }
    if let Some(reason) = cut_reason(&app.run.record.parts.parts) {
        // Like `run --execute`: the answer was cut, so its calls may be partial; none is run.
        app.mcp.auto = None;
        notice(
            app,
            format!(
                "the loop stopped at step {} of {}: the answer was cut (finish reason {}); its calls were not run",
                a.step,
                a.max,
                reason.as_str()
            ),
            true,
        );
        return;
    }
    if app.prompt.pending.is_empty() {
        app.mcp.auto = None;
        notice(
            app,
            format!(
                "the loop ended with a text answer after {} step{}",
                a.step,
                if a.step == 1 { "" } else { "s" }
            ),
            false,
        );
        return;
    }
    if a.step >= a.max {
        // Like `run --execute --max-steps`: the last answer's calls are executed and their
        // results shown and filled in, but not sent.
        app.mcp.auto = None;
        execute(app, None, false, fx);
        notice(
            app,
            format!(
                "the loop stopped at its limit of {} step{}: the results are filled in, not sent (Ctrl+R sends, F12 goes on)",
                a.max,
                if a.max == 1 { "" } else { "s" }
            ),
            true,
        );
        return;
    }
    if !execute(app, None, true, fx) {
        app.mcp.auto = None;
    }
}

/// Esc: cancels the calls in flight and the loop. Returns whether there was anything to cancel.
pub(super) fn cancel(app: &mut App, fx: &mut Vec<Effect>) -> bool {
    let looped = app.mcp.auto.take().is_some();
    let Some(exec) = app.mcp.execution.take() else {
        return looped;
    };
    let mut any = looped;
    for c in exec.calls.iter().filter(|c| !c.done) {
        fx.push(Effect::McpCancel { call: c.call });
        any = true;
    }
    any
}

/// Keeps the call (and, before the answer's first call, the answer's turn) for the session.
fn record_call(
    app: &mut App,
    running: &Running,
    elapsed_ms: u64,
    result: &Result<Value, McpError>,
) {
    let run_id = app.run.record.id;
    let has_turn = app
        .trail
        .iter()
        .any(|s| matches!(s, TrailStep::Turn { run, .. } if Some(*run) == run_id));
    if !has_turn && let (Some(id), Some(session)) = (run_id, app.run.session(None)) {
        app.trail.push(TrailStep::Turn {
            run: id,
            session: Box::new(session),
        });
    }
    let Some(s) = app.mcp.server(running.server) else {
        return;
    };
    let server = s.spec.record(&s.name);
    let call = RecordedCall {
        at_ms: 0,
        ended_at_ms: elapsed_ms,
        server: s.name.clone(),
        name: running.original.clone(),
        tool_name: running.tool_name.clone(),
        tool_call_id: running.tool_call_id.clone(),
        arguments: running.arguments.clone(),
        outcome: match result {
            Ok(v) => RecordedOutcome::Result(v.clone()),
            Err(e) => RecordedOutcome::Error(e.to_string()),
        },
    };
    app.trail.push(TrailStep::Call {
        call: Box::new(call),
        server,
    });
}

/// F11, or `a` in the MCP list: asks for a server to add.
pub(super) fn open_add_server(app: &mut App) {
    let mut e = editor::editor("");
    e.set_placeholder_text("toolscope serve-mcp-demo   ·   http://127.0.0.1:8000/mcp=TOKEN_VAR");
    app.overlay = Some(Overlay::AddServer(Box::new(e)));
}
