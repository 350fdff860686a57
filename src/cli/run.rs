//! `toolscope run`: send one prompt to a provider and print the parts as JSONL.
//!
//! Keys come from the environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`) and
//! are never printed: the provider layer redacts them from every event before it gets here.
//! `--raw` prints each wire event as `{"type":"raw","data":…}` before the parts it produced.
//!
//! `--mcp CMD` and `--mcp-url URL[=TOKEN_ENV]` add the tools of MCP servers to the request (a
//! name two places share is offered as `SERVER__NAME`, said on stderr). With `--execute` the
//! model's calls to them are run on their servers: each result is printed as a `tool-result`
//! part, the answer and the results join the conversation, and the next turn is sent, until
//! the model answers without calls (exit 0), the provider or an MCP server fails (an `error`
//! part, `tool_execution_failed` for MCP; exit 1), the model calls a tool no server serves
//! (said on stderr; exit 0), the answer was cut (finish reason `length` or `content-filter`:
//! said on stderr, none of its calls run; exit 1), or `--max-steps` turns were run with
//! results still unanswered (a `warning` part with code `max-steps`; exit 0).
//!
//! `--save FILE` records the run as a session; with `--execute`, the whole loop: the servers
//! (commands and URLs, never a token), which served each tool, every turn's request and wire
//! events, every `tools/call` with its arguments and result, all on one clock that starts with
//! the first request, and the parts the loop printed itself (the `max-steps` warning). The
//! demo model's loopback URL is not saved.
//!
//! Stopped from outside (Ctrl+C, SIGTERM, SIGHUP), a run, or a loop at any step, ends at once
//! with an `error` part of category `cancelled` naming the signal, saves what it received with
//! `--save` (the turn in progress ends with that part), and exits 128 + the signal (130, 143,
//! 129). `--deadline SECS` bounds the whole run the same way: an `error` part of category
//! `provider_timeout` naming the deadline, what was received saved, exit 1.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::ProtocolChoice;
use toolscope::app::mcp::cut_reason;
use toolscope_core::error::{ErrorCategory, ProviderError};
use toolscope_core::mcp::{
    CancellationToken, Catalog, McpClient, McpError, McpOptions, McpServerSpec,
};
use toolscope_core::part::{Part, Warning};
use toolscope_core::provider::{Keys, Message, ProviderKind, Request, Run, RunEvent};
use toolscope_core::session::{McpRecord, RecordedCall, RecordedOutcome, Recorder, Session};
use toolscope_core::tool::ToolChoice;
use toolscope_core::tool::ToolSet;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The provider (openai is also any OpenAI-compatible server, with --base-url).
    #[arg(long, value_parser = super::provider_parser())]
    pub provider: ProviderKind,
    /// The model name (optional for demo).
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL, e.g. http://localhost:8000/v1 for vLLM.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The tools file (a JSON array of {name, description, parameters}).
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// auto, required, none or tool:NAME.
    #[arg(long, value_parser = ToolChoice::parse)]
    pub tool_choice: Option<ToolChoice>,
    /// Emulate tool calling with a text protocol.
    /// `auto`: native tool calling, and calls the server left in the answer text read by the
    /// protocol their markers name.
    #[arg(long, value_parser = super::protocol_choice_parser())]
    pub protocol: Option<ProtocolChoice>,
    #[command(flatten)]
    pub reasoning: super::ReasoningArgs,
    /// The system prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// Ask for the whole answer at once instead of a stream.
    #[arg(long)]
    pub no_stream: bool,
    /// Also print each wire event, as {"type":"raw","data":…}, before the parts it produced.
    #[arg(long)]
    pub raw: bool,
    /// The most tokens to generate (Anthropic defaults to 4096).
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// The sampling temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Save the run as a session file (written atomically when the run ends).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// The waits and bounds of each request.
    #[command(flatten)]
    pub wire: super::WireArgs,
    /// Seconds the whole run may take (every turn and tool call of an --execute loop): then it
    /// stops with an error part (category provider_timeout) after what was received, which
    /// --save keeps; exit 1.
    #[arg(long, value_name = "SECS", value_parser = positive_secs)]
    pub deadline: Option<f64>,
    /// Take tools from an MCP server run as a child process (stdio): the command and its
    /// arguments, split like a shell would (quotes, backslashes) but not run through one;
    /// `toolscope` as the program is this toolscope. Repeatable.
    #[arg(long = "mcp", value_name = "CMD")]
    pub mcp: Vec<String>,
    /// Take tools from an MCP server over streamable HTTP. `URL=TOKEN_ENV` sends the value of
    /// the environment variable TOKEN_ENV (capitals, digits, _) as a bearer token; the token
    /// itself is never printed or saved. Repeatable.
    #[arg(long = "mcp-url", value_name = "URL[=TOKEN_ENV]")]
    pub mcp_url: Vec<String>,
    /// Run the model's calls to MCP tools on their servers, print each result as a
    /// tool-result part and send the results back, turn after turn, until a text answer.
    #[arg(long)]
    pub execute: bool,
    /// With --execute: the most model turns to run.
    #[arg(long, value_name = "N", default_value_t = 8, requires = "execute",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_steps: u32,
    /// Seconds one MCP tool call may take before it is cancelled.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = positive_secs)]
    pub mcp_timeout: f64,
    /// The largest message read from an MCP server, in MiB (one stdio line, one HTTP event or
    /// body); a bigger one fails the call it answers.
    #[arg(long, value_name = "MB", default_value_t = super::DEFAULT_MCP_MAX_MESSAGE_MB,
          value_parser = super::mcp_max_message_parser())]
    pub mcp_max_message: u64,
    /// The prompt.
    pub prompt: String,
}

