//! Sessions: a run kept as a file, to be opened, replayed, re-parsed and re-sent later.
//!
//! A session holds the request (never a key), every raw wire event with its time offset from the
//! request, and the parts the run produced. Replay feeds the recorded wire events through the
//! same decoder as a live run ([`Replay`]), so a replayed session behaves exactly like the live
//! one, and can be re-read under another protocol or another tool schema. The format is
//! versioned: [`Session::from_json`] reads every version up to [`VERSION`] (upgrading older
//! ones) and says clearly when a file is newer than this toolscope. Files are written
//! atomically: to a temporary file in the same folder, then renamed over the target.
//!
//! A session may also hold an MCP tool loop (`toolscope run --mcp … --execute`): the servers
//! used, and after the first model turn every `tools/call` with its result as received and every
//! further turn, each with its time ([`Step`]). Replay shows the loop exactly as it ran
//! ([`Session::segments`], [`LoopReplay`]) and never runs a tool or needs a server.
//!
//! The format, one JSON object:
//!
//! ```text
//! {
//!   "format": "toolscope-session",
//!   "version": 1,                         // 2 when "mcp" or "steps" is present
//!   "name": "weather in Paris",          // optional
//!   "createdAt": "2026-11-21T04:30:00Z",  // UTC
//!   "toolscope": "0.1.0",                 // the version that wrote it
//!   "mcp": {                              // optional (version 2): the MCP servers used
//!     "servers": [
//!       {"name": "weather", "command": "weather-mcp --stdio"},
//!       {"name": "notes", "url": "http://127.0.0.1:8000/mcp", "tokenEnv": "NOTES_TOKEN"}
//!     ],                                  // never a token: only its variable's name
//!     "tools": [ {"server": "weather", "name": "get_weather",
//!                 "offeredAs": "get_weather"}, … ]   // which server served each offered tool
//!   },
//!   "request": { … },                     // provider, model, baseUrl, system, messages, tools,
//!                                         // toolChoice, protocol (or detectProtocol: true
//!                                         // for auto), sampling, stream, timeouts
//!   "events": [ {"atMs": 12, "data": "…"}, … ],   // raw wire events; a failed response's body
//!                                         // also has "status" and "retryAfter"
//!   "endedAtMs": 812,
//!   "end": [ … ],                         // parts that ended the run without a wire event
//!                                         // (a refused connection, a timeout); usually absent
//!   "parts": [ … ],                       // every part, as the live run produced them
//!   "steps": [                            // optional (version 2): the loop after the first turn
//!     {"type": "toolCall", "atMs": 815, "endedAtMs": 821, "server": "weather",
//!      "name": "get_weather",             // the tool's name on its server
//!      "toolName": "get_weather",         // the name the model called
//!      "toolCallId": "call_0", "arguments": {"city": "Paris"},
//!      "result": {"content": [ … ], "structuredContent": { … }}},  // the CallToolResult as
//!                                         // received; or "error": "…" when the call failed
//!     {"type": "turn", "atMs": 822, "request": { … }, "events": [ … ], "endedAtMs": 640,
//!      "end": [ … ], "parts": [ … ]},     // a further model turn
//!     {"type": "stop", "atMs": 1500, "parts": [ … ]}   // the loop stopped by itself (the
//!                                         // max-steps warning)
//!   ]
//! }
//! ```
//!
//! The top-level `request`, `events`, `endedAtMs`, `end` and `parts` are always the first model
//! turn, so [`Replay`] of a loop session replays that turn. Times: a step's `atMs` (and a call's
//! `endedAtMs`) count from the first request; a turn's `events` and `endedAtMs` count from that
//! turn's own request, as a run gives them, so each turn replays through the same machinery as a
//! one-turn session ([`Session::turn_sessions`]).
//!
//! Versions: 1 is the one-turn session; 2 adds `mcp` and `steps`. A file is written as version 1
//! whenever it holds neither (so a plain session stays readable by a toolscope that knows only
//! version 1) and as version 2 otherwise, so that such a toolscope refuses a loop as too new
//! rather than dropping the loop without a word. Both are read.

pub mod journal;
mod record;
mod replay;
mod steps;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::part::{Part, Warning};
use crate::provider::{Decoder, RawEvent, Request, RunEvent};

pub use record::{Recorder, raw_dropped_warning};
pub use replay::{LoopReplay, LoopStep, Replay, ReplayOptions, ReplayStep, Segment};
pub use steps::{
    LoopStop, McpRecord, McpServerRecord, McpToolRecord, RecordedCall, RecordedOutcome,
    RecordedTurn, Step,
};

