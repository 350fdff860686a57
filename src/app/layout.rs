//! Where everything goes, as a pure function of the terminal size and the state.
//!
//! Drawing and the mouse both use these rectangles (the state machine asks which pane a click
//! fell in, and how tall a pane is for paging), so what is drawn and what is clicked agree. It
//! lives with the state machine, which needs it to handle a click or a page key; the terminal
//! layer draws into the rectangles it computes. Nothing here draws.

use ratatui::layout::{Constraint, Layout, Rect};

use super::{App, Focus, choice};

/// Below this size the screen shows a "too small" message instead of panes.
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;

/// How the screen is shared out, as the user resized it (Alt+= / Alt+- on the focused pane;
/// Alt+0 back to the automatic shares), remembered in the settings file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Splits {
    /// The top row's (Tools, Tool choice, Prompt) share of the height in percent; `None`: as
    /// the screen and the conversation suit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top: Option<u16>,
    /// The Tools pane's share of the top row's width, in percent.
    pub tools: u16,
    /// The Raw pane's share of the bottom row's width, in percent.
    pub raw: u16,
}

impl Default for Splits {
    fn default() -> Self {
        Splits {
            top: None,
            tools: 50,
            raw: 55,
        }
    }
}

impl Splits {
    /// The fewest and the most percent a pane keeps of its row or column.
    pub const MIN: u16 = 20;
    pub const MAX: u16 = 80;
    /// One step of Alt+= or Alt+-.
    pub const STEP: u16 = 5;

    pub fn is_default(&self) -> bool {
        *self == Splits::default()
    }

    /// The focused pane's share grown by `step` percent (shrunk when negative), in the
    /// directions it has neighbours: its row's width and the height between the two rows.
    /// `top_now` is the top row's share as drawn now (the start when it was automatic).
    pub fn resize(&mut self, focus: Focus, step: i16, top_now: u16) {
        let moved =
            |v: u16, by: i16| (v as i16 + by).clamp(Splits::MIN as i16, Splits::MAX as i16) as u16;
        let in_top = !matches!(focus, Focus::Raw | Focus::Parts);
        let top = self.top.unwrap_or(top_now);
        self.top = Some(moved(top, if in_top { step } else { -step }));
        match focus {
            Focus::Tools | Focus::Mcp => self.tools = moved(self.tools, step),
            Focus::Raw => self.raw = moved(self.raw, step),
            Focus::Parts => self.raw = moved(self.raw, -step),
            _ => self.tools = moved(self.tools, -step),
        }
    }
}

/// The five panes and the status line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MainAreas {
    pub tools: Rect,
    pub choice: Rect,
    pub prompt: Rect,
    pub raw: Rect,
    pub parts: Rect,
    pub status: Rect,
}

/// The compare view: a header line, a column per run (four tool choices, or recorded and live)
/// and the status line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompareAreas {
    pub header: Rect,
    pub columns: Vec<Rect>,
    pub status: Rect,
}

/// The verify view: a header (target, progress or how it ended), the scorecard (or, while
/// the battery runs, the answers so far), the failed answers, and the status line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VerifyAreas {
    pub header: Rect,
    pub body: Rect,
    /// No rows while the battery runs, or when nothing failed.
    pub failures: Rect,
    pub status: Rect,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Screen {
    TooSmall(Rect),
    Main(MainAreas),
    Compare(CompareAreas),
    Verify(VerifyAreas),
}

