//! [`update`]: the one place where the state changes.
//!
//! It takes a [`Message`], changes the [`App`], and returns the [`Effect`]s to run. It never
//! blocks, sleeps, reads a clock or touches a file, so every behaviour of the playground can be
//! tested by feeding messages and looking at the state and the effects. The keys of the windows
//! drawn over the panes are in [`super::overlays`]; sessions in [`super::session_update`].

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use ratatui::layout::{Position, Rect};

use toolscope_core::provider::RunEvent;
use toolscope_core::session::Session;

use super::compare::CompareKind;
use super::confirm::{self, Confirm, Pending, ask};
use super::detail::Detail;
use super::keymap::{self, Action};
use super::layout::{self, Screen};
use super::message::{FilePurpose, Message};
use super::notice::notice;
use super::overlays;
use super::picker::{ModelList, Picker};
use super::run_view::{RawMode, RunView};
use super::runs::{
    cancel_all, detected_notice, quit, run_finished, start_compare, start_run, view_of,
};
use super::search::{self, Search, SearchPane};
use super::session_update as sessions;
use super::text_log::Scroll;
use super::{App, Effect, Focus, Overlay, choice, editor, mcp_update, verify};

/// Rows a wheel notch scrolls.
const WHEEL_ROWS: isize = 3;

pub fn update(app: &mut App, message: Message) -> Vec<Effect> {
    let mut fx = Vec::new();
    match message {
        Message::Key(key) => {
            if key.kind != KeyEventKind::Release {
                on_key(app, key, &mut fx);
                fix_focus(app);
                app.restyle();
            }
        }
        Message::Mouse(mouse) => {
            on_mouse(app, mouse);
            fix_focus(app);
            app.restyle();
        }
        Message::Paste(text) => on_paste(app, &text, &mut fx),
        Message::Resize { width, height } => app.size = (width, height),
        // Stopped from outside (a signal): no question can be answered any more.
        Message::Quit => quit(app, &mut fx),
        Message::Run { id, at_ms, event } => {
            if let Some(view) = view_of(app, id) {
                let was_running = view.is_running();
                // Events still queued when a run was cancelled are dropped.
                if was_running {
                    let detection = matches!(event, RunEvent::Detected { .. });
                    view.apply(event, at_ms);
                    let finished = !view.is_running();
                    if detection {
                        detected_notice(app, id);
                    }
                    if finished {
                        run_finished(app, id);
                        mcp_update::answer_in(app, id, &mut fx);
                    }
                }
            }
        }
        Message::RunEnded { id, at_ms } => {
            if let Some(view) = view_of(app, id) {
                let was_running = view.is_running();
                view.ended(at_ms);
                if was_running {
                    run_finished(app, id);
                    mcp_update::answer_in(app, id, &mut fx);
                }
            }
        }
        Message::FileLoaded {
            purpose: FilePurpose::Tools,
            path,
            result,
        } => match result {
            Ok(text) => {
                // A byte order mark is no part of the JSON (nor of what the pane shows).
                app.tools
                    .set_text(text.strip_prefix('\u{FEFF}').unwrap_or(&text));
                app.tools.path = Some(path.clone());
                app.tools.mark_saved();
                let what = match app.tools.problem() {
                    None => format!("{} tools", app.tools.valid.len()),
                    Some(_) => "tools with problems".into(),
                };
                notice(app, format!("loaded {what} from {}", path.display()), false);
                app.restyle();
            }
            Err(e) => notice(app, format!("cannot load {}: {e}", path.display()), true),
        },
        Message::FileSaved {
            purpose: FilePurpose::Tools,
            path,
            result,
        } => match result {
            Ok(()) => {
                notice(app, format!("saved the tools to {}", path.display()), false);
                app.tools.path = Some(path);
                app.tools.mark_saved();
            }
            Err(e) => notice(app, format!("cannot save {}: {e}", path.display()), true),
        },
        Message::FileLoaded {
            purpose: FilePurpose::Session,
            path,
            result,
        } => {
            let result = result.and_then(|text| {
                Session::from_json(&text)
                    .map(Box::new)
                    .map_err(|e| format!("{}: {e}", path.display()))
            });
            sessions::loaded(app, path, result, &mut fx);
        }
        Message::FileSaved {
            purpose: FilePurpose::Session,
            path,
            result,
        } => match result {
            Ok(()) => {
                app.unsaved_turns = false;
                notice(
                    app,
                    format!("saved the session to {}", path.display()),
                    false,
                );
            }
            Err(e) => notice(app, format!("cannot save {}: {e}", path.display()), true),
        },
        Message::SessionsListed { entries } => sessions::listed(app, entries),
        Message::SessionLoaded { path, result } => sessions::loaded(app, path, result, &mut fx),
        Message::Wake { token } => sessions::woken(app, token, &mut fx),
        Message::CheckTools { revision } => {
            if revision == app.tools.revision {
                app.tools.check_now();
            }
        }
        Message::WouldOverwrite { path } => {
            let pending = app.pending_save.take();
            match pending.map(|e| *e) {
                Some(Effect::SaveFile {
                    purpose,
                    path: p,
                    contents,
                    ..
                }) if p == path => {
                    let e = Effect::SaveFile {
                        purpose,
                        path: p,
                        contents,
                        overwrite: true,
                    };
                    ask(app, confirm::overwrite(e, &path));
                }
                Some(Effect::SaveSession {
                    path: p,
                    session,
                    then_remove,
                    create_folder,
                    ..
                }) if p == path => {
                    let e = Effect::SaveSession {
                        path: p,
                        session,
                        then_remove,
                        overwrite: true,
                        create_folder,
                    };
                    ask(app, confirm::overwrite(e, &path));
                }
                _ => notice(app, format!("not saved: {} exists", path.display()), true),
            }
        }
        Message::NoFolder { path } => {
            let pending = app.pending_save.take();
            match pending.map(|e| *e) {
                Some(Effect::SaveSession {
                    path: p,
                    session,
                    then_remove,
                    overwrite,
                    ..
                }) if p == path => {
                    let e = Effect::SaveSession {
                        path: p,
                        session,
                        then_remove,
                        overwrite,
                        create_folder: true,
                    };
                    ask(app, confirm::create_folder(e, &path));
                }
                _ => notice(
                    app,
                    format!("not saved: the folder of {} does not exist", path.display()),
                    true,
                ),
            }
        }
        Message::ModelsListed {
            provider,
            base_url,
            result,
        } => {
            if let Some(Overlay::Picker(p)) = &mut app.overlay {
                let asked = ModelList::Listing {
                    provider,
                    base_url: base_url.clone(),
                };
                if p.models == asked {
                    p.models = match result {
                        Ok(names) => ModelList::Listed {
                            provider,
                            base_url,
                            names,
                        },
                        Err(why) => ModelList::Failed {
                            provider,
                            base_url,
                            why,
                        },
                    };
                    p.model_choice = None;
                }
            }
        }
        Message::DemoStarted { base_url } => app.demo_url = Some(base_url),
        Message::VerifyAnswer { id, at_ms, answer } => verify::answered(app, id, at_ms, *answer),
        Message::VerifyEnded { id, at_ms, ending } => verify::ended(app, id, at_ms, ending),
        Message::McpAdd { spec } => mcp_update::add_server(app, spec, &mut fx),
        Message::McpListed { server, result } => mcp_update::listed(app, server, result),
        Message::McpStderr { server, line } => app.mcp.stderr_line(server, line),
        Message::McpCalled {
            call,
            elapsed_ms,
            result,
        } => mcp_update::called(app, call, elapsed_ms, result, &mut fx),
    }
    // The tools a request offers follow the Tools pane's check and the servers.
    app.sync_offered();
    // A Parts filter covers the rows that arrived since.
    refresh_parts_filter(app);
    fx
}

