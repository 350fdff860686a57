//! Providers: one request type, one adapter per wire, a table of providers, and a run that
//! streams events.
//!
//! A [`Request`] (plain, serialisable data, never a key) is checked before anything is sent
//! ([`Request::validate`]), mapped to the wire of its provider (one folder per [`Wire`] under
//! `wires/`, one [`ProviderSpec`] per provider in the table [`PROVIDERS`]), and sent. What comes
//! back is decoded in two layers that work without HTTP, so that a session replay feeds recorded wire
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

mod assemble;
mod decoder;
mod errors;
mod event;
mod framer;
#[cfg(feature = "http")]
mod http;
mod keys;
#[cfg(feature = "http")]
mod models;
pub mod ndjson;
mod plan;
mod request;
#[cfg(feature = "http")]
mod run;
mod secret_url;
mod spec;
pub mod sse;
mod table;
mod wire_request;
mod wires;

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
pub use secret_url::{endpoint, redact_url};
pub use spec::{Auth, Capabilities, ProviderKind, ProviderSpec, Wire};
pub use table::PROVIDERS;
pub use wire_request::{wire_body, wire_request};
pub use wires::WireRequest;

#[cfg(test)]
mod tests;
