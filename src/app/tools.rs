//! The Tools pane's state: the JSON being edited, checked again when typing pauses.
//!
//! The check is the core's own ([`ToolSet::from_json_text`]): JSON syntax with line and column,
//! each `parameters` a valid JSON Schema, names present; what had to be read differently (a
//! Python type name, a schema of no draft, a second tool of a name) is a warning, shown on the
//! pane's border. Checking 500 tools takes tens of milliseconds, so a keystroke only bumps the
//! revision and asks to be told when typing has paused ([`CHECK_PAUSE_MS`]); the check runs then,
//! or at once when something needs the tools (a run, a compare). The last tools that passed stay
//! in use for the tool-choice list while the text is broken, but a run is only sent with tools
//! that pass now.

use std::path::PathBuf;

use toolscope_core::tool::{ToolSet, ToolsError};

use super::code_editor::CodeEditor;

/// The tools the playground opens with.
pub const EXAMPLE_TOOLS: &str = include_str!("../../examples/tools.json");

/// How long typing must pause before the text is checked.
pub const CHECK_PAUSE_MS: u64 = 150;

pub struct ToolsEditor {
    pub editor: CodeEditor,
    /// Bumped on every change of the text (the highlighting cache is keyed by it).
    pub revision: u64,
    /// The check of the text at revision [`ToolsEditor::checked`].
    pub check: Result<ToolSet, ToolsError>,
    /// The revision the check is of; behind `revision` while a check waits for typing to pause.
    pub checked: u64,
    /// The last tools that passed the check.
    pub valid: ToolSet,
    /// Bumped each time `valid` is set again.
    pub valid_rev: u64,
    /// The file the tools were loaded from or saved to last.
    pub path: Option<PathBuf>,
    /// The editor's state of the text the file (or the start) holds: the tools are edited when
    /// the text is in another state (undoing back to it is not an edit).
    pub saved: u64,
}

impl ToolsEditor {
    pub fn new(text: &str, path: Option<PathBuf>) -> Self {
        let mut t = ToolsEditor {
            editor: CodeEditor::new(text.trim_end_matches('\n')),
            revision: 0,
            check: Ok(ToolSet::empty()),
            checked: 0,
            valid: ToolSet::empty(),
            valid_rev: 0,
            path,
            saved: 0,
        };
        t.recheck();
        t
    }

    pub fn text(&self) -> String {
        self.editor.text()
    }

    /// Replaces the text (a file was loaded), checked at once.
    pub fn set_text(&mut self, text: &str) {
        self.editor.set_text(text.trim_end_matches('\n'));
        self.edited();
        self.check_now();
    }

    /// Call after the text changed; returns the new revision (to check when typing pauses).
    pub fn edited(&mut self) -> u64 {
        self.revision += 1;
        self.revision
    }

    /// Call after the text changed: the effect that checks it when typing has paused.
    pub fn edited_later(&mut self) -> super::Effect {
        let revision = self.edited();
        super::Effect::Later {
            after_ms: CHECK_PAUSE_MS,
            message: Box::new(super::Message::CheckTools { revision }),
        }
    }

    /// Whether the text changed since it was last checked.
    pub fn pending(&self) -> bool {
        self.checked != self.revision
    }

    /// Checks the text now if it changed since the last check.
    pub fn check_now(&mut self) {
        if self.pending() {
            self.recheck();
        }
    }

    /// Whether the text differs from the file it came from (or the tools it started with).
    pub fn is_edited(&self) -> bool {
        self.editor.state() != self.saved
    }

    /// The text now matches its file.
    pub fn mark_saved(&mut self) {
        self.saved = self.editor.state();
    }

    fn recheck(&mut self) {
        self.checked = self.revision;
        let text = self.text();
        self.check = if text.trim().is_empty() {
            // An empty pane means no tools, which is a valid request.
            Ok(ToolSet::empty())
        } else {
            ToolSet::from_json_text(&text)
        };
        if let Ok(tools) = &self.check {
            self.valid = tools.clone();
            self.valid_rev += 1;
        }
    }

    /// What the tools had to have read differently from how they are written, if anything.
    pub fn warnings(&self) -> Vec<String> {
        match &self.check {
            Ok(tools) => tools.warnings().iter().map(|w| w.to_string()).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// What is wrong with the text now, if anything.
    pub fn problem(&self) -> Option<String> {
        self.check.as_ref().err().map(|e| e.to_string())
    }

    /// The tools to send, or why there are none.
    pub fn for_sending(&self) -> Result<ToolSet, String> {
        self.check
            .clone()
            .map_err(|e| format!("the tools are not valid: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    #[test]
    fn the_example_tools_pass_and_an_edit_is_checked_live() {
        let mut t = ToolsEditor::new(EXAMPLE_TOOLS, None);
        assert_eq!(t.valid.len(), 3);
        assert!(t.problem().is_none());
        t.editor
            .input(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE));
        t.edited();
        assert!(t.is_edited());
        t.editor
            .input(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL));
        t.edited();
        assert!(!t.is_edited(), "undone back to the text it started with");
        t.editor
            .input(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL));
        t.edited();
        assert!(
            t.pending() && t.problem().is_none(),
            "checked when typing pauses"
        );
        assert!(t.is_edited());
        t.check_now();
        let p = t.problem().unwrap();
        assert!(p.contains("line 1 column 1"), "{p}");
        assert_eq!(
            t.valid.len(),
            3,
            "the last valid tools stay for the choice list"
        );
        assert!(t.for_sending().is_err());
        // Odd tools are read, with warnings; only a nameless tool is refused.
        t.set_text(r#"[{"name":"a","parameters":{}},{"name":"a","parameters":{}}]"#);
        assert!(t.problem().is_none());
        assert!(t.warnings()[0].contains("a second tool named \"a\""));
        t.set_text(
            r#"[{"name":"a","parameters":{"type":"object","properties":{"p":{"type":"float"}}}}]"#,
        );
        assert_eq!(
            t.warnings(),
            ["tool \"a\": /properties/p/type: type \"float\" is read as \"number\""]
        );
        t.set_text(r#"[{"parameters":{}}]"#);
        assert!(t.problem().unwrap().contains("missing \"name\""));
        t.set_text("");
        assert_eq!(t.for_sending().unwrap().len(), 0);
    }
}
