//! The small windows drawn over the panes: the provider, model and settings picker, the file
//! path prompt, a question before something is lost, and the editor of a message. (The help,
//! the session windows and the long-text windows have files of their own.)

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui_textarea::TextArea;

use toolscope_core::provider::ReasoningEffort;

use crate::app::fuzzy::ListFilter;
use crate::app::picker::{ModelList, PickerField};
use crate::app::protocol_picker::ProtocolPicker;
use crate::app::text_log::wrap;
use crate::app::{App, Confirm, FilePurpose, Picker};

use super::panes::{block, choice, filter_header, marked, muted};
use super::text::fit;

pub use crate::app::layout::centered;

/// A list window over the panes at `r`: cleared, framed with `title` and the keys `hint` at the
/// bottom. Gives the area inside the frame.
pub fn window(frame: &mut Frame<'_>, app: &App, r: Rect, title: &str, hint: &str) -> Rect {
    let theme = app.theme();
    let hint = Line::from(Span::styled(hint.to_string(), muted(theme)));
    framed(frame, app, r, block(title, true, theme).title_bottom(hint))
}

/// A dialog over the panes at `r`: cleared and framed with `title`. Gives the area inside the
/// frame.
pub fn dialog(frame: &mut Frame<'_>, app: &App, r: Rect, title: &str) -> Rect {
    framed(frame, app, r, block(title, true, app.theme()))
}

/// Clears `r` and draws `b` there in the overlay's colours; gives the area inside it.
fn framed(frame: &mut Frame<'_>, app: &App, r: Rect, b: Block<'_>) -> Rect {
    let theme = app.theme();
    frame.render_widget(Clear, r);
    let b = b.style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg));
    let inner = b.inner(r);
    frame.render_widget(b, r);
    inner
}

const LABEL: u16 = 16;

/// Rows of listed models the picker shows at most.
const MODEL_ROWS: usize = 5;

