//! Fuzzy filtering for the lists (`/` in a picker): a query matches a text when its letters
//! appear in it in order, case aside (`khr` matches `protocol-kimi-k2.json`), and the matches
//! are ranked: letters next to each other and letters that start a word count more, so the
//! closest matches come first. The positions of the matched letters come back so that a list can
//! mark them. [`ListFilter`] is the filter state and keys every list shares.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// A match of a query in a text: its rank (higher is closer) and the character positions of the
/// matched letters, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Match {
    pub score: i64,
    pub positions: Vec<usize>,
}

/// Whether `query` matches `text`, and how closely. An empty query matches everything, with no
/// letters marked. Each letter of the query is matched at its best place: a run of letters in a
/// row, or the start of a word, wins over a letter found earlier.
pub fn find(query: &str, text: &str) -> Option<Match> {
    let query: Vec<char> = query
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect();
    if query.is_empty() {
        return Some(Match {
            score: 0,
            positions: Vec::new(),
        });
    }
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = chars
        .iter()
        .map(|c| c.to_lowercase().next().unwrap_or(*c))
        .collect();
    let word_start = |i: usize| i == 0 || !chars[i - 1].is_alphanumeric();
    // best[j][i]: the best score with query letter j matched at text position i (and the
    // position of letter j - 1 it came from), over every earlier placement. Quadratic in the
    // worst case, on list rows of a hundred characters at most.
    let n = chars.len();
    let mut best: Vec<Vec<Option<(i64, usize)>>> = vec![vec![None; n]; query.len()];
    for (i, &c) in lower.iter().enumerate() {
        if c == query[0] {
            let bonus = if word_start(i) { 8 } else { 0 };
            best[0][i] = Some((bonus - i.min(20) as i64 / 4, usize::MAX));
        }
    }
    for j in 1..query.len() {
        // The best score of letter j - 1 at any position before i, kept as i moves on.
        let mut run: Option<(i64, usize)> = None;
        for i in 0..n {
            if i > 0
                && let Some((s, _)) = best[j - 1][i - 1]
                && run.is_none_or(|(r, _)| s > r)
            {
                run = Some((s, i - 1));
            }
            if lower[i] != query[j] {
                continue;
            }
            let mut pick: Option<(i64, usize)> = None;
            // Right after the previous letter: a run.
            if i > 0
                && let Some((s, _)) = best[j - 1][i - 1]
            {
                pick = Some((s + 10, i - 1));
            }
            if let Some((s, from)) = run {
                let gap = (i - from - 1) as i64;
                let score = s + if word_start(i) { 6 } else { 0 } - gap.min(10);
                if pick.is_none_or(|(p, _)| score > p) {
                    pick = Some((score, from));
                }
            }
            best[j][i] = pick;
        }
    }
    let last = query.len() - 1;
    let (mut at, (score, _)) = best[last]
        .iter()
        .enumerate()
        .filter_map(|(i, b)| b.map(|b| (i, b)))
        .max_by_key(|(i, (s, _))| (*s, std::cmp::Reverse(*i)))?;
    let mut positions = vec![0; query.len()];
    for j in (0..query.len()).rev() {
        positions[j] = at;
        if j > 0 {
            at = best[j][at].map(|(_, from)| from)?;
        }
    }
    Some(Match { score, positions })
}

/// The items of a list that `query` matches, best first (ties in list order): each item's index
/// and its match.
pub fn filter<'a>(query: &str, items: impl Iterator<Item = &'a str>) -> Vec<(usize, Match)> {
    let mut found: Vec<(usize, Match)> = items
        .enumerate()
        .filter_map(|(i, text)| find(query, text).map(|m| (i, m)))
        .collect();
    if !query.trim().is_empty() {
        found.sort_by(|a, b| b.1.score.cmp(&a.1.score).then(a.0.cmp(&b.0)));
    }
    found
}

/// The `/` filter of a list, shared by every list that filters (the session, protocol and
/// tool-choice pickers, the MCP list, the Parts pane; the model list's filter is the model
/// field itself, matched with [`filter`]): what was typed, whether it is being typed, the rows
/// it leaves (best first, with their matched letters) and the row selected among them.
///
/// Each item is matched by a text (its haystack) of which only the first characters (its label)
/// have their matched letters marked: a description matches but is not marked.
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    /// What was typed (empty: every item, in list order).
    pub query: String,
    /// Whether keys go to the query. A picker that filters as you type always types.
    pub typing: bool,
    always: bool,
    /// The rows in list order rather than best first (a log, where order is time).
    in_order: bool,
    /// The row selected among those shown.
    pub selected: usize,
    /// Each item's haystack and how many of its first characters are its label.
    items: Vec<(String, usize)>,
    /// The items the query leaves, best first: each item's index and its label's matched
    /// letters.
    shown: Vec<(usize, Vec<usize>)>,
}

