//! `gemma4`: Google Gemma 4's own tool-call tokens.
//!
//! ```text
//! <|channel>thought
//! Paris, so get_weather.<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>
//! ```
//!
//! A call is `call:NAME{…}` in a `<|tool_call>` … `<tool_call|>` block. The arguments are Gemma's
//! own object syntax: bare keys, strings between two `<|"|>` tokens (raw text, byte-exact: no
//! escaping, so a string may hold newlines, quotes, braces, commas and tag-like text), bare
//! numbers, `true`, `false` and `null`, nested `{…}` objects and `[…]` arrays.
//!
//! What the parser forgives, each seen from real models:
//! - JSON-style quoting: `"city":"Paris"` (keys and strings in double quotes, with JSON's
//!   escapes); a key may also be written between `<|"|>` tokens;
//! - a bare word where a value belongs (`unit:celsius`): it is the string it spells (a number,
//!   `true`/`false`/`null` or Python's `True`/`False`/`None` are those values), typed by coercion
//!   against the schema as any other value;
//! - whitespace between the pieces, trailing commas;
//! - several calls in one block (`<|tool_call>call:f{…}call:g{…}<tool_call|>`, whitespace or
//!   commas between them) as well as one block per call, back to back;
//! - a missing `<tool_call|>` (at the end of the output, or where text or another block follows);
//! - a missing `<|tool_call>` before `call:NAME{…}` when NAME is one of the tools (a stray
//!   `<tool_call|>` after it belongs to it). Without the opening token, `call:` is prose unless a
//!   tool's name and `{` follow it at once (and no letter or digit precedes it): "the call: was
//!   fine" stays text with no error, and only a tail that may still become such a call is held
//!   back while streaming;
//! - `<|tool_call>NAME{…}` without `call:`.
//!
//! Markup that cannot be read stays in the output as text with an error part: a block that does
//! not hold a call, a name that cannot be a function name, a key without a value, nesting deeper
//! than 128 levels (`malformed-tool-call`), a call cut off by the end of the output
//! (`unfinished-tool-call`), a `<tool_call|>` outside any call. A tool that is not among the
//! tools is called and flagged (`unknown-tool`).
//!
//! Reasoning: `<|channel>thought\n` … `<channel|>`, written by the model itself (the template
//! closes an empty channel when thinking is off), so the output starts outside reasoning.
//! Gemma 4 calls tools from inside its thought channel, so calls there count.
//!
//! The prompt declares each tool as the template does in the system turn,
//! `<|tool>declaration:NAME{description:<|"|>…<|"|>,parameters:{…}}<tool|>`, the schema written in
//! the same object syntax (keys sorted, type names upper-cased); it reads back exactly. A result
//! comes back as `<|tool_response>response:NAME{value:<|"|>…<|"|>}<tool_response|>`.

use std::sync::Arc;

use serde_json::Value;

use super::span::SpanKind;
use super::spec::{Protocol, ProtocolSpec, Reasoning};
use super::text::emit::Emitter;
use super::text::holdback::Holdback;
use super::text::prompt::first_argument;
use super::text::scanner::Scanner;
use super::text::{names, prompt};
use crate::args::ArgsWriter;
use crate::json::lexer::{find1, find2, number_value};
use crate::json::{JsonSink, ValueBuilder};
use crate::part::{ErrorPart, PartId};
use crate::tool::{Tool, ToolDef, ToolSet};

/// `gemma4`.
pub(crate) struct Gemma4;

const OPEN: &str = "<|tool_call>";
const CLOSE: &str = "<tool_call|>";
const CALL: &str = "call:";
/// Gemma's string delimiter token.
const QUOTE: &str = "<|\"|>";
const THOUGHT_OPEN: &str = "<|channel>thought\n";
const THOUGHT_CLOSE: &str = "<channel|>";
const DECLARATION: &str = "<|tool>declaration:";
const DECLARATION_END: &str = "<tool|>";
const RESPONSE_OPEN: &str = "<|tool_response>response:";
const RESPONSE_CLOSE: &str = "<tool_response|>";

/// The longest a function name may be after `call:` before the block is taken for malformed.
const MAX_NAME: usize = 256;
/// The deepest nesting of objects and arrays read in arguments.
const MAX_DEPTH: usize = 128;

