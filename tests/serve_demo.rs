//! `toolscope serve-demo` as a user runs it: the real binary, its first line, a request over
//! HTTP, and its exit status.

mod common;

use std::io::Read;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

fn serve_demo(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_toolscope"))
        .arg("serve-demo")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the toolscope binary starts")
}

/// Reads the first stdout line and returns the base URL it announces, a real port on 127.0.0.1.
fn announced_url(child: &mut Child) -> String {
    let url = common::announced_url(child);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let port: u16 = url["http://127.0.0.1:".len()..]
        .parse()
        .expect("a port number");
    assert_ne!(port, 0, "the real port is announced");
    url
}

/// Kills the child on drop, so a failing assertion never leaves a server running.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a plain HTTP client builds")
}

#[tokio::test]
async fn serves_on_the_announced_port() {
    let mut child = serve_demo(&["--port", "0", "--pace-ms", "0"]);
    let url = announced_url(&mut child);
    let _running = Running(child);

    let body = json!({
        "model": "demo-1",
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
    });
    let response = client()
        .post(format!("{url}/v1/chat/completions"))
        .json(&body)
        .send()
        .await
        .expect("the server answers");
    assert_eq!(response.status(), 200);
    let completion: Value = response.json().await.expect("a JSON body");
    let call = &completion["choices"][0]["message"]["tool_calls"][0]["function"];
    assert_eq!(call["name"], "get_weather");
    assert_eq!(call["arguments"], "{\"city\":\"Paris\"}");

    let models: Value = client()
        .get(format!("{url}/v1/models"))
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("a JSON body");
    assert_eq!(models["object"], "list");
}

#[cfg(unix)]
#[test]
fn sigterm_stops_it_with_status_0() {
    let mut running = Running(serve_demo(&["--port", "0"]));
    announced_url(&mut running.0);
    let status = Command::new("kill")
        .args(["-TERM", &running.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = running.0.wait().expect("the server exits");
    assert_eq!(exit.code(), Some(0));
}

#[test]
fn a_port_in_use_exits_2_with_one_line() {
    let taken = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = taken.local_addr().expect("an address").port().to_string();
    let mut child = serve_demo(&["--port", &port]);
    let exit = child.wait().expect("the command ends");
    assert_eq!(exit.code(), Some(2));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr is piped")
        .read_to_string(&mut stderr)
        .expect("stderr");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.contains(&port), "{stderr}");
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_string(&mut stdout)
        .expect("stdout");
    assert!(stdout.is_empty(), "{stdout:?}");
}
