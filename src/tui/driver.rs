//! The driver: the loop that owns the terminal, feeds messages to [`update`], runs the effects
//! it returns, and draws when something changed.
//!
//! It lives in the terminal layer because it owns the terminal and calls [`super::draw`]; the
//! state machine in [`crate::app`] knows nothing of it and hands it effects as data.
//!
//! Runs are tokio tasks that forward their [`RunEvent`]s, stamped with the time since the run
//! started, as messages through one channel. Cancelling a run aborts its task, which drops the
//! provider's `Run` and with it the HTTP request. The driver is generic over the ratatui
//! backend: tests drive it on a `TestBackend`, pressing keys and reading the screen.
//!
//! [`RunEvent`]: toolscope_core::provider::RunEvent

use std::collections::HashMap;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use base64::Engine as _;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::crossterm::event::MouseEventKind;
use tokio::sync::{OnceCell, mpsc};
use tokio::task::AbortHandle;

use toolscope_core::error::{ErrorCategory, ProviderError};
use toolscope_core::mcp::{
    CancellationToken, McpClient, McpError, McpOptions, McpServerSpec, StderrSink,
};
use toolscope_core::part::Part;
use toolscope_core::provider::{Keys, Request, Run, RunEvent};
use toolscope_core::session::Session;
use toolscope_core::session::journal::Journal;
use toolscope_demo::{DemoOptions, DemoServer};

use crate::app::mcp::{CallId, ServerId};
use crate::app::{App, Effect, FilePurpose, Message, Remembered, RunId, StateFiles, update};
use crate::verify::battery;
use crate::verify::score::Answer;
use crate::verify::suite::Suite;

use super::View;

/// The shortest time between two frames: at most 60 a second, however fast events arrive.
pub const FRAME: Duration = Duration::from_millis(16);

/// What the driver needs from outside the state.
pub struct DriverOptions {
    /// API keys (never part of the state, so never drawn or saved).
    pub keys: Keys,
    /// How the built-in demo model streams (tests want it instant).
    pub demo: DemoOptions,
    /// Where OSC 52 clipboard sequences go (the terminal; a buffer in tests).
    pub clipboard: Box<dyn Write + Send>,
    /// Where the main run is journaled as it streams (none: not journaled).
    pub journal: Option<PathBuf>,
    /// How MCP servers are connected to (the largest message read).
    pub mcp: McpOptions,
}

/// Whether the loop goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Quit,
}

/// The demo model, started on a loopback port the first time a run needs it and kept for the
/// rest of the session.
struct DemoHost {
    options: DemoOptions,
    server: OnceCell<DemoServer>,
}

impl DemoHost {
    async fn base_url(&self) -> io::Result<String> {
        let server = self
            .server
            .get_or_try_init(|| async {
                toolscope_demo::serve(SocketAddr::from(([127, 0, 0, 1], 0)), self.options).await
            })
            .await?;
        Ok(server.base_url())
    }
}

pub struct Driver<B: Backend> {
    terminal: Terminal<B>,
    view: View,
    engine_tx: mpsc::UnboundedSender<Message>,
    engine_rx: mpsc::UnboundedReceiver<Message>,
    runs: HashMap<RunId, AbortHandle>,
    /// The verify batteries running (at most one: a new one stops the last).
    batteries: HashMap<u64, AbortHandle>,
    keys: Keys,
    demo: Arc<DemoHost>,
    clipboard: Box<dyn Write + Send>,
    last_frame: Option<Instant>,
    frames: u64,
    journal_path: Option<PathBuf>,
    /// The journal of the main run, and that run's id.
    journal: Option<(RunId, Journal)>,
    keep_journal: bool,
    mcp: McpHost,
    mcp_options: McpOptions,
}

