//! The playground as a state machine: one [`App`] owns all state, every event is a [`Message`],
//! and [`update`] changes the state and returns [`Effect`]s for the driver (in the `tui` layer)
//! to run.
//!
//! Nothing here draws or does IO, and nothing here imports the `tui` layer (the test in
//! `tests/app_wall.rs` reads these files to hold that): the terminal depends on the state, never the
//! other way. The driver forwards terminal input and run events as messages through one queue,
//! runs the effects, and draws the state when it changed. Because time only enters through
//! messages, the same `update` serves live runs, tests with fixed times, and (later) the replay
//! of recorded sessions.

pub mod choice;
pub mod choice_picker;
pub mod code_editor;
pub mod compare;
pub mod confirm;
pub mod detail;
pub mod editor;
pub mod effect;
pub mod fuzzy;
pub mod glyph;
pub mod help;
pub mod keymap;
pub mod layout;
pub mod mcp;
mod mcp_update;
pub mod message;
mod notice;
mod overlays;
pub mod parts;
pub mod picker;
pub mod prompt;
pub mod protocol_picker;
pub mod providers;
pub mod remember;
pub mod request_view;
pub mod run_view;
mod runs;
pub mod search;
pub mod session;
mod session_update;
pub mod text_log;
pub mod theme;
pub mod timeline;
pub mod tools;
pub mod transcript;
mod update;
pub mod url;
pub mod verify;

use std::path::PathBuf;

use ratatui_textarea::TextArea;

use toolscope_core::protocol::Protocol;
use toolscope_core::provider::{Limits, ProviderKind, Sampling, Timeouts};
use toolscope_core::tool::ToolChoice;

use theme::{Theme, Themes};

pub use compare::Compare;
pub use confirm::{Confirm, Pending};
pub use detail::Detail;
pub use effect::Effect;
pub use message::{FilePurpose, Message};
pub use notice::Notice;
pub use picker::Picker;
pub use prompt::Prompt;
pub use remember::{Remembered, StateFiles};
pub use request_view::RequestView;
pub use run_view::{
    Detection, RawMode, RawText, RunCursor, RunId, RunRecord, RunState, RunView, Wire,
};
pub use search::Search;
pub use session::{Opened, Pace, Playback, SessionDirs, SessionEntry, SessionPicker};
pub use tools::ToolsEditor;
pub use update::update;

/// Where the playground starts: what the command line chose.
#[derive(Clone, Debug)]
pub struct Setup {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: Option<String>,
    pub protocol: Option<Protocol>,
    /// Without a protocol: read the native answer's text with protocol detection (`auto`).
    pub detect_protocol: bool,
    pub tool_choice: ToolChoice,
    /// The tools JSON text, and the file it came from.
    pub tools: String,
    /// What to remember as the last tools while the pane is not edited, when `tools` is not
    /// the user's (the empty list an MCP start puts there instead of the example tools).
    pub tools_to_remember: Option<String>,
    pub tools_path: Option<PathBuf>,
    pub system: String,
    pub prompt: String,
    pub theme: String,
    /// Sampling settings (temperature, max tokens, …); absent ones are left to the provider.
    pub sampling: Sampling,
    /// Where sessions are saved and listed, and where the journal goes.
    pub sessions: SessionDirs,
    /// Where the remembered settings and the last tools and prompt are written (none: nowhere).
    pub state: StateFiles,
    /// The most model turns the automatic MCP loop sends (`--max-steps`).
    pub max_steps: usize,
    /// How long one MCP tool call may take (`--mcp-timeout`), in milliseconds.
    pub mcp_timeout_ms: u64,
    /// How long a request waits (`--connect-timeout`, `--first-token-timeout`,
    /// `--idle-timeout`).
    pub timeouts: Timeouts,
    /// How much of an answer is held (`--max-event-mib`, `--max-raw-mib`).
    pub limits: Limits,
    /// A journal found at start, recovered, to offer restoring.
    pub restore: Option<Restore>,
    /// The panes' shares of the screen, as last resized.
    pub splits: layout::Splits,
}

