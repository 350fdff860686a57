//! The gemma4 engine: `<|tool_call>call:NAME{key:value,…}<tool_call|>` calls, whose arguments
//! are written in gemma4's own value syntax (bare keys, `<|"|>`-quoted strings, bare words and
//! numbers), read by a streaming value parser. The format is `formats/gemma4.rs`.

use std::sync::Arc;

use serde_json::Value;

use crate::args::ArgsWriter;
use crate::json::lexer::{find1, find2, number_value};
use crate::json::{JsonSink, ValueBuilder};
use crate::part::{ErrorPart, PartId};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::holdback::{Holdback, Steps, drive, read_again_at_end};
use crate::protocol::text::names;
use crate::protocol::text::places::{Kept, cached};
use crate::protocol::text::run::DirectRun;
use crate::protocol::text::scanner::{Scanner, is_ws, ws_end};
use crate::tool::{Tool, ToolSet};

pub(crate) const OPEN: &str = "<|tool_call>";

pub(crate) const CLOSE: &str = "<tool_call|>";

pub(crate) const CALL: &str = "call:";

/// Gemma's string delimiter token.
pub(crate) const QUOTE: &str = "<|\"|>";

pub(crate) const THOUGHT_OPEN: &str = "<|channel>thought\n";

pub(crate) const THOUGHT_CLOSE: &str = "<channel|>";

/// The longest a function name may be after `call:` before the block is taken for malformed.
const MAX_NAME: usize = 256;

/// The deepest nesting of objects and arrays read in arguments.
const MAX_DEPTH: usize = 128;

