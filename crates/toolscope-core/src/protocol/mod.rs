//! Text protocols for models without native tool calling.
//!
//! A protocol renders the tool list into a system prompt, renders past tool calls and tool
//! results into history text, and parses the model's output back into parts, whole or as a
//! stream. The whole-text parse runs the stream parser over one chunk, so the two paths cannot
//! disagree; the stream parser itself is written so that any chunking gives the same parts
//! (up to how text and argument deltas are split).
//!
//! Every protocol is one file implementing one interface (its names, its family's conventions,
//! how to write and read it) and one line of the registry; [`Protocol::all`] lists them in
//! registry order.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::part::{ErrorPart, Part};
use crate::tool::ToolSet;

mod detect;
mod emit;
mod end_tokens;
mod envelope;
mod fences;
mod framed;
mod held_args;
mod holdback;
mod json_scanner;
mod names;
mod prompt;
mod python_calls;
mod reasoning;
mod spec;
mod utf8;
mod xml;

use emit::Emitter;
use end_tokens::EndTokens;
use fences::CallFences;
use json_scanner::{JsonScanner, JsonScannerConfig};
use reasoning::ReasoningSplitter;
use spec::{ProtocolSpec, Scanner};
use utf8::Utf8Decoder;

pub use detect::{Detected, Detector};
pub use spec::{Delimiters, Reasoning};

// The formats, one file each (written out, so that rustfmt and every tool see them).
mod apertus;
mod command_r;
mod deepseek_dsml;
mod deepseek_v3;
mod deepseek_v31;
mod functools;
mod gemma;
mod gemma4;
mod glm45;
mod glm47;
mod granite;
mod harmony;
mod hermes;
mod kimi_k2;
mod lfm2;
mod llama3_json;
mod minimax_m2;
mod mistral;
mod morph_xml;
mod nemotron;
mod pythonic;
mod qwen3_coder;
mod seed_oss;
mod xlam;
mod yaml_xml;

/// The registry: one line per protocol, in the order pickers list them. Each entry is the type
/// in the protocol's file that implements [`ProtocolSpec`]; everything that lists protocols
/// iterates this.
static REGISTRY: &[&dyn ProtocolSpec] = &[
    &hermes::Hermes,
    &gemma::Gemma,
    &morph_xml::MorphXml,
    &yaml_xml::YamlXml,
    &qwen3_coder::Qwen3Coder,
    &deepseek_v3::DeepseekV3,
    &deepseek_v31::DeepseekV31,
    &mistral::Mistral,
    &granite::Granite,
    &nemotron::Nemotron,
    &functools::Functools,
    &command_r::CommandR,
    &apertus::Apertus,
    &llama3_json::Llama3Json,
    &harmony::Harmony,
    &kimi_k2::KimiK2,
    &xlam::Xlam,
    &seed_oss::SeedOss,
    &minimax_m2::MinimaxM2,
    &deepseek_dsml::DeepseekDsml,
    &glm45::Glm45,
    &glm47::Glm47,
    &pythonic::Pythonic,
    &lfm2::Lfm2,
    &gemma4::Gemma4,
];

/// A text protocol with its settings. Two protocols are equal when they have the same name and
/// the same settings.
#[derive(Clone)]
pub struct Protocol {
    spec: &'static dyn ProtocolSpec,
    /// Changed delimiters, for a protocol whose delimiters can be changed; `None`: its own.
    delimiters: Option<Delimiters>,
    /// Whether the output starts inside reasoning; `None`: the family's default.
    reasoning_open: Option<bool>,
}

impl Protocol {
    /// Every protocol of the registry, with its default settings, in registry order.
    pub fn all() -> Vec<Protocol> {
        REGISTRY.iter().map(|s| Protocol::of(*s)).collect()
    }

    fn of(spec: &'static dyn ProtocolSpec) -> Protocol {
        Protocol {
            spec,
            delimiters: None,
            reasoning_open: None,
        }
    }