/// The MCP side of a run: which servers, and what to do with calls to their tools.
struct McpPlan {
    servers: Vec<McpServerSpec>,
    options: McpOptions,
    execute: bool,
    max_steps: u32,
    timeout: Duration,
}

fn mcp_plan(args: &RunArgs) -> Result<McpPlan, String> {
    let servers = super::mcp_servers(&args.mcp, &args.mcp_url)?;
    if args.execute && servers.is_empty() {
        return Err("--execute needs an MCP server (--mcp or --mcp-url) to run the calls".into());
    }
    Ok(McpPlan {
        servers,
        options: super::mcp_options(args.mcp_max_message),
        execute: args.execute,
        max_steps: args.max_steps,
        timeout: Duration::from_secs_f64(args.mcp_timeout),
    })
}

pub(super) fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("\"{s}\" is not a positive number of seconds")),
    }
}

/// Builds the request; an error is a one-line usage message (exit 2).
fn request_of(args: &RunArgs) -> Result<Request, String> {
    let provider = args.provider;
    let model = match (&args.model, provider.spec().default_model) {
        (Some(m), _) => m.clone(),
        (None, Some(m)) => m.to_string(),
        (None, None) => return Err(format!("--model is required for {provider}")),
    };
    let mut r = Request::new(provider, model);
    r.base_url = args.base_url.clone();
    r.system = args.system.clone();
    r.messages = vec![Message::user(args.prompt.clone())];
    if let Some(path) = &args.tools {
        r.tools = super::load_tools(path)?;
    }
    r.tool_choice = args.tool_choice.clone();
    match &args.protocol {
        Some(ProtocolChoice::Named(p)) => r.protocol = Some(args.reasoning.apply(p.clone())?),
        Some(ProtocolChoice::Auto) => {
            if args.reasoning.setting().is_some() {
                return Err(super::AUTO_REASONING.into());
            }
            if args.reasoning.marker_suffix.is_some() {
                return Err(super::AUTO_SUFFIX.into());
            }
            r.detect_protocol = true;
        }
        None => {}
    }
    r.stream = !args.no_stream;
    args.wire.apply(&mut r.timeouts, &mut r.limits);
    if let Some(m) = args.max_tokens {
        r.sampling.max_tokens = Some(m);
    }
    r.sampling.temperature = args.temperature;
    Ok(r)
}

