//! `nemotron`: NVIDIA Nemotron Nano v2, a JSON array of calls between `<TOOLCALL>` and
//! `</TOOLCALL>`.
//!
//! ```text
//! <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>
//! ```
//!
//! Parallel calls are more items of the array. The template lists the tools as a JSON array
//! between `<AVAILABLE_TOOLS>` and `</AVAILABLE_TOOLS>` and gives results back between
//! `<TOOL_RESPONSE>` and `</TOOL_RESPONSE>`. The model reasons in `<think>` … `</think>` (turned
//! on and off with `/think` and `/no_think` in the system prompt).

use serde_json::Value;

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `nemotron`.
pub(crate) struct Nemotron;

const CALL_BEGIN: &str = "<TOOLCALL>";
const CALL_END: &str = "</TOOLCALL>";
const TOOLS_BEGIN: &str = "<AVAILABLE_TOOLS>";
const TOOLS_END: &str = "</AVAILABLE_TOOLS>";
const RESULT_BEGIN: &str = "<TOOL_RESPONSE>";
const RESULT_END: &str = "</TOOL_RESPONSE>";

static SYNTAX: FramedSyntax = FramedSyntax {
    section: None,
    call_begin: CALL_BEGIN,
    args_begin: &[ArgsBegin::Array],
    header: |_| None,
    args_suffix: None,
    call_end: Some(CALL_END),
    separator: None,
};

impl ProtocolSpec for Nemotron {
    fn name(&self) -> &'static str {
        "nemotron"
    }

    fn families(&self) -> &'static str {
        "Nemotron Nano v2 (9B, 12B)"
    }

    /// Nano v2's template ends a turn with `<SPECIAL_12>`; its tokenizer's end of sequence is
    /// `</s>`.
    fn end_tokens(&self) -> &'static [&'static str] {
        &["<SPECIAL_12>", "</s>"]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![CALL_BEGIN.into()]
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning::THINK
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "You can use the tools below, given as a JSON list.\n{TOOLS_BEGIN}{}{TOOLS_END}\n\n\
             To call tools, write {CALL_BEGIN} followed by a JSON list of calls, each an object with the tool's \
             \"name\" and its \"arguments\", and close with {CALL_END}. Several calls go in the one list. \
             Results come back between {RESULT_BEGIN} and {RESULT_END}. Call a tool only when it helps; \
             otherwise answer in text.\n",
            prompt::json_tools(tools, false)
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        let tools = prompt::read_json_tools(system, TOOLS_BEGIN, TOOLS_END)?;
        Some((Protocol::from_name(self.name()).ok()?, tools))
    }

    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        self.format_calls(p, &[(name, input)])
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        format!(
            "{CALL_BEGIN}{}{CALL_END}",
            prompt::envelope_array(calls, "name", "arguments")
        )
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format!("{RESULT_BEGIN}{result}{RESULT_END}")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, RESULT_BEGIN, RESULT_END)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(FramedScanner::new(&SYNTAX, tools.clone()).stripped_opener())
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format!(
            "{CALL_BEGIN}{}{CALL_END}",
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
        Protocol::from_name("nemotron").unwrap()
    }

    #[test]
    fn the_family_format_byte_for_byte() {
        let text = "<think>\nWeather, then search.\n</think>\n\n<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"rain\"}}]</TOOLCALL>";
        let c = every_split(&p(), text);
        assert_eq!(c.reasoning, "\nWeather, then search.\n");
        assert_eq!(c.text, "\n\n");
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), json!({"city": "Paris"})),
                ("search".into(), json!({"query": "rain"}))
            ]
        );
        assert!(c.errors.is_empty());
    }

    #[test]
    fn a_close_tag_inside_a_value_is_value_text() {
        let text = "<TOOLCALL>[{\"name\": \"write_file\", \"arguments\": {\"path\": \"/a\", \"content\": \"x</TOOLCALL>y\"}}]</TOOLCALL> after";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [(
                "write_file".into(),
                json!({"path": "/a", "content": "x</TOOLCALL>y"})
            )]
        );
        assert_eq!(c.text, " after");
    }
}
