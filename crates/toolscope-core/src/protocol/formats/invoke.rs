//! The invoke family of the markup engine: calls are `<invoke name=…>` elements (in one block,
//! or framed, or alone), each argument a `<parameter name=…>` element holding its value as raw
//! text, the tags optionally prefixed (DeepSeek's `｜DSML｜`, Step's `steptml:`). A member is one table entry ([`Invoke`]: its
//! names, tags, tool list and result markers, the engine's [`Dialect`]) and its prompt text.
//!
//! - `deepseek-dsml`: DeepSeek V3.2 and V4, whose calls are DSML markup — `<｜DSML｜invoke>`
//!   elements in a `<｜DSML｜function_calls>` block (V4: `<｜DSML｜tool_calls>`), each argument a
//!   `<｜DSML｜parameter>` element that says whether its value is text or JSON:
//!
//!   ```text
//!   <｜DSML｜function_calls>
//!   <｜DSML｜invoke name="get_weather">
//!   <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
//!   <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//!   </｜DSML｜invoke>
//!   </｜DSML｜function_calls>
//!   ```
//!
//!   (`｜` is U+FF5C.) A `string="true"` value is raw text, byte-exact, typed by the schema; a
//!   `string="false"` value is JSON (relaxed; text that is not JSON stays text and the schema
//!   types it). The markup is read by the function-markup scanner qwen3-coder uses, with all it
//!   forgives and decides (close tags inside values, a missing close tag, an invoke without its
//!   block). The model reasons in `<think>` … `</think>`; in thinking mode the template opens the
//!   block itself (`--reasoning-open`). The template lists the tools as JSON inside `<functions>`
//!   after the call format, and gives results back in `<function_results>`, one `<result>` each.
//!
//!   DeepSeek V4.1 writes the same markup with a space after `｜DSML｜` (`<｜DSML｜ calls>`,
//!   `<｜DSML｜ invoke name="f">`, `</｜DSML｜ parameter>`), and outputs in the wild spell the
//!   prefix in ASCII (`<|DSML|invoke`): both are read as DSML (the engine's dialect variants).
//!
//! - `gigachat`: GigaChat 3.5 writes GCML, DSML's markup under the prefix `｜GCML｜` in a
//!   `<｜GCML｜tool_calls>` block. The earlier models' calls are read by the same protocol:
//!   GigaChat 3's `function call<|role_sep|>` (after `<|message_sep|>`, which ends a message and
//!   is format) and GigaChat 3.1's `<|function_call|>`, each followed by one
//!   `{"name": …, "arguments": …}` object. They are branches of one protocol rather than
//!   protocols of their own because a user who runs "GigaChat" cannot be asked which generation
//!   writes which markers, and the markers cannot be confused with each other or with text.
//!
//! - `step3`: Step-3's calls are steptml markup framed by special tokens:
//!   `<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="f">
//!   <steptml:parameter name="k">v</steptml:parameter></steptml:invoke><｜tool_call_end｜>
//!   <｜tool_calls_end｜>` (no `▁`). The frame of each call belongs to the block; an invoke
//!   without parameters is a call without arguments. Values are typed by the schema.
//!
//! - `dots`: rednote dots writes `<invoke>` markup in a `<dots_function_call>` block, or one
//!   `{"name": …, "arguments": …}` object in the same block (read by the JSON engine, chosen by
//!   the first byte after the block's tag).
//!
//! - `minicpm5`: MiniCPM 5 writes `<function name="f"><param name="k">v</param></function>`,
//!   one element per call and no block; values may be CDATA; the collapsed
//!   `<functionname="f">` that the model sometimes writes is read as `<function name="f">`. Its
//!   template opens the reasoning block, so the output shows only `</think>`.
//!
//! - `minimax-m2`: MiniMax M2 and M2.5. Calls are `<invoke>` elements in a `<minimax:tool_call>`
//!   block, each argument a `<parameter name=…>` element holding its value as raw text:
//!
//!   ```text
//!   <think>Paris, so get_weather.</think>
//!   <minimax:tool_call>
//!   <invoke name="get_weather">
//!   <parameter name="city">Paris</parameter>
//!   <parameter name="days">3</parameter>
//!   </invoke>
//!   </minimax:tool_call>
//!   ```
//!
//!   The template opens `<think>` itself, so the output starts inside reasoning and shows only
//!   `</think>` (`--reasoning-open false` reads an output that does not). Values follow their tag
//!   at once and are typed by the schema (the template writes text as it is and anything else as
//!   JSON); every byte between the tags is the value. The markup is read by the function-markup
//!   scanner qwen3-coder uses, with all it forgives and decides (close tags inside values, a
//!   missing `</parameter>` or `</invoke>`, an `<invoke>` without its block). The template lists
//!   the tools one JSON object per `<tool>` line inside `<tools>` and gives results back in a
//!   `tool` turn, each in a `<response>` element.

