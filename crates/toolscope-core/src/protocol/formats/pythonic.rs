//! `pythonic`: Llama 3.2 and Llama 4 with pythonic tool calling, and Olmo 3: the calls as one
//! Python list, bare, or (Llama 4) between `<|python_start|>` and `<|python_end|>`.
//!
//! ```text
//! [get_weather(city='Paris', days=3), search(query='rain')]
//! <|python_start|>[get_weather(city='Paris')]<|python_end|>
//! ```
//!
//! The model answers with the list, most often as its whole answer; text before it happens. A
//! bare `[` opens a list only when a name and `(` follow (see `scan/python_calls.rs`), so brackets in
//! prose stay text. Granite 3.3 and 4.0 in their pythonic mode write no list: one call per line,
//! bare (`get_weather(location="SF", unit="celsius")`); such a line is a call when it starts with
//! an offered tool's name and `(` right after it, and text otherwise. The template lists the functions as a JSON list and asks for the calls in
//! this form; results come back in an `ipython` turn. The family does not reason in text.

use serde_json::Value;

use super::llama3_json::IPYTHON;
use crate::protocol::scan::python_calls::{PyCallsScanner, PySyntax, call_list, malformed_list};
use crate::protocol::spec::server::{sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, card_methods, end_tokens_and};
use crate::protocol::text::prompt::ToolList;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `pythonic`.
pub(crate) struct Pythonic;

const PYTHON_START: &str = "<|python_start|>";
const PYTHON_END: &str = "<|python_end|>";
const INTRO: &str = "You can call functions to answer the question. These are the functions you may \
call, as a list in JSON format:\n";
const HOW: &str = "\n\nTo call functions, answer with nothing but a Python list of calls with keyword \
arguments:\n[func_name1(param_name1=value1, param_name2=value2), func_name2(param=value)]\n\
Write each value as a Python literal: strings in quotes, numbers, True, False, None, lists and \
dicts. If none of the functions fits, or the question leaves out a required parameter, say so in \
plain text instead.\n";
/// Strings in single quotes, as Llama writes them.
const QUOTE: char = '\'';

static SYNTAX: PySyntax = PySyntax {
    wrap: Some((PYTHON_START, PYTHON_END)),
    bare: true,
    lines: true,
};

/// Llama's end tokens, then those of the other families that write it (Olmo, Granite).
const END_TOKENS: [&str; 7] = end_tokens_and(
    super::llama3_json::END_TOKENS,
    &["<|im_end|>", "<|endoftext|>"],
);

const CARD: Card = Card {
    servers: &[
        vllm("pythonic"),
        vllm("llama4_pythonic"),
        vllm("olmo3"),
        sglang("pythonic"),
    ],
    end_tokens: &END_TOKENS,
    markers: &[PYTHON_START],
    // A list that opens with a call of one of the tools.
    tool_markers: &[("[ ", " (")],
    results: IPYTHON,
    // The instructions around the tools as a JSON list.
    prompt: Some(ToolList::plain(INTRO, HOW)),
    ..Card::new(
        "pythonic",
        "Llama 3.2, Llama 4 (pythonic tool calling), Olmo 3, Granite 3.3/4.0 (pythonic)",
    )
};

impl ProtocolSpec for Pythonic {
    card_methods!(CARD);

    /// Every call of the answer in one list.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        call_list(calls, QUOTE)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(PyCallsScanner::new(&SYNTAX, tools.clone()))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        malformed_list(name, input, QUOTE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&Pythonic);

    #[test]
    fn text_before_a_list_streams_out_and_only_the_ambiguous_tail_waits() {
        let (mut parser, mut out) = first_chunk(&P, b"Checking the weather [get_wea");
        let c = Collapsed::of(&out);
        assert_eq!(c.text, "Checking the weather ");
        out.clear();
        parser.push(b"ther(city='Oslo')] done", &mut out);
        parser.finish(&mut out);
        let c = Collapsed::of(&out);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Oslo"}))]);
        assert_eq!(c.text, " done");
    }

    #[test]
    fn deep_nesting_is_reported_not_a_crash() {
        let text = format!("[search(query={})]", "[".repeat(100_000));
        let c = whole(&P, &tools(), &text);
        assert!(c.calls.is_empty());
        assert_eq!(c.errors, ["malformed-tool-call"]);
        assert_eq!(c.text, text);
    }
}
