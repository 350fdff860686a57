//! Providers: one request type, five adapters, and a run that streams events.
//!
//! A [`Request`] (plain, serialisable data, never a key) is checked before anything is sent
//! ([`Request::validate`]), mapped to the wire of its [`ProviderKind`] (one module per
//! provider), and sent. What comes back is decoded in two layers that work without HTTP, so that
//! a session replay can feed recorded wire events through exactly the same code:
//!
//! - a [`WireFramer`] cuts the body bytes into wire events: SSE `data` payloads, NDJSON lines, or
//!   the whole body when not streaming (chunks may split anything, even a UTF-8 sequence);
//! - a [`Decoder`] turns each wire event into [`RunEvent`]s: the model's output text as it
//!   arrives (what the Raw pane shows), the spans of emulated calls, and the [`Part`]s.
//!
//! [`Run::start`] does the whole thing on the tokio runtime and hands the events over a channel,
//! each raw wire event first, followed by what it produced. The parts end with exactly one
//! `finish` or `error`. Dropping the [`Run`] (or only its receiver) cancels the HTTP request.
//!
//! A replay is: for each recorded [`RawEvent`], [`Decoder::push_raw`]; then [`Decoder::finish`].
//!
//! Keys live in [`Keys`], apart from the request; they are sent as headers and redacted from
//! every run event, in case a server echoes one back.

mod anthropic;
mod assemble;
mod demo;
mod emulation;
mod gemini;
mod http;
pub mod ndjson;
mod ollama;
mod openai;
mod request;
pub mod sse;
mod wire;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::core::error::{ErrorCategory, ProviderError};
use crate::core::part::{Part, PartId};
use crate::core::protocol::Span;

pub use request::{
    ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, Keys, Message, ProviderKind, Request,
    Sampling, Secret, Timeouts,
};

use assemble::{Assembler, Delta};
use demo::LocalDemo;
use emulation::Plan;
use ndjson::NdjsonDecoder;
use sse::{SseDecoder, SseEvent};

/// One thing that happened during a run, in order. Serialised with an `event` tag; a part keeps
/// its own `type` tag beside it: `{"event":"part","type":"text-delta",…}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum RunEvent {
    /// A wire event as received, before what it produced.
    Raw(RawEvent),
    /// A piece of the model's output as it arrived: answer text, or (with `toolCallId`) a piece
    /// of a native call's argument text.
    Output(OutputText),
    /// Emulated mode: a span of the output text (byte offsets into the concatenated answer
    /// `output` events, those without `toolCallId`) that became a tool call or was malformed.
    Span(Span),
    Part(Part),
}

/// A wire event: an SSE `data` payload, an NDJSON line, or a whole non-streamed body (also the
/// body of an HTTP error, which then carries its status).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawEvent {
    /// Milliseconds since the request was sent.
    pub at_ms: u64,
    pub data: String,
    /// The HTTP status, on the body of a failed response only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The failed response's `retry-after`, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputText {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<PartId>,
}

impl RunEvent {
    pub fn as_part(&self) -> Option<&Part> {
        match self {
            RunEvent::Part(p) => Some(p),
            _ => None,
        }
    }
}

/// An HTTP request ready to send, without the key.
#[derive(Clone, Debug)]
pub(crate) struct WireRequest {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Value,
}

/// The URL and wire body that `request` produces against `base_url` (pre-send checks are not
/// run; see [`Request::validate`]): what the TUI can show before sending.
pub fn wire_body(request: &Request, base_url: &str) -> (String, Value) {
    let w = build_wire(request, &Plan::of(request), base_url.trim_end_matches('/'));
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
    let status =
        reqwest::StatusCode::from_u16(status).unwrap_or(reqwest::StatusCode::INTERNAL_SERVER_ERROR);
    http::status_error(status, retry_after, body, url)
}

fn build_wire(req: &Request, plan: &Plan, base: &str) -> WireRequest {
    match req.provider {
        ProviderKind::OpenAi | ProviderKind::Demo => openai::build(req, plan, base),
        ProviderKind::Anthropic => anthropic::build(req, plan, base),
        ProviderKind::Gemini => gemini::build(req, plan, base),
        ProviderKind::Ollama => ollama::build(req, plan, base),
    }
}

/// Cuts response bytes into wire events: SSE data payloads or NDJSON lines when streaming, the
/// whole body otherwise.
pub struct WireFramer {
    kind: Framing,
    events: Vec<SseEvent>,
}

