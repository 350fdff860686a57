//! Relaxed JSON as models write it: comments, single quotes, unquoted keys, trailing commas,
//! unescaped inner quotes and raw newlines in strings. An incremental lexer drives both the
//! whole-text parse ([`parse_relaxed`]) and the streaming argument writer.

use serde_json::Value;

/// Why a text is not (relaxed) JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at byte {offset}")]
pub struct JsonError {
    pub message: String,
    pub offset: usize,
}

/// Parses one relaxed-JSON value that fills the whole text (surrounding whitespace allowed).
// Interim: strict JSON until the relaxed lexer lands in this module.
pub fn parse_relaxed(text: &str) -> Result<Value, JsonError> {
    serde_json::from_str(text).map_err(|e| JsonError {
        message: e.to_string(),
        offset: 0,
    })
}

pub mod args;
pub use args::{Args, ArgsStream};
