//! A request on the Gemini wire: the conversation, tools, tool choice and sampling options in the
//! wire's own fields.

use serde_json::{Map, Value, json};

use crate::provider::plan::{Plan, Turn};
use crate::provider::request::Request;
use crate::provider::wires::{BuildRequest, WireRequest};
use crate::tool::{Tool, ToolChoice};

use super::{Gemini, METADATA_KEY};
use crate::provider::wires::shared;

impl BuildRequest for Gemini {
    fn build(&self, req: &Request, plan: &Plan, base: &str) -> WireRequest {
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
                        if r.metadata(METADATA_KEY).and_then(|m| m.get("part"))
                            == Some(&json!("text"))
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
        let decl = |t: &Tool| {
            // `parameters` takes Gemini's OpenAPI subset; a schema using more of JSON Schema goes
            // in `parametersJsonSchema` instead of being refused.
            let key = if fits_openapi_subset(t.schema()) {
                "parameters"
            } else {
                "parametersJsonSchema"
            };
            Value::Object(shared::tool_decl(t, key))
        };
        if let Some(decls) = shared::declared_tools(plan, req, decl) {
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
        shared::sampling(
            &req.sampling,
            &shared::SamplingKeys {
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
