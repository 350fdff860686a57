//! The stream's timeline as a picture: the run's timeline window (`t` in the Raw and Parts
//! panes) with a chart of the output rate over time, the first token and each call's span
//! marked under it on the same time scale. (Each compare column has the same as a two-row
//! strip, drawn with the column.)

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Chart, Dataset, GraphType, Paragraph};

use crate::app::theme::Theme;
use crate::app::{App, RunView};

use super::overlay::{centered, window};
use super::panes::muted;
use super::text::fit;

/// `160 ms`, `1.25 s`.
fn ms(t: u64) -> String {
    if t < 1000 {
        format!("{t} ms")
    } else {
        format!("{:.2} s", t as f64 / 1000.0)
    }
}

/// The summary line: time to first token, the whole, the rate, the calls.
fn summary(view: &RunView) -> String {
    let r = &view.record;
    let mut out = vec![match r.first_output_ms {
        Some(t) => format!("first token {}", ms(t)),
        None => "no output yet".to_string(),
    }];
    out.push(format!("{} in all", ms(view.record.timeline_end_ms())));
    if let Some(tps) = view.tokens_per_second() {
        out.push(format!("{tps:.0} tok/s"));
    }
    let n = r.timeline.calls.len();
    out.push(format!("{n} call{}", if n == 1 { "" } else { "s" }));
    out.join(" · ")
}

/// A row of `width` cells with the cells of `from..=to` (in ms, over `0..end`) filled.
fn bar(from: u64, to: u64, end: u64, width: usize) -> String {
    let cell = |t: u64| ((t as f64 / end as f64) * width as f64) as usize;
    let (a, b) = (
        cell(from).min(width.saturating_sub(1)),
        cell(to).min(width.saturating_sub(1)),
    );
    (0..width)
        .map(|i| if i >= a && i <= b { '█' } else { '·' })
        .collect()
}

/// The timeline window of the main run.
pub fn window_for_run(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let view = &app.run;
    let calls = view.record.timeline.calls.len() as u16;
    let inner = window(
        frame,
        app,
        centered(area, 110, 16 + calls.min(8)),
        "Timeline of the last run",
        " Esc close ",
    );
    if inner.height < 4 || inner.width < 20 {
        return;
    }
    let rows = (calls + 1).min(inner.height / 3).max(1);
    let [head, chart, marks] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(rows),
    ])
    .areas(inner);
    frame.render_widget(
        Paragraph::new(Span::styled(
            fit(&summary(view), head.width as usize),
            Style::default().fg(theme.ui.text),
        )),
        head,
    );
    let end = view.record.timeline_end_ms();
    // The chart leaves a margin on the right for its legend and the marks' times; the marks
    // below share the chart's columns (its plot starts after the y labels, LABEL cells).
    let margin = 18.min(chart.width / 3);
    let plot_area = Rect {
        width: chart.width - margin,
        ..chart
    };
    rate_chart(frame, plot_area, view, theme, end);
    let legend = Rect {
        x: chart.x + plot_area.width + 1,
        width: margin.saturating_sub(1),
        height: chart.height.min(2),
        ..chart
    };
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(Span::styled(
                "⣀⣸ tokens/s",
                Style::default().fg(theme.ui.accent),
            )),
            Line::from(Span::styled(
                "│ first token",
                Style::default().fg(theme.ui.warning),
            )),
        ]),
        legend,
    );
    let width = (plot_area.width.saturating_sub(LABEL) as usize).max(1);
    let name_w = LABEL as usize;
    let mut lines = Vec::new();
    if let Some(t) = view.record.first_output_ms {
        let cell = (((t as f64 / end as f64) * width as f64) as usize).min(width - 1);
        let row: String = (0..width)
            .map(|i| if i == cell { '▲' } else { ' ' })
            .collect();
        lines.push(Line::from(vec![
            Span::styled(format!("{:<name_w$}", "first"), muted(theme)),
            Span::styled(row, Style::default().fg(theme.ui.warning)),
            Span::styled(format!(" {}", ms(t)), muted(theme)),
        ]));
    }
    for c in &view.record.timeline.calls {
        let to = c.end_ms.unwrap_or(end);
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<name_w$}", fit(&c.name, name_w)),
                Style::default().fg(theme.parts.tool_call),
            ),
            Span::styled(
                bar(c.start_ms, to, end, width),
                Style::default().fg(theme.parts.tool_call),
            ),
            Span::styled(
                format!(
                    " {}–{}{}",
                    ms(c.start_ms),
                    ms(to),
                    if c.end_ms.is_none() { "…" } else { "" }
                ),
                muted(theme),
            ),
        ]));
    }
    frame.render_widget(Paragraph::new(lines), marks);
}

/// Cells before the chart's plot: the y labels (five) and the axis.
const LABEL: u16 = 6;

/// The output rate (pieces per second; one piece is a token for most servers) over the run's
/// time, with the first token as a vertical line.
fn rate_chart(frame: &mut Frame<'_>, area: Rect, view: &RunView, theme: &Theme, end: u64) {
    // About two pieces a slice, so that the line shows a rate rather than single pieces.
    let room = (area.width.saturating_sub(LABEL) as usize / 2).max(4);
    let buckets = (view.record.timeline.pieces_ms.len() / 2).clamp(4, room);
    let rate = view.record.timeline.rate(end, buckets);
    let top = rate.iter().map(|(_, r)| *r).fold(1.0, f64::max);
    let end_s = end as f64 / 1000.0;
    let first: Vec<(f64, f64)> = view
        .record
        .first_output_ms
        .map(|t| {
            let x = t as f64 / 1000.0;
            vec![(x, 0.0), (x, top)]
        })
        .unwrap_or_default();
    let mut sets = vec![
        Dataset::default()
            .name("tokens/s")
            .marker(Marker::Braille)
            .graph_type(GraphType::Line)
            .style(Style::default().fg(theme.ui.accent))
            .data(&rate),
    ];
    if !first.is_empty() {
        sets.push(
            Dataset::default()
                .name("first token")
                .marker(Marker::Braille)
                .graph_type(GraphType::Line)
                .style(Style::default().fg(theme.ui.warning))
                .data(&first),
        );
    }
    let axis = Style::default().fg(theme.ui.muted);
    let label = |s: String| Span::styled(s, axis);
    let chart = Chart::new(sets)
        .hidden_legend_constraints((Constraint::Length(0), Constraint::Length(0)))
        .x_axis(Axis::default().style(axis).bounds([0.0, end_s]).labels([
            label("0 s".into()),
            label(format!("{:.2} s", end_s / 2.0)),
            label(format!("{end_s:.2} s")),
        ]))
        .y_axis(
            Axis::default()
                .style(axis)
                .bounds([0.0, top])
                .labels([label(format!("{:>5}", 0)), label(format!("{top:>5.0}"))]),
        )
        .style(Style::default().fg(theme.ui.text).bg(theme.ui.overlay_bg));
    frame.render_widget(chart, area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_fills_its_share_of_the_row() {
        assert_eq!(bar(0, 500, 1000, 10), "██████····");
        assert_eq!(bar(900, 1000, 1000, 10), "·········█");
        assert_eq!(ms(160), "160 ms");
        assert_eq!(ms(1250), "1.25 s");
    }
}
