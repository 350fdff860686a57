//! Schema-based coercion of tool-call arguments (to be written).

use serde_json::Value;

use crate::core::part::Coercion;

/// The coerced value and every change made to reach it.
#[derive(Clone, Debug, PartialEq)]
pub struct Coerced {
    pub value: Value,
    pub coercions: Vec<Coercion>,
}

/// Coerces `value` to fit `schema`, resolving `$ref`s against `schema` itself.
pub fn coerce(value: Value, schema: &Value) -> Coerced {
    let mut coercions = Vec::new();
    let value = coerce_at(value, Some(schema), schema, "", &mut coercions);
    Coerced { value, coercions }
}

/// Coerces `value` found at JSON pointer `path` under `schema` (`None`: no schema), resolving
/// `$ref`s against `root`, and appends each change to `out`.
pub fn coerce_at(
    value: Value,
    _schema: Option<&Value>,
    _root: &Value,
    _path: &str,
    _out: &mut Vec<Coercion>,
) -> Value {
    value
}