use serde_json::Value;

use super::deepseek_v3::deepseek_card;
use crate::protocol::scan::forked::{Branch, Forked, always};
use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::scan::json_calls::{JsonScanner, JsonScannerConfig};
use crate::protocol::scan::markup::{
    BlockTag, Dialect, MarkupScanner, Opener, ValueAttr, XML_TAGS,
};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods, read_back};
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the family.
pub(crate) struct Invoke {
    /// Its names, models, end tokens and reasoning markers.
    card: Card,
    /// The tags around all calls of one answer (none: each call stands alone), and around
    /// each call inside them (Step-3's frame).
    block: (&'static str, &'static str),
    frame: (&'static str, &'static str),
    /// What every element's name starts with (`｜DSML｜`), and the names of the call's and the
    /// argument's elements (`invoke`, `parameter`).
    prefix: &'static str,
    elements: (&'static str, &'static str),
    /// Each parameter says whether its value is text (`string="true"`) or JSON.
    string_attr: bool,
    dialect: &'static Dialect,
    /// The engines that read the family's other call forms, beside the markup (GigaChat's JSON
    /// calls), each opened by its marker.
    branches: fn(&ToolSet) -> Vec<Branch>,
    /// The prompt text, and its list of tools (one a line).
    prompt: fn(&ToolSet) -> String,
    tools: ToolList,
    /// The markers around one result, and around the results of one turn (if the family
    /// groups them).
    result: (&'static str, &'static str),
    results: Option<(&'static str, &'static str)>,
}

fn no_branches(_: &ToolSet) -> Vec<Branch> {
    Vec::new()
}

/// `<invoke name=…>` elements with `<parameter name=…>` arguments in XML tags, values raw text,
/// no block: what each member's dialect changes.
const INVOKE_TAGS: Dialect = Dialect {
    blocks: &[],
    function: Opener::Named("<invoke name="),
    function_close: "</invoke",
    name_sep: None,
    parameter: Opener::Named("<parameter name="),
    parameter_close: "</parameter",
    separators: false,
    suffixed: false,
    string_attr: None,
    function_shown: "<invoke name=\"NAME\">",
    parameter_shown: "<parameter name=…>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
    tags: &XML_TAGS,
};

/// DSML's markup under the prefix `$p` (`｜DSML｜`, GigaChat's `｜GCML｜`), with the block
/// elements `$block` and the dialect variants `$variants`.
macro_rules! dsml {
    ($p:literal, [$($block:literal),*], $variants:expr) => {
        Dialect {
            blocks: &[$(BlockTag {
                open: concat!("<", $p, $block),
                close: concat!("</", $p, $block),
            }),*],
            function: Opener::Named(concat!("<", $p, "invoke name=")),
            function_close: concat!("</", $p, "invoke"),
            parameter: Opener::Named(concat!("<", $p, "parameter name=")),
            parameter_close: concat!("</", $p, "parameter"),
            string_attr: Some(ValueAttr::FalseIsJson("string")),
            function_shown: concat!("<", $p, "invoke name=\"NAME\">"),
            parameter_shown: concat!("<", $p, "parameter name=…>"),
            variants: $variants,
            ..INVOKE_TAGS
        }
    };
}

