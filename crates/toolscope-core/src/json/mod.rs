//! Relaxed JSON as models write it: comments, single quotes, unquoted keys, trailing commas,
//! unescaped inner quotes and raw newlines in strings. An incremental lexer drives both the
//! whole-text parse ([`parse_relaxed`]) and the streaming argument writer ([`crate::args`]).
//! Also JSON pointers, as coercion and validation report paths.

use serde_json::Value;

/// Why a text is not (relaxed) JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at byte {offset}")]
pub(crate) struct JsonError {
    /// What the lexer expected or found, in words.
    pub message: String,
    /// Where it broke: a byte offset from the start of everything the lexer was fed.
    pub offset: usize,
}

pub(crate) mod builder;
pub(crate) mod lexer;
pub(crate) mod pointer;
pub(crate) mod whole;

pub(crate) use builder::ValueBuilder;
pub(crate) use lexer::{JsonSink, Lexer, Step};
pub(crate) use whole::Whole;

/// Parses one relaxed-JSON value that fills the whole text (whitespace and comments around it
/// allowed).
pub(crate) fn parse_relaxed(text: &str) -> Result<Value, JsonError> {
    let mut lexer = Lexer::new();
    let mut builder = ValueBuilder::new();
    match lexer.feed(text, &mut builder) {
        Step::Error { error, .. } => return Err(error),
        Step::Done { consumed } => {
            let rest = &text[consumed..];
            if let Some(p) = rest.find(|c: char| !c.is_whitespace()) {
                return Err(JsonError {
                    message: "text after the JSON value".into(),
                    offset: consumed + p,
                });
            }
        }
        Step::NeedMore => lexer.finish(&mut builder)?,
    }
    builder.take().ok_or_else(|| JsonError {
        message: "no JSON value".into(),
        offset: text.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Parses `text` fed in pieces of `size` characters.
    fn parse_chunked(text: &str, size: usize) -> Result<Value, JsonError> {
        let mut lexer = Lexer::new();
        let mut builder = ValueBuilder::new();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(size.max(1)) {
            let piece: String = piece.iter().collect();
            match lexer.feed(&piece, &mut builder) {
                Step::Error { error, .. } => return Err(error),
                Step::Done { .. } => {
                    return builder.take().ok_or_else(|| JsonError {
                        message: "none".into(),
                        offset: 0,
                    });
                }
                Step::NeedMore => {}
            }
        }
        lexer.finish(&mut builder)?;
        builder.take().ok_or_else(|| JsonError {
            message: "none".into(),
            offset: 0,
        })
    }

    #[test]
    fn relaxed_forms_models_write() {
        let cases = [
            (r#"{"a": 1}"#, json!({"a": 1})),
            ("{a: 'x', b: \"y\",}", json!({"a": "x", "b": "y"})),
            ("[1, 2, 3,]", json!([1, 2, 3])),
            ("{// c\n\"a\": /* b */ 1}", json!({"a": 1})),
            (
                r#"{"s": "He said "hi" ok"}"#,
                json!({"s": "He said \"hi\" ok"}),
            ),
            ("{\"s\": \"l1\nl2\tx\"}", json!({"s": "l1\nl2\tx"})),
            (r#"{"s": 'it\'s'}"#, json!({"s": "it's"})),
            (r#"{"s": "a'b"}"#, json!({"s": "a'b"})),
            (r#"{"u": "\u00e9\ud83d\ude00"}"#, json!({"u": "é😀"})),
            (r#"{"u": "\ud83d!"}"#, json!({"u": "\u{fffd}!"})),
            (r#"{"e": "\q"}"#, json!({"e": "q"})),
            (
                r#"{"e": "cost: \$5, it\'s"}"#,
                json!({"e": "cost: $5, it's"}),
            ),
            ("{// c\r\"a\": 1}", json!({"a": 1})),
            ("{\"a\": 1 // c\r}", json!({"a": 1})),
            (
                r#"{"b": True, "c": None, "d": false}"#,
                json!({"b": true, "c": null, "d": false}),
            ),
            (
                r#"{"n": +1, "m": .5, "k": -2.}"#,
                json!({"n": 1, "m": 0.5, "k": -2}),
            ),
            (r#"{"q": "x" , "r": "y"}"#, json!({"q": "x", "r": "y"})),
            (r#"{"k": "v"   }"#, json!({"k": "v"})),
            ("\"top\"", json!("top")),
            ("42", json!(42)),
            ("  null  ", json!(null)),
            (r#"{"a":{"b":[{"c":[]}]}}"#, json!({"a":{"b":[{"c":[]}]}})),
            (
                r#"{"close": "</tool_call>"}"#,
                json!({"close": "</tool_call>"}),
            ),
        ];
        for (text, want) in cases {
            for size in [1, 2, 3, 1000] {
                assert_eq!(
                    parse_chunked(text, size).as_ref(),
                    Ok(&want),
                    "{text} in pieces of {size}"
                );
            }
        }
    }

    #[test]
    fn broken_json_is_an_error_with_an_offset() {
        let cases = [
            ("{bad}", "expected ':'"),
            ("{a 1}", "expected ':'"),
            ("{\"a\": 1 2}", "expected ','"),
            ("[1, 2", "unexpected end"),
            ("{\"a\": \"x", "unexpected end"),
            ("{\"a\": nope}", "unquoted word"),
            ("{\"a\": 1-2}", "not a number"),
            ("", "no JSON value"),
            ("/x", "lone '/'"),
            ("[}", "expected a value"),
            ("{\"a\": 1]", "expected ','"),
            ("{} x", "text after"),
        ];
        for (text, want) in cases {
            let err = parse_relaxed(text).unwrap_err();
            assert!(err.message.contains(want), "{text}: {err}");
        }
        assert_eq!(parse_relaxed("{\"a\": 1 2}").unwrap_err().offset, 8);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "[".repeat(100_000);
        let err = parse_relaxed(&deep).unwrap_err();
        assert!(err.message.contains("nesting deeper"), "{err}");
        let ok = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(parse_relaxed(&ok).is_ok());
    }

    const MAX_NESTING: usize = lexer::MAX_DEPTH;

    #[test]
    fn huge_numbers_are_kept_as_digits() {
        let digits = "7".repeat(100_000);
        assert_eq!(
            parse_relaxed(&format!("{{\"n\": {digits}}}")).unwrap(),
            json!({"n": digits})
        );
    }

    #[test]
    fn done_reports_where_the_value_ended() {
        let mut lexer = Lexer::new();
        let mut b = ValueBuilder::new();
        assert_eq!(
            lexer.feed("{\"a\":1} tail", &mut b),
            Step::Done { consumed: 7 }
        );
        assert_eq!(b.take(), Some(json!({"a": 1})));
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e9f64..1e9).prop_map(|f| json!(f)),
            "\\PC{0,12}".prop_map(Value::String),
            "[\"\\\\/<>'\n\t a-z]{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::vec(("[a-z\"' ]{0,6}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// On strict JSON the relaxed lexer reads exactly what serde_json reads, in any chunking.
        #[test]
        fn strict_json_reads_as_serde_json_does(v in arb_json(), size in 1usize..9, pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&v).unwrap() } else { v.to_string() };
            let want: Value = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(parse_chunked(&text, size).unwrap(), want.clone());
            // Whole in one piece: the builder takes it from the strict reader at once.
            prop_assert_eq!(parse_chunked(&text, usize::MAX).unwrap(), want);
        }

        /// Any text, any chunking: the same outcome, and never a panic.
        #[test]
        fn chunking_never_changes_the_outcome(text in "[\\[\\]{}\"':,a-z0-9 \\\\/*\n.+-]{0,40}", size in 1usize..6) {
            let whole = parse_chunked(&text, usize::MAX);
            let pieces = parse_chunked(&text, size);
            prop_assert_eq!(whole.is_ok(), pieces.is_ok());
            if let (Ok(a), Ok(b)) = (whole, pieces) {
                prop_assert_eq!(a, b);
            }
        }
    }
}
