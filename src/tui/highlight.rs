//! JSON highlighting with syntect, cached, in the colours of the theme.
//!
//! syntect only classifies here: it runs with a fixed internal theme whose "colours" are class
//! numbers (key, string, number, …), and drawing maps each class to the current theme's colour.
//! So a highlighted text stays valid when the theme changes, named terminal colours survive
//! (syntect itself only knows RGB), and the cache is keyed by the text alone.

use std::ops::Range;
use std::str::FromStr;
use std::sync::OnceLock;

use ratatui::style::Color;
use syntect::easy::HighlightLines;
use syntect::highlighting::{
    Color as SynColor, HighlightState, Highlighter, ScopeSelectors, StyleModifier,
    Theme as SynTheme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxSet};

use crate::app::theme::Theme;

/// What a piece of JSON is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Plain,
    Key,
    String,
    Number,
    Keyword,
    Punctuation,
    Invalid,
}

impl Class {
    const ALL: [Class; 7] = [
        Class::Plain,
        Class::Key,
        Class::String,
        Class::Number,
        Class::Keyword,
        Class::Punctuation,
        Class::Invalid,
    ];

    pub fn colour(self, theme: &Theme) -> Color {
        let s = &theme.syntax;
        match self {
            Class::Plain => theme.ui.text,
            Class::Key => s.key,
            Class::String => s.string,
            Class::Number => s.number,
            Class::Keyword => s.keyword,
            Class::Punctuation => s.punctuation,
            Class::Invalid => s.invalid,
        }
    }

    fn tag(self) -> SynColor {
        SynColor {
            r: Class::ALL.iter().position(|c| *c == self).unwrap_or(0) as u8,
            g: 0,
            b: 0,
            a: 0xff,
        }
    }

    fn from_tag(c: SynColor) -> Class {
        Class::ALL
            .get(c.r as usize)
            .copied()
            .unwrap_or(Class::Plain)
    }
}

/// One highlighted line: byte ranges of the line and their class.
pub type ClassedLine = Vec<(Range<usize>, Class)>;

struct Syntax {
    set: SyntaxSet,
    theme: SynTheme,
}

fn syntax() -> &'static Syntax {
    static SYNTAX: OnceLock<Syntax> = OnceLock::new();
    SYNTAX.get_or_init(|| {
        let item = |scope: &str, class: Class| ThemeItem {
            scope: ScopeSelectors::from_str(scope).expect("valid scope selector"),
            style: StyleModifier {
                foreground: Some(class.tag()),
                background: None,
                font_style: None,
            },
        };
        let theme = SynTheme {
            settings: ThemeSettings {
                foreground: Some(Class::Plain.tag()),
                ..ThemeSettings::default()
            },
            scopes: vec![
                item("string", Class::String),
                item("constant.numeric", Class::Number),
                item("constant.language", Class::Keyword),
                item("punctuation, keyword.operator", Class::Punctuation),
                // A string's quotes are part of the string.
                item("string punctuation.definition.string", Class::String),
                // Keys, quotes included: `meta.structure.dictionary.key` in syntect's JSON
                // syntax (`meta.mapping.key` in newer ones).
                item(
                    "meta.structure.dictionary.key string, meta.mapping.key string, \
                     meta.structure.dictionary.key string punctuation.definition.string, \
                     meta.mapping.key string punctuation.definition.string",
                    Class::Key,
                ),
                item("invalid", Class::Invalid),
            ],
            ..SynTheme::default()
        };
        Syntax {
            set: SyntaxSet::load_defaults_newlines(),
            theme,
        }
    })
}

/// Classifies each line of a JSON text (lines without their newline).
pub fn json_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<ClassedLine> {
    let syn = syntax();
    let Some(json) = syn.set.find_syntax_by_extension("json") else {
        return lines
            .into_iter()
            .map(|l| vec![(0..l.len(), Class::Plain)])
            .collect();
    };
    let mut hl = HighlightLines::new(json, &syn.theme);
    let mut buf = String::new();
    lines
        .into_iter()
        .map(|line| highlight(syn, &mut hl, line, &mut buf))
        .collect()
}