/// DeepSeek V4.1's spaced DSML, and the ASCII spellings.
const DSML_SPACED: Dialect = dsml!("｜DSML｜ ", ["calls", "tool_calls", "function_calls"], &[]);
const DSML_ASCII: Dialect = dsml!("|DSML|", ["function_calls", "tool_calls", "calls"], &[]);
const DSML_ASCII_SPACED: Dialect = dsml!("|DSML| ", ["calls", "tool_calls", "function_calls"], &[]);

const DSML_TOOLS: ToolList = ToolList::plain(
    "Here are the functions available in JSONSchema format:\n<functions>\n",
    "</functions>",
)
.one_a_line();

/// DeepSeek DSML: GigaChat takes what its entry does not say from it.
const DSML: Invoke = Invoke {
    card: Card {
        aliases: &["deepseek-v3.2", "deepseek-v4", "deepseek-v4.1"],
        markers: &[
            "<｜DSML｜function_calls>",
            "<｜DSML｜tool_calls>",
            "<｜DSML｜invoke name=",
            "<｜DSML｜ calls>",
            "<｜DSML｜ invoke name=",
            "<|DSML|function_calls>",
            "<|DSML|tool_calls>",
            "<|DSML|invoke name=",
            "<|DSML| calls>",
            "<|DSML| invoke name=",
        ],
        ..deepseek_card(
            "deepseek-dsml",
            "DeepSeek V3.2, V4, V4.1",
            &[
                vllm("deepseek_v32"),
                vllm("deepseek_v4"),
                vllm("deepseek_v41"),
                sglang("deepseekv32"),
                sglang("deepseekv4"),
            ],
        )
    },
    block: ("<｜DSML｜function_calls>", "</｜DSML｜function_calls>"),
    prefix: "｜DSML｜",
    string_attr: true,
    dialect: &dsml!(
        "｜DSML｜",
        ["function_calls", "tool_calls"],
        &[&DSML_SPACED, &DSML_ASCII, &DSML_ASCII_SPACED]
    ),
    prompt: dsml_prompt,
    tools: DSML_TOOLS,
    result: ("<result>", "</result>"),
    results: Some(("<function_results>", "</function_results>")),
    ..MINIMAX
};

/// `deepseek-dsml`.
pub(crate) static DEEPSEEK_DSML: Invoke = DSML;

/// The prompt of DSML's structure under its prefix (DeepSeek's, GigaChat's).
fn dsml_style_prompt(member: &Invoke, tools: &ToolSet) -> String {
    let (open, close) = member.block;
    let p = member.prefix;
    format!(
        "## Tools\n\n\
         You have access to a set of tools you can use to answer the user's question.\n\
         You can invoke functions by writing a \"{open}\" block like the following as part of your reply:\n\
         {open}\n<{p}invoke name=\"$FUNCTION_NAME\">\n\
         <{p}parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</{p}parameter>\n...\n\
         </{p}invoke>\n{close}\n\n\
         Write string values as they are, without quotes or escaping, with string=\"true\"; write \
         numbers, booleans, arrays and objects as JSON, with string=\"false\". Several invokes in one \
         block are calls made together. For example:\n{}\n\n\
         Results come back in {}, one {} per call.\n\n\
         {}\n",
        prompt::example_call(tools, |name, input| member.invokes(&[(name, input)])),
        member.results.map_or("", |r| r.0),
        member.result.0,
        member.tools.write(tools),
    )
}

fn dsml_prompt(tools: &ToolSet) -> String {
    dsml_style_prompt(&DEEPSEEK_DSML, tools)
}

/// The markers of GigaChat 3's and 3.1's calls, which `--protocol auto` knows them by too.
const GIGACHAT3_CALL: &str = "function call<|role_sep|>";
const GIGACHAT31_CALL: &str = "<|function_call|>";

/// GigaChat 3's and 3.1's calls: a marker, then one JSON call envelope.
static GIGACHAT3: FramedSyntax = FramedSyntax::new(GIGACHAT3_CALL, &[ArgsBegin::Object]);
static GIGACHAT31: FramedSyntax = FramedSyntax {
    call_begin: GIGACHAT31_CALL,
    ..GIGACHAT3
};

fn gigachat_branches(tools: &ToolSet) -> Vec<Branch> {
    [&GIGACHAT3, &GIGACHAT31]
        .into_iter()
        .map(|syntax| Branch {
            marker: syntax.call_begin,
            takes: always,
            scanner: Box::new(FramedScanner::new(syntax, tools.clone())),
        })
        .collect()
}

