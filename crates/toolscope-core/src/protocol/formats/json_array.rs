//! The JSON-array family: a marker, then one JSON array of `{"name", "arguments"}` call
//! envelopes (parallel calls are more items of it), then a close marker where the family has one,
//! read by the framed-marker engine. A member is one table entry ([`JsonArray`]) and its prompt
//! text:
//!
//! - `functools`: Phi-4-mini and FireFunction v2, the plain word `functools` before the array.
//!   `functools` is not a special token: the word is a call only when a `[` follows it (after
//!   whitespace); elsewhere it is text, and a partial `funct…` at a chunk's end is held back only
//!   until the next bytes decide. There is no closing marker: the call ends where the array
//!   ends. The tools are listed as a JSON array between `<|tool|>` and `<|/tool|>`.
//! - `nemotron`: NVIDIA Nemotron Nano v2, the array between `<TOOLCALL>` and `</TOOLCALL>`. The
//!   template lists the tools as a JSON array between `<AVAILABLE_TOOLS>` and
//!   `</AVAILABLE_TOOLS>` and gives results back between `<TOOL_RESPONSE>` and
//!   `</TOOL_RESPONSE>`. The model reasons in `<think>` … `</think>` (turned on and off with
//!   `/think` and `/no_think` in the system prompt).
//! - `granite`: IBM Granite 3.x, a `<|tool_call|>` token before the array, which ends the call.
//!   The template lists the tools as JSON under an `available_tools` role and gives results back
//!   under a `tool_response` role; Granite 3.2 and later reason in `<think>` … `</think>` when
//!   thinking is on.
//!
//! - `jamba`: AI21 Jamba 1.5–1.7, the array between `<tool_calls>` and `</tool_calls>`. The
//!   template lists the tools as JSON in a `# Tools` section of the system turn and gives results
//!   back in a `tool` turn as `<tool_output>` elements; a turn ends with `<|eom|>`.
//! - `hunyuan`: Tencent Hunyuan-A13B, the array between `<tool_calls>` and `</tool_calls>` (the
//!   same markup as jamba's: `--protocol auto` tells them apart by Hunyuan's `<answer>` around
//!   it). The model reasons in `<think>` … `</think>` and writes its answer in `<answer>` …
//!   `</answer>`, markers that are format, not text; calls inside `<think>` are reasoning. The
//!   template's assistant prefix `助手：` that a model may repeat at the start of its answer is
//!   format too (anywhere else it is text: "assistant:" in Chinese prose).
//! - `apriel`: ServiceNow Apriel 1.5 and 1.6, jamba's array between `<tool_calls>` and
//!   `</tool_calls>`, in the answer that follows `[BEGIN FINAL RESPONSE]` and ends with
//!   `[END FINAL RESPONSE]` (markers that are format, not text; `--protocol auto` tells it from
//!   jamba by `[BEGIN FINAL RESPONSE]` right before the array). The thinker models reason first,
//!   from the template's `Here are my reasoning steps:` (format where the output begins) up to
//!   `[BEGIN FINAL RESPONSE]`; the reasoning splitter cannot take that as a reasoning block (its
//!   markers begin with different bytes, and the open one is prose), so it stays answer text and
//!   the family's `<think>` default stands. A turn ends with `<|end|>`.
//!
//! ```text
//! functools[{"name": "get_weather", "arguments": {"city": "Paris"}}]
//! <TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>
//! <|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]
//! <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>
//! <answer>\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>\n</answer>
//! [BEGIN FINAL RESPONSE]\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>\n[END FINAL RESPONSE]
//! ```

use serde_json::Value;

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the family: its names, its markers and its prompt text.
pub(crate) struct JsonArray {
    /// Its names, models, end tokens and reasoning markers.
    card: Card,
    /// How the engine reads it: the marker before the array, and the one after it if any
    /// (see [`array_after`]), which the calls are also written with.
    syntax: &'static FramedSyntax,
    /// The engine leaves the open marker out of the text (else it is kept with the call).
    stripped_opener: bool,
    /// The prompt text, and the markers around its list of tools.
    prompt: fn(&ToolSet) -> String,
    tools: (&'static str, &'static str),
    /// Text a prompt must hold to be this member's, besides its list of tools.
    prompt_sign: Option<&'static str>,
    /// What the family writes around an answer's calls (Hunyuan's `<answer>`), if anything.
    answer: Option<(&'static str, &'static str)>,
}