pub fn picker(frame: &mut Frame<'_>, area: Rect, app: &App, p: &Picker) {
    let theme = app.theme();
    let r = centered(area, 76, 21);
    let inner = dialog(frame, app, r, "Provider, model and settings");
    let label = |f: PickerField| {
        let s = if p.field == f {
            Style::default()
                .fg(theme.ui.accent)
                .add_modifier(Modifier::BOLD)
        } else {
            muted(theme)
        };
        Span::styled(format!("{:<w$}", f.label(), w = LABEL as usize), s)
    };
    let mut y = inner.y;
    let bottom = inner.y + inner.height;
    let mut row = |h: u16| {
        let at = Rect {
            y,
            height: h.min(bottom.saturating_sub(y)),
            ..inner
        };
        y = (y + h).min(bottom);
        at
    };
    let field_of = |r: Rect| Rect {
        x: r.x + LABEL,
        width: r.width.saturating_sub(LABEL),
        ..r
    };
    let problem = |r: Rect, f: PickerField, frame: &mut Frame<'_>| {
        if let Some(why) = p.field_problem(f) {
            frame.render_widget(
                Paragraph::new(Span::styled(
                    fit(&format!("✗ {why}"), r.width as usize),
                    Style::default().fg(theme.ui.error),
                )),
                r,
            );
        }
    };
    // Provider.
    let mut providers = vec![label(PickerField::Provider)];
    for (i, kind) in p.providers.iter().enumerate() {
        let s = choice(theme, i == p.provider);
        let name = if i == p.provider {
            format!("‹{}›", kind.name())
        } else {
            kind.name().to_string()
        };
        providers.push(Span::styled(name, s));
        providers.push(Span::raw(" "));
    }
    frame.render_widget(Paragraph::new(Line::from(providers)), row(1));
    let key_note = match p.kind().key_env() {
        Some(var) if app.keys_set.contains(&p.kind()) => Span::styled(
            format!("{var} is set"),
            Style::default().fg(theme.ui.success),
        ),
        Some(var) => Span::styled(
            format!("{var} is not set"),
            Style::default().fg(theme.ui.warning),
        ),
        None => Span::styled("no key needed", muted(theme)),
    };
    let r1 = row(1);
    frame.render_widget(Paragraph::new(key_note), field_of(r1));
    // Model, and the models the provider lists.
    let mr = row(1);
    frame.render_widget(Paragraph::new(label(PickerField::Model)), mr);
    frame.render_widget(&p.model, field_of(mr));
    let list = field_of(row(MODEL_ROWS as u16));
    let mut lines: Vec<Line<'static>> = Vec::new();
    match &p.models {
        // The base URL was edited since: what was known is of the old one.
        _ if p.models_stale() => lines.push(Line::from(Span::styled(
            fit(
                "this base URL's models are listed when you leave its field",
                list.width as usize,
            ),
            muted(theme),
        ))),
        ModelList::NotAsked => {}
        ModelList::Listing { .. } => lines.push(Line::from(Span::styled(
            "listing the provider's models…",
            muted(theme),
        ))),
        ModelList::Failed { why, .. } => lines.push(Line::from(Span::styled(
            fit(
                &format!("cannot list models: {why} (type a name)"),
                list.width as usize,
            ),
            Style::default().fg(theme.ui.warning),
        ))),
        ModelList::Listed { names, .. } => {
            let shown = p.model_rows();
            let head = format!(
                "{} of {} listed · ↓/↑ choose · or type any name",
                shown.len(),
                names.len()
            );
            lines.push(Line::from(Span::styled(
                fit(&head, list.width as usize),
                muted(theme),
            )));
            let room = MODEL_ROWS - 1;
            let top = p
                .model_choice
                .map_or(0, |i| i.saturating_sub(room.saturating_sub(1)));
            for (i, (name, marks)) in shown.iter().enumerate().skip(top).take(room) {
                let chosen = p.model_choice == Some(i);
                let marker = if chosen { "▸ " } else { "  " };
                // The letters the typed name matched are marked (shifted past the marker).
                let text = fit(&format!("{marker}{name}"), list.width as usize);
                let marks: Vec<usize> = marks.iter().map(|k| k + 2).collect();
                lines.push(Line::from(marked(
                    &text,
                    &marks,
                    choice(theme, chosen),
                    theme,
                )));
            }
        }
    }
    frame.render_widget(Paragraph::new(lines), list);
    // Base URL, checked as it is typed.
    let br = row(1);
    frame.render_widget(Paragraph::new(label(PickerField::BaseUrl)), br);
    frame.render_widget(&p.base_url, field_of(br));
    let bp = row(1);
    problem(field_of(bp), PickerField::BaseUrl, frame);
    // Sampling settings.
    for f in [
        PickerField::Temperature,
        PickerField::MaxTokens,
        PickerField::TopP,
        PickerField::Seed,
    ] {
        let r = row(1);
        frame.render_widget(Paragraph::new(label(f)), r);
        let half = Rect {
            width: 14.min(field_of(r).width),
            ..field_of(r)
        };
        let p_mut = match f {
            PickerField::Temperature => &p.temperature,
            PickerField::MaxTokens => &p.max_tokens,
            PickerField::TopP => &p.top_p,
            _ => &p.seed,
        };
        frame.render_widget(p_mut, half);
        let rest = Rect {
            x: half.x + half.width + 1,
            width: field_of(r).width.saturating_sub(half.width + 1),
            ..half
        };
        problem(rest, f, frame);
    }
    let options = |f: PickerField, names: Vec<String>, at: usize| {
        let mut spans = vec![label(f)];
        for (i, n) in names.into_iter().enumerate() {
            let chosen = i == at;
            let text = if chosen { format!("‹{n}›") } else { n };
            spans.push(Span::styled(text, choice(theme, chosen)));
            spans.push(Span::raw(" "));
        }
        Line::from(spans)
    };
    let parallel = [None, Some(true), Some(false)];
    let at = parallel.iter().position(|v| *v == p.parallel).unwrap_or(0);
    frame.render_widget(
        Paragraph::new(options(
            PickerField::Parallel,
            vec!["default".into(), "on".into(), "off".into()],
            at,
        )),
        row(1),
    );
    let mut efforts = vec!["default".to_string()];
    efforts.extend(ReasoningEffort::ALL.iter().map(|e| e.as_str().to_string()));
    let at = p
        .effort
        .and_then(|e| ReasoningEffort::ALL.iter().position(|x| *x == e))
        .map_or(0, |i| i + 1);
    frame.render_widget(
        Paragraph::new(options(PickerField::Effort, efforts, at)),
        row(1),
    );
    row(1);
    frame.render_widget(
        Paragraph::new(Span::styled(
            "Tab field · ←/→ choices · Enter apply · Esc cancel",
            muted(theme),
        )),
        row(1),
    );
}

