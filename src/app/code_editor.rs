//! The Tools pane's editor: a text kept as lines, with a cursor, a selection and undo/redo,
//! whose edits touch only the lines they change.
//!
//! The other text areas of the playground are `ratatui_textarea::TextArea`s, which lay out
//! every line again (a width per character) on each edit: in a 300 KB tools file that alone
//! costs more than the 2 ms a keystroke may take (DESIGN.md, performance targets). Here an edit
//! is a replacement of a range by a text, recorded for undo, and widths are only measured for
//! the cursor's line and the lines drawn.
//!
//! The keys are those of the other text areas (ratatui-textarea's defaults, so the panes behave
//! alike), with Ctrl+Z / Ctrl+Y (and Ctrl+Shift+Z, Ctrl+U) for undo and redo; Shift with a
//! movement selects, typing replaces the selection, Ctrl+X deletes it. Up and down keep the
//! column they started from. Each edit is one undo step, and every state of the text has a
//! number ([`CodeEditor::state`]) that undo and redo restore, so a text undone back to what was
//! saved can be told apart from an edited one.
//!
//! Positions are a line and a byte offset in it, always at a character boundary. Nothing here
//! panics on any key or text: positions from outside are clamped.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use unicode_width::UnicodeWidthChar;

/// Cells from one tab stop to the next.
pub const TAB: usize = 2;

/// Undo steps kept at most, and the text they may hold at most (the oldest go first).
const HISTORY_STEPS: usize = 1000;
const HISTORY_BYTES: usize = 32 << 20;

/// Changes whose first line is remembered (for [`CodeEditor::first_change_since`]).
const TOUCHED: usize = 64;

/// The number of the next editor made.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A place in the text: a line, and a byte offset in it at a character boundary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub row: usize,
    pub col: usize,
}

impl Pos {
    pub fn new(row: usize, col: usize) -> Pos {
        Pos { row, col }
    }
}

/// A movement of the cursor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    Up,
    Down,
    Forward,
    Back,
    WordForward,
    WordBack,
    Head,
    End,
    Top,
    Bottom,
    ParagraphForward,
    ParagraphBack,
    PageDown,
    PageUp,
}

/// One edit: at `at`, the text `removed` was replaced by `inserted`.
#[derive(Clone, Debug)]
struct Edit {
    at: Pos,
    removed: String,
    inserted: String,
    cursor_before: Pos,
    cursor_after: Pos,
    state_before: u64,
    state_after: u64,
}

impl Edit {
    fn bytes(&self) -> usize {
        self.removed.len() + self.inserted.len()
    }
}

/// Whether `next`, just made, is more of the typing `last` holds: both insert text without
/// taking any away or ending a line, `next` one character right where `last` left the cursor
/// (nothing came between), and that character does not start a word after a space.
fn joins_typing(last: &Edit, next: &Edit) -> bool {
    let mut typed = next.inserted.chars();
    let (Some(c), None) = (typed.next(), typed.next()) else {
        return false;
    };
    last.removed.is_empty()
        && next.removed.is_empty()
        && c != '\n'
        && !last.inserted.is_empty()
        && !last.inserted.contains('\n')
        && last.cursor_after == next.at
        && last.state_after == next.state_before
        && (c.is_whitespace() || !last.inserted.ends_with(char::is_whitespace))
}

/// The width of `c` in cells at cell column `col` (a tab reaches the next stop; a control
/// character takes none).
pub fn char_cells(c: char, col: usize) -> usize {
    if c == '\t' {
        TAB - col % TAB
    } else {
        c.width().unwrap_or(0)
    }
}

/// The cells `s` takes when it starts at cell column 0.
pub fn cells(s: &str) -> usize {
    s.chars().fold(0, |col, c| col + char_cells(c, col))
}

/// What kind of character `c` is, for moving and deleting by words.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Space,
    Punct,
    Word,
}

fn kind(c: char) -> Kind {
    if c.is_whitespace() {
        Kind::Space
    } else if c != '_' && c.is_ascii_punctuation() {
        Kind::Punct
    } else {
        Kind::Word
    }
}

/// The start of the next word of `line` after byte `at`, if the line has one.
fn word_start_forward(line: &str, at: usize) -> Option<usize> {
    let mut chars = line.get(at..)?.char_indices();
    let mut prev = kind(chars.next()?.1);
    for (i, c) in chars {
        let k = kind(c);
        if k != Kind::Space && k != prev {
            return Some(at + i);
        }
        prev = k;
    }
    None
}

/// The end of the word of `line` at or after byte `at`, if the line has one.
fn word_end_forward(line: &str, at: usize) -> Option<usize> {
    let mut chars = line.get(at..)?.char_indices();
    let mut prev = kind(chars.next()?.1);
    for (i, c) in chars {
        let k = kind(c);
        if prev != Kind::Space && k != prev {
            return Some(at + i);
        }
        prev = k;
    }
    None
}

/// The start of the word of `line` before byte `at`, if there is one before it.
fn word_start_backward(line: &str, at: usize) -> Option<usize> {
    let before = line.get(..at)?;
    let mut chars = before.char_indices().rev();
    let (mut start, c) = chars.next()?;
    let mut cur = kind(c);
    for (i, c) in chars {
        let k = kind(c);
        if cur != Kind::Space && k != cur {
            return Some(start);
        }
        cur = k;
        start = i;
    }
    (cur != Kind::Space).then_some(0)
}