enum Framing {
    Sse(SseDecoder),
    Ndjson(NdjsonDecoder),
    Whole(Vec<u8>),
}

impl WireFramer {
    pub fn new(request: &Request) -> Self {
        let kind = match (request.stream, request.provider.streams_sse()) {
            (false, _) => Framing::Whole(Vec::new()),
            (true, true) => Framing::Sse(SseDecoder::new()),
            (true, false) => Framing::Ndjson(NdjsonDecoder::new()),
        };
        WireFramer {
            kind,
            events: Vec::new(),
        }
    }

    /// Feeds body bytes; returns the wire events they complete.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        match &mut self.kind {
            Framing::Sse(d) => {
                d.push(bytes, &mut self.events);
                out.extend(self.events.drain(..).map(|e| e.data));
            }
            Framing::Ndjson(d) => d.push(bytes, &mut out),
            Framing::Whole(buf) => buf.extend_from_slice(bytes),
        }
        out
    }

    /// Ends the body; returns the last wire events (for a whole body, the body).
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        match &mut self.kind {
            Framing::Sse(d) => {
                d.finish(&mut self.events);
                out.extend(self.events.drain(..).map(|e| e.data));
            }
            Framing::Ndjson(d) => d.finish(&mut out),
            Framing::Whole(buf) => {
                let body = std::mem::take(buf);
                if !body.is_empty() {
                    out.push(String::from_utf8_lossy(&body).into_owned());
                }
            }
        }
        out
    }
}

enum WireDecoder {
    OpenAi(openai::Decoder),
    Anthropic(anthropic::Decoder),
    Gemini(gemini::Decoder),
    Ollama(ollama::Decoder),
}

/// Turns the wire events of one answer into run events. Works without HTTP: a replay feeds it
/// recorded wire events and gets the same events back.
pub struct Decoder {
    wire: WireDecoder,
    assembler: Assembler,
    stream: bool,
    deltas: Vec<Delta>,
}

impl Decoder {
    /// A decoder for the answer to `request` (its provider, streaming or not, its tools, and its
    /// protocol when emulated).
    pub fn new(request: &Request) -> Self {
        Self::with_plan(request, &Plan::of(request))
    }

    fn with_plan(request: &Request, plan: &Plan) -> Self {
        let stream = request.stream;
        let wire = match request.provider {
            ProviderKind::OpenAi | ProviderKind::Demo => {
                WireDecoder::OpenAi(openai::Decoder::new(stream))
            }
            ProviderKind::Anthropic => WireDecoder::Anthropic(anthropic::Decoder::new(stream)),
            ProviderKind::Gemini => WireDecoder::Gemini(gemini::Decoder::new(stream)),
            ProviderKind::Ollama => WireDecoder::Ollama(ollama::Decoder),
        };
        Decoder {
            wire,
            assembler: Assembler::new(request.tools.clone(), plan.output_parser(&request.tools)),
            stream,
            deltas: Vec::new(),
        }
    }

    /// Decodes one wire event. Events after the end (`finish` or `error`) are ignored.
    pub fn push(&mut self, wire_event: &str) -> Vec<RunEvent> {
        let mut out = Vec::new();
        if self.assembler.is_done() {
            return out;
        }
        match &mut self.wire {
            WireDecoder::OpenAi(d) => d.push(wire_event, &mut self.deltas),
            WireDecoder::Anthropic(d) => d.push(wire_event, &mut self.deltas),
            WireDecoder::Gemini(d) => d.push(wire_event, &mut self.deltas),
            WireDecoder::Ollama(d) => d.push(wire_event, &mut self.deltas),
        }
        for delta in self.deltas.drain(..) {
            self.assembler.push(delta, &mut out);
        }
        out
    }

    /// Decodes one recorded raw event: a wire event, or the body of a failed response (which
    /// ends the answer with its categorised error).
    pub fn push_raw(&mut self, raw: &RawEvent) -> Vec<RunEvent> {
        match raw.status {
            Some(status) => self.fail(response_error(status, raw.retry_after, &raw.data, "")),
            None => self.push(&raw.data),
        }
    }