/// The JSON Schema type names the template upper-cases.
const TYPE_NAMES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

impl ProtocolSpec for Gemma4 {
    fn name(&self) -> &'static str {
        "gemma4"
    }

    fn families(&self) -> &'static str {
        "Gemma 4"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["<turn|>", "<|tool_response>", "<eos>"]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![OPEN.into()]
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning {
            markers: Some((THOUGHT_OPEN, THOUGHT_CLOSE)),
            starts_inside: false,
            calls_inside: true,
        }
    }

    /// The declarations of the template's system turn, then how a call is written.
    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let mut s = String::new();
        for t in tools.iter() {
            s.push_str(&declaration(&t.def));
        }
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        let (name, example) = prompt::example_call(tools);
        s.push_str(&format!(
            "To call a tool, write {OPEN}{CALL}NAME{{ARGUMENTS}}{CLOSE}. The arguments are \
             key:value pairs separated by commas, with bare keys: strings between {QUOTE} and \
             {QUOTE}, numbers, true, false and null bare, objects as {{key:value,…}} and arrays as \
             [value,…]. For example:\n{}\n\
             For several calls, write one block after the other. Each result comes back as \
             {RESPONSE_OPEN}NAME{{value:{QUOTE}…{QUOTE}}}{RESPONSE_CLOSE}. Call tools only when \
             they help; otherwise answer in text.\n",
            format_call(&name, &example)
        ));
        s
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("{OPEN}{CALL}")) {
            return None;
        }
        let mut defs = Vec::new();
        let mut rest = system;
        while let Some(at) = rest.find(DECLARATION) {
            let after = &rest[at + DECLARATION.len()..];
            let brace = after.find('{')?;
            let name = after[..brace].trim().to_string();
            let (value, len) = read_value(&after[brace..])?;
            let mut entry = match value {
                Value::Object(o) => o,
                _ => return None,
            };
            let description = match entry.remove("description") {
                Some(Value::String(d)) => d,
                None => String::new(),
                Some(_) => return None,
            };
            let mut parameters = entry
                .remove("parameters")
                .unwrap_or_else(|| serde_json::json!({"type": "object"}));
            lower_types(&mut parameters);
            defs.push(ToolDef {
                name,
                description,
                parameters,
            });
            rest = &after[brace + len..];
        }
        Some((
            Protocol::from_name(self.name()).ok()?,
            ToolSet::new(defs).ok()?,
        ))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format_call(name, input)
    }

    /// One block per call, back to back, as the template writes them.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        calls
            .iter()
            .map(|(n, input)| format_call(n, input))
            .collect()
    }

    /// The template's tool response: a text result is the `value` of the response object.
    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        let mut s = format!("{RESPONSE_OPEN}{name}{{value:");
        write_string(&mut s, result);
        s.push('}');
        s.push_str(RESPONSE_CLOSE);
        s
    }

    /// The responses back to back, as the template writes them after the calls.
    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        results
            .iter()
            .map(|(n, r)| self.format_result(p, n, r))
            .collect()
    }

    /// The `value` of the first response (an object without one: its JSON).
    fn read_result(&self, _: &Protocol, text: &str) -> String {
        let read = || -> Option<String> {
            let at = text.find(RESPONSE_OPEN)? + RESPONSE_OPEN.len();
            let after = &text[at..];
            let brace = after.find('{')?;
            let (value, _) = read_value(&after[brace..])?;
            Some(match value {
                Value::Object(o)
                    if o.len() == 1 && o.get("value").is_some_and(Value::is_string) =>
                {
                    o.get("value")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                }
                other => other.to_string(),
            })
        };
        read().unwrap_or_else(|| text.trim().to_string())
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(Gemma4Scanner::new(tools.clone()))
    }

    /// A key with no value.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        let mut s = format!("{OPEN}{CALL}{name}{{");
        write_key(&mut s, &key);
        s.push(':');
        write_string(&mut s, &value);
        s.push_str(",oops:}");
        s.push_str(CLOSE);
        s
    }

    /// The thought channel as the model writes it: the newline after `thought` is the marker's.
    fn format_reasoning(&self, p: &Protocol, text: &str) -> Option<String> {
        Some(if p.reasoning_open() {
            format!("{text}{THOUGHT_CLOSE}")
        } else {
            format!("{THOUGHT_OPEN}{text}{THOUGHT_CLOSE}")
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Writing Gemma's object syntax.

/// A call as the model writes it.
fn format_call(name: &str, input: &Value) -> String {
    let mut s = format!("{OPEN}{CALL}{name}");
    match input {
        Value::Object(_) => write_value(&mut s, input, false),
        _ => s.push_str("{}"),
    }
    s.push_str(CLOSE);
    s
}

/// One tool's declaration, as the template writes it in the system turn.
fn declaration(def: &ToolDef) -> String {
    let mut s = format!("{DECLARATION}{}{{", def.name);
    if !def.description.is_empty() {
        s.push_str("description:");
        write_string(&mut s, &def.description);
        s.push(',');
    }
    s.push_str("parameters:");
    write_value(&mut s, &def.parameters, true);
    s.push('}');
    s.push_str(DECLARATION_END);
    s
}

/// A value in Gemma's syntax: keys sorted (the template's order); with `schema`, the values of
/// `type` keys that name a JSON Schema type upper-cased, as the template writes them.
fn write_value(out: &mut String, v: &Value, schema: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, schema);
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_key(out, k);
                out.push(':');
                let v = &o[k.as_str()];
                if schema && k == "type" && !v.is_object() {
                    write_value(out, &upper_type(v), false);
                } else {
                    write_value(out, v, schema);
                }
            }
            out.push('}');
        }
    }
}