/// An interrupted run found at start.
#[derive(Clone, Debug)]
pub struct Restore {
    /// The journal file it was read from (removed once restored and saved, or declined).
    pub journal: PathBuf,
    pub session: Box<toolscope_core::session::Session>,
    /// Whether the run had ended before the playground stopped.
    pub ended: bool,
}

impl Default for Setup {
    /// The demo model with the example tools and a prompt that makes it call one.
    fn default() -> Self {
        Setup {
            provider: toolscope_demo::provider(),
            model: toolscope_demo::DEFAULT_MODEL.to_string(),
            base_url: None,
            protocol: None,
            detect_protocol: false,
            tool_choice: ToolChoice::Auto,
            tools: tools::EXAMPLE_TOOLS.to_string(),
            tools_to_remember: None,
            tools_path: None,
            system: prompt::EXAMPLE_SYSTEM.to_string(),
            prompt: prompt::EXAMPLE_PROMPT.to_string(),
            theme: "dark".to_string(),
            sampling: Sampling::default(),
            sessions: SessionDirs::default(),
            state: StateFiles::default(),
            max_steps: mcp::DEFAULT_MAX_STEPS,
            mcp_timeout_ms: mcp::DEFAULT_CALL_TIMEOUT_MS,
            timeouts: Timeouts::default(),
            limits: Limits::default(),
            restore: None,
            splits: layout::Splits::default(),
        }
    }
}

/// What has the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Tools,
    /// The MCP servers and their tools, under the JSON in the Tools pane.
    Mcp,
    ToolChoice,
    /// The system prompt, in the Prompt pane.
    System,
    /// The conversation, in the Prompt pane: a message is selected to edit, delete or run from.
    Transcript,
    /// The message being written, in the Prompt pane.
    Composer,
    /// The result of the answer's call `i`, in the Prompt pane.
    Result(usize),
    Raw,
    Parts,
}

impl Focus {
    /// Whether the focus is inside the Prompt pane.
    pub fn in_prompt(self) -> bool {
        matches!(
            self,
            Focus::System | Focus::Transcript | Focus::Composer | Focus::Result(_)
        )
    }
}

