//! The whole playground (state machine, driver, drawing) on a `TestBackend`, talking over real
//! loopback HTTP to the built-in demo model at instant pace. Keys go in as messages; a test waits
//! for the engine's events (never for a fixed time) and reads the state and the screen.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use toolscope::app::{App, Message};
use toolscope::tui::driver::{Driver, DriverOptions, Flow};
use toolscope_core::part::Part;
use toolscope_core::provider::Keys;
use toolscope_demo::DemoOptions;

/// Everything a test drives.
pub struct Harness {
    pub app: App,
    pub driver: Driver<TestBackend>,
    pub clipboard: Arc<Mutex<Vec<u8>>>,
}

struct Clipboard(Arc<Mutex<Vec<u8>>>);

impl Write for Clipboard {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// How long a test waits for the demo model before failing: generous, it is only reached when
/// something is broken.
pub const DEADLINE: Duration = Duration::from_secs(30);

impl Harness {
    pub fn new(width: u16, height: u16) -> Harness {
        Harness::with(super::app(width, height), None)
    }

    /// A harness on `app`, journaling the main run to `journal` when given.
    pub fn with(app: App, journal: Option<PathBuf>) -> Harness {
        Harness::with_keys(app, journal, Keys::default())
    }

    /// A harness whose driver holds `keys`.
    pub fn with_keys(app: App, journal: Option<PathBuf>, keys: Keys) -> Harness {
        let clipboard = Arc::new(Mutex::new(Vec::new()));
        let driver = Driver::new(
            Terminal::new(TestBackend::new(app.size.0, app.size.1)).unwrap(),
            DriverOptions {
                keys,
                demo: DemoOptions::instant(),
                clipboard: Box::new(Clipboard(Arc::clone(&clipboard))),
                journal,
                mcp: Default::default(),
            },
        );
        let mut h = Harness {
            app,
            driver,
            clipboard,
        };
        h.driver.draw(&h.app).unwrap();
        h
    }

    pub fn press(&mut self, message: Message) -> Flow {
        let flow = self.driver.handle(&mut self.app, message);
        self.driver.draw(&self.app).unwrap();
        flow
    }

    /// Types `text` key by key.
    /// Ctrl+L, the name typed as a filter, Enter.
    pub fn pick_protocol(&mut self, name: &str) {
        self.press(super::ctrl('l'));
        self.type_text(name);
        self.press(super::key(ratatui::crossterm::event::KeyCode::Enter));
        assert_eq!(self.app.protocol_name(), name);
    }

    pub fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.press(super::key(ratatui::crossterm::event::KeyCode::Char(c)));
        }
    }

    /// Feeds the engine's messages until `done` holds.
    pub async fn until(&mut self, what: &str, done: impl Fn(&App) -> bool) {
        let wait = async {
            while !done(&self.app) {
                let m = self
                    .driver
                    .next_engine_message()
                    .await
                    .expect("the engine queue stays open");
                self.driver.handle(&mut self.app, m);
            }
        };
        tokio::time::timeout(DEADLINE, wait)
            .await
            .unwrap_or_else(|_| panic!("timed out waiting until {what}"));
        self.driver.draw(&self.app).unwrap();
    }

    pub async fn run_to_end(&mut self) {
        self.until("the run ends", |a| !a.is_running()).await;
    }

    pub fn screen(&self) -> String {
        self.driver.terminal().backend().to_string()
    }

    /// The text of the clipboard writes so far (OSC 52 sequences).
    pub fn clipboard_text(&self) -> String {
        String::from_utf8(self.clipboard.lock().unwrap().clone()).unwrap()
    }

    pub fn has_tool_call(&self) -> bool {
        self.app
            .run
            .record
            .parts
            .parts
            .iter()
            .any(|p| matches!(p, Part::ToolCall(_)))
    }
}
