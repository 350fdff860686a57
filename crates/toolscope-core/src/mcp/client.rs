//! One connection to one MCP server, through the official Rust SDK (`rmcp`).

use std::sync::Arc;
use std::time::Duration;

use std::collections::VecDeque;
use std::sync::Mutex;

use rmcp::model::{
    CallToolRequestParams, ClientRequest, CustomRequest, ErrorData, PaginatedRequestParams,
};
use rmcp::service::{ClientInitializeError, NotificationContext, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::process::Child;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::spec::McpServerSpec;
use super::stdio::{LineRead, LineReader, NoteSink, StdioTransport, TRANSPORT_MARK};
use crate::mcp_result::{CallOutcome, outcome};

/// Where a stdio server's stderr goes, one line at a time: `(server name, line)`. The CLI
/// prints it on stderr after the name; the playground writes it to its log.
pub type StderrSink = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The most `tools/list` pages followed, so that a server repeating a cursor cannot loop the
/// client forever.
const MAX_PAGES: usize = 10_000;

/// How long connecting (spawning or reaching the server, and `initialize`) may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest message read from a server by default: 256 MiB.
pub const DEFAULT_MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// How long a stdio server that closed its end is given to exit (and to finish its stderr),
/// and how long [`McpClient::close`] waits for it before killing it.
const EXIT_WAIT: Duration = Duration::from_secs(3);

/// How many of a stdio server's last stderr lines a failure to start quotes.
const TAIL_LINES: usize = 6;

/// The longest stderr line passed on; the rest of a longer one is cut.
const MAX_STDERR_LINE: usize = 64 * 1024;

/// How a connection is made.
#[derive(Clone, Debug)]
pub struct McpOptions {
    /// The largest message read from the server, in bytes: one stdio line, or one streamable-HTTP
    /// event or JSON body. A message over it fails the call it answers at once, naming the limit.
    pub max_message: usize,
    /// How the user raises [`McpOptions::max_message`], said in that failure (a command-line
    /// flag, a setting).
    pub limit_hint: String,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            max_message: DEFAULT_MAX_MESSAGE,
            limit_hint: "McpOptions::max_message".into(),
        }
    }
}

/// The last lines a stdio server wrote on stderr, and whether its stderr ended.
struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    ended: watch::Sender<bool>,
}

impl StderrTail {
    fn new() -> Self {
        StderrTail {
            lines: Mutex::new(VecDeque::new()),
            ended: watch::channel(false).0,
        }
    }

    fn push(&self, line: &str) {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(super::stdio::quote(line.as_bytes()));
    }

    /// Waits (at most `wait`) until the server's stderr ended, so its last lines are in.
    async fn settle(&self, wait: Duration) {
        let mut ended = self.ended.subscribe();
        let _ = tokio::time::timeout(wait, ended.wait_for(|e| *e)).await;
    }

    /// `: LINE | LINE` (the non-empty last lines), or ` (it wrote nothing on stderr)`.
    fn said(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let shown: Vec<&str> = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect();
        if shown.is_empty() {
            " (it wrote nothing on stderr)".into()
        } else {
            format!(": {}", shown.join(" | "))
        }
    }
}

/// A stdio server's process, kept to stop it and to say how it ended.
struct Process {
    child: tokio::sync::Mutex<Child>,
    tail: Arc<StderrTail>,
}

/// Counts the server's `notifications/tools/list_changed`.
struct Handler {
    list_changed: watch::Sender<u64>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changed.send_modify(|n| *n += 1);
    }
}

/// A connected MCP server. Dropping it closes the connection (and ends a stdio server).
pub struct McpClient {
    name: String,
    spec: McpServerSpec,
    service: RunningService<RoleClient, Handler>,
    list_changed: watch::Receiver<u64>,
    process: Option<Process>,
    /// The connection's options, for the message about a failure they may explain.
    options: McpOptions,
}

impl std::fmt::Debug for McpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClient")
            .field("name", &self.name)
            .field("spec", &self.spec)
            .finish()
    }
}

impl McpClient {
    /// Starts (stdio) or reaches (HTTP) the server and initializes the session, with the
    /// default [`McpOptions`]. See [`McpClient::connect_with`].
    pub async fn connect(spec: &McpServerSpec, stderr: StderrSink) -> Result<Self, McpError> {
        Self::connect_with(spec, stderr, &McpOptions::default()).await
    }

