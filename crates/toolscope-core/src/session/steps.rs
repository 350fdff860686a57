//! The MCP loop in a session: which servers served the tools, and everything that happened after
//! the first model turn — each `tools/call` with the result exactly as received, each further
//! model turn, and the loop's own stop.
//!
//! These are plain data. Recording fills them ([`Recorder`](super::Recorder)); replay turns them
//! back into parts ([`Session::segments`](super::Session::segments),
//! [`LoopReplay`](super::LoopReplay)) without ever starting a server.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp_result::{CallOutcome, failure, outcome};
use crate::part::Part;
use crate::provider::{RawEvent, Request};

/// The MCP servers a session's tools came from, and which offered tool each served.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpRecord {
    /// Every server used, in the order they were given.
    #[serde(default)]
    pub servers: Vec<McpServerRecord>,
    /// Every MCP tool offered to the model, with its server and its name there.
    #[serde(default)]
    pub tools: Vec<McpToolRecord>,
}

impl McpRecord {
    /// Adds the servers and tools of `other` that this record does not hold yet, in order (a
    /// server whose tools were listed again adds only what is new).
    pub fn merge(&mut self, other: McpRecord) {
        for s in other.servers {
            if !self.servers.contains(&s) {
                self.servers.push(s);
            }
        }
        for t in other.tools {
            if !self.tools.contains(&t) {
                self.tools.push(t);
            }
        }
    }
}

/// One MCP server as it was given: a stdio command or a streamable-HTTP URL. Never a token: an
/// HTTP server's token is named by its variable only, and a password written into a URL is
/// replaced by `[redacted]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRecord {
    /// The server's name (its `serverInfo.name`, else the program's name or the URL's host);
    /// the `server` of the calls it ran.
    pub name: String,
    /// For a stdio server: the command as typed (`weather-mcp --stdio`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// For a streamable-HTTP server: its endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// For an HTTP server with a bearer token: the name of the variable it was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

impl McpServerRecord {
    /// A stdio server run as `command`.
    pub fn stdio(name: &str, command: &str) -> Self {
        McpServerRecord {
            name: name.to_string(),
            command: Some(command.to_string()),
            ..Self::default()
        }
    }

    /// A streamable-HTTP server at `url`, its token (if any) read from the variable `token_env`.
    /// A password in the URL's user part (`http://user:secret@host/`) is not kept.
    pub fn http(name: &str, url: &str, token_env: Option<&str>) -> Self {
        McpServerRecord {
            name: name.to_string(),
            url: Some(without_password(url)),
            token_env: token_env.map(str::to_string),
            ..Self::default()
        }
    }
}

/// `url` with the password of its user part replaced by `[redacted]`.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_end];
    let Some(at) = authority.rfind('@') else {
        return url.to_string();
    };
    let user = &authority[..at];
    match user.split_once(':') {
        Some((name, _password)) => format!(
            "{scheme}://{name}:[redacted]{}",
            &rest[at..] // from the `@` on
        ),
        None => url.to_string(),
    }
}

/// One MCP tool offered to the model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolRecord {
    /// The name of the server that serves it.
    pub server: String,
    /// Its name on the server (what `tools/call` sends).
    pub name: String,
    /// The name the model saw and calls it by (`SERVER__NAME` when renamed).
    pub offered_as: String,
}

/// One step after a session's first model turn, in the order they happened.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Step {
    /// A `tools/call` sent to an MCP server, and what came back.
    ToolCall(Box<RecordedCall>),
    /// A further model turn, sent with the results so far.
    Turn(Box<RecordedTurn>),
    /// The loop stopped by itself and printed why (the `max-steps` warning, a failure to list a
    /// server's tools again).
    Stop(LoopStop),
}

/// A `tools/call` as it ran.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(try_from = "CallJson")]
pub struct RecordedCall {
    /// When the call was sent, in milliseconds since the session's first request.
    pub at_ms: u64,
    /// When its answer (or its failure) came, on the same clock.
    pub ended_at_ms: u64,
    /// The name of the server it ran on.
    pub server: String,
    /// The tool's name on that server.
    pub name: String,
    /// The name the model called it by.
    pub tool_name: String,
    /// The id of the model's call.
    pub tool_call_id: String,
    /// The arguments sent.
    pub arguments: Value,
    /// What came back.
    pub outcome: RecordedOutcome,
}

/// How a recorded call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RecordedOutcome {
    /// The server's `CallToolResult` as JSON, exactly as received (a tool that reported a failure
    /// with `isError` is a result too).
    Result(Value),
    /// The call failed on the MCP side (the server failed the request, closed, timed out): the
    /// error's message.
    Error(String),
}

impl RecordedCall {
    /// The parts the live loop printed for this call: a `tool-result` part read from the
    /// recorded result, or an `error` part with category `tool_execution_failed`.
    pub fn parts(&self) -> Vec<Part> {
        match &self.outcome {
            RecordedOutcome::Result(v) => {
                let o = outcome(&self.tool_call_id, &self.tool_name, v);
                vec![Part::ToolResult(Box::new(o.part))]
            }
            RecordedOutcome::Error(message) => vec![Part::error(failure(
                message,
                Some(&self.tool_call_id),
                Some(&self.tool_name),
            ))],
        }
    }

