//! `granite`: IBM Granite 3.x, a `<|tool_call|>` token before a JSON array of calls.
//!
//! ```text
//! <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]
//! ```
//!
//! Parallel calls are more items of the one array, and the call ends where the array ends. The
//! template lists the tools as JSON under an `available_tools` role and gives results back under
//! a `tool_response` role; Granite 3.2 and later reason in `<think>` … `</think>` when thinking is
//! on.

use serde_json::Value;

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `granite`.
pub(crate) struct Granite;

const TOOL_CALL: &str = "<|tool_call|>";
const TOOLS_BEGIN: &str = "<|start_of_role|>available_tools<|end_of_role|>";
const RESULT_BEGIN: &str = "<|start_of_role|>tool_response<|end_of_role|>";
const END_OF_TEXT: &str = "<|end_of_text|>";

static SYNTAX: FramedSyntax = FramedSyntax {
    section: None,
    call_begin: TOOL_CALL,
    args_begin: &[ArgsBegin::Array],
    header: |_| None,
    args_suffix: None,
    call_end: None,
    separator: None,
};

impl ProtocolSpec for Granite {
    fn name(&self) -> &'static str {
        "granite"
    }

    fn families(&self) -> &'static str {
        "Granite 3.0–3.3"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["<|end_of_text|>"]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![TOOL_CALL.into()]
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning::THINK
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "You are a helpful assistant with access to the tools listed below. When a tool is needed to answer \
             the user, reply with {TOOL_CALL} followed by a JSON list of the calls, each an object with the tool's \
             \"name\" and its \"arguments\". If no listed tool can do what is asked, tell the user you cannot.\n\
             {TOOLS_BEGIN}\n{}\n{END_OF_TEXT}\n",
            prompt::json_tools(tools, true)
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        let tools = prompt::read_json_tools(system, TOOLS_BEGIN, END_OF_TEXT)?;
        Some((Protocol::from_name(self.name()).ok()?, tools))
    }

    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        self.format_calls(p, &[(name, input)])
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        format!(
            "{TOOL_CALL}{}",
            prompt::envelope_array(calls, "name", "arguments")
        )
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format!("{RESULT_BEGIN}{result}{END_OF_TEXT}")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, RESULT_BEGIN, END_OF_TEXT)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(FramedScanner::new(&SYNTAX, tools.clone()).stripped_opener())
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format!(
            "{TOOL_CALL}{}",
            prompt::malformed_envelope(name, input, "name", "arguments")
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::tests_support::every_split;

    fn p() -> Protocol {
        Protocol::from_name("granite").unwrap()
    }

    #[test]
    fn the_family_format_byte_for_byte() {
        let text = "Checking.<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"rain\"}}]";
        let c = every_split(&p(), text);
        assert_eq!(c.text, "Checking.");
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), json!({"city": "Paris", "days": 3})),
                ("search".into(), json!({"query": "rain"}))
            ]
        );
        assert!(c.errors.is_empty());
    }

    #[test]
    fn reasoning_then_a_call() {
        let text = "<think>The user wants Paris.</think><|tool_call|>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]";
        let c = every_split(&p(), text);
        assert_eq!(c.reasoning, "The user wants Paris.");
        assert_eq!(c.calls.len(), 1);
    }

    #[test]
    fn a_token_without_an_array_is_reported() {
        let text = "<|tool_call|>get_weather please";
        let c = every_split(&p(), text);
        assert!(c.calls.is_empty());
        assert_eq!(c.text, text);
        assert_eq!(c.errors.len(), 1);
    }
}
