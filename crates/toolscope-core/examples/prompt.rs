//! Renders the system prompt that teaches a model family the tools and its call format, the way
//! its chat template does, and shows how the family writes one call and one result in history.
//!
//! ```text
//! cargo run -p toolscope-core --example prompt -- PROTOCOL [TOOLS.json]
//! ```
//!
//! Without a tools file it uses one example tool. The protocols are those of
//! `toolscope_core::protocol::Protocol::names()`.

use serde_json::json;
use std::io::Write;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Written with `?`, not `println!`: a closed pipe (`| head`) ends it with an error, not a
    // panic.
    let mut out = std::io::stdout().lock();
    let mut args = std::env::args().skip(1);
    let Some(name) = args.next() else {
        return Err(format!("name a protocol: {}", Protocol::names().join(", ")).into());
    };
    let protocol = Protocol::from_name(&name)?;
    let tools = match args.next() {
        Some(path) => ToolSet::from_json_text(&std::fs::read_to_string(&path)?)?,
        None => ToolSet::new(vec![ToolDef::new(
            "get_weather",
            "The weather forecast for a city",
            json!({
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"]
            }),
        )])?,
    };

    writeln!(out, "{}", protocol.system_prompt(&tools))?;
    if let Some(tool) = tools.iter().next() {
        let input = json!({"city": "Paris", "days": 3});
        writeln!(
            out,
            "--- a call to {}, as the model writes it:",
            tool.name()
        )?;
        writeln!(out, "{}", protocol.format_call(tool.name(), &input))?;
        writeln!(out, "--- its result, as the history gives it back:")?;
        writeln!(
            out,
            "{}",
            protocol.format_result(tool.name(), "{\"temperature\": 18}")
        )?;
    }
    Ok(())
}
