//! The OpenAI Responses wire of the demo server: a `/v1/responses` request read into the chat
//! request the demo model decides from, and its [`Reply`] written as a `response` object or as
//! the typed stream events of that API.
//!
//! Reading translates rather than re-implements: input items become chat messages
//! (`function_call` items the assistant's calls, `function_call_output` items tool messages,
//! reasoning items skipped), flat function tools become chat tools, `tool_choice` (also
//! `allowed_tools`, which keeps only the allowed tools) and `text.format` map to their chat
//! fields. Writing follows the API's event order: `response.created`, `response.in_progress`,
//! then per output item `response.output_item.added`, its deltas and `response.output_item.done`,
//! and `response.completed` (or `response.incomplete` when `max_output_tokens` cut the answer)
//! with the final response and its usage. Every event carries its `sequence_number`.

use serde_json::{Map, Value, json};

use crate::reply::{Finish, Piece, Reply};
use crate::request::RequestError;
use crate::wire::Meta;

fn bad(message: impl Into<String>, param: &str) -> RequestError {
    RequestError::new(message, param, Some("invalid_value"))
}

/// The text of a message's `content`: a string, or the `text` of its parts joined.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A Responses request body as the Chat Completions body the demo model reads.
pub fn chat_body(body: &Value) -> Result<Value, RequestError> {
    let Value::Object(obj) = body else {
        return Err(RequestError::not_an_object());
    };
    let mut messages: Vec<Value> = Vec::new();
    if let Some(i) = obj.get("instructions").and_then(Value::as_str) {
        messages.push(json!({"role": "system", "content": i}));
    }
    match obj.get("input") {
        Some(Value::String(s)) => messages.push(json!({"role": "user", "content": s})),
        Some(Value::Array(items)) => {
            for (n, item) in items.iter().enumerate() {
                input_item(n, item, &mut messages)?;
            }
        }
        None | Some(Value::Null) => {
            return Err(RequestError::new(
                "Missing required parameter: 'input'.",
                "input",
                Some("missing_required_parameter"),
            ));
        }
        Some(_) => return Err(bad("'input' must be a string or an array.", "input")),
    }
    let mut chat = Map::new();
    chat.insert(
        "model".into(),
        obj.get("model").cloned().unwrap_or(Value::Null),
    );
    chat.insert("messages".into(), Value::Array(messages));
    let mut tools: Vec<Value> = Vec::new();
    for (n, t) in obj
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        match t.get("type").and_then(Value::as_str) {
            Some("function") => {
                let mut f = t.clone();
                if let Value::Object(f) = &mut f {
                    f.remove("type");
                    f.remove("strict");
                }
                tools.push(json!({"type": "function", "function": f}));
            }
            other => {
                return Err(bad(
                    format!(
                        "The demo model runs function tools only; tools[{n}] is of type {}.",
                        other.unwrap_or("(none)")
                    ),
                    &format!("tools[{n}].type"),
                ));
            }
        }
    }
    let choice = match obj.get("tool_choice") {
        None | Some(Value::Null) => None,
        Some(s @ Value::String(_)) => Some(s.clone()),
        Some(c) => match c.get("type").and_then(Value::as_str) {
            Some("function") => {
                Some(json!({"type": "function", "function": {"name": c.get("name")}}))
            }
            Some("allowed_tools") => {
                let allowed: Vec<&str> = c
                    .get("tools")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t.get("name").and_then(Value::as_str))
                    .collect();
                tools.retain(|t| {
                    t.pointer("/function/name")
                        .and_then(Value::as_str)
                        .is_some_and(|n| allowed.contains(&n))
                });
                Some(c.get("mode").cloned().unwrap_or(json!("auto")))
            }
            _ => return Err(bad("Invalid value for 'tool_choice'.", "tool_choice")),
        },
    };
    if !tools.is_empty() {
        chat.insert("tools".into(), Value::Array(tools));
    }
    if let Some(c) = choice {
        chat.insert("tool_choice".into(), c);
    }
    if let Some(format) = body.pointer("/text/format") {
        let rf = match format.get("type").and_then(Value::as_str) {
            Some("json_schema") => json!({"type": "json_schema", "json_schema": {
                "name": format.get("name").cloned().unwrap_or(json!("response")),
                "schema": format.get("schema").cloned().unwrap_or(Value::Null),
            }}),
            Some("json_object") => json!({"type": "json_object"}),
            _ => json!({"type": "text"}),
        };
        chat.insert("response_format".into(), rf);
    }
    for (from, to) in [
        ("parallel_tool_calls", "parallel_tool_calls"),
        ("max_output_tokens", "max_tokens"),
        ("stream", "stream"),
    ] {
        if let Some(v) = obj.get(from) {
            chat.insert(to.into(), v.clone());
        }
    }
    // Responses always reports usage.
    chat.insert("stream_options".into(), json!({"include_usage": true}));
    Ok(Value::Object(chat))
}

