//! Strict JSON read in one pass, for a value that is already complete in the text at hand (a
//! whole output, a chunk that holds a whole call).
//!
//! The lexer reads relaxed JSON an event at a time, which a stream needs and a finished text
//! pays for in every byte. Where the text is strict JSON, this reads the same value at once.
//! It gives up (and the lexer reads the text as ever) on anything the lexer might read another
//! way than a strict parser would: an error of any kind (relaxed syntax, a cut value, a lone
//! surrogate, a number out of range), a key given twice in one object (the lexer's sinks decide
//! what that means), or nesting near the lexer's limit.

use serde_json::{Map, Number, Value};

/// A whole value read at once: a top-level object's members as they stand (its map is built
/// only for a reader that wants one: a call's envelope is taken apart at once), or any other
/// value.
#[derive(Debug)]
pub(crate) enum Whole {
    /// An object's members in order, no key given twice.
    Members(Vec<(String, Value)>),
    /// Any value but an object.
    Value(Value),
}

impl Whole {
    /// The value, an object's members made its map.
    pub(crate) fn into_value(self) -> Value {
        match self {
            Whole::Members(members) => Value::Object(members.into_iter().collect()),
            Whole::Value(value) => value,
        }
    }
}

/// The strict JSON value at the start of `text` (after whitespace), nested less than
/// `max_depth` levels, a top-level object left as its members, and the bytes up to its end;
/// `None` when there is none or the lexer could read it differently (see the module).
pub(crate) fn strict_whole(text: &str, max_depth: usize) -> Option<(Whole, usize)> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        // A call's envelope and its arguments' members, most often, without a regrowth (eight
        // members stay under the allocator's per-thread cache limit of 1 KiB; sixteen did not,
        // and cost more than the regrowth).
        entries: Vec::with_capacity(8),
        items: Vec::new(),
    };
    reader.skip_ws();
    let depth = max_depth.checked_sub(1)?;
    let whole = if reader.bytes.get(reader.pos) == Some(&b'{') {
        reader.members(depth)?;
        let members = std::mem::take(&mut reader.entries);
        if !distinct_keys(&members) {
            return None;
        }
        Whole::Members(members)
    } else {
        Whole::Value(reader.value(depth)?)
    };
    Some((whole, reader.pos))
}

/// Whether no key stands twice among an object's members.
fn distinct_keys(members: &[(String, Value)]) -> bool {
    if members.len() <= 16 {
        return members
            .iter()
            .enumerate()
            .all(|(i, (key, _))| members[..i].iter().all(|(other, _)| other != key));
    }
    let mut seen = std::collections::HashSet::with_capacity(members.len());
    members.iter().all(|(key, _)| seen.insert(key.as_str()))
}

/// A reader of one strict value. Containers gather their members on two stacks shared by every
/// level, so that each object's map and each array is allocated once, at its final size.
struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// The members of the objects being read, innermost last.
    entries: Vec<(String, Value)>,
    /// The items of the arrays being read, innermost last.
    items: Vec<Value>,
}

