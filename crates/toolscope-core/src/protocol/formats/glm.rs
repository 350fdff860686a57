//! The arg-key family of the markup engine, one table entry per member ([`Glm`]): `glm-4.5` (GLM
//! 4.5 and 4.6, and the models that adopted its markup), `glm-4.7` (GLM 4.7 and GLM 5), `hy-v3`
//! (Tencent HY3) and `solar-open` (Upstage Solar Open 2). A call holds the function's name as
//! text after its opening marker, then each argument as a key element and a value element:
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Paris</arg_value>
//! <arg_key>days</arg_key>
//! <arg_value>3</arg_value>
//! </tool_call>
//! ```
//!
//! Values follow the value's open marker at once: every byte up to its close is the value, typed
//! by the schema (the templates write text as it is and anything else as JSON). GLM 4.7 writes
//! the same markup without the newlines; HY3 puts its calls in one `<tool_calls>` block and ends
//! the name with `<tool_sep>`; Solar Open writes special tokens
//! (`<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Paris<|tool_arg:end|>\n<|tool_call:end|>`).
//! Each member's [`Dialect`] tells the function-markup scanner qwen3-coder uses its markers, so
//! each reads with all it forgives and decides (close tags inside values decided by what
//! follows, a missing value close or call close); the `<tool_call>` members read each other's
//! output. A member's [`Marks`] are how it writes a call, its prompt and its results.
//!
//! GLM's template lists the tools one JSON object per line in `<tools>` and gives each result
//! back in a `<tool_response>` element of an observation turn; the other members' prompts
//! follow their own templates' wording around the same list.
//!
//! `glm-flash` (GLM-5.3-Flash) writes the arguments as one JSON object after the name and a `>`,
//! the close optional: `<tool_call>get_weather>{"city": "Paris"}</tool_call>`; it may also write
//! the 4.7 markup. A block whose name is followed by `>` is read by the framed-marker engine, any
//! other by the markup engine (see `scan/forms.rs`).

use serde_json::Value;

use crate::protocol::scan::forked::{Branch, Forked};
use crate::protocol::scan::forms::{Form, FormSwitch};
use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax, Header, valid_name};
use crate::protocol::scan::json_calls::{JsonScanner, JsonScannerConfig};
use crate::protocol::scan::markup::{
    BlockTag, Dialect, MarkupScanner, Opener, ValueAttr, XML_TAGS,
};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// How a member writes a call: its markers, in the order they appear.
pub(crate) struct Marks {
    /// The block around a turn's calls (`<tool_calls>`, `</tool_calls>`); empty where each call
    /// stands alone.
    block: (&'static str, &'static str),
    /// What opens a call, before the name.
    call: &'static str,
    /// What follows the name (HY3's `<tool_sep>`), then the separator after it.
    name_end: &'static str,
    after_name: &'static str,
    /// The key element's markers, and the value element's.
    key: (&'static str, &'static str),
    value: (&'static str, &'static str),
    /// Between the key and the value, and after each value.
    sep: &'static str,
    /// What closes a call.
    call_end: &'static str,
    /// Between two calls of one turn.
    join: &'static str,
    /// Around a tool result.
    result: (&'static str, &'static str),
    /// Around the tool list in the prompt (its heading included), and a result's name for the
    /// prompt's wording (`<tool_response>`).
    tools: ToolList,
}

/// One member of the family: its names, how it writes its calls, how the scanner reads them.
pub(crate) struct Glm {
    /// Its names, models, end tokens and reasoning markers.
    card: Card,
    marks: Marks,
    dialect: &'static Dialect,
    /// What `--protocol auto` allows between a call's opening (the name in it) and what follows
    /// it (`\n ` where the member writes a newline: a space stands for any run of whitespace).
    gap: &'static str,
    /// Where the reasoning markers are stems ended several ways (K2 Horizon's by effort), the
    /// endings, the one written first; empty where they are whole.
    endings: &'static [&'static str],
    /// The member writes JSON arguments after `NAME>` (and reads both forms).
    json_args: bool,
    /// The member writes every value as JSON (text quoted); read relaxed, text that is not JSON
    /// staying text.
    json_values: bool,
    /// The member also writes its calls as one JSON list of `{"name", "parameters"}` objects
    /// (or one such object), when the request forces a call: read as its calls.
    json_list: bool,
    /// The reasoning markers may carry a per-effort suffix (`<think:high>`), learned from the
    /// output or set by `--marker-suffix`.
    effort_suffix: bool,
}

