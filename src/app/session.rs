//! The playground's side of sessions: where they are saved and listed, the session that is open,
//! and the playback that feeds its recorded wire events into a run view.
//!
//! A playback never reads a clock. Each step of a [`Replay`] says when it happened in the live
//! run; the playback takes the steps that are due and asks the driver to wake it (an
//! [`super::Effect::Wake`]) when the next one is, scaled by the speed. Pausing or changing the
//! speed bumps a token, so a wake-up asked for before is recognised as stale and ignored.

use std::path::{Path, PathBuf};

use std::collections::VecDeque;

use toolscope_core::session::{Replay, ReplayOptions, Segment, Session, SessionSummary};

use super::fuzzy::ListFilter;
use super::run_view::RunId;

/// The folders sessions are saved to and opened from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionDirs {
    /// `./sessions` when toolscope runs from a folder that has one (the project).
    pub project: Option<PathBuf>,
    /// `sessions` in the data directory.
    pub data: Option<PathBuf>,
    /// Where the journal of the run in progress is written (the driver writes it).
    pub journal: Option<PathBuf>,
}

impl SessionDirs {
    /// The folder Ctrl+S proposes: the project's `sessions/` when there is one, else the data
    /// directory's.
    pub fn save_dir(&self) -> PathBuf {
        self.project
            .clone()
            .or_else(|| self.data.clone())
            .unwrap_or_else(|| PathBuf::from("."))
    }

    /// Every folder the picker lists, without repeats.
    pub fn all(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = Vec::new();
        for d in [&self.project, &self.data].into_iter().flatten() {
            if !out.contains(d) {
                out.push(d.clone());
            }
        }
        out
    }
}

/// How fast a playback goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pace {
    /// The recorded pace times this factor.
    Speed(f64),
    /// Everything at once.
    Instant,
}

impl Pace {
    /// The order F7 steps through.
    pub const CYCLE: [Pace; 6] = [
        Pace::Speed(1.0),
        Pace::Speed(2.0),
        Pace::Speed(4.0),
        Pace::Speed(10.0),
        Pace::Instant,
        Pace::Speed(0.5),
    ];

    pub fn label(self) -> String {
        match self {
            Pace::Instant => "instant".into(),
            Pace::Speed(s) if s.fract() == 0.0 => format!("{s:.0}×"),
            Pace::Speed(s) => format!("{s}×"),
        }
    }

    pub fn next(self) -> Pace {
        let at = Pace::CYCLE.iter().position(|p| *p == self).unwrap_or(0);
        Pace::CYCLE[(at + 1) % Pace::CYCLE.len()]
    }

    /// Real milliseconds for `recorded` milliseconds of the recording.
    pub fn scale(self, recorded: u64) -> u64 {
        match self {
            Pace::Instant => 0,
            Pace::Speed(s) => (recorded as f64 / s).round() as u64,
        }
    }
}

/// A session being fed into a run view.
pub struct Playback {
    /// The view it feeds (the main run, or the recorded column of a re-send); each turn of an
    /// MCP loop gets a view of its own.
    pub id: RunId,
    /// The turn being played.
    pub replay: Replay,
    pub pace: Pace,
    pub paused: bool,
    /// Wake-ups carry it; a stale one is ignored.
    pub token: u64,
    /// The recorded time of the last step taken, since the session's first request.
    pub at_ms: u64,
    /// When the turn being played was sent, since the session's first request.
    pub turn_at_ms: u64,
    /// What follows the turn in an MCP loop: tool calls (their recorded results), further
    /// turns, the loop's stop. Empty for a one-turn session.
    pub later: VecDeque<Segment>,
    /// The turn being played (from 1) and how many the session has.
    pub turn: usize,
    pub turns: usize,
    /// How every turn is read.
    pub options: ReplayOptions,
}

impl Playback {
    /// Whether every step of every turn was taken.
    pub fn is_done(&self) -> bool {
        self.replay.is_done() && self.later.is_empty()
    }

    /// When the next step happened live, since the session's first request.
    pub fn next_at_ms(&self) -> Option<u64> {
        if let Some(at) = self.replay.next_at_ms() {
            return Some(self.turn_at_ms + at);
        }
        match self.later.front()? {
            Segment::Call { call, .. } => Some(call.ended_at_ms.max(call.at_ms)),
            Segment::Turn { at_ms, .. } | Segment::Stop { at_ms, .. } => Some(*at_ms),
        }
    }

    /// Where the playback is, as the status line shows it: `3/12`, with the turn in a loop
    /// (`turn 2/2 · 3/12`).
    pub fn position(&self) -> String {
        let at = format!("{}/{}", self.replay.position(), self.replay.len());
        if self.turns > 1 {
            format!("turn {}/{} · {at}", self.turn, self.turns)
        } else {
            at
        }
    }
}

/// The session the playground shows, and how its output is being read.
pub struct Opened {
    /// The file it came from (`None` for a recovered journal not saved yet).
    pub path: Option<PathBuf>,
    pub session: Box<Session>,
    /// `as recorded`, or what a what-if changed (`re-parsed as hermes`).
    pub reading: String,
    /// How it is read: as recorded, or with the protocol and tools of the last re-parse (a
    /// replay started again reads it the same way).
    pub options: ReplayOptions,
}