/// The byte offset of `line` whose cell column is the last at or before `goal`.
fn col_at_cells(line: &str, goal: usize) -> usize {
    let mut col = 0;
    for (i, c) in line.char_indices() {
        let w = char_cells(c, col);
        if col + w > goal {
            return i;
        }
        col += w;
    }
    line.len()
}

/// The text of the Tools pane, being edited.
#[derive(Debug)]
pub struct CodeEditor {
    lines: Vec<String>,
    cursor: Pos,
    /// Where the selection started: the selection runs from it to the cursor.
    anchor: Option<Pos>,
    /// The cell column that moving up and down aims at.
    goal: Option<usize>,
    undo: VecDeque<Edit>,
    redo: Vec<Edit>,
    /// The text the undo steps hold.
    history_bytes: usize,
    /// The number of the text's state now, and the last number given.
    state: u64,
    last_state: u64,
    /// This editor's own number, so that a cache of its lines cannot take another's for it.
    id: u64,
    /// Changes made to the lines so far (every edit, undo and redo is one), and the first line
    /// each of the last [`TOUCHED`] touched.
    changes: u64,
    touched: VecDeque<usize>,
    /// The first line and the first cell column shown, as last drawn or scrolled.
    top: Cell<(usize, usize)>,
    /// The rows and the text's columns shown when last drawn.
    shown: Cell<(usize, usize)>,
}

impl Default for CodeEditor {
    fn default() -> Self {
        CodeEditor::new("")
    }
}

impl CodeEditor {
    /// An editor holding `text` (lines split at `\n`), the cursor at its start.
    pub fn new(text: &str) -> CodeEditor {
        CodeEditor {
            lines: text.split('\n').map(str::to_string).collect(),
            cursor: Pos::default(),
            anchor: None,
            goal: None,
            undo: VecDeque::new(),
            redo: Vec::new(),
            history_bytes: 0,
            state: 0,
            last_state: 0,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            changes: 0,
            touched: VecDeque::new(),
            top: Cell::new((0, 0)),
            shown: Cell::new((0, 0)),
        }
    }

    /// Replaces the whole text (a file was loaded): the history starts again, the text gets a
    /// state number it never had, and the editor a new [`CodeEditor::id`].
    pub fn set_text(&mut self, text: &str) {
        let last = self.last_state + 1;
        *self = CodeEditor::new(text);
        self.state = last;
        self.last_state = last;
    }

    /// The lines of the text (at least one).
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The text, lines joined by newlines.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    pub fn cursor(&self) -> Pos {
        self.cursor
    }

    /// The number of the text's state: it changes with every edit, and undo and redo bring
    /// back the number the text had.
    pub fn state(&self) -> u64 {
        self.state
    }