/// GLM's call markup: no block, the name as text after `<tool_call>`, key and value elements.
const GLM_DIALECT: Dialect = Dialect {
    blocks: &[],
    function: Opener::Bare("<tool_call>"),
    function_close: "</tool_call",
    name_sep: None,
    parameter: Opener::Keyed {
        key: "<arg_key",
        key_close: "</arg_key",
        kind: None,
        value: "<arg_value",
    },
    parameter_close: "</arg_value",
    separators: false,
    suffixed: false,
    string_attr: None,
    function_shown: "<tool_call>NAME",
    parameter_shown: "<arg_key>…</arg_key><arg_value>…</arg_value>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
    tags: &XML_TAGS,
};

const GLM_TOOLS: ToolList = ToolList::functions(
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n",
    "</tools>",
)
.one_a_line();

const GLM_END_TOKENS: &[&str] = &["<|user|>", "<|observation|>", "<|endoftext|>"];

/// GLM 4.5's marks, with `sep` between the elements (a newline; nothing in 4.7).
const fn glm_marks(sep: &'static str) -> Marks {
    Marks {
        block: ("", ""),
        call: "<tool_call>",
        name_end: "",
        after_name: sep,
        key: ("<arg_key>", "</arg_key>"),
        value: ("<arg_value>", "</arg_value>"),
        sep,
        call_end: "</tool_call>",
        join: "\n",
        result: ("<tool_response>", "</tool_response>"),
        tools: GLM_TOOLS,
    }
}

/// GLM 4.5: every other member takes what its entry does not say from it.
const GLM_45: Glm = Glm {
    card: Card {
        aliases: &["glm-4.6", "ling-3", "poolside", "spark"],
        servers: &[
            vllm("glm45"),
            sglang("glm45"),
            sglang("glm"),
            llama_cpp("GLM 4.5"),
        ],
        end_tokens: GLM_END_TOKENS,
        reasoning: Reasoning::THINK,
        ..Card::new(
            "glm-4.5",
            "GLM 4.5, 4.6; Ling 3, Poolside v1, iFlytek Spark 2.5",
        )
    },
    marks: glm_marks("\n"),
    dialect: &GLM_DIALECT,
    gap: "\n ",
    endings: &[],
    json_args: false,
    json_values: false,
    json_list: false,
    effort_suffix: false,
};

/// `glm-4.5`, and the models that write its markup byte for byte (Ling 3, Poolside v1, iFlytek
/// Spark 2.5, HyperCLOVA X SEED Think): their names are aliases of it.
pub(crate) static GLM45: Glm = GLM_45;

/// GLM's markup with every value JSON.
const HCX_DIALECT: Dialect = Dialect {
    string_attr: Some(ValueAttr::AlwaysJson),
    ..GLM_DIALECT
};

/// `hyperclova-x`: HyperCLOVA X SEED Think writes GLM 4.5's markup with every value as JSON
/// (`<arg_value>"Seoul"</arg_value>`); when the request forces a call it writes one JSON list
/// of `{"name", "parameters"}` objects instead (`arguments` read alike; one bare object too).
/// Its template opens the reasoning, so the output shows only `</think>`.
pub(crate) static HYPERCLOVA: Glm = Glm {
    card: Card {
        aliases: &["hyperclovax"],
        servers: &[vllm("hyperclovax_seed_think")],
        end_tokens: &["<|im_end|>", "<|endofturn|>"],
        reasoning: Reasoning::THINK.opened_by_template(),
        // The 14B writes the role header its template leaves open before its calls.
        lead: &["-> tool/function_call"],
        ..Card::new("hyperclova-x", "HyperCLOVA X SEED Think")
    },
    dialect: &HCX_DIALECT,
    json_values: true,
    json_list: true,
    ..GLM_45
};

/// What the JSON-values member's prompt says of its values (and what tells its prompt).
const JSON_VALUES_RULE: &str = "Write every value as JSON: text in double quotes, numbers, booleans, arrays and objects as they are.";

/// A JSON list of calls (or one call object) at the output's `[`/`{`: the JSON engine's, when
/// a call envelope follows.
fn json_list_takes(text: &str, at_end: bool) -> Option<bool> {
    let pieces: &[&str] = if text.starts_with('[') {
        &["[", "{", "\"name\""]
    } else {
        &["{", "\"name\""]
    };
    let mut rest = text;
    for piece in pieces {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix(piece) {
            rest = r;
        } else if piece.starts_with(rest) && !at_end {
            return None;
        } else {
            return Some(false);
        }
    }
    Some(true)
}

/// `glm-4.7`: the prompt, past calls and results are written the 4.7 way; the same scanner reads
/// both forms.
pub(crate) static GLM47: Glm = Glm {
    card: Card {
        aliases: &["glm-5"],
        servers: &[vllm("glm47"), sglang("glm47")],
        end_tokens: GLM_END_TOKENS,
        reasoning: Reasoning::THINK,
        ..Card::new("glm-4.7", "GLM 4.7, GLM 5")
    },
    marks: glm_marks(""),
    gap: " ",
    ..GLM_45
};

