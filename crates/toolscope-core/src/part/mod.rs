//! The part vocabulary: the JSON every surface of toolscope speaks.
//!
//! Names follow the AI SDK stream-part vocabulary. A generate (whole-text) parse yields `text`,
//! `tool-call` and `error` parts; a stream parse yields the incremental `*-start`/`*-delta`/`*-end`
//! parts, `tool-call` when a call is complete, and `finish`. Providers that stream reasoning apart
//! from the answer add `reasoning-start/delta/end`. Parts serialise to exactly one JSON
//! object each (JSONL on the command line); `input` is always a JSON object, never a string.

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod writer;

use crate::error::{ErrorCategory, ProviderError};

pub use writer::{PartSink, PartWriter};

/// An id of a text block or a tool call, stable within one run. Every delta of a block carries
/// it, so ids of up to 24 bytes (toolscope's own, most providers') are kept inline: cloning one
/// touches neither the heap nor an atomic counter.
pub type PartId = compact_str::CompactString;

/// The text of a delta. Deltas are often a few bytes (one per chunk when a stream arrives a
/// byte at a time), so short ones are kept inline, without a heap allocation.
pub type Delta = compact_str::CompactString;

/// One part of a parsed model output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Part {
    /// Generate only: a block of the model's reasoning, written in the output text between a
    /// protocol's reasoning markers (`<think>` … `</think>`, a harmony `analysis` channel).
    Reasoning {
        /// The reasoning, markers left out.
        text: String,
    },
    /// Generate only: a run of plain text between tool calls.
    Text {
        /// The text as the model wrote it (markup that could not be parsed included).
        text: String,
    },
    /// Stream only: a text block opens. Its deltas and its end carry the same `id`.
    TextStart {
        /// The block's id, `text-N` counting from 1 within one answer.
        id: PartId,
    },
    /// Stream only: the next piece of an open text block's text.
    TextDelta {
        /// The id of the open text block.
        id: PartId,
        /// The new text, never empty; a block's deltas concatenated give its text.
        delta: Delta,
    },
    /// Stream only: the text block with this `id` is closed; nothing more arrives for it.
    TextEnd {
        /// The id of the closed text block.
        id: PartId,
    },
    /// A block of the model's reasoning ("thinking"), when the provider streams it apart from
    /// the answer (Anthropic thinking blocks, OpenAI-compatible `reasoning_content`, Gemini
    /// thought parts).
    ReasoningStart {
        /// The block's id, `reasoning-N` counting from 1 within one answer.
        id: PartId,
        /// The provider withheld the reasoning's text (Anthropic `redacted_thinking`): the block
        /// has no deltas, and its encrypted content rides in the end's `providerMetadata`.
        #[serde(default, skip_serializing_if = "is_false")]
        redacted: bool,
    },
    /// The next piece of an open reasoning block.
    ReasoningDelta {
        /// The id of the open reasoning block.
        id: PartId,
        /// The new reasoning text, never empty.
        delta: Delta,
    },
    /// The reasoning block with this `id` is closed.
    ReasoningEnd {
        /// The id of the closed reasoning block.
        id: PartId,
        /// What the provider needs back to continue after this reasoning, keyed by provider
        /// (`{"anthropic": {"signature": …}}`, `{"openai-responses": {"itemId": …}}`); see
        /// [`crate::provider::Reasoning`].
        #[serde(
            default,
            rename = "providerMetadata",
            skip_serializing_if = "Option::is_none"
        )]
        provider_metadata: Option<Box<Value>>,
    },
    /// Stream only: a tool call begins and its name is known. Its input deltas follow, then its
    /// `tool-input-end`, then its `tool-call` (or, when the markup turns out malformed, no call
    /// and an `error` part).
    ToolInputStart {
        /// The call's id (`call-N`, or the provider's own id); the same as the `toolCallId` of the
        /// `tool-call` that completes it.
        id: PartId,
        /// The name of the tool being called, as the model wrote it (it may be an unknown tool).
        #[serde(rename = "toolName")]
        tool_name: String,
    },
    /// A piece of the canonical JSON of the coerced input. The deltas of one call, concatenated,
    /// parse to the `input` of its `tool-call`.
    ToolInputDelta {
        /// The id of the call the delta belongs to.
        id: PartId,
        /// A piece of JSON text, never empty.
        delta: Delta,
    },
    /// Stream only: no more input deltas will arrive for the call with this `id`.
    ToolInputEnd {
        /// The id of the call whose input is complete.
        id: PartId,
    },
    // The large variants are boxed: the frequent deltas then stay small to move.
    /// A finished tool call, on both paths, with its coerced input and what coercion and
    /// validation found.
    ToolCall(Box<ToolCall>),
    /// The answer is over: the last part of a provider run that did not fail. A protocol's
    /// [`StreamParser`](crate::protocol::StreamParser) never emits it.
    Finish {
        /// Why the model stopped.
        #[serde(rename = "finishReason")]
        finish_reason: FinishReason,
        /// The token counts, when the wire reported any; absent otherwise. (Boxed, as the
        /// provider metadata of a reasoning end is: inline they made every part, the one-byte
        /// deltas included, 96 bytes to move instead of 56.)
        #[serde(skip_serializing_if = "Option::is_none", default)]
        usage: Option<Box<Usage>>,
    },
    /// The result of a call: run by the provider itself (a server tool: web search, code
    /// execution, an MCP connector), or by an MCP server toolscope called.
    ToolResult(Box<ToolResult>),
    /// A citation or annotation the provider attached to the answer (a URL it searched, a
    /// document passage it quoted).
    Source(Box<Source>),
    /// The model refused, and said so in a field of its own (OpenAI `refusal`, Anthropic's
    /// refusal explanation): never shown as an empty answer.
    Refusal {
        /// The refusal as the provider worded it.
        text: String,
    },
    /// A finding of the stream lint: the stream broke a rule of its wire, or the answer did not
    /// honour the request (the tool choice, `parallel_tool_calls`). Nothing is dropped because
    /// of it; it says what a strict client would trip over.
    Warning(Box<Warning>),
    /// Something went wrong here: a parse problem (the markup stays as text) or a provider
    /// failure.
    Error(Box<ErrorPart>),
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A finished tool call with its (coerced) input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, matching the `id` of its `tool-input-*` parts on the stream path.
    #[serde(rename = "toolCallId")]
    pub tool_call_id: PartId,
    /// The name of the called tool, as the model wrote it.
    #[serde(rename = "toolName")]
    pub tool_name: String,
    /// Always a JSON object.
    pub input: Value,
    /// What coercion changed, in the order it was applied.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub coercions: Vec<Coercion>,
    /// JSON Schema violations left after coercion.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub invalid: Vec<Violation>,
    /// The provider ran this tool itself (a server tool); its result follows as a
    /// `tool-result`, and the call is not the client's to answer. Such calls are neither
    /// coerced nor checked against the tools, and never make the finish reason `tool-calls`.
    #[serde(default, rename = "providerExecuted", skip_serializing_if = "is_false")]
    pub provider_executed: bool,
    /// What the provider needs back with this call to continue the conversation, keyed by
    /// provider (Gemini's `{"gemini": {"thoughtSignature": …}}`).
    #[serde(
        default,
        rename = "providerMetadata",
        skip_serializing_if = "Option::is_none"
    )]
    pub provider_metadata: Option<Value>,
}

