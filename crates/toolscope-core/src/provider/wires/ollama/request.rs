//! A request on the Ollama chat wire: the conversation, tools, tool choice and sampling options in
//! the wire's own fields.

use serde_json::{Map, Value, json};

use crate::provider::plan::Plan;
use crate::provider::request::Request;
use crate::provider::wires::{BuildRequest, WireRequest};

use super::Ollama;
use crate::provider::wires::shared;

impl BuildRequest for Ollama {
    fn build(&self, req: &Request, plan: &Plan, base: &str) -> WireRequest {
        let mut body = shared::chat_body(
            req,
            plan,
            json!(""),
            |c| json!({"function": {"name": c.tool_name, "arguments": c.input}}),
            |r| json!({"role": "tool", "content": r.content, "tool_name": r.name}),
        );
        if let Some(rf) = &plan.response_format {
            body.insert("format".into(), rf.schema.clone());
        }
        let mut options = Map::new();
        shared::sampling(
            &req.sampling,
            &shared::SamplingKeys {
                max_tokens: Some("num_predict"),
                ..shared::SamplingKeys::OPENAI
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
}