/// A whole value written in Gemma's syntax at the start of `text` (which starts at its `{`):
/// the value and its length.
pub(crate) fn read_value(text: &str) -> Option<(Value, usize)> {
    let mut parser = ValueParser::new();
    let mut builder = ValueBuilder::new();
    match parser.feed(text, true, &mut builder) {
        Step::Done(len) => Some((builder.take()?, len)),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Reading Gemma's object syntax, a piece at a time.

/// What one call to [`ValueParser::feed`] achieved; offsets count from the start of the text
/// it was given.
#[derive(Debug, PartialEq, Eq)]
enum Step {
    /// Everything was read; the value is not complete yet.
    NeedMore,
    /// The text from this offset may begin a token that only more text can tell (`<|"` …): it
    /// must be given again, with what follows it.
    Hold(usize),
    /// The top-level object closed; this many bytes belong to it.
    Done(usize),
    /// The text is not Gemma's syntax at this offset.
    Error(usize, String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Object,
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    /// The top-level `{` must come.
    Root,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key, or `}` (a trailing comma).
    Key,
    /// A bare key, up to its `:`.
    BareKey,
    /// A key in double quotes.
    JsonKey,
    /// A key between `<|"|>` tokens.
    RawKey,
    /// After a quoted key.
    Colon,
    /// A value must come.
    Value,
    /// After `[` or `,` in an array: a value, or `]`.
    ValueOrEnd,
    /// A bare value (a number, a literal, a word), up to `,` or a closing bracket.
    Bare,
    /// A string between `<|"|>` tokens.
    RawStr,
    /// A string in double quotes.
    JsonStr,
    /// After a value: `,` or a closing bracket.
    After,
    Done,
}

/// Gemma's object syntax, read incrementally into a [`JsonSink`]: whatever way the text is cut,
/// the sink is told the same values.
struct ValueParser {
    stack: Vec<Frame>,
    st: St,
    /// The key or bare value being read.
    buf: String,
}

/// How `text` compares with the beginning of `lit`.
#[derive(PartialEq, Eq)]
enum Prefix {
    /// `text` starts with all of `lit`.
    Full,
    /// `text` is shorter than `lit` and begins it.
    Partial,
    No,
}

fn prefix(text: &[u8], lit: &str) -> Prefix {
    let lit = lit.as_bytes();
    let n = lit.len().min(text.len());
    if text[..n] != lit[..n] {
        Prefix::No
    } else if n == lit.len() {
        Prefix::Full
    } else {
        Prefix::Partial
    }
}

/// A JSON escape at `k` (a backslash): what it stands for and where the text after it begins;
/// `None` when the text ends before that can be told.
fn escape(text: &str, k: usize, at_end: bool) -> Option<(Esc, usize)> {
    let b = text.as_bytes();
    let Some(&c) = b.get(k + 1) else {
        return at_end.then_some((Esc::Literal, k + 1));
    };
    let simple = match c {
        b'"' => Some('"'),
        b'\\' => Some('\\'),
        b'/' => Some('/'),
        b'b' => Some('\u{8}'),
        b'f' => Some('\u{c}'),
        b'n' => Some('\n'),
        b'r' => Some('\r'),
        b't' => Some('\t'),
        _ => None,
    };
    if let Some(ch) = simple {
        return Some((Esc::Char(ch), k + 2));
    }
    if c != b'u' {
        return Some((Esc::Literal, k + 1));
    }
    let unit = |at: usize| -> Option<Option<u32>> {
        let digits = b.get(at..at + 4);
        match digits {
            None => {
                let have = &b[at.min(b.len())..];
                if have.iter().all(u8::is_ascii_hexdigit) {
                    None
                } else {
                    Some(None)
                }
            }
            Some(d) if d.iter().all(u8::is_ascii_hexdigit) => {
                let s = std::str::from_utf8(d).ok()?;
                Some(u32::from_str_radix(s, 16).ok())
            }
            Some(_) => Some(None),
        }
    };
    let first = match unit(k + 2) {
        None if !at_end => return None,
        None | Some(None) => return Some((Esc::Literal, k + 1)),
        Some(Some(u)) => u,
    };
    if !(0xD800..0xDC00).contains(&first) {
        let ch = char::from_u32(first).unwrap_or('\u{fffd}');
        return Some((Esc::Char(ch), k + 6));
    }
    // A high surrogate: a low one may follow as `\uXXXX`.
    let next = k + 6;
    match prefix(&b[next.min(b.len())..], "\\u") {
        Prefix::Partial if !at_end => return None,
        Prefix::Full => match unit(next + 2) {
            None if !at_end => return None,
            Some(Some(low)) if (0xDC00..0xE000).contains(&low) => {
                let code = 0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00);
                let ch = char::from_u32(code).unwrap_or('\u{fffd}');
                return Some((Esc::Char(ch), next + 6));
            }
            _ => {}
        },
        _ => {}
    }
    Some((Esc::Char('\u{fffd}'), next))
}

enum Esc {
    Char(char),
    /// Not an escape JSON knows: the backslash is text.
    Literal,
}

/// A bare value: a number, a literal, or the word it is (in single quotes: the text inside).
fn bare_value(tok: &str) -> Value {
    match tok {
        "true" | "True" => return Value::Bool(true),
        "false" | "False" => return Value::Bool(false),
        "null" | "None" => return Value::Null,
        _ => {}
    }
    if tok
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.'))
        && let Some(v) = number_value(tok)
    {
        return v;
    }
    if tok.len() >= 2 && tok.starts_with('\'') && tok.ends_with('\'') {
        return Value::String(tok[1..tok.len() - 1].to_string());
    }
    Value::String(tok.to_string())
}

impl ValueParser {
    /// Whether the text read so far ends inside a string (or a quoted key).
    fn in_string(&self) -> bool {
        matches!(self.st, St::RawStr | St::JsonStr | St::RawKey | St::JsonKey)
    }

    fn new() -> Self {
        ValueParser {
            stack: Vec::new(),
            st: St::Root,
            buf: String::new(),
        }
    }

    fn open(
        &mut self,
        frame: Frame,
        at: usize,
        sink: &mut (impl JsonSink + ?Sized),
    ) -> Result<(), Step> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(Step::Error(
                at,
                format!("the arguments nest deeper than {MAX_DEPTH} levels"),
            ));
        }
        let r = match frame {
            Frame::Object => sink.begin_object(),
            Frame::Array => sink.begin_array(),
        };
        r.map_err(|e| Step::Error(at, e))?;
        self.stack.push(frame);
        self.st = match frame {
            Frame::Object => St::KeyOrEnd,
            Frame::Array => St::ValueOrEnd,
        };
        Ok(())
    }

    /// A closing bracket at `at`: `Some(step)` when the top-level object closed or the bracket
    /// does not match.
    fn close(&mut self, b: u8, at: usize, sink: &mut (impl JsonSink + ?Sized)) -> Option<Step> {
        let want = if b == b'}' {
            Frame::Object
        } else {
            Frame::Array
        };
        if self.stack.last() != Some(&want) {
            return Some(Step::Error(
                at,
                format!("a `{}` that closes nothing open", b as char),
            ));
        }
        self.stack.pop();
        let r = match want {
            Frame::Object => sink.end_object(),
            Frame::Array => sink.end_array(),
        };
        if let Err(e) = r {
            return Some(Step::Error(at, e));
        }
        if self.stack.is_empty() {
            self.st = St::Done;
            return Some(Step::Done(at + 1));
        }
        self.st = St::After;
        None
    }

    /// Reads `text`; `at_end` when nothing follows it (tokens it ends inside are then what they
    /// are, never held).
    fn feed(&mut self, text: &str, at_end: bool, sink: &mut (impl JsonSink + ?Sized)) -> Step {
        let b = text.as_bytes();
        let mut i = 0;
        macro_rules! fail {
            ($at:expr, $($msg:tt)*) => {
                return Step::Error($at, format!($($msg)*))
            };
        }
        macro_rules! sunk {
            ($at:expr, $r:expr) => {
                if let Err(e) = $r {
                    return Step::Error($at, e);
                }
            };
        }
        while i < b.len() {
            match self.st {
                St::Done => return Step::Done(i),
                St::Root => {
                    if is_ws(b[i]) {
                        i += 1;
                    } else if b[i] == b'{' {
                        if let Err(s) = self.open(Frame::Object, i, sink) {
                            return s;
                        }
                        i += 1;
                    } else {
                        fail!(i, "the arguments do not begin with `{{`");
                    }
                }
                St::KeyOrEnd | St::Key => match b[i] {
                    c if is_ws(c) => i += 1,
                    b'}' => {
                        if let Some(s) = self.close(b'}', i, sink) {
                            return s;
                        }
                        i += 1;
                    }
                    b'"' => {
                        self.buf.clear();
                        self.st = St::JsonKey;
                        i += 1;
                    }
                    b'<' => match prefix(&b[i..], QUOTE) {
                        Prefix::Full => {
                            self.buf.clear();
                            self.st = St::RawKey;
                            i += QUOTE.len();
                        }
                        Prefix::Partial if !at_end => return Step::Hold(i),
                        _ => fail!(i, "a `<` where a key belongs"),
                    },
                    b',' | b'{' | b'[' | b']' | b':' => {
                        fail!(i, "a `{}` where a key belongs", b[i] as char)
                    }
                    _ => {
                        self.buf.clear();
                        self.st = St::BareKey;
                    }
                },
                St::BareKey => {
                    let run = b[i..]
                        .iter()
                        .position(|c| {
                            matches!(c, b':' | b'{' | b'}' | b'[' | b']' | b',' | b'"' | b'<')
                        })
                        .map_or(b.len(), |p| i + p);
                    self.buf.push_str(&text[i..run]);
                    i = run;
                    if i == b.len() {
                        break;
                    }
                    if b[i] != b':' {
                        fail!(
                            i,
                            "a `{}` inside a key (a key with no value?)",
                            b[i] as char
                        );
                    }
                    let key = self.buf.trim();
                    let key = key
                        .strip_prefix('\'')
                        .and_then(|k| k.strip_suffix('\''))
                        .unwrap_or(key);
                    if key.is_empty() {
                        fail!(i, "an empty key");
                    }
                    sunk!(i, sink.key(key));
                    self.st = St::Value;
                    i += 1;
                }
                St::JsonKey | St::JsonStr => {
                    let run = find2(b'"', b'\\', &b[i..]).map_or(b.len(), |p| i + p);
                    if run > i {
                        if self.st == St::JsonKey {
                            self.buf.push_str(&text[i..run]);
                        } else {
                            sunk!(i, sink.string_piece(&text[i..run]));
                        }
                    }
                    i = run;
                    if i == b.len() {
                        break;
                    }
                    if b[i] == b'"' {
                        i += 1;
                        if self.st == St::JsonKey {
                            sunk!(i, sink.key(&self.buf));
                            self.st = St::Colon;
                        } else {
                            sunk!(i, sink.end_string());
                            self.st = St::After;
                        }
                        continue;
                    }
                    let Some((esc, next)) = escape(text, i, at_end) else {
                        return Step::Hold(i);
                    };
                    let mut tmp = [0u8; 4];
                    let piece: &str = match esc {
                        Esc::Char(c) => c.encode_utf8(&mut tmp),
                        Esc::Literal => "\\",
                    };
                    if self.st == St::JsonKey {
                        self.buf.push_str(piece);
                    } else {
                        sunk!(i, sink.string_piece(piece));
                    }
                    i = next;
                }
                St::RawKey | St::RawStr => {
                    let run = find1(b'<', &b[i..]).map_or(b.len(), |p| i + p);
                    if run > i {
                        if self.st == St::RawKey {
                            self.buf.push_str(&text[i..run]);
                        } else {
                            sunk!(i, sink.string_piece(&text[i..run]));
                        }
                    }
                    i = run;
                    if i == b.len() {
                        break;
                    }
                    match prefix(&b[i..], QUOTE) {
                        Prefix::Full => {
                            i += QUOTE.len();
                            if self.st == St::RawKey {
                                sunk!(i, sink.key(&self.buf));
                                self.st = St::Colon;
                            } else {
                                sunk!(i, sink.end_string());
                                self.st = St::After;
                            }
                        }
                        Prefix::Partial if !at_end => return Step::Hold(i),
                        _ => {
                            if self.st == St::RawKey {
                                self.buf.push('<');
                            } else {
                                sunk!(i, sink.string_piece("<"));
                            }
                            i += 1;
                        }
                    }
                }
                St::Colon => match b[i] {
                    c if is_ws(c) => i += 1,
                    b':' => {
                        self.st = St::Value;
                        i += 1;
                    }
                    _ => fail!(i, "a key without a `:` after it"),
                },
                St::Value | St::ValueOrEnd => match b[i] {
                    c if is_ws(c) => i += 1,
                    b']' if self.st == St::ValueOrEnd => {
                        if let Some(s) = self.close(b']', i, sink) {
                            return s;
                        }
                        i += 1;
                    }
                    b'{' => {
                        if let Err(s) = self.open(Frame::Object, i, sink) {
                            return s;
                        }
                        i += 1;
                    }
                    b'[' => {
                        if let Err(s) = self.open(Frame::Array, i, sink) {
                            return s;
                        }
                        i += 1;
                    }
                    b'"' => {
                        sunk!(i, sink.begin_string());
                        self.st = St::JsonStr;
                        i += 1;
                    }
                    b'<' => match prefix(&b[i..], QUOTE) {
                        Prefix::Full => {
                            sunk!(i, sink.begin_string());
                            self.st = St::RawStr;
                            i += QUOTE.len();
                        }
                        Prefix::Partial if !at_end => return Step::Hold(i),
                        _ => fail!(i, "a `<` where a value belongs"),
                    },
                    b',' | b'}' | b']' | b':' => fail!(i, "a key with no value"),
                    _ => {
                        self.buf.clear();
                        self.st = St::Bare;
                    }
                },
                St::Bare => {
                    let run = b[i..]
                        .iter()
                        .position(|c| matches!(c, b',' | b'}' | b']' | b'<'))
                        .map_or(b.len(), |p| i + p);
                    self.buf.push_str(&text[i..run]);
                    i = run;
                    if i == b.len() {
                        break;
                    }
                    if b[i] == b'<' {
                        fail!(i, "a `<` inside a bare value");
                    }
                    let value = bare_value(self.buf.trim());
                    sunk!(i, sink.scalar(value));
                    self.st = St::After;
                }
                St::After => match b[i] {
                    c if is_ws(c) => i += 1,
                    b',' => {
                        self.st = match self.stack.last() {
                            Some(Frame::Array) => St::ValueOrEnd,
                            _ => St::Key,
                        };
                        i += 1;
                    }
                    c @ (b'}' | b']') => {
                        if let Some(s) = self.close(c, i, sink) {
                            return s;
                        }
                        i += 1;
                    }
                    c => fail!(
                        i,
                        "a `{}` after a value, where `,` or a closing bracket belongs",
                        c as char
                    ),
                },
            }
        }
        if self.st == St::Done {
            return Step::Done(i);
        }
        Step::NeedMore
    }
}

