//! The interface every protocol implements, and the protocol value: a registered protocol with
//! its settings (the two refer to each other, so they live in one file). Also the prompt frame
//! that names the protocol, which reads back into a protocol value.
//!
//! A protocol is one file in `formats/` holding one type that implements [`ProtocolSpec`] (or one
//! entry of a family's table), its `mod` line in `formats/mod.rs` and one line in the registry
//! (`REGISTRY` in `mod.rs`). Everything that lists protocols (the command line's value parser and
//! help, the playground's protocol picker, `--protocol auto`'s markers, the property and
//! linear-cost tests, the fuzz target, the benchmarks, a simulated model, the session builder)
//! iterates the registry through [`Protocol::all`], so a new protocol is covered by all of them
//! at once.

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use super::REGISTRY;
use super::text::prompt::{self, ToolList};
use super::text::scanner::Scanner;
use crate::tool::{ToolDef, ToolSet};

/// How a family marks reasoning in its output text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reasoning {
    /// The marker that opens reasoning and the one that closes it (`<think>`, `</think>`);
    /// `None` for a protocol whose scanner finds reasoning itself (harmony's channels) or a
    /// family that does not reason in text.
    pub markers: Option<(&'static str, &'static str)>,
    /// The family's template opens the reasoning block itself, so the output starts inside it
    /// and shows only the close marker.
    pub starts_inside: bool,
    /// Calls made inside reasoning count (else markup inside reasoning is reasoning).
    pub calls_inside: bool,
}

impl Reasoning {
    /// No reasoning markers.
    pub const NONE: Reasoning = Reasoning {
        markers: None,
        starts_inside: false,
        calls_inside: false,
    };

    /// `<think>` … `</think>`, written by the model itself; markup inside is reasoning.
    pub const THINK: Reasoning = Reasoning::between("<think>", "</think>");

    /// Between `open` and `close`, written by the model itself; markup inside is reasoning.
    pub(crate) const fn between(open: &'static str, close: &'static str) -> Reasoning {
        Reasoning {
            markers: Some((open, close)),
            starts_inside: false,
            calls_inside: false,
        }
    }

    /// The same, the block opened by the family's template (see [`Reasoning::starts_inside`]).
    pub(crate) const fn opened_by_template(self) -> Reasoning {
        Reasoning {
            starts_inside: true,
            ..self
        }
    }

    /// The same, calls made inside reasoning counting (see [`Reasoning::calls_inside`]).
    pub(crate) const fn with_calls(self) -> Reasoning {
        Reasoning {
            calls_inside: true,
            ..self
        }
    }
}

/// How a family writes the tool results of its history: what stands before and after each
/// result (nothing: the result as it is), and what joins the results of one turn. The default
/// [`ProtocolSpec::format_result`], [`ProtocolSpec::format_results`] and
/// [`ProtocolSpec::read_result`] follow it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResultWrap {
    pub begin: &'static str,
    pub end: &'static str,
    pub joiner: &'static str,
}

impl ResultWrap {
    /// Each result as it is, on its own line.
    pub(crate) const LINES: ResultWrap = ResultWrap::between("", "");

    /// Each result between `begin` and `end`, one per line.
    pub(crate) const fn between(begin: &'static str, end: &'static str) -> ResultWrap {
        ResultWrap {
            begin,
            end,
            joiner: "\n",
        }
    }

    /// The same, the results of a turn joined by `joiner`.
    pub(crate) const fn joined(self, joiner: &'static str) -> ResultWrap {
        ResultWrap { joiner, ..self }
    }

    /// `result` wrapped.
    pub(crate) fn around(&self, result: &str) -> String {
        format!("{}{result}{}", self.begin, self.end)
    }

    /// The payload of a wrapped result: what stands between the markers; without markers, the
    /// text with the usual wrapping taken off (see [`prompt::unwrap_result`]).
    pub(crate) fn inside(&self, text: &str) -> String {
        if self.begin.is_empty() && self.end.is_empty() {
            prompt::unwrap_result(text)
        } else {
            prompt::between(text, self.begin, self.end)
        }
    }
}

