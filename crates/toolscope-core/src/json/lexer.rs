//! An incremental lexer-parser for relaxed JSON that reports what it reads as events.
//!
//! Models write JSON loosely: comments, single quotes, unquoted keys, trailing commas, raw
//! newlines inside strings, and quotes inside strings that nobody escaped. This lexer accepts all
//! of that, one chunk at a time, holding only the state it needs between chunks: it never looks
//! back at bytes it has already consumed, so the cost of a value is linear in its length however
//! it is chunked. Chunks are `&str` and may end anywhere between two characters.
//!
//! An unescaped quote inside a string is told apart from the closing quote by what follows it:
//! a closing quote is followed (after whitespace) by `,`, `}` or `]` for a value and by `:` for a
//! key. Valid JSON always satisfies this, so strict input is read exactly as a strict parser
//! would.

use serde_json::{Number, Value};

use super::JsonError;

/// The deepest nesting accepted (as serde_json's default); deeper input is an error, not a stack
/// overflow.
pub(crate) const MAX_DEPTH: usize = 128;

/// Receives what the lexer reads. A sink may refuse an event by returning `Err(message)`, which
/// stops the lexer with that error.
pub(crate) trait JsonSink {
    /// `{`: an object opens.
    fn begin_object(&mut self) -> Result<(), String>;
    /// `}`: the innermost open object closes.
    fn end_object(&mut self) -> Result<(), String>;
    /// `[`: an array opens.
    fn begin_array(&mut self) -> Result<(), String>;
    /// `]`: the innermost open array closes.
    fn end_array(&mut self) -> Result<(), String>;
    /// A complete object key (decoded).
    fn key(&mut self, key: &str) -> Result<(), String>;
    /// A string value opens; its pieces follow, then [`JsonSink::end_string`].
    fn begin_string(&mut self) -> Result<(), String>;
    /// A piece of a string value, decoded (escapes resolved).
    fn string_piece(&mut self, piece: &str) -> Result<(), String>;
    /// The string value opened last is complete.
    fn end_string(&mut self) -> Result<(), String>;
    /// A number, `true`, `false` or `null`. A number too large for a double arrives as the
    /// string of its digits.
    fn scalar(&mut self, value: Value) -> Result<(), String>;
    /// Whether the sink would take a top-level object or array whole, when the text at hand
    /// holds all of it as strict JSON (see [`JsonSink::whole`]).
    fn takes_whole(&self) -> bool {
        false
    }
    /// A whole top-level value, read in one pass. The sink either takes it, as it would have
    /// taken its events, and returns `true`, or changes nothing and returns `false`: the lexer
    /// then reads the same text event by event.
    fn whole(&mut self, _value: super::whole::Whole) -> bool {
        false
    }
}

/// What one call to [`Lexer::feed`] achieved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Everything was consumed; the value is not complete yet.
    NeedMore,
    /// The top-level value is complete after `consumed` bytes of this chunk; the rest of the
    /// chunk was not looked at.
    Done {
        /// Bytes of this chunk that belong to the value.
        consumed: usize,
    },
    /// The input is not relaxed JSON. `consumed` bytes of this chunk were accepted before the
    /// byte that broke it.
    Error {
        /// Bytes of this chunk accepted before the offending one.
        consumed: usize,
        /// What is wrong and where, counted from the start of the input.
        error: JsonError,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    Object,
    Array,
}

/// Where the lexer stands between two tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Between {
    /// A value must come (top level, after `:`).
    Value,
    /// After `{`: a key or `}`.
    KeyOrEnd,
    /// After `,` in an object: a key, or `}` (trailing comma).
    Key,
    /// After a key.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    AfterValue,
    /// After `[` or `,` in an array: a value, or `]`.
    ElemOrEnd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Between(Between),
    Str {
        quote: u8,
        key: bool,
    },
    Escape {
        quote: u8,
        key: bool,
    },
    Unicode {
        quote: u8,
        key: bool,
        digits: u8,
        acc: u16,
    },
    /// A quote that may close the string; the whitespace after it is in `ws`.
    QuotePending {
        quote: u8,
        key: bool,
    },
    Number,
    Word {
        key: bool,
    },
    Slash(Between),
    LineComment(Between),
    BlockComment(Between, bool),
    Done,
    Failed,
}