    /// Starts (stdio) or reaches (HTTP) the server and initializes the session. A stdio
    /// server's stderr goes to `stderr`, line by line, and so do toolscope's notes about what
    /// it dropped from the server's stdout (each starting `toolscope: `). A stdio server that
    /// ends before it answered `initialize` is said in a sentence with its exit status and its
    /// last stderr lines. An HTTP server's bearer token is read from its variable now, sent as
    /// a header and kept nowhere else; an unset variable is an error, not a connection without
    /// the token.
    pub async fn connect_with(
        spec: &McpServerSpec,
        stderr: StderrSink,
        options: &McpOptions,
    ) -> Result<Self, McpError> {
        let (tx, rx) = watch::channel(0u64);
        let handler = Handler { list_changed: tx };
        let fallback = spec.fallback_name();
        let (service, process, name_tx) = match spec {
            McpServerSpec::Stdio { argv, command } => {
                let (service, process, name_tx) =
                    connect_stdio(handler, argv, command, &fallback, stderr, options).await?;
                (service, Some(process), Some(name_tx))
            }
            McpServerSpec::Http { url, token_env } => (
                connect_http(handler, url, token_env.as_deref(), options).await?,
                None,
                None,
            ),
        };
        let name = service
            .peer_info()
            .and_then(|info| serde_json::to_value(&*info).ok())
            .and_then(|v| {
                v.pointer("/serverInfo/name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .filter(|n| !n.trim().is_empty())
            .unwrap_or(fallback);
        if let Some((name_tx, slot)) = name_tx {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = name.clone();
            let _ = name_tx.send(name.clone());
        }
        Ok(McpClient {
            name,
            spec: spec.clone(),
            service,
            list_changed: rx,
            process,
            options: options.clone(),
        })
    }

    /// The server's name: its `serverInfo.name`, else the program's name or the URL's host.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server as given on the command line.
    pub fn spec(&self) -> &McpServerSpec {
        &self.spec
    }

    /// Lists every tool, following `nextCursor` from page to page. Each entry is the tool's
    /// JSON exactly as the server sent it (`{name, description?, inputSchema, …}`), read
    /// leniently: an entry that is not a usable tool is still given (for [`super::Catalog`] to
    /// leave out with a warning naming it), so one bad tool does not lose the others.
    pub async fn list_tools(&self) -> Result<Vec<Value>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let params = serde_json::to_value(&params)
                .ok()
                .filter(|p| p.as_object().is_some_and(|o| !o.is_empty()));
            // A request of rmcp's own type would decode the answer into its strict `Tool`, and
            // one tool it refuses would lose the whole page: this one gives the JSON as sent.
            let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
            let page = self
                .service
                .send_request(request)
                .await
                .map_err(|e| self.failure("tools/list", e));
            let page = match page {
                Ok(p) => p,
                Err(f) => return Err(f.await),
            };
            let page = serde_json::to_value(&page)
                .map_err(|e| McpError::Protocol(format!("{}: tools/list: {e}", self.name)))?;
            match page.get("tools") {
                Some(Value::Array(entries)) => tools.extend(entries.iter().cloned()),
                None | Some(Value::Null) => {}
                Some(_) => {
                    return Err(McpError::Protocol(format!(
                        "{}: tools/list answered \"tools\" that is not a list",
                        self.name
                    )));
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
                _ => return Ok(tools),
            }
        }
        Err(McpError::Protocol(format!(
            "{}: tools/list went on for more than {MAX_PAGES} pages",
            self.name
        )))
    }

    /// A receiver that changes each time the server says its tool list changed
    /// (`notifications/tools/list_changed`); list the tools again then.
    pub fn list_changed(&self) -> watch::Receiver<u64> {
        self.list_changed.clone()
    }

    /// Calls the tool `name` (its name on this server) with `arguments` (a JSON object). Ends
    /// with an error when the server fails the request, closes, takes longer than `timeout`,
    /// or `cancel` fires; on a timeout or a cancellation the server is sent MCP's
    /// `notifications/cancelled`. A result with `isError` is a result, not an error.
    pub async fn call_tool(
        &self,
        tool_call_id: &str,
        exposed_name: &str,
        name: &str,
        arguments: &Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<CallOutcome, McpError> {
        let json = self
            .call_tool_json(exposed_name, name, arguments, timeout, cancel)
            .await?;
        Ok(outcome(tool_call_id, exposed_name, &json))
    }

    /// [`McpClient::call_tool`], giving the server's `CallToolResult` as JSON, exactly as it
    /// came (for recording it; [`outcome`] makes the part and the text from it).
    pub async fn call_tool_json(
        &self,
        exposed_name: &str,
        name: &str,
        arguments: &Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, McpError> {
        let mut params = CallToolRequestParams::new(name.to_string());
        params.arguments = match arguments {
            Value::Object(o) => Some(o.clone()),
            Value::Null => None,
            other => {
                return Err(McpError::Call(format!(
                    "the arguments of {exposed_name} are not a JSON object: {other}"
                )));
            }
        };
        // Dropping the call's future (on a timeout or a cancellation) makes rmcp send
        // `notifications/cancelled` for the request.
        let call = self.service.call_tool(params);
        let result = tokio::select! {
            r = tokio::time::timeout(timeout, call) => match r {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => return Err(self.failure(&format!("tools/call {name}"), e).await),
                Err(_) => {
                    return Err(McpError::Call(format!(
                        "{}: tools/call {name} took longer than {} s and was cancelled",
                        self.name,
                        timeout.as_secs_f64()
                    )));
                }
            },
            _ = cancel.cancelled() => {
                return Err(McpError::Cancelled(format!(
                    "{}: tools/call {name} was cancelled",
                    self.name
                )));
            }
        };
        serde_json::to_value(&result).map_err(|e| {
            McpError::Protocol(format!("{}: the result does not serialise: {e}", self.name))
        })
    }

    /// Whether the connection is gone: a stdio server exited, or the session ended. The SDK
    /// gives no signal for it, so a watcher asks now and then.
    pub fn is_closed(&self) -> bool {
        self.service.is_closed() || self.service.is_transport_closed()
    }

    /// Closes the connection and waits for the session to end. A stdio server is asked to exit
    /// (its stdin closed) and killed when it has not within a few seconds.
    pub async fn close(mut self) {
        let _ = self.service.close().await;
        if let Some(p) = self.process.take() {
            let mut child = p.child.lock().await;
            if tokio::time::timeout(EXIT_WAIT, child.wait()).await.is_err() {
                let _ = child.kill().await;
            }
        }
    }

    /// How a stdio server ended, when it did: ` (it exited with status 3: LAST | LINES)`.
    async fn how_it_ended(&self) -> String {
        let Some(p) = &self.process else {
            return String::new();
        };
        let status = {
            let mut child = p.child.lock().await;
            tokio::time::timeout(EXIT_WAIT, child.wait())
                .await
                .ok()
                .and_then(Result::ok)
        };
        match status {
            Some(status) => {
                p.tail.settle(EXIT_WAIT).await;
                format!(" (it {}{})", ended(status), p.tail.said())
            }
            None => String::new(),
        }
    }

    async fn failure(&self, what: &str, e: ServiceError) -> McpError {
        match &e {
            // rmcp's HTTP transport ends a request whose answer it would not take (an event or
            // a body over the limit) as if the connection closed, and keeps the reason to its
            // log: the connection being still open is the sign.
            ServiceError::TransportClosed
                if self.process.is_none() && !self.service.is_transport_closed() =>
            {
                McpError::Protocol(format!(
                    "{}: {what} failed: the answer did not arrive whole, though the connection is \
                     still open (an answer larger than the limit of {} ({}) ends this way)",
                    self.name,
                    super::stdio::human_size(self.options.max_message),
                    self.options.limit_hint
                ))
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                McpError::Closed(format!(
                    "{}: {what} failed: the server closed the connection{}",
                    self.name,
                    self.how_it_ended().await
                ))
            }
            ServiceError::McpError(data) if made_here(data) => {
                McpError::Protocol(format!("{}: {what} failed: {}", self.name, data.message))
            }
            ServiceError::McpError(data) => McpError::Call(format!(
                "{}: {what} failed: {} (code {})",
                self.name, data.message, data.code.0
            )),
            other => McpError::Call(format!("{}: {what} failed: {}", self.name, redact(other))),
        }
    }
}

/// Whether this error was made by toolscope's stdio transport (a message it could not use),
/// not sent by the server.
fn made_here(data: &ErrorData) -> bool {
    data.data.as_ref().and_then(Value::as_str) == Some(TRANSPORT_MARK)
}

/// `exited with status 1`, `was ended by signal 9`.
fn ended(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was ended by signal {signal}");
        }
    }
    format!("ended ({status})")
}

/// On Linux, the kernel ends the server when toolscope ends, however it ends: dropping the
/// child kills it on a normal exit, but a SIGKILL (or an exit that runs no destructor) would
/// leave it running, reparented and holding whatever it holds.
///
/// The signal is tied to the thread that starts the server; servers are started on the async
/// runtime's worker threads, which live as long as the runtime.
#[cfg(target_os = "linux")]
fn end_with_parent(cmd: &mut tokio::process::Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the child between fork and exec, and calls only prctl,
    // getppid and _exit, which are async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // toolscope ended between the fork and the prctl: end now.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn end_with_parent(_cmd: &mut tokio::process::Command) {}

/// The name a connecting stdio server's notes go under, and the sender that tells its stderr
/// task the name once `initialize` gave it.
type NameSlot = (tokio::sync::oneshot::Sender<String>, Arc<Mutex<String>>);

/// Starts a stdio server and initializes it; a failure says how the server ended and what it
/// wrote on stderr last.
async fn connect_stdio(
    handler: Handler,
    argv: &[String],
    command: &str,
    fallback: &str,
    stderr: StderrSink,
    options: &McpOptions,
) -> Result<(RunningService<RoleClient, Handler>, Process, NameSlot), McpError> {
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    end_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .map_err(|e| McpError::Connect(format!("cannot start \"{command}\": {e}")))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(McpError::Connect(format!(
            "cannot start \"{command}\": its stdin and stdout are not pipes"
        )));
    };
    let tail = Arc::new(StderrTail::new());
    // The stderr task learns the server's name once `initialize` told it.
    let (name_tx, name_rx) = tokio::sync::oneshot::channel::<String>();
    match child.stderr.take() {
        Some(err) => {
            tokio::spawn(forward_stderr(
                err,
                name_rx,
                fallback.to_string(),
                stderr.clone(),
                Arc::clone(&tail),
            ));
        }
        None => {
            tail.ended.send_replace(true);
        }
    }
    let shown_name = Arc::new(Mutex::new(fallback.to_string()));
    let note: NoteSink = {
        let name = Arc::clone(&shown_name);
        Arc::new(move |text: &str| {
            let name = name.lock().unwrap_or_else(|e| e.into_inner()).clone();
            stderr(&name, text);
        })
    };
    let transport = StdioTransport::new(
        stdout,
        stdin,
        options.max_message,
        &options.limit_hint,
        note,
    );
    let failed = match tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport)).await {
        Ok(Ok(service)) => {
            let process = Process {
                child: tokio::sync::Mutex::new(child),
                tail,
            };
            return Ok((service, process, (name_tx, shown_name)));
        }
        Ok(Err(e)) => Some(e),
        Err(_) => None,
    };
    drop(name_tx);
    Err(McpError::Connect(
        start_failure(command, failed.as_ref(), &mut child, &tail).await,
    ))
}