/// The value of the `format` field.
pub const FORMAT: &str = "toolscope-session";
/// The newest format version this toolscope reads, and the one it writes for a session with an
/// MCP loop (a one-turn session is written as version 1; see the module documentation).
pub const VERSION: u32 = 2;

/// One recorded run, or a recorded MCP tool loop.
///
/// Serialised, its `version` is always the one its content needs
/// ([`Session::format_version`]), whatever the field says.
#[derive(Clone, Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Always [`FORMAT`]; tells a session apart from any other JSON file.
    pub format: String,
    /// The format version: once loaded or recorded, the one its content needs
    /// ([`Session::format_version`]; older files are upgraded).
    pub version: u32,
    /// A name a person gave the session; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When the session was made from the run, as RFC 3339 UTC (`2026-11-21T04:30:00Z`).
    pub created_at: String,
    /// The version of toolscope that wrote the file.
    pub toolscope: String,
    /// The MCP servers the tools came from, and which served each tool; absent when no MCP
    /// server was used.
    #[serde(default)]
    pub mcp: Option<McpRecord>,
    /// What was sent, without any key (for a loop, the first turn's request).
    pub request: Request,
    /// Every raw wire event, in arrival order, each with its offset from the request; replay feeds
    /// these to the decoder again.
    pub events: Vec<RawEvent>,
    /// When the run ended, in milliseconds since the request was sent.
    #[serde(default)]
    pub ended_at_ms: u64,
    /// Parts that ended the run without any wire event behind them (a refused connection, a
    /// timeout); empty in most sessions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end: Vec<Part>,
    /// Every part, in the order the live run produced them (for a loop, the first turn's).
    #[serde(default)]
    pub parts: Vec<Part>,
    /// The MCP loop after the first model turn, in order; empty for a one-turn session.
    #[serde(default)]
    pub steps: Vec<Step>,
    /// A re-reading of the recorded answer that was on screen when the session was saved (the
    /// playground's F8: another protocol, or other tools); absent when it was saved as
    /// recorded. What was sent and received is `request`, `events` and `parts` either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reparse: Option<Reparse>,
}

/// How a saved session's answer was re-read when it was saved, and what that reading gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reparse {
    /// The protocol it was read with: a protocol's name, `native`, or `auto`.
    pub protocol: String,
    /// The tools it was coerced and validated against (a JSON array of tool definitions);
    /// absent when they were the request's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Value>,
    /// The parts of that reading, in order.
    pub parts: Vec<Part>,
}

impl Serialize for Session {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Out<'a> {
            format: &'a str,
            version: u32,
            #[serde(skip_serializing_if = "Option::is_none")]
            name: Option<&'a str>,
            created_at: &'a str,
            toolscope: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            mcp: Option<&'a McpRecord>,
            request: &'a Request,
            events: &'a [RawEvent],
            ended_at_ms: u64,
            #[serde(skip_serializing_if = "none")]
            end: &'a [Part],
            parts: &'a [Part],
            #[serde(skip_serializing_if = "none")]
            steps: &'a [Step],
            #[serde(skip_serializing_if = "Option::is_none")]
            reparse: Option<&'a Reparse>,
        }
        Out {
            format: &self.format,
            version: self.format_version(),
            name: self.name.as_deref(),
            created_at: &self.created_at,
            toolscope: &self.toolscope,
            mcp: self.mcp.as_ref(),
            request: &self.request,
            events: &self.events,
            ended_at_ms: self.ended_at_ms,
            end: &self.end,
            parts: &self.parts,
            steps: &self.steps,
            reparse: self.reparse.as_ref(),
        }
        .serialize(s)
    }
}

/// Whether a borrowed list is empty (for `skip_serializing_if`).
fn none<T>(list: &&[T]) -> bool {
    list.is_empty()
}

/// Why a session file cannot be used; displays as one line naming the file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct SessionError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong with it, as one phrase.
    pub problem: String,
}

/// One finding of the stream lint in a saved session: the warning, and the wire event that
/// revealed it.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The model turn it is in: 0 for the first (the only one of a one-turn session), then each
    /// turn of the loop in order.
    pub turn: usize,
    /// The index of the wire event in that turn's `events`; the closing step (after the last
    /// event, where the answer's own checks run) has index `events.len()`.
    pub event: usize,
    /// What was found.
    pub warning: Warning,
}

