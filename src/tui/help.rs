//! The help overlay (F1): every key, read from the keymap itself, and the theme picker.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::app::App;

use super::keymap::{GLOBAL, PANE_KEYS};
use super::overlay::centered;
use super::panes::{block, muted};
use super::text::fit;

/// Width of the key column.
const KEYS: usize = 24;

pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let theme = app.theme();
    let key_style = Style::default()
        .fg(theme.ui.accent)
        .add_modifier(Modifier::BOLD);
    let text = Style::default().fg(theme.ui.text);
    let heading = Style::default()
        .fg(theme.ui.title)
        .add_modifier(Modifier::BOLD);
    let help_w = width.saturating_sub(KEYS);
    let mut out = Vec::new();
    let mut themes = vec![Span::styled(format!("{:<KEYS$}", "Theme  ←/→"), key_style)];
    for name in app.themes.names() {
        if name == app.theme {
            themes.push(Span::styled(
                format!("‹{name}›"),
                Style::default()
                    .fg(theme.ui.selection_fg)
                    .bg(theme.ui.selection_bg),
            ));
        } else {
            themes.push(Span::styled(name, text));
        }
        themes.push(Span::raw(" "));
    }
    out.push(Line::from(themes));
    out.push(Line::from(""));
    out.push(Line::from(Span::styled("Everywhere", heading)));
    for b in GLOBAL {
        out.push(Line::from(vec![
            Span::styled(format!("{:<KEYS$}", b.keys), key_style),
            Span::styled(fit(b.help, help_w), text),
        ]));
    }
    out.push(Line::from(""));
    out.push(Line::from(Span::styled("In a pane", heading)));
    for (pane, keys, help) in PANE_KEYS {
        out.push(Line::from(vec![
            Span::styled(
                format!("{:<KEYS$}", fit(&format!("{pane}  {keys}"), KEYS - 1)),
                key_style,
            ),
            Span::styled(fit(help, help_w), text),
        ]));
    }
    out.push(Line::from(""));
    out.push(Line::from(Span::styled(
        fit("Esc or F1 closes", width),
        muted(theme),
    )));
    out
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let r = centered(area, 86, 34);
    frame.render_widget(Clear, r);
    let b = block("Help", true, theme).style(Style::default().bg(theme.ui.overlay_bg));
    let inner = b.inner(r);
    frame.render_widget(b, r);
    let all = lines(app, inner.width as usize);
    let more = all.len() > inner.height as usize;
    let shown: Vec<Line<'static>> = all.into_iter().take(inner.height as usize).collect();
    frame.render_widget(Paragraph::new(shown), inner);
    if more && inner.height > 0 {
        let last = Rect {
            y: inner.y + inner.height - 1,
            height: 1,
            ..inner
        };
        frame.render_widget(
            Paragraph::new(Span::styled(
                fit(
                    "… (a taller terminal shows every key)",
                    inner.width as usize,
                ),
                muted(theme),
            ))
            .style(Style::default().bg(theme.ui.overlay_bg)),
            last,
        );
    }
}
