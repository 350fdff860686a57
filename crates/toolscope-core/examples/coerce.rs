//! Coerces a tool call's arguments to the tool's JSON Schema and prints the value, every change
//! made to reach it, and what still does not fit the schema.
//!
//! ```text
//! cargo run -p toolscope-core --example coerce -- '{"city": "Paris", "days": "3"}' \
//!     '{"type": "object", "properties": {"days": {"type": "integer"}}}'
//! ```
//!
//! Without arguments it coerces a built-in example: numbers and booleans sent as strings, and an
//! array sent as one comma-separated string.

use serde_json::{Value, json};
use std::io::Write;
use toolscope_core::coerce::coerce;
use toolscope_core::tool::{ToolDef, ToolSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Written with `?`, not `println!`: a closed pipe (`| head`) ends it with an error, not a
    // panic.
    let mut out = std::io::stdout().lock();
    let mut args = std::env::args().skip(1);
    let (arguments, schema): (Value, Value) = match (args.next(), args.next()) {
        (Some(a), Some(s)) => (serde_json::from_str(&a)?, serde_json::from_str(&s)?),
        (None, None) => (
            json!({"city": "Paris", "days": "3", "metric": "TRUE", "tags": "rain, wind"}),
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "metric": {"type": "boolean"},
                    "tags": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["city", "days"]
            }),
        ),
        _ => return Err("give both the arguments and the schema as JSON, or neither".into()),
    };

    let coerced = coerce(arguments, &schema);
    writeln!(out, "value: {}", coerced.value)?;
    for c in &coerced.coercions {
        writeln!(out, "changed {}: {} -> {}", c.path, c.from, c.to)?;
    }

    // What still contradicts the schema after coercion (a tool of a tool set validates it).
    let tools = ToolSet::new(vec![ToolDef::new("tool", "", schema)])?;
    let violations = tools
        .get("tool")
        .map_or_else(Vec::new, |t| t.validate(&coerced.value));
    if violations.is_empty() {
        writeln!(out, "valid against the schema")?;
    }
    for v in violations {
        writeln!(out, "still invalid at {:?}: {}", v.path, v.message)?;
    }
    Ok(())
}
