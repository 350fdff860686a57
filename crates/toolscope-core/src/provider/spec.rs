//! The types of the provider table: what toolscope knows of each provider, as data.
//!
//! A provider is a wire (request mapping and answer decoding) plus one [`ProviderSpec`] in
//! [`PROVIDERS`](super::table::PROVIDERS): its name, default base URL, the environment variable
//! of its key, how the key is sent, a model to start from, and what its wire can do natively.
//! Everything that lists providers (the CLI's value parser, the picker, key handling, the
//! request builder) reads that table, so adding a provider on a known wire is one entry in it.
//!
//! The table itself is in its own module; this module holds the types. A [`ProviderKind`] is a
//! handle to one entry, copied freely and saved in sessions by name. A caller may add entries
//! of its own for servers that speak a known wire (an application's built-in local model, say)
//! with [`ProviderKind::from_spec`]; a session naming a provider the table does not hold is read
//! as an OpenAI-compatible server of that name, which then needs a base URL.

use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The wire protocol of a provider: which adapter maps requests and decodes answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Wire {
    /// OpenAI Chat Completions (`/chat/completions`), also every OpenAI-compatible server.
    OpenAiChat,
    /// The OpenAI Responses API (`/responses`), also the servers that offer it.
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Google Gemini `generateContent`.
    Gemini,
    /// Ollama's native `/api/chat`.
    Ollama,
}

/// How the API key is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer KEY`.
    Bearer,
    /// The key alone in this header (`x-api-key`, `x-goog-api-key`).
    Header(&'static str),
}

/// What a provider's wire can do natively; the rest is emulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// `required` and a forced tool map to a native tool-choice field. Without it they are
    /// emulated with a JSON-schema response format (Ollama's `/api/chat` has no tool choice).
    pub native_forcing: bool,
    /// The wire can constrain an answer with a JSON-schema response format. Without it an
    /// emulated `required` or forced tool is asked for in the prompt only (Anthropic).
    pub response_format: bool,
    /// The wire refuses a request without `max_tokens`; new requests get this value.
    pub required_max_tokens: Option<u32>,
}

impl Capabilities {
    /// Everything native: tool choice, a JSON-schema response format, no required `max_tokens`.
    pub(crate) const NATIVE: Capabilities = Capabilities {
        native_forcing: true,
        response_format: true,
        required_max_tokens: None,
    };
}

/// One provider: an entry of the provider table.
#[derive(Clone, Copy, Debug)]
pub struct ProviderSpec {
    /// The name on the command line and in session files.
    pub name: &'static str,
    /// One line for help texts and the picker.
    pub about: &'static str,
    /// The adapter that speaks to it.
    pub wire: Wire,
    /// Used when a request names no base URL. `None`: the caller must give one.
    pub default_base_url: Option<&'static str>,
    /// The environment variable holding the key, when the provider takes one.
    pub key_env: Option<&'static str>,
    /// How the key is sent.
    pub auth: Auth,
    /// The model used when none is given (`None`: a model must be named).
    pub default_model: Option<&'static str>,
    /// A model name to start from in a picker (still editable).
    pub suggested_model: &'static str,
    /// Said after "cannot connect" errors (what usually went wrong).
    pub unreachable_hint: Option<&'static str>,
    /// What the wire does natively.
    pub capabilities: Capabilities,
}