/// `glm-flash`: JSON arguments after the name and a `>`; the 4.7 markup is read as well.
pub(crate) static GLM_FLASH: Glm = Glm {
    card: Card {
        aliases: &["glm-5.3-flash"],
        servers: &[],
        end_tokens: GLM_END_TOKENS,
        reasoning: Reasoning::THINK,
        ..Card::new("glm-flash", "GLM-5.3-Flash")
    },
    marks: glm_marks(""),
    gap: " ",
    json_args: true,
    ..GLM_45
};

/// The JSON form: `<tool_call>NAME>{…}`, the close optional.
static FLASH_SYNTAX: FramedSyntax = FramedSyntax {
    header: |head| {
        let name = head.trim();
        valid_name(name).then(|| Header {
            name: name.to_string(),
            id: None,
        })
    },
    call_end: Some("</tool_call>"),
    ..FramedSyntax::new("<tool_call>", &[ArgsBegin::Marker(">")])
};

/// The longest name looked through to tell the two forms apart; past it, the markup form.
const MAX_NAME: usize = 256;

/// The form of the block `s` opens (`s` starts with `<tool_call>`): JSON when the name is
/// followed by `>`.
fn flash_form(s: &str, at_end: bool) -> Form {
    let b = &s.as_bytes()["<tool_call>".len()..];
    let mut i = 0;
    while i < b.len() && i <= MAX_NAME {
        match b[i] {
            b'>' => return if i > 0 { Form::Other } else { Form::Main },
            b'<' | b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'"' => return Form::Main,
            _ => i += 1,
        }
    }
    if i > MAX_NAME || at_end {
        Form::Main
    } else {
        Form::Unknown
    }
}

const FLASH_FORMAT: &str = "<tool_call>{function-name}>{arguments-json}</tool_call>";

/// GLM-5.3-Flash's system prompt: the tool lines, then the JSON call form.
fn flash_prompt(tools: &ToolSet) -> String {
    format!(
        "{}\n\n\
         For each function call, output the function name, a >, then the arguments as one JSON object, within \
         <tool_call> and </tool_call>:\n{FLASH_FORMAT}\n\n\
         For example:\n{}\n\n\
         Write one <tool_call> element per call. Call a tool only when it helps; otherwise answer in text. Each \
         result comes back in a <tool_response> element.\n",
        GLM_TOOLS.write(tools),
        prompt::example_call(tools, flash_call)
    )
}

fn flash_call(name: &str, input: &Value) -> String {
    format!("<tool_call>{name}>{}</tool_call>", prompt::args_json(input))
}

/// The end tokens of Tencent's HY models.
const HY_END_TOKENS: &[&str] = &["<|hy_eos|>", "<|endoftext|>"];

/// How Tencent's HY templates (and K2 Horizon's) introduce the tool list.
const HY_TOOLS: ToolList = ToolList::functions(
    "# Tools\n\nYou may call one or more tools to assist with the user query. The tools you can use are listed below, one JSON object per line, within <tools></tools>:\n<tools>\n",
    "</tools>",
)
.one_a_line();

/// HY3's markup: GLM's elements in one `<tool_calls>` block, the name ended by `<tool_sep>`.
const HY3_DIALECT: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<tool_calls",
        close: "</tool_calls",
    }],
    name_sep: Some("<tool_sep>"),
    // Some checkpoints' markers carry a suffix (`<tool_call:opensource>`): read, learned from
    // the first marker, never written.
    suffixed: true,
    function_shown: "<tool_call>NAME<tool_sep>",
    ..GLM_DIALECT
};

/// A call closed by `<end_of_tool_call>` instead of `</tool_call>` (written so by some builds
/// of HY3, without the block, its arguments as elements or one JSON object): read alike.
const HY3_END_OF_CALL: Dialect = Dialect {
    function_close: "<end_of_tool_call",
    ..HY3_DIALECT
};

/// `hy-v3`: GLM's elements in one `<tool_calls>` block, the name ended by `<tool_sep>`.
pub(crate) static HY_V3: Glm = Glm {
    card: Card {
        aliases: &["hy3"],
        servers: &[vllm("hy_v3")],
        end_tokens: HY_END_TOKENS,
        reasoning: Reasoning::THINK,
        ..Card::new("hy-v3", "Tencent HY3")
    },
    marks: Marks {
        block: ("<tool_calls>\n", "\n</tool_calls>"),
        name_end: "<tool_sep>",
        tools: HY_TOOLS,
        ..glm_marks("\n")
    },
    dialect: &Dialect {
        variants: &[&HY3_END_OF_CALL],
        ..HY3_DIALECT
    },
    gap: " ",
    effort_suffix: true,
    ..GLM_45
};