pub fn screen(area: Rect, app: &App) -> Screen {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        return Screen::TooSmall(area);
    }
    let [body, status] = Layout::vertical([Constraint::Min(0), Constraint::Length(1)]).areas(area);
    if let Some(v) = app.verify.as_ref().filter(|v| v.shown) {
        let [header, rest] =
            Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(body);
        // The failures get a framed list of their own, at most a third of the room.
        let rows = if v.failures.is_empty() {
            0
        } else {
            (v.failures.len() as u16 + 2).clamp(3, (rest.height / 3).max(3))
        };
        let [body, failures] =
            Layout::vertical([Constraint::Min(0), Constraint::Length(rows)]).areas(rest);
        return Screen::Verify(VerifyAreas {
            header,
            body,
            failures,
            status,
        });
    }
    if let Some(c) = &app.compare {
        let [header, cols] =
            Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(body);
        let n = c.columns.len().max(1) as u32;
        let columns = if compare_one_at_a_time(cols.width, c.columns.len()) {
            // Too narrow for the columns side by side: the zoomed one takes the width, the
            // others have no room (←/→ choose).
            let hidden = Rect::new(cols.x, cols.y, 0, 0);
            (0..c.columns.len())
                .map(|i| if i == c.zoomed { cols } else { hidden })
                .collect()
        } else {
            Layout::horizontal(vec![Constraint::Ratio(1, n); n as usize])
                .split(cols)
                .to_vec()
        };
        return Screen::Compare(CompareAreas {
            header,
            columns,
            status,
        });
    }
    let top_height = match app.splits.top {
        // As resized: the share asked for, each row keeping room for a few lines.
        Some(p) => {
            (body.height * p / 100).clamp(9.min(body.height), body.height.saturating_sub(5).max(9))
        }
        None => (body.height * top_share(app, body.height) / 100).max(9),
    };
    let [top, bottom] =
        Layout::vertical([Constraint::Length(top_height), Constraint::Min(0)]).areas(body);
    let t = app.splits.tools;
    let [tools, right] =
        Layout::horizontal([Constraint::Percentage(t), Constraint::Percentage(100 - t)]).areas(top);
    let choice_rows = choice_rows(app, right.width.saturating_sub(2));
    let [choice, prompt] =
        Layout::vertical([Constraint::Length(choice_rows + 2), Constraint::Min(0)]).areas(right);
    let r = app.splits.raw;
    let [raw, parts] =
        Layout::horizontal([Constraint::Percentage(r), Constraint::Percentage(100 - r)])
            .areas(bottom);
    let mut areas = MainAreas {
        tools,
        choice,
        prompt,
        raw,
        parts,
        status,
    };
    if app.zoom {
        // The focused pane takes the whole body; the others have no room (nothing is drawn
        // there, and no click lands there).
        let hidden = Rect::new(body.x, body.y, 0, 0);
        let mut each = [
            &mut areas.tools,
            &mut areas.choice,
            &mut areas.prompt,
            &mut areas.raw,
            &mut areas.parts,
        ];
        let zoomed = match app.focus {
            Focus::Tools | Focus::Mcp => 0,
            Focus::ToolChoice => 1,
            Focus::System | Focus::Transcript | Focus::Composer | Focus::Result(_) => 2,
            Focus::Raw => 3,
            Focus::Parts => 4,
        };
        for (i, r) in each.iter_mut().enumerate() {
            **r = if i == zoomed { body } else { hidden };
        }
    }
    Screen::Main(areas)
}

/// The top row's automatic share of `height` rows, in percent: once there is a conversation
/// the Prompt pane needs the room more than Raw and Parts do on a short screen (at 80×24 the
/// question, the call and its result field all show).
pub fn top_share(app: &App, height: u16) -> u16 {
    if app.prompt.history().is_empty() || height >= 40 {
        45
    } else {
        65
    }
}

/// The top row's share of the height as drawn now, in percent.
pub fn top_share_now(app: &App) -> u16 {
    match screen(Rect::new(0, 0, app.size.0, app.size.1), app) {
        Screen::Main(m) if !app.zoom => {
            let body = m.status.y.max(1);
            (m.tools.height * 100).div_ceil(body)
        }
        _ => app.splits.top.unwrap_or(45),
    }
}

/// Rows the Tool choice pane needs inside its frame at `width`: the pre-send check when it
/// fails, and the rows of modes; at most four.
fn choice_rows(app: &App, width: u16) -> u16 {
    let width = width.max(1) as usize;
    let check = choice::problem(&app.choice, app.offered()).is_some() as usize;
    let rows = choice::rows(app.offered(), width).len();
    ((check + rows) as u16).clamp(1, 4)
}

