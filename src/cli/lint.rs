//! `toolscope lint FILE…`: the stream lint of saved sessions. Each session's wire events are
//! replayed through the decoder of its request, and every finding is printed as one JSON line
//! (`{"type":"finding","file","event","code","message",…}`; in a session with an MCP loop, every
//! model turn is linted and each finding also has `"turn"`, 0 for the first), then one summary
//! line (`{"type":"summary","files","findings","clean"}`). Exit status 1 when anything was found, 2
//! when a file is not a readable session (named on stderr; the other files are still linted).

use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};
use toolscope_core::session::Session;

use super::Output;

#[derive(Args, Debug)]
pub struct LintArgs {
    /// The session files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

pub fn run(args: LintArgs) -> u8 {
    let mut out = Output::stdout();
    let (mut findings, mut clean, mut unreadable) = (0usize, 0usize, 0usize);
    for file in &args.files {
        let session = match Session::load(file) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("toolscope: {e}");
                unreadable += 1;
                continue;
            }
        };
        let found = session.lint();
        if found.is_empty() {
            clean += 1;
        }
        for f in &found {
            let mut line = json!({
                "type": "finding",
                "file": file.display().to_string(),
                "event": f.event,
            });
            if session.is_loop() {
                line["turn"] = json!(f.turn);
            }
            // The warning's own fields (code, message, toolCallId, toolName) follow.
            if let (Value::Object(line), Ok(Value::Object(w))) =
                (&mut line, serde_json::to_value(&f.warning))
            {
                line.extend(w);
            }
            out.line(&line.to_string());
        }
        findings += found.len();
    }
    out.line(
        &json!({
            "type": "summary",
            "files": args.files.len() - unreadable,
            "findings": findings,
            "clean": clean,
        })
        .to_string(),
    );
    out.flush();
    if unreadable > 0 {
        2
    } else {
        u8::from(findings > 0)
    }
}