/// One input item, as chat messages.
fn input_item(n: usize, item: &Value, messages: &mut Vec<Value>) -> Result<(), RequestError> {
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    match kind {
        "message" => {
            let role = item.get("role").and_then(Value::as_str).unwrap_or("user");
            messages.push(json!({"role": role, "content": content_text(item.get("content"))}));
        }
        "function_call" => {
            let call = json!({
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments")},
            });
            // Calls that follow each other (or the answer's text) are one assistant message.
            match messages.last_mut() {
                Some(m) if m["role"] == "assistant" => match m.get_mut("tool_calls") {
                    Some(Value::Array(calls)) => calls.push(call),
                    _ => m["tool_calls"] = json!([call]),
                },
                _ => messages
                    .push(json!({"role": "assistant", "content": null, "tool_calls": [call]})),
            }
        }
        "function_call_output" => messages.push(json!({
            "role": "tool",
            "tool_call_id": item.get("call_id"),
            "content": content_text(item.get("output")),
        })),
        // The demo model does not reason; a reasoning item sent back changes nothing.
        "reasoning" => {}
        other => {
            return Err(bad(
                format!("Invalid input item type '{other}'."),
                &format!("input[{n}].type"),
            ));
        }
    }
    Ok(())
}

/// The usage object of a reply.
fn usage(reply: &Reply) -> Value {
    let output = reply.completion_tokens();
    json!({
        "input_tokens": reply.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.prompt_tokens + output,
    })
}

/// The output items of a reply: one message with its text, then one function call per call.
fn items(reply: &Reply, meta: &Meta) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(text) = reply.content() {
        out.push(message_item(
            &format!("msg_{}", meta.id),
            &text,
            "completed",
        ));
    }
    for (i, c) in reply.tool_calls().iter().enumerate() {
        out.push(call_item(
            &format!("fc_{}_{i}", meta.id),
            &c.id,
            &c.name,
            &c.arguments,
            "completed",
        ));
    }
    out
}

fn message_item(id: &str, text: &str, status: &str) -> Value {
    json!({
        "id": id, "type": "message", "status": status, "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}],
    })
}

fn call_item(id: &str, call_id: &str, name: &str, arguments: &str, status: &str) -> Value {
    json!({
        "id": id, "type": "function_call", "status": status,
        "call_id": call_id, "name": name, "arguments": arguments,
    })
}

/// The `response` object: in progress (no output yet), or finished with its output and usage.
pub fn response(reply: &Reply, meta: &Meta, done: bool) -> Value {
    let (status, details) = match (done, reply.finish) {
        (false, _) => ("in_progress", Value::Null),
        (true, Finish::Length) => ("incomplete", json!({"reason": "max_output_tokens"})),
        (true, _) => ("completed", Value::Null),
    };
    json!({
        "id": meta.id,
        "object": "response",
        "created_at": meta.created,
        "status": status,
        "error": null,
        "incomplete_details": details,
        "instructions": null,
        "model": meta.model,
        "output": if done { Value::Array(items(reply, meta)) } else { json!([]) },
        "parallel_tool_calls": true,
        "tool_choice": "auto",
        "tools": [],
        "usage": if done { usage(reply) } else { Value::Null },
    })
}

