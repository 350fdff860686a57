//! The Raw pane: the model's output exactly as it streams, with the spans that became tool
//! calls highlighted as they are recognised and, in native mode, each call's arguments and the
//! reasoning set apart under a label; F2 shows the wire events instead. `/` searches it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::search::SearchPane;
use crate::app::text_log::Scroll;
use crate::app::theme::Theme;
use crate::app::{App, Focus, RawMode, RunView};
use crate::tui::text::{Query, TextStyles, log_lines};

use super::{block, muted, note};

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let run = &app.run;
    let mut b = block("Raw", app.focus == Focus::Raw, theme);
    b = b.title(note(header(run, app.raw_mode), muted(theme)));
    let switch = match app.raw_mode {
        RawMode::Output => " F2 wire ",
        RawMode::Wire => " F2 output ",
    };
    let mut bottom = vec![Span::styled(switch, muted(theme))];
    if let Scroll::At { segment, .. } = run.scroll(app.raw_mode) {
        let lines = run.log(app.raw_mode).segment_count();
        bottom.push(Span::styled(
            format!(" line {} of {lines} · End follows ", segment + 1),
            Style::default().fg(theme.ui.warning),
        ));
    }
    let search = app.search.as_ref().filter(|s| s.pane == SearchPane::Raw);
    if let Some(s) = search {
        bottom.push(Span::styled(
            format!(" {} ", s.status()),
            Style::default().fg(theme.ui.accent),
        ));
    } else if app.focus == Focus::Raw {
        bottom.push(Span::styled(" / search ", muted(theme)));
    }
    b = b.title_bottom(Line::from(bottom));
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let query = search.and_then(|s| s.marked());
    body(frame, inner, run, app.raw_mode, theme, EMPTY_HINT, query);
}

const EMPTY_HINT: &str = "Ctrl+R sends the request; the output streams here.";

/// The text of a run in `area`: the output or the wire events, scrolled as the view says.
pub fn body(
    frame: &mut Frame<'_>,
    area: Rect,
    run: &RunView,
    mode: RawMode,
    theme: &Theme,
    empty_hint: &str,
    query: Query<'_>,
) {
    let log = run.log(mode);
    let failure = match &run.record.state {
        crate::app::RunState::Failed { category, message } => {
            Some(format!("✗ {category}: {message}"))
        }
        crate::app::RunState::NotSent { message } => Some(format!("✗ not sent: {message}")),
        _ => None,
    };
    if let (true, Some(text)) = (log.is_empty(), failure) {
        // Nothing streamed: what went wrong is all there is to show.
        frame.render_widget(
            Paragraph::new(Span::styled(text, Style::default().fg(theme.ui.error)))
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    if log.is_empty() {
        let hint = match (mode, &run.record.state) {
            (_, crate::app::RunState::Streaming) => "waiting for the first bytes…",
            (RawMode::Wire, _) if run.record.request.is_some() => "no wire events",
            _ => empty_hint,
        };
        frame.render_widget(
            Paragraph::new(Span::styled(hint.to_string(), muted(theme)))
                .wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    let (styles, highlights) = match mode {
        RawMode::Output => (TextStyles::output(theme), &run.shown.highlights[..]),
        RawMode::Wire => (TextStyles::wire(theme), &[][..]),
    };
    let lines = log_lines(
        log,
        run.scroll(mode),
        (area.width as usize, area.height as usize),
        highlights,
        &styles,
        query,
    );
    frame.render_widget(Paragraph::new(lines), area);
}

/// `output · 1.2 KB`, `wire · 34 events`.
fn header(run: &RunView, mode: RawMode) -> String {
    match mode {
        RawMode::Output => format!("output · {}", bytes(run.shown.output.len())),
        RawMode::Wire => {
            let n = run.record.wire.len();
            format!("wire · {n} event{}", if n == 1 { "" } else { "s" })
        }
    }
}

fn bytes(n: usize) -> String {
    match n {
        n if n < 1024 => format!("{n} B"),
        n if n < 1024 * 1024 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{:.1} MB", n as f64 / (1024.0 * 1024.0)),
    }
}