/// A `width`×`height` rectangle in the middle of `area` (smaller when `area` is): where a
/// window over the panes goes.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width.saturating_sub(2));
    let h = height.min(area.height.saturating_sub(2));
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Where a filtered list window of `len` items goes (the protocol and tool-choice pickers): as
/// tall as the whole list, so that filtering does not make it jump.
pub fn list_window(area: Rect, len: usize) -> Rect {
    centered(area, 84, len.max(1) as u16 + 4)
}

/// Where the session picker of `len` sessions goes.
pub fn sessions_window(area: Rect, len: usize) -> Rect {
    centered(area, 112, len.max(1) as u16 + 5)
}

/// The row of a list window's list that row `y` of the screen shows, if one does: the list
/// starts `head` rows into the window's inside (`inner`), scrolled so that `selected` of `len`
/// rows shows.
pub fn list_row_at(inner: Rect, head: u16, selected: usize, len: usize, y: u16) -> Option<usize> {
    let height = inner.height.saturating_sub(head) as usize;
    let first = selected.saturating_sub(height.saturating_sub(1));
    let k = y.checked_sub(inner.y + head)? as usize;
    let i = first + k;
    (k < height && i < len).then_some(i)
}

/// The inside of a bordered pane.
pub fn inner(r: Rect) -> Rect {
    Rect {
        x: r.x.saturating_add(1),
        y: r.y.saturating_add(1),
        width: r.width.saturating_sub(2),
        height: r.height.saturating_sub(2),
    }
}

/// Width of the labels in front of the Prompt pane's fields (`system`, `you`, …).
pub const PROMPT_LABEL: u16 = 8;

/// The Prompt pane's fields, top to bottom: system prompt, the conversation, one row per tool
/// result waiting to be typed, the message being written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptAreas {
    pub system: Rect,
    pub transcript: Rect,
    pub results: Vec<Rect>,
    pub composer: Rect,
}

impl PromptAreas {
    /// `r` without its label column.
    pub fn field(r: Rect) -> Rect {
        let label = PROMPT_LABEL.min(r.width);
        Rect {
            x: r.x + label,
            width: r.width - label,
            ..r
        }
    }
}

pub fn prompt_areas(inner: Rect, app: &App) -> PromptAreas {
    // Rows are handed out in order of importance; the conversation gets what is left.
    let mut left = inner.height;
    let take = |left: &mut u16, want: u16| {
        let got = want.min(*left);
        *left -= got;
        got
    };
    let field_w = inner.width.saturating_sub(PROMPT_LABEL);
    let rows = |t| super::editor::wrapped_rows(t, field_w) as u16;
    // Results asked for come first, then the message being written (leaving a row for the
    // system prompt), the system prompt.
    let results_h = take(&mut left, app.prompt.results.len() as u16);
    let composer_want = rows(&app.prompt.composer)
        .clamp(1, 3)
        .min(left.saturating_sub(1).max(1));
    let composer_h = take(&mut left, composer_want);
    let system_want = rows(&app.prompt.system)
        .clamp(1, 3)
        .min((inner.height / 4).max(1));
    let system_h = take(&mut left, system_want);
    let transcript_h = left;
    let mut y = inner.y;
    let mut next = |h: u16| {
        let r = Rect {
            x: inner.x,
            y,
            width: inner.width,
            height: h,
        };
        y += h;
        r
    };
    let system = next(system_h);
    let transcript = next(transcript_h);
    let results = (0..results_h).map(|_| next(1)).collect();
    let composer = next(composer_h);
    PromptAreas {
        system,
        transcript,
        results,
        composer,
    }
}

/// The window of the detail and request views: most of the screen.
pub fn text_overlay(area: Rect) -> Rect {
    let w = area.width.saturating_sub(4).min(140);
    let h = area.height.saturating_sub(2);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// The size (width, height) of the text inside [`text_overlay`] for a terminal of `size`.
pub fn text_overlay_size(size: (u16, u16)) -> (usize, usize) {
    let r = inner(text_overlay(Rect::new(0, 0, size.0, size.1)));
    (r.width.max(1) as usize, r.height.max(1) as usize)
}

/// A compare column's inside: verdict, judgement, stats, output, and parts (with a divider
/// row above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnAreas {
    pub verdict: Rect,
    /// Whether the tool choice was honoured; whether the calls are valid.
    pub judgement: Rect,
    pub stats: Rect,
    /// The column's stream timeline (rate, first token, calls), when there is room.
    pub timeline: Rect,
    pub output: Rect,
    pub divider: Rect,
    pub parts: Rect,
}

