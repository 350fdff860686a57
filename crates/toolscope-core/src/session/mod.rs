//! Sessions: one run kept as a file, to be opened, replayed, re-parsed and re-sent later.
//!
//! A session holds the request (never a key), every raw wire event with its time offset from the
//! request, and the parts the run produced. Replay feeds the recorded wire events through the
//! same decoder as a live run ([`Replay`]), so a replayed session behaves exactly like the live
//! one, and can be re-read under another protocol or another tool schema. The format is
//! versioned: [`Session::from_json`] reads every version up to [`VERSION`] (upgrading older
//! ones) and says clearly when a file is newer than this toolscope. Files are written
//! atomically: to a temporary file in the same folder, then renamed over the target.
//!
//! The format (version 1), one JSON object:
//!
//! ```text
//! {
//!   "format": "toolscope-session",
//!   "version": 1,
//!   "name": "weather in Paris",          // optional
//!   "createdAt": "2026-11-21T04:30:00Z",  // UTC
//!   "toolscope": "0.1.0",                 // the version that wrote it
//!   "request": { … },                     // provider, model, baseUrl, system, messages, tools,
//!                                         // toolChoice, protocol (or detectProtocol: true
//!                                         // for auto), sampling, stream, timeouts
//!   "events": [ {"atMs": 12, "data": "…"}, … ],   // raw wire events; a failed response's body
//!                                         // also has "status" and "retryAfter"
//!   "endedAtMs": 812,
//!   "end": [ … ],                         // parts that ended the run without a wire event
//!                                         // (a refused connection, a timeout); usually absent
//!   "parts": [ … ]                        // every part, as the live run produced them
//! }
//! ```

pub mod journal;
mod record;
mod replay;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::part::{Part, Warning};
use crate::provider::{Decoder, RawEvent, Request, RunEvent};

pub use record::Recorder;
pub use replay::{Replay, ReplayOptions, ReplayStep};

/// The value of the `format` field.
pub const FORMAT: &str = "toolscope-session";
/// The newest format version this toolscope reads and the one it writes.
pub const VERSION: u32 = 1;

/// One recorded run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Session {
    /// Always [`FORMAT`]; tells a session apart from any other JSON file.
    pub format: String,
    /// The format version the file was written in; [`VERSION`] once loaded (older ones are
    /// upgraded).
    pub version: u32,
    /// A name a person gave the session; absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When the session was made from the run, as RFC 3339 UTC (`2026-11-21T04:30:00Z`).
    pub created_at: String,
    /// The version of toolscope that wrote the file.
    pub toolscope: String,
    /// What was sent, without any key.
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
    /// Every part, in the order the live run produced them.
    #[serde(default)]
    pub parts: Vec<Part>,
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
    /// The index of the wire event in the session's `events`; the closing step (after the last
    /// event, where the answer's own checks run) has index `events.len()`.
    pub event: usize,
    /// What was found.
    pub warning: Warning,
}

impl Session {
    /// The stream lint of this session: its wire events replayed through the decoder of its
    /// request, every warning collected with the event behind it. A live run and a replay give
    /// the same warnings as parts; this is the offline form (`toolscope lint`).
    pub fn lint(&self) -> Vec<Finding> {
        let mut decoder = Decoder::new(&self.request);
        let mut out = Vec::new();
        let mut collect = |event: usize, events: Vec<RunEvent>| {
            for e in events {
                if let RunEvent::Part(Part::Warning(w)) = e {
                    out.push(Finding { event, warning: *w });
                }
            }
        };
        for (i, raw) in self.events.iter().enumerate() {
            collect(i, decoder.push_raw(raw));
        }
        collect(self.events.len(), decoder.finish());
        out
    }

    /// The provider, model, tool choice and protocol, as a picker shows them.
    pub fn summary(&self) -> SessionSummary {
        let r = &self.request;
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
            events: self.events.len(),
        }
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
            version: Option<Value>,
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
        let version = match header.version.as_ref().and_then(Value::as_u64) {
            Some(v) => v,
            None => return Err("the session has no format version".into()),
        };
        if version > VERSION as u64 {
            return Err(format!(
                "the session was written by a newer toolscope (format version {version}; this toolscope reads versions up to {VERSION}): update toolscope to open it"
            ));
        }
        if version == VERSION as u64 {
            return serde_json::from_str(text).map_err(|e| format!("not a valid session: {e}"));
        }
        let value: Value = serde_json::from_str(text).map_err(json_error)?;
        let value = upgrade(value, version as u32)?;
        serde_json::from_value(value).map_err(|e| format!("not a valid session: {e}"))
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

    /// Writes the session atomically: a temporary file beside `path`, then a rename.
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
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            file_name.to_string_lossy(),
            std::process::id()
        ));
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

/// Older versions are upgraded here one step at a time (there is only version 1 so far).
fn upgrade(value: Value, version: u32) -> Result<Value, String> {
    match version {
        VERSION => Ok(value),
        0 => Err("format version 0 does not exist".into()),
        v => Err(format!("format version {v} cannot be upgraded")),
    }
}

/// What a session picker lists.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// How many raw wire events were recorded.
    pub events: usize,
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

/// A file name for a session saved now: `session-2026-11-21T04-30-00Z.json`.
pub fn timestamped_name() -> String {
    format!("session-{}.json", now_rfc3339().replace(':', "-"))
}

#[cfg(test)]
mod tests;