// ---------------------------------------------------------------------------------------------
// The scanner.

/// The markup of one block (or one call written without `<|tool_call>`) not yet spanned.
struct Block {
    /// Offset of `raw`'s first byte: where the last span ended, or the block's start.
    covered: usize,
    raw: String,
    /// Opened by `<|tool_call>` (else a bare `call:`).
    opened: bool,
}

impl Block {
    fn new(start: usize, raw: &str, opened: bool) -> Self {
        // Room for a call of a few hundred bytes from the start (grown from the marker's
        // length, it was allocated five or six times over).
        let mut text = String::with_capacity(raw.len().max(256));
        text.push_str(raw);
        Block {
            covered: start,
            raw: text,
            opened,
        }
    }

    fn end(&self) -> usize {
        self.covered + self.raw.len()
    }

    /// The markup so far became a call (or the close of a block of calls).
    fn cover(&mut self, em: &mut Emitter) {
        let end = self.end();
        em.span(self.covered, end, SpanKind::ToolCall);
        self.covered = end;
        self.raw.clear();
    }
}

struct Call {
    name: String,
    tool: Option<Arc<Tool>>,
    id: PartId,
    writer: ArgsWriter,
    parser: ValueParser,
}

enum State {
    Text,
    /// After `<|tool_call>`: `call:` (or the name) must come.
    Open(Block),
    /// After `call:`: the name, up to `{`.
    Name(Block, String),
    /// The arguments.
    Body(Block, Box<Call>),
    /// After a call in a `<|tool_call>` block: whitespace, then `<tool_call|>` or another call.
    Between(Block, String),
    /// After a call written without `<|tool_call>`: whitespace, then maybe a stray `<tool_call|>`
    /// that belongs to it.
    AfterBare(Block, String),
    /// Markup that could not be read, kept as text up to the block's `<tool_call|>`; the offset
    /// where it began.
    Skip(usize),
}

