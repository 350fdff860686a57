//! Tests of the demo server over real HTTP on 127.0.0.1: whole and streamed answers, the wire
//! shapes, errors, the failure demos, and cancellation when the client goes away. No test waits
//! on a clock: waits are on the server's statistics, bounded by a generous timeout that only
//! turns a hang into a failure.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::model_tests::{assert_paris_then_tokyo, calls_of};
use crate::{DemoOptions, DemoServer, DemoStats, serve};

/// Turns a hang into a failure; never reached when things work.
const HANG: Duration = Duration::from_secs(20);

async fn start(options: DemoOptions) -> DemoServer {
    match serve(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), options).await {
        Ok(s) => s,
        Err(e) => panic!("cannot start the demo server: {e}"),
    }
}

fn client() -> reqwest::Client {
    // No proxy: the environment's proxy settings must not reroute loopback requests.
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a plain HTTP client builds")
}

fn weather_request(prompt: &str, stream: bool) -> Value {
    json!({
        "model": "demo-test",
        "messages": [{"role": "user", "content": prompt}],
        "tools": [{"type":"function","function":{
            "name":"get_weather",
            "description":"Current weather for a city",
            "parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}
        }}],
        "stream": stream,
        "stream_options": {"include_usage": true}
    })
}

async fn post(server: &DemoServer, path: &str, body: &Value) -> reqwest::Response {
    let url = format!("http://{}{path}", server.local_addr());
    client()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("the demo server answers")
}

/// The `data:` payloads of an SSE body, in order.
fn sse_data(text: &str) -> Vec<String> {
    text.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            e.strip_prefix("data: ")
                .unwrap_or_else(|| panic!("not an SSE data event: {e:?}"))
                .to_string()
        })
        .collect()
}

/// What a stream of chunks adds up to, reassembled the way a client must: content
/// concatenated, tool calls by index with their argument fragments concatenated.
#[derive(Debug, Default, PartialEq)]
struct Assembled {
    content: Option<String>,
    calls: Vec<(String, String, String)>,
    finish: Option<String>,
    usage: Option<Value>,
}

fn assemble(chunks: &[Value]) -> Assembled {
    let mut out = Assembled::default();
    for chunk in chunks {
        if let Some(u) = chunk.get("usage").filter(|u| !u.is_null()) {
            out.usage = Some(u.clone());
        }
        let Some(choice) = chunk["choices"].get(0) else {
            continue;
        };
        let delta = &choice["delta"];
        if let Some(t) = delta["content"].as_str() {
            out.content.get_or_insert_with(String::new).push_str(t);
        }
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"]
                .as_u64()
                .expect("every tool-call delta has an index") as usize;
            if out.calls.len() <= index {
                out.calls.resize(index + 1, Default::default());
            }
            let slot = &mut out.calls[index];
            if let Some(id) = call["id"].as_str() {
                slot.0 = id.to_string();
            }
            if let Some(name) = call["function"]["name"].as_str() {
                slot.1.push_str(name);
            }
            if let Some(args) = call["function"]["arguments"].as_str() {
                slot.2.push_str(args);
            }
        }
        if let Some(f) = choice["finish_reason"].as_str() {
            out.finish = Some(f.to_string());
        }
    }
    if out.content.as_deref() == Some("") {
        out.content = None;
    }
    out
}

fn assemble_completion(c: &Value) -> Assembled {
    let message = &c["choices"][0]["message"];
    Assembled {
        content: message["content"].as_str().map(str::to_string),
        calls: message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
                (
                    s(&t["id"]),
                    s(&t["function"]["name"]),
                    s(&t["function"]["arguments"]),
                )
            })
            .collect(),
        finish: c["choices"][0]["finish_reason"]
            .as_str()
            .map(str::to_string),
        usage: Some(c["usage"].clone()),
    }
}

async fn wait_stats(server: &DemoServer, done: impl FnMut(&DemoStats) -> bool) -> DemoStats {
    let mut rx = server.watch_stats();
    let waited = tokio::time::timeout(HANG, rx.wait_for(done)).await;
    match waited {
        Ok(Ok(stats)) => *stats,
        _ => panic!(
            "the server statistics never got there: {:?}",
            server.stats()
        ),
    }
}