/// A question: what would be lost, and the keys that answer.
pub fn confirm(frame: &mut Frame<'_>, area: Rect, app: &App, c: &Confirm) {
    let theme = app.theme();
    let width = 72u16;
    let text_w = width.saturating_sub(4) as usize;
    let mut lines: Vec<Line<'static>> = Vec::new();
    for d in &c.details {
        for r in wrap(d, text_w) {
            lines.push(Line::from(Span::styled(
                d[r].to_string(),
                Style::default().fg(theme.ui.text),
            )));
        }
    }
    lines.push(Line::from(""));
    lines.push(Line::from(vec![
        Span::styled(
            format!("{} ", c.yes),
            Style::default()
                .fg(theme.ui.warning)
                .add_modifier(Modifier::BOLD),
        ),
        Span::styled("· n or Esc: leave everything as it is", muted(theme)),
    ]));
    let r = centered(area, width, lines.len() as u16 + 2);
    let inner = dialog(frame, app, r, &c.question);
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The editor of a message of the conversation.
pub fn edit(frame: &mut Frame<'_>, area: Rect, app: &App, index: usize, editor: &TextArea<'_>) {
    let theme = app.theme();
    let r = centered(area, 90, 14);
    frame.render_widget(Clear, r);
    let role = app
        .prompt
        .history()
        .get(index)
        .map_or("message", |m| m.role());
    let b = block(&format!("Edit message {} ({role})", index + 1), true, theme)
        .style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg))
        .title_bottom(Line::from(Span::styled(
            " Enter apply · Alt+Enter new line · Ctrl+Z undo · Esc cancel ",
            muted(theme),
        )));
    let inner = b.inner(r);
    frame.render_widget(b, r);
    frame.render_widget(editor, inner);
}

pub fn path(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    purpose: FilePurpose,
    save: bool,
    editor: &TextArea<'_>,
) {
    let theme = app.theme();
    let r = centered(area, 72, 5);
    frame.render_widget(Clear, r);
    let title = match (purpose, save) {
        (FilePurpose::Tools, true) => "Save the tools to",
        (FilePurpose::Tools, false) => "Load the tools from",
        (FilePurpose::Session, true) => "Save the session to",
        (FilePurpose::Session, false) => "Open the session",
    };
    let b =
        block(title, true, theme).style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg));
    let inner = b.inner(r);
    frame.render_widget(b, r);
    frame.render_widget(editor, Rect { height: 1, ..inner });
    if inner.height >= 3 {
        frame.render_widget(
            Paragraph::new(Span::styled("Enter confirms · Esc cancels", muted(theme))),
            Rect {
                y: inner.y + 2,
                height: 1,
                ..inner
            },
        );
    }
}

/// Asks for an MCP server to add (F11, or `a` in the MCP list).
pub fn add_server(frame: &mut Frame<'_>, area: Rect, app: &App, editor: &TextArea<'_>) {
    let theme = app.theme();
    let r = centered(area, 76, 6);
    let inner = dialog(frame, app, r, "Add an MCP server");
    frame.render_widget(editor, Rect { height: 1, ..inner });
    let hints = [
        "a command (stdio), or URL[=TOKEN_ENV] (streamable HTTP)",
        "Enter connects · Esc cancels",
    ];
    for (k, h) in hints.iter().enumerate() {
        if inner.height as usize >= 3 + k {
            frame.render_widget(
                Paragraph::new(Span::styled(*h, muted(theme))),
                Rect {
                    y: inner.y + 2 + k as u16,
                    height: 1,
                    ..inner
                },
            );
        }
    }
}