pub(crate) struct Gemma4Scanner {
    tools: ToolSet,
    max_name: usize,
    state: State,
    held: Holdback,
    /// The input has ended: what was held for lookahead is decided without it.
    at_end: bool,
    /// The byte before the text being scanned (a `call:` right after a letter is prose).
    prev: u8,
    /// The places found in the text last scanned, for when it is entered again after a call.
    marks: Kept<Candidates>,
}

/// The searcher for `call:`, made once: making one costs more than searching a stream's piece.
static CALL_FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(CALL));

/// Bytes that make `call:` after them part of a word.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// The places in text where [`Gemma4Scanner::text`] has something to decide: a `<`, a `call:`,
/// and a `c` in the last bytes that may begin one the next piece completes. Any other `c` begins
/// no `call:`. Each kind's next place is remembered, so every byte is searched once per kind.
#[derive(Default)]
struct Candidates {
    lt: Option<Option<usize>>,
    call: Option<Option<usize>>,
}

impl Candidates {
    fn next(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        let lt = cached(&mut self.lt, from, || find1(b'<', &bytes[from..]));
        let call = cached(&mut self.call, from, || CALL_FINDER.find(&bytes[from..]));
        let tail = || {
            let start = bytes.len().saturating_sub(CALL.len() - 1).max(from);
            (start..bytes.len())
                .find(|&k| bytes[k] == b'c' && CALL.as_bytes().starts_with(&bytes[k..]))
        };
        match (lt, call) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b).or_else(tail),
        }
    }
}

/// What a `c` in text may begin.
enum Bare {
    /// `call:NAME{` with NAME one of the tools: the length up to the `{`.
    Call(String, usize),
    /// The text ends before it can be told.
    Undecided,
    No,
}