#[tokio::test]
async fn a_whole_answer_with_a_tool_call() {
    let server = start(DemoOptions::instant()).await;
    let response = post(
        &server,
        "/v1/chat/completions",
        &weather_request("Weather in Paris for 3 days?", false),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let c: Value = response.json().await.expect("JSON body");
    assert_eq!(c["object"], "chat.completion");
    assert_eq!(c["model"], "demo-test");
    assert_eq!(c["choices"][0]["finish_reason"], "tool_calls");
    let call = &c["choices"][0]["message"]["tool_calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "get_weather");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap_or_default())
            .expect("arguments are JSON");
    assert_eq!(args, json!({"city":"Paris","days":3}));
    let usage = &c["usage"];
    assert!(usage["prompt_tokens"].as_u64().is_some_and(|n| n > 0));
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(
            usage["prompt_tokens"].as_u64().unwrap_or(0)
                + usage["completion_tokens"].as_u64().unwrap_or(0)
        )
    );
}

#[tokio::test]
async fn a_streamed_answer_reassembles_to_the_whole_one() {
    let server = start(DemoOptions::instant()).await;
    let prompt = "What's the weather in Paris and Tokyo?";
    let response = post(
        &server,
        "/v1/chat/completions",
        &weather_request(prompt, true),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.expect("the whole stream");
    let data = sse_data(&text);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).expect("every chunk is JSON"))
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk" && c["model"] == "demo-test")
    );
    // Arguments arrive in several fragments per call.
    let fragments = chunks
        .iter()
        .filter(|c| {
            c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .is_some_and(|a| !a.is_empty())
        })
        .count();
    assert!(fragments >= 6, "{fragments} argument fragments");
    // The usage chunk comes last, with no choices; the others carry `usage: null`.
    let last = chunks.last().expect("chunks");
    assert_eq!(last["choices"], json!([]));
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|c| c["usage"].is_null())
    );

    let streamed = assemble(&chunks);
    assert_eq!(streamed.finish.as_deref(), Some("tool_calls"));
    assert_eq!(streamed.content, None);
    let args: Vec<Value> = streamed
        .calls
        .iter()
        .map(|(_, _, a)| serde_json::from_str(a).expect("reassembled arguments parse"))
        .collect();
    assert_eq!(args, [json!({"city":"Paris"}), json!({"city":"Tokyo"})]);
    assert!(
        streamed
            .calls
            .iter()
            .all(|(id, name, _)| id.starts_with("call_") && name == "get_weather")
    );

    let whole: Value = post(
        &server,
        "/v1/chat/completions",
        &weather_request(prompt, false),
    )
    .await
    .json()
    .await
    .expect("JSON body");
    assert_eq!(
        streamed,
        assemble_completion(&whole),
        "streamed and whole answers agree"
    );
    let stats = wait_stats(&server, |s| s.streams_finished == 1).await;
    assert_eq!(stats.streams_cancelled, 0);
}

#[tokio::test]
async fn a_streamed_text_answer_and_the_path_without_v1() {
    let server = start(DemoOptions::instant()).await;
    let body = json!({"messages":[{"role":"user","content":"hello there"}],"stream":true});
    let response = post(&server, "/chat/completions", &body).await;
    assert_eq!(response.status(), 200);
    let data = sse_data(&response.text().await.expect("stream"));
    let chunks: Vec<Value> = data
        .iter()
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("JSON"))
        .collect();
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert!(
        chunks.iter().all(|c| c.get("usage").is_none()),
        "no usage without include_usage"
    );
    let streamed = assemble(&chunks);
    assert_eq!(streamed.finish.as_deref(), Some("stop"));
    assert!(
        streamed
            .content
            .is_some_and(|t| t.contains("No tools were given"))
    );
    assert!(chunks.len() > 10, "text arrives in many chunks");
}

#[tokio::test]
async fn models_errors_and_unknown_paths() {
    let server = start(DemoOptions::instant()).await;
    let base = format!("http://{}", server.local_addr());
    let models: Value = client()
        .get(format!("{base}/v1/models"))
        .send()
        .await
        .expect("answer")
        .json()
        .await
        .expect("JSON");
    assert_eq!(models["data"][0]["id"], "demo-1");

    let cases: Vec<(reqwest::RequestBuilder, u16, &str)> = vec![
        (
            client()
                .post(format!("{base}/v1/chat/completions"))
                .body("{not json"),
            400,
            "invalid_request_error",
        ),
        (
            client()
                .post(format!("{base}/v1/chat/completions"))
                .json(&json!({"model":"x"})),
            400,
            "invalid_request_error",
        ),
        (
            client().get(format!("{base}/v1/chat/completions")),
            405,
            "invalid_request_error",
        ),
        (
            client()
                .post(format!("{base}/v1/embeddings"))
                .json(&json!({})),
            404,
            "invalid_request_error",
        ),
        (
            client().get(format!("{base}/nothing/here")),
            404,
            "invalid_request_error",
        ),
    ];
    for (request, status, kind) in cases {
        let response = request.send().await.expect("answer");
        assert_eq!(response.status(), status);
        let body: Value = response.json().await.expect("an error body is JSON");
        let error = &body["error"];
        assert_eq!(error["type"], kind, "{body}");
        assert!(
            error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{body}"
        );
        assert!(error.get("code").is_some(), "{body}");
    }
    let missing: Value = post(&server, "/v1/chat/completions", &json!({}))
        .await
        .json()
        .await
        .expect("JSON");
    assert_eq!(missing["error"]["param"], "messages");
}

#[tokio::test]
async fn rate_limit_and_server_error_demos() {
    let server = start(DemoOptions::instant()).await;
    for stream in [false, true] {
        let response = post(
            &server,
            "/v1/chat/completions",
            &weather_request("weather in Oslo #429", stream),
        )
        .await;
        assert_eq!(response.status(), 429);
        assert_eq!(response.headers()["retry-after"], "2");
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(body["error"]["code"], "rate_limit_exceeded");
        assert_eq!(body["error"]["type"], "requests");

        let response = post(
            &server,
            "/v1/chat/completions",
            &weather_request("#500", stream),
        )
        .await;
        assert_eq!(response.status(), 500);
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(body["error"]["type"], "server_error");
    }
}