impl Opened {
    /// The name the status line and the headers use: the session's own, else the file's.
    pub fn title(&self) -> String {
        if let Some(n) = &self.session.name {
            return n.clone();
        }
        self.path
            .as_deref()
            .and_then(Path::file_stem)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "session".into())
    }
}

/// A file the picker lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionEntry {
    pub path: PathBuf,
    /// What the file holds, or why it cannot be opened.
    pub summary: Result<SessionSummary, String>,
}

/// The Ctrl+O picker.
#[derive(Clone, Debug, Default)]
pub struct SessionPicker {
    /// `None` while the folders are being read.
    pub entries: Option<Vec<SessionEntry>>,
    /// The folders listed, for the header and an empty list's message.
    pub dirs: Vec<PathBuf>,
    /// The `/` filter (fuzzy, by file name, provider, model, mode, protocol; the file name's
    /// letters marked) and the selected row.
    pub list: ListFilter,
}

impl SessionPicker {
    /// A picker over `dirs`, waiting for their listing.
    pub fn new(dirs: Vec<PathBuf>) -> SessionPicker {
        SessionPicker {
            entries: None,
            dirs,
            list: ListFilter::on_slash(),
        }
    }

    /// The listing arrived.
    pub fn set_entries(&mut self, entries: Vec<SessionEntry>) {
        self.list.set_items(
            entries
                .iter()
                .map(|e| (e.haystack(), e.file_name().chars().count()))
                .collect(),
        );
        self.entries = Some(entries);
    }

    /// The rows shown: each entry with the positions of its file name's matched letters.
    pub fn shown(&self) -> impl Iterator<Item = (&SessionEntry, &[usize])> {
        let entries = self.entries.as_deref().unwrap_or_default();
        self.list
            .shown()
            .filter_map(|(i, marks)| Some((entries.get(i)?, marks)))
    }

    /// How many rows are shown.
    pub fn shown_len(&self) -> usize {
        self.list.shown_len()
    }

    pub fn chosen(&self) -> Option<&SessionEntry> {
        self.entries.as_ref()?.get(self.list.chosen()?)
    }
}

impl SessionEntry {
    /// The file's name.
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// What the filter matches: the file name first (its letters are the ones marked), then
    /// the provider, model, tool choice and protocol.
    fn haystack(&self) -> String {
        let mut text = self.file_name();
        if let Ok(s) = &self.summary {
            for part in [
                Some(s.provider.as_str()),
                Some(s.model.as_str()),
                s.tool_choice.as_deref(),
                s.protocol.as_deref(),
            ]
            .into_iter()
            .flatten()
            {
                text.push(' ');
                text.push_str(part);
            }
        }
        text
    }
}

/// Reads the session files (`*.json`) of `dirs`, each folder sorted by file name. A folder that
/// does not exist is skipped; a file that cannot be read is listed with the reason.
pub fn list(dirs: &[PathBuf]) -> Vec<SessionEntry> {
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(read) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = read
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json") && !is_hidden(p))
            .collect();
        paths.sort();
        for path in paths {
            let summary = Session::load(&path)
                .map(|s| s.summary())
                .map_err(|e| e.problem);
            out.push(SessionEntry { path, summary });
        }
    }
    out
}

fn is_hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pace_cycles_and_scales() {
        let mut p = Pace::Speed(1.0);
        let mut labels = Vec::new();
        for _ in 0..6 {
            labels.push(p.label());
            p = p.next();
        }
        assert_eq!(labels, ["1×", "2×", "4×", "10×", "instant", "0.5×"]);
        assert_eq!(p, Pace::Speed(1.0));
        assert_eq!(Pace::Speed(2.0).scale(100), 50);
        assert_eq!(Pace::Speed(0.5).scale(100), 200);
        assert_eq!(Pace::Instant.scale(100), 0);
    }

    #[test]
    fn the_project_folder_is_preferred_and_listed_once() {
        let d = SessionDirs {
            project: Some("sessions".into()),
            data: Some("sessions".into()),
            journal: None,
        };
        assert_eq!(d.save_dir(), PathBuf::from("sessions"));
        assert_eq!(d.all().len(), 1);
        assert_eq!(SessionDirs::default().save_dir(), PathBuf::from("."));
    }

    #[test]
    fn listing_names_broken_files_and_skips_missing_folders() {
        let dir = std::env::temp_dir().join(format!("toolscope-list-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a-empty.json"), "").unwrap();
        std::fs::write(dir.join("notes.txt"), "x").unwrap();
        let bundled = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions");
        let entries = list(&[dir.clone(), dir.join("missing"), bundled]);
        assert_eq!(entries[0].path, dir.join("a-empty.json"));
        assert!(entries[0].summary.as_ref().unwrap_err().contains("empty"));
        assert!(entries.len() >= 9, "{}", entries.len());
        assert!(entries[1..].iter().all(|e| e.summary.is_ok()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