impl Steps for Gemma4Scanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.text(text, i, base, em),
            State::Open(b) => self.open(b, text, i, base),
            State::Name(b, name) => self.name(b, name, text, i, em),
            State::Body(b, c) => self.body(b, c, text, i, base, em),
            State::Between(b, ws) => self.between(b, ws, text, i, base, em),
            State::AfterBare(b, ws) => self.after_bare(b, ws, text, i, base, em),
            State::Skip(start) => self.skip(start, text, i, base, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }

    fn read(&mut self, text: &str, base: usize) {
        // The byte before what is held (the held text is the end of `text`).
        let kept = self.held.held_start().saturating_sub(base).min(text.len());
        if kept > 0 {
            self.prev = text.as_bytes()[kept - 1];
        }
    }
}

/// Whether `piece`, after text whose last byte is `prev`, ends with the start of a bare call
/// (`c`, `ca`, `cal`, `call` after a byte that is not part of a word): the `call:` may go on in
/// the next piece. Any other `call:` in plain text has its `:` in the piece, and a `c` inside a
/// word begins none.
#[inline]
fn ends_inside_call(piece: &str, prev: u8) -> bool {
    call_start_at_end(piece, prev) > 0
}

/// How many bytes at the end of `piece` (after text whose last byte is `prev`) are the start of
/// a bare call ([`ends_inside_call`]): 1 to 4, or 0 when it does not end with one.
#[inline]
fn call_start_at_end(piece: &str, prev: u8) -> usize {
    let b = piece.as_bytes();
    let len = b.len();
    // The last byte tells which start it can be (`call` is the one that ends with `ll`); the
    // bytes before it are compared one by one (a piece is often that one byte).
    let n = match b.last() {
        Some(b'c') => 1,
        Some(b'a') => 2,
        Some(b'l') if len >= 2 && b[len - 2] == b'l' => 4,
        Some(b'l') => 3,
        _ => return 0,
    };
    if len < n {
        return 0;
    }
    let starts = match n {
        1 => true,
        2 => b[len - 2] == b'c',
        3 => b[len - 3] == b'c' && b[len - 2] == b'a',
        _ => b[len - 4] == b'c' && b[len - 3] == b'a',
    };
    if !starts || is_word(if len > n { b[len - n - 1] } else { prev }) {
        return 0;
    }
    n
}

impl Scanner for Gemma4Scanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        // Plain text with nothing held: only `<`, the `:` of a bare `call:`, or a piece that ends
        // inside `call` can begin anything.
        if self.quiet(piece) && find2(b'<', b':', piece.as_bytes()).is_none() {
            return self.feed_quiet(piece, em);
        }
        self.marks.forget();
        drive(self, piece, em);
        self.marks.forget();
    }

    fn quiet_stops(&self) -> Option<Vec<u8>> {
        // `<`, and the `:` of a bare `call:`; a piece that ends inside `call` is not quiet.
        Some(b"<:".to_vec())
    }

    #[inline]
    fn quiet(&self, piece: &str) -> bool {
        self.quiet_after(piece, self.prev)
    }

    #[inline]
    fn quiet_in_run(&self, piece: &str, run: &DirectRun) -> bool {
        self.quiet_after(piece, run.last.unwrap_or(self.prev))
    }

    fn run_end_held(&self, piece: &str, run: &DirectRun) -> Option<usize> {
        // Quiet when the run began, the scanner reads plain text with nothing held: its end is
        // all that may not be.
        Some(call_start_at_end(piece, run.last.unwrap_or(self.prev)))
    }

    fn quiet_end_bytes(&self) -> &'static [u8] {
        // The last bytes of `c`, `ca`, `cal` and `call` (what `ends_inside_call` looks at).
        &CALL.as_bytes()[..CALL.len() - 1]
    }

    fn pass_quiet(&mut self, piece: &str) {
        if let Some(&last) = piece.as_bytes().last() {
            self.prev = last;
        }
        self.held.advance(piece.len());
    }

    fn passes_by_run(&self) -> bool {
        true
    }

    fn pass_quiet_run(&mut self, run: &DirectRun) {
        if let Some(last) = run.last {
            self.prev = last;
        }
        self.held.advance(run.len);
    }

    fn finish(&mut self, em: &mut Emitter) {
        self.at_end = true;
        let rest = read_again_at_end(self, |s| &mut s.held, |_| {}, em);
        let end = self.held.pos();
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => em.text(&rest),
            State::Open(b) | State::Name(b, _) => before_arguments(
                b,
                &rest,
                end,
                &format!("the output ended inside a {OPEN} block, before a call's arguments"),
                em,
            ),
            State::Body(mut b, c) => {
                b.raw.push_str(&rest);
                unfinished(b, &c, end, "the output ended inside the arguments", em);
            }
            State::Between(_, ws) | State::AfterBare(_, ws) => {
                em.text(&ws);
                em.text(&rest);
            }
            State::Skip(start) => {
                em.text(&rest);
                em.span(start, end, SpanKind::Malformed);
            }
        }
    }

    /// Only inside a string can a reasoning marker be a call's own text; anywhere else in a
    /// call it cannot belong to it, and it cuts the call off (see [`Scanner::cut`]).
    fn in_call(&self) -> bool {
        match &self.state {
            State::Body(_, c) => c.parser.in_string(),
            _ => false,
        }
    }

    /// A reasoning marker follows: held text cannot begin a call across it, a block that is
    /// between calls ends there, and a call it interrupts is unfinished (its markup stays text).
    fn cut(&mut self, em: &mut Emitter) {
        let held = self.held.take();
        let end = self.held.pos();
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => em.text(&held),
            State::Between(_, ws) | State::AfterBare(_, ws) => {
                em.text(&ws);
                em.text(&held);
            }
            State::Skip(start) => {
                em.text(&held);
                em.span(start, end, SpanKind::Malformed);
            }
            State::Open(b) | State::Name(b, _) => before_arguments(
                b,
                &held,
                end,
                &format!("a reasoning marker cut a {OPEN} block off before its arguments"),
                em,
            ),
            State::Body(mut b, c) => {
                b.raw.push_str(&held);
                unfinished(b, &c, end, "a reasoning marker cut off the arguments", em);
            }
        }
        self.prev = b'\n';
    }
}

