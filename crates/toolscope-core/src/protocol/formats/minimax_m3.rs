//! `minimax-m3`: MiniMax M3, whose calls are XML with every tag prefixed by the model's
//! namespace token `]<]minimax[>[`.
//!
//! ```text
//! ]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="get_weather">
//! ]<]minimax[>[<city>Paris]<]minimax[>[</city>
//! ]<]minimax[>[<days>3]<]minimax[>[</days>
//! ]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! Each argument is an element named after it; an object's keys nest as elements, an array's
//! entries are repeated `<item>` elements, and every value is typed by the schema (text stays
//! text, byte-exact). Parallel calls are more `<invoke>` elements in the one block. The
//! namespace token is format wherever it stands: the parser takes it out before anything reads
//! the text (it never reaches the answer, and a server that drops it as a special token gives
//! the same markup without it, read alike). The markup is read by the function-markup engine
//! with arguments as elements.
//!
//! The model reasons in `<mm:think>` … `</mm:think>`; a template that opens the block itself
//! makes the output start inside it (`--reasoning-open`). The template lists the tools one JSON
//! object per `<tool>` line inside `<tools>`, and gives results back in a `tool` turn, each in
//! a `<response>` element.

use serde_json::Value;

use crate::protocol::scan::markup::{BlockTag, Dialect, MarkupScanner, Opener, XML_TAGS};
use crate::protocol::spec::server::{sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// The namespace token before every tag.
const NS: &str = "]<]minimax[>[";
const TOOLS: ToolList = ToolList::plain(
    "# Tools\nYou may call one or more tools to assist with the user query.\n\
     Here are the tools available in JSONSchema format:\n\n<tools>\n",
    "</tools>",
)
.each_line_in("<tool>", "</tool>");
const RESULT: (&str, &str) = ("<response>", "</response>");

static DIALECT: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<tool_call",
        close: "</tool_call",
    }],
    function: Opener::Named("<invoke name="),
    function_close: "</invoke",
    name_sep: None,
    parameter: Opener::Element("<"),
    parameter_close: "</",
    separators: false,
    suffixed: false,
    string_attr: None,
    function_shown: "<invoke name=\"NAME\">",
    parameter_shown: "<ARGUMENT>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
    tags: &XML_TAGS,
};

/// `minimax-m3`.
pub(crate) struct MinimaxM3;

const CARD: Card = Card {
    servers: &[vllm("minimax_m3"), sglang("minimax-m3")],
    end_tokens: &[NS, "[e~["],
    markers: &[
        "]<]minimax[>[<tool_call> ]<]minimax[>[<invoke name=",
        "]<]minimax[>[<invoke name=",
        "<tool_call> <invoke name=",
    ],
    reasoning: Reasoning::between("<mm:think>", "</mm:think>"),
    results: ResultWrap::between(RESULT.0, RESULT.1),
    ..Card::new("minimax-m3", "MiniMax M3")
};

/// A value as the template writes it inside its element: objects as elements, arrays as
/// `<item>`s, text as it is, anything else as JSON; each tag after the namespace token. A null
/// is left out.
fn value_xml(v: &Value) -> String {
    match v {
        Value::Object(map) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| format!("{NS}<{k}>{}{NS}</{k}>", value_xml(v)))
            .collect(),
        Value::Array(items) => items
            .iter()
            .map(|v| format!("{NS}<item>{}{NS}</item>", value_xml(v)))
            .collect(),
        other => prompt::value_text(other),
    }
}

/// Calls as the model writes them: all in one block, a line per tag.
fn calls(list: &[(&str, &Value)]) -> String {
    let mut s = format!("{NS}<tool_call>\n");
    for (name, input) in list {
        s.push_str(&format!("{NS}<invoke name=\"{name}\">\n"));
        if let Value::Object(args) = input {
            for (k, v) in args.iter().filter(|(_, v)| !v.is_null()) {
                s.push_str(&format!("{NS}<{k}>{}{NS}</{k}>\n", value_xml(v)));
            }
        }
        s.push_str(&format!("{NS}</invoke>\n"));
    }
    s.push_str(&format!("{NS}</tool_call>"));
    s
}

impl ProtocolSpec for MinimaxM3 {
    card_methods!(CARD);

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "{}\n\n\
             To call tools, wrap all invocations in a single {NS}<tool_call>{NS}</tool_call> \
             block, each call an <invoke> element with one element per argument, named after \
             it; every tag follows the token {NS}. Parameter values containing nested objects \
             or arrays are recursively expanded into XML elements (an array's entries as \
             <item> elements). Write text as it is and numbers and booleans as JSON. \
             Example:\n{}\n\n\
             Call a tool only when it helps; otherwise answer in text. Results come back in a \
             tool turn, each in a <response> element.\n",
            TOOLS.write(tools),
            prompt::example_call(tools, |name, input| calls(&[(name, input)])),
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("{NS}<tool_call>")) {
            return None;
        }
        read_back(self.name(), TOOLS.read(system))
    }

    fn format_calls(&self, _: &Protocol, list: &[(&str, &Value)]) -> String {
        calls(list)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), &DIALECT))
    }

    /// An invoke without a name (as a server that drops the namespace token shows it).
    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        let (key, value) = prompt::first_argument(input);
        format!("<tool_call>\n<invoke name=\"\">\n<{key}>{value}</{key}>\n</invoke>\n</tool_call>")
    }
}
