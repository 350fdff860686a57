//! The formats (written out, so that rustfmt and every tool see them): each implements
//! [`ProtocolSpec`](super::spec::ProtocolSpec) with its prompt text, its history rendering and
//! the engine it reads with (from `scan/`). A family that shares an engine is a table of
//! constants with one implementation (`json_array`, `tagged_json`, `sections`, `invoke`, `glm`,
//! `qwen3_coder`; and `element`, whose members share the shape of their calls and each bring
//! its engine): a new member is one table entry and its prompt text.

pub(super) mod apertus;
#[cfg(test)]
mod cases;
pub(super) mod command_r;
pub(super) mod deepseek_v3;
pub(super) mod deepseek_v31;
pub(super) mod element;
pub(super) mod functionary;
pub(super) mod gemma;
pub(super) mod gemma4;
pub(super) mod glm;
pub(super) mod harmony;
pub(super) mod hermes;
pub(super) mod inkling;
pub(super) mod invoke;
pub(super) mod json_array;
pub(super) mod kimi_k2;
pub(super) mod kimi_k3;
pub(super) mod lfm2;
pub(super) mod llama3_json;
pub(super) mod minimax_m3;
pub(super) mod mistral;
pub(super) mod morph_xml;
pub(super) mod muse_glimmer;
pub(super) mod plamo3;
pub(super) mod pythonic;
pub(super) mod qwen3_coder;
pub(super) mod sections;
pub(super) mod seed_oss;
pub(super) mod tagged_json;
pub(super) mod xlam;
pub(super) mod yaml_xml;
