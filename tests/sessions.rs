//! Sessions end to end through the binary: `run --save` then `replay` gives the live parts; replay
//! at a speed and re-parsed under another protocol; every bundled session replays to its recorded
//! parts (the MCP loop's every turn and tool call too); broken files get exit 2 and one line
//! naming the file; no key reaches a saved file.

mod common;
#[path = "../crates/toolscope-core/tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::{assert_code, bin, json_lines, openai_flags, root};
use serde_json::{Value, json};
use support::{End, MockServer, Reply};
use toolscope_core::part::Part;
use toolscope_core::session::{LoopReplay, Replay, ReplayOptions, Session, Step};

const KEY: &str = "sk-session-TOP-SECRET-123456789";

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolscope-sessions-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn replay(file: &Path, extra: &[&str]) -> Output {
    bin().arg("replay").arg(file).args(extra).output().unwrap()
}

#[test]
fn save_then_replay_prints_the_live_parts() {
    let tools = root().join("examples/tools.json");
    for extra in [
        &[][..],
        &["--protocol", "morph-xml"][..],
        &["--tool-choice", "none"][..],
    ] {
        let file = temp(&format!("live{}.json", extra.len()));
        let live = bin()
            .args(["run", "--provider", "demo", "--tools"])
            .arg(&tools)
            .args(extra)
            .arg("--save")
            .arg(&file)
            .arg("What's the weather in Paris for 3 days?")
            .output()
            .unwrap();
        assert_code(&live, 0);
        let replayed = replay(&file, &["--instant", "--jsonl"]);
        assert_eq!(replayed.status.code(), Some(0));
        assert_eq!(stdout(&replayed), stdout(&live), "{extra:?}");
        // The session holds the request, the wire events with their times, and the parts.
        let session = Session::load(&file).unwrap();
        assert!(!session.events.is_empty());
        assert!(session.events.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
        assert_eq!(session.parts.len(), stdout(&live).lines().count());
    }
}

#[test]
fn replay_at_a_speed_and_readable() {
    let file = root().join("sessions/mode-auto.json");
    let fast = replay(&file, &["--speed", "1000", "--jsonl"]);
    let instant = replay(&file, &["--instant", "--jsonl"]);
    assert_eq!(fast.status.code(), Some(0));
    assert_eq!(stdout(&fast), stdout(&instant));
    let readable = replay(&file, &["--instant"]);
    let text = stdout(&readable);
    assert!(text.contains("→ get_weather"), "{text}");
    assert!(text.contains("■ finish: tool-calls"), "{text}");
    assert!(String::from_utf8_lossy(&readable.stderr).contains("mode-auto.json"));
}

#[test]
fn replay_re_parses_under_another_protocol() {
    // A hermes session read as qwen3-coder: the call markup is not qwen's, so no call.
    let file = root().join("sessions/protocol-hermes.json");
    let as_recorded = replay(&file, &["--instant", "--jsonl"]);
    assert!(stdout(&as_recorded).contains("\"type\":\"tool-call\""));
    let as_qwen = replay(
        &file,
        &["--instant", "--jsonl", "--protocol", "qwen3-coder"],
    );
    assert_eq!(as_qwen.status.code(), Some(0));
    assert!(!stdout(&as_qwen).contains("\"type\":\"tool-call\""));
    assert!(stdout(&as_qwen).contains("<tool_call>"));
    // Read natively, the markup is plain text.
    let native = replay(&file, &["--instant", "--jsonl", "--protocol", "native"]);
    assert!(!stdout(&native).contains("\"type\":\"tool-call\""));
    let bad = replay(&file, &["--protocol", "nope"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// `replay --protocol auto` reads every bundled protocol session as the protocol it was recorded
/// with, says so once on stderr, and replays exactly what naming that protocol replays.
#[test]
fn replay_auto_picks_the_recorded_protocol() {
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("sessions")).unwrap() {
        let file = entry.unwrap().path();
        let stem = file.file_stem().unwrap().to_string_lossy().to_string();
        let Some(name) = stem.strip_prefix("protocol-") else {
            continue;
        };
        let name = name.strip_suffix("-forced").unwrap_or(name);
        let auto = replay(&file, &["--instant", "--jsonl", "--protocol", "auto"]);
        assert_eq!(auto.status.code(), Some(0), "{stem}: {auto:?}");
        let err = String::from_utf8_lossy(&auto.stderr);
        assert!(err.contains(&format!("read as {name} (")), "{stem}: {err}");
        let named = replay(&file, &["--instant", "--jsonl", "--protocol", name]);
        assert_eq!(stdout(&auto), stdout(&named), "{stem}");
        seen += 1;
    }
    assert!(seen >= 17, "{seen} protocol sessions");
}

#[test]
fn every_bundled_session_replays_to_its_recorded_parts() {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(root().join("sessions")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            names.push(path);
        }
    }
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    let mut seen_modes = Vec::new();
    let mut seen_protocols = Vec::new();
    let mut seen_providers = Vec::new();
    let mut loops = 0;
    for path in &names {
        let session = Session::load(path).unwrap_or_else(|e| panic!("{e}"));
        let parts: Vec<Part> = Replay::new(&session, ReplayOptions::default())
            .run_to_end()
            .into_iter()
            .filter_map(|e| e.as_part().cloned())
            .collect();
        assert_eq!(parts, session.parts, "{}", path.display());
        // The whole session, loop included: every turn and every recorded call's result.
        let all: Vec<Part> = LoopReplay::new(&session, ReplayOptions::default())
            .run_to_end()
            .into_iter()
            .filter_map(|e| e.as_part().cloned())
            .collect();
        assert_eq!(all, session.all_parts(), "{}", path.display());
        for (_, turn) in session.turn_sessions().iter().skip(1) {
            let parts: Vec<Part> = Replay::new(turn, ReplayOptions::default())
                .run_to_end()
                .into_iter()
                .filter_map(|e| e.as_part().cloned())
                .collect();
            assert_eq!(parts, turn.parts, "{}: a later turn", path.display());
        }
        if session.is_loop() {
            loops += 1;
        }
        let s = session.summary();
        seen_modes.extend(s.tool_choice);
        seen_protocols.extend(s.protocol);
        seen_providers.push(s.provider);
        assert!(session.name.is_some(), "{}", path.display());
    }
    for mode in ["auto", "required", "none"] {
        assert!(
            seen_modes.iter().any(|m| m == mode),
            "no session in mode {mode}"
        );
    }
    assert!(
        seen_modes.iter().any(|m| m.starts_with("tool:")),
        "no forced-tool session"
    );
    // One session per protocol of the registry (scripts/build-sessions.sh records them).
    for p in toolscope_core::protocol::Protocol::names() {
        assert!(seen_protocols.iter().any(|x| x == p), "no {p} session");
    }
    for p in ["anthropic", "gemini", "ollama", "openai-responses"] {
        assert!(seen_providers.iter().any(|x| x == p), "no {p} session");
    }
    // The failures: a malformed call, a cut stream, a rate limit.
    let tail = |name: &str| {
        let s = Session::load(&root().join("sessions").join(name)).unwrap();
        s.parts
            .iter()
            .filter_map(|p| match p {
                Part::Error(e) => e.kind().map(str::to_string),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(tail("failure-malformed-call.json"), ["malformed-tool-call"]);
    assert_eq!(tail("failure-cut-stream.json"), ["provider_unavailable"]);
    assert_eq!(tail("failure-rate-limit.json"), ["provider_rate_limit"]);
    // An MCP loop: the demo model calls a demo MCP tool, reads its result and answers.
    assert_eq!(loops, 1);
    let mcp = Session::load(&root().join("sessions/mcp-loop.json")).unwrap();
    let servers = &mcp.mcp.as_ref().unwrap().servers;
    assert_eq!(
        servers[0].command.as_deref(),
        Some("toolscope serve-mcp-demo")
    );
    let kinds: Vec<&str> = mcp
        .steps
        .iter()
        .map(|s| match s {
            Step::ToolCall(_) => "toolCall",
            Step::Turn(_) => "turn",
            Step::Stop(_) => "stop",
        })
        .collect();
    assert_eq!(kinds, ["toolCall", "turn"]);
    let s = mcp.summary();
    assert_eq!((s.turns, s.tool_calls), (2, 1));
}

/// The bundled loop replays through the binary with the call's result between the turns.
#[test]
fn the_bundled_mcp_loop_replays_with_its_tool_result() {
    let file = root().join("sessions/mcp-loop.json");
    let out = replay(&file, &["--instant", "--jsonl"]);
    assert_eq!(out.status.code(), Some(0));
    let lines = json_lines(&out);
    let at = |t: &str| lines.iter().position(|l| l["type"] == t).unwrap();
    let finishes: Vec<usize> = (0..lines.len())
        .filter(|i| lines[*i]["type"] == "finish")
        .collect();
    assert_eq!(finishes.len(), 2);
    assert!(at("tool-call") < finishes[0]);
    assert!(finishes[0] < at("tool-result") && at("tool-result") < finishes[1]);
    assert_eq!(lines[at("tool-result")]["output"]["city"], "Paris");
    let session = Session::load(&file).unwrap();
    let printed: Vec<String> = session.all_parts().iter().map(Part::to_json_line).collect();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), printed);
}

/// The bundled sessions show tool calling working: every call in them (in every turn of a loop)
/// is valid against its tool's schema, except in the failure demos, which are there to show a
/// failure.
#[test]
fn bundled_sessions_hold_only_valid_calls_outside_the_failure_demos() {
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("sessions")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".json") || name.starts_with("failure-") {
            continue;
        }
        let session = Session::load(&path).unwrap_or_else(|e| panic!("{e}"));
        for part in &session.all_parts() {
            if let Part::ToolCall(call) = part {
                checked += 1;
                assert!(
                    call.invalid.is_empty(),
                    "{name}: {}({}) is invalid: {:?}",
                    call.tool_name,
                    call.input,
                    call.invalid
                );
            }
        }
    }
    assert!(checked >= 8, "only {checked} calls in the bundled sessions");
}

#[test]
fn bundled_sessions_lint_clean_except_those_that_fail_on_purpose() {
    let dir = root().join("sessions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    for path in &files {
        let findings = Session::load(path).unwrap().lint();
        let name = path.file_name().unwrap().to_string_lossy();
        if !name.starts_with("failure-") {
            assert!(findings.is_empty(), "{name}: {findings:?}");
        }
    }
    let findings = Session::load(&dir.join("failure-lint.json"))
        .unwrap()
        .lint();
    let codes: Vec<&str> = findings.iter().map(|f| f.warning.code.as_str()).collect();
    assert_eq!(codes, ["finish-mismatch"]);
    // The live run recorded the same warning among its parts.
    let session = Session::load(&dir.join("failure-lint.json")).unwrap();
    assert!(session.parts.iter().any(|p| matches!(p, Part::Warning(_))));
}

#[test]
fn lint_prints_findings_and_a_summary_and_exits_1_when_any() {
    let sessions = root().join("sessions");
    let lint = |names: [&str; 2]| {
        let files = names.map(|n| sessions.join(n));
        bin().arg("lint").args(files).output().unwrap()
    };
    let clean = lint(["mode-auto.json", "wire-openai-responses.json"]);
    assert_eq!(clean.status.code(), Some(0));
    let lines = json_lines(&clean);
    assert_eq!(
        lines,
        [json!({"type":"summary","files":2,"findings":0,"clean":2})]
    );
    let found = lint(["failure-lint.json", "mode-auto.json"]);
    assert_eq!(found.status.code(), Some(1));
    let lines = json_lines(&found);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["type"], "finding");
    assert_eq!(lines[0]["code"], "finish-mismatch");
    assert!(
        lines[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("failure-lint.json")
    );
    assert!(lines[0]["event"].is_u64());
    assert_eq!(
        lines[1],
        json!({"type":"summary","files":2,"findings":1,"clean":1})
    );
    // A file that is not a session: named on stderr, exit 2, the others still linted.
    let bad = temp("not-a-session.json");
    std::fs::write(&bad, "[1, 2]").unwrap();
    let out = bin()
        .arg("lint")
        .arg(&bad)
        .arg(sessions.join("mode-auto.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not-a-session.json") && err.lines().count() == 1,
        "{err}"
    );
    assert!(stdout(&out).contains("\"files\":1"));
}

#[test]
fn broken_session_files_exit_2_naming_the_file() {
    let good = std::fs::read_to_string(root().join("sessions/mode-auto.json")).unwrap();
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated.json", good.as_bytes()[..good.len() / 3].to_vec()),
        ("empty.json", Vec::new()),
        ("binary.json", (0u8..=255).collect()),
        (
            "newer.json",
            good.replacen("\"version\": 1", "\"version\": 99", 1)
                .into_bytes(),
        ),
    ];
    for (name, bytes) in cases {
        let path = temp(name);
        std::fs::write(&path, bytes).unwrap();
        let out = replay(&path, &["--instant"]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        assert!(out.stdout.is_empty());
        // The playground refuses it the same way, before it takes the terminal.
        let out = bin().arg("--session").arg(&path).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--session {name}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name), "{name}: {err}");
        assert!(out.stdout.is_empty(), "the terminal was not touched");
    }
    let out = replay(&temp("missing.json"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));
    let out = bin()
        .arg("--session")
        .arg(temp("missing.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));
    // A save path in a folder that does not exist is refused before anything is sent.
    let out = bin()
        .args([
            "run",
            "--provider",
            "demo",
            "--save",
            "/no/such/folder/s.json",
            "hi",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
}

#[tokio::test]
async fn no_key_reaches_a_saved_session() {
    // A server that echoes the key back in its stream and in an error.
    let server = MockServer::start(vec![
        Reply::sse_data(
            &[
                json!({"choices":[{"index":0,"delta":{"content": format!("your key is {KEY}")},"finish_reason":"stop"}]}),
                json!("[DONE]"),
            ],
            End::Clean,
        ),
        Reply::json(401, &json!({"error":{"message": format!("Incorrect API key provided: {KEY}")}})),
    ])
    .await;
    let url = server.url();
    for (i, name) in ["echo.json", "echo-401.json"].iter().enumerate() {
        let file = temp(name);
        let url = url.clone();
        let f = file.clone();
        let out = tokio::task::spawn_blocking(move || {
            bin()
                .env("OPENAI_API_KEY", KEY)
                .arg("run")
                .args(openai_flags(&url))
                .arg("--save")
                .arg(&f)
                .arg("hi")
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        assert_eq!(
            out.status.code(),
            Some(i as i32),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let saved = std::fs::read_to_string(&file).unwrap();
        assert!(!saved.contains(KEY), "{name}: the key reached the file");
        assert!(saved.contains("[redacted]"), "{name}");
        let v: Value = serde_json::from_str(&saved).unwrap();
        assert!(v["request"].get("headers").is_none());
    }
    assert!(
        server.recorded()[0].all_text().contains(KEY),
        "the key was sent"
    );
}
