//! `toolscope run` end to end: the binary against loopback servers. Parts as JSONL, `--raw`,
//! `--no-stream`, exit statuses, usage errors, and keys that never reach stdout or stderr.

mod common;
#[path = "../crates/toolscope-core/tests/support/mod.rs"]
mod support;

use std::process::{Command, Output};

use common::{assert_code, json_lines};
use serde_json::{Value, json};
use support::{End, MockServer, Reply};

const KEY: &str = "sk-cli-TOP-SECRET-987654321";

async fn toolscope(args: Vec<String>, env: Vec<(&'static str, String)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolscope"));
        c.args(&args);
        for k in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
            c.env_remove(k);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("run toolscope")
    })
    .await
    .unwrap()
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// Chat Completions stream events carrying `answer` as content, `size` bytes each (ASCII),
/// ending with `finish_reason`.
fn content_events(answer: &str, size: usize, finish_reason: &str) -> Vec<Value> {
    let mut events: Vec<Value> = answer
        .as_bytes()
        .chunks(size)
        .map(|c| {
            json!({"choices":[{"index":0,"delta":{"content": std::str::from_utf8(c).unwrap()}}]})
        })
        .collect();
    events.push(json!({"choices":[{"index":0,"delta":{},"finish_reason": finish_reason}]}));
    events.push(json!("[DONE]"));
    events
}

fn stream_reply(text_with_key: bool) -> Reply {
    let content = if text_with_key {
        format!("echo {KEY}")
    } else {
        "Hello".to_string()
    };
    Reply::sse_data(
        &[
            json!({"choices":[{"index":0,"delta":{"role":"assistant","content": content}}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}),
            json!("[DONE]"),
        ],
        End::Clean,
    )
}

#[tokio::test]
async fn run_prints_parts_and_raw_events_in_order() {
    let server = MockServer::start(vec![stream_reply(false), stream_reply(false)]).await;
    let base = server.url();
    let plain = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &base,
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_code(&plain, 0);
    let p = json_lines(&plain);
    let types: Vec<&str> = p.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["text-start", "text-delta", "text-end", "finish"]);
    assert_eq!(p[3]["usage"]["totalTokens"], 2);

    let raw = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &base,
            "--raw",
            "hi",
        ]),
        vec![],
    )
    .await;
    let r = json_lines(&raw);
    let types: Vec<&str> = r.iter().map(|v| v["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "raw",
            "text-start",
            "text-delta",
            "raw",
            "raw",
            "raw",
            "text-end",
            "finish"
        ],
        "each wire event comes before the parts it produced"
    );
    assert_eq!(r[7]["type"], "finish");
    assert_eq!(r[5]["data"], "[DONE]");
    assert!(
        r[0]["data"]
            .as_str()
            .unwrap()
            .contains("\"content\":\"Hello\"")
    );
    let sent = server.recorded();
    assert_eq!(
        sent[0].json()["messages"],
        json!([{"role":"user","content":"hi"}])
    );
    assert_eq!(sent[0].json()["stream"], true);
}

#[tokio::test]
async fn no_stream_tools_and_tool_choice_reach_the_wire() {
    let server = MockServer::start(vec![Reply::json(
        200,
        &json!({"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},"finish_reason":"stop"}]}),
    )])
    .await;
    let dir = tempdir("tools");
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}]"#,
    )
    .unwrap();
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--tools",
            tools.to_str().unwrap(),
            "--tool-choice",
            "tool:get_weather",
            "--system",
            "Be brief.",
            "--no-stream",
            "weather?",
        ]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(0));
    let p = json_lines(&out);
    assert_eq!(p.last().unwrap()["finishReason"], "tool-calls");
    assert!(
        p.iter()
            .any(|v| v["type"] == "tool-call" && v["input"] == json!({"city":"Oslo"}))
    );
    let body = server.recorded()[0].json();
    assert!(body.get("stream").is_none());
    assert_eq!(body["tool_choice"]["function"]["name"], "get_weather");
    assert_eq!(
        body["messages"][0],
        json!({"role":"system","content":"Be brief."})
    );
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn failures_exit_1_after_an_error_part_with_its_category() {
    let server = MockServer::start(vec![
        Reply::json(429, &json!({"error":{"message":"slow down"}})).with_header("retry-after", "7"),
    ])
    .await;
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let p = json_lines(&out);
    let last = p.last().unwrap();
    assert_eq!(last["type"], "error");
    assert_eq!(last["category"], "provider_rate_limit");
    assert_eq!(last["retryAfter"], 7.0);

    // Validation fails before sending: still an error part and exit 1, and no request.
    let quiet = MockServer::start(vec![]).await;
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "anthropic",
            "--model",
            "c",
            "--base-url",
            &quiet.url(),
            "--tool-choice",
            "required",
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_lines(&out)[0]["category"], "provider_invalid_request");
    assert!(quiet.recorded().is_empty());
}

