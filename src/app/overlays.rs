//! The overlay half of [`super::update`]: the keys of the windows drawn over the panes (help,
//! picker, file path, sessions, restore offer, questions, the detail view, the exact request,
//! the message editor), and what a yes to a question does.
//!
//! `update` calls into this module and never the other way; what both need comes from
//! [`super::runs`], [`super::confirm`] and [`super::notice`].

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::confirm::{Confirm, Pending, ask};
use super::help;
use super::layout;
use super::message::FilePurpose;
use super::notice::notice;
use super::picker::{ModelList, Picker, PickerField};
use super::protocol_picker::PickerOutcome;
use super::runs::{self, quit, remember};
use super::session_update as sessions;
use super::text_log::Scroll;
use super::{App, Effect, Focus, Overlay, editor};

/// A click while an overlay is open: on a row of a list window (the protocol, tool-choice and
/// session pickers) it selects that row; Enter then takes it.
pub(super) fn click(app: &mut App, at: ratatui::layout::Position) {
    let area = ratatui::layout::Rect::new(0, 0, app.size.0, app.size.1);
    match app.overlay.as_mut() {
        Some(Overlay::Protocols(p)) => {
            let f = &mut p.list;
            let r = layout::inner(layout::list_window(area, f.len()));
            if let Some(i) = layout::list_row_at(r, 1, f.selected, f.shown_len(), at.y) {
                f.selected = i;
            }
        }
        Some(Overlay::Choices(p)) => {
            let f = &mut p.list;
            let r = layout::inner(layout::list_window(area, f.len()));
            if let Some(i) = layout::list_row_at(r, 1, f.selected, f.shown_len(), at.y) {
                f.selected = i;
            }
        }
        Some(Overlay::Sessions(p)) => {
            let rows = p.entries.as_ref().map_or(1, |e| e.len().max(1));
            let f = &mut p.list;
            let r = layout::inner(layout::sessions_window(area, rows));
            if let Some(i) = layout::list_row_at(r, 2, f.selected, f.shown_len(), at.y) {
                f.selected = i;
            }
        }
        _ => {}
    }
}