#[tokio::test]
async fn the_cut_demo_drops_the_connection_midway() {
    let server = start(DemoOptions::instant()).await;
    let response = post(
        &server,
        "/v1/chat/completions",
        &weather_request("Tell me a story #cut", true),
    )
    .await;
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut received = Vec::new();
    let mut failed = false;
    while let Some(item) = body.next().await {
        match item {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body ends with an error, not cleanly");
    let text = String::from_utf8_lossy(&received);
    assert!(
        text.contains("\"content\""),
        "part of the answer arrived: {text}"
    );
    assert!(!text.contains("[DONE]"));
    assert!(!text.contains("finish_reason\":\"stop"));
    wait_stats(&server, |s| s.streams_cut == 1).await;

    let response = post(
        &server,
        "/v1/chat/completions",
        &weather_request("weather in Paris #cut", false),
    )
    .await;
    assert_eq!(response.status(), 200);
    match response.bytes().await {
        Err(_) => {}
        Ok(bytes) => assert!(
            serde_json::from_slice::<Value>(&bytes).is_err(),
            "a cut body is not whole JSON"
        ),
    }
}

#[tokio::test]
async fn a_client_that_goes_away_cancels_the_stream() {
    // A slow pace keeps the stream running long after the client has gone.
    let server = start(DemoOptions {
        pace: Duration::from_millis(50),
    })
    .await;
    let response = post(
        &server,
        "/v1/chat/completions",
        &weather_request("Write me a long poem about the sea", true),
    )
    .await;
    let mut body = response.bytes_stream();
    let first = body.next().await;
    assert!(matches!(first, Some(Ok(_))), "the first chunk arrives");
    drop(body);
    let stats = wait_stats(&server, |s| s.streams_cancelled == 1).await;
    assert_eq!(stats.streams_started, 1);
    assert_eq!(stats.streams_finished, 0);
}

#[tokio::test]
async fn shutdown_closes_the_port() {
    let server = start(DemoOptions::instant()).await;
    let addr = server.local_addr();
    assert!(server.base_url().ends_with("/v1"));
    assert_eq!(
        post(
            &server,
            "/v1/chat/completions",
            &weather_request("hi", false)
        )
        .await
        .status(),
        200
    );
    server.shutdown().await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "nothing listens after shutdown"
    );

    // Shutting down with a stream in flight cancels it.
    let server = start(DemoOptions {
        pace: Duration::from_millis(50),
    })
    .await;
    let response = post(
        &server,
        "/v1/chat/completions",
        &weather_request("Write me a long poem", true),
    )
    .await;
    let mut body = response.bytes_stream();
    assert!(matches!(body.next().await, Some(Ok(_))));
    let mut stats = server.watch_stats();
    server.shutdown().await;
    let cancelled = tokio::time::timeout(HANG, stats.wait_for(|s| s.streams_cancelled == 1)).await;
    assert!(
        matches!(cancelled, Ok(Ok(_))),
        "the open stream was cancelled"
    );
    // The client sees the stream end (with an error, as the connection was aborted).
    let drained = tokio::time::timeout(HANG, async { while body.next().await.is_some() {} }).await;
    assert!(drained.is_ok(), "the client's stream ends");
}

#[tokio::test]
async fn emulated_calls_stream_as_protocol_text_split_across_chunks() {
    use toolscope_core::protocol::Protocol;
    use toolscope_core::tool::ToolSet;

    let server = start(DemoOptions::instant()).await;
    let tools = ToolSet::from_json(&json!([{
        "name":"get_weather","description":"Current weather for a city",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}
    }]))
    .expect("valid tools");
    for protocol in Protocol::all() {
        let body = json!({
            "messages": [
                {"role":"system","content": protocol.system_prompt(&tools)},
                {"role":"user","content":"What's the weather in Paris and Tokyo?"}
            ],
            "stream": true
        });
        let text = post(&server, "/v1/chat/completions", &body)
            .await
            .text()
            .await
            .expect("stream");
        let deltas: Vec<String> = sse_data(&text)
            .iter()
            .filter(|d| *d != "[DONE]")
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .filter_map(|c| {
                c["choices"][0]["delta"]["content"]
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        let whole = protocol.format_call("get_weather", &json!({"city":"Paris"}));
        // Ten characters: a marker that is a plain word (`functools`) is cut inside the word.
        let opener: String = whole.chars().take(10).collect();
        assert!(
            deltas.iter().all(|d| !d.contains(&opener)),
            "{}: the call markup arrives split",
            protocol.name()
        );
        let mut parser = protocol.stream_parser(&tools);
        let mut parts = Vec::new();
        for d in &deltas {
            parser.push_str(d, &mut parts);
        }
        parser.finish(&mut parts);
        let calls = calls_of(&parts);
        assert_paris_then_tokyo(&protocol, &calls);
    }
}
