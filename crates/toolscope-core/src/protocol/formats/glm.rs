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
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods};
use crate::protocol::text::prompt;
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
    tools: (&'static str, &'static str),
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

const GLM_TOOLS: (&str, &str) = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n",
    "</tools>",
);

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

/// `glm-4.5`, and the models that write its markup byte for byte (Ling 3, Poolside v1, iFlytek
/// Spark 2.5, HyperCLOVA X SEED Think): their names are aliases of it.
pub(crate) static GLM45: Glm = Glm {
    card: Card {
        aliases: &["glm-4.6", "ling-3", "poolside", "spark"],
        servers: &[
            ("vllm", "glm45"),
            ("sglang", "glm45"),
            ("sglang", "glm"),
            ("llama.cpp", "GLM 4.5"),
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
        servers: &[("vllm", "hyperclovax_seed_think")],
        end_tokens: &["<|im_end|>", "<|endofturn|>"],
        reasoning: Reasoning {
            starts_inside: true,
            ..Reasoning::THINK
        },
        // The 14B writes the role header its template leaves open before its calls.
        lead: &["-> tool/function_call"],
        ..Card::new("hyperclova-x", "HyperCLOVA X SEED Think")
    },
    marks: glm_marks("\n"),
    dialect: &HCX_DIALECT,
    gap: "\n ",
    endings: &[],
    json_args: false,
    json_values: true,
    json_list: true,
    effort_suffix: false,
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
        servers: &[("vllm", "glm47"), ("sglang", "glm47")],
        end_tokens: GLM_END_TOKENS,
        reasoning: Reasoning::THINK,
        ..Card::new("glm-4.7", "GLM 4.7, GLM 5")
    },
    marks: glm_marks(""),
    dialect: &GLM_DIALECT,
    gap: " ",
    endings: &[],
    json_args: false,
    json_values: false,
    json_list: false,
    effort_suffix: false,
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
    dialect: &GLM_DIALECT,
    gap: " ",
    endings: &[],
    json_args: true,
    json_values: false,
    json_list: false,
    effort_suffix: false,
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
    let (name, example) = prompt::example_call(tools);
    format!(
        "{}{}{}\n\n\
         For each function call, output the function name, a >, then the arguments as one JSON object, within \
         <tool_call> and </tool_call>:\n{FLASH_FORMAT}\n\n\
         For example:\n{}\n\n\
         Write one <tool_call> element per call. Call a tool only when it helps; otherwise answer in text. Each \
         result comes back in a <tool_response> element.\n",
        GLM_TOOLS.0,
        prompt::json_tool_lines(tools, true, "", ""),
        GLM_TOOLS.1,
        flash_call(&name, &example)
    )
}

fn flash_call(name: &str, input: &Value) -> String {
    let args = if input.is_object() {
        input.to_string()
    } else {
        "{}".to_string()
    };
    format!("<tool_call>{name}>{args}</tool_call>")
}

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
        servers: &[("vllm", "hy_v3")],
        end_tokens: &["<|hy_eos|>", "<|endoftext|>"],
        reasoning: Reasoning::THINK,
        ..Card::new("hy-v3", "Tencent HY3")
    },
    marks: Marks {
        block: ("<tool_calls>\n", "\n</tool_calls>"),
        call: "<tool_call>",
        name_end: "<tool_sep>",
        after_name: "\n",
        key: ("<arg_key>", "</arg_key>"),
        value: ("<arg_value>", "</arg_value>"),
        sep: "\n",
        call_end: "</tool_call>",
        join: "\n",
        result: ("<tool_response>", "</tool_response>"),
        tools: (
            "# Tools\n\nYou may call one or more tools to assist with the user query. The tools you can use are listed below, one JSON object per line, within <tools></tools>:\n<tools>\n",
            "</tools>",
        ),
    },
    dialect: &Dialect {
        variants: &[&HY3_END_OF_CALL],
        ..HY3_DIALECT
    },
    gap: " ",
    endings: &[],
    json_args: false,
    json_values: false,
    json_list: false,
    effort_suffix: true,
};

/// `solar-open`: the arg-key structure in special tokens; each call its own block.
pub(crate) static SOLAR_OPEN: Glm = Glm {
    card: Card {
        aliases: &["solar-open2"],
        servers: &[("vllm", "solar_open2"), ("sglang", "solar_open2")],
        end_tokens: &["<|im:end|>", "<|endoftext|>"],
        reasoning: Reasoning {
            markers: Some(("<|think:start|>", "<|think:end|>")),
            ..Reasoning::THINK
        },
        ..Card::new("solar-open", "Upstage Solar Open 2")
    },
    marks: Marks {
        block: ("", ""),
        call: "<|tool_call:start|>",
        name_end: "",
        after_name: "\n",
        key: ("<|tool_arg:start|>", "<|tool_arg:value|>"),
        value: ("", "<|tool_arg:end|>"),
        sep: "\n",
        call_end: "<|tool_call:end|>",
        join: "\n",
        result: ("<|tool_response:start|>", "<|tool_response:end|>"),
        tools: (
            "# Tools\n\nYou can call the following tools. Each is a JSON object on its own line between <|tool:start|> and <|tool:end|>:\n<|tool:start|>\n",
            "<|tool:end|>",
        ),
    },
    dialect: &Dialect {
        blocks: &[],
        function: Opener::Bare("<|tool_call:start|>"),
        function_close: "<|tool_call:end|",
        name_sep: None,
        parameter: Opener::Keyed {
            key: "<|tool_arg:start|",
            key_close: "<|tool_arg:value|",
            kind: None,
            value: "",
        },
        parameter_close: "<|tool_arg:end|",
        separators: false,
        suffixed: false,
        string_attr: None,
        function_shown: "<|tool_call:start|>NAME",
        parameter_shown: "<|tool_arg:start|>…<|tool_arg:value|>…<|tool_arg:end|>",
        variants: &[],
        frames: &[],
        colon_close: false,
        unwrap_cdata: false,
        tags: &XML_TAGS,
    },
    gap: "\n ",
    endings: &[],
    json_args: false,
    json_values: false,
    json_list: false,
    effort_suffix: false,
};