/// Keeps the focus on something that exists: a result field of a pending call, a conversation
/// with messages.
fn fix_focus(app: &mut App) {
    match app.focus {
        Focus::Result(i) if i >= app.prompt.results.len() => app.focus = Focus::Composer,
        Focus::Transcript if app.prompt.history().is_empty() => app.focus = Focus::Composer,
        Focus::Mcp if app.mcp.servers.is_empty() => app.focus = Focus::Tools,
        _ => {}
    }
    let n = app.prompt.history().len();
    app.prompt.selected = app.prompt.selected.min(n.saturating_sub(1));
}

/// The Tools text changed: the check waits for typing to pause.
fn tools_edited(app: &mut App, fx: &mut Vec<Effect>) {
    fx.push(app.tools.edited_later());
}

fn on_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    app.notice = None;
    if app.overlay.is_some() {
        // Quitting works everywhere (asking first when there is unsaved work), except while a
        // question is open: that one is answered first.
        let asking = matches!(app.overlay, Some(Overlay::Confirm(_)));
        if keymap::global(&key) == Some(Action::Quit) && !asking {
            ask_quit(app, fx);
        } else {
            overlays::key(app, key, fx);
        }
        return;
    }
    if app.search.as_ref().is_some_and(|s| s.editing) {
        search_key(app, key);
        return;
    }
    if app.verify.as_ref().is_some_and(|v| v.shown) {
        // The verify view covers the panes: its own keys, and of the global ones those that
        // do not act on the hidden panes.
        match keymap::global(&key) {
            Some(a @ (Action::Verify | Action::Help | Action::Quit | Action::LastMessage)) => {
                act(app, a, fx)
            }
            Some(Action::Cancel) | None => verify::view_key(app, key, fx),
            Some(_) => notice(
                app,
                "Alt+S goes back to the panes (a running battery goes on)",
                false,
            ),
        }
        return;
    }
    // A list's `/` filter being typed takes the letters, Backspace, Esc and Enter before the
    // global keys do (Ctrl and function keys still reach them).
    if app.compare.is_none() && pane_filter(app).is_some_and(|f| f.typing) && filter_key(app, &key)
    {
        return;
    }
    if let Some(action) = keymap::global_at(&key, app.focus) {
        act(app, action, fx);
        return;
    }
    if let Some(c) = &mut app.compare {
        // ←/→ (or the column's number) choose the column shown when they do not fit side by
        // side.
        let n = c.columns.len().max(1);
        match key.code {
            KeyCode::Left => c.zoomed = (c.zoomed + n - 1) % n,
            KeyCode::Right => c.zoomed = (c.zoomed + 1) % n,
            KeyCode::Char(d @ '1'..='9') => {
                let i = d as usize - '1' as usize;
                if i < n {
                    c.zoomed = i;
                }
            }
            _ => {}
        }
        return;
    }
    match app.focus {
        Focus::Tools => {
            if app.tools.editor.input(key) {
                tools_edited(app, fx);
            }
        }
        Focus::System => {
            if editor::undo_redo(&mut app.prompt.system, &key).is_none() {
                app.prompt.system.input(key);
            }
        }
        Focus::Composer => {
            if editor::undo_redo(&mut app.prompt.composer, &key).is_none() {
                app.prompt.composer.input(key);
            }
        }
        Focus::Result(i) => {
            if let Some(r) = app.prompt.results.get_mut(i)
                && editor::undo_redo(r, &key).is_none()
            {
                r.input(key);
            }
        }
        Focus::Transcript => transcript_key(app, key, fx),
        Focus::Mcp => mcp_update::list_key(app, key, fx),
        Focus::ToolChoice => match key.code {
            KeyCode::Left | KeyCode::Up => set_choice(app, -1),
            KeyCode::Right | KeyCode::Down => set_choice(app, 1),
            KeyCode::Char('/') | KeyCode::Enter => {
                app.sync_offered();
                let p = super::choice_picker::ChoicePicker::new(app.offered(), &app.choice);
                app.overlay = Some(Overlay::Choices(Box::new(p)));
            }
            _ => {}
        },
        Focus::Raw => raw_key(app, key),
        Focus::Parts => parts_key(app, key, fx),
    }
}

