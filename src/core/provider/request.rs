//! The one request type every adapter maps to its wire, and the keys kept apart from it.
//!
//! A [`Request`] is plain data: sessions save it and re-send it, the TUI edits it. It never holds
//! an API key; keys live in [`Keys`], read from the environment and redacted in `Debug`, so that
//! serialising a request (or printing it) cannot leak one. [`Request::validate`] is the pre-send
//! check of the spec: a request that fails it never leaves the process.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::core::error::{ErrorCategory, ProviderError};
use crate::core::part::ToolCall;
use crate::core::protocol::Protocol;
use crate::core::tool::{ToolChoice, ToolSet};

/// The closed set of adapters. Adding a provider means adding a variant and a module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ProviderKind {
    /// OpenAI Chat Completions, and every OpenAI-compatible server (vLLM, llama.cpp server,
    /// LM Studio, OpenRouter) through the base URL.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini (`generateContent`).
    #[serde(rename = "gemini")]
    Gemini,
    /// Ollama's native `/api/chat`.
    #[serde(rename = "ollama")]
    Ollama,
    /// The built-in model, served in-process on loopback with the OpenAI wire.
    #[serde(rename = "demo")]
    Demo,
}

/// Anthropic requires `max_tokens`; this is what [`Request::new`] puts there.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;
/// The `anthropic-version` header sent with every Anthropic request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

impl ProviderKind {
    pub const ALL: [ProviderKind; 5] = [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::Ollama,
        ProviderKind::Demo,
    ];

    /// The name used on the command line and in session files.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::Ollama => "ollama",
            ProviderKind::Demo => "demo",
        }
    }

    pub fn from_name(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                format!(
                    "unknown provider \"{name}\" (expected one of: {})",
                    Self::ALL.map(|k| k.name()).join(", ")
                )
            })
    }

    /// The base URL used when the request names none. The demo model has none: its server is
    /// started for each run on a free loopback port.
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::Anthropic => Some("https://api.anthropic.com"),
            ProviderKind::Gemini => Some("https://generativelanguage.googleapis.com"),
            ProviderKind::Ollama => Some("http://localhost:11434"),
            ProviderKind::Demo => None,
        }
    }

    /// The environment variable holding this provider's key, if it takes one.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            ProviderKind::OpenAi => Some("OPENAI_API_KEY"),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY"),
            ProviderKind::Gemini => Some("GEMINI_API_KEY"),
            ProviderKind::Ollama | ProviderKind::Demo => None,
        }
    }

    /// The `max_tokens` a new request starts with (Anthropic refuses requests without one).
    pub fn default_max_tokens(self) -> Option<u32> {
        match self {
            ProviderKind::Anthropic => Some(ANTHROPIC_DEFAULT_MAX_TOKENS),
            _ => None,
        }
    }

    /// Whether the answer streams as SSE (else NDJSON) when streaming.
    pub(crate) fn streams_sse(self) -> bool {
        !matches!(self, ProviderKind::Ollama)
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One message of the conversation. Serialised with a `role` tag, like the wire formats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// Allowed only as the first message; joined after [`Request::system`] if both are given.
    System {
        content: String,
    },
    User {
        content: String,
    },
    /// A past answer of the model: its text, its tool calls, or both.
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, answering the assistant call with the same id.
    Tool {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        content: String,
    },
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            content: text.into(),
        }
    }

    pub fn system(text: impl Into<String>) -> Self {
        Message::System {
            content: text.into(),
        }
    }

    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content,
            tool_calls,
        }
    }

    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    pub fn role(&self) -> &'static str {
        match self {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        }
    }
}

/// Sampling options; each one absent is left out of the wire body (the provider's default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Sampling {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Ignored by Anthropic, which has no seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
}

/// How long to wait. Both in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Timeouts {
    /// For the TCP (and TLS) connection to be established.
    pub connect_secs: f64,
    /// For the next bytes: the response headers, then each piece of the body. A model that
    /// thinks silently for longer than this is cut off, so the default is generous.
    pub idle_secs: f64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect_secs: 10.0,
            idle_secs: 120.0,
        }
    }
}

impl Timeouts {
    pub(crate) fn connect(&self) -> Duration {
        secs(self.connect_secs, 10.0)
    }

    pub(crate) fn idle(&self) -> Duration {
        secs(self.idle_secs, 120.0)
    }
}