/// `hy-v4`: HY3's elements without `<tool_sep>` or newlines, every marker carrying the
/// checkpoint's suffix (`<tool_call:6124c78e>`), reasoning in `<think:SUFFIX>`. The parser
/// learns the suffix from the first marker (and says so); `--marker-suffix` sets it.
pub(crate) static HY_V4: Glm = Glm {
    card: Card {
        aliases: &["hy4"],
        servers: &[("vllm", "hy_v4")],
        end_tokens: &["<|hy_eos|>", "<|endoftext|>"],
        reasoning: Reasoning {
            // Stems: a suffix and `>` complete them.
            markers: Some(("<think:", "</think:")),
            ..Reasoning::THINK
        },
        ..Card::new("hy-v4", "Tencent HY v4")
    },
    marks: Marks {
        block: ("<tool_calls>", "</tool_calls>"),
        call: "<tool_call>",
        name_end: "",
        after_name: "",
        key: ("<arg_key>", "</arg_key>"),
        value: ("<arg_value>", "</arg_value>"),
        sep: "",
        call_end: "</tool_call>",
        join: "",
        result: ("<tool_response>", "</tool_response>"),
        tools: (
            "# Tools\n\nYou may call one or more tools to assist with the user query. The tools you can use are listed below, one JSON object per line, within <tools></tools>:\n<tools>\n",
            "</tools>",
        ),
    },
    dialect: &Dialect {
        blocks: &[BlockTag {
            open: "<tool_calls",
            close: "</tool_calls",
        }],
        suffixed: true,
        function_shown: "<tool_call:…>NAME",
        parameter_shown: "<arg_key:…>…</arg_key:…><arg_value:…>…</arg_value:…>",
        ..GLM_DIALECT
    },
    gap: " ",
    endings: &[],
    json_args: false,
    json_values: false,
    json_list: false,
    effort_suffix: false,
};