impl Session {
    /// The stream lint of this session: each model turn's wire events replayed through the
    /// decoder of its request, every warning collected with the turn and the event behind it. A
    /// live run and a replay give the same warnings as parts; this is the offline form
    /// (`toolscope lint`).
    pub fn lint(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        for (turn, (_, session)) in self.turn_sessions().iter().enumerate() {
            let mut decoder = Decoder::new(&session.request);
            let mut collect = |event: usize, events: Vec<RunEvent>| {
                for e in events {
                    if let RunEvent::Part(Part::Warning(w)) = e
                        && !w.is_notice()
                    {
                        out.push(Finding {
                            turn,
                            event,
                            warning: *w,
                        });
                    }
                }
            };
            for (i, raw) in session.events.iter().enumerate() {
                collect(i, decoder.push_raw(raw));
            }
            collect(session.events.len(), decoder.finish());
        }
        out
    }

    /// The provider, model, tool choice and protocol (of the first turn), as a picker shows
    /// them, and how much the session holds.
    pub fn summary(&self) -> SessionSummary {
        let r = &self.request;
        let turns = self.turn_sessions();
        SessionSummary {
            name: self.name.clone(),
            created_at: self.created_at.clone(),
            provider: r.provider.name().to_string(),
            model: r.model.clone(),
            tool_choice: r.tool_choice.as_ref().map(|c| c.label()),
            protocol: match &r.protocol {
                Some(p) => Some(p.name().to_string()),
                None if r.detect_protocol => Some("auto".to_string()),
                None => None,
            },
            events: turns.iter().map(|(_, s)| s.events.len()).sum(),
            turns: turns.len(),
            tool_calls: self
                .steps
                .iter()
                .filter(|s| matches!(s, Step::ToolCall(_)))
                .count(),
        }
    }

    /// The format version this session's content needs: 2 with an MCP record or loop steps, 1
    /// otherwise. It is the version written.
    pub fn format_version(&self) -> u32 {
        if self.mcp.is_some() || !self.steps.is_empty() {
            2
        } else {
            1
        }
    }

    /// Whether the session holds more than its first model turn (an MCP loop's steps).
    pub fn is_loop(&self) -> bool {
        !self.steps.is_empty()
    }

    /// Every model turn as a one-turn session of its own, with the time its request was sent
    /// (milliseconds since the first request): this session's first turn at 0, then each turn
    /// of the loop. Each replays with [`Replay::new`], under the same [`ReplayOptions`].
    pub fn turn_sessions(&self) -> Vec<(u64, Session)> {
        let mut turns = vec![(0, self.first_turn())];
        for step in &self.steps {
            if let Step::Turn(t) = step {
                turns.push((t.at_ms, self.turn_session(t)));
            }
        }
        turns
    }

    /// This session without its MCP record and loop: the first model turn alone.
    pub fn first_turn(&self) -> Session {
        self.one_turn(
            &self.request,
            &self.events,
            self.ended_at_ms,
            &self.end,
            &self.parts,
        )
    }

    /// A later turn of this session's loop as a one-turn session.
    pub fn turn_session(&self, turn: &RecordedTurn) -> Session {
        self.one_turn(
            &turn.request,
            &turn.events,
            turn.ended_at_ms,
            &turn.end,
            &turn.parts,
        )
    }

    /// A one-turn session of this session's header and the given turn.
    fn one_turn(
        &self,
        request: &Request,
        events: &[RawEvent],
        ended_at_ms: u64,
        end: &[Part],
        parts: &[Part],
    ) -> Session {
        Session {
            format: self.format.clone(),
            version: 1,
            name: self.name.clone(),
            created_at: self.created_at.clone(),
            toolscope: self.toolscope.clone(),
            mcp: None,
            request: request.clone(),
            events: events.to_vec(),
            ended_at_ms,
            end: end.to_vec(),
            parts: parts.to_vec(),
            steps: Vec::new(),
            reparse: None,
        }
    }

    /// Every part the session's run printed, in order: each turn's, each call's `tool-result`
    /// (or `error`), and the loop's stop. For a one-turn session, its `parts`.
    pub fn all_parts(&self) -> Vec<Part> {
        let mut all = self.parts.clone();
        for step in &self.steps {
            match step {
                Step::ToolCall(c) => all.extend(c.parts()),
                Step::Turn(t) => all.extend(t.parts.iter().cloned()),
                Step::Stop(s) => all.extend(s.parts.iter().cloned()),
            }
        }
        all
    }

    /// How long the whole session ran, in milliseconds since the first request: the end of its
    /// last turn, call or stop.
    pub fn duration_ms(&self) -> u64 {
        let mut end = self.ended_at_ms;
        for step in &self.steps {
            let at = match step {
                Step::ToolCall(c) => c.ended_at_ms.max(c.at_ms),
                Step::Turn(t) => t.at_ms + t.ended_at_ms,
                Step::Stop(s) => s.at_ms,
            };
            end = end.max(at);
        }
        end
    }