/// The MCP servers the playground is connected to, and the calls in flight on them.
#[derive(Default)]
struct McpHost {
    /// Each connected server (shared with the task that watches it).
    clients: Arc<Mutex<HashMap<ServerId, Arc<McpClient>>>>,
    /// The task that connects to a server, lists its tools again when they change, and says
    /// when it died.
    watchers: HashMap<ServerId, AbortHandle>,
    /// What cancels each call in flight.
    calls: Arc<Mutex<HashMap<CallId, CancellationToken>>>,
}

/// How often a server's watcher checks that the connection is still there (the SDK has no
/// signal for a stdio server that exited).
const MCP_ALIVE_CHECK: Duration = Duration::from_millis(500);

impl<B: Backend> Driver<B> {
    pub fn new(terminal: Terminal<B>, options: DriverOptions) -> Self {
        let (engine_tx, engine_rx) = mpsc::unbounded_channel();
        Driver {
            terminal,
            view: View::new(),
            engine_tx,
            engine_rx,
            runs: HashMap::new(),
            batteries: HashMap::new(),
            keys: options.keys,
            demo: Arc::new(DemoHost {
                options: options.demo,
                server: OnceCell::new(),
            }),
            clipboard: options.clipboard,
            last_frame: None,
            frames: 0,
            journal_path: options.journal,
            journal: None,
            keep_journal: false,
            mcp: McpHost::default(),
            mcp_options: options.mcp,
        }
    }

    pub fn terminal(&self) -> &Terminal<B> {
        &self.terminal
    }

    pub fn terminal_mut(&mut self) -> &mut Terminal<B> {
        &mut self.terminal
    }

    /// Frames drawn so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Runs still in flight.
    pub fn running(&self) -> usize {
        self.runs.len()
    }

    /// Draws the state now.
    pub fn draw(&mut self, app: &App) -> io::Result<()> {
        // The journal goes out with each frame, before it: what the screen shows is on the
        // disk's way. A frame follows every event by at most [`FRAME`], so a killed process
        // loses at most the events of that last moment.
        self.flush_journal();
        let view = &self.view;
        self.terminal
            .draw(|frame| super::draw(frame, app, view))
            .map_err(|e| io::Error::other(e.to_string()))?;
        self.last_frame = Some(Instant::now());
        self.frames += 1;
        Ok(())
    }

    /// Feeds one message to `update` and runs the effects.
    pub fn handle(&mut self, app: &mut App, message: Message) -> Flow {
        if let Message::RunEnded { id, .. } = &message {
            self.runs.remove(id);
        }
        if let Message::VerifyEnded { id, .. } = &message {
            self.batteries.remove(id);
        }
        self.journal_event(&message);
        if matches!(message, Message::Quit) {
            // Stopped from outside (the terminal closed, SIGTERM): the run in progress was not
            // the user's choice to drop, so its journal stays for the next start to offer.
            self.keep_journal = true;
        }
        let mut flow = Flow::Continue;
        for effect in update(app, message) {
            if let Effect::StartRun { id, request } = &effect
                && app.run.record.id == Some(*id)
            {
                self.start_journal(*id, request);
            }
            if self.run_effect(effect) == Flow::Quit {
                flow = Flow::Quit;
            }
        }
        flow
    }

    /// The journal file of the run in progress, when one is being written.
    pub fn journal_file(&self) -> Option<&Path> {
        self.journal.as_ref().map(|(_, j)| j.path())
    }

    /// Starts journaling the main run `id` (replacing the previous run's journal).
    fn start_journal(&mut self, id: RunId, request: &Request) {
        let Some(path) = &self.journal_path else {
            return;
        };
        self.journal = None;
        match Journal::create(path, request) {
            Ok(j) => self.journal = Some((id, j)),
            Err(e) => tracing::warn!("cannot write the journal {}: {e}", path.display()),
        }
    }

    /// Writes an event of the journaled run into the journal's buffer before the state sees
    /// it (the next frame writes the buffer out; the run's end writes it to the disk).
    fn journal_event(&mut self, message: &Message) {
        let Some((jid, journal)) = &mut self.journal else {
            return;
        };
        let result = match message {
            Message::Run { id, event, .. } if id == jid => journal.append(event),
            Message::RunEnded { id, at_ms } if id == jid => journal.end(*at_ms),
            _ => return,
        };
        if let Err(e) = result {
            tracing::warn!("journal stopped: {e}");
            self.journal = None;
        }
    }

