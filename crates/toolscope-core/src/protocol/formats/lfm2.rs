//! `lfm2`: Liquid LFM2 and LFM2.5, a Python list of calls between `<|tool_call_start|>` and
//! `<|tool_call_end|>`.
//!
//! ```text
//! <|tool_call_start|>[get_weather(city="Paris"), search(query="rain")]<|tool_call_end|>
//! ```
//!
//! The list is read as `pythonic` reads it (see `scan/python_calls.rs`), but only after the open
//! marker: a bare list in the text is text. A missing close marker at the end, or before other
//! text, is forgiven. Asked for JSON in its system prompt, LFM2 writes the list as JSON call
//! envelopes instead, `<|tool_call_start|>[{"name": "f", "arguments": {…}}]<|tool_call_end|>`:
//! a block whose list opens with `{` is read so (as nemotron reads its list), any other block
//! as Python. The template lists the tools as JSON between `<|tool_list_start|>` and
//! `<|tool_list_end|>` in the system turn, and gives results back in a `tool` turn between
//! `<|tool_response_start|>` and `<|tool_response_end|>`. The thinking models reason in
//! `<think>` … `</think>`.

use serde_json::Value;

use crate::protocol::scan::forms::{Form, FormSwitch};
use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::scan::python_calls::{PyCallsScanner, PySyntax, call_list, malformed_list};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods, read_back};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `lfm2`.
pub(crate) struct Lfm2;

const CALL_START: &str = "<|tool_call_start|>";
const CALL_END: &str = "<|tool_call_end|>";
const TOOLS: ToolList = ToolList::plain("<|tool_list_start|>", "<|tool_list_end|>");
const RESULT_BEGIN: &str = "<|im_start|>tool\n<|tool_response_start|>";
const RESULT_END: &str = "<|tool_response_end|><|im_end|>";
/// Strings in double quotes, as LFM2 writes them.
const QUOTE: char = '"';

static SYNTAX: PySyntax = PySyntax {
    wrap: Some((CALL_START, CALL_END)),
    bare: false,
    lines: false,
};

/// The JSON form: an array of call envelopes between the same markers.
static JSON_SYNTAX: FramedSyntax = FramedSyntax {
    call_end: Some(CALL_END),
    ..FramedSyntax::new(CALL_START, &[ArgsBegin::Array])
};

/// The most whitespace looked through after the open marker and after the `[` to tell the two
/// forms apart; past it, the block is read as Python.
const MAX_LOOK: usize = 64;

const fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The form of the block that `s` opens (`s` starts with the whole open marker): JSON (the
/// other form) when its list's first item opens with `{`, else Python (the main form).
fn form_of(s: &str, at_end: bool) -> Form {
    let b = s.as_bytes();
    let mut i = CALL_START.len();
    for expect_bracket in [true, false] {
        let from = i;
        while i < b.len() && is_ws(b[i]) && i - from <= MAX_LOOK {
            i += 1;
        }
        if i - from > MAX_LOOK {
            return Form::Main;
        }
        if i == b.len() {
            return if at_end { Form::Main } else { Form::Unknown };
        }
        if expect_bracket {
            if b[i] != b'[' {
                return Form::Main;
            }
            i += 1;
        } else if b[i] == b'{' {
            return Form::Other;
        }
    }
    Form::Main
}

const CARD: Card = Card {
    servers: &[
        vllm("lfm2"),
        sglang("lfm2"),
        llama_cpp("LFM2 with JSON tools"),
    ],
    end_tokens: &["<|im_end|>", "<|endoftext|>"],
    markers: &[CALL_START],
    // LFM2.5 thinking models reason in `<think>` … `</think>`.
    reasoning: Reasoning::THINK,
    ..Card::new("lfm2", "Liquid LFM2, LFM2.5")
};

impl ProtocolSpec for Lfm2 {
    card_methods!(CARD);

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "List of tools: {}\n\n\
             To call tools, write {CALL_START}, then a Python list of calls with keyword arguments, \
             then {CALL_END}:\n\
             {CALL_START}[tool_name(argument=\"value\", other=2), other_tool()]{CALL_END}\n\
             Values are Python literals (strings in quotes, numbers, True, False, None, lists, \
             dicts). Call only the tools listed; when none fits, answer in plain text.\n",
            TOOLS.write(tools)
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("{CALL_START}[")) {
            return None;
        }
        read_back(self.name(), TOOLS.read(system))
    }

    /// Every call of the answer in one list, between the markers.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        format!("{CALL_START}{}{CALL_END}", call_list(calls, QUOTE))
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format!("{RESULT_BEGIN}{result}{RESULT_END}")
    }

    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        results
            .iter()
            .map(|(n, r)| self.format_result(p, n, r))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, "<|tool_response_start|>", "<|tool_response_end|>")
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        // Text and Python blocks go to the Python reader, a block whose list opens with `{` to
        // the JSON reader.
        Box::new(FormSwitch::new(
            PyCallsScanner::new(&SYNTAX, tools.clone()),
            FramedScanner::new(&JSON_SYNTAX, tools.clone()),
            CALL_START,
            form_of,
        ))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format!(
            "{CALL_START}{}{CALL_END}",
            malformed_list(name, input, QUOTE)
        )
    }
}
