//! The Tools pane: the tool definitions as JSON, edited in place, highlighted, and checked when
//! typing pauses (the verdict sits on the border: the tool count and the first warning, or what
//! is wrong and where).
//!
//! Only the rows in view are drawn, each in one pass: the line number (in a gutter that does
//! not scroll, so that "line 12 column 5" of an error is easy to find), then the characters in
//! the colours of their JSON classes (cached, see [`View`]), the selection and the cursor over
//! them. A `›` marks a row whose line goes on past the right edge, a `‹` one scrolled past the
//! left.

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::app::code_editor::{Pos, char_cells};
use crate::app::{App, Focus};
use crate::tui::View;
use crate::tui::highlight::class_at;
use crate::tui::text::fit;

use super::{block, muted, note};

pub fn draw(frame: &mut Frame<'_>, area: Rect, app: &App, view: &View) {
    let theme = app.theme();
    let tools = &app.tools;
    let focused = matches!(app.focus, Focus::Tools | Focus::Mcp);
    let mut b = block("Tools", focused, theme);
    let width = area.width.saturating_sub(4) as usize;
    let pending = tools.pending();
    match &tools.check {
        _ if pending => {
            b = b.title(note("checking…".into(), muted(theme)));
            b = b.title_bottom(Line::from(Span::styled(
                " checked when typing pauses ",
                muted(theme),
            )));
        }
        Ok(set) => {
            let n = set.len();
            let s = if n == 1 { "" } else { "s" };
            // The servers' tools, offered beside these.
            let from_mcp = if app.mcp.servers.is_empty() {
                0
            } else {
                app.mcp.catalog.routes().count()
            };
            let count = if from_mcp > 0 {
                format!("✓ {n} tool{s} + {from_mcp} from MCP")
            } else {
                format!("✓ {n} tool{s}")
            };
            // The room the titles leave: " Tools ", the count, a gap, and the borders.
            let count_w = count.chars().count() + 2;
            b = b.title(note(count, Style::default().fg(theme.ui.success)));
            // What the tools file had to have read differently (a Python type name, a schema of
            // no draft): how many warnings, and the first (cut to the room there is).
            if let Some(first) = set.warnings().first() {
                let text = match set.warnings().len() {
                    1 => format!("⚠ {first}"),
                    n => format!("⚠ {n} warnings (F10): {first}"),
                };
                let room = width.saturating_sub(count_w + " Tools ".len());
                b = b.title(note(
                    fit(&text, room),
                    Style::default().fg(theme.ui.warning),
                ));
            }
            let hint = match &tools.path {
                Some(p) => format!("{} · F3 load · F4 save", p.display()),
                None => "F3 load · F4 save".to_string(),
            };
            b = b.title_bottom(Line::from(Span::styled(
                format!(" {} ", fit(&hint, width)),
                muted(theme),
            )));
        }
        Err(e) => {
            b = b.title(note(
                "✗ invalid".into(),
                Style::default().fg(theme.ui.error),
            ));
            b = b.title_bottom(Line::from(Span::styled(
                format!(" {} ", fit(&e.to_string(), width)),
                Style::default().fg(theme.ui.error),
            )));
        }
    }
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let (text, list) = crate::app::layout::tools_split(inner, app);
    draw_text(frame.buffer_mut(), text, app, view);
    if let Some(list) = list {
        draw_mcp(frame.buffer_mut(), list, app);
    }
}