    /// The wire events are over. A stream that had its finish reason ends normally (Gemini has
    /// no end marker; some OpenAI-compatible servers forget `[DONE]`); otherwise the answer was
    /// cut, and an `error` part says so after everything received.
    pub fn finish(&mut self) -> Vec<RunEvent> {
        let mut out = Vec::new();
        if self.assembler.is_done() {
            return out;
        }
        if self.stream && self.assembler.has_finish_reason() {
            self.assembler.push(Delta::Done, &mut out);
        } else if self.stream {
            self.assembler.fail(
                ProviderError::new(
                    ErrorCategory::ProviderUnavailable,
                    "the stream ended before the answer was complete",
                ),
                &mut out,
            );
        } else {
            self.assembler.fail(
                ProviderError::new(
                    ErrorCategory::ProviderInvalidResponse,
                    "the response body is empty",
                ),
                &mut out,
            );
        }
        out
    }

    /// Ends the answer with an error (a failed connection, a timeout, an HTTP error status).
    pub fn fail(&mut self, error: ProviderError) -> Vec<RunEvent> {
        let mut out = Vec::new();
        self.assembler.fail(error, &mut out);
        out
    }

    /// Whether the answer ended (a `finish` or `error` part was produced).
    pub fn is_done(&self) -> bool {
        self.assembler.is_done()
    }
}

/// A running request. Events arrive in order through [`Run::next`] (or as a `Stream`); the last
/// part is `finish` or `error`, then the channel closes. Dropping the run cancels the request.
pub struct Run {
    events: mpsc::Receiver<RunEvent>,
    task: tokio::task::JoinHandle<()>,
}

impl Run {
    /// Starts `request` on the current tokio runtime (call from within one).
    pub fn start(request: Request, keys: Keys) -> Run {
        let (tx, rx) = mpsc::channel(1024);
        let task = tokio::spawn(run(request, keys, tx));
        Run { events: rx, task }
    }

    pub async fn next(&mut self) -> Option<RunEvent> {
        self.events.recv().await
    }

    /// All the remaining events, until the run ends.
    pub async fn collect(mut self) -> Vec<RunEvent> {
        let mut all = Vec::new();
        while let Some(e) = self.events.recv().await {
            all.push(e);
        }
        all
    }