    /// Reads a session from its JSON text, upgrading an older version.
    pub fn from_json(text: &str) -> Result<Session, String> {
        if text.trim().is_empty() {
            return Err("the file is empty, not a session".into());
        }
        let json_error = |e: serde_json::Error| {
            if e.is_eof() {
                format!(
                    "the file is cut short (truncated JSON at line {}, column {})",
                    e.line(),
                    e.column()
                )
            } else {
                format!(
                    "not a session: invalid JSON at line {}, column {}: {e}",
                    e.line(),
                    e.column()
                )
            }
        };
        // The header first, skipping over the rest, so that a file from another program or a
        // newer toolscope is named as such rather than failing on some field.
        #[derive(Deserialize)]
        struct Header {
            format: Option<Value>,
            /// Present (null included) or missing.
            #[serde(default, deserialize_with = "present")]
            version: Option<Value>,
        }
        fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
            Value::deserialize(d).map(Some)
        }
        if !text.trim_start().starts_with('{') {
            // Not an object: say whether it is JSON at all.
            return Err(match serde_json::from_str::<Value>(text) {
                Ok(_) => "not a session: the JSON is not an object".into(),
                Err(e) => json_error(e),
            });
        }
        let header: Header = match serde_json::from_str(text) {
            Ok(h) => h,
            Err(e) if e.is_data() => return Err("not a session: the JSON is not an object".into()),
            Err(e) => return Err(json_error(e)),
        };
        match header.format.as_ref().map(|f| f.as_str()) {
            Some(Some(FORMAT)) => {}
            Some(Some(other)) => {
                return Err(format!("not a toolscope session (format \"{other}\")"));
            }
            Some(None) => return Err("not a toolscope session (\"format\" is not a string)".into()),
            None => return Err("not a toolscope session (no \"format\" field)".into()),
        }
        let version = match header.version.as_ref() {
            Some(v) => match v.as_u64() {
                Some(n) => n,
                None => return Err(bad_version(v)),
            },
            None => return Err("the session has no format version (no \"version\" field)".into()),
        };
        if version > VERSION as u64 {
            return Err(format!(
                "the session was written by a newer toolscope (format version {version}; this toolscope reads versions up to {VERSION}): update toolscope to open it"
            ));
        }
        if version == 0 {
            return Err("format version 0 does not exist".into());
        }
        let mut session = match serde_json::from_str::<Session>(text) {
            Ok(s) => s,
            Err(e) => return Err(invalid(text, e)),
        };
        upgrade(&mut session, version as u32)?;
        session.version = session.format_version();
        Ok(session)
    }

    /// Reads a session file; every problem is one line naming the file.
    pub fn load(path: &Path) -> Result<Session, SessionError> {
        let err = |problem: String| SessionError {
            path: path.to_path_buf(),
            problem,
        };
        if path.is_dir() {
            return Err(err("is a folder, not a session file".into()));
        }
        let bytes = fs::read(path).map_err(|e| err(e.to_string()))?;
        let text = String::from_utf8(bytes)
            .map_err(|_| err("not a session: binary data, not JSON text".into()))?;
        Session::from_json(&text).map_err(err)
    }

    /// Writes the session atomically: a temporary file beside `path`
    /// (`.NAME.toolscope-PID.tmp`), then a rename. Temporary files that killed saves left in the folder are removed first (see
    /// [`clean_leftovers`]).
    pub fn save(&self, path: &Path) -> Result<(), SessionError> {
        let err = |problem: String| SessionError {
            path: path.to_path_buf(),
            problem,
        };
        let json =
            serde_json::to_vec_pretty(self).map_err(|e| err(format!("cannot serialise: {e}")))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let file_name = path
            .file_name()
            .ok_or_else(|| err("not a file name".into()))?;
        clean_leftovers(&dir);
        let tmp = dir.join(temp_name(&file_name.to_string_lossy()));
        let write = || -> std::io::Result<()> {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&json)?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            fs::rename(&tmp, path)?;
            // Make the rename itself durable where the platform allows opening a folder.
            if let Ok(d) = fs::File::open(&dir) {
                let _ = d.sync_all();
            }
            Ok(())
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            err(e.to_string())
        })
    }
}

/// How old a temporary file of a save must be to be taken as left behind whoever wrote it (a
/// process id can be reused, and not every platform tells whether one is alive).
const LEFTOVER_AGE: std::time::Duration = std::time::Duration::from_secs(86_400);

