//! The compare view: the same request under auto, required, none and the first tool forced,
//! four columns streaming side by side. Each column leads with its verdict (what that tool
//! choice made the model do), then its finish reason and times, its output and its parts.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Sparkline};

use crate::app::compare::{CompareKind, Heading, VerdictKind, verdict};
use crate::app::layout::{ColumnAreas, CompareAreas, compare_columns};
use crate::app::theme::Theme;
use crate::app::{App, RunView};
use crate::tui::text::fit;

use super::{block, muted, note, parts, raw};

pub fn draw(frame: &mut Frame<'_>, areas: &CompareAreas, app: &App) {
    let theme = app.theme();
    let Some(compare) = &app.compare else {
        return;
    };
    // The last message the compared request sends.
    let prompt = compare
        .columns
        .iter()
        .find_map(|c| c.record.request.as_ref())
        .and_then(|r| {
            r.messages.iter().rev().find_map(|m| match m {
                toolscope_core::provider::Message::User { content } => Some(content.clone()),
                toolscope_core::provider::Message::Tool { content, .. } => {
                    Some(format!("tool result: {content}"))
                }
                _ => None,
            })
        })
        .unwrap_or_default();
    let header = match (compare.kind, &app.opened) {
        (CompareKind::Resend, Some(o)) => format!(
            " Re-send · {} · the recorded answer beside a live one · {} · {} · “{}” · Ctrl+R again · Esc closes",
            o.title(),
            o.session.request.provider,
            o.session.request.model,
            prompt.replace('\n', " ")
        ),
        _ => format!(
            " Compare · one request, four tool choices · protocol {} · “{}” · Ctrl+R again · Esc closes",
            app.protocol_name(),
            prompt.replace('\n', " ")
        ),
    };
    // One column at a time: which, and how to see the others, first.
    let header =
        if crate::app::layout::compare_one_at_a_time(areas.header.width, compare.columns.len()) {
            format!(
                " {} of {} · ←/→ other columns ·{header}",
                compare.zoomed + 1,
                compare.columns.len()
            )
        } else {
            header
        };
    frame.render_widget(
        Paragraph::new(Span::styled(
            fit(&header, areas.header.width as usize),
            Style::default()
                .fg(theme.ui.title)
                .add_modifier(Modifier::BOLD),
        )),
        areas.header,
    );
    let insides = compare_columns(compare, &areas.columns);
    let end = shared_end(&compare.columns);
    for (i, (((area, inside), view), mode)) in areas
        .columns
        .iter()
        .zip(&insides)
        .zip(&compare.columns)
        .zip(&compare.titles)
        .enumerate()
    {
        if area.width == 0 {
            continue;
        }
        let mut b = block(mode, false, theme);
        // A narrow column keeps its title (the mode) and drops the counts.
        if area.width >= 40 {
            b = b.title(note(parts::counts(&view.record.parts), muted(theme)));
        }
        frame.render_widget(b, *area);
        let choice = compare.choices.get(i).cloned().flatten();
        column(frame, inside, view, choice.as_ref(), app, end);
    }
}

