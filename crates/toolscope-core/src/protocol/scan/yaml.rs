//! The yaml engine: a call is an element named after the tool whose body is a YAML mapping of
//! the arguments. The format that uses it is `formats/yaml_xml.rs`.
//!
//! A model prompted for this format sometimes writes a hermes call instead: JSON in a
//! `<tool_call>` element. A `<tool_call>` followed by `{` or `[` is handed to the framed engine,
//! which reads the JSON as call envelopes (to `</tool_call>`, or to the JSON's end when the close
//! is missing) and reports what breaks; anything else in `<tool_call>` is text as before, and
//! the yaml-xml calls inside it are read.

use std::sync::Arc;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::TScalarStyle;

use crate::args::ArgsWriter;
use crate::json::JsonSink;
use crate::json::lexer::find1;
use crate::part::{Coercion, ErrorPart};
use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::held_args;
use crate::protocol::text::holdback::{Holdback, Steps, drive, strip_separators};
use crate::protocol::text::scanner::Scanner;
use crate::protocol::text::xml::{self, Tag, parse_tag};
use crate::tool::{Tool, ToolSet};

/// Deepest YAML nesting read.
const MAX_DEPTH: usize = 128;

/// How many values aliases may create, per input byte (guards against alias bombs).
const ALIAS_BUDGET_PER_BYTE: usize = 4;

struct Call {
    name: String,
    tool: Arc<Tool>,
    start: usize,
    raw: String,
    body: String,
    lines: Lines,
    /// A close tag of another name was tried as this call's close (only the first one is, so
    /// that a body full of them costs one parse).
    tried_wrong_close: bool,
}

/// Enough of the body's line structure to tell whether a `</name>` is text inside a YAML block
/// scalar (on a line more indented than the `key: |` line that opened the block) or the call's
/// close tag. It reads the body as it grows, a line at a time (memchr to each newline), so it
/// adds nothing per byte.
#[derive(Default)]
struct Lines {
    /// The indentation of the line that opened the block scalar the body is in.
    block: Option<usize>,
    /// Where the current line starts in the body.
    line_start: usize,
    /// How far the body has been read.
    scanned: usize,
}

impl Lines {
    /// Reads what was added to `body` since the last call.
    fn update(&mut self, body: &str) {
        let bytes = body.as_bytes();
        while let Some(p) = crate::json::lexer::find1(b'\n', &bytes[self.scanned..]) {
            let nl = self.scanned + p;
            self.end_line(&bytes[self.line_start..nl]);
            self.line_start = nl + 1;
            self.scanned = nl + 1;
        }
        self.scanned = bytes.len();
    }

    fn end_line(&mut self, line: &[u8]) {
        let indent = indentation(line);
        let content = line[indent..].trim_ascii_end();
        if content.is_empty() {
            return;
        }
        // A line no more indented than the block's opener ends the block.
        if self.block.is_some_and(|b| indent <= b) {
            self.block = None;
        }
        if self.block.is_none() && opens_block(content) {
            self.block = Some(indent);
        }
    }

    /// Whether a `<` at the end of `body` (so far) is inside a block scalar.
    fn in_block(&self, body: &str) -> bool {
        self.block
            .is_some_and(|b| indentation(&body.as_bytes()[self.line_start..]) > b)
    }
}

/// Whether the end of `body` is the start of a line (column 0, after at least one line).
fn at_line_start(body: &str) -> bool {
    body.ends_with('\n') && !body.trim().is_empty()
}

/// The whitespace a line starts with.
fn indentation(line: &[u8]) -> usize {
    line.iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count()
}

/// Whether a line ending in `tail` opens a block scalar: `key: |`, `- >-`, `key: |2+`.
fn opens_block(tail: &[u8]) -> bool {
    // The indicator is among the last three bytes (at most two follow it): a long line is not
    // searched from its end to its start.
    let from = tail.len().saturating_sub(3);
    let Some(p) = tail[from..]
        .iter()
        .rposition(|b| matches!(b, b'|' | b'>'))
        .map(|p| from + p)
    else {
        return false;
    };
    let indicators = &tail[p + 1..];
    if indicators.len() > 2
        || !indicators
            .iter()
            .all(|b| matches!(b, b'-' | b'+' | b'1'..=b'9'))
    {
        return false;
    }
    let before = &tail[..p];
    match before.last() {
        Some(b' ' | b'\t') => {}
        None => return false,
        Some(_) => return false,
    }
    let before = before.trim_ascii_end();
    before.ends_with(b":") || before == b"-" || before.ends_with(b" -")
}