/// The framed syntax of a member: the array after `open`, up to `close` if there is one.
const fn array_after(open: &'static str, close: Option<&'static str>) -> FramedSyntax {
    FramedSyntax {
        call_end: close,
        ..FramedSyntax::new(open, &[ArgsBegin::Array])
    }
}

impl JsonArray {
    /// A member with this card, syntax, prompt and tool list markers, as most are: its models
    /// reason in `<think>` … `</think>` (every member's do), its open marker is a special token
    /// the engine leaves out of the text, any prompt with its list of tools is its own, and it
    /// writes nothing around the calls.
    const fn member(
        card: Card,
        syntax: &'static FramedSyntax,
        prompt: fn(&ToolSet) -> String,
        tools: (&'static str, &'static str),
    ) -> JsonArray {
        JsonArray {
            card: Card {
                reasoning: Reasoning::THINK,
                ..card
            },
            syntax,
            stripped_opener: true,
            prompt,
            tools,
            prompt_sign: None,
            answer: None,
        }
    }

    /// A member whose calls are jamba's array inside an answer that the model writes between
    /// two markers: the array is told from jamba's by the answer's opener before it.
    const fn in_answer(
        card: Card,
        answer: (&'static str, &'static str),
        prompt: fn(&ToolSet) -> String,
        tools: (&'static str, &'static str),
    ) -> JsonArray {
        JsonArray {
            answer: Some(answer),
            ..JsonArray::member(card, JAMBA.syntax, prompt, tools)
        }
    }
}

/// `functools` (Phi-4-mini-reasoning thinks in `<think>` … `</think>`). Its marker is a plain
/// word, kept with the call.
pub(crate) static FUNCTOOLS: JsonArray = JsonArray {
    stripped_opener: false,
    prompt_sign: Some("functools["),
    ..JsonArray::member(
        Card {
            servers: &[vllm("phi4_mini_json"), llama_cpp("FireFunction v2")],
            end_tokens: &["<|end|>", "<|endoftext|>", "<|eot_id|>"],
            markers: &["functools ["],
            results: ResultWrap::between("<|tool_response|>", "<|/tool_response|>"),
            ..Card::new("functools", "Phi-4-mini, FireFunction v2")
        },
        &array_after("functools", None),
        functools_prompt,
        ("<|tool|>", "<|/tool|>"),
    )
};

fn functools_prompt(tools: &ToolSet) -> String {
    format!(
        "You are a helpful assistant with these tools.<|tool|>{}<|/tool|>\n\
         If you decide to call functions:\n\
         * write the word functools right before the calls; no closing marker is needed\n\
         * put every call in one JSON list: functools[{{\"name\": function name, \"arguments\": the arguments as a JSON object}}, ...]\n\
         * follow each function's JSON schema; do not invent arguments or values\n\
         * pick only the functions that match what the user wants; otherwise answer in text\n",
        prompt::json_tools(tools, false)
    )
}

/// `nemotron`. Nano v2's template ends a turn with `<SPECIAL_12>`; its tokenizer's end of
/// sequence is `</s>`.
pub(crate) static NEMOTRON: JsonArray = JsonArray::member(
    Card {
        servers: &[llama_cpp("Nemotron V2")],
        end_tokens: &["<SPECIAL_12>", "</s>"],
        markers: &["<TOOLCALL>"],
        results: NEMOTRON_RESULTS,
        ..Card::new("nemotron", "Nemotron Nano v2 (9B, 12B)")
    },
    &array_after("<TOOLCALL>", Some("</TOOLCALL>")),
    nemotron_prompt,
    (NEMOTRON_TOOLS, "</AVAILABLE_TOOLS>"),
);

const NEMOTRON_TOOLS: &str = "<AVAILABLE_TOOLS>";
/// Each result between the markers, which the prompt names.
const NEMOTRON_RESULTS: ResultWrap = ResultWrap::between("<TOOL_RESPONSE>", "</TOOL_RESPONSE>");

