//! The OpenAI Responses API: `POST {base}/responses`.
//!
//! Also the wire of the servers that offer `/v1/responses`. The system prompt is `instructions`,
//! the conversation is a list of input items: messages, `function_call` items for past calls and
//! `function_call_output` items for their results, and the `reasoning` items of past answers sent
//! back as they came. The answer is a list of output items (a message with `output_text` and
//! `refusal` parts, `function_call`s, `reasoning` with its summary, and the items of server tools
//! the provider ran itself: web search, file search, code interpreter, image generation, MCP).
//!
//! A stream is a sequence of typed events with a `sequence_number`: `response.created`, then per
//! output item `response.output_item.added`, its deltas (`response.output_text.delta`,
//! `response.function_call_arguments.delta`, `response.reasoning_summary_text.delta`,
//! `response.refusal.delta`, annotations) and `response.output_item.done`, then one of
//! `response.completed`, `response.incomplete` or `response.failed` with the final response and
//! its usage; an `error` event can end it too. There is no `[DONE]`. The decoder checks that
//! order (the stream lint's `event-order`) as it reads.

mod decode;
mod request;

use serde_json::Value;

use super::openai_chat::OpenAiChat;

use super::WireFormat;

/// The key of this wire's entries in provider metadata.
pub(crate) const METADATA_KEY: &str = "openai-responses";

/// The Responses wire.
pub(crate) struct OpenAiResponses;

impl WireFormat for OpenAiResponses {
    fn allowed_tools(&self) -> bool {
        true
    }

    /// The same list as Chat Completions (`GET {base}/models`).
    fn models_url(&self, base: &str, page: Option<&str>) -> String {
        OpenAiChat.models_url(base, page)
    }

    fn models_page(&self, v: &Value) -> (Vec<String>, Option<String>) {
        OpenAiChat.models_page(v)
    }
}

#[cfg(test)]
mod tests;
