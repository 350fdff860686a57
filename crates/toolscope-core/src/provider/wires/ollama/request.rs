//! A request on the Ollama chat wire: the conversation, tools, tool choice and sampling options in
//! the wire's own fields.

use serde_json::{Map, Value, json};

use crate::provider::plan::{Plan, Turn};
use crate::provider::request::Request;
use crate::provider::wires::WireRequest;

use crate::provider::wires::shared;

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
            .map(|t| json!({"type": "function", "function": shared::tool_decl(t, "parameters")}))
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(rf) = &plan.response_format {
        body.insert("format".into(), rf.schema.clone());
    }
    let mut options = Map::new();
    shared::sampling(
        &req.sampling,
        &shared::SamplingKeys {
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