/// The result of a tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The id of the call this result answers.
    pub tool_call_id: PartId,
    /// The called tool's name.
    pub tool_name: String,
    /// The result as the provider or server gave it (search results, stdout and return code, …).
    pub output: Value,
    /// The tool failed; `output` says how.
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
    /// The provider ran the tool itself.
    #[serde(default, skip_serializing_if = "is_false")]
    pub provider_executed: bool,
}

/// What a source points at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SourceType {
    /// A web page, by URL.
    #[default]
    Url,
    /// A document the request carried (Anthropic document citations), by title.
    Document,
}

/// A citation, an annotation or a grounding source.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// What the source points at.
    pub source_type: SourceType,
    /// The cited page, for a URL source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The page's or document's title, when the provider gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The passage cited, when the provider quoted it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cited_text: Option<String>,
}

/// The codes of the warnings that are notices (see [`Warning::is_notice`]).
pub const NOTICE_CODES: &[&str] = &[
    "learned-marker-suffix",
    "doubled-tool-name",
    "reasoning-close-without-open",
];

/// A finding of the stream lint (see [`crate::lint`]), or a notice of what a parser learned.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// Which rule: `missing-index`, `finish-mismatch`, `tool-choice-ignored`, `unknown-block`, …
    pub code: String,
    /// What was found, in one sentence for a person.
    pub message: String,
    /// The call the finding concerns, when it concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<PartId>,
    /// The tool the finding concerns, when it concerns one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

