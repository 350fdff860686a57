//! `llama3-json`: Llama 3.1, 3.3 and 4 with JSON tool calling, a call envelope with
//! `parameters`, after `<|python_tag|>` or bare at the start of the output.
//!
//! ```text
//! <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}
//! {"name": "get_weather", "parameters": {"city": "Paris"}}; {"name": "search", "parameters": {"query": "rain"}}
//! ```
//!
//! A call ends where its JSON balances; parallel calls are joined by `;`. Bare JSON is a call
//! only at the very start of the output (after whitespace): later in the text only
//! `<|python_tag|>` opens one. The template lists the tools as JSON function objects, one after
//! the other, after its instructions, and gives results back in an `ipython` turn. Llama 3 does
//! not reason in its output (no markers).

use serde_json::Value;

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, ResultWrap, card_methods};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `llama3-json`.
pub(crate) struct Llama3Json;

const PYTHON_TAG: &str = "<|python_tag|>";
/// The instructions, then the tools.
const PROMPT: ToolList = ToolList::functions(
    "Given the following functions, respond with a JSON for a function call with its proper \
arguments that best answers the given prompt.\n\nRespond in the format {\"name\": function name, \"parameters\": \
dictionary of argument name and its value}. Do not use variables. For several calls, separate them with \"; \".\n\n",
    "",
)
.pretty();
/// Results in an `ipython` turn, one after the other (as pythonic's template writes them too).
pub(super) const IPYTHON: ResultWrap = ResultWrap::between(
    "<|start_header_id|>ipython<|end_header_id|>\n\n",
    "<|eot_id|>",
)
.joined("");

static SYNTAX: FramedSyntax = FramedSyntax {
    separator: Some(";"),
    ..FramedSyntax::new(PYTHON_TAG, &[ArgsBegin::Object])
};

/// The end-of-turn and end-of-message tokens of Llama 3 and Llama 4 (pythonic's too).
pub(super) const END_TOKENS: &[&str] = &[
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<|eot|>",
    "<|eom|>",
];

const CARD: Card = Card {
    servers: &[
        vllm("llama3_json"),
        vllm("llama4_json"),
        sglang("llama3"),
        llama_cpp("Llama 3.x"),
    ],
    end_tokens: END_TOKENS,
    markers: &[PYTHON_TAG],
    // An object that names an offered tool (both of Llama's spellings).
    tool_markers: &[
        ("{ \"name\" : \"", "\" , \"parameters\""),
        ("{ \"type\" : \"function\" , \"name\" : \"", "\""),
    ],
    results: IPYTHON,
    prompt: Some(PROMPT),
    ..Card::new("llama3-json", "Llama 3.1, 3.3, Llama 4 (JSON tool calling)")
};

impl ProtocolSpec for Llama3Json {
    card_methods!(CARD);

    /// The calls after `<|python_tag|>`, joined by `; `.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        let each: Vec<String> = calls
            .iter()
            .map(|c| {
                let one = prompt::envelope_array(std::slice::from_ref(c), "name", "parameters");
                one[1..one.len() - 1].to_string()
            })
            .collect();
        format!("{PYTHON_TAG}{}", each.join("; "))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(
            FramedScanner::new(&SYNTAX, tools.clone())
                .bare_first_call()
                .stripped_opener(),
        )
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        let one = prompt::malformed_envelope(name, input, "name", "parameters");
        format!("{PYTHON_TAG}{}", &one[1..one.len() - 1])
    }
}
