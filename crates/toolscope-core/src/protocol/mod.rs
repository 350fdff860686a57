//! Text protocols for models without native tool calling.
//!
//! A protocol renders the tool list into a system prompt, renders past tool calls and tool
//! results into history text, and parses the model's output back into parts, whole or as a
//! stream. The whole-text parse runs the stream parser over one chunk, so the two paths cannot
//! disagree; the stream parser itself is written so that any chunking gives the same parts
//! (up to how text and argument deltas are split).
//!
//! Every protocol implements one interface (its names, its family's conventions, how to write and
//! read it) in `formats/`, as a file of its own or one entry of its family's table, and is one
//! line of the registry; [`Protocol::all`] lists them in registry order. The engines that read
//! the formats are in `scan/`, the machinery they share in `text/`.

mod auto;
mod detect;
mod formats;
mod parser;
mod scan;
mod span;
mod spec;
mod text;

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod tests_support;

pub use auto::AutoParser;
pub use detect::{CallMarker, Detected, Detector, find_call_marker};
pub use parser::{StreamParser, answer_parser, generate_parts};
pub use span::{Parsed, Span, SpanKind};
pub use spec::{Delimiters, Protocol, Reasoning};

use spec::ProtocolSpec;

/// The registry: one line per protocol, in the order pickers list them. Each entry is the value
/// that implements [`ProtocolSpec`] (a format's type, or its family's table entry); everything
/// that lists protocols iterates this.
static REGISTRY: &[&dyn ProtocolSpec] = &[
    &formats::hermes::HERMES,
    &formats::hermes::TRINITY,
    &formats::gemma::Gemma,
    &formats::morph_xml::MORPH_XML,
    &formats::yaml_xml::YAML_XML,
    &formats::qwen3_coder::QWEN3_CODER,
    &formats::deepseek_v3::DEEPSEEK_V3,
    &formats::deepseek_v31::DEEPSEEK_V31,
    &formats::mistral::Mistral,
    &formats::json_array::GRANITE,
    &formats::json_array::NEMOTRON,
    &formats::json_array::FUNCTOOLS,
    &formats::command_r::CommandR,
    &formats::apertus::Apertus,
    &formats::llama3_json::Llama3Json,
    &formats::harmony::Harmony,
    &formats::kimi_k2::KIMI_K2,
    &formats::xlam::Xlam,
    &formats::seed_oss::SEED_OSS,
    &formats::invoke::MINIMAX_M2,
    &formats::invoke::DEEPSEEK_DSML,
    &formats::invoke::GIGACHAT,
    &formats::invoke::STEP3,
    &formats::invoke::DOTS,
    &formats::invoke::MINICPM5,
    &formats::glm::GLM45,
    &formats::glm::GLM47,
    &formats::glm::HYPERCLOVA,
    &formats::glm::HY_V3,
    &formats::glm::HY_V4,
    &formats::glm::SOLAR_OPEN,
    &formats::glm::K2_HORIZON,
    &formats::pythonic::Pythonic,
    &formats::lfm2::Lfm2,
    &formats::gemma4::Gemma4,
    &formats::tagged_json::LONGCAT,
    &formats::tagged_json::ERNIE,
    &formats::json_array::JAMBA,
    &formats::json_array::HUNYUAN,
    &formats::tagged_json::INTERNLM,
    &formats::plamo3::PLAMO3,
    &formats::glm::GLM_FLASH,
    &formats::functionary::Functionary,
    &formats::inkling::Inkling,
    &formats::kimi_k3::KimiK3,
    &formats::minimax_m3::MinimaxM3,
    &formats::muse_glimmer::MuseGlimmer,
    &formats::json_array::APRIEL,
];
