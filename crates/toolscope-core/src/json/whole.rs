//! Strict JSON read in one pass, for a value that is already complete in the text at hand (a
//! whole output, a chunk that holds a whole call).
//!
//! The lexer reads relaxed JSON an event at a time, which a stream needs and a finished text
//! pays for in every byte. Where the text is strict JSON, this reads the same value at once.
//! It gives up (and the lexer reads the text as ever) on anything the lexer might read another
//! way than a strict parser would: an error of any kind (relaxed syntax, a cut value, a lone
//! surrogate, a number out of range), a key given twice in one object (the lexer's sinks decide
//! what that means), or nesting near the lexer's limit.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::lexer::MAX_DEPTH;

/// The strict JSON value at the start of `text` (after whitespace), and the bytes up to its end;
/// `None` when there is none or the lexer could read it differently (see the module).
pub(crate) fn strict_value(text: &str) -> Option<(Value, usize)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Root>();
    let Root(value) = values.next()?.ok()?;
    Some((value, values.byte_offset()))
}

/// The top-level value.
struct Root(Value);

impl<'de> serde::Deserialize<'de> for Root {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Root, D::Error> {
        Strict {
            depth: MAX_DEPTH - 1,
        }
        .deserialize(d)
        .map(Root)
    }
}

/// A value, read no deeper than `depth` more levels, refusing keys given twice.
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

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(self.nested()?)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(self.nested()?)?;
            match out.entry(key) {
                serde_json::map::Entry::Vacant(e) => {
                    e.insert(value);
                }
                serde_json::map::Entry::Occupied(_) => {
                    return Err(A::Error::custom("a key given twice"));
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::json::parse_relaxed;

    #[test]
    fn a_strict_value_is_read_whole_and_its_end_found() {
        let text = " {\"a\": [1, -2.5, \"x\\n\\u00e9\\ud83d\\ude00\"], \"b\": {\"c\": null}} tail";
        let (v, end) = strict_value(text).unwrap();
        assert_eq!(
            v,
            json!({"a": [1, -2.5, "x\n\u{e9}\u{1f600}"], "b": {"c": null}})
        );
        assert_eq!(&text[end..], " tail");
    }

    #[test]
    fn the_lexer_reads_every_strict_value_the_same() {
        for text in [
            "{\"n\": [0, -0, 1e3, 1E-3, 12345678901234567890, 123456789012345678901234, 0.1]}",
            "{\"s\": \"\\\"q\\\" \\\\ \\/ \\b\\f\\t\\r\\u0000\", \"k\\u0041\": true, \"e\": []}",
            "[{\"a\": {}}, \"é😀\", false, null]",
        ] {
            let (v, end) = strict_value(text).unwrap();
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
            let got = strict_value(text);
            // A complete strict value followed by a comment is still read; the rest is not.
            if text.ends_with("// c") {
                assert_eq!(got.map(|g| g.1), Some(8));
            } else {
                assert_eq!(got, None, "{text}");
            }
        }
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(strict_value(&deep), None);
        let fits = format!("{}{}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1));
        assert!(strict_value(&fits).is_some());
    }
}
