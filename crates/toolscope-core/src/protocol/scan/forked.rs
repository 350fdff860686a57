//! One format read by two kinds of engine: a main engine for most of the text, and branches
//! that each read the markup one marker opens (GigaChat's `<|function_call|>{…}` beside its
//! GCML markup; dots' JSON object in the wrapper its invoke markup also uses). The text is
//! searched for the branches' markers; what comes before one goes to the main engine. At a
//! marker, a branch reads what follows (when its `takes` says the markup is its own) until it is
//! idle again; inside a call of the main engine (a value that holds a marker), the main engine
//! reads it. Each engine counts the bytes the others read, so spans stay in the output's
//! coordinates; a marker cut by a chunk's end is held until it can be told.

use std::borrow::Cow;

use crate::protocol::text::emit::Emitter;
use crate::protocol::text::scanner::Scanner;

/// A scanner that can hand the text over to another between its calls.
pub(crate) trait Handover: Scanner {
    /// In text, holding nothing back.
    fn idle(&self) -> bool;
    /// The offset of the next byte it reads.
    fn pos(&self) -> usize;
    /// `len` bytes went to another scanner (only while idle).
    fn pass_over(&mut self, len: usize);
    /// How much of `s` it can be given at once, without passing the place where it may become
    /// idle (see [`crate::protocol::scan::framed::FramedScanner::quiet_run`]): at least one
    /// character.
    fn quiet_run(&self, s: &str) -> usize {
        one_char(s)
    }
}

/// [`Handover`] for an engine that holds text back in its `held` ([`Holdback`]) and is in text
/// in its `State::Text`; `$passed` runs on the engine after it passed over another's text.
///
/// [`Holdback`]: crate::protocol::text::holdback::Holdback
macro_rules! handover_by_holdback {
    ($engine:ty) => {
        $crate::protocol::scan::forked::handover_by_holdback!($engine, |_: &mut $engine| {});
    };
    ($engine:ty, $passed:expr) => {
        impl $crate::protocol::scan::forked::Handover for $engine {
            fn idle(&self) -> bool {
                matches!(self.state, State::Text) && self.held.is_empty()
            }

            fn pos(&self) -> usize {
                self.held.pos()
            }

            fn pass_over(&mut self, len: usize) {
                self.held.advance(len);
                ($passed)(self);
            }
        }
    };
}
pub(crate) use handover_by_holdback;

/// Gives `s` to `engine`, which first skips what other engines read since its last piece: `fed`
/// counts every byte given to any engine, the engine's offset only its own. `s` is counted in
/// `fed`.
pub(crate) fn hand_over<E: Handover + ?Sized>(
    engine: &mut E,
    fed: &mut usize,
    s: &str,
    em: &mut Emitter,
) {
    catch_up(engine, *fed);
    engine.feed(s, em);
    *fed += s.len();
}

/// `engine` skips what other engines read since its last piece (see [`hand_over`]).
pub(crate) fn catch_up<E: Handover + ?Sized>(engine: &mut E, fed: usize) {
    let passed = fed - engine.pos();
    if passed > 0 {
        engine.pass_over(passed);
    }
}

/// What was held to be told (`look`, emptied), then `text`.
pub(crate) fn after_look<'a>(look: &mut String, text: &'a str) -> Cow<'a, str> {
    if look.is_empty() {
        Cow::Borrowed(text)
    } else {
        let mut s = std::mem::take(look);
        s.push_str(text);
        Cow::Owned(s)
    }
}

/// The length of `s`'s first character (1 for an empty `s`).
pub(crate) fn one_char(s: &str) -> usize {
    s.chars().next().map_or(1, char::len_utf8)
}

/// A branch: the marker that opens its markup, and its engine.
pub(crate) struct Branch {
    pub marker: &'static str,
    /// Whether the markup at the marker (`text` starts with it) is the branch's: `None` while
    /// the text ends too early to tell (`at_end`: nothing follows).
    pub takes: fn(text: &str, at_end: bool) -> Option<bool>,
    pub scanner: Box<dyn Handover>,
}

