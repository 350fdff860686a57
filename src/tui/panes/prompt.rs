//! The Prompt pane: the system prompt, the conversation (the answer streaming in at its end), a
//! field for the result of each tool call of the last answer, and the message being written.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::layout::{self, PromptAreas};
use crate::app::parts::call_summary;
use crate::app::text_log::wrap;
use crate::app::theme::Theme;
use crate::app::{App, Focus, RunState};
use crate::tui::text::fit;
use toolscope_core::provider::Message;

use super::{block, muted, note};

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let mut b = block("Prompt", app.focus.in_prompt(), theme);
    let turns = app.prompt.history.len();
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
            let editor_area = Rect {
                x: field.x + call_w + 1,
                width: field.width.saturating_sub(call_w + 1),
                ..field
            };
            frame.render_widget(editor, editor_area);
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
fn transcript(frame: &mut Frame<'_>, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let theme = app.theme();
    let field_w = PromptAreas::field(area).width.max(1) as usize;
    // Each row, with the message it belongs to.
    let mut rows: Vec<(Option<usize>, Line<'static>)> = Vec::new();
    let push = |rows: &mut Vec<(Option<usize>, Line<'static>)>,
                at: Option<usize>,
                who: &str,
                text: &str,
                style: Style| {
        for (k, line) in text.lines().enumerate() {
            for (j, r) in wrap(line, field_w).into_iter().enumerate() {
                let lead = if k == 0 && j == 0 { who } else { "" };
                rows.push((
                    at,
                    Line::from(vec![
                        Span::styled(
                            format!("{lead:<w$}", w = layout::PROMPT_LABEL as usize),
                            muted(theme),
                        ),
                        Span::styled(crate::app::glyph::visible(&line[r]), style),
                    ]),
                ));
            }
        }
    };
    let text = Style::default().fg(theme.ui.text);
    let call = Style::default().fg(theme.parts.tool_call);
    let dim = muted(theme);
    let history = &app.prompt.history;
    for (i, m) in history.iter().enumerate() {
        let at = Some(i);
        match m {
            Message::System { content } => push(&mut rows, at, "system", content, dim),
            Message::User { content } => push(&mut rows, at, "you", content, text),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if let Some(c) = content {
                    push(&mut rows, at, "model", c, text);
                }
                for c in tool_calls {
                    let who = if content.is_some() { "" } else { "model" };
                    push(
                        &mut rows,
                        at,
                        who,
                        &format!("→ {}", call_summary(&c.tool_name, &c.input)),
                        call,
                    );
                }
            }
            Message::Tool {
                tool_call_id,
                content,
            } => {
                let name = history
                    .iter()
                    .find_map(|m| match m {
                        Message::Assistant { tool_calls, .. } => tool_calls
                            .iter()
                            .find(|c| &*c.tool_call_id == tool_call_id)
                            .map(|c| c.tool_name.clone()),
                        _ => None,
                    })
                    .unwrap_or_else(|| tool_call_id.clone());
                push(&mut rows, at, "tool", &format!("{name} ⇐ {content}"), dim);
            }
        }
    }
    // The answer of the run in flight, as it streams; or why the last turn has none.
    let main_turn = app.compare.is_none()
        && app
            .run
            .request
            .as_ref()
            .is_some_and(|r| r.messages.len() == history.len());
    if main_turn {
        match &app.run.state {
            RunState::Streaming => {
                // Only the end of the answer can show: no more than the field holds (the whole
                // text of a long answer, wrapped every frame, cost a frame as much as the run).
                let room = field_w * area.height as usize * 4;
                let (so_far, cut) = app.run.parts.text_tail(room);
                let calls = app.run.parts.call_count();
                let mut shown = if so_far.trim().is_empty() {
                    "streaming…".to_string()
                } else if cut {
                    format!("…{so_far}…")
                } else {
                    format!("{so_far}…")
                };
                if calls > 0 {
                    shown.push_str(&format!(
                        " ({calls} call{})",
                        if calls == 1 { "" } else { "s" }
                    ));
                }
                push(&mut rows, None, "model", &shown, dim);
            }
            RunState::Failed { category, .. } => push(
                &mut rows,
                None,
                "model",
                &format!("✗ no answer ({category}); Ctrl+R sends the turn again"),
                Style::default().fg(theme.ui.error),
            ),
            RunState::Cancelled => push(
                &mut rows,
                None,
                "model",
                "no answer (cancelled); Ctrl+R sends the turn again",
                dim,
            ),
            _ => {}
        }
    }
    if rows.is_empty() && area.height >= 2 {
        let hint = "Ctrl+R sends · Tab moves between fields";
        rows.push((
            None,
            Line::from(Span::styled(
                format!(
                    "{:w$}{}",
                    "",
                    fit(hint, field_w),
                    w = layout::PROMPT_LABEL as usize
                ),
                dim,
            )),
        ));
    }
    let h = area.height as usize;
    let selected = (app.focus == Focus::Transcript).then_some(app.prompt.selected);
    let mut end = rows.len().saturating_sub(
        app.prompt
            .transcript_scroll
            .min(rows.len().saturating_sub(h)),
    );
    if let Some(sel) = selected {
        // Keep the selected message in view.
        let first = rows.iter().position(|(m, _)| *m == Some(sel));
        let last = rows.iter().rposition(|(m, _)| *m == Some(sel));
        if let (Some(first), Some(last)) = (first, last) {
            if last + 1 > end {
                end = last + 1;
            }
            if first < end.saturating_sub(h) {
                end = (first + h).min(rows.len());
            }
        }
    }
    let start = end.saturating_sub(h);
    let hidden_above = start;
    let hidden_below = rows.len() - end;
    let selection = Style::default()
        .bg(theme.ui.selection_bg)
        .add_modifier(Modifier::BOLD);
    let mut visible: Vec<Line<'static>> = rows[start..end]
        .iter()
        .map(|(m, line)| {
            let mut line = line.clone();
            if selected.is_some() && *m == selected {
                line = line.style(selection);
            }
            line
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
