//! Reading Chat Completions answers: stream events or a whole body, into provider-neutral deltas.

use serde_json::Value;

use crate::lint;
use crate::part::{FinishReason, Source, SourceType, Usage, Warning};
use crate::provider::assemble::Delta;
use crate::provider::errors::{ErrorBody, stream_error};

use super::OpenAiChat;
use crate::provider::wires::shared::{self, invalid};
use crate::provider::wires::{DecodeAnswers, WireDecoder};

pub(crate) fn finish_reason(s: &str) -> FinishReason {
    match s {
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        // `function_call` is the legacy name.
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "content_filter" => FinishReason::ContentFilter,
        "error" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// Usage as Chat Completions reports it. `prompt_tokens` includes cached tokens
/// (`prompt_tokens_details.cached_tokens`; DeepSeek's `prompt_cache_hit_tokens`) and
/// `completion_tokens` includes reasoning (`completion_tokens_details.reasoning_tokens`), except
/// on servers that count reasoning apart: where the total shows it was left out of the
/// completion, it is added back.
fn usage(v: &Value) -> Option<Usage> {
    let u = v.get("usage").filter(|u| u.is_object())?;
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64);
    let input = n("/prompt_tokens");
    let reasoning =
        n("/completion_tokens_details/reasoning_tokens").or_else(|| n("/reasoning_tokens"));
    let total = n("/total_tokens");
    let output = match (input, n("/completion_tokens"), reasoning, total) {
        (Some(i), Some(c), Some(r), Some(t)) if r > 0 && t == i + c + r => Some(c + r),
        (_, c, _, _) => c,
    };
    Some(Usage {
        input_tokens: input,
        cached_input_tokens: n("/prompt_tokens_details/cached_tokens")
            .or_else(|| n("/prompt_cache_hit_tokens")),
        output_tokens: output,
        reasoning_tokens: reasoning,
        total_tokens: total,
    })
}

/// The content of a message or delta: a string, or (Mistral, some servers) a list of parts:
/// `text`, `thinking` (Mistral's reasoning, itself a list of text parts), `refusal`. A part type
/// toolscope does not know is named in a warning.
fn content(v: Option<&Value>, out: &mut Vec<Delta>) {
    match v {
        Some(Value::String(s)) => out.push(Delta::Text(s.clone())),
        Some(Value::Array(parts)) => {
            for p in parts {
                let text = |p: &Value, k: &str| -> String {
                    match p.get(k) {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Array(inner)) => inner
                            .iter()
                            .filter_map(|i| match i {
                                Value::String(s) => Some(s.as_str()),
                                other => other.get("text").and_then(Value::as_str),
                            })
                            .collect(),
                        _ => String::new(),
                    }
                };
                match p.get("type").and_then(Value::as_str) {
                    Some("text") | Some("output_text") | None => {
                        out.push(Delta::Text(text(p, "text")))
                    }
                    Some("thinking") | Some("reasoning") => {
                        let t = text(p, "thinking");
                        out.push(Delta::Reasoning(if t.is_empty() {
                            text(p, "text")
                        } else {
                            t
                        }));
                    }
                    Some("refusal") => out.push(Delta::Refusal(text(p, "refusal"))),
                    Some(other) => out.push(unknown_part(other)),
                }
            }
        }
        _ => {}
    }
}

fn unknown_part(kind: &str) -> Delta {
    Delta::Warning(Warning::new(
        lint::UNKNOWN_BLOCK,
        format!("a content part of type \"{kind}\" that toolscope does not know; it is not shown"),
    ))
}

/// Refusal text, citations and reasoning: what a message or a delta carries besides its
/// content and calls.
fn extras(m: &Value, out: &mut Vec<Delta>) {
    if let Some(r) = reasoning_text(m) {
        out.push(Delta::Reasoning(r.to_string()));
    }
    if let Some(r) = m.get("refusal").and_then(Value::as_str) {
        out.push(Delta::Refusal(r.to_string()));
    }
}

/// `annotations` (web-search models): each URL citation as a source.
fn annotations(m: &Value, out: &mut Vec<Delta>) {
    for a in m
        .get("annotations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let c = a.get("url_citation").unwrap_or(a);
        if let Some(url) = c.get("url").and_then(Value::as_str) {
            out.push(Delta::Source(Source {
                source_type: SourceType::Url,
                url: Some(url.to_string()),
                title: c.get("title").and_then(Value::as_str).map(str::to_string),
                cited_text: None,
            }));
        }
    }
}

