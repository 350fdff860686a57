//! Request routing and the HTTP answers of the demo server.
//!
//! `POST /v1/chat/completions` and `POST /chat/completions` (so base URLs with and without `/v1`
//! both work), the same for the Responses API at `/v1/responses`, `GET /v1/models` (and
//! `/models`, `/v1/models/{id}`). Everything else is an OpenAI-shaped 404 or 405. Request problems are 400s with OpenAI's error body; the failure
//! demos answer 429 (with `retry-after`) and 500.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::header::{CACHE_CONTROL, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::Value;

use crate::model::{self, TRIGGER_RATE_LIMIT, TRIGGER_SERVER_ERROR};
use crate::reply::{Fault, Reply};
use crate::request::{DEFAULT_MODEL, DemoRequest};
use crate::responses;
use crate::state::{Body, Shared};
use crate::stream::{Tracker, paced_body};
use crate::wire::{self, Meta};

/// Larger request bodies are refused with 413.
const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The seconds a client is told to wait after the `#429` demo.
pub const RETRY_AFTER_SECONDS: u64 = 2;

pub async fn handle(request: Request<Incoming>, shared: Arc<Shared>) -> Response<Body> {
    let path = normalise(request.uri().path());
    let method = request.method().clone();
    let allow = |wanted: Method| method == wanted;
    match path.as_str() {
        "/v1/chat/completions" | "/chat/completions" if allow(Method::POST) => {
            completions(request, shared, Api::Chat).await
        }
        "/v1/responses" | "/responses" if allow(Method::POST) => {
            completions(request, shared, Api::Responses).await
        }
        "/v1/models" | "/models" if allow(Method::GET) => {
            json(StatusCode::OK, &wire::models(DEFAULT_MODEL))
        }
        "/" | "/v1" if allow(Method::GET) => json(StatusCode::OK, &about()),
        "/v1/chat/completions"
        | "/chat/completions"
        | "/v1/responses"
        | "/responses"
        | "/v1/models"
        | "/models"
        | "/"
        | "/v1" => error(
            StatusCode::METHOD_NOT_ALLOWED,
            &format!("Method {method} is not allowed for {path}."),
            "invalid_request_error",
            None,
            Some("method_not_allowed"),
        ),
        p => match p
            .strip_prefix("/v1/models/")
            .or_else(|| p.strip_prefix("/models/"))
        {
            Some(id) if allow(Method::GET) && !id.is_empty() => {
                json(StatusCode::OK, &wire::model_object(id))
            }
            _ => error(
                StatusCode::NOT_FOUND,
                &format!(
                    "Unknown request URL: {method} {path}. The demo model serves POST /v1/chat/completions, POST /v1/responses and GET /v1/models."
                ),
                "invalid_request_error",
                None,
                Some("unknown_url"),
            ),
        },
    }
}

/// `//v1/chat/completions/` is `/v1/chat/completions`: clients join base URLs carelessly.
fn normalise(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    format!("/{}", parts.join("/"))
}

fn about() -> Value {
    serde_json::json!({
        "object": "toolscope.demo",
        "message": "toolscope's demo model: an OpenAI Chat Completions endpoint for any model name and any key.",
        "endpoints": ["POST /v1/chat/completions", "POST /v1/responses", "GET /v1/models"],
        "failure_demos": {
            TRIGGER_RATE_LIMIT: "429 with retry-after",
            TRIGGER_SERVER_ERROR: "500",
            model::TRIGGER_CUT: "the response stops midway and the connection drops",
            model::TRIGGER_MALFORMED: "a deliberately malformed tool call",
        },
    })
}

/// The API a request came in on: the same model answers both, each on its own wire.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
}

