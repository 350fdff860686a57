//! `toolscope parse`: run a protocol's parser over a file or stdin and print the parts.

use std::path::PathBuf;

use clap::Args;

#[derive(Args, Debug)]
pub struct ParseArgs {
    /// The text protocol: hermes, gemma, morph-xml, yaml-xml or qwen3-coder.
    #[arg(long)]
    pub protocol: String,
    /// The tools file (a JSON array of {name, description, parameters}).
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// Parse as a stream instead of as one whole text.
    #[arg(long)]
    pub stream: bool,
    /// With --stream: bytes per chunk (chunks may split UTF-8 sequences).
    #[arg(long, requires = "stream", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk_size: Option<u64>,
    /// Print one JSON line of statistics instead of the parts.
    #[arg(long)]
    pub stats: bool,
    /// The model output to parse; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
}

pub fn run(_args: ParseArgs) -> u8 {
    eprintln!("toolscope parse: not built yet");
    2
}
