//! What [`super::update`] asks the outside world to do, as data.
//!
//! The state machine never does IO: it returns effects, and the driver runs them (starting and
//! cancelling HTTP requests, reading and writing files, copying to the clipboard). Tests check
//! the effects without running them.

use std::path::PathBuf;
use std::sync::Arc;

use toolscope_core::mcp::McpServerSpec;
use toolscope_core::provider::{ProviderKind, Request};
use toolscope_core::session::Session;

use crate::verify::suite::Suite;

use super::mcp::{CallId, ServerId};
use super::message::{FilePurpose, Message};
use super::remember::{Remembered, StateFiles};
use super::run_view::RunId;

#[derive(Clone, Debug)]
pub enum Effect {
    /// Send `request`; its events come back as `Message::Run { id, … }`.
    StartRun {
        id: RunId,
        request: Box<Request>,
    },
    /// Stop run `id` now (the HTTP request is dropped, closing its connection).
    CancelRun {
        id: RunId,
    },
    LoadFile {
        purpose: FilePurpose,
        path: PathBuf,
    },
    /// Write `contents` to `path` atomically. Unless `overwrite`, a file already there is left
    /// alone and `Message::WouldOverwrite` asks first.
    SaveFile {
        purpose: FilePurpose,
        path: PathBuf,
        contents: String,
        overwrite: bool,
    },
    /// Save `session` at `path` atomically; then, when it was saved, remove the file
    /// `then_remove` (a journal the session was recovered from). Unless `overwrite`, a file
    /// already there is left alone and `Message::WouldOverwrite` asks first. Unless
    /// `create_folder`, a folder that does not exist is not made (a mistyped path) and
    /// `Message::NoFolder` asks first.
    SaveSession {
        path: PathBuf,
        session: Box<Session>,
        then_remove: Option<PathBuf>,
        overwrite: bool,
        create_folder: bool,
    },
    /// List the session files of `dirs` (answered by `Message::SessionsListed`).
    ListSessions {
        dirs: Vec<PathBuf>,
    },
    /// Read a session file (answered by `Message::SessionLoaded`).
    LoadSession {
        path: PathBuf,
    },
    /// Remove a file that is no longer needed (a journal declined at start).
    RemoveFile {
        path: PathBuf,
    },
    /// Send `Message::Wake { token }` after `after_ms` milliseconds.
    Wake {
        token: u64,
        after_ms: u64,
    },
    /// Send `message` back after `after_ms` milliseconds (a pause that ends typing, say).
    Later {
        after_ms: u64,
        message: Box<Message>,
    },
    /// Put `text` on the clipboard of the terminal (OSC 52).
    Copy {
        text: String,
    },
    /// List the models of `provider` at `base_url` (answered by `Message::ModelsListed`).
    ListModels {
        provider: ProviderKind,
        base_url: Option<String>,
    },
    /// Connect to MCP server `server` and list its tools (answered by `Message::McpListed`,
    /// again each time the server says its tools changed, and once more with an error if it
    /// dies); its stderr comes as `Message::McpStderr`.
    McpConnect {
        server: ServerId,
        spec: McpServerSpec,
    },
    /// Close the connection to server `server` (a stdio server is stopped).
    McpDisconnect {
        server: ServerId,
    },
    /// Call the tool `name` (its name on the server) with `arguments` (answered by
    /// `Message::McpCalled`); cancelled after `timeout_ms`.
    McpCall {
        call: CallId,
        server: ServerId,
        name: String,
        arguments: serde_json::Value,
        timeout_ms: u64,
    },
    /// Cancel call `call` (the server is told).
    McpCancel {
        call: CallId,
    },
    /// Run the verify battery `id`: every scenario of `suite`, streamed and whole, `runs`
    /// times, on the target `template` names, at most `concurrency` requests at once. Each
    /// answer comes back as `Message::VerifyAnswer`, then `Message::VerifyEnded`.
    StartVerify {
        id: u64,
        suite: Arc<Suite>,
        template: Box<Request>,
        runs: u32,
        concurrency: usize,
    },
    /// Stop battery `id` now (the requests in flight are dropped); nothing more comes of it.
    StopVerify {
        id: u64,
    },
    /// Write the remembered state to its files.
    Remember {
        files: StateFiles,
        state: Box<Remembered>,
    },
    Quit,
}