/// `--protocol auto`: the tools go natively, the markup a server left in the text is read by
/// the protocol its markers name, and stderr says which, once.
#[tokio::test]
async fn auto_reads_markup_left_in_a_native_answer_and_says_which_protocol() {
    let answer = "Checking.<tool_call>get_weather<arg_key>city</arg_key><arg_value>Oslo</arg_value></tool_call>";
    let events = content_events(answer, 6, "stop");
    let server = MockServer::start(vec![Reply::sse_data(&events, End::Clean)]).await;
    let dir = tempdir("auto");
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]"#,
    )
    .unwrap();
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--tools",
            tools.to_str().unwrap(),
            "--protocol",
            "auto",
            "weather?",
        ]),
        vec![],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        stderr.matches("--protocol auto: read as glm-4.7 (").count(),
        1,
        "{stderr}"
    );
    let p = json_lines(&out);
    assert!(
        p.iter()
            .any(|v| v["type"] == "tool-call" && v["input"] == json!({"city":"Oslo"})),
        "{p:?}"
    );
    assert_eq!(p.last().unwrap()["finishReason"], "tool-calls");
    assert!(!p.iter().any(|v| v["code"] == "finish-mismatch"), "{p:?}");
    let body = server.recorded()[0].json();
    assert_eq!(body["tools"][0]["function"]["name"], "get_weather");
    // Beside auto, --reasoning-open is a usage error.
    let bad = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--protocol",
            "auto",
            "--reasoning-open",
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("need a named protocol"));
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn bad_usage_exits_2_with_one_line() {
    let dir = tempdir("bad");
    let bad = dir.join("tools.json");
    std::fs::write(&bad, "[{\"name\": 3}]").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            args(&[
                "run",
                "--provider",
                "openai",
                "--model",
                "m",
                "--tools",
                bad.to_str().unwrap(),
                "hi",
            ]),
            "tools.json",
        ),
        (
            args(&[
                "run",
                "--provider",
                "openai",
                "--model",
                "m",
                "--tools",
                "/nonexistent/t.json",
                "hi",
            ]),
            "/nonexistent/t.json",
        ),
        (args(&["run", "--provider", "openai", "hi"]), "--model"),
        (
            args(&[
                "run",
                "--provider",
                "openai",
                "--model",
                "m",
                "--tool-choice",
                "maybe",
                "hi",
            ]),
            "maybe",
        ),
        (
            args(&[
                "run",
                "--provider",
                "openai",
                "--model",
                "m",
                "--protocol",
                "nope",
                "hi",
            ]),
            "nope",
        ),
        (
            args(&["run", "--provider", "martian", "--model", "m", "hi"]),
            "martian",
        ),
        (
            args(&["run", "--provider", "openai", "--model", "m"]),
            "PROMPT",
        ),
        (
            args(&[
                "run",
                "--provider",
                "openai",
                "--model",
                "m",
                "--idle-timeout",
                "-1",
                "hi",
            ]),
            "-1",
        ),
    ];
    for (a, needle) in cases {
        let out = toolscope(a.clone(), vec![]).await;
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{a:?}: {err}");
        assert!(err.contains(needle), "{a:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--tools",
            bad.to_str().unwrap(),
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
    std::fs::remove_dir_all(dir).ok();
}

#[tokio::test]
async fn keys_never_reach_stdout_or_stderr() {
    let server = MockServer::start(vec![
        Reply::json(
            401,
            &json!({"error":{"message": format!("Incorrect API key provided: {KEY}")}}),
        ),
        stream_reply(true),
    ])
    .await;
    let env = || vec![("OPENAI_API_KEY", KEY.to_string())];
    for extra in [&[][..], &["--raw"][..]] {
        let mut a = args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
        ]);
        a.extend(extra.iter().map(|s| s.to_string()));
        a.push("hi".into());
        let out = toolscope(a, env()).await;
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains(KEY), "the key leaked: {all}");
        assert!(all.contains("[redacted]"), "{all}");
    }
    assert_eq!(
        server.recorded()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("toolscope-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Issue 13, defect 4: `required` emulated by a text protocol on the demo model answered
/// `get_weather {}`, which fails its schema. The demo now fills the arguments as it does natively.
#[tokio::test]
async fn emulated_required_on_the_demo_model_sends_a_valid_call() {
    let tools = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tools.json");
    for (choice, prompt, tool, arg, value) in [
        (
            "required",
            "What's the weather in Lisbon for 2 days?",
            "get_weather",
            "city",
            json!("Lisbon"),
        ),
        (
            "tool:search_web",
            "Search the web for Rust 2024 edition changes",
            "search_web",
            "query",
            json!("Rust 2024 edition changes"),
        ),
    ] {
        let out = toolscope(
            args(&[
                "run",
                "--provider",
                "demo",
                "--tools",
                tools,
                "--protocol",
                "hermes",
                "--tool-choice",
                choice,
                prompt,
            ]),
            vec![],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let calls: Vec<Value> = json_lines(&out)
            .into_iter()
            .filter(|p| p["type"] == "tool-call")
            .collect();
        assert_eq!(calls.len(), 1, "{choice}: {calls:?}");
        assert_eq!(calls[0]["toolName"], tool, "{choice}");
        assert_eq!(calls[0]["input"][arg], value, "{choice}: {calls:?}");
        assert!(calls[0].get("invalid").is_none(), "{choice}: {calls:?}");
    }
}

/// A stream that sends the start of an answer and then hangs (until the client goes).
fn hanging_reply() -> Reply {
    Reply::sse_data(
        &[json!({"choices":[{"index":0,"delta":{"role":"assistant","content":"Partial answer"}}]})],
        End::Hang,
    )
}

/// Starts `toolscope` with `args`, waits (reading its stdout) until it printed its first
/// `text-delta` part, sends it `signal` with `kill`, and returns its exit status, every stdout
/// line and its stderr.
fn interrupted(args: &[String], signal: &str) -> (Option<i32>, Vec<Value>, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolscope"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start toolscope");
    // A toolscope that hung (or ignored the signal) would hang the test: after a deadline it is
    // killed (and the status then says so).
    let (done, watch) = std::sync::mpsc::channel::<()>();
    let pid = child.id().to_string();
    let watchdog = std::thread::spawn(move || {
        // Only on the deadline: a test that failed first drops `done`, with the child unreaped.
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            watch.recv_timeout(std::time::Duration::from_secs(60))
        {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    while !first.contains("\"text-delta\"") {
        let n = out.read_line(&mut first).unwrap();
        assert!(n > 0, "toolscope ended before a text-delta: {first}");
    }
    let kill = Command::new("kill")
        .args([format!("-{signal}"), child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    let _ = done.send(());
    watchdog.join().unwrap();
    let lines = format!("{first}{rest}")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (status.code(), lines, stderr)
}

/// Issue 25, point 5: Ctrl+C, SIGTERM or SIGHUP in the middle of `run` ends stdout with an
/// `error` part of category `cancelled`, saves what was received with `--save`, and exits
/// 128 + the signal.
#[tokio::test]
async fn an_interrupted_run_says_so_and_saves_what_it_received() {
    let server = MockServer::start(vec![]).await;
    let dir = tempdir("interrupt");
    for (signal, status, save) in [
        ("INT", 130, true),
        ("TERM", 143, true),
        ("HUP", 129, true),
        ("INT", 130, false),
    ] {
        server.push(hanging_reply());
        let file = dir.join(format!("{signal}-{save}.json"));
        let mut a = args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
        ]);
        if save {
            a.extend(args(&["--save", file.to_str().unwrap()]));
        }
        a.push("hi".into());
        let (code, lines, stderr) = tokio::task::spawn_blocking(move || interrupted(&a, signal))
            .await
            .unwrap();
        assert_eq!(code, Some(status), "SIG{signal}: {stderr}");
        assert_eq!(lines[1]["delta"], "Partial answer", "{lines:?}");
        let last = lines.last().unwrap();
        assert_eq!(last["type"], "error", "SIG{signal}: {lines:?}");
        assert_eq!(last["category"], "cancelled", "SIG{signal}: {lines:?}");
        assert!(
            last["message"]
                .as_str()
                .unwrap()
                .contains(&format!("SIG{signal}")),
            "{last}"
        );
        if save {
            let session = toolscope_core::session::Session::load(&file)
                .unwrap_or_else(|e| panic!("SIG{signal}: {e}"));
            let answer = toolscope_core::part::Collapsed::of(&session.parts);
            assert_eq!(answer.text, "Partial answer", "SIG{signal}");
            assert!(!session.events.is_empty(), "the wire events are kept");
            assert!(
                matches!(session.parts.last(), Some(toolscope_core::part::Part::Error(e))
                    if e.category == Some(toolscope_core::error::ErrorCategory::Cancelled)),
                "{:?}",
                session.parts
            );
        } else {
            assert!(!file.exists());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 25, point 5, in an `--execute` loop: a signal during the second turn keeps the first
/// turn, the tool call and the second turn's start in the saved session.
#[tokio::test]
async fn an_interrupted_loop_saves_every_step_so_far() {
    let call = Reply::sse_data(
        &[
            json!({"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}}]}),
            json!({"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}),
            json!("[DONE]"),
        ],
        End::Clean,
    );
    let server = MockServer::start(vec![call, hanging_reply()]).await;
    let dir = tempdir("interrupt-loop");
    let file = dir.join("loop.json");
    let mcp = format!("'{}' serve-mcp-demo", env!("CARGO_BIN_EXE_toolscope"));
    let a = args(&[
        "run",
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &server.url(),
        "--mcp",
        &mcp,
        "--execute",
        "--save",
        file.to_str().unwrap(),
        "weather in Oslo?",
    ]);
    let (code, lines, stderr) = tokio::task::spawn_blocking(move || interrupted(&a, "TERM"))
        .await
        .unwrap();
    assert_eq!(code, Some(143), "{stderr}");
    assert!(
        lines.iter().any(|l| l["type"] == "tool-result"),
        "{lines:?}"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["category"], "cancelled", "{lines:?}");
    let session = toolscope_core::session::Session::load(&file).unwrap();
    let s = session.summary();
    assert_eq!((s.turns, s.tool_calls), (2, 1));
    let parts = session.all_parts();
    assert!(
        parts.iter().any(|p| matches!(p, toolscope_core::part::Part::TextDelta { delta, .. } if delta == "Partial answer")),
        "{parts:?}"
    );
    assert!(
        matches!(parts.last(), Some(toolscope_core::part::Part::Error(e))
        if e.category == Some(toolscope_core::error::ErrorCategory::Cancelled))
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 25, point 9: `--deadline` ends a run that takes too long with an error part naming the
/// deadline, keeps what was received, and exits 1.
#[tokio::test]
async fn a_run_past_its_deadline_stops_and_keeps_what_came() {
    let server = MockServer::start(vec![hanging_reply()]).await;
    let dir = tempdir("deadline");
    let file = dir.join("late.json");
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--deadline",
            "0.5",
            "--save",
            file.to_str().unwrap(),
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines = json_lines(&out);
    assert_eq!(lines[1]["delta"], "Partial answer", "{lines:?}");
    let last = lines.last().unwrap();
    assert_eq!(last["category"], "provider_timeout", "{lines:?}");
    assert!(
        last["message"]
            .as_str()
            .unwrap()
            .contains("--deadline of 0.5 s"),
        "{last}"
    );
    let session = toolscope_core::session::Session::load(&file).unwrap();
    assert_eq!(
        toolscope_core::part::Collapsed::of(&session.parts).text,
        "Partial answer"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A call the token limit cut (`finish_reason: length` inside a parameter) is unfinished: with
/// `--execute`, nothing reaches the MCP server and no second turn is sent.
#[tokio::test]
async fn a_call_cut_by_the_token_limit_is_never_executed() {
    let answer =
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<param";
    let events = content_events(answer, 5, "length");
    let server = MockServer::start(vec![Reply::sse_data(&events, End::Clean)]).await;
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--protocol",
            "qwen3-coder",
            "--mcp",
            "toolscope serve-mcp-demo",
            "--execute",
            "weather in Paris?",
        ]),
        vec![],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let p = json_lines(&out);
    assert!(!p.is_empty(), "{stderr}");
    assert!(!p.iter().any(|v| v["type"] == "tool-call"), "{p:?}");
    assert!(!p.iter().any(|v| v["type"] == "tool-result"), "{p:?}");
    assert!(
        p.iter()
            .any(|v| v["type"] == "error" && v["reason"] == "unfinished-tool-call"),
        "{p:?}"
    );
    assert!(!stderr.contains("tools/call"), "{stderr}");
    assert_eq!(server.recorded().len(), 1, "a second turn was sent");
}

/// Issue 25, point 7: credentials in the base URL are sent, but never printed or saved.
#[tokio::test]
async fn credentials_in_the_base_url_never_reach_the_output_or_the_session() {
    const PASSWORD: &str = "url-PASSWORD-13579";
    const QUERY_KEY: &str = "url-QUERYKEY-24680";
    let server = MockServer::start(vec![
        Reply::json(401, &json!({"error":{"message":"bad credentials"}})),
        stream_reply(false),
    ])
    .await;
    let dir = tempdir("url-secrets");
    let base = format!(
        "http://alice:{PASSWORD}@{}/v1?api_key={QUERY_KEY}",
        server.addr
    );
    for (i, code) in [(0, 1), (1, 0)] {
        let file = dir.join(format!("s{i}.json"));
        let out = toolscope(
            args(&[
                "run",
                "--provider",
                "openai",
                "--model",
                "m",
                "--raw",
                "--base-url",
                &base,
                "--save",
                file.to_str().unwrap(),
                "hi",
            ]),
            vec![],
        )
        .await;
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        let saved = std::fs::read_to_string(&file).unwrap();
        let all = format!(
            "{}{}{saved}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !all.contains(PASSWORD) && !all.contains(QUERY_KEY),
            "a credential leaked: {all}"
        );
        assert!(saved.contains("http://[redacted]@"), "{saved}");
    }
    let first = &server.recorded()[0];
    assert_eq!(
        first.path,
        format!("/v1/chat/completions?api_key={QUERY_KEY}")
    );
    std::fs::remove_dir_all(dir).ok();
}

/// Issue 25, point 3: with --save, an answer's raw text beyond --max-raw-mib drops its oldest
/// raw events (said on stderr and by a warning part in the session), never a part.
#[tokio::test]
async fn saved_raw_text_is_bounded_and_every_part_kept() {
    let piece = "r".repeat(64 << 10);
    let mut events: Vec<Value> = (0..40)
        .map(|_| json!({"choices":[{"index":0,"delta":{"content": piece}}]}))
        .collect();
    events.push(json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}));
    events.push(json!("[DONE]"));
    let server = MockServer::start(vec![Reply::sse_data(&events, End::Clean)]).await;
    let dir = tempdir("raw-bound");
    let file = dir.join("s.json");
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--max-raw-mib",
            "1",
            "--save",
            file.to_str().unwrap(),
            "hi",
        ]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--max-raw-mib 1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let session: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let raw: usize = session["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["data"].as_str().unwrap().len())
        .sum();
    assert!(raw <= 1 << 20, "{raw} raw bytes saved");
    let parts = session["parts"].as_array().unwrap();
    let text: usize = parts
        .iter()
        .filter(|p| p["type"] == "text-delta")
        .map(|p| p["delta"].as_str().unwrap().len())
        .sum();
    assert_eq!(text, 40 * (64 << 10), "every part is kept");
    assert!(
        parts
            .iter()
            .any(|p| p["type"] == "warning" && p["code"] == "raw-dropped"),
        "no notice"
    );
    std::fs::remove_dir_all(dir).ok();
}

/// A streamed answer of `content` in pieces of 5 bytes, ending with `finish`.
fn content_reply(content: &str, finish: &str) -> Reply {
    let mut events: Vec<Value> = content
        .as_bytes()
        .chunks(5)
        .map(|c| {
            json!({"choices":[{"index":0,"delta":{"content": std::str::from_utf8(c).unwrap()}}]})
        })
        .collect();
    events.push(json!({"choices":[{"index":0,"delta":{},"finish_reason": finish}]}));
    events.push(json!("[DONE]"));
    Reply::sse_data(&events, End::Clean)
}

/// Issue 28: calls read from text got `call-1` on every answer of an `--execute` loop; ids are
/// unique within the conversation, and each result answers its own call.
#[tokio::test]
async fn an_execute_loop_gives_every_call_its_own_id() {
    let call = |city: &str| {
        format!(
            "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}</tool_call>"
        )
    };
    let server = MockServer::start(vec![
        content_reply(&call("Paris"), "stop"),
        content_reply(&format!("{}{}", call("Oslo"), call("Lima")), "stop"),
        content_reply("All sunny.", "stop"),
    ])
    .await;
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--protocol",
            "hermes",
            "--mcp",
            "toolscope serve-mcp-demo",
            "--execute",
            "weather in three cities?",
        ]),
        vec![],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let p = json_lines(&out);
    let ids = |kind: &str| -> Vec<String> {
        p.iter()
            .filter(|v| v["type"] == kind)
            .map(|v| v["toolCallId"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        ids("tool-call"),
        vec!["call-1", "call-2", "call-3"],
        "{p:?}"
    );
    assert_eq!(
        ids("tool-result"),
        vec!["call-1", "call-2", "call-3"],
        "{p:?}"
    );
    assert_eq!(server.recorded().len(), 3);
}

/// Issue 28: a cut answer (`finish_reason: length`) ends the `--execute` loop with a message and
/// exit 1; its complete calls are not run either, and no next turn is sent.
#[tokio::test]
async fn an_execute_loop_stops_at_a_cut_answer() {
    let answer = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>\n<tool_call>{\"name\": \"get_weather\", \"argu";
    let server = MockServer::start(vec![
        content_reply(answer, "length"),
        content_reply("never asked for", "stop"),
    ])
    .await;
    let out = toolscope(
        args(&[
            "run",
            "--provider",
            "openai",
            "--model",
            "m",
            "--base-url",
            &server.url(),
            "--protocol",
            "hermes",
            "--mcp",
            "toolscope serve-mcp-demo",
            "--execute",
            "weather in Paris and Oslo?",
        ]),
        vec![],
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let p = json_lines(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr} {p:?}");
    assert!(
        stderr.contains("cut") && stderr.contains("length"),
        "{stderr}"
    );
    assert!(!p.iter().any(|v| v["type"] == "tool-result"), "{p:?}");
    assert_eq!(server.recorded().len(), 1, "a second turn was sent");
}
