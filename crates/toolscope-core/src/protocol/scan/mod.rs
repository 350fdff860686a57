//! The engines, each named for the shape of call it reads. An engine implements
//! [`Scanner`](super::text::scanner::Scanner) and is configured by the formats that use it.

pub(crate) mod forked;
pub(crate) mod forms;
pub(crate) mod framed;
pub(crate) mod gemma_values;
pub(crate) mod harmony;
pub(crate) mod json_calls;
pub(crate) mod markup;
pub(crate) mod morph;
pub(crate) mod python_calls;
pub(crate) mod yaml;
