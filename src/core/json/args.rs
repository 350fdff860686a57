//! The streaming argument writer: relaxed JSON argument text in, canonical JSON of the coerced
//! arguments out, as deltas that only grow once they can no longer change.

use serde_json::Value;

use crate::core::coerce;
use crate::core::part::{Coercion, Violation};
use crate::core::tool::Tool;

/// The finished arguments of one tool call.
#[derive(Clone, Debug, PartialEq)]
pub struct Args {
    /// Always a JSON object.
    pub input: Value,
    pub coercions: Vec<Coercion>,
    pub invalid: Vec<Violation>,
}

/// Turns argument text arriving in fragments (e.g. OpenAI `tool_calls[].function.arguments`)
/// into canonical JSON deltas of the coerced value.
pub struct ArgsStream {
    schema: Option<Tool>,
    text: String,
    emitted: usize,
}

impl ArgsStream {
    /// `tool` gives the schema; `None` coerces with the schema-less rules.
    pub fn new(tool: Option<&Tool>) -> Self {
        ArgsStream {
            schema: tool.cloned(),
            text: String::new(),
            emitted: 0,
        }
    }

    /// Feeds the next fragment of argument text.
    pub fn push(&mut self, fragment: &str) {
        self.text.push_str(fragment);
    }

    /// The canonical JSON written since the last call, if any.
    // Interim: nothing is final before `finish`.
    pub fn take_delta(&mut self) -> Option<String> {
        let _ = self.emitted;
        None
    }

    /// Ends the arguments. On success, also returns the last delta (the rest of the canonical
    /// JSON not yet taken). Empty text means `{}`.
    pub fn finish(self) -> Result<(Args, Option<String>), String> {
        let value = if self.text.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            crate::core::json::parse_relaxed(&self.text).map_err(|e| e.to_string())?
        };
        if !value.is_object() {
            return Err(format!("arguments must be a JSON object, got {value}"));
        }
        let (input, coercions, invalid) = match &self.schema {
            Some(tool) => {
                let c = coerce::coerce(value, tool.schema());
                let invalid = tool.validate(&c.value);
                (c.value, c.coercions, invalid)
            }
            None => (
                coerce::coerce_at(value, None, &Value::Null, "", &mut Vec::new()),
                Vec::new(),
                Vec::new(),
            ),
        };
        let canonical = input.to_string();
        Ok((
            Args {
                input,
                coercions,
                invalid,
            },
            Some(canonical),
        ))
    }
}
