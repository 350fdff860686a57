//! `/` in the Raw and Parts panes: a query typed at the bottom of the pane, the current match
//! (n / N for the next and the previous, wrapping around), every match in view highlighted.
//!
//! The search is smart about case: a query without capitals ignores ASCII case. It runs on the
//! pane's whole text (megabytes of output) with `memchr`, only when the query is confirmed or a
//! match is asked for, never per frame; drawing only looks for matches in the rows it shows.

use std::ops::Range;

/// Which pane a search is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchPane {
    Raw,
    Parts,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    pub pane: SearchPane,
    pub query: String,
    /// The query is being typed (Enter confirms, Esc drops the search).
    pub editing: bool,
    /// The current match: a byte offset of the Raw text, or a row of the Parts list.
    pub at: Option<usize>,
    /// How many matches there are (counted when the query was confirmed).
    pub count: usize,
}

impl Search {
    pub fn new(pane: SearchPane) -> Search {
        Search {
            pane,
            query: String::new(),
            editing: true,
            at: None,
            count: 0,
        }
    }

    /// Whether the query ignores case (it has no capital letter).
    pub fn ignores_case(&self) -> bool {
        !self.query.chars().any(char::is_uppercase)
    }

    /// What the pane marks: the query and whether it ignores case; nothing while it is empty.
    pub fn marked(&self) -> Option<(&str, bool)> {
        (!self.query.is_empty()).then(|| (self.query.as_str(), self.ignores_case()))
    }

    /// What the pane's bottom line says: the query being typed, or the match and the count.
    pub fn status(&self) -> String {
        if self.editing {
            format!("/{}▏", self.query)
        } else if self.count == 0 {
            format!("/{} · no match", self.query)
        } else {
            format!(
                "/{} · {} match{} · n next · N previous",
                self.query,
                self.count,
                if self.count == 1 { "" } else { "es" }
            )
        }
    }
}

fn eq_at(hay: &[u8], at: usize, needle: &[u8], fold: bool) -> bool {
    hay.get(at..at + needle.len()).is_some_and(|h| {
        if fold {
            h.eq_ignore_ascii_case(needle)
        } else {
            h == needle
        }
    })
}

/// The first byte of a match, in both cases when case is ignored.
fn first_bytes(needle: &[u8], fold: bool) -> (u8, u8) {
    let b = needle[0];
    if fold {
        (b.to_ascii_lowercase(), b.to_ascii_uppercase())
    } else {
        (b, b)
    }
}

/// The next match starting at or after `from` (wrapping to the start), or the previous one
/// starting before `from` (wrapping to the end) when `forward` is false.
pub fn find(hay: &str, needle: &str, fold: bool, from: usize, forward: bool) -> Option<usize> {
    if needle.is_empty() || needle.len() > hay.len() {
        return None;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let (a, b) = first_bytes(n, fold);
    let from = from.min(h.len());
    if forward {
        let scan = |start: usize, end: usize| {
            memchr::memchr2_iter(a, b, &h[start..end])
                .map(|i| start + i)
                .find(|&i| eq_at(h, i, n, fold))
        };
        scan(from, h.len()).or_else(|| scan(0, from.min(h.len())))
    } else {
        let scan = |start: usize, end: usize| {
            memchr::memrchr2_iter(a, b, &h[start..end])
                .map(|i| start + i)
                .find(|&i| eq_at(h, i, n, fold))
        };
        scan(0, from).or_else(|| scan(from, h.len()))
    }
}

/// How many matches `hay` holds (not overlapping).
pub fn count(hay: &str, needle: &str, fold: bool) -> usize {
    matches_in(hay, needle, fold, 0..hay.len()).len()
}

/// The matches that start inside `range` of `hay`.
pub fn matches_in(hay: &str, needle: &str, fold: bool, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    if needle.is_empty() {
        return out;
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    let (a, b) = first_bytes(n, fold);
    let end = range.end.min(h.len());
    let mut at = range.start.min(end);
    while at < end {
        let Some(i) = memchr::memchr2(a, b, &h[at..end]) else {
            break;
        };
        let i = at + i;
        if eq_at(h, i, n, fold) {
            out.push(i..i + n.len());
            at = i + n.len();
        } else {
            at = i + 1;
        }
    }
    out
}

/// Whether `text` holds the query.
pub fn contains(text: &str, needle: &str, fold: bool) -> bool {
    find(text, needle, fold, 0, true).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_count_reads_as_english() {
        let mut s = Search::new(SearchPane::Raw);
        s.query = "paris".into();
        s.editing = false;
        s.count = 1;
        assert_eq!(s.status(), "/paris · 1 match · n next · N previous");
        s.count = 3;
        assert_eq!(s.status(), "/paris · 3 matches · n next · N previous");
    }

    #[test]
    fn finds_forward_and_back_wrapping_and_folds_case() {
        let t = "Paris, paris and PARIS";
        assert_eq!(find(t, "paris", true, 0, true), Some(0));
        assert_eq!(find(t, "paris", true, 1, true), Some(7));
        assert_eq!(find(t, "paris", true, 18, true), Some(0), "wraps");
        assert_eq!(find(t, "paris", false, 1, true), Some(7));
        assert_eq!(find(t, "paris", true, 7, false), Some(0));
        assert_eq!(find(t, "paris", true, 0, false), Some(17), "wraps back");
        assert_eq!(find(t, "tokyo", true, 0, true), None);
        assert_eq!(count(t, "paris", true), 3);
        assert_eq!(matches_in(t, "paris", true, 5..20), [7..12, 17..22]);
        let upper = Search {
            query: "Paris".into(),
            ..Search::new(SearchPane::Raw)
        };
        assert!(!upper.ignores_case());
    }
}
