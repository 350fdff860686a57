//! The canonical argument writer: lexer events in, canonical JSON of the *coerced* arguments
//! out, growing only by text that can no longer change.
//!
//! Where the raw value already has the shape its schema asks for (an object under an object
//! schema, an array under an array schema with one item schema, a string under a plain string
//! schema) the writer streams it: brackets, keys and string characters are written as they
//! arrive. Every other value (numbers, booleans, strings that coercion may turn into something
//! else, values whose schema is a union) is held until it is complete, coerced whole, and
//! written at once. Coercion is compositional over exactly those streamed shapes (see
//! `core::coerce`), so the written text always equals the canonical JSON of `coerce(whole)`:
//! the deltas add up to the final input by construction.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value;

use crate::coerce::{Fit, TextFit, coerce_at_lazily};
use crate::json::{JsonSink, Whole};
use crate::json::{ValueBuilder, pointer};
use crate::part::{Coercion, Delta, Violation};
use crate::schema::{
    SchemaType, is_plain_string, items_schema, property_schema, resolve, schema_type,
};
use crate::tool::Tool;

/// The finished arguments of one tool call.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Args {
    /// Always a JSON object.
    pub input: Value,
    /// What coercion changed, in the order the values were completed.
    pub coercions: Vec<Coercion>,
    /// JSON Schema violations of `input`; empty when it is valid or the tool is unknown.
    pub invalid: Vec<Violation>,
}

enum Frame {
    Object {
        schema: Option<Arc<Value>>,
        first: bool,
    },
    Array {
        items: Option<Arc<Value>>,
        first: bool,
        next: usize,
    },
}

enum Seg {
    /// A member's key: most are short, and are kept without an allocation of their own.
    Key(compact_str::CompactString),
    Index(usize),
}

struct Hold {
    builder: ValueBuilder,
    depth: usize,
}

/// A [`JsonSink`] that writes the canonical JSON of the coerced value it is told about.
pub(crate) struct ArgsWriter {
    tool: Option<Arc<Tool>>,
    root: Option<Arc<Value>>,
    /// The canonical JSON written so far (always valid UTF-8: only whole strings go in).
    out: String,
    /// The value `out` is the JSON of, built alongside it (so finishing does not parse `out`
    /// again): streamed containers and strings as they arrive, held values once coerced.
    mirror: ValueBuilder,
    taken: usize,
    frames: Vec<Frame>,
    path: Vec<Seg>,
    hold: Option<Hold>,
    string_open: bool,
    /// Where the open streamed string's characters start in `out`; and, once one of them was
    /// escaped there (escaping lengthens the text), the string's value so far, gathered from the
    /// decoded pieces (so that the value is not parsed back from the escaped text).
    string_from: usize,
    string_value: Option<String>,
    coercions: Vec<Coercion>,
    done: bool,
    /// The value being completed is text by the format's own statement (K2 Horizon's
    /// `<ifm|arg_type>string`, DSML's `string="true"`): where the schema does not declare it, it
    /// stays the text it is (no schema-less guess turns `12345` into a number).
    stated_text: bool,
    /// The text is read whole (see [`ArgsWriter::set_whole`]): only the value is built, not the
    /// canonical JSON text deltas are taken from.
    whole: bool,
    /// The arguments were completed whole at the root and found valid by the tool's plain
    /// reading: validation would find nothing, and does not run again.
    known_valid: bool,
}

impl ArgsWriter {
    /// A writer for the arguments of `tool`. `None` (a tool that is not among the tools) writes
    /// the arguments as they came: without a schema there is nothing to coerce them to.
    pub(crate) fn new(tool: Option<Arc<Tool>>) -> Self {
        let root = tool.as_ref().map(|t| t.schema_arc());
        ArgsWriter {
            tool,
            root,
            // A call of a few hundred bytes without regrowth.
            out: String::with_capacity(256),
            mirror: ValueBuilder::for_arguments(),
            taken: 0,
            frames: Vec::new(),
            path: Vec::new(),
            hold: None,
            string_open: false,
            string_from: 0,
            string_value: None,
            coercions: Vec::new(),
            done: false,
            stated_text: false,
            whole: false,
            known_valid: false,
        }
    }

