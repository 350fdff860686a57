//! The built-in `demo` model: a deterministic local model served over loopback HTTP with the
//! OpenAI Chat Completions wire, and the Responses wire at `/v1/responses`.
//!
//! It exists so that a new user sees every pane of the playground work without a key, and so
//! that end-to-end tests drive the real HTTP path. The model itself ([`model::respond`]) is pure:
//! a request in, a [`Reply`] (text or tool calls, cut into token-like pieces) out. It honours tool
//! choice, picks the tool whose name or description best matches the latest user prompt, fills
//! arguments from the prompt and the schema, makes parallel calls for prompts that list several
//! items ("weather in Paris and Tokyo"), answers in text after tool results, and in emulated mode
//! (a protocol tool prompt, no native tools) writes its calls in that protocol. The server
//! ([`serve`]) streams the pieces as OpenAI SSE chunks at a realistic pace.
//!
//! Failure demos, triggered by a word in the latest user prompt:
//! - `#429`: HTTP 429 with `retry-after: 2` and an OpenAI rate-limit error body;
//! - `#500`: HTTP 500 with an OpenAI server-error body;
//! - `#cut`: part of the answer, then the connection drops (streamed or not);
//! - `#malformed`: the tool call is deliberately broken (protocol markup in emulated mode, the
//!   `{name, arguments}` JSON under a tool-choice response format, the arguments JSON of a native
//!   call), so the parsers' error reporting can be seen.

pub mod choose;
pub mod emulated;
pub mod fill;
mod local;
pub mod mcp;
pub mod model;
pub mod persona;
pub mod prompt;
pub mod prose;
pub mod reply;
pub mod request;
pub mod responses;
mod routes;
pub mod server;
mod state;
mod stream;
pub mod wire;

pub use local::{PROVIDER, attach, needs_server, provider, start_local};
pub use model::{
    TRIGGER_CUT, TRIGGER_MALFORMED, TRIGGER_RATE_LIMIT, TRIGGER_SERVER_ERROR, respond,
    respond_to_body,
};
pub use persona::Persona;
pub use reply::{CallText, Fault, Finish, Piece, Reply};
pub use request::{DEFAULT_MODEL, DemoRequest, RequestError};
pub use routes::RETRY_AFTER_SECONDS;
pub use server::{DemoServer, serve, serve_persona};
pub use state::{DemoOptions, DemoStats};

#[cfg(test)]
mod http_tests;
#[cfg(test)]
mod model_tests;