    /// The names of every protocol, in registry order.
    pub fn names() -> Vec<&'static str> {
        REGISTRY.iter().map(|s| s.name()).collect()
    }

    /// Every name the command line accepts: the names, then the aliases.
    pub fn cli_names() -> Vec<&'static str> {
        let mut names = Self::names();
        names.extend(REGISTRY.iter().flat_map(|s| s.aliases().iter().copied()));
        names
    }

    /// The protocol with this name or alias, with its default settings.
    pub fn from_name(name: &str) -> Result<Self, String> {
        REGISTRY
            .iter()
            .find(|s| s.name() == name || s.aliases().contains(&name))
            .map(|s| Protocol::of(*s))
            .ok_or_else(|| {
                format!(
                    "unknown protocol \"{name}\" (expected one of: {})",
                    Self::names().join(", ")
                )
            })
    }

    /// The name used on the command line and in sessions.
    pub fn name(&self) -> &'static str {
        self.spec.name()
    }

    /// Other names accepted for it.
    pub fn aliases(&self) -> &'static [&'static str] {
        self.spec.aliases()
    }

    /// The model families that write this format.
    pub fn families(&self) -> &'static str {
        self.spec.families()
    }

    /// How the family marks reasoning.
    pub fn reasoning(&self) -> Reasoning {
        self.spec.reasoning()
    }

    /// Whether the output is read as starting inside reasoning (templates that open the think
    /// block themselves): the setting if one was made, else the family's default. Always false
    /// for a protocol without reasoning markers.
    pub fn reasoning_open(&self) -> bool {
        let r = self.spec.reasoning();
        r.markers.is_some() && self.reasoning_open.unwrap_or(r.starts_inside)
    }

    /// The reasoning-open setting as made (`None`: the family's default).
    pub fn reasoning_open_setting(&self) -> Option<bool> {
        self.reasoning_open
    }

    /// This protocol, reading outputs as starting inside reasoning (`Some(true)`), outside
    /// (`Some(false)`), or as the family's template does (`None`).
    pub fn with_reasoning_open(mut self, open: Option<bool>) -> Self {
        self.reasoning_open = open.filter(|o| *o != self.spec.reasoning().starts_inside);
        self
    }

    /// Reasoning as the family writes it in its output (see [`Reasoning`]), for a model that
    /// simulates the family; `None` when the family does not reason in text.
    pub fn format_reasoning(&self, text: &str) -> Option<String> {
        self.spec.format_reasoning(self, text)
    }

    /// The delimiters in use, for a protocol whose delimiters can be changed.
    pub fn delimiters(&self) -> Option<Delimiters> {
        self.delimiters.clone().or_else(|| self.spec.delimiters())
    }

    /// This protocol with other delimiters; an error for a protocol whose delimiters are fixed.
    pub fn with_delimiters(mut self, d: Delimiters) -> Result<Self, String> {
        let Some(own) = self.spec.delimiters() else {
            return Err(format!(
                "the {} protocol's delimiters cannot be changed",
                self.name()
            ));
        };
        if d.call_start.is_empty() || d.call_end.is_empty() {
            return Err("a call delimiter cannot be empty".into());
        }
        self.delimiters = (d != own).then_some(d);
        Ok(self)
    }

    /// The system prompt that teaches a model the tools and this protocol's call format, in the
    /// family's own convention.
    pub fn system_prompt(&self, tools: &ToolSet) -> String {
        self.spec.system_prompt(self, tools)
    }

    /// A past tool call as the model would have written it (for conversation history).
    pub fn format_call(&self, name: &str, input: &Value) -> String {
        self.spec.format_call(self, name, input)
    }

    /// Several calls of one answer, joined the family's way.
    pub fn format_calls(&self, calls: &[(&str, &Value)]) -> String {
        self.spec.format_calls(self, calls)
    }

    /// A tool result as it is shown to the model in the conversation.
    pub fn format_result(&self, name: &str, result: &str) -> String {
        self.spec.format_result(self, name, result)
    }

    /// Several results answering one turn's calls, joined the family's way.
    pub fn format_results(&self, results: &[(&str, &str)]) -> String {
        self.spec.format_results(self, results)
    }

    /// The payload of a result written by [`Protocol::format_result`].
    pub fn read_result(&self, text: &str) -> String {
        self.spec.read_result(self, text)
    }

    /// A call written wrong in a way no tolerance repairs, so that a user can see how the
    /// parser reports it.
    pub fn malformed_call(&self, name: &str, input: &Value) -> String {
        self.spec.malformed_call(self, name, input)
    }

    /// Recognises a system prompt made by [`Protocol::system_prompt`] of any protocol: which
    /// protocol and which tools (used by a simulated model, which only sees the wire request).
    pub fn detect_from_prompt(system: &str) -> Option<(Protocol, ToolSet)> {
        REGISTRY.iter().find_map(|s| s.read_prompt(system))
    }

    /// `--protocol auto` on a whole output: the protocol its first marker identifies, and why
    /// (see [`Detector`] for the rules).
    pub fn detect(tools: &ToolSet, text: &[u8]) -> Detected {
        let mut d = detect::detect(tools, text);
        if d.reason == detect::PLAIN_TEXT {
            let calls = d.protocol.stream_parser(tools).parse_whole(text).parts;
            let calls = calls
                .iter()
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count();
            if calls > 0 {
                d.reason = detect::found_without_marker(&d.protocol, calls);
            }
        }
        d
    }

    /// A stream parser for this protocol and these tools.
    pub fn stream_parser(&self, tools: &ToolSet) -> StreamParser {
        let mut parser = StreamParser::with_scanner(self.spec.scanner(self, tools));
        let r = self.spec.reasoning();
        if let Some((open, close)) = r.markers {
            let splitter =
                ReasoningSplitter::new(open, close, r.calls_inside, self.reasoning_open());
            splitter.begin(&mut parser.em);
            parser.reasoning = Some(splitter);
        }
        if !self.spec.reads_end_tokens() {
            parser.end_tokens = EndTokens::new(self.spec.end_tokens());
        }
        parser.fences = CallFences::new(&self.spec.markers(tools)).map(Box::new);
        parser
    }

    /// The family's end-of-turn and stop tokens (`<|im_end|>`, `<｜end▁of▁sentence｜>`): format,
    /// not text. The parser takes them out of the text; they stay in the raw output, spanned as
    /// markup.
    pub fn end_tokens(&self) -> &'static [&'static str] {
        self.spec.end_tokens()
    }

    /// Parses a whole text (bytes; invalid UTF-8 is replaced and reported). Runs the stream
    /// parser over one chunk, so the two paths cannot disagree.
    pub fn parse_generated(&self, tools: &ToolSet, text: &[u8]) -> Parsed {
        self.stream_parser(tools).parse_whole(text)
    }
}

impl PartialEq for Protocol {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
            && self.delimiters == other.delimiters
            && self.reasoning_open == other.reasoning_open
    }
}