/// A key while an overlay is open.
pub(super) fn key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(overlay) = app.overlay.as_mut() else {
        return;
    };
    match overlay {
        Overlay::Help { scroll } => match key.code {
            KeyCode::Esc | KeyCode::F(1) | KeyCode::Enter | KeyCode::Char('q') => {
                app.overlay = None
            }
            KeyCode::Up => *scroll = scroll.saturating_sub(1),
            // The help clamps a scroll past its end when it draws.
            KeyCode::Down => *scroll = (*scroll + 1).min(help::len()),
            KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
            KeyCode::PageDown => *scroll = (*scroll + 10).min(help::len()),
            KeyCode::Home | KeyCode::Char('g') => *scroll = 0,
            KeyCode::End | KeyCode::Char('G') => *scroll = help::len(),
            KeyCode::Left | KeyCode::Right => {
                let names = app.themes.names();
                let at = names.iter().position(|n| *n == app.theme).unwrap_or(0) as isize;
                let step = if key.code == KeyCode::Left { -1 } else { 1 };
                app.theme = names[(at + step).rem_euclid(names.len() as isize) as usize].clone();
                // A theme chosen here is the theme of the next start too.
                remember(app, false, fx);
            }
            _ => {}
        },
        Overlay::Timeline => {
            if matches!(
                key.code,
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') | KeyCode::Char('t')
            ) {
                app.overlay = None;
            }
        }
        Overlay::Picker(_) => picker_key(app, key, fx),
        Overlay::Protocols(p) => match p.key(key) {
            PickerOutcome::Open => {}
            PickerOutcome::Closed => app.overlay = None,
            PickerOutcome::Chosen { protocol, detect } => {
                app.overlay = None;
                // The same protocol again keeps its settings (reasoning, delimiters).
                if protocol.as_ref().map(|p| p.name()) != app.protocol.as_ref().map(|p| p.name()) {
                    app.protocol = protocol;
                }
                app.detect_protocol = app.protocol.is_none() && detect;
                let name = app.protocol_name();
                notice(
                    app,
                    format!("protocol: {name} (applies to the next run)"),
                    false,
                );
            }
        },
        Overlay::Choices(p) => match p.key(key) {
            super::choice_picker::ChoiceOutcome::Open => {}
            super::choice_picker::ChoiceOutcome::Closed => app.overlay = None,
            super::choice_picker::ChoiceOutcome::Chosen(choice) => {
                app.overlay = None;
                app.choice = choice;
                let label = app.choice.label();
                notice(
                    app,
                    format!("tool choice: {label} (applies to the next run)"),
                    false,
                );
            }
        },
        Overlay::Sessions(_) => sessions::picker_key(app, key, fx),
        Overlay::Restore(_) => sessions::restore_key(app, key, fx),
        Overlay::Path {
            purpose,
            save,
            editor: e,
        } => match key.code {
            KeyCode::Esc => app.overlay = None,
            KeyCode::Enter => {
                let path = PathBuf::from(editor::text_of(e).trim());
                let (purpose, save) = (*purpose, *save);
                app.overlay = None;
                path_entered(app, purpose, save, path, fx);
            }
            _ => {
                if editor::undo_redo(e, &key).is_none() {
                    e.input(key);
                }
            }
        },
        Overlay::AddServer(e) => match key.code {
            KeyCode::Esc => app.overlay = None,
            KeyCode::Enter => {
                let line = editor::text_of(e);
                if super::mcp_update::add_typed(app, &line, fx) {
                    app.overlay = None;
                    app.focus = super::Focus::Mcp;
                    // The new server's row.
                    if let Some(last) = app.mcp.servers.len().checked_sub(1) {
                        let rows = app.mcp.rows();
                        let at = rows
                            .iter()
                            .position(|r| *r == super::mcp::Row::Server(last))
                            .unwrap_or(0);
                        app.mcp.select_row(at);
                    }
                }
            }
            _ => {
                if editor::undo_redo(e, &key).is_none() {
                    e.input(key);
                }
            }
        },
        Overlay::Confirm(c) => match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') | KeyCode::Enter => {
                let action = c.action.clone();
                app.overlay = None;
                confirmed(app, action, fx);
            }
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => {
                app.overlay = None;
                notice(app, "nothing was changed", false);
            }
            _ => {}
        },
        Overlay::Detail(d) => match key.code {
            KeyCode::Esc | KeyCode::Char('q') | KeyCode::F(10) => app.overlay = None,
            KeyCode::Char('c') | KeyCode::Char('y') => {
                let text = d.as_str().to_string();
                fx.push(Effect::Copy { text });
                notice(app, "copied the whole text (OSC 52)", false);
            }
            code => {
                if let Some(delta) = scroll_delta(app, code) {
                    scroll(app, delta);
                } else if matches!(code, KeyCode::Home | KeyCode::Char('g'))
                    && let Some(Overlay::Detail(d)) = &mut app.overlay
                {
                    d.scroll = Scroll::top();
                } else if matches!(code, KeyCode::End | KeyCode::Char('G'))
                    && let Some(Overlay::Detail(d)) = &mut app.overlay
                {
                    d.scroll = Scroll::Follow;
                }
            }
        },
        Overlay::Request(v) => match key.code {
            KeyCode::Esc | KeyCode::Char('q') => app.overlay = None,
            KeyCode::Char('c') | KeyCode::Char('y') => {
                let text = v.curl.clone();
                fx.push(Effect::Copy { text });
                notice(
                    app,
                    "copied as a curl command (OSC 52); it reads the key from its variable",
                    false,
                );
            }
            KeyCode::Left | KeyCode::Right if app.compare.is_some() => {
                let n = app.compare.as_ref().map_or(1, |c| c.columns.len()) as isize;
                let step = if key.code == KeyCode::Left { -1 } else { 1 };
                let at = v.column.unwrap_or(0) as isize;
                let column = (at + step).rem_euclid(n) as usize;
                open_request(app, Some(column));
            }
            KeyCode::Home | KeyCode::Char('g') => v.scroll = Scroll::top(),
            KeyCode::End | KeyCode::Char('G') => v.scroll = Scroll::Follow,
            code => {
                if let Some(delta) = scroll_delta(app, code) {
                    scroll(app, delta);
                }
            }
        },
        Overlay::Edit { index, editor: e } => {
            let newline = key.modifiers.contains(KeyModifiers::ALT)
                || (key.modifiers.contains(KeyModifiers::CONTROL)
                    && key.code == KeyCode::Char('j'));
            match key.code {
                KeyCode::Esc => {
                    app.overlay = None;
                    notice(app, "the message was left as it was", false);
                }
                KeyCode::Enter | KeyCode::Char('j') if newline => e.insert_newline(),
                KeyCode::Enter => {
                    let (i, text) = (*index, editor::text_of(e));
                    match app.prompt.edit(i, text) {
                        Ok(()) => {
                            app.overlay = None;
                            app.unsaved_turns = true;
                            notice(
                                app,
                                format!("message {} edited; r on it runs from there", i + 1),
                                false,
                            );
                        }
                        Err(why) => notice(app, why, true),
                    }
                }
                _ => {
                    if editor::undo_redo(e, &key).is_none() {
                        e.input(key);
                    }
                }
            }
        }
    }
}