/// `gigachat`.
pub(crate) static GIGACHAT: Invoke = Invoke {
    card: Card {
        aliases: &["gigachat3", "gigachat3.5"],
        servers: &[vllm("gigachat3")],
        // (GigaChat 3's separator is one token with the two newlines after it.)
        end_tokens: &["</s>", "<|message_sep|>", "<|message_sep|>\n\n"],
        markers: &[
            "<｜GCML｜tool_calls>",
            "<｜GCML｜invoke name=",
            GIGACHAT31_CALL,
            GIGACHAT3_CALL,
        ],
        ..Card::new("gigachat", "GigaChat 3, 3.1, 3.5")
    },
    block: ("<｜GCML｜tool_calls>", "</｜GCML｜tool_calls>"),
    frame: ("", ""),
    prefix: "｜GCML｜",
    elements: ("invoke", "parameter"),
    dialect: &dsml!("｜GCML｜", ["tool_calls", "function_calls"], &[]),
    branches: gigachat_branches,
    prompt: |tools| dsml_style_prompt(&GIGACHAT, tools),
    ..DSML
};

/// `step3`.
pub(crate) static STEP3: Invoke = Invoke {
    card: Card {
        servers: &[vllm("step3"), sglang("step3")],
        markers: &[
            "<｜tool_calls_begin｜> <｜tool_call_begin｜>function<｜tool_sep｜>",
            "<steptml:invoke name=",
        ],
        reasoning: Reasoning::THINK,
        ..Card::new("step3", "Step-3")
    },
    block: ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
    frame: (
        "<｜tool_call_begin｜>function<｜tool_sep｜>",
        "<｜tool_call_end｜>",
    ),
    prefix: "steptml:",
    dialect: &Dialect {
        blocks: &[
            BlockTag {
                open: "<｜tool_calls_begin｜",
                close: "<｜tool_calls_end｜",
            },
            // A call framed without its block.
            BlockTag {
                open: "<｜tool_call_begin｜",
                close: "<｜tool_calls_end｜",
            },
        ],
        function: Opener::Named("<steptml:invoke name="),
        function_close: "</steptml:invoke",
        parameter: Opener::Named("<steptml:parameter name="),
        parameter_close: "</steptml:parameter",
        function_shown: "<steptml:invoke name=\"NAME\">",
        parameter_shown: "<steptml:parameter name=…>",
        frames: &[
            "<｜tool_call_begin｜>",
            "function<｜tool_sep｜>",
            "<｜tool_call_end｜>",
            // Between two calls, seen in the wild.
            "<｜tool_sep｜>",
        ],
        ..INVOKE_TAGS
    },
    prompt: step3_prompt,
    tools: ToolList::plain(
        "# Tools\n\nYou have the following tools:\n<tools>\n",
        "</tools>",
    )
    .one_a_line(),
    result: ("<｜tool_output_begin｜>", "<｜tool_output_end｜>"),
    results: Some(("<｜tool_outputs_begin｜>", "<｜tool_outputs_end｜>")),
    ..MINIMAX
};

fn step3_prompt(tools: &ToolSet) -> String {
    format!(
        "{}\n\n\
         To call tools, write them in one block, each call framed and written as steptml markup:\n\
         <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=\"tool_name\">\
         <steptml:parameter name=\"argument\">value</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>\n\n\
         For example:\n{}\n\n\
         Write text values as they are and numbers, booleans, arrays and objects as JSON. Several \
         framed calls in one block are calls made together.\n",
        STEP3.tools.write(tools),
        prompt::example_call(tools, |name, input| STEP3.invokes(&[(name, input)]))
    )
}

