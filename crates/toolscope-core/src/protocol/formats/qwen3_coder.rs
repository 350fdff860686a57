//! `qwen3-coder`: `<tool_call>` blocks holding one or more
//! `<function=NAME><parameter=KEY>value</parameter></function>` calls.
//!
//! Values are raw text, byte-exact but for the one newline after `<parameter=KEY>` and the one
//! before `</parameter>`, typed by coercion against the schema. The format has no escaping, so a
//! value may hold the format's own markup (a file about tool calls, a template): a close tag in a
//! value is decided by what follows it and by the schema, not by the first match — `</parameter>`
//! ends the value only when a parameter of this function that is not set yet opens next, or the
//! function or block closes; qwen markup opened inside a value is value text with its own close
//! tags; CDATA is opaque. Only that undecided tail is held back while streaming.
//!
//! What Qwen models get wrong is forgiven: a missing `</parameter>` ends at the next parameter
//! or at the function's end, a missing `</function>` at `</tool_call>` or the next function, a
//! `<function=…>` without the wrapper is a call too (a stray `</tool_call>` after it is
//! consumed), a wrong close tag where `</tool_call>` belongs closes the block, and
//! `<function=name/>` is a call without arguments. Any tool name is accepted; one that is not
//! among the tools is flagged, one that cannot be a name is no call. A function whose body is
//! text goes to the argument the schema leaves no doubt about. Nothing is dropped silently:
//! markup that is not a call stays as text with an error part, and text inside a function that
//! is not a parameter is reported.

use serde_json::Value;

use crate::protocol::scan::markup::{BlockTag, Dialect, MarkupScanner, Opener};
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning, framed};
use crate::protocol::text::prompt;
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `qwen3-coder`.
pub(crate) struct Qwen3Coder;

impl ProtocolSpec for Qwen3Coder {
    fn name(&self) -> &'static str {
        "qwen3-coder"
    }

    fn families(&self) -> &'static str {
        "Qwen3-Coder, Qwen 3.5/3.6, Nemotron 3, Step 3.5"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["<|im_end|>", "<|endoftext|>"]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec!["<tool_call> <function=".into(), "<function=".into()]
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning::THINK
    }

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        framed(p, tools, prompt_section)
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format_call(name, input)
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        format_result(name, result)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), &QWEN))
    }

    /// A function without a name.
    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        format!(
            "<tool_call>\n<function=>\n<parameter={key}>\n{value}\n</parameter>\n</function>\n</tool_call>"
        )
    }
}

/// qwen3-coder's markup.
pub const QWEN: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<tool_call",
        close: "</tool_call",
    }],
    function: Opener::Named("<function="),
    function_close: "</function",
    parameter: Opener::Named("<parameter="),
    parameter_close: "</parameter",
    separators: true,
    string_attr: None,
    function_shown: "<function=NAME>",
    parameter_shown: "<parameter=…>",
};

/// A past call as qwen3-coder markup.
pub fn format_call(name: &str, input: &Value) -> String {
    format_function_call("tool_call", name, input, "\n")
}

/// A call as `<function=…>` markup in a `block` element, each value between `pad`s (a newline
/// for qwen3-coder, nothing for a family that writes none).
pub fn format_function_call(block: &str, name: &str, input: &Value, pad: &str) -> String {
    let mut s = format!("<{block}>\n<function={name}>\n");
    if let Value::Object(args) = input {
        for (k, v) in args {
            let text = prompt::value_text(v);
            s.push_str(&format!("<parameter={k}>{pad}{text}{pad}</parameter>\n"));
        }
    }
    s.push_str(&format!("</function>\n</{block}>"));
    s
}

pub fn format_result(_name: &str, result: &str) -> String {
    format!("<tool_response>\n{result}\n</tool_response>")
}

/// The format section of the system prompt.
pub fn prompt_section(example_name: &str, example: &Value) -> String {
    format!(
        "To call a tool, write a <tool_call> block with the function and one parameter element per argument:\n\
         <tool_call>\n<function=tool_name>\n<parameter=argument_name>\nvalue\n</parameter>\n</function>\n</tool_call>\n\n\
         For example:\n{}\n\n\
         Write text values as they are; write numbers, booleans, arrays and objects as JSON. Write one \
         <tool_call> block per call. Results come back in a <tool_response> block.\n",
        format_call(example_name, example)
    )
}
