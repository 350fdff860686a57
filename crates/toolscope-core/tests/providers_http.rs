//! Runs requests through the real HTTP path against loopback servers: each provider streamed and
//! not, headers and keys, pre-send validation, every error category a server or a network can
//! cause, a stream cut midway, the idle timeout, and cancellation reaching the server.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{End, MockServer, Reply, refused_addr};
use toolscope_core::part::{Collapsed, FinishReason, Part};
use toolscope_core::provider::{Keys, Message, ProviderKind, Request, Run, RunEvent, Wire};
use toolscope_core::tool::{ToolChoice, ToolDef, ToolSet};

const KEY: &str = "sk-test-VERY-SECRET-0123456789";

/// One tool, `get_weather(city)`.
fn tools() -> ToolSet {
    let city = json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]});
    let tool = ToolDef::new("get_weather", "Weather for a city", city);
    ToolSet::new(vec![tool]).unwrap()
}

fn request(provider: ProviderKind, base: &str, stream: bool) -> Request {
    let mut r = Request::new(provider, "test-model");
    r.base_url = Some(base.to_string());
    r.messages = vec![Message::user("Weather in Paris?")];
    r.tools = tools();
    r.stream = stream;
    r
}

fn keys() -> Keys {
    Keys::default()
        .with(ProviderKind::OPENAI, KEY)
        .with(ProviderKind::ANTHROPIC, KEY)
        .with(ProviderKind::GEMINI, KEY)
}

async fn run(r: Request) -> Vec<RunEvent> {
    tokio::time::timeout(Duration::from_secs(20), Run::start(r, keys()).collect())
        .await
        .expect("the run ends")
}

fn parts(events: &[RunEvent]) -> Vec<Part> {
    events.iter().filter_map(|e| e.as_part().cloned()).collect()
}

fn last_error(events: &[RunEvent]) -> toolscope_core::part::ErrorPart {
    match parts(events).last() {
        Some(Part::Error(e)) => e.as_ref().clone(),
        other => panic!("expected an error part last, got {other:?}"),
    }
}

fn finish(events: &[RunEvent]) -> FinishReason {
    match parts(events).last() {
        Some(Part::Finish { finish_reason, .. }) => *finish_reason,
        other => panic!("expected a finish part last, got {other:?}"),
    }
}