/// A window over the panes that takes the keyboard while open.
pub enum Overlay {
    /// The keys and the theme picker, scrolled down this many rows.
    Help {
        scroll: usize,
    },
    Picker(Box<Picker>),
    /// The protocol picker (Ctrl+L).
    Protocols(Box<protocol_picker::ProtocolPicker>),
    /// The tool-choice modes filtered as you type (`/` in the Tool choice pane).
    Choices(Box<choice_picker::ChoicePicker>),
    /// Asks for a file path.
    Path {
        purpose: FilePurpose,
        save: bool,
        editor: Box<TextArea<'static>>,
    },
    /// The session picker (Ctrl+O).
    Sessions(Box<SessionPicker>),
    /// Offers to restore a run interrupted by a crash.
    Restore(Box<Restore>),
    /// Asks before something the user made is replaced, overwritten or dropped.
    Confirm(Box<Confirm>),
    /// The whole of a long text (a part, an error, reasoning, a message), scrollable.
    Detail(Box<Detail>),
    /// The last run's timeline (`t` in the Raw and Parts panes): time to first token, when each
    /// call started and ended, the output rate over time.
    Timeline,
    /// The exact request (Ctrl+E).
    Request(Box<RequestView>),
    /// Asks for an MCP server to add: a command line, or `URL[=TOKEN_ENV]`.
    AddServer(Box<TextArea<'static>>),
    /// Edits message `index` of the conversation.
    Edit {
        index: usize,
        editor: Box<TextArea<'static>>,
    },
}

pub struct App {
    pub provider: ProviderKind,
    pub model: String,
    pub base_url: Option<String>,
    /// `None`: native tool calling.
    pub protocol: Option<Protocol>,
    /// Native tool calling whose answer text is read with protocol detection (the picker's
    /// `auto`); only without a protocol.
    pub detect_protocol: bool,
    pub choice: ToolChoice,
    pub sampling: Sampling,
    /// The waits and bounds every request of this session gets (from the flags).
    pub timeouts: Timeouts,
    pub limits: Limits,
    pub tools: ToolsEditor,
    /// The MCP servers, their tools, and the calls executed on them.
    pub mcp: mcp::McpState,
    /// What to remember as the last tools while the Tools pane is not edited (see
    /// [`Setup::tools_to_remember`]).
    pub tools_to_remember: Option<String>,
    /// The MCP steps since the main run's conversation began a loop (for saving it).
    pub trail: Vec<mcp::TrailStep>,
    pub prompt: Prompt,
    /// The run the Raw and Parts panes show.
    pub run: RunView,
    /// The compare view, when open (Ctrl+K).
    pub compare: Option<Compare>,
    /// The verify battery (Alt+S), running or ended, and its view.
    pub verify: Option<verify::Verify>,
    pub raw_mode: RawMode,
    pub focus: Focus,
    pub overlay: Option<Overlay>,
    pub notice: Option<Notice>,
    /// The last notice, kept after the status line cleared it (F10 shows it whole).
    pub last_notice: Option<Notice>,
    /// The search of the Raw pane (`/`) or the Parts pane (`?`).
    pub search: Option<Search>,
    /// The Parts pane's `/` filter (fuzzy, by part type or tool name; rows in time order).
    pub parts_filter: fuzzy::ListFilter,
    /// The run whose rows the Parts filter holds.
    pub parts_filter_run: Option<RunId>,
    /// The focused pane fills the screen (Alt+Z), the others hidden until it is pressed again.
    pub zoom: bool,
    /// The panes' shares of the screen (Alt+= / Alt+- / Alt+0), remembered with the settings.
    pub splits: layout::Splits,
    pub themes: Themes,
    pub theme: String,
    /// The providers whose API key is set (the keys themselves stay with the driver).
    pub keys_set: Vec<ProviderKind>,
    /// The terminal size (columns, rows), for layout-dependent keys and mouse hits.
    pub size: (u16, u16),
    /// Where sessions are saved and listed.
    pub sessions: SessionDirs,
    /// The session the playground shows, when one was opened.
    pub opened: Option<Opened>,
    /// The playback feeding the open session into a run view.
    pub playback: Option<Playback>,
    /// The pace the next playback starts at (F7 changes it).
    pub pace: Pace,
    /// Whether the conversation holds turns not saved in a session.
    pub unsaved_turns: bool,
    /// Where remembered state goes.
    pub state: StateFiles,
    /// The settings as the playground started (command-line flags included) or as last
    /// remembered: only a setting changed since is written to `settings.toml`.
    pub settings_base: remember::Settings,
    /// The base URL the built-in demo model listens on, once the driver started it.
    pub demo_url: Option<String>,
    /// A save sent to the driver that may come back as `WouldOverwrite` (then it is asked).
    pub pending_save: Option<Box<Effect>>,
    /// Seconds since the Unix epoch, for naming saved files (tests fix it).
    pub clock: fn() -> u64,
    next_run_id: RunId,
    next_token: u64,
}

impl App {
    pub fn new(setup: Setup, themes: Themes) -> App {
        let theme = if themes.contains(&setup.theme) {
            setup.theme.clone()
        } else {
            themes.names()[0].clone()
        };
        let mut app = App {
            provider: setup.provider,
            model: setup.model,
            base_url: setup.base_url,
            detect_protocol: setup.detect_protocol && setup.protocol.is_none(),
            protocol: setup.protocol,
            choice: setup.tool_choice,
            sampling: setup.sampling,
            timeouts: setup.timeouts,
            limits: setup.limits,
            tools: ToolsEditor::new(&setup.tools, setup.tools_path),
            mcp: mcp::McpState::new(setup.max_steps, setup.mcp_timeout_ms),
            trail: Vec::new(),
            tools_to_remember: setup.tools_to_remember,
            prompt: Prompt::new(&setup.system, &setup.prompt),
            run: RunView::idle(),
            compare: None,
            verify: None,
            raw_mode: RawMode::Output,
            focus: Focus::Composer,
            overlay: None,
            notice: None,
            last_notice: None,
            search: None,
            parts_filter: fuzzy::ListFilter::on_slash_in_order(),
            parts_filter_run: None,
            zoom: false,
            splits: setup.splits,
            themes,
            theme,
            keys_set: Vec::new(),
            size: (80, 24),
            sessions: setup.sessions,
            opened: None,
            playback: None,
            pace: Pace::Speed(1.0),
            unsaved_turns: false,
            state: setup.state,
            settings_base: remember::Settings::default(),
            demo_url: None,
            pending_save: None,
            clock: unix_seconds,
            next_run_id: 1,
            next_token: 1,
        };
        if let Some(r) = setup.restore {
            app.overlay = Some(Overlay::Restore(Box::new(r)));
        }
        app.settings_base = remember::Settings::of(&app);
        app.sync_offered();
        app.restyle();
        app
    }