/// `solar-open`: the arg-key structure in special tokens; each call its own block.
pub(crate) static SOLAR_OPEN: Glm = Glm {
    card: Card {
        aliases: &["solar-open2"],
        servers: &[vllm("solar_open2"), sglang("solar_open2")],
        end_tokens: &["<|im:end|>", "<|endoftext|>"],
        reasoning: Reasoning::between("<|think:start|>", "<|think:end|>"),
        ..Card::new("solar-open", "Upstage Solar Open 2")
    },
    marks: Marks {
        call: "<|tool_call:start|>",
        key: ("<|tool_arg:start|>", "<|tool_arg:value|>"),
        value: ("", "<|tool_arg:end|>"),
        call_end: "<|tool_call:end|>",
        result: ("<|tool_response:start|>", "<|tool_response:end|>"),
        tools: ToolList::functions(
            "# Tools\n\nYou can call the following tools. Each is a JSON object on its own line between <|tool:start|> and <|tool:end|>:\n<|tool:start|>\n",
            "<|tool:end|>",
        )
        .one_a_line(),
        ..glm_marks("\n")
    },
    dialect: &Dialect {
        function: Opener::Bare("<|tool_call:start|>"),
        function_close: "<|tool_call:end|",
        parameter: Opener::Keyed {
            key: "<|tool_arg:start|",
            key_close: "<|tool_arg:value|",
            kind: None,
            value: "",
        },
        parameter_close: "<|tool_arg:end|",
        function_shown: "<|tool_call:start|>NAME",
        parameter_shown: "<|tool_arg:start|>…<|tool_arg:value|>…<|tool_arg:end|>",
        ..GLM_DIALECT
    },
    ..GLM_45
};

/// `hy-v4`: HY3's elements without `<tool_sep>` or newlines, every marker carrying the
/// checkpoint's suffix (`<tool_call:6124c78e>`), reasoning in `<think:SUFFIX>`. The parser
/// learns the suffix from the first marker (and says so); `--marker-suffix` sets it.
pub(crate) static HY_V4: Glm = Glm {
    // HY3's card (the family's end tokens), with its own names and reasoning.
    card: Card {
        name: "hy-v4",
        aliases: &["hy4"],
        families: "Tencent HY v4",
        servers: &[vllm("hy_v4")],
        // Stems: a suffix and `>` complete them.
        reasoning: Reasoning::between("<think:", "</think:"),
        ..HY_V3.card
    },
    marks: Marks {
        block: ("<tool_calls>", "</tool_calls>"),
        join: "",
        tools: HY_TOOLS,
        ..glm_marks("")
    },
    // HY3's markup without `<tool_sep>`.
    dialect: &Dialect {
        name_sep: None,
        function_shown: "<tool_call:…>NAME",
        parameter_shown: "<arg_key:…>…</arg_key:…><arg_value:…>…</arg_value:…>",
        ..HY3_DIALECT
    },
    gap: " ",
    ..GLM_45
};

/// `k2-horizon` (IFM K2 Horizon, "K2-v3"): the arg-key structure under `ifm|` tags in one
/// `<ifm|tool_calls>` block; an argument may give its type in `<ifm|arg_type>` before its value,
/// and a call may hold a JSON envelope instead. Reasoning in `<ifm|think>`, `<ifm|think_fast>`
/// or `<ifm|think_faster>` by effort (any closer ends any of them), opened by the template.
pub(crate) static K2_HORIZON: Glm = Glm {
    card: Card {
        aliases: &["k2-v3"],
        servers: &[vllm("k2_v3"), sglang("k2_v3")],
        end_tokens: &["<|ifm|im_end|>"],
        // Stems: `>`, `_fast>` or `_faster>` end them.
        reasoning: Reasoning::between("<ifm|think", "</ifm|think").opened_by_template(),
        ..Card::new("k2-horizon", "IFM K2 Horizon")
    },
    marks: Marks {
        block: ("<ifm|tool_calls>", "</ifm|tool_calls>"),
        call: "<ifm|tool_call>",
        after_name: "\n",
        key: ("<ifm|arg_key>", "</ifm|arg_key>"),
        value: ("<ifm|arg_value>", "</ifm|arg_value>"),
        call_end: "</ifm|tool_call>",
        join: "",
        result: ("<|ifm|im_start|>tool\n", "<|ifm|im_end|>"),
        tools: HY_TOOLS,
        ..glm_marks("")
    },
    dialect: &Dialect {
        blocks: &[BlockTag {
            open: "<ifm|tool_calls",
            close: "</ifm|tool_calls",
        }],
        function: Opener::BareOrJson("<ifm|tool_call>"),
        function_close: "</ifm|tool_call",
        parameter: Opener::Keyed {
            key: "<ifm|arg_key",
            key_close: "</ifm|arg_key",
            kind: Some(("<ifm|arg_type", "</ifm|arg_type")),
            value: "<ifm|arg_value",
        },
        parameter_close: "</ifm|arg_value",
        function_shown: "<ifm|tool_call>NAME",
        parameter_shown: "<ifm|arg_key>…</ifm|arg_key><ifm|arg_value>…</ifm|arg_value>",
        ..GLM_DIALECT
    },
    gap: " ",
    endings: &[">", "_fast>", "_faster>"],
    ..GLM_45
};