fn act(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    match action {
        Action::Run
            if app
                .compare
                .as_ref()
                .is_some_and(|c| c.kind == CompareKind::Resend) =>
        {
            sessions::resend(app, fx)
        }
        Action::Run if app.compare.is_some() => start_compare(app, fx),
        Action::Run => {
            // The user sends: an automatic loop gives way.
            app.mcp.auto = None;
            start_run(app, fx)
        }
        Action::Cancel => {
            let mcp = mcp_update::cancel(app, fx);
            if app.is_running() {
                cancel_all(app, fx);
                notice(app, "cancelled", false);
            } else if mcp {
                notice(app, "cancelled: the MCP calls and the loop stop", false);
            } else if app.compare.is_some() {
                app.compare = None;
            } else if app.search.is_some() {
                app.search = None;
            } else if pane_filter(app).is_some_and(|f| f.active()) {
                filter_key(app, &KeyEvent::from(KeyCode::Esc));
            }
        }
        Action::Grow | Action::Shrink | Action::ResetSplits => resize(app, action, fx),
        Action::FocusNext => move_focus(app, 1),
        Action::FocusPrev => move_focus(app, -1),
        Action::CycleToolChoice => set_choice(app, 1),
        Action::PickProtocol => {
            let picker = super::protocol_picker::ProtocolPicker::new(app.protocol_name());
            app.overlay = Some(Overlay::Protocols(Box::new(picker)));
        }
        Action::Picker => open_picker(app, fx),
        Action::Request => overlays::open_request(app, None),
        Action::Compare => super::runs::ask_compare(app, fx),
        Action::Verify => verify::key(app, fx),
        Action::Execute => mcp_update::execute_all(app, fx),
        Action::ExecuteOne => mcp_update::execute_focused(app, fx),
        Action::Loop => mcp_update::ask_loop(app, fx),
        Action::AddServer => mcp_update::open_add_server(app),
        Action::NewConversation => {
            // A typed result was never sent, so no saved session holds it: ask before it goes.
            let typed = app.prompt.typed_results();
            if (app.unsaved_turns && app.prompt.has_conversation()) || !typed.is_empty() {
                let n = app.prompt.history().len();
                let mut c = Confirm::new(
                    "Start a new conversation?",
                    "y start anew",
                    Pending::NewConversation,
                );
                if app.unsaved_turns && n > 0 {
                    c = c.detail(format!(
                        "the {n} message{} so far are dropped (Ctrl+S saves them first)",
                        if n == 1 { "" } else { "s" }
                    ));
                }
                if !typed.is_empty() {
                    c = c.detail(format!(
                        "the typed result{} of {} {} dropped, unsent",
                        if typed.len() == 1 { "" } else { "s" },
                        typed.join(", "),
                        if typed.len() == 1 { "is" } else { "are" }
                    ));
                }
                if app.prompt.user_text().is_some() {
                    c = c.detail("the message being written stays");
                }
                ask(app, c);
            } else if app.prompt.has_conversation() {
                app.prompt.new_conversation();
                app.focus = Focus::Composer;
                notice(
                    app,
                    "a new conversation (the last one is saved as a session)",
                    false,
                );
            } else {
                notice(app, "this is a new conversation already", false);
            }
        }
        Action::ToggleWire => toggle_wire(app),
        Action::LoadTools | Action::SaveTools => {
            let save = action == Action::SaveTools;
            let path = app
                .tools
                .path
                .as_ref()
                .map_or("tools.json".to_string(), |p| p.display().to_string());
            let mut e = editor::editor(&path);
            e.move_cursor(ratatui_textarea::CursorMove::End);
            app.overlay = Some(Overlay::Path {
                purpose: FilePurpose::Tools,
                save,
                editor: Box::new(e),
            });
        }
        Action::SaveSession => sessions::ask_save(app),
        Action::OpenSession => sessions::open_picker(app, fx),
        Action::PlayPause => sessions::play_pause(app, fx),
        Action::Step => sessions::step_once(app, fx),
        Action::Speed => sessions::speed(app, fx),
        Action::Reparse => sessions::reparse(app, fx),
        Action::Resend => sessions::resend(app, fx),
        Action::LastMessage => show_last_notice(app),
        Action::Zoom => app.zoom = !app.zoom,
        Action::Help => app.overlay = Some(Overlay::Help { scroll: 0 }),
        Action::Quit => ask_quit(app, fx),
    }
}