/// The end-of-turn tokens of the common chat templates (ChatML, Llama 3, Gemma, DeepSeek), for
/// a protocol prompted into any model.
pub(crate) const COMMON_END_TOKENS: &[&str] = &[
    "<|im_end|>",
    "<|endoftext|>",
    "<|eot_id|>",
    "<|end_of_text|>",
    "<end_of_turn>",
    "<｜end▁of▁sentence｜>",
];

/// The call and result delimiters of a protocol whose delimiters can be changed (`hermes`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Delimiters {
    /// What opens a call, e.g. `<tool_call>`.
    pub call_start: String,
    /// What closes a call, e.g. `</tool_call>`.
    pub call_end: String,
    /// What opens a tool result in the history.
    pub response_start: String,
    /// What closes a tool result in the history.
    pub response_end: String,
}

/// What a protocol is: its names, its family's conventions, and how to write and read it.
pub(crate) trait ProtocolSpec: Sync + 'static {
    /// Its names, the models that write it, its end tokens and reasoning markers: the
    /// constants the methods below answer from by default.
    fn card(&self) -> &Card;

    /// The name on the command line and in sessions.
    fn name(&self) -> &'static str {
        self.card().name
    }

    /// Other names accepted for it on the command line.
    fn aliases(&self) -> &'static [&'static str] {
        self.card().aliases
    }

    /// The model families that write this format, for help texts and the picker.
    fn families(&self) -> &'static str {
        self.card().families
    }

    /// The names inference servers give this format's parser (`--tool-call-parser` and the
    /// like), as `(server, name)` pairs: `("vllm", "hermes")`, `("sglang", "qwen25")`,
    /// `("llama.cpp", "Hermes 2 Pro")`. A user who knows their server's parser finds ours.
    fn server_parsers(&self) -> &'static [(&'static str, &'static str)] {
        self.card().servers
    }

    /// The call markers that identify this format at the start of a call, for `--protocol
    /// auto` (see `detect.rs`): a space stands for any run of whitespace, and a marker that
    /// spells out what follows a shared start (`<tool_call> <function=`) tells formats apart.
    /// Markup named after the tools is built from `tools`. Reasoning markers need not be listed:
    /// they come from [`ProtocolSpec::reasoning`]. By default the card's: its markers, then its
    /// tool markers around each tool's name (see [`Card::markers_for`]).
    fn markers(&self, tools: &ToolSet) -> Vec<String> {
        self.card().markers_for(tools)
    }

    /// How the family marks reasoning.
    fn reasoning(&self) -> Reasoning {
        self.card().reasoning
    }

    /// The family's end-of-turn and stop tokens (`<|im_end|>`, `<｜end▁of▁sentence｜>`) as its
    /// models write them at the end of an answer: format, not text. The parser takes them out
    /// of the text before anything reads it (the raw output keeps them, spanned as markup).
    fn end_tokens(&self) -> &'static [&'static str] {
        self.card().end_tokens
    }

    /// The template's assistant prefix as a model may repeat it at the start of its answer
    /// (Hunyuan's `助手：`): format there, before anything but whitespace, and text anywhere
    /// else.
    fn lead_tokens(&self) -> &'static [&'static str] {
        self.card().lead
    }

    /// The scanner reads the end tokens itself (they end harmony's messages): they are not
    /// taken out before it. By default the card's.
    fn reads_end_tokens(&self) -> bool {
        self.card().reads_end_tokens
    }

    /// The default delimiters, for a protocol whose delimiters can be changed.
    fn delimiters(&self) -> Option<Delimiters> {
        None
    }

    /// Whether the format's markers carry a per-checkpoint suffix (`<tool_call:SUFFIX>`): the
    /// parser learns it from the first marker, and `--marker-suffix` sets it.
    fn takes_marker_suffix(&self) -> bool {
        false
    }

    /// Whether the reasoning markers (whole, `<think>`) may also carry a suffix before their `>`
    /// (`<think:high>`, HY3's by effort): the parser learns it from the first marker that
    /// carries one, and `--marker-suffix` sets it.
    fn reasoning_suffix(&self) -> bool {
        false
    }

    /// The endings that complete the reasoning markers, where they are stems the family ends
    /// several ways (K2 Horizon by effort: `>`, `_fast>`, `_faster>`; any opener goes with any
    /// closer). Empty where the markers are whole.
    fn reasoning_endings(&self) -> &'static [&'static str] {
        &[]
    }

    /// Where the reasoning markers have several spellings (special tokens printed with spaces
    /// around them: `<|open|> think <|sep|>` for `<|open|>think<|sep|>`), how the parser reads
    /// them: the open marker's head, the close marker's head, and the spellings of what
    /// completes either. `None`: the markers of [`ProtocolSpec::reasoning`] as written.
    fn reasoning_spellings(&self) -> Option<(&'static str, &'static str, &'static [&'static str])> {
        None
    }

    /// The system prompt that teaches a model the tools and this format. By default the card's
    /// prompt ([`Card::prompt`]); a format whose card has none writes its own (the standard
    /// cases fail on an empty prompt: it is not recognised).
    fn system_prompt(&self, _p: &Protocol, tools: &ToolSet) -> String {
        self.card()
            .prompt
            .map(|list| list.write(tools))
            .unwrap_or_default()
    }

    /// Recognises a system prompt written by [`ProtocolSpec::system_prompt`]: this protocol (with
    /// its settings) and the tools it lists. A simulated model, which sees only the wire request,
    /// learns the protocol and the tools this way. By default the card's prompt read back, or
    /// (without one) the prompt frame that names the protocol.
    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        match self.card().prompt {
            Some(list) => read_back(self.name(), list.read(system)),
            None => read_frame(self.name(), system),
        }
    }

    /// A past tool call as the model writes it (history, and what a simulated model writes).
    /// By default the answer of one call (see [`ProtocolSpec::format_calls`]): a format writes
    /// one of the two, or both.
    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String {
        self.format_calls(p, &[(name, input)])
    }

    /// Several calls of one answer, joined the family's way (one section, an array, repeated
    /// markers). By default each call as [`ProtocolSpec::format_call`] writes it, joined by
    /// [`ProtocolSpec::call_joiner`].
    fn format_calls(&self, p: &Protocol, calls: &[(&str, &Value)]) -> String {
        join(
            calls
                .iter()
                .map(|(name, input)| self.format_call(p, name, input)),
            self.call_joiner(),
        )
    }

    /// What the default [`ProtocolSpec::format_calls`] writes between two calls: by default the
    /// card's.
    fn call_joiner(&self) -> &'static str {
        self.card().call_joiner
    }

    /// How the family wraps its tool results (see [`ResultWrap`]): by default the card's.
    fn results(&self) -> ResultWrap {
        self.card().results
    }

    /// A tool result as the family's template shows it to the model. By default wrapped as
    /// [`ProtocolSpec::results`] says.
    fn format_result(&self, _p: &Protocol, _name: &str, result: &str) -> String {
        self.results().around(result)
    }

    /// Several results that answer one turn's calls, in order: by default each as
    /// [`ProtocolSpec::format_result`] writes it, joined as [`ProtocolSpec::results`] says.
    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        join(
            results
                .iter()
                .map(|(name, result)| self.format_result(p, name, result)),
            self.results().joiner,
        )
    }

    /// The payload of a result written by [`ProtocolSpec::format_result`] (what the tool
    /// returned, the family's wrapping taken off). By default what stands between the markers
    /// of [`ProtocolSpec::results`]; without markers, lines that are one whole tag and code
    /// fences are dropped, and a `{"name", "content"}` JSON wrapper is opened.
    fn read_result(&self, _p: &Protocol, text: &str) -> String {
        self.results().inside(text)
    }

    /// The scanner of a new stream parser.
    fn scanner(&self, p: &Protocol, tools: &ToolSet) -> Box<dyn Scanner>;

    /// A call written wrong in a way no tolerance repairs (broken inside the call, not merely
    /// unclosed), so that a user can see how the parser reports it.
    fn malformed_call(&self, p: &Protocol, name: &str, input: &Value) -> String;

    /// Reasoning as the family writes it in its output, for a model that simulates the family:
    /// between the markers, or only followed by the close marker when the output starts inside
    /// reasoning. `None` for a family that does not reason in text.
    fn format_reasoning(&self, p: &Protocol, text: &str) -> Option<String> {
        let (open, close) = self.reasoning().markers?;
        Some(if p.reasoning_open() {
            format!("{text}\n{close}\n")
        } else {
            format!("{open}\n{text}\n{close}\n")
        })
    }
}