/// dots' JSON form: one call envelope in the block.
fn dots_branches(tools: &ToolSet) -> Vec<Branch> {
    vec![Branch {
        marker: "<dots_function_call>",
        takes: |text, at_end| {
            let rest = text["<dots_function_call>".len()..].trim_start();
            match rest.bytes().next() {
                Some(b) => Some(b == b'{'),
                None if at_end => Some(false),
                None => None,
            }
        },
        scanner: Box::new(JsonScanner::new(
            tools.clone(),
            JsonScannerConfig {
                call_start: Some("<dots_function_call>".into()),
                call_end: "</dots_function_call>".into(),
                loose_json: false,
                commit_loose: false,
                alt_start: None,
                bare_arrays: false,
            },
        )),
    }]
}

/// `dots`.
pub(crate) static DOTS: Invoke = Invoke {
    card: Card {
        servers: &[vllm("dots"), sglang("dots")],
        end_tokens: &["<|endofresponse|>", "<|im_end|>"],
        markers: &["<dots_function_call>"],
        reasoning: Reasoning::THINK,
        ..Card::new("dots", "rednote dots.llm")
    },
    block: ("<dots_function_call>", "</dots_function_call>"),
    dialect: &Dialect {
        blocks: &[BlockTag {
            open: "<dots_function_call",
            close: "</dots_function_call",
        }],
        string_attr: Some(ValueAttr::FalseIsJson("string")),
        ..INVOKE_TAGS
    },
    branches: dots_branches,
    prompt: dots_prompt,
    ..MINIMAX
};

fn dots_prompt(tools: &ToolSet) -> String {
    format!(
        "{}\n\n\
         To call tools, write a <dots_function_call> block:\n\
         <dots_function_call>\n<invoke name=\"tool_name\">\n<parameter name=\"argument\">value</parameter>\n</invoke>\n</dots_function_call>\n\n\
         For example:\n{}\n\n\
         Write text values as they are and numbers, booleans, arrays and objects as JSON. Several \
         <invoke> elements in one block are calls made together. Results come back in a tool turn, \
         each in a <response> element.\n",
        MINIMAX_TOOLS.write(tools),
        prompt::example_call(tools, |name, input| DOTS.invokes(&[(name, input)]))
    )
}

/// `<function name=…>` and the collapsed `<functionname=…>`.
const MINICPM_TAGS: Dialect = Dialect {
    function: Opener::Named("<function name="),
    function_close: "</function",
    parameter: Opener::Named("<param name="),
    parameter_close: "</param",
    function_shown: "<function name=\"NAME\">",
    parameter_shown: "<param name=…>",
    unwrap_cdata: true,
    ..INVOKE_TAGS
};
const MINICPM_COLLAPSED: Dialect = Dialect {
    function: Opener::Named("<functionname="),
    ..MINICPM_TAGS
};

/// `minicpm5`.
pub(crate) static MINICPM5: Invoke = Invoke {
    card: Card {
        servers: &[vllm("minicpm5")],
        end_tokens: &["<|im_end|>", "<|endoftext|>"],
        markers: &["<function name=", "<functionname="],
        reasoning: Reasoning::THINK.opened_by_template(),
        ..Card::new("minicpm5", "MiniCPM 5")
    },
    block: ("", ""),
    elements: ("function", "param"),
    dialect: &Dialect {
        variants: &[&MINICPM_COLLAPSED],
        ..MINICPM_TAGS
    },
    prompt: minicpm_prompt,
    tools: ToolList::plain(
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n<tools>\n",
        "</tools>",
    )
    .one_a_line(),
    result: ("<tool_response>", "</tool_response>"),
    ..MINIMAX
};

fn minicpm_prompt(tools: &ToolSet) -> String {
    format!(
        "{}\n\n\
         To call a function, write one <function> element per call:\n\
         <function name=\"tool_name\"><param name=\"argument\">value</param></function>\n\n\
         For example:\n{}\n\n\
         Write text values as they are (a value with markup in it inside <![CDATA[ … ]]>) and \
         numbers, booleans, arrays and objects as JSON. Results come back in <tool_response>.\n",
        MINICPM5.tools.write(tools),
        prompt::example_call(tools, |name, input| MINICPM5.invokes(&[(name, input)]))
    )
}

const MINIMAX_TOOLS: ToolList = ToolList::plain(
    "# Tools\nYou may call one or more tools to assist with the user query.\nHere are the tools available in JSONSchema format:\n\n<tools>\n",
    "</tools>",
)
.each_line_in("<tool>", "</tool>");

