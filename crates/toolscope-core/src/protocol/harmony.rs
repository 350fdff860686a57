//! `harmony`: OpenAI gpt-oss's message format, where every message names its channel.
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants Paris.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
//! ```
//!
//! A message is a header (`<|start|>` role, `<|channel|>` channel, optional `to=` recipient and
//! `<|constrain|>` content type) up to `<|message|>`, then its content up to `<|end|>`,
//! `<|call|>`, `<|return|>` or the next header. The template's generation prompt ends with
//! `<|start|>assistant`, so an output usually begins at `<|channel|>`. What a message becomes:
//!
//! - a recipient (`to=functions.NAME`, in the channel header or the role header) makes it a tool
//!   call whose content is the arguments' JSON, from any channel (gpt-oss calls from `analysis`
//!   too); a call ends at `<|call|>` (or `<|end|>`, `<|return|>`), or before the next header;
//! - the `analysis` channel is reasoning;
//! - `final`, `commentary` without a recipient, and text outside any message are text.
//!
//! Headers and end tokens become neither text nor reasoning: they are reported as
//! [`SpanKind::Markup`] spans (the header and close of a call are in its call span).
//!
//! The system prompt lists the tools as the template does in its developer message: a
//! `namespace functions` of TypeScript-like `type NAME = (_: {…}) => any;` declarations, each
//! under its description; a comment line gives each tool's exact JSON Schema too, since the
//! TypeScript form loses some of it (integers, formats), so that the prompt reads back exactly.
//! A tool result comes back as a message from the tool to the assistant:
//! `<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>…<|end|>`.

use serde_json::Value;

use super::framed::valid_name;
use super::span::SpanKind;
use super::spec::{Protocol, ProtocolSpec, Reasoning};
use super::text::emit::Emitter;
use super::text::holdback::Holdback;
use super::text::prompt;
use super::text::prompt::first_argument;
use super::text::scanner::Scanner;
use crate::args::ArgsWriter;
use crate::json::lexer::find1;
use crate::json::{Lexer, Step};
use crate::part::{ErrorPart, PartId};
use crate::tool::{ToolDef, ToolSet};

/// `harmony`.
pub(crate) struct Harmony;

/// The channels of the format: reasoning, calls and preambles, the answer.
const CHANNELS: &[&str] = &["analysis", "commentary", "final"];
const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const MESSAGE: &str = "<|message|>";
const CONSTRAIN: &str = "<|constrain|>";
const END: &str = "<|end|>";
const CALL: &str = "<|call|>";
const RETURN: &str = "<|return|>";

/// The special tokens the scanner reads.
const TOKENS: [&str; 7] = [START, CHANNEL, MESSAGE, CONSTRAIN, END, CALL, RETURN];

/// The longest a header may be before it is taken for text.
const MAX_HEADER: usize = 512;

/// The comment line that carries a tool's exact JSON Schema in the prompt.
const SCHEMA_LINE: &str = "// JSON Schema: ";
const NAMESPACE_OPEN: &str = "namespace functions {";
const NAMESPACE_CLOSE: &str = "} // namespace functions";

fn call(name: &str, input: &Value) -> String {
    let args = if input.is_object() {
        input.to_string()
    } else {
        "{}".to_string()
    };
    format!(
        "{START}assistant{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{args}{CALL}"
    )
}

