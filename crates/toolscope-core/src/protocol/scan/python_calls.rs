//! Python call lists: the scanner behind `pythonic` (Llama 3.2/4, Olmo 3) and `lfm2` (Liquid).
//!
//! ```text
//! [get_weather(city='Paris', days=3), search(query="rain")]
//! <|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>
//! ```
//!
//! A list of calls in Python syntax: keyword arguments whose values are Python literals
//! (strings in single, double or triple quotes with their escapes, `r`/`u` prefixes, ints,
//! floats, `True`/`False`/`None`, lists, tuples read as lists, dicts), nested to a bounded depth.
//! A format is data ([`PySyntax`]): markers that wrap a list (always read after the open marker),
//! and whether a list is also read bare in text.
//!
//! Bare lists: a `[` is a call list only when whitespace, a name and `(` follow it; anything else
//! (`see [1]`, `[a, b]`) is text, with no error. The name must be one of the tools, except at the
//! start of a line, where any function name opens a list (the model's answer is the list; a
//! name that is not a tool gives an `unknown-tool` error). Only that ambiguous start (`[get_wea`
//! at a chunk's end) is held back; text streams out as it comes.
//!
//! Bare call lines (Granite's form, [`PySyntax::lines`]): a call of an offered tool alone at the
//! start of a line, `get_weather(city="SF")`, no brackets and no markers, is a call; its name
//! must be a tool's and be followed directly by `(`, else the line is text, with no error.
//!
//! Each call begins as soon as its `name(` is read; its arguments stream as canonical JSON
//! through the [`ArgsWriter`] (string pieces as they arrive, other values once complete).
//! Positional arguments are named by the tool's schema, in the order of its properties; for a
//! tool that is not known, or past the last property, they are malformed. A list that breaks
//! keeps the calls it completed; the rest of its markup is text with an `error` part, and the
//! byte that broke it is read again as text.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;

use crate::args::ArgsWriter;
use crate::json::JsonSink;
use crate::json::lexer::{MAX_DEPTH, number_value};
use crate::part::{ErrorPart, PartId};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::holdback::{Holdback, Steps, drive};
use crate::protocol::text::scanner::{Scanner, is_ws, ws_end};
use crate::tool::{Tool, ToolSet};

/// A format of Python call lists.
pub(crate) struct PySyntax {
    /// The markers around a list (`<|tool_call_start|>`, `<|tool_call_end|>`).
    pub wrap: Option<(&'static str, &'static str)>,
    /// A list is also read bare in text.
    pub bare: bool,
    /// A call of an offered tool alone at the start of a line, without a list around it, is
    /// read too (one call per line).
    pub lines: bool,
}

/// The longest a call's name may be.
const MAX_NAME: usize = 256;
/// The most whitespace between a bare list's `[`, the first name and its `(`.
const MAX_GAP: usize = 64;

