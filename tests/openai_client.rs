//! The official `openai` Python package, a real client, streams a forced tool call from
//! `toolscope serve-demo`, through Chat Completions and through the Responses API; the arguments
//! it accumulates must parse to what the demo model meant (the tool-call input toolscope's own
//! decoder gives for the same request on the same wire).
//!
//! Needs `python3` with `openai` installed, so the tests are ignored in a plain `cargo test`;
//! `.ci/run` installs it and runs them.

mod common;

use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs python3 with the openai package"]
fn openai_python_client_streams_a_forced_tool_call_from_serve_demo() {
    python_client_streams_the_forced_call("chat", "demo");
}

#[test]
#[ignore = "needs python3 with the openai package"]
fn openai_python_client_streams_a_forced_call_from_the_responses_api_of_serve_demo() {
    python_client_streams_the_forced_call("responses", "openai-responses");
}

/// Runs the Python client on `api` against a fresh `serve-demo`, and `toolscope run` with
/// `provider` (the same wire) on the same request.
fn python_client_streams_the_forced_call(api: &str, provider: &str) {
    if let Err(why) = common::python_has("openai") {
        panic!("this test needs python3 with the openai package ({why}): pip install openai");
    }
    let exe = env!("CARGO_BIN_EXE_toolscope");
    let mut server = Killed(
        Command::new(exe)
            .args(["serve-demo", "--port", "0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start serve-demo"),
    );
    let url = common::announced_url(&mut server.0);
    let base = format!("{url}/v1");

    let tools = json!([{
        "name": "get_weather",
        "description": "Current weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }]);
    let prompt = "What's the weather in Paris?";
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/openai_client.py");
    let out = Command::new("python3")
        .args([script, &base, &tools.to_string(), prompt, api])
        .output()
        .expect("run the python client");
    assert!(
        out.status.success(),
        "python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(got["name"], "get_weather");
    let ended = if api == "responses" {
        "completed"
    } else {
        "tool_calls"
    };
    assert_eq!(got["finish_reason"], ended, "{got}");
    let args: Value = serde_json::from_str(got["arguments"].as_str().unwrap())
        .expect("the accumulated arguments are JSON");

    // What the demo meant: the same request through toolscope's decoder.
    let dir = std::env::temp_dir().join(format!("toolscope-pyclient-{api}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tools_file = dir.join("tools.json");
    std::fs::write(&tools_file, tools.to_string()).unwrap();
    let run = Command::new(exe)
        .args(["run", "--provider", provider, "--model", "demo-1"])
        .args(["--base-url", &base, "--tools"])
        .arg(&tools_file)
        .args(["--tool-choice", "tool:get_weather", prompt])
        .output()
        .expect("toolscope run");
    std::fs::remove_dir_all(&dir).ok();
    let parts: Vec<Value> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let meant = parts
        .iter()
        .find(|p| p["type"] == "tool-call")
        .unwrap_or_else(|| panic!("toolscope saw no call: {parts:?}"));
    assert_eq!(meant["toolName"], "get_weather");
    assert_eq!(
        args, meant["input"],
        "the client's arguments are what the demo meant"
    );
    assert!(args["city"].is_string(), "{args}");
}