impl ProtocolSpec for Harmony {
    fn name(&self) -> &'static str {
        "harmony"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["gpt-oss"]
    }

    fn families(&self) -> &'static str {
        "gpt-oss"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &[END, RETURN, CALL]
    }

    /// `<|end|>`, `<|return|>` and `<|call|>` end messages: the scanner reads them.
    fn reads_end_tokens(&self) -> bool {
        true
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![CHANNEL.into(), format!("{START}assistant")]
    }

    /// Reasoning is the `analysis` channel, found by the scanner itself; calls from it count.
    fn reasoning(&self) -> Reasoning {
        Reasoning {
            markers: None,
            starts_inside: false,
            calls_inside: true,
        }
    }

    /// The developer message of the gpt-oss template: the channel rule of its system message,
    /// then `# Tools` / `## functions` and the TypeScript-like namespace.
    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let mut s = String::from(
            "# Valid channels: analysis, commentary, final. Channel must be included for every message.\n\
             Calls to these tools must go to the commentary channel: 'functions'.\n\n# Tools\n\n## functions\n\n",
        );
        s.push_str(NAMESPACE_OPEN);
        s.push_str("\n\n");
        for t in tools.iter() {
            for line in t
                .def
                .description
                .lines()
                .filter(|_| !t.def.description.is_empty())
            {
                s.push_str("// ");
                s.push_str(line);
                s.push('\n');
            }
            s.push_str(SCHEMA_LINE);
            s.push_str(&Value::Object(def_json(&t.def)).to_string());
            s.push('\n');
            s.push_str(&format!("type {} = ", t.def.name));
            render_function_type(&mut s, t.schema());
            s.push_str(";\n\n");
        }
        s.push_str(NAMESPACE_CLOSE);
        let (name, example) = prompt::example_call(tools);
        s.push_str(&format!(
            "\n\nTo call a tool, write a message to it on the commentary channel, with its arguments as one JSON object, \
             for example:\n{}\nFor several calls, write one such message after the other. Call tools only when they help; \
             otherwise answer in the final channel.\n",
            call(&name, &example)
        ));
        s
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        let start = system.find(NAMESPACE_OPEN)? + NAMESPACE_OPEN.len();
        let end = start + system[start..].find(NAMESPACE_CLOSE)?;
        let defs = system[start..end]
            .lines()
            .filter_map(|l| l.strip_prefix(SCHEMA_LINE))
            .map(|json| {
                let v: Value = serde_json::from_str(json).ok()?;
                Some(ToolDef {
                    name: v.get("name")?.as_str()?.to_string(),
                    description: v
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    parameters: v.get("parameters")?.clone(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some((
            Protocol::from_name(self.name()).ok()?,
            ToolSet::new(defs).ok()?,
        ))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, input)
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        calls.iter().map(|(n, i)| call(n, i)).collect()
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        format!("{START}functions.{name} to=assistant{CHANNEL}commentary{MESSAGE}{result}{END}")
    }

    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        results
            .iter()
            .map(|(n, r)| self.format_result(p, n, r))
            .collect()
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, MESSAGE, END)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(HarmonyScanner::new(tools.clone()))
    }

    /// Arguments with a key and no value.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        format!(
            "{START}assistant{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{{\"{key}\": \"{value}\", \"oops\": }}{CALL}"
        )
    }

    /// The analysis channel, as the model opens its answer with it.
    fn format_reasoning(&self, _: &Protocol, text: &str) -> Option<String> {
        Some(format!("{CHANNEL}analysis{MESSAGE}{text}{END}"))
    }
}

fn def_json(def: &ToolDef) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("name".into(), Value::String(def.name.clone()));
    m.insert("description".into(), Value::String(def.description.clone()));
    m.insert("parameters".into(), def.parameters.clone());
    m
}

/// `(_: {…}) => any`, or `() => any` for a tool without properties.
fn render_function_type(s: &mut String, schema: &Value) {
    match schema.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => {
            s.push_str("(_: ");
            render_object(s, schema, 0);
            s.push_str(") => any");
        }
        _ => s.push_str("() => any"),
    }
}

/// An object's properties, one a line under their descriptions; `?` marks the optional ones.
fn render_object(s: &mut String, schema: &Value, depth: usize) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    s.push_str("{\n");
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, spec) in props {
            if let Some(d) = spec.get("description").and_then(Value::as_str) {
                for line in d.lines() {
                    s.push_str("// ");
                    s.push_str(line);
                    s.push('\n');
                }
            }
            s.push_str(name);
            if !required.contains(&name.as_str()) {
                s.push('?');
            }
            s.push_str(": ");
            render_type(s, spec, depth + 1);
            match spec.get("default") {
                Some(d) => {
                    s.push_str(", // default: ");
                    s.push_str(&d.to_string());
                }
                None => s.push(','),
            }
            s.push('\n');
        }
    }
    s.push('}');
}

/// A schema as a TypeScript type: enums as unions of literals, integers as `number`, arrays as
/// `T[]`, objects inline, unions joined by `|`.
fn render_type(s: &mut String, schema: &Value, depth: usize) {
    if depth > 8 {
        s.push_str("any");
        return;
    }
    if let Some(Value::Array(vals)) = schema.get("enum") {
        let lits: Vec<String> = vals.iter().map(Value::to_string).collect();
        s.push_str(&lits.join(" | "));
        return;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = schema.get(key) {
            for (i, alt) in alts.iter().enumerate() {
                if i > 0 {
                    s.push_str(" | ");
                }
                render_type(s, alt, depth + 1);
            }
            return;
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if types.is_empty() {
        s.push_str("any");
        return;
    }
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            s.push_str(" | ");
        }
        match *t {
            "string" => s.push_str("string"),
            "integer" | "number" => s.push_str("number"),
            "boolean" => s.push_str("boolean"),
            "null" => s.push_str("null"),
            "array" => match schema.get("items") {
                Some(items) => {
                    render_type(s, items, depth + 1);
                    s.push_str("[]");
                }
                None => s.push_str("any[]"),
            },
            "object" if schema.get("properties").is_some() => render_object(s, schema, depth),
            _ => s.push_str("object"),
        }
    }
}

/// What plain content becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Reasoning,
}

