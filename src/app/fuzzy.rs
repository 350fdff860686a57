//! Fuzzy filtering for the lists (`/` in a picker): a query matches a text when its letters
//! appear in it in order, case aside (`khr` matches `protocol-kimi-k2.json`), and the matches
//! are ranked: letters next to each other and letters that start a word count more, so the
//! closest matches come first. The positions of the matched letters come back so that a list can
//! mark them.

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
}
