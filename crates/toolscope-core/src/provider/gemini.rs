//! Google Gemini: `POST {base}/v1beta/models/{model}:generateContent`, or
//! `:streamGenerateContent?alt=sse` to stream, with the key in `x-goog-api-key`.
//!
//! The assistant is the `model` role, the system prompt is `systemInstruction`, tool calls are
//! `functionCall` parts and results are `functionResponse` parts of a user turn (a string result
//! wrapped as `{result: …}`). A stream is a series of whole `GenerateContentResponse`s: text
//! arrives in pieces, but each `functionCall` arrives whole. Gemini gives calls no id unless the
//! model sets one, so the assembler names them.

use serde_json::{Map, Value, json};

use crate::lint;
use crate::part::{FinishReason, Source, SourceType, Usage, Warning};
use crate::tool::ToolChoice;

use super::assemble::Delta;
use super::errors::{ErrorBody, stream_error};
use super::plan::{Plan, Turn};
use super::request::Request;
use super::wire::{self, WireRequest, invalid};

pub(crate) fn build(req: &Request, plan: &Plan, base: &str) -> WireRequest {
    let mut contents: Vec<(&str, Vec<Value>)> = Vec::new();
    let mut add = |role: &'static str, parts: Vec<Value>| match contents.last_mut() {
        // Consecutive turns of one role become one (emulated results followed by a prompt).
        Some((r, p)) if *r == role => p.extend(parts),
        _ => contents.push((role, parts)),
    };
    for turn in plan.turns(req) {
        match turn {
            Turn::User(text) => add("user", vec![json!({"text": text})]),
            Turn::Assistant {
                text,
                calls,
                reasoning,
            } => {
                // Thought signatures go back on the parts that carried them: a thought part,
                // the answer's text, each function call.
                let mut parts = Vec::new();
                let mut text_signature = None;
                for r in reasoning {
                    let Some(sig) = r
                        .metadata(METADATA_KEY)
                        .and_then(|m| m.get("thoughtSignature"))
                    else {
                        continue;
                    };
                    if r.metadata(METADATA_KEY).and_then(|m| m.get("part")) == Some(&json!("text"))
                    {
                        text_signature = Some(sig.clone());
                    } else {
                        parts.push(
                            json!({"text": r.text, "thought": true, "thoughtSignature": sig}),
                        );
                    }
                }
                if text.is_some() || text_signature.is_some() {
                    let mut part = json!({"text": text.unwrap_or_default()});
                    if let Some(sig) = text_signature {
                        part["thoughtSignature"] = sig;
                    }
                    parts.push(part);
                }
                for c in calls {
                    let mut part = json!({"functionCall": {
                        "name": c.tool_name, "id": &*c.tool_call_id, "args": c.input,
                    }});
                    if let Some(sig) = c
                        .provider_metadata
                        .as_ref()
                        .and_then(|m| m.pointer("/gemini/thoughtSignature"))
                    {
                        part["thoughtSignature"] = sig.clone();
                    }
                    parts.push(part);
                }
                add("model", parts);
            }
            Turn::Results(results) => add(
                "user",
                results
                    .iter()
                    .map(|r| {
                        json!({"functionResponse": {
                            "name": r.name, "id": r.id, "response": {"result": r.content},
                        }})
                    })
                    .collect(),
            ),
        }
    }
    let contents: Vec<Value> = contents
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect();
    let mut body = Map::new();
    if let Some(s) = &plan.system {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": s}]}));
    }
    body.insert("contents".into(), Value::Array(contents));
    if plan.native_tools {
        let decls: Vec<Value> = plan
            .declared(req)
            .into_iter()
            .map(|t| {
                // `parameters` takes Gemini's OpenAPI subset; a schema using more of JSON Schema
                // goes in `parametersJsonSchema` instead of being refused.
                let key = if fits_openapi_subset(t.schema()) {
                    "parameters"
                } else {
                    "parametersJsonSchema"
                };
                Value::Object(wire::tool_decl(t, key))
            })
            .collect();
        body.insert("tools".into(), json!([{"functionDeclarations": decls}]));
    }
    if let Some(choice) = &plan.native_choice {
        let config = match choice {
            ToolChoice::Auto => json!({"mode": "AUTO"}),
            ToolChoice::Required => json!({"mode": "ANY"}),
            ToolChoice::None => json!({"mode": "NONE"}),
            ToolChoice::Tool(name) => json!({"mode": "ANY", "allowedFunctionNames": [name]}),
        };
        body.insert(
            "toolConfig".into(),
            json!({"functionCallingConfig": config}),
        );
    }
    let mut config = Map::new();
    wire::sampling(
        &req.sampling,
        &wire::SamplingKeys {
            temperature: "temperature",
            top_p: "topP",
            seed: Some("seed"),
            max_tokens: Some("maxOutputTokens"),
            stop: Some("stopSequences"),
        },
        &mut config,
    );
    if let Some(effort) = req.sampling.reasoning_effort {
        config.insert(
            "thinkingConfig".into(),
            json!({"thinkingBudget": effort.budget_tokens(), "includeThoughts": true}),
        );
    }
    if let Some(rf) = &plan.response_format {
        config.insert("responseMimeType".into(), json!("application/json"));
        config.insert("responseJsonSchema".into(), rf.schema.clone());
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    let model = req.model.strip_prefix("models/").unwrap_or(&req.model);
    let url = if req.stream {
        format!("{base}/v1beta/models/{model}:streamGenerateContent?alt=sse")
    } else {
        format!("{base}/v1beta/models/{model}:generateContent")
    };
    WireRequest {
        url,
        headers: Vec::new(),
        body: Value::Object(body),
    }
}

/// Whether a schema uses only what Gemini's `Schema` object (an OpenAPI 3.0 subset) knows.
fn fits_openapi_subset(schema: &Value) -> bool {
    const KNOWN: &[&str] = &[
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    ];
    match schema {
        Value::Object(o) => o.iter().all(|(k, v)| {
            KNOWN.contains(&k.as_str())
                && match k.as_str() {
                    "type" => v.is_string(),
                    "properties" => v
                        .as_object()
                        .is_some_and(|p| p.values().all(fits_openapi_subset)),
                    "items" => fits_openapi_subset(v),
                    "anyOf" => v
                        .as_array()
                        .is_some_and(|a| a.iter().all(fits_openapi_subset)),
                    _ => true,
                }
        }),
        _ => false,
    }
}

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

/// The key of this wire's entries in provider metadata.
pub(crate) const METADATA_KEY: &str = "gemini";

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

    pub(crate) fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        let v = match wire::parse(data, self.stream) {
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
                super::wire::quote(&data())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_beyond_the_openapi_subset_are_spotted() {
        let plain = json!({"type":"object","properties":{"city":{"type":"string","enum":["a"]}},"required":["city"]});
        assert!(fits_openapi_subset(&plain));
        for extra in [
            json!({"type":"object","additionalProperties":false}),
            json!({"type":["string","null"]}),
            json!({"type":"object","properties":{"x":{"$ref":"#/$defs/x"}}}),
        ] {
            assert!(!fits_openapi_subset(&extra), "{extra}");
        }
    }
}