/// A block the text stopped in before a call's arguments (`held` is what was held back): its
/// markup stays as text, reported.
fn before_arguments(mut b: Block, held: &str, end: usize, why: &str, em: &mut Emitter) {
    b.raw.push_str(held);
    em.error(ErrorPart::reason("unfinished-tool-call", why.to_string()));
    em.text(&b.raw);
    em.span(b.covered, end, SpanKind::Malformed);
}

/// A call the text stopped inside: no call; its markup stays as text.
fn unfinished(b: Block, c: &Call, end: usize, why: &str, em: &mut Emitter) {
    em.abort_call(&c.id);
    em.error(ErrorPart {
        tool_call_id: Some(c.id.clone()),
        tool_name: Some(c.name.clone()),
        ..ErrorPart::reason("unfinished-tool-call", format!("call:{}: {why}", c.name))
    });
    em.text(&b.raw);
    em.span(b.covered, end, SpanKind::Malformed);
}

impl Gemma4Scanner {
    /// [`Scanner::quiet`] after text whose last byte is `prev`.
    #[inline]
    fn quiet_after(&self, piece: &str, prev: u8) -> bool {
        matches!(self.state, State::Text) && self.held.is_empty() && !ends_inside_call(piece, prev)
    }

    pub(crate) fn new(tools: ToolSet) -> Self {
        Gemma4Scanner {
            max_name: tools.max_name_len(),
            tools,
            state: State::Text,
            held: Holdback::default(),
            at_end: false,
            prev: b'\n',
            marks: Kept::default(),
        }
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        // The places found in this text before (it is entered again after each call).
        self.marks.renew(text, base, Candidates::default);
        while let Some(at) = self.marks.search.next(bytes, j) {
            if bytes[at] == b'<' {
                match prefix(&bytes[at..], OPEN) {
                    Prefix::Full => {
                        em.text(&text[i..at]);
                        self.state = State::Open(Block::new(base + at, OPEN, true));
                        return at + OPEN.len();
                    }
                    Prefix::Partial if !self.at_end => {
                        em.text(&text[i..at]);
                        return self.held.hold(text, at, base);
                    }
                    _ => {}
                }
                match prefix(&bytes[at..], CLOSE) {
                    Prefix::Full => {
                        em.text(&text[i..at]);
                        em.error(ErrorPart::reason(
                            "malformed-tool-call",
                            format!("{CLOSE} outside a tool call is kept as text"),
                        ));
                        em.text(CLOSE);
                        em.span(base + at, base + at + CLOSE.len(), SpanKind::Malformed);
                        return at + CLOSE.len();
                    }
                    Prefix::Partial if !self.at_end => {
                        em.text(&text[i..at]);
                        return self.held.hold(text, at, base);
                    }
                    _ => {}
                }
                j = at + 1;
                continue;
            }
            let before = if at == 0 { self.prev } else { bytes[at - 1] };
            if is_word(before) {
                j = at + 1;
                continue;
            }
            match self.bare_call(text, at) {
                Bare::Call(name, len) => {
                    em.text(&text[i..at]);
                    let block = Block::new(base + at, &text[at..at + len], false);
                    self.open_call(block, name, em);
                    return at + len;
                }
                Bare::Undecided => {
                    em.text(&text[i..at]);
                    return self.held.hold(text, at, base);
                }
                Bare::No => j = at + 1,
            }
        }
        em.text(&text[i..]);
        text.len()
    }

    /// Whether `call:` at `at` begins a call written without `<|tool_call>`: a tool's name and
    /// `{` must follow it at once.
    fn bare_call(&self, text: &str, at: usize) -> Bare {
        let rest = &text.as_bytes()[at..];
        match prefix(rest, CALL) {
            Prefix::Full => {}
            Prefix::Partial if !self.at_end && self.max_name > 0 => return Bare::Undecided,
            _ => return Bare::No,
        }
        let after = &rest[CALL.len()..];
        let window = &after[..after.len().min(self.max_name + 1)];
        if let Some(k) = find1(b'{', window) {
            let name = &text[at + CALL.len()..at + CALL.len() + k];
            return match self.tools.get(name) {
                Some(_) => Bare::Call(name.to_string(), CALL.len() + k),
                None => Bare::No,
            };
        }
        let may = self
            .tools
            .iter()
            .any(|t| t.name().as_bytes().starts_with(window));
        if may && !self.at_end && window.len() <= self.max_name {
            Bare::Undecided
        } else {
            Bare::No
        }
    }

