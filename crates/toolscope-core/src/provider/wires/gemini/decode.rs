//! Reading Gemini answers: stream events or a whole body, into provider-neutral deltas.

use serde_json::{Value, json};

use crate::lint;
use crate::part::{FinishReason, Source, SourceType, Usage, Warning};
use crate::provider::assemble::Delta;
use crate::provider::errors::{ErrorBody, stream_error};

use super::{Gemini, METADATA_KEY};
use crate::provider::wires::shared::{self, invalid};
use crate::provider::wires::{DecodeAnswers, WireDecoder};

pub(crate) fn finish_reason(s: &str) -> FinishReason {
    match s {
        "STOP" => FinishReason::Stop,
        "MAX_TOKENS" => FinishReason::Length,
        "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII" | "IMAGE_SAFETY" => {
            FinishReason::ContentFilter
        }
        "MALFORMED_FUNCTION_CALL" | "UNEXPECTED_TOOL_CALL" => FinishReason::Error,
        _ => FinishReason::Other,
    }
}

/// Usage as Gemini reports it: the prompt count includes cached content, and the tokens of
/// server-tool results are prompt tokens too; thought tokens are output reported apart.
fn usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let input = match (n("promptTokenCount"), n("toolUsePromptTokenCount")) {
        (Some(p), t) => Some(p + t.unwrap_or(0)),
        (None, t) => t,
    };
    let output = match (n("candidatesTokenCount"), n("thoughtsTokenCount")) {
        (Some(c), Some(t)) => Some(c + t),
        (c, t) => c.or(t),
    };
    Usage {
        input_tokens: input,
        cached_input_tokens: n("cachedContentTokenCount"),
        output_tokens: output,
        reasoning_tokens: n("thoughtsTokenCount"),
        total_tokens: n("totalTokenCount"),
    }
}

/// The keys a part may have besides its content (or as its content) that toolscope reads.
const KNOWN_PART_KEYS: &[&str] = &[
    "text",
    "thought",
    "thoughtSignature",
    "functionCall",
    "executableCode",
    "codeExecutionResult",
    "inlineData",
    "fileData",
    "videoMetadata",
    "partMetadata",
    "mediaResolution",
];

fn unknown(message: String) -> Delta {
    Delta::Warning(Warning::new(lint::UNKNOWN_BLOCK, message))
}

#[derive(Debug, Default)]
pub(crate) struct Decoder {
    stream: bool,
    /// Source URLs already reported (grounding repeats across a stream's events).
    sources: Vec<String>,
}

impl Decoder {
    pub(crate) fn new(stream: bool) -> Self {
        Decoder {
            stream,
            ..Decoder::default()
        }
    }

    fn part(&mut self, p: &Value, out: &mut Vec<Delta>) {
        let signature = p
            .get("thoughtSignature")
            .and_then(Value::as_str)
            .map(str::to_string);
        let thought = p.get("thought").and_then(Value::as_bool) == Some(true);
        if let Some(fc) = p.get("functionCall") {
            out.push(Delta::ToolWhole {
                id: fc.get("id").and_then(Value::as_str).map(str::to_string),
                name: fc
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                args: fc.get("args").cloned().unwrap_or(Value::Null),
                provider_executed: false,
                metadata: signature.map(|s| json!({METADATA_KEY: {"thoughtSignature": s}})),
            });
        } else if let Some(code) = p.get("executableCode") {
            // Code execution, a server tool: the code is the call, its result follows.
            out.push(Delta::ToolWhole {
                id: code.get("id").and_then(Value::as_str).map(str::to_string),
                name: "code_execution".into(),
                args: code.clone(),
                provider_executed: true,
                metadata: None,
            });
        } else if let Some(result) = p.get("codeExecutionResult") {
            let outcome = result.get("outcome").and_then(Value::as_str);
            out.push(Delta::ToolResult {
                id: result.get("id").and_then(Value::as_str).map(str::to_string),
                name: Some("code_execution".into()),
                output: result.clone(),
                is_error: outcome.is_some_and(|o| o != "OUTCOME_OK"),
            });
        } else if let Some(t) = p.get("text").and_then(Value::as_str) {
            if thought {
                out.push(Delta::Reasoning(t.to_string()));
                if let Some(s) = signature {
                    out.push(Delta::ReasoningEnd(Some(
                        json!({METADATA_KEY: {"thoughtSignature": s}}),
                    )));
                }
            } else {
                out.push(Delta::Text(t.to_string()));
                if let Some(s) = signature {
                    // A signature on the answer's text: kept on an (empty) reasoning block, and
                    // sent back on the text part.
                    out.push(Delta::ReasoningEnd(Some(
                        json!({METADATA_KEY: {"thoughtSignature": s, "part": "text"}}),
                    )));
                }
            }
        } else if let Some(media) = p.get("inlineData").or_else(|| p.get("fileData")) {
            let mime = media
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or("unknown type");
            out.push(unknown(format!(
                "a part with {mime} content that toolscope cannot show"
            )));
        } else if let Some(s) = signature {
            // A signature alone on a part.
            out.push(Delta::ReasoningEnd(Some(
                json!({METADATA_KEY: {"thoughtSignature": s}}),
            )));
        }
        if let Some(obj) = p.as_object() {
            for key in obj
                .keys()
                .filter(|k| !KNOWN_PART_KEYS.contains(&k.as_str()))
            {
                out.push(unknown(format!(
                    "a part of type \"{key}\" that toolscope does not know; it is not shown"
                )));
            }
        }
    }

