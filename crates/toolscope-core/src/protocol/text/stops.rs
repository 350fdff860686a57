//! The bytes at which the text pipeline has anything to do: the union, made once per parser, of
//! the bytes that may begin an end token, a code fence, a reasoning marker or anything the
//! scanner reads in plain text. A piece with none of them, arriving while every stage is quiet
//! (nothing held, the scanner in plain text), is text and nothing else; the stream parser then
//! checks the piece once instead of once per stage.

/// A set of bytes, searched for in short pieces.
pub(crate) struct Stops {
    /// Whether each byte is in the set.
    table: [bool; 256],
    /// The set's bytes, in the order first added.
    bytes: Vec<u8>,
    /// The bytes a piece may end with for the scanner to look at it although it holds no stop
    /// (see [`Stops::ends_with_one`]).
    ends: [bool; 256],
    /// The search for one to three of them, made once (see [`Searcher`]).
    searcher: Searcher,
}

/// A search for the set's bytes made when the set is, for the machine it runs on: on x86-64 with
/// AVX2, memchr's searcher of one, two or three bytes, whose needles are spread into vectors once
/// instead of at each piece (memchr's functions also choose their routine at each call); at 64
/// bytes a piece that was close to half the cost of the search.
#[derive(Clone, Copy)]
enum Searcher {
    /// memchr's functions, chosen at each call.
    Any,
    #[cfg(target_arch = "x86_64")]
    One(memchr::arch::x86_64::avx2::memchr::One),
    #[cfg(target_arch = "x86_64")]
    Two(memchr::arch::x86_64::avx2::memchr::Two),
    #[cfg(target_arch = "x86_64")]
    Three(memchr::arch::x86_64::avx2::memchr::Three),
}

impl Searcher {
    /// The searcher for `bytes`: [`Searcher::Any`] for none or more than three, or where AVX2 is
    /// not there.
    fn of(bytes: &[u8]) -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            use memchr::arch::x86_64::avx2::memchr::{One, Three, Two};
            let made = match *bytes {
                [a] => One::new(a).map(Searcher::One),
                [a, b] => Two::new(a, b).map(Searcher::Two),
                [a, b, c] => Three::new(a, b, c).map(Searcher::Three),
                _ => None,
            };
            if let Some(s) = made {
                return s;
            }
        }
        let _ = bytes;
        Searcher::Any
    }
}

impl Stops {
    pub(crate) fn new() -> Self {
        Stops {
            table: [false; 256],
            bytes: Vec::new(),
            ends: [false; 256],
            searcher: Searcher::Any,
        }
    }

    /// A byte that the scanner looks at when a piece ends with it.
    pub(crate) fn add_end(&mut self, b: u8) {
        self.ends[b as usize] = true;
    }

    /// Whether `piece` ends with a byte the scanner looks at there ([`Stops::add_end`]).
    #[inline(always)]
    pub(crate) fn ends_with_one(&self, piece: &[u8]) -> bool {
        piece.last().is_some_and(|&b| self.ends[b as usize])
    }

    pub(crate) fn add(&mut self, b: u8) {
        if !self.table[b as usize] {
            self.table[b as usize] = true;
            self.bytes.push(b);
            self.searcher = Searcher::of(&self.bytes);
        }
    }

