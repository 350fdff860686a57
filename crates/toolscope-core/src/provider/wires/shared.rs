//! Pieces of request building and response reading that the wires share: a tool's
//! declaration, the sampling options under each provider's key names, reading one event or
//! body as JSON, and reading a model list.

use serde_json::{Map, Value, json};

use crate::error::{ErrorCategory, ProviderError};
use crate::tool::Tool;

use crate::part::ToolCall;
use crate::provider::assemble::Delta;
use crate::provider::plan::{Plan, ToolResult, Turn};
use crate::provider::request::Request;
use crate::provider::request::Sampling;

/// A tool as most wires declare it: `name`, `description` (left out when empty), and its schema
/// under `schema_key`.
pub(crate) fn tool_decl(tool: &Tool, schema_key: &str) -> Map<String, Value> {
    let mut d = Map::new();
    d.insert("name".into(), json!(tool.name()));
    if !tool.def.description.is_empty() {
        d.insert("description".into(), json!(tool.def.description));
    }
    d.insert(schema_key.into(), tool.schema().clone());
    d
}

/// The tools a request declares natively, each as `decl` writes it; `None` when the tools go in
/// the prompt (or there are none to declare natively).
pub(crate) fn declared_tools(
    plan: &Plan,
    req: &Request,
    decl: impl Fn(&Tool) -> Value,
) -> Option<Value> {
    plan.native_tools
        .then(|| Value::Array(plan.declared(req).into_iter().map(decl).collect()))
}

/// The start of a chat-style body (Chat Completions, Ollama): the model, the conversation as
/// role messages after the system text, and the tools declared as functions. The wires differ
/// in the `content` of an assistant message without text (`no_text`), in how a past call is
/// written (`call`), and in the tool message of a result (`result`).
pub(crate) fn chat_body(
    req: &Request,
    plan: &Plan,
    no_text: Value,
    call: impl Fn(&ToolCall) -> Value,
    result: impl Fn(&ToolResult) -> Value,
) -> Map<String, Value> {
    let mut messages = Vec::new();
    if let Some(s) = &plan.system {
        messages.push(json!({"role": "system", "content": s}));
    }
    for turn in plan.turns(req) {
        match turn {
            Turn::User(text) => messages.push(json!({"role": "user", "content": text})),
            Turn::Assistant { text, calls, .. } => {
                let mut m = Map::new();
                m.insert("role".into(), json!("assistant"));
                m.insert(
                    "content".into(),
                    text.map_or(no_text.clone(), Value::String),
                );
                if !calls.is_empty() {
                    let calls = calls.iter().map(&call).collect();
                    m.insert("tool_calls".into(), Value::Array(calls));
                }
                messages.push(Value::Object(m));
            }
            Turn::Results(results) => messages.extend(results.iter().map(&result)),
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("messages".into(), Value::Array(messages));
    let function = |t: &Tool| json!({"type": "function", "function": tool_decl(t, "parameters")});
    if let Some(tools) = declared_tools(plan, req, function) {
        body.insert("tools".into(), tools);
    }
    body
}

/// The key each sampling option goes under (`None`: the wire has no such option here).
pub(crate) struct SamplingKeys {
    pub temperature: &'static str,
    pub top_p: &'static str,
    pub seed: Option<&'static str>,
    pub max_tokens: Option<&'static str>,
    pub stop: Option<&'static str>,
}

impl SamplingKeys {
    /// OpenAI's names, which Chat Completions and Ollama's options share (but for the limit).
    pub(crate) const OPENAI: SamplingKeys = SamplingKeys {
        temperature: "temperature",
        top_p: "top_p",
        seed: Some("seed"),
        max_tokens: Some("max_tokens"),
        stop: Some("stop"),
    };
}

/// Writes the sampling options that are set into `into`.
pub(crate) fn sampling(s: &Sampling, keys: &SamplingKeys, into: &mut Map<String, Value>) {
    if let Some(t) = s.temperature {
        into.insert(keys.temperature.into(), json!(t));
    }
    if let Some(p) = s.top_p {
        into.insert(keys.top_p.into(), json!(p));
    }
    if let (Some(seed), Some(key)) = (s.seed, keys.seed) {
        into.insert(key.into(), json!(seed));
    }
    if let (Some(m), Some(key)) = (s.max_tokens, keys.max_tokens) {
        into.insert(key.into(), json!(m));
    }
    if let (false, Some(key)) = (s.stop.is_empty(), keys.stop) {
        into.insert(key.into(), json!(s.stop));
    }
}

/// A response-format name OpenAI accepts: `[A-Za-z0-9_-]{1,64}`.
pub(crate) fn format_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.is_empty() { "tool_call".into() } else { s }
}

/// An answer that cannot be read.
pub(crate) fn invalid(message: String) -> Delta {
    Delta::Error(ProviderError::new(
        ErrorCategory::ProviderInvalidResponse,
        message,
    ))
}

/// A finding about the order of a stream's events: only the first of an answer is reported
/// (`reported` says whether it was), as the later ones follow from it.
pub(crate) fn order_finding(reported: &mut bool, message: String, out: &mut Vec<Delta>) {
    if !std::mem::replace(reported, true) {
        out.push(Delta::Warning(crate::part::Warning::new(
            crate::lint::EVENT_ORDER,
            message,
        )));
    }
}

/// One stream event (`stream`) or the whole body, as JSON; what to report when it is not.
// The error is pushed onto the deltas as it is; boxing it would only add an allocation there.
#[allow(clippy::result_large_err)]
pub(crate) fn parse(data: &str, stream: bool) -> Result<Value, Delta> {
    serde_json::from_str(data).map_err(|e| {
        invalid(if stream {
            format!("a stream event is not JSON ({e}): {}", quote(data))
        } else {
            format!(
                "the response is not JSON ({e}); it starts: {}",
                quote(
                    data.char_indices()
                        .nth(300)
                        .map_or(data, |(i, _)| &data[..i])
                )
            )
        })
    })
}

/// How much of a wire event an error message quotes.
pub(crate) const QUOTE_CHARS: usize = 2048;

/// `text` for an error message: whole when short, else its first [`QUOTE_CHARS`] characters
/// and its size (a 50 MB event is not copied into the message).
pub(crate) fn quote(text: &str) -> String {
    match text.char_indices().nth(QUOTE_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}… ({} in all)", &text[..cut], size(text.len())),
    }
}

/// A byte count for a message: `512 bytes`, `64 KiB`, `1.5 MiB`.
pub(crate) fn size(n: usize) -> String {
    const KIB: usize = 1024;
    if n < KIB {
        format!("{n} bytes")
    } else if n < KIB * KIB {
        format!("{:.0} KiB", n as f64 / KIB as f64)
    } else {
        format!("{:.1} MiB", n as f64 / (KIB * KIB) as f64)
    }
}

/// The `key` of each object in the array `list` (a model list's names).
pub(crate) fn names(list: Option<&Value>, key: &str) -> Vec<String> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| m.get(key).and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// `value` as a query value: every byte but the unreserved ones percent-encoded (a page token
/// is often base64, whose `+`, `/` and `=` would otherwise change meaning).
pub(crate) fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