/// The suffix `hy-v4` writes its markers with when none is set (the released checkpoint's).
const DEFAULT_SUFFIX: &str = "opensource";

impl Glm {
    /// Whether every marker carries a suffix, written and set by `--marker-suffix`. (A member
    /// whose suffix is its reasoning's effort, HY3, reads suffixed call markers but writes
    /// none: the setting is the effort's.)
    fn suffixed(&self) -> bool {
        self.dialect.suffixed && !self.effort_suffix
    }

    /// The suffix to write markers with: the protocol's setting, else the default; none for a
    /// member whose markers carry none.
    fn suffix<'a>(&self, p: &'a Protocol) -> Option<&'a str> {
        self.suffixed()
            .then(|| p.marker_suffix().unwrap_or(DEFAULT_SUFFIX))
    }

    /// A mark as written: with `:SUFFIX` before its `>` when there is a suffix.
    fn m(mark: &str, sfx: Option<&str>) -> String {
        match (sfx, mark.rfind('>')) {
            (Some(sfx), Some(gt)) => format!("{}:{sfx}{}", &mark[..gt], &mark[gt..]),
            _ => mark.to_string(),
        }
    }

    /// A call's opening: its marker, the name and what follows the name.
    fn opening(&self, name: &str, sfx: Option<&str>) -> String {
        let m = &self.marks;
        format!(
            "{}{name}{}{}",
            Self::m(m.call, sfx),
            Self::m(m.name_end, sfx),
            m.after_name
        )
    }

    /// One argument: its key element, its value element, the separator after it.
    fn argument(&self, key: &str, value: &str, sfx: Option<&str>) -> String {
        let m = &self.marks;
        format!(
            "{}{key}{}{}{}{value}{}{}",
            Self::m(m.key.0, sfx),
            Self::m(m.key.1, sfx),
            m.sep_between_key_and_value(),
            Self::m(m.value.0, sfx),
            Self::m(m.value.1, sfx),
            m.sep
        )
    }

    /// One call, without the block.
    fn call(&self, name: &str, input: &Value, sfx: Option<&str>) -> String {
        let mut s = self.opening(name, sfx);
        if let Value::Object(args) = input {
            for (k, v) in args {
                let text = if self.json_values {
                    v.to_string()
                } else {
                    prompt::value_text(v)
                };
                s.push_str(&self.argument(k, &text, sfx));
            }
        }
        s.push_str(&Self::m(self.marks.call_end, sfx));
        s
    }

    /// A turn's calls, in the block where the member writes one.
    fn calls(&self, calls: &[(&str, &Value)], sfx: Option<&str>) -> String {
        let m = &self.marks;
        let body = calls
            .iter()
            .map(|(name, input)| self.call(name, input, sfx))
            .collect::<Vec<_>>()
            .join(m.join);
        format!(
            "{}{body}{}",
            Self::m(m.block.0, sfx),
            Self::m(m.block.1, sfx)
        )
    }

    /// The format skeleton the prompt shows, which also recognises the prompt.
    fn skeleton(&self, sfx: Option<&str>) -> String {
        let arg = |n: usize| {
            self.argument(
                &format!("{{arg-key-{n}}}"),
                &format!("{{arg-value-{n}}}"),
                sfx,
            )
        };
        format!(
            "{}{}{}...{}{}",
            self.opening("{function-name}", sfx),
            arg(1),
            arg(2),
            self.marks.sep,
            Self::m(self.marks.call_end, sfx)
        )
    }

    fn system_prompt(&self, tools: &ToolSet, sfx: Option<&str>) -> String {
        let m = &self.marks;
        let call = Self::m(m.call, sfx);
        let block = if m.block.0.is_empty() {
            format!("Write one {call} element per call.")
        } else {
            format!(
                "Write all the calls of a turn in one {} block, one {call} element per call.",
                Self::m(m.block.0.trim(), sfx),
            )
        };
        format!(
            "{}\n\n\
             For each function call, output the function name and arguments within the following XML format:\n\
             {}\n\n\
             For example:\n{}\n\n\
             {} {block} \
             Call a tool only when it helps; otherwise answer in text. Each result comes back in a {} element.\n",
            m.tools.write(tools),
            self.skeleton(sfx),
            prompt::example_call(tools, |name, input| self.calls(&[(name, input)], sfx)),
            if self.json_values {
                JSON_VALUES_RULE
            } else {
                "Write text values as they are and numbers, booleans, arrays and objects as JSON."
            },
            Self::m(m.result.0, sfx),
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        let m = &self.marks;
        let protocol = Protocol::from_name(self.card.name).ok()?;
        let protocol = if !self.suffixed() {
            system.contains(&self.skeleton(None)).then_some(protocol)?
        } else {
            // The suffix the skeleton was written with: the default is no setting.
            let stem = &m.call[..m.call.len() - 1];
            let at = system.find(&format!("{stem}:"))? + stem.len() + 1;
            let sfx = &system[at..at + system[at..].find('>')?];
            if !system.contains(&self.skeleton(Some(sfx))) {
                return None;
            }
            let setting = (sfx != DEFAULT_SUFFIX).then_some(sfx);
            protocol.with_marker_suffix(setting).ok()?
        };
        let tools = m.tools.read(system)?;
        Some((protocol, tools))
    }

    /// A key without its value, in a call whose name is a template leftover: the markup breaks
    /// where an argument belongs.
    fn malformed_call(&self, input: &Value, sfx: Option<&str>) -> String {
        let m = &self.marks;
        let (key, _) = prompt::first_argument(input);
        format!(
            "{}{}{{{{ tc.name }}}}{}{}{}{key}{}{}{}{}",
            Self::m(m.block.0, sfx),
            Self::m(m.call, sfx),
            Self::m(m.name_end, sfx),
            m.after_name,
            Self::m(m.key.0, sfx),
            Self::m(m.key.1, sfx),
            m.sep,
            Self::m(m.call_end, sfx),
            Self::m(m.block.1, sfx)
        )
    }
}

