//! `toolscope` with no subcommand: the playground, on the demo model unless flags say otherwise.
//!
//! This file only wires things together: it reads the flags and the files they name (a bad
//! file is a usage error, exit 2, before the terminal is touched), sets up logging to a file in
//! the data directory (never to the screen the playground owns), takes over the terminal, runs
//! the driver, and gives the terminal back on every way out.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use clap::Args;
use tokio::sync::mpsc;

use super::ProtocolChoice;
use toolscope::app::picker::suggested_model;
use toolscope::app::providers;
use toolscope::app::theme::{Theme, Themes};
use toolscope::app::{App, Message, Notice, Remembered, Restore, SessionDirs, Setup, StateFiles};
use toolscope::tui::driver::{Driver, DriverOptions};
use toolscope::tui::terminal;
use toolscope_core::mcp::{McpOptions, McpServerSpec};
use toolscope_core::provider::{Keys, ProviderKind};
use toolscope_core::session::{Session, journal};
use toolscope_core::tool::ToolSet;
use toolscope_demo::DemoOptions;

#[derive(Args, Debug, Default)]
pub struct PlayArgs {
    /// The provider (openai is also any OpenAI-compatible server, with --base-url).
    #[arg(long, value_parser = super::provider_parser())]
    pub provider: Option<ProviderKind>,
    /// The model name.
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL, e.g. http://localhost:8000/v1 for vLLM.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Emulate tool calling with a text protocol.
    /// `auto`: native tool calling, and calls the server left in the answer text read by the
    /// protocol their markers name.
    #[arg(long, value_parser = super::protocol_choice_parser())]
    pub protocol: Option<ProtocolChoice>,
    #[command(flatten)]
    pub reasoning: super::ReasoningArgs,
    /// The tools file (a JSON array of {name, description, parameters}); the example tools
    /// otherwise.
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// A theme name (dark, light, high-contrast, or one in the user theme directory) or a
    /// theme file.
    #[arg(long)]
    pub theme: Option<String>,
    /// Open this session file: its request fills the panes and its answer replays at the
    /// recorded pace.
    #[arg(long)]
    pub session: Option<PathBuf>,
    /// Take tools from an MCP server run as a child process (stdio): the command and its
    /// arguments, split like a shell would but not run through one; `toolscope` as the program
    /// is this toolscope. Repeatable; F11 adds more at run time.
    #[arg(long = "mcp", value_name = "CMD")]
    pub mcp: Vec<String>,
    /// Take tools from an MCP server over streamable HTTP; `URL=TOKEN_ENV` sends the value of
    /// that variable as a bearer token (never shown or saved). Repeatable.
    #[arg(long = "mcp-url", value_name = "URL[=TOKEN_ENV]")]
    pub mcp_url: Vec<String>,
    /// The most model turns the MCP loop (F12) sends.
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: u32,
    /// Seconds one MCP tool call may take before it is cancelled.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = super::run::positive_secs)]
    pub mcp_timeout: f64,
    /// The largest message read from an MCP server, in MiB; a bigger one fails the call it
    /// answers.
    #[arg(long, value_name = "MB", default_value_t = super::DEFAULT_MCP_MAX_MESSAGE_MB,
          value_parser = super::mcp_max_message_parser())]
    pub mcp_max_message: u64,
    /// The waits and bounds of each request.
    #[command(flatten)]
    pub wire: super::WireArgs,
}

fn dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "toolscope")
}

/// The session folders: `./sessions` when run from the project, the data directory's, and this
/// process's journal file.
fn session_dirs() -> SessionDirs {
    let project = Path::new("sessions");
    let data = dirs().map(|d| d.data_dir().to_path_buf());
    SessionDirs {
        project: project.is_dir().then(|| project.to_path_buf()),
        data: data.as_ref().map(|d| d.join("sessions")),
        journal: data.map(|d| d.join(format!("journal-{}.jsonl", std::process::id()))),
    }
}

/// Whether process `pid` is alive (where that can be told; elsewhere a journal is taken as left
/// behind).
fn alive(pid: u32) -> bool {
    cfg!(target_os = "linux") && Path::new("/proc").join(pid.to_string()).exists()
}

