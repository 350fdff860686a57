//! The hermes family, one table entry per member ([`Hermes`]): a JSON `{"name", "arguments"}`
//! envelope between `<tool_call>` and `</tool_call>` (the delimiters are configurable), results
//! in `<tool_response>`, reasoning in `<think>` … `</think>`. Parsing is the shared JSON envelope
//! scanner; this file renders calls, results and the prompt's format section.
//!
//! - `hermes` (Hermes 2/3/4, Qwen 2.5/3, Granite 4): markup inside `<think>` is reasoning.
//! - `trinity` (Arcee Trinity): the same calls, which the model also makes from inside its
//!   `<think>` block; those count as calls. `--protocol auto` knows it by a call inside its
//!   reasoning (the detector gives a call marker inside reasoning to the protocols whose calls
//!   count there); any other hermes-shaped output reads as `hermes`.

use serde_json::Value;

use crate::protocol::scan::json_calls::{JsonScanner, JsonScannerConfig};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{
    Card, Delimiters, Protocol, ProtocolSpec, Reasoning, card_methods, framed,
};
use crate::protocol::text::prompt::{self, first_argument};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the family: its names, models, end tokens, markers and how it reasons.
pub(crate) struct Hermes {
    card: Card,
}

/// The family's end tokens (ChatML).
const END_TOKENS: &[&str] = &["<|im_end|>", "<|endoftext|>"];

/// `hermes`.
pub(crate) static HERMES: Hermes = Hermes {
    card: Card {
        servers: &[
            vllm("hermes"),
            vllm("granite4"),
            sglang("hermes"),
            sglang("qwen25"),
            sglang("qwen"),
            llama_cpp("Hermes 2 Pro"),
        ],
        end_tokens: END_TOKENS,
        markers: &["<tool_call> {", "<tool_call> ["],
        reasoning: Reasoning::THINK,
        ..Card::new("hermes", "Hermes 2/3/4, Qwen 2.5/3, Granite 4")
    },
};

/// `trinity`: hermes calls that count inside `<think>` too.
pub(crate) static TRINITY: Hermes = Hermes {
    card: Card {
        aliases: &["arcee-trinity"],
        servers: &[sglang("trinity")],
        end_tokens: END_TOKENS,
        markers: &["<tool_call> {", "<tool_call> ["],
        reasoning: Reasoning::THINK.with_calls(),
        ..Card::new("trinity", "Arcee Trinity")
    },
};

impl Delimiters {
    /// `<tool_call>` … `</tool_call>`, results in `<tool_response>` … `</tool_response>`.
    pub fn hermes() -> Self {
        Delimiters {
            call_start: "<tool_call>".into(),
            call_end: "</tool_call>".into(),
            response_start: "<tool_response>".into(),
            response_end: "</tool_response>".into(),
        }
    }
}

/// The delimiters of `p` (hermes' own when it has none).
fn delimiters_of(p: &Protocol) -> Delimiters {
    p.delimiters().unwrap_or_else(Delimiters::hermes)
}

impl ProtocolSpec for Hermes {
    card_methods!();

    fn delimiters(&self) -> Option<Delimiters> {
        Some(Delimiters::hermes())
    }

    /// A member whose calls count inside reasoning writes them there: its `<think>` block is
    /// left open for the calls that follow (the block ends with the output).
    fn format_reasoning(&self, p: &Protocol, text: &str) -> Option<String> {
        let r = self.card.reasoning;
        let (open, close) = r.markers?;
        Some(match (p.reasoning_open(), r.calls_inside) {
            (true, true) => format!("{text}\n"),
            (true, false) => format!("{text}\n{close}\n"),
            (false, true) => format!("{open}\n{text}\n"),
            (false, false) => format!("{open}\n{text}\n{close}\n"),
        })
    }

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        let d = delimiters_of(p);
        framed(p, tools, |name, example| prompt_section(&d, name, example))
    }

    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        format_call(&delimiters_of(p), name, input)
    }

    fn format_result(&self, p: &Protocol, name: &str, result: &str) -> String {
        format_result(&delimiters_of(p), name, result)
    }

    fn scanner(&self, p: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(JsonScanner::new(
            tools.clone(),
            scanner_config(&delimiters_of(p)),
        ))
    }

    fn malformed_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        malformed_call(&delimiters_of(p), name, input)
    }
}

