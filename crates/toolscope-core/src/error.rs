//! Error categories shared by every provider, from the OpenArmature llm-provider spec, and the
//! library's error type for problems that stop an operation (as opposed to `error` parts, which
//! report a problem and let the stream go on).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where a provider problem comes from. Serialised in snake_case, as in the spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// Network failure, refused connection, 5xx (a server's own 408 or 504 included).
    ProviderUnavailable,
    /// toolscope waited too long: for the connection, for the answer's first token (a server
    /// still reading a long prompt), for the next piece of a stream that had begun (a stall), or
    /// past the run's deadline. The message says which, and the flag that sets it. Not in the
    /// llm-provider spec, which counts a timeout under `provider_unavailable`: toolscope's own,
    /// so that a slow server is not taken for a gone one.
    ProviderTimeout,
    /// The server knows the model but has not loaded it yet (a 503 that says so, or an error kind
    /// `model_not_loaded`); trying again later may work.
    ProviderModelNotLoaded,
    /// 429, with the retry-after when the provider sends one.
    ProviderRateLimit,
    /// 401 / 403.
    ProviderAuthentication,
    /// The provider does not know the model (a 404 that names the model, `model_not_found`).
    ProviderInvalidModel,
    /// An unparseable body or stream event.
    ProviderInvalidResponse,
    /// Pre-send validation failed, or the provider answered 400.
    ProviderInvalidRequest,
    /// The provider refuses a kind of content in the request (an image, audio or document block it
    /// does not support).
    ProviderUnsupportedContentBlock,
    /// An answer under a JSON-schema response format that does not match the schema. Part of the
    /// spec's vocabulary; the provider adapters do not raise it themselves.
    StructuredOutputInvalid,
    /// A tool call toolscope executed on an MCP server failed: the server could not be started
    /// or reached, failed the request, exited mid-call, timed out or was cancelled. (A tool that
    /// ran and reported an error is a `tool-result` with `isError`, not this.)
    ToolExecutionFailed,
    /// The user stopped the run from outside (Ctrl+C, SIGTERM, SIGHUP) before it ended: what
    /// was received before it is kept. Not in the llm-provider spec: toolscope's own.
    Cancelled,
}

impl ErrorCategory {
    /// Every category.
    pub const ALL: [ErrorCategory; 12] = [
        ErrorCategory::ProviderUnavailable,
        ErrorCategory::ProviderTimeout,
        ErrorCategory::ProviderModelNotLoaded,
        ErrorCategory::ProviderRateLimit,
        ErrorCategory::ProviderAuthentication,
        ErrorCategory::ProviderInvalidModel,
        ErrorCategory::ProviderInvalidResponse,
        ErrorCategory::ProviderInvalidRequest,
        ErrorCategory::ProviderUnsupportedContentBlock,
        ErrorCategory::StructuredOutputInvalid,
        ErrorCategory::ToolExecutionFailed,
        ErrorCategory::Cancelled,
    ];

    /// The name, as in the spec (`provider_rate_limit`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCategory::ProviderUnavailable => "provider_unavailable",
            ErrorCategory::ProviderTimeout => "provider_timeout",
            ErrorCategory::ProviderModelNotLoaded => "provider_model_not_loaded",
            ErrorCategory::ProviderRateLimit => "provider_rate_limit",
            ErrorCategory::ProviderAuthentication => "provider_authentication",
            ErrorCategory::ProviderInvalidModel => "provider_invalid_model",
            ErrorCategory::ProviderInvalidResponse => "provider_invalid_response",
            ErrorCategory::ProviderInvalidRequest => "provider_invalid_request",
            ErrorCategory::ProviderUnsupportedContentBlock => "provider_unsupported_content_block",
            ErrorCategory::StructuredOutputInvalid => "structured_output_invalid",
            ErrorCategory::ToolExecutionFailed => "tool_execution_failed",
            ErrorCategory::Cancelled => "cancelled",
        }
    }

    /// The category of this name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl Serialize for ErrorCategory {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCategory {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        ErrorCategory::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error category \"{name}\"")))
    }
}

impl fmt::Display for ErrorCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A categorised failure of a provider call, before or during the request.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{category}: {message}")]
pub struct ProviderError {
    /// What kind of failure it is.
    pub category: ErrorCategory,
    /// What went wrong, for a person: the provider's own message when it sent one.
    pub message: String,
    /// The HTTP status of the response, when there was one (absent for network failures, pre-send
    /// checks and errors reported inside a stream).
    pub status: Option<u16>,
    /// Seconds to wait before trying again, when the provider said (a `retry-after` header, or
    /// Gemini's retry delay in the body).
    pub retry_after: Option<f64>,
}

impl ProviderError {
    /// A failure with no HTTP status and no retry hint.
    pub fn new(category: ErrorCategory, message: impl Into<String>) -> Self {
        ProviderError {
            category,
            message: message.into(),
            status: None,
            retry_after: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_round_trip_through_their_names() {
        for c in ErrorCategory::ALL {
            assert_eq!(ErrorCategory::parse(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCategory::parse("nope"), None);
        assert_eq!(
            ErrorCategory::parse("tool_execution_failed"),
            Some(ErrorCategory::ToolExecutionFailed)
        );
    }

    #[test]
    fn a_provider_error_becomes_an_error_part_with_its_category() {
        let mut e = ProviderError::new(ErrorCategory::ProviderRateLimit, "too many requests");
        e.status = Some(429);
        e.retry_after = Some(3.0);
        let p = e.to_part();
        assert_eq!(p.category, Some(ErrorCategory::ProviderRateLimit));
        assert_eq!(
            serde_json::to_value(&p).unwrap()["category"],
            "provider_rate_limit"
        );
        assert!(serde_json::from_str::<ErrorCategory>("\"provider_oops\"").is_err());
        assert_eq!(p.retry_after, Some(3.0));
        assert_eq!(p.status, Some(429));
    }
}