enum State {
    Text,
    Body(Box<Call>),
    /// A hermes call (JSON in `<tool_call>`), read by the framed engine until it is done.
    Hermes,
}

/// The hermes call a model writes instead of this format's: call envelopes in `<tool_call>`.
const HERMES_OPEN: &str = "<tool_call>";

static HERMES: FramedSyntax = FramedSyntax {
    call_end: Some("</tool_call>"),
    ..FramedSyntax::new(HERMES_OPEN, &[ArgsBegin::Array, ArgsBegin::Object])
};

/// The most whitespace looked through after `<tool_call>` for the JSON's first byte.
const MAX_HERMES_WS: usize = 64;

/// What follows a `<` in text, for a hermes call.
enum HermesOpen {
    /// `<tool_call>`, whitespace, then `{` or `[`.
    Yes,
    /// It may still become one.
    Partial,
    No,
}

fn hermes_open(text: &str, at: usize) -> HermesOpen {
    let rest = &text.as_bytes()[at..];
    let tag = HERMES_OPEN.as_bytes();
    if rest.len() < tag.len() {
        return if tag.starts_with(rest) {
            HermesOpen::Partial
        } else {
            HermesOpen::No
        };
    }
    if !rest.starts_with(tag) {
        return HermesOpen::No;
    }
    let after = &rest[tag.len()..];
    match after.iter().position(|b| !xml::is_ws(*b)) {
        Some(p) if p <= MAX_HERMES_WS && matches!(after[p], b'{' | b'[') => HermesOpen::Yes,
        None if after.len() <= MAX_HERMES_WS => HermesOpen::Partial,
        _ => HermesOpen::No,
    }
}

pub(crate) struct YamlScanner {
    tools: ToolSet,
    state: State,
    held: Holdback,
    /// Reads the hermes calls (see [`State::Hermes`]), in the output's coordinates.
    hermes: FramedScanner,
}

/// A tool's open tag at `text[j]`: plain (`<name>`), self-closed (`<name/>`, no arguments) or
/// holding its mapping (`<name\nkey: value\n/>`).
enum Open {
    Tag {
        name: String,
        len: usize,
    },
    Closed {
        name: String,
        len: usize,
        body: String,
    },
    Partial,
    /// A known tool's tag that is no call: a close tag with none open, an open tag with
    /// attributes named like arguments or a self-closing one with attributes (attributes are not
    /// arguments in this format).
    Stray {
        len: usize,
        what: &'static str,
    },
    No,
}

fn match_open(text: &str, j: usize, tools: &ToolSet) -> Open {
    match parse_tag(text, j) {
        Tag::Open {
            name,
            self_closing,
            len,
        } if tools.get(name).is_some() => {
            let attrs = &text[j + 1 + name.len()..j + len - if self_closing { 2 } else { 1 }];
            if self_closing && (attrs.trim().is_empty() || attrs.contains('\n')) {
                Open::Closed {
                    name: name.to_string(),
                    len,
                    body: attrs.to_string(),
                }
            } else if !self_closing
                && !xml::attribute_names(attrs)
                    .iter()
                    .any(|a| held_args::declares(tools.get(name), a))
            {
                // Attributes are no arguments in this format: read past (a quoted `>` in them
                // included), the body holds the arguments. One named like an argument is an
                // argument written in a way this format does not read: reported below.
                Open::Tag {
                    name: name.to_string(),
                    len,
                }
            } else {
                Open::Stray {
                    len,
                    what: "has attributes, which are not arguments in yaml-xml,",
                }
            }
        }
        Tag::Close { name, len } if tools.get(name).is_some() => Open::Stray {
            len,
            what: "closes no call",
        },
        Tag::Incomplete if xml::could_open_tool(text, j, tools) => Open::Partial,
        Tag::Incomplete if could_close_tool(text, j, tools) => Open::Partial,
        _ => Open::No,
    }
}