/// MiniMax M2: the other members take what their entry does not say from it.
const MINIMAX: Invoke = Invoke {
    card: Card {
        servers: &[
            vllm("minimax_m2"),
            sglang("minimax-m2"),
            llama_cpp("MiniMax-M2"),
        ],
        end_tokens: &["[e~["],
        markers: &["<minimax:tool_call> <invoke name=", "<invoke name="],
        reasoning: Reasoning::THINK.opened_by_template(),
        ..Card::new("minimax-m2", "MiniMax M2, M2.1, M2.5")
    },
    block: ("<minimax:tool_call>", "</minimax:tool_call>"),
    frame: ("", ""),
    prefix: "",
    elements: ("invoke", "parameter"),
    string_attr: false,
    dialect: &Dialect {
        blocks: &[BlockTag {
            open: "<minimax:tool_call",
            close: "</minimax:tool_call",
        }],
        ..INVOKE_TAGS
    },
    branches: no_branches,
    prompt: minimax_prompt,
    tools: MINIMAX_TOOLS,
    result: ("<response>", "</response>"),
    results: None,
};

/// `minimax-m2`.
pub(crate) static MINIMAX_M2: Invoke = MINIMAX;

fn minimax_prompt(tools: &ToolSet) -> String {
    let (open, close) = MINIMAX_M2.block;
    format!(
        "{}\n\n\
         When making tool calls, use XML format to invoke tools and pass parameters:\n\n\
         {open}\n<invoke name=\"tool-name-1\">\n<parameter name=\"param-key-1\">param-value-1</parameter>\n\
         <parameter name=\"param-key-2\">param-value-2</parameter>\n...\n</invoke>\n{close}\n\n\
         For example:\n{}\n\n\
         Write text values as they are and numbers, booleans, arrays and objects as JSON. Several \
         <invoke> elements in one block are calls made together. Call a tool only when it helps; \
         otherwise answer in text. Results come back in a tool turn, each in a <response> element.\n",
        MINIMAX_TOOLS.write(tools),
        prompt::example_call(tools, |name, input| MINIMAX_M2.invokes(&[(name, input)]))
    )
}

impl Invoke {
    /// Calls as the family writes them: every invoke in one block (each in its frame), or
    /// each alone.
    fn invokes(&self, calls: &[(&str, &Value)]) -> String {
        let (p, (inv, par)) = (self.prefix, self.elements);
        let (open, close) = self.block;
        let mut s = String::new();
        if !open.is_empty() {
            s.push_str(open);
            s.push('\n');
        }
        for (name, input) in calls {
            s.push_str(self.frame.0);
            s.push_str(&format!("<{p}{inv} name=\"{name}\">\n"));
            if let Value::Object(args) = input {
                for (k, v) in args {
                    let (mut text, is_string) = (prompt::value_text(v), v.is_string());
                    if self.dialect.unwrap_cdata && text.contains(['<', '&']) {
                        // Markup in a value goes in CDATA, which the reader unwraps.
                        text = format!("<![CDATA[{}]]>", text.replace("]]>", "]]]]><![CDATA[>"));
                    }
                    let attr = if self.string_attr {
                        format!(" string=\"{is_string}\"")
                    } else {
                        String::new()
                    };
                    s.push_str(&format!("<{p}{par} name=\"{k}\"{attr}>{text}</{p}{par}>\n"));
                }
            }
            s.push_str(&format!("</{p}{inv}>{}\n", self.frame.1));
        }
        if close.is_empty() {
            s.pop();
        } else {
            s.push_str(close);
        }
        s
    }

    fn one_result(&self, result: &str) -> String {
        format!("{}{result}{}", self.result.0, self.result.1)
    }

    /// What only this family's prompt has: its block, or its call element.
    fn prompt_key(&self) -> String {
        match self.block.0 {
            "" => format!("<{}{} name=", self.prefix, self.elements.0),
            open => open.to_string(),
        }
    }
}