/// A call whose arguments object has a key without a value.
pub(crate) fn malformed_call(d: &Delimiters, name: &str, input: &Value) -> String {
    let (key, value) = first_argument(input);
    format!(
        "{}{{\"name\": \"{name}\", \"arguments\": {{\"{key}\": \"{value}\", \"oops\": }}}}{}",
        d.call_start, d.call_end
    )
}

pub(crate) fn scanner_config(d: &Delimiters) -> JsonScannerConfig {
    JsonScannerConfig {
        call_start: Some(d.call_start.clone()),
        call_end: d.call_end.clone(),
        loose_json: true,
        commit_loose: false,
        alt_start: None,
        bare_arrays: false,
    }
}

/// The JSON line of a call, name first.
pub(crate) fn call_json(name: &str, input: &Value) -> String {
    format!(
        "{{\"name\": {}, \"arguments\": {}}}",
        Value::String(name.to_string()),
        prompt::args_json(input)
    )
}

fn block(start: &str, body: &str, end: &str) -> String {
    let mut s = String::with_capacity(start.len() + body.len() + end.len() + 2);
    s.push_str(start);
    if !start.ends_with('\n') {
        s.push('\n');
    }
    s.push_str(body);
    if !end.starts_with('\n') {
        s.push('\n');
    }
    s.push_str(end);
    s
}

pub(crate) fn format_call(d: &Delimiters, name: &str, input: &Value) -> String {
    block(&d.call_start, &call_json(name, input), &d.call_end)
}

/// A result as `{"name": …, "content": …}`; content that is JSON is embedded as JSON.
pub(crate) fn format_result(d: &Delimiters, name: &str, result: &str) -> String {
    let content =
        serde_json::from_str::<Value>(result).unwrap_or_else(|_| Value::String(result.to_string()));
    let body = format!(
        "{{\"name\": {}, \"content\": {}}}",
        Value::String(name.to_string()),
        content
    );
    block(&d.response_start, &body, &d.response_end)
}

/// The format section of the system prompt.
pub(crate) fn prompt_section(d: &Delimiters, example_name: &str, example: &Value) -> String {
    let start = d.call_start.trim_end();
    let end = d.call_end.trim_start();
    format!(
        "To call a tool, write one JSON object with the tool's name and its arguments between {start} and {end}:\n\
         {}\n\n\
         For example:\n{}\n\n\
         Write one block per call; to call several tools, write several blocks. The arguments are a JSON object \
         that follows the tool's parameters schema. Results come back between {} and {}.\n",
        block(
            &d.call_start,
            "{\"name\": <tool name>, \"arguments\": <arguments object>}",
            &d.call_end
        ),
        format_call(d, example_name, example),
        d.response_start.trim_end(),
        d.response_end.trim_start(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trinity_is_also_arcee_trinity() {
        assert_eq!(
            Protocol::from_name("arcee-trinity").unwrap(),
            Protocol::from_name("trinity").unwrap()
        );
    }

    /// `--protocol auto` says why it picked trinity: a call inside the reasoning. (What it
    /// picks: the case files.)
    #[test]
    fn auto_says_it_found_a_call_inside_reasoning() {
        let tools = crate::protocol::tests_support::tools();
        let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
        let d = Protocol::detect(&tools, format!("<think>Paris: {call}</think>").as_bytes());
        assert!(d.reason.contains("inside reasoning"), "{}", d.reason);
    }
}
