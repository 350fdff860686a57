//! The Parts pane: every part as parsed, labelled by its type, deltas of one block growing on
//! one row, coercions and schema violations marked. Enter shows the selected part in full; `c`
//! copies it; `/` filters the rows by type or tool name (fuzzy); `?` searches their text.
//!
//! Only the visible rows are drawn, so a run of 100,000 parts draws as fast as one of ten.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::parts::{PartList, PartRow};
use crate::app::search::{self, SearchPane};
use crate::app::theme::Theme;
use crate::app::{App, Focus, RunView};
use crate::tui::View;
use crate::tui::text::{Query, fit, fit_tail};

use super::{block, muted, note};

/// Width of the type label column (`tool-input-delta` and a space).
const LABEL: usize = 17;

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, _view: &View) {
    let theme = app.theme();
    let run = &app.run;
    let focused = app.focus == Focus::Parts;
    let mut b = block("Parts", focused, theme);
    b = b.title(note(counts(&run.record.parts), muted(theme)));
    let search = app.search.as_ref().filter(|s| s.pane == SearchPane::Parts);
    let mut bottom: Vec<Span<'static>> = Vec::new();
    if let Some(i) = run.cursor.selected {
        bottom.push(Span::styled(
            format!(" row {} of {} ", i + 1, run.record.parts.rows.len()),
            Style::default().fg(theme.ui.warning),
        ));
    }
    let filter = &app.parts_filter;
    if filter.active() {
        let mut header = super::filter_header(theme, filter, " rows");
        header.spans.insert(0, Span::raw(" "));
        header.spans.push(Span::raw(" "));
        bottom.extend(header.spans);
    }
    if let Some(s) = search {
        bottom.push(Span::styled(
            format!(" {} ", s.status()),
            Style::default().fg(theme.ui.accent),
        ));
    } else if focused && !run.record.parts.is_empty() && !filter.typing {
        bottom.push(Span::styled(
            " Enter whole part · c copy · / filter · ? search · End follows ",
            muted(theme),
        ));
    }
    if !bottom.is_empty() {
        b = b.title_bottom(Line::from(bottom));
    }
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let query = search.and_then(|s| s.marked());
    if filter.active() {
        filtered(frame, inner, app, query);
    } else {
        list(frame, inner, run, theme, true, query);
    }
}

/// `12 parts · 1 call`.
pub fn counts(parts: &PartList) -> String {
    let n = parts.parts.len();
    let calls = parts.call_count();
    let mut s = format!("{n} part{}", if n == 1 { "" } else { "s" });
    if calls > 0 {
        s.push_str(&format!(
            " · {calls} call{}",
            if calls == 1 { "" } else { "s" }
        ));
    }
    s
}

