//! MCP end to end: the core's client against `toolscope serve-mcp-demo` run as a child process
//! (listing, pagination, list-changed, execution, a tool error, a server that exits mid-call, a
//! hung call that is cancelled or times out), against the same tools served in-process over
//! streamable HTTP (with a bearer token from a variable), and `toolscope run --execute`'s loop
//! on the demo model, saved as a session and replayed (never running a tool again). Every wait
//! has a generous deadline; nothing sleeps.

mod common;
mod mcp_support;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_support::{DEADLINE, http_server, stderr_channel, wait_line};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolscope_core::mcp::{CancellationToken, McpClient, McpError, McpServerSpec};

const BIN: &str = env!("CARGO_BIN_EXE_toolscope");

fn demo_spec(flags: &str) -> McpServerSpec {
    McpServerSpec::stdio(&format!("'{BIN}' serve-mcp-demo {flags}")).unwrap()
}

async fn connect(flags: &str) -> (McpClient, mpsc::UnboundedReceiver<String>) {
    mcp_support::connect(&demo_spec(flags)).await
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

async fn call(
    client: &McpClient,
    name: &str,
    args: Value,
) -> Result<toolscope_core::mcp::CallOutcome, McpError> {
    client
        .call_tool(
            "call_1",
            name,
            name,
            &args,
            DEADLINE,
            &CancellationToken::new(),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_server_lists_the_example_tools_and_says_where_it_writes() {
    let (client, mut stderr) = connect("").await;
    assert_eq!(client.name(), "toolscope-demo");
    let tools = client.list_tools().await.unwrap();
    assert_eq!(names(&tools), ["get_weather", "search_web", "write_file"]);
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["city"]));
    // The server's stderr reaches the sink, line by line.
    let line = wait_line(&mut stderr, "write_file writes under").await;
    assert!(line.contains("toolscope-mcp-demo-"), "{line}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_follows_the_pages_to_the_end() {
    let (paged, _e1) = connect("--test-tools --page-size 2").await;
    let (whole, _e2) = connect("--test-tools").await;
    let a = paged.list_tools().await.unwrap();
    let b = whole.list_tools().await.unwrap();
    assert_eq!(a.len(), 6, "{:?}", names(&a));
    assert_eq!(a, b);
    paged.close().await;
    whole.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_changed_notification_is_surfaced_and_the_new_list_has_the_tool() {
    let (client, _stderr) = connect("--test-tools").await;
    let before = client.list_tools().await.unwrap();
    assert!(!names(&before).contains(&"late_tool".to_string()));
    let mut changed = client.list_changed();
    changed.mark_unchanged();
    let added = call(&client, "add_tool", json!({})).await.unwrap();
    assert!(!added.part.is_error);
    tokio::time::timeout(DEADLINE, changed.changed())
        .await
        .expect("a list_changed notification in time")
        .unwrap();
    let after = client.list_tools().await.unwrap();
    assert!(
        names(&after).contains(&"late_tool".to_string()),
        "{:?}",
        names(&after)
    );
    let echoed = call(&client, "late_tool", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed.text, "hi");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_runs_with_a_deterministic_result_and_a_bad_input_is_a_tool_error() {
    let (client, _stderr) = connect("").await;
    let a = call(&client, "get_weather", json!({"city": "Tokyo", "days": 3}))
        .await
        .unwrap();
    let b = call(&client, "get_weather", json!({"city": "Tokyo", "days": 3}))
        .await
        .unwrap();
    assert_eq!(a, b);
    assert!(!a.part.is_error);
    assert_eq!(a.part.tool_call_id, "call_1");
    assert_eq!(a.part.output["city"], "Tokyo");
    assert_eq!(a.part.output["forecast"].as_array().unwrap().len(), 3);
    let back: Value = serde_json::from_str(&a.text).unwrap();
    assert_eq!(
        back, a.part.output,
        "the model reads the same result as JSON text"
    );

    let bad = call(&client, "get_weather", json!({"city": "Atlantis"}))
        .await
        .unwrap();
    assert!(bad.part.is_error);
    assert!(
        bad.text.starts_with("error: unknown city \"Atlantis\""),
        "{}",
        bad.text
    );

    // A tool the server does not have is a failed request, not a result.
    let missing = call(&client, "nope", json!({})).await.unwrap_err();
    assert!(matches!(missing, McpError::Call(_)), "{missing:?}");
    assert!(missing.to_string().contains("nope"), "{missing}");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_mid_call_fails_the_call_and_the_next_one() {
    let (client, _stderr) = connect("--test-tools").await;
    let e = tokio::time::timeout(DEADLINE, call(&client, "exit_now", json!({})))
        .await
        .expect("the call ends when the server exits")
        .unwrap_err();
    assert!(matches!(e, McpError::Closed(_)), "{e:?}");
    assert!(e.to_string().contains("closed the connection"), "{e}");
    // How it ended, and its last words on stderr, without the SDK's type names.
    assert!(e.to_string().contains("(it exited with status 3: "), "{e}");
    assert!(e.to_string().contains("exit_now: exiting mid-call)"), "{e}");
    assert!(!e.to_string().contains("rmcp"), "{e}");
    let part = e.to_part(Some("call_1"), Some("exit_now"));
    assert_eq!(
        serde_json::to_value(&part).unwrap()["category"],
        "tool_execution_failed"
    );
    let again = tokio::time::timeout(
        DEADLINE,
        call(&client, "get_weather", json!({"city": "Paris"})),
    )
    .await
    .expect("no hang after the server is gone")
    .unwrap_err();
    assert!(matches!(again, McpError::Closed(_)), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_ends_when_cancelled_and_the_server_hears_of_it() {
    let (client, mut stderr) = connect("--test-tools").await;
    let client = Arc::new(client);
    let cancel = CancellationToken::new();
    let running = {
        let (client, cancel) = (client.clone(), cancel.clone());
        tokio::spawn(async move {
            client
                .call_tool("call_h", "hang", "hang", &json!({}), DEADLINE * 10, &cancel)
                .await
        })
    };
    // Cancel once the server is inside the call.
    wait_line(&mut stderr, "hang: waiting to be cancelled").await;
    cancel.cancel();
    let e = tokio::time::timeout(DEADLINE, running)
        .await
        .expect("the cancelled call ends at once")
        .unwrap()
        .unwrap_err();
    assert!(matches!(e, McpError::Cancelled(_)), "{e:?}");
    assert!(e.to_string().contains("cancelled"), "{e}");
    // notifications/cancelled reached the server, which stopped the call.
    wait_line(&mut stderr, "hang: cancelled").await;
    // The connection is still usable.
    let ok = call(
        &client,
        "search_web",
        json!({"query": "rust mcp", "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(ok.part.output["results"].as_array().unwrap().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_times_out() {
    let (client, mut stderr) = connect("--test-tools").await;
    let e = client
        .call_tool(
            "call_t",
            "hang",
            "hang",
            &json!({}),
            Duration::from_millis(300),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("took longer than"), "{e}");
    wait_line(&mut stderr, "hang: cancelled").await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_cannot_start_is_a_clear_error() {
    let (sink, _rx) = stderr_channel();
    let spec = McpServerSpec::stdio("/nonexistent/toolscope-mcp-server --flag").unwrap();
    let e = McpClient::connect(&spec, sink).await.unwrap_err();
    assert!(matches!(e, McpError::Connect(_)), "{e:?}");
    assert!(
        e.to_string().contains("/nonexistent/toolscope-mcp-server"),
        "{e}"
    );
}

// ---- streamable HTTP, in process ----

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_http_client_lists_across_pages_and_calls() {
    let server = http_server().await;
    let (sink, _rx) = stderr_channel();
    let spec = McpServerSpec::http(&server.url).unwrap();
    let client = tokio::time::timeout(DEADLINE, McpClient::connect(&spec, sink))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(client.name(), "toolscope-demo");
    let tools = client.list_tools().await.unwrap();
    assert_eq!(names(&tools), ["get_weather", "search_web", "write_file"]);
    let r = call(&client, "search_web", json!({"query": "mcp over http"}))
        .await
        .unwrap();
    assert_eq!(r.part.output["results"].as_array().unwrap().len(), 3);
    assert!(
        server.seen_auth.lock().unwrap().is_empty(),
        "no token asked for, none sent"
    );
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unset_token_variable_is_an_error_not_a_connection_without_it() {
    let server = http_server().await;
    let (sink, _rx) = stderr_channel();
    let spec =
        McpServerSpec::http(&format!("{}=TOOLSCOPE_TEST_SURELY_UNSET_TOKEN", server.url)).unwrap();
    let e = McpClient::connect(&spec, sink).await.unwrap_err();
    assert!(
        e.to_string().contains("$TOOLSCOPE_TEST_SURELY_UNSET_TOKEN"),
        "{e}"
    );
    assert!(server.seen_auth.lock().unwrap().is_empty());
}

// ---- `toolscope run --execute` ----

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn parts(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }
}

async fn toolscope(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut c = tokio::process::Command::new(BIN);
    c.args(args).kill_on_drop(true);
    for k in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    let out = tokio::time::timeout(DEADLINE * 2, c.output())
        .await
        .expect("toolscope run ends")
        .expect("toolscope runs");
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn of_type<'a>(parts: &'a [Value], t: &str) -> Vec<&'a Value> {
    parts.iter().filter(|p| p["type"] == t).collect()
}

fn text_of(parts: &[Value]) -> String {
    of_type(parts, "text-delta")
        .iter()
        .map(|p| p["delta"].as_str().unwrap())
        .collect()
}

/// `toolscope` as the server's program is this toolscope, with no toolscope on the `PATH`
/// (the README's command works from a checkout, through `cargo run`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toolscope_as_the_command_is_this_binary() {
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            "toolscope serve-mcp-demo",
            "--execute",
            "What's the weather in Paris?",
        ],
        &[("PATH", "/nonexistent")],
    )
    .await;
    assert_eq!(ran.code, 0, "{}\n{}", ran.stdout, ran.stderr);
    assert_eq!(
        of_type(&ran.parts(), "tool-result").len(),
        1,
        "{}",
        ran.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_on_the_demo_model_ends_in_a_text_answer() {
    let mcp = format!("'{BIN}' serve-mcp-demo");
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            &mcp,
            "--execute",
            "What's the weather in Paris?",
        ],
        &[],
    )
    .await;
    assert_eq!(ran.code, 0, "{}\n{}", ran.stdout, ran.stderr);
    let parts = ran.parts();
    let calls = of_type(&parts, "tool-call");
    let results = of_type(&parts, "tool-result");
    assert_eq!(calls.len(), 1, "{}", ran.stdout);
    assert_eq!(results.len(), 1);
    assert_eq!(calls[0]["toolName"], "get_weather");
    assert_eq!(results[0]["toolCallId"], calls[0]["toolCallId"]);
    assert_eq!(results[0]["output"]["city"], "Paris");
    // The result comes between the two turns, and the second turn answers in text from it.
    let at = |p: &Value| parts.iter().position(|q| q == p).unwrap();
    let finishes = of_type(&parts, "finish");
    assert_eq!(finishes.len(), 2);
    assert!(at(finishes[0]) < at(results[0]) && at(results[0]) < at(finishes[1]));
    assert_eq!(finishes[1]["finishReason"], "stop");
    let temperature = results[0]["output"]["temperature"].to_string();
    let answer = text_of(&parts);
    assert!(
        answer.contains("Paris") && answer.contains(&temperature),
        "{answer}"
    );
    // The server's stderr is passed on, under its name.
    assert!(
        ran.stderr
            .contains("[toolscope-demo] write_file writes under"),
        "{}",
        ran.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_step_limit_stops_the_loop_with_a_warning() {
    let mcp = format!("'{BIN}' serve-mcp-demo");
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            &mcp,
            "--execute",
            "--max-steps",
            "1",
            "What's the weather in Paris?",
        ],
        &[],
    )
    .await;
    assert_eq!(ran.code, 0, "{}\n{}", ran.stdout, ran.stderr);
    let parts = ran.parts();
    assert_eq!(of_type(&parts, "finish").len(), 1, "one model turn only");
    assert_eq!(of_type(&parts, "tool-result").len(), 1);
    let last = parts.last().unwrap();
    assert_eq!(last["type"], "warning");
    assert_eq!(last["code"], "max-steps");
    assert!(ran.stderr.contains("--max-steps 1"), "{}", ran.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_execute_the_calls_are_only_printed() {
    let mcp = format!("'{BIN}' serve-mcp-demo");
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            &mcp,
            "What's the weather in Paris?",
        ],
        &[],
    )
    .await;
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let parts = ran.parts();
    assert_eq!(
        of_type(&parts, "tool-call").len(),
        1,
        "the MCP tools were offered"
    );
    assert!(of_type(&parts, "tool-result").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_failure_in_the_loop_is_an_error_part_and_exit_1() {
    let mcp = format!("'{BIN}' serve-mcp-demo --test-tools");
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            &mcp,
            "--execute",
            "--tool-choice",
            "tool:exit_now",
            "exit now",
        ],
        &[],
    )
    .await;
    assert_eq!(ran.code, 1, "{}\n{}", ran.stdout, ran.stderr);
    let parts = ran.parts();
    let last = parts.last().unwrap();
    assert_eq!(last["type"], "error", "{}", ran.stdout);
    assert_eq!(last["category"], "tool_execution_failed");
    assert_eq!(last["toolName"], "exit_now");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_mcp_flags_are_usage_errors() {
    for (flags, needle) in [
        (vec!["--mcp", "'unclosed"], "unclosed single quote"),
        (vec!["--mcp-url", "localhost:1/mcp"], "not an http"),
        (vec!["--execute"], "--execute needs an MCP server"),
    ] {
        let mut args = vec!["run", "--provider", "demo"];
        args.extend(flags);
        args.push("hi");
        let ran = toolscope(&args, &[]).await;
        assert_eq!(ran.code, 2, "{args:?}: {}", ran.stderr);
        assert!(ran.stderr.contains(needle), "{args:?}: {}", ran.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_over_http_sends_the_token_from_its_variable_and_never_shows_it() {
    const TOKEN: &str = "mcp-TOP-SECRET-token-24680";
    let server = http_server().await;
    let url = format!("{}=TOOLSCOPE_TEST_MCP_TOKEN", server.url);
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp-url",
            &url,
            "--execute",
            "Search the web for rust mcp",
        ],
        &[("TOOLSCOPE_TEST_MCP_TOKEN", TOKEN)],
    )
    .await;
    assert_eq!(ran.code, 0, "{}\n{}", ran.stdout, ran.stderr);
    let parts = ran.parts();
    let results = of_type(&parts, "tool-result");
    assert_eq!(results.len(), 1, "{}", ran.stdout);
    assert_eq!(results[0]["toolName"], "search_web");
    assert_eq!(
        *server.seen_auth.lock().unwrap(),
        HashSet::from([format!("Bearer {TOKEN}")]),
        "every request carried the token"
    );
    assert!(!ran.stdout.contains(TOKEN) && !ran.stderr.contains(TOKEN));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clash_with_the_users_tools_is_renamed_and_a_call_to_a_user_tool_stops_the_loop() {
    let mcp = format!("'{BIN}' serve-mcp-demo");
    let tools = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/tools.json");
    let ran = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--tools",
            tools,
            "--mcp",
            &mcp,
            "--execute",
            "--tool-choice",
            "tool:get_weather",
            "What's the weather in Paris?",
        ],
        &[],
    )
    .await;
    assert_eq!(ran.code, 0, "{}\n{}", ran.stdout, ran.stderr);
    assert!(
        ran.stderr.contains("\"get_weather\" of server \"toolscope-demo\" is offered as \"toolscope-demo__get_weather\""),
        "{}",
        ran.stderr
    );
    assert!(
        ran.stderr.contains("which no MCP server serves"),
        "{}",
        ran.stderr
    );
    let parts = ran.parts();
    assert_eq!(of_type(&parts, "tool-call")[0]["toolName"], "get_weather");
    assert!(of_type(&parts, "tool-result").is_empty());
}

// ---- saving a loop, and replaying it ----

/// A file in a folder of this test run.
fn temp_file(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("toolscope-mcp-sessions-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

async fn replay_of(file: &std::path::Path, extra: &[&str]) -> Ran {
    let mut args = vec!["replay", file.to_str().unwrap()];
    args.extend(extra);
    toolscope(&args, &[]).await
}

fn steps_of(file: &std::path::Path) -> Vec<String> {
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    saved["steps"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|s| s["type"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_loop_replays_to_the_lines_the_live_loop_printed() {
    let mcp = format!("'{BIN}' serve-mcp-demo");
    let file = temp_file("loop.json");
    let live = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            &mcp,
            "--execute",
            "--save",
            file.to_str().unwrap(),
            "What's the weather in Paris?",
        ],
        &[],
    )
    .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    assert_eq!(of_type(&live.parts(), "tool-result").len(), 1);
    let replayed = replay_of(&file, &["--instant", "--jsonl"]).await;
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert_eq!(replayed.stdout, live.stdout);
    // At a pace, the same lines.
    let paced = replay_of(&file, &["--speed", "50", "--jsonl"]).await;
    assert_eq!(paced.stdout, live.stdout);

    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved["version"], 2);
    assert_eq!(saved["mcp"]["servers"][0]["name"], "toolscope-demo");
    assert_eq!(saved["mcp"]["servers"][0]["command"], mcp.as_str());
    assert!(saved["mcp"]["tools"].as_array().unwrap().contains(
        &json!({"server": "toolscope-demo", "name": "get_weather", "offeredAs": "get_weather"})
    ));
    assert_eq!(steps_of(&file), ["toolCall", "turn"]);
    let call = &saved["steps"][0];
    assert_eq!(call["arguments"]["city"], "Paris");
    assert_eq!(call["result"]["structuredContent"]["city"], "Paris");
    assert!(call["atMs"].as_u64().unwrap() <= call["endedAtMs"].as_u64().unwrap());
    // The first turn offered the servers' tools, and the second sends the result back.
    assert_eq!(saved["request"]["tools"].as_array().unwrap().len(), 3);
    let messages = saved["steps"][1]["request"]["messages"].as_array().unwrap();
    assert_eq!(messages.last().unwrap()["role"], "tool");
    assert!(saved["steps"][1]["atMs"].as_u64() >= call["endedAtMs"].as_u64());
    // The demo model's loopback URL is not kept.
    assert!(saved["request"].get("baseUrl").is_none());
    assert!(saved["steps"][1]["request"].get("baseUrl").is_none());

    // Read, the loop is in order: the call, its result, the second turn.
    let readable = replay_of(&file, &["--instant"]).await;
    let text = &readable.stdout;
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in {text}"))
    };
    assert!(at("→ get_weather") < at("⇒ tools/call get_weather on toolscope-demo"));
    assert!(at("⇐ get_weather") < at("── turn 2 ──"));
    assert!(at("── turn 2 ──") < at("■ finish: stop"));
    assert!(
        readable.stderr.contains("2 model turns, 1 tool call,"),
        "{}",
        readable.stderr
    );
    let lint = toolscope(&["lint", file.to_str().unwrap()], &[]).await;
    assert_eq!(lint.code, 0, "{}", lint.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_cut_by_the_step_limit_or_a_server_failure_replays_the_same_way() {
    let demo = format!("'{BIN}' serve-mcp-demo");
    let test_tools = format!("'{BIN}' serve-mcp-demo --test-tools");
    let limited = temp_file("limited.json");
    let failed = temp_file("failed.json");
    let runs: [(&std::path::Path, Vec<&str>, i32, &[&str]); 2] = [
        (
            &limited,
            vec![
                "--mcp",
                &demo,
                "--max-steps",
                "1",
                "What's the weather in Paris?",
            ],
            0,
            &["toolCall", "stop"],
        ),
        (
            &failed,
            vec![
                "--mcp",
                &test_tools,
                "--tool-choice",
                "tool:exit_now",
                "exit now",
            ],
            1,
            &["toolCall"],
        ),
    ];
    for (file, flags, code, steps) in runs {
        let mut args = vec![
            "run",
            "--provider",
            "demo",
            "--execute",
            "--save",
            file.to_str().unwrap(),
        ];
        args.extend(flags);
        let live = toolscope(&args, &[]).await;
        assert_eq!(live.code, code, "{}\n{}", live.stdout, live.stderr);
        assert_eq!(steps_of(file), steps, "{}", file.display());
        let replayed = replay_of(file, &["--instant", "--jsonl"]).await;
        assert_eq!(replayed.code, code, "{}", replayed.stderr);
        assert_eq!(replayed.stdout, live.stdout, "{}", file.display());
    }
    let last = |file: &std::path::Path| {
        let saved: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        saved["steps"].as_array().unwrap().last().unwrap().clone()
    };
    assert_eq!(last(&limited)["parts"][0]["code"], "max-steps");
    let failure = last(&failed);
    assert!(failure.get("result").is_none());
    assert!(
        failure["error"]
            .as_str()
            .unwrap()
            .contains("closed the connection"),
        "{failure}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_loop_over_http_names_the_token_variable_and_never_holds_the_token() {
    const TOKEN: &str = "mcp-SAVED-secret-token-13579";
    let server = http_server().await;
    let url = format!("{}=TOOLSCOPE_TEST_MCP_TOKEN", server.url);
    let file = temp_file("http-loop.json");
    let live = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp-url",
            &url,
            "--execute",
            "--save",
            file.to_str().unwrap(),
            "Search the web for rust mcp",
        ],
        &[("TOOLSCOPE_TEST_MCP_TOKEN", TOKEN)],
    )
    .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains(TOKEN), "the token reached the session file");
    assert!(!text.contains("Bearer"), "{text}");
    let saved: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        saved["mcp"]["servers"][0],
        json!({"name": "toolscope-demo", "url": server.url, "tokenEnv": "TOOLSCOPE_TEST_MCP_TOKEN"})
    );
    assert_eq!(steps_of(&file), ["toolCall", "turn"]);
    // Replayed with the server gone and the variable unset.
    drop(server);
    let replayed = replay_of(&file, &["--instant", "--jsonl"]).await;
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert_eq!(replayed.stdout, live.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_loop_replays_when_its_server_cannot_be_started() {
    let mcp = format!("'{BIN}' serve-mcp-demo");
    let file = temp_file("moved-server.json");
    let live = toolscope(
        &[
            "run",
            "--provider",
            "demo",
            "--mcp",
            &mcp,
            "--execute",
            "--save",
            file.to_str().unwrap(),
            "What's the weather in Tokyo?",
        ],
        &[],
    )
    .await;
    assert_eq!(live.code, 0, "{}\n{}", live.stdout, live.stderr);
    // The recorded server is one that does not exist anywhere.
    let mut saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    saved["mcp"]["servers"][0]["command"] = json!("/nonexistent/toolscope-mcp-server --flag");
    std::fs::write(&file, serde_json::to_string_pretty(&saved).unwrap()).unwrap();
    let replayed = replay_of(&file, &["--instant", "--jsonl"]).await;
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert_eq!(replayed.stdout, live.stdout);
    assert!(
        !replayed.stderr.contains("nonexistent"),
        "{}",
        replayed.stderr
    );
    // Re-read under a protocol, every turn is read again and the recorded result still shows.
    let reread = replay_of(&file, &["--instant", "--jsonl", "--protocol", "hermes"]).await;
    assert_eq!(reread.code, 0, "{}", reread.stderr);
    let parts = reread.parts();
    assert_eq!(of_type(&parts, "tool-result").len(), 1);
    assert_eq!(of_type(&parts, "finish").len(), 2);
}

// ---- a server written with the official Python SDK ----

/// Needs `python3` with `mcp` installed: ignored in a plain `cargo test`; `.ci/run` installs it
/// and runs the test.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs python3 with the mcp package"]
async fn a_server_written_with_the_python_sdk_lists_calls_and_fails_clearly() {
    if let Err(why) = common::python_has("mcp") {
        panic!("this test needs python3 with the mcp package ({why}): python3 -m pip install mcp");
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_python_server.py");
    let spec = McpServerSpec::stdio(&format!("python3 '{script}'")).unwrap();
    let (sink, mut stderr) = stderr_channel();
    let client = tokio::time::timeout(DEADLINE, McpClient::connect(&spec, sink))
        .await
        .expect("the Python server initializes in time")
        .expect("the Python server initializes");
    assert_eq!(client.name(), "python-notes");
    wait_line(&mut stderr, "python-notes: serving on stdio").await;

    let tools = client.list_tools().await.unwrap();
    let mut listed = names(&tools);
    listed.sort();
    assert_eq!(listed, ["add", "big", "fail", "shout"]);
    let add = tools.iter().find(|t| t["name"] == "add").unwrap();
    assert_eq!(add["inputSchema"]["properties"]["a"]["type"], "integer");
    // Its tools read as the core's tool definitions.
    let catalog =
        toolscope_core::mcp::Catalog::build(&Default::default(), &[("python-notes".into(), tools)])
            .unwrap();
    assert_eq!(catalog.route("shout").unwrap().server_name, "python-notes");

    let sum = call(&client, "add", json!({"a": 2, "b": 40}))
        .await
        .unwrap();
    assert!(!sum.part.is_error, "{sum:?}");
    assert!(sum.text.contains("42"), "{}", sum.text);
    let loud = call(&client, "shout", json!({"text": "hello"}))
        .await
        .unwrap();
    assert!(loud.text.contains("HELLO"), "{}", loud.text);
    let failed = call(&client, "fail", json!({"reason": "because"}))
        .await
        .unwrap();
    assert!(failed.part.is_error, "{failed:?}");
    assert!(
        failed.text.contains("failed on purpose: because"),
        "{}",
        failed.text
    );
    client.close().await;
}