impl Reader<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.bytes.get(self.pos) == Some(&byte)).then(|| self.pos += 1)
    }

    /// A value at `pos`, inside `depth` more levels of containers at most.
    fn value(&mut self, depth: usize) -> Option<Value> {
        match *self.bytes.get(self.pos)? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Value::String),
            b't' => self.literal("true", Value::Bool(true)),
            b'f' => self.literal("false", Value::Bool(false)),
            b'n' => self.literal("null", Value::Null),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Option<Value> {
        self.bytes[self.pos..]
            .starts_with(word.as_bytes())
            .then(|| {
                self.pos += word.len();
                value
            })
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        let mark = self.members(depth)?;
        let mut map = Map::with_capacity(self.entries.len() - mark);
        for (key, value) in self.entries.drain(mark..) {
            // A key given twice is the sinks' to judge: left to the lexer.
            if map.insert(key, value).is_some() {
                return None;
            }
        }
        Some(Value::Object(map))
    }

    /// The members of the object at `pos`, pushed on `entries` after `mark`, which it returns.
    fn members(&mut self, depth: usize) -> Option<usize> {
        self.pos += 1;
        // Every container counts a level, empty or not.
        let inner = depth.checked_sub(1)?;
        let mark = self.entries.len();
        self.skip_ws();
        if self.eat(b'}').is_some() {
            return Some(mark);
        }
        loop {
            if self.bytes.get(self.pos) != Some(&b'"') {
                return None;
            }
            let key = self.string()?;
            self.skip_ws();
            self.eat(b':')?;
            self.skip_ws();
            let value = self.value(inner)?;
            self.entries.push((key, value));
            if self.closed(b'}')? {
                return Some(mark);
            }
        }
    }

    /// After a container's member: `true` past its closing bracket, `false` past a comma (and
    /// the whitespace after it); `None` on anything else.
    fn closed(&mut self, close: u8) -> Option<bool> {
        self.skip_ws();
        let at = *self.bytes.get(self.pos)?;
        self.pos += 1;
        if at == close {
            return Some(true);
        }
        (at == b',').then(|| self.skip_ws()).map(|()| false)
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.pos += 1;
        let inner = depth.checked_sub(1)?;
        self.skip_ws();
        if self.eat(b']').is_some() {
            return Some(Value::Array(Vec::new()));
        }
        let mark = self.items.len();
        loop {
            let item = self.value(inner)?;
            self.items.push(item);
            if self.closed(b']')? {
                break;
            }
        }
        Some(Value::Array(self.items.drain(mark..).collect()))
    }

    /// A number. Integers that fit are read here; any other number (a fraction, an exponent,
    /// `-0`, one too long for 64 bits) goes to `serde_json`, whose reading of it a strict
    /// parser's is by definition, as is its refusal (one out of range).
    fn number(&mut self) -> Option<Value> {
        let start = self.pos;
        let negative = self.bytes[start] == b'-';
        let digits = start + usize::from(negative);
        let int_end = self.digits(digits);
        let count = int_end - digits;
        // No digit, or a leading zero, is not JSON.
        if count == 0 || (count > 1 && self.bytes[digits] == b'0') {
            return None;
        }
        let mut end = int_end;
        if self.bytes.get(end) == Some(&b'.') {
            end = self.digits(end + 1);
            if end == int_end + 1 {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(end) {
            let mut exp = end + 1;
            if let Some(b'+' | b'-') = self.bytes.get(exp) {
                exp += 1;
            }
            end = self.digits(exp);
            if end == exp {
                return None;
            }
        }
        self.pos = end;
        let whole_int = end == int_end && count <= if negative { 18 } else { 19 };
        if !whole_int || (negative && self.bytes[digits] == b'0') {
            return match serde_json::from_str::<Value>(&self.text[start..end]) {
                Ok(value @ Value::Number(_)) => Some(value),
                _ => None,
            };
        }
        let magnitude = self.bytes[digits..end]
            .iter()
            .fold(0u64, |n, &b| n * 10 + u64::from(b - b'0'));
        Some(Value::Number(if negative {
            // At most 18 digits and not zero: a negative `i64`.
            Number::from(-(magnitude as i64))
        } else {
            Number::from(magnitude)
        }))
    }

    /// Where the run of digits at `at` ends.
    fn digits(&self, mut at: usize) -> usize {
        while let Some(b'0'..=b'9') = self.bytes.get(at) {
            at += 1;
        }
        at
    }

    /// A string at `pos` (its opening quote).
    fn string(&mut self) -> Option<String> {
        let start = self.pos + 1;
        let stop = start + special_at(&self.bytes[start..])?;
        if self.bytes[stop] == b'"' {
            self.pos = stop + 1;
            return Some(self.text[start..stop].to_owned());
        }
        // What the string's raw text decodes to is no longer than it: allocated once.
        let mut out = String::with_capacity(closing_quote(&self.bytes[stop..])? + stop - start);
        let mut at = start;
        let mut stop = stop;
        loop {
            out.push_str(&self.text[at..stop]);
            match self.bytes[stop] {
                b'"' => {
                    self.pos = stop + 1;
                    return Some(out);
                }
                b'\\' => at = self.escape(stop + 1, &mut out)?,
                // A control character, which strict JSON does not allow raw.
                _ => return None,
            }
            stop = at + special_at(&self.bytes[at..])?;
        }
    }

    /// The escape after the backslash at `at - 1`, written to `out`: where the string goes on.
    fn escape(&self, at: usize, out: &mut String) -> Option<usize> {
        let c = match *self.bytes.get(at)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4(at + 1)?;
                let (c, len) = match high {
                    0xD800..=0xDBFF => {
                        // A leading surrogate needs its trailing one, escaped right after it.
                        if self.bytes.get(at + 5..at + 7) != Some(&b"\\u"[..]) {
                            return None;
                        }
                        let low = self.hex4(at + 7)?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return None;
                        }
                        let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                        (char::from_u32(code)?, 11)
                    }
                    // A lone surrogate, or any other code point.
                    _ => (char::from_u32(high)?, 5),
                };
                out.push(c);
                return Some(at + len);
            }
            _ => return None,
        };
        out.push(c);
        Some(at + 1)
    }

    /// The four hex digits at `at`.
    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        digits
            .iter()
            .try_fold(0u32, |n, &b| Some(n * 16 + (b as char).to_digit(16)?))
    }
}