/// Whether the incomplete tag at `text[j]` may still become a known tool's close tag.
fn could_close_tool(text: &str, j: usize, tools: &ToolSet) -> bool {
    let rest = &text.as_bytes()[j..];
    if rest.get(1) != Some(&b'/') {
        return false;
    }
    let mut k = 2;
    while k < rest.len() && xml::is_ws(rest[k]) {
        k += 1;
    }
    let so_far = &text[j + k..];
    match so_far.find(|c: char| !c.is_ascii() || !xml::is_name_byte(c as u8)) {
        None => tools.iter().any(|t| t.name().starts_with(so_far)),
        Some(n) => tools.get(&so_far[..n]).is_some(),
    }
}

impl Steps for YamlScanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.text(text, i, base, em),
            State::Body(call) => self.body(call, text, i, base, em),
            State::Hermes => self.hermes(text, i, base, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }
}

impl Scanner for YamlScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        // Plain text with nothing held: only a `<` can start anything.
        if matches!(self.state, State::Text) && self.held.pass_plain_text(piece, em) {
            return;
        }
        drive(self, piece, em);
    }

    fn finish(&mut self, em: &mut Emitter) {
        let hold = self.held.take();
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => em.text(&hold),
            State::Body(mut call) => {
                call.body.push_str(&hold);
                call.raw.push_str(&hold);
                let end = call.start + call.raw.len();
                self.complete(&call, end, true, em);
            }
            State::Hermes => {
                em.text(&hold);
                self.hermes.finish(em);
            }
        }
    }

    fn in_call(&self) -> bool {
        !matches!(self.state, State::Text)
    }
}

impl YamlScanner {
    pub(crate) fn new(tools: ToolSet) -> Self {
        YamlScanner {
            hermes: FramedScanner::new(&HERMES, tools.clone()),
            tools,
            state: State::Text,
            held: Holdback::default(),
        }
    }

