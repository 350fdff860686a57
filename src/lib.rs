//! toolscope: a terminal playground for LLM tool calling.
//!
//! The library is split in layers. [`core`] knows nothing of terminals: tool definitions and
//! tool choice, the part vocabulary, the text protocols and their streaming parsers, coercion,
//! providers and sessions. The CLI in `main.rs` and the terminal UI are thin clients of it.
//! [`app`] is the playground's state machine (state, messages, effects, and the driver that
//! runs them); [`tui`] draws that state and owns the terminal.

pub mod app;
pub mod core;
pub mod tui;