/// Rows a scrolling key moves the detail or request view by.
fn scroll_delta(app: &App, code: KeyCode) -> Option<isize> {
    let page = layout::text_overlay_size(app.size)
        .1
        .saturating_sub(1)
        .max(1) as isize;
    match code {
        KeyCode::Up => Some(-1),
        KeyCode::Down => Some(1),
        KeyCode::PageUp => Some(-page),
        KeyCode::PageDown | KeyCode::Char(' ') => Some(page),
        _ => None,
    }
}

/// Scrolls the overlay by `delta` rows (keys, the wheel).
pub(super) fn scroll(app: &mut App, delta: isize) {
    let (width, height) = layout::text_overlay_size(app.size);
    match &mut app.overlay {
        Some(Overlay::Detail(d)) => d.scroll = d.scroll.moved(&d.text, delta, width, height),
        Some(Overlay::Request(v)) => v.scroll = v.scroll.moved(&v.text, delta, width, height),
        Some(Overlay::Help { scroll }) => {
            *scroll = (*scroll as isize + delta).clamp(0, help::len() as isize) as usize
        }
        _ => {}
    }
}

/// Ctrl+E: the exact request of the main run (or of compare column `column`), or, before
/// anything was sent, the one Ctrl+R would send.
pub(super) fn open_request(app: &mut App, column: Option<usize>) {
    // In compare: the column shown (all of them side by side: the first).
    let column = column.or_else(|| app.compare.as_ref().map(|c| c.zoomed));
    match runs::request_view(app, column) {
        Ok(v) => app.overlay = Some(Overlay::Request(Box::new(v))),
        Err(why) => notice(app, format!("no request to show: {why}"), true),
    }
}

/// Asks the provider now picked for its models, when not asked yet.
pub(super) fn list_models(p: &mut Picker, fx: &mut Vec<Effect>) {
    if let Some((provider, base_url)) = p.wants_listing() {
        p.models = ModelList::Listing {
            provider,
            base_url: base_url.clone(),
        };
        fx.push(Effect::ListModels { provider, base_url });
    }
}