/// The MCP list: a rule naming the keys, then each server (how it is reached, its state) and
/// its tools (under the name the model sees them by, when it differs), read-only.
fn draw_mcp(buf: &mut Buffer, area: Rect, app: &App) {
    use crate::app::mcp::{Row, ServerState};
    if area.height == 0 || area.width == 0 {
        return;
    }
    let theme = app.theme();
    let width = area.width as usize;
    let focused = app.focus == Focus::Mcp;
    let n = app.mcp.servers.len();
    let filter = &app.mcp.list;
    if filter.active() {
        // The filter as typed and what it leaves, in place of the rule.
        let mut header = super::filter_header(theme, filter, " rows");
        header
            .spans
            .insert(0, Span::styled("── MCP ", muted(theme)));
        if filter.typing {
            header
                .spans
                .push(Span::styled(" · Enter done · Esc clear ", muted(theme)));
        }
        buf.set_line(area.x, area.y, &header, area.width);
    } else {
        let head = format!(
            "── MCP · {n} server{} · {}",
            if n == 1 { "" } else { "s" },
            if focused {
                "Enter copy a tool · / filter · a add · d remove · r reconnect · v view "
            } else {
                "Tab here · F11 add "
            }
        );
        let rule = format!(
            "{head}{}",
            "─".repeat(width.saturating_sub(head.chars().count()))
        );
        buf.set_stringn(area.x, area.y, fit(&rule, width), width, muted(theme));
    }
    let height = area.height as usize - 1;
    if height == 0 {
        return;
    }
    let rows = app.mcp.shown();
    if rows.is_empty() && filter.active() {
        buf.set_stringn(
            area.x,
            area.y + 1,
            fit(
                &format!("no server or tool matches /{}", filter.query),
                width,
            ),
            width,
            muted(theme),
        );
        return;
    }
    let top = filter.selected.saturating_sub(height.saturating_sub(1));
    for (k, (row, marks)) in rows.iter().enumerate().skip(top).take(height) {
        let y = area.y + 1 + (k - top) as u16;
        let chosen = focused && k == filter.selected;
        let (text, style) = match row {
            Row::Server(i) => {
                let s = &app.mcp.servers[*i];
                match &s.state {
                    ServerState::Connecting => (
                        format!("◌ {} · {} · connecting…", s.name, s.spec),
                        muted(theme),
                    ),
                    ServerState::Ready => (
                        format!(
                            "● {} · {} · {} tool{}",
                            s.name,
                            s.spec,
                            s.tools.len(),
                            if s.tools.len() == 1 { "" } else { "s" }
                        ),
                        Style::default().fg(theme.ui.success),
                    ),
                    ServerState::Failed(why) => (
                        format!("✗ {} · failed: {why}", s.name),
                        Style::default().fg(theme.ui.error),
                    ),
                }
            }
            Row::Tool {
                server,
                tool,
                exposed,
            } => {
                let entry = &app.mcp.servers[*server].tools[*tool];
                let name = entry
                    .get("name")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("?");
                let desc = entry
                    .get("description")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("");
                let shown = match exposed {
                    Some(e) if e != name => format!("  {e} (\"{name}\" on the server)"),
                    _ => format!("  {name}"),
                };
                let text = if desc.is_empty() {
                    shown
                } else {
                    format!("{shown} — {}", desc.lines().next().unwrap_or(""))
                };
                let style = if exposed.is_some() {
                    Style::default().fg(theme.ui.text)
                } else {
                    muted(theme)
                };
                (text, style)
            }
        };
        let style = if chosen {
            super::selected(theme)
        } else {
            style
        };
        let line = fit(&text, width);
        let pad = width.saturating_sub(line.chars().count());
        // The name's matched letters, after the two-column mark or indent.
        let marks: Vec<usize> = marks.iter().map(|k| k + 2).collect();
        let spans = super::marked(&format!("{line}{}", " ".repeat(pad)), &marks, style, theme);
        buf.set_line(area.x, y, &Line::from(spans), area.width);
    }
}

/// Sets the cell at `x`, `y` of `buf` (if it is there) to `symbol` in `style` (laid over the
/// cell's own).
fn put(buf: &mut Buffer, x: u16, y: u16, symbol: &str, style: Style) {
    if let Some(cell) = buf.cell_mut((x, y)) {
        cell.set_symbol(symbol).set_style(style);
    }
}