/// F10, or a click on the status line: the last status message in full. In the Tools pane,
/// when the tools were read with warnings, every warning (the border has room for the first).
fn show_last_notice(app: &mut App) {
    if app.focus == Focus::Tools {
        app.tools.check_now();
        let warnings = app.tools.warnings();
        if !warnings.is_empty() {
            let title = format!("the tools' warnings ({})", warnings.len());
            let text: Vec<String> = warnings.iter().map(|w| format!("⚠ {w}")).collect();
            app.overlay = Some(Overlay::Detail(Box::new(Detail::text(
                title,
                &text.join("\n"),
            ))));
            return;
        }
    }
    match app.last_notice.clone() {
        Some(n) => {
            let title = if n.error {
                "message (error)"
            } else {
                "message"
            };
            app.overlay = Some(Overlay::Detail(Box::new(Detail::text(title, &n.text))));
        }
        None => notice(app, "no message yet", false),
    }
}

/// Ctrl+P: the picker, and the provider's models listed.
fn open_picker(app: &mut App, fx: &mut Vec<Effect>) {
    let mut p = Picker::new(
        app.provider,
        &app.model,
        app.base_url.as_deref(),
        &app.sampling,
    );
    overlays::list_models(&mut p, fx);
    app.overlay = Some(Overlay::Picker(Box::new(p)));
}

/// What quitting now would lose, one line each.
fn unsaved(app: &App) -> Vec<String> {
    let mut out = Vec::new();
    if app.tools.is_edited() {
        out.push(match &app.tools.path {
            Some(p) => format!("the tools are edited and not saved to {}", p.display()),
            None => "the tools are edited and not saved to a file (F4 saves them)".to_string(),
        });
    }
    if app.unsaved_turns && !app.prompt.history().is_empty() {
        out.push("the conversation is not saved as a session (Ctrl+S saves it)".to_string());
    }
    out
}

/// Ctrl+Q: quits, asking first when there is unsaved work.
fn ask_quit(app: &mut App, fx: &mut Vec<Effect>) {
    let lost = unsaved(app);
    if lost.is_empty() {
        quit(app, fx);
        return;
    }
    let mut c = Confirm::new("Quit with unsaved work?", "y quit", Pending::Quit);
    for l in lost {
        c = c.detail(l);
    }
    ask(app, c);
}

fn toggle_wire(app: &mut App) {
    app.raw_mode = match app.raw_mode {
        RawMode::Output => RawMode::Wire,
        RawMode::Wire => RawMode::Output,
    };
    if app
        .search
        .as_ref()
        .is_some_and(|s| s.pane == SearchPane::Raw)
    {
        app.search = None;
    }
}

fn set_choice(app: &mut App, step: isize) {
    app.sync_offered();
    app.choice = choice::step(&app.choice, app.offered(), step);
    let label = app.choice.label();
    notice(
        app,
        format!("tool choice: {label} (applies to the next run)"),
        false,
    );
}

/// The focus order of Tab: the panes, with the Prompt pane's fields in between.
fn focus_order(app: &App) -> Vec<Focus> {
    let mut order = vec![Focus::Tools];
    if !app.mcp.servers.is_empty() {
        order.push(Focus::Mcp);
    }
    // Into the Prompt pane Tab lands in the message field; Tab goes on through the result
    // fields, the conversation and the system prompt.
    order.extend([Focus::ToolChoice, Focus::Composer]);
    order.extend((0..app.prompt.results.len()).map(Focus::Result));
    if !app.prompt.history().is_empty() {
        order.push(Focus::Transcript);
    }
    order.extend([Focus::System, Focus::Raw, Focus::Parts]);
    order
}

/// Alt+= / Alt+-: the focused pane's share of the screen, one step more or less; Alt+0: the
/// automatic shares. Remembered with the settings.
fn resize(app: &mut App, action: Action, fx: &mut Vec<Effect>) {
    if app.compare.is_some() || app.zoom {
        notice(
            app,
            "resizing is for the panes of the main view (Alt+Z unzooms)",
            true,
        );
        return;
    }
    let before = app.splits;
    let now = layout::top_share_now(app);
    match action {
        Action::Grow => app
            .splits
            .resize(app.focus, layout::Splits::STEP as i16, now),
        Action::Shrink => app
            .splits
            .resize(app.focus, -(layout::Splits::STEP as i16), now),
        _ => app.splits = layout::Splits::default(),
    }
    if app.splits == before {
        notice(app, "the panes are as large or as small as they go", true);
        return;
    }
    super::runs::remember(app, false, fx);
}

