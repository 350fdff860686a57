//! Two forms behind one open marker: a format whose call blocks open the same way but are
//! written in one of two shapes (GLM-5.3-Flash's `<tool_call>f>{JSON}` beside GLM's
//! `<tool_call>f<arg_key>…` markup) is read by two engines, and this switch gives each block to
//! the engine of its form.
//!
//! Text and blocks of the main form go to the main engine; at an open marker the main engine is
//! not inside (a value may hold the marker), the switch looks at what follows it until the form
//! is known (a bounded look: past it, the main form), and a block of the other form goes to the
//! other engine until that engine is back in text. Each engine counts the bytes the other read,
//! so spans stay in the output's coordinates; every byte is looked at a bounded number of times,
//! so the cost stays linear.

use super::forked::{Handover, after_look, catch_up, hand_over};
use crate::json::lexer::find1;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::scanner::Scanner;

/// An engine that can share the text with another (see [`Handover`]) and be told that a block
/// of the other form follows.
pub(crate) trait Reader: Handover {
    /// A block of the other form follows: markup that may still follow a finished call (a
    /// close that may be left out) is not coming; after this the engine is idle if it was
    /// past its call's arguments.
    fn settle(&mut self, _em: &mut Emitter) {}
}

/// The form of a block, from its open marker and what follows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    Main,
    Other,
    /// Not known from the text so far.
    Unknown,
}

/// Two engines behind one open marker (see the module documentation).
pub(crate) struct FormSwitch<M: Reader, O: Reader> {
    main: M,
    other: O,
    open: &'static str,
    /// The form of the block that `s` opens (`s` starts with the whole open marker); `at_end`:
    /// no more text follows. It must decide within a bounded look.
    form: fn(&str, bool) -> Form,
    /// A block of the other form is being read.
    in_other: bool,
    /// Bytes given to either engine.
    fed: usize,
    /// An open marker (or a piece of one) and what follows it, until the form is known.
    look: String,
}

impl<M: Reader, O: Reader> FormSwitch<M, O> {
    pub(crate) fn new(main: M, other: O, open: &'static str, form: fn(&str, bool) -> Form) -> Self {
        FormSwitch {
            main,
            other,
            open,
            form,
            in_other: false,
            fed: 0,
            look: String::new(),
        }
    }

    fn give_main(&mut self, s: &str, em: &mut Emitter) {
        if !s.is_empty() {
            hand_over(&mut self.main, &mut self.fed, s, em);
        }
    }

    fn give_other(&mut self, s: &str, em: &mut Emitter) {
        hand_over(&mut self.other, &mut self.fed, s, em);
    }

    /// The first open marker in `s`: where it begins, and whether it is whole (else `s` ends
    /// with a piece of it); the length of `s` when there is none.
    fn find_open(&self, s: &str) -> (usize, bool) {
        let b = s.as_bytes();
        let m = self.open.as_bytes();
        let mut k = 0;
        while let Some(d) = find1(m[0], &b[k..]) {
            let at = k + d;
            let tail = &b[at..];
            if tail.starts_with(m) {
                return (at, true);
            }
            if m.starts_with(tail) {
                return (at, false);
            }
            k = at + 1;
        }
        (b.len(), false)
    }
}

impl<M: Reader, O: Reader> Scanner for FormSwitch<M, O> {
    fn feed(&mut self, text: &str, em: &mut Emitter) {
        let joined = after_look(&mut self.look, text);
        let s = joined.as_ref();
        let mut i = 0;
        while i < s.len() {
            if self.in_other {
                // No further than where the other engine may stop: its block ends there.
                let n = self.other.quiet_run(&s[i..]);
                self.give_other(&s[i..i + n], em);
                i += n;
                if self.other.idle() {
                    self.in_other = false;
                }
                continue;
            }
            let rest = &s[i..];
            let (m, whole) = self.find_open(rest);
            self.give_main(&rest[..m], em);
            i += m;
            if i == s.len() {
                break;
            }
            if !self.main.idle() && self.main.in_args() {
                // Inside a block of the main form (a value may hold the marker): it decides.
                let n = if whole { self.open.len() } else { s.len() - i };
                self.give_main(&s[i..i + n], em);
                i += n;
                continue;
            }
            if !whole {
                self.look.push_str(&s[i..]);
                return;
            }
            match (self.form)(&s[i..], false) {
                Form::Unknown => {
                    self.look.push_str(&s[i..]);
                    return;
                }
                Form::Other if self.main.idle() => self.in_other = true,
                Form::Other => {
                    // Past a block of the main form, waiting for what may follow it: not coming.
                    self.main.settle(em);
                    if self.main.idle() {
                        self.in_other = true;
                    } else {
                        let n = self.open.len();
                        self.give_main(&s[i..i + n], em);
                        i += n;
                    }
                }
                Form::Main => {
                    let n = self.open.len();
                    self.give_main(&s[i..i + n], em);
                    i += n;
                }
            }
        }
    }