impl Warning {
    /// A finding with a code and a message.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Warning {
            code: code.to_string(),
            message: message.into(),
            ..Warning::default()
        }
    }

    /// Whether this is a notice rather than a finding: something a parser learned from the
    /// output and says (`learned-marker-suffix`: the suffix a format's markers carry;
    /// `doubled-tool-name`: a call named `f.f` read as the tool `f`;
    /// `reasoning-close-without-open`: reasoning the prompt opened, whose text went out as
    /// answer text). The stream lint does not count notices.
    pub fn is_notice(&self) -> bool {
        NOTICE_CODES.contains(&self.code.as_str())
    }
}

/// One change made by coercion: the value at `path` (a JSON pointer into `input`) was `from` and
/// became `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Coercion {
    /// Where the value is: a JSON pointer into `input`, `""` for the whole input.
    pub path: String,
    /// The value as the model wrote it.
    pub from: Value,
    /// The value after coercion, as it now stands in `input`.
    pub to: Value,
}

/// One JSON Schema violation: where (a JSON pointer into `input`) and what.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Where the offending value is: a JSON pointer into `input`, `""` for the whole input.
    pub path: String,
    /// What the validator says is wrong, in its words.
    pub message: String,
}

/// Why a model stopped, normalised across providers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FinishReason {
    /// A natural end (also a stop sequence).
    Stop,
    /// The output hit the token limit (or the context window) and was cut.
    Length,
    /// The provider withheld or cut the output (safety filter, refusal, recitation).
    ContentFilter,
    /// The model stopped to have its tool calls run. A plain stop (or no reason at all) after
    /// tool calls is reported as this one too.
    ToolCalls,
    /// The provider reported an error as the reason (e.g. Gemini's malformed function call).
    Error,
    /// A reason the wire gave that none of the others names.
    Other,
    /// The stream ended without any reason.
    Unknown,
}

impl FinishReason {
    /// The reason as serialised in a `finish` part (`stop`, `tool-calls`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ContentFilter => "content-filter",
            FinishReason::ToolCalls => "tool-calls",
            FinishReason::Error => "error",
            FinishReason::Other => "other",
            FinishReason::Unknown => "unknown",
        }
    }
}

/// Token counts, normalised across providers: the same field means the same thing whoever
/// reported it. A figure the wire does not carry is absent, never guessed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Every prompt token processed, those read from a cache included (Anthropic reports cached
    /// ones apart; they are added in).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub input_tokens: Option<u64>,
    /// The share of `input_tokens` read from a prompt cache.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cached_input_tokens: Option<u64>,
    /// Every token generated, reasoning included (Gemini's thought tokens, and reasoning a
    /// server counted apart, are added in).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub output_tokens: Option<u64>,
    /// The reasoning share of `output_tokens`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reasoning_tokens: Option<u64>,
    /// `input_tokens + output_tokens` when both are known, else the provider's figure.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub total_tokens: Option<u64>,
}