/// Whether `f` is a field of the Prompt pane.
fn in_prompt(f: Focus) -> bool {
    matches!(
        f,
        Focus::System | Focus::Transcript | Focus::Result(_) | Focus::Composer
    )
}

fn move_focus(app: &mut App, step: isize) {
    if app.compare.is_some() {
        return;
    }
    let order = focus_order(app);
    let at = order.iter().position(|f| *f == app.focus).unwrap_or(0) as isize;
    let from = app.focus;
    app.focus = order[(at + step).rem_euclid(order.len() as isize) as usize];
    // Coming into the Prompt pane from either side: the message field.
    if in_prompt(app.focus) && !in_prompt(from) {
        app.focus = Focus::Composer;
    }
    if app.focus == Focus::Transcript {
        app.prompt.selected = app.prompt.history().len().saturating_sub(1);
    }
}

/// The conversation's keys: choose a message, edit it, delete it, run again from it.
fn transcript_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let n = app.prompt.history().len();
    if n == 0 {
        return;
    }
    let i = app.prompt.selected.min(n - 1);
    let busy = app.run.is_running();
    match key.code {
        KeyCode::Up => app.prompt.selected = i.saturating_sub(1),
        KeyCode::Down => app.prompt.selected = (i + 1).min(n - 1),
        KeyCode::Home => app.prompt.selected = 0,
        KeyCode::End => app.prompt.selected = n - 1,
        KeyCode::Enter
        | KeyCode::Char('e')
        | KeyCode::Char('d')
        | KeyCode::Delete
        | KeyCode::Char('r')
            if busy =>
        {
            notice(
                app,
                "the answer is still streaming: Esc stops it first",
                true,
            )
        }
        KeyCode::Enter | KeyCode::Char('e') => {
            if let Some(text) = app.prompt.text_of(i) {
                let mut e = editor::prose(&text);
                e.move_cursor(ratatui_textarea::CursorMove::Bottom);
                e.move_cursor(ratatui_textarea::CursorMove::End);
                app.overlay = Some(Overlay::Edit {
                    index: i,
                    editor: Box::new(e),
                });
            }
        }
        KeyCode::Char('v') => {
            if let Some(text) = app.prompt.text_of(i) {
                let role = app.prompt.history()[i].role();
                app.overlay = Some(Overlay::Detail(Box::new(Detail::text(
                    format!("message {} ({role})", i + 1),
                    &text,
                ))));
            }
        }
        KeyCode::Char('d') | KeyCode::Delete => {
            let role = app.prompt.history()[i].role();
            let mut c = Confirm::new(
                format!("Delete message {} ({role})?", i + 1),
                "y delete",
                Pending::DeleteMessage(i),
            );
            if let toolscope_core::provider::Message::Assistant { tool_calls, .. } =
                &app.prompt.history()[i]
                && !tool_calls.is_empty()
            {
                c = c.detail("the results of its tool calls go with it");
            }
            ask(app, c);
        }
        KeyCode::Char('r') => {
            let later = app.prompt.later_than(i);
            if later == 0 {
                super::runs::rerun_from(app, i, fx);
            } else {
                ask(
                    app,
                    Confirm::new(
                        format!("Run again from message {}?", i + 1),
                        "y run from here",
                        Pending::RunFrom(i),
                    )
                    .detail(format!(
                        "the {later} later message{} of the conversation are dropped",
                        if later == 1 { "" } else { "s" }
                    )),
                );
            }
        }
        _ => {}
    }
}

fn raw_key(app: &mut App, key: KeyEvent) {
    let (width, height) = layout::raw_size(app);
    let mode = app.raw_mode;
    let page = height.saturating_sub(1).max(1) as isize;
    let delta = match key.code {
        KeyCode::Up => -1,
        KeyCode::Down => 1,
        KeyCode::PageUp => -page,
        KeyCode::PageDown => page,
        KeyCode::Home => {
            *app.run.scroll_mut(mode) = Scroll::top();
            return;
        }
        KeyCode::End => {
            *app.run.scroll_mut(mode) = Scroll::Follow;
            return;
        }
        KeyCode::Char('/') => {
            app.search = Some(Search::new(SearchPane::Raw));
            return;
        }
        KeyCode::Char('t') => return open_timeline(app),
        KeyCode::Char('n') => return next_match(app, true),
        KeyCode::Char('N') => return next_match(app, false),
        _ => return,
    };
    scroll_raw(&mut app.run, mode, delta, width, height);
}

fn scroll_raw(view: &mut RunView, mode: RawMode, delta: isize, width: usize, height: usize) {
    let scroll = view
        .scroll(mode)
        .moved(view.log(mode), delta, width, height);
    *view.scroll_mut(mode) = scroll;
}