/// A call whose arguments are being read.
struct Call {
    /// Offset of its header.
    start: usize,
    /// Its markup so far: kept as text if it breaks.
    raw: String,
    name: String,
    id: PartId,
    known: bool,
    lexer: Lexer,
    writer: ArgsWriter,
}

enum State {
    /// Content that is text or reasoning (text outside any message too), from `start`.
    Content { kind: Kind, start: usize },
    /// A header from its `<|start|>` or `<|channel|>` at `start`, up to `<|message|>`.
    Header { start: usize, raw: String },
    /// A call's arguments.
    Body(Box<Call>),
    /// A call's JSON ended: whitespace, then its end token. The whitespace read is kept apart.
    After(Box<Call>, String),
    /// A broken call, skipped to its end: its markup, and why.
    Skip {
        start: usize,
        raw: String,
        why: String,
        call: Option<(PartId, String)>,
    },
}

/// What [`find_token`] found.
enum Found {
    /// A whole token at this offset.
    Token(usize, &'static str),
    /// The text's end from this offset may begin a token.
    Partial(usize),
    None,
}

/// The first special token in `text` from `from`, or a beginning of one at its end.
fn find_token(text: &str, from: usize) -> Found {
    let bytes = text.as_bytes();
    let mut j = from;
    while let Some(k) = find1(b'<', &bytes[j..]) {
        let at = j + k;
        // `<` is ASCII: `at` is a char boundary.
        let rest = &text[at..];
        if let Some(t) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            return Found::Token(at, t);
        }
        if TOKENS
            .iter()
            .any(|t| rest.len() < t.len() && t.starts_with(rest))
        {
            return Found::Partial(at);
        }
        j = at + 1;
    }
    Found::None
}

/// What a header says.
#[derive(Debug, Default, PartialEq)]
struct HeaderInfo {
    role: Option<String>,
    channel: Option<String>,
    recipient: Option<String>,
}

impl HeaderInfo {
    /// Reads a header (from its opening token, `<|message|>` excluded).
    fn read(raw: &str) -> Self {
        #[derive(PartialEq)]
        enum Sec {
            Role,
            Channel,
            Other,
        }
        let mut info = HeaderInfo::default();
        let (mut sec, mut rest) = match raw.strip_prefix(START) {
            Some(r) => (Sec::Role, r),
            None => (Sec::Channel, raw.strip_prefix(CHANNEL).unwrap_or(raw)),
        };
        loop {
            let next = [CHANNEL, CONSTRAIN, MESSAGE]
                .iter()
                .filter_map(|t| rest.find(t).map(|p| (p, *t)))
                .min();
            let seg = next.map_or(rest, |(p, _)| &rest[..p]);
            for word in seg.split_whitespace() {
                if let Some(r) = word.strip_prefix("to=") {
                    info.recipient.get_or_insert_with(|| r.to_string());
                    continue;
                }
                let slot = match sec {
                    Sec::Role => &mut info.role,
                    Sec::Channel => &mut info.channel,
                    Sec::Other => continue,
                };
                slot.get_or_insert_with(|| word.to_string());
            }
            match next {
                Some((p, t)) => {
                    sec = if t == CHANNEL && info.channel.is_none() {
                        Sec::Channel
                    } else {
                        Sec::Other
                    };
                    rest = &rest[p + t.len()..];
                }
                None => break,
            }
        }
        info
    }

    /// The tool the message is addressed to, when it is a call: a recipient other than the
    /// assistant, in an assistant's message. `functions.` is taken off.
    fn callee(&self) -> Option<&str> {
        let r = self.recipient.as_deref()?;
        if r == "assistant" || self.role.as_deref().is_some_and(|role| role != "assistant") {
            return None;
        }
        Some(r.strip_prefix("functions.").unwrap_or(r))
    }
}

pub(crate) struct HarmonyScanner {
    tools: ToolSet,
    state: State,
    held: Holdback,
}

fn emit(em: &mut Emitter, kind: Kind, s: &str) {
    match kind {
        Kind::Text => em.text(s),
        Kind::Reasoning => em.reasoning(s),
    }
}

fn unknown_tool(em: &mut Emitter, id: PartId, name: &str) {
    em.error(ErrorPart {
        tool_call_id: Some(id),
        tool_name: Some(name.to_string()),
        ..ErrorPart::reason(
            "unknown-tool",
            format!("\"{name}\" is not one of the tools"),
        )
    });
}

impl HarmonyScanner {
    pub(crate) fn new(tools: ToolSet) -> Self {
        HarmonyScanner {
            tools,
            state: State::Content {
                kind: Kind::Text,
                start: 0,
            },
            held: Holdback::default(),
        }
    }