/// Draws the rows of the text in view, with their line numbers, colours, selection and cursor.
fn draw_text(buf: &mut Buffer, inner: Rect, app: &App, view: &View) {
    let theme = app.theme();
    let editor = &app.tools.editor;
    let lines = editor.lines();
    let gutter = crate::app::layout::tools_gutter(lines.len());
    let width = (inner.width as usize).saturating_sub(gutter);
    let height = inner.height as usize;
    if height == 0 || inner.width == 0 {
        return;
    }
    let (top, left) = editor.viewport(height, width);
    let classes = view.tools_classes(editor, top..top + height);
    let numbers = Style::default().fg(theme.ui.muted);
    let selected = Style::default()
        .fg(theme.ui.selection_fg)
        .bg(theme.ui.selection_bg);
    let marker = Style::default().fg(theme.ui.warning);
    let cursor = (app.focus == Focus::Tools).then(|| editor.cursor());
    let selection = editor.selection();
    let in_selection = |p: Pos| selection.is_some_and(|(a, b)| a <= p && p < b);
    let text_x = inner.x + gutter.min(inner.width as usize) as u16;
    for (y, (line, line_classes)) in lines[top.min(lines.len())..]
        .iter()
        .zip(&classes)
        .enumerate()
    {
        let row = top + y;
        let y = inner.y + y as u16;
        let number = format!(" {:>w$} ", row + 1, w = gutter - 2);
        buf.set_stringn(inner.x, y, &number, inner.width as usize, numbers);
        if width == 0 {
            continue;
        }
        // Cell columns of the line, `left..left + width` of them shown.
        let right = left + width;
        let mut col = 0;
        let mut last_drawn: Option<u16> = None;
        let mut goes_on = false;
        for (i, c) in line.char_indices() {
            let w = char_cells(c, col);
            let start = col;
            col += w;
            if col <= left && w > 0 {
                continue;
            }
            if start >= right || (col > right && w > 0) {
                goes_on = true;
                break;
            }
            let p = Pos::new(row, i);
            let mut style = if in_selection(p) {
                selected
            } else {
                Style::default().fg(class_at(line_classes, i).colour(theme))
            };
            if cursor == Some(p) {
                style = style.add_modifier(Modifier::REVERSED);
            }
            if w == 0 {
                // A combining mark joins the character drawn before it; a control character
                // is not drawn (but the cursor on it is).
                if c.is_control() && cursor == Some(p) && start >= left {
                    put(buf, text_x + (start - left) as u16, y, " ", style);
                }
                if let Some(x) = last_drawn.filter(|_| !c.is_control())
                    && let Some(cell) = buf.cell_mut((x, y))
                {
                    let joined = format!("{}{c}", cell.symbol());
                    cell.set_symbol(&joined);
                }
                continue;
            }
            let x = text_x + (start.max(left) - left) as u16;
            if c == '\t' || start < left {
                // A tab, or a character cut by the left edge: blank cells.
                for k in 0..(col - start.max(left)) as u16 {
                    put(buf, x + k, y, " ", style);
                }
                last_drawn = None;
            } else {
                put(buf, x, y, c.encode_utf8(&mut [0; 4]), style);
                for k in 1..w as u16 {
                    if let Some(cell) = buf.cell_mut((x + k, y)) {
                        cell.reset();
                    }
                }
                last_drawn = Some(x);
            }
        }
        // The cursor after the last character, and a selected line break.
        if !goes_on && col >= left && col < right {
            let end = Pos::new(row, line.len());
            let x = text_x + (col - left) as u16;
            if cursor == Some(end) {
                let style = if in_selection(end) {
                    selected
                } else {
                    Style::default()
                };
                put(buf, x, y, " ", style.add_modifier(Modifier::REVERSED));
            } else if in_selection(end) {
                put(buf, x, y, " ", selected);
            }
        }
        // A line cut at an edge says so.
        if width > 1 {
            if goes_on {
                put(buf, inner.x + inner.width - 1, y, "›", marker);
            }
            if left > 0 && !line.is_empty() {
                put(buf, text_x, y, "‹", marker);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::theme::Themes;
    use crate::app::{Message, Setup, update};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn app(tools: &str) -> App {
        let setup = Setup {
            tools: tools.to_string(),
            ..Setup::default()
        };
        let mut a = App::new(setup, Themes::built_in());
        a.focus = Focus::Tools;
        a
    }

    fn press(a: &mut App, code: KeyCode, m: KeyModifiers) {
        update(a, Message::Key(KeyEvent::new(code, m)));
    }

    /// The pane drawn at `w`×`h`: its rows, and the buffer.
    fn drawn(a: &App, view: &View, w: u16, h: u16) -> (Vec<String>, Buffer) {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        t.draw(|f| {
            let area = f.area();
            draw(f, area, a, view)
        })
        .unwrap();
        let buf = t.backend().buffer().clone();
        let rows = (0..h)
            .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
            .collect();
        (rows, buf)
    }

    #[test]
    fn numbers_stay_while_a_long_line_scrolls_and_the_cursor_shows() {
        let long = format!("[\"{}\"]", "abcdefghij".repeat(5));
        let mut a = app(&format!("{long}\n\n[\"日本\"]"));
        let view = View::new();
        let (rows, _) = drawn(&a, &view, 30, 5);
        assert_eq!(rows[1], "┃ 1 [\"abcdefghijabcdefghijab›┃", "{rows:#?}");
        assert_eq!(rows[2], "┃ 2                          ┃");
        // A wide character's second cell is left blank here.
        assert_eq!(rows[3], "┃ 3 [\"日 本 \"]                 ┃");
        press(&mut a, KeyCode::End, KeyModifiers::NONE);
        let (rows, buf) = drawn(&a, &view, 30, 5);
        // Scrolled: the line numbers stay, a line that starts further left is marked, the
        // cursor is after the end of the line, with one cell to spare.
        assert_eq!(rows[1], "┃ 1 ‹abcdefghijabcdefghij\"]  ┃", "{rows:#?}");
        assert_eq!(rows[3], "┃ 3 ‹                        ┃", "{rows:#?}");
        assert!(buf[(27, 1)].modifier.contains(Modifier::REVERSED));
        assert!(!buf[(26, 1)].modifier.contains(Modifier::REVERSED));
        // Back at the start; a selection in the theme's selection colours, the cursor after it.
        press(&mut a, KeyCode::Home, KeyModifiers::NONE);
        press(&mut a, KeyCode::Down, KeyModifiers::NONE);
        press(&mut a, KeyCode::Down, KeyModifiers::NONE);
        press(&mut a, KeyCode::Right, KeyModifiers::SHIFT);
        let (rows, buf) = drawn(&a, &view, 30, 5);
        assert_eq!(rows[1], "┃ 1 [\"abcdefghijabcdefghijab›┃", "{rows:#?}");
        let theme = a.theme();
        assert_eq!(buf[(4, 3)].bg, theme.ui.selection_bg, "the [ is selected");
        assert_eq!(buf[(4, 3)].fg, theme.ui.selection_fg);
        assert_ne!(buf[(5, 3)].bg, theme.ui.selection_bg);
        assert!(buf[(5, 3)].modifier.contains(Modifier::REVERSED));
        assert_eq!(buf[(6, 3)].symbol(), "日");
        assert_eq!(buf[(8, 3)].symbol(), "本");
        // Typing replaces the selection.
        press(&mut a, KeyCode::Char('{'), KeyModifiers::NONE);
        assert_eq!(a.tools.text(), format!("{long}\n\n{{\"日本\"]"));
        let (rows, _) = drawn(&a, &view, 30, 5);
        assert_eq!(rows[3], "┃ 3 {\"日 本 \"]                 ┃", "{rows:#?}");
    }

    #[test]
    fn the_colours_follow_an_edit_and_its_undo() {
        let mut a = app("{\"a\": 1,\n \"b\": 2}");
        let view = View::new();
        let theme = a.theme().clone();
        let (_, buf) = drawn(&a, &view, 30, 5);
        assert_eq!(buf[(6, 2)].fg, theme.syntax.key, "\"b\" is a key");
        // An open string swallows what follows; undone, the key is a key again.
        press(&mut a, KeyCode::Char('"'), KeyModifiers::NONE);
        let (_, buf) = drawn(&a, &view, 30, 5);
        assert_eq!(buf[(6, 2)].fg, theme.syntax.string);
        assert!(a.tools.is_edited());
        press(&mut a, KeyCode::Char('z'), KeyModifiers::CONTROL);
        let (_, buf) = drawn(&a, &view, 30, 5);
        assert_eq!(buf[(6, 2)].fg, theme.syntax.key);
        assert!(!a.tools.is_edited(), "back to the text it started with");
    }
}
