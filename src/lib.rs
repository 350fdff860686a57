//! toolscope: a terminal playground for LLM tool calling.
//!
//! The application is split in layers. The `toolscope-core` crate knows nothing of terminals:
//! tool definitions and tool choice, the part vocabulary, the text protocols and their streaming
//! parsers, coercion, providers and sessions. The `toolscope-demo` crate is the offline demo
//! model. The CLI in `main.rs` and the terminal UI are thin clients of both. [`app`] is the
//! playground's state machine (state, messages, effects as data); [`tui`] owns the terminal,
//! runs the effects and draws the state.

pub mod app;
pub mod tui;
pub mod verify;