    /// Every tool a request offers now: the Tools pane's that passed their check, and each
    /// ready MCP server's (renamed where names clash).
    pub fn offered(&self) -> &toolscope_core::tool::ToolSet {
        if self.mcp.servers.is_empty() {
            &self.tools.valid
        } else {
            self.mcp.offered()
        }
    }

    /// Brings the offered tools up to date with the Tools pane and the servers.
    pub(crate) fn sync_offered(&mut self) {
        if let Some(problem) = self.mcp.sync(&self.tools.valid, self.tools.valid_rev) {
            notice::notice(self, format!("MCP: {problem}"), true);
        }
    }

    pub fn theme(&self) -> &Theme {
        self.themes.get(&self.theme)
    }

    /// A fresh run id.
    pub(crate) fn next_id(&mut self) -> RunId {
        let id = self.next_run_id;
        self.next_run_id += 1;
        id
    }

    /// A fresh playback token.
    pub(crate) fn next_token(&mut self) -> u64 {
        let t = self.next_token;
        self.next_token += 1;
        t
    }

    /// Whether any run (the main one or a compare column) is streaming.
    pub fn is_running(&self) -> bool {
        self.run.is_running()
            || self
                .compare
                .as_ref()
                .is_some_and(|c| c.columns.iter().any(|v| v.is_running()))
    }

    /// The protocol's name, `auto` (native, text read with detection), or `native`.
    pub fn protocol_name(&self) -> &'static str {
        match &self.protocol {
            Some(p) => p.name(),
            None if self.detect_protocol => "auto",
            None => "native",
        }
    }

    /// The protocol as the status line shows it: with `auto`, the protocol the shown run's
    /// text was read with once detection chose it (`auto → hermes`).
    pub fn protocol_shown(&self) -> String {
        let detected = self
            .run
            .record
            .detected
            .as_ref()
            .filter(|_| self.protocol.is_none() && self.detect_protocol);
        match detected {
            Some(d) => format!("auto → {}", d.protocol),
            None => self.protocol_name().to_string(),
        }
    }

    /// Applies the theme and the focus to every text area (they keep their own styles).
    pub fn restyle(&mut self) {
        let theme = self.themes.get(&self.theme).clone();
        let focus = self.focus;
        editor::style(&mut self.prompt.system, &theme, focus == Focus::System);
        editor::style(&mut self.prompt.composer, &theme, focus == Focus::Composer);
        for (i, r) in self.prompt.results.iter_mut().enumerate() {
            editor::style(r, &theme, focus == Focus::Result(i));
        }
        match &mut self.overlay {
            Some(Overlay::Edit { editor: e, .. }) => editor::style(e, &theme, true),
            Some(Overlay::Picker(p)) => p.restyle(&theme),
            Some(Overlay::Path { editor: e, .. }) => editor::style(e, &theme, true),
            Some(Overlay::AddServer(e)) => editor::style(e, &theme, true),
            _ => {}
        }
    }
}

/// The wall clock in seconds since the Unix epoch.
fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
