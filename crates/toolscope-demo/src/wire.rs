//! The OpenAI Chat Completions wire shapes the demo server writes: the `chat.completion`
//! object, the `chat.completion.chunk` stream events, error bodies and the model list.
//!
//! Chunks follow OpenAI's layout exactly: the first carries the role (and, for tool calls, the
//! first call's id and name with empty arguments), then one chunk per piece, then an empty delta
//! with the `finish_reason`, then, when `stream_options.include_usage` is set, a chunk with no
//! choices and the usage (every earlier chunk then carries `"usage": null`).

use serde_json::{Value, json};

use crate::reply::{Piece, Reply};

/// What every response object of one request shares.
#[derive(Clone, Debug)]
pub struct Meta {
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    pub model: String,
}

pub fn usage_json(reply: &Reply) -> Value {
    let completion = reply.completion_tokens();
    json!({
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": reply.prompt_tokens + completion,
    })
}

/// The non-streamed `chat.completion` object.
pub fn completion(reply: &Reply, meta: &Meta) -> Value {
    let calls = reply.tool_calls();
    let mut message = json!({
        "role": "assistant",
        "content": reply.content(),
        "refusal": null,
    });
    if let Some(r) = reply.reasoning() {
        message["reasoning_content"] = json!(r);
    }
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })
            })
            .collect();
    }
    json!({
        "id": meta.id,
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": reply.finish.as_str(),
        }],
        "usage": usage_json(reply),
        "system_fingerprint": null,
    })
}

/// The stream events of a reply, in order, without the final `[DONE]`.
pub fn chunks(reply: &Reply, meta: &Meta, include_usage: bool) -> Vec<Value> {
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut c = json!({
            "id": meta.id,
            "object": "chat.completion.chunk",
            "created": meta.created,
            "model": meta.model,
            "system_fingerprint": null,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if include_usage {
            c["usage"] = Value::Null;
        }
        c
    };
    let mut out = Vec::with_capacity(reply.pieces.len() + 3);
    let starts_with_call = matches!(reply.pieces.first(), Some(Piece::CallStart { .. }));
    if !starts_with_call {
        out.push(chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ));
    }
    for (i, piece) in reply.pieces.iter().enumerate() {
        let mut delta = match piece {
            Piece::Text(t) => json!({"content": t}),
            Piece::Reasoning(t) => json!({"reasoning_content": t}),
            Piece::CallStart { index, id, name } => json!({"tool_calls": [{
                "index": index,
                "id": id,
                "type": "function",
                "function": {"name": name, "arguments": ""},
            }]}),
            Piece::CallArgs { index, fragment } => json!({"tool_calls": [{
                "index": index,
                "function": {"arguments": fragment},
            }]}),
        };
        if i == 0 && starts_with_call {
            delta["role"] = json!("assistant");
            delta["content"] = Value::Null;
            delta["refusal"] = Value::Null;
        }
        out.push(chunk(delta, None));
    }
    out.push(chunk(json!({}), Some(reply.finish.as_str())));
    if include_usage {
        out.push(json!({
            "id": meta.id,
            "object": "chat.completion.chunk",
            "created": meta.created,
            "model": meta.model,
            "system_fingerprint": null,
            "choices": [],
            "usage": usage_json(reply),
        }));
    }
    out
}

/// One SSE event.
pub fn sse_event(data: &str) -> String {
    format!("data: {data}\n\n")
}

pub const SSE_DONE: &str = "data: [DONE]\n\n";

/// An OpenAI-shaped error body.
pub fn error_body(message: &str, kind: &str, param: Option<&str>, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": param, "code": code}})
}

/// `GET /v1/models`: the default model (any other name works too).
pub fn models(model: &str) -> Value {
    json!({"object": "list", "data": [model_object(model)]})
}

pub fn model_object(model: &str) -> Value {
    json!({"id": model, "object": "model", "created": 0, "owned_by": "toolscope"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::CallText;

    fn meta() -> Meta {
        Meta {
            id: "chatcmpl-1".into(),
            created: 7,
            model: "demo-1".into(),
        }
    }

    #[test]
    fn text_chunks_and_completion() {
        let reply = Reply::text("Hi there", 5);
        let chunks = chunks(&reply, &meta(), true);
        assert_eq!(chunks.len(), 5);
        assert_eq!(
            chunks[0]["choices"][0]["delta"],
            json!({"role":"assistant","content":"","refusal":null})
        );
        assert_eq!(chunks[1]["choices"][0]["delta"]["content"], "Hi");
        assert_eq!(chunks[2]["choices"][0]["delta"]["content"], " there");
        assert_eq!(chunks[3]["choices"][0]["finish_reason"], "stop");
        assert!(chunks[3]["usage"].is_null() && chunks[3].get("usage").is_some());
        assert_eq!(chunks[4]["choices"], json!([]));
        assert_eq!(
            chunks[4]["usage"],
            json!({"prompt_tokens":5,"completion_tokens":2,"total_tokens":7})
        );

        let c = completion(&reply, &meta());
        assert_eq!(c["choices"][0]["message"]["content"], "Hi there");
        assert!(c["choices"][0]["message"].get("tool_calls").is_none());
        assert_eq!(c["object"], "chat.completion");
        assert!(chunks_without_usage_have_no_usage_key());
    }

    fn chunks_without_usage_have_no_usage_key() -> bool {
        chunks(&Reply::text("x", 1), &meta(), false)
            .iter()
            .all(|c| c.get("usage").is_none())
    }

    #[test]
    fn tool_call_chunks_and_completion() {
        let reply = Reply::calls(
            vec![CallText {
                id: "call_1".into(),
                name: "f".into(),
                arguments: "{\"a\": 1}".into(),
            }],
            1,
        );
        let chunks = chunks(&reply, &meta(), false);
        let first = &chunks[0]["choices"][0]["delta"];
        assert_eq!(first["role"], "assistant");
        assert!(first["content"].is_null());
        assert_eq!(
            first["tool_calls"][0],
            json!({"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}})
        );
        let args: String = chunks[1..]
            .iter()
            .filter_map(|c| {
                c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .collect();
        assert_eq!(args, "{\"a\": 1}");
        assert_eq!(
            chunks.last().unwrap()["choices"][0]["finish_reason"],
            "tool_calls"
        );

        let c = completion(&reply, &meta());
        let m = &c["choices"][0]["message"];
        assert!(m["content"].is_null());
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"a\": 1}");
        assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
    }
}