/// Where the quote that closes a string is in `bytes` (the string's rest): the first one after
/// an even run of backslashes.
fn closing_quote(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    loop {
        let quote = from + memchr::memchr(b'"', &bytes[from..])?;
        let backslashes = bytes[..quote]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if backslashes % 2 == 0 {
            return Some(quote);
        }
        from = quote + 1;
    }
}

/// Where the first quote, backslash or control character of `bytes` is, eight bytes a step.
/// (Strings in tool calls are short, or escape often: a vectorised search for the quote and
/// backslash, with a pass for control characters, measured slower on them.)
fn special_at(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let zero_in = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut at = 0;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let found = zero_in(word ^ (ONES * u64::from(b'"')))
            | zero_in(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGH);
        if found != 0 {
            // The lowest flagged byte is a true one (a borrow only flags bytes above it).
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    bytes[at..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
    use serde_json::json;

    use super::*;
    use crate::json::parse_relaxed;

    /// The reader's value, a top-level object made its map.
    fn strict_value(text: &str, max_depth: usize) -> Option<(Value, usize)> {
        strict_whole(text, max_depth).map(|(whole, end)| (whole.into_value(), end))
    }

    #[test]
    fn a_strict_value_is_read_whole_and_its_end_found() {
        let text = " {\"a\": [1, -2.5, \"x\\n\\u00e9\\ud83d\\ude00\"], \"b\": {\"c\": null}} tail";
        let (v, end) = strict_value(text, 8).unwrap();
        assert_eq!(
            v,
            json!({"a": [1, -2.5, "x\n\u{e9}\u{1f600}"], "b": {"c": null}})
        );
        assert_eq!(&text[end..], " tail");
    }

    #[test]
    fn a_key_given_twice_in_a_large_object_is_left_to_the_lexer() {
        let object = |keys: &[usize]| {
            let members: Vec<String> = keys.iter().map(|k| format!("\"k{k}\": {k}")).collect();
            format!("{{{}}}", members.join(", "))
        };
        let distinct: Vec<usize> = (0..40).collect();
        let (whole, _) = strict_whole(&object(&distinct), 8).unwrap();
        assert!(matches!(whole, Whole::Members(m) if m.len() == 40));
        let mut twice = distinct.clone();
        twice.push(17);
        assert!(strict_whole(&object(&twice), 8).is_none());
        assert!(strict_whole(&object(&[3, 1, 3]), 8).is_none());
    }

    #[test]
    fn the_lexer_reads_every_strict_value_the_same() {
        for text in [
            "{\"n\": [0, -0, 1e3, 1E-3, 12345678901234567890, 123456789012345678901234, 0.1]}",
            "{\"s\": \"\\\"q\\\" \\\\ \\/ \\b\\f\\t\\r\\u0000\", \"k\\u0041\": true, \"e\": []}",
            "[{\"a\": {}}, \"é😀\", false, null]",
        ] {
            let (v, end) = strict_value(text, 8).unwrap();
            assert_eq!(end, text.len());
            assert_eq!(Some(v), parse_relaxed(text).ok(), "{text}");
        }
    }

    #[test]
    fn what_the_lexer_may_read_otherwise_is_left_to_it() {
        for text in [
            "{\"a\": 1, \"a\": 2}",
            "{\"a\": 1,}",
            "{'a': 1}",
            "{a: 1}",
            "{\"a\": \"x\ny\"}",
            "{\"a\": \"say \"hi\"\"}",
            "{\"a\": \"\\ud800\"}",
            "{\"a\": 1e400}",
            "{\"a\": 1} // c",
            "{\"a\": [1, 2",
            "",
        ] {
            let got = strict_value(text, 8);
            // A complete strict value followed by a comment is still read; the rest is not.
            if text.ends_with("// c") {
                assert_eq!(got.map(|g| g.1), Some(8));
            } else {
                assert_eq!(got, None, "{text}");
            }
        }
        // Nested as deep as the limit: left to the lexer (which has the last word on depth).
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(strict_value(&deep(16), 16), None);
        assert!(strict_value(&deep(15), 16).is_some());
    }

    /// What a strict parser makes of a text: `serde_json`'s reading through a visitor that
    /// refuses a key given twice and counts levels as the reader does.
    fn serde_reading(text: &str, max_depth: usize) -> Option<(Value, usize)> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value = Strict {
            depth: max_depth.checked_sub(1)?,
        }
        .deserialize(&mut de)
        .ok()?;
        Some((value, de.into_iter::<serde::de::IgnoredAny>().byte_offset()))
    }

    struct Strict {
        depth: usize,
    }

    impl Strict {
        fn nested<E: serde::de::Error>(&self) -> Result<Strict, E> {
            match self.depth.checked_sub(1) {
                Some(depth) => Ok(Strict { depth }),
                None => Err(E::custom("nested too deep")),
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for Strict {
        type Value = Value;

        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Strict {
        type Value = Value;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON value")
        }

        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }

        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::Number(v.into()))
        }

        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::Number(v.into()))
        }

        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
            Number::from_f64(v)
                .map(Value::Number)
                .ok_or_else(|| E::custom("not a finite number"))
        }

        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_string()))
        }

        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element_seed(self.nested()?)? {
                items.push(item);
            }
            Ok(Value::Array(items))
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            // Every container counts a level, as the reader counts them.
            let nested = self.nested()?;
            let mut out = Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let value = map.next_value_seed(Strict {
                    depth: nested.depth,
                })?;
                if out.insert(key, value).is_some() {
                    return Err(A::Error::custom("a key given twice"));
                }
            }
            Ok(Value::Object(out))
        }
    }

    /// A JSON text as a model might write it: values of every kind, strings with escapes,
    /// surrogate pairs and non-ASCII text, whitespace between tokens.
    fn json_text() -> impl Strategy<Value = String> {
        let string = prop::collection::vec(
            prop_oneof![
                "[a-z é日😀]{0,6}",
                Just("\\\"".to_string()),
                Just("\\\\".to_string()),
                Just("\\n\\t\\/\\b\\f\\r".to_string()),
                Just("\\u00e9\\u0041".to_string()),
                Just("\\ud83d\\ude00".to_string()),
            ],
            0..4,
        )
        .prop_map(|pieces| format!("\"{}\"", pieces.concat()));
        let number = prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|f| f.to_string()),
            "-?(0|[1-9][0-9]{0,22})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?",
        ];
        let leaf = prop_oneof![
            string.clone(),
            number,
            Just("true".to_string()),
            Just("false".to_string()),
            Just("null".to_string()),
        ];
        let ws = "[ \t\n\r]{0,2}";
        leaf.prop_recursive(5, 40, 6, move |inner| {
            prop_oneof![
                prop::collection::vec((inner.clone(), ws), 0..6).prop_map(|items| {
                    let items: Vec<String> = items.into_iter().map(|(v, w)| v + &w).collect();
                    format!("[{}]", items.join(","))
                }),
                prop::collection::vec(("[a-c]{1,2}", ws, inner), 0..6).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, w, v)| format!("{w}\"{k}\"{w}:{w}{v}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_first_special_byte_is_found_at_any_distance(
            pieces in prop::collection::vec(
                prop::sample::select(vec!["a", "bc", "é", "日本", "\"", "\\", "\u{1}", "\n", "\u{1f}", " "]),
                0..120,
            ),
            plain in 0usize..80,
        ) {
            // Plain text first, so that the special byte stands anywhere from the start to far
            // past the first steps.
            let text = "x".repeat(plain) + &pieces.concat();
            let bytes = text.as_bytes();
            let naive = bytes.iter().position(|&b| b == b'"' || b == b'\\' || b < 0x20);
            prop_assert_eq!(special_at(bytes), naive);
        }

        #[test]
        fn the_reader_reads_as_a_strict_parser_does(
            text in json_text(),
            edits in prop::collection::vec(
                (any::<prop::sample::Index>(), prop::sample::select(vec![
                    "", "\"", "\\", ",", "}", "]", "{", "[", ":", "0", "-", ".", "e", "\\u", "\\ud800", "\n", "\u{1}", " ",
                ])),
                0..3,
            ),
            depth in 1usize..8,
            tail in "[ x,}]{0,3}",
        ) {
            // Edits put a token where it may break the text (or delete one byte, an ASCII one
            // so the text stays a string).
            let mut text = text + &tail;
            for (at, token) in edits {
                let mut at = at.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if token.is_empty() {
                    if text[at..].starts_with(|c: char| c.is_ascii()) {
                        text.remove(at);
                    }
                } else {
                    text.insert_str(at, token);
                }
            }
            prop_assert_eq!(strict_value(&text, depth), serde_reading(&text, depth), "{:?}", text);
        }
    }
}