/// Why a stdio server did not initialize, as a sentence: how it ended when it did, and its last
/// stderr lines. `e` is `None` when it did not answer in time.
async fn start_failure(
    command: &str,
    e: Option<&ClientInitializeError>,
    child: &mut Child,
    tail: &StderrTail,
) -> String {
    // A server that closed its end is most likely exiting: give it a moment.
    let closed = matches!(
        e,
        Some(ClientInitializeError::ConnectionClosed(_))
            | Some(ClientInitializeError::TransportError { .. })
    );
    let status = if closed {
        tokio::time::timeout(EXIT_WAIT, child.wait())
            .await
            .ok()
            .and_then(Result::ok)
    } else {
        child.try_wait().ok().flatten()
    };
    if status.is_some() {
        tail.settle(EXIT_WAIT).await;
    }
    let said = tail.said();
    let server = format!("the MCP server `{command}`");
    if let Some(status) = status {
        return format!(
            "{server} {} before it answered initialize{said}",
            ended(status)
        );
    }
    match e {
        None => format!(
            "{server} did not answer initialize within {} s{said}",
            CONNECT_TIMEOUT.as_secs()
        ),
        Some(ClientInitializeError::JsonRpcError(data)) if made_here(data) => {
            format!("{server} did not initialize: {}", data.message)
        }
        Some(ClientInitializeError::JsonRpcError(data)) => format!(
            "{server} refused initialize: {} (code {}){said}",
            data.message, data.code.0
        ),
        Some(ClientInitializeError::ConnectionClosed(_)) => {
            format!("{server} closed its stdout before it answered initialize{said}")
        }
        Some(ClientInitializeError::TransportError { .. }) => {
            format!("{server} stopped reading its stdin before it answered initialize{said}")
        }
        Some(other) => format!("{server} did not initialize: {other}{said}"),
    }
}