/// Anything that went wrong, emitted where it was detected. Parser problems carry a `reason`
/// (`malformed-tool-call`, `unfinished-tool-call`, `unknown-tool`, …); provider problems carry a
/// `category` (`provider_rate_limit`, …).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorPart {
    /// For a provider or request failure: which kind. Absent for parse problems.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub category: Option<ErrorCategory>,
    /// For a parse problem: a kebab-case code (`malformed-tool-call`, `unknown-tool`,
    /// `invalid-utf8`, …). Absent for provider failures.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub reason: Option<String>,
    /// What went wrong, in one sentence for a person.
    pub message: String,
    /// The call the problem concerns, when it concerns one that got an id.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_call_id: Option<PartId>,
    /// The tool the problem concerns, when it is known.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_name: Option<String>,
    /// HTTP status, for provider errors.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub status: Option<u16>,
    /// Seconds to wait before retrying, for rate limits.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub retry_after: Option<f64>,
    /// For a call that could not be completed (cut by the token limit, malformed): the argument
    /// text received, as it came.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub arguments: Option<String>,
}

impl ErrorPart {
    /// The category's name, for a provider problem.
    pub fn category_name(&self) -> Option<&'static str> {
        self.category.map(ErrorCategory::as_str)
    }

    /// What kind of problem this is: the category's name, else the reason.
    pub fn kind(&self) -> Option<&str> {
        self.category_name().or(self.reason.as_deref())
    }

    /// A parser problem with a `reason`.
    pub fn reason(reason: &str, message: impl Into<String>) -> Self {
        ErrorPart {
            reason: Some(reason.to_string()),
            message: message.into(),
            ..ErrorPart::default()
        }
    }
}

impl ProviderError {
    /// The `error` part that reports this failure.
    pub fn to_part(&self) -> ErrorPart {
        ErrorPart {
            category: Some(self.category),
            message: self.message.clone(),
            status: self.status,
            retry_after: self.retry_after,
            ..ErrorPart::default()
        }
    }
}

impl Part {
    /// A `tool-call` part.
    pub fn tool_call(call: ToolCall) -> Part {
        Part::ToolCall(Box::new(call))
    }

    /// An `error` part.
    pub fn error(error: ErrorPart) -> Part {
        Part::Error(Box::new(error))
    }

    /// A `warning` part.
    pub fn warning(warning: Warning) -> Part {
        Part::Warning(Box::new(warning))
    }

    /// The type name, as serialised (`text-delta`, `tool-call`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Part::Reasoning { .. } => "reasoning",
            Part::Text { .. } => "text",
            Part::TextStart { .. } => "text-start",
            Part::TextDelta { .. } => "text-delta",
            Part::TextEnd { .. } => "text-end",
            Part::ReasoningStart { .. } => "reasoning-start",
            Part::ReasoningDelta { .. } => "reasoning-delta",
            Part::ReasoningEnd { .. } => "reasoning-end",
            Part::ToolInputStart { .. } => "tool-input-start",
            Part::ToolInputDelta { .. } => "tool-input-delta",
            Part::ToolInputEnd { .. } => "tool-input-end",
            Part::ToolCall(_) => "tool-call",
            Part::Finish { .. } => "finish",
            Part::ToolResult(_) => "tool-result",
            Part::Source(_) => "source",
            Part::Refusal { .. } => "refusal",
            Part::Warning(_) => "warning",
            Part::Error(_) => "error",
        }
    }

    /// One line of JSON.
    pub fn to_json_line(&self) -> String {
        // Serialising a `Part` cannot fail: every field is a string, number or `Value`.
        serde_json::to_string(self).unwrap_or_else(|e| {
            format!(r#"{{"type":"error","message":"cannot serialise part: {e}"}}"#)
        })
    }
}

/// What a sequence of parts amounts to, independent of how it was chunked: the text (all text
/// and text-delta parts concatenated) and the ordered tool calls. Used to compare the stream and
/// generate paths.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Collapsed {
    /// The text of every `reasoning` and `reasoning-delta` part, concatenated in order.
    pub reasoning: String,
    /// The text of every `text` and `text-delta` part, concatenated in order.
    pub text: String,
    /// Each tool call's name and input, in order.
    pub calls: Vec<(String, Value)>,
    /// Each error part's `reason` (empty for one that has none), in order.
    pub errors: Vec<String>,
}