/// The temporary file an atomic save of `file_name` writes first, named after this process:
/// `.NAME.toolscope-PID.tmp` (hidden, and unlike any other program's).
pub fn temp_name(file_name: &str) -> String {
    format!(".{file_name}.toolscope-{}.tmp", std::process::id())
}

/// Removes from `dir` the temporary files of saves that were killed before their rename: only
/// names of [`temp_name`]'s pattern, and only when process PID is
/// gone (where that can be told: Linux) or the file is older than a day. A file of a process
/// still running is a save in progress (perhaps this process's, on another thread) and stays.
/// Best effort: what cannot be read or removed is left.
pub fn clean_leftovers(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(leftover_pid) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let old = meta
            .modified()
            .ok()
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > LEFTOVER_AGE);
        let gone = pid != std::process::id() && process_gone(pid);
        if old || gone {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// The process id in a name of the temporary-file pattern `.NAME.toolscope-PID.tmp`.
fn leftover_pid(name: &str) -> Option<u32> {
    let inner = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, pid) = inner.rsplit_once(".toolscope-")?;
    if stem.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` is known to be gone (only where the platform tells: Linux's `/proc`).
fn process_gone(pid: u32) -> bool {
    cfg!(target_os = "linux")
        && Path::new("/proc/self").exists()
        && !Path::new("/proc").join(pid.to_string()).exists()
}

/// What is wrong with a `version` field that is not a whole number.
fn bad_version(v: &Value) -> String {
    let expected = format!("expected a number (a format version from 1 to {VERSION})");
    match v {
        Value::String(s) => {
            let shown: String = s.chars().take(20).collect();
            format!("\"version\" is a string ({shown:?}), {expected}")
        }
        Value::Number(n) => format!(
            "\"version\" is {n}, expected a whole number (a format version from 1 to {VERSION})"
        ),
        Value::Null => format!("\"version\" is null, {expected}"),
        Value::Bool(b) => format!("\"version\" is {b}, {expected}"),
        Value::Array(_) => format!("\"version\" is a list, {expected}"),
        Value::Object(_) => format!("\"version\" is an object, {expected}"),
    }
}

/// Older versions are upgraded here, one step at a time. Version 2 only added fields (`mcp`,
/// `steps`) that a version 1 file leaves out, so a version 1 file reads as it is.
fn upgrade(_session: &mut Session, version: u32) -> Result<(), String> {
    match version {
        1 | VERSION => Ok(()),
        v => Err(format!("format version {v} cannot be upgraded")),
    }
}

/// Why a session's JSON does not read as a session, naming the part that is wrong where it can:
/// the MCP record, or the loop step (counted from 1) that is malformed.
fn invalid(text: &str, e: serde_json::Error) -> String {
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return format!("not a valid session: {e}");
    };
    if let Some(mcp) = value.get("mcp").filter(|m| !m.is_null())
        && let Err(e) = McpRecord::deserialize(mcp)
    {
        return format!("not a valid session: its \"mcp\" record: {e}");
    }
    match value.get("steps") {
        Some(Value::Array(steps)) => {
            for (i, step) in steps.iter().enumerate() {
                if let Err(e) = Step::deserialize(step) {
                    let kind = step.get("type").and_then(Value::as_str).unwrap_or("?");
                    return format!(
                        "not a valid session: step {} of the loop (type \"{kind}\"): {e}",
                        i + 1
                    );
                }
            }
        }
        Some(Value::Null) | None => {}
        Some(_) => return "not a valid session: \"steps\" is not a list".into(),
    }
    format!("not a valid session: {e}")
}

/// What a session picker lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionSummary {
    /// The session's name, if it has one.
    pub name: Option<String>,
    /// When the session was made (RFC 3339 UTC).
    pub created_at: String,
    /// The provider's name (`openai`, `anthropic`, …).
    pub provider: String,
    /// The model name.
    pub model: String,
    /// The tool choice's label (`auto`, `tool:NAME`, …); absent when the request left it out.
    pub tool_choice: Option<String>,
    /// The protocol's name in emulated mode, `auto` for native tool calling read with protocol
    /// detection; absent for native tool calling.
    pub protocol: Option<String>,
    /// How many raw wire events were recorded, in every turn.
    pub events: usize,
    /// How many model turns: 1, or more for an MCP loop.
    pub turns: usize,
    /// How many `tools/call`s the loop ran.
    pub tool_calls: usize,
}

/// The current time as RFC 3339 UTC (`2026-11-21T04:30:00Z`).
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

/// `secs` since the Unix epoch as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests;
