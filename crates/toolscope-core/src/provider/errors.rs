//! How a failed response becomes an error category.
//!
//! Status codes decide first (401/403 authentication, 429 rate limit, 5xx unavailable, …); the
//! error body refines where the status alone is ambiguous (a 404 about a model, a 503 from a
//! local server whose model is still loading, a 400 about an unsupported content block). The
//! same body reader handles the error shapes of all four wires, and the errors a provider sends
//! in the middle of a stream.

use serde_json::Value;

use crate::error::{ErrorCategory, ProviderError};

/// What an error body says, whichever provider wrote it.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ErrorBody {
    /// The machine-readable kinds found (`type`, `code`, `status`), e.g. `rate_limit_error`,
    /// `model_not_found`, `RESOURCE_EXHAUSTED`.
    pub kinds: Vec<String>,
    pub message: Option<String>,
    /// Gemini's `RetryInfo.retryDelay`, in seconds.
    pub retry_delay: Option<f64>,
}

impl ErrorBody {
    /// Reads the error object of any of the wires: OpenAI `{error: {type, code, message}}`,
    /// Anthropic `{type: "error", error: {type, message}}`, Gemini `{error: {code, status,
    /// message, details}}` (also wrapped in an array), Ollama `{error: "message"}`.
    pub(crate) fn parse(body: &str) -> ErrorBody {
        let Ok(v) = serde_json::from_str::<Value>(body) else {
            return ErrorBody::default();
        };
        Self::from_value(&v)
    }

    pub(crate) fn from_value(v: &Value) -> ErrorBody {
        let v = match v {
            Value::Array(items) => items.first().unwrap_or(&Value::Null),
            other => other,
        };
        let mut out = ErrorBody::default();
        match v.get("error") {
            Some(Value::String(s)) => out.message = Some(s.clone()),
            Some(e @ Value::Object(_)) => {
                for key in ["type", "code", "status"] {
                    match e.get(key) {
                        Some(Value::String(s)) if !s.is_empty() => out.kinds.push(s.clone()),
                        _ => {}
                    }
                }
                out.message = e.get("message").and_then(Value::as_str).map(str::to_string);
                // Gemini says why in `details[].reason` (`API_KEY_INVALID`).
                let details = e.get("details").and_then(Value::as_array);
                for reason in details
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d.get("reason").and_then(Value::as_str))
                {
                    out.kinds.push(reason.to_string());
                }
                out.retry_delay = e
                    .get("details")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|d| d.get("retryDelay").and_then(Value::as_str))
                    .find_map(parse_duration_secs);
            }
            _ => {
                if let Some(m) = v.get("message").and_then(Value::as_str) {
                    out.message = Some(m.to_string());
                }
            }
        }
        out
    }

    /// Whether this looks like an error object at all (used inside streams).
    pub(crate) fn is_error(&self) -> bool {
        self.message.is_some() || !self.kinds.is_empty()
    }

    fn mentions(&self, needles: &[&str]) -> bool {
        let hay = |s: &str| {
            let s = s.to_ascii_lowercase();
            needles.iter().any(|n| s.contains(n))
        };
        self.kinds.iter().any(|k| hay(k)) || self.message.as_deref().is_some_and(hay)
    }

    /// The category an error kind names, when it names one (errors sent inside a stream have no
    /// status to go by).
    pub(crate) fn category_from_kind(&self) -> Option<ErrorCategory> {
        use ErrorCategory::*;
        let k = |needles: &[&str]| {
            self.kinds.iter().any(|kind| {
                let kind = kind.to_ascii_lowercase();
                needles.iter().any(|n| kind.contains(n))
            })
        };
        Some(if k(&["model_not_loaded"]) {
            ProviderModelNotLoaded
        } else if k(&["rate_limit", "resource_exhausted", "too_many_requests"]) {
            ProviderRateLimit
        } else if k(&[
            "authentication",
            "permission",
            "unauthenticated",
            "billing",
            "invalid_api_key",
            "api_key_invalid",
        ]) {
            ProviderAuthentication
        } else if k(&["model_not_found", "not_found"]) {
            ProviderInvalidModel
        } else if k(&[
            "overloaded",
            "api_error",
            "server_error",
            "unavailable",
            "internal",
            "timeout",
            "deadline",
        ]) {
            ProviderUnavailable
        } else if k(&[
            "invalid_request",
            "invalid_argument",
            "failed_precondition",
            "request_too_large",
        ]) {
            ProviderInvalidRequest
        } else {
            return None;
        })
    }
}

