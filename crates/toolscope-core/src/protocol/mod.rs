//! Text protocols for models without native tool calling.
//!
//! A protocol renders the tool list into a system prompt, renders past tool calls and tool
//! results into history text, and parses the model's output back into parts, whole or as a
//! stream. The whole-text parse runs the stream parser over one chunk, so the two paths cannot
//! disagree; the stream parser itself is written so that any chunking gives the same parts
//! (up to how text and argument deltas are split).
//!
//! Every protocol is one file implementing one interface (its names, its family's conventions,
//! how to write and read it) and one line of the registry; [`Protocol::all`] lists them in
//! registry order.

mod auto;
mod detect;
mod framed;
mod json_scanner;
mod parser;
mod python_calls;
mod span;
mod spec;
mod text;

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_support;

pub use auto::AutoParser;
pub use detect::{Detected, Detector};
pub use parser::{StreamParser, answer_parser, generate_parts};
pub use span::{Parsed, Span, SpanKind};
pub use spec::{Delimiters, Protocol, Reasoning};

use spec::ProtocolSpec;

// The formats, one file each (written out, so that rustfmt and every tool see them).
mod apertus;
mod command_r;
mod deepseek_dsml;
mod deepseek_v3;
mod deepseek_v31;
mod functools;
mod gemma;
mod gemma4;
mod glm45;
mod glm47;
mod granite;
mod harmony;
mod hermes;
mod kimi_k2;
mod lfm2;
mod llama3_json;
mod minimax_m2;
mod mistral;
mod morph_xml;
mod nemotron;
mod pythonic;
mod qwen3_coder;
mod seed_oss;
mod xlam;
mod yaml_xml;

/// The registry: one line per protocol, in the order pickers list them. Each entry is the type
/// in the protocol's file that implements [`ProtocolSpec`]; everything that lists protocols
/// iterates this.
static REGISTRY: &[&dyn ProtocolSpec] = &[
    &hermes::Hermes,
    &gemma::Gemma,
    &morph_xml::MorphXml,
    &yaml_xml::YamlXml,
    &qwen3_coder::Qwen3Coder,
    &deepseek_v3::DeepseekV3,
    &deepseek_v31::DeepseekV31,
    &mistral::Mistral,
    &granite::Granite,
    &nemotron::Nemotron,
    &functools::Functools,
    &command_r::CommandR,
    &apertus::Apertus,
    &llama3_json::Llama3Json,
    &harmony::Harmony,
    &kimi_k2::KimiK2,
    &xlam::Xlam,
    &seed_oss::SeedOss,
    &minimax_m2::MinimaxM2,
    &deepseek_dsml::DeepseekDsml,
    &glm45::Glm45,
    &glm47::Glm47,
    &pythonic::Pythonic,
    &lfm2::Lfm2,
    &gemma4::Gemma4,
];
