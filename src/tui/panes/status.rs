//! The status line: which provider and model the playground talks to, the protocol, the tool
//! choice, the state of the run (with the error category when it failed), the lint warnings,
//! time to first token, tokens per second, finish reason and usage; on the right a notice or the
//! key hint.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::compare::format_ms;
use crate::app::keymap;
use crate::app::parts::usage_text;
use crate::app::{App, RunState, RunView};
use crate::tui::text::fit;

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let theme = app.theme();
    let base = Style::default()
        .fg(theme.ui.status_fg)
        .bg(theme.ui.status_bg);
    let sep = Span::styled(" │ ", base.fg(theme.ui.muted));
    let strong = base.add_modifier(Modifier::BOLD);

    let mut left = vec![
        Span::styled(format!(" {} · {}", app.provider, app.model), strong),
        sep.clone(),
        Span::styled(app.protocol_shown(), base),
        sep.clone(),
        Span::styled(app.choice.label(), base),
        sep.clone(),
    ];
    let (state, state_colour) = state_of(app);
    left.push(Span::styled(
        format!("● {state}"),
        base.fg(state_colour).add_modifier(Modifier::BOLD),
    ));
    if let Some(a) = app.mcp.auto {
        // The automatic MCP loop: which model turn of how many at most.
        left.push(sep.clone());
        left.push(Span::styled(
            format!("⟳ loop {}/{}", a.step.max(1), a.max),
            base.fg(theme.ui.accent).add_modifier(Modifier::BOLD),
        ));
    }
    if let Some(e) = app.mcp.execution.as_ref().filter(|_| app.mcp.executing()) {
        let left_calls = e.calls.iter().filter(|c| !c.done).count();
        left.push(sep.clone());
        left.push(Span::styled(
            format!(
                "⚙ executing {left_calls} call{}",
                if left_calls == 1 { "" } else { "s" }
            ),
            base.fg(theme.ui.accent),
        ));
    }
    if let Some(v) = app.verify.as_ref().filter(|v| v.is_running()) {
        // The battery runs on behind the panes too: how far it is.
        left.push(sep.clone());
        left.push(Span::styled(
            format!("✓ verify {}/{}", v.answers.len(), v.total),
            base.fg(theme.ui.accent).add_modifier(Modifier::BOLD),
        ));
    }
    if app.compare.is_none() && app.run.record.warnings > 0 {
        // The stream broke a rule of its wire or of the request: the Parts pane says which.
        left.push(sep.clone());
        left.push(Span::styled(
            format!("⚠ {} lint", app.run.record.warnings),
            base.fg(theme.ui.warning).add_modifier(Modifier::BOLD),
        ));
    }
    if app.compare.is_none()
        && !matches!(
            app.run.record.state,
            RunState::Failed { .. } | RunState::NotSent { .. }
        )
    {
        // A notice needs room more than the run's figures do: on a narrow line they give way.
        let stats = run_stats(&app.run);
        let stats_w: usize = stats.iter().map(|s| s.chars().count() + 3).sum();
        let left_w: usize = left.iter().map(|s| s.width()).sum();
        let notice_w = app
            .notice
            .as_ref()
            .map_or(0, |n| n.text.chars().count().min(40));
        if left_w + stats_w + notice_w <= area.width as usize || app.notice.is_none() {
            for s in stats {
                left.push(sep.clone());
                left.push(Span::styled(s, base));
            }
        }
    }
    let right = match &app.notice {
        Some(n) => Span::styled(
            format!("{} ", n.text),
            base.fg(if n.error {
                theme.ui.error
            } else {
                theme.ui.accent
            }),
        ),
        None => {
            let used: usize = left.iter().map(|s| s.width()).sum();
            let room = (area.width as usize).saturating_sub(used + 2);
            Span::styled(key_bar(app, room), base.fg(theme.ui.muted))
        }
    };
    frame.render_widget(Paragraph::new("").style(base), area);
    let left_w: usize = left.iter().map(|s| s.width()).sum();
    let total = area.width as usize;
    // The left side always shows; the right side takes what is left, or nothing.
    let right_room = total.saturating_sub(left_w + 1);
    let cut = app.notice.is_some() && right.content.chars().count() > right_room;
    // A notice cut short says where to read it whole.
    let right_text = if cut && right_room > 12 {
        format!("{} F10 ", fit(right.content.trim_end(), right_room - 5))
    } else {
        fit(&right.content, right_room)
    };
    let right_w = right_text.chars().count() as u16;
    frame.render_widget(Paragraph::new(Line::from(left)).style(base), area);
    if right_w > 0 && right_room >= 12.min(right.content.len()) {
        let r = Rect {
            x: area.x + area.width - right_w,
            width: right_w,
            ..area
        };
        frame.render_widget(Paragraph::new(Span::styled(right_text, right.style)), r);
    }
}