pub fn run(args: RunArgs) -> u8 {
    let request = match request_of(&args) {
        Ok(r) => r,
        Err(e) => return super::fail_usage(&format!("run: {e}")),
    };
    let plan = match mcp_plan(&args) {
        Ok(p) => p,
        Err(e) => return super::fail_usage(&format!("run: {e}")),
    };
    if let Some(path) = &args.save
        && let Err(e) = super::check_writable(path)
    {
        return super::fail_usage(&e);
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolscope run: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let signals = {
        let _context = runtime.enter();
        match Signals::install() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("toolscope run: cannot listen for signals: {e}");
                return 1;
            }
        }
    };
    let mut tape = args.save.as_ref().map(|_| Tape::new(request.clone()));
    let deadline = args.deadline;
    let ended = runtime.block_on(async {
        let work = run_with_mcp(request, Keys::from_env(), args.raw, &mut tape, plan);
        let limit = async {
            match deadline {
                Some(secs) => tokio::time::sleep(Duration::from_secs_f64(secs)).await,
                None => std::future::pending().await,
            }
        };
        let mut signals = signals;
        tokio::select! {
            code = work => Ended::Done(code),
            signal = signals.next() => Ended::Signal(signal),
            () = limit => Ended::Deadline,
        }
    });
    // The run was stopped from outside: the work in flight was dropped (its request with it);
    // what it received is kept, and an error part says why it ends here.
    let code = match ended {
        Ended::Done(code) => code,
        Ended::Signal(signal) => {
            let message = format!(
                "the run was stopped by {} before it ended",
                signal_name(signal)
            );
            stopped(&mut tape, ErrorCategory::Cancelled, message);
            128 + signal
        }
        Ended::Deadline => {
            let message = format!(
                "the run did not end within its --deadline of {} s and was stopped there",
                deadline.unwrap_or_default()
            );
            stopped(&mut tape, ErrorCategory::ProviderTimeout, message);
            1
        }
    };
    if let (Some(path), Some(tape)) = (&args.save, tape)
        && let Err(e) = tape.finish().save(path)
    {
        return super::fail_usage(&e.to_string());
    }
    code
}

/// How the work of a run ended.
enum Ended {
    /// By itself, with this exit status.
    Done(u8),
    /// Stopped by this signal.
    Signal(u8),
    /// Stopped at `--deadline`.
    Deadline,
}

/// Prints `part`, the last of the run, records it as the end of the session being saved, and
/// gives the exit status `code`.
fn last_part(tape: &mut Option<Tape>, part: Part, code: u8) -> u8 {
    if let Some(t) = tape.as_mut() {
        t.stop(vec![part.clone()]);
    }
    println!("{}", part.to_json_line());
    code
}

/// Prints the error part that ends a run stopped from outside, and records it.
fn stopped(tape: &mut Option<Tape>, category: ErrorCategory, message: String) {
    let part = Part::error(ProviderError::new(category, message).to_part());
    if let Some(t) = tape.as_mut() {
        t.interrupted(part.clone());
    }
    let mut out = io::stdout();
    let _ = writeln!(out, "{}", part.to_json_line()).and_then(|()| out.flush());
}

/// The signals that stop a run: SIGINT (Ctrl+C), SIGTERM and SIGHUP (the terminal went away).
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Registers the handlers now, before anything is sent.
    fn install() -> io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The number of the first signal to arrive.
    async fn next(&mut self) -> u8 {
        tokio::select! {
            _ = self.interrupt.recv() => 2,
            _ = self.terminate.recv() => 15,
            _ = self.hangup.recv() => 1,
        }
    }
}

/// The name of signal `number`, as `kill -l` spells it.
fn signal_name(number: u8) -> &'static str {
    match number {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        15 => "SIGTERM",
        _ => "a signal",
    }
}

/// The session being recorded (`--save`), on one clock: the first request's sending.
struct Tape {
    /// The request as given (before the demo model's loopback URL was set): what a failure
    /// before the first turn is recorded under, and whose base URL every turn is saved with.
    given: Request,
    recorder: Option<Recorder>,
    /// When the first turn's request was sent.
    started: Option<Instant>,
    /// The MCP servers and their tools, given to the recorder at the end.
    mcp: Option<McpRecord>,
    /// When the turn in progress was sent (none between turns).
    turn_sent: Option<Instant>,
}

impl Tape {
    fn new(given: Request) -> Self {
        Tape {
            given,
            recorder: None,
            started: None,
            mcp: None,
            turn_sent: None,
        }
    }

