//! `xlam`: Salesforce xLAM, a JSON array of call envelopes, written bare, in a ```` ```json ````
//! fence, after `[TOOL_CALLS]` or between `<tool_call>` and `</tool_call>`.
//!
//! ```text
//! [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "search", "arguments": {"query": "rain"}}]
//! ```
//!
//! The template asks for the bare array and nothing else; models fine-tuned from it also wrap it
//! in the other three ways, and each is read. A bare array is the model's call at the very start
//! of the output; later in the text (after prose) it is a call only once it names a known tool,
//! and `[` followed by anything but `{` is never one. Parallel calls are more items of the
//! array. The template writes its instructions and then the tools as indented JSON objects, a
//! blank line after each, and gives results back in a `tool` turn. xLAM does not reason in its
//! output; a `<think>` block, which some fine-tunes write, is read as reasoning.

use serde_json::Value;

use crate::protocol::scan::json_calls::{JsonScanner, JsonScannerConfig};
use crate::protocol::spec::server::vllm;
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `xlam`.
pub(crate) struct Xlam;

/// The instructions, then the tools.
const PROMPT: ToolList = ToolList::plain(
    "You can use tools. To use them, answer with one JSON list of calls and \
nothing else:\n[{\"name\": \"tool_name\", \"arguments\": {\"arg1\": \"value1\", \"arg2\": \"value2\"}}, ... (more calls \
in the same list when several are needed)]\nWhen no tool fits, say so. When the request lacks a required argument, \
ask for it. Once results come back, use them or make more calls. For anything that needs no tool, answer in \
plain text.\nThe tools:\n",
    "",
)
.pretty();

const CARD: Card = Card {
    servers: &[vllm("xlam")],
    end_tokens: &["<|im_end|>", "<|eot_id|>", "<|endoftext|>"],
    markers: &[
        "[{ \"name\"",
        "```json [{",
        "[TOOL_CALLS] [",
        "<tool_call> [",
    ],
    reasoning: Reasoning::THINK,
    // Each result in a `tool` turn.
    results: ResultWrap::between("<|im_start|>tool\n", "<|im_end|>"),
    prompt: Some(PROMPT),
    ..Card::new("xlam", "Salesforce xLAM, xLAM-2")
};

impl ProtocolSpec for Xlam {
    card_methods!(CARD);

    /// The bare array, as the template writes a past turn's calls.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        prompt::envelope_array(calls, "name", "arguments")
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(JsonScanner::new(
            tools.clone(),
            JsonScannerConfig {
                call_start: Some("<tool_call>".into()),
                call_end: "</tool_call>".into(),
                loose_json: true,
                commit_loose: false,
                alt_start: Some("[TOOL_CALLS]".into()),
                bare_arrays: true,
            },
        ))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        prompt::malformed_envelope(name, input, "name", "arguments")
    }

    /// The family does not reason in its output, so nothing writes a think block for it (a
    /// fine-tune's `<think>` is still read).
    fn format_reasoning(&self, _: &Protocol, _text: &str) -> Option<String> {
        None
    }
}