/// The stream events of a reply, in order, each with its `sequence_number`.
pub fn events(reply: &Reply, meta: &Meta) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut push = |mut e: Value| {
        e["sequence_number"] = json!(out.len());
        out.push(e);
    };
    push(json!({"type": "response.created", "response": response(reply, meta, false)}));
    push(json!({"type": "response.in_progress", "response": response(reply, meta, false)}));
    // The item being written: its output index, id, and the text or arguments so far.
    struct Open {
        index: usize,
        id: String,
        call: Option<(String, String)>,
        text: String,
    }
    let mut open: Option<Open> = None;
    let mut next_index = 0;
    let close = |o: Open, push: &mut dyn FnMut(Value)| match o.call {
        None => {
            let part =
                json!({"type": "output_text", "text": o.text, "annotations": [], "logprobs": []});
            push(
                json!({"type": "response.output_text.done", "item_id": o.id, "output_index": o.index, "content_index": 0, "text": o.text, "logprobs": []}),
            );
            push(
                json!({"type": "response.content_part.done", "item_id": o.id, "output_index": o.index, "content_index": 0, "part": part}),
            );
            push(
                json!({"type": "response.output_item.done", "output_index": o.index, "item": message_item(&o.id, &o.text, "completed")}),
            );
        }
        Some((call_id, name)) => {
            push(
                json!({"type": "response.function_call_arguments.done", "item_id": o.id, "output_index": o.index, "arguments": o.text}),
            );
            push(
                json!({"type": "response.output_item.done", "output_index": o.index, "item": call_item(&o.id, &call_id, &name, &o.text, "completed")}),
            );
        }
    };
    for piece in &reply.pieces {
        match piece {
            Piece::Text(t) => {
                if open.as_ref().is_some_and(|o| o.call.is_some())
                    && let Some(o) = open.take()
                {
                    close(o, &mut push);
                }
                let o = open.get_or_insert_with(|| {
                    let id = format!("msg_{}", meta.id);
                    push(json!({"type": "response.output_item.added", "output_index": next_index, "item": {"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []}}));
                    push(json!({"type": "response.content_part.added", "item_id": id, "output_index": next_index, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}}));
                    next_index += 1;
                    Open { index: next_index - 1, id, call: None, text: String::new() }
                });
                o.text.push_str(t);
                push(
                    json!({"type": "response.output_text.delta", "item_id": o.id, "output_index": o.index, "content_index": 0, "delta": t, "logprobs": []}),
                );
            }
            Piece::CallStart { index, id, name } => {
                if let Some(o) = open.take() {
                    close(o, &mut push);
                }
                let item_id = format!("fc_{}_{index}", meta.id);
                push(
                    json!({"type": "response.output_item.added", "output_index": next_index, "item": call_item(&item_id, id, name, "", "in_progress")}),
                );
                open = Some(Open {
                    index: next_index,
                    id: item_id,
                    call: Some((id.clone(), name.clone())),
                    text: String::new(),
                });
                next_index += 1;
            }
            // Reasoning is written by the server personas only, which serve Chat Completions.
            Piece::Reasoning(_) => {}
            Piece::CallArgs { fragment, .. } => {
                if let Some(o) = open.as_mut() {
                    o.text.push_str(fragment);
                    push(
                        json!({"type": "response.function_call_arguments.delta", "item_id": o.id, "output_index": o.index, "delta": fragment}),
                    );
                }
            }
        }
    }
    if let Some(o) = open.take() {
        close(o, &mut push);
    }
    let end = match reply.finish {
        Finish::Length => "response.incomplete",
        _ => "response.completed",
    };
    push(json!({"type": end, "response": response(reply, meta, true)}));
    out
}

/// One SSE event of this wire: named by its type.
pub fn sse_event(event: &Value) -> String {
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    format!("event: {kind}\ndata: {event}\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::CallText;
    use crate::request::DemoRequest;

    fn meta() -> Meta {
        Meta {
            id: "resp_1".into(),
            created: 7,
            model: "demo-1".into(),
        }
    }

    #[test]
    fn a_responses_request_reads_as_its_chat_twin() {
        let body = json!({
            "model": "demo-1",
            "instructions": "Be brief.",
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "Weather in Oslo?"}]},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
                {"type": "function_call_output", "call_id": "c1", "output": "rain"},
                {"role": "user", "content": "And Paris?"},
            ],
            "tools": [
                {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "strict": false},
                {"type": "function", "name": "get_time", "parameters": {"type": "object"}},
            ],
            "tool_choice": {"type": "allowed_tools", "mode": "required", "tools": [{"type": "function", "name": "get_weather"}]},
            "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}},
            "max_output_tokens": 50,
            "stream": true,
        });
        let chat = chat_body(&body).unwrap();
        let r = DemoRequest::from_json(&chat).unwrap();
        assert_eq!(r.system(), Some("Be brief."));
        assert_eq!(r.latest_user(), Some("And Paris?"));
        assert_eq!(r.messages[2].tool_calls[0].name, "get_weather");
        assert_eq!(r.messages[3].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(r.tools.len(), 1, "only the allowed tools");
        assert_eq!(
            r.tool_choice,
            Some(toolscope_core::tool::ToolChoice::Required)
        );
        assert_eq!(r.max_tokens, Some(50));
        assert!(r.stream && r.include_usage);
        let forced = chat_body(&json!({"input": "hi", "tools": body["tools"], "tool_choice": {"type": "function", "name": "get_time"}})).unwrap();
        assert_eq!(
            DemoRequest::from_json(&forced).unwrap().tool_choice,
            Some(toolscope_core::tool::ToolChoice::Tool("get_time".into()))
        );
        for bad_body in [
            json!({"model": "m"}),
            json!({"input": [{"type": "computer_call"}]}),
            json!({"input": "hi", "tools": [{"type": "web_search"}]}),
        ] {
            assert!(chat_body(&bad_body).is_err(), "{bad_body}");
        }
    }

    #[test]
    fn events_follow_the_documented_order_and_add_up() {
        let mut reply = Reply::text("Let me check.", 5);
        let calls = Reply::calls(
            vec![CallText {
                id: "call_1".into(),
                name: "get_weather".into(),
                arguments: "{\"city\": \"Paris\"}".into(),
            }],
            5,
        );
        reply.pieces.extend(calls.pieces);
        reply.finish = Finish::ToolCalls;
        let events = events(&reply, &meta());
        let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        assert_eq!(kinds[0], "response.created");
        assert_eq!(*kinds.last().unwrap(), "response.completed");
        for (i, e) in events.iter().enumerate() {
            assert_eq!(e["sequence_number"], i);
        }
        let args: String = events
            .iter()
            .filter(|e| e["type"] == "response.function_call_arguments.delta")
            .map(|e| e["delta"].as_str().unwrap())
            .collect();
        assert_eq!(args, "{\"city\": \"Paris\"}");
        let last = &events.last().unwrap()["response"];
        assert_eq!(last["output"][0]["content"][0]["text"], "Let me check.");
        assert_eq!(last["output"][1]["call_id"], "call_1");
        assert_eq!(last["usage"]["total_tokens"], 5 + reply.completion_tokens());
        let cut = Reply::text("one two three", 1).limit(Some(1));
        let end = super::events(&cut, &meta()).pop().unwrap();
        assert_eq!(end["type"], "response.incomplete");
        assert_eq!(
            end["response"]["incomplete_details"]["reason"],
            "max_output_tokens"
        );
    }
}
