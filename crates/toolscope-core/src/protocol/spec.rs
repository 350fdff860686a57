//! The interface every protocol implements, and the settings a protocol value carries.
//!
//! A protocol is one file holding one type that implements [`ProtocolSpec`], its `mod` line and
//! one line in the registry (`REGISTRY` in `mod.rs`). Everything that lists protocols (the
//! command line's value parser and help, the playground's protocol picker, `--protocol auto`'s
//! markers, the property and linear-cost tests, the fuzz target, the benchmarks, a simulated
//! model, the session builder) iterates the registry through
//! [`Protocol::all`](super::Protocol::all), so a new protocol is covered by all of them at once.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::emit::Emitter;
use super::{Protocol, prompt};
use crate::tool::ToolSet;

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
    pub const THINK: Reasoning = Reasoning {
        markers: Some(("<think>", "</think>")),
        starts_inside: false,
        calls_inside: false,
    };
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

/// A scanner: the part of a stream parser that knows one protocol's markup. It receives the
/// decoded text piece by piece and writes parts through the [`Emitter`]; it must give the same
/// parts (up to how deltas are split) however the text is cut into pieces.
pub(crate) trait Scanner: Send {
    /// The next piece of text.
    fn feed(&mut self, text: &str, em: &mut Emitter);
    /// The text is over: recover or report what is still open.
    fn finish(&mut self, em: &mut Emitter);

    /// Whether the text fed so far left the scanner inside a call (a reasoning marker there is
    /// the call's own text). Text held back because it may begin a call does not count.
    fn in_call(&self) -> bool;

    /// Whether the text fed so far left the scanner inside a call's arguments or before its
    /// required close (so that a code fence line there is the call's own text). Past the end of
    /// a call, waiting only for markup that may follow it (a close that may be left out, a
    /// separator to another call), it is not. By default, [`Scanner::in_call`].
    fn in_args(&self) -> bool {
        self.in_call()
    }

    /// A reasoning marker follows the text fed so far (and the scanner is not inside a call):
    /// text held back because it might begin a marker cannot, and is written now, on its side
    /// of the marker. Needed where calls count inside reasoning (the scanner's text is then
    /// reasoning on one side of the marker and text on the other); by default nothing is held
    /// across markers that matters.
    fn cut(&mut self, _em: &mut Emitter) {}
}

/// What a protocol is: its names, its family's conventions, and how to write and read it.
pub(crate) trait ProtocolSpec: Sync + 'static {
    /// The name on the command line and in sessions.
    fn name(&self) -> &'static str;

    /// Other names accepted for it on the command line.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// The model families that write this format, for help texts and the picker.
    fn families(&self) -> &'static str;

    /// The call markers that identify this format at the start of a call, for `--protocol
    /// auto` (see `detect.rs`): a space stands for any run of whitespace, and a marker that
    /// spells out what follows a shared start (`<tool_call> <function=`) tells formats apart.
    /// Markup named after the tools is built from `tools`. Reasoning markers need not be listed:
    /// they come from [`ProtocolSpec::reasoning`].
    fn markers(&self, tools: &ToolSet) -> Vec<String>;

    /// How the family marks reasoning.
    fn reasoning(&self) -> Reasoning {
        Reasoning::NONE
    }

    /// The family's end-of-turn and stop tokens (`<|im_end|>`, `<｜end▁of▁sentence｜>`) as its
    /// models write them at the end of an answer: format, not text. The parser takes them out
    /// of the text before anything reads it (the raw output keeps them, spanned as markup).
    fn end_tokens(&self) -> &'static [&'static str] {
        &[]
    }

    /// The scanner reads the end tokens itself (they end harmony's messages): they are not
    /// taken out before it.
    fn reads_end_tokens(&self) -> bool {
        false
    }

    /// The default delimiters, for a protocol whose delimiters can be changed.
    fn delimiters(&self) -> Option<Delimiters> {
        None
    }

    /// The system prompt that teaches a model the tools and this format.
    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String;

    /// Recognises a system prompt written by [`ProtocolSpec::system_prompt`]: this protocol (with
    /// its settings) and the tools it lists. A simulated model, which sees only the wire request,
    /// learns the protocol and the tools this way.
    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        prompt::read_frame(self.name(), system)
    }

    /// A past tool call as the model writes it (history, and what a simulated model writes).
    fn format_call(&self, p: &Protocol, name: &str, input: &Value) -> String;

    /// Several calls of one answer, joined the family's way (one section, an array, repeated
    /// markers). By default each call on its own line.
    fn format_calls(&self, p: &Protocol, calls: &[(&str, &Value)]) -> String {
        calls
            .iter()
            .map(|(name, input)| self.format_call(p, name, input))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A tool result as the family's template shows it to the model.
    fn format_result(&self, p: &Protocol, name: &str, result: &str) -> String;

    /// Several results that answer one turn's calls, in order. By default each on its own line.
    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        results
            .iter()
            .map(|(name, result)| self.format_result(p, name, result))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The payload of a result written by [`ProtocolSpec::format_result`] (what the tool
    /// returned, the family's wrapping taken off). By default: lines that are one whole tag and
    /// code fences are dropped, and a `{"name", "content"}` JSON wrapper is opened.
    fn read_result(&self, _p: &Protocol, text: &str) -> String {
        prompt::unwrap_result(text)
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

pub(crate) use super::prompt::first_argument;
