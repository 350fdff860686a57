//! A request on the Chat Completions wire: the conversation, tools, tool choice and sampling
//! options in the wire's own fields.

use serde_json::{Map, Value, json};

use crate::provider::plan::Plan;
use crate::provider::request::Request;
use crate::provider::wires::{BuildRequest, WireRequest};
use crate::tool::ToolChoice;

use super::OpenAiChat;
use crate::provider::wires::shared;

impl BuildRequest for OpenAiChat {
    fn build(&self, req: &Request, plan: &Plan, base: &str) -> WireRequest {
        // With calls and no text, OpenAI wants `content: null`.
        let mut body = shared::chat_body(
            req,
            plan,
            Value::Null,
            |c| {
                json!({
                    "id": &*c.tool_call_id,
                    "type": "function",
                    "function": {"name": c.tool_name, "arguments": c.input.to_string()},
                })
            },
            |r| json!({"role": "tool", "content": r.content, "tool_call_id": r.id}),
        );
        if plan.native_tools
            && let Some(parallel) = req.sampling.parallel_tool_calls
        {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
        if let Some(effort) = req.sampling.reasoning_effort {
            body.insert("reasoning_effort".into(), json!(effort.as_str()));
        }
        let allowed = &req.sampling.allowed_tools;
        let choice = match &plan.native_choice {
            None if plan.native_tools && !allowed.is_empty() => Some(ToolChoice::Auto),
            other => other.clone(),
        };
        if let Some(choice) = &choice {
            // With allowed tools, `auto` and `required` keep the whole list and restrict the calls.
            let restrict = |mode: &str| {
                let tools: Vec<Value> = allowed
                    .iter()
                    .map(|n| json!({"type": "function", "function": {"name": n}}))
                    .collect();
                json!({"type": "allowed_tools", "allowed_tools": {"mode": mode, "tools": tools}})
            };
            let wire = match choice {
                ToolChoice::Auto if !allowed.is_empty() => restrict("auto"),
                ToolChoice::Required if !allowed.is_empty() => restrict("required"),
                ToolChoice::Auto => json!("auto"),
                ToolChoice::Required => json!("required"),
                ToolChoice::None => json!("none"),
                ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
            };
            body.insert("tool_choice".into(), wire);
        }
        if let Some(rf) = &plan.response_format {
            let mut schema = Map::new();
            schema.insert("name".into(), json!(shared::format_name(&rf.name)));
            if let Some(d) = &rf.description {
                schema.insert("description".into(), json!(d));
            }
            schema.insert("schema".into(), rf.schema.clone());
            body.insert(
                "response_format".into(),
                json!({"type": "json_schema", "json_schema": schema}),
            );
        }
        shared::sampling(&req.sampling, &shared::SamplingKeys::OPENAI, &mut body);
        if req.stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        WireRequest {
            url: format!("{base}/chat/completions"),
            headers: Vec::new(),
            body: Value::Object(body),
        }
    }
}
