//! Searches through plain text that remember what they found.
//!
//! An engine looks for the next place where it has something to decide (a marker, a byte that
//! may begin one) and jumps there. A whole text is one piece that the engine enters again after
//! every call; remembering each search's next hit, and keeping the searches while the same piece
//! is entered again, means no stretch of it is searched twice, even for a marker it never holds.

/// The next hit of a search at or after `from`, remembered in `slot`: the hit itself while it
/// lies ahead, `None` once the search found nothing past where it last started; else `search`
/// runs on the text from `from` (and gives an offset from there).
#[inline]
pub(crate) fn cached(
    slot: &mut Option<Option<usize>>,
    from: usize,
    search: impl FnOnce() -> Option<usize>,
) -> Option<usize> {
    match *slot {
        Some(Some(p)) if p >= from => Some(p),
        Some(None) => None,
        _ => {
            let hit = search().map(|p| from + p);
            *slot = Some(hit);
            hit
        }
    }
}

/// The search through the text an engine scanned last, kept for when it enters the same text
/// again (the same address, stream offset and length). [`Kept::forget`] at the start and the end
/// of each piece's reading keeps it from outliving the piece.
#[derive(Default)]
pub(crate) struct Kept<S> {
    key: Option<(usize, usize, usize)>,
    /// The search: for `text` once [`Kept::renew`] was called with it.
    pub(crate) search: S,
}

impl<S> Kept<S> {
    /// Makes `search` the one for `text` (at stream offset `base`): kept when it is, new when not.
    #[inline]
    pub(crate) fn renew(&mut self, text: &str, base: usize, new: impl FnOnce() -> S) {
        let key = Some((text.as_ptr() as usize, base, text.len()));
        if self.key != key {
            self.search = new();
            self.key = key;
        }
    }

    pub(crate) fn forget(&mut self) {
        self.key = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_is_searched_again_only_once_passed() {
        let mut slot = None;
        let mut searches = 0;
        let mut search = |from: usize, hit: Option<usize>| {
            cached(&mut slot, from, || {
                searches += 1;
                hit.map(|h| h - from)
            })
        };
        assert_eq!(search(0, Some(10)), Some(10));
        assert_eq!(search(5, Some(99)), Some(10));
        assert_eq!(search(11, None), None);
        assert_eq!(search(20, Some(30)), None);
        assert_eq!(searches, 2);
    }

    #[test]
    fn searches_are_kept_for_the_same_text_only() {
        let text = String::from("some text");
        let mut kept: Kept<u32> = Kept::default();
        fn renew(kept: &mut Kept<u32>, t: &str, base: usize) -> u32 {
            kept.renew(t, base, || 1);
            let got = kept.search;
            kept.search = 7;
            got
        }
        assert_eq!(renew(&mut kept, &text, 0), 1);
        assert_eq!(renew(&mut kept, &text, 0), 7);
        assert_eq!(renew(&mut kept, &text, 3), 1);
        assert_eq!(renew(&mut kept, &text[..4], 3), 1);
        assert_eq!(renew(&mut kept, &text[..4], 3), 7);
        kept.forget();
        assert_eq!(renew(&mut kept, &text[..4], 3), 1);
    }
}