/// Always the branch's.
pub(crate) fn always(_: &str, _: bool) -> Option<bool> {
    Some(true)
}

/// The longest text held to tell whether a marker's markup is a branch's.
const MAX_LOOK: usize = 256;

pub(crate) struct Forked {
    main: Box<dyn Handover>,
    branches: Vec<Branch>,
    /// The branch reading now.
    current: Option<usize>,
    /// Bytes given to any engine.
    fed: usize,
    /// A marker (or a piece of one) and what follows it, until it is told.
    look: String,
    /// The first bytes of the branches' markers, for finding candidates.
    firsts: Vec<u8>,
}

impl Forked {
    pub(crate) fn new(main: Box<dyn Handover>, branches: Vec<Branch>) -> Self {
        let mut firsts: Vec<u8> = branches.iter().map(|b| b.marker.as_bytes()[0]).collect();
        firsts.sort_unstable();
        firsts.dedup();
        Forked {
            main,
            branches,
            current: None,
            fed: 0,
            look: String::new(),
            firsts,
        }
    }

    /// Where the next byte that may begin a marker is in `b` (searched, not looped over).
    fn candidate(&self, b: &[u8]) -> Option<usize> {
        match *self.firsts.as_slice() {
            [a] => memchr::memchr(a, b),
            [a, c] => memchr::memchr2(a, c, b),
            [a, c, d] => memchr::memchr3(a, c, d, b),
            _ => b.iter().position(|x| self.firsts.contains(x)),
        }
    }

    fn give_main(&mut self, s: &str, em: &mut Emitter) {
        if !s.is_empty() {
            hand_over(self.main.as_mut(), &mut self.fed, s, em);
        }
    }

    fn give_branch(&mut self, k: usize, s: &str, em: &mut Emitter) {
        hand_over(self.branches[k].scanner.as_mut(), &mut self.fed, s, em);
    }

    /// The first marker in `s`: where it begins, which branch's, and whether it is whole (else
    /// `s` ends inside it); the length of `s` and `None` when there is none.
    fn find_marker(&self, s: &str) -> (usize, Option<(usize, bool)>) {
        let b = s.as_bytes();
        let mut from = 0;
        while let Some(d) = self.candidate(&b[from..]) {
            let p = from + d;
            from = p + 1;
            let c = b[p];
            for (k, br) in self.branches.iter().enumerate() {
                let m = br.marker.as_bytes();
                if m[0] != c {
                    continue;
                }
                let tail = &b[p..];
                if tail.starts_with(m) {
                    return (p, Some((k, true)));
                }
                if m.starts_with(tail) {
                    return (p, Some((k, false)));
                }
            }
        }
        (b.len(), None)
    }

    /// The main engine holds text that may begin one of its tags, and a marker follows: that
    /// text cannot, and is written now.
    fn settle_main(&mut self, em: &mut Emitter) {
        if !self.main.idle() && !self.main.in_call() {
            self.main.cut(em);
        }
    }
}

impl Scanner for Forked {
    fn feed(&mut self, text: &str, em: &mut Emitter) {
        let joined = after_look(&mut self.look, text);
        let s = joined.as_ref();
        let mut i = 0;
        while i < s.len() {
            if let Some(k) = self.current {
                // No further than where the branch may stop: its markup ends there.
                let n = self.branches[k].scanner.quiet_run(&s[i..]);
                self.give_branch(k, &s[i..i + n], em);
                i += n;
                if self.branches[k].scanner.idle() {
                    self.current = None;
                }
                continue;
            }
            let (m, found) = self.find_marker(&s[i..]);
            self.give_main(&s[i..i + m], em);
            i += m;
            let Some((k, whole)) = found else {
                break;
            };
            let marker = self.branches[k].marker;
            if self.main.in_call() {
                // Inside a call of the main engine (a value may hold the marker): it decides.
                let n = if whole { marker.len() } else { s.len() - i };
                self.give_main(&s[i..i + n], em);
                i += n;
                continue;
            }
            if !whole {
                self.look.push_str(&s[i..]);
                return;
            }
            let at_end = s.len() - i > MAX_LOOK;
            match (self.branches[k].takes)(&s[i..], at_end) {
                None => {
                    self.look.push_str(&s[i..]);
                    return;
                }
                Some(true) => {
                    self.settle_main(em);
                    self.current = Some(k);
                }
                Some(false) => {
                    self.give_main(&s[i..i + marker.len()], em);
                    i += marker.len();
                }
            }
        }
    }