/// The incremental relaxed-JSON lexer. Reads exactly one top-level value.
#[derive(Clone, Debug)]
pub(crate) struct Lexer {
    state: State,
    stack: Vec<Container>,
    /// The key, number or bare word being read.
    buf: Vec<u8>,
    /// Whitespace after a possibly-closing quote.
    ws: String,
    /// A `\uD800`–`\uDBFF` escape waiting for its low half.
    high_surrogate: Option<u16>,
    /// Bytes consumed before the current chunk.
    offset: usize,
    /// A quote inside a string was taken for text (nothing after it could close the string).
    repaired: bool,
}

impl Default for Lexer {
    fn default() -> Self {
        Self::new()
    }
}

const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
}

const fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b == b'-' || b >= 0x80
}

const fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

const fn is_number_byte(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')
}

impl Lexer {
    /// A lexer at the start, expecting one value.
    pub(crate) fn new() -> Self {
        Lexer {
            state: State::Between(Between::Value),
            stack: Vec::new(),
            buf: Vec::new(),
            ws: String::new(),
            high_surrogate: None,
            offset: 0,
            repaired: false,
        }
    }

    /// True once the top-level value is complete.
    pub(crate) fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// Whether a quote inside a string was taken for text: the string went on past a quote that
    /// a missing `:` or `,` may have meant to close.
    pub(crate) fn repaired_a_quote(&self) -> bool {
        self.repaired
    }

    /// True while nothing but whitespace and comments has been read.
    pub(crate) fn is_before_value(&self) -> bool {
        self.stack.is_empty()
            && matches!(
                self.state,
                State::Between(Between::Value)
                    | State::Slash(Between::Value)
                    | State::LineComment(Between::Value)
                    | State::BlockComment(Between::Value, _)
            )
    }

    /// Inside a string value (not a key) with nothing pending: its quote. Text without that
    /// quote and without a backslash would go to the sink whole as one string piece, leaving the
    /// lexer where it is; [`Lexer::skip_string_piece`] accounts for such text given to the sink
    /// directly.
    pub(crate) fn plain_string_quote(&self) -> Option<u8> {
        match self.state {
            State::Str { quote, key: false }
                if self.high_surrogate.is_none() && !self.stack.is_empty() =>
            {
                Some(quote)
            }
            _ => None,
        }
    }

    /// `len` bytes of string content were handed to the sink directly (see
    /// [`Lexer::plain_string_quote`]).
    pub(crate) fn skip_string_piece(&mut self, len: usize) {
        self.offset += len;
    }

    fn error(&mut self, at: usize, message: impl Into<String>) -> Step {
        self.state = State::Failed;
        Step::Error {
            consumed: at,
            error: JsonError {
                message: message.into(),
                offset: self.offset + at,
            },
        }
    }

    /// A top-level object or array that the chunk holds whole as strict JSON, read in one pass
    /// and given to a sink that takes it: the bytes up to its end.
    fn whole<S: JsonSink>(&mut self, input: &str, sink: &mut S) -> Option<usize> {
        let start = input.bytes().position(|b| !is_ws(b))?;
        if !matches!(input.as_bytes()[start], b'{' | b'[') {
            return None;
        }
        let (value, len) = super::whole::strict_whole(&input[start..], MAX_DEPTH)?;
        sink.whole(value).then_some(start + len)
    }

    /// Reads the next chunk.
    pub(crate) fn feed<S: JsonSink>(&mut self, input: &str, sink: &mut S) -> Step {
        let step = self.feed_inner(input, sink);
        match &step {
            Step::NeedMore => self.offset += input.len(),
            Step::Done { consumed } | Step::Error { consumed, .. } => self.offset += consumed,
        }
        step
    }

