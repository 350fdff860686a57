//! Anthropic Messages: `POST {base}/v1/messages` with `x-api-key` and `anthropic-version`.
//!
//! The system prompt is a top-level field, tool calls are `tool_use` content blocks of the
//! assistant, and tool results are `tool_result` blocks of a user message. A stream is a sequence
//! of typed events; content blocks are opened, filled and closed by index, and a tool call's
//! input arrives as `input_json_delta` fragments of its block. Usage is split: input tokens in
//! `message_start`, output tokens in `message_delta`.

mod decode;
mod request;

use serde_json::Value;

use crate::error::{ErrorCategory, ProviderError};

use crate::provider::request::Request;

use super::WireFormat;
use super::shared::{self, names};

/// Anthropic requires `max_tokens`; this is what a new request puts there.
pub(crate) const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;
/// The `anthropic-version` header sent with every Anthropic request.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The key of this wire's entries in provider metadata.
pub(crate) const METADATA_KEY: &str = "anthropic";

/// Anthropic's smallest thinking budget.
pub(crate) const MIN_THINKING_BUDGET: u32 = 1024;

/// The Messages wire.
pub(crate) struct Anthropic;

impl WireFormat for Anthropic {
    fn finish_names_calls(&self) -> bool {
        true
    }

    /// A reasoning effort needs room for the smallest thinking budget below `max_tokens`.
    fn validate(&self, req: &Request) -> Result<(), ProviderError> {
        if let (Some(effort), Some(max)) = (req.sampling.reasoning_effort, req.sampling.max_tokens)
            && max <= effort.budget_tokens().min(MIN_THINKING_BUDGET)
        {
            return Err(ProviderError::new(
                ErrorCategory::ProviderInvalidRequest,
                format!(
                    "a reasoning effort needs max_tokens above {MIN_THINKING_BUDGET} on Anthropic (the thinking budget comes out of it); max_tokens is {max}"
                ),
            ));
        }
        Ok(())
    }

    fn models_url(&self, base: &str, page: Option<&str>) -> String {
        match page {
            None => format!("{base}/v1/models?limit=1000"),
            Some(after) => format!(
                "{base}/v1/models?limit=1000&after_id={}",
                shared::encode(after)
            ),
        }
    }

    fn models_page(&self, v: &Value) -> (Vec<String>, Option<String>) {
        let next = match v.get("has_more").and_then(Value::as_bool) {
            Some(true) => v.get("last_id").and_then(Value::as_str).map(str::to_string),
            _ => None,
        };
        (names(v.get("data"), "id"), next)
    }

    fn models_sorted(&self) -> bool {
        false
    }

    fn models_headers(&self) -> Vec<(&'static str, String)> {
        vec![("anthropic-version", ANTHROPIC_VERSION.to_string())]
    }
}
