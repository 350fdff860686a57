//! The session windows: the picker (Ctrl+O) and the offer to restore an interrupted run.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::app::session::SessionEntry;
use crate::app::{App, Restore, SessionPicker};

use super::overlay::{centered, window};
use super::panes::{block, filter_header, marked, muted, selected};
use super::text::fit;

/// The headings of the picker's columns: file, date, provider, model, mode, protocol.
const HEADINGS: [&str; 6] = ["file", "recorded", "provider", "model", "mode", "protocol"];

/// The widest a column gets, however long its longest cell.
const MOST: [usize; 6] = [40, 16, 16, 32, 24, 20];

/// The picker's column widths for `width` cells, from the widest cell of each column (`natural`,
/// headings included): every column whole when they fit; else narrowed until the row fits (a
/// cut cell ends in `…`), the date left out when narrowing is not enough.
fn widths(width: usize, natural: [usize; 6]) -> [usize; 6] {
    let whole: [usize; 6] = std::array::from_fn(|i| natural[i].max(HEADINGS[i].len()).min(MOST[i]));
    let total = |w: &[usize; 6]| w.iter().filter(|&&c| c > 0).map(|c| c + 1).sum::<usize>();
    // The file name tells sessions apart: the other columns give way first, the widest of them
    // a cell at a time, down to 8; when that is not enough, the date goes (and the others get
    // its room back); then the file column gives way, down to 12.
    let narrowed = |mut w: [usize; 6], file_too: bool| {
        while total(&w) > width {
            match (2..6).filter(|&i| w[i] > 8).max_by_key(|&i| w[i]) {
                Some(i) => w[i] -= 1,
                None if file_too && w[0] > 12 => w[0] -= 1,
                None => break,
            }
        }
        w
    };
    let with_date = narrowed(whole, false);
    if total(&with_date) <= width {
        return with_date;
    }
    let mut without = whole;
    without[1] = 0;
    narrowed(without, true)
}

/// A session's cells: file name, date, provider, model, mode, protocol (only the file name for a
/// file that cannot be read).
fn cells_of(e: &SessionEntry) -> [String; 6] {
    let file = e
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match &e.summary {
        Ok(s) => {
            let date = s.created_at.replace('T', " ");
            let date = date.trim_end_matches('Z');
            let date = date.get(..16).unwrap_or(date).to_string();
            let mode = s.tool_choice.clone().unwrap_or_else(|| "auto".into());
            let protocol = s.protocol.clone().unwrap_or_else(|| "native".into());
            [
                file,
                date,
                s.provider.clone(),
                s.model.clone(),
                mode,
                protocol,
            ]
        }
        Err(_) => [
            file,
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
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
    // As tall as the whole list, so that filtering does not make the window jump.
    let rows = p.entries.as_ref().map_or(1, |e| e.len().max(1)) as u16;
    let inner = window(
        frame,
        app,
        crate::app::layout::sessions_window(area, rows as usize),
        "Open a session",
        if p.list.active() {
            " ↑/↓ choose · Enter open · Esc clear the filter "
        } else {
            " ↑/↓ choose · / filter · Enter open · Esc close "
        },
    );
    if inner.height < 3 {
        return;
    }
    let width = inner.width as usize;
    let mut natural = [0usize; 6];
    for e in p.entries.iter().flatten() {
        let cells = cells_of(e);
        for (n, cell) in natural.iter_mut().zip(&cells) {
            *n = (*n).max(cell.chars().count());
        }
    }
    let cols = widths(width, natural);
    let line = |i: u16| Rect {
        y: inner.y + i,
        height: 1,
        ..inner
    };
    let dirs: Vec<String> = p.dirs.iter().map(|d| d.display().to_string()).collect();
    let header = if p.list.active() {
        filter_header(theme, &p.list, " sessions")
    } else {
        Line::from(Span::styled(
            fit(&format!("from {}", dirs.join(" and ")), width),
            muted(theme),
        ))
    };
    frame.render_widget(Paragraph::new(header), line(0));
    let heading = Style::default()
        .fg(theme.ui.title)
        .add_modifier(Modifier::BOLD);
    frame.render_widget(
        Paragraph::new(Span::styled(fit(&row_text(HEADINGS, cols), width), heading)),
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
    if p.shown_len() == 0 {
        frame.render_widget(
            Paragraph::new(Span::styled(
                format!("no session matches /{}", p.list.query),
                muted(theme),
            )),
            line(2),
        );
        return;
    }
    let top = p.list.selected.saturating_sub(list_h.saturating_sub(1));
    for (i, (e, marks)) in p.shown().enumerate().skip(top).take(list_h) {
        let cells = cells_of(e);
        let file = &cells[0];
        let (text, mut style) = match &e.summary {
            Ok(_) => (
                row_text(std::array::from_fn(|i| cells[i].as_str()), cols),
                Style::default().fg(theme.ui.text),
            ),
            Err(problem) => (
                format!("{:<w$} ✗ {problem}", fit(file, cols[0]), w = cols[0]),
                Style::default().fg(theme.ui.error),
            ),
        };
        if i == p.list.selected {
            style = selected(theme);
        }
        let text = format!("{:<width$}", fit(&text, width));
        // The filter's matched letters in the file name are marked (a cut name marks what
        // shows of it).
        let shown_name = fit(file, cols[0]).chars().count();
        let marks: Vec<usize> = marks.iter().copied().filter(|&k| k < shown_name).collect();
        let spans = marked(&text, &marks, style, theme);
        frame.render_widget(
            Paragraph::new(Line::from(spans)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30: columns were cut (a model name at 14 cells) with room to spare.
    #[test]
    fn columns_are_as_wide_as_their_cells_when_there_is_room() {
        let natural = [27, 16, 16, 27, 15, 13];
        let total: usize = natural.iter().map(|w| w + 1).sum();
        assert_eq!(widths(total, natural), natural, "every cell whole");
        // Narrower: the others give way before the file name, and the date stays while it can.
        let w = widths(100, natural);
        assert_eq!(w[0], 27);
        assert!(w[1] > 0);
        assert!(w.iter().map(|c| c + 1).sum::<usize>() <= 100, "{w:?}");
        // At 76 cells the date goes, and the file name stays whole.
        let w = widths(76, natural);
        assert_eq!((w[0], w[1]), (27, 0), "{w:?}");
        assert!(w.iter().filter(|&&c| c > 0).map(|c| c + 1).sum::<usize>() <= 76);
    }
}
