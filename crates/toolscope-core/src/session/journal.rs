//! The journal: the run in progress, written as it streams, so a crash or a killed terminal loses
//! at most its last moment.
//!
//! One JSON object per line: first `{"journal": 1, "request": …}`, then every run event as the
//! run gives it, and `{"ended": ms}` when the run ends. Lines gather in a buffer: the writer
//! hands them to the operating system with [`Journal::flush`] (the playground does it with each
//! frame, at most 16 ms apart while events arrive) and at the end of the run, so a killed
//! process loses at most the events of the last fraction of a second. [`recover`] turns a journal back into a session, ignoring a last line cut
//! short by the crash. The application removes the journal when it exits cleanly; one found at
//! start means the previous run was interrupted.
//!
//! A journal holds one model turn: an MCP tool loop is not journalled past its first turn (its
//! tool calls and later turns are in the session only once it is saved).

use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::provider::{Request, RunEvent};

use super::record::Recorder;
use super::{Session, SessionError};

const JOURNAL_VERSION: u64 = 1;

/// A journal being written.
pub struct Journal {
    path: PathBuf,
    file: BufWriter<File>,
}

impl Journal {
    /// Starts a journal for `request` at `path` (replacing an older one).
    pub fn create(path: &Path, request: &Request) -> std::io::Result<Journal> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let head = json!({"journal": JOURNAL_VERSION, "request": request});
        writeln!(file, "{head}")?;
        file.flush()?;
        Ok(Journal {
            path: path.to_path_buf(),
            file: BufWriter::with_capacity(64 * 1024, file),
        })
    }

    /// Appends one event, written into the buffer as JSON (handed to the operating system by
    /// [`Journal::flush`], or when the buffer is full).
    pub fn append(&mut self, event: &RunEvent) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.file, event).map_err(std::io::Error::other)?;
        self.file.write_all(b"\n")
    }

    /// Hands what the buffer holds to the operating system (nothing to do when it is empty):
    /// from then on a killed process loses none of it.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }

    /// The run ended `at_ms` after the request: the journal is written out whole, to the disk.
    pub fn end(&mut self, at_ms: u64) -> std::io::Result<()> {
        writeln!(self.file, "{}", json!({"ended": at_ms}))?;
        self.file.flush()?;
        self.file.get_ref().sync_data()
    }

    /// Where the journal is written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the journal (the application is exiting cleanly, or the run was saved).
    pub fn discard(self) -> std::io::Result<()> {
        // What the buffer holds is not needed any more.
        drop(self.file.into_parts());
        fs::remove_file(&self.path)
    }
}

/// What a journal holds: the session so far, and whether the run had ended.
pub struct Recovered {
    /// The run as far as the journal got: the request, the raw wire events and the parts.
    pub session: Session,
    /// Whether the journal holds the run's end; `false` when the process died during the run.
    pub ended: bool,
}

