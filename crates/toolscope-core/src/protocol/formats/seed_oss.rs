//! `seed-oss`: ByteDance Seed-OSS. Calls are qwen3-coder's function markup in `<seed:tool_call>`
//! blocks, reasoning is `<seed:think>` … `</seed:think>`:
//!
//! ```text
//! <seed:think>Paris, so get_weather.</seed:think>
//! <seed:tool_call>
//! <function=get_weather>
//! <parameter=city>Paris</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! The family writes each value right after `<parameter=KEY>` and closes it right after its last
//! byte, so no newline separates a value from its tags: every byte between them is the value
//! (qwen3-coder's one newline after and before is content here). Everything else is read by the
//! qwen3-coder scanner, with all it forgives and decides (close tags inside values, a missing
//! `</parameter>` or `</function>`, a function without its block). The chat template lists
//! the tools as JSON under a `Tool List:` heading (its JSON tool-definition form), shows the call
//! format, and gives results back in a `tool` turn.

use super::qwen3_coder::{FunctionMarkup, QWEN};
use crate::protocol::scan::markup::{BlockTag, Dialect};
use crate::protocol::spec::server::{llama_cpp, vllm};
use crate::protocol::spec::{Card, Protocol, Reasoning, read_back};
use crate::protocol::text::prompt::{self, ToolList};
use crate::tool::ToolSet;

const BLOCK: &str = "seed:tool_call";
const TOOLS: ToolList = ToolList::functions(
    "Tool List:\nYou are authorized to use the following tools (described in JSON Schema format). Before performing any task, you must decide how to call them based on the descriptions and parameters of these tools.\n",
    "\n\nTo call tools, follow this format:",
);
/// The token that ends a turn: the model's, and a tool turn with its result.
const EOS: &str = "<seed:eos>";
const RESULT_BEGIN: &str = "<seed:bos>tool\n";

/// `seed-oss`.
pub(crate) static SEED_OSS: FunctionMarkup = FunctionMarkup {
    card: Card {
        servers: &[vllm("seed_oss"), llama_cpp("Seed-OSS")],
        end_tokens: &[EOS],
        markers: &["<seed:tool_call> <function="],
        reasoning: Reasoning::between("<seed:think>", "</seed:think>"),
        ..Card::new("seed-oss", "ByteDance Seed-OSS 36B")
    },
    block: BLOCK,
    // Values right after their parameter tag.
    pad: "",
    dialect: &DIALECT,
    prompt: system_prompt,
    read_prompt,
    result: (RESULT_BEGIN, EOS),
    result_between: true,
};

fn system_prompt(_: &Protocol, tools: &ToolSet) -> String {
    format!(
        "{}\n\
         <{BLOCK}>\n<function=example_function_name>\n<parameter=example_parameter_1>value_1</parameter>\n\
         <parameter=example_parameter_2>This is the value for the second parameter\nthat can span\nmultiple lines</parameter>\n\
         </function>\n</{BLOCK}>\n\n\
         For example:\n{}\n\n\
         Write text values as they are; write numbers, booleans, arrays and objects as JSON. Think \
         first between <seed:think> and </seed:think> if it helps. Call a tool only when it helps; \
         otherwise answer in text. Results come back in a tool turn.\n",
        TOOLS.write(tools),
        prompt::example_call(tools, |name, input| SEED_OSS.call(name, input))
    )
}

fn read_prompt(name: &str, system: &str) -> Option<(Protocol, ToolSet)> {
    if !system.contains(&format!("<{BLOCK}>")) {
        return None;
    }
    read_back(name, TOOLS.read(system))
}

/// qwen3-coder's function markup in `<seed:tool_call>` blocks, values without separators.
const DIALECT: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<seed:tool_call",
        close: "</seed:tool_call",
    }],
    separators: false,
    variants: &[],
    colon_close: false,
    ..QWEN
};