    /// Hands the journal's buffer to the operating system.
    fn flush_journal(&mut self) {
        if let Some((_, journal)) = &mut self.journal
            && let Err(e) = journal.flush()
        {
            tracing::warn!("journal stopped: {e}");
            self.journal = None;
        }
    }

    /// The user quit: the journal is not needed any more.
    fn discard_journal(&mut self) {
        if let Some((_, j)) = self.journal.take()
            && let Err(e) = j.discard()
        {
            tracing::warn!("cannot remove the journal: {e}");
        }
    }

    /// The next message from a run or a file operation (tests pump these by hand).
    pub async fn next_engine_message(&mut self) -> Option<Message> {
        self.engine_rx.recv().await
    }

    /// The main loop: until Quit, or until `input` closes.
    pub async fn run(
        &mut self,
        app: &mut App,
        mut input: mpsc::UnboundedReceiver<Message>,
    ) -> io::Result<()> {
        let size = self
            .terminal
            .size()
            .map_err(|e| io::Error::other(e.to_string()))?;
        app.size = (size.width, size.height);
        self.draw(app)?;
        let mut dirty = false;
        loop {
            let next_frame = self.last_frame.unwrap_or_else(Instant::now) + FRAME;
            let message = tokio::select! {
                // Order matters. The user's keys come first, so that Esc or Ctrl+Q act at once
                // even while a fast stream keeps the engine queue full. Run events next. The
                // frame timer last, and only armed when something waits to be drawn: an idle
                // playground sleeps here with no timer at all.
                biased;
                m = input.recv() => match m {
                    Some(m) => m,
                    None => return Ok(()),
                },
                Some(m) = self.engine_rx.recv() => m,
                _ = tokio::time::sleep_until(next_frame.into()), if dirty => {
                    self.draw(app)?;
                    dirty = false;
                    continue;
                }
            };
            let moved = matches!(&message, Message::Mouse(m) if m.kind == MouseEventKind::Moved);
            if self.handle(app, message) == Flow::Quit {
                return Ok(());
            }
            dirty |= !moved;
            // Under a flood of events the timer branch never wins the select; draw here when a
            // frame is due so the screen still moves at 60 frames a second.
            if dirty && self.last_frame.is_none_or(|t| t.elapsed() >= FRAME) {
                self.draw(app)?;
                dirty = false;
            }
        }
    }