    /// After `<|tool_call>`: whitespace, then `call:` (or the name at once).
    fn open(&mut self, mut b: Block, text: &str, i: usize, base: usize) -> usize {
        let bytes = text.as_bytes();
        let j = ws_end(bytes, i);
        b.raw.push_str(&text[i..j]);
        if j == bytes.len() {
            self.state = State::Open(b);
            return j;
        }
        match prefix(&bytes[j..], CALL) {
            Prefix::Full => {
                b.raw.push_str(CALL);
                self.state = State::Name(b, String::new());
                j + CALL.len()
            }
            Prefix::Partial if !self.at_end => {
                self.state = State::Open(b);
                self.held.hold(text, j, base)
            }
            _ => {
                self.state = State::Name(b, String::new());
                j
            }
        }
    }

    /// The name after `call:`, up to `{`.
    fn name(
        &mut self,
        mut b: Block,
        mut name: String,
        text: &str,
        i: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let stop = bytes[i..]
            .iter()
            .position(|c| matches!(c, b'{' | b'<' | b'}' | b'[' | b']' | b'"'))
            .map_or(bytes.len(), |p| i + p);
        name.push_str(&text[i..stop]);
        b.raw.push_str(&text[i..stop]);
        if name.len() > MAX_NAME {
            return self.fail_block(b, stop, "the call's name is too long".into(), em);
        }
        if stop == bytes.len() {
            self.state = State::Name(b, name);
            return stop;
        }
        if bytes[stop] != b'{' {
            let why = if name.trim().is_empty() {
                "the block holds no call:NAME{…}".to_string()
            } else {
                format!("`{}` is not followed by its arguments", name.trim())
            };
            return self.fail_block(b, stop, why, em);
        }
        let name = name.trim();
        if !names::is_function_name(name, &self.tools) {
            let why = if name.is_empty() {
                "the call names no function".to_string()
            } else {
                format!("\"{name}\" is not a function name")
            };
            return self.fail_block(b, stop, why, em);
        }
        let name = name.to_string();
        self.open_call(b, name, em);
        stop
    }

    fn open_call(&mut self, b: Block, name: String, em: &mut Emitter) {
        let tool = self.tools.get_arc(&name).cloned();
        let id = em.begin_call(&name);
        let mut writer = ArgsWriter::new(tool.clone());
        writer.set_whole(em.is_whole());
        let call = Call {
            writer,
            tool,
            id,
            name,
            parser: ValueParser::new(),
        };
        self.state = State::Body(b, Box::new(call));
    }

    fn body(
        &mut self,
        mut b: Block,
        mut c: Box<Call>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let step = c.parser.feed(&text[i..], self.at_end, &mut c.writer);
        if let Some(d) = c.writer.take_delta() {
            em.input_delta(&c.id, d);
        }
        match step {
            Step::NeedMore => {
                b.raw.push_str(&text[i..]);
                self.state = State::Body(b, c);
                text.len()
            }
            Step::Hold(k) => {
                b.raw.push_str(&text[i..i + k]);
                self.state = State::Body(b, c);
                self.held.hold(text, i + k, base)
            }
            Step::Done(k) => {
                b.raw.push_str(&text[i..i + k]);
                self.end_call(b, c, em);
                i + k
            }
            Step::Error(k, why) => {
                b.raw.push_str(&text[i..i + k]);
                self.fail_call(b, c, i + k, why, em)
            }
        }
    }

    fn end_call(&mut self, mut b: Block, c: Box<Call>, em: &mut Emitter) {
        let Call {
            name,
            tool,
            id,
            writer,
            ..
        } = *c;
        match writer.finish() {
            Ok(args) => {
                em.end_call(id.clone(), &name, args);
                if tool.is_none() {
                    em.unknown_tool(id, &name);
                }
                b.cover(em);
                self.state = if b.opened {
                    State::Between(b, String::new())
                } else {
                    State::AfterBare(b, String::new())
                };
            }
            Err(why) => {
                em.abort_call(&id);
                em.error(ErrorPart {
                    tool_call_id: Some(id),
                    tool_name: Some(name.clone()),
                    ..ErrorPart::reason("malformed-tool-call", format!("call:{name}: {why}"))
                });
                let at = b.end();
                self.keep(b, at, em);
            }
        }
    }

    /// A call that was announced cannot be read: no call; its markup stays as text.
    fn fail_call(
        &mut self,
        b: Block,
        c: Box<Call>,
        at: usize,
        why: String,
        em: &mut Emitter,
    ) -> usize {
        em.abort_call(&c.id);
        em.error(ErrorPart {
            tool_call_id: Some(c.id.clone()),
            tool_name: Some(c.name.clone()),
            ..ErrorPart::reason("malformed-tool-call", format!("call:{}: {why}", c.name))
        });
        let end = b.end();
        self.keep(b, end, em);
        at
    }

    /// A block that names no call: its markup stays as text.
    fn fail_block(&mut self, b: Block, at: usize, why: String, em: &mut Emitter) -> usize {
        em.error(ErrorPart::reason(
            "malformed-tool-call",
            format!("{OPEN}: {why}; the markup is kept as text"),
        ));
        let end = b.end();
        self.keep(b, end, em);
        at
    }

