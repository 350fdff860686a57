//! The Prompt pane: the system prompt, the conversation (the answer streaming in at its end), a
//! field for the result of each tool call of the last answer, and the message being written.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::layout::{self, PromptAreas};
use crate::app::parts::call_summary;
use crate::app::theme::Theme;
use crate::app::transcript::{Row, RowKind, rows_of, window};
use crate::app::{App, Focus};
use crate::tui::text::fit;

use super::{block, muted, note};

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let mut b = block("Prompt", app.focus.in_prompt(), theme);
    let turns = app.prompt.history().len();
    let s = if turns == 1 { "" } else { "s" };
    // The longest note that leaves room for the title.
    let room = (area.width as usize).saturating_sub(12);
    let notes: Vec<String> = if app.focus == Focus::Transcript {
        vec![
            "↑↓ choose · Enter edit · d delete · r run from here · v read".into(),
            "Enter edit · d delete · r run".into(),
            "Enter · d · r".into(),
        ]
    } else if turns > 0 {
        vec![
            format!("{turns} message{s} · Ctrl+N new conversation"),
            format!("{turns} message{s}"),
        ]
    } else {
        Vec::new()
    };
    if let Some(n) = notes.into_iter().find(|n| n.chars().count() + 2 <= room) {
        b = b.title(note(n, muted(theme)));
    }
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let areas = layout::prompt_areas(inner, app);

    label(
        frame,
        areas.system,
        "system",
        app.focus == Focus::System,
        theme,
    );
    frame.render_widget(&app.prompt.system, PromptAreas::field(areas.system));

    transcript(frame, areas.transcript, app);

    for (i, (row, call)) in areas.results.iter().zip(&app.prompt.pending).enumerate() {
        let focused = app.focus == Focus::Result(i);
        label(frame, *row, "result", focused, theme);
        let field = PromptAreas::field(*row);
        let call_w = (field.width / 2).min(36);
        let text = fit(
            &format!("{} ⇒", call_summary(&call.tool_name, &call.input)),
            call_w as usize,
        );
        frame.render_widget(
            Paragraph::new(Span::styled(
                text,
                Style::default().fg(theme.parts.tool_call),
            )),
            Rect {
                width: call_w,
                ..field
            },
        );
        if let Some(editor) = app.prompt.results.get(i) {
            frame.render_widget(editor, crate::app::layout::result_editor(*row));
        }
    }

    label(
        frame,
        areas.composer,
        "you ›",
        app.focus == Focus::Composer,
        theme,
    );
    frame.render_widget(&app.prompt.composer, PromptAreas::field(areas.composer));
}

fn label(frame: &mut Frame<'_>, row: Rect, text: &str, focused: bool, theme: &Theme) {
    if row.height == 0 {
        return;
    }
    let style = if focused {
        Style::default()
            .fg(theme.ui.accent)
            .add_modifier(Modifier::BOLD)
    } else {
        muted(theme)
    };
    let area = Rect {
        width: layout::PROMPT_LABEL.min(row.width),
        height: 1,
        ..row
    };
    frame.render_widget(Paragraph::new(Span::styled(text.to_string(), style)), area);
}

/// The conversation, its last rows at the bottom of the area (the selected message kept in
/// view), with the answer streaming in below it and, when the last turn got no answer, why.
///
/// The conversation's rows come from the app's [`Transcript`](crate::app::transcript), made
/// once per change of the conversation or the width; a frame styles only the rows it shows.
fn transcript(frame: &mut Frame<'_>, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = app.theme();
    let field_w = PromptAreas::field(area).width.max(1) as usize;
    let history = app.prompt.history();
    let conversation = app.prompt.transcript(field_w);
    let line = |row: Row<'_>| {
        let style = match row.kind {
            RowKind::Text => Style::default().fg(theme.ui.text),
            RowKind::Call => Style::default().fg(theme.parts.tool_call),
            RowKind::Dim => muted(theme),
        };
        Line::from(vec![
            Span::styled(
                format!("{:<w$}", row.label, w = layout::PROMPT_LABEL as usize),
                muted(theme),
            ),
            Span::styled(crate::app::glyph::visible(row.text), style),
        ])
    };
    // Rows after the conversation's: the answer of the run in flight, or why there is none.
    let after: Vec<(String, Style)> = crate::app::transcript::after(app, field_w, area.height)
        .into_iter()
        .map(|(text, error)| {
            let style = if error {
                Style::default().fg(theme.ui.error)
            } else {
                muted(theme)
            };
            (text, style)
        })
        .collect();
    let mut extra: Vec<Line<'static>> = Vec::new();
    for (text, style) in &after {
        for (range, first) in rows_of(text, field_w) {
            extra.push(Line::from(vec![
                Span::styled(
                    format!(
                        "{:<w$}",
                        if first { "model" } else { "" },
                        w = layout::PROMPT_LABEL as usize
                    ),
                    muted(theme),
                ),
                Span::styled(crate::app::glyph::visible(&text[range]), *style),
            ]));
        }
    }
    let dim = muted(theme);
    if conversation.is_empty() && extra.is_empty() && area.height >= 2 {
        let hint = "Ctrl+R sends · Tab moves between fields";
        extra.push(Line::from(Span::styled(
            format!(
                "{:w$}{}",
                "",
                fit(hint, field_w),
                w = layout::PROMPT_LABEL as usize
            ),
            dim,
        )));
    }
    let total = conversation.len() + extra.len();
    let h = area.height as usize;
    let selected = (app.focus == Focus::Transcript).then_some(app.prompt.selected);
    let shown = window(
        total,
        h,
        app.prompt.transcript_scroll,
        selected.and_then(|i| conversation.rows_of_message(i)),
    );
    let hidden_above = shown.start;
    let hidden_below = total - shown.end;
    let selection = Style::default()
        .bg(theme.ui.selection_bg)
        .add_modifier(Modifier::BOLD);
    let mut visible: Vec<Line<'static>> = shown
        .map(|i| match i.checked_sub(conversation.len()) {
            Some(k) => extra[k].clone(),
            None => {
                let row = conversation.row(i, history);
                let chosen = selected.is_some() && row.message == selected;
                let l = line(row);
                if chosen { l.style(selection) } else { l }
            }
        })
        .collect();
    // Where the conversation is scrolled: rows hidden above or below the view.
    if hidden_above > 0 && !visible.is_empty() {
        visible[0] = Line::from(Span::styled(
            format!(
                "{:>w$}",
                format!("↑ {hidden_above} rows above"),
                w = area.width as usize
            ),
            Style::default().fg(theme.ui.warning),
        ));
    }
    if hidden_below > 0 && visible.len() > 1 {
        let last = visible.len() - 1;
        visible[last] = Line::from(Span::styled(
            format!(
                "{:>w$}",
                format!("↓ {hidden_below} rows below"),
                w = area.width as usize
            ),
            Style::default().fg(theme.ui.warning),
        ));
    }
    // Bottom-aligned: the latest message sits right above the fields being typed.
    let pad = h - visible.len();
    let r = Rect {
        y: area.y + pad as u16,
        height: visible.len() as u16,
        ..area
    };
    frame.render_widget(Paragraph::new(visible), r);
}
