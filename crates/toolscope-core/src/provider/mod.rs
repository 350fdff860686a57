//! Providers: one request type, one adapter per wire, a table of providers, and a run that
//! streams events.
//!
//! A [`Request`] (plain, serialisable data, never a key) is checked before anything is sent
//! ([`Request::validate`]), mapped to the wire of its provider (one adapter module per
//! [`Wire`], one [`ProviderSpec`] per provider in [`PROVIDERS`]), and sent. What comes back is
//! decoded in two layers that work without HTTP, so that a session replay feeds recorded wire
//! events through exactly the same code:
//!
//! - a [`WireFramer`] cuts the body bytes into wire events: SSE `data` payloads, NDJSON lines, or
//!   the whole body when not streaming (chunks may split anything, even a UTF-8 sequence);
//! - a [`Decoder`] turns each wire event into [`RunEvent`]s: the model's output text as it
//!   arrives (what the Raw pane shows), the spans of emulated calls, and the [`Part`]s.
//!
//! With the `http` feature, `Run::start` does the whole thing on the tokio runtime and hands
//! the events over a channel, each raw wire event first, followed by what it produced. The parts
//! end with exactly one `finish` or `error`. Dropping the `Run` (or only its receiver) cancels
//! the HTTP request.
//!
//! A replay is: for each recorded [`RawEvent`], [`Decoder::push_raw`]; then [`Decoder::finish`].
//!
//! Keys live in [`Keys`], apart from the request; they are sent as headers and redacted from
//! every run event, in case a server echoes one back.
//!
//! [`Part`]: crate::part::Part

mod anthropic;
mod assemble;
mod decoder;
mod errors;
mod event;
mod framer;
mod gemini;
#[cfg(feature = "http")]
mod http;
mod keys;
#[cfg(feature = "http")]
mod models;
pub mod ndjson;
mod ollama;
mod openai;
mod plan;
mod request;
mod responses;
#[cfg(feature = "http")]
mod run;
mod secret_url;
mod spec;
pub mod sse;
mod wire;

use serde_json::Value;

use crate::error::ProviderError;

pub use anthropic::{ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION};
pub use decoder::Decoder;
pub use event::{OutputText, RawEvent, RunEvent};
pub use framer::{Oversize, WireFramer};
pub use keys::{Keys, Secret};
#[cfg(feature = "http")]
pub use models::list_models;
pub use request::{
    DEFAULT_FIRST_TOKEN_SECS, Limits, Message, Reasoning, ReasoningEffort, Request, Sampling,
    Timeouts,
};
#[cfg(feature = "http")]
pub use run::{Run, run};
pub use secret_url::{KEY_PARAMS, REDACTED, endpoint, is_key_param, redact_url, url_secrets};
pub use spec::{Auth, Capabilities, ProviderKind, ProviderSpec, Wire};

use plan::Plan;

/// The providers this library speaks to, in the order pickers list them.
pub static PROVIDERS: &[&ProviderSpec] = &[
    &openai::SPEC,
    &responses::SPEC,
    &anthropic::SPEC,
    &gemini::SPEC,
    &ollama::SPEC,
];

impl ProviderKind {
    /// OpenAI Chat Completions, and every OpenAI-compatible server through the base URL.
    pub const OPENAI: ProviderKind = ProviderKind(&openai::SPEC);
    /// The OpenAI Responses API, and every server that offers `/responses`.
    pub const OPENAI_RESPONSES: ProviderKind = ProviderKind(&responses::SPEC);
    /// Anthropic Messages.
    pub const ANTHROPIC: ProviderKind = ProviderKind(&anthropic::SPEC);
    /// Google Gemini.
    pub const GEMINI: ProviderKind = ProviderKind(&gemini::SPEC);
    /// Ollama's native chat API.
    pub const OLLAMA: ProviderKind = ProviderKind(&ollama::SPEC);

    /// Every provider of [`PROVIDERS`].
    pub fn all() -> impl Iterator<Item = ProviderKind> {
        PROVIDERS.iter().map(|s| ProviderKind(s))
    }
}

/// An HTTP request ready to send (always a `POST` of a JSON body), without the key: the run adds
/// the key's header as the provider's [`Auth`] says.
#[derive(Clone, Debug, PartialEq)]
pub struct WireRequest {
    /// The endpoint.
    pub url: String,
    /// Headers the wire needs besides the key and `content-type` (e.g. `anthropic-version`).
    pub headers: Vec<(&'static str, String)>,
    /// The JSON body.
    pub body: Value,
}

/// The request that `request` becomes against `base_url` (pre-send checks are not run; see
/// [`Request::validate`]): what a user interface can show before sending.
pub fn wire_request(request: &Request, base_url: &str) -> WireRequest {
    build_wire(request, &Plan::of(request), base_url.trim_end_matches('/'))
}

/// The URL and wire body of [`wire_request`].
pub fn wire_body(request: &Request, base_url: &str) -> (String, Value) {
    let w = wire_request(request, base_url);
    (w.url, w.body)
}

/// The error for an HTTP response with a failure `status` and this `body` (`retry_after` from its
/// headers, in seconds). What a run reports for it; a replay of a recorded failure calls this.
pub fn response_error(
    status: u16,
    retry_after: Option<f64>,
    body: &str,
    url: &str,
) -> ProviderError {
    errors::status_error(status, retry_after, body, url)
}

/// The request on the wire of its provider. A query on the base URL (a key some servers take
/// there) goes after the endpoint's path, not before it.
fn build_wire(req: &Request, plan: &Plan, base: &str) -> WireRequest {
    let (base, query) = secret_url::split_query(base);
    let base = base.as_str();
    let mut wire = match req.provider.wire() {
        Wire::OpenAiChat => openai::build(req, plan, base),
        Wire::OpenAiResponses => responses::build(req, plan, base),
        Wire::Anthropic => anthropic::build(req, plan, base),
        Wire::Gemini => gemini::build(req, plan, base),
        Wire::Ollama => ollama::build(req, plan, base),
    };
    wire.url = secret_url::with_query(std::mem::take(&mut wire.url), query.as_deref());
    wire
}

#[cfg(test)]
mod tests;
