//! `functools`: Phi-4-mini and FireFunction v2, the plain word `functools` before a JSON array
//! of calls.
//!
//! ```text
//! functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]
//! ```
//!
//! `functools` is not a special token: the word is a call only when a `[` follows it (after
//! whitespace); elsewhere it is text, and a partial `funct…` at a chunk's end is held back only
//! until the next bytes decide. There is no closing marker: the call ends where the array ends,
//! and parallel calls are more items of it. The tools are listed as a JSON array between
//! `<|tool|>` and `<|/tool|>` in the system message.

use serde_json::Value;

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `functools`.
pub(crate) struct Functools;

const MARKER: &str = "functools";
const TOOLS_BEGIN: &str = "<|tool|>";
const TOOLS_END: &str = "<|/tool|>";
const RESULT_BEGIN: &str = "<|tool_response|>";
const RESULT_END: &str = "<|/tool_response|>";

static SYNTAX: FramedSyntax = FramedSyntax {
    section: None,
    call_begin: MARKER,
    args_begin: &[ArgsBegin::Array],
    header: |_| None,
    args_suffix: None,
    call_end: None,
    separator: None,
};

impl ProtocolSpec for Functools {
    fn name(&self) -> &'static str {
        "functools"
    }

    fn families(&self) -> &'static str {
        "Phi-4-mini, FireFunction v2"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["<|end|>", "<|endoftext|>", "<|eot_id|>"]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![format!("{MARKER} [")]
    }

    /// Phi-4-mini-reasoning thinks in `<think>` … `</think>`.
    fn reasoning(&self) -> Reasoning {
        Reasoning::THINK
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "You are a helpful assistant with these tools.{TOOLS_BEGIN}{}{TOOLS_END}\n\
             If you decide to call functions:\n\
             * write the word {MARKER} right before the calls; no closing marker is needed\n\
             * put every call in one JSON list: {MARKER}[{{\"name\": function name, \"arguments\": the arguments as a JSON object}}, ...]\n\
             * follow each function's JSON schema; do not invent arguments or values\n\
             * pick only the functions that match what the user wants; otherwise answer in text\n",
            prompt::json_tools(tools, false)
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("{MARKER}[")) {
            return None;
        }
        let tools = prompt::read_json_tools(system, TOOLS_BEGIN, TOOLS_END)?;
        Some((Protocol::from_name(self.name()).ok()?, tools))
    }

    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        self.format_calls(p, &[(name, input)])
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        format!(
            "{MARKER}{}",
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
        Box::new(FramedScanner::new(&SYNTAX, tools.clone()))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format!(
            "{MARKER}{}",
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
        Protocol::from_name("functools").unwrap()
    }

    #[test]
    fn the_family_format_byte_for_byte() {
        let text = "functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, {\"name\": \"search\", \"arguments\": {\"query\": \"rain\"}}]";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), json!({"city": "Paris"})),
                ("search".into(), json!({"query": "rain"}))
            ]
        );
        assert_eq!((c.text.as_str(), c.errors.len()), ("", 0));
    }

    #[test]
    fn the_word_in_prose_is_text() {
        for text in [
            "Python's functools module has lru_cache.",
            "I like functools",
            "functools",
            "use functools.partial or functools.reduce",
        ] {
            let c = every_split(&p(), text);
            assert!(c.calls.is_empty(), "{text}");
            assert!(c.errors.is_empty(), "{text}: {:?}", c.errors);
            assert_eq!(c.text, text);
        }
    }

    #[test]
    fn whitespace_may_separate_the_word_and_the_list() {
        let text =
            "On it. functools \n[{\"name\": \"search\", \"arguments\": {\"query\": \"q\"}}] ok";
        let c = every_split(&p(), text);
        assert_eq!(c.calls, [("search".into(), json!({"query": "q"}))]);
        assert_eq!(c.text, "On it.  ok");
    }
}