/// A type name (or a list of them) as the template writes it: upper-cased.
fn upper_type(v: &Value) -> Value {
    match v {
        Value::String(s) if TYPE_NAMES.contains(&s.as_str()) => Value::String(s.to_uppercase()),
        Value::Array(a) => Value::Array(a.iter().map(upper_type).collect()),
        other => other.clone(),
    }
}

/// Undoes [`upper_type`] wherever a `type` key holds upper-cased type names.
fn lower_types(v: &mut Value) {
    fn lower(v: &mut Value) {
        match v {
            Value::String(s) => {
                let low = s.to_lowercase();
                if *s != low && TYPE_NAMES.contains(&low.as_str()) {
                    *s = low;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(lower),
            _ => {}
        }
    }
    match v {
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                if k == "type" && !v.is_object() {
                    lower(v);
                } else {
                    lower_types(v);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(lower_types),
        _ => {}
    }
}

/// A string between `<|"|>` tokens; one that holds the token itself (which the raw form cannot
/// carry) as a JSON string, which the parser reads too.
fn write_string(out: &mut String, s: &str) {
    if s.contains(QUOTE) {
        out.push_str(&Value::String(s.to_string()).to_string());
    } else {
        out.push_str(QUOTE);
        out.push_str(s);
        out.push_str(QUOTE);
    }
}

/// A key: bare when it reads back as itself, else quoted.
fn write_key(out: &mut String, k: &str) {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$' | b'@'));
    if bare {
        out.push_str(k);
    } else {
        write_string(out, k);
    }
}

/// A whole value written in Gemma's syntax at the start of `text` (which starts at its `{`):
/// the value and its length.
fn read_value(text: &str) -> Option<(Value, usize)> {
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

const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)
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
    {
        if let Some(v) = number_value(tok) {
            return v;
        }
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
        Block {
            covered: start,
            raw: raw.to_string(),
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

struct Gemma4Scanner {
    tools: ToolSet,
    max_name: usize,
    state: State,
    held: Holdback,
    /// The input has ended: what was held for lookahead is decided without it.
    at_end: bool,
    /// The byte before the text being scanned (a `call:` right after a letter is prose).
    prev: u8,
}

/// Bytes that make `call:` after them part of a word.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// What a `c` in text may begin.
enum Bare {
    /// `call:NAME{` with NAME one of the tools: the length up to the `{`.
    Call(String, usize),
    /// The text ends before it can be told.
    Undecided,
    No,
}

impl Scanner for Gemma4Scanner {
    fn feed(&mut self, text: &str, em: &mut Emitter) {
        self.feed(text, em)
    }

    fn finish(&mut self, em: &mut Emitter) {
        self.finish(em)
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
    fn new(tools: ToolSet) -> Self {
        Gemma4Scanner {
            max_name: tools.max_name_len(),
            tools,
            state: State::Text,
            held: Holdback::default(),
            at_end: false,
            prev: b'\n',
        }
    }

    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        // Plain text with nothing held: only `<` or `c` can begin anything.
        if matches!(self.state, State::Text)
            && self.held.is_empty()
            && find2(b'<', b'c', piece.as_bytes()).is_none()
        {
            if let Some(&last) = piece.as_bytes().last() {
                self.prev = last;
            }
            self.held.advance(piece.len());
            em.text(piece);
            return;
        }
        let (text, base) = self.held.join(piece);
        let text = text.as_ref();
        let mut i = 0;
        while i < text.len() {
            i = match std::mem::replace(&mut self.state, State::Text) {
                State::Text => self.text(text, i, base, em),
                State::Open(b) => self.open(b, text, i, base),
                State::Name(b, name) => self.name(b, name, text, i, em),
                State::Body(b, c) => self.body(b, c, text, i, base, em),
                State::Between(b, ws) => self.between(b, ws, text, i, base, em),
                State::AfterBare(b, ws) => self.after_bare(b, ws, text, i, base, em),
                State::Skip(start) => self.skip(start, text, i, base, em),
            };
        }
        // The byte before what is held (the held text is the end of `text`).
        let kept = self.held.held_start().saturating_sub(base).min(text.len());
        if kept > 0 {
            self.prev = text.as_bytes()[kept - 1];
        }
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find2(b'<', b'c', &bytes[j..]) {
            let at = j + p;
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
        let mut j = i;
        while j < bytes.len() && is_ws(bytes[j]) {
            j += 1;
        }
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
        let call = Call {
            writer: ArgsWriter::new(tool.clone()),
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
                    em.error(ErrorPart {
                        tool_call_id: Some(id),
                        tool_name: Some(name.clone()),
                        ..ErrorPart::reason(
                            "unknown-tool",
                            format!("\"{name}\" is not one of the tools"),
                        )
                    });
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
        let mut j = i;
        while j < bytes.len() && is_ws(bytes[j]) {
            j += 1;
        }
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

    fn finish(&mut self, em: &mut Emitter) {
        // What was held for lookahead is read again, knowing that nothing follows.
        self.at_end = true;
        let start = self.held.held_start();
        let hold = self.held.take();
        if !hold.is_empty() {
            self.held.rewind(start);
            self.feed(&hold, em);
        }
        let rest = self.held.take();
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
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::part::Part;
    use crate::protocol::tests_support::{every_split, tools};

    fn p() -> Protocol {
        Protocol::from_name("gemma4").unwrap()
    }

    fn weather(city: &str) -> String {
        format!("<|tool_call>call:get_weather{{city:<|\"|>{city}<|\"|>}}<tool_call|>")
    }

    #[test]
    fn one_call_as_the_model_writes_it() {
        let text = "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}<tool_call|>";
        assert_eq!(
            p().format_call("get_weather", &json!({"days": 3, "city": "Paris"})),
            text
        );
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [("get_weather".into(), json!({"city": "Paris", "days": 3}))]
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        assert_eq!(c.text, "");
        let parsed = p().parse_generated(&tools(), text.as_bytes());
        // The call, then the block's close: spans that cover the markup end to end.
        assert!(parsed.spans.iter().all(|s| s.kind == SpanKind::ToolCall));
        assert_eq!(parsed.spans[0].start, 0);
        assert!(parsed.spans.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(parsed.spans.last().unwrap().end, text.len());
    }

    #[test]
    fn text_around_and_parallel_calls() {
        let text = format!(
            "Let me look.\n{}{}\nDone.",
            weather("Paris"),
            weather("Oslo")
        );
        let c = every_split(&p(), &text);
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), json!({"city": "Paris"})),
                ("get_weather".into(), json!({"city": "Oslo"}))
            ]
        );
        assert_eq!(c.text, "Let me look.\n\nDone.");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[test]
    fn several_calls_in_one_block() {
        for sep in ["", "\n", ", ", " "] {
            let text = format!(
                "<|tool_call>call:get_weather{{city:<|\"|>Rome<|\"|>}}{sep}call:search{{query:<|\"|>rain<|\"|>}}<tool_call|>"
            );
            let c = every_split(&p(), &text);
            assert_eq!(
                c.calls,
                [
                    ("get_weather".into(), json!({"city": "Rome"})),
                    ("search".into(), json!({"query": "rain"}))
                ],
                "{text}"
            );
            assert!(c.errors.is_empty(), "{text}: {:?}", c.errors);
            assert_eq!(c.text, "", "{text}");
            let spans = p().parse_generated(&tools(), text.as_bytes()).spans;
            assert!(spans.iter().all(|s| s.kind == SpanKind::ToolCall));
            assert_eq!(spans.last().unwrap().end, text.len());
        }
    }

    #[test]
    fn reasoning_then_a_call() {
        let text = format!(
            "<|channel>thought\nParis needs the weather.<channel|>Checking.{}",
            weather("Paris")
        );
        let c = every_split(&p(), &text);
        assert_eq!(c.reasoning, "Paris needs the weather.");
        assert_eq!(c.text, "Checking.");
        assert_eq!(c.calls.len(), 1);
        assert_eq!(
            p().format_reasoning("hm").as_deref(),
            Some("<|channel>thought\nhm<channel|>")
        );
        assert!(!p().reasoning_open());
    }

    #[test]
    fn a_call_from_inside_the_thought_channel_counts() {
        let text = format!(
            "<|channel>thought\nI need the weather. {} Now I know.<channel|>It is sunny.",
            weather("Lima")
        );
        let c = every_split(&p(), &text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Lima"}))]);
        assert_eq!(c.reasoning, "I need the weather.  Now I know.");
        assert_eq!(c.text, "It is sunny.");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        // A call cut off by the close of the channel ends the block; what may begin a call
        // stays on its side of the markers.
        let text = "<|channel>thought\nmaybe <|tool_call>call:get_weather{city:<|\"|>A<|\"|>}<channel|>after <|tool_c";
        let c = every_split(&p(), text);
        assert_eq!(c.calls.len(), 1);
        assert_eq!(c.reasoning, "maybe ");
        assert_eq!(c.text, "after <|tool_c");
        let c = every_split(
            &p(),
            "a <|tool_c<|channel>thought\nb call:get_wea<channel|>c",
        );
        assert_eq!(c.text, "a <|tool_cc");
        assert_eq!(c.reasoning, "b call:get_wea");
        assert!(c.calls.is_empty() && c.errors.is_empty());
    }

    #[test]
    fn a_channel_marker_inside_a_string_is_text_elsewhere_it_cuts_the_call_off() {
        let text = "<|channel>thought\n<|tool_call>call:search{query:<|\"|>a <channel|> b<|\"|>}<tool_call|><channel|>ok";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [("search".into(), json!({"query": "a <channel|> b"}))]
        );
        assert_eq!((c.reasoning.as_str(), c.text.as_str()), ("", "ok"));
        for text in [
            "<|channel>thought\n<|tool_call>call:search{query:1<channel|>ok",
            "<|channel>thought\ncall:search{<channel|>ok",
            "<|channel>thought\n<|tool_call>call:sea<channel|>ok",
            "<|channel>thought\n<|tool_call>call:search{query:<|\"<channel|>ok",
        ] {
            let c = every_split(&p(), text);
            assert!(c.calls.is_empty(), "{text}");
            assert_eq!(c.errors, ["unfinished-tool-call"], "{text}");
            assert_eq!(c.text, "ok", "{text}");
            let start = text.find('\n').unwrap() + 1;
            assert_eq!(c.reasoning, &text[start..text.find("<channel|>").unwrap()]);
        }
    }

    #[test]
    fn values_are_byte_exact() {
        let content = "  def f():\n\treturn \"}, {\" + '<tool_call|>' + <|tool_call>call:x{}\n\n<channel|> <|channel>thought\n";
        let input = json!({"path": "/a.py", "content": content});
        let text = p().format_call("write_file", &input);
        let c = every_split(&p(), &format!("pre {text} post"));
        assert_eq!(c.calls, [("write_file".into(), input)]);
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        assert_eq!(c.text, "pre  post");
    }

    #[test]
    fn nested_objects_and_arrays_hold_strings_with_markup() {
        let t = ToolSet::new(vec![ToolDef::new(
            "plan",
            "",
            json!({"type":"object","properties":{
                "steps":{"type":"array","items":{"type":"object"}},
                "meta":{"type":"object"}
            }}),
        )])
        .unwrap();
        let text = "<|tool_call>call:plan{steps:[{name:<|\"|>a, b\n}<|\"|>,n:1.5,ok:true},{name:<|\"|><tool_call|>[x]<|\"|>,none:null}],meta:{deep:{list:[<|\"|>{\"q\"}<|\"|>,-2,[]]}}}<tool_call|>";
        let got = p().parse_generated(&t, text.as_bytes());
        let c = crate::part::Collapsed::of(&got.parts);
        assert_eq!(
            c.calls,
            [(
                "plan".into(),
                json!({"steps":[{"name":"a, b\n}","n":1.5,"ok":true},{"name":"<tool_call|>[x]","none":null}],
                       "meta":{"deep":{"list":["{\"q\"}",-2,[]]}}})
            )]
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        // Written by the protocol, read back at every split.
        let input = json!({"nums": [1, 2.5], "tags": ["<|\"|> inside", "x"], "budget": {"min": 1}});
        let text = p().format_call("calc", &input);
        let t = ToolSet::new(vec![ToolDef::new("calc", "", json!({"type":"object"}))]).unwrap();
        let got = crate::part::Collapsed::of(&p().parse_generated(&t, text.as_bytes()).parts);
        assert_eq!(got.calls, [("calc".into(), input)]);
    }

    #[test]
    fn json_style_quoting_and_bare_words_are_read() {
        let text = "<|tool_call>call:get_weather{\"city\": \"New \\\"York\\\" \\u00e9\\ud83d\\ude00\", \"days\": \"3\", unit: c,}<tool_call|>";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [(
                "get_weather".into(),
                json!({"city": "New \"York\" é😀", "days": 3, "unit": "c"})
            )]
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        // A bare word is the string it spells; coercion types it as the schema asks.
        let c = every_split(
            &p(),
            "<|tool_call>call:get_weather{city:New York, days: 2 }<tool_call|>",
        );
        assert_eq!(
            c.calls,
            [("get_weather".into(), json!({"city": "New York", "days": 2}))]
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        // `<|"|>` around a key, and no `call:` after the opening token.
        let c = every_split(
            &p(),
            "<|tool_call>search{<|\"|>query<|\"|>:<|\"|>x<|\"|>}<tool_call|>",
        );
        assert_eq!(c.calls, [("search".into(), json!({"query": "x"}))]);
    }

    #[test]
    fn a_missing_close_is_forgiven() {
        let text = "<|tool_call>call:get_weather{city:<|\"|>Rome<|\"|>}";
        let c = every_split(&p(), text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Rome"}))]);
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        // Text or a new block right after the call: the block ended there.
        let text = format!(
            "<|tool_call>call:get_weather{{city:<|\"|>Rome<|\"|>}} and then{}",
            weather("Oslo")
        );
        let c = every_split(&p(), &text);
        assert_eq!(c.calls.len(), 2);
        assert_eq!(c.text, " and then");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[test]
    fn unfinished_calls_stay_text_with_an_error() {
        for text in [
            "<|tool_call>call:get_weather{city:<|\"|>Ro",
            "<|tool_call>call:get_weather{city:",
            "<|tool_call>call:get_wea",
            "<|tool_call>",
            "<|tool_call>call:get_weather{city:<|\"|>Rome<|\"|>,days:3",
            "<|tool_call>call:get_weather{city:<|\"|>Rome<|\"|>}call:sea",
        ] {
            let c = every_split(&p(), text);
            assert!(
                c.calls.len() <= usize::from(text.contains("}call")),
                "{text}"
            );
            assert_eq!(c.errors, ["unfinished-tool-call"], "{text}");
            let kept = text.find("call:sea").map_or(text, |k| &text[k..]);
            assert_eq!(c.text, kept, "{text}");
        }
    }

    #[test]
    fn malformed_markup_stays_text_with_an_error() {
        let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
        assert_eq!(
            bad,
            "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,oops:}<tool_call|>"
        );
        for text in [
            bad.as_str(),
            "<|tool_call><tool_call|>",
            "<|tool_call>{\"name\": \"get_weather\"}<tool_call|>",
            "<|tool_call>call:{{ tc.name }}{city:1}<tool_call|>",
            "<|tool_call>call:get_weather{city:<|\"|>a<|\"|> days:3}<tool_call|>",
            "<|tool_call>call:get_weather{city:x<y}<tool_call|>",
            "<|tool_call>call:get_weather{city:[1}]}<tool_call|>",
            "<|tool_call>call:get_weather{:1}<tool_call|>",
        ] {
            let c = every_split(&p(), text);
            assert!(c.calls.is_empty(), "{text}");
            assert_eq!(c.errors, ["malformed-tool-call"], "{text}");
            assert_eq!(c.text, text, "nothing lost");
            let spans = p().parse_generated(&tools(), text.as_bytes()).spans;
            assert!(
                spans.iter().all(|s| s.kind == SpanKind::Malformed),
                "{text}"
            );
        }
        // A good call after a broken one in the same output still counts.
        let text = format!("{bad} then {}", weather("Oslo"));
        let c = every_split(&p(), &text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Oslo"}))]);
        assert_eq!(c.text, format!("{bad} then "));
        // A block broken by a new one: the new one is read.
        let text = format!("<|tool_call>call:get_weather{{city:{}", weather("Oslo"));
        let c = every_split(&p(), &text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Oslo"}))]);
        assert_eq!(c.errors, ["malformed-tool-call"]);
        // A close token outside any call.
        let c = every_split(&p(), "a <tool_call|> b");
        assert_eq!((c.text.as_str(), c.errors.len()), ("a <tool_call|> b", 1));
    }

    #[test]
    fn an_unknown_tool_is_called_and_flagged() {
        let text = "<|tool_call>call:launch_rocket{stage:1,name:<|\"|>x<|\"|>}<tool_call|>";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [("launch_rocket".into(), json!({"stage": 1, "name": "x"}))]
        );
        assert_eq!(c.errors, ["unknown-tool"]);
    }

    #[test]
    fn deep_nesting_is_reported_not_a_crash() {
        let deep = format!(
            "<|tool_call>call:search{{query:{}1{}}}<tool_call|>",
            "[".repeat(200),
            "]".repeat(200)
        );
        let c = crate::part::Collapsed::of(&p().parse_generated(&tools(), deep.as_bytes()).parts);
        assert!(c.calls.is_empty());
        assert_eq!(c.errors, ["malformed-tool-call"]);
        assert_eq!(c.text, deep);
        let ok = format!(
            "<|tool_call>call:search{{query:{}1{}}}<tool_call|>",
            "[".repeat(100),
            "]".repeat(100)
        );
        let c = crate::part::Collapsed::of(&p().parse_generated(&tools(), ok.as_bytes()).parts);
        assert_eq!(c.calls.len(), 1);
        // Huge runs end cleanly too, at one byte per chunk.
        let huge = format!("<|tool_call>call:search{{query:{}", "{a:".repeat(50_000));
        let mut parser = p().stream_parser(&tools());
        let mut out = Vec::new();
        for b in huge.as_bytes().chunks(1) {
            parser.push(b, &mut out);
        }
        parser.finish(&mut out);
        assert!(out.iter().any(|p| matches!(p, Part::Error(_))));
        assert!(!out.iter().any(|p| matches!(p, Part::ToolCall(_))));
    }

    #[test]
    fn call_without_the_opening_token() {
        // A tool's name and `{` right after `call:`: a call; a stray close after it is its own.
        let text = "Sure. call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|> Done.";
        let c = every_split(&p(), text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Paris"}))]);
        assert_eq!(c.text, "Sure.  Done.");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        let spans = p().parse_generated(&tools(), text.as_bytes()).spans;
        assert_eq!(
            &text[spans[0].start..spans.last().unwrap().end],
            "call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>"
        );
        // Back to back, and at the very start.
        let c = every_split(
            &p(),
            "call:get_weather{city:<|\"|>A<|\"|>}call:search{query:<|\"|>b<|\"|>}",
        );
        assert_eq!(c.calls.len(), 2);
        assert!(c.errors.is_empty() && c.text.is_empty(), "{c:?}");
    }

    #[test]
    fn prose_call_stays_text() {
        for text in [
            "the call: was fine",
            "call:",
            "a call:get_weather without braces",
            "recall:get_weather{city:<|\"|>x<|\"|>}",
            "call:launch_rocket{stage:1}",
            "call:get_weatherly{x:1}",
            "call:{}",
            "cal",
            "c",
        ] {
            let c = every_split(&p(), text);
            assert!(c.calls.is_empty(), "{text}");
            assert!(c.errors.is_empty(), "{text}: {:?}", c.errors);
            assert_eq!(c.text, text);
        }
        // A broken call after a tool's name and `{` is reported.
        let text = "call:get_weather{city:}";
        let c = every_split(&p(), text);
        assert!(c.calls.is_empty());
        assert_eq!(c.errors, ["malformed-tool-call"]);
        assert_eq!(c.text, text);
    }

    #[test]
    fn only_the_ambiguous_tail_is_held_back() {
        let mut parser = p().stream_parser(&tools());
        let mut out = Vec::new();
        parser.push(b"It was the call: ok <|tool_c", &mut out);
        let c = crate::part::Collapsed::of(&out);
        assert_eq!(c.text, "It was the call: ok ");
        let mut parser = p().stream_parser(&tools());
        let mut out = Vec::new();
        parser.push(b"x call:get_wea", &mut out);
        assert_eq!(crate::part::Collapsed::of(&out).text, "x ");
        // A string value streams up to a possible delimiter.
        let mut parser = p().stream_parser(&tools());
        let mut out = Vec::new();
        parser.push(
            b"<|tool_call>call:write_file{content:<|\"|>abc<|\"",
            &mut out,
        );
        let deltas: String = out
            .iter()
            .filter_map(|p| match p {
                Part::ToolInputDelta { delta, .. } => Some(delta.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "{\"content\":\"abc");
    }

    #[test]
    fn the_prompt_declares_the_tools_and_reads_back() {
        let prompt = p().system_prompt(&tools());
        assert!(
            prompt.starts_with("<|tool>declaration:get_weather{description:<|\"|>Current weather for a city<|\"|>,parameters:{properties:{city:{type:<|\"|>STRING<|\"|>},days:{type:<|\"|>INTEGER<|\"|>},unit:{enum:[<|\"|>c<|\"|>,<|\"|>f<|\"|>]}},required:[<|\"|>city<|\"|>],type:<|\"|>OBJECT<|\"|>}}<tool|>"),
            "{prompt}"
        );
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, p());
        assert_eq!(set.to_json(), tools().to_json());
        // Schemas whose keys and strings need quoting read back exactly too.
        let odd = ToolSet::new(vec![ToolDef::new(
            "odd",
            "Has \"quotes\", <|\"|> and\nlines",
            json!({"type":["string","null"],"properties":{"a key":{"type":"string","default":"<|\"|>"},"type":{"type":"object"}},"x-n":1.5,"ok":false}),
        )])
        .unwrap();
        let (_, set) = Protocol::detect_from_prompt(&p().system_prompt(&odd)).unwrap();
        assert_eq!(set.to_json(), odd.to_json());
        let (_, set) = Protocol::detect_from_prompt(&p().system_prompt(&ToolSet::empty())).unwrap();
        assert!(set.is_empty());
    }

    #[test]
    fn results_read_back() {
        let r = p().format_result("get_weather", "18 degrees");
        assert_eq!(
            r,
            "<|tool_response>response:get_weather{value:<|\"|>18 degrees<|\"|>}<tool_response|>"
        );
        assert_eq!(p().read_result(&r), "18 degrees");
        let tricky = "{\"t\": 21}\n<|\"|> and <tool_response|>";
        assert_eq!(p().read_result(&p().format_result("f", tricky)), tricky);
        let two = p().format_results(&[("a", "1"), ("b", "2")]);
        assert_eq!(two.matches("<|tool_response>").count(), 2);
    }

    #[test]
    fn auto_picks_gemma4() {
        let d = Protocol::detect(&tools(), weather("Paris").as_bytes());
        assert_eq!(d.protocol.name(), "gemma4", "{}", d.reason);
        let d = Protocol::detect(&tools(), b"<|channel>thought\nhm<channel|>no call");
        assert_eq!(d.protocol.name(), "gemma4", "{}", d.reason);
    }
}