    fn finish(&mut self, em: &mut Emitter) {
        let look = std::mem::take(&mut self.look);
        if !look.is_empty() {
            let (_, found) = self.find_marker(&look);
            match found {
                Some((k, true)) if (self.branches[k].takes)(&look, true) == Some(true) => {
                    self.settle_main(em);
                    self.current = Some(k);
                    self.give_branch(k, &look, em);
                }
                _ => self.give_main(&look, em),
            }
        }
        match self.current {
            Some(k) => self.branches[k].scanner.finish(em),
            None => {
                catch_up(self.main.as_mut(), self.fed);
                self.main.finish(em);
            }
        }
    }

    /// Inside a call too while a whole branch marker is held to be told (dots'
    /// `<dots_function_call>` before its `{` or its markup): a reasoning marker right after it
    /// is the call's text, not reasoning cut out of the middle of its markup.
    fn in_call(&self) -> bool {
        match self.current {
            Some(k) => self.branches[k].scanner.in_call(),
            None => {
                self.main.in_call()
                    || (!self.look.is_empty()
                        && matches!(self.find_marker(&self.look).1, Some((_, true))))
            }
        }
    }

    fn in_args(&self) -> bool {
        match self.current {
            Some(k) => self.branches[k].scanner.in_args(),
            None => self.main.in_args(),
        }
    }

    fn cut(&mut self, em: &mut Emitter) {
        // A marker held to be told cannot open a branch's markup across a reasoning marker.
        let look = std::mem::take(&mut self.look);
        self.give_main(&look, em);
        match self.current {
            Some(k) => self.branches[k].scanner.cut(em),
            None => self.main.cut(em),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
    use crate::protocol::scan::markup::MarkupScanner;
    // `<calls><fn=NAME><arg=KEY>value</arg></fn></calls>`.
    use crate::protocol::scan::markup::tests::DIALECT;
    use crate::protocol::tests_support::{EngineCase, engine_cases, scan_every_split};
    use crate::tool::ToolSet;

    /// `<<` then a JSON call envelope.
    static JSON: FramedSyntax = FramedSyntax {
        section: None,
        call_begin: "<<",
        args_begin: &[ArgsBegin::Object],
        header: |_| None,
        args_suffix: None,
        call_end: None,
        separator: None,
    };

    fn make(tools: ToolSet) -> Box<dyn Scanner> {
        Box::new(Forked::new(
            Box::new(MarkupScanner::new(tools.clone(), &DIALECT)),
            vec![Branch {
                marker: "<<",
                takes: always,
                scanner: Box::new(FramedScanner::new(&JSON, tools)),
            }],
        ))
    }

    #[test]
    fn the_engine_answers_the_standard_cases_in_either_form() {
        engine_cases(
            &make,
            &EngineCase {
                call: "<calls><fn=get_weather><arg=city>Paris</arg></fn></calls>",
                unfinished: "<calls><fn=get_weather><arg=city>Pa",
                malformed: "<calls><fn=><arg=city>Paris</arg></fn></calls>",
            },
        );
        engine_cases(
            &make,
            &EngineCase {
                call: "<<{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
                unfinished: "<<{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
                malformed: "<<{\"name\": \"get_weather\", \"arguments\": {\"city\" Paris}}",
            },
        );
    }

    #[test]
    fn both_forms_in_one_output_and_a_marker_inside_a_value() {
        let text = "a <x <<{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}} b <calls><fn=get_weather><arg=city><<Rome</arg></fn></calls> c";
        let c = scan_every_split(&make, text, false).calls(&[
            ("get_weather".into(), serde_json::json!({"city": "Oslo"})),
            ("get_weather".into(), serde_json::json!({"city": "<<Rome"})),
        ]);
        assert_eq!(c.text, "a <x  b  c");
    }
}
