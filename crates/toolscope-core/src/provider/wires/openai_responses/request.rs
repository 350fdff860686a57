//! A request on the Responses wire: the conversation, tools, tool choice and sampling options in
//! the wire's own fields.

use serde_json::{Map, Value, json};

use crate::provider::plan::{Plan, Turn};
use crate::provider::request::Request;
use crate::provider::wires::{BuildRequest, WireRequest};
use crate::tool::{Tool, ToolChoice};

use super::{METADATA_KEY, OpenAiResponses};
use crate::provider::wires::shared;

impl BuildRequest for OpenAiResponses {
    fn build(&self, req: &Request, plan: &Plan, base: &str) -> WireRequest {
        let mut input = Vec::new();
        for turn in plan.turns(req) {
            match turn {
                Turn::User(text) => input.push(json!({"role": "user", "content": text})),
                Turn::Assistant {
                    text,
                    calls,
                    reasoning,
                } => {
                    // The reasoning items of the answer go back as they came, before its message
                    // and calls: a reasoning model continues from them.
                    for r in reasoning {
                        if let Some(item) = r.metadata(METADATA_KEY).and_then(|m| m.get("item")) {
                            input.push(item.clone());
                        }
                    }
                    if let Some(t) = text {
                        input.push(json!({"role": "assistant", "content": t}));
                    }
                    for c in calls {
                        input.push(json!({
                            "type": "function_call",
                            "call_id": &*c.tool_call_id,
                            "name": c.tool_name,
                            "arguments": c.input.to_string(),
                        }));
                    }
                }
                Turn::Results(results) => {
                    for r in results {
                        input.push(json!({
                            "type": "function_call_output", "call_id": r.id, "output": r.content,
                        }));
                    }
                }
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(req.model));
        if let Some(s) = &plan.system {
            body.insert("instructions".into(), json!(s));
        }
        body.insert("input".into(), Value::Array(input));
        let function = |t: &Tool| {
            let mut decl = shared::tool_decl(t, "parameters");
            decl.insert("type".into(), json!("function"));
            // Responses makes function tools strict by default, which refuses most schemas as
            // users write them; toolscope shows what the model does with them as they are.
            decl.insert("strict".into(), json!(false));
            Value::Object(decl)
        };
        if let Some(tools) = shared::declared_tools(plan, req, function) {
            body.insert("tools".into(), tools);
            if let Some(parallel) = req.sampling.parallel_tool_calls {
                body.insert("parallel_tool_calls".into(), json!(parallel));
            }
        }
        if let Some(choice) = &plan.native_choice {
            body.insert(
                "tool_choice".into(),
                tool_choice(choice, &req.sampling.allowed_tools),
            );
        } else if plan.native_tools && !req.sampling.allowed_tools.is_empty() {
            body.insert(
                "tool_choice".into(),
                tool_choice(&ToolChoice::Auto, &req.sampling.allowed_tools),
            );
        }
        if let Some(effort) = req.sampling.reasoning_effort {
            body.insert(
                "reasoning".into(),
                json!({"effort": effort.as_str(), "summary": "auto"}),
            );
        }
        if let Some(rf) = &plan.response_format {
            let mut format = Map::new();
            format.insert("type".into(), json!("json_schema"));
            format.insert("name".into(), json!(shared::format_name(&rf.name)));
            if let Some(d) = &rf.description {
                format.insert("description".into(), json!(d));
            }
            format.insert("schema".into(), rf.schema.clone());
            format.insert("strict".into(), json!(false));
            body.insert("text".into(), json!({"format": format}));
        }
        // Responses has no seed and no stop sequences.
        shared::sampling(
            &req.sampling,
            &shared::SamplingKeys {
                temperature: "temperature",
                top_p: "top_p",
                seed: None,
                max_tokens: Some("max_output_tokens"),
                stop: None,
            },
            &mut body,
        );
        if req.stream {
            body.insert("stream".into(), json!(true));
        }
        WireRequest {
            url: format!("{base}/responses"),
            headers: Vec::new(),
            body: Value::Object(body),
        }
    }
}

/// The `tool_choice` of a native choice. With allowed tools, `auto` and `required` keep the
/// whole tool list (and the prompt cache) and restrict the calls with `allowed_tools`.
pub(super) fn tool_choice(choice: &ToolChoice, allowed: &[String]) -> Value {
    let restrict = |mode: &str| {
        let tools: Vec<Value> = allowed
            .iter()
            .map(|n| json!({"type": "function", "name": n}))
            .collect();
        json!({"type": "allowed_tools", "mode": mode, "tools": tools})
    };
    match choice {
        ToolChoice::Auto if !allowed.is_empty() => restrict("auto"),
        ToolChoice::Required if !allowed.is_empty() => restrict("required"),
        ToolChoice::Auto => json!("auto"),
        ToolChoice::Required => json!("required"),
        ToolChoice::None => json!("none"),
        ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
    }
}
