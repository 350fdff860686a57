//! Tools from Model Context Protocol servers, through the official Rust MCP SDK (`rmcp`).
//!
//! - [`McpServerSpec`]: which server — a stdio command (`--mcp 'COMMAND ARGS'`, split by
//!   [`split_command`] like a shell would, never run through one) or a streamable-HTTP URL with
//!   the name of a variable holding its bearer token.
//! - [`McpClient`]: one connected server — `initialize`, `tools/list` across pages (read as the
//!   JSON the server sent, so one malformed tool does not lose the others),
//!   `notifications/tools/list_changed` as a [`tokio::sync::watch`] counter, `tools/call` with a
//!   timeout and a cancellation token, a stdio server's stderr handed to a sink line by line.
//!   A stdio server is spoken to through toolscope's own line transport ([`McpOptions`] sets its
//!   message limit): a message over the limit, cut or unreadable fails the call it answers at
//!   once, and a server that ends before `initialize` is said with its status and last stderr.
//! - [`Catalog`]: the user's tools and every server's merged into one [`ToolSet`], clashing or
//!   unusable names renamed (`SERVER__NAME`) and reported, each MCP tool routed back to its
//!   server under its own name.
//! - [`outcome`]: a `CallToolResult` as a `tool-result` part and as the text of the tool message
//!   the model reads (from the crate's `mcp_result` module, which needs no feature: sessions replay
//!   recorded results through it).
//!
//! A failure here (the server cannot start, fails a request, exits mid-call, times out) is an
//! [`McpError`]; as a part it is an `error` with category
//! [`ErrorCategory::ToolExecutionFailed`].
//!
//! [`ToolSet`]: crate::tool::ToolSet
//! [`ErrorCategory::ToolExecutionFailed`]: crate::error::ErrorCategory::ToolExecutionFailed

mod catalog;
mod client;
mod spec;
mod stdio;

use crate::part::ErrorPart;

pub use crate::mcp_result::{CallOutcome, outcome};
pub use catalog::{Catalog, McpRoute, Rename};
pub use client::{DEFAULT_MAX_MESSAGE, McpClient, McpOptions, StderrSink};
pub use spec::{McpServerSpec, split_command};
/// The token that cancels a running [`McpClient::call_tool`].
pub use tokio_util::sync::CancellationToken;

/// What went wrong talking to an MCP server.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The server as given cannot be used (an empty command, an unclosed quote, not a URL).
    #[error("{0}")]
    Spec(String),
    /// The server could not be started or reached, or did not initialize.
    #[error("{0}")]
    Connect(String),
    /// The server closed the connection (a stdio server exited).
    #[error("{0}")]
    Closed(String),
    /// A request failed: the server answered with an error, or it took too long.
    #[error("{0}")]
    Call(String),
    /// The caller cancelled the call.
    #[error("{0}")]
    Cancelled(String),
    /// The server sent something toolscope cannot use.
    #[error("{0}")]
    Protocol(String),
}

impl McpError {
    /// As an `error` part: category `tool_execution_failed`, naming the call when there is one.
    pub fn to_part(&self, tool_call_id: Option<&str>, tool_name: Option<&str>) -> ErrorPart {
        crate::mcp_result::failure(&self.to_string(), tool_call_id, tool_name)
    }
}