/// Reaches a streamable-HTTP server and initializes it.
async fn connect_http(
    handler: Handler,
    url: &str,
    token_env: Option<&str>,
    options: &McpOptions,
) -> Result<RunningService<RoleClient, Handler>, McpError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    config.max_sse_event_size = options.max_message;
    config.max_json_response_size = options.max_message;
    let mut token = String::new();
    if let Some(var) = token_env {
        match std::env::var(var) {
            Ok(t) if !t.is_empty() => {
                config = config.auth_header(t.clone());
                token = t;
            }
            _ => {
                return Err(McpError::Connect(format!(
                    "{url}: the token variable ${var} is not set"
                )));
            }
        }
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    match tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport)).await {
        Ok(Ok(service)) => Ok(service),
        Ok(Err(e)) => {
            let mut text = redact(&e);
            if !token.is_empty() {
                text = text.replace(&token, "[redacted]");
            }
            Err(McpError::Connect(format!(
                "{url} did not initialize: {text}"
            )))
        }
        Err(_) => Err(McpError::Connect(format!(
            "{url}: no answer to initialize within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// Hands a stdio server's stderr to `sink` line by line, under the server's name, and keeps its
/// last lines in `tail`: lines that come before `initialize` named it wait for the name (or for
/// the fallback, when the connection failed) and are never lost. A line that is not UTF-8 is
/// passed on with its bad bytes replaced; a line over [`MAX_STDERR_LINE`] is cut.
async fn forward_stderr(
    err: tokio::process::ChildStderr,
    mut named: tokio::sync::oneshot::Receiver<String>,
    fallback: String,
    sink: StderrSink,
    tail: Arc<StderrTail>,
) {
    let mut lines = LineReader::new(err, MAX_STDERR_LINE);
    let mut early: Vec<String> = Vec::new();
    let mut name: Option<String> = None;
    loop {
        let read = match &name {
            Some(_) => lines.next().await,
            None => tokio::select! {
                n = &mut named => {
                    let n = n.unwrap_or_else(|_| fallback.clone());
                    for l in early.drain(..) {
                        sink(&n, &l);
                    }
                    name = Some(n);
                    continue;
                }
                r = lines.next() => r,
            },
        };
        let line = match read {
            LineRead::Line => {
                let l = lines.line();
                let l = l.strip_suffix(b"\n").unwrap_or(l);
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                String::from_utf8_lossy(l).into_owned()
            }
            LineRead::Oversize(head) => format!(
                "{} … (a line of more than {} KiB, cut)",
                String::from_utf8_lossy(&head),
                MAX_STDERR_LINE / 1024
            ),
            LineRead::Eof | LineRead::Io(_) => break,
        };
        tail.push(&line);
        match &name {
            Some(n) => sink(n, &line),
            None => early.push(line),
        }
    }
    tail.ended.send_replace(true);
    // The server closed its stderr: wait for the name, then pass on what came.
    if name.is_none() {
        let n = named.await.unwrap_or(fallback);
        for l in early {
            sink(&n, &l);
        }
    }
}

/// An error's text with any bearer token a library might have echoed taken out.
fn redact(e: &dyn std::fmt::Display) -> String {
    let text = e.to_string();
    match text.find("Bearer ") {
        Some(i) => {
            let rest = &text[i + 7..];
            let end = rest
                .find(|c: char| c.is_whitespace() || c == '"' || c == '\'')
                .unwrap_or(rest.len());
            format!("{}Bearer [redacted]{}", &text[..i], &rest[end..])
        }
        None => text,
    }
}