/// `k2-horizon` (IFM K2 Horizon, "K2-v3"): the arg-key structure under `ifm|` tags in one
/// `<ifm|tool_calls>` block; an argument may give its type in `<ifm|arg_type>` before its value,
/// and a call may hold a JSON envelope instead. Reasoning in `<ifm|think>`, `<ifm|think_fast>`
/// or `<ifm|think_faster>` by effort (any closer ends any of them), opened by the template.
pub(crate) static K2_HORIZON: Glm = Glm {
    card: Card {
        aliases: &["k2-v3"],
        servers: &[("vllm", "k2_v3"), ("sglang", "k2_v3")],
        end_tokens: &["<|ifm|im_end|>"],
        reasoning: Reasoning {
            // Stems: `>`, `_fast>` or `_faster>` end them.
            markers: Some(("<ifm|think", "</ifm|think")),
            starts_inside: true,
            calls_inside: false,
        },
        ..Card::new("k2-horizon", "IFM K2 Horizon")
    },
    marks: Marks {
        block: ("<ifm|tool_calls>", "</ifm|tool_calls>"),
        call: "<ifm|tool_call>",
        name_end: "",
        after_name: "\n",
        key: ("<ifm|arg_key>", "</ifm|arg_key>"),
        value: ("<ifm|arg_value>", "</ifm|arg_value>"),
        sep: "",
        call_end: "</ifm|tool_call>",
        join: "",
        result: ("<|ifm|im_start|>tool\n", "<|ifm|im_end|>"),
        tools: (
            "# Tools\n\nYou may call one or more tools to assist with the user query. The tools you can use are listed below, one JSON object per line, within <tools></tools>:\n<tools>\n",
            "</tools>",
        ),
    },
    dialect: &Dialect {
        blocks: &[BlockTag {
            open: "<ifm|tool_calls",
            close: "</ifm|tool_calls",
        }],
        function: Opener::BareOrJson("<ifm|tool_call>"),
        function_close: "</ifm|tool_call",
        name_sep: None,
        parameter: Opener::Keyed {
            key: "<ifm|arg_key",
            key_close: "</ifm|arg_key",
            kind: Some(("<ifm|arg_type", "</ifm|arg_type")),
            value: "<ifm|arg_value",
        },
        parameter_close: "</ifm|arg_value",
        separators: false,
        suffixed: false,
        string_attr: None,
        function_shown: "<ifm|tool_call>NAME",
        parameter_shown: "<ifm|arg_key>…</ifm|arg_key><ifm|arg_value>…</ifm|arg_value>",
        variants: &[],
        frames: &[],
        colon_close: false,
        unwrap_cdata: false,
        tags: &XML_TAGS,
    },
    gap: " ",
    endings: &[">", "_fast>", "_faster>"],
    json_args: false,
    json_values: false,
    json_list: false,
    effort_suffix: false,
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

    /// One call, without the block.
    fn call(&self, name: &str, input: &Value, sfx: Option<&str>) -> String {
        let m = &self.marks;
        let mut s = format!(
            "{}{name}{}{}",
            Self::m(m.call, sfx),
            Self::m(m.name_end, sfx),
            m.after_name
        );
        if let Value::Object(args) = input {
            for (k, v) in args {
                let text = if self.json_values {
                    v.to_string()
                } else {
                    prompt::value_text(v)
                };
                s.push_str(&format!(
                    "{}{k}{}{}{}{text}{}{}",
                    Self::m(m.key.0, sfx),
                    Self::m(m.key.1, sfx),
                    m.sep_between_key_and_value(),
                    Self::m(m.value.0, sfx),
                    Self::m(m.value.1, sfx),
                    m.sep
                ));
            }
        }
        s.push_str(&Self::m(m.call_end, sfx));
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
        let m = &self.marks;
        let arg = |n: usize| {
            format!(
                "{}{{arg-key-{n}}}{}{}{}{{arg-value-{n}}}{}{}",
                Self::m(m.key.0, sfx),
                Self::m(m.key.1, sfx),
                m.sep_between_key_and_value(),
                Self::m(m.value.0, sfx),
                Self::m(m.value.1, sfx),
                m.sep
            )
        };
        format!(
            "{}{{function-name}}{}{}{}{}...{}{}",
            Self::m(m.call, sfx),
            Self::m(m.name_end, sfx),
            m.after_name,
            arg(1),
            arg(2),
            m.sep,
            Self::m(m.call_end, sfx)
        )
    }

    fn system_prompt(&self, tools: &ToolSet, sfx: Option<&str>) -> String {
        let m = &self.marks;
        let (name, example) = prompt::example_call(tools);
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
            "{}{}{}\n\n\
             For each function call, output the function name and arguments within the following XML format:\n\
             {}\n\n\
             For example:\n{}\n\n\
             {} {block} \
             Call a tool only when it helps; otherwise answer in text. Each result comes back in a {} element.\n",
            m.tools.0,
            prompt::json_tool_lines(tools, true, "", ""),
            m.tools.1,
            self.skeleton(sfx),
            self.calls(&[(&name, &example)], sfx),
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
        let tools = prompt::read_json_tool_lines(system, m.tools.0, m.tools.1, "", "")?;
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
            let tools = prompt::read_json_tool_lines(system, GLM_TOOLS.0, GLM_TOOLS.1, "", "")?;
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
    mod glm45 {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, search_for, tools, weather_paris_days};

        fn p() -> Protocol {
            Protocol::from_name("glm-4.5").unwrap()
        }

        const CALL: &str = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";

        #[test]
        fn one_call_with_reasoning_and_text_around() {
            let text = format!("<think>Paris.</think>Checking.\n{CALL}\nDone.");
            every_split(&p(), &text)
                .calls(&[weather_paris_days(3)])
                .reasoning("Paris.")
                .text("Checking.\n\nDone.")
                .no_errors();
        }

        #[test]
        fn parallel_calls_and_the_4_7_form() {
            let text = format!(
                "{CALL}\n<tool_call>search<arg_key>query</arg_key><arg_value>rain</arg_value></tool_call>"
            );
            every_split(&p(), &text)
                .calls(&[weather_paris_days(3), search_for("rain")])
                .no_errors();
        }

        #[test]
        fn a_call_without_arguments_and_spaces_between_elements() {
            let text = "<tool_call>search</tool_call><tool_call>search <arg_key>query</arg_key> <arg_value>x y</arg_value> </tool_call>";
            every_split(&p(), text)
                .calls(&[("search".into(), json!({})), search_for("x y")])
                .no_errors();
        }

        #[test]
        fn values_are_byte_exact_and_may_hold_markup() {
            let content = "\n  a = \"</arg_value>\"\n<tool_call>x\n\n";
            let text = format!(
                "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>{content}</arg_value>\n<arg_key>path</arg_key>\n<arg_value>/a.py</arg_value>\n</tool_call>"
            );
            every_split(&p(), &text)
                .call("write_file", json!({"content": content, "path": "/a.py"}))
                .no_errors();
        }

        #[test]
        fn unterminated_malformed_unknown_and_other_formats() {
            let cut = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par";
            every_split(&p(), cut)
                .kept()
                .errors(&["unfinished-tool-call"]);

            let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
            let c = every_split(&p(), &bad).kept();
            assert!(
                c.errors.iter().all(|e| e == "malformed-tool-call"),
                "{:?}",
                c.errors
            );
            assert!(!c.errors.is_empty());

            let unknown = p().format_call("launch", &json!({"stage": 1}));
            every_split(&p(), &unknown)
                .call("launch", json!({"stage": "1"}))
                .errors(&["unknown-tool"]);

            // A hermes call is no GLM call: kept, reported.
            let hermes = "<tool_call>{\"name\": \"get_weather\"}</tool_call>";
            every_split(&p(), hermes).kept().some_errors();
        }

        #[test]
        fn a_name_cut_off_by_the_end_of_the_output_is_still_the_call() {
            every_split(&p(), "Sure.<tool_call>search")
                .call("search", json!({}))
                .text("Sure.");
        }

        #[test]
        fn a_name_cut_off_by_a_reasoning_marker_is_kept_and_reported() {
            every_split(&p(), "<tool_call>search<think>hm</think>rest")
                .no_calls()
                .text("<tool_call>searchrest")
                .reasoning("hm")
                .errors(&["malformed-tool-call"]);
        }

        #[test]
        fn the_prompt_lists_the_tools_and_reads_back() {
            let prompt = p().system_prompt(&tools());
            assert!(
                prompt.contains("<tools>\n{\"type\":\"function\""),
                "{prompt}"
            );
            let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back, p());
            assert_eq!(set.to_json(), tools().to_json());
            assert_eq!(
                p().read_result(&p().format_result("get_weather", "sunny")),
                "sunny"
            );
        }

        #[test]
        fn auto_tells_4_5_from_4_7_and_hermes() {
            let d = Protocol::detect(&tools(), CALL.as_bytes());
            assert_eq!(d.protocol.name(), "glm-4.5", "{}", d.reason);
            let d = Protocol::detect(
                &tools(),
                b"<tool_call>search<arg_key>query</arg_key><arg_value>x</arg_value></tool_call>",
            );
            assert_eq!(d.protocol.name(), "glm-4.7", "{}", d.reason);
            let d = Protocol::detect(&tools(), b"<tool_call>{\"name\": \"search\"}</tool_call>");
            assert_eq!(d.protocol.name(), "hermes", "{}", d.reason);
        }
    }

    mod hyperclova {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, search_for};

        fn p() -> Protocol {
            Protocol::from_name("hyperclova-x").unwrap()
        }

        #[test]
        fn markup_with_json_values_after_the_reasoning_close() {
            let text = "Seoul, then the weather tool.</think>\nOne moment.<tool_call>get_weather\n\
                <arg_key>city</arg_key>\n<arg_value>\"Seoul\"</arg_value>\n\
                <arg_key>days</arg_key>\n<arg_value>2</arg_value>\n\
                <arg_key>unit</arg_key>\n<arg_value>c</arg_value>\n</tool_call><|im_end|>";
            let c = every_split(&p(), text)
                .reasoning("Seoul, then the weather tool.")
                .text_trimmed("One moment.");
            // JSON values are read as JSON; one that is not JSON stays the text it is.
            assert_eq!(
                c.calls,
                [(
                    "get_weather".into(),
                    json!({"city": "Seoul", "days": 2, "unit": "c"})
                )]
            );
            assert!(c.errors.is_empty(), "{:?}", c.errors);
            // And the renderer writes them so.
            let written = p().format_call("get_weather", &json!({"city": "Seoul"}));
            assert!(
                written.contains("<arg_value>\"Seoul\"</arg_value>"),
                "{written}"
            );
        }

        #[test]
        fn a_forced_call_is_a_json_list_or_one_object() {
            let p = p().with_reasoning_open(Some(false));
            let list = "[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Seoul\"}}, \
                {\"name\": \"search\", \"arguments\": {\"query\": \"rain\"}}]";
            let c = every_split(&p, list).calls(&[
                ("get_weather".into(), json!({"city": "Seoul"})),
                search_for("rain"),
            ]);
            assert_eq!((c.text.trim(), c.errors.len()), ("", 0), "{:?}", c.errors);
            let one = "{\"name\": \"search\", \"parameters\": {\"query\": \"rain\"}}";
            every_split(&p, one).calls(&[search_for("rain")]);
            // After the reasoning close, the list is still the answer's.
            let after = format!("Forced.</think>\n\n{list}");
            every_split(&p.clone().with_reasoning_open(Some(true)), &after)
                .call_count(2)
                .reasoning("Forced.");
            // The 14B writes the role header its template leaves open first: format there.
            let headed = format!(" -> tool/function_call\n{list}<|im_end|>");
            let c = every_split(&p, &headed).call_count(2);
            assert_eq!((c.text.trim(), c.errors.len()), ("", 0), "{:?}", c.errors);
            every_split(&p, "Say -> tool/function_call later.")
                .text("Say -> tool/function_call later.");
        }

        #[test]
        fn brackets_that_are_not_calls_stay_text() {
            let p = p().with_reasoning_open(Some(false));
            let text = "Use [1, 2] and {\"a\": 1} or [{\"x\": 1}] here.";
            let c = every_split(&p, text).text(text);
            assert!(c.calls.is_empty() && c.errors.is_empty(), "{:?}", c.errors);
        }

        #[test]
        fn its_prompt_reads_back_as_itself_not_as_glm() {
            let tools = crate::protocol::tests_support::tools();
            let system = p().system_prompt(&tools);
            assert_eq!(
                Protocol::detect_from_prompt(&system).map(|(p, _)| p.name()),
                Some("hyperclova-x")
            );
            let glm = Protocol::from_name("glm-4.5")
                .unwrap()
                .system_prompt(&tools);
            assert_eq!(
                Protocol::detect_from_prompt(&glm).map(|(p, _)| p.name()),
                Some("glm-4.5")
            );
        }
    }

    mod glm47 {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, tools};

        fn p() -> Protocol {
            Protocol::from_name("glm-4.7").unwrap()
        }

        #[test]
        fn calls_without_newlines_with_reasoning_and_text() {
            let call = p().format_call("get_weather", &json!({"city": "Paris", "days": 3}));
            assert_eq!(
                call,
                "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
            );
            let text = format!("<think>Paris.</think>Checking.{call}{call}Done.");
            let c = every_split(&p(), &text);
            let want = (
                "get_weather".to_string(),
                json!({"city": "Paris", "days": 3}),
            );
            assert_eq!(c.calls, [want.clone(), want]);
            assert_eq!(c.reasoning, "Paris.");
            assert_eq!(c.text, "Checking.Done.");
            assert!(c.errors.is_empty(), "{:?}", c.errors);
        }

        #[test]
        fn newlines_inside_a_value_are_kept() {
            let text = "<tool_call>write_file<arg_key>content</arg_key><arg_value>\nline\n</arg_value></tool_call>";
            every_split(&p(), text).call("write_file", json!({"content": "\nline\n"}));
        }

        #[test]
        fn the_prompt_is_written_without_newlines_and_reads_back() {
            let prompt = p().system_prompt(&tools());
            assert!(
                prompt.contains(
                    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>"
                ),
                "{prompt}"
            );
            let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back, p());
            assert_eq!(set.to_json(), tools().to_json());
            assert_eq!(
                p().format_result("get_weather", "sunny"),
                "<tool_response>sunny</tool_response>"
            );
            let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
            every_split(&p(), &bad).kept().some_errors();
        }
    }

    mod hy_v3 {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, search_for, tools};

        fn p() -> Protocol {
            Protocol::from_name("hy-v3").unwrap()
        }

        const CALL: &str = "<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>";

        /// The notices of a whole parse.
        fn notices(p: &Protocol, text: &str) -> Vec<String> {
            p.parse_generated(&tools(), text.as_bytes())
                .parts
                .iter()
                .filter_map(|part| match part {
                    crate::part::Part::Warning(w) if w.is_notice() => Some(w.message.clone()),
                    _ => None,
                })
                .collect()
        }

        #[test]
        fn a_per_effort_suffix_on_think_is_learned_and_said() {
            let text = format!(
                "<think:high>Beijing, two days.</think:high>\n<tool_calls>\n{CALL}\n</tool_calls>"
            );
            every_split(&p(), &text)
                .reasoning_trimmed("Beijing, two days.")
                .call_count(1)
                .no_errors();
            let said = notices(&p(), &text);
            assert_eq!(said.len(), 1, "{said:?}");
            assert!(said[0].contains("\"high\""), "{said:?}");
            // Without a suffix, the markers read as they always did, and nothing is said.
            let plain = "<think>Plain.</think>Answer.";
            let c = every_split(&p(), plain);
            assert_eq!(
                (c.reasoning.as_str(), c.text.as_str()),
                ("Plain.", "Answer.")
            );
            assert!(notices(&p(), plain).is_empty());
        }

        #[test]
        fn once_known_another_suffix_is_text_and_the_flag_sets_it() {
            // Learned from the first marker: a later marker with another suffix is text.
            let text = "<think:low>a</think:high>b</think:low>c";
            let c = every_split(&p(), text).reasoning("a</think:high>b");
            assert_eq!(c.text, "c");
            // Set by the flag: the other suffix is text from the start.
            let set = p().with_marker_suffix(Some("high")).unwrap();
            every_split(&set, "<think:low>x</think:low><think:high>y</think:high>z")
                .text("<think:low>x</think:low>z")
                .reasoning("y");
            // And reasoning is written with it.
            assert_eq!(
                set.format_reasoning("r").unwrap(),
                "<think:high>\nr\n</think:high>\n"
            );
            // A think-like tag is not a marker.
            every_split(&p(), "<thinking>no</thinking>").text("<thinking>no</thinking>");
        }

        /// Checkpoints whose call markers carry a suffix (`<tool_sep:opensource>`): read with
        /// the suffix learned from the first, apart from the reasoning's effort suffix; written
        /// without one.
        #[test]
        fn suffixed_call_markers_are_read_and_the_effort_suffix_is_apart() {
            let sfx = |m: &str| m.replace('>', ":opensource>");
            let text = format!(
                "<think:high>Beijing.</think:high>{}",
                sfx(&format!("<tool_calls>\n{CALL}\n</tool_calls>"))
            );
            let c =
                every_split(&p(), &text).call("get_weather", json!({"city": "Beijing", "days": 2}));
            assert_eq!((c.reasoning.as_str(), c.text.trim()), ("Beijing.", ""));
            assert!(c.errors.is_empty(), "{:?}", c.errors);
            assert_eq!(notices(&p(), &text).len(), 2);
            let set = p().with_marker_suffix(Some("high")).unwrap();
            assert_eq!(every_split(&set, &text).calls.len(), 1);
            assert!(!set.format_call("search", &json!({})).contains(':'));
        }

        #[test]
        fn one_call_in_its_block_with_reasoning_and_text_around() {
            let text = format!(
                "<think>Beijing.</think>Checking.\n<tool_calls>\n{CALL}\n</tool_calls>\nDone."
            );
            every_split(&p(), &text)
                .call("get_weather", json!({"city": "Beijing", "days": 2}))
                .reasoning("Beijing.")
                .text("Checking.\n\nDone.")
                .no_errors();
        }

        #[test]
        fn parallel_calls_in_one_block_as_written() {
            let text = p().format_calls(&[
                ("get_weather", &json!({"city": "Beijing"})),
                ("search", &json!({"query": "rain"})),
            ]);
            assert_eq!(
                text,
                "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n<tool_call>search<tool_sep>\n<arg_key>query</arg_key>\n<arg_value>rain</arg_value>\n</tool_call>\n</tool_calls>"
            );
            every_split(&p(), &text)
                .calls(&[
                    ("get_weather".into(), json!({"city": "Beijing"})),
                    search_for("rain"),
                ])
                .text("")
                .no_errors();
        }

        #[test]
        fn a_call_without_arguments_inline_or_on_lines_and_without_its_block() {
            for text in [
                "<tool_calls><tool_call>search<tool_sep></tool_call></tool_calls>",
                "<tool_calls>\n<tool_call>search<tool_sep>\n</tool_call>\n</tool_calls>",
                "<tool_call>search<tool_sep>\n<arg_key>query</arg_key>\n<arg_value>x</arg_value>\n</tool_call>",
            ] {
                let c = every_split(&p(), text).call_count(1);
                assert_eq!(c.calls[0].0, "search", "{text}");
                assert!(c.errors.is_empty(), "{text}: {:?}", c.errors);
                assert_eq!(c.text, "", "{text}");
            }
        }

        #[test]
        fn values_are_byte_exact() {
            let content = "\n  x = \"</arg_value>\"\n<tool_sep>\n";
            let text = format!(
                "<tool_calls>\n<tool_call>write_file<tool_sep>\n<arg_key>content</arg_key>\n<arg_value>{content}</arg_value>\n<arg_key>path</arg_key>\n<arg_value>/a.py</arg_value>\n</tool_call>\n</tool_calls>"
            );
            every_split(&p(), &text)
                .call("write_file", json!({"content": content, "path": "/a.py"}))
                .no_errors();
        }

        #[test]
        fn unfinished_and_malformed_calls_are_kept_and_reported() {
            let cut = "<tool_calls>\n<tool_call>get_weather<tool_sep>\n<arg_key>city</arg_key>\n<arg_value>Bei";
            every_split(&p(), cut)
                .kept()
                .errors(&["unfinished-tool-call"]);

            let bad = p().malformed_call("get_weather", &json!({"city": "Beijing"}));
            every_split(&p(), &bad).kept().some_errors();
        }

        #[test]
        fn auto_reads_it_whatever_the_name_and_the_prompt_reads_back() {
            let d = Protocol::detect(&tools(), format!("<tool_calls>\n{CALL}").as_bytes());
            assert_eq!(d.protocol, p(), "{}", d.reason);
            let d = Protocol::detect(&tools(), b"<tool_call>other_tool<tool_sep>\n<arg_key>");
            assert_eq!(d.protocol, p(), "{}", d.reason);
            let prompt = p().system_prompt(&tools());
            assert!(
                prompt.contains("<tool_call>{function-name}<tool_sep>\n<arg_key>"),
                "{prompt}"
            );
            let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back, p());
            assert_eq!(set.to_json(), tools().to_json());
        }
    }

    mod solar_open {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, search_for, tools};

        fn p() -> Protocol {
            Protocol::from_name("solar-open").unwrap()
        }

        const CALL: &str = "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_arg:start|>days<|tool_arg:value|>2<|tool_arg:end|>\n<|tool_call:end|>";

        #[test]
        fn one_call_with_reasoning_and_text_around() {
            let text = format!("<|think:start|>Seoul.<|think:end|>Checking.{CALL}Done.<|im:end|>");
            every_split(&p(), &text)
                .call("get_weather", json!({"city": "Seoul", "days": 2}))
                .reasoning("Seoul.")
                .text("Checking.Done.")
                .no_errors();
        }

        /// A call whose `<|tool_call:end|>` was left out ends where the next call begins.
        #[test]
        fn a_call_without_its_end_ends_at_the_next_call() {
            let first = "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>rain<|tool_arg:end|>\n";
            every_split(&p(), &format!("{first}{CALL}"))
                .calls(&[
                    ("search".into(), json!({"query": "rain"})),
                    ("get_weather".into(), json!({"city": "Seoul", "days": 2})),
                ])
                .no_errors()
                .text_trimmed("");
        }

        #[test]
        fn repeated_blocks_are_parallel_calls_and_the_written_form_reads_back() {
            let call = p().format_call("search", &json!({"query": "rain"}));
            assert_eq!(
                call,
                "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>rain<|tool_arg:end|>\n<|tool_call:end|>"
            );
            let text = format!("{CALL}{call}");
            every_split(&p(), &text)
                .calls(&[
                    ("get_weather".into(), json!({"city": "Seoul", "days": 2})),
                    search_for("rain"),
                ])
                .no_errors();
        }

        #[test]
        fn values_are_byte_exact_and_calls_without_arguments_count() {
            let content = "\nfn main() {}\n<|tool_arg:end|> not yet\n";
            let text = format!(
                "<|tool_call:start|>write_file\n<|tool_arg:start|>content<|tool_arg:value|>{content}<|tool_arg:end|>\n<|tool_call:end|><|tool_call:start|>search<|tool_call:end|>"
            );
            every_split(&p(), &text)
                .calls(&[
                    ("write_file".into(), json!({"content": content})),
                    ("search".into(), json!({})),
                ])
                .no_errors();
        }

        #[test]
        fn unfinished_and_malformed_calls_are_kept_and_reported() {
            let cut = "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Se";
            every_split(&p(), cut)
                .kept()
                .errors(&["unfinished-tool-call"]);
            let bad = p().malformed_call("get_weather", &json!({"city": "Seoul"}));
            every_split(&p(), &bad).kept().some_errors();
        }

        #[test]
        fn auto_reads_it_and_the_prompt_reads_back() {
            let d = Protocol::detect(&tools(), format!("Sure. {CALL}").as_bytes());
            assert_eq!(d.protocol, p(), "{}", d.reason);
            let d = Protocol::detect(&tools(), b"<|think:start|>hm<|think:end|>ok");
            assert_eq!(d.protocol, p(), "{}", d.reason);
            let prompt = p().system_prompt(&tools());
            let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back, p());
            assert_eq!(set.to_json(), tools().to_json());
            assert_eq!(
                p().read_result(&p().format_result("get_weather", "sunny")),
                "sunny"
            );
        }
    }

    mod hy_v4 {
        use serde_json::json;

        use crate::part::Part;
        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, search_for, tools};

        fn p() -> Protocol {
            Protocol::from_name("hy-v4").unwrap()
        }

        const CALLS: &str = "<tool_calls:6124c78e><tool_call:6124c78e>get_weather<arg_key:6124c78e>city</arg_key:6124c78e><arg_value:6124c78e>Beijing</arg_value:6124c78e><arg_key:6124c78e>days</arg_key:6124c78e><arg_value:6124c78e>2</arg_value:6124c78e></tool_call:6124c78e><tool_call:6124c78e>search<arg_key:6124c78e>query</arg_key:6124c78e><arg_value:6124c78e>rain</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>";

        /// The notices of a whole parse.
        fn notices(p: &Protocol, text: &str) -> Vec<String> {
            p.parse_generated(&tools(), text.as_bytes())
                .parts
                .iter()
                .filter_map(|part| match part {
                    Part::Warning(w) if w.is_notice() => Some(w.message.clone()),
                    _ => None,
                })
                .collect()
        }

        #[test]
        fn the_suffix_is_learned_from_the_first_marker_and_said() {
            let text = format!("<think:6124c78e>Two tools.</think:6124c78e>Checking.{CALLS}");
            every_split(&p(), &text)
                .calls(&[
                    ("get_weather".into(), json!({"city": "Beijing", "days": 2})),
                    search_for("rain"),
                ])
                .reasoning("Two tools.")
                .text("Checking.")
                .no_errors();
            let said = notices(&p(), &text);
            assert_eq!(said.len(), 2, "{said:?}");
            assert!(said.iter().all(|n| n.contains("\"6124c78e\"")), "{said:?}");
            // Calls alone teach it too.
            assert_eq!(notices(&p(), CALLS).len(), 1);
        }

        #[test]
        fn markers_with_another_suffix_once_learned_are_text() {
            let other = "<tool_call:deadbeef>search<arg_key:deadbeef>query</arg_key:deadbeef><arg_value:deadbeef>x</arg_value:deadbeef></tool_call:deadbeef>";
            let text = format!("{CALLS} then {other}");
            every_split(&p(), &text)
                .call_count(2)
                .text(format!(" then {other}"));
            // Reasoning markers with another suffix than the set one are text.
            let set = p().with_marker_suffix(Some("6124c78e")).unwrap();
            let c = every_split(&set, &format!("<think:abc>x</think:abc>{other}"));
            assert!(c.calls.is_empty() && c.reasoning.is_empty(), "{c:?}");
            assert!(
                notices(&set, CALLS).is_empty(),
                "a set suffix is not learned"
            );
        }

        #[test]
        fn values_are_byte_exact_and_a_cut_call_is_reported() {
            let content = "a </arg_value:6124c78e> b\n<tool_call:x>";
            let text = format!(
                "<tool_calls:6124c78e><tool_call:6124c78e>write_file<arg_key:6124c78e>content</arg_key:6124c78e><arg_value:6124c78e>{content}</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>"
            );
            every_split(&p(), &text).call("write_file", json!({"content": content}));
            let cut = "<tool_calls:opensource><tool_call:opensource>get_weather<arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Bei";
            every_split(&p(), cut)
                .kept()
                .errors(&["unfinished-tool-call"]);
        }

        #[test]
        fn it_writes_its_markers_with_the_set_suffix_and_auto_finds_it() {
            let set = p().with_marker_suffix(Some("6124c78e")).unwrap();
            let call = set.format_call("search", &json!({"query": "rain"}));
            assert_eq!(
                call,
                "<tool_calls:6124c78e><tool_call:6124c78e>search<arg_key:6124c78e>query</arg_key:6124c78e><arg_value:6124c78e>rain</arg_value:6124c78e></tool_call:6124c78e></tool_calls:6124c78e>"
            );
            assert!(
                p().format_call("search", &json!({}))
                    .starts_with("<tool_calls:opensource>")
            );
            let prompt = set.system_prompt(&tools());
            let (back, _) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back, set);
            let d = Protocol::detect(&tools(), CALLS.as_bytes());
            assert_eq!(d.protocol, p(), "{}", d.reason);
            let d = Protocol::detect(&tools(), b"<think:ab12>hm</think:ab12>");
            assert_eq!(d.protocol, p(), "{}", d.reason);
            // (hy-v3 takes one too, for its reasoning markers: see its tests.)
            assert!(
                Protocol::from_name("glm-4.5")
                    .unwrap()
                    .with_marker_suffix(Some("x"))
                    .is_err()
            );
            assert!(p().with_marker_suffix(Some("a b")).is_err());
            let json = serde_json::to_value(&set).unwrap();
            assert_eq!(json["markerSuffix"], "6124c78e");
            assert_eq!(serde_json::from_value::<Protocol>(json).unwrap(), set);
        }
    }

    mod k2_horizon {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, search_for, tools};

        fn p() -> Protocol {
            Protocol::from_name("k2-horizon").unwrap()
        }

        #[test]
        fn the_three_argument_styles_read_alike() {
            let want = [
                (
                    "get_weather".to_string(),
                    json!({"city": "Oslo", "days": 2}),
                ),
                ("search".to_string(), json!({"query": "rain"})),
            ];
            for text in [
                "<ifm|tool_calls><ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Oslo</ifm|arg_value><ifm|arg_key>days</ifm|arg_key><ifm|arg_value>2</ifm|arg_value></ifm|tool_call><ifm|tool_call>search\n<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>rain</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
                "<ifm|tool_calls>\n<ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>Oslo</ifm|arg_value>\n<ifm|arg_key>days</ifm|arg_key>\n<ifm|arg_type>integer</ifm|arg_type>\n<ifm|arg_value>2</ifm|arg_value>\n</ifm|tool_call>\n<ifm|tool_call>search\n<ifm|arg_key>query</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>rain</ifm|arg_value></ifm|tool_call>\n</ifm|tool_calls>",
                "<ifm|tool_calls><ifm|tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": 2}}</ifm|tool_call>\n<ifm|tool_call>{\"name\": \"search\", \"arguments\": \"{\\\"query\\\": \\\"rain\\\"}\"}</ifm|tool_call></ifm|tool_calls>",
            ] {
                every_split(&p().with_reasoning_open(Some(false)), text)
                    .calls(&want)
                    .no_errors()
                    .text_trimmed("");
            }
        }

        #[test]
        fn reasoning_by_effort_opened_by_the_template() {
            let call = p().format_call("search", &json!({"query": "rain"}));
            assert_eq!(
                call,
                "<ifm|tool_calls><ifm|tool_call>search\n<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>rain</ifm|arg_value></ifm|tool_call></ifm|tool_calls>"
            );
            for close in ["</ifm|think>", "</ifm|think_fast>", "</ifm|think_faster>"] {
                every_split(&p(), &format!("Rain first.{close}Sure.{call}"))
                    .reasoning("Rain first.")
                    .text("Sure.")
                    .call_count(1);
            }
            // Written whole, any opener goes with any closer; a marker of no effort is text.
            let open = p().with_reasoning_open(Some(false));
            every_split(&open, "<ifm|think_fast>hm</ifm|think>ok <ifm|thinking> x")
                .reasoning("hm")
                .text("ok <ifm|thinking> x");
            // A call inside reasoning the template opened is reasoning; inside reasoning only
            // presumed open (the default), it is a call.
            let opened = p().with_reasoning_open(Some(true));
            every_split(&opened, &format!("maybe {call}</ifm|think>")).no_calls();
            every_split(&p(), &format!("maybe {call}</ifm|think>"))
                .reasoning_trimmed("maybe")
                .call_count(1);
        }

        #[test]
        fn values_are_byte_exact_and_broken_calls_are_reported() {
            let p = p().with_reasoning_open(Some(false));
            let content = "\n a </ifm|arg_value> b\n";
            let text = format!(
                "<ifm|tool_calls><ifm|tool_call>write_file\n<ifm|arg_key>content</ifm|arg_key><ifm|arg_value>{content}</ifm|arg_value></ifm|tool_call></ifm|tool_calls>"
            );
            every_split(&p, &text).call("write_file", json!({"content": content}));

            let cut = "<ifm|tool_calls><ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Os";
            every_split(&p, cut)
                .kept()
                .errors(&["unfinished-tool-call"]);

            let cut_json = "<ifm|tool_calls><ifm|tool_call>{\"name\": \"search\", \"arguments\": {";
            every_split(&p, cut_json)
                .kept()
                .errors(&["unfinished-tool-call"]);

            let bad_json = "<ifm|tool_calls><ifm|tool_call>{\"arguments\": {}}</ifm|tool_call></ifm|tool_calls>";
            every_split(&p, bad_json)
                .kept()
                .errors(&["malformed-tool-call"]);

            // The whole JSON without its close, at the end of the output, is the call.
            every_split(
                &p,
                "<ifm|tool_calls><ifm|tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"x\"}}",
            ).calls(&[search_for("x")]);
        }

        #[test]
        fn auto_finds_every_style_and_the_prompt_reads_back() {
            for text in [
                "<ifm|tool_call>any_tool\n<ifm|arg_key>a</ifm|arg_key>",
                "<ifm|tool_call>{\"name\": \"x\"}",
                "plan</ifm|think_faster>answer",
                "<ifm|tool_calls>\n<ifm|tool_call>",
            ] {
                let d = Protocol::detect(&tools(), text.as_bytes());
                assert_eq!(d.protocol.name(), "k2-horizon", "{text}: {}", d.reason);
            }
            let prompt = p().system_prompt(&tools());
            let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back, p());
            assert_eq!(set.to_json(), tools().to_json());
            assert_eq!(
                p().read_result(&p().format_result("get_weather", "sunny")),
                "sunny"
            );
        }
    }

    mod glm_flash {

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{
            every_split, search_for, two_calls, weather_paris, weather_paris_days,
        };

        fn p() -> Protocol {
            Protocol::from_name("glm-flash").unwrap()
        }

        #[test]
        fn json_arguments_after_the_name_with_and_without_the_close() {
            let text = "<think>Two calls.</think>Checking.<tool_call>get_weather>{\"city\": \"Paris\", \"days\": 3}</tool_call><tool_call>search>{\"query\": \"rain\"}";
            every_split(&p(), text)
                .reasoning("Two calls.")
                .text("Checking.")
                .calls(&[weather_paris_days(3), search_for("rain")])
                .no_errors();
        }

        #[test]
        fn the_4_7_markup_is_read_beside_it() {
            let text = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>\n<tool_call>search>{\"query\": \"a<tool_call>b\"}</tool_call> done";
            let c = every_split(&p(), text).calls(&[weather_paris(), search_for("a<tool_call>b")]);
            // The newline between the calls is layout (see the emitter).
            assert_eq!(c.text, " done");
            assert!(c.errors.is_empty(), "{:?}", c.errors);
        }

        #[test]
        fn unfinished_and_malformed_calls_are_reported() {
            let cut = "<tool_call>get_weather>{\"city\": \"Pa";
            every_split(&p(), cut).no_calls().error_count(1);
            let bad = "<tool_call>get_weather>{\"city\" 1}</tool_call> after";
            let c = every_split(&p(), bad).no_calls().error_count(1);
            assert!(c.text.ends_with(" after"), "{:?}", c.text);
        }

        #[test]
        fn written_calls_and_the_prompt_read_back() {
            let (written, a, b) = two_calls(&p(), None);
            every_split(&p(), &written).calls(&[("get_weather".into(), a), ("search".into(), b)]);
            let tools = crate::protocol::tests_support::tools();
            let prompt = p().system_prompt(&tools);
            let (back, read) = Protocol::detect_from_prompt(&prompt).unwrap();
            assert_eq!(back.name(), "glm-flash");
            assert_eq!(read.len(), tools.len());
        }
    }
}
