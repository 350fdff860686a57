//! The verify view (Alt+S): what the battery runs on and how far it is, the answers as they
//! come while it runs, then the scorecard `toolscope verify` prints, and the failed answers to
//! open as sessions.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::App;
use crate::app::layout::{VerifyAreas, inner};
use crate::app::verify::Verify;
use crate::tui::text::fit;
use crate::verify::report::{Target, pct};

use super::{block, choice, muted, note};

pub fn draw(frame: &mut Frame<'_>, areas: &VerifyAreas, app: &App) {
    let Some(v) = &app.verify else {
        return;
    };
    header(frame, areas.header, app, v);
    if v.is_running() {
        progress(frame, areas.body, app, v);
    } else {
        scorecard(frame, areas.body, app, v);
        failures(frame, areas.failures, app, v);
    }
}

fn header(frame: &mut Frame<'_>, area: Rect, app: &App, v: &Verify) {
    let theme = app.theme();
    let width = area.width as usize;
    let title = format!(
        " Verify · {} · suite {} · each scenario streamed and whole",
        Target::of(&v.target).label(),
        v.suite.name
    );
    let done = v.answers.len();
    let second = if v.is_running() {
        let bar = 20;
        let filled = done * bar / v.total.max(1);
        let last = v
            .answers
            .last()
            .map(|a| format!(" · {}", crate::verify::failure::label(&v.suite, a)))
            .unwrap_or_default();
        let (scenarios, of) = v.scenarios_done();
        Line::from(vec![
            Span::styled(
                format!(
                    " [{}{}] {done}/{} requests · {scenarios}/{of} scenarios",
                    "█".repeat(filled),
                    "·".repeat(bar - filled),
                    v.total
                ),
                Style::default().fg(theme.ui.accent),
            ),
            Span::styled(
                format!("{last} · Esc stops · Alt+S hides, the battery goes on"),
                muted(theme),
            ),
        ])
    } else {
        let complete = matches!(v.ending, Some(crate::verify::battery::Ending::Complete));
        let score = v.report.as_ref().map_or(String::new(), |r| {
            format!(
                " · score {} ({}/{})",
                pct(r.overall.score),
                r.overall.passed,
                r.overall.answers
            )
        });
        let colour = if complete && v.failures.is_empty() {
            theme.ui.success
        } else if complete {
            theme.ui.warning
        } else {
            theme.ui.error
        };
        Line::from(vec![
            Span::styled(
                format!(" {}{score}", v.ending_text().unwrap_or_default()),
                Style::default().fg(colour).add_modifier(Modifier::BOLD),
            ),
            Span::styled(" · r again · Esc closes", muted(theme)),
        ])
    };
    let second_text: String = second.spans.iter().map(|s| s.content.as_ref()).collect();
    let second = if second_text.chars().count() > width {
        // Cut as one piece, keeping the first span's colour.
        Line::from(Span::styled(
            fit(&second_text, width),
            second.spans[0].style,
        ))
    } else {
        second
    };
    let title_style = Style::default()
        .fg(theme.ui.title)
        .add_modifier(Modifier::BOLD);
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(Span::styled(fit(&title, width), title_style)),
            second,
        ]),
        area,
    );
}

/// While it runs: the answers so far, the newest at the bottom.
fn progress(frame: &mut Frame<'_>, area: Rect, app: &App, v: &Verify) {
    let theme = app.theme();
    let failed = v.quick.iter().filter(|j| !j.passed()).count();
    let counts = format!("{} answered · {failed} failed a check", v.answers.len());
    frame.render_widget(
        block("answers so far", false, theme).title(note(counts, muted(theme))),
        area,
    );
    let inside = inner(area);
    let rows = inside.height as usize;
    let width = inside.width as usize;
    let first = v.answers.len().saturating_sub(rows);
    let lines: Vec<Line> = if v.answers.is_empty() {
        vec![Line::from(Span::styled(
            "sending the first requests…",
            muted(theme),
        ))]
    } else {
        (first..v.answers.len())
            .map(|i| {
                let (ok, text) = v.progress_line(i);
                mark_line(app, ok, &text, width)
            })
            .collect()
    };
    frame.render_widget(Paragraph::new(lines), inside);
}

/// A line led by ✓ or ✗ in the colour of its verdict.
fn mark_line(app: &App, ok: bool, text: &str, width: usize) -> Line<'static> {
    let theme = app.theme();
    let (mark, colour) = if ok {
        ("✓ ", theme.ui.success)
    } else {
        ("✗ ", theme.ui.error)
    };
    Line::from(vec![
        Span::styled(mark, Style::default().fg(colour)),
        Span::raw(fit(text, width.saturating_sub(2))),
    ])
}

/// Once it ended: the scorecard, as the command line prints it, from the scrolled line.
fn scorecard(frame: &mut Frame<'_>, area: Rect, app: &App, v: &Verify) {
    let theme = app.theme();
    let inside = inner(area);
    let rows = inside.height as usize;
    let last = v.lines.len().saturating_sub(rows);
    let scroll = v.scroll.min(last);
    let where_ = if v.lines.len() > rows {
        format!(
            "lines {}–{} of {} · PgUp/PgDn",
            scroll + 1,
            (scroll + rows).min(v.lines.len()),
            v.lines.len()
        )
    } else {
        String::new()
    };
    let mut b = block("scorecard", false, theme);
    if !where_.is_empty() {
        b = b.title(note(where_, muted(theme)));
    }
    frame.render_widget(b, area);
    let width = inside.width as usize;
    let lines: Vec<Line> = v.lines[scroll..]
        .iter()
        .take(rows)
        .map(|l| {
            let style = if l.contains('✗') {
                Style::default().fg(theme.ui.error)
            } else {
                Style::default().fg(theme.ui.text)
            };
            Line::from(Span::styled(fit(l, width), style))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inside);
}

/// The failed answers, the chosen one highlighted: Enter opens it as a session.
fn failures(frame: &mut Frame<'_>, area: Rect, app: &App, v: &Verify) {
    if area.height == 0 || v.failures.is_empty() {
        return;
    }
    let theme = app.theme();
    frame.render_widget(
        block(
            &format!(
                "failed answers ({}) · ↑↓ Enter opens one as a session",
                v.failures.len()
            ),
            true,
            theme,
        ),
        area,
    );
    let inside = inner(area);
    let rows = (inside.height as usize).max(1);
    let width = inside.width as usize;
    let first = v.selected.saturating_sub(rows - 1);
    let lines: Vec<Line> = v
        .failures
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, f)| {
            let why = f.notes.first().map_or(String::new(), |n| format!(" — {n}"));
            let text = fit(&format!("✗ {}{why}", f.label), width);
            Line::from(Span::styled(
                format!("{text:<width$}"),
                choice(theme, i == v.selected),
            ))
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inside);
}