    /// The grounding and citation sources of a candidate, each URL once.
    fn sources(&mut self, c: &Value, out: &mut Vec<Delta>) {
        let chunks = c
            .pointer("/groundingMetadata/groundingChunks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("web").or_else(|| g.get("retrievedContext")));
        let citations = c
            .pointer("/citationMetadata/citationSources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for s in chunks.chain(citations) {
            let Some(url) = s.get("uri").and_then(Value::as_str) else {
                continue;
            };
            if self.sources.iter().any(|u| u == url) {
                continue;
            }
            self.sources.push(url.to_string());
            out.push(Delta::Source(Source {
                source_type: SourceType::Url,
                url: Some(url.to_string()),
                title: s.get("title").and_then(Value::as_str).map(str::to_string),
                cited_text: None,
            }));
        }
    }

    fn response(&mut self, v: &Value, out: &mut Vec<Delta>) {
        let data = || v.to_string();
        if v.get("error").is_some() {
            return out.push(Delta::Error(stream_error(&ErrorBody::from_value(v))));
        }
        let candidate = v
            .get("candidates")
            .and_then(Value::as_array)
            .and_then(|c| c.first());
        let blocked = v
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str);
        if candidate.is_none() && blocked.is_none() && !self.stream {
            return out.push(invalid("the response has no candidates".into()));
        }
        if candidate.is_none() && blocked.is_none() && v.get("usageMetadata").is_none() {
            return out.push(invalid(format!(
                "a stream event has no candidates: {}",
                shared::quote(&data())
            )));
        }
        if let Some(c) = candidate {
            let parts = c.pointer("/content/parts").and_then(Value::as_array);
            for p in parts.into_iter().flatten() {
                self.part(p, out);
            }
            self.sources(c, out);
            if let Some(r) = c.get("finishReason").and_then(Value::as_str) {
                out.push(Delta::Finish(finish_reason(r)));
            }
        } else if blocked.is_some() {
            out.push(Delta::Finish(FinishReason::ContentFilter));
        }
        if let Some(u) = v.get("usageMetadata") {
            out.push(Delta::Usage(usage(u)));
        }
    }
}

impl DecodeAnswers for Gemini {
    fn decoder(&self, stream: bool) -> Box<dyn WireDecoder> {
        Box::new(Decoder::new(stream))
    }
}

impl WireDecoder for Decoder {
    fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        let v = match shared::parse(data, self.stream) {
            Ok(v) => v,
            Err(e) => return out.push(e),
        };
        // `streamGenerateContent` without `alt=sse` answers one JSON array of responses.
        let items = match v {
            Value::Array(items) => items,
            one => vec![one],
        };
        let before = out.len();
        for item in &items {
            self.response(item, out);
            if matches!(out.last(), Some(Delta::Error(_))) {
                return;
            }
        }
        if !self.stream {
            if out.len() == before && items.is_empty() {
                return out.push(invalid("the response is an empty list".into()));
            }
            out.push(Delta::Done);
        }
    }
}
