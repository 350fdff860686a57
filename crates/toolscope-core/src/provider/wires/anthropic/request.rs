//! A request on the Anthropic Messages wire: the conversation, tools, tool choice and sampling
//! options in the wire's own fields.

use serde_json::{Map, Value, json};

use crate::provider::plan::{Plan, Turn};
use crate::provider::request::Request;
use crate::provider::wires::{BuildRequest, WireRequest};
use crate::tool::{Tool, ToolChoice};

use super::{ANTHROPIC_DEFAULT_MAX_TOKENS, ANTHROPIC_VERSION, Anthropic, METADATA_KEY};
use crate::provider::wires::shared;

impl BuildRequest for Anthropic {
    fn build(&self, req: &Request, plan: &Plan, base: &str) -> WireRequest {
        let mut messages = Vec::new();
        for turn in plan.turns(req) {
            match turn {
                Turn::User(text) => messages.push(json!({"role": "user", "content": text})),
                Turn::Assistant {
                    text, calls: [], ..
                } => {
                    messages.push(json!({"role": "assistant", "content": text.unwrap_or_default()}))
                }
                Turn::Assistant {
                    text,
                    calls,
                    reasoning,
                } => {
                    // In a tool loop the thinking blocks go back first, with their signatures, as
                    // they came (redacted ones with their encrypted data).
                    let mut blocks: Vec<Value> = reasoning
                    .iter()
                    .filter_map(|r| {
                        let m = r.metadata(METADATA_KEY)?;
                        if let Some(data) = m.get("redactedData") {
                            return Some(json!({"type": "redacted_thinking", "data": data}));
                        }
                        let signature = m.get("signature")?;
                        Some(
                            json!({"type": "thinking", "thinking": r.text, "signature": signature}),
                        )
                    })
                    .collect();
                    if let Some(t) = text {
                        blocks.push(json!({"type": "text", "text": t}));
                    }
                    for c in calls {
                        blocks.push(json!({
                        "type": "tool_use", "id": &*c.tool_call_id, "name": c.tool_name, "input": c.input,
                    }));
                    }
                    messages.push(json!({"role": "assistant", "content": blocks}));
                }
                Turn::Results(results) => {
                    let blocks: Vec<Value> = results
                    .iter()
                    .map(|r| json!({"type": "tool_result", "tool_use_id": r.id, "content": r.content}))
                    .collect();
                    messages.push(json!({"role": "user", "content": blocks}));
                }
            }
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(req.model));
        // Validation guarantees max_tokens; the fallback only keeps a replayed request sendable.
        body.insert(
            "max_tokens".into(),
            json!(
                req.sampling
                    .max_tokens
                    .unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS)
            ),
        );
        if let Some(s) = &plan.system {
            body.insert("system".into(), json!(s));
        }
        body.insert("messages".into(), Value::Array(messages));
        let decl = |t: &Tool| Value::Object(shared::tool_decl(t, "input_schema"));
        if let Some(tools) = shared::declared_tools(plan, req, decl) {
            body.insert("tools".into(), tools);
        }
        // One call at most is said inside the tool choice; without a choice, `auto` carries it.
        let single = plan.native_tools && req.sampling.parallel_tool_calls == Some(false);
        let choice = match (&plan.native_choice, single) {
            (Some(choice), _) => Some(choice.clone()),
            (None, true) => Some(ToolChoice::Auto),
            (None, false) => None,
        };
        if let Some(choice) = &choice {
            let mut wire = match choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
            if single && *choice != ToolChoice::None {
                wire["disable_parallel_tool_use"] = json!(true);
            }
            body.insert("tool_choice".into(), wire);
        }
        if let Some(effort) = req.sampling.reasoning_effort {
            // The budget comes out of max_tokens and must stay below it (validation checked that
            // there is room for the smallest one).
            let max = req
                .sampling
                .max_tokens
                .unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS);
            let budget = effort
                .budget_tokens()
                .min(max.saturating_sub(1))
                .max(super::MIN_THINKING_BUDGET);
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        // `max_tokens` is always sent (above); Anthropic has no seed.
        shared::sampling(
            &req.sampling,
            &shared::SamplingKeys {
                temperature: "temperature",
                top_p: "top_p",
                seed: None,
                max_tokens: None,
                stop: Some("stop_sequences"),
            },
            &mut body,
        );
        if req.stream {
            body.insert("stream".into(), json!(true));
        }
        WireRequest {
            url: format!("{base}/v1/messages"),
            headers: vec![("anthropic-version", ANTHROPIC_VERSION.to_string())],
            body: Value::Object(body),
        }
    }
}
