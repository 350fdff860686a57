//! How one character of model output appears on screen.
//!
//! Model output is shown as text, never as terminal control: an escape character must not reach
//! the terminal, where it could move the cursor, change colours or retitle the window. Control
//! characters become their Unicode control pictures (`␛` for ESC), invisible format characters
//! that reorder or hide text (bidi overrides, zero-width spaces) become `⍰`, and a tab becomes
//! spaces. Everything that measures or draws text uses this one mapping, so that wrapping and
//! drawing agree on widths.

use unicode_width::UnicodeWidthChar;

/// What a character looks like on screen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Glyph {
    /// Drawn as itself.
    Plain(char),
    /// A stand-in for a character that must not be drawn as itself (shown in the escape colour).
    Escaped(char),
    /// A tab, drawn as this many spaces.
    Tab,
}

/// Cells a tab takes.
pub const TAB_WIDTH: usize = 4;

impl Glyph {
    pub fn of(c: char) -> Glyph {
        match c {
            '\t' => Glyph::Tab,
            '\u{0}'..='\u{1f}' => {
                Glyph::Escaped(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'))
            }
            '\u{7f}' => Glyph::Escaped('␡'),
            '\u{80}'..='\u{9f}' => Glyph::Escaped('\u{fffd}'),
            '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}' => Glyph::Escaped('⍰'),
            _ => Glyph::Plain(c),
        }
    }

    /// Cells taken on screen. A zero-width character (a combining mark) joins the one before.
    pub fn width(self) -> usize {
        match self {
            Glyph::Plain(c) => c.width().unwrap_or(0),
            Glyph::Escaped(_) => 1,
            Glyph::Tab => TAB_WIDTH,
        }
    }
}

/// `text` with every character that must not reach the terminal replaced by its stand-in (for
/// short labels; long texts are drawn glyph by glyph).
pub fn visible(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match Glyph::of(c) {
            Glyph::Plain(c) | Glyph::Escaped(c) => out.push(c),
            Glyph::Tab => out.push_str(&" ".repeat(TAB_WIDTH)),
        }
    }
    out
}

/// Whether a character drawn as itself could still be a terminal control (the last line of
/// defence checks every cell of a frame with this).
pub fn is_unsafe(c: char) -> bool {
    !matches!(Glyph::of(c), Glyph::Plain(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_become_pictures() {
        let cases = [
            ('\u{1b}', Glyph::Escaped('␛')),
            ('\r', Glyph::Escaped('␍')),
            ('\u{0}', Glyph::Escaped('␀')),
            ('\u{7f}', Glyph::Escaped('␡')),
            ('\u{9b}', Glyph::Escaped('\u{fffd}')),
            ('\u{202e}', Glyph::Escaped('⍰')),
            ('\t', Glyph::Tab),
            ('a', Glyph::Plain('a')),
            ('日', Glyph::Plain('日')),
        ];
        for (c, g) in cases {
            assert_eq!(Glyph::of(c), g, "{c:?}");
        }
        assert_eq!(Glyph::of('日').width(), 2);
        assert_eq!(visible("a\u{1b}[31mb\tc"), "a␛[31mb    c");
    }
}