    /// The text is read whole: arguments complete in the text at hand are taken in one pass
    /// (see [`JsonSink::whole`]) and coerced at once, with no canonical text for deltas.
    pub(crate) fn set_whole(&mut self, whole: bool) {
        debug_assert!(
            !whole || self.out.is_empty(),
            "whole after text was written"
        );
        self.whole = whole;
    }

    /// The finished arguments of `tool` from a value read whole: coerced at the root, as
    /// [`ArgsWriter::write_whole`] does, without the canonical text nobody takes deltas of.
    pub(crate) fn whole_value(tool: Option<Arc<Tool>>, value: Value) -> Result<Args, String> {
        let mut writer = ArgsWriter::new(tool);
        writer.whole = true;
        writer.write_whole(value);
        writer.finish()
    }

    /// A scalar value the format states is text (see `stated_text`): the schema types it where
    /// it declares it; elsewhere it stays text.
    pub(crate) fn stated_text(&mut self, value: Value) -> Result<(), String> {
        self.stated_text = true;
        let r = self.scalar(value);
        self.stated_text = false;
        r
    }

    /// True once the top-level value is complete.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Writes a value that arrived whole (coerced at the root).
    pub(crate) fn write_whole(&mut self, value: Value) {
        self.hold = Some(Hold {
            builder: ValueBuilder::new(),
            depth: 0,
        });
        self.complete_hold(value);
    }

    /// Records a change a protocol made to the arguments before they reached the writer (the
    /// body of a call read as its one argument): it is reported with the coercions.
    pub(crate) fn record(&mut self, change: Coercion) {
        self.coercions.push(change);
    }

    /// The canonical JSON written since the last call, if any.
    pub(crate) fn take_delta(&mut self) -> Option<Delta> {
        if self.out.len() == self.taken {
            return None;
        }
        let delta = Delta::from(&self.out[self.taken..]);
        self.taken = self.out.len();
        Some(delta)
    }

    /// The finished arguments. Fails when the value is incomplete or not an object.
    pub(crate) fn finish(self) -> Result<Args, String> {
        if !self.done {
            return Err("the arguments are incomplete".into());
        }
        let mut mirror = self.mirror;
        let input = mirror
            .take()
            .ok_or_else(|| "the arguments are incomplete".to_string())?;
        if !input.is_object() {
            return Err(format!(
                "the arguments must be a JSON object, not {}",
                kind_name(&input)
            ));
        }
        // The validator runs unless the value is known valid: found so when it was completed
        // whole, or now by the tool's plain reading (most coerced arguments end up of their
        // schema's types, and that reading is cheaper than the validator).
        let invalid = match &self.tool {
            Some(t) if !self.known_valid && t.fit(&input) != Fit::Valid => t.validate(&input),
            _ => Vec::new(),
        };
        Ok(Args {
            input,
            coercions: self.coercions,
            invalid,
        })
    }

    fn pointer(&self) -> String {
        // Room for the path and what coercion adds below it, without a regrowth as it goes.
        let mut p = String::with_capacity(64);
        for seg in &self.path {
            match seg {
                Seg::Key(k) => pointer::push(&mut p, k),
                // Writing to a String cannot fail; an index needs no escape.
                Seg::Index(i) => {
                    let _ = write!(p, "/{i}");
                }
            }
        }
        p
    }

    /// A character of the canonical text, when it is written.
    fn put(&mut self, c: char) {
        if !self.whole {
            self.out.push(c);
        }
    }

    /// Where a new value starts: writes the array separator and records the index.
    fn enter_value(&mut self) {
        if let Some(Frame::Array { first, next, .. }) = self.frames.last_mut() {
            if !*first && !self.whole {
                self.out.push(',');
            }
            *first = false;
            self.path.push(Seg::Index(*next));
            *next += 1;
        }
    }

    fn value_end(&mut self) {
        if self.frames.is_empty() {
            self.done = true;
        } else {
            self.path.pop();
        }
    }

