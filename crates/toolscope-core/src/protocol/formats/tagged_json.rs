//! The tagged-JSON family: one `{"name": …, "arguments": {…}}` call envelope between an open and
//! a close marker per call, consecutive blocks for parallel calls, read by the JSON-envelope
//! scanner `hermes` uses (with everything it forgives: a missing close at the end, a close or
//! tag-like text inside a string value, relaxed JSON, `arguments` as a JSON string). A member is
//! one table entry ([`TaggedJson`]) and its prompt text:
//!
//! - `longcat`: Meituan LongCat-Flash, `<longcat_tool_call>` … `</longcat_tool_call>`; results in
//!   `<longcat_tool_response>`; LongCat-Flash-Thinking reasons in `<longcat_think>` …
//!   `</longcat_think>`.
//! - `ernie`: Baidu ERNIE 4.5, `<tool_call>\n{…}\n</tool_call>`; the thinking models' template
//!   opens the reasoning itself, so the output starts inside it and shows only `</think>`; a
//!   plain answer may sit in `<response>` … `</response>`, markers that are format, not text.
//! - `internlm`: InternLM2 / 2.5 and Intern-S1, `<|action_start|><|plugin|>` before the envelope
//!   and `<|action_end|>` after it; the envelope's arguments key is `parameters` (`arguments` is
//!   read as well). The template gives the tools to a `system name=<|plugin|>` turn and the
//!   results back in an `environment name=<|plugin|>` turn. Its markers are special tokens a
//!   server may strip, so it is read by the framed-marker engine, which reads an envelope left
//!   alone at the end of the output as a call whose opener was stripped (and says so).
//!
//! ```text
//! <longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</longcat_tool_call>
//! <tool_call>
//! {"name": "get_weather", "arguments": {"city": "Paris"}}
//! </tool_call>
//! <|action_start|><|plugin|>
//! {"name": "get_weather", "parameters": {"city": "Paris"}}<|action_end|>
//! ```

