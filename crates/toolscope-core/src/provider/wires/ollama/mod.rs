//! Ollama's native chat API: `POST {base}/api/chat`, streamed as NDJSON.
//!
//! Ollama streams unless told `"stream": false`, so the field is always sent. Sampling options go
//! in `options` (`num_predict` for the token limit). Tool calls arrive whole, with arguments as an
//! object; results are `tool` messages naming the tool. Ollama has no tool-choice field: `none`
//! sends no tools, and `required` / `tool X` are emulated with a JSON-schema `format` (see
//! [`Plan::response_format`]).
//!
//! [`Plan::response_format`]: crate::provider::plan::Plan::response_format

mod decode;
mod request;

use serde_json::Value;

use super::WireFormat;
use super::shared::names;

/// The native chat wire.
pub(crate) struct Ollama;

impl WireFormat for Ollama {
    fn streams_sse(&self) -> bool {
        false
    }

    fn models_url(&self, base: &str, _page: Option<&str>) -> String {
        format!("{base}/api/tags")
    }

    fn models_page(&self, v: &Value) -> (Vec<String>, Option<String>) {
        (names(v.get("models"), "name"), None)
    }
}
