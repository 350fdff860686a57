//! The library under toolscope: streaming tool-call parsers for the text protocols LLMs write
//! their calls in, schema-based coercion of the arguments, the wire mappings and stream decoders
//! of the model providers, and sessions that record a run and replay it.
//!
//! Everything here speaks one vocabulary of *parts* ([`part::Part`]): text, reasoning, tool-call
//! input growing as it streams, finished tool calls with coerced and validated input, and errors,
//! each serialising to one JSON object named as in the AI SDK stream parts. A *protocol*
//! ([`protocol::Protocol`]) reads a model's output text into parts, whole or chunk by chunk, and
//! any chunking (down to single bytes, inside UTF-8 sequences) yields the same calls and text. A
//! *provider* request ([`provider::Request`]) is mapped to its wire, and what comes back is cut
//! into wire events and decoded into the same parts, live or from a recorded session. With the
//! `mcp` feature (off by default), the `mcp` module takes tools from Model Context Protocol servers and
//! runs their calls there.
//!
//! # Example: a streaming parse
//!
//! A model writes `hermes` calls (`<tool_call>{…}</tool_call>`) and gives the day count as a
//! string; the parser finds the call, coerces `"3"` to the integer the schema asks for, and keeps
//! the prose around it as text.
//!
//! ```
//! use serde_json::json;
//! use toolscope_core::part::Part;
//! use toolscope_core::protocol::Protocol;
//! use toolscope_core::tool::{ToolDef, ToolSet};
//!
//! let tools = ToolSet::new(vec![ToolDef::new(
//!     "get_weather",
//!     "The weather forecast for a city",
//!     json!({
//!         "type": "object",
//!         "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!         "required": ["city"]
//!     }),
//! )])?;
//! let protocol = Protocol::from_name("hermes")?;
//! let mut parser = protocol.stream_parser(&tools);
//!
//! let output = "Let me look that up.\n<tool_call>\n{\"name\": \"get_weather\", \
//!               \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>";
//! let mut parts = Vec::new();
//! for chunk in output.as_bytes().chunks(5) {
//!     parser.push(chunk, &mut parts);
//! }
//! parser.finish(&mut parts);
//!
//! for part in &parts {
//!     println!("{}", serde_json::to_string(part)?);
//! }
//!
//! let calls: Vec<_> = parts
//!     .iter()
//!     .filter_map(|p| match p {
//!         Part::ToolCall(call) => Some(call),
//!         _ => None,
//!     })
//!     .collect();
//! assert_eq!(calls.len(), 1);
//! assert_eq!(calls[0].tool_name, "get_weather");
//! assert_eq!(calls[0].input, json!({"city": "Paris", "days": 3}));
//! assert_eq!(calls[0].coercions[0].path, "/days");
//!
//! let text: String = parts
//!     .iter()
//!     .filter_map(|p| match p {
//!         Part::TextDelta { delta, .. } => Some(delta.as_str()),
//!         _ => None,
//!     })
//!     .collect();
//! assert_eq!(text, "Let me look that up.\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`protocol::Protocol::parse_generated`] parses a whole text at once and gives the generate
//! parts (`text`, `tool-call`, `error`); it runs the same stream parser, so the two paths agree.
//!
//! # The stream parser's contract
//!
//! A [`protocol::StreamParser`] reads one model output. What it promises:
//!
//! - **Feed chunks, get parts.** [`push`](protocol::StreamParser::push) takes the next bytes, of
//!   any size: one byte, a whole answer, a cut inside a UTF-8 sequence or inside a marker. It
//!   appends to `out` the parts those bytes complete: `text-start`/`-delta`/`-end`,
//!   `reasoning-start`/`-delta`/`-end`, `tool-input-start`/`-delta`/`-end`, `tool-call`, `error`.
//! - **Any chunking, the same answer.** The text, the reasoning, the calls (names, ids, coerced
//!   input, coercions and violations) and the errors are the same for every way of cutting the
//!   output into chunks; only where the deltas are cut differs. The deltas of a block add up to
//!   its whole; argument deltas add up to the canonical JSON of the call's coerced input.
//! - **Committed parts never change.** A part once appended is final: no later chunk edits,
//!   retracts or reorders it. This is why some bytes are held back.
//! - **What is held back, and why.** Only what the next bytes must decide: the bytes at a
//!   chunk's end that could begin a marker (`<tool_` could become `<tool_call>` or stay text), a
//!   UTF-8 sequence cut in two, and argument text whose meaning is not yet settled (a number that
//!   may grow, a value the schema may coerce). Everything else is emitted as soon as it arrives.
//!   What is held back is bounded by the longest marker of the format, not by the output.
//! - **Finish.** [`finish`](protocol::StreamParser::finish) ends an output that ended as the
//!   model meant it to: held-back bytes are emitted, a call missing only its close marker at the
//!   very end is recovered, any other unfinished call is reported. For an output that was cut
//!   off (a token limit, a broken stream), [`finish_cut`](protocol::StreamParser::finish_cut)
//!   recovers nothing: a call still open is an `unfinished-tool-call` error with its markup kept
//!   as text, so a call with arguments cut short is never taken for a whole one. Bytes pushed
//!   after either are ignored.
//! - **Reset for reuse.** [`reset`](protocol::StreamParser::reset) makes the parser new for the
//!   next output with the same protocol, settings and tools, as if it were just made.
//! - **Nothing is lost, nothing is silent.** Every byte of the output ends up as text, as
//!   reasoning, inside a call's span, or inside a markup span: the family's format tokens, or
//!   markup an `error` part reports as unreadable ([`protocol::StreamParser::spans`]). Invalid UTF-8 is replaced by U+FFFD and
//!   reported once. Malformed input never panics.
//! - **Linear cost.** Work is proportional to the bytes fed, whatever the chunk size.
//!
//! # Modules
//!
//! - [`tool`]: tool definitions, the [`tool::ToolSet`] of one request (tools files in the
//!   OpenAI, Anthropic and MCP shapes) and [`tool::ToolChoice`] with its pre-send check.
//! - [`part`]: the part vocabulary, and the writer that keeps the stream grammar.
//! - [`protocol`]: the registry of text protocols: the system prompt that teaches a model the
//!   tools, history rendering, and the whole-text and stream parsers with their spans.
//! - [`coerce`] and [`schema`]: bringing argument values to the types their JSON Schema asks
//!   for, recording each change; navigating schemas (`$ref`, property and item schemas).
//! - [`emulate`]: tool choice on models without native tools, through a JSON-schema response
//!   format.
//! - [`provider`]: the provider-neutral request, its mapping to each provider's wire, the SSE
//!   and NDJSON framing and the decoders of what comes back, and (feature `http`) the run that
//!   sends a request.
//! - [`lint`]: the stream lint, the rules a wire and a request set for an answer; its findings
//!   are `warning` parts.
//! - [`error`]: the error categories of provider failures.
//! - [`session`]: session files (record, save, load), replay through the same decoder, and the
//!   journal that keeps a run in progress safe from a crash.
//!
//! # Features
//!
//! With default features (none) the crate is the pure library: it parses, coerces, maps
//! requests to wire bodies, decodes recorded or otherwise obtained wire events and handles
//! sessions, and pulls in no async runtime or network stack.
//!
//! - `http`: sending a request and streaming its answer, `provider::Run`, built on reqwest and
//!   tokio.
//! - `mcp` (implies `http`): the `mcp` module, tools from Model Context Protocol servers (stdio
//!   child processes and streamable HTTP) and running their calls there, built on rmcp.
//!
//! The crate never imports ratatui, crossterm, syntect or a text-area crate; the toolscope CLI
//! and terminal UI are both thin clients of it.

#![warn(missing_docs)]
#![warn(unreachable_pub)]

pub(crate) mod args;
pub mod coerce;
pub mod emulate;
pub mod error;
pub(crate) mod json;
pub mod lint;
#[cfg(feature = "mcp")]
pub mod mcp;
pub(crate) mod mcp_result;
pub mod part;
pub mod protocol;
pub mod provider;
pub mod schema;
pub mod session;
mod strings;
pub mod tool;