    fn feed_inner<S: JsonSink>(&mut self, input: &str, sink: &mut S) -> Step {
        if sink.takes_whole()
            && matches!(self.state, State::Between(Between::Value))
            && self.stack.is_empty()
            && let Some(consumed) = self.whole(input, sink)
        {
            self.state = State::Done;
            return Step::Done { consumed };
        }
        let bytes = input.as_bytes();
        let mut i = 0;
        macro_rules! sink {
            ($e:expr) => {
                if let Err(m) = $e {
                    return self.error(i, m);
                }
            };
        }
        while i < bytes.len() {
            let b = bytes[i];
            match self.state {
                State::Done => return Step::Done { consumed: i },
                State::Failed => return self.error(i, "input after an error"),
                State::Between(between) => {
                    if is_ws(b) {
                        i += 1;
                        continue;
                    }
                    if b == b'/' {
                        self.state = State::Slash(between);
                        i += 1;
                        continue;
                    }
                    match between {
                        Between::Value | Between::ElemOrEnd => match b {
                            b'{' | b'[' => {
                                if self.stack.len() >= MAX_DEPTH {
                                    return self.error(
                                        i,
                                        format!("nesting deeper than {MAX_DEPTH} levels"),
                                    );
                                }
                                if b == b'{' {
                                    self.stack.push(Container::Object);
                                    sink!(sink.begin_object());
                                    self.state = State::Between(Between::KeyOrEnd);
                                } else {
                                    self.stack.push(Container::Array);
                                    sink!(sink.begin_array());
                                    self.state = State::Between(Between::ElemOrEnd);
                                }
                                i += 1;
                            }
                            b'"' | b'\'' => {
                                sink!(sink.begin_string());
                                self.state = State::Str {
                                    quote: b,
                                    key: false,
                                };
                                i += 1;
                            }
                            b']' if between == Between::ElemOrEnd => {
                                self.stack.pop();
                                sink!(sink.end_array());
                                i += 1;
                                self.value_done();
                            }
                            _ if is_number_byte(b) && b != b'e' && b != b'E' => {
                                self.buf.clear();
                                self.buf.push(b);
                                self.state = State::Number;
                                i += 1;
                            }
                            _ if is_word_start(b) => {
                                self.buf.clear();
                                self.buf.push(b);
                                self.state = State::Word { key: false };
                                i += 1;
                            }
                            _ => {
                                return self
                                    .error(i, format!("expected a value, found {}", show(b)));
                            }
                        },
                        Between::KeyOrEnd | Between::Key => match b {
                            b'"' | b'\'' => {
                                self.buf.clear();
                                self.state = State::Str {
                                    quote: b,
                                    key: true,
                                };
                                i += 1;
                            }
                            b'}' => {
                                self.stack.pop();
                                sink!(sink.end_object());
                                i += 1;
                                self.value_done();
                            }
                            _ if is_word_start(b) || b.is_ascii_digit() => {
                                self.buf.clear();
                                self.buf.push(b);
                                self.state = State::Word { key: true };
                                i += 1;
                            }
                            _ => {
                                return self.error(i, format!("expected a key, found {}", show(b)));
                            }
                        },
                        Between::Colon => {
                            if b == b':' {
                                self.state = State::Between(Between::Value);
                                i += 1;
                            } else {
                                return self.error(i, format!("expected ':', found {}", show(b)));
                            }
                        }
                        Between::AfterValue => {
                            let top = self.stack.last().copied();
                            match (b, top) {
                                (b',', Some(Container::Object)) => {
                                    self.state = State::Between(Between::Key);
                                    i += 1;
                                }
                                (b',', Some(Container::Array)) => {
                                    self.state = State::Between(Between::ElemOrEnd);
                                    i += 1;
                                }
                                (b'}', Some(Container::Object)) => {
                                    self.stack.pop();
                                    sink!(sink.end_object());
                                    i += 1;
                                    self.value_done();
                                }
                                (b']', Some(Container::Array)) => {
                                    self.stack.pop();
                                    sink!(sink.end_array());
                                    i += 1;
                                    self.value_done();
                                }
                                _ => {
                                    return self.error(
                                        i,
                                        format!(
                                            "expected ',' or a closing bracket, found {}",
                                            show(b)
                                        ),
                                    );
                                }
                            }
                        }
                    }
                }
                State::Str { quote, key } => {
                    let rest = &bytes[i..];
                    let run = find2(quote, b'\\', rest).unwrap_or(rest.len());
                    if run > 0 {
                        // Quotes and backslashes are ASCII, so the run ends on a char boundary.
                        let piece = &input[i..i + run];
                        if let Some(e) = self.flush_surrogate(key, sink) {
                            return self.error(i, e);
                        }
                        if key {
                            self.buf.extend_from_slice(piece.as_bytes());
                        } else {
                            sink!(sink.string_piece(piece));
                        }
                        i += run;
                        continue;
                    }
                    if b == b'\\' {
                        self.state = State::Escape { quote, key };
                        i += 1;
                    } else if self.stack.is_empty() {
                        // A top-level string closes at its quote: nothing follows to tell.
                        if let Some(e) = self.flush_surrogate(key, sink) {
                            return self.error(i, e);
                        }
                        sink!(sink.end_string());
                        i += 1;
                        self.value_done();
                    } else {
                        self.ws.clear();
                        self.state = State::QuotePending { quote, key };
                        i += 1;
                    }
                }
                State::Escape { quote, key } => {
                    let decoded: Option<char> = match b {
                        b'n' => Some('\n'),
                        b't' => Some('\t'),
                        b'r' => Some('\r'),
                        b'b' => Some('\u{8}'),
                        b'f' => Some('\u{c}'),
                        b'/' => Some('/'),
                        b'\\' => Some('\\'),
                        b'"' => Some('"'),
                        b'\'' => Some('\''),
                        _ => None,
                    };
                    if let Some(c) = decoded {
                        if let Some(e) = self.flush_surrogate(key, sink) {
                            return self.error(i, e);
                        }
                        let mut tmp = [0u8; 4];
                        if let Err(m) = self.emit_str(key, c.encode_utf8(&mut tmp), sink) {
                            return self.error(i, m);
                        }
                        self.state = State::Str { quote, key };
                        i += 1;
                    } else if b == b'u' {
                        self.state = State::Unicode {
                            quote,
                            key,
                            digits: 0,
                            acc: 0,
                        };
                        i += 1;
                    } else {
                        // An unknown escape (`\$`, `\q`) means the character itself, as in
                        // JavaScript: the backslash is dropped and the character is read again as
                        // ordinary string content.
                        if let Some(e) = self.flush_surrogate(key, sink) {
                            return self.error(i, e);
                        }
                        self.state = State::Str { quote, key };
                    }
                }
                State::Unicode {
                    quote,
                    key,
                    digits,
                    acc,
                } => {
                    if let Some(d) = (b as char).to_digit(16) {
                        let acc = (acc << 4) | d as u16;
                        if digits + 1 < 4 {
                            self.state = State::Unicode {
                                quote,
                                key,
                                digits: digits + 1,
                                acc,
                            };
                        } else {
                            if let Err(m) = self.code_unit(key, acc, sink) {
                                return self.error(i, m);
                            }
                            self.state = State::Str { quote, key };
                        }
                        i += 1;
                    } else {
                        // `\u` without four hex digits: keep what was written, read on.
                        let mut kept = String::from("\\u");
                        for k in (0..digits).rev() {
                            let d = (acc >> (4 * k)) & 0xf;
                            kept.push(char::from_digit(d as u32, 16).unwrap_or('?'));
                        }
                        if let Some(e) = self.flush_surrogate(key, sink) {
                            return self.error(i, e);
                        }
                        if let Err(m) = self.emit_str(key, &kept, sink) {
                            return self.error(i, m);
                        }
                        self.state = State::Str { quote, key };
                    }
                }
                State::QuotePending { quote, key } => {
                    if is_ws(b) {
                        self.ws.push(b as char);
                        i += 1;
                        continue;
                    }
                    let closes = if key {
                        b == b':'
                    } else {
                        matches!(b, b',' | b'}' | b']')
                    };
                    if closes {
                        if let Err(m) = self.close_string(key, sink) {
                            return self.error(i, m);
                        }
                    } else {
                        // The quote was part of the text.
                        self.repaired = true;
                        let mut kept = String::with_capacity(1 + self.ws.len());
                        kept.push(quote as char);
                        kept.push_str(&self.ws);
                        if let Some(e) = self.flush_surrogate(key, sink) {
                            return self.error(i, e);
                        }
                        if let Err(m) = self.emit_str(key, &kept, sink) {
                            return self.error(i, m);
                        }
                        self.state = State::Str { quote, key };
                    }
                }
                State::Number => {
                    if is_number_byte(b) {
                        self.buf.push(b);
                        i += 1;
                    } else {
                        match self.end_number() {
                            Ok(v) => sink!(sink.scalar(v)),
                            Err(m) => return self.error(i, m),
                        }
                        self.value_done();
                    }
                }
                State::Word { key } => {
                    if is_word_byte(b) {
                        self.buf.push(b);
                        i += 1;
                    } else if key {
                        let word = String::from_utf8_lossy(&self.buf).into_owned();
                        sink!(sink.key(&word));
                        self.state = State::Between(Between::Colon);
                    } else {
                        match self.end_word() {
                            Ok(v) => sink!(sink.scalar(v)),
                            Err(m) => return self.error(i, m),
                        }
                        self.value_done();
                    }
                }
                State::Slash(ret) => match b {
                    b'/' => {
                        self.state = State::LineComment(ret);
                        i += 1;
                    }
                    b'*' => {
                        self.state = State::BlockComment(ret, false);
                        i += 1;
                    }
                    _ => return self.error(i, "a lone '/' outside a string"),
                },
                // A line comment ends at the end of the line, whichever line ending it has.
                State::LineComment(ret) => match memchr::memchr2(b'\n', b'\r', &bytes[i..]) {
                    Some(n) => {
                        self.state = State::Between(ret);
                        i += n + 1;
                    }
                    None => i = bytes.len(),
                },
                State::BlockComment(ret, star) => {
                    if star && b == b'/' {
                        self.state = State::Between(ret);
                    } else {
                        self.state = State::BlockComment(ret, b == b'*');
                    }
                    i += 1;
                }
            }
        }
        if self.state == State::Done {
            Step::Done { consumed: i }
        } else {
            Step::NeedMore
        }
    }