    pub(crate) fn add_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(b);
        }
    }

    /// Whether `hay` holds none of the set's bytes.
    #[inline(always)]
    pub(crate) fn absent(&self, hay: &[u8]) -> bool {
        if hay.len() < 16 {
            // A few bytes (a stream a character at a time): looked up, not searched.
            return !hay.iter().any(|&b| self.table[b as usize]);
        }
        self.searched_absent(hay)
    }

    #[inline(never)]
    fn searched_absent(&self, hay: &[u8]) -> bool {
        // (By reference: a searcher is some 150 bytes of vectors.)
        match &self.searcher {
            #[cfg(target_arch = "x86_64")]
            Searcher::One(s) => return s.find(hay).is_none(),
            #[cfg(target_arch = "x86_64")]
            Searcher::Two(s) => return s.find(hay).is_none(),
            #[cfg(target_arch = "x86_64")]
            Searcher::Three(s) => return s.find(hay).is_none(),
            Searcher::Any => {}
        }
        match *self.bytes.as_slice() {
            [] => true,
            [a] => memchr::memchr(a, hay).is_none(),
            [a, b] => memchr::memchr2(a, b, hay).is_none(),
            [a, b, c] => memchr::memchr3(a, b, c, hay).is_none(),
            _ => self.searched_absent_many(hay),
        }
    }

    /// More than three bytes: a search per three of them (a look at each byte in the table
    /// costs several times one search: mistral's four stops took half of its prose's
    /// instructions at 64 bytes a piece).
    #[inline(never)]
    fn searched_absent_many(&self, hay: &[u8]) -> bool {
        self.bytes.chunks(3).all(|group| match *group {
            [a] => memchr::memchr(a, hay).is_none(),
            [a, b] => memchr::memchr2(a, b, hay).is_none(),
            [a, b, c] => memchr::memchr3(a, b, c, hay).is_none(),
            _ => true,
        })
    }

    /// Where the first of the set's bytes stands in `hay`, if anywhere: one search per three
    /// bytes of the set, each only as far as the nearest found so far.
    pub(crate) fn first(&self, hay: &[u8]) -> Option<usize> {
        let mut first: Option<usize> = None;
        for group in self.bytes.chunks(3) {
            let within = &hay[..first.unwrap_or(hay.len())];
            let found = match *group {
                [a] => memchr::memchr(a, within),
                [a, b] => memchr::memchr2(a, b, within),
                [a, b, c] => memchr::memchr3(a, b, c, within),
                _ => None,
            };
            first = found.or(first);
        }
        first
    }

    /// Whether a byte of the set is one that `which` picks.
    pub(crate) fn has(&self, which: impl Fn(u8) -> bool) -> bool {
        self.bytes.iter().any(|&b| which(b))
    }

    #[cfg(test)]
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_piece_is_quiet_only_without_every_byte_of_the_set() {
        for set in [&b""[..], b"<", b"<`", b"<`{", b"<`{[", b"<`{[\n"] {
            let mut stops = Stops::new();
            stops.add_all(set);
            stops.add_all(set);
            assert_eq!(stops.bytes(), set);
            let plain = "plain words, and more plain words; long enough to be searched by memchr";
            assert!(stops.absent(plain.as_bytes()));
            assert!(stops.absent(b"ab"));
            assert!(!stops.ends_with_one(b"plain, ab"));
            for &b in set {
                for at in [0, 1, 15, 16, 40, plain.len()] {
                    let mut piece = plain.as_bytes().to_vec();
                    piece.insert(at, b);
                    assert!(!stops.absent(&piece), "{:?} at {at}", b as char);
                    assert!(!stops.absent(&piece[at..at + 1]));
                }
            }
        }
    }

    #[test]
    fn a_piece_ends_with_one_of_the_ends_only_at_its_last_byte() {
        let mut stops = Stops::new();
        stops.add_all(b"<:");
        for &b in b"cal" {
            stops.add_end(b);
        }
        assert!(stops.ends_with_one(b"c"));
        assert!(stops.ends_with_one(b"a local"));
        assert!(stops.ends_with_one(b"xa"));
        assert!(!stops.ends_with_one(b"call me"));
        assert!(!stops.ends_with_one(b""));
        assert!(!stops.ends_with_one(b"<"));
        // The ends are not stops.
        assert!(stops.absent(b"a local call"));
    }

    proptest::proptest! {
        /// The first stop is where a look at each byte in turn finds it, for sets of up to six
        /// bytes (searched one, two or three at a time) anywhere in any text.
        #[test]
        fn the_first_stop_is_the_first_byte_of_the_set(
            set in proptest::collection::vec(proptest::sample::select(b"<`{[\n|:a".to_vec()), 0..7),
            hay in proptest::collection::vec(proptest::sample::select(b"<`{[\n|:abc xyz".to_vec()), 0..200),
        ) {
            let mut stops = Stops::new();
            stops.add_all(&set);
            let naive = hay.iter().position(|b| set.contains(b));
            proptest::prop_assert_eq!(stops.first(&hay), naive);
            proptest::prop_assert_eq!(stops.absent(&hay), naive.is_none());
        }
    }
}