/// A provider: a handle to its [`ProviderSpec`]. Two handles are equal when they name the same
/// provider. Serialised as its name.
#[derive(Clone, Copy)]
pub struct ProviderKind(pub(super) &'static ProviderSpec);

impl ProviderKind {
    /// A provider the caller describes (an application's own entry of the table).
    pub const fn from_spec(spec: &'static ProviderSpec) -> ProviderKind {
        ProviderKind(spec)
    }

    /// The provider of [`PROVIDERS`](super::table::PROVIDERS) with this name.
    pub fn from_name(name: &str) -> Result<Self, String> {
        Self::parse_among(name, Self::all())
    }

    /// The provider with this name among `choices`; the error lists them.
    pub fn parse_among(
        name: &str,
        choices: impl IntoIterator<Item = ProviderKind>,
    ) -> Result<Self, String> {
        let choices: Vec<ProviderKind> = choices.into_iter().collect();
        choices
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = choices.iter().map(|k| k.name()).collect();
                format!(
                    "unknown provider \"{name}\" (expected one of: {})",
                    names.join(", ")
                )
            })
    }

    /// The provider of this name: one of [`PROVIDERS`](super::table::PROVIDERS), else an OpenAI-compatible server known
    /// by that name (it has no default base URL, so a request to it must give one).
    pub fn named(name: &str) -> ProviderKind {
        if let Ok(k) = Self::from_name(name) {
            return k;
        }
        // Each distinct name is made once and kept for the life of the process; sessions name
        // few providers.
        static COMPATIBLE: Mutex<Vec<&'static ProviderSpec>> = Mutex::new(Vec::new());
        let mut known = COMPATIBLE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(spec) = known.iter().find(|s| s.name == name) {
            return ProviderKind(spec);
        }
        let spec: &'static ProviderSpec = Box::leak(Box::new(ProviderSpec {
            name: Box::leak(name.to_string().into_boxed_str()),
            about: "an OpenAI-compatible server",
            default_base_url: None,
            key_env: None,
            default_model: None,
            suggested_model: "",
            unreachable_hint: None,
            ..*ProviderKind::OPENAI.0
        }));
        known.push(spec);
        ProviderKind(spec)
    }

    /// Its entry of the table.
    pub fn spec(self) -> &'static ProviderSpec {
        self.0
    }

    /// The name used on the command line and in session files.
    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// The adapter that speaks to it.
    pub fn wire(self) -> Wire {
        self.0.wire
    }

    /// What its wire does natively.
    pub fn capabilities(self) -> Capabilities {
        self.0.capabilities
    }

    /// The base URL used when the request names none.
    pub fn default_base_url(self) -> Option<&'static str> {
        self.0.default_base_url
    }

    /// The environment variable holding this provider's key, if it takes one.
    pub fn key_env(self) -> Option<&'static str> {
        self.0.key_env
    }

    /// The `max_tokens` a new request starts with (set where the wire refuses requests without).
    pub fn default_max_tokens(self) -> Option<u32> {
        self.0.capabilities.required_max_tokens
    }
}

impl PartialEq for ProviderKind {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for ProviderKind {}

impl std::hash::Hash for ProviderKind {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.name.hash(state)
    }
}

impl fmt::Debug for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl std::str::FromStr for ProviderKind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Self::from_name(s)
    }
}

impl Serialize for ProviderKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.name)
    }
}

impl<'de> Deserialize<'de> for ProviderKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if name.trim().is_empty() {
            return Err(serde::de::Error::custom("the provider name is empty"));
        }
        Ok(ProviderKind::named(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_parses_by_its_name_and_round_trips() {
        for k in ProviderKind::all() {
            assert_eq!(ProviderKind::from_name(k.name()), Ok(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(serde_json::from_str::<ProviderKind>(&json).unwrap(), k);
        }
        let e = ProviderKind::from_name("nope").unwrap_err();
        assert!(
            e.contains("openai, openai-responses, anthropic, gemini, ollama"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_name_is_an_openai_compatible_server_without_a_base_url() {
        let k: ProviderKind = serde_json::from_str("\"my-vllm\"").unwrap();
        assert_eq!(k.name(), "my-vllm");
        assert_eq!(k.wire(), Wire::OpenAiChat);
        assert_eq!(k.default_base_url(), None);
        assert_eq!(k.key_env(), None);
        // Made once per name.
        let again = ProviderKind::named("my-vllm");
        assert!(std::ptr::eq(k.spec(), again.spec()));
        assert!(serde_json::from_str::<ProviderKind>("\"\"").is_err());
    }

    #[test]
    fn the_table_holds_what_the_wires_need() {
        assert_eq!(
            ProviderKind::ANTHROPIC.default_max_tokens(),
            Some(crate::provider::wires::anthropic::ANTHROPIC_DEFAULT_MAX_TOKENS)
        );
        assert!(!ProviderKind::OLLAMA.capabilities().native_forcing);
        assert!(!ProviderKind::ANTHROPIC.capabilities().response_format);
        assert!(!ProviderKind::OLLAMA.wire().streams_sse());
        let keys: Vec<_> = ProviderKind::all().filter_map(|k| k.key_env()).collect();
        assert_eq!(
            keys,
            [
                "OPENAI_API_KEY",
                "OPENAI_API_KEY",
                "ANTHROPIC_API_KEY",
                "GEMINI_API_KEY"
            ]
        );
    }
}