impl Marks {
    /// Between a key's close and its value's open: the separator, unless the key's close opens
    /// the value itself (no value marker).
    fn sep_between_key_and_value(&self) -> &'static str {
        if self.value.0.is_empty() {
            ""
        } else {
            self.sep
        }
    }
}

impl ProtocolSpec for Glm {
    card_methods!();

    /// The call's opening with a name in it, then what follows the name: a key, or the call's
    /// close. Any name: the shape tells the family, not the tools offered. (A suffixed member's
    /// markers are known by their stems and a colon.)
    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        let m = &self.marks;
        let name = crate::protocol::text::fences::NAME;
        if self.json_args {
            return vec![format!("{}{name}>", m.call)];
        }
        if self.suffixed() {
            let stem = |mark: &str| mark[..mark.len() - 1].to_string() + ":";
            return vec![stem(m.block.0), stem(m.call)];
        }
        let open = format!("{}{name}{}", m.call, m.name_end);
        let gap = self.gap;
        let mut out = vec![
            format!("{open}{gap}{}", m.key.0),
            format!("{open}{gap}{}", m.call_end),
        ];
        if !m.block.0.is_empty() {
            out.push(format!("{} {}", m.block.0.trim(), m.call));
        }
        if matches!(self.dialect.function, Opener::BareOrJson(_)) {
            out.push(format!("{} {{\"name\"", m.call));
        }
        out
    }

    fn reasoning_endings(&self) -> &'static [&'static str] {
        self.endings
    }

    fn takes_marker_suffix(&self) -> bool {
        self.suffixed()
    }

    fn reasoning_suffix(&self) -> bool {
        self.effort_suffix
    }

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        if self.json_args {
            return flash_prompt(tools);
        }
        Glm::system_prompt(self, tools, self.suffix(p))
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if self.json_args {
            if !system.contains(FLASH_FORMAT) {
                return None;
            }
            let tools = GLM_TOOLS.read(system)?;
            return Some((Protocol::from_name(self.card.name).ok()?, tools));
        }
        if system.contains(FLASH_FORMAT) || system.contains(JSON_VALUES_RULE) != self.json_values {
            return None;
        }
        Glm::read_prompt(self, system)
    }

    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        if self.json_args {
            return flash_call(name, input);
        }
        self.calls(&[(name, input)], self.suffix(p))
    }

    fn format_calls(&self, p: &Protocol, calls: &[(&str, &Value)]) -> String {
        if self.json_args {
            let written: Vec<String> = calls.iter().map(|(n, i)| flash_call(n, i)).collect();
            return written.join("\n");
        }
        self.calls(calls, self.suffix(p))
    }

    fn format_result(&self, p: &Protocol, _name: &str, result: &str) -> String {
        let (m, sfx) = (&self.marks, self.suffix(p));
        format!(
            "{}{}{result}{}{}",
            Self::m(m.result.0, sfx),
            m.sep,
            m.sep,
            Self::m(m.result.1, sfx)
        )
    }

    fn read_result(&self, p: &Protocol, text: &str) -> String {
        let (m, sfx) = (&self.marks, self.suffix(p));
        prompt::between(text, &Self::m(m.result.0, sfx), &Self::m(m.result.1, sfx))
    }

    fn scanner(&self, p: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        let markup = MarkupScanner::new(tools.clone(), self.dialect)
            .with_suffix(p.marker_suffix().filter(|_| self.suffixed()));
        if self.json_list {
            let json = |start| {
                Box::new(JsonScanner::new(
                    tools.clone(),
                    JsonScannerConfig {
                        call_start: None,
                        call_end: String::new(),
                        // (A bare object is read as loose JSON, a call once it names a
                        // known tool.)
                        loose_json: start == "{",
                        commit_loose: false,
                        alt_start: None,
                        bare_arrays: start == "[",
                    },
                ))
            };
            let branches = ["[", "{"]
                .into_iter()
                .map(|marker| Branch {
                    marker,
                    takes: json_list_takes,
                    scanner: json(marker),
                })
                .collect();
            return Box::new(Forked::new(Box::new(markup), branches));
        }
        if !self.json_args {
            return Box::new(markup);
        }
        let json = FramedScanner::new(&FLASH_SYNTAX, tools.clone());
        Box::new(FormSwitch::new(markup, json, "<tool_call>", flash_form))
    }

    fn malformed_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        if self.json_args {
            let (key, value) = prompt::first_argument(input);
            return format!("<tool_call>{name}>{{\"{key}\": \"{value}\", \"oops\": }}</tool_call>");
        }
        Glm::malformed_call(self, input, self.suffix(p))
    }

    /// A suffixed member's reasoning markers are stems, completed by the suffix.
    fn format_reasoning(&self, p: &Protocol, text: &str) -> Option<String> {
        let (open, close) = self.card.reasoning.markers?;
        let effort = self.effort_suffix.then(|| p.marker_suffix()).flatten();
        let (open, close) = match (self.suffix(p), self.endings.first()) {
            (None, _) if let Some(sfx) = effort => (
                format!("{}:{sfx}>", open.trim_end_matches('>')),
                format!("{}:{sfx}>", close.trim_end_matches('>')),
            ),
            (Some(sfx), _) => (format!("{open}{sfx}>"), format!("{close}{sfx}>")),
            (None, Some(end)) => (format!("{open}{end}"), format!("{close}{end}")),
            (None, None) => (open.to_string(), close.to_string()),
        };
        Some(if p.reasoning_open() {
            format!("{text}\n{close}\n")
        } else {
            format!("{open}\n{text}\n{close}\n")
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::protocol::tests_support::prelude::*;
    /// Each family member's prompt shows its own call markup.
    #[test]
    fn each_prompt_shows_its_markup() {
        for (name, markup) in [
            ("glm-4.5", "<tools>\n{\"type\":\"function\""),
            (
                "glm-4.7",
                "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>",
            ),
            ("hy-v3", "<tool_call>{function-name}<tool_sep>\n<arg_key>"),
        ] {
            let prompt = named(name).system_prompt(&tools());
            assert!(prompt.contains(markup), "{name}: {prompt}");
        }
        assert_eq!(
            named("glm-4.7").format_result("get_weather", "sunny"),
            "<tool_response>sunny</tool_response>"
        );
    }

    /// The writers, byte for byte (their output reads back: see the case files).
    #[test]
    fn each_writes_its_calls() {
        let paris = json!({"city": "Paris", "days": 3});
        let rain = json!({"query": "rain"});
        assert_eq!(
            named("glm-4.7").format_call("get_weather", &paris),
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
        );
        assert_eq!(
            named("hy-v3").format_calls(&[
                ("get_weather", &json!({"city": "Beijing"})),
                ("search", &rain),
            ]),
            "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n<tool_call>search<tool_sep>\n<arg_key>query</arg_key>\n<arg_value>rain</arg_value>\n</tool_call>\n</tool_calls>"
        );
        assert_eq!(
            named("solar-open").format_call("search", &rain),
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>rain<|tool_arg:end|>\n<|tool_call:end|>"
        );
        assert_eq!(
            named("k2-horizon").format_call("search", &rain),
            "<ifm|tool_calls><ifm|tool_call>search\n<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>rain</ifm|arg_value></ifm|tool_call></ifm|tool_calls>"
        );
        // HyperCLOVA X writes its values as JSON.
        let written = named("hyperclova-x").format_call("get_weather", &json!({"city": "Seoul"}));
        assert!(
            written.contains("<arg_value>\"Seoul\"</arg_value>"),
            "{written}"
        );
    }

    const HY_V3_CALL: &str = "<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>";

    /// HY3's per-effort suffix on `<think>` is learned from the first marker and said once;
    /// without a suffix nothing is said. (The parses: hy-v3's case file.)
    #[test]
    fn hy_v3_says_the_effort_suffix_it_learned() {
        let text = format!(
            "<think:high>Beijing, two days.</think:high>\n<tool_calls>\n{HY_V3_CALL}\n</tool_calls>"
        );
        let said = notices(&named("hy-v3"), &text);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("\"high\""), "{said:?}");
        assert!(notices(&named("hy-v3"), "<think>Plain.</think>Answer.").is_empty());
        // Set by the flag, reasoning is written with it.
        let set = named("hy-v3").with_marker_suffix(Some("high")).unwrap();
        assert_eq!(
            set.format_reasoning("r").unwrap(),
            "<think:high>\nr\n</think:high>\n"
        );
    }

    /// Checkpoints whose call markers carry a suffix (`<tool_sep:opensource>`): the call
    /// markers' suffix and the reasoning's effort suffix are said apart; calls are written
    /// without one.
    #[test]
    fn hy_v3_says_a_call_marker_suffix_apart_and_writes_none() {
        let sfx = |m: &str| m.replace('>', ":opensource>");
        let text = format!(
            "<think:high>Beijing.</think:high>{}",
            sfx(&format!("<tool_calls>\n{HY_V3_CALL}\n</tool_calls>"))
        );
        assert_eq!(notices(&named("hy-v3"), &text).len(), 2);
        let set = named("hy-v3").with_marker_suffix(Some("high")).unwrap();
        assert!(!set.format_call("search", &json!({})).contains(':'));
    }

    const HY_V4_CALLS: &str = "<tool_calls:6124c78e><tool_call:6124c78e>get_weather<arg_key:6124c78e>city</arg_key:6124c78e><arg_value:6124c78e>Beijing</arg_value:6124c78e><arg_key:6124c78e>days</arg_key:6124c78e><arg_value:6124c78e>2</arg_value:6124c78e></tool_call:6124c78e><tool_call:6124c78e>search<arg_key:6124c78e>query</arg_key:6124c78e><arg_value:6124c78e>rain</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>";

    /// HY v4 learns its suffix from the first marker and says it, unless it was set.
    #[test]
    fn hy_v4_says_the_suffix_it_learned() {
        let text = format!("<think:6124c78e>Two tools.</think:6124c78e>Checking.{HY_V4_CALLS}");
        let said = notices(&named("hy-v4"), &text);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said.iter().all(|n| n.contains("\"6124c78e\"")), "{said:?}");
        // Calls alone teach it too.
        assert_eq!(notices(&named("hy-v4"), HY_V4_CALLS).len(), 1);
        let set = named("hy-v4").with_marker_suffix(Some("6124c78e")).unwrap();
        assert!(
            notices(&set, HY_V4_CALLS).is_empty(),
            "a set suffix is not learned"
        );
    }

    #[test]
    fn hy_v4_writes_its_markers_with_the_set_suffix() {
        let set = named("hy-v4").with_marker_suffix(Some("6124c78e")).unwrap();
        let call = set.format_call("search", &json!({"query": "rain"}));
        assert_eq!(
            call,
            "<tool_calls:6124c78e><tool_call:6124c78e>search<arg_key:6124c78e>query</arg_key:6124c78e><arg_value:6124c78e>rain</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>"
        );
        assert!(
            named("hy-v4")
                .format_call("search", &json!({}))
                .starts_with("<tool_calls:opensource>")
        );
        let prompt = set.system_prompt(&tools());
        let (back, _) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, set);
        // (hy-v3 takes one too, for its reasoning markers.)
        assert!(named("glm-4.5").with_marker_suffix(Some("x")).is_err());
        assert!(named("hy-v4").with_marker_suffix(Some("a b")).is_err());
        let json = serde_json::to_value(&set).unwrap();
        assert_eq!(json["markerSuffix"], "6124c78e");
        assert_eq!(serde_json::from_value::<Protocol>(json).unwrap(), set);
    }
}