    fn recorder(&mut self) -> &mut Recorder {
        self.recorder
            .get_or_insert_with(|| Recorder::new(self.given.clone()))
    }

    /// Milliseconds since the first request (0 before it).
    fn now_ms(&self) -> u64 {
        self.started.map_or(0, |s| s.elapsed().as_millis() as u64)
    }

    /// A turn of `request` is being sent now.
    fn begin_turn(&mut self, request: &Request) {
        let mut request = request.clone();
        request.base_url = self.given.base_url.clone();
        let at_ms = self.now_ms();
        match (&mut self.recorder, self.started) {
            (Some(r), Some(_)) => r.next_turn(request, at_ms),
            _ => {
                self.recorder = Some(Recorder::new(request));
                self.started = Some(Instant::now());
            }
        }
    }

    /// The run was stopped from outside with `part`: it ends the turn in progress, or, between
    /// turns, the loop.
    fn interrupted(&mut self, part: Part) {
        match self.turn_sent.take() {
            Some(sent) => {
                let recorder = self.recorder();
                recorder.push(&RunEvent::Part(part));
                recorder.end_turn(sent.elapsed().as_millis() as u64);
            }
            None => self.stop(vec![part]),
        }
    }

    /// Parts the loop printed by itself: before any turn, as the run's own ending; after, as
    /// the loop's stop.
    fn stop(&mut self, parts: Vec<Part>) {
        if self.started.is_none() {
            for p in parts {
                self.recorder().push(&RunEvent::Part(p));
            }
        } else {
            let at_ms = self.now_ms();
            self.recorder().stop(at_ms, parts);
        }
    }

    /// The servers and the tools they serve, as listed now.
    fn mcp(&mut self, record: McpRecord) {
        match &mut self.mcp {
            Some(m) => m.merge(record),
            None => self.mcp = Some(record),
        }
    }

    fn finish(self) -> Session {
        let mut recorder = self.recorder.unwrap_or_else(|| Recorder::new(self.given));
        if let Some(m) = self.mcp {
            recorder.mcp(m);
        }
        recorder.finish(None, 0)
    }
}

/// What one model turn gave.
struct Turn {
    parts: Vec<Part>,
    failed: bool,
    /// Stdout was closed: nothing more is to be printed.
    closed: bool,
}

/// Connects the MCP servers, adds their tools, runs the turns and closes the servers.
async fn run_with_mcp(
    request: Request,
    keys: Keys,
    raw: bool,
    tape: &mut Option<Tape>,
    plan: McpPlan,
) -> u8 {
    // The demo model is served for the length of this run (`_demo` keeps it up); with a base
    // URL the run talks to a demo server already running (`toolscope serve-demo`).
    let mut request = request;
    let _demo = match toolscope_demo::attach(&mut request).await {
        Ok(server) => server,
        Err(e) => {
            return last_part(tape, Part::error(e.to_part()), 1);
        }
    };
    if plan.servers.is_empty() {
        let turn = print_turn(&request, &keys, raw, tape, false).await;
        return u8::from(turn.failed);
    }
    let mut mcp = match Mcp::connect(&plan.servers, &plan.options, &request.tools).await {
        Ok(m) => m,
        Err(e) => {
            return last_part(tape, Part::error(e.to_part(None, None)), 1);
        }
    };
    request.tools = mcp.catalog.tools().clone();
    let code = run_turns(&mut request, &keys, raw, tape, &plan, &mut mcp).await;
    mcp.close().await;
    code
}

/// The connected servers and the tools offered.
struct Mcp {
    clients: Vec<McpClient>,
    /// Each server's list-changed counter, as last listed.
    seen: Vec<tokio::sync::watch::Receiver<u64>>,
    /// The `--tools` file's tools, which every refresh of the catalog starts from.
    user: ToolSet,
    catalog: Catalog,
}