/// A duration from user-given seconds; nonsense (negative, NaN, absurdly large) falls back.
fn secs(s: f64, fallback: f64) -> Duration {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs_f64(fallback))
}

/// Everything needed to call a model, except the key.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub provider: ProviderKind,
    pub model: String,
    /// Overrides [`ProviderKind::default_base_url`]; for OpenAI the part before
    /// `/chat/completions` (e.g. `http://localhost:8000/v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default, with = "tools_as_defs")]
    pub tools: ToolSet,
    /// Absent: the wire field is omitted and the provider's default applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Emulated mode: no native tools; this protocol's prompt teaches the tools and its parser
    /// reads the calls out of the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    #[serde(default)]
    pub sampling: Sampling,
    #[serde(default = "yes")]
    pub stream: bool,
    #[serde(default)]
    pub timeouts: Timeouts,
}

fn yes() -> bool {
    true
}

impl Request {
    /// A streaming request with no messages yet, and the provider's defaults (Anthropic's
    /// `max_tokens`).
    pub fn new(provider: ProviderKind, model: impl Into<String>) -> Self {
        Request {
            provider,
            model: model.into(),
            base_url: None,
            system: None,
            messages: Vec::new(),
            tools: ToolSet::empty(),
            tool_choice: None,
            protocol: None,
            sampling: Sampling {
                max_tokens: provider.default_max_tokens(),
                ..Sampling::default()
            },
            stream: true,
            timeouts: Timeouts::default(),
        }
    }

    /// The base URL in use, without a trailing slash. `None` for the demo model until its server
    /// is started.
    pub fn resolved_base_url(&self) -> Option<String> {
        self.base_url
            .as_deref()
            .or(self.provider.default_base_url())
            .map(|u| u.trim_end_matches('/').to_string())
    }

    /// The system prompt the caller gave: [`Request::system`] and a leading system message,
    /// joined by a blank line. Emulation adds the tool prompt to it when the wire body is built.
    pub fn system_text(&self) -> Option<String> {
        let lead = match self.messages.first() {
            Some(Message::System { content }) => Some(content.as_str()),
            _ => None,
        };
        let parts: Vec<&str> = [self.system.as_deref(), lead]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect();
        (!parts.is_empty()).then(|| parts.join("\n\n"))
    }

    /// The messages after a leading system message.
    pub fn turns(&self) -> &[Message] {
        match self.messages.first() {
            Some(Message::System { .. }) => &self.messages[1..],
            _ => &self.messages,
        }
    }

    /// The name of the tool that the call with this id invoked, looked up in the history
    /// (Gemini, Ollama and the protocols name the tool in a result; the others use the id).
    pub fn tool_name_of(&self, tool_call_id: &str) -> Option<&str> {
        self.messages.iter().find_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .find(|c| &*c.tool_call_id == tool_call_id)
                .map(|c| c.tool_name.as_str()),
            _ => None,
        })
    }

    /// The pre-send checks: the conversation's shape, the tool choice against the tools, and what
    /// the provider requires. A failure is a `provider_invalid_request`; nothing may be sent.
    pub fn validate(&self) -> Result<(), ProviderError> {
        let invalid = |m: String| Err(ProviderError::new(ErrorCategory::ProviderInvalidRequest, m));
        if self.model.trim().is_empty() {
            return invalid("no model given".into());
        }
        if self.messages.is_empty() {
            return invalid("the conversation has no messages".into());
        }
        let mut call_ids: Vec<&str> = Vec::new();
        for (i, m) in self.messages.iter().enumerate() {
            let n = i + 1;
            match m {
                Message::System { .. } if i > 0 => {
                    return invalid(format!(
                        "message {n} is a system message; only the first message may be one"
                    ));
                }
                Message::System { .. } => {}
                Message::User { content } if content.trim().is_empty() => {
                    return invalid(format!("message {n} (user) is empty"));
                }
                Message::User { .. } => {}
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    if content.as_deref().is_none_or(|c| c.trim().is_empty())
                        && tool_calls.is_empty()
                    {
                        return invalid(format!(
                            "message {n} (assistant) has neither text nor tool calls"
                        ));
                    }
                    for c in tool_calls {
                        if c.tool_call_id.is_empty() || c.tool_name.is_empty() {
                            return invalid(format!(
                                "message {n} (assistant) has a tool call without an id or a name"
                            ));
                        }
                        if !c.input.is_object() {
                            return invalid(format!(
                                "message {n} (assistant): the input of tool call \"{}\" is not a JSON object",
                                c.tool_call_id
                            ));
                        }
                        call_ids.push(&c.tool_call_id);
                    }
                }
                Message::Tool { tool_call_id, .. } => {
                    if !call_ids.contains(&tool_call_id.as_str()) {
                        return invalid(format!(
                            "message {n} (tool) answers the call \"{tool_call_id}\", which no earlier assistant message made"
                        ));
                    }
                }
            }
        }
        match self.messages.last() {
            Some(Message::User { .. } | Message::Tool { .. }) => {}
            Some(m) => {
                return invalid(format!(
                    "the last message is a {} message; it must be a user or tool message",
                    m.role()
                ));
            }
            None => {}
        }
        if let Some(choice) = &self.tool_choice {
            choice.validate(&self.tools)?;
        }
        if self.provider == ProviderKind::Anthropic && self.sampling.max_tokens.is_none() {
            return invalid("Anthropic requires max_tokens, and none was given".into());
        }
        Ok(())
    }
}

