//! `kimi-k3`: Moonshot's Kimi K3, which writes its whole message in XTML, tags made of special
//! tokens: `<|open|>WORD attributes<|sep|>` … `<|close|>WORD<|sep|>`.
//!
//! ```text
//! <|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|><|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>
//! ```
//!
//! Calls are `call` elements in one `tools` block, each argument an `argument` element whose
//! `type` says how its value is written: `type="string"` values are raw text, byte-exact; any
//! other type is JSON (relaxed: text that is not JSON stays text, and the schema types it).
//! Parallel calls are more `call` elements in the block, numbered by their `index` attribute
//! from 1. Attribute values write `&` and `"` as `&amp;` and `&quot;`. The markup is read by the
//! function-markup engine, in XTML's tag syntax, with all it forgives and decides.
//!
//! The text of the answer sits in a `response` block; the template opens it itself when the
//! model does not think, so the output often starts with `<|close|>response<|sep|>`. Those
//! markers, and the `<|close|>message<|sep|><|end_of_msg|>` that ends the message, are format,
//! not text. Reasoning sits in a `think` block, whose opener the template writes in thinking
//! mode (`--reasoning-open` reads such an output); calls written there are reasoning. Servers
//! that print special tokens with spaces around them (`<|open|> tools <|sep|>`) are read the
//! same, everywhere.
//!
//! The template declares the tools in a system message of their own, as a JSON array of
//! OpenAI-style function objects in a fenced block under `# Tools`; a result comes back in a
//! `tool` message that names the tool and the call's index.

use serde_json::Value;

use crate::protocol::scan::markup::{
    BlockTag, Dialect, MarkupScanner, Opener, TagSyntax, ValueAttr,
};
use crate::protocol::spec::server::{sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods, read_back};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

const TOOLS_OPEN: &str = "<|open|>tools<|sep|>";
const TOOLS_CLOSE: &str = "<|close|>tools<|sep|>";
const THINK: (&str, &str) = ("<|open|>think<|sep|>", "<|close|>think<|sep|>");
/// The message that declares the tools, around their list.
const DECLARE: ToolList = ToolList::functions(
    "<|open|>message role=\"system\" type=\"tool-declare\"<|sep|># Tools\n\
            Here are the available tools, described in JSONSchema.\n\n```json\n",
    "\n```<|close|>message<|sep|><|end_of_msg|>",
);
const MESSAGE_CLOSE: &str = "<|close|>message<|sep|>";
const END_OF_MSG: &str = "<|end_of_msg|>";

/// XTML's tags: special tokens around the word, printed with spaces by some servers.
static XTML: TagSyntax = TagSyntax {
    open: "<|open|>",
    close: "<|close|>",
    end: "<|sep|>",
    spaced: true,
    escaped: true,
};

static DIALECT: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<|open|>tools",
        close: "<|close|>tools",
    }],
    function: Opener::Named("<|open|>call tool="),
    function_close: "<|close|>call",
    name_sep: None,
    parameter: Opener::Named("<|open|>argument key="),
    parameter_close: "<|close|>argument",
    separators: false,
    suffixed: false,
    string_attr: Some(ValueAttr::JsonUnless("type", "string")),
    function_shown: "<|open|>call tool=\"NAME\"<|sep|>",
    parameter_shown: "<|open|>argument key=…<|sep|>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
    tags: &XTML,
};

/// The reasoning markers as the splitter reads them: a head, then one of the spellings of
/// `think<|sep|>` (with the spaces some servers print around special tokens).
const THINK_SPELLINGS: &[&str] = &[
    "think<|sep|>",
    "think <|sep|>",
    " think<|sep|>",
    " think <|sep|>",
];

/// `kimi-k3`.
pub(crate) struct KimiK3;

const CARD: Card = Card {
    servers: &[vllm("kimi_k3"), sglang("kimi_k3")],
    end_tokens: &[
        "<|open|>response<|sep|>",
        "<|close|>response<|sep|>",
        "<|open|> response <|sep|>",
        "<|close|> response <|sep|>",
        MESSAGE_CLOSE,
        "<|close|> message <|sep|>",
        END_OF_MSG,
    ],
    markers: &["<|open|> tools <|sep|>", "<|open|> call tool="],
    reasoning: Reasoning::between(THINK.0, THINK.1),
    ..Card::new("kimi-k3", "Kimi K3")
};