/// The state word and its colour: of the main run, or of the compare runs together.
fn state_of(app: &App) -> (String, ratatui::style::Color) {
    let theme = app.theme();
    let colour = |s: &RunState| match s {
        RunState::Idle | RunState::Cancelled => theme.ui.muted,
        RunState::Streaming => theme.ui.accent,
        RunState::Done => theme.ui.success,
        RunState::Failed { .. } | RunState::NotSent { .. } => theme.ui.error,
    };
    match &app.compare {
        Some(c) if c.kind == crate::app::compare::CompareKind::Resend => {
            let live = &c.columns[c.columns.len() - 1];
            (
                format!("re-send: live {}", live.record.state.word()),
                colour(&live.record.state),
            )
        }
        Some(c) => {
            let running = c.columns.iter().filter(|v| v.is_running()).count();
            if running > 0 {
                (format!("compare: {running} streaming"), theme.ui.accent)
            } else {
                ("compare: done".into(), theme.ui.success)
            }
        }
        None => match &app.playback {
            Some(p) if app.run.record.id == Some(p.id) => {
                let at = p.position();
                if p.is_done() {
                    (
                        format!("{} · replayed", app.run.record.state.word()),
                        colour(&app.run.record.state),
                    )
                } else if p.paused {
                    (format!("paused {at}"), theme.ui.warning)
                } else {
                    (format!("replay {} {at}", p.pace.label()), theme.ui.accent)
                }
            }
            // Sent, and nothing of the answer yet: a server may take minutes to read a long
            // prompt, and the status says that it is waited for, not stuck.
            _ if app.run.is_running() && app.run.record.first_output_ms.is_none() => (
                "waiting for the first token".into(),
                colour(&app.run.record.state),
            ),
            _ => (app.run.record.state.word(), colour(&app.run.record.state)),
        },
    }
}

/// Time to first token, tokens per second, finish reason and usage, as far as known.
pub fn run_stats(run: &RunView) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(ms) = run.record.first_output_ms {
        out.push(format!("ttft {}", format_ms(ms)));
    }
    if let Some(tps) = run.tokens_per_second() {
        out.push(format!("{tps:.0} tok/s"));
    }
    if let Some(f) = run.record.finish {
        out.push(f.as_str().to_string());
    }
    if let Some(u) = &run.record.usage {
        let t = usage_text(u);
        if !t.is_empty() {
            out.push(t.trim_start_matches(" · ").to_string());
        }
    }
    out
}

/// The keys that act where the focus is (see [`keymap::key_bar`]), `Enter edit · d delete · …`,
/// as many whole entries as fit in `room` cells (the help key kept last when it fits).
fn key_bar(app: &App, room: usize) -> String {
    let search = app.search.as_ref();
    let typing_filter = match app.focus {
        crate::app::Focus::Mcp => app.mcp.list.typing,
        crate::app::Focus::Parts => app.parts_filter.typing,
        _ => false,
    };
    let bar = match app.verify.as_ref().filter(|v| v.shown) {
        Some(v) => keymap::verify_bar(v.is_running()),
        None if app.compare.is_some() => keymap::COMPARE_BAR,
        None => keymap::key_bar(
            app.focus,
            search.is_some(),
            search.is_some_and(|s| s.editing),
            typing_filter,
        ),
    };
    // A zoomed pane says first how to give the others their room back.
    let zoomed = app.zoom.then(|| "Alt+Z unzoom".to_string());
    let entries: Vec<String> = zoomed
        .into_iter()
        .chain(bar.iter().map(|(k, what)| format!("{k} {what}")))
        .collect();
    // Joined by " · ", with a space after the last.
    let width = |e: &[String]| {
        e.iter().map(|x| x.chars().count()).sum::<usize>() + 3 * e.len().saturating_sub(1) + 1
    };
    let (help, keys) = match entries.split_last() {
        Some((last, rest)) if last.starts_with("F1") => (Some(last.clone()), rest.to_vec()),
        _ => (None, entries.clone()),
    };
    let mut shown: Vec<String> = Vec::new();
    for e in keys {
        let mut next = shown.clone();
        next.push(e);
        let with_help = help.as_ref().map_or(0, |h| h.chars().count() + 3);
        if width(&next) + with_help > room {
            break;
        }
        shown = next;
    }
    if let Some(h) = help {
        let mut next = shown.clone();
        next.push(h);
        if width(&next) <= room {
            shown = next;
        }
    }
    let mut out = shown.join(" · ");
    out.push(' ');
    out
}