/// The keys of a search query being typed.
fn search_key(app: &mut App, key: KeyEvent) {
    let Some(s) = &mut app.search else {
        return;
    };
    match key.code {
        KeyCode::Esc => app.search = None,
        KeyCode::Enter => {
            s.editing = false;
            if s.query.is_empty() {
                app.search = None;
                return;
            }
            let fold = s.ignores_case();
            let query = s.query.clone();
            s.count = match s.pane {
                SearchPane::Raw => search::count(app.run.log(app.raw_mode).as_str(), &query, fold),
                SearchPane::Parts => app
                    .run
                    .record
                    .parts
                    .rows
                    .iter()
                    .filter(|r| {
                        search::contains(r.label, &query, fold)
                            || search::contains(&r.summary, &query, fold)
                    })
                    .count(),
            };
            next_match(app, true);
        }
        KeyCode::Backspace => {
            s.query.pop();
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => s.query.push(c),
        _ => {}
    }
}

/// n / N: the next (or previous) match of the search, scrolled into view.
fn next_match(app: &mut App, forward: bool) {
    let Some(s) = app.search.clone().filter(|s| !s.editing) else {
        notice(app, "/ searches this pane", false);
        return;
    };
    let fold = s.ignores_case();
    match s.pane {
        SearchPane::Raw => {
            let mode = app.raw_mode;
            let (width, height) = layout::raw_size(app);
            let log = app.run.log(mode);
            let from = match s.at {
                Some(at) if forward => at + 1,
                Some(at) => at,
                None => match app.run.scroll(mode) {
                    Scroll::At { segment, .. } => log.segment(segment).start,
                    Scroll::Follow => 0,
                },
            };
            let Some(at) = search::find(log.as_str(), &s.query, fold, from, forward) else {
                notice(app, format!("no match for \"{}\"", s.query), true);
                return;
            };
            let scroll = log.scroll_to(at, width, height);
            *app.run.scroll_mut(mode) = scroll;
            if let Some(s) = &mut app.search {
                s.at = Some(at);
            }
        }
        SearchPane::Parts => {
            let rows = &app.run.record.parts.rows;
            let n = rows.len();
            if n == 0 {
                return;
            }
            let start =
                s.at.or(app.run.cursor.selected)
                    .unwrap_or(if forward { n - 1 } else { 0 });
            let hit = (1..=n).find_map(|k| {
                let i = if forward {
                    (start + k) % n
                } else {
                    (start + n * 2 - k) % n
                };
                let r = &rows[i];
                (search::contains(r.label, &s.query, fold)
                    || search::contains(&r.summary, &s.query, fold))
                .then_some(i)
            });
            let Some(i) = hit else {
                notice(app, format!("no match for \"{}\"", s.query), true);
                return;
            };
            let height = layout::parts_height(app);
            app.run.select(i, height);
            if let Some(s) = &mut app.search {
                s.at = Some(i);
            }
        }
    }
}

/// `t`: the last run's timeline, once something was sent.
fn open_timeline(app: &mut App) {
    if app.run.record.request.is_none() {
        notice(
            app,
            "no run yet: Ctrl+R sends one, then t shows its timeline",
            true,
        );
        return;
    }
    app.overlay = Some(Overlay::Timeline);
}

/// The `/` filter of the focused pane's list, if it has one (the MCP list, the Parts pane).
fn pane_filter(app: &mut App) -> Option<&mut super::fuzzy::ListFilter> {
    match app.focus {
        Focus::Mcp => Some(&mut app.mcp.list),
        Focus::Parts => Some(&mut app.parts_filter),
        _ => None,
    }
}

/// A key for the focused pane's filter; whether it took it. Enter ends the typing (the rows
/// stay filtered). In the Parts pane the selected row follows the filter's.
fn filter_key(app: &mut App, key: &KeyEvent) -> bool {
    if app.focus == Focus::Parts {
        refresh_parts_filter(app);
    }
    let Some(f) = pane_filter(app) else {
        return false;
    };
    let taken = if key.code == KeyCode::Enter && f.typing {
        f.typing = false;
        true
    } else {
        f.key(key) == super::fuzzy::FilterKey::Taken
    };
    if taken && app.focus == Focus::Parts {
        let height = layout::parts_height(app);
        match app.parts_filter.chosen() {
            Some(i) if app.parts_filter.active() => app.run.select(i, height),
            _ => {}
        }
    }
    taken
}

/// The Parts filter's rows again when the parts changed (a new run, a row more).
pub(super) fn refresh_parts_filter(app: &mut App) {
    let run = app.run.record.id;
    if app.parts_filter.active()
        && (app.parts_filter.len() != app.run.record.parts.rows.len()
            || app.parts_filter_run != run)
    {
        let items = app.run.record.parts.filter_items();
        app.parts_filter.set_items(items);
        app.parts_filter_run = run;
    }
}

fn parts_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let height = layout::parts_height(app);
    let page = height.saturating_sub(1).max(1) as isize;
    // `/` filters the rows by type or tool name; while filtered, the arrows move through the
    // rows it leaves.
    if key.code == KeyCode::Char('/') || app.parts_filter.active() {
        if key.code == KeyCode::Char('/') {
            let items = app.run.record.parts.filter_items();
            app.parts_filter.set_items(items);
            app.parts_filter_run = app.run.record.id;
        }
        if filter_key(app, &key) {
            return;
        }
    }
    match key.code {
        KeyCode::Up => app.run.select_by(-1, height),
        KeyCode::Down => app.run.select_by(1, height),
        KeyCode::PageUp => app.run.select_by(-page, height),
        KeyCode::PageDown => app.run.select_by(page, height),
        KeyCode::Home => app.run.select(0, height),
        KeyCode::End => app.run.cursor.selected = None,
        KeyCode::Char('?') => app.search = Some(Search::new(SearchPane::Parts)),
        KeyCode::Char('t') => open_timeline(app),
        KeyCode::Char('n') => next_match(app, true),
        KeyCode::Char('N') => next_match(app, false),
        KeyCode::Enter => {
            let rows = app.run.record.parts.rows.len();
            if rows == 0 {
                notice(app, "no part yet", true);
                return;
            }
            let i = app.run.cursor.selected.unwrap_or(rows - 1);
            if let Some(d) = Detail::of_row(&app.run.record.parts, i) {
                app.overlay = Some(Overlay::Detail(Box::new(d)));
            }
        }
        KeyCode::Char('c') | KeyCode::Char('y') => {
            let rows = app.run.record.parts.rows.len();
            if rows == 0 {
                notice(app, "no part to copy yet", true);
                return;
            }
            let i = app.run.cursor.selected.unwrap_or(rows - 1);
            let text = app.run.record.parts.jsonl(i);
            let n = app.run.record.parts.rows[i].count;
            fx.push(Effect::Copy { text });
            let what = if n == 1 {
                "1 part".to_string()
            } else {
                format!("{n} parts")
            };
            notice(app, format!("copied {what} as JSON (OSC 52)"), false);
        }
        _ => {}
    }
}