    /// Does `work` on a blocking thread (file and folder reads and writes) and hands its message
    /// to the engine.
    fn blocking(&self, work: impl FnOnce() -> Message + Send + 'static) {
        let tx = self.engine_tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(work());
        });
    }

    /// Hands `message` to the engine after `after_ms` milliseconds.
    fn later(&self, after_ms: u64, message: Message) {
        let tx = self.engine_tx.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(after_ms)).await;
            let _ = tx.send(message);
        });
    }

    fn run_effect(&mut self, effect: Effect) -> Flow {
        match effect {
            Effect::StartRun { id, request } => self.start_run(id, *request),
            Effect::CancelRun { id } => {
                if let Some(handle) = self.runs.remove(&id) {
                    handle.abort();
                }
            }
            Effect::LoadFile { purpose, path } => self.blocking(move || {
                let result = std::fs::read_to_string(&path).map_err(|e| e.to_string());
                Message::FileLoaded {
                    purpose,
                    path,
                    result,
                }
            }),
            Effect::SaveFile {
                purpose,
                path,
                contents,
                overwrite,
            } => self.blocking(move || {
                // A file already there is only replaced when the user said so.
                if !overwrite && path.exists() {
                    return Message::WouldOverwrite { path };
                }
                let result = save_atomically(&path, &contents).map_err(|e| e.to_string());
                Message::FileSaved {
                    purpose,
                    path,
                    result,
                }
            }),
            Effect::Copy { text } => {
                if let Err(e) = self
                    .clipboard
                    .write_all(osc52(&text).as_bytes())
                    .and_then(|()| self.clipboard.flush())
                {
                    tracing::warn!("copy failed: {e}");
                }
            }
            Effect::SaveSession {
                path,
                session,
                then_remove,
                overwrite,
                create_folder,
            } => self.blocking(move || {
                if !overwrite && path.exists() {
                    return Message::WouldOverwrite { path };
                }
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
                    && !dir.is_dir()
                {
                    if !create_folder {
                        return Message::NoFolder { path };
                    }
                    // A failure here is the save's own error, said below.
                    let _ = std::fs::create_dir_all(dir);
                }
                let result = session.save(&path).map_err(|e| e.problem);
                if result.is_ok()
                    && let Some(old) = then_remove
                    && let Err(e) = std::fs::remove_file(&old)
                {
                    tracing::warn!("cannot remove {}: {e}", old.display());
                }
                Message::FileSaved {
                    purpose: FilePurpose::Session,
                    path,
                    result,
                }
            }),
            Effect::ListSessions { dirs } => self.blocking(move || Message::SessionsListed {
                entries: crate::app::session::list(&dirs),
            }),
            Effect::LoadSession { path } => self.blocking(move || {
                let result = Session::load(&path)
                    .map(Box::new)
                    .map_err(|e| e.to_string());
                Message::SessionLoaded { path, result }
            }),
            Effect::RemoveFile { path } => {
                if let Err(e) = std::fs::remove_file(&path) {
                    tracing::warn!("cannot remove {}: {e}", path.display());
                }
            }
            Effect::Wake { token, after_ms } => self.later(after_ms, Message::Wake { token }),
            Effect::Later { after_ms, message } => self.later(after_ms, *message),
            Effect::ListModels { provider, base_url } => {
                let tx = self.engine_tx.clone();
                let keys = self.keys.clone();
                let demo = Arc::clone(&self.demo);
                tokio::spawn(async move {
                    let mut url = base_url.clone();
                    let result = async {
                        if url.is_none() && provider == toolscope_demo::provider() {
                            let demo_url = demo
                                .base_url()
                                .await
                                .map_err(|e| format!("cannot start the demo model: {e}"))?;
                            let _ = tx.send(Message::DemoStarted {
                                base_url: demo_url.clone(),
                            });
                            url = Some(demo_url);
                        }
                        toolscope_core::provider::list_models(provider, url.as_deref(), &keys)
                            .await
                            .map_err(|e| e.message)
                    }
                    .await;
                    let _ = tx.send(Message::ModelsListed {
                        provider,
                        base_url,
                        result,
                    });
                });
            }
            Effect::McpConnect { server, spec } => self.mcp_connect(server, spec),
            Effect::McpDisconnect { server } => {
                if let Some(w) = self.mcp.watchers.remove(&server) {
                    w.abort();
                }
                // Dropping the last handle closes the connection (a stdio server is stopped).
                lock(&self.mcp.clients).remove(&server);
            }
            Effect::McpCall {
                call,
                server,
                name,
                arguments,
                timeout_ms,
            } => self.mcp_call(call, server, name, arguments, timeout_ms),
            Effect::McpCancel { call } => {
                if let Some(token) = lock(&self.mcp.calls).remove(&call) {
                    token.cancel();
                }
            }
            Effect::StartVerify {
                id,
                suite,
                template,
                runs,
                concurrency,
            } => self.start_verify(id, suite, *template, runs, concurrency),
            Effect::StopVerify { id } => {
                if let Some(handle) = self.batteries.remove(&id) {
                    handle.abort();
                }
            }
            // Two small files, written at once: a quit that follows must not outrun them.
            Effect::Remember { files, state } => remember(&files, &state),
            Effect::Quit => {
                for (_, handle) in self.runs.drain().chain(self.batteries.drain()) {
                    handle.abort();
                }
                for (_, w) in self.mcp.watchers.drain() {
                    w.abort();
                }
                lock(&self.mcp.clients).clear();
                if !self.keep_journal {
                    self.discard_journal();
                }
                return Flow::Quit;
            }
        }
        Flow::Continue
    }

    /// Connects to an MCP server and lists its tools; then lists them again each time the
    /// server says they changed, and reports the server dead when its connection goes.
    fn mcp_connect(&mut self, server: ServerId, spec: McpServerSpec) {
        let tx = self.engine_tx.clone();
        let clients = Arc::clone(&self.mcp.clients);
        let exe = std::env::current_exe().ok();
        let spec = crate::app::mcp::this_toolscope(spec, exe.as_deref());
        let options = self.mcp_options.clone();
        let task = tokio::spawn(async move {
            let sink: StderrSink = {
                let tx = tx.clone();
                Arc::new(move |name: &str, line: &str| {
                    tracing::info!(server = name, "{line}");
                    let _ = tx.send(Message::McpStderr {
                        server,
                        line: line.to_string(),
                    });
                })
            };
            let client = match McpClient::connect_with(&spec, sink, &options).await {
                Ok(c) => Arc::new(c),
                Err(e) => {
                    tracing::warn!("MCP server {spec}: {e}");
                    let _ = tx.send(Message::McpListed {
                        server,
                        result: Err(e.to_string()),
                    });
                    return;
                }
            };
            tracing::info!(server = client.name(), "MCP server connected: {spec}");
            lock(&clients).insert(server, Arc::clone(&client));
            let mut changed = client.list_changed();
            loop {
                changed.mark_unchanged();
                let result = client
                    .list_tools()
                    .await
                    .map(|tools| (client.name().to_string(), tools))
                    .map_err(|e| e.to_string());
                let failed = result.is_err();
                if tx.send(Message::McpListed { server, result }).is_err() || failed {
                    break;
                }
                // Until the tools change or the connection goes.
                let gone = loop {
                    tokio::select! {
                        r = changed.changed() => break r.is_err(),
                        _ = tokio::time::sleep(MCP_ALIVE_CHECK) => {
                            if client.is_closed() {
                                break true;
                            }
                        }
                    }
                };
                if gone {
                    let _ = tx.send(Message::McpListed {
                        server,
                        result: Err(format!(
                            "{}: the server closed the connection (it exited?)",
                            client.name()
                        )),
                    });
                    break;
                }
            }
            lock(&clients).remove(&server);
        });
        if let Some(old) = self.mcp.watchers.insert(server, task.abort_handle()) {
            old.abort();
        }
    }

    /// Runs one `tools/call`; the result (or the failure) comes back as `McpCalled`.
    fn mcp_call(
        &mut self,
        call: CallId,
        server: ServerId,
        name: String,
        arguments: serde_json::Value,
        timeout_ms: u64,
    ) {
        let tx = self.engine_tx.clone();
        let client = lock(&self.mcp.clients).get(&server).cloned();
        let token = CancellationToken::new();
        lock(&self.mcp.calls).insert(call, token.clone());
        let calls = Arc::clone(&self.mcp.calls);
        tokio::spawn(async move {
            let started = Instant::now();
            let result = match client {
                Some(c) => {
                    c.call_tool_json(
                        &name,
                        &name,
                        &arguments,
                        Duration::from_millis(timeout_ms),
                        &token,
                    )
                    .await
                }
                None => Err(McpError::Closed(format!(
                    "tools/call {name}: the server is not connected"
                ))),
            };
            lock(&calls).remove(&call);
            let _ = tx.send(Message::McpCalled {
                call,
                elapsed_ms: started.elapsed().as_millis() as u64,
                result,
            });
        });
    }

    /// Runs a verify battery as one task: each answer goes to the state as it comes, then the
    /// ending. Stopping it aborts the task, which drops the requests in flight.
    fn start_verify(
        &mut self,
        id: u64,
        suite: Arc<Suite>,
        template: Request,
        runs: u32,
        concurrency: usize,
    ) {
        let tx = self.engine_tx.clone();
        let keys = self.keys.clone();
        tracing::info!(
            id,
            provider = %template.provider,
            model = %template.model,
            "verify battery started"
        );
        let started = Instant::now();
        let task = tokio::spawn(async move {
            let at_ms = move || started.elapsed().as_millis() as u64;
            let jobs = battery::jobs(&suite, runs);
            let answers = tx.clone();
            let progress = move |_: usize, _: usize, answer: &Answer| {
                let _ = answers.send(Message::VerifyAnswer {
                    id,
                    at_ms: at_ms(),
                    answer: Box::new(answer.clone()),
                });
            };
            let (_, ending) = battery::run(
                &suite,
                &template,
                &keys,
                &jobs,
                concurrency,
                progress,
                std::future::pending(),
            )
            .await;
            let _ = tx.send(Message::VerifyEnded {
                id,
                at_ms: at_ms(),
                ending,
            });
        });
        if let Some(old) = self.batteries.insert(id, task.abort_handle()) {
            old.abort();
        }
    }

    fn start_run(&mut self, id: RunId, mut request: Request) {
        let tx = self.engine_tx.clone();
        let keys = self.keys.clone();
        let demo = Arc::clone(&self.demo);
        tracing::info!(
            id,
            provider = %request.provider,
            model = %request.model,
            "run started"
        );
        let started = Instant::now();
        let task = tokio::spawn(async move {
            let at_ms = || started.elapsed().as_millis() as u64;
            if toolscope_demo::needs_server(&request) {
                match demo.base_url().await {
                    Ok(url) => {
                        let _ = tx.send(Message::DemoStarted {
                            base_url: url.clone(),
                        });
                        request.base_url = Some(url);
                    }
                    Err(e) => {
                        let error = ProviderError::new(
                            ErrorCategory::ProviderUnavailable,
                            format!("cannot start the demo model: {e}"),
                        );
                        let event = RunEvent::Part(Part::error(error.to_part()));
                        let _ = tx.send(Message::Run {
                            id,
                            at_ms: at_ms(),
                            event,
                        });
                        let _ = tx.send(Message::RunEnded { id, at_ms: at_ms() });
                        return;
                    }
                }
            }
            let mut run = Run::start(request, keys);
            while let Some(event) = run.next().await {
                if tx
                    .send(Message::Run {
                        id,
                        at_ms: at_ms(),
                        event,
                    })
                    .is_err()
                {
                    return;
                }
            }
            let _ = tx.send(Message::RunEnded { id, at_ms: at_ms() });
        });
        self.runs.insert(id, task.abort_handle());
    }
}

