//! API keys, kept apart from every request so that nothing that saves or prints a request can
//! leak one.
//!
//! A provider's key is read from the environment variable its [`ProviderSpec`] names
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`), sent as its spec's [`Auth`] says,
//! never shown by `Debug`, and redacted from every run event in case a server echoes it back.
//!
//! [`ProviderSpec`]: super::ProviderSpec
//! [`Auth`]: super::Auth

use std::fmt;

use super::event::RunEvent;
use super::spec::ProviderKind;

/// One API key. Its `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A key, kept out of `Debug`.
    pub fn new(key: impl Into<String>) -> Self {
        Secret(key.into())
    }

    /// The key itself: only for the header that sends it.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// The name secrets of the base URL are kept under (no environment variable has it).
const URL_SECRET: &str = "base URL";

/// The API keys, by the environment variable each is read from.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Keys {
    keys: Vec<(&'static str, Secret)>,
}

impl fmt::Debug for Keys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Keys");
        for (var, _) in &self.keys {
            d.field(var, &"set");
        }
        d.finish()
    }
}

impl Keys {
    /// The shortest value treated as a secret by [`Keys::redact`].
    pub const REDACT_MIN_LEN: usize = 8;

    /// The keys of the providers of the table that are set (and not empty) in the environment.
    pub fn from_env() -> Self {
        Self::from_env_for(ProviderKind::all())
    }

    /// The keys of these providers that are set (and not empty) in the environment.
    pub fn from_env_for(providers: impl IntoIterator<Item = ProviderKind>) -> Self {
        let mut keys = Keys::default();
        for var in providers.into_iter().filter_map(ProviderKind::key_env) {
            let value = std::env::var(var)
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty());
            if let Some(v) = value {
                keys.set(var, v);
            }
        }
        keys
    }

    fn set(&mut self, var: &'static str, key: String) {
        self.keys.retain(|(v, _)| *v != var);
        self.keys.push((var, Secret(key)));
    }

    /// Sets the key of one provider (a provider that takes no key ignores it).
    pub fn with(mut self, provider: ProviderKind, key: impl Into<String>) -> Self {
        if let Some(var) = provider.key_env() {
            self.set(var, key.into());
        }
        self
    }

    /// Adds a secret that is no provider's key (a password or key parameter of the base URL):
    /// never sent by these keys, only redacted.
    pub fn with_secret(mut self, secret: impl Into<String>) -> Self {
        let secret = secret.into();
        if !secret.is_empty() && !self.keys.iter().any(|(_, s)| s.0 == secret) {
            self.keys.push((URL_SECRET, Secret(secret)));
        }
        self
    }

    /// Whether any key is set.
    pub fn any(&self) -> bool {
        !self.keys.is_empty()
    }

    /// Whether the key of `provider` is set.
    pub fn has(&self, provider: ProviderKind) -> bool {
        self.get(provider).is_some()
    }

    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn get(&self, provider: ProviderKind) -> Option<&Secret> {
        let var = provider.key_env()?;
        self.keys.iter().find(|(v, _)| *v == var).map(|(_, s)| s)
    }

    /// `text` with every key replaced by `[redacted]`: applied to every run event before it
    /// leaves the provider layer, in case a server echoes a key back. Values shorter than
    /// [`Keys::REDACT_MIN_LEN`] are placeholders for local servers (`EMPTY`, `x`), not secrets;
    /// redacting them would mangle the output.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for key in self.secrets() {
            if out.contains(key) {
                out = out.replace(key, "[redacted]");
            }
        }
        out
    }

    /// The keys long enough to be redacted.
    fn secrets(&self) -> impl Iterator<Item = &str> {
        self.keys
            .iter()
            .map(|(_, k)| k.0.as_str())
            .filter(|k| k.len() >= Self::REDACT_MIN_LEN)
    }

    /// `event` with every key replaced by `[redacted]`, wherever it appears (a raw event, an
    /// output piece, a part's text or input, an error message). A key split across two events
    /// is not caught; a server echoing a key sends it whole.
    ///
    /// Every event of a run passes here once, on its way out of the provider layer: its strings
    /// are searched where they are, without writing the event out. Only an event that holds a
    /// key (rare: a server echoing it) is rewritten, through its JSON.
    pub fn redact_event(&self, event: RunEvent) -> RunEvent {
        let held = crate::strings::any_str(&event, |s| self.secrets().any(|k| s.contains(k)));
        if !held {
            return event;
        }
        let Ok(text) = serde_json::to_string(&event) else {
            return event;
        };
        let clean = self.redact(&text);
        if clean == text {
            return event;
        }
        // Replacing text inside JSON strings keeps the JSON valid: `[redacted]` needs no escape.
        serde_json::from_str(&clean).unwrap_or(event)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_never_show_in_debug_and_are_redacted() {
        let keys = Keys::default().with(ProviderKind::OPENAI, "sk-secret-123");
        let dbg = format!("{keys:?}");
        assert!(!dbg.contains("sk-secret-123"), "{dbg}");
        assert!(dbg.contains("OPENAI_API_KEY: \"set\""), "{dbg}");
        assert_eq!(keys.redact("bad key sk-secret-123!"), "bad key [redacted]!");
        assert!(keys.has(ProviderKind::OPENAI));
        assert!(!keys.has(ProviderKind::GEMINI));
        // A provider without a key variable takes none.
        let keys = keys.with(ProviderKind::OLLAMA, "sk-other-key-456");
        assert!(!keys.has(ProviderKind::OLLAMA));
        assert_eq!(keys.redact("sk-other-key-456"), "sk-other-key-456");
    }

    #[test]
    fn events_are_redacted_wherever_the_key_sits() {
        use crate::part::{Part, ToolCall};
        use crate::provider::RawEvent;
        let keys = Keys::default().with(ProviderKind::OPENAI, "sk-secret-123");
        let raw = |data: &str| {
            RunEvent::Raw(RawEvent {
                at_ms: 1,
                data: data.into(),
                status: None,
                retry_after: None,
            })
        };
        let clean = raw("{\"content\":\"hi\"}");
        assert_eq!(keys.redact_event(clean.clone()), clean);
        assert_eq!(
            keys.redact_event(raw("echo sk-secret-123!")),
            raw("echo [redacted]!")
        );
        let call = |v: serde_json::Value| {
            RunEvent::Part(Part::tool_call(ToolCall {
                tool_call_id: "c".into(),
                tool_name: "f".into(),
                input: v,
                ..Default::default()
            }))
        };
        assert_eq!(
            keys.redact_event(call(serde_json::json!({"a": [{"k": "x sk-secret-123"}]}))),
            call(serde_json::json!({"a": [{"k": "x [redacted]"}]}))
        );
    }

    #[test]
    fn short_placeholders_are_not_secrets() {
        let keys = Keys::default().with(ProviderKind::OPENAI, "EMPTY");
        assert_eq!(keys.redact("EMPTY answer"), "EMPTY answer");
    }
}