    /// The schema of the value at the current position, borrowed from the frame or the root.
    fn with_position_schema<R>(&self, f: impl FnOnce(Option<&Value>, &Value) -> R) -> R {
        let null = Value::Null;
        let root: &Value = self.root.as_deref().unwrap_or(&null);
        let schema = match self.frames.last() {
            None => self.root.as_deref(),
            Some(Frame::Object { schema, .. }) => match (schema.as_deref(), self.path.last()) {
                (Some(s), Some(Seg::Key(k))) => property_schema(s, k, root),
                _ => None,
            },
            Some(Frame::Array { items, .. }) => items.as_deref(),
        };
        f(schema, root)
    }

    /// `schema` (a part of the tool's schema) shared: by the tool, which makes each part's
    /// share once (see [`Tool::share`]); without a tool, a copy.
    fn share(&self, schema: &Value) -> Arc<Value> {
        match &self.tool {
            Some(t) => t.share(schema),
            None => Arc::new(schema.clone()),
        }
    }

    fn start_hold(&mut self) -> &mut ValueBuilder {
        let hold = self.hold.insert(Hold {
            builder: ValueBuilder::new(),
            depth: 0,
        });
        &mut hold.builder
    }

    /// No tool, no schema: values are written as they came.
    fn verbatim(&self) -> bool {
        self.tool.is_none()
    }

    fn complete_hold(&mut self, value: Value) {
        self.hold = None;
        let value = self.coerced(value);
        if !self.whole {
            write_value(&mut self.out, &value);
        }
        self.mirror.value(value);
        self.value_end();
    }

    /// A completed value coerced at its position (as it came, without a tool).
    fn coerced(&mut self, value: Value) -> Value {
        let Some(tool) = &self.tool else {
            return value;
        };
        let stated_text = self.stated_text && value.is_string();
        // The whole arguments at once, already of the schema's types: nothing to coerce.
        if self.frames.is_empty() && !stated_text {
            match tool.fit(&value) {
                Fit::Unknown => {}
                fit => {
                    self.known_valid = fit == Fit::Valid;
                    return value;
                }
            }
        }
        let value = match self.text_of_an_argument(tool, value) {
            Ok((value, record)) => {
                self.coercions.extend(record);
                return value;
            }
            Err(value) => value,
        };
        let mut records = Vec::new();
        let value = self.with_position_schema(|schema, root| match schema {
            None if stated_text => value,
            _ => coerce_at_lazily(value, schema, root, || self.pointer(), &mut records),
        });
        self.coercions.append(&mut records);
        value
    }