/// The protocol picker (Ctrl+L): the filter as typed, then the entries it leaves, best first,
/// their name's matched letters marked.
pub fn protocols(frame: &mut Frame<'_>, area: Rect, app: &App, p: &ProtocolPicker) {
    let name_width = p.shown().map(|(e, _)| e.name.len()).max().unwrap_or(6) + 2;
    filtered_window(
        frame,
        area,
        app,
        &p.list,
        Filtered {
            title: "Protocol",
            hint: " type to filter · ↑/↓ choose · Enter use · Esc clear, close ",
            current: app.protocol_name().to_string(),
            none: "no protocol matches the filter",
            label_width: name_width,
        },
        p.shown()
            .map(|(e, marks)| (e.name.to_string(), e.families.to_string(), marks)),
    );
}

/// The tool-choice modes (`/` in the Tool choice pane): the filter as typed, then the modes it
/// leaves, best first, their label's matched letters marked.
pub fn choices(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    p: &crate::app::choice_picker::ChoicePicker,
) {
    let label_width = p
        .shown()
        .map(|(e, _)| e.label.chars().count())
        .max()
        .unwrap_or(6)
        + 2;
    filtered_window(
        frame,
        area,
        app,
        &p.list,
        Filtered {
            title: "Tool choice",
            hint: " type to filter · ↑/↓ choose · Enter use · Esc clear, close ",
            current: app.choice.label(),
            none: "no tool choice matches the filter",
            label_width,
        },
        p.shown()
            .map(|(e, marks)| (e.label.clone(), e.detail.clone(), marks)),
    );
}

/// What a filtered list window says around its rows.
struct Filtered {
    title: &'static str,
    hint: &'static str,
    /// The value now in use, named in the header.
    current: String,
    /// What an empty result says.
    none: &'static str,
    /// The label column's width (at most half the window).
    label_width: usize,
}

/// A window listing what a filter leaves: the query and the count on top, then a row per item
/// (its label, matched letters marked, and its detail), scrolled so that the selected row
/// shows. The window is as tall as the whole list, so that filtering does not make it jump.
fn filtered_window<'a>(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    list: &ListFilter,
    f: Filtered,
    rows: impl Iterator<Item = (String, String, &'a [usize])>,
) {
    let theme = app.theme();
    let inner = window(
        frame,
        app,
        crate::app::layout::list_window(area, list.len()),
        f.title,
        f.hint,
    );
    if inner.height < 2 {
        return;
    }
    let width = inner.width as usize;
    let line = |i: u16| Rect {
        y: inner.y + i,
        height: 1,
        ..inner
    };
    frame.render_widget(
        Paragraph::new(filter_header(
            theme,
            list,
            &format!(" · current: {}", f.current),
        )),
        line(0),
    );
    let height = (inner.height - 1) as usize;
    if list.shown_len() == 0 {
        frame.render_widget(
            Paragraph::new(Span::styled(fit(f.none, width), muted(theme))),
            line(1),
        );
        return;
    }
    let first = list.selected.saturating_sub(height.saturating_sub(1));
    let label_width = f.label_width.min(width / 2).max(3);
    for (i, (label, detail, marks)) in rows.enumerate().skip(first).take(height) {
        let style = choice(theme, i == list.selected);
        let label = fit(&label, label_width - 2);
        let used = label.chars().count();
        let mut spans = marked(&label, marks, style, theme);
        let rest = fit(&detail, width.saturating_sub(label_width));
        spans.push(Span::styled(
            format!(
                "{:pad$}{rest:<w$}",
                "",
                pad = label_width - used,
                w = width.saturating_sub(label_width)
            ),
            style,
        ));
        frame.render_widget(
            Paragraph::new(Line::from(spans)),
            line((i - first + 1) as u16),
        );
    }
}