    /// The input has ended. Completes a value that can only end at the end of the input (a
    /// top-level number or word, a string whose closing quote was the last character).
    pub(crate) fn finish<S: JsonSink>(&mut self, sink: &mut S) -> Result<(), JsonError> {
        let at = self.offset;
        let fail = |this: &mut Self, m: String| {
            this.state = State::Failed;
            Err(JsonError {
                message: m,
                offset: at,
            })
        };
        match self.state {
            State::Done => return Ok(()),
            State::QuotePending { key, .. } => {
                if let Err(m) = self.close_string(key, sink) {
                    return fail(self, m);
                }
            }
            State::Number if self.stack.is_empty() => {
                match self.end_number().and_then(|v| sink.scalar(v)) {
                    Ok(()) => self.value_done(),
                    Err(m) => return fail(self, m),
                }
            }
            State::Word { key: false } if self.stack.is_empty() => {
                match self.end_word().and_then(|v| sink.scalar(v)) {
                    Ok(()) => self.value_done(),
                    Err(m) => return fail(self, m),
                }
            }
            _ => {}
        }
        if self.state == State::Done {
            Ok(())
        } else {
            let what = if self.is_before_value() {
                "no JSON value".to_string()
            } else {
                "unexpected end of input".to_string()
            };
            fail(self, what)
        }
    }