/// A text protocol with its settings. Two protocols are equal when they have the same name and
/// the same settings.
#[derive(Clone)]
pub struct Protocol {
    pub(super) spec: &'static dyn ProtocolSpec,
    /// Changed delimiters, for a protocol whose delimiters can be changed; `None`: its own.
    pub(super) delimiters: Option<Delimiters>,
    /// Whether the output starts inside reasoning; `None`: the family's default.
    pub(super) reasoning_open: Option<bool>,
    /// The suffix of every marker, for a format whose markers carry one; `None`: learned from
    /// the output.
    pub(super) marker_suffix: Option<String>,
}

impl Protocol {
    /// Every protocol of the registry, with its default settings, in registry order.
    pub fn all() -> Vec<Protocol> {
        REGISTRY.iter().map(|s| Protocol::of(*s)).collect()
    }

    pub(super) const fn of(spec: &'static dyn ProtocolSpec) -> Protocol {
        Protocol {
            spec,
            delimiters: None,
            reasoning_open: None,
            marker_suffix: None,
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

    /// The names inference servers give this format's parser, as `(server, name)` pairs.
    pub fn server_parsers(&self) -> &'static [(&'static str, &'static str)] {
        self.spec.server_parsers()
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
    /// (`Some(false)`), or as the family's template usually does (`None`).
    ///
    /// The default is a presumption: for a family that starts inside reasoning and makes no
    /// calls from it, a call before the close marker ends the presumed reasoning (a run whose
    /// template did not open it). Set to `Some(true)`, the template did open it, and a call in
    /// it is reasoning like any markup there.
    pub fn with_reasoning_open(mut self, open: Option<bool>) -> Self {
        self.reasoning_open = open;
        self
    }

    /// Where the reasoning markers have several spellings (`<|open|> think <|sep|>` for
    /// `<|open|>think<|sep|>`): the open marker's head, the close marker's, and the spellings of
    /// what completes either.
    pub fn reasoning_spellings(
        &self,
    ) -> Option<(&'static str, &'static str, &'static [&'static str])> {
        self.spec.reasoning_spellings()
    }

    /// Whether the format's markers carry a per-checkpoint suffix (`<tool_call:SUFFIX>`).
    pub fn takes_marker_suffix(&self) -> bool {
        self.spec.takes_marker_suffix()
    }

    /// Whether the reasoning markers (see [`Reasoning`]) are stems that the rest of a marker, up
    /// to its `>`, completes: a per-checkpoint suffix (hy-v4's `<think:` SUFFIX `>`) or an
    /// ending by effort (K2 Horizon's `<ifm|think` `_fast>`).
    pub fn reasoning_stems(&self) -> bool {
        self.spec.takes_marker_suffix() || !self.spec.reasoning_endings().is_empty()
    }

    /// The markers' suffix as set (`None`: learned from the output).
    pub fn marker_suffix(&self) -> Option<&str> {
        self.marker_suffix.as_deref()
    }

    /// This protocol with its markers' suffix set (`None`: learned from the output); an error
    /// for a format whose markers carry none, or a suffix that is not a run of letters, digits,
    /// `_` and `-`.
    pub fn with_marker_suffix(mut self, suffix: Option<&str>) -> Result<Self, String> {
        if let Some(s) = suffix {
            if !self.takes_marker_suffix() && !self.spec.reasoning_suffix() {
                return Err(format!(
                    "the {} protocol's markers carry no suffix (--marker-suffix is for formats such as hy-v4)",
                    self.name()
                ));
            }
            if !is_marker_suffix(s) {
                return Err(format!(
                    "\"{s}\" is not a marker suffix (1 to 64 letters, digits, '_' or '-')"
                ));
            }
        }
        self.marker_suffix = suffix.map(str::to_string);
        Ok(self)
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

    /// The family's end-of-turn and stop tokens (`<|im_end|>`, `<｜end▁of▁sentence｜>`): format,
    /// not text. The parser takes them out of the text; they stay in the raw output, spanned as
    /// markup.
    pub fn end_tokens(&self) -> &'static [&'static str] {
        self.spec.end_tokens()
    }
}

impl PartialEq for Protocol {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
            && self.delimiters == other.delimiters
            && self.reasoning_open == other.reasoning_open
            && self.marker_suffix == other.marker_suffix
    }
}

