//! The one request type every adapter maps to its wire.
//!
//! A [`Request`] is plain data: sessions save it and re-send it, the TUI edits it. It never holds
//! an API key; keys live in [`Keys`], read from the environment and redacted in `Debug`, so that
//! serialising a request (or printing it) cannot leak one. [`Request::validate`] is the pre-send
//! check of the spec: a request that fails it never leaves the process.
//!
//! [`Keys`]: super::keys::Keys

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{ErrorCategory, ProviderError};
use serde_json::Value;

use crate::part::{Part, PartId, ToolCall};
use crate::protocol::Protocol;
use crate::tool::{ToolChoice, ToolSet};

use super::secret_url::redact_url;
use super::spec::ProviderKind;

/// One message of the conversation. Serialised with a `role` tag, like the wire formats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    /// Allowed only as the first message; joined after [`Request::system`] if both are given.
    System {
        /// The system text.
        content: String,
    },
    /// What the person says.
    User {
        /// The user's text; never empty in a valid request.
        content: String,
    },
    /// A past answer of the model: its text, its tool calls, or both.
    Assistant {
        /// The answer text; absent when the answer was only tool calls.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The calls the model made, each with an id that later `tool` messages answer.
        #[serde(default, rename = "toolCalls", skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// The answer's reasoning blocks, kept for the providers that need them back to continue
        /// (Anthropic thinking with its signature in a tool loop, Responses reasoning items,
        /// Gemini thought signatures). Sessions without them read as before.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        reasoning: Vec<Reasoning>,
    },
    /// The result of one tool call, answering the assistant call with the same id.
    Tool {
        /// The id of the assistant tool call this result answers.
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        /// The result as text (JSON results too), as the model will see it.
        content: String,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            content: text.into(),
        }
    }

    /// A system message (valid only as the first message).
    pub fn system(text: impl Into<String>) -> Self {
        Message::System {
            content: text.into(),
        }
    }

    /// A past answer: its text, its tool calls, or both.
    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Message::Assistant {
            content,
            tool_calls,
            reasoning: Vec::new(),
        }
    }

    /// The past answer that the parts of a run make, ready to join the conversation: its text,
    /// the calls the client is to answer (provider-executed ones were answered by the provider),
    /// and the reasoning blocks with what their provider needs back. `None` when the parts hold
    /// neither text nor such calls.
    pub fn answer(parts: &[Part]) -> Option<Message> {
        let mut text = String::new();
        let mut calls = Vec::new();
        let mut reasoning: Vec<Reasoning> = Vec::new();
        let mut open: Option<(PartId, Reasoning)> = None;
        for p in parts {
            match p {
                Part::Text { text: t } => text.push_str(t),
                Part::TextDelta { delta, .. } => text.push_str(delta),
                Part::ToolCall(c) if !c.provider_executed => calls.push(c.as_ref().clone()),
                Part::ReasoningStart { id, redacted } => {
                    open = Some((
                        id.clone(),
                        Reasoning {
                            redacted: *redacted,
                            ..Reasoning::default()
                        },
                    ));
                }
                Part::ReasoningDelta { id, delta } => {
                    if let Some((open_id, r)) = &mut open
                        && open_id == id
                    {
                        r.text.push_str(delta);
                    }
                }
                Part::ReasoningEnd {
                    id,
                    provider_metadata,
                } => {
                    if let Some((open_id, mut r)) = open.take() {
                        if open_id == *id {
                            r.provider_metadata = provider_metadata.as_deref().cloned();
                            reasoning.push(r);
                        } else {
                            open = Some((open_id, r));
                        }
                    }
                }
                _ => {}
            }
        }
        let content = (!text.trim().is_empty()).then_some(text);
        if content.is_none() && calls.is_empty() {
            return None;
        }
        Some(Message::Assistant {
            content,
            tool_calls: calls,
            reasoning,
        })
    }

    /// The result of the call with id `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    /// The role name as serialised: `system`, `user`, `assistant` or `tool`.
    pub fn role(&self) -> &'static str {
        match self {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            Message::Tool { .. } => "tool",
        }
    }
}