    /// Stops the request now; no more events arrive.
    pub fn cancel(&mut self) {
        self.task.abort();
        self.events.close();
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl futures::Stream for Run {
    type Item = RunEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<RunEvent>> {
        self.events.poll_recv(cx)
    }
}

/// Runs `request` to its end, sending every event to `tx`. Returns early, dropping the HTTP
/// request (which closes its connection), as soon as `tx`'s receiver is gone.
pub async fn run(request: Request, keys: Keys, tx: mpsc::Sender<RunEvent>) {
    let sink = Sink { tx, keys };
    let plan = Plan::of(&request);
    let mut decoder = Decoder::with_plan(&request, &plan);
    if let Err(e) = request.validate() {
        sink.send(decoder.fail(e)).await;
        return;
    }
    // The demo model is served for the length of this run; `_demo` keeps it up. With a base
    // URL, the run talks to a demo server already running (`toolscope serve-demo`).
    let (base, _demo) = match request.provider {
        ProviderKind::Demo if request.base_url.is_none() => match LocalDemo::start().await {
            Ok(server) => (server.base_url(), Some(server)),
            Err(e) => {
                sink.send(decoder.fail(e)).await;
                return;
            }
        },
        _ => (request.resolved_base_url().unwrap_or_default(), None),
    };
    let wire = build_wire(&request, &plan, &base);
    let client = match http::client(request.timeouts.connect()) {
        Ok(c) => c,
        Err(e) => {
            sink.send(decoder.fail(e)).await;
            return;
        }
    };
    let mut builder = client.post(&wire.url).json(&wire.body);
    for (name, value) in &wire.headers {
        builder = builder.header(*name, value);
    }
    if let Some(key) = keys_for(&sink.keys, request.provider) {
        builder = match request.provider {
            ProviderKind::Anthropic => builder.header("x-api-key", key.expose()),
            ProviderKind::Gemini => builder.header("x-goog-api-key", key.expose()),
            _ => builder.bearer_auth(key.expose()),
        };
    }
    let idle = request.timeouts.idle();
    let started = Instant::now();
    let at_ms = || started.elapsed().as_millis() as u64;

    let response = tokio::select! {
        // Whichever is ready first; a gone consumer must not wait for a slow server.
        biased;
        _ = sink.tx.closed() => return,
        r = tokio::time::timeout(idle, builder.send()) => r,
    };
    let mut response = match response {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let mut err = http::transport_error(&e, &wire.url);
            if e.is_connect() && request.provider == ProviderKind::Ollama {
                err.message.push_str(" (is Ollama running?)");
            }
            sink.send(decoder.fail(err)).await;
            return;
        }
        Err(_) => {
            let err = ProviderError::new(
                ErrorCategory::ProviderUnavailable,
                format!(
                    "no response from {} within {} s (idle timeout)",
                    wire.url,
                    idle.as_secs_f64()
                ),
            );
            sink.send(decoder.fail(err)).await;
            return;
        }
    };

    let status = response.status();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    // A server that ignores `stream: true` answers with one JSON body instead of SSE; it is
    // read whole (and the decoders recognise a whole body among stream events, so a replay of
    // it decodes the same).
    let whole_json = request.stream
        && request.provider.streams_sse()
        && content_type.starts_with("application/json");
    let mut framer = if status.is_success() && !whole_json {
        WireFramer::new(&request)
    } else {
        // An error body is read whole, whatever the request asked.
        WireFramer {
            kind: Framing::Whole(Vec::new()),
            events: Vec::new(),
        }
    };
    let retry_after = http::retry_after(response.headers());
    let mut error_body = String::new();
    loop {
        let next = tokio::select! {
            biased;
            _ = sink.tx.closed() => return,
            r = tokio::time::timeout(idle, response.chunk()) => r,
        };
        let ended = matches!(next, Ok(Ok(None)));
        let wire_events = match next {
            Ok(Ok(Some(bytes))) => framer.push(&bytes),
            Ok(Ok(None)) => framer.finish(),
            Ok(Err(e)) => {
                // Everything decoded so far was sent; an unfinished last line is dropped (it
                // cannot be whole), and the error part comes last.
                let mut err = http::transport_error(&e, &wire.url);
                err.message = format!("the stream broke: {}", err.message);
                sink.send(decoder.fail(err)).await;
                return;
            }
            Err(_) => {
                let err = ProviderError::new(
                    ErrorCategory::ProviderUnavailable,
                    format!("no data for {} s (idle timeout)", idle.as_secs_f64()),
                );
                sink.send(decoder.fail(err)).await;
                return;
            }
        };
        let mut events = Vec::new();
        for data in wire_events {
            // The raw event goes first, then what it produced.
            let decoded = if status.is_success() {
                decoder.push(&data)
            } else {
                error_body = data.clone();
                Vec::new()
            };
            let failed = !status.is_success();
            events.push(RunEvent::Raw(RawEvent {
                at_ms: at_ms(),
                data,
                status: failed.then_some(status.as_u16()),
                retry_after: if failed { retry_after } else { None },
            }));
            events.extend(decoded);
        }
        if ended {
            if status.is_success() {
                events.extend(decoder.finish());
            } else {
                let err = http::status_error(status, retry_after, &error_body, &wire.url);
                let mut err = err;
                if matches!(status.as_u16(), 401 | 403)
                    && let Some(var) = request.provider.key_env()
                    && !sink.keys.has(request.provider)
                {
                    err.message.push_str(&format!(" ({var} is not set)"));
                }
                events.extend(decoder.fail(err));
            }
        }
        if !sink.send(events).await {
            return;
        }
        if ended || decoder.is_done() {
            // After `finish` the connection is dropped; anything the server still sends (a
            // trailing `[DONE]` after an error, say) has no part to change.
            return;
        }
    }
}

fn keys_for(keys: &Keys, provider: ProviderKind) -> Option<&Secret> {
    keys.get(provider)
}

/// Sends events, redacting keys on the way out.
struct Sink {
    tx: mpsc::Sender<RunEvent>,
    keys: Keys,
}

impl Sink {
    /// False when the consumer is gone.
    async fn send(&self, events: Vec<RunEvent>) -> bool {
        for e in events {
            if self.tx.send(self.keys.redact_event(e)).await.is_err() {
                return false;
            }
        }
        true
    }
}

impl Keys {
    /// `event` with every key replaced by `[redacted]`, wherever it appears (a raw event, an
    /// output piece, a part's text or input, an error message). A key split across two events
    /// is not caught; a server echoing a key sends it whole.
    pub fn redact_event(&self, event: RunEvent) -> RunEvent {
        if !self.any() {
            return event;
        }
        let Ok(text) = serde_json::to_string(&event) else {
            return event;
        };
        let clean = self.redact(&text);
        if clean == text {
            return event;
        }
        // Replacing text inside JSON strings keeps the JSON valid: `[redacted]` needs no escape.
        serde_json::from_str(&clean).unwrap_or(event)
    }
}

#[cfg(test)]
mod tests;
