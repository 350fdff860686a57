//! The session windows: the picker (Ctrl+O) and the offer to restore an interrupted run.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::app::{App, Restore, SessionPicker};

use super::overlay::{centered, window};
use super::panes::{block, muted, selected};
use super::text::fit;

/// Column widths of the picker after the file name: date, provider, model, mode, protocol.
const COLUMNS: [usize; 5] = [17, 10, 14, 16, 11];

/// The picker's column widths for `width` cells: the file column as wide as the longest name
/// (within limits); the date column only when there is room for it.
fn widths(width: usize, longest_name: usize) -> [usize; 6] {
    let file = longest_name.clamp(16, 40);
    let rest: usize = COLUMNS.iter().map(|w| w + 1).sum();
    let date = if file + 1 + rest <= width {
        COLUMNS[0]
    } else {
        0
    };
    [file, date, COLUMNS[1], COLUMNS[2], COLUMNS[3], COLUMNS[4]]
}

fn row_text(cells: [&str; 6], widths: [usize; 6]) -> String {
    let mut s = String::new();
    for (cell, w) in cells.iter().zip(widths) {
        if w > 0 {
            s.push_str(&format!("{:<w$} ", fit(cell, w)));
        }
    }
    s.trim_end().to_string()
}

pub fn picker(frame: &mut Frame<'_>, area: Rect, app: &App, p: &SessionPicker) {
    let theme = app.theme();
    let rows = p.entries.as_ref().map_or(1, |e| e.len().max(1)) as u16;
    let inner = window(
        frame,
        app,
        centered(area, 112, rows + 5),
        "Open a session",
        " ↑/↓ choose · Enter open · Esc close ",
    );
    if inner.height < 3 {
        return;
    }
    let width = inner.width as usize;
    let longest = p
        .entries
        .iter()
        .flatten()
        .filter_map(|e| e.path.file_name())
        .map(|n| n.to_string_lossy().chars().count())
        .max()
        .unwrap_or(0);
    let cols = widths(width, longest);
    let line = |i: u16| Rect {
        y: inner.y + i,
        height: 1,
        ..inner
    };
    let dirs: Vec<String> = p.dirs.iter().map(|d| d.display().to_string()).collect();
    frame.render_widget(
        Paragraph::new(Span::styled(
            fit(&format!("from {}", dirs.join(" and ")), width),
            muted(theme),
        )),
        line(0),
    );
    let heading = Style::default()
        .fg(theme.ui.title)
        .add_modifier(Modifier::BOLD);
    frame.render_widget(
        Paragraph::new(Span::styled(
            fit(
                &row_text(
                    ["file", "recorded", "provider", "model", "mode", "protocol"],
                    cols,
                ),
                width,
            ),
            heading,
        )),
        line(1),
    );
    let list_h = inner.height.saturating_sub(2) as usize;
    let Some(entries) = &p.entries else {
        frame.render_widget(
            Paragraph::new(Span::styled("reading the folders…", muted(theme))),
            line(2),
        );
        return;
    };
    if entries.is_empty() {
        frame.render_widget(
            Paragraph::new(Span::styled(
                "no sessions yet: Ctrl+S saves the current run",
                muted(theme),
            )),
            line(2),
        );
        return;
    }
    let top = p.selected.saturating_sub(list_h.saturating_sub(1));
    for (i, e) in entries.iter().enumerate().skip(top).take(list_h) {
        let file = e
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (text, mut style) = match &e.summary {
            Ok(s) => {
                let date = s.created_at.replace('T', " ");
                let date = date.trim_end_matches('Z');
                let date = date.get(..16).unwrap_or(date);
                let mode = s.tool_choice.clone().unwrap_or_else(|| "auto".into());
                let protocol = s.protocol.clone().unwrap_or_else(|| "native".into());
                (
                    row_text([&file, date, &s.provider, &s.model, &mode, &protocol], cols),
                    Style::default().fg(theme.ui.text),
                )
            }
            Err(problem) => (
                format!("{:<w$} ✗ {problem}", fit(&file, cols[0]), w = cols[0]),
                Style::default().fg(theme.ui.error),
            ),
        };
        if i == p.selected {
            style = selected(theme);
        }
        let text = format!("{:<width$}", fit(&text, width));
        frame.render_widget(
            Paragraph::new(Span::styled(text, style)),
            line(2 + (i - top) as u16),
        );
    }
}

pub fn restore(frame: &mut Frame<'_>, area: Rect, app: &App, r: &Restore) {
    let theme = app.theme();
    let w = centered(area, 72, 10);
    frame.render_widget(Clear, w);
    let b = block("Restore the interrupted run?", true, theme)
        .style(Style::default().bg(theme.ui.overlay_bg));
    let inner = b.inner(w);
    frame.render_widget(b, w);
    let s = r.session.summary();
    let calls = r
        .session
        .parts
        .iter()
        .filter(|p| matches!(p, toolscope_core::part::Part::ToolCall(_)))
        .count();
    let state = if r.ended {
        "it had ended"
    } else {
        "it stopped while streaming"
    };
    let text = Style::default().fg(theme.ui.text);
    let lines = vec![
        Line::from(Span::styled(
            "toolscope stopped before this run was saved:",
            text,
        )),
        Line::from(Span::styled(
            format!(
                "{} · {} · {} · {} wire events, {} parts, {calls} tool call(s); {state}.",
                s.provider,
                s.model,
                s.tool_choice.unwrap_or_else(|| "auto".into()),
                s.events,
                r.session.parts.len()
            ),
            Style::default()
                .fg(theme.ui.accent)
                .add_modifier(Modifier::BOLD),
        )),
        Line::from(""),
        Line::from(Span::styled(
            "Enter: restore it (saved as a session in the data folder)",
            text,
        )),
        Line::from(Span::styled(
            "d: discard it · Esc: decide at the next start",
            text,
        )),
        Line::from(Span::styled(
            format!("journal: {}", r.journal.display()),
            muted(theme),
        )),
    ];
    frame.render_widget(
        Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: true }),
        inner,
    );
}