    /// Content ends at `at`: a reasoning block closes with its span.
    fn close_content(kind: Kind, start: usize, at: usize, em: &mut Emitter) {
        if kind == Kind::Reasoning {
            em.end_reasoning();
            em.span(start, at, SpanKind::Reasoning);
        }
    }

    fn content(
        &mut self,
        kind: Kind,
        start: usize,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        match find_token(text, i) {
            Found::None => {
                emit(em, kind, &text[i..]);
                self.state = State::Content { kind, start };
                text.len()
            }
            Found::Partial(j) => {
                emit(em, kind, &text[i..j]);
                self.state = State::Content { kind, start };
                self.held.hold(text, j, base)
            }
            Found::Token(j, t) => {
                emit(em, kind, &text[i..j]);
                let at = base + j;
                match t {
                    START | CHANNEL => {
                        Self::close_content(kind, start, at, em);
                        self.state = State::Header {
                            start: at,
                            raw: t.to_string(),
                        };
                    }
                    END | CALL | RETURN => {
                        Self::close_content(kind, start, at, em);
                        em.span(at, at + t.len(), SpanKind::Markup);
                        self.state = State::Content {
                            kind: Kind::Text,
                            start: at + t.len(),
                        };
                    }
                    // Header tokens out of place are content.
                    _ => {
                        emit(em, kind, t);
                        self.state = State::Content { kind, start };
                    }
                }
                j + t.len()
            }
        }
    }

    fn header(
        &mut self,
        start: usize,
        mut raw: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let found = find_token(text, i);
        let j = match found {
            Found::Token(j, _) | Found::Partial(j) => j,
            Found::None => text.len(),
        };
        if raw.len() + (j - i) > MAX_HEADER {
            // Too long to be a header: cut at the limit, and read on as text.
            let mut cut = i + MAX_HEADER.saturating_sub(raw.len());
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            raw.push_str(&text[i..cut]);
            self.bad_header(start, raw, false, em);
            return cut;
        }
        raw.push_str(&text[i..j]);
        match found {
            Found::None => {
                self.state = State::Header { start, raw };
                text.len()
            }
            Found::Partial(_) => {
                self.state = State::Header { start, raw };
                self.held.hold(text, j, base)
            }
            Found::Token(_, t) => match t {
                MESSAGE => {
                    raw.push_str(t);
                    self.open_message(start, raw, em);
                    j + t.len()
                }
                CHANNEL | CONSTRAIN => {
                    raw.push_str(t);
                    self.state = State::Header { start, raw };
                    j + t.len()
                }
                // A header cut short by another message or an end: read again as content.
                _ => {
                    self.bad_header(start, raw, false, em);
                    j
                }
            },
        }
    }

    /// A header that never reached `<|message|>`: its text stays text; if it addressed a tool,
    /// an error says the call was not made.
    fn bad_header(&mut self, start: usize, raw: String, at_end: bool, em: &mut Emitter) {
        self.state = State::Content {
            kind: Kind::Text,
            start: start + raw.len(),
        };
        match HeaderInfo::read(&raw).callee() {
            Some(name) => {
                let (reason, why) = if at_end {
                    (
                        "unfinished-tool-call",
                        format!("the output ended inside the header of a call to \"{name}\""),
                    )
                } else {
                    (
                        "malformed-tool-call",
                        format!("the header of a call to \"{name}\" has no <|message|>"),
                    )
                };
                let name = name.to_string();
                self.malformed(start, raw, Some((None, name)), reason, &why, em);
            }
            None => em.text(&raw),
        }
    }

    /// A header was read: a call, reasoning, or text follows.
    fn open_message(&mut self, start: usize, raw: String, em: &mut Emitter) {
        let info = HeaderInfo::read(&raw);
        match info.callee() {
            Some(name) if valid_name(name) => {
                let tool = self.tools.get_arc(name).cloned();
                let known = tool.is_some();
                let id = em.begin_call(name);
                self.state = State::Body(Box::new(Call {
                    start,
                    raw,
                    name: name.to_string(),
                    id,
                    known,
                    lexer: Lexer::new(),
                    writer: ArgsWriter::new(tool),
                }));
            }
            Some(name) => {
                let why = format!(
                    "\"{}\" does not name a tool",
                    name.chars().take(80).collect::<String>()
                );
                self.state = State::Skip {
                    start,
                    raw,
                    why,
                    call: None,
                };
            }
            None if info
                .channel
                .as_deref()
                .is_some_and(|c| !CHANNELS.contains(&c)) =>
            {
                // No channel harmony knows (a stray `<|channel|>`, a channel of another
                // format): the header is not taken for markup, and nothing in it is lost.
                let channel: String = info.channel.unwrap_or_default().chars().take(80).collect();
                em.error(ErrorPart::reason(
                    "unknown-channel",
                    format!(
                        "a message header names the channel \"{channel}\", which is none of {}: \
                         kept as text",
                        CHANNELS.join(", ")
                    ),
                ));
                em.text(&raw);
                self.state = State::Content {
                    kind: Kind::Text,
                    start: start + raw.len(),
                };
            }
            None => {
                let end = start + raw.len();
                em.span(start, end, SpanKind::Markup);
                let kind = if info.channel.as_deref() == Some("analysis") {
                    Kind::Reasoning
                } else {
                    Kind::Text
                };
                self.state = State::Content { kind, start: end };
            }
        }
    }