/// A reasoning block of a past answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reasoning {
    /// The reasoning text (a summary on the Responses wire; empty when redacted).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The provider withheld the text (Anthropic `redacted_thinking`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub redacted: bool,
    /// What the provider gave to continue from it, keyed by provider, as the `reasoning-end`
    /// part carried it: `{"anthropic": {"signature"}}` or `{"anthropic": {"redactedData"}}`,
    /// `{"openai-responses": {"itemId", "encryptedContent"?}}`, `{"gemini":
    /// {"thoughtSignature"}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_metadata: Option<Value>,
}

impl Reasoning {
    /// This provider's entry of the metadata (`"anthropic"`, `"gemini"`, `"openai-responses"`).
    pub fn metadata(&self, provider_key: &str) -> Option<&Value> {
        self.provider_metadata.as_ref()?.get(provider_key)
    }
}

/// Sampling options; each one absent is left out of the wire body (the provider's default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Sampling {
    /// Sampling temperature, as the provider defines its range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// The most tokens the answer may have (`max_tokens`, `maxOutputTokens`, `num_predict`).
    /// Anthropic requires it, so a new Anthropic request sets a default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Nucleus sampling: the probability mass sampled from, between 0 and 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f64>,
    /// Ignored by Anthropic, which has no seed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Stop sequences; empty sends none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// `false` asks for at most one tool call per answer (OpenAI `parallel_tool_calls`,
    /// Anthropic `disable_parallel_tool_use`); Gemini and Ollama have no such setting.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// How much the model reasons before it answers (OpenAI `reasoning_effort`, an Anthropic
    /// thinking budget, a Gemini thinking budget, Ollama `think`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// With tool choice `auto` or `required` (or none given): the tools the model may call,
    /// while all of them are still sent (OpenAI `allowed_tools`, which keeps the prompt cache);
    /// the other wires are sent only these tools. Empty: every tool.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
}

/// How much a model reasons, where its wire lets the caller say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningEffort {
    /// As little as the model allows.
    Minimal,
    /// A short think.
    Low,
    /// The usual amount.
    Medium,
    /// As much as it needs.
    High,
}

impl ReasoningEffort {
    /// Every level, least first.
    pub const ALL: [ReasoningEffort; 4] = [
        ReasoningEffort::Minimal,
        ReasoningEffort::Low,
        ReasoningEffort::Medium,
        ReasoningEffort::High,
    ];

    /// The name on the wire and the command line (`low`).
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Minimal => "minimal",
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }

    /// The level of this name.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|e| e.as_str() == name)
            .ok_or_else(|| {
                format!(
                    "unknown reasoning effort \"{name}\" (expected minimal, low, medium or high)"
                )
            })
    }

    /// A thinking budget in tokens, for the wires that take one (Anthropic, Gemini).
    pub fn budget_tokens(self) -> u32 {
        match self {
            ReasoningEffort::Minimal => 1024,
            ReasoningEffort::Low => 2048,
            ReasoningEffort::Medium => 8192,
            ReasoningEffort::High => 24576,
        }
    }
}

/// How long to wait. Both in seconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Timeouts {
    /// For the TCP (and TLS) connection to be established.
    pub connect_secs: f64,
    /// For the next bytes once the answer has begun (its first token arrived): a stream that
    /// sends nothing for longer than this has stalled. A model that thinks silently for longer
    /// than this is cut off, so the default is generous.
    pub idle_secs: f64,
    /// For the answer to begin: the response headers and every piece of the body until the
    /// first piece of the model's output (text, reasoning or a call). A CPU server reading a
    /// long prompt (prefill) sends nothing for minutes, so this is longer than the idle timeout.
    /// Not written to a session while it has its default.
    #[serde(skip_serializing_if = "is_default_first_token")]
    pub first_token_secs: f64,
}