fn on_paste(app: &mut App, text: &str, fx: &mut Vec<Effect>) {
    // Terminals send pasted newlines as carriage returns.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    match app.overlay.as_mut() {
        Some(Overlay::Picker(p)) => {
            let field = p.field;
            if let Some(t) = p.editor_mut(field) {
                t.insert_str(text.trim());
            }
            return;
        }
        Some(Overlay::Path { editor: e, .. }) => {
            e.insert_str(text.trim());
            return;
        }
        Some(Overlay::AddServer(e)) => {
            e.insert_str(text.trim());
            return;
        }
        Some(Overlay::Protocols(p)) => {
            p.list.paste(&text);
            return;
        }
        Some(Overlay::Sessions(p)) => {
            p.list.paste(&text);
            return;
        }
        Some(Overlay::Choices(p)) => {
            p.paste(&text);
            return;
        }
        Some(Overlay::Edit { editor: e, .. }) => {
            e.insert_str(&text);
            return;
        }
        Some(_) => return,
        None => {}
    }
    if let Some(s) = app.search.as_mut().filter(|s| s.editing) {
        s.query.push_str(text.trim());
        return;
    }
    if let Some(f) = pane_filter(app)
        && f.paste(&text) == super::fuzzy::FilterKey::Taken
    {
        if app.focus == Focus::Parts
            && let Some(i) = app.parts_filter.chosen()
        {
            let height = layout::parts_height(app);
            app.run.select(i, height);
        }
        return;
    }
    match app.focus {
        Focus::Tools => {
            let changed = app.tools.editor.insert_str(&text);
            if changed {
                tools_edited(app, fx);
            }
        }
        Focus::System => drop(app.prompt.system.insert_str(&text)),
        Focus::Composer => drop(app.prompt.composer.insert_str(&text)),
        Focus::Result(i) => {
            if let Some(r) = app.prompt.results.get_mut(i) {
                r.insert_str(&text);
            }
        }
        _ => {}
    }
}

fn on_mouse(app: &mut App, mouse: MouseEvent) {
    let delta = match mouse.kind {
        MouseEventKind::ScrollUp => -WHEEL_ROWS,
        MouseEventKind::ScrollDown => WHEEL_ROWS,
        _ => 0,
    };
    if app.overlay.is_some() {
        if delta != 0 {
            overlays::scroll(app, delta);
        } else if let MouseEventKind::Down(MouseButton::Left) = mouse.kind {
            overlays::click(app, Position::new(mouse.column, mouse.row));
        }
        return;
    }
    let at = Position::new(mouse.column, mouse.row);
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    let screen = layout::screen(area, app);
    if let MouseEventKind::Down(MouseButton::Left) = mouse.kind {
        match &screen {
            Screen::Main(m) if m.status.contains(at) => show_last_notice(app),
            Screen::Main(m) => click(app, m, at),
            Screen::Compare(c) if c.status.contains(at) => show_last_notice(app),
            Screen::Verify(v) if v.status.contains(at) => show_last_notice(app),
            _ => {}
        }
        return;
    }
    if delta == 0 {
        return;
    }
    match screen {
        Screen::Main(m) => {
            if m.raw.contains(at) {
                let (width, height) = layout::raw_size(app);
                let mode = app.raw_mode;
                scroll_raw(&mut app.run, mode, delta, width, height);
            } else if m.parts.contains(at) {
                let height = layout::parts_height(app);
                app.run.select_by(delta, height);
            } else if m.tools.contains(at) {
                app.tools.editor.scroll(delta);
            } else if m.prompt.contains(at) {
                let i = layout::inner(m.prompt);
                let areas = layout::prompt_areas(i, app);
                if areas.transcript.contains(at) {
                    let s = app.prompt.transcript_scroll as isize - delta;
                    app.prompt.transcript_scroll = s.max(0) as usize;
                }
            }
        }
        Screen::Compare(c) => {
            let mode = app.raw_mode;
            if let Some(compare) = &mut app.compare {
                let areas = layout::compare_columns(compare, &c.columns);
                for ((col, a), view) in c.columns.iter().zip(areas).zip(compare.columns.iter_mut())
                {
                    if col.contains(at) {
                        let out = a.output;
                        scroll_raw(view, mode, delta, out.width as usize, out.height as usize);
                    }
                }
            }
        }
        Screen::Verify(areas) => {
            if let Some(v) = &mut app.verify {
                if areas.failures.contains(at) {
                    let n = v.failures.len().saturating_sub(1) as isize;
                    v.selected = (v.selected as isize + delta.signum()).clamp(0, n) as usize;
                } else {
                    let last = v.lines.len().saturating_sub(1) as isize;
                    v.scroll = (v.scroll as isize + delta).clamp(0, last.max(0)) as usize;
                }
            }
        }
        Screen::TooSmall(_) => {}
    }
}