impl Eq for Protocol {}

impl std::hash::Hash for Protocol {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
        self.delimiters.hash(state);
        self.reasoning_open.hash(state);
    }
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Protocol");
        d.field("name", &self.name());
        if let Some(delims) = &self.delimiters {
            d.field("delimiters", delims);
        }
        if let Some(open) = self.reasoning_open {
            d.field("reasoning_open", &open);
        }
        d.finish()
    }
}

/// How a protocol is saved in a session: `{"name": "hermes", "call_start": …, …}`; the
/// delimiters are written for a protocol that has them, `reasoningOpen` when it was set.
#[derive(Serialize, Deserialize)]
struct SavedProtocol {
    name: String,
    #[serde(
        default,
        rename = "reasoningOpen",
        skip_serializing_if = "Option::is_none"
    )]
    reasoning_open: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    call_start: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    call_end: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response_start: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    response_end: Option<String>,
}

impl Serialize for Protocol {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.delimiters();
        SavedProtocol {
            name: self.name().to_string(),
            reasoning_open: self.reasoning_open,
            call_start: d.as_ref().map(|d| d.call_start.clone()),
            call_end: d.as_ref().map(|d| d.call_end.clone()),
            response_start: d.as_ref().map(|d| d.response_start.clone()),
            response_end: d.as_ref().map(|d| d.response_end.clone()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Protocol {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let saved = SavedProtocol::deserialize(d)?;
        let p = Protocol::from_name(&saved.name)
            .map_err(D::Error::custom)?
            .with_reasoning_open(saved.reasoning_open);
        let Some(own) = p.spec.delimiters() else {
            return Ok(p);
        };
        let d = Delimiters {
            call_start: saved.call_start.unwrap_or(own.call_start),
            call_end: saved.call_end.unwrap_or(own.call_end),
            response_start: saved.response_start.unwrap_or(own.response_start),
            response_end: saved.response_end.unwrap_or(own.response_end),
        };
        p.with_delimiters(d).map_err(D::Error::custom)
    }
}

/// A byte range of the parsed text and what it became.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    /// The first byte of the range: an offset into the decoded text, in which invalid UTF-8
    /// stands replaced by U+FFFD.
    pub start: usize,
    /// One past the last byte; always greater than `start`.
    pub end: usize,
    /// What the markup in the range became.
    pub kind: SpanKind,
}

/// What a [`Span`] of model output became, for highlighting the raw text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpanKind {
    /// Markup that became a tool call.
    ToolCall,
    /// Markup that looked like a tool call but could not be parsed (kept as text).
    Malformed,
    /// Reasoning with its markers.
    Reasoning,
    /// Format markup that became neither text, reasoning nor a call: harmony's message headers
    /// and end tokens around text and reasoning.
    Markup,
}

/// The result of parsing a whole text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    /// `text`, `tool-call` and `error` parts, in order.
    pub parts: Vec<Part>,
    /// The byte ranges that became tool calls or were malformed markup, in order.
    pub spans: Vec<Span>,
}

/// A stream parser for a tool-choice answer: the JSON `{"name": …, "arguments": {…}}` a model
/// writes under a response format that forces a call (`required` or a named tool). Text around
/// the JSON stays text; JSON that is not a valid call is kept as text with an `error` part.
pub fn answer_parser(tools: &ToolSet) -> StreamParser {
    StreamParser::with_scanner(Box::new(JsonScanner::new(
        tools.clone(),
        JsonScannerConfig {
            call_start: None,
            call_end: String::new(),
            loose_json: true,
            commit_loose: true,
            alt_start: None,
            bare_arrays: false,
        },
    )))
}

/// An incremental parser of one model output. Feed it chunks of any size (byte chunks may split
/// UTF-8 sequences), then call [`StreamParser::finish`]. It emits `text-start/delta/end`,
/// `tool-input-start/delta/end`, `tool-call` and `error` parts, never `finish`.
pub struct StreamParser {
    decoder: Utf8Decoder,
    // One indirect call per piece of text (not per byte): the cost of a table of protocols.
    scanner: Box<dyn Scanner>,
    /// Splits reasoning off before the scanner, for a protocol with reasoning markers.
    reasoning: Option<ReasoningSplitter>,
    /// Takes the family's end tokens out first, for a protocol that declares them.
    end_tokens: Option<EndTokens>,
    /// Then code fences around calls.
    fences: Option<Box<CallFences>>,
    em: Emitter,
    invalid_reported: bool,
    finished: bool,
}

impl StreamParser {
    pub(crate) fn with_scanner(scanner: Box<dyn Scanner>) -> Self {
        StreamParser {
            decoder: Utf8Decoder::new(),
            scanner,
            reasoning: None,
            end_tokens: None,
            fences: None,
            em: Emitter::new(),
            invalid_reported: false,
            finished: false,
        }
    }

