//! `gemma`: the hermes envelope in ```` ```tool_call ```` fences, results in
//! ```` ```tool_response ```` fences, as Gemma models are prompted to write them.

use serde_json::Value;

use super::hermes;
use crate::protocol::scan::json_calls::JsonScanner;
use crate::protocol::spec::{Card, Delimiters, Protocol, ProtocolSpec, card_methods, framed};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `gemma`.
pub(crate) struct Gemma;

impl Delimiters {
    /// ```` ```tool_call ```` fences, results in ```` ```tool_response ```` fences.
    pub fn gemma() -> Self {
        Delimiters {
            call_start: "```tool_call\n".into(),
            call_end: "\n```".into(),
            response_start: "```tool_response\n".into(),
            response_end: "\n```".into(),
        }
    }
}

const CARD: Card = Card {
    end_tokens: &["<end_of_turn>", "<eos>"],
    markers: &["```tool_call"],
    ..Card::new("gemma", "prompted Gemma 2/3")
};

impl ProtocolSpec for Gemma {
    card_methods!(CARD);

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        framed(p, tools, prompt_section)
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        hermes::format_call(&Delimiters::gemma(), name, input)
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        hermes::format_result(&Delimiters::gemma(), name, result)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(JsonScanner::new(
            tools.clone(),
            hermes::scanner_config(&Delimiters::gemma()),
        ))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        hermes::malformed_call(&Delimiters::gemma(), name, input)
    }
}

/// The format section of the system prompt.
pub(crate) fn prompt_section(example_name: &str, example: &Value) -> String {
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