/// The default wait for the first token, in seconds.
pub const DEFAULT_FIRST_TOKEN_SECS: f64 = 600.0;

fn is_default_first_token(s: &f64) -> bool {
    *s == DEFAULT_FIRST_TOKEN_SECS
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect_secs: 10.0,
            idle_secs: 120.0,
            first_token_secs: DEFAULT_FIRST_TOKEN_SECS,
        }
    }
}

impl Timeouts {
    /// The connect timeout, with nonsense (negative, NaN, absurdly large) replaced by 10 s.
    pub fn connect(&self) -> Duration {
        secs(self.connect_secs, 10.0)
    }

    /// The idle timeout, with nonsense replaced by 120 s.
    pub fn idle(&self) -> Duration {
        secs(self.idle_secs, 120.0)
    }

    /// The wait for the first token, with nonsense replaced by the default (600 s).
    pub fn first_token(&self) -> Duration {
        secs(self.first_token_secs, DEFAULT_FIRST_TOKEN_SECS)
    }
}

/// A duration from user-given seconds; nonsense (negative, NaN, absurdly large) falls back.
fn secs(s: f64, fallback: f64) -> Duration {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .unwrap_or(Duration::from_secs_f64(fallback))
}

/// How much of an answer is held in memory. Both in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Limits {
    /// The largest wire event: one SSE event, one NDJSON line, or a whole (non-streamed or
    /// error) body. A larger one ends the answer with a `provider_invalid_response` error that
    /// quotes its first few KB; the rest of it is never held.
    pub event_bytes: usize,
    /// The most raw wire text one answer keeps for its session. Beyond it the answer is still
    /// read and parsed whole, and every part is kept, but the oldest raw events are dropped
    /// from memory (the session says how many).
    pub raw_bytes: usize,
}

impl Limits {
    /// 64 MiB.
    pub const DEFAULT_EVENT_BYTES: usize = 64 << 20;
    /// 64 MiB.
    pub const DEFAULT_RAW_BYTES: usize = 64 << 20;

    fn is_default(&self) -> bool {
        *self == Limits::default()
    }

    /// The event limit, at least 1 KiB (a zero would refuse every answer).
    pub fn event(&self) -> usize {
        self.event_bytes.max(1024)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            event_bytes: Self::DEFAULT_EVENT_BYTES,
            raw_bytes: Self::DEFAULT_RAW_BYTES,
        }
    }
}

/// Everything needed to call a model, except the key.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Which provider, and with it the wire, default base URL and key variable.
    pub provider: ProviderKind,
    /// The model name as the provider knows it; must not be empty.
    pub model: String,
    /// Overrides [`ProviderKind::default_base_url`]; for OpenAI the part before
    /// `/chat/completions` (e.g. `http://localhost:8000/v1`).
    ///
    /// Saved (serialised) with its credentials redacted ([`redact_url`]): a session or a
    /// settings file never holds the user information or a key parameter of the URL.
    ///
    /// [`redact_url`]: super::redact_url
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "redacted_url"
    )]
    pub base_url: Option<String>,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The conversation, oldest first: at least one message, the last a user or tool message.
    pub messages: Vec<Message>,
    /// The tools offered; saved as their definitions and compiled again on load.
    #[serde(default, with = "tools_as_defs")]
    pub tools: ToolSet,
    /// Absent: the wire field is omitted and the provider's default applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Emulated mode: no native tools; this protocol's prompt teaches the tools and its parser
    /// reads the calls out of the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<Protocol>,
    /// Without a protocol: the request is native, and the answer text is read with protocol
    /// detection (`--protocol auto`), for models whose server sends their tool-call markup as
    /// text. Reported by a [`RunEvent::Detected`](super::RunEvent::Detected).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub detect_protocol: bool,
    /// Sampling options.
    #[serde(default)]
    pub sampling: Sampling,
    /// Stream the answer (SSE or NDJSON) rather than wait for one whole body; `true` by default.
    #[serde(default = "yes")]
    pub stream: bool,
    /// How long to wait for the connection and for each piece of the answer.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// How much of the answer is held in memory.
    #[serde(default, skip_serializing_if = "Limits::is_default")]
    pub limits: Limits,
}