    /// The unread markup of `b` (up to `end`) is text; in a `<|tool_call>` block the rest of the
    /// block up to `<tool_call|>` is text too.
    fn keep(&mut self, b: Block, end: usize, em: &mut Emitter) {
        em.text(&b.raw);
        if b.opened {
            self.state = State::Skip(b.covered);
        } else {
            em.span(b.covered, end, SpanKind::Malformed);
            self.state = State::Text;
        }
    }

    /// After a call in a block: whitespace and commas, then the block's close or another call.
    fn between(
        &mut self,
        mut b: Block,
        mut ws: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while j < bytes.len() && (is_ws(bytes[j]) || bytes[j] == b',') {
            j += 1;
        }
        ws.push_str(&text[i..j]);
        if j == bytes.len() {
            self.state = State::Between(b, ws);
            return j;
        }
        let rest = &bytes[j..];
        match (prefix(rest, CLOSE), prefix(rest, CALL)) {
            (Prefix::Full, _) => {
                b.raw.push_str(&ws);
                b.raw.push_str(CLOSE);
                b.cover(em);
                return j + CLOSE.len();
            }
            (_, Prefix::Full) => {
                b.raw.push_str(&ws);
                b.raw.push_str(CALL);
                self.state = State::Name(b, String::new());
                return j + CALL.len();
            }
            (Prefix::Partial, _) | (_, Prefix::Partial) if !self.at_end => {
                self.state = State::Between(b, ws);
                return self.held.hold(text, j, base);
            }
            _ => {}
        }
        // The block's close is missing: what follows is text (or a new block).
        em.text(&ws);
        j
    }

    /// After a call written without `<|tool_call>`: a `<tool_call|>` after it is its own.
    fn after_bare(
        &mut self,
        mut b: Block,
        mut ws: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let j = ws_end(bytes, i);
        ws.push_str(&text[i..j]);
        if j == bytes.len() {
            self.state = State::AfterBare(b, ws);
            return j;
        }
        match prefix(&bytes[j..], CLOSE) {
            Prefix::Full => {
                b.raw.push_str(&ws);
                b.raw.push_str(CLOSE);
                b.cover(em);
                j + CLOSE.len()
            }
            Prefix::Partial if !self.at_end => {
                self.state = State::AfterBare(b, ws);
                self.held.hold(text, j, base)
            }
            _ => {
                em.text(&ws);
                j
            }
        }
    }

    /// Malformed markup, kept as text up to the block's `<tool_call|>` (or a new block).
    fn skip(&mut self, start: usize, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            let (close, open) = (prefix(&bytes[at..], CLOSE), prefix(&bytes[at..], OPEN));
            if close == Prefix::Full {
                let end = at + CLOSE.len();
                em.text(&text[i..end]);
                em.span(start, base + end, SpanKind::Malformed);
                return end;
            }
            if open == Prefix::Full {
                em.text(&text[i..at]);
                em.span(start, base + at, SpanKind::Malformed);
                return at;
            }
            if (close == Prefix::Partial || open == Prefix::Partial) && !self.at_end {
                em.text(&text[i..at]);
                self.state = State::Skip(start);
                return self.held.hold(text, at, base);
            }
            j = at + 1;
        }
        em.text(&text[i..]);
        self.state = State::Skip(start);
        text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;

    standard_cases!(Gemma4Scanner::new;
        "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
        "<|tool_call>call:get_weather{city:<|\"|>Pa",
        "<|tool_call>call:get_weather{city:}<tool_call|>");

    /// A piece that ends with the start of `call` may begin a bare call only where a word
    /// ended before that start: in the piece, or, when the start is the whole piece, in the
    /// text before it.
    #[test]
    fn only_the_start_of_call_after_a_word_waits_for_the_next_piece() {
        for (piece, prev, waits) in [
            ("c", b' ', true),
            ("c", b'\n', true),
            ("c", b'i', false),
            ("c", 0xa9, false),
            ("cal", b'.', true),
            ("cal", b'_', false),
            ("magic", b' ', false),
            ("a c", b'x', true),
            ("a ca", b'x', true),
            ("tropical", b' ', false),
            ("call", b' ', true),
            ("recall", b' ', false),
            ("calls", b' ', false),
        ] {
            assert_eq!(
                ends_inside_call(piece, prev),
                waits,
                "{piece:?} after {prev}"
            );
        }
    }

    proptest::proptest! {
        /// How much of a piece's end is the start of a bare call is the longest start of `call:`
        /// it ends with, after a byte that is not part of a word (the piece's, or `prev`).
        #[test]
        fn the_start_of_a_call_at_a_piece_end_is_counted_whole(
            piece in proptest::collection::vec(
                proptest::sample::select(vec!["c", "a", "l", "ll", ":", " ", "x", "_", "é"]),
                0..7,
            ),
            prev in proptest::sample::select(vec![b' ', b'x', b'_', 0xa9, b'\n']),
        ) {
            let piece = piece.concat();
            let b = piece.as_bytes();
            let expected = (1..CALL.len())
                .filter(|&n| b.ends_with(&CALL.as_bytes()[..n]))
                .find(|&n| !is_word(b.len().checked_sub(n + 1).map_or(prev, |k| b[k])))
                .unwrap_or(0);
            proptest::prop_assert_eq!(call_start_at_end(&piece, prev), expected);
        }
    }
}