async fn completions(request: Request<Incoming>, shared: Arc<Shared>, api: Api) -> Response<Body> {
    let mut request_number = 0;
    shared.stats.send_modify(|s| {
        s.requests += 1;
        request_number = s.requests;
    });
    let bytes = match Limited::new(request.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("The request body is larger than {MAX_BODY_BYTES} bytes."),
                "invalid_request_error",
                None,
                Some("request_too_large"),
            );
        }
        Err(e) => {
            let message = format!("The request body could not be read: {e}.");
            return error(
                StatusCode::BAD_REQUEST,
                &message,
                "invalid_request_error",
                None,
                None,
            );
        }
    };
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let message = format!(
                "We could not parse the JSON body of your request ({e}). The body must be a JSON object."
            );
            return error(
                StatusCode::BAD_REQUEST,
                &message,
                "invalid_request_error",
                None,
                Some("invalid_json"),
            );
        }
    };
    let body = match api {
        Api::Chat => Ok(body),
        Api::Responses => responses::chat_body(&body),
    };
    let request = match body.and_then(|b| DemoRequest::from_json(&b)) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                &e.message,
                "invalid_request_error",
                e.param.as_deref(),
                e.code,
            );
        }
    };
    let mut reply = model::respond(&request);
    if let Some(persona) = shared.persona {
        reply = persona.apply(reply, &request, request_number);
    }
    match reply.fault {
        Some(Fault::RateLimit) => return rate_limited(&request.model),
        Some(Fault::ServerError) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                &format!(
                    "The server had an error while processing your request ({TRIGGER_SERVER_ERROR} demo)."
                ),
                "server_error",
                None,
                None,
            );
        }
        _ => {}
    }
    let prefix = match api {
        Api::Chat => "chatcmpl-demo",
        Api::Responses => "resp_demo",
    };
    let meta = Meta {
        id: format!("{prefix}{:016x}", request.hash),
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        model: request.model.clone(),
    };
    match (request.stream, api) {
        (true, Api::Chat) => {
            // `#cut`: the role chunk and half of the pieces, then the connection drops.
            let cut_after = 1 + reply.pieces.len() / 2;
            let events = chat_events(&reply, &meta, request.include_usage);
            sse(&reply, events, cut_after, shared)
        }
        (true, Api::Responses) => {
            let events: Vec<Bytes> = responses::events(&reply, &meta)
                .iter()
                .map(|e| Bytes::from(responses::sse_event(e)))
                .collect();
            // `#cut`: about half of the events, before the response completes.
            let cut_after = events.len() / 2;
            sse(&reply, events, cut_after, shared)
        }
        (false, Api::Chat) => completion(&reply, wire::completion(&reply, &meta), &shared),
        (false, Api::Responses) => {
            completion(&reply, responses::response(&reply, &meta, true), &shared)
        }
    }
}

/// The Chat Completions stream: one chunk per piece, then `[DONE]`.
fn chat_events(reply: &Reply, meta: &Meta, include_usage: bool) -> Vec<Bytes> {
    let mut events: Vec<Bytes> = wire::chunks(reply, meta, include_usage)
        .iter()
        .map(|c| Bytes::from(wire::sse_event(&c.to_string())))
        .collect();
    events.push(Bytes::from_static(wire::SSE_DONE.as_bytes()));
    events
}

/// A paced event stream; with the `#cut` demo it breaks off after `cut_after` events.
fn sse(reply: &Reply, events: Vec<Bytes>, cut_after: usize, shared: Arc<Shared>) -> Response<Body> {
    let cut_after = (reply.fault == Some(Fault::Cut)).then_some(cut_after);
    let pace = shared.options.pace;
    let body = paced_body(events, pace, cut_after, Some(Tracker::start(shared)));
    let mut response = Response::new(body);
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

fn completion(reply: &Reply, body: Value, shared: &Shared) -> Response<Body> {
    if reply.fault != Some(Fault::Cut) {
        return json(StatusCode::OK, &body);
    }
    // `#cut` without streaming: half of the JSON body, then the connection drops.
    let text = body.to_string();
    let half = text.len() / 2;
    let events = vec![Bytes::from(text.into_bytes()).slice(..half)];
    let mut response = Response::new(paced_body(events, shared.options.pace, Some(1), None));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

fn rate_limited(model: &str) -> Response<Body> {
    let message = format!(
        "Rate limit reached for {model} ({TRIGGER_RATE_LIMIT} demo). Please try again in {RETRY_AFTER_SECONDS}s."
    );
    let mut response = error(
        StatusCode::TOO_MANY_REQUESTS,
        &message,
        "requests",
        None,
        Some("rate_limit_exceeded"),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
    response
}

fn error(
    status: StatusCode,
    message: &str,
    kind: &str,
    param: Option<&str>,
    code: Option<&str>,
) -> Response<Body> {
    json(status, &wire::error_body(message, kind, param, code))
}

fn json(status: StatusCode, value: &Value) -> Response<Body> {
    let body = Full::new(Bytes::from(value.to_string()))
        .map_err(|never: Infallible| match never {})
        .boxed_unsync();
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::normalise;

    #[test]
    fn paths_are_normalised() {
        assert_eq!(normalise("//v1/chat/completions/"), "/v1/chat/completions");
        assert_eq!(normalise("/"), "/");
        assert_eq!(normalise(""), "/");
    }
}
