//! Asking before something the user made is lost: a question, what it would drop, and the action
//! that runs when the answer is yes.
//!
//! Nothing the user made (tools, a conversation, a file) is replaced, overwritten or dropped
//! without asking. The state machine opens a [`Confirm`] instead of acting; `y` or Enter runs its
//! [`Pending`] action, `n` or Esc leaves everything as it was.

use std::path::PathBuf;

use super::effect::Effect;
use super::{App, Overlay};

/// A question waiting for yes or no.
#[derive(Clone, Debug)]
pub struct Confirm {
    /// The question, one line (`Replace the edited tools?`).
    pub question: String,
    /// What a yes drops or replaces, one line each.
    pub details: Vec<String>,
    /// What yes does, as the key hint says it (`y replace`).
    pub yes: &'static str,
    pub action: Pending,
}

/// What runs on yes.
#[derive(Clone, Debug)]
pub enum Pending {
    /// Quit, unsaved edits and all.
    Quit,
    /// Start a new conversation.
    NewConversation,
    /// Run this effect (a load that replaces, a save that overwrites).
    Effect(Box<Effect>),
    /// Drop message `i` of the conversation (and the results of its calls).
    DeleteMessage(usize),
    /// Drop the turns after message `i` and run the conversation from there.
    RunFrom(usize),
    /// Send the next request once per tool-choice mode, side by side (Ctrl+K).
    Compare,
    /// Start the MCP loop (F12), which sends up to its step limit of requests.
    Loop,
    /// Start the verify battery (Alt+S), which sends a request per scenario, streamed and
    /// whole.
    Verify,
    /// Open this session in the panes (a failed answer of the verify battery).
    OpenSession(Box<toolscope_core::session::Session>),
}

impl Confirm {
    pub fn new(question: impl Into<String>, yes: &'static str, action: Pending) -> Confirm {
        Confirm {
            question: question.into(),
            details: Vec::new(),
            yes,
            action,
        }
    }

    /// Adds a line saying what would be lost.
    pub fn detail(mut self, line: impl Into<String>) -> Confirm {
        self.details.push(line.into());
        self
    }
}

/// Asks before overwriting: what a save effect asks when its file exists.
pub fn overwrite(effect: Effect, path: &std::path::Path) -> Confirm {
    Confirm::new(
        format!("Overwrite {}?", path.display()),
        "y overwrite",
        Pending::Effect(Box::new(effect)),
    )
    .detail("the file exists; its contents are replaced")
}

/// Asks before making the folder a save goes in: what a save effect asks when its folder does
/// not exist (perhaps a typo).
pub fn create_folder(effect: Effect, path: &std::path::Path) -> Confirm {
    let folder = path.parent().unwrap_or(path);
    Confirm::new(
        format!("Create the folder {}?", folder.display()),
        "y create and save",
        Pending::Effect(Box::new(effect)),
    )
    .detail(format!(
        "{} does not exist; check the path for a typo",
        folder.display()
    ))
}

/// The path a load or save effect is about, for the question.
pub fn path_of(effect: &Effect) -> Option<PathBuf> {
    match effect {
        Effect::LoadFile { path, .. }
        | Effect::SaveFile { path, .. }
        | Effect::SaveSession { path, .. }
        | Effect::LoadSession { path } => Some(path.clone()),
        _ => None,
    }
}

/// Opens a question (replacing any other window).
pub(super) fn ask(app: &mut App, c: Confirm) {
    app.overlay = Some(Overlay::Confirm(Box::new(c)));
}
