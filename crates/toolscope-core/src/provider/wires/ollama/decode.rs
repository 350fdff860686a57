//! Reading Ollama chat answers: stream events or a whole body, into provider-neutral deltas.

use serde_json::Value;

use crate::error::{ErrorCategory, ProviderError};
use crate::part::{FinishReason, Usage};
use crate::provider::assemble::Delta;
use crate::provider::errors::{ErrorBody, stream_error};

use super::Ollama;
use crate::provider::wires::shared::{self};
use crate::provider::wires::{DecodeAnswers, WireDecoder};

pub(crate) fn finish_reason(s: &str) -> FinishReason {
    match s {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        _ => FinishReason::Other,
    }
}

/// Decodes NDJSON lines, or the one body of a non-streamed answer (the same object shape).
#[derive(Debug, Default)]
pub(crate) struct Decoder;

impl DecodeAnswers for Ollama {
    fn decoder(&self, _stream: bool) -> Box<dyn WireDecoder> {
        Box::new(Decoder)
    }
}

impl WireDecoder for Decoder {
    fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                return out.push(shared::invalid(format!(
                    "a response line is not JSON ({e}): {}",
                    shared::quote(data)
                )));
            }
        };
        if v.get("error").is_some() {
            return out.push(Delta::Error(stream_error(&ErrorBody::from_value(&v))));
        }
        let Some(message) = v.get("message").filter(|m| m.is_object()) else {
            if v.get("done").and_then(Value::as_bool) != Some(true) {
                return out.push(Delta::Error(ProviderError::new(
                    ErrorCategory::ProviderInvalidResponse,
                    format!("a response line has no message: {}", shared::quote(data)),
                )));
            }
            return done(&v, out);
        };
        if let Some(t) = message.get("thinking").and_then(Value::as_str) {
            out.push(Delta::Reasoning(t.to_string()));
        }
        if let Some(t) = message.get("content").and_then(Value::as_str) {
            out.push(Delta::Text(t.to_string()));
        }
        for tc in message
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let f = tc.get("function");
            out.push(Delta::ToolWhole {
                provider_executed: false,
                metadata: None,
                id: tc.get("id").and_then(Value::as_str).map(str::to_string),
                name: f
                    .and_then(|f| f.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                args: f
                    .and_then(|f| f.get("arguments"))
                    .cloned()
                    .unwrap_or(Value::Null),
            });
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            done(&v, out);
        }
    }
}

fn done(v: &Value, out: &mut Vec<Delta>) {
    let n = |k: &str| v.get(k).and_then(Value::as_u64);
    if n("prompt_eval_count").is_some() || n("eval_count").is_some() {
        // Ollama counts thinking among the evaluated tokens and reports no cache figure.
        out.push(Delta::Usage(Usage {
            input_tokens: n("prompt_eval_count"),
            output_tokens: n("eval_count"),
            ..Usage::default()
        }));
    }
    let reason = v
        .get("done_reason")
        .and_then(Value::as_str)
        .unwrap_or("stop");
    out.push(Delta::Finish(finish_reason(reason)));
    out.push(Delta::Done);
}