/// The category of an HTTP failure, from its status and what its body says.
pub(crate) fn classify(status: u16, body: &ErrorBody) -> ErrorCategory {
    use ErrorCategory::*;
    match status {
        // A success status reaches here only with a body that is not the answer asked for.
        200..=299 => ProviderInvalidResponse,
        401..=403 => ProviderAuthentication,
        // Gemini answers a bad key with 400 INVALID_ARGUMENT, reason API_KEY_INVALID.
        400 if body.mentions(&[
            "api_key_invalid",
            "api key not valid",
            "invalid api key",
            "invalid_api_key",
            "incorrect api key",
        ]) =>
        {
            ProviderAuthentication
        }
        404 if body.mentions(&["model"]) => ProviderInvalidModel,
        404 => ProviderInvalidRequest,
        408 => ProviderUnavailable,
        429 => ProviderRateLimit,
        400 if body.mentions(&["image", "content block", "audio", "document", "media"])
            && body.mentions(&["not supported", "unsupported", "does not support"]) =>
        {
            ProviderUnsupportedContentBlock
        }
        503 if body.mentions(&[
            "model_not_loaded",
            "not loaded",
            "loading model",
            "model is loading",
        ]) =>
        {
            ProviderModelNotLoaded
        }
        500..=599 => ProviderUnavailable,
        _ => ProviderInvalidRequest,
    }
}

/// The error for a non-success response. `retry_after` is from the headers; the body can add
/// one (Gemini).
pub(crate) fn status_error(
    status: u16,
    retry_after: Option<f64>,
    body: &str,
    url: &str,
) -> ProviderError {
    let info = ErrorBody::parse(body);
    let category = classify(status, &info);
    let status_line = status_line(status);
    let said = match &info.message {
        _ if (200..300).contains(&status) => format!(
            "the answer was to be a stream of server-sent events, but the body is not one; it starts: {}",
            clip_start(body)
        ),
        Some(m) => m.clone(),
        None if body.trim().is_empty() => "(empty body)".to_string(),
        None => clip_line(body),
    };
    let mut message = if url.is_empty() {
        format!("{status_line}: {said}")
    } else {
        format!("{status_line} from {url}: {said}")
    };
    if status == 404 && category == ErrorCategory::ProviderInvalidRequest {
        message.push_str(" (is the base URL right?)");
    }
    let mut e = ProviderError::new(category, message);
    e.status = Some(status);
    e.retry_after = retry_after.or(info.retry_delay);
    e
}

/// The error for an HTTP response with a failure `status` and this `body` (`retry_after` from its
/// headers, in seconds). What a run reports for it; a replay of a recorded failure calls this.
pub(crate) fn response_error(
    status: u16,
    retry_after: Option<f64>,
    body: &str,
    url: &str,
) -> ProviderError {
    status_error(status, retry_after, body, url)
}

/// An error found inside a stream or a 200 body (`{"error": …}`): categorised by its kind, else
/// taken as the provider failing.
pub(crate) fn stream_error(info: &ErrorBody) -> ProviderError {
    let category = info
        .category_from_kind()
        .unwrap_or(ErrorCategory::ProviderUnavailable);
    let mut message = String::from("the provider reported an error");
    if !info.kinds.is_empty() {
        message.push_str(&format!(" ({})", info.kinds.join(", ")));
    }
    if let Some(m) = &info.message {
        message.push_str(": ");
        message.push_str(m);
    }
    let mut e = ProviderError::new(category, message);
    e.retry_after = info.retry_delay;
    e
}

