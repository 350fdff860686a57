//! The Tool choice pane: the four modes, and for a forced tool which one, drawn as one row of
//! choices with the current one marked; below them, the pre-send check of the choice against
//! the current tools, so a request that would be refused says so before anything is sent.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, Focus, choice};
use crate::tui::text::fit;

use super::{block, muted, note};

/// The pane's lines at `width`: the check, if it fails, and the modes in the rows
/// [`choice::rows`] packs them into (the layout sized the pane by the same rows).
pub fn lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let theme = app.theme();
    let width = width.max(1) as usize;
    let gap = choice::gap(width);
    // The pre-send check comes first: when it fails, it is what matters (a forced tool that is
    // no longer among the tools is not among the modes either; the check names it).
    let mut out: Vec<Line<'static>> = Vec::new();
    if let Some(problem) = choice::problem(&app.choice, app.offered()) {
        out.push(Line::from(Span::styled(
            fit(&format!("✗ {problem}"), width),
            Style::default().fg(theme.ui.error),
        )));
    }
    for row in choice::rows(app.offered(), width) {
        let mut spans: Vec<Span<'static>> = Vec::new();
        for shown in row {
            if !spans.is_empty() {
                spans.push(Span::raw(gap));
            }
            if shown.force {
                spans.push(Span::styled(choice::FORCE, muted(theme)));
            }
            let chosen = shown.mode == app.choice;
            let marker = if chosen { "●" } else { "○" };
            spans.push(Span::styled(
                format!("{marker} {}", shown.label),
                super::choice(theme, chosen),
            ));
        }
        out.push(Line::from(spans));
    }
    out
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let focused = app.focus == Focus::ToolChoice;
    let mut b = block("Tool choice", focused, theme);
    let hint = if focused { "←/→" } else { "Ctrl+T" };
    b = b.title(note(hint.into(), muted(theme)));
    let inner = b.inner(area);
    frame.render_widget(b, area);
    frame.render_widget(Paragraph::new(lines(app, inner.width)), inner);
}
