//! The text areas the playground edits (tools JSON, system prompt, messages, tool results,
//! paths), made and styled in one place so that they all behave alike.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::{Modifier, Style};
use ratatui_textarea::TextArea;

use super::theme::Theme;

/// A text area holding `text`, cursor at the start.
pub fn editor(text: &str) -> TextArea<'static> {
    let lines: Vec<String> = if text.is_empty() {
        vec![String::new()]
    } else {
        text.split('\n').map(str::to_string).collect()
    };
    let mut t = TextArea::new(lines);
    t.set_tab_length(2);
    t
}

/// A text area for prose (prompts, results): long lines wrap at words instead of scrolling.
pub fn prose(text: &str) -> TextArea<'static> {
    let mut t = editor(text);
    t.set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    t
}

/// Rows `t` takes at `width` cells when its lines wrap at words (an estimate for layout: the
/// text area scrolls if it needs one row more).
pub fn wrapped_rows(t: &TextArea<'_>, width: u16) -> usize {
    let width = width.max(1) as usize;
    t.lines()
        .iter()
        .map(|line| {
            let mut rows = 1;
            let mut used = 0;
            for word in line.split_inclusive(' ') {
                let w = unicode_width::UnicodeWidthStr::width(word);
                if used + w > width && used > 0 {
                    rows += 1;
                    used = 0;
                }
                used += w;
                while used > width {
                    rows += 1;
                    used -= width;
                }
            }
            rows
        })
        .sum()
}

/// The text of a text area, lines joined by newlines.
pub fn text_of(t: &TextArea<'_>) -> String {
    t.lines().join("\n")
}

/// Styles a text area for the theme; only a focused one shows its cursor.
pub fn style(t: &mut TextArea<'_>, theme: &Theme, focused: bool) {
    let base = Style::default().fg(theme.ui.text);
    t.set_style(base);
    t.set_cursor_line_style(Style::default());
    t.set_selection_style(
        Style::default()
            .fg(theme.ui.selection_fg)
            .bg(theme.ui.selection_bg),
    );
    t.set_placeholder_style(Style::default().fg(theme.ui.muted));
    if focused {
        t.set_cursor_style(base.add_modifier(Modifier::REVERSED));
    } else {
        t.set_cursor_style(base);
    }
}

fn is_ctrl(key: &KeyEvent, c: char) -> bool {
    key.modifiers.contains(KeyModifiers::CONTROL)
        && matches!(key.code, KeyCode::Char(k) if k.eq_ignore_ascii_case(&c))
}

/// Ctrl+Z (undo) and Ctrl+Y or Ctrl+Shift+Z (redo) in a text area, and Ctrl+U as readline has
/// it (clear to the start of the line; the text area's own Ctrl+U would undo); whether the
/// text changed. `None`: the key is the text area's.
pub fn undo_redo(t: &mut ratatui_textarea::TextArea<'_>, key: &KeyEvent) -> Option<bool> {
    if is_ctrl(key, 'u') && !key.modifiers.contains(KeyModifiers::ALT) {
        Some(t.delete_line_by_head())
    } else if is_ctrl(key, 'z') && !key.modifiers.contains(KeyModifiers::SHIFT) {
        Some(undo_word(t))
    } else if is_ctrl(key, 'y')
        || (is_ctrl(key, 'z') && key.modifiers.contains(KeyModifiers::SHIFT))
    {
        Some(redo_word(t))
    } else {
        None
    }
}

/// The character one undo step of a text area took away, if it took away exactly one character
/// typed before the cursor (on the same row, nothing else changed).
fn typed_char_undone(before: &[String], after: &TextArea<'_>) -> Option<char> {
    let ratatui_textarea::DataCursor(row, col) = after.cursor();
    let now = after.lines();
    if now.len() != before.len() || before.iter().zip(now).filter(|(a, b)| a != b).count() != 1 {
        return None;
    }
    let (was, is) = (before.get(row)?, now.get(row)?);
    let mut chars = was.chars();
    let head: String = chars.by_ref().take(col).collect();
    let c = chars.next()?;
    let rest: String = chars.collect();
    (format!("{head}{rest}") == *is).then_some(c)
}

