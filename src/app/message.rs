//! Everything that can happen to the playground, as one enum.
//!
//! Terminal input, the events of running requests, and the results of file operations all
//! arrive as [`Message`]s, and only [`super::update`] turns them into changes of state. Run
//! events carry the time since their run started, stamped by the driver; the state machine never
//! reads a clock, so a recorded session replays through exactly the same code.

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};

use crate::core::provider::RunEvent;

use super::run_view::RunId;

#[derive(Clone, Debug)]
pub enum Message {
    Key(KeyEvent),
    Mouse(MouseEvent),
    /// Text pasted into the terminal (bracketed paste).
    Paste(String),
    Resize {
        width: u16,
        height: u16,
    },
    /// An event of run `id`, `at_ms` after it was started.
    Run {
        id: RunId,
        at_ms: u64,
        event: RunEvent,
    },
    /// Run `id` has no more events.
    RunEnded {
        id: RunId,
        at_ms: u64,
    },
    FileLoaded {
        purpose: FilePurpose,
        path: PathBuf,
        result: Result<String, String>,
    },
    FileSaved {
        purpose: FilePurpose,
        path: PathBuf,
        result: Result<(), String>,
    },
    /// The process was asked to stop (SIGTERM, SIGHUP).
    Quit,
}

/// What a file is read or written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilePurpose {
    Tools,
}