/// `"30s"`, `"1.5s"` → seconds.
fn parse_duration_secs(s: &str) -> Option<f64> {
    s.strip_suffix('s')?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}

/// `429 Too Many Requests`: the code and its reason phrase, when it has one.
fn status_line(status: u16) -> String {
    let reason = match status {
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => return status.to_string(),
    };
    format!("{status} {reason}")
}

/// The start of a body, at most 300 characters, with its line breaks as spaces.
fn clip_start(body: &str) -> String {
    let body = body.trim();
    let mut s: String = body
        .chars()
        .take(300)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if body.chars().nth(300).is_some() {
        s.push('…');
    }
    s
}

/// The first line of a body, at most 300 characters, for a message.
fn clip_line(body: &str) -> String {
    let line = body.trim().lines().next().unwrap_or("");
    let mut s: String = line.chars().take(300).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use ErrorCategory::*;

    #[test]
    fn statuses_and_bodies_map_to_categories() {
        let cases = [
            (
                401,
                r#"{"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key"}}"#,
                ProviderAuthentication,
            ),
            (
                402,
                r#"{"type":"error","error":{"type":"billing_error","message":"billing"}}"#,
                ProviderAuthentication,
            ),
            (
                403,
                r#"{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}"#,
                ProviderAuthentication,
            ),
            (
                404,
                r#"{"error":{"type":"invalid_request_error","code":"model_not_found","message":"The model 'x' does not exist"}}"#,
                ProviderInvalidModel,
            ),
            (
                404,
                r#"{"error":"model \"llama9\" not found, try pulling it first"}"#,
                ProviderInvalidModel,
            ),
            (404, "<html>Not Found</html>", ProviderInvalidRequest),
            (
                413,
                r#"{"type":"error","error":{"type":"request_too_large","message":"too big"}}"#,
                ProviderInvalidRequest,
            ),
            (
                429,
                r#"{"error":{"code":429,"message":"rate limited","status":"RESOURCE_EXHAUSTED"}}"#,
                ProviderRateLimit,
            ),
            (
                500,
                r#"{"error":{"type":"server_error"}}"#,
                ProviderUnavailable,
            ),
            (
                503,
                r#"{"error":{"type":"model_not_loaded","message":"Model is configured but not loaded"}}"#,
                ProviderModelNotLoaded,
            ),
            (
                503,
                r#"{"error":{"code":503,"message":"unavailable","status":"UNAVAILABLE"}}"#,
                ProviderUnavailable,
            ),
            (
                529,
                r#"{"type":"error","error":{"type":"overloaded_error","message":"overloaded"}}"#,
                ProviderUnavailable,
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"image source not supported by this model"}}"#,
                ProviderUnsupportedContentBlock,
            ),
            (
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad field"}}"#,
                ProviderInvalidRequest,
            ),
            (
                400,
                r#"[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}]"#,
                ProviderAuthentication,
            ),
        ];
        for (status, body, want) in cases {
            assert_eq!(
                classify(status, &ErrorBody::parse(body)),
                want,
                "{status} {body}"
            );
        }
    }

    #[test]
    fn gemini_retry_info_and_stream_errors() {
        let body = r#"[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"31s"}]}}]"#;
        let e = status_error(429, None, body, "u");
        assert_eq!(e.category, ProviderRateLimit);
        assert_eq!(e.retry_after, Some(31.0));
        assert_eq!(e.status, Some(429));
        let overloaded = ErrorBody::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(stream_error(&overloaded).category, ProviderUnavailable);
        assert!(ErrorBody::parse(r#"{"choices":[]}"#).kinds.is_empty());
    }
}