    /// This editor's number (a new one after [`CodeEditor::set_text`]), unique in the process.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// How many changes the lines have had (edits, undos and redos).
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The first line that may differ from the lines after the `since`-th change (the number of
    /// lines when none does), or `None` when that is not known any more: then any line may.
    /// This lets a cache of something per line (the highlighting) keep what is above an edit
    /// without comparing every line.
    pub fn first_change_since(&self, since: u64) -> Option<usize> {
        let n = usize::try_from(self.changes.checked_sub(since)?).ok()?;
        if n == 0 {
            return Some(self.lines.len());
        }
        if n > self.touched.len() {
            return None;
        }
        self.touched.iter().rev().take(n).min().copied()
    }

    /// The selected range (start before end), if something is selected.
    pub fn selection(&self) -> Option<(Pos, Pos)> {
        let a = self.anchor?;
        match a.cmp(&self.cursor) {
            std::cmp::Ordering::Less => Some((a, self.cursor)),
            std::cmp::Ordering::Greater => Some((self.cursor, a)),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// `p` moved into the text: an existing line, a character boundary of it.
    fn clamp(&self, p: Pos) -> Pos {
        let row = p.row.min(self.lines.len().saturating_sub(1));
        let line = self.lines.get(row).map_or("", String::as_str);
        let mut col = p.col.min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        Pos { row, col }
    }

    fn line(&self, row: usize) -> &str {
        self.lines.get(row).map_or("", String::as_str)
    }

    /// Puts the cursor at `p` (clamped into the text), dropping the selection.
    pub fn set_cursor(&mut self, p: Pos) {
        self.cursor = self.clamp(p);
        self.anchor = None;
        self.goal = None;
    }

    /// The text from `a` to `b` (`a` before `b`).
    fn text_between(&self, a: Pos, b: Pos) -> String {
        if a.row == b.row {
            return self.line(a.row)[a.col..b.col].to_string();
        }
        let mut out = self.line(a.row)[a.col..].to_string();
        for row in a.row + 1..b.row {
            out.push('\n');
            out.push_str(self.line(row));
        }
        out.push('\n');
        out.push_str(&self.line(b.row)[..b.col]);
        out
    }

    /// Where a text ends when it is put at `at`.
    fn end_of(at: Pos, text: &str) -> Pos {
        match text.rfind('\n') {
            None => Pos::new(at.row, at.col + text.len()),
            Some(i) => Pos::new(at.row + text.matches('\n').count(), text.len() - i - 1),
        }
    }

    /// Replaces the text from `a` to `b` (valid, `a` before `b`) by `text`; returns where it
    /// ends. Only the lines from `a` to `b` are touched (and moved, when lines come or go).
    fn splice(&mut self, a: Pos, b: Pos, text: &str) -> Pos {
        self.changes += 1;
        self.touched.push_back(a.row);
        if self.touched.len() > TOUCHED {
            self.touched.pop_front();
        }
        if a.row == b.row && !text.contains('\n') {
            if let Some(line) = self.lines.get_mut(a.row) {
                line.replace_range(a.col..b.col, text);
            }
            return Pos::new(a.row, a.col + text.len());
        }
        let tail = self.line(b.row)[b.col..].to_string();
        let mut pieces = text.split('\n');
        let first = pieces.next().unwrap_or("");
        let mut rest: Vec<String> = pieces.map(str::to_string).collect();
        let Some(line) = self.lines.get_mut(a.row) else {
            return a;
        };
        line.truncate(a.col);
        line.push_str(first);
        let added = rest.len();
        let end = match rest.last_mut() {
            None => {
                let end = Pos::new(a.row, line.len());
                line.push_str(&tail);
                end
            }
            Some(last) => {
                let end = Pos::new(a.row + added, last.len());
                last.push_str(&tail);
                end
            }
        };
        let rows = (a.row + 1)..(b.row + 1).min(self.lines.len());
        self.lines.splice(rows, rest.drain(..));
        end
    }

    /// Replaces the text from `a` to `b` by `text` as one undo step, the cursor after it.
    fn replace(&mut self, a: Pos, b: Pos, text: &str) -> bool {
        let (a, b) = (self.clamp(a), self.clamp(b));
        let (a, b) = if a <= b { (a, b) } else { (b, a) };
        if a == b && text.is_empty() {
            return false;
        }
        let removed = self.text_between(a, b);
        let end = self.splice(a, b, text);
        self.last_state += 1;
        let edit = Edit {
            at: a,
            removed,
            inserted: text.to_string(),
            cursor_before: self.cursor,
            cursor_after: end,
            state_before: self.state,
            state_after: self.last_state,
        };
        self.state = self.last_state;
        self.cursor = end;
        self.anchor = None;
        self.goal = None;
        self.redo.clear();
        self.history_bytes += edit.bytes();
        // Typing goes back a word at a time: a character typed right after the last one joins
        // its undo step, unless it starts a new word after a space or a line ends.
        if let Some(last) = self.undo.back_mut()
            && joins_typing(last, &edit)
        {
            last.inserted.push_str(&edit.inserted);
            last.cursor_after = edit.cursor_after;
            last.state_after = edit.state_after;
            return true;
        }
        self.undo.push_back(edit);
        while self.undo.len() > HISTORY_STEPS
            || (self.history_bytes > HISTORY_BYTES && self.undo.len() > 1)
        {
            if let Some(old) = self.undo.pop_front() {
                self.history_bytes -= old.bytes();
            }
        }
        true
    }

    /// Replaces the selection (or inserts at the cursor) by `text`.
    fn put(&mut self, text: &str) -> bool {
        let (a, b) = self.selection().unwrap_or((self.cursor, self.cursor));
        self.replace(a, b, text)
    }

    /// Deletes the selection, if there is one.
    fn delete_selection(&mut self) -> Option<bool> {
        let (a, b) = self.selection()?;
        Some(self.replace(a, b, ""))
    }

    /// Inserts `text` (a paste) at the cursor, in place of the selection; `\r\n` becomes `\n`.
    pub fn insert_str(&mut self, text: &str) -> bool {
        if text.contains('\r') {
            self.put(&text.replace("\r\n", "\n"))
        } else {
            self.put(text)
        }
    }

    /// Takes back the last edit.
    pub fn undo(&mut self) -> bool {
        let Some(e) = self.undo.pop_back() else {
            return false;
        };
        self.history_bytes -= e.bytes();
        let end = self.clamp(Self::end_of(e.at, &e.inserted));
        self.splice(e.at, end, &e.removed);
        self.cursor = self.clamp(e.cursor_before);
        self.state = e.state_before;
        self.anchor = None;
        self.goal = None;
        self.redo.push(e);
        true
    }

    /// Makes the last edit taken back again.
    pub fn redo(&mut self) -> bool {
        let Some(e) = self.redo.pop() else {
            return false;
        };
        let end = self.clamp(Self::end_of(e.at, &e.removed));
        self.splice(e.at, end, &e.inserted);
        self.cursor = self.clamp(e.cursor_after);
        self.state = e.state_after;
        self.anchor = None;
        self.goal = None;
        self.history_bytes += e.bytes();
        self.undo.push_back(e);
        true
    }

    /// The position before the cursor's character (the end of the line above at a line's
    /// start), if any.
    fn before(&self, p: Pos) -> Option<Pos> {
        if p.col > 0 {
            let c = self.line(p.row)[..p.col].chars().next_back()?;
            Some(Pos::new(p.row, p.col - c.len_utf8()))
        } else if p.row > 0 {
            Some(Pos::new(p.row - 1, self.line(p.row - 1).len()))
        } else {
            None
        }
    }

    /// The position after the cursor's character (the start of the next line at a line's
    /// end), if any.
    fn after(&self, p: Pos) -> Option<Pos> {
        let line = self.line(p.row);
        if let Some(c) = line[p.col..].chars().next() {
            Some(Pos::new(p.row, p.col + c.len_utf8()))
        } else if p.row + 1 < self.lines.len() {
            Some(Pos::new(p.row + 1, 0))
        } else {
            None
        }
    }

    /// Backspace: the selection, or the character before the cursor (joining lines at a line's
    /// start).
    fn delete_back(&mut self) -> bool {
        if let Some(done) = self.delete_selection() {
            return done;
        }
        match self.before(self.cursor) {
            Some(p) => self.replace(p, self.cursor, ""),
            None => false,
        }
    }

    /// Delete: the selection, or the character at the cursor (joining lines at a line's end).
    fn delete_forward(&mut self) -> bool {
        if let Some(done) = self.delete_selection() {
            return done;
        }
        match self.after(self.cursor) {
            Some(p) => self.replace(self.cursor, p, ""),
            None => false,
        }
    }

    /// The rest of the line (or the line break at its end).
    fn delete_to_end(&mut self) -> bool {
        if let Some(done) = self.delete_selection() {
            return done;
        }
        let end = self.line(self.cursor.row).len();
        if self.cursor.col < end {
            self.replace(self.cursor, Pos::new(self.cursor.row, end), "")
        } else {
            self.delete_forward()
        }
    }

    /// The line up to the cursor (or the line break before it).
    fn delete_to_head(&mut self) -> bool {
        if let Some(done) = self.delete_selection() {
            return done;
        }
        if self.cursor.col > 0 {
            self.replace(Pos::new(self.cursor.row, 0), self.cursor, "")
        } else {
            self.delete_back()
        }
    }

    /// The word before the cursor.
    fn delete_word_back(&mut self) -> bool {
        if let Some(done) = self.delete_selection() {
            return done;
        }
        let Pos { row, col } = self.cursor;
        match word_start_backward(self.line(row), col) {
            Some(start) => self.replace(Pos::new(row, start), self.cursor, ""),
            None if col > 0 => self.replace(Pos::new(row, 0), self.cursor, ""),
            None => self.delete_back(),
        }
    }

    /// The word at or after the cursor.
    fn delete_word_forward(&mut self) -> bool {
        if let Some(done) = self.delete_selection() {
            return done;
        }
        let Pos { row, col } = self.cursor;
        let line = self.line(row);
        match word_end_forward(line, col) {
            Some(end) => self.replace(self.cursor, Pos::new(row, end), ""),
            None if col < line.len() => self.replace(self.cursor, Pos::new(row, line.len()), ""),
            None => self.delete_forward(),
        }
    }

    /// Inserts spaces up to the next tab stop.
    fn insert_tab(&mut self) -> bool {
        let from = self.selection().map_or(self.cursor, |(a, _)| a);
        let col = cells(&self.line(from.row)[..from.col]);
        self.put(&" ".repeat(TAB - col % TAB))
    }

    /// The cursor's cell column.
    fn cursor_cells(&self) -> usize {
        cells(&self.line(self.cursor.row)[..self.cursor.col])
    }

    /// The cursor on line `row` (clamped) at the column up and down aim at.
    fn go_to_row(&mut self, row: usize) {
        let goal = self.goal.unwrap_or_else(|| self.cursor_cells());
        let row = row.min(self.lines.len().saturating_sub(1));
        self.cursor = Pos::new(row, col_at_cells(self.line(row), goal));
        self.goal = Some(goal);
    }

    /// Moves the cursor; with `select`, the selection runs from where it was.
    pub fn move_cursor(&mut self, m: Move, select: bool) {
        if select {
            self.anchor.get_or_insert(self.cursor);
        } else {
            self.anchor = None;
        }
        let Pos { row, col } = self.cursor;
        let last = self.lines.len().saturating_sub(1);
        let page = self.shown.get().0.max(1);
        let to = match m {
            Move::Up => {
                if row > 0 {
                    self.go_to_row(row - 1);
                }
                return;
            }
            Move::Down => {
                if row < last {
                    self.go_to_row(row + 1);
                }
                return;
            }
            Move::PageDown | Move::PageUp => {
                let (top, left) = self.top.get();
                let (top, row) = if m == Move::PageDown {
                    ((top + page).min(last), (row + page).min(last))
                } else {
                    (top.saturating_sub(page), row.saturating_sub(page))
                };
                self.top.set((top, left));
                self.go_to_row(row);
                return;
            }
            Move::Forward => self.after(self.cursor),
            Move::Back => self.before(self.cursor),
            Move::Head => Some(Pos::new(row, 0)),
            Move::End => Some(Pos::new(row, self.line(row).len())),
            Move::Top => Some(Pos::new(0, 0)),
            Move::Bottom => Some(Pos::new(last, self.line(last).len())),
            Move::WordForward => Some(match word_start_forward(self.line(row), col) {
                Some(c) => Pos::new(row, c),
                None if row < last => Pos::new(row + 1, 0),
                None => Pos::new(row, self.line(row).len()),
            }),
            Move::WordBack => Some(match word_start_backward(self.line(row), col) {
                Some(c) => Pos::new(row, c),
                None if row > 0 => Pos::new(row - 1, self.line(row - 1).len()),
                None => Pos::new(row, 0),
            }),
            Move::ParagraphForward => {
                let blank = |r: usize| self.line(r).trim().is_empty();
                let r = (row + 1..=last)
                    .find(|&r| r > 0 && !blank(r) && blank(r - 1))
                    .unwrap_or(last);
                Some(Pos::new(r, 0))
            }
            Move::ParagraphBack => {
                let blank = |r: usize| self.line(r).trim().is_empty();
                let r = (0..row)
                    .rev()
                    .find(|&r| !blank(r) && (r == 0 || blank(r - 1)))
                    .unwrap_or(0);
                Some(Pos::new(r, 0))
            }
        };
        if let Some(p) = to {
            self.cursor = self.clamp(p);
        }
        self.goal = None;
    }

    /// A click at line `row` (clamped to the text), cell column `cell`: the cursor goes to the
    /// character drawn there, or the line's end past it; a selection is dropped.
    pub fn click(&mut self, row: usize, cell: usize) {
        let row = row.min(self.lines.len().saturating_sub(1));
        let col = col_at_cells(self.line(row), cell);
        self.anchor = None;
        self.goal = None;
        self.cursor = self.clamp(Pos::new(row, col));
    }

    /// Scrolls the view by `rows` (the mouse wheel); the cursor stays in view.
    pub fn scroll(&mut self, rows: isize) {
        let last = self.lines.len().saturating_sub(1);
        let (top, left) = self.top.get();
        let top = top.saturating_add_signed(rows).min(last);
        self.top.set((top, left));
        let height = self.shown.get().0.max(1);
        let row = self.cursor.row.clamp(top, top + height - 1);
        if row != self.cursor.row {
            self.anchor = None;
            self.go_to_row(row);
        }
    }

    /// The first line and the first cell column to show in `height` rows of `width` cells so
    /// that the cursor is in view, moving the view as little as it must (and remembered).
    pub fn viewport(&self, height: usize, width: usize) -> (usize, usize) {
        let (mut top, mut left) = self.top.get();
        let last = self.lines.len().saturating_sub(1);
        let height = height.max(1);
        top = top.min(last);
        if self.cursor.row < top {
            top = self.cursor.row;
        } else if self.cursor.row >= top + height {
            top = self.cursor.row + 1 - height;
        }
        let line = self.line(self.cursor.row);
        let x = cells(&line[..self.cursor.col]);
        let w = line[self.cursor.col..]
            .chars()
            .next()
            .map_or(1, |c| char_cells(c, x).max(1));
        // One cell at the right is kept for the mark of a line that goes on.
        let room = if width > 2 { width - 1 } else { width.max(1) };
        if x < left {
            // Back to the start of the line when the cursor fits there.
            left = if x + w <= room { 0 } else { x };
        } else if x + w > left + room {
            left = (x + w).saturating_sub(room);
        }
        self.top.set((top, left));
        self.shown.set((height, width));
        (top, left)
    }

    /// Handles a key; whether the text changed.
    pub fn input(&mut self, key: KeyEvent) -> bool {
        if key.kind == KeyEventKind::Release {
            return false;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        let letter = match key.code {
            KeyCode::Char(c) => Some(c.to_ascii_lowercase()),
            _ => None,
        };
        let mv = |ed: &mut CodeEditor, m: Move| {
            ed.move_cursor(m, shift);
            false
        };
        match (key.code, ctrl, alt) {
            (_, true, false) if letter == Some('z') => {
                if shift {
                    self.redo()
                } else {
                    self.undo()
                }
            }
            (_, true, false) if letter == Some('y') => self.redo(),
            (_, true, false) if letter == Some('u') => self.delete_to_head(),
            (KeyCode::Enter, _, _) | (KeyCode::Char('\n' | '\r'), false, false) => self.put("\n"),
            (_, true, false) if letter == Some('m') => self.put("\n"),
            (KeyCode::Char(c), false, false) => self.put(c.encode_utf8(&mut [0; 4])),
            (KeyCode::Tab, false, false) => self.insert_tab(),
            (KeyCode::Backspace, false, false) => self.delete_back(),
            (_, true, false) if letter == Some('h') => self.delete_back(),
            (KeyCode::Delete, false, false) => self.delete_forward(),
            (_, true, false) if letter == Some('d') => self.delete_forward(),
            (_, true, false) if letter == Some('k') => self.delete_to_end(),
            (_, true, false) if letter == Some('j') => self.delete_to_head(),
            (_, true, false) if letter == Some('w') => self.delete_word_back(),
            (KeyCode::Backspace, false, true) => self.delete_word_back(),
            (_, false, true) if letter == Some('h') => self.delete_word_back(),
            (KeyCode::Delete, false, true) => self.delete_word_forward(),
            (_, false, true) if letter == Some('d') => self.delete_word_forward(),
            (_, true, false) if letter == Some('x') => self.delete_selection().unwrap_or(false),
            (KeyCode::Down, false, false) => mv(self, Move::Down),
            (KeyCode::Up, false, false) => mv(self, Move::Up),
            (KeyCode::Right, false, false) => mv(self, Move::Forward),
            (KeyCode::Left, false, false) => mv(self, Move::Back),
            (_, true, false) if letter == Some('n') => mv(self, Move::Down),
            (_, true, false) if letter == Some('p') => mv(self, Move::Up),
            (_, true, false) if letter == Some('f') => mv(self, Move::Forward),
            (_, true, false) if letter == Some('b') => mv(self, Move::Back),
            (KeyCode::Home, _, _) => mv(self, Move::Head),
            (_, true, false) if letter == Some('a') => mv(self, Move::Head),
            (KeyCode::Left, true, true) => mv(self, Move::Head),
            (_, true, true) if letter == Some('b') => mv(self, Move::Head),
            (KeyCode::End, _, _) => mv(self, Move::End),
            (_, true, false) if letter == Some('e') => mv(self, Move::End),
            (KeyCode::Right, true, true) => mv(self, Move::End),
            (_, true, true) if letter == Some('f') => mv(self, Move::End),
            (KeyCode::Char('<'), false, true) | (KeyCode::Up, true, true) => mv(self, Move::Top),
            (_, true, true) if letter == Some('p') => mv(self, Move::Top),
            (KeyCode::Char('>'), false, true) | (KeyCode::Down, true, true) => {
                mv(self, Move::Bottom)
            }
            (_, true, true) if letter == Some('n') => mv(self, Move::Bottom),
            (KeyCode::Right, true, false) => mv(self, Move::WordForward),
            (_, false, true) if letter == Some('f') => mv(self, Move::WordForward),
            (KeyCode::Left, true, false) => mv(self, Move::WordBack),
            (_, false, true) if letter == Some('b') => mv(self, Move::WordBack),
            (KeyCode::Down, true, false) | (KeyCode::Char(']'), false, true) => {
                mv(self, Move::ParagraphForward)
            }
            (_, false, true) if letter == Some('n') => mv(self, Move::ParagraphForward),
            (KeyCode::Up, true, false) | (KeyCode::Char('['), false, true) => {
                mv(self, Move::ParagraphBack)
            }
            (_, false, true) if letter == Some('p') => mv(self, Move::ParagraphBack),
            (KeyCode::PageDown, _, _) => mv(self, Move::PageDown),
            (_, true, false) if letter == Some('v') => mv(self, Move::PageDown),
            (KeyCode::PageUp, _, _) => mv(self, Move::PageUp),
            (_, false, true) if letter == Some('v') => mv(self, Move::PageUp),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn with(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn typed(e: &mut CodeEditor, s: &str) {
        for c in s.chars() {
            e.input(key(KeyCode::Char(c)));
        }
    }

    const CTRL: KeyModifiers = KeyModifiers::CONTROL;
    const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

    #[test]
    fn typing_at_line_boundaries_joins_and_splits_lines() {
        let mut e = CodeEditor::new("ab\ncd");
        e.input(key(KeyCode::End));
        e.input(key(KeyCode::Enter));
        typed(&mut e, "x");
        assert_eq!(e.text(), "ab\nx\ncd");
        assert_eq!(e.cursor(), Pos::new(1, 1));
        // Backspace at a line's start joins it to the line above; Delete at a line's end joins
        // the next one.
        e.input(key(KeyCode::Down));
        e.input(key(KeyCode::Home));
        e.input(key(KeyCode::Backspace));
        assert_eq!(e.text(), "ab\nxcd");
        assert_eq!(e.cursor(), Pos::new(1, 1));
        e.input(key(KeyCode::Up));
        e.input(key(KeyCode::End));
        e.input(key(KeyCode::Delete));
        assert_eq!(e.text(), "abxcd");
        // At the very start and end nothing is deleted.
        e.input(with(KeyCode::Char('<'), KeyModifiers::ALT));
        assert!(!e.input(key(KeyCode::Backspace)));
        e.input(with(KeyCode::Char('>'), KeyModifiers::ALT));
        assert!(!e.input(key(KeyCode::Delete)));
        // Right at a line's end goes to the next line; Left at its start to the one above.
        let mut e = CodeEditor::new("a\nb");
        e.input(key(KeyCode::Right));
        e.input(key(KeyCode::Right));
        assert_eq!(e.cursor(), Pos::new(1, 0));
        e.input(key(KeyCode::Left));
        assert_eq!(e.cursor(), Pos::new(0, 1));
    }

    #[test]
    fn undo_and_redo_restore_the_text_the_cursor_and_the_state() {
        let mut e = CodeEditor::new("[\n  1\n]");
        let start = e.state();
        e.input(key(KeyCode::Down));
        e.input(key(KeyCode::End));
        typed(&mut e, ",");
        e.input(key(KeyCode::Enter));
        typed(&mut e, "  2");
        assert_eq!(e.text(), "[\n  1,\n  2\n]");
        let edited = e.state();
        assert_ne!(edited, start);
        // One undo step per edit (typing a word at a time: `,`, the line break, the indent,
        // `2`), back to the start.
        for _ in 0..4 {
            assert!(e.input(with(KeyCode::Char('z'), CTRL)));
        }
        assert_eq!(e.text(), "[\n  1\n]");
        assert_eq!(e.state(), start, "undone back to the start: not edited");
        assert_eq!(e.cursor(), Pos::new(1, 3));
        assert!(!e.undo(), "nothing more to undo");
        // Redo all of it (Ctrl+Y, Ctrl+Shift+Z).
        assert!(e.input(with(KeyCode::Char('y'), CTRL)));
        assert!(e.input(with(KeyCode::Char('Z'), CTRL | SHIFT)));
        while e.redo() {}
        assert_eq!(e.text(), "[\n  1,\n  2\n]");
        assert_eq!(e.state(), edited);
        assert_eq!(e.cursor(), Pos::new(2, 3));
        // A new edit after an undo drops what could be redone, and has a new state.
        e.undo();
        typed(&mut e, "3");
        assert!(!e.redo());
        assert_eq!(e.text(), "[\n  1,\n  3\n]");
        assert_ne!(e.state(), edited);
        assert_ne!(e.state(), start);
    }

    #[test]
    fn undo_takes_typing_back_a_word_at_a_time() {
        let mut e = CodeEditor::new("");
        typed(&mut e, "hello brave world");
        assert!(e.undo());
        assert_eq!(e.text(), "hello brave ");
        assert!(e.undo());
        assert_eq!(e.text(), "hello ");
        assert!(e.redo());
        assert_eq!(e.text(), "hello brave ");
        assert!(e.undo() && e.undo());
        assert_eq!(e.text(), "");
        // Typing elsewhere, a deletion or a line break starts a new step.
        let mut e = CodeEditor::new("ab");
        typed(&mut e, "xy");
        e.input(key(KeyCode::End));
        typed(&mut e, "zz");
        e.input(key(KeyCode::Backspace));
        typed(&mut e, "w");
        e.input(key(KeyCode::Enter));
        typed(&mut e, "v");
        assert_eq!(e.text(), "xyabzw\nv");
        let mut seen = vec![e.text()];
        while e.undo() {
            seen.push(e.text());
        }
        assert_eq!(
            seen,
            [
                "xyabzw\nv",
                "xyabzw\n",
                "xyabzw",
                "xyabz",
                "xyabzz",
                "xyab",
                "ab"
            ]
        );
    }

    #[test]
    fn the_first_changed_line_is_known_for_the_last_changes() {
        let text: Vec<String> = (0..10).map(|i| i.to_string()).collect();
        let mut e = CodeEditor::new(&text.join("\n"));
        assert_eq!(e.first_change_since(0), Some(10), "no change yet");
        e.set_cursor(Pos::new(7, 0));
        typed(&mut e, "x");
        e.set_cursor(Pos::new(3, 1));
        e.input(key(KeyCode::Enter));
        assert_eq!(e.changes(), 2);
        assert_eq!(e.first_change_since(1), Some(3));
        assert_eq!(e.first_change_since(0), Some(3));
        e.undo();
        assert_eq!(e.first_change_since(2), Some(3), "an undo is a change too");
        assert_eq!(e.first_change_since(99), None, "a count it never had");
        for _ in 0..TOUCHED {
            e.set_cursor(Pos::new(9, 0));
            typed(&mut e, "y");
        }
        assert_eq!(e.first_change_since(3), Some(9));
        assert_eq!(e.first_change_since(2), None, "forgotten");
        let id = e.id();
        e.set_text("new");
        assert_ne!(e.id(), id, "a new text is another editor's");
    }

    #[test]
    fn multibyte_characters_are_edited_whole() {
        let mut e = CodeEditor::new("\"é日本🙂\"");
        e.input(key(KeyCode::End));
        e.input(key(KeyCode::Left));
        e.input(key(KeyCode::Backspace));
        assert_eq!(e.text(), "\"é日本\"");
        e.input(key(KeyCode::Left));
        e.input(key(KeyCode::Delete));
        assert_eq!(e.text(), "\"é日\"");
        typed(&mut e, "ü");
        assert_eq!(e.text(), "\"é日ü\"");
        e.undo();
        e.undo();
        e.undo();
        assert_eq!(e.text(), "\"é日本🙂\"");
        // Up and down keep the cell column: a wide character takes two.
        let mut e = CodeEditor::new("日本語\nabcdef\nab");
        e.input(key(KeyCode::Right));
        e.input(key(KeyCode::Right));
        e.input(key(KeyCode::Down));
        assert_eq!(e.cursor(), Pos::new(1, 4));
        e.input(key(KeyCode::Down));
        assert_eq!(e.cursor(), Pos::new(2, 2), "at the end of a short line");
        e.input(key(KeyCode::Up));
        assert_eq!(e.cursor(), Pos::new(1, 4), "back at the column it aimed at");
        e.input(key(KeyCode::Right));
        e.input(key(KeyCode::Up));
        assert_eq!(e.cursor(), Pos::new(0, 6), "inside a wide char: before it");
        // Positions from outside are clamped to a character boundary.
        e.set_cursor(Pos::new(9, 99));
        assert_eq!(e.cursor(), Pos::new(2, 2));
        e.set_cursor(Pos::new(0, 1));
        assert_eq!(e.cursor(), Pos::new(0, 0));
    }

    #[test]
    fn a_selection_is_replaced_deleted_and_undone_in_one_step() {
        let mut e = CodeEditor::new("one\ntwo\nthree");
        e.input(key(KeyCode::Right));
        e.input(with(KeyCode::Down, SHIFT));
        e.input(with(KeyCode::Right, SHIFT));
        assert_eq!(e.selection(), Some((Pos::new(0, 1), Pos::new(1, 2))));
        typed(&mut e, "X");
        assert_eq!(e.text(), "oXo\nthree");
        assert_eq!(e.selection(), None);
        e.undo();
        assert_eq!(e.text(), "one\ntwo\nthree");
        // Ctrl+X and Backspace delete a selection; a plain move drops it.
        e.set_cursor(Pos::new(2, 0));
        e.input(with(KeyCode::End, SHIFT));
        e.input(with(KeyCode::Char('x'), CTRL));
        assert_eq!(e.text(), "one\ntwo\n");
        e.input(with(KeyCode::Up, SHIFT));
        e.input(key(KeyCode::Left));
        assert_eq!(e.selection(), None);
        // A paste replaces the selection, `\r\n` read as `\n`.
        e.set_cursor(Pos::new(0, 0));
        e.input(with(KeyCode::Right, SHIFT));
        assert!(e.insert_str("a\r\nb"));
        assert_eq!(e.text(), "a\nbne\ntwo\n");
        e.undo();
        assert_eq!(e.text(), "one\ntwo\n");
    }

    #[test]
    fn words_lines_and_pages() {
        let mut e = CodeEditor::new("  \"name\": \"get_weather\",");
        e.input(with(KeyCode::Right, CTRL));
        assert_eq!(e.cursor(), Pos::new(0, 2));
        e.input(with(KeyCode::Right, CTRL));
        assert_eq!(e.cursor(), Pos::new(0, 3));
        e.input(with(KeyCode::Char('d'), KeyModifiers::ALT));
        assert_eq!(e.text(), "  \"\": \"get_weather\",");
        e.input(key(KeyCode::End));
        e.input(with(KeyCode::Char('w'), CTRL));
        assert_eq!(
            e.text(),
            "  \"\": \"get_weather",
            "a run of punctuation is a word"
        );
        e.input(with(KeyCode::Left, CTRL));
        assert_eq!(e.cursor(), Pos::new(0, 7));
        e.input(with(KeyCode::Char('j'), CTRL));
        assert_eq!(e.text(), "get_weather");
        e.input(with(KeyCode::Char('k'), CTRL));
        assert_eq!(e.text(), "");
        // A page is the rows last shown.
        let text: Vec<String> = (0..100).map(|i| i.to_string()).collect();
        let mut e = CodeEditor::new(&text.join("\n"));
        assert_eq!(e.viewport(10, 20), (0, 0));
        e.input(key(KeyCode::PageDown));
        assert_eq!(e.cursor().row, 10);
        assert_eq!(e.viewport(10, 20), (10, 0));
        e.input(with(KeyCode::PageUp, SHIFT));
        assert_eq!(e.selection(), Some((Pos::new(0, 0), Pos::new(10, 0))));
        // The wheel scrolls, the cursor follows into view.
        e.scroll(50);
        assert_eq!(e.cursor().row, 50);
        assert_eq!(e.viewport(10, 20), (50, 0));
        e.scroll(-1000);
        assert_eq!(e.viewport(10, 20), (0, 0));
        assert_eq!(e.cursor().row, 9);
    }

    #[test]
    fn the_view_follows_the_cursor_along_a_long_line() {
        let mut e = CodeEditor::new(&format!("{}\nshort", "x".repeat(100)));
        e.input(key(KeyCode::End));
        // 20 cells, one kept for the mark of a line that goes on.
        assert_eq!(e.viewport(5, 20), (0, 82));
        e.input(key(KeyCode::Home));
        assert_eq!(e.viewport(5, 20), (0, 0));
        e.set_cursor(Pos::new(0, 90));
        assert_eq!(e.viewport(5, 20), (0, 72));
        e.set_cursor(Pos::new(0, 50));
        assert_eq!(e.viewport(5, 20), (0, 50), "scrolled left to the cursor");
        e.set_cursor(Pos::new(1, 3));
        assert_eq!(
            e.viewport(5, 20),
            (0, 0),
            "the line's start when the cursor fits there"
        );
        // Tabs reach the next stop.
        assert_eq!(cells("\ta\tb"), 5);
        assert_eq!(col_at_cells("\tab", 1), 0);
        assert_eq!(col_at_cells("\tab", 2), 1);
    }

    #[test]
    fn no_key_and_no_text_makes_it_panic() {
        let codes = [
            KeyCode::Char('a'),
            KeyCode::Char('é'),
            KeyCode::Char('\r'),
            KeyCode::Enter,
            KeyCode::Tab,
            KeyCode::Backspace,
            KeyCode::Delete,
            KeyCode::Left,
            KeyCode::Right,
            KeyCode::Up,
            KeyCode::Down,
            KeyCode::Home,
            KeyCode::End,
            KeyCode::PageUp,
            KeyCode::PageDown,
            KeyCode::Char('z'),
            KeyCode::Char('y'),
            KeyCode::Char('x'),
            KeyCode::Char('w'),
            KeyCode::Char('d'),
            KeyCode::Char('k'),
            KeyCode::Char('j'),
            KeyCode::Char('<'),
            KeyCode::Char('>'),
        ];
        let mods = [
            KeyModifiers::NONE,
            SHIFT,
            CTRL,
            KeyModifiers::ALT,
            CTRL | KeyModifiers::ALT,
            CTRL | SHIFT,
        ];
        for text in ["", "\n", "a\n\nb", "日本\t🙂\r\nx"] {
            let mut e = CodeEditor::new(text);
            let mut n = 0u32;
            for _ in 0..3 {
                for &c in &codes {
                    for &m in &mods {
                        e.input(with(c, m));
                        n = n.wrapping_mul(31).wrapping_add(7);
                        e.viewport((n % 7) as usize, (n % 11) as usize);
                        let p = e.cursor();
                        assert!(p.row < e.lines().len());
                        assert!(e.lines()[p.row].is_char_boundary(p.col));
                    }
                }
            }
            while e.undo() {}
            assert_eq!(e.text(), text, "everything undone");
        }
    }
}