/// The narrowest a compare column is drawn: below it, one column at a time.
pub const COMPARE_COLUMN_MIN: u16 = 36;

/// Whether `n` compare columns are shown one at a time in `width` cells.
pub fn compare_one_at_a_time(width: u16, n: usize) -> bool {
    n > 1 && width / (n as u16) < COMPARE_COLUMN_MIN
}

/// The insides of the compare columns: every column's heading takes as many rows as the
/// widest-wrapping one needs (so that the columns stay aligned), at most half its height.
pub fn compare_columns(compare: &super::compare::Compare, columns: &[Rect]) -> Vec<ColumnAreas> {
    let narrowest = columns
        .iter()
        .filter(|c| c.width > 0)
        .map(|c| inner(*c))
        .min_by_key(|r| r.width);
    let rows = narrowest.map_or([1, 1, 1], |r| {
        super::compare::heading_rows(compare, r.width.max(1) as usize, r.height as usize / 2)
    });
    columns.iter().map(|c| column_areas(*c, rows)).collect()
}

/// A compare column's inside, its heading taking `rows` (verdict, judgement, figures).
pub fn column_areas(column: Rect, rows: [u16; 3]) -> ColumnAreas {
    let inner = inner(column);
    let [verdict, judgement, stats, rest] = Layout::vertical([
        Constraint::Length(rows[0]),
        Constraint::Length(rows[1]),
        Constraint::Length(rows[2]),
        Constraint::Min(0),
    ])
    .areas(inner);
    // Two rows of timeline when the column has room for them and its output.
    let strip = if rest.height >= 10 { 2 } else { 0 };
    let [timeline, rest] =
        Layout::vertical([Constraint::Length(strip), Constraint::Min(0)]).areas(rest);
    let [output, divider, parts] = Layout::vertical([
        Constraint::Percentage(50),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(rest);
    ColumnAreas {
        verdict,
        judgement,
        stats,
        timeline,
        output,
        divider,
        parts,
    }
}

/// The Tools pane's inside split: the JSON text, and below it the MCP list (a rule, then a
/// row each) when there are servers, up to half the pane.
pub fn tools_split(inner: Rect, app: &App) -> (Rect, Option<Rect>) {
    if app.mcp.servers.is_empty() {
        return (inner, None);
    }
    let rows = app.mcp.rows().len() as u16;
    // As tall as the whole list, so that filtering does not make the pane jump.
    let list_h = (rows + 1).min(inner.height / 2).max(2.min(inner.height));
    let text = Rect {
        height: inner.height - list_h,
        ..inner
    };
    let list = Rect {
        y: inner.y + text.height,
        height: list_h,
        ..inner
    };
    (text, Some(list))
}

/// The cells before the Tools pane's text: its line numbers and their margins.
pub fn tools_gutter(lines: usize) -> usize {
    lines.checked_ilog10().map_or(1, |d| d as usize + 1) + 2
}

/// The Result field `i`'s text area in its row: after the call it answers.
pub fn result_editor(row: Rect) -> Rect {
    let field = PromptAreas::field(row);
    let call_w = (field.width / 2).min(36);
    Rect {
        x: field.x + call_w + 1,
        width: field.width.saturating_sub(call_w + 1),
        ..field
    }
}

/// The size (width, height) of the Raw pane's text.
pub fn raw_size(app: &App) -> (usize, usize) {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    match screen(area, app) {
        Screen::Main(m) => {
            let i = inner(m.raw);
            (i.width as usize, i.height as usize)
        }
        _ => (1, 1),
    }
}

/// The number of rows of the Parts list.
pub fn parts_height(app: &App) -> usize {
    let area = Rect::new(0, 0, app.size.0, app.size.1);
    match screen(area, app) {
        Screen::Main(m) => inner(m.parts).height as usize,
        _ => 1,
    }
}
