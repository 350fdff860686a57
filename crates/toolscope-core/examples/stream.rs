//! Streams a model output from standard input through a protocol and prints the parts as JSON
//! lines, as they are completed.
//!
//! ```text
//! cargo run -p toolscope-core --example stream -- [PROTOCOL|auto] [TOOLS.json] < output.txt
//! ```
//!
//! `auto` (the default) detects the protocol from the output's markers and says on stderr which
//! it chose and why. The input is read in 64-byte pieces, as a model's output arrives.

use std::io::{Read, Write};

use toolscope_core::part::Part;
use toolscope_core::protocol::{AutoParser, Protocol};
use toolscope_core::tool::ToolSet;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "auto".to_string());
    let tools = match args.next() {
        Some(path) => ToolSet::from_json_text(&std::fs::read_to_string(&path)?)?,
        None => ToolSet::default(),
    };
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input)?;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut print = |parts: &mut Vec<Part>| -> std::io::Result<()> {
        for part in parts.drain(..) {
            writeln!(out, "{}", serde_json::to_string(&part)?)?;
        }
        Ok(())
    };
    let mut parts = Vec::new();
    if name == "auto" {
        let mut parser = AutoParser::new(&tools, None);
        for piece in input.chunks(64) {
            if let Some(d) = parser.push(piece, &mut parts) {
                eprintln!("read as {} ({})", d.protocol.name(), d.reason);
            }
            print(&mut parts)?;
        }
        if let Some(d) = parser.finish(&mut parts) {
            eprintln!("read as {} ({})", d.protocol.name(), d.reason);
        }
    } else {
        let mut parser = Protocol::from_name(&name)?.stream_parser(&tools);
        for piece in input.chunks(64) {
            parser.push(piece, &mut parts);
            print(&mut parts)?;
        }
        parser.finish(&mut parts);
    }
    print(&mut parts)?;
    Ok(())
}
