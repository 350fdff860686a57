//! What the root package's test binaries share: the `toolscope` binary without provider keys in
//! its environment, its exit status and JSON-lines output, the first line a started
//! `serve-demo` announces, and whether `python3` has a package.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output};

use serde_json::Value;

/// The flags that send a command to the OpenAI-compatible server at `url`, model `m`.
pub fn openai_flags(url: &str) -> [&str; 6] {
    ["--provider", "openai", "--model", "m", "--base-url", url]
}

/// The `toolscope` binary, with no provider key inherited from the environment.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_toolscope"));
    for k in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
        c.env_remove(k);
    }
    c
}

/// The root package's folder.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Checks the exit status, showing stderr when it is another.
#[track_caller]
pub fn assert_code(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each line of stdout as JSON (a line that is not JSON fails the test).
pub fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Reads a started `serve-demo`'s first stdout line and returns the base URL it announces.
pub fn announced_url(child: &mut Child) -> String {
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .expect("a first line");
    first
        .trim_end()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line: {first:?}"))
        .to_string()
}

/// Whether `python3` can import `module`; the reason when it cannot.
pub fn python_has(module: &str) -> Result<(), String> {
    match Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
    {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .last()
            .unwrap_or("import failed")
            .to_string()),
        Err(e) => Err(format!("python3: {e}")),
    }
}
