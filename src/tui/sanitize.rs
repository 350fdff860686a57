//! The last line of defence: after a frame is drawn, no cell may hold a character that a
//! terminal would take as control. Panes already draw model output through visible glyphs; this
//! also covers text that reaches the buffer another way (an edited file with an escape in it,
//! a widget that draws its text itself).

use ratatui::buffer::Buffer;

use crate::app::glyph::{Glyph, is_unsafe};

/// Replaces every unsafe character in `buf` with its visible stand-in.
pub fn buffer(buf: &mut Buffer) {
    for cell in buf.content.iter_mut() {
        let symbol = cell.symbol();
        // Nearly every cell is one ASCII printable byte: check that first.
        if symbol.len() == 1 && (0x20..0x7f).contains(&symbol.as_bytes()[0]) {
            continue;
        }
        if symbol.chars().any(is_unsafe) {
            let clean: String = symbol
                .chars()
                .map(|c| match Glyph::of(c) {
                    Glyph::Plain(c) | Glyph::Escaped(c) => c,
                    Glyph::Tab => ' ',
                })
                .collect();
            cell.set_symbol(&clean);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    #[test]
    fn control_characters_never_stay_in_a_cell() {
        let mut buf = Buffer::empty(Rect::new(0, 0, 4, 1));
        buf[(0, 0)].set_symbol("\u{1b}");
        buf[(1, 0)].set_symbol("a");
        buf[(2, 0)].set_symbol("\u{9b}");
        buf[(3, 0)].set_symbol("e\u{301}");
        buffer(&mut buf);
        let symbols: Vec<&str> = buf.content.iter().map(|c| c.symbol()).collect();
        assert_eq!(symbols, ["␛", "a", "\u{fffd}", "e\u{301}"]);
    }
}
