//! The wires: one folder per wire protocol, each holding its request mapping (`request.rs`), its
//! answer decoder (`decode.rs`) and how it lists models, behind one [`WireFormat`].
//!
//! A wire is a [`Wire`] variant (a column of the provider table, so it sits with the table's
//! types in `spec`) and the [`WireFormat`] it maps to in [`Wire::format`]; everything else (the
//! request builder, the decoder, the model listing, the framing, the pre-send checks) asks the
//! format. A new wire is one folder here, its `mod` line and its arm in [`Wire::format`], its
//! variant, and the providers that speak it in the provider table. What every wire shares (a
//! tool's declaration, a chat-style body, sampling keys, reading an event as JSON, reading a
//! model list) is in [`shared`].

pub(crate) mod anthropic;
mod gemini;
mod ollama;
mod openai_chat;
mod openai_responses;
pub(crate) mod shared;

use serde_json::Value;

use crate::error::ProviderError;

use super::assemble::Delta;
use super::plan::Plan;
use super::request::Request;
use super::spec::Wire;

// The enum is a column of the provider table (in `spec`); what each wire does is here.
impl Wire {
    /// What this wire does: the one place that maps a wire to its folder.
    pub(crate) fn format(self) -> &'static dyn WireFormat {
        match self {
            Wire::OpenAiChat => &openai_chat::OpenAiChat,
            Wire::OpenAiResponses => &openai_responses::OpenAiResponses,
            Wire::Anthropic => &anthropic::Anthropic,
            Wire::Gemini => &gemini::Gemini,
            Wire::Ollama => &ollama::Ollama,
        }
    }

    /// Whether a streamed answer comes as server-sent events (else as NDJSON lines).
    pub fn streams_sse(self) -> bool {
        self.format().streams_sse()
    }
}

/// An HTTP request ready to send (always a `POST` of a JSON body), without the key: the run adds
/// the key's header as the provider's [`Auth`](crate::provider::Auth) says.
#[derive(Clone, Debug, PartialEq)]
pub struct WireRequest {
    /// The endpoint.
    pub url: String,
    /// Headers the wire needs besides the key and `content-type` (e.g. `anthropic-version`).
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
}

/// One wire: how a request is written on it, how its answers are read, and how its models are
/// listed. Implemented once per folder.
// Without the `http` feature nothing lists models.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) trait WireFormat: BuildRequest + DecodeAnswers + Sync {
    /// Whether a streamed answer comes as server-sent events (else as NDJSON lines).
    fn streams_sse(&self) -> bool {
        true
    }

    /// Whether the native finish reason says `tool calls` whenever the answer has calls (the
    /// lint's `finish-mismatch` holds the wire to it).
    fn finish_names_calls(&self) -> bool {
        false
    }

    /// Whether the tool choice can name the allowed tools; without it only the allowed tools are
    /// declared.
    fn allowed_tools(&self) -> bool {
        false
    }

    /// The checks this wire adds to [`Request::validate`].
    fn validate(&self, _req: &Request) -> Result<(), ProviderError> {
        Ok(())
    }

    /// The URL of one page of the model list (`page`: what the previous page said comes next).
    fn models_url(&self, base: &str, page: Option<&str>) -> String;

    /// The model names of one page, and what asks for the next page when there is one.
    fn models_page(&self, page: &Value) -> (Vec<String>, Option<String>);

    /// Whether the listed names are sorted (else kept in the order the provider gave).
    fn models_sorted(&self) -> bool {
        true
    }

    /// Headers the model list needs besides the key.
    fn models_headers(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }
}

/// A wire's request mapping (implemented in its `request.rs`).
pub(crate) trait BuildRequest {
    /// The request on this wire against `base` (no trailing slash, no query).
    fn build(&self, req: &Request, plan: &Plan, base: &str) -> WireRequest;
}

/// A wire's answer decoding (implemented in its `decode.rs`).
pub(crate) trait DecodeAnswers {
    /// A decoder for one answer: a stream of events, or one whole body.
    fn decoder(&self, stream: bool) -> Box<dyn WireDecoder>;
}

/// Reads the wire events of one answer into provider-neutral deltas.
pub(crate) trait WireDecoder: Send {
    /// Reads one wire event (or the whole body).
    fn push(&mut self, data: &str, out: &mut Vec<Delta>);
}
