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

use crate::protocol::scan::markup::{BlockTag, Dialect, MarkupScanner, Opener, XML_TAGS};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, card_methods, framed, read_frame,
};
use crate::protocol::text::prompt;
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the function-markup family (`<function=NAME><parameter=KEY>…`): its names, the
/// block around its calls, what pads a value, its engine dialect, its prompt and result markers.
/// qwen3-coder and seed-oss are members; the invoke and GLM families are tables of their own.
pub(crate) struct FunctionMarkup {
    /// Its names, models, end tokens and reasoning markers.
    pub card: Card,
    /// The block element around a call, and what stands between a value and its tags.
    pub block: &'static str,
    pub pad: &'static str,
    pub dialect: &'static Dialect,
    /// The prompt text, and reading it back (given the protocol's name).
    pub prompt: fn(&Protocol, &ToolSet) -> String,
    pub read_prompt: fn(&str, &str) -> Option<(Protocol, ToolSet)>,
    /// The markers around a result; whether reading one back takes what is between them (else
    /// the common unwrapping).
    pub result: (&'static str, &'static str),
    pub result_between: bool,
}

impl FunctionMarkup {
    /// A call as the family writes it.
    pub(crate) fn call(&self, name: &str, input: &Value) -> String {
        format_function_call(self.block, name, input, self.pad)
    }
}

/// `qwen3-coder`.
pub(crate) static QWEN3_CODER: FunctionMarkup = FunctionMarkup {
    card: Card {
        servers: &[
            vllm("qwen3_coder"),
            vllm("qwen3_xml"),
            vllm("step3p5"),
            vllm("mimo"),
            sglang("qwen3_coder"),
            sglang("step3p5"),
            llama_cpp("Qwen3 Coder"),
        ],
        end_tokens: &["<|im_end|>", "<|endoftext|>"],
        markers: &["<tool_call> <function=", "<function="],
        reasoning: Reasoning::THINK,
        ..Card::new(
            "qwen3-coder",
            "Qwen3-Coder, Qwen 3.5/3.6, Nemotron 3, Step 3.5",
        )
    },
    block: "tool_call",
    pad: "\n",
    dialect: &QWEN,
    prompt: |p, tools| framed(p, tools, prompt_section),
    read_prompt: read_frame,
    result: ("<tool_response>\n", "\n</tool_response>"),
    result_between: false,
};

impl ProtocolSpec for FunctionMarkup {
    card_methods!();

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        (self.prompt)(p, tools)
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        (self.read_prompt)(self.card.name, system)
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.call(name, input)
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format!("{}{result}{}", self.result.0, self.result.1)
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        if self.result_between {
            prompt::between(text, self.result.0, self.result.1)
        } else {
            prompt::unwrap_result(text)
        }
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), self.dialect))
    }

    /// A function without a name.
    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        let (block, pad) = (self.block, self.pad);
        format!(
            "<{block}>\n<function=>\n<parameter={key}>{pad}{value}{pad}</parameter>\n</function>\n</{block}>"
        )
    }
}

/// qwen3-coder's markup, with the repairs StepFun's models need: `<function get_weather>` for
/// `<function=get_weather>`, and `<parameter=-C:` at the end of a line for `<parameter=-C>`.
pub(crate) const QWEN: Dialect = Dialect {
    variants: &[&QWEN_SPACED],
    colon_close: true,
    unwrap_cdata: false,
    tags: &XML_TAGS,
    ..QWEN_TAGS
};

/// qwen3-coder's tags as Qwen writes them.
const QWEN_TAGS: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<tool_call",
        close: "</tool_call",
    }],
    function: Opener::Named("<function="),
    function_close: "</function",
    name_sep: None,
    parameter: Opener::Named("<parameter="),
    parameter_close: "</parameter",
    separators: true,
    suffixed: false,
    string_attr: None,
    function_shown: "<function=NAME>",
    parameter_shown: "<parameter=…>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
    tags: &XML_TAGS,
};

/// `<function get_weather>`, read as `<function=get_weather>`.
const QWEN_SPACED: Dialect = Dialect {
    function: Opener::Named("<function "),
    ..QWEN_TAGS
};

/// A past call as qwen3-coder markup.
fn format_call(name: &str, input: &Value) -> String {
    QWEN3_CODER.call(name, input)
}

/// A call as `<function=…>` markup in a `block` element, each value between `pad`s (a newline
/// for qwen3-coder, nothing for a family that writes none).
fn format_function_call(block: &str, name: &str, input: &Value, pad: &str) -> String {
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

/// The format section of the system prompt.
pub(crate) fn prompt_section(example_name: &str, example: &Value) -> String {
    format!(
        "To call a tool, write a <tool_call> block with the function and one parameter element per argument:\n\
         <tool_call>\n<function=tool_name>\n<parameter=argument_name>\nvalue\n</parameter>\n</function>\n</tool_call>\n\n\
         For example:\n{}\n\n\
         Write text values as they are; write numbers, booleans, arrays and objects as JSON. Write one \
         <tool_call> block per call. Results come back in a <tool_response> block.\n",
        format_call(example_name, example)
    )
}

#[cfg(test)]
mod tests {
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&super::QWEN3_CODER);

    #[test]
    fn a_string_or_object_parameter_keeps_text_that_is_not_json_and_the_rest_coerce() {
        for (memo, bad) in [
            (
                json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
                "{rent, march",
            ),
            (json!({"type": ["string", "object"]}), "{\"month\": }"),
            (
                json!({"oneOf": [{"type": "object"}, {"type": "string"}]}),
                "{'a': [1, }",
            ),
            (
                json!({"anyOf": [{"type": "string"}, {"type": "object"}]}),
                "<b>rent</b> due",
            ),
            (json!({"type": ["string", "object"]}), "<note>march</note>"),
        ] {
            union_case(memo, bad);
        }
    }

    fn union_case(memo: serde_json::Value, bad: &str) {
        let tools = one_tool(
            "pay",
            json!({"type": "object", "properties": {
                "memo": memo,
                "amount": {"type": "integer"}
            }}),
        );
        let text = format!(
            "<tool_call>\n<function=pay>\n<parameter=memo>\n{bad}\n</parameter>\n<parameter=amount>\n42\n</parameter>\n</function>\n</tool_call>"
        );
        let read = whole(&P, &tools, &text);
        assert_eq!(
            read.calls,
            [("pay".into(), json!({"memo": bad, "amount": 42}))],
            "{text}"
        );
        let mut parser = P.stream_parser(&tools);
        let mut out = Vec::new();
        for b in text.as_bytes().chunks(1) {
            parser.push(b, &mut out);
        }
        parser.finish(&mut out);
        assert_eq!(Collapsed::of(&out), read);
        // JSON that is an object is the object.
        let text = text.replace(bad, "{\"month\": 3}");
        let c = whole(&P, &tools, &text);
        assert_eq!(
            c.calls,
            [("pay".into(), json!({"memo": {"month": 3}, "amount": 42}))]
        );
    }
}