impl Mcp {
    async fn connect(
        specs: &[McpServerSpec],
        options: &McpOptions,
        user: &ToolSet,
    ) -> Result<Self, McpError> {
        let mut clients = Vec::with_capacity(specs.len());
        for spec in specs {
            let sink: toolscope_core::mcp::StderrSink =
                Arc::new(|server: &str, line: &str| eprintln!("[{server}] {line}"));
            clients.push(McpClient::connect_with(spec, sink, options).await?);
        }
        let mut mcp = Mcp {
            seen: clients.iter().map(McpClient::list_changed).collect(),
            clients,
            user: user.clone(),
            catalog: Catalog::default(),
        };
        mcp.list().await?;
        Ok(mcp)
    }

    /// Lists every server's tools and builds the catalog; renames and definition warnings are
    /// said on stderr.
    async fn list(&mut self) -> Result<(), McpError> {
        let mut listed = Vec::with_capacity(self.clients.len());
        for (c, seen) in self.clients.iter().zip(&mut self.seen) {
            // Notifications up to now are answered by this listing.
            seen.mark_unchanged();
            listed.push((c.name().to_string(), c.list_tools().await?));
        }
        self.catalog = Catalog::build(&self.user, &listed)?;
        for w in self.catalog.warnings() {
            eprintln!("toolscope: warning: {w}");
        }
        for r in self.catalog.renames() {
            eprintln!("toolscope: warning: {r}");
        }
        Ok(())
    }

    /// The servers and the tools they serve, as a session records them.
    fn record(&self) -> McpRecord {
        McpRecord {
            servers: self
                .clients
                .iter()
                .map(|c| c.spec().record(c.name()))
                .collect(),
            tools: self.catalog.tool_records(),
        }
    }

    /// Whether a server said its tools changed since they were last listed.
    fn changed(&self) -> bool {
        self.seen.iter().any(|s| s.has_changed().unwrap_or(false))
    }

    async fn close(self) {
        for c in self.clients {
            c.close().await;
        }
    }
}

/// The loop of `--execute`, or the one turn without it. Returns the exit status.
async fn run_turns(
    request: &mut Request,
    keys: &Keys,
    raw: bool,
    tape: &mut Option<Tape>,
    plan: &McpPlan,
    mcp: &mut Mcp,
) -> u8 {
    let never = CancellationToken::new();
    let mut step = 0;
    if let Some(t) = tape.as_mut() {
        t.mcp(mcp.record());
    }
    loop {
        step += 1;
        if mcp.changed() {
            eprintln!("toolscope: an MCP server's tools changed; listing them again");
            if let Err(e) = mcp.list().await {
                return last_part(tape, Part::error(e.to_part(None, None)), 1);
            }
            request.tools = mcp.catalog.tools().clone();
            if let Some(t) = tape.as_mut() {
                t.mcp(mcp.record());
            }
        }
        let turn = print_turn(request, keys, raw, tape, plan.execute).await;
        if turn.closed {
            return 0;
        }
        if turn.failed {
            return 1;
        }
        if !plan.execute {
            return 0;
        }
        if let Some(reason) = cut_reason(&turn.parts) {
            eprintln!(
                "toolscope run: the answer was cut (finish reason {}): the loop stops here; none of its calls were run and no next turn was sent",
                reason.as_str()
            );
            return 1;
        }
        let Some(answer) = Message::answer(&turn.parts) else {
            return 0;
        };
        let calls = match &answer {
            Message::Assistant { tool_calls, .. } => tool_calls.clone(),
            _ => Vec::new(),
        };
        if calls.is_empty() {
            return 0;
        }
        let unserved: Vec<&str> = calls
            .iter()
            .filter(|c| mcp.catalog.route(&c.tool_name).is_none())
            .map(|c| c.tool_name.as_str())
            .collect();
        if !unserved.is_empty() {
            eprintln!(
                "toolscope run: the model called {}, which no MCP server serves; the loop stops here with the calls unanswered",
                unserved.join(", ")
            );
            return 0;
        }
        request.messages.push(answer);
        for call in &calls {
            let Some(route) = mcp.catalog.route(&call.tool_name) else {
                continue;
            };
            let client = &mcp.clients[route.server];
            let sent_at = tape.as_ref().map_or(0, Tape::now_ms);
            let done = client
                .call_tool(
                    &call.tool_call_id,
                    &call.tool_name,
                    &route.original,
                    &call.input,
                    plan.timeout,
                    &never,
                )
                .await;
            if let Some(t) = tape.as_mut() {
                let ended_at_ms = t.now_ms();
                t.recorder().tool_call(RecordedCall {
                    at_ms: sent_at,
                    ended_at_ms,
                    server: route.server_name.clone(),
                    name: route.original.clone(),
                    tool_name: call.tool_name.clone(),
                    tool_call_id: call.tool_call_id.to_string(),
                    arguments: call.input.clone(),
                    outcome: match &done {
                        Ok(o) => RecordedOutcome::Result(o.result.clone()),
                        Err(e) => RecordedOutcome::Error(e.to_string()),
                    },
                });
            }
            match done {
                Ok(outcome) => {
                    println!(
                        "{}",
                        Part::ToolResult(Box::new(outcome.part)).to_json_line()
                    );
                    request.messages.push(Message::tool_result(
                        call.tool_call_id.as_str(),
                        outcome.text,
                    ));
                }
                Err(e) => {
                    let part = e.to_part(Some(&call.tool_call_id), Some(&call.tool_name));
                    println!("{}", Part::error(part).to_json_line());
                    return 1;
                }
            }
        }
        if step >= plan.max_steps {
            let message = format!(
                "stopped after {step} model turn{} (--max-steps {}): the tool results above were not sent to the model",
                if step == 1 { "" } else { "s" },
                plan.max_steps
            );
            eprintln!("toolscope run: {message}");
            return last_part(tape, Part::warning(Warning::new("max-steps", message)), 0);
        }
    }
}