    /// A text completed as a top-level argument (a markup format's parameter) whose schema is a
    /// simple one, coerced at once by the tool's plain reading of its schema (see
    /// [`Tool::text_fit`]) instead of walking the schema's JSON: the value and what coercion
    /// records, or the text given back when that cannot tell.
    fn text_of_an_argument(
        &self,
        tool: &Tool,
        value: Value,
    ) -> Result<(Value, Option<Coercion>), Value> {
        let (
            Value::String(text),
            [
                Frame::Object {
                    schema: Some(s), ..
                },
            ],
            Some(Seg::Key(name)),
        ) = (&value, self.frames.as_slice(), self.path.last())
        else {
            return Err(value);
        };
        // The object is the arguments under the tool's own schema, which the reading starts at.
        if !std::ptr::eq(&**s, tool.schema()) {
            return Err(value);
        }
        let fit = tool.text_fit(name, text);
        #[cfg(debug_assertions)]
        let general = {
            let mut records = Vec::new();
            let v = self.with_position_schema(|schema, root| {
                coerce_at_lazily(value.clone(), schema, root, || self.pointer(), &mut records)
            });
            (v, records)
        };
        let done = match fit {
            TextFit::Unknown => return Err(value),
            TextFit::Kept => (value, None),
            TextFit::Becomes(to) => {
                let record = Coercion {
                    path: self.pointer(),
                    from: value,
                    to: to.clone(),
                };
                (to, Some(record))
            }
        };
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            (&general.0, general.1.as_slice()),
            (&done.0, done.1.as_slice()),
            "the plain reading of an argument under {}",
            tool.schema()
        );
        Ok(done)
    }

    /// Forwards an event to the held value; completes the hold when the value is whole.
    fn held(
        &mut self,
        event: impl FnOnce(&mut ValueBuilder) -> Result<(), String>,
        depth_change: isize,
    ) -> Result<(), String> {
        let Some(hold) = self.hold.as_mut() else {
            return Ok(());
        };
        event(&mut hold.builder)?;
        hold.depth = hold.depth.saturating_add_signed(depth_change);
        if hold.depth == 0
            && let Some(v) = hold.builder.take()
        {
            self.complete_hold(v);
        }
        Ok(())
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl JsonSink for ArgsWriter {
    fn takes_whole(&self) -> bool {
        self.whole && !self.done && self.hold.is_none() && self.frames.is_empty()
    }

    fn whole(&mut self, value: Whole) -> bool {
        // Coerced whole as it would be piece by piece (the compositional contract above).
        self.write_whole(value.into_value());
        true
    }

    fn begin_object(&mut self) -> Result<(), String> {
        if self.hold.is_some() {
            return self.held(|b| b.begin_object(), 1);
        }
        self.enter_value();
        let stream = match self.frames.last() {
            // Elements of an array share the array's (already resolved) item schema.
            Some(Frame::Array {
                items: Some(items), ..
            }) => {
                let root = self.root.as_deref().unwrap_or(&Value::Null);
                (schema_type(items, root) == SchemaType::Object).then(|| items.clone())
            }
            _ if self.verbatim() => Some(Arc::new(Value::Null)),
            _ => self.with_position_schema(|s, root| {
                s.filter(|s| schema_type(s, root) == SchemaType::Object)
                    .map(|s| self.share(resolve(s, root)))
            }),
        };
        match stream {
            Some(schema) => {
                self.put('{');
                let _ = self.mirror.begin_object();
                self.frames.push(Frame::Object {
                    schema: (!self.verbatim()).then_some(schema),
                    first: true,
                });
                Ok(())
            }
            None => {
                self.start_hold().begin_object()?;
                if let Some(h) = self.hold.as_mut() {
                    h.depth = 1;
                }
                Ok(())
            }
        }
    }

    fn end_object(&mut self) -> Result<(), String> {
        if self.hold.is_some() {
            return self.held(|b| b.end_object(), -1);
        }
        self.frames.pop();
        self.put('}');
        let _ = self.mirror.end_object();
        self.value_end();
        Ok(())
    }

    fn begin_array(&mut self) -> Result<(), String> {
        if self.hold.is_some() {
            return self.held(|b| b.begin_array(), 1);
        }
        self.enter_value();
        let stream = if self.verbatim() {
            Some(None)
        } else {
            self.with_position_schema(|s, root| {
                let s = s.filter(|s| schema_type(s, root) == SchemaType::Array)?;
                let items = items_schema(s, root)?;
                Some(Some(self.share(resolve(items, root))))
            })
        };
        match stream {
            Some(items) => {
                self.put('[');
                let _ = self.mirror.begin_array();
                self.frames.push(Frame::Array {
                    items,
                    first: true,
                    next: 0,
                });
                Ok(())
            }
            None => {
                self.start_hold().begin_array()?;
                if let Some(h) = self.hold.as_mut() {
                    h.depth = 1;
                }
                Ok(())
            }
        }
    }

    fn end_array(&mut self) -> Result<(), String> {
        if self.hold.is_some() {
            return self.held(|b| b.end_array(), -1);
        }
        self.frames.pop();
        self.put(']');
        let _ = self.mirror.end_array();
        self.value_end();
        Ok(())
    }

    fn key(&mut self, key: &str) -> Result<(), String> {
        if let Some(h) = self.hold.as_mut() {
            return h.builder.key(key);
        }
        if let Some(Frame::Object { first, .. }) = self.frames.last_mut() {
            let first = std::mem::replace(first, false);
            if !self.whole {
                if !first {
                    self.out.push(',');
                }
                write_json_string(&mut self.out, key);
                self.out.push(':');
            }
            let _ = self.mirror.key(key);
            self.path.push(Seg::Key(key.into()));
        }
        Ok(())
    }

    fn begin_string(&mut self) -> Result<(), String> {
        if self.hold.is_some() {
            return self.held(|b| b.begin_string(), 0);
        }
        self.enter_value();
        if self.verbatim()
            || self.with_position_schema(|s, root| s.is_some_and(|s| is_plain_string(s, root)))
        {
            self.put('"');
            self.string_open = true;
            self.string_from = self.out.len();
            // Without the text, the value is gathered from the pieces from the start.
            self.string_value = self.whole.then(String::new);
            Ok(())
        } else {
            self.start_hold().begin_string()
        }
    }

    fn string_piece(&mut self, piece: &str) -> Result<(), String> {
        if self.string_open {
            if self.whole {
                if let Some(value) = &mut self.string_value {
                    value.push_str(piece);
                }
                return Ok(());
            }
            let before = self.out.len();
            write_escaped(&mut self.out, piece);
            if let Some(value) = &mut self.string_value {
                value.push_str(piece);
            } else if self.out.len() - before != piece.len() {
                // The first escaped piece: what was written before it is its own value.
                let mut value = String::with_capacity(before - self.string_from + piece.len());
                value.push_str(&self.out[self.string_from..before]);
                value.push_str(piece);
                self.string_value = Some(value);
            }
            Ok(())
        } else if let Some(h) = self.hold.as_mut() {
            h.builder.string_piece(piece)
        } else {
            Ok(())
        }
    }

    fn end_string(&mut self) -> Result<(), String> {
        if self.string_open {
            self.string_open = false;
            // The string's value: its written characters, or the pieces gathered once one was
            // escaped.
            self.put('"');
            let value = match self.string_value.take() {
                Some(value) => Value::String(value),
                None => Value::String(self.out[self.string_from..self.out.len() - 1].to_string()),
            };
            self.mirror.value(value);
            self.value_end();
            Ok(())
        } else {
            self.held(|b| b.end_string(), 0)
        }
    }

    fn scalar(&mut self, value: Value) -> Result<(), String> {
        if self.hold.is_some() {
            return self.held(|b| b.scalar(value), 0);
        }
        self.enter_value();
        self.hold = Some(Hold {
            builder: ValueBuilder::new(),
            depth: 0,
        });
        self.complete_hold(value);
        Ok(())
    }
}

/// Writes `value`'s compact JSON, as `serde_json::to_string` writes it, onto `out` (in place:
/// no string of its own to allocate and copy).
fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        // A number's text is the one serde_json writes (itoa for integers, ryu for the finite
        // floats a Number holds); writing to a String cannot fail.
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_json_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Writes `s` as a JSON string literal, quotes included.
pub(super) fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    write_escaped(out, s);
    out.push('"');
}