    fn finish(&mut self, em: &mut Emitter) {
        let look = std::mem::take(&mut self.look);
        if look.starts_with(self.open) && (self.form)(&look, true) == Form::Other {
            self.in_other = true;
            self.give_other(&look, em);
        } else {
            self.give_main(&look, em);
        }
        if self.in_other {
            self.other.finish(em);
        } else {
            catch_up(&mut self.main, self.fed);
            self.main.finish(em);
        }
    }

    fn in_call(&self) -> bool {
        if self.in_other {
            self.other.in_call()
        } else {
            self.main.in_call()
        }
    }

    fn in_args(&self) -> bool {
        if self.in_other {
            self.other.in_args()
        } else {
            self.main.in_args()
        }
    }

    fn cut(&mut self, em: &mut Emitter) {
        // A marker held to see its form cannot open a block across a reasoning marker.
        let look = std::mem::take(&mut self.look);
        self.give_main(&look, em);
        if self.in_other {
            self.other.cut(em);
        } else {
            self.main.cut(em);
        }
    }
}

impl Reader for crate::protocol::scan::framed::FramedScanner {
    fn settle(&mut self, em: &mut Emitter) {
        self.settle(em)
    }
}

impl Reader for crate::protocol::scan::markup::MarkupScanner {
    fn settle(&mut self, em: &mut Emitter) {
        self.settle(em)
    }
}

/// Nothing of a Python list waits for what follows it.
impl Reader for crate::protocol::scan::python_calls::PyCallsScanner {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::scan::framed::FramedScanner;
    // `<<NAME|{…}>>` beside `<<NAME<k>v</k>>>`-like markup: `<<` opens both, a `|` after the
    // name says JSON.
    use crate::protocol::scan::framed::tests::SYNTAX as JSON;
    use crate::protocol::scan::markup::{Dialect, MarkupScanner, Opener, XML_TAGS};
    use crate::protocol::tests_support::{EngineCase, engine_cases, scan_every_split};
    use crate::tool::ToolSet;

    static MARKUP: Dialect = Dialect {
        blocks: &[],
        function: Opener::Bare("<<"),
        function_close: "</call",
        name_sep: None,
        parameter: Opener::Keyed {
            key: "<key",
            key_close: "</key",
            kind: None,
            value: "<value",
        },
        parameter_close: "</value",
        separators: false,
        suffixed: false,
        string_attr: None,
        function_shown: "<<NAME",
        parameter_shown: "<key>…</key><value>…</value>",
        variants: &[],
        frames: &[],
        colon_close: false,
        unwrap_cdata: false,
        tags: &XML_TAGS,
    };

    fn form(s: &str, at_end: bool) -> Form {
        let rest = &s[2..];
        match rest.find(['|', '<']) {
            Some(p) if rest.as_bytes()[p] == b'|' => Form::Other,
            Some(_) => Form::Main,
            None if at_end || rest.len() > 64 => Form::Main,
            None => Form::Unknown,
        }
    }

    fn make(tools: ToolSet) -> Box<dyn Scanner> {
        Box::new(FormSwitch::new(
            MarkupScanner::new(tools.clone(), &MARKUP),
            FramedScanner::new(&JSON, tools),
            "<<",
            form,
        ))
    }

    /// The other form answers the standard cases through the switch.
    #[test]
    fn the_other_form_answers_the_standard_cases() {
        engine_cases(
            &make,
            &EngineCase {
                call: r#"<<get_weather|{"city": "Paris"}>>"#,
                unfinished: r#"<<get_weather|{"city": "Pa"#,
                malformed: r#"<<get_weather|{"city": }>>"#,
            },
        );
    }

    /// Blocks of both forms in one text, each read by its engine, spans in one coordinate.
    #[test]
    fn both_forms_in_one_text() {
        let text = "a <<get_weather<key>city</key><value>Paris</value></call> b <<search|{\"query\": \"x<<y\"}>> c";
        let c = scan_every_split(&make, text, false).call_count(2);
        assert_eq!(c.calls[1].1, serde_json::json!({"query": "x<<y"}));
        assert_eq!(c.text, "a  b  c");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }
}