impl Collapsed {
    /// Collapses a list of parts, generate or stream; other part types are ignored.
    pub fn of(parts: &[Part]) -> Self {
        let mut c = Collapsed::default();
        for p in parts {
            match p {
                Part::Text { text } => c.text.push_str(text),
                Part::TextDelta { delta, .. } => c.text.push_str(delta),
                Part::Reasoning { text } => c.reasoning.push_str(text),
                Part::ReasoningDelta { delta, .. } => c.reasoning.push_str(delta),
                Part::ToolCall(call) => c.calls.push((call.tool_name.clone(), call.input.clone())),
                Part::Error(e) => c.errors.push(e.reason.clone().unwrap_or_default()),
                _ => {}
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_part_is_no_larger_than_a_delta_needs() {
        // A stream writes a part per piece, and every consumer moves each one: a delta (its id
        // and its text, both kept inline up to 24 bytes) sets the size, and every larger
        // variant is boxed.
        assert!(
            std::mem::size_of::<Part>() <= 2 * std::mem::size_of::<Delta>() + 8,
            "Part is {} bytes",
            std::mem::size_of::<Part>()
        );
    }

    #[test]
    fn parts_serialise_with_the_ai_sdk_names() {
        let id: PartId = "call-1".into();
        let cases = [
            (
                Part::TextDelta {
                    id: "text-0".into(),
                    delta: "hi".into(),
                },
                json!({"type":"text-delta","id":"text-0","delta":"hi"}),
            ),
            (
                Part::ToolInputStart {
                    id: id.clone(),
                    tool_name: "get_weather".into(),
                },
                json!({"type":"tool-input-start","id":"call-1","toolName":"get_weather"}),
            ),
            (
                Part::tool_call(ToolCall {
                    tool_call_id: id.clone(),
                    tool_name: "get_weather".into(),
                    input: json!({"city":"Paris"}),
                    coercions: vec![],
                    invalid: vec![],
                    ..Default::default()
                }),
                json!({"type":"tool-call","toolCallId":"call-1","toolName":"get_weather","input":{"city":"Paris"}}),
            ),
            (
                Part::Finish {
                    finish_reason: FinishReason::ToolCalls,
                    usage: Some(Box::new(Usage {
                        input_tokens: Some(3),
                        output_tokens: Some(4),
                        total_tokens: Some(7),
                        ..Usage::default()
                    })),
                },
                json!({"type":"finish","finishReason":"tool-calls","usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7}}),
            ),
            (
                Part::error(ErrorPart {
                    category: Some(crate::error::ErrorCategory::ProviderRateLimit),
                    message: "slow down".into(),
                    status: Some(429),
                    retry_after: Some(2.0),
                    ..ErrorPart::default()
                }),
                json!({"type":"error","category":"provider_rate_limit","message":"slow down","status":429,"retryAfter":2.0}),
            ),
        ];
        for (part, want) in cases {
            let got: Value = serde_json::from_str(&part.to_json_line()).unwrap();
            assert_eq!(got, want);
            let back: Part = serde_json::from_value(want).unwrap();
            assert_eq!(back, part);
        }
    }

    #[test]
    fn collapse_merges_text_and_orders_calls() {
        let parts = vec![
            Part::TextDelta {
                id: "t".into(),
                delta: "a".into(),
            },
            Part::Text { text: "b".into() },
            Part::tool_call(ToolCall {
                tool_call_id: "c".into(),
                tool_name: "x".into(),
                input: json!({}),
                coercions: vec![],
                invalid: vec![],
                ..Default::default()
            }),
        ];
        let c = Collapsed::of(&parts);
        assert_eq!(c.text, "ab");
        assert_eq!(c.calls, vec![("x".to_string(), json!({}))]);
    }
}