    /// Parses the next chunk of bytes and appends the parts it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        let StreamParser {
            decoder,
            scanner,
            reasoning,
            end_tokens,
            fences,
            em,
            invalid_reported,
            ..
        } = self;
        em.attach(out);
        match decoder.whole(chunk) {
            // The common case inline: a whole valid chunk (one byte, often).
            Some(piece) if !piece.is_empty() => {
                feed_text(end_tokens, fences, reasoning, scanner.as_mut(), em, piece)
            }
            Some(_) => {}
            None => decoder.decode(chunk, |piece, invalid_at| {
                feed_text(end_tokens, fences, reasoning, scanner.as_mut(), em, piece);
                if let Some(at) = invalid_at {
                    report_invalid(invalid_reported, at, em);
                }
            }),
        }
        em.detach(out);
    }

    /// Parses the next chunk of text.
    pub fn push_str(&mut self, chunk: &str, out: &mut Vec<Part>) {
        self.push(chunk.as_bytes(), out)
    }

    /// Ends the stream: closes open text, recovers or reports an unfinished call. The output
    /// ended as the model meant it to (a stop): a call missing only its close marker at the end
    /// is recovered, as the formats' tolerances say.
    pub fn finish(&mut self, out: &mut Vec<Part>) {
        self.finish_as(false, out)
    }

    /// Ends a stream that was cut off (the token limit, a content filter, a broken stream): a
    /// call is finished only when its close marker arrived, or, in a format whose call body is
    /// one JSON value, when that value closed. Any other call still open is reported as an
    /// `unfinished-tool-call` error with its markup kept as text, never recovered, so that a
    /// call with arguments cut short is never taken for a complete one.
    pub fn finish_cut(&mut self, out: &mut Vec<Part>) {
        self.finish_as(true, out)
    }

    fn finish_as(&mut self, cut: bool, out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        self.finished = true;
        if cut {
            self.em.set_output_cut();
        }
        let StreamParser {
            decoder,
            scanner,
            reasoning,
            end_tokens,
            fences,
            em,
            invalid_reported,
            ..
        } = self;
        em.attach(out);
        decoder.finish(|piece, invalid_at| {
            feed_text(end_tokens, fences, reasoning, scanner.as_mut(), em, piece);
            if let Some(at) = invalid_at {
                report_invalid(invalid_reported, at, em);
            }
        });
        if let Some(f) = end_tokens {
            f.finish(em, |piece, em| {
                feed_fenced(fences, reasoning, scanner.as_mut(), em, piece)
            });
        }
        if let Some(f) = fences {
            f.finish(em, |piece, em| {
                if !piece.is_empty() {
                    feed_piece(reasoning, scanner.as_mut(), em, piece);
                }
                scanner.in_args()
            });
        }
        match reasoning {
            Some(r) => r.finish(scanner.as_mut(), em),
            None => scanner.finish(em),
        }
        em.end_output();
        em.detach(out);
    }

    /// The spans recognised so far, in order; byte offsets into the decoded text.
    pub fn spans(&self) -> &[Span] {
        self.em.spans()
    }

    /// How many tool calls were completed so far.
    pub fn call_count(&self) -> usize {
        self.em.call_count()
    }

    /// The writer of this parser's parts, shared with a caller that writes into the same answer
    /// (ids then come from one count, and blocks never overlap). Only between pushes.
    pub(crate) fn writer(&mut self) -> &mut crate::part::PartWriter {
        self.em.writer()
    }

    /// Parses a whole text and gives the generate parts (`text`, `tool-call`, `error`).
    pub fn parse_whole(mut self, text: &[u8]) -> Parsed {
        let mut stream = Vec::new();
        self.push(text, &mut stream);
        self.finish(&mut stream);
        Parsed {
            parts: generate_parts(stream),
            spans: self.em.spans().to_vec(),
        }
    }
}

/// A stream parser for `--protocol auto`: holds the output back until a marker identifies the
/// protocol (or the output ends), then parses all of it, from the first byte, exactly as that
/// protocol's [`StreamParser`] does.
pub struct AutoParser {
    tools: ToolSet,
    reasoning_open: Option<bool>,
    detector: Detector,
    held: Vec<u8>,
    parser: Option<(Detected, StreamParser)>,
    /// The writer of parts written beside the parser before the choice (a wire's native
    /// reasoning); the chosen parser takes it over, so that ids come from one count.
    writer: crate::part::PartWriter,
}

impl AutoParser {
    /// `reasoning_open` overrides the chosen family's default (`None`: its default).
    pub fn new(tools: &ToolSet, reasoning_open: Option<bool>) -> Self {
        AutoParser {
            tools: tools.clone(),
            reasoning_open,
            detector: Detector::new(tools),
            held: Vec::new(),
            parser: None,
            writer: crate::part::PartWriter::new(),
        }
    }

