//! Google Gemini: `POST {base}/v1beta/models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` to stream, with the key in `x-goog-api-key`.
//!
//! The assistant is the `model` role, the system prompt is `systemInstruction`, tool calls are
//! `functionCall` parts and results are `functionResponse` parts of a user turn (a string result
//! wrapped as `{result: …}`). A stream is a series of whole `GenerateContentResponse`s: text
//! arrives in pieces, but each `functionCall` arrives whole. Gemini gives calls no id unless the
//! model sets one, so the assembler names them.

mod decode;
mod request;

use serde_json::Value;

use super::WireFormat;
use super::shared;

/// The key of this wire's entries in provider metadata.
pub(crate) const METADATA_KEY: &str = "gemini";

/// The `generateContent` wire.
pub(crate) struct Gemini;

impl WireFormat for Gemini {
    fn models_url(&self, base: &str, page: Option<&str>) -> String {
        match page {
            None => format!("{base}/v1beta/models?pageSize=1000"),
            Some(token) => format!(
                "{base}/v1beta/models?pageSize=1000&pageToken={}",
                shared::encode(token)
            ),
        }
    }

    /// Only the models that generate content; named without their `models/` prefix.
    fn models_page(&self, v: &Value) -> (Vec<String>, Option<String>) {
        let names = v
            .get("models")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|m| {
                m.get("supportedGenerationMethods")
                    .and_then(Value::as_array)
                    .is_none_or(|ms| ms.iter().any(|x| x == "generateContent"))
            })
            .filter_map(|m| m.get("name").and_then(Value::as_str))
            .map(|n| n.strip_prefix("models/").unwrap_or(n).to_string())
            .collect();
        let next = v
            .get("nextPageToken")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        (names, next)
    }

    fn models_sorted(&self) -> bool {
        false
    }
}