    /// A hermes call: the framed engine reads it no further than where it may stop (see
    /// `FramedScanner::quiet_run`), so that it stops where the call ends and this scanner reads
    /// on from there.
    fn hermes(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        if self.hermes.idle() {
            let passed = base + i - self.hermes.pos();
            if passed > 0 {
                self.hermes.pass_over(passed);
            }
        }
        let mut k = i;
        while k < text.len() {
            let n = self.hermes.quiet_run(&text[k..]);
            self.hermes.feed(&text[k..k + n], em);
            k += n;
            if self.hermes.idle() {
                return k;
            }
        }
        self.state = State::Hermes;
        k
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            match match_open(text, at, &self.tools) {
                Open::Tag { name, len } => {
                    em.text(&text[i..at]);
                    if let Some(tool) = self.tools.get_arc(&name).cloned() {
                        self.state = State::Body(Box::new(Call {
                            name,
                            tool,
                            start: base + at,
                            raw: text[at..at + len].to_string(),
                            body: String::new(),
                            lines: Lines::default(),
                            tried_wrong_close: false,
                        }));
                    }
                    return at + len;
                }
                Open::Closed { name, len, body } => {
                    em.text(&text[i..at]);
                    if let Some(tool) = self.tools.get_arc(&name).cloned() {
                        let call = Call {
                            name,
                            tool,
                            start: base + at,
                            raw: text[at..at + len].to_string(),
                            body,
                            lines: Lines::default(),
                            tried_wrong_close: false,
                        };
                        self.complete(&call, base + at + len, false, em);
                    }
                    return at + len;
                }
                Open::Partial => {
                    em.text(&text[i..at]);
                    return self.held.hold(text, at, base);
                }
                Open::Stray { len, what } => {
                    em.text(&text[i..at]);
                    em.error(ErrorPart::reason(
                        "malformed-tool-call",
                        format!("{} {what} and is kept as text", &text[at..at + len]),
                    ));
                    em.text(&text[at..at + len]);
                    em.span(base + at, base + at + len, SpanKind::Malformed);
                    return at + len;
                }
                Open::No => match hermes_open(text, at) {
                    HermesOpen::Yes => {
                        em.text(&text[i..at]);
                        self.state = State::Hermes;
                        return at;
                    }
                    HermesOpen::Partial => {
                        em.text(&text[i..at]);
                        return self.held.hold(text, at, base);
                    }
                    HermesOpen::No => j = at + 1,
                },
            }
        }
        em.text(&text[i..]);
        text.len()
    }

    fn body(
        &mut self,
        mut call: Box<Call>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            call.body.push_str(&text[j..at]);
            call.lines.update(&call.body);
            match parse_tag(text, at) {
                Tag::Close { name, len }
                    if name == call.name && !call.lines.in_block(&call.body) =>
                {
                    call.raw.push_str(&text[i..at + len]);
                    self.complete(&call, base + at + len, false, em);
                    return at + len;
                }
                // A wrong close tag (`</think>`) alone at the start of a line, where YAML can
                // have no text, after a body that is a whole mapping: the call's close tag
                // belongs there, so it closes the call.
                Tag::Close { len, .. }
                    if !call.tried_wrong_close
                        && at_line_start(&call.body)
                        && !call.lines.in_block(&call.body) =>
                {
                    call.tried_wrong_close = true;
                    if matches!(yaml_value(&call.body), Ok(Value::Object(_))) {
                        call.raw.push_str(&text[i..at + len]);
                        self.complete(&call, base + at + len, false, em);
                        return at + len;
                    }
                    call.body.push('<');
                    j = at + 1;
                }
                Tag::Incomplete => {
                    call.raw.push_str(&text[i..at]);
                    self.state = State::Body(call);
                    return self.held.hold(text, at, base);
                }
                _ => {
                    call.body.push('<');
                    j = at + 1;
                }
            }
        }
        call.body.push_str(&text[j..]);
        call.raw.push_str(&text[i..]);
        self.state = State::Body(call);
        text.len()
    }

    /// The body is complete (or the output ended, `unclosed`): a call if it is a mapping.
    fn complete(&mut self, call: &Call, end: usize, unclosed: bool, em: &mut Emitter) {
        let mut body_arg = None;
        let parsed = if unclosed && em.output_cut() {
            // Cut off before its close tag: the last value may be cut short, or more may have
            // followed.
            Err("the output was cut off before the close tag".to_string())
        } else if let Some(key) = unclosed.then(|| dangling_key(&call.body)).flatten() {
            // `city:` at the very end: its value never came (YAML would read a null).
            Err(format!(
                "the output ended after \"{key}:\", before its value"
            ))
        } else if call.body.trim().is_empty() {
            if unclosed {
                Err("the output ended inside the tool call".to_string())
            } else {
                Ok(Map::new())
            }
        } else {
            match yaml_value(&call.body) {
                Ok(Value::Object(map)) => Ok(map),
                // Text, not a mapping: the argument the schema leaves no doubt about, if any.
                Ok(Value::String(_)) if !unclosed && !call.body.trim_start().starts_with('<') => {
                    match held_args::body_argument(&call.tool) {
                        Some(arg) => {
                            let text = strip_separators(&call.body).to_string();
                            body_arg = Some((arg.clone(), text.clone()));
                            Ok(Map::from_iter([(arg, Value::String(text))]))
                        }
                        None => Err(
                            "the body is text, not a YAML mapping of arguments, and the \
                                     schema has no single string argument to put it in"
                                .to_string(),
                        ),
                    }
                }
                Ok(other) => Err(not_a_mapping(&other)),
                Err(e) => Err(e),
            }
        };
        let args = parsed.and_then(|map| {
            let mut w = ArgsWriter::new(Some(call.tool.clone()));
            w.set_whole(em.is_whole());
            let _ = w.begin_object();
            for (k, v) in map {
                let _ = w.key(&k);
                let _ = w.scalar(v);
            }
            let _ = w.end_object();
            if let Some((arg, text)) = body_arg.take() {
                w.record(Coercion {
                    path: String::new(),
                    from: Value::String(text.clone()),
                    to: serde_json::json!({ arg: text }),
                });
            }
            let delta = w.take_delta();
            w.finish().map(|a| (a, delta))
        });
        match args {
            Ok((args, delta)) => {
                let id = em.begin_call(&call.name);
                if let Some(d) = delta {
                    em.input_delta(&id, d);
                }
                em.end_call(id, &call.name, args);
                em.span(call.start, end, SpanKind::ToolCall);
            }
            Err(why) => {
                let reason = if unclosed {
                    "unfinished-tool-call"
                } else {
                    "malformed-tool-call"
                };
                em.error(ErrorPart {
                    tool_name: Some(call.name.clone()),
                    ..ErrorPart::reason(reason, format!("<{}>: {why}", call.name))
                });
                em.text(&call.raw);
                em.span(call.start, end, SpanKind::Malformed);
            }
        }
    }
}