    /// Parses the next chunk. Gives the choice on the push that makes it (once).
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Part>) -> Option<Detected> {
        if let Some((_, parser)) = &mut self.parser {
            parser.push(chunk, out);
            return None;
        }
        self.held.extend_from_slice(chunk);
        let detected = self.detector.push(chunk).cloned()?;
        Some(self.start(detected, out))
    }

    /// Ends the output. Gives the choice if it is made only now.
    pub fn finish(&mut self, out: &mut Vec<Part>) -> Option<Detected> {
        self.finish_as(false, out)
    }

    /// Ends an output that was cut off (see [`StreamParser::finish_cut`]).
    pub fn finish_cut(&mut self, out: &mut Vec<Part>) -> Option<Detected> {
        self.finish_as(true, out)
    }

    fn finish_as(&mut self, cut: bool, out: &mut Vec<Part>) -> Option<Detected> {
        let made_now = match self.parser {
            Some(_) => None,
            None => {
                let detected = self.detector.finish();
                Some(self.start(detected, out))
            }
        };
        if let Some((detected, parser)) = &mut self.parser {
            parser.finish_as(cut, out);
            let calls = parser.call_count();
            if calls > 0 && detected.reason == detect::PLAIN_TEXT {
                detected.reason = detect::found_without_marker(&detected.protocol, calls);
            }
        }
        made_now.map(|mut d| {
            if let Some((chosen, _)) = &self.parser {
                d.reason.clone_from(&chosen.reason);
            }
            d
        })
    }

    /// The choice, once made.
    pub fn detected(&self) -> Option<&Detected> {
        self.parser.as_ref().map(|(d, _)| d)
    }

    /// How many tool calls were completed so far.
    pub fn call_count(&self) -> usize {
        self.parser.as_ref().map_or(0, |(_, p)| p.call_count())
    }

    /// The spans recognised so far (none before the choice); byte offsets into the output.
    pub fn spans(&self) -> &[Span] {
        self.parser.as_ref().map_or(&[], |(_, p)| p.spans())
    }

    /// The output's reasoning arrived apart from it (a wire's own reasoning field): unless the
    /// caller set it, the text is then read as starting outside reasoning, whatever the chosen
    /// family's default. Takes effect only before the choice.
    pub fn reasoning_given_apart(&mut self) {
        if self.parser.is_none() && self.reasoning_open.is_none() {
            self.reasoning_open = Some(false);
        }
    }

    /// The writer of this output's parts, shared with a caller that writes into the same answer
    /// (the chosen parser's, once there is one). Only between pushes.
    pub(crate) fn writer(&mut self) -> &mut crate::part::PartWriter {
        match &mut self.parser {
            Some((_, parser)) => parser.writer(),
            None => &mut self.writer,
        }
    }

    fn start(&mut self, detected: Detected, out: &mut Vec<Part>) -> Detected {
        let protocol = match self.reasoning_open {
            Some(open) => detected.protocol.clone().with_reasoning_open(Some(open)),
            None => detected.protocol.clone(),
        };
        let mut parser = protocol.stream_parser(&self.tools);
        *parser.writer() = std::mem::take(&mut self.writer);
        parser.push(&std::mem::take(&mut self.held), out);
        self.parser = Some((detected.clone(), parser));
        detected
    }
}

/// A decoded piece through the end-token filter, when the protocol has one.
#[inline(always)]
fn feed_text(
    end_tokens: &mut Option<EndTokens>,
    fences: &mut Option<Box<CallFences>>,
    reasoning: &mut Option<ReasoningSplitter>,
    scanner: &mut dyn Scanner,
    em: &mut Emitter,
    piece: &str,
) {
    match end_tokens {
        Some(f) => f.feed(piece, em, |p, em| {
            feed_fenced(fences, reasoning, scanner, em, p)
        }),
        None => feed_fenced(fences, reasoning, scanner, em, piece),
    }
}

/// A piece through the fence filter, when there is one.
#[inline(always)]
fn feed_fenced(
    fences: &mut Option<Box<CallFences>>,
    reasoning: &mut Option<ReasoningSplitter>,
    scanner: &mut dyn Scanner,
    em: &mut Emitter,
    piece: &str,
) {
    match fences {
        Some(f) => f.feed(piece, em, |p, em| {
            if !p.is_empty() {
                feed_piece(reasoning, scanner, em, p);
            }
            scanner.in_args()
        }),
        None => feed_piece(reasoning, scanner, em, piece),
    }
}

/// A decoded piece to the reasoning splitter, or straight to the scanner.
#[inline(always)]
fn feed_piece(
    reasoning: &mut Option<ReasoningSplitter>,
    scanner: &mut dyn Scanner,
    em: &mut Emitter,
    piece: &str,
) {
    match reasoning {
        Some(r) => r.feed(piece, scanner, em),
        None => scanner.feed(piece, em),
    }
}

fn report_invalid(reported: &mut bool, at: usize, em: &mut Emitter) {
    if !*reported {
        *reported = true;
        em.error(ErrorPart::reason(
            "invalid-utf8",
            format!(
                "the output is not valid UTF-8 at byte {at}; invalid bytes are shown as U+FFFD"
            ),
        ));
    }
}

/// Turns stream parts into generate parts: text deltas merged into `text` parts and reasoning
/// deltas into `reasoning` parts, between tool calls and errors.
pub fn generate_parts(stream: Vec<Part>) -> Vec<Part> {
    let mut out = Vec::new();
    // The run of text or reasoning being gathered; the other kind, a call or an error ends it.
    let mut text = String::new();
    let mut reasoning = String::new();
    fn flush(out: &mut Vec<Part>, text: &mut String, reasoning: &mut String) {
        if !reasoning.is_empty() {
            out.push(Part::Reasoning {
                text: std::mem::take(reasoning),
            });
        }
        if !text.is_empty() {
            out.push(Part::Text {
                text: std::mem::take(text),
            });
        }
    }
    for part in stream {
        match part {
            Part::TextDelta { delta, .. } => {
                if !reasoning.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                text.push_str(&delta);
            }
            Part::Text { text: t } => {
                if !reasoning.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                text.push_str(&t);
            }
            Part::ReasoningDelta { delta, .. } => {
                if !text.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                reasoning.push_str(&delta);
            }
            Part::Reasoning { text: t } => {
                if !text.is_empty() {
                    flush(&mut out, &mut text, &mut reasoning);
                }
                reasoning.push_str(&t);
            }
            Part::ToolCall(_) | Part::Error(_) => {
                flush(&mut out, &mut text, &mut reasoning);
                out.push(part);
            }
            _ => {}
        }
    }
    flush(&mut out, &mut text, &mut reasoning);
    out
}

