//! The bottom types of a parse: the byte ranges of the output and what they became, and the
//! result of a whole-text parse.

use serde::{Deserialize, Serialize};

use crate::part::Part;

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