impl Eq for Protocol {}

impl std::hash::Hash for Protocol {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name().hash(state);
        self.delimiters.hash(state);
        self.reasoning_open.hash(state);
        self.marker_suffix.hash(state);
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
        if let Some(s) = &self.marker_suffix {
            d.field("marker_suffix", s);
        }
        d.finish()
    }
}

/// The pieces joined by `joiner`.
fn join(pieces: impl Iterator<Item = String>, joiner: &str) -> String {
    pieces.collect::<Vec<_>>().join(joiner)
}

/// A prompt read back: the protocol named `name` with its default settings, and the tools
/// found in it (`None` when there are none: not this protocol's prompt).
pub(crate) fn read_back(name: &str, tools: Option<ToolSet>) -> Option<(Protocol, ToolSet)> {
    Some((Protocol::from_name(name).ok()?, tools?))
}

/// Whether `s` can be a marker suffix: 1 to 64 ASCII letters, digits, `_` and `-`.
pub(crate) fn is_marker_suffix(s: &str) -> bool {
    (1..=64).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
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
    #[serde(
        default,
        rename = "markerSuffix",
        skip_serializing_if = "Option::is_none"
    )]
    marker_suffix: Option<String>,
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
            marker_suffix: self.marker_suffix.clone(),
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
            .with_reasoning_open(saved.reasoning_open)
            .with_marker_suffix(saved.marker_suffix.as_deref())
            .map_err(D::Error::custom)?;
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