/// Reads a journal back into a session. A last line cut short is ignored; anything else that is
/// not a journal is an error naming the file.
pub fn recover(path: &Path) -> Result<Recovered, SessionError> {
    let err = |problem: String| SessionError {
        path: path.to_path_buf(),
        problem,
    };
    let file = File::open(path).map_err(|e| err(e.to_string()))?;
    let mut lines = BufReader::new(file).split(b'\n');
    let head = match lines.next() {
        Some(Ok(line)) => line,
        Some(Err(e)) => return Err(err(e.to_string())),
        None => return Err(err("the journal is empty".into())),
    };
    let head: Value =
        serde_json::from_slice(&head).map_err(|_| err("not a toolscope journal".into()))?;
    if head.get("journal").and_then(Value::as_u64) != Some(JOURNAL_VERSION) {
        return Err(err(
            "not a toolscope journal, or one from another version".into()
        ));
    }
    let request: Request = serde_json::from_value(head["request"].clone())
        .map_err(|e| err(format!("the journal's request is invalid: {e}")))?;
    let mut recorder = Recorder::new(request);
    let mut ended = None;
    let mut last_at = 0;
    let mut pending_error = None;
    for (n, line) in lines.enumerate() {
        let line = line.map_err(|e| err(e.to_string()))?;
        if line.is_empty() {
            continue;
        }
        // A line that does not parse is only forgiven as the last one (cut by the crash).
        if let Some(e) = pending_error.take() {
            return Err(err(e));
        }
        if let Ok(v) = serde_json::from_slice::<Value>(&line) {
            if let Some(ms) = v.get("ended").and_then(Value::as_u64) {
                ended = Some(ms);
                continue;
            }
            match serde_json::from_value::<RunEvent>(v) {
                Ok(event) => {
                    if let RunEvent::Raw(r) = &event {
                        last_at = r.at_ms;
                    }
                    recorder.push(&event);
                }
                Err(e) => pending_error = Some(format!("line {} is not a run event: {e}", n + 2)),
            }
        } else {
            pending_error = Some(format!("line {} is not JSON", n + 2));
        }
    }
    let session = recorder.finish(Some("recovered".into()), ended.unwrap_or(last_at));
    Ok(Recovered {
        session,
        ended: ended.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::part::Part;
    use crate::provider::{Decoder, Message, ProviderKind, RawEvent};

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "toolscope-journal-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn run() -> (Request, Vec<RunEvent>) {
        let mut request = Request::new(ProviderKind::OPENAI, "m");
        request.messages = vec![Message::user("hi")];
        let chunk = |c: &str, f: Option<&str>| {
            json!({"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":c},"finish_reason":f}]}).to_string()
        };
        let wire = [
            chunk("Hel", None),
            chunk("lo", None),
            chunk("!", Some("stop")),
            "[DONE]".into(),
        ];
        let mut d = Decoder::new(&request);
        let mut events = Vec::new();
        for (i, data) in wire.into_iter().enumerate() {
            let raw = RawEvent {
                at_ms: 10 * i as u64,
                data,
                status: None,
                retry_after: None,
            };
            events.push(RunEvent::Raw(raw.clone()));
            events.extend(d.push_raw(&raw));
        }
        events.extend(d.finish());
        (request, events)
    }

    #[test]
    fn an_interrupted_run_is_recovered_up_to_its_last_event() {
        let (request, events) = run();
        let path = dir().join("journal.jsonl");
        let mut j = Journal::create(&path, &request).unwrap();
        // The process dies after the fifth event, in the middle of writing the sixth.
        for e in &events[..5] {
            j.append(e).unwrap();
        }
        drop(j);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"event\":\"part\",\"type\":\"text-de")
            .unwrap();
        drop(f);
        let r = recover(&path).unwrap();
        assert!(!r.ended);
        let live: Vec<Part> = events[..5]
            .iter()
            .filter_map(|e| e.as_part().cloned())
            .collect();
        assert_eq!(r.session.parts, live);
        assert!(!r.session.events.is_empty());
    }

    #[test]
    fn a_finished_run_recovers_whole_and_replays() {
        let (request, events) = run();
        let path = dir().join("done.jsonl");
        let mut j = Journal::create(&path, &request).unwrap();
        for e in &events {
            j.append(e).unwrap();
        }
        j.end(40).unwrap();
        let r = recover(&path).unwrap();
        assert!(r.ended);
        assert_eq!(r.session.ended_at_ms, 40);
        let parts: Vec<Part> = events.iter().filter_map(|e| e.as_part().cloned()).collect();
        assert_eq!(r.session.parts, parts);
        let replayed: Vec<Part> = super::super::Replay::new(&r.session, Default::default())
            .run_to_end()
            .into_iter()
            .filter_map(|e| e.as_part().cloned())
            .collect();
        assert_eq!(replayed, parts);
        j.discard().unwrap();
        assert!(!path.exists());
    }

    #[test]
    fn a_flush_writes_out_every_event_so_far_and_the_end_writes_the_rest() {
        let (request, events) = run();
        let path = dir().join("buffered.jsonl");
        let mut j = Journal::create(&path, &request).unwrap();
        let parts = |events: &[RunEvent]| -> Vec<Part> {
            events.iter().filter_map(|e| e.as_part().cloned()).collect()
        };
        for e in &events[..5] {
            j.append(e).unwrap();
        }
        j.flush().unwrap();
        // The journal is still open: what a killed process would leave.
        let r = recover(&path).unwrap();
        assert!(!r.ended);
        assert_eq!(r.session.parts, parts(&events[..5]));
        for e in &events[5..] {
            j.append(e).unwrap();
        }
        j.end(40).unwrap();
        let r = recover(&path).unwrap();
        assert!(r.ended);
        assert_eq!(r.session.parts, parts(&events));
        j.discard().unwrap();
    }

    #[test]
    fn not_a_journal_is_an_error_naming_the_file() {
        let d = dir();
        for (name, bytes) in [
            ("empty.jsonl", &b""[..]),
            ("other.jsonl", b"{\"x\":1}\n"),
            ("binary.jsonl", b"\xff\xfe\x00"),
        ] {
            let path = d.join(name);
            fs::write(&path, bytes).unwrap();
            let e = recover(&path).err().unwrap().to_string();
            assert!(e.contains(name), "{e}");
        }
        let (request, _) = run();
        let path = d.join("middle.jsonl");
        let mut j = Journal::create(&path, &request).unwrap();
        drop(j.file.write_all(b"garbage\n"));
        j.append(&RunEvent::Part(Part::Text { text: "x".into() }))
            .unwrap();
        j.flush().unwrap();
        assert!(recover(&path).err().unwrap().to_string().contains("line 2"));
    }
}