/// The character at `i` (a char boundary), if any.
fn char_at(s: &str, i: usize) -> Option<char> {
    s.get(i..).and_then(|r| r.chars().next())
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// A character of a call's name: an identifier's, or `-`, `.`, `:` (tool names that are not
/// Python identifiers, `weather.v2`).
fn is_name_char(c: char) -> bool {
    is_ident(c) || matches!(c, '-' | '.' | ':')
}

/// The end of the run of characters from `i` that `keep` accepts.
/// A name being read a piece at a time: the run of its characters at `i` is added to `word`, and
/// `Some` is where the run ends; `None` when none is at `i` (the name ended before it).
fn word_run(word: &mut String, s: &str, i: usize, keep: impl Fn(char) -> bool) -> Option<usize> {
    let end = run_end(s, i, keep);
    (end > i).then(|| {
        word.push_str(&s[i..end]);
        end
    })
}

fn run_end(s: &str, i: usize, keep: impl Fn(char) -> bool) -> usize {
    let mut j = i;
    for c in s[i..].chars() {
        if !keep(c) {
            break;
        }
        j += c.len_utf8();
    }
    j
}

// ---------------------------------------------------------------------------------------------
// Values

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum DictAt {
    /// A key, or the `}`.
    Key,
    /// The `:` after a key.
    Colon,
    /// The value after `:`.
    Value,
    /// A `,` or the `}` after a value.
    Comma,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ctx {
    List,
    Tuple,
    Dict(DictAt),
}

enum Esc {
    None,
    /// A backslash was read.
    Backslash,
    /// A raw string's backslash: it and the next character are content.
    RawNext,
    /// `\x`, `\u`, `\U`: `need` more hex digits.
    Hex {
        need: u8,
        acc: u32,
        unicode: bool,
    },
    /// `\0`…`\7`: octal digits read so far.
    Oct {
        n: u8,
        acc: u32,
    },
}

struct Str {
    quote: u8,
    triple: bool,
    raw: bool,
    esc: Esc,
    /// Quotes read in a triple-quoted string that may be its close.
    closing: u8,
    /// A `\u` high surrogate waiting for its low half.
    high: Option<u32>,
}

enum Vs {
    /// A value is expected (or a closing bracket after `[`, `(`, `{` or a trailing comma).
    Before,
    /// One quote read: a string opens (or two more make a triple quote).
    Quote1 {
        quote: u8,
        raw: bool,
    },
    /// Two quotes read: an empty string, or a triple quote's start.
    Quote2 {
        quote: u8,
        raw: bool,
    },
    Str(Box<Str>),
    /// A string closed: whitespace, then another string literal goes on with it (Python joins
    /// adjacent literals, `"a" "b"`), anything else ends it.
    StrGap,
    Num(String),
    Word(String),
    /// A value inside a container is complete.
    After,
}

/// Reads one argument value and writes it to the arguments writer.
struct ValueReader {
    stack: Vec<Ctx>,
    st: Vs,
    /// The dict key being read (its value is a key, not written as a value).
    key: Option<String>,
}

type VResult = Result<(usize, bool), (usize, String)>;

impl ValueReader {
    fn new() -> Self {
        ValueReader {
            stack: Vec::new(),
            st: Vs::Before,
            key: None,
        }
    }

    fn reset(&mut self) {
        self.stack.clear();
        self.st = Vs::Before;
        self.key = None;
    }

    /// Whether a dict key is expected where the next value starts.
    fn at_key(&self) -> bool {
        self.stack.last() == Some(&Ctx::Dict(DictAt::Key))
    }

    /// A piece of the string being read: into the key, or to the writer.
    fn piece(&mut self, w: &mut ArgsWriter, text: &str) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        match &mut self.key {
            Some(k) => {
                k.push_str(text);
                Ok(())
            }
            None => w.string_piece(text),
        }
    }

    /// A string's characters, a pending surrogate written first.
    fn str_piece(&mut self, w: &mut ArgsWriter, text: &str) -> Result<(), String> {
        if let Vs::Str(st) = &mut self.st
            && st.high.take().is_some()
        {
            self.piece(w, "\u{fffd}")?;
        }
        self.piece(w, text)
    }

    fn begin_string(&mut self, w: &mut ArgsWriter) -> Result<(), String> {
        if self.at_key() {
            self.key = Some(String::new());
            Ok(())
        } else {
            w.begin_string()
        }
    }

    /// A scalar value; as a key, its JSON text (as Python's `json.dumps` writes such keys).
    fn scalar(&mut self, w: &mut ArgsWriter, v: Value) -> Result<(), String> {
        if self.at_key() {
            self.key = Some(match &v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            Ok(())
        } else {
            w.scalar(v)
        }
    }

    fn open(&mut self, w: &mut ArgsWriter, ctx: Ctx) -> Result<(), String> {
        if self.at_key() {
            return Err("a dict key must be a string or a number".into());
        }
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("a value nested deeper than {MAX_DEPTH} levels"));
        }
        match ctx {
            Ctx::Dict(_) => w.begin_object()?,
            _ => w.begin_array()?,
        }
        self.stack.push(ctx);
        self.st = Vs::Before;
        Ok(())
    }

    fn close(&mut self, w: &mut ArgsWriter) -> Result<bool, String> {
        match self.stack.pop() {
            Some(Ctx::Dict(_)) => w.end_object()?,
            Some(_) => w.end_array()?,
            None => return Err("a closing bracket with nothing open".into()),
        }
        self.done(w)
    }

    /// A value is complete: true when it was the argument's whole value.
    fn done(&mut self, w: &mut ArgsWriter) -> Result<bool, String> {
        if let Some(k) = self.key.take() {
            w.key(&k)?;
            if let Some(top) = self.stack.last_mut() {
                *top = Ctx::Dict(DictAt::Colon);
            }
            self.st = Vs::After;
            return Ok(false);
        }
        match self.stack.last_mut() {
            None => Ok(true),
            Some(top) => {
                if let Ctx::Dict(at) = top {
                    *at = DictAt::Comma;
                }
                self.st = Vs::After;
                Ok(false)
            }
        }
    }

    /// A string literal closed; the value goes on if another literal follows (never complete
    /// here: `Ok(false)`).
    fn end_string(&mut self, w: &mut ArgsWriter) -> Result<bool, String> {
        if let Vs::Str(st) = &mut self.st
            && st.high.take().is_some()
        {
            self.piece(w, "\u{fffd}")?;
        }
        self.st = Vs::StrGap;
        Ok(false)
    }

    /// After a string literal, `c` at `i`: whitespace waits, a quote opens the next literal of
    /// the same value, anything else ends the value (and is read again after it).
    fn gap(&mut self, c: u8, i: usize, w: &mut ArgsWriter) -> Result<(usize, bool), String> {
        if is_ws(c) {
            return Ok((i + 1, false));
        }
        if matches!(c, b'\'' | b'"') {
            self.st = Vs::Quote1 {
                quote: c,
                raw: false,
            };
            return Ok((i + 1, false));
        }
        if self.key.is_none() {
            w.end_string()?;
        }
        self.done(w).map(|d| (i, d))
    }

    /// Reads from `s[i..]`: `Ok((j, true))` when the value completed at `j` (the byte there is
    /// not the value's), `Ok((len, false))` when it goes on, `Err((at, why))` when it broke at
    /// byte `at`.
    fn feed(&mut self, s: &str, mut i: usize, w: &mut ArgsWriter) -> VResult {
        let b = s.as_bytes();
        while i < b.len() {
            let c = b[i];
            let r: VResult = match &mut self.st {
                Vs::Before => self.before(s, i, w).map_err(|e| (i, e)),
                Vs::After => self.after(c, i, w).map_err(|e| (i, e)),
                Vs::Quote1 { quote, raw } => {
                    let (quote, raw) = (*quote, *raw);
                    if c == quote {
                        self.st = Vs::Quote2 { quote, raw };
                        Ok((i + 1, false))
                    } else {
                        self.st = Vs::Str(Box::new(Str::new(quote, false, raw)));
                        Ok((i, false))
                    }
                }
                Vs::Quote2 { quote, raw } => {
                    let (quote, raw) = (*quote, *raw);
                    if c == quote {
                        self.st = Vs::Str(Box::new(Str::new(quote, true, raw)));
                        Ok((i + 1, false))
                    } else {
                        self.st = Vs::Str(Box::new(Str::new(quote, false, raw)));
                        self.end_string(w).map(|d| (i, d)).map_err(|e| (i, e))
                    }
                }
                Vs::Str(_) => self.string(s, i, w).map_err(|e| (i, e)),
                Vs::StrGap => self.gap(c, i, w).map_err(|e| (i, e)),
                Vs::Num(tok) => {
                    let j = run_end(s, i, |ch| {
                        ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'
                    });
                    tok.push_str(&s[i..j]);
                    if j == b.len() {
                        Ok((j, false))
                    } else if matches!(b[j], b'+' | b'-')
                        && tok.ends_with(['e', 'E'])
                        && !tok.contains(['x', 'X'])
                    {
                        // The sign of an exponent.
                        tok.push(b[j] as char);
                        Ok((j + 1, false))
                    } else {
                        let tok = std::mem::take(tok);
                        match py_number(&tok) {
                            Some(v) => self
                                .scalar(w, v)
                                .and_then(|_| self.done(w))
                                .map(|d| (j, d))
                                .map_err(|e| (j, e)),
                            None => Err((j, format!("\"{}\" is not a number", clip(&tok)))),
                        }
                    }
                }
                Vs::Word(word) => {
                    let end = run_end(s, i, is_ident);
                    word.push_str(&s[i..end]);
                    if end < b.len() {
                        let word = std::mem::take(word);
                        self.word_end(word, b[end], end, w).map_err(|e| (end, e))
                    } else {
                        Ok((end, false))
                    }
                }
            };
            match r {
                Ok((j, true)) => return Ok((j, true)),
                Ok((j, false)) => i = j,
                Err(e) => return Err(e),
            }
        }
        Ok((i, false))
    }

    /// A word ended before `next` (at `at`): a literal, or a string prefix.
    fn word_end(
        &mut self,
        word: String,
        next: u8,
        at: usize,
        w: &mut ArgsWriter,
    ) -> Result<(usize, bool), String> {
        if matches!(next, b'\'' | b'"') && matches!(word.as_str(), "r" | "R" | "u" | "U") {
            self.begin_string(w)?;
            self.st = Vs::Quote1 {
                quote: next,
                raw: word.eq_ignore_ascii_case("r"),
            };
            return Ok((at + 1, false));
        }
        let v = word_value(&word)?;
        self.scalar(w, v)?;
        self.done(w).map(|d| (at, d))
    }

    fn before(&mut self, s: &str, i: usize, w: &mut ArgsWriter) -> Result<(usize, bool), String> {
        let c = s.as_bytes()[i];
        if is_ws(c) {
            return Ok((i + 1, false));
        }
        match c {
            b'\'' | b'"' => {
                self.begin_string(w)?;
                self.st = Vs::Quote1 {
                    quote: c,
                    raw: false,
                };
                Ok((i + 1, false))
            }
            b'[' => self.open(w, Ctx::List).map(|_| (i + 1, false)),
            b'(' => self.open(w, Ctx::Tuple).map(|_| (i + 1, false)),
            b'{' => self.open(w, Ctx::Dict(DictAt::Key)).map(|_| (i + 1, false)),
            b']' | b')' | b'}' => {
                // An empty container, or one with a trailing comma.
                let fits = matches!(
                    (self.stack.last(), c),
                    (Some(Ctx::List), b']')
                        | (Some(Ctx::Tuple), b')')
                        | (Some(Ctx::Dict(DictAt::Key)), b'}')
                );
                if !fits {
                    return Err(format!("a value is missing before '{}'", c as char));
                }
                self.close(w).map(|d| (i + 1, d))
            }
            b'-' | b'+' | b'.' | b'0'..=b'9' => {
                let mut tok = String::new();
                tok.push(c as char);
                self.st = Vs::Num(tok);
                Ok((i + 1, false))
            }
            _ => match char_at(s, i) {
                Some(ch) if is_ident_start(ch) => {
                    self.st = Vs::Word(String::new());
                    Ok((i, false))
                }
                Some(ch) => Err(format!("'{ch}' cannot start a value")),
                None => Err("a value is missing".into()),
            },
        }
    }

    fn after(&mut self, c: u8, i: usize, w: &mut ArgsWriter) -> Result<(usize, bool), String> {
        if is_ws(c) {
            return Ok((i + 1, false));
        }
        let top = self.stack.last().copied();
        match (top, c) {
            (Some(Ctx::List | Ctx::Tuple), b',') => {
                self.st = Vs::Before;
                Ok((i + 1, false))
            }
            (Some(Ctx::Dict(DictAt::Comma)), b',') => {
                self.stack.pop();
                self.stack.push(Ctx::Dict(DictAt::Key));
                self.st = Vs::Before;
                Ok((i + 1, false))
            }
            (Some(Ctx::Dict(DictAt::Colon)), b':') => {
                self.stack.pop();
                self.stack.push(Ctx::Dict(DictAt::Value));
                self.st = Vs::Before;
                Ok((i + 1, false))
            }
            (Some(Ctx::List), b']')
            | (Some(Ctx::Tuple), b')')
            | (Some(Ctx::Dict(DictAt::Comma)), b'}') => self.close(w).map(|d| (i + 1, d)),
            (Some(Ctx::Dict(DictAt::Colon)), _) => Err("a dict key without ':' after it".into()),
            _ => Err(format!(
                "'{}' where ',' or a closing bracket belongs",
                (c as char).escape_default()
            )),
        }
    }

    /// Inside a string.
    fn string(&mut self, s: &str, i: usize, w: &mut ArgsWriter) -> Result<(usize, bool), String> {
        let b = s.as_bytes();
        let Vs::Str(st) = &mut self.st else {
            return Ok((i, false));
        };
        let c = b[i];
        match &mut st.esc {
            Esc::None => {
                let (quote, triple, closing) = (st.quote, st.triple, st.closing);
                if c == quote {
                    if !triple {
                        return self.end_string(w).map(|d| (i + 1, d));
                    }
                    if closing == 2 {
                        return self.end_string(w).map(|d| (i + 1, d));
                    }
                    st.closing += 1;
                    return Ok((i + 1, false));
                }
                if closing > 0 {
                    // Quotes that did not close a triple-quoted string are content.
                    st.closing = 0;
                    let q = (quote as char).to_string().repeat(closing as usize);
                    self.str_piece(w, &q)?;
                }
                if c == b'\\' {
                    if let Vs::Str(st) = &mut self.st {
                        st.esc = if st.raw { Esc::RawNext } else { Esc::Backslash };
                    }
                    return Ok((i + 1, false));
                }
                let mut j = i;
                while j < b.len() && b[j] != quote && b[j] != b'\\' {
                    j += 1;
                }
                self.str_piece(w, &s[i..j])?;
                Ok((j, false))
            }
            Esc::RawNext => {
                st.esc = Esc::None;
                let len = char_at(s, i).map_or(1, char::len_utf8);
                let mut t = String::from("\\");
                t.push_str(&s[i..i + len]);
                self.str_piece(w, &t)?;
                Ok((i + len, false))
            }
            Esc::Backslash => {
                st.esc = Esc::None;
                let simple = match c {
                    b'\n' => Some(""),
                    b'\\' => Some("\\"),
                    b'\'' => Some("'"),
                    b'"' => Some("\""),
                    b'a' => Some("\u{7}"),
                    b'b' => Some("\u{8}"),
                    b'f' => Some("\u{c}"),
                    b'n' => Some("\n"),
                    b'r' => Some("\r"),
                    b't' => Some("\t"),
                    b'v' => Some("\u{b}"),
                    _ => None,
                };
                if let Some(t) = simple {
                    self.str_piece(w, t)?;
                    return Ok((i + 1, false));
                }
                match c {
                    b'0'..=b'7' => {
                        st.esc = Esc::Oct {
                            n: 1,
                            acc: u32::from(c - b'0'),
                        };
                        Ok((i + 1, false))
                    }
                    b'x' | b'u' | b'U' => {
                        st.esc = Esc::Hex {
                            need: match c {
                                b'x' => 2,
                                b'u' => 4,
                                _ => 8,
                            },
                            acc: 0,
                            unicode: c != b'x',
                        };
                        Ok((i + 1, false))
                    }
                    _ => {
                        // An unknown escape keeps its backslash, as in Python.
                        let len = char_at(s, i).map_or(1, char::len_utf8);
                        let mut t = String::from("\\");
                        t.push_str(&s[i..i + len]);
                        self.str_piece(w, &t)?;
                        Ok((i + len, false))
                    }
                }
            }
            Esc::Oct { n, acc } => {
                if (b'0'..=b'7').contains(&c) && *n < 3 {
                    *acc = *acc * 8 + u32::from(c - b'0');
                    *n += 1;
                    return Ok((i + 1, false));
                }
                let code = *acc;
                st.esc = Esc::None;
                let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                self.str_piece(w, ch.encode_utf8(&mut [0; 4]))?;
                Ok((i, false))
            }
            Esc::Hex { need, acc, unicode } => {
                let Some(d) = (c as char).to_digit(16) else {
                    return Err("a \\x, \\u or \\U escape with too few hex digits".into());
                };
                *acc = *acc * 16 + d;
                *need -= 1;
                if *need > 0 {
                    return Ok((i + 1, false));
                }
                let (code, unicode) = (*acc, *unicode);
                st.esc = Esc::None;
                if unicode && (0xD800..0xDC00).contains(&code) {
                    let lone = st.high.replace(code).is_some();
                    if lone {
                        self.piece(w, "\u{fffd}")?;
                    }
                    return Ok((i + 1, false));
                }
                let ch = if unicode && (0xDC00..0xE000).contains(&code) {
                    match st.high.take() {
                        Some(h) => char::from_u32(0x10000 + ((h - 0xD800) << 10) + (code - 0xDC00)),
                        None => Some('\u{fffd}'),
                    }
                } else {
                    char::from_u32(code)
                };
                let Some(ch) = ch else {
                    return Err(format!("\\U{code:08x} is not a character"));
                };
                self.str_piece(w, ch.encode_utf8(&mut [0; 4]))?;
                Ok((i + 1, false))
            }
        }
    }

    /// Why the value is not complete, at the end of the output.
    fn is_mid_value(&self) -> bool {
        !(self.stack.is_empty() && matches!(self.st, Vs::Before))
    }
}