fn picker_key(app: &mut App, key: KeyEvent, fx: &mut Vec<Effect>) {
    let Some(Overlay::Picker(p)) = &mut app.overlay else {
        return;
    };
    let leaving = p.field;
    match key.code {
        KeyCode::Esc => {
            app.overlay = None;
            return;
        }
        KeyCode::Enter => {
            match p.chosen() {
                Ok(c) => {
                    app.provider = c.provider;
                    app.model = c.model;
                    app.base_url = c.base_url;
                    app.sampling = c.sampling;
                    app.overlay = None;
                    let m = format!("{} · {} (applies to the next run)", app.provider, app.model);
                    notice(app, m, false);
                    remember(app, false, fx);
                }
                Err(why) => notice(app, format!("not applied: {why}"), true),
            }
            return;
        }
        KeyCode::Tab => p.next_field(1),
        KeyCode::BackTab => p.next_field(-1),
        KeyCode::Down if p.field == PickerField::Model && !p.shown_models().is_empty() => {
            p.step_model(1)
        }
        KeyCode::Up if p.field == PickerField::Model && p.model_choice.is_some() => {
            p.step_model(-1)
        }
        KeyCode::Down => p.next_field(1),
        KeyCode::Up => p.next_field(-1),
        KeyCode::Left | KeyCode::Right
            if matches!(
                p.field,
                PickerField::Provider | PickerField::Parallel | PickerField::Effort
            ) =>
        {
            p.step_choice(if key.code == KeyCode::Left { -1 } else { 1 });
            if p.field == PickerField::Provider {
                list_models(p, fx);
            }
        }
        _ => {
            let field = p.field;
            if let Some(t) = p.editor_mut(field)
                && editor::undo_redo(t, &key).is_none()
            {
                t.input(key);
            }
            if field == PickerField::Model {
                p.model_choice = None;
            }
        }
    }
    // Leaving the base URL field with a good URL lists that server's models.
    if leaving == PickerField::BaseUrl && p.field != PickerField::BaseUrl {
        list_models(p, fx);
    }
}

/// What a yes does.
fn confirmed(app: &mut App, action: Pending, fx: &mut Vec<Effect>) {
    match action {
        Pending::Quit => quit(app, fx),
        Pending::NewConversation => {
            app.prompt.new_conversation();
            app.unsaved_turns = false;
            app.focus = Focus::Composer;
            notice(app, "a new conversation: the next message starts it", false);
        }
        Pending::Effect(e) => {
            if matches!(*e, Effect::SaveFile { .. } | Effect::SaveSession { .. }) {
                app.pending_save = None;
            }
            fx.push(*e);
        }
        Pending::DeleteMessage(i) => {
            let n = app.prompt.delete(i);
            app.unsaved_turns = true;
            let what = if n == 1 {
                "1 message".to_string()
            } else {
                format!("{n} messages")
            };
            notice(app, format!("deleted {what}"), false);
        }
        Pending::Compare => runs::start_compare(app, fx),
        Pending::Loop => super::mcp_update::start_loop(app, fx),
        Pending::Verify => super::verify::start(app, fx),
        Pending::OpenSession(s) => super::verify::open_session(app, *s, fx),
        Pending::RunFrom(i) => {
            runs::rerun_from(app, i, fx);
        }
    }
}

/// The path prompt's Enter: loads or saves, asking first before replacing edited tools.
fn path_entered(
    app: &mut App,
    purpose: FilePurpose,
    save: bool,
    path: PathBuf,
    fx: &mut Vec<Effect>,
) {
    if path.as_os_str().is_empty() {
        notice(app, "give a file name", true);
        return;
    }
    match (purpose, save) {
        (FilePurpose::Session, true) => sessions::save_to(app, path, fx),
        (FilePurpose::Session, false) => fx.push(Effect::LoadSession { path }),
        (FilePurpose::Tools, true) => {
            // Saving back to the file the tools came from is a save, not an overwrite.
            let overwrite = app.tools.path.as_ref() == Some(&path);
            let save = Effect::SaveFile {
                purpose,
                path,
                contents: app.tools.text() + "\n",
                overwrite,
            };
            app.pending_save = Some(Box::new(save.clone()));
            fx.push(save);
        }
        (FilePurpose::Tools, false) => {
            let load = Effect::LoadFile { purpose, path };
            if app.tools.is_edited() {
                ask(
                    app,
                    Confirm::new(
                        "Replace the edited tools?",
                        "y replace",
                        Pending::Effect(Box::new(load)),
                    )
                    .detail("the Tools pane's edits are not saved (F4 saves them)"),
                );
            } else {
                fx.push(load);
            }
        }
    }
}
