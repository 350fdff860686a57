//! What [`super::update`] asks the outside world to do, as data.
//!
//! The state machine never does IO: it returns effects, and the driver runs them (starting and
//! cancelling HTTP requests, reading and writing files, copying to the clipboard). Tests check
//! the effects without running them.

use std::path::PathBuf;

use crate::core::provider::Request;

use super::message::FilePurpose;
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
    SaveFile {
        purpose: FilePurpose,
        path: PathBuf,
        contents: String,
    },
    /// Put `text` on the clipboard of the terminal (OSC 52).
    Copy {
        text: String,
    },
    Quit,
}