/// A journal left by a playground that did not exit cleanly: the newest one whose process is
/// gone. One that cannot be read is renamed aside (kept, not offered again) and reported.
fn find_interrupted(data_dir: &Path) -> (Option<Restore>, Option<String>) {
    let Ok(read) = std::fs::read_dir(data_dir) else {
        return (None, None);
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = read
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let pid = name.strip_prefix("journal-")?.strip_suffix(".jsonl")?;
            let pid: u32 = pid.parse().ok()?;
            if pid == std::process::id() || alive(pid) {
                return None;
            }
            Some((e.metadata().ok()?.modified().ok()?, e.path()))
        })
        .collect();
    found.sort();
    let Some((_, path)) = found.pop() else {
        return (None, None);
    };
    match journal::recover(&path) {
        Ok(r) => (
            Some(Restore {
                journal: path,
                session: Box::new(r.session),
                ended: r.ended,
            }),
            None,
        ),
        Err(e) => {
            let aside = path.with_extension("broken");
            let _ = std::fs::rename(&path, &aside);
            tracing::warn!("cannot restore: {e}");
            (
                None,
                Some(format!(
                    "cannot restore the interrupted run ({}); kept as {}",
                    e.problem,
                    aside.display()
                )),
            )
        }
    }
}

/// Where the remembered state lives: `settings.toml` in the config directory, `last.json` in
/// the data directory.
fn state_files() -> StateFiles {
    match dirs() {
        Some(d) => StateFiles {
            settings: Some(d.config_dir().join("settings.toml")),
            last: Some(d.data_dir().join("last.json")),
        },
        None => StateFiles::default(),
    }
}