/// What a key did to a filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterKey {
    /// The key was the filter's (typed, moved the selection, cleared).
    Taken,
    /// Not the filter's key: the list's own keys decide (Enter, Esc with nothing to clear).
    Ignored,
}

impl ListFilter {
    /// A filter that `/` starts (a pane's list, the session picker).
    pub fn on_slash() -> ListFilter {
        ListFilter::default()
    }

    /// A filter that `/` starts and that keeps the rows in list order (the Parts pane: order is
    /// time there).
    pub fn on_slash_in_order() -> ListFilter {
        ListFilter {
            in_order: true,
            ..ListFilter::default()
        }
    }

    /// A filter that takes every printable key (a picker whose keys are only for finding).
    pub fn as_you_type() -> ListFilter {
        ListFilter {
            typing: true,
            always: true,
            ..ListFilter::default()
        }
    }

    /// The items, each as its haystack and its label's length in characters. The query is
    /// matched again; the selection stays on the row it was on, as far as there are rows.
    pub fn set_items(&mut self, items: Vec<(String, usize)>) {
        self.items = items;
        self.refilter();
        self.selected = self.selected.min(self.shown.len().saturating_sub(1));
    }

    /// How many items there are in all.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Whether the list is narrowed (a query typed or being typed).
    pub fn active(&self) -> bool {
        (self.typing && !self.always) || !self.query.is_empty()
    }

    /// The query changed: the rows are matched again, the best first and selected.
    pub fn set_query(&mut self, query: String) {
        self.query = query;
        self.refilter();
        self.selected = 0;
    }

    fn refilter(&mut self) {
        self.shown = filter(&self.query, self.items.iter().map(|(t, _)| t.as_str()))
            .into_iter()
            .map(|(i, m)| {
                let n = self.items[i].1;
                (i, m.positions.into_iter().filter(|&p| p < n).collect())
            })
            .collect();
        if self.in_order {
            self.shown.sort_by_key(|(i, _)| *i);
        }
    }

    /// The rows shown: each item's index and its label's matched letters.
    pub fn shown(&self) -> impl Iterator<Item = (usize, &[usize])> {
        self.shown.iter().map(|(i, m)| (*i, m.as_slice()))
    }

    /// How many rows are shown.
    pub fn shown_len(&self) -> usize {
        self.shown.len()
    }

    /// The item of the selected row.
    pub fn chosen(&self) -> Option<usize> {
        self.shown.get(self.selected).map(|(i, _)| *i)
    }

    /// Selects the row of item `item`, if it is shown.
    pub fn select_item(&mut self, item: usize) {
        if let Some(at) = self.shown.iter().position(|(i, _)| *i == item) {
            self.selected = at;
        }
    }

    /// Moves the selection by `delta` rows, within the rows shown.
    pub fn step(&mut self, delta: isize) {
        let n = self.shown.len() as isize;
        self.selected = (self.selected as isize + delta).clamp(0, (n - 1).max(0)) as usize;
    }

    /// `3 of 41`: the rows shown of all the items.
    pub fn status(&self) -> String {
        format!("{} of {}", self.shown.len(), self.items.len())
    }

