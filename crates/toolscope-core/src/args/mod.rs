//! Tool-call arguments as they stream in: argument text (relaxed JSON, or values a protocol
//! reads out of its markup) in, the canonical JSON of the *coerced* arguments out, in deltas that
//! can no longer change, with the coercions made and the schema violations left.
//!
//! It sits above [`crate::json`] (the lexer), [`crate::coerce`] and [`crate::schema`]: the
//! whole-value rules live there, and this module applies them piece by piece.

mod stream;
mod writer;

pub(crate) use stream::ArgsStream;
pub(crate) use writer::{Args, ArgsWriter};
