//! `gemma`: the hermes envelope in ```` ```tool_call ```` fences, results in
//! ```` ```tool_response ```` fences, as Gemma models are prompted to write them.

use serde_json::Value;

use super::{Delimiters, hermes};

/// The format section of the system prompt.
pub fn prompt_section(example_name: &str, example: &Value) -> String {
    let d = Delimiters::gemma();
    format!(
        "To call a tool, write a fenced code block labelled tool_call that holds one JSON object with the \
         tool's name and its arguments:\n```tool_call\n{{\"name\": <tool name>, \"arguments\": <arguments object>}}\n```\n\n\
         For example:\n{}\n\n\
         Write one block per call. The arguments follow the tool's parameters schema. Results come back in a \
         code block labelled tool_response.\n",
        hermes::format_call(&d, example_name, example)
    )
}