/// The key of a last line `key:` with nothing after it (the output ended before its value).
fn dangling_key(body: &str) -> Option<&str> {
    let last = body.trim_end_matches([' ', '\t']).rsplit('\n').next()?;
    let key = last.strip_suffix(':')?.trim();
    (!key.is_empty() && !key.starts_with(['-', '#']) && !key.contains([' ', ':'])).then_some(key)
}

/// Parses a YAML document that must be a mapping. Plain scalars stay strings (typed later by
/// coercion), `~`/`null`/empty plain scalars are null.
#[cfg(test)]
pub(crate) fn yaml_mapping(body: &str) -> Result<Map<String, Value>, String> {
    match yaml_value(body)? {
        Value::Object(map) => Ok(map),
        other => Err(not_a_mapping(&other)),
    }
}

/// Parses a YAML document: the common flat mapping directly, anything else by the full parser.
fn yaml_value(body: &str) -> Result<Value, String> {
    if let Some(map) = flat_mapping(body) {
        return Ok(Value::Object(map));
    }
    full_value(body)
}

fn not_a_mapping(v: &Value) -> String {
    match v {
        Value::Null => "the body is empty".into(),
        other => format!(
            "the body is a YAML {}, not a mapping of arguments",
            if other.is_array() { "list" } else { "scalar" }
        ),
    }
}

#[cfg(test)]
fn full_mapping(body: &str) -> Result<Map<String, Value>, String> {
    match full_value(body)? {
        Value::Object(map) => Ok(map),
        other => Err(not_a_mapping(&other)),
    }
}

/// The common case read directly: every line `key: value` at the same indentation, each value
/// a plain scalar that YAML reads as the same string. Anything else (`None`) goes to the full
/// parser; a test checks that the two agree wherever this one answers.
fn flat_mapping(body: &str) -> Option<Map<String, Value>> {
    let mut map = Map::new();
    let mut indent: Option<usize> = None;
    for line in body.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.trim().is_empty() {
            continue;
        }
        let stripped = line.trim_start_matches(' ');
        let here = line.len() - stripped.len();
        if *indent.get_or_insert(here) != here {
            return None;
        }
        let (key, value) = stripped.split_once(": ")?;
        let key_ok = key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        let value = value.trim_matches(' ');
        let plain = !value.is_empty()
            && !value.starts_with([
                '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"',
                '%', '@', '`',
            ])
            && !value.contains(": ")
            && !value.contains(" #")
            && !value.ends_with(':')
            && !value.contains(['\t', '\r']);
        if !key_ok || !plain || map.contains_key(key) {
            return None;
        }
        let v = match value {
            "~" | "null" | "Null" | "NULL" => Value::Null,
            _ => Value::String(value.to_string()),
        };
        map.insert(key.to_string(), v);
    }
    (!map.is_empty()).then_some(map)
}