// The prompt frame the prompted protocols share: it names the protocol (and its delimiters), so
// it reads back into a protocol value.

const FORMAT_LINE: &str = "Tool call format: ";

/// The protocol's name, then its delimiters when they were changed.
fn format_marker(p: &Protocol) -> String {
    match &p.delimiters {
        Some(d) => format!("{} {} {}", p.name(), d.call_start.trim(), d.call_end.trim()),
        None => p.name().to_string(),
    }
}

/// The framed prompt of `p`, with `section` (the protocol's format section, given the example
/// call's name and arguments) in its place.
pub(super) fn framed(
    p: &Protocol,
    tools: &ToolSet,
    section: impl FnOnce(&str, &Value) -> String,
) -> String {
    let mut s = String::new();
    s.push_str(
        "You can call tools to help answer the user. Each tool below is a JSON object with its name, \
         what it does, and a JSON Schema of its arguments.\n\n<tools>\n",
    );
    for t in tools.iter() {
        let line = json!({"name": t.def.name, "description": t.def.description, "parameters": t.def.parameters});
        s.push_str(&line.to_string());
        s.push('\n');
    }
    s.push_str("</tools>\n\n");
    s.push_str(FORMAT_LINE);
    s.push_str(&format_marker(p));
    s.push('\n');
    s.push_str(&prompt::example_call(tools, section));
    s.push_str(
        "\nRules:\n\
         - Call a tool only when it helps answer the user; otherwise answer in plain text.\n\
         - Use only the tools listed above, by their exact names.\n\
         - Give every required argument, with values of the types the schema asks for; do not invent arguments \
         the schema does not have.\n\
         - After your tool calls, stop and wait for the results before you continue.\n",
    );
    s
}