impl Str {
    fn new(quote: u8, triple: bool, raw: bool) -> Self {
        Str {
            quote,
            triple,
            raw,
            esc: Esc::None,
            closing: 0,
            high: None,
        }
    }
}

fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

/// A Python number token: decimal (with `_` separators), or `0x`/`0o`/`0b` integers.
fn py_number(tok: &str) -> Option<Value> {
    let t: String = tok.chars().filter(|c| *c != '_').collect();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t.as_str()),
    };
    let radix = match digits.get(..2) {
        Some("0x" | "0X") => 16,
        Some("0o" | "0O") => 8,
        Some("0b" | "0B") => 2,
        _ => 10,
    };
    if radix != 10 {
        let n = i128::from_str_radix(&digits[2..], radix).ok()?;
        let n = if neg { -n } else { n };
        return serde_json::from_str(&n.to_string()).ok();
    }
    if digits
        .bytes()
        .any(|b| b.is_ascii_alphabetic() && b != b'e' && b != b'E')
    {
        return None;
    }
    number_value(&t)
}

/// The value of a bare word in value position.
fn word_value(word: &str) -> Result<Value, String> {
    match word {
        "True" | "true" => Ok(Value::Bool(true)),
        "False" | "false" => Ok(Value::Bool(false)),
        "None" | "null" => Ok(Value::Null),
        other => Err(format!(
            "\"{}\" is not a literal (write strings in quotes)",
            clip(other)
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Lists of calls

/// What one call to [`ListReader::feed`] achieved.
enum Outcome {
    /// Everything was read; the list goes on.
    More,
    /// The list closed after this many bytes.
    Done(usize),
    /// Before the first call opened: this is not a call list; this many bytes were read.
    NotAList(usize),
    /// The list broke at this byte, for this reason.
    Error(usize, String),
}

struct Call {
    name: String,
    id: PartId,
    writer: ArgsWriter,
    tool: Option<Arc<Tool>>,
    keys: HashSet<String>,
    positional: usize,
    keyword_seen: bool,
}

enum St {
    /// After `[` or a `,` between calls: whitespace, then a name.
    BeforeName {
        gap: usize,
    },
    Name(String),
    AfterName {
        name: String,
        gap: usize,
    },
    /// After `(` or `,` in a call: an argument, or `)`.
    BeforeArg,
    /// A word in argument position: a keyword if `=` follows, else a value.
    ArgWord(String),
    AfterArgWord(String),
    /// After `name=`: whitespace, then the value.
    BeforeKwValue,
    Value,
    /// After an argument: `,` or `)`.
    AfterArg,
    /// After a call's `)`: `,` or `]`.
    AfterCall,
    Done,
}

/// Reads one list of calls, from the byte after its `[`.
struct ListReader {
    tools: ToolSet,
    /// Any function name may open the list (else only a tool's).
    any_name: bool,
    /// The list is inside the format's markers.
    wrapped: bool,
    /// Not a list: one call, bare at the start of a line; it ends at its `)`.
    single: bool,
    st: St,
    call: Option<Call>,
    value: ValueReader,
    calls: usize,
    /// Bytes read so far, and where the last completed call ended.
    pos: usize,
    good: usize,
}

struct Fail {
    at: usize,
    why: String,
}

impl ListReader {
    fn new(tools: ToolSet, any_name: bool, wrapped: bool) -> Self {
        ListReader {
            tools,
            any_name,
            wrapped,
            single: false,
            st: St::BeforeName { gap: 0 },
            call: None,
            value: ValueReader::new(),
            calls: 0,
            pos: 0,
            good: 0,
        }
    }

    /// One call bare at a line's start (a tool's name, then `(` right after it).
    fn single_line(tools: ToolSet) -> Self {
        ListReader {
            single: true,
            ..ListReader::new(tools, false, false)
        }
    }

    /// Still deciding whether the list is one (no call has begun).
    fn undecided(&self) -> bool {
        self.calls == 0 && self.call.is_none()
    }

    fn feed(&mut self, s: &str, em: &mut Emitter) -> Outcome {
        let b = s.as_bytes();
        let mut i = 0;
        let out = loop {
            if i >= b.len() {
                break Outcome::More;
            }
            match self.step(s, i, em) {
                Ok(j) if matches!(self.st, St::Done) => break Outcome::Done(j),
                Ok(j) => i = j,
                Err(f) => {
                    let not_list = self.undecided();
                    self.pos += f.at;
                    if not_list {
                        return Outcome::NotAList(f.at);
                    }
                    self.abort(em);
                    return Outcome::Error(f.at, f.why);
                }
            }
        };
        self.sync(em);
        self.pos += match out {
            Outcome::Done(n) => n,
            _ => s.len(),
        };
        out
    }

    /// The open call's new argument text, as a delta.
    fn sync(&mut self, em: &mut Emitter) {
        if let Some(c) = &mut self.call
            && let Some(d) = c.writer.take_delta()
        {
            em.input_delta(&c.id, d);
        }
    }

    /// The open call broke: its input ends, no call follows.
    fn abort(&mut self, em: &mut Emitter) {
        self.sync(em);
        if let Some(c) = self.call.take() {
            em.abort_call(&c.id);
        }
    }

    fn step(&mut self, s: &str, i: usize, em: &mut Emitter) -> Result<usize, Fail> {
        let b = s.as_bytes();
        let c = b[i];
        let fail = |why: &str| {
            Err(Fail {
                at: i,
                why: why.to_string(),
            })
        };
        match &mut self.st {
            St::BeforeName { gap } => {
                if is_ws(c) {
                    *gap += 1;
                    if self.calls == 0 && *gap > MAX_GAP {
                        return fail("too much whitespace before the first call");
                    }
                    return Ok(i + 1);
                }
                if c == b']' && self.calls > 0 {
                    self.st = St::Done;
                    return Ok(i + 1);
                }
                match char_at(s, i) {
                    Some(ch) if is_ident_start(ch) => {
                        self.st = St::Name(String::new());
                        Ok(i)
                    }
                    _ => fail("a call list must hold calls: name(argument=value, …)"),
                }
            }
            St::Name(name) => {
                match word_run(name, s, i, is_name_char) {
                    Some(_) if name.len() > MAX_NAME => return fail("a call's name is too long"),
                    Some(end) => return Ok(end),
                    None => {}
                }
                let name = std::mem::take(name);
                self.st = St::AfterName { name, gap: 0 };
                Ok(i)
            }
            St::AfterName { name, gap } => {
                if is_ws(c) {
                    *gap += 1;
                    if *gap > MAX_GAP {
                        return fail("too much whitespace after a call's name");
                    }
                    return Ok(i + 1);
                }
                if c != b'(' {
                    return fail("a call's name must be followed by '('");
                }
                let (name, gap) = (std::mem::take(name), *gap);
                if self.single && gap > 0 {
                    // `search (the web)`: prose, not a call line.
                    return fail("not a call line");
                }
                let tool = self.tools.get_arc(&name).cloned();
                if self.undecided()
                    && !self.wrapped
                    && tool.is_none()
                    && (!self.any_name || gap > 0)
                {
                    // Prose such as `[note (…)]`, or a name that is not a tool's mid-line.
                    return fail("not a call list");
                }
                let id = em.begin_call(&name);
                let mut writer = ArgsWriter::new(tool.clone());
                writer.set_whole(em.is_whole());
                if let Err(e) = writer.begin_object() {
                    self.call = Some(Call::new(name, id, writer, tool));
                    return fail(&e);
                }
                self.call = Some(Call::new(name, id, writer, tool));
                self.st = St::BeforeArg;
                Ok(i + 1)
            }
            St::BeforeArg => {
                if is_ws(c) {
                    return Ok(i + 1);
                }
                if c == b')' {
                    return self.end_call(i, em);
                }
                match char_at(s, i) {
                    Some(ch) if is_ident_start(ch) => {
                        self.st = St::ArgWord(String::new());
                        Ok(i)
                    }
                    _ => {
                        if let Err(why) = self.positional() {
                            return fail(&why);
                        }
                        self.value.reset();
                        self.st = St::Value;
                        Ok(i)
                    }
                }
            }
            St::ArgWord(word) => {
                match word_run(word, s, i, is_ident) {
                    Some(_) if word.len() > MAX_NAME => {
                        return fail("an argument's name is too long");
                    }
                    Some(end) => return Ok(end),
                    None => {}
                }
                let word = std::mem::take(word);
                if is_ws(c) {
                    self.st = St::AfterArgWord(word);
                    return Ok(i + 1);
                }
                self.arg_word_end(word, s, i)
            }
            St::AfterArgWord(word) => {
                if is_ws(c) {
                    return Ok(i + 1);
                }
                let word = std::mem::take(word);
                self.arg_word_end(word, s, i)
            }
            St::BeforeKwValue => {
                if is_ws(c) {
                    return Ok(i + 1);
                }
                if matches!(c, b')' | b',') {
                    return fail("a keyword argument with no value");
                }
                self.value.reset();
                self.st = St::Value;
                Ok(i)
            }
            St::Value => {
                let Some(call) = &mut self.call else {
                    return fail("a value outside a call");
                };
                match self.value.feed(s, i, &mut call.writer) {
                    Ok((j, true)) => {
                        self.st = St::AfterArg;
                        Ok(j)
                    }
                    Ok((j, false)) => Ok(j),
                    Err((at, why)) => Err(Fail { at, why }),
                }
            }
            St::AfterArg => {
                if is_ws(c) {
                    return Ok(i + 1);
                }
                match c {
                    b',' => {
                        self.st = St::BeforeArg;
                        Ok(i + 1)
                    }
                    b')' => self.end_call(i, em),
                    _ => fail("expected ',' or ')' after an argument"),
                }
            }
            St::AfterCall => {
                if is_ws(c) {
                    return Ok(i + 1);
                }
                match c {
                    b',' => {
                        self.st = St::BeforeName { gap: 0 };
                        Ok(i + 1)
                    }
                    b']' => {
                        self.st = St::Done;
                        Ok(i + 1)
                    }
                    _ => fail("expected ',' or ']' after a call"),
                }
            }
            St::Done => Ok(i),
        }
    }

    /// A word in argument position ended before byte `i`: `name=`, a string prefix, or a
    /// positional value.
    fn arg_word_end(&mut self, word: String, s: &str, i: usize) -> Result<usize, Fail> {
        let c = s.as_bytes()[i];
        let fail = |why: String| Err(Fail { at: i, why });
        if c == b'=' && s.as_bytes().get(i + 1) != Some(&b'=') {
            let Some(call) = &mut self.call else {
                return fail("an argument outside a call".into());
            };
            call.keyword_seen = true;
            if !call.keys.insert(word.clone()) {
                return fail(format!("the argument \"{word}\" is given twice"));
            }
            if let Err(e) = call.writer.key(&word) {
                return fail(e);
            }
            self.st = St::BeforeKwValue;
            return Ok(i + 1);
        }
        // A positional value that starts with a word: feed the word to the value reader.
        if let Err(why) = self.positional() {
            return fail(why);
        }
        self.value.reset();
        self.value.st = Vs::Word(word);
        self.st = St::Value;
        Ok(i)
    }

    /// A positional argument begins: it is named by the tool's next property.
    fn positional(&mut self) -> Result<(), String> {
        let Some(call) = &mut self.call else {
            return Err("an argument outside a call".into());
        };
        if call.keyword_seen {
            return Err("a positional argument after a keyword argument".into());
        }
        let Some(tool) = &call.tool else {
            return Err(format!(
                "positional arguments need the tool's schema to be named, and \"{}\" is not one of the tools",
                call.name
            ));
        };
        let key = tool
            .schema()
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|p| p.keys().nth(call.positional))
            .cloned();
        let Some(key) = key else {
            return Err(format!(
                "\"{}\" has no parameter for positional argument {}",
                call.name,
                call.positional + 1
            ));
        };
        call.positional += 1;
        if !call.keys.insert(key.clone()) {
            return Err(format!("the argument \"{key}\" is given twice"));
        }
        call.writer.key(&key)
    }

    /// The call's `)` at byte `i`.
    fn end_call(&mut self, i: usize, em: &mut Emitter) -> Result<usize, Fail> {
        let Some(mut call) = self.call.take() else {
            return Err(Fail {
                at: i,
                why: "')' outside a call".into(),
            });
        };
        let closed = call.writer.end_object();
        if let Some(d) = call.writer.take_delta() {
            em.input_delta(&call.id, d);
        }
        let result = closed.and_then(|_| call.writer.finish());
        match result {
            Ok(args) => {
                em.end_call(call.id.clone(), &call.name, args);
                if call.tool.is_none() {
                    em.unknown_tool(call.id, &call.name);
                }
                self.calls += 1;
                self.good = self.pos + i + 1;
                self.st = if self.single { St::Done } else { St::AfterCall };
                Ok(i + 1)
            }
            Err(e) => {
                em.abort_call(&call.id);
                Err(Fail {
                    at: i,
                    why: format!("tool call \"{}\": {e}", call.name),
                })
            }
        }
    }

    /// The output ended inside the list. `Ok(())`: the calls made stand and what follows them
    /// is text (a list whose `]` is missing); `Err(why)`: the list was cut off inside a call.
    /// Before any call began it is not a list (`Ok`, nothing made).
    fn finish(&mut self, em: &mut Emitter) -> Result<(), String> {
        if self.undecided() {
            return if self.wrapped {
                Err("the output ended before the first call".into())
            } else {
                Ok(())
            };
        }
        let mid_call = self.call.is_some()
            || matches!(self.st, St::Name(_) | St::AfterName { .. })
            || (matches!(self.st, St::Value) && self.value.is_mid_value());
        if mid_call {
            self.abort(em);
            return Err("the output ended inside a tool call".into());
        }
        Ok(())
    }
}

impl Call {
    fn new(name: String, id: PartId, writer: ArgsWriter, tool: Option<Arc<Tool>>) -> Self {
        Call {
            name,
            id,
            writer,
            tool,
            keys: HashSet::new(),
            positional: 0,
            keyword_seen: false,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The scanner

/// The markup of one list read so far (with its wrap's markers).
struct Block {
    /// Offset of `raw`'s first byte.
    start: usize,
    raw: String,
    /// Bytes of `raw` before the list's `[`.
    prefix: usize,
    /// Bytes of `raw` that hold completed calls.
    good: usize,
    wrapped: bool,
}

impl Block {
    fn new(start: usize, wrapped: bool) -> Self {
        Block {
            start,
            raw: String::new(),
            prefix: 0,
            good: 0,
            wrapped,
        }
    }

    fn end(&self) -> usize {
        self.start + self.raw.len()
    }
}

enum State {
    Text,
    /// After the wrap's open marker: whitespace, then `[`.
    Opened(Block),
    List(Block, Box<ListReader>),
    /// A wrapped list closed: whitespace, then the close marker (whitespace kept apart).
    AfterList(Block, String),
    /// A broken wrapped list, skipped up to its close marker: why.
    Skip(Block, String),
}

pub(crate) struct PyCallsScanner {
    syntax: &'static PySyntax,
    tools: ToolSet,
    state: State,
    held: Holdback,
    /// Only whitespace since the start of the line (a bare list may call any name there).
    line_blank: bool,
    /// The first bytes of the tools' names (for bare call lines).
    name_firsts: Vec<u8>,
}

impl PyCallsScanner {
    pub(crate) fn new(syntax: &'static PySyntax, tools: ToolSet) -> Self {
        PyCallsScanner {
            syntax,
            state: State::Text,
            held: Holdback::default(),
            line_blank: true,
            name_firsts: {
                let mut f: Vec<u8> = tools
                    .iter()
                    .filter_map(|t| t.name().bytes().next())
                    .collect();
                f.sort_unstable();
                f.dedup();
                f
            },
            tools,
        }
    }

    /// Whether `piece` has a byte that may open a list or a wrap.
    fn may_open(&self, piece: &str) -> bool {
        let b = piece.as_bytes();
        if self.syntax.lines && (self.line_blank || crate::json::lexer::find1(b'\n', b).is_some()) {
            return true;
        }
        let open = self.syntax.wrap.map(|(o, _)| o.as_bytes()[0]);
        match (self.syntax.bare, open) {
            (true, Some(o)) => crate::json::lexer::find2(b'[', o, b).is_some(),
            (true, None) => crate::json::lexer::find1(b'[', b).is_some(),
            (false, Some(o)) => crate::json::lexer::find1(o, b).is_some(),
            (false, None) => false,
        }
    }

    fn emit_text(&mut self, s: &str, em: &mut Emitter) {
        if s.is_empty() {
            return;
        }
        em.text(s);
        if self.syntax.bare || self.syntax.lines {
            self.line_blank = match s.rfind('\n') {
                Some(p) => s[p + 1..].bytes().all(is_ws),
                None => self.line_blank && s.bytes().all(is_ws),
            };
        }
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let open = self.syntax.wrap.map(|(o, _)| o);
        let first = open.map(|o| o.as_bytes()[0]);
        let mut blank = self.line_blank;
        let mut j = i;
        while j < bytes.len() {
            let c = bytes[j];
            if self.syntax.lines {
                if blank && self.name_firsts.contains(&c) {
                    // Maybe a call alone on its line: the reader decides, from the name on.
                    self.emit_text(&text[i..j], em);
                    let b = Block::new(base + j, false);
                    let reader = ListReader::single_line(self.tools.clone());
                    self.state = State::List(b, Box::new(reader));
                    return j;
                }
                if c == b'\n' {
                    blank = true;
                } else if !is_ws(c) {
                    blank = false;
                }
            }
            if c == b'[' && self.syntax.bare {
                self.emit_text(&text[i..j], em);
                let mut b = Block::new(base + j, false);
                b.raw.push('[');
                let reader = ListReader::new(self.tools.clone(), self.line_blank, false);
                self.state = State::List(b, Box::new(reader));
                return j + 1;
            }
            if let (Some(o), Some(f)) = (open, first)
                && c == f
            {
                let rest = &text[j..];
                if rest.starts_with(o) {
                    self.emit_text(&text[i..j], em);
                    let mut b = Block::new(base + j, true);
                    b.raw.push_str(o);
                    self.state = State::Opened(b);
                    return j + o.len();
                }
                if rest.len() < o.len() && o.starts_with(rest) {
                    self.emit_text(&text[i..j], em);
                    return self.held.hold(text, j, base);
                }
            }
            j += 1;
        }
        self.emit_text(&text[i..], em);
        text.len()
    }

    fn opened(&mut self, mut b: Block, text: &str, i: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let k = ws_end(bytes, i);
        b.raw.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::Opened(b);
            return k;
        }
        if bytes[k] == b'[' {
            b.prefix = b.raw.len();
            b.raw.push('[');
            let reader = ListReader::new(self.tools.clone(), true, true);
            self.state = State::List(b, Box::new(reader));
            return k + 1;
        }
        self.fail(
            b,
            "the tool-call marker is not followed by a list of calls".into(),
            em,
        );
        k
    }

    fn list(
        &mut self,
        mut b: Block,
        mut reader: Box<ListReader>,
        text: &str,
        i: usize,
        em: &mut Emitter,
    ) -> usize {
        let rest = &text[i..];
        match reader.feed(rest, em) {
            Outcome::More => {
                b.raw.push_str(rest);
                self.state = State::List(b, reader);
                text.len()
            }
            Outcome::Done(n) => {
                b.raw.push_str(&rest[..n]);
                b.good = b.raw.len();
                if b.wrapped {
                    self.state = State::AfterList(b, String::new());
                } else {
                    em.span(b.start, b.end(), SpanKind::ToolCall);
                    self.line_blank = false;
                }
                i + n
            }
            Outcome::NotAList(n) => {
                b.raw.push_str(&rest[..n]);
                if b.wrapped {
                    self.fail(
                        b,
                        "the tool-call marker is not followed by calls".into(),
                        em,
                    );
                } else {
                    self.emit_text(&b.raw, em);
                }
                i + n
            }
            Outcome::Error(n, why) => {
                b.raw.push_str(&rest[..n]);
                if reader.calls > 0 {
                    b.good = b.prefix + usize::from(!reader.single) + reader.good;
                }
                self.fail(b, why, em);
                i + n
            }
        }
    }

    /// A broken list: a wrapped one is skipped to its close marker, a bare one ends here.
    fn fail(&mut self, b: Block, why: String, em: &mut Emitter) {
        if b.wrapped {
            self.state = State::Skip(b, why);
        } else {
            self.malformed(b, "malformed-tool-call", &why, em);
        }
    }

    /// Markup that could not be read: reported and kept as text; the calls it completed stay.
    fn malformed(&mut self, mut b: Block, reason: &str, why: &str, em: &mut Emitter) {
        self.state = State::Text;
        em.error(ErrorPart::reason(reason, why));
        let good = b.good.min(b.raw.len());
        if good > 0 {
            em.span(b.start, b.start + good, SpanKind::ToolCall);
        }
        let rest = if b.raw.is_char_boundary(good) {
            b.raw.split_off(good)
        } else {
            std::mem::take(&mut b.raw)
        };
        let start = b.start + good;
        self.emit_text(&rest, em);
        em.span(start, start + rest.len(), SpanKind::Malformed);
    }

    fn after_list(
        &mut self,
        mut b: Block,
        mut trailing: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let k = ws_end(bytes, i);
        trailing.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::AfterList(b, trailing);
            return k;
        }
        let close = self.syntax.wrap.map_or("", |(_, c)| c);
        let rest = &text[k..];
        if !close.is_empty() && rest.starts_with(close) {
            b.raw.push_str(&trailing);
            b.raw.push_str(close);
            em.span(b.start, b.end(), SpanKind::ToolCall);
            self.line_blank = false;
            return k + close.len();
        }
        if rest.len() < close.len() && close.starts_with(rest) {
            self.state = State::AfterList(b, trailing);
            return self.held.hold(text, k, base);
        }
        // The close marker is missing: the calls stand; the whitespace is text.
        em.span(b.start, b.end(), SpanKind::ToolCall);
        self.line_blank = false;
        self.emit_text(&trailing, em);
        k
    }

    fn skip(
        &mut self,
        mut b: Block,
        why: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let close = self.syntax.wrap.map_or("", |(_, c)| c);
        let rest = &text[i..];
        if close.is_empty() {
            self.malformed(b, "malformed-tool-call", &why, em);
            return i;
        }
        match rest.find(close) {
            Some(p) => {
                b.raw.push_str(&rest[..p + close.len()]);
                self.malformed(b, "malformed-tool-call", &why, em);
                i + p + close.len()
            }
            None => {
                let keep = partial_len(rest, close);
                b.raw.push_str(&rest[..rest.len() - keep]);
                self.state = State::Skip(b, why);
                if keep > 0 {
                    self.held.hold(text, text.len() - keep, base)
                } else {
                    text.len()
                }
            }
        }
    }
}

/// How many bytes at the end of `text` may begin `marker`.
fn partial_len(text: &str, marker: &str) -> usize {
    let max = marker.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

super::forked::handover_by_holdback!(PyCallsScanner);

impl Steps for PyCallsScanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.text(text, i, base, em),
            State::Opened(b) => self.opened(b, text, i, em),
            State::List(b, reader) => self.list(b, reader, text, i, em),
            State::AfterList(b, trailing) => self.after_list(b, trailing, text, i, base, em),
            State::Skip(b, why) => self.skip(b, why, text, i, base, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }
}

impl Scanner for PyCallsScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        if matches!(self.state, State::Text) && self.held.is_empty() && !self.may_open(piece) {
            self.held.advance(piece.len());
            self.emit_text(piece, em);
            return;
        }
        drive(self, piece, em);
    }

    fn finish(&mut self, em: &mut Emitter) {
        let held = self.held.take();
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.emit_text(&held, em),
            State::Opened(mut b) => {
                b.raw.push_str(&held);
                self.malformed(
                    b,
                    "unfinished-tool-call",
                    "the output ended after the tool-call marker",
                    em,
                );
            }
            State::List(mut b, mut reader) => {
                b.raw.push_str(&held);
                if reader.calls > 0 {
                    b.good = b.prefix + usize::from(!reader.single) + reader.good;
                }
                match reader.finish(em) {
                    Ok(()) if reader.calls == 0 => self.emit_text(&b.raw, em),
                    Ok(()) => {
                        let good = b.good.min(b.raw.len());
                        em.span(b.start, b.start + good, SpanKind::ToolCall);
                        let rest = b.raw.get(good..).unwrap_or("").to_string();
                        self.emit_text(&rest, em);
                    }
                    Err(why) => self.malformed(b, "unfinished-tool-call", &why, em),
                }
            }
            State::AfterList(b, mut trailing) => {
                trailing.push_str(&held);
                em.span(b.start, b.end(), SpanKind::ToolCall);
                self.emit_text(&trailing, em);
            }
            State::Skip(mut b, why) => {
                b.raw.push_str(&held);
                self.malformed(b, "malformed-tool-call", &why, em);
            }
        }
    }

    fn in_call(&self) -> bool {
        match &self.state {
            State::Text => false,
            // A bare `[name` only may begin a list; after the wrap's marker it is a call.
            State::List(b, reader) => b.wrapped || !reader.undecided(),
            _ => true,
        }
    }

    fn cut(&mut self, em: &mut Emitter) {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => {
                let held = self.held.take();
                self.emit_text(&held, em);
            }
            State::List(b, reader) if reader.undecided() && !b.wrapped => {
                self.emit_text(&b.raw, em);
            }
            other => self.state = other,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Writing calls

/// A value as a Python literal, strings in `quote`s.
pub(crate) fn write_py(out: &mut String, v: &Value, quote: char) {
    match v {
        Value::Null => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_py_str(out, s, quote),
        Value::Array(items) => {
            out.push('[');
            for (k, item) in items.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_py(out, item, quote);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (k, (key, item)) in map.iter().enumerate() {
                if k > 0 {
                    out.push_str(", ");
                }
                write_py_str(out, key, quote);
                out.push_str(": ");
                write_py(out, item, quote);
            }
            out.push('}');
        }
    }
}

/// A string as a Python literal in `quote`s: backslash, the quote, and control characters
/// escaped; everything else as it is.
fn write_py_str(out: &mut String, s: &str, quote: char) {
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

/// One call, `name(key=value, …)`; arguments that are not an object are left out.
pub(crate) fn write_call(out: &mut String, name: &str, input: &Value, quote: char) {
    out.push_str(name);
    out.push('(');
    if let Some(map) = input.as_object() {
        for (k, (key, v)) in map.iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            out.push_str(key);
            out.push('=');
            write_py(out, v, quote);
        }
    }
    out.push(')');
}

/// Calls as one Python list.
pub(crate) fn call_list(calls: &[(&str, &Value)], quote: char) -> String {
    let mut out = String::from("[");
    for (k, (name, input)) in calls.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        write_call(&mut out, name, input, quote);
    }
    out.push(']');
    out
}

/// A call whose last keyword argument has no value: broken in a way nothing repairs.
pub(crate) fn malformed_list(name: &str, input: &Value, quote: char) -> String {
    let mut out = String::from("[");
    write_call(&mut out, name, input, quote);
    out.pop();
    if input.as_object().is_some_and(|m| !m.is_empty()) {
        out.push_str(", ");
    }
    out.push_str("oops=)]");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;

    /// `<py>[NAME(key=value)]</py>`, never bare.
    static SYNTAX: PySyntax = PySyntax {
        wrap: Some(("<py>", "</py>")),
        bare: false,
        lines: false,
    };

    standard_cases!(|tools| PyCallsScanner::new(&SYNTAX, tools);
        "<py>[get_weather(city=\"Paris\")]</py>",
        "<py>[get_weather(city=\"Pa",
        "<py>[get_weather(city=)]</py>");
}