fn reasoning_text(v: &Value) -> Option<&str> {
    v.get("reasoning_content")
        .and_then(Value::as_str)
        .or_else(|| v.get("reasoning").and_then(Value::as_str))
}

/// Arguments as text: normally a string; some servers send the object itself.
fn arguments_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Decodes the wire events of one answer.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    stream: bool,
    /// Ids of calls whose chunks came without an `index` (some compatible servers), in order.
    unindexed: Vec<String>,
    last_index: u64,
    /// The id and name each streamed call's first fragment gave, by index (the lint's
    /// `id-changed` and `name-changed`).
    headers: Vec<(u64, Option<String>, Option<String>)>,
    /// `missing-index` was reported (once per answer is enough).
    reported_missing_index: bool,
}

impl Decoder {
    pub(crate) fn new(stream: bool) -> Self {
        Decoder {
            stream,
            ..Decoder::default()
        }
    }

    fn chunk(&mut self, data: &str, out: &mut Vec<Delta>) {
        let data = data.trim();
        if data == "[DONE]" {
            out.push(Delta::Done);
            return;
        }
        let v = match shared::parse(data, true) {
            Ok(v) => v,
            Err(e) => return out.push(e),
        };
        let err = ErrorBody::from_value(&v);
        if v.get("error").is_some() && err.is_error() {
            return out.push(Delta::Error(stream_error(&err)));
        }
        let choices = v.get("choices").and_then(Value::as_array);
        if choices
            .and_then(|c| c.first())
            .is_some_and(|c| c.get("message").is_some() && c.get("delta").is_none())
        {
            // A whole response where chunks were expected (a server that does not stream).
            return body(data, out);
        }
        if choices.is_none() && v.get("usage").is_none() {
            return out.push(invalid(format!(
                "a stream event has no choices: {}",
                shared::quote(data)
            )));
        }
        for choice in choices.into_iter().flatten() {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue; // only the first choice is shown
            }
            if let Some(delta) = choice.get("delta") {
                extras(delta, out);
                content(delta.get("content"), out);
                annotations(delta, out);
                let calls = delta.get("tool_calls").and_then(Value::as_array);
                let mut indices_in_chunk: Vec<u64> = Vec::new();
                for (pos, tc) in calls.into_iter().flatten().enumerate() {
                    let id = tc.get("id").and_then(Value::as_str).map(str::to_string);
                    if tc.get("index").is_none() && !self.reported_missing_index {
                        self.reported_missing_index = true;
                        out.push(Delta::Warning(Warning::new(
                            lint::MISSING_INDEX,
                            "a streamed tool-call fragment has no index; toolscope keys it by its id or position",
                        )));
                    }
                    let index = self.index_of(tc, id.as_deref(), pos);
                    if tc.get("index").is_some() && indices_in_chunk.contains(&index) {
                        out.push(Delta::Warning(Warning::new(
                            lint::DUPLICATE_INDEX,
                            format!("two tool-call entries with index {index} in one chunk"),
                        )));
                    }
                    indices_in_chunk.push(index);
                    let f = tc.get("function");
                    let name = f
                        .and_then(|f| f.get("name"))
                        .and_then(Value::as_str)
                        .filter(|n| !n.is_empty())
                        .map(str::to_string);
                    self.check_header(index, id.as_deref(), name.as_deref(), out);
                    if id.is_some() || name.is_some() {
                        out.push(Delta::ToolStart {
                            index,
                            id,
                            name,
                            provider_executed: false,
                        });
                    }
                    let fragment = arguments_text(f.and_then(|f| f.get("arguments")));
                    if !fragment.is_empty() {
                        out.push(Delta::ToolArgs { index, fragment });
                    }
                }
                if let Some(fc) = delta.get("function_call") {
                    let name = fc.get("name").and_then(Value::as_str).map(str::to_string);
                    if name.is_some() {
                        out.push(Delta::ToolStart {
                            index: 0,
                            id: None,
                            name,
                            provider_executed: false,
                        });
                    }
                    let fragment = arguments_text(fc.get("arguments"));
                    if !fragment.is_empty() {
                        out.push(Delta::ToolArgs { index: 0, fragment });
                    }
                }
            }
            if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
                out.push(Delta::Finish(finish_reason(r)));
            }
        }
        if let Some(u) = usage(&v) {
            out.push(Delta::Usage(u));
        }
    }

    /// The lint of a call's header: a later fragment must not contradict its first id or name.
    fn check_header(
        &mut self,
        index: u64,
        id: Option<&str>,
        name: Option<&str>,
        out: &mut Vec<Delta>,
    ) {
        let Some(h) = self.headers.iter_mut().find(|h| h.0 == index) else {
            self.headers
                .push((index, id.map(str::to_string), name.map(str::to_string)));
            return;
        };
        let call_id = h.1.clone();
        for (code, first, now, what) in [
            (lint::ID_CHANGED, &mut h.1, id, "id"),
            (lint::NAME_CHANGED, &mut h.2, name, "name"),
        ] {
            match (first.as_deref(), now) {
                (Some(a), Some(b)) if a != b => out.push(Delta::Warning(Warning {
                    tool_call_id: call_id.clone().map(Into::into),
                    ..Warning::new(
                        code,
                        format!(
                            "a later fragment of the call at index {index} gives the {what} \"{b}\"; its first gave \"{a}\""
                        ),
                    )
                })),
                (None, Some(b)) => *first = Some(b.to_string()),
                _ => {}
            }
        }
    }

    /// The key of a streamed call: its `index`, or for servers that leave it out, its id's
    /// position (a chunk without id continues the last call).
    fn index_of(&mut self, tc: &Value, id: Option<&str>, pos: usize) -> u64 {
        if let Some(i) = tc.get("index").and_then(Value::as_u64) {
            self.last_index = i;
            return i;
        }
        let i = match id {
            Some(id) => match self.unindexed.iter().position(|x| x == id) {
                Some(i) => i as u64,
                None => {
                    self.unindexed.push(id.to_string());
                    (self.unindexed.len() - 1) as u64
                }
            },
            None if pos > 0 => pos as u64,
            None => self.last_index,
        };
        self.last_index = i;
        i
    }
}

