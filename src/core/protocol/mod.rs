//! Text protocols for models without native tool calling.
//!
//! A protocol renders the tool list into a system prompt, renders past tool calls and tool
//! results into history text, and parses the model's output back into parts, whole or as a
//! stream. The whole-text parse runs the stream parser over one chunk, so the two paths cannot
//! disagree; the stream parser itself is written so that any chunking gives the same parts
//! (up to how text and argument deltas are split).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::part::Part;
use crate::core::tool::ToolSet;

/// The delimiters of the `hermes` protocol (and of `gemma`, which is hermes in code fences).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Delimiters {
    pub call_start: String,
    pub call_end: String,
    pub response_start: String,
    pub response_end: String,
}

impl Delimiters {
    pub fn hermes() -> Self {
        Delimiters {
            call_start: "<tool_call>".into(),
            call_end: "</tool_call>".into(),
            response_start: "<tool_response>".into(),
            response_end: "</tool_response>".into(),
        }
    }

    pub fn gemma() -> Self {
        Delimiters {
            call_start: "```tool_call\n".into(),
            call_end: "\n```".into(),
            response_start: "```tool_response\n".into(),
            response_end: "\n```".into(),
        }
    }
}

/// A text protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "name")]
pub enum Protocol {
    /// `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, delimiters configurable.
    Hermes(Delimiters),
    /// hermes inside ```` ```tool_call ```` fences.
    Gemma,
    /// `<get_weather><city>Paris</city></get_weather>`.
    MorphXml,
    /// `<get_weather>\ncity: Paris\n</get_weather>`.
    YamlXml,
    /// `<tool_call>\n<function=f>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call>`.
    Qwen3Coder,
}

impl Protocol {
    /// The names used on the command line, in the order Ctrl+L cycles through them.
    pub const NAMES: [&'static str; 5] =
        ["hermes", "gemma", "morph-xml", "yaml-xml", "qwen3-coder"];

    pub fn from_name(name: &str) -> Result<Self, String> {
        Ok(match name {
            "hermes" => Protocol::Hermes(Delimiters::hermes()),
            "gemma" => Protocol::Gemma,
            "morph-xml" => Protocol::MorphXml,
            "yaml-xml" => Protocol::YamlXml,
            "qwen3-coder" => Protocol::Qwen3Coder,
            _ => {
                return Err(format!(
                    "unknown protocol \"{name}\" (expected one of: {})",
                    Self::NAMES.join(", ")
                ));
            }
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Protocol::Hermes(_) => "hermes",
            Protocol::Gemma => "gemma",
            Protocol::MorphXml => "morph-xml",
            Protocol::YamlXml => "yaml-xml",
            Protocol::Qwen3Coder => "qwen3-coder",
        }
    }

    /// Every protocol with its default settings.
    pub fn all() -> Vec<Protocol> {
        Self::NAMES
            .iter()
            .map(|n| Self::from_name(n).expect("every listed name parses"))
            .collect()
    }
}

/// A byte range of the parsed text and what it became.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub kind: SpanKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpanKind {
    /// Markup that became a tool call.
    ToolCall,
    /// Markup that looked like a tool call but could not be parsed (kept as text).
    Malformed,
}

/// The result of parsing a whole text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    /// `text`, `tool-call` and `error` parts, in order.
    pub parts: Vec<Part>,
    pub spans: Vec<Span>,
}

impl Protocol {
    /// The system prompt that teaches a model the tools and this protocol's call format. The
    /// tools appear in it as a JSON array between `<tools>` and `</tools>` lines.
    pub fn system_prompt(&self, _tools: &ToolSet) -> String {
        todo!("interim: written with the protocol parsers")
    }

    /// A past tool call as the model would have written it (for conversation history).
    pub fn format_call(&self, _name: &str, _input: &Value) -> String {
        todo!("interim: written with the protocol parsers")
    }

    /// A tool result as it is shown to the model in the conversation.
    pub fn format_result(&self, _name: &str, _result: &str) -> String {
        todo!("interim: written with the protocol parsers")
    }

    /// Recognises a system prompt made by [`Protocol::system_prompt`]: which protocol and which
    /// tools (used by the demo model, which only sees the wire request).
    pub fn detect_from_prompt(_system: &str) -> Option<(Protocol, ToolSet)> {
        todo!("interim: written with the protocol parsers")
    }

    /// A stream parser for this protocol and these tools.
    pub fn stream_parser(&self, tools: &ToolSet) -> StreamParser {
        StreamParser {
            _protocol: self.clone(),
            _tools: tools.clone(),
        }
    }

    /// Parses a whole text (bytes; invalid UTF-8 is replaced and reported).
    pub fn parse_generated(&self, _tools: &ToolSet, _text: &[u8]) -> Parsed {
        todo!("interim: written with the protocol parsers")
    }
}

/// An incremental parser of one model output. Feed it chunks of any size (byte chunks may split
/// UTF-8 sequences), then call [`StreamParser::finish`]. It emits `text-start/delta/end`,
/// `tool-input-start/delta/end`, `tool-call` and `error` parts, never `finish`.
pub struct StreamParser {
    _protocol: Protocol,
    _tools: ToolSet,
}

impl StreamParser {
    pub fn push(&mut self, _chunk: &[u8], _out: &mut Vec<Part>) {
        todo!("interim: written with the protocol parsers")
    }

    pub fn push_str(&mut self, chunk: &str, out: &mut Vec<Part>) {
        self.push(chunk.as_bytes(), out)
    }

    /// Ends the stream: closes open text, recovers or reports an unfinished call.
    pub fn finish(&mut self, _out: &mut Vec<Part>) {
        todo!("interim: written with the protocol parsers")
    }

    /// The spans recognised so far, in order; byte offsets into the decoded text.
    pub fn spans(&self) -> &[Span] {
        &[]
    }
}
