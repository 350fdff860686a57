//! One connection to one MCP server, through the official Rust SDK (`rmcp`).

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{McpError, McpServerSpec};
use crate::mcp_result::{CallOutcome, outcome};

/// Where a stdio server's stderr goes, one line at a time: `(server name, line)`. The CLI
/// prints it on stderr after the name; the playground writes it to its log.
pub type StderrSink = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// The most `tools/list` pages followed, so that a server repeating a cursor cannot loop the
/// client forever.
const MAX_PAGES: usize = 10_000;

/// How long connecting (spawning or reaching the server, and `initialize`) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// Starts (stdio) or reaches (HTTP) the server and initializes the session. A stdio
    /// server's stderr goes to `stderr`, line by line. An HTTP server's bearer token is read
    /// from its variable now, sent as a header and kept nowhere else; an unset variable is an
    /// error, not a connection without the token.
    pub async fn connect(spec: &McpServerSpec, stderr: StderrSink) -> Result<Self, McpError> {
        let (tx, rx) = watch::channel(0u64);
        let handler = Handler { list_changed: tx };
        let fallback = spec.fallback_name();
        // The stderr task learns the server's name once `initialize` told it.
        let (name_tx, name_rx) = tokio::sync::oneshot::channel::<String>();
        let mut named = Some(name_rx);
        let connecting = async {
            match spec {
                McpServerSpec::Stdio { argv, command } => {
                    let mut cmd = tokio::process::Command::new(&argv[0]);
                    cmd.args(&argv[1..]);
                    let (transport, err) = TokioChildProcess::builder(cmd)
                        .stderr(std::process::Stdio::piped())
                        .spawn()
                        .map_err(|e| {
                            McpError::Connect(format!("cannot start \"{command}\": {e}"))
                        })?;
                    if let Some(err) = err {
                        let named = named.take();
                        let fallback = fallback.clone();
                        tokio::spawn(forward_stderr(err, named, fallback, stderr));
                    }
                    handler.serve(transport).await.map_err(|e| {
                        McpError::Connect(format!("\"{command}\" did not initialize: {e}"))
                    })
                }
                McpServerSpec::Http { url, token_env } => {
                    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
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
                    handler.serve(transport).await.map_err(|e| {
                        let mut text = redact(&e);
                        if !token.is_empty() {
                            text = text.replace(&token, "[redacted]");
                        }
                        McpError::Connect(format!("{url} did not initialize: {text}"))
                    })
                }
            }
        };
        let service = tokio::time::timeout(CONNECT_TIMEOUT, connecting)
            .await
            .map_err(|_| {
                McpError::Connect(format!(
                    "{spec}: no answer to initialize within {} s",
                    CONNECT_TIMEOUT.as_secs()
                ))
            })??;
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
        let _ = name_tx.send(name.clone());
        Ok(McpClient {
            name,
            spec: spec.clone(),
            service,
            list_changed: rx,
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
    /// JSON as the server sent it (`{name, description?, inputSchema, …}`).
    pub async fn list_tools(&self) -> Result<Vec<Value>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = PaginatedRequestParams::default().with_cursor(cursor.take());
            let page = self
                .service
                .list_tools(Some(params))
                .await
                .map_err(|e| self.failure("tools/list", &e))?;
            for t in &page.tools {
                tools.push(serde_json::to_value(t).map_err(|e| {
                    McpError::Protocol(format!("{}: a tool does not serialise: {e}", self.name))
                })?);
            }
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
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
                Ok(r) => r.map_err(|e| self.failure(&format!("tools/call {name}"), &e))?,
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

    /// Closes the connection and waits for the session to end (a stdio server is stopped).
    pub async fn close(mut self) {
        let _ = self.service.close().await;
    }

    fn failure(&self, what: &str, e: &ServiceError) -> McpError {
        match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                McpError::Closed(format!(
                    "{}: {what} failed: the server closed the connection ({})",
                    self.name,
                    redact(e)
                ))
            }
            ServiceError::McpError(data) => McpError::Call(format!(
                "{}: {what} failed: {} (code {})",
                self.name, data.message, data.code.0
            )),
            other => McpError::Call(format!("{}: {what} failed: {}", self.name, redact(other))),
        }
    }
}

/// Hands a stdio server's stderr to `sink` line by line, under the server's name: lines that
/// come before `initialize` named it wait for the name (or for the fallback, when the
/// connection failed) and are never lost.
async fn forward_stderr(
    err: tokio::process::ChildStderr,
    named: Option<tokio::sync::oneshot::Receiver<String>>,
    fallback: String,
    sink: StderrSink,
) {
    let mut lines = BufReader::new(err).lines();
    let mut early = Vec::new();
    let name = match named {
        None => fallback,
        Some(mut named) => loop {
            tokio::select! {
                n = &mut named => break n.unwrap_or(fallback),
                l = lines.next_line() => match l {
                    Ok(Some(l)) => early.push(l),
                    // The server closed its stderr: wait for the name, then pass on what came.
                    _ => {
                        let name = named.await.unwrap_or(fallback);
                        for l in early {
                            sink(&name, &l);
                        }
                        return;
                    }
                },
            }
        },
    };
    for l in early {
        sink(&name, &l);
    }
    while let Ok(Some(line)) = lines.next_line().await {
        sink(&name, &line);
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
