//! OpenAI Chat Completions: `POST {base}/chat/completions`.
//!
//! Also the wire of every OpenAI-compatible server (vLLM, llama.cpp server, LM Studio,
//! OpenRouter, a local simulated model). Streaming sends `stream_options.include_usage`
//! so the last chunk reports usage. Tool-call fragments arrive keyed by `tool_calls[].index`
//! (parallel calls have one index each); the first fragment of a call carries its id and name,
//! the rest carry pieces of the `arguments` string. Reasoning servers add `reasoning_content`
//! (or `reasoning`) to the delta.

mod decode;
mod request;

use serde_json::Value;

use super::WireFormat;
use super::shared::names;

/// The Chat Completions wire.
pub(crate) struct OpenAiChat;

impl WireFormat for OpenAiChat {
    fn finish_names_calls(&self) -> bool {
        true
    }

    fn allowed_tools(&self) -> bool {
        true
    }

    fn models_url(&self, base: &str, _page: Option<&str>) -> String {
        format!("{base}/models")
    }

    fn models_page(&self, v: &Value) -> (Vec<String>, Option<String>) {
        (names(v.get("data"), "id"), None)
    }
}
