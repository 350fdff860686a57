//! Ollama's native chat API: `POST {base}/api/chat`, streamed as NDJSON.
//!
//! Ollama streams unless told `"stream": false`, so the field is always sent. Sampling options go
//! in `options` (`num_predict` for the token limit). Tool calls arrive whole, with arguments as an
//! object; results are `tool` messages naming the tool. Ollama has no tool-choice field: `none`
//! sends no tools, and `required` / `tool X` are emulated with a JSON-schema `format` (see
//! [`super::emulation`]).

use serde_json::{Map, Value, json};

use crate::error::{ErrorCategory, ProviderError};
use crate::part::{FinishReason, Usage};

use super::assemble::Delta;
use super::errors::{ErrorBody, stream_error};
use super::plan::{Plan, Turn};
use super::request::Request;
use super::wire::{self, WireRequest};

pub(crate) fn build(req: &Request, plan: &Plan, base: &str) -> WireRequest {
    let mut messages = Vec::new();
    if let Some(s) = &plan.system {
        messages.push(json!({"role": "system", "content": s}));
    }
    for turn in plan.turns(req) {
        match turn {
            Turn::User(text) => messages.push(json!({"role": "user", "content": text})),
            Turn::Assistant { text, calls, .. } => {
                let mut m = Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert("content".into(), json!(text.unwrap_or_default()));
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|c| json!({"function": {"name": c.tool_name, "arguments": c.input}}))
                        .collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
            }
            Turn::Results(results) => {
                for r in results {
                    messages
                        .push(json!({"role": "tool", "content": r.content, "tool_name": r.name}));
                }
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    if plan.native_tools {
        let tools: Vec<Value> = plan
            .declared(req)
            .into_iter()
            .map(|t| json!({"type": "function", "function": wire::tool_decl(t, "parameters")}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(rf) = &plan.response_format {
        body.insert("format".into(), rf.schema.clone());
    }
    let mut options = Map::new();
    wire::sampling(
        &req.sampling,
        &wire::SamplingKeys {
            temperature: "temperature",
            top_p: "top_p",
            seed: Some("seed"),
            max_tokens: Some("num_predict"),
            stop: Some("stop"),
        },
        &mut options,
    );
    if !options.is_empty() {
        body.insert("options".into(), Value::Object(options));
    }
    if req.sampling.reasoning_effort.is_some() {
        // Ollama's `think` switches reasoning on; its levels are model-specific.
        body.insert("think".into(), json!(true));
    }
    body.insert("stream".into(), json!(req.stream));
    WireRequest {
        url: format!("{base}/api/chat"),
        headers: Vec::new(),
        body: Value::Object(body),
    }
}

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

impl Decoder {
    pub(crate) fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        let v: Value = match serde_json::from_str(data) {
            Ok(v) => v,
            Err(e) => {
                return out.push(wire::invalid(format!(
                    "a response line is not JSON ({e}): {}",
                    wire::quote(data)
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
                    format!("a response line has no message: {}", wire::quote(data)),
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