impl ProtocolSpec for Invoke {
    card_methods!();

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        (self.prompt)(tools)
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&self.prompt_key()) {
            return None;
        }
        read_back(self.name(), self.tools.read(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.invokes(&[(name, input)])
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        self.invokes(calls)
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        match self.results {
            Some((begin, end)) => format!("{begin}\n{}\n{end}", self.one_result(result)),
            None => self.one_result(result),
        }
    }

    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        match self.results {
            Some((begin, end)) => {
                let each: String = results
                    .iter()
                    .map(|(_, r)| self.one_result(r) + "\n")
                    .collect();
                format!("{begin}\n{each}{end}")
            }
            None => results
                .iter()
                .map(|(name, result)| self.format_result(p, name, result))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, self.result.0, self.result.1)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        let markup = MarkupScanner::new(tools.clone(), self.dialect);
        let branches = (self.branches)(tools);
        if branches.is_empty() {
            Box::new(markup)
        } else {
            Box::new(Forked::new(Box::new(markup), branches))
        }
    }

    /// An invoke without a name.
    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        let (p, (inv, par)) = (self.prefix, self.elements);
        let attr = if self.string_attr {
            " string=\"true\""
        } else {
            ""
        };
        let (open, close) = self.block;
        let (fo, fc) = self.frame;
        let nl = |s: &str| {
            if s.is_empty() {
                String::new()
            } else {
                format!("{s}\n")
            }
        };
        format!(
            "{}{fo}<{p}{inv} name=\"\">\n<{p}{par} name=\"{key}\"{attr}>{value}</{p}{par}>\n</{p}{inv}>{fc}{}",
            nl(open),
            if close.is_empty() {
                String::new()
            } else {
                format!("\n{close}")
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::tests_support::every_split;
    use crate::protocol::tests_support::prelude::*;
    /// Each prompt lists the tools in its template's markup; the results read back.
    #[test]
    fn the_prompts_list_the_tools() {
        for (name, listed) in [
            ("deepseek-dsml", "<functions>\n{\"name\":\"get_weather\""),
            ("minimax-m2", "<tool>{\"name\":\"get_weather\""),
        ] {
            let prompt = named(name).system_prompt(&tools());
            assert!(prompt.contains(listed), "{name}: {prompt}");
        }
        let dsml = named("deepseek-dsml");
        assert_eq!(
            dsml.format_results(&[("a", "1"), ("b", "2")]),
            "<function_results>\n<result>1</result>\n<result>2</result>\n</function_results>"
        );
        assert_eq!(named("deepseek-v3.2"), dsml);
    }

    /// Parallel calls are invokes of one block.
    /// A block of many calls lets go of each call's markup once it is a call: what comes after
    /// (here the newline after the last call and an invoke the output ends inside) is still kept
    /// as text exactly, its span too.
    #[test]
    fn markup_after_the_calls_of_a_block_is_kept_exactly() {
        let p = named("minimax-m2");
        let call = |city: &str| {
            format!(
                "<invoke name=\"get_weather\">\n<parameter name=\"city\">{city}</parameter>\n</invoke>\n"
            )
        };
        let cut = "<invoke name=\"get_weather\">\n<parameter name=\"city\">Ber";
        let text = format!(
            "<minimax:tool_call>\n{}{}{cut}",
            call("Paris"),
            call("Oslo")
        );
        every_split(&p, &text)
            .calls(&[
                ("get_weather".into(), json!({"city": "Paris"})),
                ("get_weather".into(), json!({"city": "Oslo"})),
            ])
            .text(format!("\n{cut}"))
            .errors(&["unfinished-tool-call"]);
        let spans = spans(&p, &text);
        let kept = &text[text.len() - cut.len() - 1..];
        assert_eq!(
            spans.last(),
            Some(&(SpanKind::Malformed, kept)),
            "{spans:?}"
        );
    }

    #[test]
    fn parallel_calls_are_one_block() {
        let calls = [
            ("get_weather", &json!({"city": "Paris"})),
            ("search", &json!({"query": "rain"})),
        ];
        for (name, block) in [
            ("minimax-m2", "<minimax:tool_call>"),
            ("gigachat", "<｜GCML｜tool_calls>"),
        ] {
            let text = named(name).format_calls(&calls);
            assert_eq!(text.matches(block).count(), 1, "{name}: {text}");
        }
    }
}
