//! Everything that can happen to the playground, as one enum.
//!
//! Terminal input, the events of running requests, and the results of file operations all
//! arrive as [`Message`]s, and only [`super::update`] turns them into changes of state. Run
//! events carry the time since their run started, stamped by the driver; the state machine never
//! reads a clock, so a recorded session replays through exactly the same code.

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyEvent, MouseEvent};

use toolscope_core::mcp::{McpError, McpServerSpec};
use toolscope_core::provider::{ProviderKind, RunEvent};
use toolscope_core::session::Session;

use crate::verify::battery::Ending;
use crate::verify::score::Answer;

use super::mcp::{CallId, ServerId};
use super::run_view::RunId;
use super::session::SessionEntry;

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
    /// The session files of the picker's folders were read.
    SessionsListed {
        entries: Vec<SessionEntry>,
    },
    /// A session file was read (or why it could not be: one line naming the file).
    SessionLoaded {
        path: PathBuf,
        result: Result<Box<Session>, String>,
    },
    /// The wake-up a playback asked for (see [`super::Effect::Wake`]).
    Wake {
        token: u64,
    },
    /// The pause after typing in the Tools pane ended: check the text, if it is still at
    /// `revision`.
    CheckTools {
        revision: u64,
    },
    /// A save was not done because `path` exists (the state machine asks first).
    WouldOverwrite {
        path: PathBuf,
    },
    /// A save was not done because the folder `path` goes in does not exist (the state machine
    /// asks before making it).
    NoFolder {
        path: PathBuf,
    },
    /// The models `provider` offers at `base_url`, or why they cannot be listed.
    ModelsListed {
        provider: ProviderKind,
        base_url: Option<String>,
        result: Result<Vec<String>, String>,
    },
    /// Add an MCP server (from `--mcp` or `--mcp-url` at start).
    McpAdd {
        spec: McpServerSpec,
    },
    /// MCP server `server` listed its tools as `(its name, tools/list entries)`, or failed to
    /// start, to list, or died (why, one line).
    McpListed {
        server: ServerId,
        result: Result<(String, Vec<serde_json::Value>), String>,
    },
    /// A line MCP server `server` wrote on stderr.
    McpStderr {
        server: ServerId,
        line: String,
    },
    /// MCP call `call` ended `elapsed_ms` after it was sent: the server's `CallToolResult` as
    /// JSON, or what went wrong.
    McpCalled {
        call: CallId,
        elapsed_ms: u64,
        result: Result<serde_json::Value, McpError>,
    },
    /// An answer of verify battery `id`, complete, `at_ms` after the battery started.
    VerifyAnswer {
        id: u64,
        at_ms: u64,
        answer: Box<Answer>,
    },
    /// Verify battery `id` made its last request, `at_ms` after it started (every answer has
    /// come before this), or gave up.
    VerifyEnded {
        id: u64,
        at_ms: u64,
        ending: Ending,
    },
    /// The built-in demo model started, listening at `base_url`.
    DemoStarted {
        base_url: String,
    },
    /// The process was asked to stop (SIGTERM, SIGHUP): it quits, keeping the journal of an
    /// unsaved run for the next start.
    Quit,
}

/// What a file is read or written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilePurpose {
    Tools,
    Session,
}
