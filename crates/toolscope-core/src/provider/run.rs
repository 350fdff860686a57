//! A run: one request sent over HTTP, its answer decoded as it arrives, every event handed over
//! a channel. Needs the `http` feature.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::error::{ErrorCategory, ProviderError};
use crate::part::Part;

use super::decoder::Decoder;
use super::errors::status_error;
use super::event::{RawEvent, RunEvent};
use super::framer::WireFramer;
use super::http;
use super::keys::Keys;
use super::plan::Plan;
use super::request::Request;
use super::secret_url::{redact_url, url_secrets};
use super::spec::Auth;
use super::wire_request::build_wire;

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

    /// The next event, waiting for it; `None` once the run has ended (or was cancelled).
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
    // Credentials in the base URL are redacted from every event like keys.
    let url_secrets = request
        .base_url
        .as_deref()
        .map(url_secrets)
        .unwrap_or_default();
    let keys = url_secrets
        .into_iter()
        .fold(keys, |k, secret| k.with_secret(secret));
    let sink = Sink { tx, keys };
    let plan = Plan::of(&request);
    let mut decoder = Decoder::with_plan(&request, &plan);
    if let Err(e) = request.validate() {
        sink.send(decoder.fail(e)).await;
        return;
    }
    let Some(base) = request.resolved_base_url() else {
        let e = ProviderError::new(
            ErrorCategory::ProviderInvalidRequest,
            format!(
                "{} has no default base URL; the request must name one",
                request.provider
            ),
        );
        sink.send(decoder.fail(e)).await;
        return;
    };
    let wire = build_wire(&request, &plan, &base);
    // What errors name: the endpoint without its credentials.
    let shown_url = redact_url(&wire.url);
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
    if let Some(key) = sink.keys.get(request.provider) {
        builder = match request.provider.spec().auth {
            Auth::Header(name) => builder.header(name, key.expose()),
            Auth::Bearer => builder.bearer_auth(key.expose()),
        };
    }
    let idle = request.timeouts.idle();
    let first_token = request.timeouts.first_token();
    // Until the model's output begins, silence is a server reading the prompt (prefill) and
    // the first-token timeout applies; after it, silence is a stall and the idle timeout does.
    let mut begun = false;
    let started = Instant::now();
    let at_ms = || started.elapsed().as_millis() as u64;

    let response = tokio::select! {
        // Whichever is ready first; a gone consumer must not wait for a slow server.
        biased;
        _ = sink.tx.closed() => return,
        r = tokio::time::timeout(first_token, builder.send()) => r,
    };
    let mut response = match response {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => {
            let mut err = http::transport_error(&e, &shown_url);
            if let (true, Some(hint)) = (e.is_connect(), request.provider.spec().unreachable_hint) {
                err.message.push_str(&format!(" ({hint})"));
            }
            sink.send(decoder.fail(err)).await;
            return;
        }
        Err(_) => {
            sink.send(decoder.fail(no_first_token(&shown_url, first_token, false)))
                .await;
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
        && request.provider.wire().streams_sse()
        && content_type.starts_with("application/json");
    let mut framer = if status.is_success() && !whole_json {
        WireFramer::new(&request)
    } else {
        // An error body is read whole, whatever the request asked.
        WireFramer::whole().with_limit(request.limits.event())
    };
    let retry_after = http::retry_after(response.headers());
    let mut error_body = String::new();
    loop {
        let next = tokio::select! {
            biased;
            _ = sink.tx.closed() => return,
            r = tokio::time::timeout(if begun { idle } else { first_token }, response.chunk()) => r,
        };
        let ended = matches!(next, Ok(Ok(None)));
        let wire_events = match next {
            Ok(Ok(Some(bytes))) => framer.push(&bytes),
            Ok(Ok(None)) => framer.finish(),
            Ok(Err(e)) => {
                // Everything decoded so far was sent; an unfinished last line is dropped (it
                // cannot be whole), and the error part comes last.
                let mut err = http::transport_error(&e, &shown_url);
                err.message = format!("the stream broke: {}", err.message);
                sink.send(decoder.fail(err)).await;
                return;
            }
            Err(_) => {
                let err = if begun {
                    ProviderError::new(
                        ErrorCategory::ProviderTimeout,
                        format!(
                            "the stream stalled: no data for {} s after the answer began \
                             (idle timeout, --idle-timeout)",
                            secs_text(idle)
                        ),
                    )
                } else {
                    no_first_token(&shown_url, first_token, true)
                };
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
            begun |= decoded.iter().any(is_model_output);
            events.extend(decoded);
        }
        if let Some(o) = framer.oversize() {
            // Only the start of the event is kept, as its raw event (a replay of it reports
            // the cut JSON; the session keeps this error as the turn's ending).
            let err = oversize_error(&o, status.as_u16());
            events.push(RunEvent::Raw(RawEvent {
                at_ms: at_ms(),
                data: o.head,
                status: (!status.is_success()).then_some(status.as_u16()),
                retry_after: None,
            }));
            events.extend(decoder.fail(err));
            sink.send(events).await;
            return;
        }
        if ended {
            if let (true, Some(head)) = (status.is_success(), framer.not_a_stream()) {
                // A body that is not the stream asked for: recorded as a failed response (with
                // its start only), so that a replay says the same.
                let raw = RawEvent {
                    at_ms: at_ms(),
                    data: head,
                    status: Some(status.as_u16()),
                    retry_after: None,
                };
                let err = status_error(status.as_u16(), None, &raw.data, &shown_url);
                events.push(RunEvent::Raw(raw));
                events.extend(decoder.fail(err));
            } else if status.is_success() {
                events.extend(decoder.finish());
            } else {
                let err = status_error(status.as_u16(), retry_after, &error_body, &shown_url);
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

/// The error for a wire event (or whole body) over the limit, quoting its start.
fn oversize_error(o: &super::framer::Oversize, status: u16) -> ProviderError {
    let what = if (200..300).contains(&status) {
        "a wire event of the answer".to_string()
    } else {
        format!("the body of the {status} response")
    };
    let mut e = ProviderError::new(
        ErrorCategory::ProviderInvalidResponse,
        format!(
            "{what} is larger than the limit of {} ({} bytes had arrived); the answer is cut \
             here and the rest was not read. It starts: {}",
            super::wires::shared::size(o.limit),
            o.seen,
            o.head
        ),
    );
    if !(200..300).contains(&status) {
        e.status = Some(status);
    }
    e
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

/// Whether a decoded event is the model's output (its first token): answer text, reasoning, a
/// call, a finish. A warning or an error is not.
fn is_model_output(e: &RunEvent) -> bool {
    match e {
        RunEvent::Output(_) => true,
        RunEvent::Part(p) => !matches!(p, Part::Warning(_) | Part::Error(_)),
        _ => false,
    }
}

/// The timeout before the answer began: the server answered nothing yet (no headers), or it
/// answered but sent no token.
fn no_first_token(url: &str, waited: Duration, answered: bool) -> ProviderError {
    let what = if answered {
        format!("{url} answered but sent no token")
    } else {
        format!("no response from {url}")
    };
    ProviderError::new(
        ErrorCategory::ProviderTimeout,
        format!(
            "{what} within {} s (first-token timeout, --first-token-timeout; a server on a CPU \
             may still be reading a long prompt)",
            secs_text(waited)
        ),
    )
}

/// Seconds as a person writes them: `120`, `0.3`.
fn secs_text(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}")
    } else {
        format!("{s}")
    }
}