/// The high bit of each of the eight bytes of `w` (little-endian) that may have to be escaped
/// in a JSON string: a control character (below 0x20), `"` or `\`. The lowest bit set is
/// always such a byte (a borrow may flag a byte above one that is, never a byte below).
#[inline]
fn escape_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w;
    let q = w ^ (ONES * b'"' as u64);
    let quote = q.wrapping_sub(ONES) & !q;
    let b = w ^ (ONES * b'\\' as u64);
    let backslash = b.wrapping_sub(ONES) & !b;
    (below_space | quote | backslash) & HIGHS
}

/// The first byte of `bytes` at or after `i` that must be escaped in a JSON string: found eight
/// bytes at a time, the last few one by one.
#[inline]
fn next_escape(bytes: &[u8], mut i: usize) -> Option<usize> {
    while i + 8 <= bytes.len() {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[i..i + 8]);
        let mask = escape_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return Some(i + (mask.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .map(|k| i + k)
}

/// Writes the JSON-escaped content of a string (no quotes), as serde_json does. The bytes
/// between two that must be escaped are found eight at a time and copied whole.
pub(super) fn write_escaped(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    // One plain character (a stream arriving byte by byte).
    if let [b] = bytes
        && *b >= 0x20
        && *b != b'"'
        && *b != b'\\'
        && b.is_ascii()
    {
        out.push(*b as char);
        return;
    }
    let mut start = 0;
    while let Some(at) = next_escape(bytes, start) {
        // The bytes before an ASCII byte end on a character boundary.
        out.push_str(&s[start..at]);
        let b = bytes[at];
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xf) as usize] as char);
            }
        }
        start = at + 1;
    }
    out.push_str(&s[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_matches_serde_json() {
        let long = "a long run of plain text, then \" and \\ and \u{1} and ü, then more plain text";
        let cases = [
            "plain",
            "q\"b\\s",
            "nl\n\r\t",
            "\u{1}\u{1f}\u{8}\u{c}",
            "ünï\u{7f}😀",
            "",
            long,
            "12345678\"",
            "1234567\u{1f}",
            "\u{80}\u{ff}ÿÿÿÿÿÿÿÿ",
            "        \\",
        ];
        for s in cases {
            let mut out = String::new();
            write_json_string(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    proptest::proptest! {
        /// Any string, escapes near each other, at word edges and in runs of non-ASCII text,
        /// escapes exactly as serde_json escapes it.
        #[test]
        fn escaping_matches_serde_json_on_any_string(
            chars in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec!['"', '\\', '\n', '\t', '\u{0}', '\u{1f}', '\u{7f}']),
                    proptest::sample::select(vec!['a', ' ', 'é', '日', '😀', '\u{80}', '\u{a0}']),
                    proptest::char::any(),
                ],
                0..40,
            )
        ) {
            let s: String = chars.into_iter().collect();
            let mut out = String::new();
            write_json_string(&mut out, &s);
            proptest::prop_assert_eq!(out, serde_json::to_string(&s).unwrap());
        }
    }

    /// Any value, written in place, is the text serde_json writes for it: every number
    /// (integers of either sign, floats of any magnitude), escapes in keys and strings, nesting.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let text = proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(vec!['"', '\\', '\n', '\u{1}', '\u{7f}', 'é', '😀']),
                proptest::char::any(),
            ],
            0..8,
        )
        .prop_map(|chars| chars.into_iter().collect::<String>());
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text.clone().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 5, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec((text.clone(), inner), 0..5)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #[test]
        fn a_value_is_written_as_serde_json_writes_it(value in any_value()) {
            let mut out = String::from("[");
            write_value(&mut out, &value);
            proptest::prop_assert_eq!(&out[1..], serde_json::to_string(&value).unwrap());
        }
    }

    /// A whole value: one that already fits is taken as it is (valid, or with the violations
    /// the validator finds), one that does not is coerced as ever.
    #[test]
    fn a_whole_value_that_fits_is_neither_coerced_nor_validated_again() {
        use crate::tool::{ToolDef, ToolSet};
        use serde_json::json;
        let set = ToolSet::new(vec![ToolDef::new(
            "get_weather",
            "",
            json!({"type":"object","properties":{
                "city":{"type":"string"},
                "days":{"type":"integer","maximum":7}
            },"required":["city"]}),
        )])
        .unwrap();
        let tool = || set.get_arc("get_weather").cloned();
        let args = |v: Value| ArgsWriter::whole_value(tool(), v).unwrap();

        let fits = args(json!({"city": "Oslo"}));
        assert_eq!(fits.input, json!({"city": "Oslo"}));
        assert!(fits.coercions.is_empty() && fits.invalid.is_empty());
        // Of the schema's types, and still invalid: a required name missing, a bound passed.
        let missing = args(json!({"days": 3}));
        assert!(missing.coercions.is_empty());
        assert_eq!(missing.invalid.len(), 1, "{:?}", missing.invalid);
        let over = args(json!({"city": "Oslo", "days": 9}));
        assert_eq!(over.invalid.len(), 1, "{:?}", over.invalid);
        assert_eq!(over.invalid[0].path, "/days");
        // Not of its types: coerced, then validated.
        let coerced = args(json!({"city": "Oslo", "days": "30"}));
        assert_eq!(coerced.input, json!({"city": "Oslo", "days": 30}));
        assert_eq!(coerced.coercions.len(), 1);
        assert_eq!(coerced.invalid.len(), 1, "{:?}", coerced.invalid);
    }
}
