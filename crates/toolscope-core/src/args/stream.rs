//! The argument stream of one natively-called tool: argument text arriving in fragments (e.g.
//! OpenAI's `tool_calls[].function.arguments`) in, canonical JSON deltas of the coerced
//! arguments out.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::writer::{Args, ArgsWriter};
use crate::json::{Lexer, Step};
use crate::part::Delta;
use crate::tool::Tool;

/// Feeds relaxed-JSON argument text through the lexer into the canonical writer.
pub(crate) struct ArgsStream {
    lexer: Lexer,
    writer: ArgsWriter,
    error: Option<String>,
}

impl ArgsStream {
    /// `tool` gives the schema; `None` coerces with the schema-less rules.
    pub(crate) fn new(tool: Option<&Tool>) -> Self {
        Self::with_tool(tool.map(|t| Arc::new(t.clone())))
    }

    /// Like [`ArgsStream::new`] with a shared tool (no copy).
    pub(crate) fn with_tool(tool: Option<Arc<Tool>>) -> Self {
        ArgsStream {
            lexer: Lexer::new(),
            writer: ArgsWriter::new(tool),
            error: None,
        }
    }

    /// Feeds the next fragment of argument text.
    pub(crate) fn push(&mut self, fragment: &str) {
        if self.error.is_some() {
            return;
        }
        if self.lexer.is_done() {
            if !fragment.trim().is_empty() {
                self.error = Some("text after the arguments object".into());
            }
            return;
        }
        match self.lexer.feed(fragment, &mut self.writer) {
            Step::NeedMore => {}
            Step::Done { consumed } => {
                if !fragment[consumed..].trim().is_empty() {
                    self.error = Some("text after the arguments object".into());
                }
            }
            Step::Error { error, .. } => {
                self.error = Some(format!("invalid arguments JSON: {error}"))
            }
        }
    }

    /// The canonical JSON written since the last call, if any.
    pub(crate) fn take_delta(&mut self) -> Option<Delta> {
        self.writer.take_delta()
    }

    /// Ends the arguments. On success, also returns the last delta (the canonical JSON not yet
    /// taken). Empty text means `{}`.
    pub(crate) fn finish(mut self) -> Result<(Args, Option<Delta>), String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if self.lexer.is_before_value() {
            self.writer.write_whole(Value::Object(Map::new()));
        } else {
            self.lexer
                .finish(&mut self.writer)
                .map_err(|e| format!("invalid arguments JSON: {e}"))?;
        }
        let delta = self.writer.take_delta();
        let args = self.writer.finish()?;
        Ok((args, delta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{ToolDef, ToolSet};
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::new(vec![ToolDef::new(
            "get_weather",
            "",
            json!({"type":"object","properties":{
                "city":{"type":"string"},
                "days":{"type":"integer"},
                "tags":{"type":"array","items":{"type":"string"}},
                "when":{"type":"object","properties":{"from":{"type":"string"}}}
            },"required":["city"]}),
        )])
        .unwrap()
    }

    fn run(tool: Option<&Tool>, fragments: &[&str]) -> Result<(Args, String), String> {
        let mut s = ArgsStream::new(tool);
        let mut deltas = String::new();
        for f in fragments {
            s.push(f);
            if let Some(d) = s.take_delta() {
                deltas.push_str(&d);
            }
        }
        let (args, last) = s.finish()?;
        deltas.push_str(&last.unwrap_or_default());
        Ok((args, deltas))
    }

    #[test]
    fn strings_stream_as_they_arrive() {
        let set = tools();
        let mut s = ArgsStream::new(set.get("get_weather"));
        s.push(r#"{"city": "Par"#);
        assert_eq!(s.take_delta().as_deref(), Some(r#"{"city":"Par"#));
        s.push(r#"is", "days": "#);
        assert_eq!(s.take_delta().as_deref(), Some(r#"is","days":"#));
        s.push("3");
        // A number is held until its token ends.
        assert_eq!(s.take_delta(), None);
        s.push("}");
        assert_eq!(s.take_delta().as_deref(), Some("3}"));
        let (args, last) = s.finish().unwrap();
        assert_eq!(last, None);
        assert_eq!(args.input, json!({"city":"Paris","days":3}));
        assert!(args.invalid.is_empty());
    }

    #[test]
    fn deltas_add_up_to_the_input() {
        let set = tools();
        let text = r#"{"city":"Oslo","days":"4","tags":["a","b"],"when":{"from":"now","x":1},"extra":"y"}"#;
        let whole = run(set.get("get_weather"), &[text]).unwrap();
        let bytes: Vec<String> = text.chars().map(|c| c.to_string()).collect();
        let by_char = run(
            set.get("get_weather"),
            &bytes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
        )
        .unwrap();
        assert_eq!(whole.0, by_char.0);
        let parsed: Value = serde_json::from_str(&by_char.1).unwrap();
        assert_eq!(parsed, by_char.0.input);
        assert_eq!(whole.0.input["days"], json!(4));
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z\"\\\n\u{1}ü😀 ]{0,12}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just("city".to_string()),
                            Just("days".to_string()),
                            Just("tags".to_string()),
                            Just("when".to_string()),
                            "[a-z]{1,3}",
                        ],
                        inner
                    ),
                    0..4
                )
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// The finished input (built alongside the canonical text, not parsed from it) is the
        /// value of the text the deltas add up to, under a schema and without one, however the
        /// arguments are cut.
        #[test]
        fn the_input_is_the_value_of_the_deltas(
            fields in proptest::collection::vec(("city|days|tags|when|[a-z]{1,3}", any_json()), 0..5),
            cuts in proptest::collection::vec(0usize..200, 0..6),
            with_schema: bool,
        ) {
            let set = tools();
            let obj = Value::Object(fields.into_iter().collect());
            let text = serde_json::to_string_pretty(&obj).unwrap();
            let mut at: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1)).collect();
            at.push(0);
            at.push(text.len());
            at.sort_unstable();
            at.retain(|&c| text.is_char_boundary(c));
            at.dedup();
            let pieces: Vec<&str> = at.windows(2).map(|w| &text[w[0]..w[1]]).collect();
            let tool = if with_schema { set.get("get_weather") } else { None };
            let (args, deltas) = run(tool, &pieces).unwrap();
            let parsed: Value = serde_json::from_str(&deltas).unwrap();
            proptest::prop_assert_eq!(&args.input, &parsed);
            if !with_schema {
                proptest::prop_assert_eq!(&args.input, &obj);
            }
        }
    }

    #[test]
    fn empty_text_is_an_empty_object_and_bad_text_is_an_error() {
        let (args, delta) = run(None, &["", "  "]).unwrap();
        assert_eq!(args.input, json!({}));
        assert_eq!(delta, "{}");
        assert!(
            run(None, &["{\"a\":"])
                .unwrap_err()
                .contains("invalid arguments")
        );
        assert!(
            run(None, &["[1]"])
                .unwrap_err()
                .contains("must be a JSON object")
        );
        assert!(run(None, &["{} x"]).unwrap_err().contains("text after"));
        assert!(run(None, &["{bad}"]).is_err());
    }

    #[test]
    fn violations_are_reported_after_coercion() {
        let set = tools();
        let (args, _) = run(set.get("get_weather"), &[r#"{"days": 2}"#]).unwrap();
        assert_eq!(args.invalid.len(), 1, "{:?}", args.invalid);
    }
}