fn column(
    frame: &mut Frame<'_>,
    a: &ColumnAreas,
    view: &RunView,
    choice: Option<&toolscope_core::tool::ToolChoice>,
    app: &App,
    end: u64,
) {
    let theme = app.theme();
    let heading = Heading::of(view, choice, a.verdict.width.max(1) as usize);
    let colour = match verdict(view).kind {
        VerdictKind::Called => theme.parts.tool_call,
        VerdictKind::Text => theme.ui.accent,
        VerdictKind::Failed => theme.ui.error,
        VerdictKind::Waiting => theme.ui.muted,
    };
    let bold = Style::default().fg(colour).add_modifier(Modifier::BOLD);
    let rows = |area: ratatui::layout::Rect, rows: Vec<(Style, String)>| {
        Paragraph::new(
            cut_rows(rows, area)
                .into_iter()
                .map(|(style, row)| Line::from(Span::styled(row, style)))
                .collect::<Vec<_>>(),
        )
    };
    frame.render_widget(
        rows(
            a.verdict,
            heading.verdict.into_iter().map(|r| (bold, r)).collect(),
        ),
        a.verdict,
    );
    let judged = heading
        .judged
        .into_iter()
        .map(|(ok, r)| {
            let colour = if ok { theme.ui.success } else { theme.ui.error };
            (Style::default().fg(colour), r)
        })
        .collect();
    frame.render_widget(rows(a.judgement, judged), a.judgement);
    frame.render_widget(
        rows(
            a.stats,
            heading
                .stats
                .into_iter()
                .map(|r| (muted(theme), r))
                .collect(),
        ),
        a.stats,
    );
    strip(frame, a.timeline, view, theme, end);
    raw::body(frame, a.output, view, app.raw_mode, theme, "", None);
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            format!("{:─<w$}", "─ parts ", w = a.divider.width as usize),
            Style::default().fg(theme.ui.border),
        ))),
        a.divider,
    );
    parts::list(frame, a.parts, view, theme, false, None);
}

/// How long the longest of `views` took: the time scale compare columns share.
fn shared_end(views: &[RunView]) -> u64 {
    views
        .iter()
        .map(|v| v.record.timeline_end_ms())
        .max()
        .unwrap_or(1)
}

/// A compare column's timeline in two rows over `0..end` ms (the scale the columns share): the
/// output rate as a sparkline, then the first token (`▲`) and each call's span (`█`).
fn strip(frame: &mut Frame<'_>, area: Rect, view: &RunView, theme: &Theme, end: u64) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let width = area.width as usize;
    let end = end.max(1);
    // About two pieces a slice, each slice as wide as the cells it covers.
    let buckets = (view.record.timeline.pieces_ms.len() / 2).clamp(4, width.max(4));
    let slices = view.record.timeline.rate(end, buckets);
    let rate: Vec<u64> = (0..width)
        .map(|i| slices[i * buckets / width].1.round() as u64)
        .collect();
    frame.render_widget(
        Sparkline::default()
            .data(&rate)
            .style(Style::default().fg(theme.ui.accent)),
        Rect { height: 1, ..area },
    );
    if area.height < 2 {
        return;
    }
    let mut row: Vec<(char, Style)> = vec![(' ', muted(theme)); width];
    let cell = |t: u64| (((t as f64 / end as f64) * width as f64) as usize).min(width - 1);
    for c in &view.record.timeline.calls {
        let (a, b) = (cell(c.start_ms), cell(c.end_ms.unwrap_or(end)));
        for r in row.iter_mut().take(b + 1).skip(a) {
            *r = ('█', Style::default().fg(theme.parts.tool_call));
        }
    }
    if let Some(t) = view.record.first_output_ms {
        row[cell(t)] = (
            '▲',
            Style::default()
                .fg(theme.ui.warning)
                .add_modifier(Modifier::BOLD),
        );
    }
    let spans: Vec<Span> = row
        .into_iter()
        .map(|(c, s)| Span::styled(c.to_string(), s))
        .collect();
    frame.render_widget(
        Paragraph::new(Line::from(spans)),
        Rect {
            y: area.y + 1,
            height: 1,
            ..area
        },
    );
}

/// The rows that fit in `area`, shown as text (control characters as glyphs, never sent to
/// the terminal); when some do not fit, the last one shown ends in `…`.
fn cut_rows<T>(mut rows: Vec<(T, String)>, area: ratatui::layout::Rect) -> Vec<(T, String)> {
    let (w, h) = (area.width as usize, area.height as usize);
    let cut = rows.len() > h;
    rows.truncate(h);
    for (_, row) in rows.iter_mut() {
        *row = fit(row, w);
    }
    if cut && let Some((_, last)) = rows.last_mut() {
        *last = fit(&format!("{last} …"), w);
    }
    rows
}
