//! The small windows drawn over the panes: the provider, model and settings picker, the file
//! path prompt, a question before something is lost, and the editor of a message. (The help,
//! the session windows and the long-text windows have files of their own.)

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui_textarea::TextArea;

use toolscope_core::provider::ReasoningEffort;

use crate::app::picker::{ModelList, PickerField};
use crate::app::protocol_picker::ProtocolPicker;
use crate::app::text_log::wrap;
use crate::app::{App, Confirm, FilePurpose, Picker};

use super::panes::{block, choice, muted};
use super::text::fit;

/// A `width`×`height` rectangle in the middle of `area` (smaller when `area` is).
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(2));
    let h = height.min(area.height.saturating_sub(2));
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// A list window over the panes at `r`: cleared, framed with `title` and the keys `hint` at the
/// bottom. Gives the area inside the frame.
pub fn window(frame: &mut Frame<'_>, app: &App, r: Rect, title: &str, hint: &str) -> Rect {
    let theme = app.theme();
    frame.render_widget(Clear, r);
    let b = block(title, true, theme)
        .style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg))
        .title_bottom(Line::from(Span::styled(hint.to_string(), muted(theme))));
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
    frame.render_widget(Clear, r);
    let b = block("Provider, model and settings", true, theme)
        .style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg));
    let inner = b.inner(r);
    frame.render_widget(b, r);
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
            let shown = p.shown_models();
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
            for (i, name) in shown.iter().enumerate().skip(top).take(room) {
                let chosen = p.model_choice == Some(i);
                let marker = if chosen { "▸ " } else { "  " };
                lines.push(Line::from(Span::styled(
                    fit(&format!("{marker}{name}"), list.width as usize),
                    choice(theme, chosen),
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
    frame.render_widget(Clear, r);
    let b = block(&c.question, true, theme)
        .style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg));
    let inner = b.inner(r);
    frame.render_widget(b, r);
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
    frame.render_widget(Clear, r);
    let b = block("Add an MCP server", true, theme)
        .style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg));
    let inner = b.inner(r);
    frame.render_widget(b, r);
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

/// The protocol picker (Ctrl+L): the filter as typed, then the entries it leaves, scrolled so the
/// selected one shows.
pub fn protocols(frame: &mut Frame<'_>, area: Rect, app: &App, p: &ProtocolPicker) {
    let theme = app.theme();
    let entries = p.entries();
    let inner = window(
        frame,
        app,
        centered(area, 84, entries.len().max(1) as u16 + 4),
        "Protocol",
        " type to filter · ↑/↓ choose · Enter use · Esc close ",
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
        Paragraph::new(Line::from(vec![
            Span::styled("filter ", muted(theme)),
            Span::styled(format!("{}▏", p.filter), Style::default().fg(theme.ui.text)),
            Span::styled(format!("  current: {}", app.protocol_name()), muted(theme)),
        ])),
        line(0),
    );
    let rows = (inner.height - 1) as usize;
    if entries.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                fit("no protocol matches the filter", width),
                muted(theme),
            )),
            line(1),
        );
        return;
    }
    let first = p.selected.saturating_sub(rows.saturating_sub(1));
    let name_width = entries.iter().map(|e| e.name.len()).max().unwrap_or(6) + 2;
    for (i, e) in entries.iter().enumerate().skip(first).take(rows) {
        let text = fit(&format!("{:<name_width$}{}", e.name, e.families), width);
        let style = choice(theme, i == p.selected);
        frame.render_widget(
            Paragraph::new(Span::styled(format!("{text:<width$}"), style)),
            line((i - first + 1) as u16),
        );
    }
}

/// The tool-choice modes (`/` in the Tool choice pane): the filter as typed, then the modes it
/// leaves, best first, their label's matched letters marked.
pub fn choices(
    frame: &mut Frame<'_>,
    area: Rect,
    app: &App,
    p: &crate::app::choice_picker::ChoicePicker,
) {
    let theme = app.theme();
    let inner = window(
        frame,
        app,
        centered(area, 84, p.len().max(1) as u16 + 4),
        "Tool choice",
        " type to filter · ↑/↓ choose · Enter use · Esc clear, close ",
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
        Paragraph::new(Line::from(vec![
            Span::styled("/", Style::default().fg(theme.ui.accent)),
            Span::styled(format!("{}▏", p.filter), Style::default().fg(theme.ui.text)),
            Span::styled(
                format!(
                    "  {} of {} · current: {}",
                    p.shown_len(),
                    p.len(),
                    app.choice.label()
                ),
                muted(theme),
            ),
        ])),
        line(0),
    );
    let rows = (inner.height - 1) as usize;
    if p.shown_len() == 0 {
        frame.render_widget(
            Paragraph::new(Span::styled(
                fit("no tool choice matches the filter", width),
                muted(theme),
            )),
            line(1),
        );
        return;
    }
    let first = p.selected.saturating_sub(rows.saturating_sub(1));
    let label_width = p
        .shown()
        .map(|(e, _)| e.label.chars().count())
        .max()
        .unwrap_or(6)
        .min(width / 2)
        + 2;
    for (i, (e, marks)) in p.shown().enumerate().skip(first).take(rows) {
        let style = choice(theme, i == p.selected);
        let mark = style
            .fg(theme.ui.accent)
            .add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
        let label = fit(&e.label, label_width - 2);
        let mut spans: Vec<Span> = label
            .chars()
            .enumerate()
            .map(|(k, c)| {
                Span::styled(c.to_string(), if marks.contains(&k) { mark } else { style })
            })
            .collect();
        let used = label.chars().count();
        let rest = fit(&e.detail, width.saturating_sub(label_width));
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