/// Reads back a prompt written by [`markdown_tools_prompt`] with this `format`: the protocol
/// named `name` and the tools.
///
/// [`markdown_tools_prompt`]: super::text::prompt::markdown_tools_prompt
pub(super) fn read_markdown_tools_prompt(
    name: &str,
    format: &str,
    system: &str,
) -> Option<(Protocol, ToolSet)> {
    if !system.contains(format) {
        return None;
    }
    let start = system.find("## Tools\n")?;
    let mut defs = Vec::new();
    for section in system[start..].split("\n### ").skip(1) {
        let (tool, rest) = section.split_once('\n')?;
        let rest = rest.strip_prefix("Description: ")?;
        let (description, rest) = rest.split_once("\n\nParameters: ")?;
        let mut lexer = crate::json::Lexer::new();
        let mut builder = crate::json::ValueBuilder::new();
        let parameters = match lexer.feed(rest, &mut builder) {
            crate::json::Step::Done { .. } => builder.take()?,
            _ => return None,
        };
        defs.push(ToolDef {
            name: tool.trim().to_string(),
            description: description.to_string(),
            parameters,
        });
    }
    Some((Protocol::from_name(name).ok()?, ToolSet::new(defs).ok()?))
}

/// Reads back a prompt made by [`framed`] for the protocol named `name`: the protocol with its
/// delimiters, and the tools.
pub(super) fn read_frame(name: &str, system: &str) -> Option<(Protocol, ToolSet)> {
    let line = system.lines().find_map(|l| l.strip_prefix(FORMAT_LINE))?;
    let mut words = line.split_whitespace();
    if words.next()? != name {
        return None;
    }
    let mut protocol = Protocol::from_name(name).ok()?;
    if let (Some(start), Some(end), Some(own)) = (words.next(), words.next(), protocol.delimiters())
    {
        // A call delimiter that ends in a newline (gemma's fences) is written trimmed.
        let keep_newline = |written: &str, own: &str| {
            if own.trim() == written && own.ends_with('\n') {
                own.to_string()
            } else {
                written.to_string()
            }
        };
        protocol = protocol
            .with_delimiters(Delimiters {
                call_start: keep_newline(start, &own.call_start),
                call_end: end.to_string(),
                ..own
            })
            .ok()?;
    }
    let start = system.find("<tools>\n")? + "<tools>\n".len();
    let end = start + system[start..].find("</tools>")?;
    let mut defs = Vec::new();
    for line in system[start..end].lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).ok()?;
        defs.push(prompt::tool_def(&v)?);
    }
    Some((protocol, ToolSet::new(defs).ok()?))
}

/// What a protocol says of itself besides how it writes and reads its calls: its names, the
/// models that write it, its end tokens and how it marks reasoning. [`ProtocolSpec::card`]
/// gives it; the methods it answers default to it.
#[derive(Debug)]
pub(crate) struct Card {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub families: &'static str,
    pub end_tokens: &'static [&'static str],
    /// The call markers `--protocol auto` knows it by (see [`ProtocolSpec::markers`]).
    pub markers: &'static [&'static str],
    /// The call markers named after a tool, as what stands before and after the tool's name
    /// (`("[ ", " (")` for `[ get_weather (`): one marker of each for every tool.
    pub tool_markers: &'static [(&'static str, &'static str)],
    pub reasoning: Reasoning,
    /// The servers' names for its parser (see [`ProtocolSpec::server_parsers`]).
    pub servers: &'static [(&'static str, &'static str)],
    /// Its lead tokens (see [`ProtocolSpec::lead_tokens`]).
    pub lead: &'static [&'static str],
    /// Its scanner reads its end tokens (see [`ProtocolSpec::reads_end_tokens`]).
    pub reads_end_tokens: bool,
    /// What stands between two calls of one answer (see [`ProtocolSpec::call_joiner`]).
    pub call_joiner: &'static str,
    /// How it wraps its tool results (see [`ProtocolSpec::results`]).
    pub results: ResultWrap,
    /// Its system prompt where that is its tool list and the instructions around it (see
    /// [`ProtocolSpec::system_prompt`]).
    pub prompt: Option<ToolList>,
}