/// The visible rows of a run's parts (`selectable`: mark the selected row), with the matches
/// of `query` marked.
pub fn list(
    frame: &mut Frame<'_>,
    area: Rect,
    run: &RunView,
    theme: &Theme,
    selectable: bool,
    query: Query<'_>,
) {
    if area.height == 0 {
        return;
    }
    let rows = &run.record.parts.rows;
    if rows.is_empty() {
        let hint = if run.is_running() {
            "waiting for parts…"
        } else {
            "parts appear here as they are parsed"
        };
        frame.render_widget(Paragraph::new(Span::styled(hint, muted(theme))), area);
        return;
    }
    let height = area.height as usize;
    let top = if selectable {
        run.parts_top(height)
    } else {
        rows.len().saturating_sub(height)
    };
    let width = area.width as usize;
    let lines: Vec<Line<'static>> = rows[top..(top + height).min(rows.len())]
        .iter()
        .enumerate()
        .map(|(k, row)| {
            let selected = selectable && run.cursor.selected == Some(top + k);
            row_line(row, width, theme, selected, query, &[])
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The rows the Parts filter leaves, in time order, their type's matched letters marked.
fn filtered(frame: &mut Frame<'_>, area: Rect, app: &App, query: Query<'_>) {
    let theme = app.theme();
    let f = &app.parts_filter;
    let rows = &app.run.record.parts.rows;
    if area.height == 0 {
        return;
    }
    if f.shown_len() == 0 {
        let text = format!("no part matches /{} (by type or tool name)", f.query);
        frame.render_widget(
            Paragraph::new(Span::styled(fit(&text, area.width as usize), muted(theme))),
            area,
        );
        return;
    }
    let height = area.height as usize;
    let top = f.selected.saturating_sub(height.saturating_sub(1));
    let width = area.width as usize;
    let lines: Vec<Line<'static>> = f
        .shown()
        .enumerate()
        .skip(top)
        .take(height)
        .filter_map(|(k, (i, marks))| {
            let selected = app.focus == Focus::Parts && k == f.selected;
            Some(row_line(rows.get(i)?, width, theme, selected, query, marks))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The colour of a part type.
pub fn label_colour(label: &str, theme: &Theme) -> ratatui::style::Color {
    let p = &theme.parts;
    match label {
        "tool-call" | "tool-result" => p.tool_call,
        "finish" => p.finish,
        "error" | "refusal" => p.error,
        "warning" => p.coerced,
        l if l.starts_with("tool-input") => p.tool_input,
        l if l.starts_with("reasoning") => p.reasoning,
        _ => p.text,
    }
}

/// `text` in `style`, with the matches of `query` in the match colours.
fn marked(text: String, style: Style, theme: &Theme, query: Query<'_>) -> Vec<Span<'static>> {
    let Some((q, fold)) = query else {
        return vec![Span::styled(text, style)];
    };
    let hits = search::matches_in(&text, q, fold, 0..text.len());
    if hits.is_empty() {
        return vec![Span::styled(text, style)];
    }
    let hit = Style::default()
        .fg(theme.ui.background)
        .bg(theme.ui.warning)
        .add_modifier(Modifier::BOLD);
    let mut out = Vec::new();
    let mut at = 0;
    for r in hits {
        if r.start > at {
            out.push(Span::styled(text[at..r.start].to_string(), style));
        }
        out.push(Span::styled(text[r.clone()].to_string(), hit));
        at = r.end;
    }
    if at < text.len() {
        out.push(Span::styled(text[at..].to_string(), style));
    }
    out
}

fn row_line(
    row: &PartRow,
    width: usize,
    theme: &Theme,
    selected: bool,
    query: Query<'_>,
    type_marks: &[usize],
) -> Line<'static> {
    let label_w = LABEL.min(width);
    let label = format!("{:<label_w$}", fit(row.label, label_w.saturating_sub(1)));
    let label_style = Style::default()
        .fg(label_colour(row.label, theme))
        .add_modifier(Modifier::BOLD);
    let mut spans = if type_marks.is_empty() {
        marked(label, label_style, theme, query)
    } else {
        // The filter's matched letters of the type.
        super::marked(&label, type_marks, label_style, theme)
    };
    let mut marks: Vec<Span<'static>> = Vec::new();
    if row.count > 1 {
        marks.push(Span::styled(format!(" ×{}", row.count), muted(theme)));
    }
    if row.marks.coerced > 0 {
        marks.push(Span::styled(
            format!(" ⚙{} coerced", row.marks.coerced),
            Style::default().fg(theme.parts.coerced),
        ));
    }
    if row.marks.invalid > 0 {
        marks.push(Span::styled(
            format!(" ✗{} invalid", row.marks.invalid),
            Style::default().fg(theme.parts.invalid),
        ));
    }
    if row.marks.warning {
        marks.push(Span::styled(
            " ⚠ lint",
            Style::default().fg(theme.parts.coerced),
        ));
    }
    let marks_w: usize = marks.iter().map(|s| s.width()).sum();
    let room = width.saturating_sub(label_w + marks_w);
    // A growing row shows its newest text; a finished one its beginning.
    let summary = if row.label.ends_with("-delta") {
        fit_tail(&row.summary, room)
    } else {
        fit(&row.summary, room)
    };
    let summary_style = if row.marks.error {
        Style::default().fg(theme.parts.error)
    } else if row.marks.warning {
        Style::default().fg(theme.parts.coerced)
    } else {
        Style::default().fg(theme.ui.text)
    };
    spans.extend(marked(summary, summary_style, theme, query));
    spans.extend(marks);
    if selected {
        // The selected row is drawn in the selection's own colours: a part's colour on the
        // selection background can be unreadable (light red on yellow in high contrast).
        // Search matches keep their mark.
        for s in &mut spans {
            if s.style.bg.is_none() {
                s.style = s.style.fg(theme.ui.selection_fg);
            }
        }
    }
    let mut line = Line::from(spans);
    if selected {
        line = line.style(
            Style::default()
                .bg(theme.ui.selection_bg)
                .add_modifier(Modifier::BOLD),
        );
    }
    line
}