/// The classes of one line, from `hl` (which it advances to the next line); `buf` is scratch
/// room for the line with its newline.
fn highlight(syn: &Syntax, hl: &mut HighlightLines, line: &str, buf: &mut String) -> ClassedLine {
    buf.clear();
    buf.push_str(line);
    buf.push('\n');
    let mut out = Vec::new();
    let mut at = 0;
    if let Ok(pieces) = hl.highlight_line(buf, &syn.set) {
        for (style, piece) in pieces {
            let end = (at + piece.len()).min(line.len());
            if end > at {
                out.push((at..end, Class::from_tag(style.foreground)));
            }
            at += piece.len();
        }
    } else {
        out.push((0..line.len(), Class::Plain));
    }
    out
}

/// The classes of one line, highlighted from `state` (which it advances to the next line).
fn classify_line(
    syn: &Syntax,
    state: &mut Option<(HighlightState, ParseState)>,
    line: &str,
    buf: &mut String,
) -> ClassedLine {
    let Some((hs, ps)) = state.take() else {
        return vec![(0..line.len(), Class::Plain)];
    };
    let mut hl = HighlightLines::from_state(&syn.theme, hs, ps);
    let out = highlight(syn, &mut hl, line, buf);
    *state = Some(hl.state());
    out
}

/// Lines between two saved highlighter states.
const CHECKPOINT: usize = 16;

/// JSON classes of a text being edited, kept across edits: after an edit only the lines from
/// the first changed one down to the last one shown are classified again, so a keystroke in a
/// 300 KB tools file costs about as much as one in a small one.
///
/// It keeps a cheap hash of every line (to find the first changed line without a copy of the
/// text), the classes of a prefix of the lines, and the highlighter's state every
/// [`CHECKPOINT`] lines (to start again just above a change).
#[derive(Default)]
pub struct Incremental {
    hashes: Vec<u64>,
    classes: Vec<ClassedLine>,
    /// The state at the start of line `k * CHECKPOINT`.
    checkpoints: Vec<(HighlightState, ParseState)>,
}

/// A fast hash of a text, eight bytes at a time (not for anything but noticing a change).
pub fn text_hash(text: &str) -> u64 {
    line_hash(text)
}

/// A fast hash of a line, eight bytes at a time (not for anything but noticing a change).
fn line_hash(line: &str) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ line.len() as u64;
    let mut chunks = line.as_bytes().chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_le_bytes(c.try_into().expect("eight bytes"));
        h = (h.rotate_left(5) ^ v).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    h
}

impl Incremental {
    /// Forgets what changed in `lines` since the last call: everything from the first changed
    /// line on (back to its checkpoint).
    pub fn sync(&mut self, lines: &[String]) {
        let mut first = None;
        for (i, line) in lines.iter().enumerate() {
            let h = line_hash(line);
            match self.hashes.get_mut(i) {
                Some(old) if *old == h => {}
                Some(old) => {
                    *old = h;
                    first.get_or_insert(i);
                }
                None => {
                    self.hashes.push(h);
                    first.get_or_insert(i);
                }
            }
        }
        if self.hashes.len() > lines.len() {
            self.hashes.truncate(lines.len());
            first.get_or_insert(lines.len());
        }
        if let Some(k) = first {
            self.forget_classes_from(k);
        }
    }

    /// Forgets lines `first..` of the text, told by whoever changed it that the lines before
    /// are as they were (cheaper than [`Incremental::sync`], which compares every line).
    pub fn invalidate_from(&mut self, first: usize) {
        self.hashes.truncate(first);
        self.forget_classes_from(first);
    }

    /// Drops the classes of line `k` on (back to its checkpoint).
    fn forget_classes_from(&mut self, k: usize) {
        if k >= self.classes.len() && k / CHECKPOINT + 1 >= self.checkpoints.len() {
            return;
        }
        let cp = k / CHECKPOINT;
        self.checkpoints.truncate(cp + 1);
        self.classes
            .truncate((cp * CHECKPOINT).min(self.classes.len()));
        // Without the checkpoint of that block, start again at the last one kept.
        let kept = self.checkpoints.len().saturating_sub(1) * CHECKPOINT;
        self.classes.truncate(kept.min(self.classes.len()));
    }

