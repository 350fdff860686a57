//! The terminal face of the playground: drawing the [`App`] state, and owning the terminal
//! (setup and restore in [`terminal`], the loop that feeds the state machine in [`driver`]).
//!
//! Drawing only reads the state. [`draw`] lays the screen out (with the app's [`layout`]),
//! asks each pane to draw itself (one file per pane in [`panes`]), puts an overlay on top when
//! one is open, and finally checks every cell so that no control character can reach the
//! terminal. It works on any ratatui backend: the real terminal, or `TestBackend` in tests and
//! benchmarks. The only memory it keeps between frames is the highlighting cache in [`View`].

pub mod detail;
pub mod driver;
pub mod help;
pub mod highlight;
pub mod overlay;
pub mod panes;
pub mod sanitize;
pub mod sessions;
pub mod terminal;
pub mod text;
pub mod timeline;

use std::cell::RefCell;

use ratatui::Frame;
use ratatui::style::Style;

use crate::app::code_editor::CodeEditor;
use crate::app::{App, Overlay};

use crate::app::layout::{self, Screen};
use highlight::{ClassedLine, Incremental};

/// What drawing remembers between frames: highlighted JSON, so that an unchanged text is not
/// highlighted again and an edited one only from its change on. It never changes what is drawn.
#[derive(Default)]
pub struct View {
    /// The Tools text's classes, and the editor and the count of its changes they follow.
    tools: RefCell<(Option<(u64, u64)>, Incremental)>,
    /// The lines of the text of the detail or request window and their classes, for the text
    /// they were made from (its length and hash).
    window: RefCell<Option<WindowText>>,
}

/// A window's text as drawn: the key of the text it came from (length and hash), its lines, and
/// their highlighting.
type WindowText = ((usize, u64), Vec<String>, Incremental);

impl View {
    pub fn new() -> View {
        View::default()
    }

    /// The classes of lines `range` of the Tools text. After an edit only the lines from the
    /// first changed one are classified again (the editor tells which; when it cannot, every
    /// line is compared with what the cache saw).
    pub fn tools_classes(
        &self,
        editor: &CodeEditor,
        range: std::ops::Range<usize>,
    ) -> Vec<ClassedLine> {
        let mut cache = self.tools.borrow_mut();
        let (seen, inc) = &mut *cache;
        let lines = editor.lines();
        let first = match *seen {
            Some((id, changes)) if id == editor.id() => editor.first_change_since(changes),
            _ => None,
        };
        match first {
            Some(row) => inc.invalidate_from(row),
            None => inc.sync(lines),
        }
        *seen = Some((editor.id(), editor.changes()));
        inc.classes(lines, range)
    }

    /// The classes of lines `range` of a window's `text` (read as JSON).
    pub fn window_classes(&self, text: &str, range: std::ops::Range<usize>) -> Vec<ClassedLine> {
        let key = (text.len(), highlight::text_hash(text));
        let mut cache = self.window.borrow_mut();
        if cache.as_ref().is_none_or(|(k, _, _)| *k != key) {
            let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
            let mut inc = Incremental::default();
            inc.sync(&lines);
            *cache = Some((key, lines, inc));
        }
        let (_, lines, inc) = cache.as_mut().expect("filled above");
        inc.classes(lines, range)
    }
}

/// Draws the whole screen for `app`.
pub fn draw(frame: &mut Frame<'_>, app: &App, view: &View) {
    let area = frame.area();
    let theme = app.theme();
    frame.buffer_mut().set_style(
        area,
        Style::default().fg(theme.ui.text).bg(theme.ui.background),
    );
    match layout::screen(area, app) {
        Screen::TooSmall(area) => panes::too_small::draw(frame, area, app),
        Screen::Main(m) => {
            panes::tools::draw(frame, m.tools, app, view);
            panes::tool_choice::draw(frame, m.choice, app);
            panes::prompt::draw(frame, m.prompt, app);
            panes::raw::draw(frame, m.raw, app);
            panes::parts::draw(frame, m.parts, app, view);
            panes::status::draw(frame, m.status, app);
        }
        Screen::Compare(c) => {
            panes::compare::draw(frame, &c, app);
            panes::status::draw(frame, c.status, app);
        }
        Screen::Verify(v) => {
            panes::verify::draw(frame, &v, app);
            panes::status::draw(frame, v.status, app);
        }
    }
    if !matches!(layout::screen(area, app), Screen::TooSmall(_)) {
        match &app.overlay {
            Some(Overlay::Help { scroll }) => help::draw(frame, area, app, *scroll),
            Some(Overlay::Picker(p)) => overlay::picker(frame, area, app, p),
            Some(Overlay::Protocols(p)) => overlay::protocols(frame, area, app, p),
            Some(Overlay::Choices(p)) => overlay::choices(frame, area, app, p),
            Some(Overlay::Path {
                purpose,
                save,
                editor: e,
            }) => overlay::path(frame, area, app, *purpose, *save, e),
            Some(Overlay::AddServer(e)) => overlay::add_server(frame, area, app, e),
            Some(Overlay::Sessions(p)) => sessions::picker(frame, area, app, p),
            Some(Overlay::Restore(r)) => sessions::restore(frame, area, app, r),
            Some(Overlay::Confirm(c)) => overlay::confirm(frame, area, app, c),
            Some(Overlay::Edit { index, editor }) => {
                overlay::edit(frame, area, app, *index, editor)
            }
            Some(Overlay::Detail(d)) => detail::detail(frame, area, app, d, view),
            Some(Overlay::Timeline) => timeline::window_for_run(frame, area, app),
            Some(Overlay::Request(r)) => detail::request(frame, area, app, r, view),
            None => {}
        }
    }
    sanitize::buffer(frame.buffer_mut());
}