    /// The filter's keys: `/` starts typing; while typing, letters join the query, Backspace
    /// takes one back; Esc clears the query (and stops typing); ↑/↓, PgUp/PgDn, Home/End move
    /// the selection. Anything else is the list's (Enter: the list decides whether it chooses
    /// the row or only ends the typing, [`ListFilter::typing`] set to false).
    pub fn key(&mut self, key: &KeyEvent) -> FilterKey {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if self.typing && plain => {
                let mut q = std::mem::take(&mut self.query);
                q.push(c);
                self.set_query(q);
            }
            KeyCode::Char('/') if plain => self.typing = true,
            KeyCode::Backspace if self.typing => {
                let mut q = std::mem::take(&mut self.query);
                q.pop();
                self.set_query(q);
            }
            KeyCode::Esc if self.active() => {
                self.typing = self.always;
                let chosen = self.chosen();
                self.set_query(String::new());
                // Back to the whole list, on the row that was chosen.
                if let Some(i) = chosen {
                    self.select_item(i);
                }
            }
            KeyCode::Up => self.step(-1),
            KeyCode::Down => self.step(1),
            KeyCode::PageUp => self.step(-10),
            KeyCode::PageDown => self.step(10),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.step(isize::MAX / 2),
            _ => return FilterKey::Ignored,
        }
        FilterKey::Taken
    }

    /// Pasted text joins the query while it is typed.
    pub fn paste(&mut self, text: &str) -> FilterKey {
        if !self.typing {
            return FilterKey::Ignored;
        }
        let q = format!("{}{}", self.query, text.trim());
        self.set_query(q);
        FilterKey::Taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_in_order_match_and_are_marked() {
        let m = find("khr", "protocol-kimi-k2.json");
        assert!(m.is_none(), "no r after the k's");
        let m = find("kk2", "protocol-kimi-k2.json").unwrap();
        assert_eq!(m.positions, [9, 14, 15], "the word starts and the run");
        let m = find("PKK", "protocol-kimi-k2.json").unwrap();
        assert_eq!(m.positions, [0, 9, 14]);
        assert!(find("zzz", "protocol-hermes.json").is_none());
        assert_eq!(find("", "anything").unwrap().positions, Vec::<usize>::new());
        // Multi-byte letters are positions of characters, not bytes.
        assert_eq!(find("ü", "grüße").unwrap().positions, [2]);
    }

    #[test]
    fn closer_matches_rank_first() {
        let names = [
            "mode-forced-tool.json",
            "failure-malformed-call.json",
            "protocol-minimax-m2.json",
            "mcp-loop.json",
        ];
        let found: Vec<usize> = filter("mm", names.iter().copied())
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        // Two word starts (minimax, m2) beat letters inside words.
        assert_eq!(found[0], 2, "{found:?}");
        let found: Vec<usize> = filter("loop", names.iter().copied())
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(found, [3]);
        // No query: every item, in list order.
        let all: Vec<usize> = filter("", names.iter().copied())
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(all, [0, 1, 2, 3]);
    }

    fn press(f: &mut ListFilter, code: KeyCode) -> FilterKey {
        f.key(&KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn shown(f: &ListFilter) -> Vec<usize> {
        f.shown().map(|(i, _)| i).collect()
    }

    /// The shared filter: `/` starts it, letters narrow, Backspace widens, Esc clears and goes
    /// back to the row that was chosen; the arrows stay within the rows shown; only the label's
    /// letters are marked.
    #[test]
    fn the_shared_filter_keys() {
        let mut f = ListFilter::on_slash();
        f.set_items(vec![
            ("get_weather forecast".into(), 11),
            ("search the web".into(), 6),
            ("get_time clock".into(), 8),
        ]);
        assert_eq!(shown(&f), [0, 1, 2]);
        assert!(!f.active());
        // Before `/`, letters are the list's own keys.
        assert_eq!(press(&mut f, KeyCode::Char('d')), FilterKey::Ignored);
        assert_eq!(press(&mut f, KeyCode::Char('/')), FilterKey::Taken);
        assert!(f.active() && f.typing);
        for c in "gt".chars() {
            assert_eq!(press(&mut f, KeyCode::Char(c)), FilterKey::Taken);
        }
        assert_eq!(shown(&f), [2, 0], "the run `g…t` at word starts first");
        assert_eq!(f.status(), "2 of 3");
        assert_eq!(f.shown().next().unwrap().1, [0, 4]);
        press(&mut f, KeyCode::Down);
        press(&mut f, KeyCode::Down);
        assert_eq!(f.chosen(), Some(0), "the arrows stop at the last row shown");
        // A match only in the description marks nothing.
        f.set_query("clock".into());
        assert_eq!(shown(&f), [2]);
        assert!(f.shown().next().unwrap().1.is_empty());
        press(&mut f, KeyCode::Backspace);
        assert_eq!(f.query, "cloc");
        // Enter is the list's; Esc clears, keeps the row, then is the list's too.
        assert_eq!(press(&mut f, KeyCode::Enter), FilterKey::Ignored);
        assert_eq!(press(&mut f, KeyCode::Esc), FilterKey::Taken);
        assert_eq!((shown(&f).len(), f.chosen()), (3, Some(2)));
        assert!(!f.typing);
        assert_eq!(press(&mut f, KeyCode::Esc), FilterKey::Ignored);
        // Ctrl+letters are never typed into the query; paste joins it while typing.
        press(&mut f, KeyCode::Char('/'));
        let ctrl = KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL);
        assert_eq!(f.key(&ctrl), FilterKey::Ignored);
        assert_eq!(f.paste(" web \n"), FilterKey::Taken);
        assert_eq!(shown(&f), [1]);
        // A picker that filters as you type takes letters at once and stays typing.
        let mut f = ListFilter::as_you_type();
        f.set_items(vec![("auto".into(), 4), ("none".into(), 4)]);
        press(&mut f, KeyCode::Char('n'));
        assert_eq!(shown(&f), [1]);
        press(&mut f, KeyCode::Esc);
        assert!(f.typing && f.query.is_empty());
        assert_eq!(press(&mut f, KeyCode::Esc), FilterKey::Ignored);
    }
}
