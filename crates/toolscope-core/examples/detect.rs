//! Reads a model output from standard input and says which text protocol wrote it, and why.
//!
//! ```text
//! cargo run -p toolscope-core --example detect -- [TOOLS.json] < output.txt
//! ```
//!
//! Detection goes by the markers a family writes (`<tool_call>`, `<|tool_calls_section_begin|>`,
//! `[TOOL_CALLS]`, …); markup named after the tools (morph-xml) is recognised only for the tools
//! given. An output without any marker is plain text, read by the default protocol. It prints the
//! protocol's name and the reason, then the calls that protocol reads from the output.

use std::io::{Read, Write};

use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::ToolSet;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Written with `?`, not `println!`: a closed pipe (`| head`) ends it with an error, not a
    // panic.
    let mut out = std::io::stdout().lock();
    let tools = match std::env::args().nth(1) {
        Some(path) => ToolSet::from_json_text(&std::fs::read_to_string(&path)?)?,
        None => ToolSet::default(),
    };
    let mut output = Vec::new();
    std::io::stdin().read_to_end(&mut output)?;

    let detected = Protocol::detect(&tools, &output);
    writeln!(out, "{}: {}", detected.protocol.name(), detected.reason)?;

    let parsed = detected.protocol.stream_parser(&tools).parse_whole(&output);
    for part in &parsed.parts {
        if let Part::ToolCall(call) = part {
            writeln!(out, "  call {}({})", call.tool_name, call.input)?;
        }
    }
    Ok(())
}