/// A click: focuses the pane (and field) under it; in an editor it puts the cursor there, on a
/// list's row (the MCP list, the Parts pane) it selects that row.
fn click(app: &mut App, m: &layout::MainAreas, at: Position) {
    if m.tools.contains(at) {
        let inner = layout::inner(m.tools);
        let (text, list) = layout::tools_split(inner, app);
        if let Some(list) = list.filter(|l| l.contains(at)) {
            app.focus = Focus::Mcp;
            // The first row is the rule; the rows scroll as the drawing does.
            if at.y > list.y {
                let height = (list.height - 1) as usize;
                let f = &mut app.mcp.list;
                let top = f.selected.saturating_sub(height.saturating_sub(1));
                let k = top + (at.y - list.y - 1) as usize;
                if k < f.shown_len() {
                    f.selected = k;
                }
            }
        } else {
            app.focus = Focus::Tools;
            if text.contains(at) {
                click_tools_text(app, text, at);
            }
        }
        return;
    }
    app.focus = if m.choice.contains(at) {
        Focus::ToolChoice
    } else if m.prompt.contains(at) {
        let areas = layout::prompt_areas(layout::inner(m.prompt), app);
        if areas.system.contains(at) {
            click_text(
                &mut app.prompt.system,
                layout::PromptAreas::field(areas.system),
                at,
            );
            Focus::System
        } else if let Some(i) = areas.results.iter().position(|r| r.contains(at)) {
            let area = layout::result_editor(areas.results[i]);
            if let Some(r) = app.prompt.results.get_mut(i) {
                click_text(r, area, at);
            }
            Focus::Result(i)
        } else if areas.transcript.contains(at) && !app.prompt.history().is_empty() {
            // The message clicked is the one chosen (as the conversation is drawn now).
            let clicked = super::transcript::message_at(app, areas.transcript, at.y);
            if let Some(i) = clicked {
                app.prompt.selected = i;
            } else if app.focus != Focus::Transcript {
                app.prompt.selected = app.prompt.history().len().saturating_sub(1);
            }
            Focus::Transcript
        } else {
            if areas.composer.contains(at) {
                click_text(
                    &mut app.prompt.composer,
                    layout::PromptAreas::field(areas.composer),
                    at,
                );
            }
            Focus::Composer
        }
    } else if m.raw.contains(at) {
        Focus::Raw
    } else if m.parts.contains(at) {
        click_parts(app, layout::inner(m.parts), at);
        Focus::Parts
    } else {
        app.focus
    };
}

/// Puts a text area's cursor where `at` is in `area` (where it is drawn): its wrapped rows and
/// scroll taken into account; a click past a line's end lands at its end.
fn click_text(t: &mut ratatui_textarea::TextArea<'static>, area: Rect, at: Position) {
    if !area.contains(at) {
        return;
    }
    let (top, left) = t.scroll_offset();
    let row = (at.y - area.y + top) as usize;
    let col = (at.x - area.x + left) as usize;
    let ratatui_textarea::DataCursor(r, c) = t.screen_to_data(row, col);
    t.move_cursor(ratatui_textarea::CursorMove::Jump(r as u16, c as u16));
}

/// A click in the Tools JSON: the cursor to the character under it (past the line numbers).
fn click_tools_text(app: &mut App, text: Rect, at: Position) {
    let e = &mut app.tools.editor;
    let gutter = layout::tools_gutter(e.lines().len());
    let width = (text.width as usize).saturating_sub(gutter);
    let (top, left) = e.viewport(text.height as usize, width);
    let row = top + (at.y - text.y) as usize;
    let x = (at.x - text.x) as usize;
    let cell = left + x.saturating_sub(gutter);
    e.click(row, cell);
}

/// A click on a row of the Parts pane selects it (among the rows the filter leaves, when one
/// is typed).
fn click_parts(app: &mut App, inner: Rect, at: Position) {
    if !inner.contains(at) {
        return;
    }
    let k = (at.y - inner.y) as usize;
    let height = inner.height as usize;
    if app.parts_filter.active() {
        let f = &mut app.parts_filter;
        let top = f.selected.saturating_sub(height.saturating_sub(1));
        if top + k < f.shown_len() {
            f.selected = top + k;
            if let Some(i) = f.chosen() {
                app.run.select(i, height);
            }
        }
        return;
    }
    let top = app.run.parts_top(height);
    if top + k < app.run.record.parts.rows.len() {
        app.run.select(top + k, height);
    }
}

#[cfg(test)]
#[path = "update_tests.rs"]
mod tests;