/// Serialises a [`ToolSet`] as its list of definitions and compiles it back on load.
mod tools_as_defs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::core::tool::{ToolDef, ToolSet};

    pub fn serialize<S: Serializer>(tools: &ToolSet, s: S) -> Result<S::Ok, S::Error> {
        tools.defs().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ToolSet, D::Error> {
        let defs = Vec::<ToolDef>::deserialize(d)?;
        ToolSet::new(defs).map_err(serde::de::Error::custom)
    }
}

/// One API key. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(key: impl Into<String>) -> Self {
        Secret(key.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The API keys, apart from any request so that nothing that saves or prints a request can leak
/// one. Read from `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` and `GEMINI_API_KEY`.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Keys {
    openai: Option<Secret>,
    anthropic: Option<Secret>,
    gemini: Option<Secret>,
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = |k: &Option<Secret>| if k.is_some() { "set" } else { "unset" };
        f.debug_struct("Keys")
            .field("openai", &state(&self.openai))
            .field("anthropic", &state(&self.anthropic))
            .field("gemini", &state(&self.gemini))
            .finish()
    }
}

impl Keys {
    /// The shortest value treated as a secret by [`Keys::redact`].
    pub const REDACT_MIN_LEN: usize = 8;

    /// The keys set (and not empty) in the environment.
    pub fn from_env() -> Self {
        let read = |name: &str| {
            std::env::var(name)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .map(Secret)
        };
        Keys {
            openai: read("OPENAI_API_KEY"),
            anthropic: read("ANTHROPIC_API_KEY"),
            gemini: read("GEMINI_API_KEY"),
        }
    }

    /// Sets the key of one provider (the ones without keys ignore it).
    pub fn with(mut self, provider: ProviderKind, key: impl Into<String>) -> Self {
        let key = Some(Secret(key.into()));
        match provider {
            ProviderKind::OpenAi => self.openai = key,
            ProviderKind::Anthropic => self.anthropic = key,
            ProviderKind::Gemini => self.gemini = key,
            ProviderKind::Ollama | ProviderKind::Demo => {}
        }
        self
    }

    /// Whether any key is set.
    pub fn any(&self) -> bool {
        self.openai.is_some() || self.anthropic.is_some() || self.gemini.is_some()
    }

    pub fn has(&self, provider: ProviderKind) -> bool {
        self.get(provider).is_some()
    }

    pub(crate) fn get(&self, provider: ProviderKind) -> Option<&Secret> {
        match provider {
            ProviderKind::OpenAi => self.openai.as_ref(),
            ProviderKind::Anthropic => self.anthropic.as_ref(),
            ProviderKind::Gemini => self.gemini.as_ref(),
            ProviderKind::Ollama | ProviderKind::Demo => None,
        }
    }

    /// `text` with every key replaced by `[redacted]`: applied to every run event before it
    /// leaves the provider layer, in case a server echoes a key back. Values shorter than
    /// [`Keys::REDACT_MIN_LEN`] are placeholders for local servers (`EMPTY`, `x`), not secrets;
    /// redacting them would mangle the output.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for key in [&self.openai, &self.anthropic, &self.gemini]
            .into_iter()
            .flatten()
        {
            if key.0.len() >= Self::REDACT_MIN_LEN && out.contains(&key.0) {
                out = out.replace(&key.0, "[redacted]");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::tool::ToolDef;
    use serde_json::{Value, json};

    fn call(id: &str) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            tool_name: "get_weather".into(),
            input: json!({"city": "Paris"}),
            coercions: vec![],
            invalid: vec![],
        }
    }