    /// The classes of `lines[range]`, classifying the lines not known yet up to its end.
    pub fn classes(&mut self, lines: &[String], range: std::ops::Range<usize>) -> Vec<ClassedLine> {
        let end = range.end.min(lines.len());
        let syn = syntax();
        if self.classes.len() < end {
            let Some(json) = syn.set.find_syntax_by_extension("json") else {
                return lines[range.start.min(end)..end]
                    .iter()
                    .map(|l| vec![(0..l.len(), Class::Plain)])
                    .collect();
            };
            if self.checkpoints.is_empty() {
                let highlighter = Highlighter::new(&syn.theme);
                self.checkpoints.push((
                    HighlightState::new(&highlighter, ScopeStack::new()),
                    ParseState::new(json),
                ));
            }
            // Continue from the checkpoint at or before the first unknown line.
            let cp = (self.classes.len() / CHECKPOINT).min(self.checkpoints.len() - 1);
            self.classes.truncate(cp * CHECKPOINT);
            self.checkpoints.truncate(cp + 1);
            let mut state = Some(self.checkpoints[cp].clone());
            let mut buf = String::new();
            for (i, line) in lines.iter().enumerate().take(end).skip(cp * CHECKPOINT) {
                if i > 0
                    && i % CHECKPOINT == 0
                    && self.checkpoints.len() == i / CHECKPOINT
                    && let Some(s) = &state
                {
                    self.checkpoints.push(s.clone());
                }
                self.classes
                    .push(classify_line(syn, &mut state, line, &mut buf));
            }
        }
        self.classes[range.start.min(end)..end].to_vec()
    }
}

/// The class of byte `i` of a classified line.
pub fn class_at(line: &ClassedLine, i: usize) -> Class {
    let k = line.partition_point(|(r, _)| r.end <= i);
    match line.get(k) {
        Some((r, c)) if r.start <= i => *c,
        _ => Class::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_reclassifies_from_its_line_and_agrees_with_a_full_pass() {
        let mut lines: Vec<String> = (0..100)
            .map(|i| format!("  {{\"k{i}\": \"v\", \"n\": {i}}},"))
            .collect();
        lines.insert(0, "[".into());
        lines.push("{}]".into());
        let mut inc = Incremental::default();
        inc.sync(&lines);
        let full = json_lines(lines.iter().map(String::as_str));
        assert_eq!(inc.classes(&lines, 90..102), full[90..102].to_vec());
        // An edit that opens a string changes what follows; the cache follows too.
        lines[50] = "  {\"k\": \"unclosed, ".into();
        inc.sync(&lines);
        let full = json_lines(lines.iter().map(String::as_str));
        assert_eq!(inc.classes(&lines, 40..102), full[40..102].to_vec());
        lines.truncate(60);
        inc.sync(&lines);
        let full = json_lines(lines.iter().map(String::as_str));
        assert_eq!(inc.classes(&lines, 0..60), full);
        // Told where the text changed, it agrees as well.
        lines[20] = "  \"open".into();
        lines.insert(21, "\", 1]".into());
        inc.invalidate_from(20);
        let full = json_lines(lines.iter().map(String::as_str));
        assert_eq!(inc.classes(&lines, 15..61), full[15..61].to_vec());
        lines.remove(0);
        inc.invalidate_from(0);
        inc.sync(&lines);
        let full = json_lines(lines.iter().map(String::as_str));
        assert_eq!(inc.classes(&lines, 0..60), full);
    }

    #[test]
    fn json_is_classified() {
        let lines = json_lines(["{\"city\": \"Paris\", \"days\": 3, \"ok\": true}"]);
        let line = &lines[0];
        let text = "{\"city\": \"Paris\", \"days\": 3, \"ok\": true}";
        let at = |s: &str| class_at(line, text.find(s).unwrap());
        assert_eq!(at("city"), Class::Key);
        assert_eq!(at("Paris"), Class::String);
        assert_eq!(at("3"), Class::Number);
        assert_eq!(at("true"), Class::Keyword);
        assert_eq!(at(","), Class::Punctuation);
    }
}