    fn body(&mut self, mut call: Box<Call>, text: &str, i: usize, em: &mut Emitter) -> usize {
        let rest = &text[i..];
        let step = call.lexer.feed(rest, &mut call.writer);
        let (consumed, done, error) = match step {
            Step::NeedMore => (rest.len(), false, None),
            Step::Done { consumed } => (consumed, true, None),
            Step::Error { consumed, error } => (consumed, false, Some(error.message)),
        };
        call.raw.push_str(&rest[..consumed]);
        if let Some(d) = call.writer.take_delta() {
            em.input_delta(&call.id, d);
        }
        if let Some(why) = error {
            em.abort_call(&call.id);
            let Call {
                start,
                raw,
                name,
                id,
                ..
            } = *call;
            self.state = State::Skip {
                start,
                raw,
                why: format!("the arguments of \"{name}\" are not valid JSON ({why})"),
                call: Some((id, name)),
            };
        } else if done {
            self.state = State::After(call, String::new());
        } else {
            self.state = State::Body(call);
        }
        i + consumed
    }

    fn after(
        &mut self,
        mut call: Box<Call>,
        mut trailing: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut k = i;
        while k < bytes.len() && bytes[k].is_ascii_whitespace() {
            k += 1;
        }
        trailing.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::After(call, trailing);
            return k;
        }
        let rest = &text[k..];
        if let Some(t) = [CALL, END, RETURN]
            .into_iter()
            .find(|t| rest.starts_with(*t))
        {
            call.raw.push_str(&trailing);
            call.raw.push_str(t);
            self.complete(call, em);
            return k + t.len();
        }
        if TOKENS
            .iter()
            .any(|t| rest.len() < t.len() && t.starts_with(rest))
        {
            self.state = State::After(call, trailing);
            return self.held.hold(text, k, base);
        }
        // No end token: the call stands as read, and what follows is read again as content.
        self.complete(call, em);
        em.text(&trailing);
        k
    }

    /// The call's arguments are complete (its end read, or missing and forgiven).
    fn complete(&mut self, mut call: Box<Call>, em: &mut Emitter) {
        let end = call.start + call.raw.len();
        self.state = State::Content {
            kind: Kind::Text,
            start: end,
        };
        if let Some(d) = call.writer.take_delta() {
            em.input_delta(&call.id, d);
        }
        let Call {
            start,
            raw,
            name,
            id,
            known,
            writer,
            ..
        } = *call;
        match writer.finish() {
            Ok(args) => {
                em.end_call(id.clone(), &name, args);
                em.span(start, end, SpanKind::ToolCall);
                if !known {
                    unknown_tool(em, id, &name);
                }
            }
            Err(e) => {
                em.abort_call(&id);
                let why = format!("tool call \"{name}\": {e}");
                self.malformed(
                    start,
                    raw,
                    Some((Some(id), name)),
                    "malformed-tool-call",
                    &why,
                    em,
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn skip(
        &mut self,
        start: usize,
        mut raw: String,
        why: String,
        call: Option<(PartId, String)>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let mut from = i;
        loop {
            match find_token(text, from) {
                Found::Token(j, t) => match t {
                    CALL | END | RETURN => {
                        raw.push_str(&text[i..j + t.len()]);
                        let call = call.map(|(id, n)| (Some(id), n));
                        self.malformed(start, raw, call, "malformed-tool-call", &why, em);
                        return j + t.len();
                    }
                    START | CHANNEL => {
                        raw.push_str(&text[i..j]);
                        let call = call.map(|(id, n)| (Some(id), n));
                        self.malformed(start, raw, call, "malformed-tool-call", &why, em);
                        return j;
                    }
                    _ => from = j + t.len(),
                },
                Found::Partial(j) => {
                    raw.push_str(&text[i..j]);
                    self.state = State::Skip {
                        start,
                        raw,
                        why,
                        call,
                    };
                    return self.held.hold(text, j, base);
                }
                Found::None => {
                    raw.push_str(&text[i..]);
                    self.state = State::Skip {
                        start,
                        raw,
                        why,
                        call,
                    };
                    return text.len();
                }
            }
        }
    }

    /// Markup that could not be read: reported, and kept as text.
    fn malformed(
        &mut self,
        start: usize,
        raw: String,
        call: Option<(Option<PartId>, String)>,
        reason: &str,
        why: &str,
        em: &mut Emitter,
    ) {
        let end = start + raw.len();
        self.state = State::Content {
            kind: Kind::Text,
            start: end,
        };
        let (id, name) = match call {
            Some((id, name)) => (id, Some(name)),
            None => (None, None),
        };
        em.error(ErrorPart {
            tool_call_id: id,
            tool_name: name,
            ..ErrorPart::reason(reason, why)
        });
        em.text(&raw);
        em.span(start, end, SpanKind::Malformed);
    }
}

impl Scanner for HarmonyScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        if let State::Content { kind, .. } = self.state {
            if self.held.is_empty() && find1(b'<', piece.as_bytes()).is_none() {
                self.held.advance(piece.len());
                emit(em, kind, piece);
                return;
            }
        }
        let (text, base) = self.held.join(piece);
        let text = text.as_ref();
        let mut i = 0;
        while i < text.len() {
            let state = std::mem::replace(
                &mut self.state,
                State::Content {
                    kind: Kind::Text,
                    start: 0,
                },
            );
            i = match state {
                State::Content { kind, start } => self.content(kind, start, text, i, base, em),
                State::Header { start, raw } => self.header(start, raw, text, i, base, em),
                State::Body(call) => self.body(call, text, i, em),
                State::After(call, trailing) => self.after(call, trailing, text, i, base, em),
                State::Skip {
                    start,
                    raw,
                    why,
                    call,
                } => self.skip(start, raw, why, call, text, i, base, em),
            };
        }
    }

    fn finish(&mut self, em: &mut Emitter) {
        let held = self.held.take();
        let end = self.held.pos();
        let state = std::mem::replace(
            &mut self.state,
            State::Content {
                kind: Kind::Text,
                start: end,
            },
        );
        match state {
            State::Content { kind, start } => {
                emit(em, kind, &held);
                Self::close_content(kind, start, end, em);
            }
            State::Header { start, mut raw } => {
                raw.push_str(&held);
                self.bad_header(start, raw, true, em);
            }
            State::Body(mut call) => {
                call.raw.push_str(&held);
                let finished = call.lexer.finish(&mut call.writer);
                if finished.is_ok() && call.lexer.is_done() {
                    // Complete JSON without its end token: the call is recovered.
                    self.complete(call, em);
                } else {
                    if let Some(d) = call.writer.take_delta() {
                        em.input_delta(&call.id, d);
                    }
                    em.abort_call(&call.id);
                    let why = format!("the output ended inside the arguments of \"{}\"", call.name);
                    let Call {
                        start,
                        raw,
                        name,
                        id,
                        ..
                    } = *call;
                    self.malformed(
                        start,
                        raw,
                        Some((Some(id), name)),
                        "unfinished-tool-call",
                        &why,
                        em,
                    );
                }
            }
            State::After(call, mut trailing) => {
                trailing.push_str(&held);
                self.complete(call, em);
                em.text(&trailing);
            }
            State::Skip {
                start,
                mut raw,
                why,
                call,
            } => {
                raw.push_str(&held);
                let call = call.map(|(id, n)| (Some(id), n));
                self.malformed(start, raw, call, "malformed-tool-call", &why, em);
            }
        }
    }

    fn in_call(&self) -> bool {
        matches!(
            self.state,
            State::Body(_) | State::After(..) | State::Skip { .. }
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::part::{Collapsed, Part};
    use crate::protocol::tests_support::{every_split, tools};

    fn p() -> Protocol {
        Protocol::from_name("harmony").unwrap()
    }

    fn spans(text: &str) -> Vec<(SpanKind, &str)> {
        p().parse_generated(&tools(), text.as_bytes())
            .spans
            .iter()
            .map(|s| (s.kind, &text[s.start..s.end]))
            .collect()
    }

    const WEATHER: &str = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\", \"days\": \"3\"}<|call|>";

    #[test]
    fn one_call() {
        let c = every_split(&p(), WEATHER);
        assert_eq!(
            c.calls,
            [("get_weather".into(), json!({"city": "Paris", "days": 3}))]
        );
        assert!(c.errors.is_empty() && c.text.is_empty() && c.reasoning.is_empty());
        assert_eq!(spans(WEATHER), [(SpanKind::ToolCall, WEATHER)]);
        // The generation prompt ends with `<|start|>assistant`: the output starts at the channel.
        let bare = "<|channel|>commentary to=functions.search <|constrain|>json<|message|>{\"query\": \"rust\"}<|call|>";
        assert_eq!(
            every_split(&p(), bare).calls,
            [("search".into(), json!({"query": "rust"}))]
        );
        // `<|constrain|>json` is optional.
        let plain =
            "<|channel|>commentary to=functions.search<|message|>{\"query\": \"x\"}<|call|>";
        assert_eq!(every_split(&p(), plain).calls.len(), 1);
    }

    #[test]
    fn two_parallel_calls() {
        let a = json!({"city": "Paris"});
        let b = json!({"query": "rust"});
        let written = p().format_calls(&[("get_weather", &a), ("search", &b)]);
        assert_eq!(written.matches(CALL).count(), 2);
        let c = every_split(&p(), &written);
        assert_eq!(c.calls, [("get_weather".into(), a), ("search".into(), b)]);
        assert!(c.text.is_empty() && c.errors.is_empty());
    }

    #[test]
    fn text_before_and_after() {
        let text = format!(
            "<|channel|>final<|message|>Let me check.<|end|>{WEATHER}<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
        );
        let c = every_split(&p(), &text);
        assert_eq!(c.text, "Let me check.It is sunny.");
        assert_eq!(c.calls.len(), 1);
        let kinds: Vec<SpanKind> = spans(&text).iter().map(|s| s.0).collect();
        assert_eq!(
            kinds,
            [
                SpanKind::Markup,
                SpanKind::Markup,
                SpanKind::ToolCall,
                SpanKind::Markup,
                SpanKind::Markup
            ]
        );
        // Text outside any message is text too.
        let c = every_split(&p(), &format!("Before. {WEATHER} After."));
        assert_eq!(c.text, "Before.  After.");
    }

    #[test]
    fn reasoning_before_the_call() {
        let text = format!("<|channel|>analysis<|message|>Paris, so get_weather.<|end|>{WEATHER}");
        let c = every_split(&p(), &text);
        assert_eq!(c.reasoning, "Paris, so get_weather.");
        assert_eq!(c.calls.len(), 1);
        assert!(c.text.is_empty());
        assert_eq!(
            spans(&text)[..3],
            [
                (SpanKind::Markup, "<|channel|>analysis<|message|>"),
                (SpanKind::Reasoning, "Paris, so get_weather."),
                (SpanKind::Markup, "<|end|>"),
            ]
        );
        let parsed = p().parse_generated(&tools(), text.as_bytes());
        assert!(matches!(parsed.parts[0], Part::Reasoning { .. }));
        // What the model writes through `format_reasoning` reads back.
        let written = p().format_reasoning("hmm").unwrap();
        assert_eq!(every_split(&p(), &written).reasoning, "hmm");
    }

    #[test]
    fn calls_from_the_analysis_channel_count() {
        let text = "<|channel|>analysis to=functions.search <|constrain|>json<|message|>{\"query\": \"q\"}<|call|>";
        let c = every_split(&p(), text);
        assert_eq!(c.calls, [("search".into(), json!({"query": "q"}))]);
        assert!(c.reasoning.is_empty());
    }

    #[test]
    fn a_call_split_at_every_byte() {
        let text = r#"<|channel|>analysis<|message|>é😀 think<|end|><|start|>assistant<|channel|>commentary to=functions.write_file <|constrain|>json<|message|>{"path": "/a", "content": "<|call|> inside\n  x"}<|call|>"#;
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [(
                "write_file".into(),
                json!({"path": "/a", "content": "<|call|> inside\n  x"})
            )]
        );
        assert_eq!(c.reasoning, "é😀 think");
    }

    #[test]
    fn a_missing_end_at_the_end_of_input_is_forgiven() {
        let text = "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Rome\"}";
        let c = every_split(&p(), text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Rome"}))]);
        assert!(c.errors.is_empty());
        // The next message ends a call too.
        let text = format!("{}{WEATHER}", text);
        assert_eq!(every_split(&p(), &text).calls.len(), 2);
        // Unfinished JSON at the end stays text, with an error.
        let cut = "<|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"Ro";
        let c = every_split(&p(), cut);
        assert!(c.calls.is_empty());
        assert_eq!(c.errors, ["unfinished-tool-call"]);
        assert_eq!(c.text, cut);
        // So does a header cut short.
        let c = every_split(&p(), "<|channel|>commentary to=functions.get_weather");
        assert_eq!(c.errors, ["unfinished-tool-call"]);
    }

    #[test]
    fn a_malformed_body_is_text_and_an_error() {
        let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
        let good = p().format_call("search", &json!({"query": "x"}));
        let text = format!("{bad} then {good}");
        let c = every_split(&p(), &text);
        assert_eq!(c.calls, [("search".into(), json!({"query": "x"}))]);
        assert_eq!(c.errors, ["malformed-tool-call"]);
        assert_eq!(c.text, format!("{bad} then "));
        assert_eq!(spans(&text)[0], (SpanKind::Malformed, bad.as_str()));
        // A recipient that cannot be a function name.
        let c = every_split(
            &p(),
            "<|channel|>commentary to=functions.{{name}}<|message|>{}<|call|>",
        );
        assert!(c.calls.is_empty());
        assert_eq!(c.errors, ["malformed-tool-call"]);
    }

    #[test]
    fn an_unknown_tool_is_kept_and_flagged() {
        let text = p().format_call("launch", &json!({"x": 1}));
        let c = every_split(&p(), &text);
        assert_eq!(c.calls, [("launch".into(), json!({"x": 1}))]);
        assert_eq!(c.errors, ["unknown-tool"]);
        // A built-in tool's recipient is a call too, not silent text.
        let c = every_split(
            &p(),
            "<|channel|>analysis to=browser.search<|message|>{\"query\": \"q\"}<|call|>",
        );
        assert_eq!(c.calls[0].0, "browser.search");
        assert_eq!(c.errors, ["unknown-tool"]);
    }

    #[test]
    fn the_recipient_in_the_role_header() {
        let text = "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Oslo\"}<|call|>";
        let c = every_split(&p(), text);
        assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Oslo"}))]);
        assert!(c.errors.is_empty());
    }

    #[test]
    fn commentary_without_a_recipient_is_text() {
        let text = "<|channel|>commentary<|message|>I will look it up.<|end|>";
        let c = every_split(&p(), text);
        assert_eq!(c.text, "I will look it up.");
        assert!(c.calls.is_empty() && c.errors.is_empty());
        // A tool result (a message from the tool to the assistant) is not a call either.
        let result = p().format_result("get_weather", "18 degrees");
        let c = every_split(&p(), &result);
        assert_eq!((c.text.as_str(), c.calls.len()), ("18 degrees", 0));
    }

    /// Nothing is lost: a stray `<|channel|>` header, or one naming a channel harmony does not
    /// know, stays text (reported), and so does what follows it.
    #[test]
    fn a_header_of_no_known_channel_is_kept_as_text() {
        let p = p();
        for text in [
            "Hello <|channel|>SECRETWORDS<|message|>tail",
            "<|start|>assistant<|channel|>weird<|message|>unknown channel text<|end|>",
        ] {
            let parsed = p.parse_generated(&ToolSet::default(), text.as_bytes());
            let c = crate::part::Collapsed::of(&parsed.parts);
            for word in ["SECRETWORDS", "tail", "weird", "unknown channel text"] {
                if text.contains(word) {
                    assert!(c.text.contains(word), "{word} lost from {text:?}: {c:?}");
                }
            }
            assert_eq!(c.errors, ["unknown-channel"], "{text:?}");
        }
        // The known channels are still read as before.
        let c = crate::part::Collapsed::of(
            &p.parse_generated(
                &ToolSet::default(),
                b"<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>",
            )
            .parts,
        );
        assert_eq!((c.reasoning.as_str(), c.text.as_str()), ("think", "ok"));
    }

    #[test]
    fn headers_are_read() {
        let h = HeaderInfo::read(
            "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json",
        );
        assert_eq!(h.role.as_deref(), Some("assistant"));
        assert_eq!(h.channel.as_deref(), Some("commentary"));
        assert_eq!(h.callee(), Some("f"));
        let h = HeaderInfo::read("<|start|>functions.f to=assistant<|channel|>commentary");
        assert_eq!(h.callee(), None);
        assert_eq!(
            HeaderInfo::read("<|channel|>final").channel.as_deref(),
            Some("final")
        );
    }

    #[test]
    fn a_header_too_long_is_text() {
        let text = format!("<|channel|>{}<|message|>x", "a".repeat(600));
        let c = every_split(&p(), &text);
        assert_eq!(c.text, text);
        assert!(c.calls.is_empty());
    }

    #[test]
    fn prompt_history_and_results_read_back() {
        let prompt = p().system_prompt(&tools());
        assert!(prompt.contains("# Tools\n\n## functions\n\nnamespace functions {"));
        assert!(prompt.contains("// Current weather for a city\n// JSON Schema: "));
        assert!(prompt.contains(
            "type get_weather = (_: {\ncity: string,\ndays?: number,\nunit?: \"c\" | \"f\",\n}) => any;"
        ));
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, p());
        assert_eq!(set.to_json(), tools().to_json());
        assert_eq!(
            p().format_call("get_weather", &json!({"city": "Paris"})),
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>"
        );
        assert_eq!(
            p().format_result("get_weather", "18 degrees"),
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>18 degrees<|end|>"
        );
        assert_eq!(
            p().read_result(&p().format_result("f", "18 degrees")),
            "18 degrees"
        );
        let parsed = p().parse_generated(&tools(), WEATHER.as_bytes());
        assert_eq!(Collapsed::of(&parsed.parts).calls.len(), 1);
    }
}