use serde_json::Value;

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax, Header};
use crate::protocol::scan::json_calls::{JsonScanner, JsonScannerConfig};
use crate::protocol::spec::server::{fastdeploy, sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the family.
pub(crate) struct TaggedJson {
    /// Its names, models, end tokens and reasoning markers.
    card: Card,
    /// The markers around one call's envelope.
    open: &'static str,
    close: &'static str,
    /// What the family writes between a marker and the envelope (a newline, or nothing).
    pad_open: &'static str,
    pad_close: &'static str,
    /// The envelope's key for the arguments.
    args_key: &'static str,
    /// The prompt text, given the tool list (one JSON object a line between `tools`) and the
    /// example call.
    prompt: fn(listed: &str, example: &str) -> String,
    tools: ToolList,
    /// The markers are special tokens a server may strip (`skip_special_tokens`): read by the
    /// framed-marker engine in this syntax, which reads a call whose opener was stripped and
    /// reports it.
    special: Option<&'static FramedSyntax>,
}

/// `longcat`.
pub(crate) static LONGCAT: TaggedJson = TaggedJson {
    card: Card {
        aliases: &["longcat-flash"],
        servers: &[vllm("longcat")],
        end_tokens: &["</longcat_s>", "<longcat_s>"],
        markers: &["<longcat_tool_call>"],
        reasoning: Reasoning::between("<longcat_think>", "</longcat_think>"),
        results: ResultWrap::between("<longcat_tool_response>", "</longcat_tool_response>"),
        ..Card::new("longcat", "LongCat-Flash (Chat, Thinking)")
    },
    open: "<longcat_tool_call>",
    close: "</longcat_tool_call>",
    pad_open: "",
    pad_close: "",
    args_key: "arguments",
    prompt: longcat_prompt,
    tools: ToolList::functions("<longcat_tool_declare>\n", "</longcat_tool_declare>").one_a_line(),
    special: None,
};

fn longcat_prompt(listed: &str, example: &str) -> String {
    format!(
        "## Tools\nYou have access to the following tools:\n\n{listed}\n\n\
         ## Tool call format\nTo call a tool, write its name and arguments as one JSON object between \
         <longcat_tool_call> and </longcat_tool_call>:\n\
         <longcat_tool_call>{{\"name\": <tool name>, \"arguments\": <arguments object>}}</longcat_tool_call>\n\n\
         For example:\n{example}\n\n\
         Write one block per call; for several calls, several blocks one after another. Results come back \
         between <longcat_tool_response> and </longcat_tool_response>. Call a tool only when it helps; \
         otherwise answer in text.\n"
    )
}

/// `ernie`. ERNIE 4.5's tokenizer ends a turn with `</s>`.
pub(crate) static ERNIE: TaggedJson = TaggedJson {
    card: Card {
        aliases: &["ernie-4.5"],
        servers: &[vllm("ernie45"), fastdeploy("ernie-x1")],
        end_tokens: &["<response>", "</response>", "</s>"],
        // ERNIE writes `</think>` and then the call, with only newlines between: what tells it
        // from a hermes call (which is the same envelope in the same tags).
        // (`<tool_call> {` is hermes' too: where nothing else tells, hermes reads it the same.)
        markers: &[
            "</think> <tool_call> {",
            "</think> <response>",
            "<tool_call> {",
        ],
        reasoning: Reasoning::THINK.opened_by_template(),
        results: ResultWrap::between("<tool_output>\n", "\n</tool_output>"),
        ..Card::new("ernie", "ERNIE 4.5 (and its Thinking models)")
    },
    open: "<tool_call>",
    close: "</tool_call>",
    pad_open: "\n",
    pad_close: "\n",
    args_key: "arguments",
    prompt: ernie_prompt,
    tools: ToolList::functions(
        "You are provided with these functions, one JSON object a line:\n<tool_list>\n",
        "</tool_list>",
    )
    .one_a_line(),
    special: None,
};

fn ernie_prompt(listed: &str, example: &str) -> String {
    format!(
        "{listed}\n\n\
         To call a function, write a JSON object with its name and its arguments between <tool_call> and \
         </tool_call>, each on its own line:\n<tool_call>\n{{\"name\": <function name>, \"arguments\": <arguments object>}}\n</tool_call>\n\n\
         For example:\n{example}\n\n\
         Write one <tool_call> block per call, one after another. Each result comes back between \
         <tool_output> and </tool_output>. If no function is needed, answer the user directly.\n"
    )
}

/// `internlm`.
pub(crate) static INTERNLM: TaggedJson = TaggedJson {
    card: Card {
        aliases: &["internlm2", "intern-s1"],
        servers: &[vllm("internlm"), sglang("interns1")],
        end_tokens: &["<|im_end|>", "</s>"],
        markers: &["<|action_start|> <|plugin|>"],
        reasoning: Reasoning::THINK,
        results: ResultWrap::between("<|im_start|>environment name=<|plugin|>\n", "<|im_end|>"),
        ..Card::new("internlm", "InternLM2, InternLM2.5, Intern-S1")
    },
    open: "<|action_start|><|plugin|>",
    close: "<|action_end|>",
    pad_open: "\n",
    pad_close: "",
    args_key: "parameters",
    prompt: internlm_prompt,
    tools: ToolList::functions("<|im_start|>system name=<|plugin|>\n", "<|im_end|>").one_a_line(),
    special: Some(&INTERNLM_SYNTAX),
};

/// InternLM's tokens around one envelope. `<|plugin|>` is read as the call's header, so that
/// whitespace may stand between the two tokens (`<|action_start|> <|plugin|>`, as servers that
/// print special tokens with spaces write them), and a call without it is read too; the
/// envelope names the tool.
static INTERNLM_SYNTAX: FramedSyntax = FramedSyntax {
    header: |head| {
        matches!(head.trim(), "<|plugin|>" | "").then(|| Header {
            name: String::new(),
            id: None,
        })
    },
    call_end: Some("<|action_end|>"),
    ..FramedSyntax::new("<|action_start|>", &[ArgsBegin::Object])
};

fn internlm_prompt(listed: &str, example: &str) -> String {
    format!(
        "You have access to the plugins listed below. To use one, write <|action_start|><|plugin|>, then a \
         JSON object with the plugin's \"name\" and its \"parameters\", then <|action_end|>:\n\
         <|action_start|><|plugin|>\n{{\"name\": <plugin name>, \"parameters\": <parameters object>}}<|action_end|>\n\n\
         For example:\n{example}\n\n\
         Several calls are several such blocks one after another. Results come back from the environment. \
         Call a plugin only when it helps; otherwise answer in text.\n{listed}\n"
    )
}

impl TaggedJson {
    /// One call's envelope between the markers, its arguments' JSON as given.
    fn envelope(&self, name: &str, args: &str) -> String {
        format!(
            "{}{}{{\"name\": {}, \"{}\": {args}}}{}{}",
            self.open,
            self.pad_open,
            Value::from(name),
            self.args_key,
            self.pad_close,
            self.close
        )
    }

    fn call(&self, name: &str, input: &Value) -> String {
        self.envelope(name, &prompt::args_json(input))
    }
}

impl ProtocolSpec for TaggedJson {
    card_methods!();

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let example = prompt::example_call(tools, |name, input| self.call(name, input));
        (self.prompt)(&self.tools.write(tools), &example)
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(self.open) {
            return None;
        }
        read_back(self.name(), self.tools.read(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.call(name, input)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        if let Some(syntax) = self.special {
            return Box::new(FramedScanner::new(syntax, tools.clone()).stripped_opener());
        }
        Box::new(JsonScanner::new(
            tools.clone(),
            JsonScannerConfig {
                call_start: Some(self.open.to_string()),
                call_end: self.close.to_string(),
                loose_json: true,
                commit_loose: false,
                alt_start: None,
                bare_arrays: false,
            },
        ))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        self.envelope(name, &prompt::broken_args(input))
    }
}