fn redacted_url<S: serde::Serializer>(url: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match url {
        Some(u) => s.serialize_some(&redact_url(u)),
        None => s.serialize_none(),
    }
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
            detect_protocol: false,
            sampling: Sampling {
                max_tokens: provider.default_max_tokens(),
                ..Sampling::default()
            },
            stream: true,
            timeouts: Timeouts::default(),
            limits: Limits::default(),
        }
    }

    /// The base URL in use, without a trailing slash. `None` when the request gives none and the
    /// provider has no default (a local server whose address the caller knows).
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
                    ..
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
        if let Some(name) = self
            .sampling
            .allowed_tools
            .iter()
            .find(|n| self.tools.get(n).is_none())
        {
            return invalid(format!(
                "the allowed tool \"{name}\" is not among the tools"
            ));
        }
        self.provider.wire().format().validate(self)?;
        if self.provider.capabilities().required_max_tokens.is_some()
            && self.sampling.max_tokens.is_none()
        {
            return invalid(format!(
                "{} requires max_tokens, and none was given",
                self.provider
            ));
        }
        Ok(())
    }
}

/// Serialises a [`ToolSet`] as its list of definitions and compiles it back on load.
mod tools_as_defs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use crate::tool::{ToolDef, ToolSet};

    pub(super) fn serialize<S: Serializer>(tools: &ToolSet, s: S) -> Result<S::Ok, S::Error> {
        tools.defs().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ToolSet, D::Error> {
        let defs = Vec::<ToolDef>::deserialize(d)?;
        ToolSet::new(defs).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::wires::anthropic::ANTHROPIC_DEFAULT_MAX_TOKENS;
    use crate::tool::ToolDef;
    use serde_json::{Value, json};

    fn call(id: &str) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            tool_name: "get_weather".into(),
            input: json!({"city": "Paris"}),
            coercions: vec![],
            invalid: vec![],
            ..Default::default()
        }
    }

    fn req(messages: Vec<Message>) -> Request {
        let mut r = Request::new(ProviderKind::OPENAI, "m");
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
        let mut r = Request::new(ProviderKind::ANTHROPIC, "claude");
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
        let mut r = Request::new(ProviderKind::GEMINI, "gemini-x");
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
    fn timeouts_fall_back_on_nonsense() {
        let t = Timeouts {
            connect_secs: -1.0,
            idle_secs: f64::NAN,
            first_token_secs: f64::INFINITY,
        };
        assert_eq!(t.connect(), Duration::from_secs(10));
        assert_eq!(t.idle(), Duration::from_secs(120));
        assert_eq!(t.first_token(), Duration::from_secs(600));
    }

    #[test]
    fn the_first_token_timeout_is_saved_only_when_changed() {
        let v = serde_json::to_value(Timeouts::default()).unwrap();
        assert_eq!(v, json!({"connectSecs": 10.0, "idleSecs": 120.0}));
        let t = Timeouts {
            first_token_secs: 30.0,
            ..Timeouts::default()
        };
        let v = serde_json::to_value(t).unwrap();
        assert_eq!(v["firstTokenSecs"], 30.0);
        let back: Timeouts = serde_json::from_value(v).unwrap();
        assert_eq!(back, t);
        // A session written before the field existed reads with the default.
        let old: Timeouts = serde_json::from_value(json!({"idleSecs": 5.0})).unwrap();
        assert_eq!(old.first_token(), Duration::from_secs(600));
    }
}