/// The lock of a map shared with the MCP tasks (a task that panicked left it usable).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The OSC 52 sequence that puts `text` on the terminal's clipboard.
pub fn osc52(text: &str) -> String {
    let data = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{data}\x07")
}

/// Writes the remembered state to its files (creating their folders): the settings changed, as
/// edits of `settings.toml` as it is now, and the last work. A file that could not be read is
/// kept as a `.bak` before it is replaced; one that cannot be read at all now (no permission)
/// is left alone. A failure is logged: the playground goes on without remembering.
fn remember(files: &StateFiles, state: &Remembered) {
    let write = |path: &Path, text: &str| {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(e) = save_atomically(path, text) {
            tracing::warn!("cannot remember the state in {}: {e}", path.display());
        }
    };
    if let Some(p) = &files.settings {
        let existing = match std::fs::read(p) {
            Ok(bytes) => Some(String::from_utf8(bytes).map_err(|_| ())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!("cannot read {} to change it: {e}", p.display());
                return;
            }
        };
        match state.settings_write(existing.as_ref().map(|r| r.as_deref().map_err(|_| ()))) {
            crate::app::remember::SettingsWrite::Keep => {}
            crate::app::remember::SettingsWrite::Edit(text) => write(p, &text),
            crate::app::remember::SettingsWrite::Replace(text) => {
                if back_up(p) {
                    write(p, &text);
                }
            }
        }
    }
    if let (Some(p), Some(json)) = (&files.last, state.last_json()) {
        let unreadable = match std::fs::read(p) {
            Ok(bytes) => !std::str::from_utf8(&bytes).is_ok_and(Remembered::last_readable),
            Err(e) => e.kind() != io::ErrorKind::NotFound,
        };
        if !unreadable || back_up(p) {
            write(p, &json);
        }
    }
}

