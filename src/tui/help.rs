//! The help overlay (F1): every key, read from the keymap itself, and the theme picker.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};

use crate::app::App;

use super::keymap::{GLOBAL, PANE_KEYS};
use super::overlay::centered;
use super::panes::{block, muted, note};
use super::text::fit;

/// Width of the key column.
const KEYS: usize = 32;

/// Rows of the help's text (the most it can be scrolled).
pub const ROWS: usize = GLOBAL.len() + PANE_KEYS.len() + 6;

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
    let mut out = Vec::with_capacity(ROWS);
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
            Span::styled(format!("{pane:<12}"), heading),
            Span::styled(format!("{:<w$}", keys, w = KEYS - 12), key_style),
            Span::styled(fit(help, help_w), text),
        ]));
    }
    out.push(Line::from(""));
    out
}

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, scroll: usize) {
    let theme = app.theme();
    let r = centered(area, 92, ROWS as u16 + 2);
    frame.render_widget(Clear, r);
    let mut b = block("Help", true, theme).style(Style::default().bg(theme.ui.overlay_bg));
    let all = lines(app, r.width.saturating_sub(2) as usize);
    let height = r.height.saturating_sub(2) as usize;
    let scroll = scroll.min(all.len().saturating_sub(height));
    let more = scroll + height < all.len();
    b = b.title_bottom(Line::from(Span::styled(
        if more || scroll > 0 {
            " ↑/↓ scroll · Esc closes "
        } else {
            " Esc closes "
        },
        muted(theme),
    )));
    if more {
        b = b.title(note("more below ↓".into(), muted(theme)));
    }
    let inner = b.inner(r);
    frame.render_widget(b, r);
    let shown: Vec<Line<'static>> = all.into_iter().skip(scroll).take(height).collect();
    frame.render_widget(Paragraph::new(shown), inner);
}
