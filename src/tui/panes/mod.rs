//! One file per pane. Each draws from the state it is given and nothing else.

pub mod compare;
pub mod parts;
pub mod prompt;
pub mod raw;
pub mod status;
pub mod too_small;
pub mod tool_choice;
pub mod tools;
pub mod verify;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType};

use crate::app::fuzzy::ListFilter;
use crate::app::theme::Theme;

/// The frame of a pane: its exact title, highlighted when it has the focus.
pub fn block(title: &str, focused: bool, theme: &Theme) -> Block<'static> {
    let (border, title_colour) = if focused {
        (theme.ui.border_focused, theme.ui.title_focused)
    } else {
        (theme.ui.border, theme.ui.title)
    };
    let mut title_style = Style::default().fg(title_colour);
    if focused {
        title_style = title_style.add_modifier(Modifier::BOLD);
    }
    Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(Style::default().fg(border))
        .title(Line::from(Span::styled(format!(" {title} "), title_style)))
}

/// A short note on the right of a pane's top border.
pub fn note(text: String, style: Style) -> Line<'static> {
    Line::from(Span::styled(format!(" {text} "), style)).right_aligned()
}

/// The chosen item of a list or a row of choices: selection colours, bold.
pub fn selected(theme: &Theme) -> Style {
    Style::default()
        .fg(theme.ui.selection_fg)
        .bg(theme.ui.selection_bg)
        .add_modifier(ratatui::style::Modifier::BOLD)
}

/// An item of a list or a row of choices: the chosen one selected, the others plain text.
pub fn choice(theme: &Theme, chosen: bool) -> Style {
    if chosen {
        selected(theme)
    } else {
        Style::default().fg(theme.ui.text)
    }
}

/// `text` in `style`, the characters at `marks` (a filter's matched letters) marked: the
/// accent colour, bold and underlined, on the row's own background.
pub fn marked(text: &str, marks: &[usize], style: Style, theme: &Theme) -> Vec<Span<'static>> {
    if marks.is_empty() {
        return vec![Span::styled(text.to_string(), style)];
    }
    let mark = style
        .fg(theme.ui.accent)
        .add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
    let mut out: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_marked = false;
    for (k, c) in text.chars().enumerate() {
        let m = marks.contains(&k);
        if m != run_marked && !run.is_empty() {
            out.push(Span::styled(
                std::mem::take(&mut run),
                if run_marked { mark } else { style },
            ));
        }
        run_marked = m;
        run.push(c);
    }
    if !run.is_empty() {
        out.push(Span::styled(run, if run_marked { mark } else { style }));
    }
    out
}

/// A filtered list's header: `/query▏` (the bar while it is typed), how many rows of how many
/// it leaves, then `extra`.
pub fn filter_header(theme: &Theme, list: &ListFilter, extra: &str) -> Line<'static> {
    let accent = Style::default().fg(theme.ui.accent);
    Line::from(vec![
        Span::styled(
            format!("/{}", list.query),
            accent.add_modifier(Modifier::BOLD),
        ),
        Span::styled(if list.typing { "▏" } else { "" }, accent),
        Span::styled(format!("  {}{extra}", list.status()), muted(theme)),
    ])
}

/// Muted text, for hints and empty panes.
pub fn muted(theme: &Theme) -> Style {
    Style::default().fg(theme.ui.muted)
}