/// A streamed and a whole answer per provider, each a text and one call to get_weather(Paris).
fn answers(provider: ProviderKind) -> (Reply, Reply) {
    match provider.wire() {
        Wire::OpenAiChat => (
            Reply::sse_data(
                &[
                    json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Checking"}}]}),
                    json!({"choices":[{"index":0,"delta":{"content":" now."}}]}),
                    json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}),
                    json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}}]}}]}),
                    json!({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}}]}),
                    json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
                    json!({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}),
                    json!("[DONE]"),
                ],
                End::Clean,
            ),
            Reply::json(
                200,
                &json!({"choices":[{"index":0,"message":{"role":"assistant","content":"Checking now.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}),
            ),
        ),
        Wire::Anthropic => (
            Reply::sse(
                [
                    "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\r\n\r\n",
                    "event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n",
                    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Checking\"}}\r\n\r\n",
                    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" now.\"}}\r\n\r\n",
                    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n",
                    "event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_1\",\"name\":\"get_weather\",\"input\":{}}}\r\n\r\n",
                    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Par\"}}\r\n\r\n",
                    "event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"is\\\"}\"}}\r\n\r\n",
                    "event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n",
                    "event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":4}}\r\n\r\n",
                    "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n",
                ]
                .iter()
                .map(|s| s.as_bytes().to_vec())
                .collect(),
                End::Clean,
            ),
            Reply::json(
                200,
                &json!({"type":"message","content":[{"type":"text","text":"Checking now."},{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":4}}),
            ),
        ),
        Wire::Gemini => (
            Reply::sse_data(
                &[
                    json!({"candidates":[{"content":{"role":"model","parts":[{"text":"Checking"}]}}],"usageMetadata":{"promptTokenCount":3}}),
                    json!({"candidates":[{"content":{"role":"model","parts":[{"text":" now."},{"functionCall":{"id":"call_1","name":"get_weather","args":{"city":"Paris"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7}}),
                ],
                End::Clean,
            ),
            Reply::json(
                200,
                &json!({"candidates":[{"content":{"role":"model","parts":[{"text":"Checking now."},{"functionCall":{"id":"call_1","name":"get_weather","args":{"city":"Paris"}}}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4,"totalTokenCount":7}}),
            ),
        ),
        Wire::OpenAiResponses => (
            Reply::sse_data(
                &[
                    json!({"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}),
                    json!({"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}),
                    json!({"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}),
                    json!({"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Checking"}),
                    json!({"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" now."}),
                    json!({"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Checking now.","annotations":[]}]}}),
                    json!({"type":"response.output_item.added","sequence_number":6,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"","status":"in_progress"}}),
                    json!({"type":"response.function_call_arguments.delta","sequence_number":7,"item_id":"fc_1","output_index":1,"delta":"{\"city\":"}),
                    json!({"type":"response.function_call_arguments.delta","sequence_number":8,"item_id":"fc_1","output_index":1,"delta":"\"Paris\"}"}),
                    json!({"type":"response.output_item.done","sequence_number":9,"output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}","status":"completed"}}),
                    json!({"type":"response.completed","sequence_number":10,"response":{"id":"resp_1","object":"response","status":"completed","usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}}),
                ],
                End::Clean,
            ),
            Reply::json(
                200,
                &json!({"id":"resp_1","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Checking now.","annotations":[]}]},{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}),
            ),
        ),
        Wire::Ollama => (
            Reply::Chunked {
                status: 200,
                headers: vec![("content-type".into(), "application/x-ndjson".into())],
                chunks: vec![
                    b"{\"message\":{\"role\":\"assistant\",\"content\":\"Check".to_vec(),
                    b"ing\"},\"done\":false}\n{\"message\":{\"role\":\"assistant\",\"content\":\" now.\"},\"done\":false}\n".to_vec(),
                    b"{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_1\",\"function\":{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}}]},\"done\":false}\n".to_vec(),
                    b"{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"done_reason\":\"stop\",\"prompt_eval_count\":3,\"eval_count\":4}\n".to_vec(),
                ],
                end: End::Clean,
            },
            Reply::json(
                200,
                &json!({"message":{"role":"assistant","content":"Checking now.","tool_calls":[{"id":"call_1","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":true,"done_reason":"stop","prompt_eval_count":3,"eval_count":4}),
            ),
        ),
    }
}

#[tokio::test]
async fn every_provider_streams_and_not_with_the_same_result() {
    for provider in [
        ProviderKind::OPENAI,
        ProviderKind::OPENAI_RESPONSES,
        ProviderKind::ANTHROPIC,
        ProviderKind::GEMINI,
        ProviderKind::OLLAMA,
    ] {
        let (streamed, whole) = answers(provider);
        let server = MockServer::start(vec![streamed, whole]).await;
        let a = run(request(provider, &server.url(), true)).await;
        let b = run(request(provider, &server.url(), false)).await;
        let (pa, pb) = (parts(&a), parts(&b));
        let (ca, cb) = (Collapsed::of(&pa), Collapsed::of(&pb));
        assert_eq!(ca.text, "Checking now.", "{provider}: {pa:?}");
        assert_eq!(
            ca.calls,
            vec![("get_weather".into(), json!({"city":"Paris"}))],
            "{provider}"
        );
        assert_eq!(ca, cb, "{provider}: streamed equals whole");
        assert_eq!(pa.last(), pb.last(), "{provider}: same finish and usage");
        let Some(Part::Finish {
            finish_reason,
            usage,
        }) = pa.last()
        else {
            unreachable!()
        };
        assert_eq!(*finish_reason, FinishReason::ToolCalls, "{provider}");
        assert_eq!(usage.as_ref().unwrap().total_tokens, Some(7), "{provider}");
        // Tool-call ids survive verbatim.
        assert!(
            pa.iter()
                .any(|p| matches!(p, Part::ToolCall(c) if &*c.tool_call_id == "call_1"))
        );

        let rec = server.recorded();
        assert_eq!(rec.len(), 2, "{provider}");
        let (path_s, path_w) = (&rec[0].path, &rec[1].path);
        let key_header = |r: &support::Recorded| match provider.wire() {
            Wire::OpenAiChat | Wire::OpenAiResponses => {
                r.header("authorization").map(str::to_string)
            }
            Wire::Anthropic => r.header("x-api-key").map(str::to_string),
            Wire::Gemini => r.header("x-goog-api-key").map(str::to_string),
            _ => None,
        };
        match provider.wire() {
            Wire::OpenAiChat => {
                assert_eq!(
                    (path_s.as_str(), path_w.as_str()),
                    ("/chat/completions", "/chat/completions")
                );
                assert_eq!(
                    key_header(&rec[0]).as_deref(),
                    Some(format!("Bearer {KEY}").as_str())
                );
                assert_eq!(
                    rec[0].json()["stream_options"],
                    json!({"include_usage": true})
                );
            }
            Wire::OpenAiResponses => {
                assert_eq!(
                    (path_s.as_str(), path_w.as_str()),
                    ("/responses", "/responses")
                );
                assert_eq!(
                    key_header(&rec[0]).as_deref(),
                    Some(format!("Bearer {KEY}").as_str())
                );
                assert_eq!(rec[0].json()["stream"], true);
                assert_eq!(rec[0].json()["tools"][0]["type"], "function");
            }
            Wire::Anthropic => {
                assert_eq!(path_s, "/v1/messages");
                assert_eq!(key_header(&rec[0]).as_deref(), Some(KEY));
                assert_eq!(rec[0].header("anthropic-version"), Some("2023-06-01"));
                assert_eq!(rec[0].json()["max_tokens"], 4096);
            }
            Wire::Gemini => {
                assert_eq!(
                    path_s,
                    "/v1beta/models/test-model:streamGenerateContent?alt=sse"
                );
                assert_eq!(path_w, "/v1beta/models/test-model:generateContent");
                assert_eq!(key_header(&rec[0]).as_deref(), Some(KEY));
            }
            _ => {
                assert_eq!(path_s, "/api/chat");
                assert_eq!(rec[0].json()["stream"], true);
                assert_eq!(rec[1].json()["stream"], false);
                assert!(rec[0].header("authorization").is_none());
            }
        }
        assert_eq!(rec[0].header("content-type"), Some("application/json"));
        assert!(rec.iter().all(|r| r.method == "POST"));
    }
}

#[tokio::test]
async fn raw_events_come_before_the_parts_they_produce() {
    let (streamed, _) = answers(ProviderKind::OPENAI);
    let server = MockServer::start(vec![streamed]).await;
    let events = run(request(ProviderKind::OPENAI, &server.url(), true)).await;
    assert!(matches!(events[0], RunEvent::Raw(_)), "{:?}", events[0]);
    let mut last_ms = 0;
    let mut raws = 0;
    for e in &events {
        if let RunEvent::Raw(r) = e {
            assert!(r.at_ms >= last_ms);
            last_ms = r.at_ms;
            raws += 1;
        }
    }
    assert_eq!(raws, 8, "every data payload, [DONE] included");
    let outputs: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Output(o) if o.tool_call_id.is_none() => Some(o.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(outputs, "Checking now.");
    let args: String = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Output(o) if o.tool_call_id.is_some() => Some(o.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(args, "{\"city\":\"Paris\"}");
}

#[tokio::test]
async fn pre_send_validation_sends_nothing() {
    let server = MockServer::start(vec![]).await;
    let cases: [fn(&mut Request); 4] = [
        |r| {
            r.tools = ToolSet::empty();
            r.tool_choice = Some(ToolChoice::Required)
        },
        |r| {
            r.tools = ToolSet::empty();
            r.tool_choice = Some(ToolChoice::Tool("get_weather".into()))
        },
        |r| r.tool_choice = Some(ToolChoice::Tool("search".into())),
        |r| r.messages.push(Message::system("late")),
    ];
    for provider in [
        ProviderKind::OPENAI,
        ProviderKind::OPENAI_RESPONSES,
        ProviderKind::ANTHROPIC,
        ProviderKind::GEMINI,
        ProviderKind::OLLAMA,
    ] {
        for change in cases {
            let mut r = request(provider, &server.url(), true);
            change(&mut r);
            let events = run(r).await;
            assert_eq!(events.len(), 1, "{events:?}");
            assert_eq!(
                last_error(&events).category_name(),
                Some("provider_invalid_request")
            );
        }
    }
    assert!(server.recorded().is_empty(), "no request may leave");
}

#[tokio::test]
async fn http_failures_map_to_categories() {
    let cases: Vec<(ProviderKind, Reply, &str)> = vec![
        (
            ProviderKind::OPENAI,
            Reply::json(
                401,
                &json!({"error":{"type":"invalid_request_error","code":"invalid_api_key","message":"Incorrect API key"}}),
            ),
            "provider_authentication",
        ),
        (
            ProviderKind::OPENAI,
            Reply::json(403, &json!({"error":{"message":"forbidden"}})),
            "provider_authentication",
        ),
        (
            ProviderKind::OPENAI,
            Reply::json(
                404,
                &json!({"error":{"code":"model_not_found","message":"The model 'x' does not exist"}}),
            ),
            "provider_invalid_model",
        ),
        (
            ProviderKind::OLLAMA,
            Reply::json(
                404,
                &json!({"error":"model \"x\" not found, try pulling it first"}),
            ),
            "provider_invalid_model",
        ),
        (
            ProviderKind::ANTHROPIC,
            Reply::json(
                529,
                &json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
            ),
            "provider_unavailable",
        ),
        (
            ProviderKind::GEMINI,
            Reply::json(
                500,
                &json!({"error":{"code":500,"status":"INTERNAL","message":"internal"}}),
            ),
            "provider_unavailable",
        ),
        (
            ProviderKind::OPENAI,
            Reply::json(
                503,
                &json!({"error":{"type":"model_not_loaded","message":"loading"}}),
            ),
            "provider_model_not_loaded",
        ),
        (
            ProviderKind::OPENAI,
            Reply::json(400, &json!({"error":{"message":"bad"}})),
            "provider_invalid_request",
        ),
        (
            ProviderKind::OPENAI,
            Reply::json(200, &json!({"id":"x","object":"chat.completion"})),
            "provider_invalid_response",
        ),
        (
            ProviderKind::ANTHROPIC,
            Reply::Full {
                status: 200,
                headers: vec![],
                body: b"<html>oops".to_vec(),
            },
            "provider_invalid_response",
        ),
        (ProviderKind::OPENAI, Reply::Close, "provider_unavailable"),
    ];
    for (provider, reply, want) in cases {
        let server = MockServer::start(vec![reply.clone()]).await;
        let events = run(request(provider, &server.url(), false)).await;
        let e = last_error(&events);
        assert_eq!(e.category_name(), Some(want), "{provider} {reply:?}: {e:?}");
        assert!(!e.message.is_empty());
    }
}

#[tokio::test]
async fn rate_limits_carry_retry_after() {
    let server = MockServer::start(vec![
        Reply::json(429, &json!({"error":{"type":"rate_limit_error","message":"slow down"}}))
            .with_header("Retry-After", "30"),
        Reply::json(429, &json!({"error":{"code":429,"status":"RESOURCE_EXHAUSTED","message":"quota","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"12s"}]}})),
    ])
    .await;
    let e = last_error(&run(request(ProviderKind::OPENAI, &server.url(), true)).await);
    assert_eq!(e.category_name(), Some("provider_rate_limit"));
    assert_eq!((e.status, e.retry_after), (Some(429), Some(30.0)));
    let e = last_error(&run(request(ProviderKind::GEMINI, &server.url(), true)).await);
    assert_eq!(
        (e.category_name(), e.retry_after),
        (Some("provider_rate_limit"), Some(12.0))
    );
}

#[tokio::test]
async fn a_refused_connection_is_unavailable() {
    let addr = refused_addr().await;
    for provider in [ProviderKind::OPENAI, ProviderKind::OLLAMA] {
        let events = run(request(provider, &format!("http://{addr}"), true)).await;
        let e = last_error(&events);
        assert_eq!(e.category_name(), Some("provider_unavailable"));
        assert!(e.message.contains(&addr.to_string()), "{}", e.message);
    }
}

#[tokio::test]
async fn a_stream_cut_midway_keeps_what_came_then_errors() {
    for provider in [
        ProviderKind::OPENAI,
        ProviderKind::OPENAI_RESPONSES,
        ProviderKind::ANTHROPIC,
        ProviderKind::GEMINI,
        ProviderKind::OLLAMA,
    ] {
        let (streamed, _) = answers(provider);
        let Reply::Chunked {
            status,
            headers,
            mut chunks,
            ..
        } = streamed
        else {
            unreachable!()
        };
        // Keep the chunks that carry the text, drop the rest, and break the connection.
        let keep = match provider.wire() {
            Wire::OpenAiChat => 2,
            Wire::OpenAiResponses => 4,
            Wire::Anthropic => 4,
            Wire::Gemini => 1,
            _ => 2,
        };
        chunks.truncate(keep);
        let server = MockServer::start(vec![Reply::Chunked {
            status,
            headers,
            chunks,
            end: End::Cut,
        }])
        .await;
        let events = run(request(provider, &server.url(), true)).await;
        let p = parts(&events);
        let text = Collapsed::of(&p).text;
        assert!(text.starts_with("Checking"), "{provider}: {p:?}");
        let e = last_error(&events);
        assert_eq!(
            e.category_name(),
            Some("provider_unavailable"),
            "{provider}: {e:?}"
        );
        assert_eq!(
            p.iter().filter(|p| matches!(p, Part::Error(_))).count(),
            1,
            "{provider}"
        );
    }
}

#[tokio::test]
async fn a_silent_server_hits_the_idle_timeout() {
    let server = MockServer::start(vec![Reply::sse_data(
        &[json!({"choices":[{"index":0,"delta":{"content":"Hi"}}]})],
        End::Hang,
    )])
    .await;
    let mut r = request(ProviderKind::OPENAI, &server.url(), true);
    r.timeouts.idle_secs = 0.3;
    let events = run(r).await;
    assert_eq!(Collapsed::of(&parts(&events)).text, "Hi");
    let e = last_error(&events);
    assert_eq!(e.category_name(), Some("provider_timeout"));
    assert!(e.message.contains("stream stalled"), "{}", e.message);
    assert!(e.message.contains("idle timeout"), "{}", e.message);
}

#[tokio::test]
async fn a_server_still_reading_the_prompt_is_given_the_first_token_timeout() {
    // Headers and a role-only chunk, then silence: the model has not begun (a CPU server in
    // its prefill). The short idle timeout does not apply yet; the first-token one does.
    let server = MockServer::start(vec![Reply::sse_data(
        &[json!({"choices":[{"index":0,"delta":{"role":"assistant"}}]})],
        End::Hang,
    )])
    .await;
    let mut r = request(ProviderKind::OPENAI, &server.url(), true);
    r.timeouts.idle_secs = 0.2;
    r.timeouts.first_token_secs = 0.7;
    let events = run(r).await;
    let e = last_error(&events);
    assert_eq!(e.category_name(), Some("provider_timeout"), "{e:?}");
    assert!(
        e.message.contains("sent no token within 0.7 s"),
        "{}",
        e.message
    );
    assert!(e.message.contains("--first-token-timeout"), "{}", e.message);
    assert!(!e.message.contains("stalled"), "{}", e.message);
}

#[tokio::test]
async fn dropping_a_run_closes_the_connection() {
    let mut server = MockServer::start(vec![Reply::sse_data(
        &[json!({"choices":[{"index":0,"delta":{"content":"Hi"}}]})],
        End::Hang,
    )])
    .await;
    let mut run = Run::start(request(ProviderKind::OPENAI, &server.url(), true), keys());
    // Wait for the first part, then walk away.
    loop {
        match tokio::time::timeout(Duration::from_secs(10), run.next()).await {
            Ok(Some(RunEvent::Part(Part::TextDelta { .. }))) => break,
            Ok(Some(_)) => {}
            other => panic!("the stream should have started: {other:?}"),
        }
    }
    drop(run);
    tokio::time::timeout(Duration::from_secs(10), server.client_closed.recv())
        .await
        .expect("the server sees the connection close")
        .expect("a notification");
}

#[tokio::test]
async fn dropping_only_the_receiver_also_cancels() {
    let mut server = MockServer::start(vec![Reply::sse_data(
        &[json!({"choices":[{"index":0,"delta":{"content":"Hi"}}]})],
        End::Hang,
    )])
    .await;
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let task = tokio::spawn(toolscope_core::provider::run(
        request(ProviderKind::OPENAI, &server.url(), true),
        keys(),
        tx,
    ));
    while let Some(e) = rx.recv().await {
        if matches!(e, RunEvent::Part(Part::TextDelta { .. })) {
            break;
        }
    }
    drop(rx);
    tokio::time::timeout(Duration::from_secs(10), server.client_closed.recv())
        .await
        .expect("the server sees the connection close");
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the run returns")
        .unwrap();
}

#[tokio::test]
async fn keys_are_sent_but_never_shown() {
    // A server that echoes the key back, in an error and in a stream.
    let echo = format!("Incorrect API key provided: {KEY}");
    let server = MockServer::start(vec![
        Reply::json(401, &json!({"error":{"message": echo}})),
        Reply::sse_data(
            &[
                json!({"choices":[{"index":0,"delta":{"content": format!("your key is {KEY}")},"finish_reason":"stop"}]}),
                json!("[DONE]"),
            ],
            End::Clean,
        ),
    ])
    .await;
    for _ in 0..2 {
        let r = request(ProviderKind::OPENAI, &server.url(), true);
        let serialised = serde_json::to_string(&r).unwrap();
        assert!(!serialised.contains(KEY));
        let events = run(r).await;
        let all: String = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        assert!(!all.contains(KEY), "a key leaked: {all}");
        assert!(all.contains("[redacted]"));
    }
    assert!(
        server.recorded()[0].all_text().contains(KEY),
        "but it was sent"
    );
    assert!(!format!("{:?}", keys()).contains(KEY));
}

#[tokio::test]
async fn a_missing_key_is_named_on_401() {
    let server = MockServer::start(vec![Reply::json(
        401,
        &json!({"error":{"message":"no key"}}),
    )])
    .await;
    let events = tokio::time::timeout(
        Duration::from_secs(20),
        Run::start(
            request(ProviderKind::ANTHROPIC, &server.url(), false),
            Keys::default(),
        )
        .collect(),
    )
    .await
    .unwrap();
    let e = last_error(&events);
    assert!(
        e.message.contains("ANTHROPIC_API_KEY is not set"),
        "{}",
        e.message
    );
    assert!(server.recorded()[0].header("x-api-key").is_none());
}

#[tokio::test]
async fn forced_tool_answered_with_stop_finishes_as_tool_calls() {
    // OpenAI answers `stop` for a forced tool, Gemini `STOP`, Ollama `stop`.
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"stop"}]}),
    )])
    .await;
    let mut r = request(ProviderKind::OPENAI, &server.url(), false);
    r.tool_choice = Some(ToolChoice::Tool("get_weather".into()));
    let events = run(r).await;
    assert_eq!(finish(&events), FinishReason::ToolCalls);
    assert_eq!(
        server.recorded()[0].json()["tool_choice"],
        json!({"type":"function","function":{"name":"get_weather"}})
    );
    let _: Value = server.recorded()[0].json();
}

/// The OpenArmature tool-choice fixtures (029, 030) in their shape, on the Responses wire: each
/// mode's outbound `tool_choice` (or its absence), and the finish of a compliant answer, streamed
/// and not; the pre-send failures (031) are in `pre_send_validation_sends_nothing`.
#[tokio::test]
async fn responses_tool_choice_modes_conformance() {
    let text = json!({"id":"r","object":"response","status":"completed","output":[{"type":"message","id":"m","role":"assistant","content":[{"type":"output_text","text":"It is sunny.","annotations":[]}]}],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}});
    let call = json!({"id":"r","object":"response","status":"completed","output":[{"type":"function_call","id":"fc","call_id":"call_9","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}],"usage":{"input_tokens":5,"output_tokens":3,"total_tokens":8}});
    let streamed = |body: &Value| {
        let mut events = vec![
            json!({"type":"response.created","sequence_number":0,"response":{"status":"in_progress","output":[]}}),
        ];
        for (i, item) in body["output"].as_array().unwrap().iter().enumerate() {
            let n = events.len();
            events.push(json!({"type":"response.output_item.added","sequence_number":n,"output_index":i,"item":item}));
            if item["type"] == "message" {
                events.push(json!({"type":"response.content_part.added","sequence_number":n+1,"output_index":i,"content_index":0,"part":{"type":"output_text","text":""}}));
                events.push(json!({"type":"response.output_text.delta","sequence_number":n+2,"output_index":i,"content_index":0,"delta":item["content"][0]["text"]}));
            }
            let n = events.len();
            events.push(json!({"type":"response.output_item.done","sequence_number":n,"output_index":i,"item":item}));
        }
        let n = events.len();
        events.push(json!({"type":"response.completed","sequence_number":n,"response":body}));
        Reply::sse_data(&events, End::Clean)
    };
    let cases = [
        (None, None, &text, FinishReason::Stop),
        (
            Some(ToolChoice::Auto),
            Some(json!("auto")),
            &text,
            FinishReason::Stop,
        ),
        (
            Some(ToolChoice::Required),
            Some(json!("required")),
            &call,
            FinishReason::ToolCalls,
        ),
        (
            Some(ToolChoice::None),
            Some(json!("none")),
            &text,
            FinishReason::Stop,
        ),
        (
            Some(ToolChoice::Tool("get_weather".into())),
            Some(json!({"type":"function","name":"get_weather"})),
            &call,
            FinishReason::ToolCalls,
        ),
    ];
    for (choice, wire, answer, reason) in cases {
        let server = MockServer::start(vec![streamed(answer), Reply::json(200, answer)]).await;
        for stream in [true, false] {
            let mut r = request(ProviderKind::OPENAI_RESPONSES, &server.url(), stream);
            r.tool_choice = choice.clone();
            let events = run(r).await;
            assert_eq!(finish(&events), reason, "{choice:?} stream={stream}");
            let p = parts(&events);
            assert!(
                !p.iter().any(|p| matches!(p, Part::Warning(_))),
                "{choice:?}: a compliant answer lints clean: {p:?}"
            );
            if reason == FinishReason::ToolCalls {
                assert_eq!(
                    Collapsed::of(&p).calls,
                    vec![("get_weather".to_string(), json!({"city":"Paris"}))]
                );
            }
        }
        for rec in server.recorded() {
            assert_eq!(rec.path, "/responses");
            assert_eq!(rec.json().get("tool_choice"), wire.as_ref(), "{choice:?}");
        }
    }
}

#[tokio::test]
async fn emulated_mode_end_to_end() {
    use toolscope_core::protocol::Protocol;
    // A model without native tools answers in the hermes format, in small pieces.
    let answer = "Sure.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lima\"}}</tool_call>";
    let mut events: Vec<Value> = answer
        .as_bytes()
        .chunks(7)
        .map(|c| json!({"choices":[{"index":0,"delta":{"content": String::from_utf8_lossy(c)}}]}))
        .collect();
    events.push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}));
    events.push(json!("[DONE]"));
    let server = MockServer::start(vec![Reply::sse_data(&events, End::Clean)]).await;
    let mut r = request(ProviderKind::OPENAI, &server.url(), true);
    r.protocol = Some(Protocol::from_name("hermes").unwrap());
    r.tool_choice = Some(ToolChoice::Auto);
    let events = run(r).await;
    let p = parts(&events);
    let c = Collapsed::of(&p);
    assert_eq!(c.text, "Sure.");
    assert_eq!(
        c.calls,
        vec![("get_weather".into(), json!({"city":"Lima"}))]
    );
    assert_eq!(finish(&events), FinishReason::ToolCalls);
    assert!(events.iter().any(|e| matches!(e, RunEvent::Span(_))));
    let body = server.recorded()[0].json();
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    assert!(
        body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("<tools>")
    );
}

#[tokio::test]
async fn a_connection_that_never_completes_hits_the_connect_timeout() {
    // A listener with a backlog of one that never accepts: once its queue is full, the kernel
    // drops further SYNs on loopback and connecting hangs, as with an unreachable host.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = socket.local_addr().unwrap();
    let listener = socket.listen(1).unwrap();
    let mut fillers = Vec::new();
    for _ in 0..4 {
        let s = tokio::net::TcpSocket::new_v4().unwrap();
        match tokio::time::timeout(Duration::from_millis(200), s.connect(addr)).await {
            Ok(Ok(stream)) => fillers.push(stream),
            _ => break, // the queue is full
        }
    }
    let mut r = request(ProviderKind::OPENAI, &format!("http://{addr}"), true);
    r.timeouts.connect_secs = 0.3;
    r.timeouts.idle_secs = 30.0;
    let events = run(r).await;
    let e = last_error(&events);
    assert_eq!(e.category_name(), Some("provider_timeout"), "{e:?}");
    assert!(e.message.contains("cannot connect"), "{}", e.message);
    assert!(e.message.contains("timed out"), "{}", e.message);
    drop((listener, fillers));
}

#[tokio::test]
async fn a_server_that_ignores_stream_true_is_read_whole() {
    for provider in [
        ProviderKind::OPENAI,
        ProviderKind::ANTHROPIC,
        ProviderKind::GEMINI,
    ] {
        let (_, whole) = answers(provider);
        let server = MockServer::start(vec![whole]).await;
        let events = run(request(provider, &server.url(), true)).await;
        let p = parts(&events);
        let c = Collapsed::of(&p);
        assert_eq!(c.text, "Checking now.", "{provider}: {p:?}");
        assert_eq!(c.calls.len(), 1, "{provider}");
        assert_eq!(finish(&events), FinishReason::ToolCalls, "{provider}");
        let raws = events
            .iter()
            .filter(|e| matches!(e, RunEvent::Raw(_)))
            .count();
        assert_eq!(raws, 1, "{provider}: the body is one raw event");
    }
}

#[tokio::test]
async fn replaying_the_raw_events_of_a_run_gives_its_parts() {
    use toolscope_core::provider::Decoder;
    for provider in [
        ProviderKind::OPENAI,
        ProviderKind::OPENAI_RESPONSES,
        ProviderKind::ANTHROPIC,
        ProviderKind::GEMINI,
        ProviderKind::OLLAMA,
    ] {
        let (streamed, whole) = answers(provider);
        let limited = Reply::json(429, &json!({"error":{"message":"slow down"}}))
            .with_header("retry-after", "9");
        let server = MockServer::start(vec![streamed, whole, limited]).await;
        for stream in [true, false, true] {
            let request = request(provider, &server.url(), stream);
            let live = run(request.clone()).await;
            // What a session replay does: the recorded raw events, through a fresh decoder.
            let mut decoder = Decoder::new(&request);
            let mut replayed = Vec::new();
            for e in &live {
                if let RunEvent::Raw(raw) = e {
                    replayed.extend(decoder.push_raw(raw));
                }
            }
            replayed.extend(decoder.finish());
            let (mut a, b) = (parts(&live), parts(&replayed));
            // The live error names the URL; the replay does not know it.
            if let (Some(Part::Error(x)), Some(Part::Error(y))) = (a.last_mut(), b.last()) {
                assert!(x.message.contains(&server.url()));
                x.message = y.message.clone();
            }
            assert_eq!(a, b, "{provider} stream={stream}");
        }
    }
}

/// A `307` from the base URL's server to another origin (here: another port of 127.0.0.1).
fn redirect_to(location: &str) -> Reply {
    Reply::Full {
        status: 307,
        headers: vec![("location".into(), location.to_string())],
        body: Vec::new(),
    }
}

#[tokio::test]
async fn keys_never_follow_a_redirect_to_another_origin() {
    for provider in ProviderKind::all() {
        let elsewhere = MockServer::start(vec![answers(provider).0]).await;
        let base =
            MockServer::start(vec![redirect_to(&format!("{}/stolen", elsewhere.url()))]).await;
        // A provider without a key of its own still sends the URL's credentials.
        let url = if provider.key_env().is_some() {
            base.url()
        } else {
            format!("http://user:{KEY}@{}", base.addr)
        };
        let events = run(request(provider, &url, true)).await;
        for seen in elsewhere.recorded() {
            assert!(
                !seen.all_text().contains(KEY),
                "{provider}: the key reached another origin:\n{}",
                seen.all_text()
            );
        }
        assert!(
            elsewhere.recorded().is_empty(),
            "{provider}: a cross-origin redirect was followed"
        );
        let e = last_error(&events);
        assert_eq!(e.category_name(), Some("provider_unavailable"), "{e:?}");
        assert!(
            e.message.contains("another origin") && e.message.contains(&elsewhere.url()),
            "{provider}: {}",
            e.message
        );
        assert!(!e.message.contains(KEY), "{}", e.message);
        assert!(base.recorded()[0].all_text().contains(KEY) || provider.key_env().is_none());
    }
}

#[tokio::test]
async fn a_same_origin_redirect_is_followed_with_its_key() {
    for provider in ProviderKind::all() {
        let server = MockServer::start(vec![]).await;
        server.push(redirect_to(&format!("{}/moved/here", server.url())));
        server.push(answers(provider).0);
        let events = run(request(provider, &server.url(), true)).await;
        assert_eq!(finish(&events), FinishReason::ToolCalls, "{provider}");
        let seen = server.recorded();
        assert_eq!(seen.len(), 2, "{provider}");
        assert!(seen[1].path.starts_with("/moved/here"), "{}", seen[1].path);
        if provider.key_env().is_some() {
            assert!(seen[1].all_text().contains(KEY), "{provider}");
        }
    }
}

#[tokio::test]
async fn a_200_body_that_is_not_a_stream_is_an_invalid_response_quoting_it() {
    let html =
        "<html><head><title>Gateway login</title></head><body>Sign in to continue</body></html>\n";
    let bodies = [
        ("text/html; charset=utf-8", html),
        ("text/plain", "{\"status\":\"queued\",\"job\":\"j-42\"}"),
    ];
    for provider in ProviderKind::all() {
        for (content_type, body) in bodies {
            let server = MockServer::start(vec![Reply::Full {
                status: 200,
                headers: vec![("content-type".into(), content_type.into())],
                body: body.as_bytes().to_vec(),
            }])
            .await;
            server.push(Reply::Full {
                status: 200,
                headers: vec![("content-type".into(), content_type.into())],
                body: body.as_bytes().to_vec(),
            });
            let events = run(request(provider, &server.url(), true)).await;
            let e = last_error(&events);
            assert_eq!(
                e.category_name(),
                Some("provider_invalid_response"),
                "{provider} {content_type}: {}",
                e.message
            );
            // Asked for whole, the same body is quoted too (unless it is JSON of some shape).
            let events = run(request(provider, &server.url(), false)).await;
            let whole = last_error(&events);
            assert_eq!(whole.category_name(), Some("provider_invalid_response"));
            if body.starts_with('<') {
                assert!(whole.message.contains("Gateway login"), "{}", whole.message);
            }
            let quoted = if body.starts_with('<') {
                "Gateway login"
            } else {
                "queued"
            };
            assert!(
                e.message.contains(quoted),
                "{provider} {content_type}: {}",
                e.message
            );
        }
    }
}

#[tokio::test]
async fn retry_after_as_an_http_date_is_understood() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            &json!({"error":{"type":"rate_limit_error","message":"slow down"}}),
        )
        .with_header("Retry-After", "Fri, 01 Jan 2100 00:00:00 GMT"),
        Reply::json(
            429,
            &json!({"error":{"type":"rate_limit_error","message":"slow down"}}),
        )
        .with_header("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"),
    ])
    .await;
    let e = last_error(&run(request(ProviderKind::ANTHROPIC, &server.url(), true)).await);
    assert_eq!(e.category_name(), Some("provider_rate_limit"));
    // From now until 2100: more than 70 years, less than 80.
    let secs = e.retry_after.expect("a retry-after from the date");
    let year = 365.25 * 24.0 * 3600.0;
    assert!(secs > 70.0 * year && secs < 80.0 * year, "{secs}");
    // A date in the past: retry now.
    let e = last_error(&run(request(ProviderKind::ANTHROPIC, &server.url(), true)).await);
    assert_eq!(e.retry_after, Some(0.0));
}

/// The chunks and headers of a provider's streamed answer.
fn stream_chunks(provider: ProviderKind) -> (Vec<(String, String)>, Vec<Vec<u8>>) {
    match answers(provider).0 {
        Reply::Chunked {
            headers, chunks, ..
        } => (headers, chunks),
        other => panic!("not a stream: {other:?}"),
    }
}

/// Every raw wire event's text, joined.
fn raw_text(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Raw(r) => Some(r.data.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_oversize_event_ends_the_answer_quoting_only_its_start() {
    for provider in ProviderKind::all() {
        let (headers, chunks) = stream_chunks(provider);
        // The first event of a good answer, then one of 1 MiB (in 64 KiB pieces), then more.
        let lead = if provider.wire().streams_sse() {
            "data: {\"huge\":\""
        } else {
            "{\"huge\":\""
        };
        // The chunks up to the end of the first whole event.
        let first = 1 + chunks.iter().position(|c| c.ends_with(b"\n")).unwrap();
        let mut body = chunks[..first].to_vec();
        body.push(lead.as_bytes().to_vec());
        body.extend((0..16).map(|_| vec![b'x'; 64 << 10]));
        body.push(b"\"}\n\n".to_vec());
        body.extend(chunks[first..].iter().cloned());
        let server = MockServer::start(vec![Reply::Chunked {
            status: 200,
            headers,
            chunks: body,
            end: End::Clean,
        }])
        .await;
        let mut r = request(provider, &server.url(), true);
        r.limits.event_bytes = 64 << 10;
        let events = run(r).await;
        let e = last_error(&events);
        assert_eq!(
            e.category_name(),
            Some("provider_invalid_response"),
            "{provider}: {}",
            e.message
        );
        assert!(
            e.message.contains("larger than") && e.message.contains("xxxx"),
            "{provider}: {}",
            &e.message[..e.message.len().min(300)]
        );
        assert!(e.message.len() < 8 << 10, "{provider}: {}", e.message.len());
        let raw = raw_text(&events);
        assert!(
            raw.len() < 16 << 10,
            "{provider}: {} raw bytes kept",
            raw.len()
        );
        // What came before the oversize event was decoded.
        let raws = events
            .iter()
            .filter(|e| matches!(e, RunEvent::Raw(_)))
            .count();
        assert!(raws >= 2, "{provider}: {raws}");
    }
}

#[tokio::test]
async fn an_oversize_whole_body_is_refused_too() {
    let mut body = b"{\"choices\":[{\"message\":{\"content\":\"".to_vec();
    body.extend(vec![b'z'; 1 << 20]);
    body.extend(b"\"}}]}");
    let server = MockServer::start(vec![Reply::Full {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body,
    }])
    .await;
    let mut r = request(ProviderKind::OPENAI, &server.url(), false);
    r.limits.event_bytes = 64 << 10;
    let events = run(r).await;
    let e = last_error(&events);
    assert_eq!(e.category_name(), Some("provider_invalid_response"));
    assert!(e.message.len() < 8 << 10 && e.message.contains("zzzz"));
    assert!(raw_text(&events).len() < 16 << 10);
}

#[tokio::test]
async fn a_bad_event_under_the_limit_is_quoted_by_its_start_only() {
    for provider in ProviderKind::all() {
        let (headers, chunks) = stream_chunks(provider);
        let garbage = "#".repeat(300 << 10);
        let event = if provider.wire().streams_sse() {
            format!("data: {garbage}\n\n")
        } else {
            format!("{garbage}\n")
        };
        let server = MockServer::start(vec![Reply::Chunked {
            status: 200,
            headers,
            chunks: vec![chunks[0].clone(), event.into_bytes()],
            end: End::Clean,
        }])
        .await;
        let events = run(request(provider, &server.url(), true)).await;
        let e = last_error(&events);
        assert_eq!(
            e.category_name(),
            Some("provider_invalid_response"),
            "{provider}"
        );
        assert!(
            e.message.contains("####"),
            "{provider}: {}",
            &e.message[..200.min(e.message.len())]
        );
        assert!(e.message.len() < 8 << 10, "{provider}: {}", e.message.len());
    }
}

const URL_PASSWORD: &str = "pw-IN-THE-URL-777";
const URL_KEY: &str = "qk-IN-THE-QUERY-888";

#[tokio::test]
async fn credentials_in_the_base_url_are_sent_but_never_shown_or_saved() {
    for provider in ProviderKind::all() {
        let server = MockServer::start(vec![Reply::json(
            401,
            &json!({"error":{"message":"who are you?"}}),
        )])
        .await;
        let base = format!(
            "http://alice:{URL_PASSWORD}@{}/v1?api_key={URL_KEY}",
            server.addr
        );
        let r = request(provider, &base, true);
        // A saved request (a session) holds neither.
        let saved = serde_json::to_string(&r).unwrap();
        assert!(
            !saved.contains(URL_PASSWORD) && !saved.contains(URL_KEY),
            "{provider}: {saved}"
        );
        assert!(saved.contains("[redacted]"), "{saved}");
        let events = run(r).await;
        let all: String = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        assert!(
            !all.contains(URL_PASSWORD) && !all.contains(URL_KEY),
            "{provider}: {all}"
        );
        let e = last_error(&events);
        assert!(
            e.message.contains("[redacted]@"),
            "{provider}: {}",
            e.message
        );
        // The path is joined before the query, and the query is sent as given.
        let seen = &server.recorded()[0];
        let (path, query) = seen.path.split_once('?').expect("a query");
        assert!(
            path.starts_with("/v1/") && path.len() > 4,
            "{provider}: {}",
            seen.path
        );
        assert!(
            query
                .split('&')
                .any(|kv| kv == format!("api_key={URL_KEY}")),
            "{provider}: {}",
            seen.path
        );
    }
    // A refused connection names the URL redacted too.
    let addr = refused_addr().await;
    let base = format!("http://alice:{URL_PASSWORD}@{addr}/v1?token={URL_KEY}");
    let e = last_error(&run(request(ProviderKind::OPENAI, &base, true)).await);
    assert_eq!(e.category_name(), Some("provider_unavailable"));
    assert!(
        !e.message.contains(URL_PASSWORD) && !e.message.contains(URL_KEY),
        "{}",
        e.message
    );
}
