//! The shared text machinery of the parsers: the part emitter, hold-back of text that may begin
//! a marker, UTF-8 decoding, the filters in front of a scanner (end tokens, code fences, the
//! reasoning splitter), and the helpers the scanners and formats share (tool names, the JSON
//! call envelope, held arguments, XML values, prompt text). Neither an engine nor a format.

pub(crate) mod emit;
pub(crate) mod end_tokens;
pub(crate) mod envelope;
pub(crate) mod fences;
pub(crate) mod held_args;
pub(crate) mod holdback;
pub(crate) mod names;
pub(crate) mod places;
pub(crate) mod prompt;
pub(crate) mod reasoning;
pub(crate) mod run;
pub(crate) mod scanner;
pub(crate) mod stops;
pub(crate) mod utf8;
pub(crate) mod xml;