    fn value_done(&mut self) {
        self.state = if self.stack.is_empty() {
            State::Done
        } else {
            State::Between(Between::AfterValue)
        };
    }

    fn close_string<S: JsonSink>(&mut self, key: bool, sink: &mut S) -> Result<(), String> {
        if let Some(e) = self.flush_surrogate(key, sink) {
            return Err(e);
        }
        if key {
            // Borrowed when the bytes are UTF-8 (always, but for a cut sequence): no copy.
            sink.key(&String::from_utf8_lossy(&self.buf))?;
            self.state = State::Between(Between::Colon);
        } else {
            sink.end_string()?;
            self.value_done();
        }
        Ok(())
    }

    fn emit_str<S: JsonSink>(&mut self, key: bool, s: &str, sink: &mut S) -> Result<(), String> {
        if key {
            self.buf.extend_from_slice(s.as_bytes());
            Ok(())
        } else {
            sink.string_piece(s)
        }
    }

    /// A lone high surrogate becomes U+FFFD once it is clear no low half follows.
    fn flush_surrogate<S: JsonSink>(&mut self, key: bool, sink: &mut S) -> Option<String> {
        if self.high_surrogate.take().is_some() {
            return self.emit_str(key, "\u{fffd}", sink).err();
        }
        None
    }

    fn code_unit<S: JsonSink>(&mut self, key: bool, unit: u16, sink: &mut S) -> Result<(), String> {
        let mut tmp = [0u8; 4];
        match unit {
            0xd800..=0xdbff => {
                if let Some(e) = self.flush_surrogate(key, sink) {
                    return Err(e);
                }
                self.high_surrogate = Some(unit);
                Ok(())
            }
            0xdc00..=0xdfff => {
                let c = match self.high_surrogate.take() {
                    Some(high) => {
                        let cp =
                            0x10000 + (((high as u32) - 0xd800) << 10) + ((unit as u32) - 0xdc00);
                        char::from_u32(cp).unwrap_or('\u{fffd}')
                    }
                    None => '\u{fffd}',
                };
                self.emit_str(key, c.encode_utf8(&mut tmp), sink)
            }
            _ => {
                if let Some(e) = self.flush_surrogate(key, sink) {
                    return Err(e);
                }
                let c = char::from_u32(unit as u32).unwrap_or('\u{fffd}');
                self.emit_str(key, c.encode_utf8(&mut tmp), sink)
            }
        }
    }