fn nemotron_prompt(tools: &ToolSet) -> String {
    format!(
        "You can use the tools below, given as a JSON list.\n{NEMOTRON_TOOLS}{}</AVAILABLE_TOOLS>\n\n\
         To call tools, write <TOOLCALL> followed by a JSON list of calls, each an object with the tool's \
         \"name\" and its \"arguments\", and close with </TOOLCALL>. Several calls go in the one list. \
         Results come back between {} and {}. Call a tool only when it helps; otherwise answer in text.\n",
        prompt::json_tools(tools, false),
        NEMOTRON_RESULTS.begin,
        NEMOTRON_RESULTS.end,
    )
}

const GRANITE_TOOLS: &str = "<|start_of_role|>available_tools<|end_of_role|>";

/// `granite`.
pub(crate) static GRANITE: JsonArray = JsonArray::member(
    Card {
        servers: &[vllm("granite"), llama_cpp("Granite")],
        end_tokens: &["<|end_of_text|>"],
        markers: &["<|tool_call|>"],
        results: ResultWrap::between(
            "<|start_of_role|>tool_response<|end_of_role|>",
            "<|end_of_text|>",
        ),
        ..Card::new("granite", "Granite 3.0–3.3")
    },
    &array_after("<|tool_call|>", None),
    granite_prompt,
    (GRANITE_TOOLS, "<|end_of_text|>"),
);

fn granite_prompt(tools: &ToolSet) -> String {
    format!(
        "You are a helpful assistant with access to the tools listed below. When a tool is needed to answer \
         the user, reply with <|tool_call|> followed by a JSON list of the calls, each an object with the tool's \
         \"name\" and its \"arguments\". If no listed tool can do what is asked, tell the user you cannot.\n\
         {GRANITE_TOOLS}\n{}\n<|end_of_text|>\n",
        prompt::json_tools(tools, true)
    )
}

/// `jamba` (Jamba Reasoning thinks in `<think>` … `</think>`).
pub(crate) static JAMBA: JsonArray = JsonArray::member(
    Card {
        servers: &[vllm("jamba")],
        end_tokens: &["<|eom|>"],
        markers: &["<tool_calls> ["],
        results: ResultWrap::between("<tool_output>", "</tool_output>"),
        ..Card::new("jamba", "AI21 Jamba 1.5, 1.6, 1.7")
    },
    &array_after("<tool_calls>", Some("</tool_calls>")),
    jamba_prompt,
    (JAMBA_TOOLS, "\n\n## Calling tools"),
);

const JAMBA_TOOLS: &str =
    "# Tools\n\n## Functions\n\nYou have access to the following functions:\n";

fn jamba_prompt(tools: &ToolSet) -> String {
    format!(
        "{JAMBA_TOOLS}{}\n\n## Calling tools\n\
         To call functions, write <tool_calls> followed by a JSON list of the calls, each an object with the \
         function's \"name\" and its \"arguments\", then </tool_calls>:\n\
         <tool_calls>[{{\"name\": <function name>, \"arguments\": <arguments object>}}]</tool_calls>\n\
         Several calls go in the one list. Results come back in <tool_output> elements. Call a function only \
         when it helps; otherwise answer in text.\n",
        prompt::json_tools(tools, true)
    )
}

/// `hunyuan`. A13B's tokenizer ends a turn with `<|eos|>`.
pub(crate) static HUNYUAN: JsonArray = JsonArray {
    prompt_sign: Some("<answer>"),
    ..JsonArray::in_answer(
        Card {
            aliases: &["hunyuan-a13b"],
            servers: &[vllm("hunyuan_a13b"), sglang("hunyuan")],
            end_tokens: &["<answer>", "</answer>", "<|eos|>"],
            // The answer marker before the calls tells it from jamba's same array (whose marker,
            // declared by both, goes to jamba where nothing else tells).
            markers: &["<answer> <tool_calls> [", "<tool_calls> ["],
            // The template's assistant prefix, format where the answer begins.
            lead: &["助手："],
            results: ResultWrap::between("<tool_response>", "</tool_response>"),
            ..Card::new("hunyuan", "Hunyuan-A13B")
        },
        ("<answer>", "</answer>"),
        hunyuan_prompt,
        (HUNYUAN_TOOLS, "\n\n如果你决定调用函数"),
    )
};

