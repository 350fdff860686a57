//! `command-r`: Cohere Command R7B and Command A, a JSON array of actions between
//! `<|START_ACTION|>` and `<|END_ACTION|>`.
//!
//! ```text
//! <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>
//! ```
//!
//! Parallel calls are more items of the array, numbered by `tool_call_id`; an action block may
//! also hold one object instead of a list (Command A), on lines of its own, and name the keys
//! `name`/`arguments` for `tool_name`/`parameters`; every action block of an answer is read.
//! Command R+ writes the same list after `Action:` in a JSON code fence:
//!
//! ~~~text
//! Action: ```json
//! [{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]
//! ```
//! ~~~
//!
//! The model reasons between `<|START_THINKING|>` and `<|END_THINKING|>` and writes its answer
//! between `<|START_RESPONSE|>` and `<|END_RESPONSE|>` (the later Command A models:
//! `<|START_TEXT|>` and `<|END_TEXT|>`); those markers are format, taken out of the answer like
//! the end-of-turn token and spanned as markup in the raw output. The template
//! lists the tools as a JSON array under `## Available Tools`, and gives results back between
//! `<|START_TOOL_RESULT|>` and `<|END_TOOL_RESULT|>` as `{"tool_call_id", "results", "is_error"}`
//! objects.

use serde_json::{Value, json};

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `command-r`.
pub(crate) struct CommandR;

const ACTION_BEGIN: &str = "<|START_ACTION|>";
const ACTION_END: &str = "<|END_ACTION|>";
const THINKING_BEGIN: &str = "<|START_THINKING|>";
const THINKING_END: &str = "<|END_THINKING|>";
/// The results of one turn, one JSON list between the tokens.
const RESULTS: ResultWrap = ResultWrap::between("<|START_TOOL_RESULT|>", "<|END_TOOL_RESULT|>");
const TOOLS_HEADING: &str = "## Available Tools";
/// The tools in a JSON fence, after the heading.
const TOOLS: ToolList = ToolList::plain("```json\n", "\n```");
/// Command R+'s frame of its actions.
const PLUS_ACTION: (&str, &str) = ("Action: ```json", "```");
/// The family's format tokens that are not text: the end of turn, and the markers around the
/// answer.
const FORMAT_TOKENS: &[&str] = &[
    "<|END_OF_TURN_TOKEN|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
];

static SYNTAX: FramedSyntax = FramedSyntax {
    call_end: Some(ACTION_END),
    ..FramedSyntax::new(ACTION_BEGIN, &[ArgsBegin::Array, ArgsBegin::Object])
};

fn actions(calls: &[(&str, &Value)]) -> String {
    let items: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            format!(
                "{{\"tool_call_id\": \"{i}\", \"tool_name\": {}, \"parameters\": {}}}",
                Value::from(*name),
                prompt::args_json(input)
            )
        })
        .collect();
    format!("{ACTION_BEGIN}[{}]{ACTION_END}", items.join(", "))
}

const CARD: Card = Card {
    servers: &[
        vllm("cohere_command3"),
        vllm("cohere_command4"),
        sglang("cohere_command4"),
        llama_cpp("Command R7B"),
    ],
    end_tokens: FORMAT_TOKENS,
    markers: &[
        ACTION_BEGIN,
        "<|START_RESPONSE|>",
        "<|START_TEXT|>",
        PLUS_ACTION.0,
    ],
    reasoning: Reasoning::between(THINKING_BEGIN, THINKING_END),
    ..Card::new("command-r", "Command R7B, Command R+, Command A")
};

impl ProtocolSpec for CommandR {
    card_methods!(CARD);

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "{TOOLS_HEADING}\nThese are the tools you have; use only these.\n\n{}\n\n\
             To use tools, first think in {THINKING_BEGIN} … {THINKING_END}, then write {ACTION_BEGIN} followed by a JSON \
             list of actions, each with a \"tool_call_id\" (\"0\", \"1\", …), the \"tool_name\" and its \"parameters\" \
             object, and close with {ACTION_END}. Results come back between {} and {}. \
             Write your answer to the user between <|START_RESPONSE|> and <|END_RESPONSE|>.\n",
            TOOLS.write(tools),
            RESULTS.begin,
            RESULTS.end,
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        let after = &system[system.find(TOOLS_HEADING)?..];
        if !after.contains(ACTION_BEGIN) {
            return None;
        }
        read_back(self.name(), TOOLS.read(after))
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        actions(calls)
    }

    fn format_result(&self, p: &Protocol, name: &str, result: &str) -> String {
        self.format_results(p, &[(name, result)])
    }

    fn format_results(&self, _: &Protocol, results: &[(&str, &str)]) -> String {
        let items: Vec<Value> = results
            .iter()
            .enumerate()
            .map(|(i, (_, r))| {
                let value = serde_json::from_str::<Value>(r)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| Value::from(*r));
                json!({"tool_call_id": i.to_string(), "results": {"0": value}, "is_error": null})
            })
            .collect();
        RESULTS.around(&Value::Array(items).to_string())
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        let inner = RESULTS.inside(text);
        serde_json::from_str::<Value>(inner.trim())
            .ok()
            .and_then(|v| Some(prompt::value_text(v.get(0)?.get("results")?.get("0")?)))
            .unwrap_or_else(|| prompt::unwrap_result(&inner))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(
            FramedScanner::new(&SYNTAX, tools.clone())
                .stripped_opener()
                .alt_frame(PLUS_ACTION.0, PLUS_ACTION.1),
        )
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format!(
            "{ACTION_BEGIN}{}{ACTION_END}",
            prompt::malformed_envelope(name, input, "tool_name", "parameters")
        )
    }

    fn format_reasoning(&self, _: &Protocol, text: &str) -> Option<String> {
        Some(format!("{THINKING_BEGIN}{text}{THINKING_END}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&CommandR);

    #[test]
    fn results_carry_their_call_ids() {
        let r = P.format_results(&[("get_weather", "{\"temp\": 18}"), ("search", "none")]);
        assert!(r.contains("\"tool_call_id\":\"1\""), "{r}");
        assert_eq!(P.read_result(&r), "{\"temp\":18}");
    }
}