    fn req(messages: Vec<Message>) -> Request {
        let mut r = Request::new(ProviderKind::OpenAi, "m");
        r.messages = messages;
        r
    }

    #[test]
    fn validation_rejects_malformed_conversations() {
        let bad = [
            vec![Message::user("a"), Message::system("late")],
            vec![Message::user("a"), Message::tool_result("nope", "r")],
            vec![Message::user("")],
            vec![
                Message::user("a"),
                Message::assistant(Some(String::new()), vec![]),
                Message::user("b"),
            ],
            vec![
                Message::user("a"),
                Message::assistant(Some("b".into()), vec![]),
            ],
            vec![],
        ];
        for messages in bad {
            let e = req(messages.clone()).validate().unwrap_err();
            assert_eq!(
                e.category,
                ErrorCategory::ProviderInvalidRequest,
                "{messages:?}"
            );
        }
        let good = req(vec![
            Message::system("s"),
            Message::user("a"),
            Message::assistant(None, vec![call("c1")]),
            Message::tool_result("c1", "sunny"),
        ]);
        assert!(good.validate().is_ok());
        assert_eq!(good.tool_name_of("c1"), Some("get_weather"));
        assert_eq!(good.system_text().as_deref(), Some("s"));
        assert_eq!(good.turns().len(), 3);
    }

    #[test]
    fn anthropic_needs_max_tokens_and_new_requests_have_it() {
        let mut r = Request::new(ProviderKind::Anthropic, "claude");
        r.messages = vec![Message::user("hi")];
        assert!(r.validate().is_ok());
        assert_eq!(r.sampling.max_tokens, Some(ANTHROPIC_DEFAULT_MAX_TOKENS));
        r.sampling.max_tokens = None;
        assert_eq!(
            r.validate().unwrap_err().category,
            ErrorCategory::ProviderInvalidRequest
        );
    }

    #[test]
    fn tool_choice_is_checked_before_sending() {
        let mut r = req(vec![Message::user("a")]);
        r.tool_choice = Some(ToolChoice::Required);
        assert!(r.validate().is_err());
        r.tools = ToolSet::new(vec![ToolDef::new("t", "", json!({"type":"object"}))]).unwrap();
        assert!(r.validate().is_ok());
    }

    #[test]
    fn requests_round_trip_through_json_without_keys() {
        let mut r = Request::new(ProviderKind::Gemini, "gemini-x");
        r.messages = vec![
            Message::user("a"),
            Message::assistant(Some("b".into()), vec![call("c1")]),
            Message::tool_result("c1", "r"),
        ];
        r.tools = ToolSet::new(vec![ToolDef::new(
            "get_weather",
            "W",
            json!({"type":"object"}),
        )])
        .unwrap();
        r.tool_choice = Some(ToolChoice::Tool("get_weather".into()));
        r.protocol = Some(Protocol::from_name("hermes").unwrap());
        let text = serde_json::to_string(&r).unwrap();
        let back: Request = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), text);
        assert_eq!(back.tools.len(), 1);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["provider"], "gemini");
        assert_eq!(v["messages"][1]["toolCalls"][0]["toolCallId"], "c1");
    }

    #[test]
    fn keys_never_show_in_debug_and_are_redacted() {
        let keys = Keys::default().with(ProviderKind::OpenAi, "sk-secret-123");
        let dbg = format!("{keys:?}");
        assert!(!dbg.contains("sk-secret-123"), "{dbg}");
        assert!(dbg.contains("openai: \"set\""));
        assert_eq!(keys.redact("bad key sk-secret-123!"), "bad key [redacted]!");
        assert!(keys.has(ProviderKind::OpenAi));
        assert!(!keys.has(ProviderKind::Gemini));
    }

    #[test]
    fn timeouts_fall_back_on_nonsense() {
        let t = Timeouts {
            connect_secs: -1.0,
            idle_secs: f64::NAN,
        };
        assert_eq!(t.connect(), Duration::from_secs(10));
        assert_eq!(t.idle(), Duration::from_secs(120));
    }
}