/// What the protocols' own tests share: tools, and a parse checked at every split.
#[cfg(test)]
pub(crate) mod tests_support {
    use serde_json::json;

    use super::Protocol;
    use crate::part::{Collapsed, Part};
    use crate::tool::{ToolDef, ToolSet};

    /// `get_weather(city, days, unit)`, `search(query)`, `write_file(path, content)`.
    pub(crate) fn tools() -> ToolSet {
        ToolSet::new(vec![
            ToolDef::new(
                "get_weather",
                "Current weather for a city",
                json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]}},"required":["city"]}),
            ),
            ToolDef::new(
                "search",
                "Search the web",
                json!({"type":"object","properties":{"query":{"type":"string"}}}),
            ),
            ToolDef::new(
                "write_file",
                "Write a file",
                json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
            ),
        ])
        .expect("valid tools")
    }

    fn run(p: &Protocol, pieces: &[&[u8]]) -> Vec<Part> {
        let mut parser = p.stream_parser(&tools());
        let mut out = Vec::new();
        for piece in pieces {
            parser.push(piece, &mut out);
        }
        parser.finish(&mut out);
        out
    }

    /// The collapsed parse of `text`, after checking that generate, every split into two
    /// pieces, and one byte at a time all give it.
    /// The cases every protocol answers the same way, written with the protocol's own
    /// renderers: one call, two parallel calls, text before and after, reasoning before the call,
    /// a call split at every byte, a call whose end markup is missing at the end of the output,
    /// a malformed body (text and an error part), an unknown tool (a call and an error part).
    pub(crate) fn standard_cases(p: &Protocol) {
        let paris = serde_json::json!({"city": "Paris"});
        let query = serde_json::json!({"query": "rust"});
        let one = p.format_call("get_weather", &paris);
        let c = every_split(p, &one);
        assert_eq!(c.calls, [("get_weather".into(), paris.clone())], "{one}");
        assert!(c.errors.is_empty(), "{one}: {:?}", c.errors);
        assert_eq!(c.text.trim(), "", "{one}");

        let two = p.format_calls(&[("get_weather", &paris), ("search", &query)]);
        let c = every_split(p, &two);
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), paris.clone()),
                ("search".into(), query.clone())
            ],
            "{two}"
        );
        assert!(c.errors.is_empty(), "{two}: {:?}", c.errors);

        let around = format!("Let me look. {one}\nDone.");
        let c = every_split(p, &around);
        assert_eq!(c.calls.len(), 1, "{around}");
        assert!(
            c.text.starts_with("Let me look.") && c.text.ends_with("Done."),
            "{around}"
        );

        if let Some(thought) = p.format_reasoning("Paris needs the weather tool.") {
            let text = format!("{thought}{one}");
            let c = every_split(p, &text);
            assert!(
                c.reasoning.contains("Paris needs the weather tool."),
                "{text}"
            );
            assert_eq!(c.calls.len(), 1, "{text}");
            assert!(!c.text.contains("weather tool"), "{text}");
        }

        // The call's end markup cut off: everything after the JSON's last bracket, or, in a
        // markup format, after the argument's own close tag (or its value, where the argument
        // has none).
        let value_end = one.rfind("Paris").expect("the value is written") + "Paris".len();
        let cut = match one.rfind(['}', ']']).filter(|j| *j > value_end) {
            Some(j) => one[..j + 1].to_string(),
            None => {
                let rest = &one[value_end..];
                let nl = usize::from(rest.starts_with('\n'));
                let close = rest[nl..]
                    .starts_with("</")
                    .then(|| rest[nl..].find('>'))
                    .flatten()
                    .map(|k| value_end + nl + k + 1)
                    .filter(|end| *end < one.trim_end().len());
                one[..close.unwrap_or(value_end)].to_string()
            }
        };
        // (A format whose call ends where its JSON ends has no end markup to cut.)
        if cut.len() < one.len() {
            let c = every_split(p, &cut);
            assert_eq!(c.calls, [("get_weather".into(), paris.clone())], "{cut}");
            assert!(c.errors.is_empty(), "{cut}: {:?}", c.errors);
        }

        let bad = p.malformed_call("get_weather", &paris);
        let c = every_split(p, &bad);
        assert!(c.calls.is_empty(), "{bad}");
        assert!(!c.errors.is_empty(), "{bad}");
        assert_eq!(c.text, bad, "nothing lost");

        let unknown = p.format_call("launch_rocket", &serde_json::json!({"stage": 1}));
        let c = every_split(p, &unknown);
        if unknown.contains("<launch_rocket>") {
            // A format whose element is named after the tool: only a known tool's name opens
            // a call, and an unknown one's markup is text.
            assert!(c.calls.is_empty(), "{unknown}");
            assert_eq!(c.text, unknown, "nothing lost");
        } else {
            // Without a schema a markup value stays the text it is (`"1"`); JSON keeps `1`.
            let stage = c.calls.first().map(|(_, v)| v["stage"].clone());
            assert_eq!(c.calls.len(), 1, "{unknown}");
            assert_eq!(c.calls[0].0, "launch_rocket", "{unknown}");
            assert!(
                stage == Some(serde_json::json!(1)) || stage == Some(serde_json::json!("1")),
                "{unknown}: {:?}",
                c.calls
            );
            assert_eq!(c.errors, ["unknown-tool"], "{unknown}");
        }

        // The prompt reads back as this protocol with these tools; results read back.
        let prompt = p.system_prompt(&tools());
        let (back, set) = Protocol::detect_from_prompt(&prompt).expect("the prompt is recognised");
        assert_eq!(back.with_reasoning_open(p.reasoning_open_setting()), *p);
        assert_eq!(set.to_json(), tools().to_json());
        assert_eq!(
            p.read_result(&p.format_result("get_weather", "18 degrees")),
            "18 degrees"
        );
    }

    /// Every protocol of the registry answers the standard cases (none opts in or out).
    #[test]
    fn every_protocol_runs_the_standard_cases() {
        let mut failed = Vec::new();
        for p in Protocol::all() {
            let name = p.name();
            // The calls are written outside reasoning (a family whose template opens it, such
            // as minimax-m2, is read here as an output that does not start inside it).
            let p = p.with_reasoning_open(Some(false));
            if let Err(e) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| standard_cases(&p)))
            {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failed.push(format!(
                    "{name}: {}",
                    why.chars().take(400).collect::<String>()
                ));
            }
        }
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }

    pub(crate) fn every_split(p: &Protocol, text: &str) -> Collapsed {
        let bytes = text.as_bytes();
        let want = Collapsed::of(&p.parse_generated(&tools(), bytes).parts);
        assert_eq!(Collapsed::of(&run(p, &[bytes])), want, "stream, one chunk");
        for cut in 1..bytes.len() {
            let got = Collapsed::of(&run(p, &[&bytes[..cut], &bytes[cut..]]));
            assert_eq!(got, want, "split at {cut} of {text:?}");
        }
        let ones: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(Collapsed::of(&run(p, &ones)), want, "one byte at a time");
        want
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::Collapsed;
    use crate::tool::ToolDef;
    use serde_json::json;

    /// `--protocol auto` without any marker says what the chosen protocol found: calls read
    /// from JSON envelopes are not "plain text" (the line said so, then a call followed).
    #[test]
    fn auto_without_a_marker_says_what_it_found() {
        let tools = tools();
        let fenced = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"/a\"}}\n```";
        for text in [fenced, "plain words"] {
            let whole = Protocol::detect(&tools, text.as_bytes());
            let mut auto = AutoParser::new(&tools, None);
            let mut out = Vec::new();
            for b in text.as_bytes() {
                assert!(auto.push(std::slice::from_ref(b), &mut out).is_none());
            }
            let streamed = auto.finish(&mut out).expect("chosen at the end");
            assert_eq!(streamed.reason, whole.reason, "{text}");
            assert_eq!(auto.detected().unwrap().reason, whole.reason);
            if text == fenced {
                assert_eq!(Collapsed::of(&out).calls.len(), 1);
                assert!(
                    whole.reason.contains("hermes read 1 call from JSON"),
                    "{}",
                    whole.reason
                );
                assert!(!whole.reason.contains("plain text"), "{}", whole.reason);
            } else {
                assert!(whole.reason.contains("plain text"), "{}", whole.reason);
            }
        }
    }

    fn tools() -> ToolSet {
        ToolSet::new(vec![
            ToolDef::new(
                "write_file",
                "Write a file",
                json!({"type":"object","properties":{
                    "path":{"type":"string"},
                    "content":{"type":"string"},
                    "mode":{"type":"integer"},
                    "append":{"type":"boolean"},
                    "tags":{"type":"array","items":{"type":"string"}},
                    "meta":{"type":"object","properties":{"owner":{"type":"string"},"size":{"type":"number"}}}
                }}),
            ),
            ToolDef::new("get_location", "", json!({"type":"object","properties":{}})),
        ])
        .unwrap()
    }

    fn whole(parser: StreamParser, text: &str) -> Collapsed {
        Collapsed::of(&parser.parse_whole(text.as_bytes()).parts)
    }

    #[test]
    fn every_protocol_reads_back_the_calls_it_writes() {
        let inputs = [
            json!({"path":"/tmp/a.txt","content":"plain"}),
            json!({"path":"/x","content":"<b>bold</b> & \"quotes\" 'single'\nline two\n  indented","mode":644,"append":true}),
            json!({"path":"/y","content":"a </tool_call> b </parameter> c </content> d ```","tags":["one","two"]}),
            json!({"path":"/z","content":"é😀 unicode","meta":{"owner":"me","size":1.5}}),
            json!({}),
        ];
        // qwen3-coder has no escaping, yet its values hold its own close tags: what follows
        // each one decides. (A family whose template opens reasoning is read as an output that
        // closed it: the calls are the point here.)
        for p in Protocol::all() {
            let p = p.with_reasoning_open(Some(false));
            for input in &inputs {
                let text = format!("Before.\n{}\nAfter.", p.format_call("write_file", input));
                let got = whole(p.stream_parser(&tools()), &text);
                assert_eq!(
                    got.calls,
                    vec![("write_file".to_string(), input.clone())],
                    "{}: {text}",
                    p.name()
                );
                assert!(got.errors.is_empty(), "{}: {:?}", p.name(), got.errors);
                assert!(
                    got.text.starts_with("Before.") && got.text.ends_with("After."),
                    "{}: {:?}",
                    p.name(),
                    got.text
                );
            }
        }
    }

    /// Malformed example calls: broken in a way no tolerance repairs, so every protocol
    /// reports them and makes no call, and keeps their text.
    #[test]
    fn every_protocols_malformed_call_is_reported_not_made() {
        let input = json!({"path": "/a", "mode": 7});
        for p in Protocol::all() {
            let p = p.with_reasoning_open(Some(false));
            let text = p.malformed_call("write_file", &input);
            let got = whole(p.stream_parser(&tools()), &text);
            assert!(
                got.calls.is_empty(),
                "{}: {text} gave {:?}",
                p.name(),
                got.calls
            );
            assert!(!got.errors.is_empty(), "{}: {text}", p.name());
            assert!(!got.text.is_empty(), "{}: nothing kept", p.name());
        }
        let h = Protocol::from_name("hermes").unwrap();
        assert_eq!(
            h.malformed_call("get_weather", &json!({"city": "Paris"})),
            r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "oops": }}</tool_call>"#
        );
        let m = Protocol::from_name("morph-xml").unwrap();
        assert_eq!(
            m.malformed_call("f", &json!({"city": "Paris"})),
            "<f><city>Paris</city><city>Paris</city></f>"
        );
    }

    #[test]
    fn results_render_per_protocol() {
        let h = Protocol::from_name("hermes").unwrap();
        assert_eq!(
            h.format_result("get_weather", "{\"temp\": 21}"),
            "<tool_response>\n{\"name\": \"get_weather\", \"content\": {\"temp\":21}}\n</tool_response>"
        );
        assert!(
            Protocol::from_name("gemma")
                .unwrap()
                .format_result("x", "ok")
                .starts_with("```tool_response\n")
        );
        assert!(
            Protocol::from_name("morph-xml")
                .unwrap()
                .format_result("x", "ok")
                .contains("<tool_response name=\"x\">")
        );
        assert!(
            Protocol::from_name("qwen3-coder")
                .unwrap()
                .format_result("x", "ok")
                .contains("<tool_response>\nok\n")
        );
    }

    #[test]
    fn the_tool_choice_answer_becomes_one_call() {
        let cases = [
            (
                r#"{"name": "write_file", "arguments": {"path": "/a", "mode": "7"}}"#,
                Some(json!({"path":"/a","mode":7})),
                vec![],
            ),
            (
                r#"{name: 'get_location', arguments: {},}"#,
                Some(json!({})),
                vec![],
            ),
            (
                "```json\n{\"name\":\"get_location\",\"arguments\":{}}\n```",
                Some(json!({})),
                vec![],
            ),
            (
                r#"{"name": "nope", "arguments": {"x": 1}}"#,
                Some(json!({"x":1})),
                vec!["unknown-tool"],
            ),
            (
                r#"{"name": "write_file", "arguments": {"path": "#,
                None,
                vec!["unfinished-tool-call"],
            ),
            (
                r#"{"tool": "write_file"}"#,
                None,
                vec!["malformed-tool-call"],
            ),
            ("I cannot call a tool.", None, vec![]),
        ];
        for (text, want, errors) in cases {
            let got = whole(answer_parser(&tools()), text);
            assert_eq!(got.calls.first().map(|c| c.1.clone()), want, "{text}");
            assert_eq!(got.errors, errors, "{text}");
            if want.is_none() {
                // A bad answer keeps its text.
                assert_eq!(got.text, text);
            }
        }
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported_once() {
        let p = Protocol::from_name("hermes").unwrap();
        let parsed = p.parse_generated(
            &tools(),
            b"a\xff b \xfe<tool_call>{\"name\":\"get_location\"}</tool_call>",
        );
        let c = Collapsed::of(&parsed.parts);
        assert_eq!(c.text, "a\u{fffd} b \u{fffd}");
        assert_eq!(c.errors, ["invalid-utf8"]);
        assert_eq!(c.calls.len(), 1);
        assert_eq!(parsed.spans.len(), 1);
    }

    /// A JSON call body whose arguments already streamed cannot be renamed or given other
    /// arguments by a later duplicate key: it is malformed (kept as text, with an error), and
    /// every chunking says so, so deltas never belong to a call that is not the one finished.
    #[test]
    fn a_duplicate_name_or_arguments_key_is_malformed_on_both_paths() {
        let t = tools();
        for text in [
            r#"<tool_call>{"name":"write_file","arguments":{"path":"/a"},"name":"get_location"}</tool_call>"#,
            r#"<tool_call>{"name":"write_file","arguments":{"path":"/a"},"arguments":{"path":"/b"}}</tool_call>"#,
        ] {
            let p = Protocol::from_name("hermes").unwrap();
            let whole = whole(p.stream_parser(&t), text);
            assert!(whole.calls.is_empty(), "{text}: {whole:?}");
            assert_eq!(whole.text, text, "nothing lost");
            assert!(!whole.errors.is_empty());
            let mut parser = p.stream_parser(&t);
            let mut out = Vec::new();
            for b in text.as_bytes() {
                parser.push(std::slice::from_ref(b), &mut out);
            }
            parser.finish(&mut out);
            assert_eq!(Collapsed::of(&out), whole, "{text}");
            assert!(!out.iter().any(|p| matches!(p, Part::ToolCall(_))));
        }
        // Before the name, a second arguments key still wins, as in JSON.
        let p = Protocol::from_name("hermes").unwrap();
        let c = whole(
            p.stream_parser(&t),
            r#"<tool_call>{"arguments":{"path":"/a"},"arguments":{"path":"/b"},"name":"write_file"}</tool_call>"#,
        );
        assert_eq!(c.calls.len(), 1);
        assert_eq!(c.calls[0].1, json!({"path":"/b"}));
    }
}