impl DecodeAnswers for OpenAiChat {
    fn decoder(&self, stream: bool) -> Box<dyn WireDecoder> {
        Box::new(Decoder::new(stream))
    }
}

impl WireDecoder for Decoder {
    fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        if self.stream {
            self.chunk(data, out);
        } else {
            body(data, out);
        }
    }
}

/// A whole (non-streamed) response.
fn body(data: &str, out: &mut Vec<Delta>) {
    let v = match shared::parse(data, false) {
        Ok(v) => v,
        Err(e) => return out.push(e),
    };
    let err = ErrorBody::from_value(&v);
    if v.get("error").is_some_and(|e| !e.is_null()) && err.is_error() {
        return out.push(Delta::Error(stream_error(&err)));
    }
    let Some(choice) = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return out.push(invalid("the response has no choices".into()));
    };
    let Some(message) = choice.get("message").filter(|m| m.is_object()) else {
        return out.push(invalid("the response's first choice has no message".into()));
    };
    // A whole body knows its finish reason up front; said first, a call that the token limit
    // cut is known as cut when it closes.
    if let Some(r) = choice.get("finish_reason").and_then(Value::as_str) {
        out.push(Delta::Finish(finish_reason(r)));
    }
    extras(message, out);
    content(message.get("content"), out);
    annotations(message, out);
    let calls = message.get("tool_calls").and_then(Value::as_array);
    for (i, tc) in calls.into_iter().flatten().enumerate() {
        let index = i as u64;
        let f = tc.get("function");
        out.push(Delta::ToolStart {
            index,
            id: tc.get("id").and_then(Value::as_str).map(str::to_string),
            name: f
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            provider_executed: false,
        });
        out.push(Delta::ToolArgs {
            index,
            fragment: arguments_text(f.and_then(|f| f.get("arguments"))),
        });
        out.push(Delta::ToolEnd { index });
    }
    if let Some(fc) = message.get("function_call").filter(|f| f.is_object()) {
        out.push(Delta::ToolStart {
            index: 0,
            id: None,
            name: fc.get("name").and_then(Value::as_str).map(str::to_string),
            provider_executed: false,
        });
        out.push(Delta::ToolArgs {
            index: 0,
            fragment: arguments_text(fc.get("arguments")),
        });
        out.push(Delta::ToolEnd { index: 0 });
    }
    if let Some(u) = usage(&v) {
        out.push(Delta::Usage(u));
    }
    out.push(Delta::Done);
}