/// Keeps a copy of `path` beside it as `NAME.bak` (`NAME.bak.2`, … when that is taken), before
/// it is replaced; false (logged) when no copy could be made.
fn back_up(path: &Path) -> bool {
    let mut name = path.as_os_str().to_owned();
    name.push(".bak");
    let mut backup = PathBuf::from(&name);
    let mut n = 1;
    while backup.exists() {
        n += 1;
        let mut numbered = name.clone();
        numbered.push(format!(".{n}"));
        backup = PathBuf::from(numbered);
    }
    match std::fs::copy(path, &backup) {
        Ok(_) => {
            tracing::warn!(
                "{} could not be read: kept as {} before it is replaced",
                path.display(),
                backup.display()
            );
            true
        }
        Err(e) => {
            tracing::warn!(
                "{} could not be read and cannot be backed up ({e}): it is left as it is",
                path.display()
            );
            false
        }
    }
}

/// Writes next to `path`, then renames over it: a crash never leaves half a file.
/// The temporary file is named as a session's is (after this process), so that one a killed
/// save left is cleaned up by the next save to that folder.
fn save_atomically(path: &Path, contents: &str) -> io::Result<()> {
    use toolscope_core::session::{clean_leftovers, temp_name};
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other("not a file name"))?;
    clean_leftovers(dir);
    let tmp = dir.join(temp_name(&name.to_string_lossy()));
    let write = || -> io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25, point 8: a settings or last-work file that could not be read is kept as a
    /// `.bak` before it is replaced (a second time, beside the first backup).
    #[test]
    fn an_unreadable_state_file_is_backed_up_before_it_is_replaced() {
        use crate::app::theme::Themes;
        use crate::app::{App, Setup};
        let dir = std::env::temp_dir().join(format!("toolscope-bak-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let files = StateFiles {
            settings: Some(dir.join("settings.toml")),
            last: Some(dir.join("last.json")),
        };
        let broken_settings = "theme = \"dark\"\nmodel = [not closed\n";
        let broken_last = "{\"tools\": \"[]\", \"system\": ";
        for round in ["", ".2"] {
            std::fs::write(dir.join("settings.toml"), broken_settings).unwrap();
            std::fs::write(dir.join("last.json"), broken_last).unwrap();
            let mut app = App::new(Setup::default(), Themes::built_in());
            app.theme = "light".into();
            remember(&files, &Remembered::of(&app, true));
            let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
            assert_eq!(read(&format!("settings.toml.bak{round}")), broken_settings);
            assert_eq!(read(&format!("last.json.bak{round}")), broken_last);
            assert_eq!(read("settings.toml"), "theme = \"light\"\n");
            assert!(Remembered::last_readable(&read("last.json")));
        }
        // A file that reads is edited in place, with no backup.
        std::fs::write(dir.join("settings.toml"), "# mine\ntheme = \"dark\"\n").unwrap();
        let mut app = App::new(Setup::default(), Themes::built_in());
        app.theme = "light".into();
        remember(&files, &Remembered::of(&app, false));
        assert_eq!(
            std::fs::read_to_string(dir.join("settings.toml")).unwrap(),
            "# mine\ntheme = \"light\"\n"
        );
        assert!(!dir.join("settings.toml.bak.3").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn osc52_encodes_base64() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