const HUNYUAN_TOOLS: &str = "你是一个函数调用助手。你可以使用以下函数（JSON 列表）：\n";

fn hunyuan_prompt(tools: &ToolSet) -> String {
    format!(
        "{HUNYUAN_TOOLS}{}\n\n如果你决定调用函数，先在 <think> 与 </think> 之间思考，然后在 <answer> 与 </answer> 之间，\
         用 <tool_calls> 与 </tool_calls> 包住一个 JSON 列表，每个调用是一个含 \"name\" 与 \"arguments\" 的对象：\n\
         <answer>\n<tool_calls>[{{\"name\": <函数名>, \"arguments\": <参数对象>}}]</tool_calls>\n</answer>\n\
         多个调用写在同一个列表里。函数结果在 <tool_response> 中返回。不需要函数时，直接在 <answer> 中回答。\n",
        prompt::json_tools(tools, true)
    )
}

/// `apriel`. Its calls are jamba's array; what tells it from jamba is the answer it sits in.
pub(crate) static APRIEL: JsonArray = JsonArray::in_answer(
    Card {
        servers: &[vllm("apriel")],
        // The answer's markers are format wherever they stand, as `<|end|>` is.
        end_tokens: &["[BEGIN FINAL RESPONSE]", "[END FINAL RESPONSE]", "<|end|>"],
        // The answer marker before the array tells it from jamba's.
        markers: &["[BEGIN FINAL RESPONSE] <tool_calls> [", "<tool_calls> ["],
        // The header the 1.6 template opens the turn with, and that 1.5 writes itself.
        lead: &["Here are my reasoning steps:"],
        results: ResultWrap::between("<tool_result>", "</tool_result>"),
        ..Card::new("apriel", "ServiceNow Apriel 1.5, 1.6")
    },
    APRIEL_ANSWER,
    apriel_prompt,
    (APRIEL_TOOLS, "</available_tools>"),
);

/// What Apriel writes around its answer (the model puts each on a line of its own; written
/// here without the line breaks, which would be text before the first call).
const APRIEL_ANSWER: (&str, &str) = ("[BEGIN FINAL RESPONSE]", "[END FINAL RESPONSE]");
const APRIEL_TOOLS: &str = "<available_tools>";

fn apriel_prompt(tools: &ToolSet) -> String {
    format!(
        "You may call the functions listed, as a JSON list, between the tags below.\n\
         {APRIEL_TOOLS}{}</available_tools>\n\n\
         Think through the request step by step first. Then write [BEGIN FINAL RESPONSE] on a line of its \
         own, your answer, and [END FINAL RESPONSE]. To call functions in the answer, write <tool_calls>, \
         one JSON list of the calls, each an object with the function's \"name\" and its \"arguments\", \
         and </tool_calls>:\n\
         [BEGIN FINAL RESPONSE]\n<tool_calls>[{{\"name\": <function name>, \"arguments\": <arguments object>}}]</tool_calls>\n[END FINAL RESPONSE]\n\
         Several calls go in the one list. Results come back between <tool_result> and </tool_result>. Call a \
         function only when it helps; otherwise answer in text.\n",
        prompt::json_tools(tools, true)
    )
}

impl JsonArray {
    /// The array between the markers.
    fn framed(&self, array: &str) -> String {
        let close = self.syntax.call_end.unwrap_or("");
        format!("{}{array}{close}", self.syntax.call_begin)
    }
}

impl ProtocolSpec for JsonArray {
    card_methods!();

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        (self.prompt)(tools)
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if self.prompt_sign.is_some_and(|sign| !system.contains(sign)) {
            return None;
        }
        read_back(
            self.name(),
            prompt::read_json_tools(system, self.tools.0, self.tools.1),
        )
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        let array = prompt::envelope_array(calls, "name", "arguments");
        let (before, after) = self.answer.unwrap_or(("", ""));
        format!("{before}{}{after}", self.framed(&array))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        let scanner = FramedScanner::new(self.syntax, tools.clone());
        Box::new(if self.stripped_opener {
            scanner.stripped_opener()
        } else {
            scanner
        })
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.framed(&prompt::malformed_envelope(
            name,
            input,
            "name",
            "arguments",
        ))
    }
}