    /// The recorded result as the live loop read it: the `tool-result` part and the text of the
    /// tool message the model was sent. `None` for a failed call.
    pub fn result(&self) -> Option<CallOutcome> {
        match &self.outcome {
            RecordedOutcome::Result(v) => Some(outcome(&self.tool_call_id, &self.tool_name, v)),
            RecordedOutcome::Error(_) => None,
        }
    }
}

/// The JSON form of a [`RecordedCall`]: `result` or `error`, exactly one.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallJson {
    at_ms: u64,
    ended_at_ms: u64,
    server: String,
    name: String,
    tool_name: String,
    tool_call_id: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl TryFrom<CallJson> for RecordedCall {
    type Error = String;

    fn try_from(j: CallJson) -> Result<Self, String> {
        let outcome = match (j.result, j.error) {
            (Some(r), None) => RecordedOutcome::Result(r),
            (None, Some(e)) => RecordedOutcome::Error(e),
            (Some(_), Some(_)) => {
                return Err(format!(
                    "the call {} has both a \"result\" and an \"error\"",
                    j.tool_call_id
                ));
            }
            (None, None) => {
                return Err(format!(
                    "the call {} has neither a \"result\" nor an \"error\"",
                    j.tool_call_id
                ));
            }
        };
        if !matches!(j.arguments, Value::Object(_) | Value::Null) {
            return Err(format!(
                "the arguments of the call {} are not a JSON object",
                j.tool_call_id
            ));
        }
        Ok(RecordedCall {
            at_ms: j.at_ms,
            ended_at_ms: j.ended_at_ms,
            server: j.server,
            name: j.name,
            tool_name: j.tool_name,
            tool_call_id: j.tool_call_id,
            arguments: j.arguments,
            outcome,
        })
    }
}

impl Serialize for RecordedCall {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Out<'a> {
            at_ms: u64,
            ended_at_ms: u64,
            server: &'a str,
            name: &'a str,
            tool_name: &'a str,
            tool_call_id: &'a str,
            arguments: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            result: Option<&'a Value>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
        }
        let (result, error) = match &self.outcome {
            RecordedOutcome::Result(v) => (Some(v), None),
            RecordedOutcome::Error(e) => (None, Some(e.as_str())),
        };
        Out {
            at_ms: self.at_ms,
            ended_at_ms: self.ended_at_ms,
            server: &self.server,
            name: &self.name,
            tool_name: &self.tool_name,
            tool_call_id: &self.tool_call_id,
            arguments: &self.arguments,
            result,
            error,
        }
        .serialize(s)
    }
}

/// A model turn after the first, recorded like a one-turn session.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordedTurn {
    /// When its request was sent, in milliseconds since the session's first request.
    pub at_ms: u64,
    /// The whole request of this turn (the conversation so far, with the tool results).
    pub request: Request,
    /// Its raw wire events, each with its offset from this turn's own request.
    #[serde(default)]
    pub events: Vec<RawEvent>,
    /// When the turn ended, in milliseconds since this turn's request.
    #[serde(default)]
    pub ended_at_ms: u64,
    /// Parts that ended the turn without a wire event behind them; usually none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub end: Vec<Part>,
    /// Every part of the turn, as the live run produced them.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// The loop's own ending: what it printed when it stopped by itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoopStop {
    /// When, in milliseconds since the session's first request.
    pub at_ms: u64,
    /// The parts printed (a `warning` with code `max-steps`, an `error`).
    #[serde(default)]
    pub parts: Vec<Part>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_url_is_not_kept() {
        assert_eq!(
            without_password("https://me:s3cret@mcp.example/mcp?x=1"),
            "https://me:[redacted]@mcp.example/mcp?x=1"
        );
        assert_eq!(
            without_password("http://127.0.0.1:8000/mcp"),
            "http://127.0.0.1:8000/mcp"
        );
        assert_eq!(without_password("http://me@host/a@b"), "http://me@host/a@b");
        let r = McpServerRecord::http("h", "http://a:b@h/", Some("TOKEN"));
        assert_eq!(r.url.as_deref(), Some("http://a:[redacted]@h/"));
        assert_eq!(r.token_env.as_deref(), Some("TOKEN"));
    }

    #[test]
    fn a_call_has_exactly_one_of_result_and_error() {
        let base = serde_json::json!({"type": "toolCall", "atMs": 1, "endedAtMs": 2,
            "server": "s", "name": "n", "toolName": "n", "toolCallId": "c1", "arguments": {}});
        let mut both = base.clone();
        both["result"] = serde_json::json!({"content": []});
        both["error"] = "boom".into();
        let e = serde_json::from_value::<Step>(both)
            .unwrap_err()
            .to_string();
        assert!(e.contains("both"), "{e}");
        let e = serde_json::from_value::<Step>(base.clone())
            .unwrap_err()
            .to_string();
        assert!(e.contains("neither"), "{e}");
        let mut failed = base;
        failed["error"] = "the server closed".into();
        let step: Step = serde_json::from_value(failed.clone()).unwrap();
        assert_eq!(serde_json::to_value(&step).unwrap(), failed);
        let Step::ToolCall(call) = step else {
            panic!("a call")
        };
        let parts = serde_json::to_value(call.parts()).unwrap();
        assert_eq!(parts[0]["type"], "error");
        assert_eq!(parts[0]["category"], "tool_execution_failed");
        assert_eq!(parts[0]["toolCallId"], "c1");
        assert!(call.result().is_none());
    }
}
