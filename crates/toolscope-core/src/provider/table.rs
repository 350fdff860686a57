//! The provider table: every provider toolscope knows, as data.
//!
//! One [`ProviderSpec`] per provider, in the order pickers list them. Everything that lists
//! providers (the CLI's value parser, the picker, key handling, the request builder) reads
//! [`PROVIDERS`]. A provider on a wire toolscope speaks is one entry here (and a
//! [`ProviderKind`] constant when callers name it); a new wire is a folder under `wires/` and
//! its line in [`Wire`].

use super::spec::{Auth, Capabilities, ProviderKind, ProviderSpec, Wire};
use super::wires::anthropic::ANTHROPIC_DEFAULT_MAX_TOKENS;

/// The providers this library speaks to, in the order pickers list them.
pub static PROVIDERS: &[&ProviderSpec] =
    &[&OPENAI, &OPENAI_RESPONSES, &ANTHROPIC, &GEMINI, &OLLAMA];

impl ProviderKind {
    /// OpenAI Chat Completions, and every OpenAI-compatible server through the base URL.
    pub const OPENAI: ProviderKind = ProviderKind(&OPENAI);
    /// The OpenAI Responses API, and every server that offers `/responses`.
    pub const OPENAI_RESPONSES: ProviderKind = ProviderKind(&OPENAI_RESPONSES);
    /// Anthropic Messages.
    pub const ANTHROPIC: ProviderKind = ProviderKind(&ANTHROPIC);
    /// Google Gemini.
    pub const GEMINI: ProviderKind = ProviderKind(&GEMINI);
    /// Ollama's native chat API.
    pub const OLLAMA: ProviderKind = ProviderKind(&OLLAMA);

    /// Every provider of [`PROVIDERS`].
    pub fn all() -> impl Iterator<Item = ProviderKind> {
        PROVIDERS.iter().map(|s| ProviderKind(s))
    }
}

/// OpenAI Chat Completions, and every server that speaks it.
const OPENAI: ProviderSpec = ProviderSpec {
    name: "openai",
    about: "OpenAI Chat Completions; with --base-url any OpenAI-compatible server (vLLM, SGLang, llama.cpp, LM Studio, OpenRouter)",
    wire: Wire::OpenAiChat,
    default_base_url: Some("https://api.openai.com/v1"),
    key_env: Some("OPENAI_API_KEY"),
    auth: Auth::Bearer,
    default_model: None,
    suggested_model: "gpt-4o-mini",
    unreachable_hint: None,
    capabilities: Capabilities::NATIVE,
};

/// The OpenAI Responses API.
const OPENAI_RESPONSES: ProviderSpec = ProviderSpec {
    name: "openai-responses",
    about: "the OpenAI Responses API (/v1/responses); with --base-url any server that offers it",
    wire: Wire::OpenAiResponses,
    default_base_url: Some("https://api.openai.com/v1"),
    key_env: Some("OPENAI_API_KEY"),
    auth: Auth::Bearer,
    default_model: None,
    suggested_model: "gpt-5-mini",
    unreachable_hint: None,
    capabilities: Capabilities::NATIVE,
};

/// Anthropic Messages.
const ANTHROPIC: ProviderSpec = ProviderSpec {
    name: "anthropic",
    about: "Anthropic Messages",
    wire: Wire::Anthropic,
    default_base_url: Some("https://api.anthropic.com"),
    key_env: Some("ANTHROPIC_API_KEY"),
    auth: Auth::Header("x-api-key"),
    default_model: None,
    suggested_model: "claude-3-5-haiku-latest",
    unreachable_hint: None,
    capabilities: Capabilities {
        native_forcing: true,
        // No JSON-schema response format: an emulated forced call is asked for in the prompt.
        response_format: false,
        required_max_tokens: Some(ANTHROPIC_DEFAULT_MAX_TOKENS),
    },
};

/// Google Gemini.
const GEMINI: ProviderSpec = ProviderSpec {
    name: "gemini",
    about: "Google Gemini (generateContent)",
    wire: Wire::Gemini,
    default_base_url: Some("https://generativelanguage.googleapis.com"),
    key_env: Some("GEMINI_API_KEY"),
    auth: Auth::Header("x-goog-api-key"),
    default_model: None,
    suggested_model: "gemini-2.0-flash",
    unreachable_hint: None,
    capabilities: Capabilities::NATIVE,
};

/// Ollama's native chat API.
const OLLAMA: ProviderSpec = ProviderSpec {
    name: "ollama",
    about: "Ollama's native chat API (/api/chat)",
    wire: Wire::Ollama,
    default_base_url: Some("http://localhost:11434"),
    key_env: None,
    auth: Auth::Bearer,
    default_model: None,
    suggested_model: "llama3.2",
    unreachable_hint: Some("is Ollama running?"),
    capabilities: Capabilities {
        // No tool-choice field: `required` and a forced tool go through a JSON-schema `format`.
        native_forcing: false,
        response_format: true,
        required_max_tokens: None,
    },
};
