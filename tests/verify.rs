//! `toolscope verify` as a user runs it: the real binary against the demo model (in-process,
//! and `toolscope serve-demo --persona NAME` as a child process on 127.0.0.1), its scorecard,
//! its JSON report, its failure sessions, and its exit status for bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Instant;

use common::{announced_url, assert_code};
use serde_json::Value;

fn toolscope() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolscope"));
    c.stdin(Stdio::null());
    c
}

/// A fresh folder for one test's files.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolscope-verify-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    dir
}

/// A demo server (with a persona) as a child process; killed on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(persona: Option<&str>) -> Server {
        let mut cmd = toolscope();
        cmd.args(["serve-demo", "--port", "0", "--pace-ms", "0"]);
        if let Some(p) = persona {
            cmd.args(["--persona", p]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve-demo starts");
        let url = announced_url(&mut child);
        Server { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn verify(args: &[&str]) -> Output {
    toolscope()
        .arg("verify")
        .args(args)
        .output()
        .expect("verify runs")
}

fn report(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the JSON report")).expect("JSON")
}

/// The checks whose overall rate is below 100%.
fn faults(report: &Value) -> Vec<String> {
    report["overall"]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|r| r["passed"] != r["total"])
        .map(|r| r["check"].as_str().expect("a name").to_string())
        .collect()
}

#[test]
fn the_demo_scores_100_percent_on_the_bundled_suite() {
    let dir = scratch("demo");
    let json = dir.join("r.json");
    let started = Instant::now();
    let out = verify(&[
        "--provider",
        "demo",
        "--json",
        json.to_str().unwrap(),
        "--failures",
        dir.join("f").to_str().unwrap(),
    ]);
    let took = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("score: 100% of answers fully right (28/28)"),
        "{stdout}"
    );
    let r = report(&json);
    assert_eq!(r["schema"], "toolscope-verify/1");
    assert_eq!(r["complete"], true);
    assert_eq!(r["overall"]["score"], 1.0);
    assert_eq!(r["overall"]["calls"]["f1"], 1.0);
    assert!(faults(&r).is_empty());
    // Every check the issue lists was applied to some answer.
    let names: Vec<&str> = r["overall"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    for want in [
        "answered",
        "tool-choice",
        "calls",
        "schema",
        "schema-as-sent",
        "finish",
        "no-leak",
        "streamed-args",
        "stream-equal",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    assert!(r["overall"]["latency"]["firstTokenMs"].is_number());
    assert!(!dir.join("f").exists(), "no failure, no folder");
    // Its time is a figure to read, not a test's verdict (speed is for benchmarks).
    eprintln!("verify --provider demo took {took:?}");
}

/// Runs the bundled suite against a persona; the checks that fell below 100%.
fn persona_faults(persona: &str) -> (Vec<String>, Value, PathBuf) {
    let server = Server::start(Some(persona));
    let dir = scratch(persona);
    let json = dir.join("r.json");
    let out = verify(&[
        "--provider",
        "openai",
        "--model",
        "demo-1",
        "--base-url",
        &format!("{}/v1", server.url),
        "--json",
        json.to_str().unwrap(),
        "--failures",
        dir.join("failures").to_str().unwrap(),
    ]);
    assert_code(&out, 1);
    let r = report(&json);
    (faults(&r), r, dir)
}

#[test]
fn persona_leak_is_a_leak_and_nothing_else() {
    let (f, _, dir) = persona_faults("leak");
    assert_eq!(f, ["no-leak"]);
    // The failure is a session that replay opens.
    let session = dir.join("failures").join("one-call-run1-streamed.json");
    let out = toolscope()
        .args(["replay", "--instant", "--jsonl"])
        .arg(&session)
        .output()
        .expect("replay runs");
    assert_code(&out, 0);
    let text: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|p| p["type"] == "text-delta")
        .map(|p| p["delta"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(text.contains("<tool_call>"), "{text}");
}

#[test]
fn persona_drop_parallel_loses_calls_and_nothing_else() {
    let (f, r, _) = persona_faults("drop-parallel");
    assert_eq!(f, ["calls"]);
    assert!(r["overall"]["calls"]["recall"].as_f64().unwrap() < 1.0);
    assert_eq!(r["overall"]["calls"]["precision"], 1.0);
}

#[test]
fn persona_empty_args_is_streamed_args_and_nothing_else() {
    let (f, _, dir) = persona_faults("empty-args");
    assert_eq!(f, ["streamed-args"]);
    let codes = lint_codes(&dir.join("failures").join("one-call-run1-streamed.json"));
    assert!(
        codes.contains(&"empty-args-streamed".to_string()),
        "{codes:?}"
    );
}

/// The lint codes `toolscope lint` finds in a saved session.
fn lint_codes(session: &Path) -> Vec<String> {
    let out = toolscope()
        .arg("lint")
        .arg(session)
        .output()
        .expect("lint runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|f| f["type"] == "finding")
        .map(|f| f["code"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn persona_quoted_numbers_is_schema_as_sent_and_nothing_else() {
    let (f, _, dir) = persona_faults("quoted-numbers");
    assert_eq!(f, ["schema-as-sent"]);
    // The stream lint says it of the saved answer too.
    let codes = lint_codes(&dir.join("failures").join("types-run1-streamed.json"));
    assert!(codes.contains(&"type-mismatch".to_string()), "{codes:?}");
}

#[test]
fn persona_ignore_required_is_tool_choice_and_nothing_else() {
    assert_eq!(persona_faults("ignore-required").0, ["tool-choice"]);
}

#[test]
fn persona_stream_differs_is_stream_equal_and_nothing_else() {
    assert_eq!(persona_faults("stream-differs").0, ["stream-equal"]);
}

#[test]
fn persona_call_in_reasoning_is_that_and_nothing_else() {
    let (f, _, dir) = persona_faults("call-in-reasoning");
    assert_eq!(f, ["no-call-in-reasoning"]);
    let codes = lint_codes(&dir.join("failures").join("one-call-run1-whole.json"));
    assert!(
        codes.contains(&"call-in-reasoning".to_string()),
        "{codes:?}"
    );
}

#[test]
fn persona_error_500_third_is_one_unanswered_request() {
    let (f, r, _) = persona_faults("error-500-third");
    assert_eq!(f, ["answered"]);
    let answered = &r["overall"]["checks"][0];
    assert_eq!(answered["check"], "answered");
    assert_eq!(
        answered["total"].as_u64().unwrap() - answered["passed"].as_u64().unwrap(),
        1
    );
    assert_eq!(r["complete"], true);
}

#[test]
fn an_unreachable_endpoint_is_said_and_exits_1() {
    // A port that was free a moment ago: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = scratch("unreachable");
    let json = dir.join("r.json");
    let out = verify(&[
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &format!("http://127.0.0.1:{port}/v1"),
        "--json",
        json.to_str().unwrap(),
        "--no-failures",
        "--concurrency",
        "1",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot answer: provider_unavailable"),
        "{stderr}"
    );
    assert!(stderr.contains("is the server running"), "{stderr}");
    let r = report(&json);
    assert_eq!(r["complete"], false);
    assert_eq!(r["requests"]["done"], 1, "it gave up after the first");
}

#[test]
fn a_broken_suite_exits_2_with_one_line() {
    let dir = scratch("suite");
    let suite = dir.join("bad.toml");
    std::fs::write(&suite, "[[scenario]]\nname = \"a\"\nprompt = 3\n").unwrap();
    let out = verify(&["--provider", "demo", "--suite", suite.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("bad.toml: line 3"), "{stderr}");
}

#[test]
fn a_saved_report_sits_beside_the_live_one() {
    let dir = scratch("against");
    let json = dir.join("a.json");
    let first = verify(&["--provider", "demo", "--json", json.to_str().unwrap()]);
    assert_eq!(first.status.code(), Some(0));
    let out = verify(&[
        "--provider",
        "demo",
        "--against",
        json.to_str().unwrap(),
        "--no-failures",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("[A] score: 100%"), "{stdout}");
    assert!(stdout.contains("[B] score: 100%"), "{stdout}");
}

/// A one-trick HTTP server on 127.0.0.1: every request gets `status` and a body made by
/// `answer` from whether the request asked for a stream. Runs until the test ends.
fn fake_server(status: u16, answer: fn(bool) -> (String, &'static str)) -> String {
    fake_server_keyed(None, status, answer)
}

/// [`fake_server`], that answers 401 to a request without `Authorization: Bearer KEY` when
/// `key` is given.
fn fake_server_keyed(
    key: Option<&'static str>,
    status: u16,
    answer: fn(bool) -> (String, &'static str),
) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                // Headers, then the body by its content-length.
                let (head_end, length) = loop {
                    let n = match conn.read(&mut chunk) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..i]).to_lowercase();
                        let length = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        break (i + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    match conn.read(&mut chunk) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = String::from_utf8_lossy(&buf[head_end..]);
                let stream = body.contains("\"stream\":true");
                let head = String::from_utf8_lossy(&buf[..head_end]).to_lowercase();
                let refused = key.is_some_and(|k| {
                    !head.contains(&format!("authorization: bearer {}", k.to_lowercase()))
                });
                let (status, (text, kind)) = if refused {
                    let body = r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#;
                    (401, (body.to_string(), "application/json"))
                } else {
                    (status, answer(stream))
                };
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
                let _ = conn.write_all(reply.as_bytes());
            });
        }
    });
    url
}

#[test]
fn a_refused_key_is_said_and_exits_1() {
    let url = fake_server(401, |_| {
        (
            r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#.into(),
            "application/json",
        )
    });
    let out = verify(&[
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &url,
        "--no-failures",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot answer: provider_authentication"),
        "{stderr}"
    );
    assert!(stderr.contains("OPENAI_API_KEY"), "{stderr}");
    assert!(!stderr.contains("sk-"), "{stderr}");
}

#[test]
fn a_model_that_answers_nothing_is_said_and_exits_1() {
    let url = fake_server(200, |stream| {
        if stream {
            (
                concat!(
                    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
                    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                    "data: [DONE]\n\n"
                )
                .into(),
                "text/event-stream",
            )
        } else {
            (
                r#"{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}"#.into(),
                "application/json",
            )
        }
    });
    let out = verify(&[
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &url,
        "--no-failures",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("the model answered nothing"), "{stderr}");
    assert!(stdout.contains("score: 0%"), "{stdout}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_halfway_prints_what_was_measured_and_exits_130() {
    // A slow demo server in this process: the test knows when a request is under way.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(toolscope_demo::serve(
            "127.0.0.1:0".parse().unwrap(),
            toolscope_demo::DemoOptions {
                pace: std::time::Duration::from_millis(40),
            },
        ))
        .unwrap();
    let mut stats = server.watch_stats();
    let dir = scratch("ctrl-c");
    let json = dir.join("r.json");
    let child = toolscope()
        .args([
            "verify",
            "--provider",
            "openai",
            "--model",
            "demo-1",
            "--no-failures",
        ])
        .args(["--concurrency", "1", "--base-url", &server.base_url()])
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Three answers finished: then stop it.
    runtime
        .block_on(stats.wait_for(|s| s.streams_finished >= 2 && s.requests >= 4))
        .unwrap();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("stopped after"), "{stderr}");
    assert!(stdout.contains("INCOMPLETE"), "{stdout}");
    let r = report(&json);
    assert_eq!(r["complete"], false);
    let done = r["requests"]["done"].as_u64().unwrap();
    assert!((3..28).contains(&done), "{done}");
}

/// Chromium from the Debian package, if installed.
fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
}

#[test]
#[ignore = "needs chromium (the Debian package) to load the HTML report headless"]
fn the_html_report_renders_in_a_headless_browser_without_console_errors() {
    let browser = chromium().expect("chromium is installed");
    let server = Server::start(Some("drop-parallel"));
    let dir = scratch("html");
    let html = dir.join("report.html");
    let out = verify(&[
        "--provider",
        "openai",
        "--model",
        "demo-1",
        "--base-url",
        &format!("{}/v1", server.url),
        "--report",
        html.to_str().unwrap(),
        "--failures",
        dir.join("f").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let page = std::fs::read_to_string(&html).unwrap();
    // Self-contained: nothing to fetch, no script.
    assert!(!page.contains("<script"), "no script");
    for attr in ["src=\"http", "href=\"http", "url(http"] {
        assert!(!page.contains(attr), "{attr}");
    }
    let run = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!("file://{}", html.display()))
        .env("HOME", &dir)
        .output()
        .expect("chromium runs");
    let log = String::from_utf8_lossy(&run.stderr);
    let dom = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{log}");
    // Any console message (an error, a blocked fetch under the page's CSP) is a failure.
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "{console:#?}");
    assert!(dom.contains("<h1>toolscope verify</h1>"), "{dom}");
    assert!(dom.contains("<svg"), "the chart");
    assert!(dom.contains("parallel-two · run 1 · streamed"), "a failure");
    assert!(dom.contains("Raw stream"), "its raw stream");
}

#[test]
fn a_second_endpoint_runs_beside_the_first() {
    let server = Server::start(Some("ignore-required"));
    let dir = scratch("against-live");
    let json = dir.join("a.json");
    let out = verify(&[
        "--provider",
        "demo",
        "--against",
        &format!("{}/v1", server.url),
        "--against-model",
        "demo-1",
        "--json",
        json.to_str().unwrap(),
        "--failures",
        dir.join("f").to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("[A] score: 100%"), "{stdout}");
    assert!(stdout.contains("[B] score: 92.9%"), "{stdout}");
    assert!(stdout.contains("✗ B: tool-choice"), "{stdout}");
    // The second endpoint's failures go to their own folder.
    assert!(
        dir.join("f")
            .join("against")
            .join("required-run1-streamed.json")
            .is_file()
    );
    // --json is the first endpoint's report.
    assert!(faults(&report(&json)).is_empty());
}

/// A plain text answer, streamed or whole.
fn text_answer(stream: bool) -> (String, &'static str) {
    if stream {
        (
            concat!(
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Sunny.\"}}]}\n\n",
                "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
                "data: [DONE]\n\n"
            )
            .into(),
            "text/event-stream",
        )
    } else {
        (
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Sunny."},"finish_reason":"stop"}]}"#.into(),
            "application/json",
        )
    }
}

/// Issue 29: `--against` has its own provider, model and key. The demo (provider demo) beside an
/// OpenAI-compatible server that only answers with its own key, read from the variable
/// `--against-key-env` names; without that flag the second endpoint gets no key and refuses.
#[test]
fn the_second_endpoint_has_its_own_provider_model_and_key() {
    const KEY: &str = "sk-second-endpoint-0123456789";
    let url = fake_server_keyed(Some(KEY), 200, text_answer);
    let run = |key_env: bool| {
        let mut cmd = toolscope();
        cmd.env_remove("OPENAI_API_KEY")
            .env("TOOLSCOPE_TEST_B_KEY", KEY)
            .args(["verify", "--provider", "demo", "--no-failures"])
            .args(["--against", &url, "--against-provider", "openai"])
            .args(["--against-model", "served-model"]);
        if key_env {
            cmd.args(["--against-key-env", "TOOLSCOPE_TEST_B_KEY"]);
        }
        let out = cmd.output().expect("verify runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !stdout.contains(KEY) && !stderr.contains(KEY),
            "the key never shows"
        );
        (out.status.code(), stdout, stderr)
    };
    let (code, stdout, stderr) = run(true);
    assert_eq!(
        code,
        Some(1),
        "B answers in text: its calls fail\n{stdout}{stderr}"
    );
    assert!(stdout.contains("[A] demo demo-1"), "{stdout}");
    assert!(
        stdout.contains(&format!("[B] openai served-model at {url}")),
        "{stdout}"
    );
    assert!(stdout.contains("[A] score: 100%"), "{stdout}");
    assert!(!stderr.contains("provider_authentication"), "{stderr}");
    assert!(
        stdout.contains("✗ B: tool-choice") || stdout.contains("✗ B: calls"),
        "{stdout}"
    );
    // Without its key the second endpoint refuses, and says which variable was not set.
    let (code, _, stderr) = run(false);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("[B] openai served-model") && stderr.contains("provider_authentication"),
        "{stderr}"
    );
}

/// The second endpoint on another wire: the first through the Chat Completions wire (openai),
/// the second through the Responses wire (openai-responses) of a demo server whose parser drops
/// the second parallel call. Both are loopback demo servers started as child processes.
#[test]
fn the_second_endpoint_may_speak_another_wire() {
    let plain = Server::start(None);
    let faulty = Server::start(Some("drop-parallel"));
    let out = verify(&[
        "--provider",
        "openai",
        "--base-url",
        &format!("{}/v1", plain.url),
        "--model",
        "demo-1",
        "--against",
        &format!("{}/v1", faulty.url),
        "--against-provider",
        "openai-responses",
        "--against-model",
        "demo-1",
        "--no-failures",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("[A] openai demo-1"), "{stdout}{stderr}");
    assert!(
        stdout.contains("[B] openai-responses demo-1"),
        "{stdout}{stderr}"
    );
    assert!(stdout.contains("[A] score: 100%"), "{stdout}{stderr}");
    // The second endpoint's fault, and only that, on its own wire.
    assert!(stdout.contains("[B] score: 85.7%"), "{stdout}{stderr}");
    let parallel = stdout
        .lines()
        .find(|l| l.starts_with("parallel-two "))
        .expect("the parallel-two row");
    assert!(parallel.ends_with("✗ B: calls"), "{parallel}");
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
}

#[test]
fn bad_against_flags_are_usage_errors() {
    let out = verify(&[
        "--provider",
        "demo",
        "--against",
        "http://127.0.0.1:9/v1",
        "--against-provider",
        "ollama",
        "--against-model",
        "m",
        "--against-key-env",
        "TOOLSCOPE_TEST_UNSET_VAR",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the provider ollama takes no key"),
        "{stderr}"
    );
    let out = verify(&[
        "--provider",
        "demo",
        "--against",
        "http://127.0.0.1:9/v1",
        "--against-provider",
        "openai",
        "--against-key-env",
        "TOOLSCOPE_TEST_UNSET_VAR",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--against-model is required for openai"),
        "{stderr}"
    );
}

#[test]
fn list_needs_no_provider_and_a_run_does() {
    let out = verify(&["--list"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.lines().count() >= 10, "{stdout}");
    assert!(stdout.contains("parallel-two"), "{stdout}");
    let out = verify(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--provider"), "{stderr}");
    // The usage names the other way too.
    assert!(stderr.contains("verify --list"), "{stderr}");
}