/// Sends `request` and prints its events as they come; returns the parts when `keep_parts`
/// (the answer is needed for the next turn; otherwise nothing of it is held here, however long
/// it is). A recorded turn is timed from its sending.
async fn print_turn(
    request: &Request,
    keys: &Keys,
    raw: bool,
    tape: &mut Option<Tape>,
    keep_parts: bool,
) -> Turn {
    if let Some(t) = tape.as_mut() {
        t.begin_turn(request);
    }
    let sent = Instant::now();
    if let Some(t) = tape.as_mut() {
        t.turn_sent = Some(sent);
    }
    let turn = print_events(request, keys, raw, tape, keep_parts).await;
    if let Some(t) = tape.as_mut() {
        t.turn_sent = None;
        t.recorder().end_turn(sent.elapsed().as_millis() as u64);
    }
    turn
}

/// Runs `request`, printing its parts (and with `--raw` its wire events) and recording every
/// event.
async fn print_events(
    request: &Request,
    keys: &Keys,
    raw: bool,
    tape: &mut Option<Tape>,
    keep_parts: bool,
) -> Turn {
    let mut run = Run::start(request.clone(), keys.clone());
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut turn = Turn {
        parts: Vec::new(),
        failed: false,
        closed: false,
    };
    let mut printing = true;
    while let Some(event) = run.next().await {
        if let Some(t) = tape.as_mut() {
            let recorder = t.recorder();
            let dropped = recorder.raw_dropped();
            recorder.push(&event);
            if dropped == 0 && recorder.raw_dropped() > 0 {
                eprintln!(
                    "toolscope run: the answer's raw wire text passed --max-raw-mib {}: the oldest raw events are dropped from the session (every part is kept)",
                    request.limits.raw_bytes >> 20
                );
            }
        }
        if let (true, RunEvent::Part(p)) = (keep_parts, &event) {
            turn.parts.push(p.clone());
        }
        if !printing {
            continue;
        }
        let line = match &event {
            RunEvent::Raw(r) if raw => json!({"type": "raw", "data": r.data}).to_string(),
            RunEvent::Detected { protocol, reason } => {
                super::report_detection(protocol, reason);
                continue;
            }
            RunEvent::Part(p) => {
                turn.failed = matches!(p, Part::Error(e) if e.category.is_some());
                p.to_json_line()
            }
            _ => continue,
        };
        // Flush per line: the output is a live stream. A closed stdout (`| head`) ends the run,
        // which cancels the request, unless the run is being saved.
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            if tape.is_none() {
                turn.failed = false;
                turn.closed = true;
                return turn;
            }
            printing = false;
        }
    }
    turn
}