/// The remembered state, and what was wrong with its files (they are then ignored).
fn remembered(files: &StateFiles) -> (Remembered, Vec<String>) {
    let mut unread = Vec::new();
    let mut read = |p: &Option<PathBuf>| {
        let p = p.as_ref()?;
        match std::fs::read_to_string(p) {
            Ok(t) => Some((p.display().to_string(), t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            // Unreadable (no permission, not UTF-8): said, not taken as missing.
            Err(e) => {
                unread.push(format!("{}: {e} (the file is ignored)", p.display()));
                None
            }
        }
    };
    let (settings, last) = (read(&files.settings), read(&files.last));
    let (state, mut problems) = Remembered::parse(
        settings.as_ref().map(|(n, t)| (n.as_str(), t.as_str())),
        last.as_ref().map(|(n, t)| (n.as_str(), t.as_str())),
    );
    problems.extend(unread);
    (state, problems)
}

/// The setup and themes the remembered state and the flags ask for (the flags win), or a
/// usage error; and what was wrong with remembered files.
fn setup_of(args: &PlayArgs) -> Result<(Setup, Themes, Vec<String>), String> {
    let mut setup = Setup {
        state: state_files(),
        max_steps: args.max_steps as usize,
        mcp_timeout_ms: (args.mcp_timeout * 1000.0).round() as u64,
        ..Setup::default()
    };
    args.wire.apply(&mut setup.timeouts, &mut setup.limits);
    let (state, problems) = remembered(&setup.state);
    state.apply(&mut setup, &providers::all());
    if let Some(p) = args.provider {
        setup.provider = p;
        setup.model = suggested_model(setup.provider).to_string();
        setup.base_url = None;
    }
    if let Some(m) = &args.model {
        setup.model = m.clone();
    }
    if args.base_url.is_some() {
        setup.base_url = args.base_url.clone();
    }
    match &args.protocol {
        Some(ProtocolChoice::Named(p)) => {
            setup.protocol = Some(args.reasoning.apply(p.clone())?);
            setup.detect_protocol = false;
        }
        Some(ProtocolChoice::Auto) => {
            if args.reasoning.setting().is_some() {
                return Err(super::AUTO_REASONING.into());
            }
            if args.reasoning.marker_suffix.is_some() {
                return Err(super::AUTO_SUFFIX.into());
            }
            setup.protocol = None;
            setup.detect_protocol = true;
        }
        None => {}
    }
    if let Some(path) = &args.tools {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text).to_string();
        ToolSet::from_json_text(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        setup.tools = text;
        setup.tools_path = Some(path.clone());
    }
    let user_dir = dirs().map(|d| d.config_dir().join("themes"));
    let (mut themes, theme_problems) = Themes::load(user_dir.as_deref());
    for p in &theme_problems {
        tracing::warn!("theme skipped: {p}");
    }
    if let Some(theme) = &args.theme {
        // A theme of the user's that could not be read: say which file and what is wrong.
        let file = user_dir
            .as_ref()
            .map(|d| format!("{}:", d.join(format!("{theme}.toml")).display()));
        if let Some(p) = file.and_then(|f| theme_problems.iter().find(|p| p.starts_with(&f))) {
            return Err(format!("the theme \"{theme}\" cannot be used: {p}"));
        }
        if themes.contains(theme) {
            setup.theme = theme.clone();
        } else if Path::new(theme).extension().is_some_and(|x| x == "toml") {
            let text =
                std::fs::read_to_string(theme).map_err(|e| format!("cannot read {theme}: {e}"))?;
            let stem = Path::new(theme)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let t = Theme::from_toml_named(&text, &stem).map_err(|e| format!("{theme}: {e}"))?;
            setup.theme = t.name.clone();
            themes.insert(t);
        } else {
            return Err(format!(
                "unknown theme \"{theme}\" (expected one of: {}, or a .toml file)",
                themes.names().join(", ")
            ));
        }
    }
    let mut notes = problems;
    notes.extend(
        theme_problems
            .into_iter()
            .map(|p| format!("theme skipped: {p}")),
    );
    Ok((setup, themes, notes))
}

/// Logs to `toolscope.log` in the data directory; nothing when it cannot be created.
fn start_logging() -> Option<tracing_appender::non_blocking::WorkerGuard> {
    let dir = dirs()?.data_dir().to_path_buf();
    std::fs::create_dir_all(&dir).ok()?;
    let appender = tracing_appender::rolling::never(&dir, "toolscope.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .try_init()
        .ok()?;
    Some(guard)
}

/// With MCP servers and no `--tools`, the Tools JSON starts empty: the servers bring the tools,
/// and tools from the last run (or the example tools) would clash with theirs — a remembered
/// `get_weather` would take the calls meant for the server's. What was there stays remembered
/// for the next start while the pane is not edited.
fn servers_bring_the_tools(setup: &mut Setup, with_servers: bool, tools_flag: bool) {
    if with_servers && !tools_flag && setup.tools.trim() != "[]" {
        setup.tools_to_remember = Some(std::mem::replace(&mut setup.tools, "[]".to_string()));
    }
}

pub fn run(args: PlayArgs) -> u8 {
    let _log = start_logging();
    let (mut setup, themes, notes) = match setup_of(&args) {
        Ok(s) => s,
        Err(e) => return super::fail_usage(&e),
    };
    let servers = match super::mcp_servers(&args.mcp, &args.mcp_url) {
        Ok(s) => s,
        Err(e) => return super::fail_usage(&e),
    };
    servers_bring_the_tools(&mut setup, !servers.is_empty(), args.tools.is_some());
    // A session given on the command line must be readable before the terminal is taken.
    let session = match &args.session {
        Some(path) => match Session::load(path) {
            Ok(s) => Some((path.clone(), Box::new(s))),
            Err(e) => return super::fail_usage(&e.to_string()),
        },
        None => None,
    };
    setup.sessions = session_dirs();
    let mut startup_notice = (!notes.is_empty()).then(|| notes.join("; "));
    if let Some(data) = dirs().map(|d| d.data_dir().to_path_buf()) {
        let (restore, problem) = find_interrupted(&data);
        setup.restore = restore;
        if problem.is_some() {
            startup_notice = problem;
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolscope: cannot start the async runtime: {e}");
            return 1;
        }
    };
    tracing::info!(provider = %setup.provider, model = %setup.model, "playground started");
    let result = runtime.block_on(play(
        setup,
        themes,
        session,
        servers,
        startup_notice,
        super::mcp_options(args.mcp_max_message),
    ));
    terminal::restore();
    match result {
        // Ended by a signal: the conventional status, 128 + its number.
        Ok(Some(signal)) => {
            tracing::info!("playground stopped by signal {signal}");
            128 + signal
        }
        Ok(None) => 0,
        Err(e) => {
            tracing::error!("playground failed: {e}");
            eprintln!("toolscope: {e}");
            1
        }
    }
}

async fn play(
    setup: Setup,
    themes: Themes,
    session: Option<(PathBuf, Box<Session>)>,
    servers: Vec<McpServerSpec>,
    startup_notice: Option<String>,
    mcp_options: McpOptions,
) -> std::io::Result<Option<u8>> {
    let journal = setup.sessions.journal.clone();
    // The handlers go in before the terminal is taken: from then on, no signal that ends the
    // process may leave it in raw mode on the alternate screen.
    let signals = Signals::install()?;
    let terminal = terminal::enter()?;
    let (tx, rx) = mpsc::unbounded_channel();
    if let Some((path, session)) = session {
        let _ = tx.send(Message::SessionLoaded {
            path,
            result: Ok(session),
        });
    }
    for spec in servers {
        let _ = tx.send(Message::McpAdd { spec });
    }
    terminal::spawn_input(tx.clone());
    let stopped_by = Arc::new(AtomicU8::new(0));
    tokio::spawn(signals.forward(tx, Arc::clone(&stopped_by)));
    let keys = Keys::from_env();
    let mut app = App::new(setup, themes);
    if let Some(text) = startup_notice {
        let n = Notice { text, error: true };
        app.last_notice = Some(n.clone());
        app.notice = Some(n);
    }
    app.keys_set = providers::all()
        .into_iter()
        .filter(|k| keys.has(*k))
        .collect();
    let mut driver = Driver::new(
        terminal,
        DriverOptions {
            keys,
            demo: DemoOptions::default(),
            clipboard: Box::new(std::io::stdout()),
            journal,
            mcp: mcp_options,
        },
    );
    driver.run(&mut app, rx).await?;
    Ok(match stopped_by.load(Ordering::SeqCst) {
        0 => None,
        n => Some(n),
    })
}

/// The signals that end the playground: SIGINT and SIGQUIT (sent with `kill`: in raw mode
/// Ctrl+C and Ctrl+\\ arrive as keys), SIGTERM, and SIGHUP (the terminal went away).
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    quit: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Registers the handlers now (a signal arriving later is held for [`Signals::forward`]).
    fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            quit: signal(SignalKind::quit())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The number of the next signal to arrive.
    async fn next(&mut self) -> u8 {
        tokio::select! {
            _ = self.interrupt.recv() => 2,
            _ = self.quit.recv() => 3,
            _ = self.terminate.recv() => 15,
            _ = self.hangup.recv() => 1,
        }
    }

    /// The first signal ends the playground like Ctrl+Q (it quits without asking, keeping the
    /// journal, and the terminal is given back on the way out); its number is kept for the exit
    /// status. A second one, should the loop not have ended yet, gives the terminal back and
    /// exits at once.
    async fn forward(mut self, tx: mpsc::UnboundedSender<Message>, stopped_by: Arc<AtomicU8>) {
        let first = self.next().await;
        stopped_by.store(first, Ordering::SeqCst);
        let _ = tx.send(Message::Quit);
        let second = self.next().await;
        terminal::restore();
        std::process::exit(128 + i32::from(second));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30: a returning user's remembered tools shadowed the servers' tools (the F12 loop
    /// then said "no MCP server serves get_weather"); the Tools JSON starts empty with servers
    /// and no --tools, whatever was remembered, and the remembered tools stay remembered.
    #[test]
    fn with_servers_the_tools_json_starts_empty_whatever_was_remembered() {
        let remembered =
            r#"[{"name":"get_weather","description":"mine","parameters":{"type":"object"}}]"#;
        for before in [toolscope::app::tools::EXAMPLE_TOOLS, remembered] {
            let mut setup = Setup {
                tools: before.to_string(),
                ..Setup::default()
            };
            servers_bring_the_tools(&mut setup, true, false);
            assert_eq!(setup.tools, "[]");
            assert_eq!(setup.tools_to_remember.as_deref(), Some(before));
        }
        // Without servers, or with --tools, the tools are left as they are.
        for (servers, flag) in [(false, false), (true, true)] {
            let mut setup = Setup {
                tools: remembered.to_string(),
                ..Setup::default()
            };
            servers_bring_the_tools(&mut setup, servers, flag);
            assert_eq!(setup.tools, remembered);
            assert_eq!(setup.tools_to_remember, None);
        }
    }
}