impl Card {
    /// A card with nothing on it but the name and the families, to fill in
    /// (`Card { servers: …, ..Card::new("name", "families") }`).
    pub(crate) const fn new(name: &'static str, families: &'static str) -> Card {
        Card {
            name,
            aliases: &[],
            families,
            end_tokens: &[],
            markers: &[],
            tool_markers: &[],
            reasoning: Reasoning::NONE,
            servers: &[],
            lead: &[],
            reads_end_tokens: false,
            call_joiner: "\n",
            results: ResultWrap::LINES,
            prompt: None,
        }
    }

    /// The call markers of the card for these tools: [`Card::markers`], then for each tool
    /// (in order) each of [`Card::tool_markers`] around its name.
    pub(crate) fn markers_for(&self, tools: &ToolSet) -> Vec<String> {
        let named = tools.iter().flat_map(|t| {
            self.tool_markers
                .iter()
                .map(move |(before, after)| format!("{before}{}{after}", t.name()))
        });
        self.markers
            .iter()
            .map(|m| m.to_string())
            .chain(named)
            .collect()
    }
}

/// The tokens of `shared` then those of `own`, as one list (`N`, the length of the two
/// together, is what the constant's type says): a card whose end tokens extend another
/// family's list names that list instead of copying it.
pub(crate) const fn end_tokens_and<const N: usize>(
    shared: &[&'static str],
    own: &[&'static str],
) -> [&'static str; N] {
    assert!(
        shared.len() + own.len() == N,
        "N is the length of both lists"
    );
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < shared.len() {
            shared[i]
        } else {
            own[i - shared.len()]
        };
        i += 1;
    }
    out
}

/// The servers whose names for a format's parser a card lists (see [`Card::servers`]): one
/// constructor each, so that the list names only servers we know.
pub(crate) mod server {
    /// The name vLLM gives a format's parser (`--tool-call-parser`), as a card's `servers` lists it.
    pub(crate) const fn vllm(parser: &'static str) -> (&'static str, &'static str) {
        ("vllm", parser)
    }

    /// The name SGLang gives a format's parser, as a card's `servers` lists it.
    pub(crate) const fn sglang(parser: &'static str) -> (&'static str, &'static str) {
        ("sglang", parser)
    }

    /// The name llama.cpp gives a format's chat format, as a card's `servers` lists it.
    pub(crate) const fn llama_cpp(parser: &'static str) -> (&'static str, &'static str) {
        ("llama.cpp", parser)
    }

    /// The name FastDeploy gives a format's parser, as a card's `servers` lists it.
    pub(crate) const fn fastdeploy(parser: &'static str) -> (&'static str, &'static str) {
        ("fastdeploy", parser)
    }
}

/// The [`ProtocolSpec::card`] of a family table's entry: its `card` field.
macro_rules! card_methods {
    () => {
        fn card(&self) -> &crate::protocol::spec::Card {
            &self.card
        }
    };
    ($card:expr) => {
        fn card(&self) -> &crate::protocol::spec::Card {
            &$card
        }
    };
}
pub(crate) use card_methods;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_result_wrap_writes_and_reads_between_its_markers() {
        let w = ResultWrap::between("<r>", "</r>");
        assert_eq!(w.around("sunny"), "<r>sunny</r>");
        assert_eq!(w.inside("before <r> sunny </r> after"), "sunny");
        assert_eq!(w.joiner, "\n");
        assert_eq!(w.joined("").joiner, "");
        // Without markers the usual wrapping comes off.
        assert_eq!(ResultWrap::LINES.around("x"), "x");
        assert_eq!(
            ResultWrap::LINES.inside(r#"{"name": "f", "content": "sunny"}"#),
            "sunny"
        );
    }

    #[test]
    fn the_default_history_methods_follow_the_joiners_and_the_wrap() {
        let input = json!({"city": "Paris"});
        // mistral: calls one after the other, results too, each in its markers.
        let m = Protocol::from_name("mistral").unwrap();
        let one = m.format_call("f", &input);
        assert_eq!(
            m.format_calls(&[("f", &input), ("f", &input)]),
            one.repeat(2)
        );
        let r = m.format_result("f", "ok");
        assert_eq!(m.format_results(&[("f", "ok"), ("f", "ok")]), r.repeat(2));
        // functionary: calls one after the other, results each on its own line, read back.
        let f = Protocol::from_name("functionary").unwrap();
        let one = f.format_call("f", &input);
        assert_eq!(
            f.format_calls(&[("f", &input), ("f", &input)]),
            one.repeat(2)
        );
        let r = f.format_result("f", "ok");
        assert_eq!(
            f.format_results(&[("f", "ok"), ("f", "ok")]),
            format!("{r}\n{r}")
        );
        assert_eq!(f.read_result(&r), "ok");
        // xlam writes only the list of calls: one call is a list of one.
        let x = Protocol::from_name("xlam").unwrap();
        assert_eq!(x.format_call("f", &input), x.format_calls(&[("f", &input)]));
    }

    /// `format_call` and `format_calls` default to each other: every protocol writes one.
    #[test]
    fn every_protocol_writes_its_history() {
        let input = json!({"city": "Paris"});
        for p in Protocol::all() {
            let one = p.format_call("f", &input);
            assert!(one.contains("Paris"), "{}: {one}", p.name());
            assert!(p.format_calls(&[("f", &input)]).contains("Paris"));
            let r = p.format_result("f", "sunny");
            assert!(p.format_results(&[("f", "sunny")]).contains("sunny"));
            assert_eq!(p.read_result(&r), "sunny", "{}", p.name());
        }
    }

    #[test]
    fn a_card_answers_for_the_protocol() {
        let p = Protocol::from_name("gpt-oss").unwrap();
        assert_eq!(p.name(), "harmony");
        assert_eq!(p.aliases(), &["gpt-oss"]);
        assert!(p.server_parsers().contains(&("vllm", "openai")));
        assert!(p.reasoning().calls_inside);
        let c = Card::new("x", "X");
        assert_eq!(
            (c.aliases.len(), c.markers.len(), c.reasoning),
            (0, 0, Reasoning::NONE)
        );
    }

    #[test]
    fn a_cards_markers_are_its_markers_then_its_tool_markers_for_each_tool() {
        let c = Card {
            markers: &["<call>"],
            tool_markers: &[("<", ">"), ("[", "(")],
            ..Card::new("x", "X")
        };
        let tools = crate::protocol::tests_support::tools();
        assert_eq!(
            c.markers_for(&tools),
            [
                "<call>",
                "<get_weather>",
                "[get_weather(",
                "<search>",
                "[search(",
                "<write_file>",
                "[write_file("
            ]
        );
        // A family that derives its markers: kimi-k2's are its section's and a call's openers.
        let kimi = Protocol::from_name("kimi-k2").unwrap();
        assert_eq!(
            kimi.spec.markers(&tools),
            ["<|tool_calls_section_begin|>", "<|tool_call_begin|>"]
        );
    }

    #[test]
    fn the_card_helpers_build_what_they_say() {
        const TOKENS: [&str; 3] = end_tokens_and(&["a"], &["b", "c"]);
        assert_eq!(TOKENS, ["a", "b", "c"]);
        let r = Reasoning::THINK.opened_by_template();
        assert!(r.starts_inside && !r.calls_inside);
        assert_eq!(r.markers, Reasoning::THINK.markers);
        let r = Reasoning::NONE.with_calls();
        assert!(r.calls_inside && !r.starts_inside && r.markers.is_none());
        assert_eq!(server::llama_cpp("Granite"), ("llama.cpp", "Granite"));
    }

    #[test]
    fn read_back_needs_the_tools_and_a_known_name() {
        let tools = crate::tool::ToolSet::new(vec![]).unwrap();
        assert!(read_back("hermes", Some(tools.clone())).is_some());
        assert!(read_back("hermes", None).is_none());
        assert!(read_back("no-such-protocol", Some(tools)).is_none());
    }
}
