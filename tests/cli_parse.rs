//! `toolscope parse` through the real binary: the output contract, the exit statuses, and hostile
//! input through every protocol on both paths (exit 0 or 2, never a panic).

mod common;

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use common::{assert_code, bin, json_lines};
use serde_json::Value;

fn tools_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/tools.json")
}

fn temp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolscope-cli-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The protocols `toolscope protocols` lists, by name.
fn protocol_names() -> Vec<String> {
    let listed = bin().arg("protocols").output().unwrap();
    String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split('\t').next().map(str::to_string))
        .collect()
}

fn parse(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = bin()
        .arg("parse")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

const OUTPUT: &str = "Sure. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}</tool_call> Done.";

#[test]
fn generate_prints_text_and_calls() {
    let tools = tools_file();
    let out = parse(
        &["--protocol", "hermes", "--tools", tools.to_str().unwrap()],
        OUTPUT.as_bytes(),
    );
    assert_code(&out, 0);
    let parts = json_lines(&out);
    let types: Vec<&str> = parts.iter().map(|p| p["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["text", "tool-call", "text"]);
    assert_eq!(
        parts[1]["input"],
        serde_json::json!({"city": "Paris", "days": 3})
    );
    assert_eq!(parts[1]["coercions"][0]["path"], "/days");
}

#[test]
fn stream_prints_incremental_parts_ending_in_finish() {
    let tools = tools_file();
    let file = temp("out.txt", OUTPUT.as_bytes());
    let out = bin()
        .args([
            "parse",
            "--protocol",
            "hermes",
            "--tools",
            tools.to_str().unwrap(),
            "--stream",
            "--chunk-size",
            "3",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let parts = json_lines(&out);
    assert_eq!(parts.first().unwrap()["type"], "text-start");
    let last = parts.last().unwrap();
    assert_eq!(last["type"], "finish");
    assert_eq!(last["finishReason"], "tool-calls");
    let deltas: String = parts
        .iter()
        .filter(|p| p["type"] == "tool-input-delta")
        .map(|p| p["delta"].as_str().unwrap())
        .collect();
    let call = parts.iter().find(|p| p["type"] == "tool-call").unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&deltas).unwrap(),
        call["input"]
    );
}

#[test]
fn live_stream_from_stdin_and_stats() {
    let out = parse(&["--protocol", "hermes", "--stream"], OUTPUT.as_bytes());
    assert_eq!(out.status.code(), Some(0));
    assert!(json_lines(&out).iter().any(|p| p["type"] == "tool-call"));

    let out = parse(
        &[
            "--protocol",
            "hermes",
            "--stream",
            "--chunk-size",
            "1",
            "--stats",
        ],
        OUTPUT.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    let stats = json_lines(&out);
    assert_eq!(stats.len(), 1);
    let s = &stats[0];
    assert_eq!(s["bytes"], OUTPUT.len());
    assert_eq!(s["chunks"], OUTPUT.len());
    assert_eq!(s["toolCalls"], 1);
    assert!(s["parts"].as_u64().unwrap() > 3);
    assert!(s["elapsedMs"].as_f64().unwrap() >= 0.0);
}

#[test]
fn custom_hermes_delimiters() {
    let text = "x <function_call>{\"name\": \"a\", \"arguments\": {}}</function_call> y";
    let out = parse(
        &[
            "--protocol",
            "hermes",
            "--call-start",
            "<function_call>",
            "--call-end",
            "</function_call>",
        ],
        text.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        json_lines(&out)
            .iter()
            .any(|p| p["type"] == "tool-call" && p["toolName"] == "a")
    );
    let out = parse(&["--protocol", "gemma", "--call-start", "<x>"], b"");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_usage_and_bad_files_exit_2_with_one_line() {
    let bad_tools = temp("bad-tools.json", b"[{\"name\": 3}]");
    let cases: Vec<Vec<String>> = vec![
        vec!["--protocol".into(), "nope".into()],
        vec![
            "--protocol".into(),
            "hermes".into(),
            "/definitely/missing/file.txt".into(),
        ],
        vec![
            "--protocol".into(),
            "hermes".into(),
            "--tools".into(),
            "/definitely/missing.json".into(),
        ],
        vec![
            "--protocol".into(),
            "hermes".into(),
            "--tools".into(),
            bad_tools.to_str().unwrap().into(),
        ],
        vec![
            "--protocol".into(),
            "hermes".into(),
            std::env::temp_dir().to_str().unwrap().into(),
        ],
        vec![
            "--protocol".into(),
            "hermes".into(),
            "--chunk-size".into(),
            "3".into(),
        ],
        vec![
            "--protocol".into(),
            "hermes".into(),
            "--stream".into(),
            "--chunk-size".into(),
            "0".into(),
        ],
    ];
    for args in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = parse(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = parse(
        &[
            "--protocol",
            "hermes",
            "--tools",
            bad_tools.to_str().unwrap(),
        ],
        b"",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad-tools.json") && err.contains("\"name\" must be a string"),
        "{err}"
    );
}

/// A real tool list with a Python type name and a draft-07 tuple is read (exit 0), each oddity a
/// warning line on stderr naming the file, the tool and the path.
#[test]
fn odd_tools_files_are_read_with_warnings() {
    let odd = temp(
        "odd-tools.json",
        br#"[{"name":"quote","input_schema":{"type":"object","properties":{"price":{"type":"float"},"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}}]"#,
    );
    let out = parse(
        &["--protocol", "morph-xml", "--tools", odd.to_str().unwrap()],
        b"<quote><price>2.5</price><pair>a, 3</pair></quote>",
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.trim(),
        format!(
            "toolscope: warning: {}: tool \"quote\": /properties/price/type: type \"float\" is read as \"number\"",
            odd.display()
        )
    );
    let call = json_lines(&out)
        .into_iter()
        .find(|p| p["type"] == "tool-call")
        .unwrap();
    assert_eq!(
        call["input"],
        serde_json::json!({"price": 2.5, "pair": ["a", 3]})
    );
    assert!(call.get("invalid").is_none(), "{call}");
}

#[test]
fn hostile_input_never_panics() {
    let deep = "[".repeat(100_000);
    let digits = "9".repeat(100_000);
    let mut random = Vec::with_capacity(200_000);
    let mut x: u32 = 0x1234_5678;
    for _ in 0..200_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        random.push((x & 0xff) as u8);
    }
    let soup: String = [
        "<tool_call>",
        "{",
        "\"",
        "</tool_call>",
        "<get_weather>",
        "<city>",
        "</",
        "<function=",
        "<parameter=x>",
        "```",
        "&amp;",
        "]]>",
        "<![CDATA[",
    ]
    .iter()
    .cycle()
    .take(20_000)
    .copied()
    .collect();
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        ("random", random),
        ("deep", format!("<tool_call>{{\"name\":\"get_weather\",\"arguments\":{deep}</tool_call>\n<get_weather>{deep}</get_weather>\n<write_file>\ncontent: {deep}\n</write_file>").into_bytes()),
        ("digits", format!("<tool_call>{{\"name\":\"get_weather\",\"arguments\":{{\"days\":{digits}}}}}</tool_call><get_weather><days>{digits}</days></get_weather>").into_bytes()),
        ("nul", b"\0<tool_call>\0{\"name\":\"get_weather\"\0}\0</tool_call>\0".to_vec()),
        ("invalid-utf8", b"\xff\xfe<tool_call>{\"name\":\"\xc3\x28\"}</tool_call>\xed\xa0\x80".to_vec()),
        ("soup", soup.into_bytes()),
    ];
    let tools = tools_file();
    for (name, bytes) in &inputs {
        let file = temp(name, bytes);
        for protocol in toolscope_core::protocol::Protocol::names() {
            for mode in [&[][..], &["--stream", "--chunk-size", "7"][..]] {
                let out = bin()
                    .args([
                        "parse",
                        "--protocol",
                        protocol,
                        "--tools",
                        tools.to_str().unwrap(),
                    ])
                    .args(mode)
                    .arg(&file)
                    .output()
                    .unwrap();
                assert!(
                    matches!(out.status.code(), Some(0) | Some(2)),
                    "{name} / {protocol} / {mode:?}: {:?}\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }
}

#[test]
fn protocols_lists_the_registry() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolscope"))
        .arg("protocols")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let listed: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    assert_eq!(listed, toolscope_core::protocol::Protocol::names());
}

/// Every registered protocol has an example output in `examples/outputs/NAME.txt` (the README
/// shows `toolscope parse` on them), and it parses to tool calls of the example tools, with no
/// error, on both paths.
#[test]
fn every_protocol_has_an_example_output_that_parses() {
    let names = protocol_names();
    assert!(names.len() >= 5, "{names:?}");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/outputs");
    let tools = tools_file();
    for name in names {
        let file = dir.join(format!("{name}.txt"));
        assert!(
            file.exists(),
            "no example output for {name}: {}",
            file.display()
        );
        let file = file.to_str().unwrap();
        for stream in [false, true] {
            let mut args = vec![
                "--protocol",
                &name,
                "--tools",
                tools.to_str().unwrap(),
                file,
            ];
            if stream {
                args.push("--stream");
            }
            let out = parse(&args, b"");
            assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
            let parts = json_lines(&out);
            let calls = parts.iter().filter(|p| p["type"] == "tool-call").count();
            assert!(calls >= 1, "{name}: no call in {parts:?}");
            assert!(
                !parts.iter().any(|p| p["type"] == "error"),
                "{name}: {parts:?}"
            );
        }
    }
}

/// `--protocol auto` reads every example output as the protocol it is written in, says so once
/// on stderr, and prints exactly what the named protocol prints: whole, and streamed live from
/// stdin.
#[test]
fn auto_reads_every_example_output_as_its_protocol() {
    let names = protocol_names();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/outputs");
    let tools = tools_file();
    let tools = tools.to_str().unwrap();
    for name in names {
        let text = std::fs::read(dir.join(format!("{name}.txt"))).unwrap();
        for stream in [false, true] {
            let mut named = vec!["--protocol", &name, "--tools", tools, "-"];
            let mut auto = vec!["--protocol", "auto", "--tools", tools, "-"];
            if stream {
                named.push("--stream");
                auto.push("--stream");
            }
            let want = parse(&named, &text);
            let got = parse(&auto, &text);
            assert_eq!(got.status.code(), Some(0), "{name}: {got:?}");
            assert_eq!(
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout),
                "{name}, stream {stream}"
            );
            let err = String::from_utf8_lossy(&got.stderr);
            assert_eq!(
                err.matches("--protocol auto: read as ").count(),
                1,
                "{name}: {err}"
            );
            assert!(err.contains(&format!("read as {name} (")), "{name}: {err}");
        }
    }
    // Named options that need a named protocol are refused with auto.
    let out = parse(&["--protocol", "auto", "--call-start", "<x>", "-"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("need a named protocol"));
}

/// Issue 25, point 9: `parse --stream` prints the parts as they come instead of keeping them
/// all. At 1-byte chunks nearly every byte is a part: 3 MB of input kept as parts peaked above
/// 150 MB; printed as they come, the input itself is most of what is held. Measured with GNU
/// time (`/usr/bin/time -f %M`, the peak resident set in KB): ignored in a plain `cargo test`;
/// `.ci/run` installs it and runs the test.
#[test]
#[ignore = "needs GNU time (/usr/bin/time)"]
fn a_stream_of_tiny_chunks_is_printed_as_it_is_parsed() {
    let time = std::path::Path::new("/usr/bin/time");
    assert!(
        time.exists(),
        "this test needs GNU time: apt-get install -y time"
    );
    let line = "Words before a call. <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>\n";
    let input = line.repeat(3 * 1024 * 1024 / line.len());
    let path = temp("tiny-chunks.txt", input.as_bytes());
    let out = Command::new(time)
        .args(["-f", "peak-kb=%M"])
        .arg(env!("CARGO_BIN_EXE_toolscope"))
        .args([
            "parse",
            "--protocol",
            "hermes",
            "--stream",
            "--chunk-size",
            "1",
        ])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let parts = json_lines(&out);
    assert_eq!(parts.last().unwrap()["type"], "finish");
    let calls = parts.iter().filter(|p| p["type"] == "tool-call").count();
    assert_eq!(calls, input.len() / line.len());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak_kb: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-kb="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    assert!(
        peak_kb < 100 * 1024,
        "parse --stream held {} MB for 3 MB of input",
        peak_kb / 1024
    );
}