/// An attribute's value as XTML writes it: `&` and `"` as entities.
fn attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;")
}

/// The `type` an argument's value is written under.
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "boolean",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// One call element, numbered `index` (from 1).
fn call(name: &str, input: &Value, index: usize) -> String {
    let mut s = format!(
        "<|open|>call tool=\"{}\" index=\"{index}\"<|sep|>",
        attr(name)
    );
    if let Value::Object(args) = input {
        for (k, v) in args {
            s.push_str(&format!(
                "<|open|>argument key=\"{}\" type=\"{}\"<|sep|>{}<|close|>argument<|sep|>",
                attr(k),
                type_of(v),
                prompt::value_text(v)
            ));
        }
    }
    s.push_str("<|close|>call<|sep|>");
    s
}

/// Calls as the model writes them: all in one `tools` block.
fn calls(calls: &[(&str, &Value)]) -> String {
    let body: String = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| call(name, input, i + 1))
        .collect();
    format!("{TOOLS_OPEN}{body}{TOOLS_CLOSE}")
}

/// A result as the template gives it back: a `tool` message naming the tool and the index of
/// the call it answers.
fn result(name: &str, index: usize, result: &str) -> String {
    format!(
        "<|open|>message role=\"tool\" tool=\"{}\" index=\"{index}\"<|sep|>{result}{MESSAGE_CLOSE}{END_OF_MSG}",
        attr(name)
    )
}

impl ProtocolSpec for KimiK3 {
    card_methods!(CARD);

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "{}\n\n\
             To call tools, write one tools block after your response, one call element per \
             call, numbered from 1, each argument in its own element:\n\
             {TOOLS_OPEN}<|open|>call tool=\"NAME\" index=\"1\"<|sep|>\
             <|open|>argument key=\"KEY\" type=\"TYPE\"<|sep|>VALUE<|close|>argument<|sep|>\
             <|close|>call<|sep|>{TOOLS_CLOSE}\n\
             With type=\"string\" the value is the text as it is, without quotes or escaping; \
             with any other type (number, boolean, array, object) it is JSON. In attributes, \
             write & as &amp; and \" as &quot;. For example:\n{}\n\n\
             Several call elements in one block are calls made together. Each result comes \
             back in a tool message with the tool's name and the call's index. Call tools only \
             when they help; otherwise answer in text.\n",
            DECLARE.write(tools),
            prompt::example_call(tools, |name, input| calls(&[(name, input)])),
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        read_back(self.name(), DECLARE.read(system))
    }

    fn format_calls(&self, _: &Protocol, list: &[(&str, &Value)]) -> String {
        calls(list)
    }

    fn format_result(&self, _: &Protocol, name: &str, text: &str) -> String {
        result(name, 1, text)
    }

    fn format_results(&self, _: &Protocol, results: &[(&str, &str)]) -> String {
        results
            .iter()
            .enumerate()
            .map(|(i, (name, text))| result(name, i + 1, text))
            .collect()
    }

    /// The text between the tool message's head and its close.
    fn read_result(&self, _: &Protocol, text: &str) -> String {
        let body = match text.find("<|sep|>") {
            Some(at) => &text[at + "<|sep|>".len()..],
            None => text,
        };
        let body = body.strip_suffix(END_OF_MSG).unwrap_or(body);
        body.strip_suffix(MESSAGE_CLOSE).unwrap_or(body).to_string()
    }

    fn reasoning_spellings(&self) -> Option<(&'static str, &'static str, &'static [&'static str])> {
        Some(("<|open|>", "<|close|>", THINK_SPELLINGS))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), &DIALECT))
    }

    /// A call without a tool's name.
    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        let (key, value) = prompt::first_argument(input);
        format!(
            "{TOOLS_OPEN}<|open|>call tool=\"\" index=\"1\"<|sep|><|open|>argument key=\"{}\" \
             type=\"string\"<|sep|>{value}<|close|>argument<|sep|><|close|>call<|sep|>{TOOLS_CLOSE}",
            attr(&key)
        )
    }
}