/// Ctrl+Z in a text area: takes typing back a word at a time (the word and the spaces typed
/// after it), not a character at a time; any other edit is one step. Whether the text changed.
pub fn undo_word(t: &mut TextArea<'_>) -> bool {
    let before = t.lines().to_vec();
    if !t.undo() {
        return false;
    }
    let Some(mut last) = typed_char_undone(&before, t) else {
        return true;
    };
    loop {
        let before = t.lines().to_vec();
        let ratatui_textarea::DataCursor(row, col) = t.cursor();
        if !t.undo() {
            return true;
        }
        let joined = typed_char_undone(&before, t).filter(|c| {
            // Right before the last one, and not the end of a word before its spaces.
            t.cursor().0 == row
                && t.cursor().1 + 1 == col
                && (!c.is_whitespace() || last.is_whitespace())
        });
        match joined {
            Some(c) => last = c,
            None => {
                t.redo();
                return true;
            }
        }
    }
}

/// The character one redo step of a text area put back, if it put back exactly one character
/// right before the cursor (on the same row, nothing else changed).
fn typed_char_redone(before: &[String], after: &TextArea<'_>) -> Option<char> {
    let ratatui_textarea::DataCursor(row, col) = after.cursor();
    let now = after.lines();
    if now.len() != before.len() || before.iter().zip(now).filter(|(a, b)| a != b).count() != 1 {
        return None;
    }
    let (was, is) = (before.get(row)?, now.get(row)?);
    let mut chars = is.chars();
    let head: String = chars.by_ref().take(col.checked_sub(1)?).collect();
    let c = chars.next()?;
    let rest: String = chars.collect();
    (format!("{head}{rest}") == *was).then_some(c)
}

/// Ctrl+Y in a text area: puts typing back as Ctrl+Z took it, a word (and the spaces after it)
/// at a time. Whether the text changed.
pub fn redo_word(t: &mut TextArea<'_>) -> bool {
    let before = t.lines().to_vec();
    if !t.redo() {
        return false;
    }
    let Some(mut last) = typed_char_redone(&before, t) else {
        return true;
    };
    loop {
        let before = t.lines().to_vec();
        let ratatui_textarea::DataCursor(row, col) = t.cursor();
        if !t.redo() {
            return true;
        }
        let joined = typed_char_redone(&before, t).filter(|c| {
            // Right after the last one, and not a new word after the spaces.
            t.cursor().0 == row
                && t.cursor().1 == col + 1
                && (c.is_whitespace() || !last.is_whitespace())
        });
        match joined {
            Some(c) => last = c,
            None => {
                t.undo();
                return true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_takes_typing_back_a_word_at_a_time() {
        let mut t = prose("");
        for c in "hello brave world".chars() {
            t.insert_char(c);
        }
        assert!(undo_word(&mut t));
        assert_eq!(text_of(&t), "hello brave ");
        assert!(undo_word(&mut t));
        assert_eq!(text_of(&t), "hello ");
        assert!(redo_word(&mut t));
        assert_eq!(text_of(&t), "hello brave ");
        assert!(undo_word(&mut t));
        assert_eq!(text_of(&t), "hello ");
        assert!(undo_word(&mut t));
        assert_eq!(text_of(&t), "");
        assert!(redo_word(&mut t) && redo_word(&mut t) && redo_word(&mut t));
        assert_eq!(text_of(&t), "hello brave world");
        assert!(!redo_word(&mut t), "nothing left to redo");
        assert!(undo_word(&mut t) && undo_word(&mut t) && undo_word(&mut t));
        assert!(!undo_word(&mut t), "nothing left");
        // A paste or a deletion is a step of its own; typing elsewhere starts a new one.
        let mut t = prose("");
        t.insert_str("pasted text");
        for c in "ab".chars() {
            t.insert_char(c);
        }
        t.delete_char();
        t.move_cursor(ratatui_textarea::CursorMove::Head);
        t.insert_char('x');
        assert_eq!(text_of(&t), "xpasted texta");
        let mut seen = vec![text_of(&t)];
        while undo_word(&mut t) {
            seen.push(text_of(&t));
        }
        assert_eq!(
            seen,
            [
                "xpasted texta",
                "pasted texta",
                "pasted textab",
                "pasted text",
                ""
            ]
        );
    }
}
