//! Drawing long streamed text: the rows of a [`TextLog`] that are visible, with the highlighted
//! ranges in their colours and every character passed through [`Glyph`], so that control
//! characters show as pictures and never reach the terminal.

use std::ops::Range;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::app::glyph::{Glyph, TAB_WIDTH};
use crate::app::run_view::{Highlight, HighlightKind};
use crate::app::search;
use crate::app::text_log::{Scroll, TextLog, visible_rows};

use crate::app::theme::Theme;

/// The styles a text view draws with.
#[derive(Clone, Copy, Debug)]
pub struct TextStyles {
    pub base: Style,
    pub escape: Style,
    pub call: Style,
    pub malformed: Style,
    pub note: Style,
    pub reasoning: Style,
    pub label: Style,
    /// A match of the search.
    pub matched: Style,
}

impl TextStyles {
    pub fn output(theme: &Theme) -> TextStyles {
        let r = &theme.raw;
        TextStyles {
            base: Style::default().fg(r.text),
            escape: Style::default().fg(r.escape).add_modifier(Modifier::BOLD),
            call: Style::default().fg(r.call_fg).bg(r.call_bg),
            malformed: Style::default().fg(r.malformed_fg).bg(r.malformed_bg),
            note: Style::default()
                .fg(theme.ui.warning)
                .add_modifier(Modifier::ITALIC),
            reasoning: Style::default()
                .fg(r.reasoning)
                .add_modifier(Modifier::ITALIC),
            label: Style::default()
                .fg(theme.ui.accent)
                .add_modifier(Modifier::BOLD),
            matched: Style::default()
                .fg(theme.ui.background)
                .bg(theme.ui.warning)
                .add_modifier(Modifier::BOLD),
        }
    }

    pub fn wire(theme: &Theme) -> TextStyles {
        TextStyles {
            base: Style::default().fg(theme.raw.wire),
            ..TextStyles::output(theme)
        }
    }

    fn of(&self, kind: Option<HighlightKind>) -> Style {
        match kind {
            None => self.base,
            Some(HighlightKind::Call | HighlightKind::NativeArgs) => self.call,
            Some(HighlightKind::Malformed) => self.malformed,
            Some(HighlightKind::Note | HighlightKind::Markup) => self.note,
            Some(HighlightKind::Reasoning) => self.reasoning,
            Some(HighlightKind::Label) => self.label,
        }
    }
}

/// A search to mark in a text: the query and whether it ignores case.
pub type Query<'a> = Option<(&'a str, bool)>;

/// The visible lines of `log` in a view `width`×`height` scrolled to `scroll`, with the matches
/// of `query` marked.
pub fn log_lines(
    log: &TextLog,
    scroll: Scroll,
    size: (usize, usize),
    highlights: &[Highlight],
    styles: &TextStyles,
    query: Query<'_>,
) -> Vec<Line<'static>> {
    let rows = visible_rows(log, scroll, size.0, size.1);
    let matches = match (query, rows.first(), rows.last()) {
        (Some((q, fold)), Some(first), Some(last)) => search::matches_in(
            log.as_str(),
            q,
            fold,
            first.start.saturating_sub(q.len())..last.end,
        ),
        _ => Vec::new(),
    };
    rows.into_iter()
        .map(|row| row_line(log.as_str(), row, highlights, &matches, styles))
        .collect()
}

/// One row of text as a line of styled spans (`matches`: sorted ranges of search matches).
pub fn row_line(
    text: &str,
    row: Range<usize>,
    highlights: &[Highlight],
    matches: &[Range<usize>],
    styles: &TextStyles,
) -> Line<'static> {
    // The highlights that can touch this row, from the first ending after its start.
    let mut h = highlights.partition_point(|h| h.range.end <= row.start);
    let mut m = matches.partition_point(|m| m.end <= row.start);
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_style = styles.base;
    for (i, c) in text[row.clone()].char_indices() {
        let at = row.start + i;
        while h < highlights.len() && highlights[h].range.end <= at {
            h += 1;
        }
        while m < matches.len() && matches[m].end <= at {
            m += 1;
        }
        let kind = highlights
            .get(h)
            .filter(|x| x.range.start <= at)
            .map(|x| x.kind);
        let mut area = styles.of(kind);
        if matches.get(m).is_some_and(|x| x.start <= at) {
            area = area.patch(styles.matched);
        }
        let (piece, style): (Piece, Style) = match Glyph::of(c) {
            Glyph::Plain(c) => (Piece::Char(c), area),
            Glyph::Escaped(c) => (Piece::Char(c), area.patch(styles.escape)),
            Glyph::Tab => (Piece::Tab, area),
        };
        if style != run_style && !run.is_empty() {
            spans.push(Span::styled(std::mem::take(&mut run), run_style));
        }
        run_style = style;
        match piece {
            Piece::Char(c) => run.push(c),
            Piece::Tab => run.extend(std::iter::repeat_n(' ', TAB_WIDTH)),
        }
    }
    if !run.is_empty() {
        spans.push(Span::styled(run, run_style));
    }
    Line::from(spans)
}

enum Piece {
    Char(char),
    Tab,
}

/// `text` cut to at most `width` cells (as glyphs measure them), ending in `…` when cut.
pub fn fit(text: &str, width: usize) -> String {
    let total: usize = text.chars().map(|c| Glyph::of(c).width()).sum();
    let room = if total <= width {
        width
    } else {
        width.saturating_sub(1)
    };
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let g = Glyph::of(c);
        if used + g.width() > room {
            break;
        }
        used += g.width();
        push_glyph(&mut out, g);
    }
    if total > width && width > 0 {
        out.push('…');
    }
    out
}

/// The last cells of `text` that fit in `width`, starting with `…` when cut.
pub fn fit_tail(text: &str, width: usize) -> String {
    let total: usize = text.chars().map(|c| Glyph::of(c).width()).sum();
    if total <= width {
        return fit(text, width);
    }
    let mut keep = Vec::new();
    let mut used = 1; // the ellipsis
    for c in text.chars().rev() {
        let w = Glyph::of(c).width();
        if used + w > width {
            break;
        }
        used += w;
        keep.push(c);
    }
    let mut out = String::from("…");
    for c in keep.into_iter().rev() {
        push_glyph(&mut out, Glyph::of(c));
    }
    out
}

fn push_glyph(out: &mut String, g: Glyph) {
    match g {
        Glyph::Plain(c) | Glyph::Escaped(c) => out.push(c),
        Glyph::Tab => out.extend(std::iter::repeat_n(' ', TAB_WIDTH)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fitting_cuts_with_an_ellipsis_and_escapes() {
        assert_eq!(fit("hello", 5), "hello");
        assert_eq!(fit("hello!", 5), "hell…");
        assert_eq!(fit("a\u{1b}b", 5), "a␛b");
        assert_eq!(fit_tail("{\"city\":\"Paris\"}", 8), "…Paris\"}");
        assert_eq!(fit_tail("abc", 8), "abc");
    }

    #[test]
    fn rows_style_highlights_and_escapes() {
        let t = TextStyles::output(&Theme::dark());
        let text = "ab\u{1b}cd";
        let hl = [Highlight {
            range: 3..5,
            kind: HighlightKind::Call,
        }];
        let line = row_line(text, 0..text.len(), &hl, &[], &t);
        let pieces: Vec<(&str, Style)> = line
            .spans
            .iter()
            .map(|s| (s.content.as_ref(), s.style))
            .collect();
        assert_eq!(pieces[0], ("ab", t.base));
        assert_eq!(pieces[1].0, "␛");
        assert_eq!(pieces[2], ("cd", t.call));
    }
}