    fn end_number(&mut self) -> Result<Value, String> {
        let token = String::from_utf8_lossy(&self.buf).into_owned();
        number_value(&token).ok_or_else(|| format!("\"{}\" is not a number", abbreviate(&token)))
    }

    fn end_word(&mut self) -> Result<Value, String> {
        Ok(match self.buf.as_slice() {
            b"true" | b"True" | b"TRUE" => Value::Bool(true),
            b"false" | b"False" | b"FALSE" => Value::Bool(false),
            b"null" | b"None" | b"NULL" | b"Null" => Value::Null,
            other => {
                return Err(format!(
                    "unquoted word \"{}\" where a value belongs",
                    abbreviate(&String::from_utf8_lossy(other))
                ));
            }
        })
    }
}

/// Reads a number token, relaxed: a leading `+`, a leading or trailing `.`. A well-formed number
/// too large for a double is kept as the string of its digits (nothing is lost).
pub(crate) fn number_value(token: &str) -> Option<Value> {
    let (sign, rest) = match token.as_bytes().first() {
        Some(b'-') => ("-", &token[1..]),
        Some(b'+') => ("", &token[1..]),
        _ => ("", token),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(p) => (&rest[..p], Some(&rest[p + 1..])),
        None => (rest, None),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(p) => (&mantissa[..p], Some(&mantissa[p + 1..])),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let int_ok = digits(int) || (int.is_empty() && frac.is_some_and(digits));
    let frac_ok =
        frac.is_none_or(|f| f.is_empty() || digits(f)) && !(int.is_empty() && frac == Some(""));
    let exp_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['+', '-']).unwrap_or(e)));
    if !(int_ok && frac_ok && exp_ok) {
        return None;
    }
    let mut canonical = String::with_capacity(token.len() + 2);
    canonical.push_str(sign);
    // Strip redundant leading zeros (JSON forbids them) but keep one.
    let int = int.trim_start_matches('0');
    canonical.push_str(if int.is_empty() { "0" } else { int });
    if let Some(f) = frac.filter(|f| !f.is_empty()) {
        canonical.push('.');
        canonical.push_str(f);
    }
    if let Some(e) = exponent {
        canonical.push('e');
        canonical.push_str(e);
    }
    match serde_json::from_str::<Number>(&canonical) {
        Ok(n) => Some(Value::Number(n)),
        Err(_) => Some(Value::String(token.to_string())),
    }
}

/// `memchr`, with a plain loop for the short slices a byte-by-byte stream gives.
#[inline]
pub(crate) fn find1(a: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < 16 {
        hay.iter().position(|&x| x == a)
    } else {
        memchr::memchr(a, hay)
    }
}

/// `memchr2`, with a plain loop for the short slices a byte-by-byte stream gives (where the
/// call costs more than the search).
#[inline]
pub(crate) fn find2(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < 16 {
        hay.iter().position(|&x| x == a || x == b)
    } else {
        memchr::memchr2(a, b, hay)
    }
}

/// `memchr3`, with a plain loop for short slices.
#[inline]
pub(crate) fn find3(a: u8, b: u8, c: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < 16 {
        hay.iter().position(|&x| x == a || x == b || x == c)
    } else {
        memchr::memchr3(a, b, c, hay)
    }
}

fn show(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

fn abbreviate(s: &str) -> String {
    const MAX: usize = 40;
    if s.len() <= MAX {
        s.to_string()
    } else {
        let mut end = MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &s[..end])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_tokens() {
        let cases = [
            ("0", Some(json!(0))),
            ("-12", Some(json!(-12))),
            ("+5", Some(json!(5))),
            (".5", Some(json!(0.5))),
            ("5.", Some(json!(5))),
            ("1e3", Some(json!(1000.0))),
            ("1.5E-2", Some(json!(0.015))),
            ("007", Some(json!(7))),
            ("1-2", None),
            ("-", None),
            (".", None),
            ("1e", None),
            ("--1", None),
        ];
        for (token, want) in cases {
            assert_eq!(number_value(token), want, "{token}");
        }
        let huge = "9".repeat(400);
        assert_eq!(number_value(&huge), Some(Value::String(huge.clone())));
    }
}