fn full_value(body: &str) -> Result<Value, String> {
    // Dash runs open a nested sequence each; refuse absurd ones before the parser nests them.
    for line in body.lines() {
        let dashes = line
            .trim_start()
            .split_inclusive(['-'])
            .take_while(|s| s.trim() == "-")
            .count();
        if dashes > MAX_DEPTH {
            return Err("the YAML is nested too deeply".into());
        }
    }
    let mut parser = Parser::new_from_str(body);
    let mut stack: Vec<(Value, Option<String>, usize)> = Vec::new();
    let mut key: Option<String> = None;
    let mut anchors: std::collections::HashMap<usize, Value> = std::collections::HashMap::new();
    let mut budget = body.len().saturating_mul(ALIAS_BUDGET_PER_BYTE).max(1024);
    let mut result: Option<Value> = None;
    let mut documents = 0;

    fn put(
        stack: &mut [(Value, Option<String>, usize)],
        key: &mut Option<String>,
        result: &mut Option<Value>,
        v: Value,
    ) -> Result<(), String> {
        match stack.last_mut() {
            Some((Value::Array(items), _, _)) => items.push(v),
            Some((Value::Object(map), _, _)) => match key.take() {
                Some(k) => {
                    map.insert(k, v);
                }
                None => {
                    let k = match v {
                        Value::String(s) => s,
                        Value::Null => "null".to_string(),
                        other => other.to_string(),
                    };
                    *key = Some(k);
                }
            },
            _ => *result = Some(v),
        }
        Ok(())
    }

    loop {
        let (event, _) = parser
            .next_token()
            .map_err(|e| format!("not valid YAML: {e}"))?;
        match event {
            Event::StreamEnd => break,
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err("more than one YAML document".into());
                }
            }
            Event::Scalar(text, style, anchor, _) => {
                let v = match style {
                    TScalarStyle::Plain
                        if matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL") =>
                    {
                        Value::Null
                    }
                    _ => Value::String(text),
                };
                if anchor > 0 {
                    anchors.insert(anchor, v.clone());
                }
                put(&mut stack, &mut key, &mut result, v)?;
            }
            Event::Alias(id) => {
                let v = anchors
                    .get(&id)
                    .cloned()
                    .ok_or("an alias to an unknown anchor")?;
                let size = v.to_string().len();
                budget = budget.checked_sub(size).ok_or("aliases expand too much")?;
                put(&mut stack, &mut key, &mut result, v)?;
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err("the YAML is nested too deeply".into());
                }
                let container = if matches!(event, Event::SequenceStart(..)) {
                    Value::Array(Vec::new())
                } else {
                    Value::Object(Map::new())
                };
                stack.push((container, key.take(), anchor));
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((v, parent_key, anchor)) = stack.pop() {
                    if anchor > 0 {
                        anchors.insert(anchor, v.clone());
                    }
                    key = parent_key;
                    put(&mut stack, &mut key, &mut result, v)?;
                }
            }
            _ => {}
        }
    }
    Ok(result.unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;
    use serde_json::json;

    use super::*;

    #[test]
    fn mappings_keep_plain_scalars_as_written() {
        let m = yaml_mapping("city: 007\ndays: 3\nok: true\nnone: ~\nlist:\n  - a\n  - 2\nnested:\n  x: 'q'\ntext: |\n  l1\n  l2\n").unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"city":"007","days":"3","ok":"true","none":null,"list":["a","2"],"nested":{"x":"q"},"text":"l1\nl2\n"})
        );
    }

    #[test]
    fn non_mappings_and_bad_yaml_are_errors() {
        assert!(yaml_mapping("- a\n- b").unwrap_err().contains("list"));
        assert!(yaml_mapping("just words").unwrap_err().contains("scalar"));
        assert!(yaml_mapping("[invalid: yaml: syntax:").is_err());
        assert!(yaml_mapping(&"- ".repeat(50_000)).is_err());
        assert!(yaml_mapping(&format!("a: {}", "[".repeat(100_000))).is_err());
        let bomb = "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d]\n";
        assert!(yaml_mapping(bomb).unwrap_err().contains("aliases"));
    }

    #[test]
    fn the_fast_path_agrees_with_the_full_parser() {
        let bodies = [
            "city: Paris\ndays: 3\n",
            "  city: New York\n  metric: true\n",
            "path: /tmp/f1.txt\nn: 1\nbody: xxxx yyy\n",
            "a: ~\nb: null\nc: 007\nd: 1e3\ne: x-y\n",
            "url: http://x.y/z?a=b\nk_2-x: é ü 😀\n",
            "a: b c  \r\nd: e\n",
        ];
        for body in bodies {
            let fast =
                flat_mapping(body).unwrap_or_else(|| panic!("{body:?} not read by the fast path"));
            assert_eq!(fast, full_mapping(body).unwrap(), "{body:?}");
        }
        // Left to the full parser.
        for body in [
            "a: [1, 2]",
            "a: |\n  x",
            "a: b: c",
            "a: 'q'",
            "a: x # c",
            "a:\n  b: 1",
            "a: 1\na: 2",
            "- a",
            "a: b\n c: d",
            "1a: x",
        ] {
            assert!(flat_mapping(body).is_none(), "{body:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_fast_path_never_disagrees(lines in proptest::collection::vec(("[a-z_][a-z0-9_-]{0,5}", "[ -~]{1,12}"), 1..5)) {
            let body: String = lines.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
            if let Some(fast) = flat_mapping(&body) {
                proptest::prop_assert_eq!(Ok(fast), full_mapping(&body), "{:?}", body);
            }
        }
    }

    standard_cases!(YamlScanner::new;
        "<get_weather>\ncity: Paris\n</get_weather>",
        "<get_weather>\ncity: Pa",
        "<get_weather>\n- Paris\n</get_weather>");
}
