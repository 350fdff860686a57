//! `toolscope parse`: run a protocol's parser over a file or stdin and print the parts as JSONL,
//! or with `--stats` one line of figures about the parse.

use std::io::{self, Read};
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde_json::json;
use toolscope_core::part::{FinishReason, Part};
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::ToolSet;

use super::{Output, ProtocolChoice, fail_usage, report_detected};
use toolscope_core::protocol::{AutoParser, StreamParser};

#[derive(Args, Debug)]
pub struct ParseArgs {
    /// The text protocol, or `auto`: chosen from the first call or reasoning marker in the
    /// output (the choice and its reason go to stderr).
    #[arg(long, value_parser = super::protocol_choice_parser())]
    pub protocol: ProtocolChoice,
    /// The tools file (a JSON array of {name, description, parameters}).
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// Parse as a stream: print the incremental parts. Without --chunk-size, the input is parsed
    /// as it arrives (so `model | toolscope parse --stream` parses live).
    #[arg(long)]
    pub stream: bool,
    /// With --stream: bytes per chunk (chunks may split UTF-8 sequences).
    #[arg(long, requires = "stream", value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk_size: Option<u64>,
    /// Print one JSON line {bytes, chunks, parts, toolCalls, elapsedMs} instead of the parts;
    /// elapsedMs covers the parsing alone.
    #[arg(long)]
    pub stats: bool,
    /// For a protocol with configurable delimiters (hermes): the delimiter that opens a call
    /// (default <tool_call>).
    #[arg(long, value_name = "TEXT")]
    pub call_start: Option<String>,
    /// For a protocol with configurable delimiters (hermes): the delimiter that closes a call
    /// (default </tool_call>).
    #[arg(long, value_name = "TEXT")]
    pub call_end: Option<String>,
    #[command(flatten)]
    pub reasoning: super::ReasoningArgs,
    /// The model output to parse; `-` or nothing for stdin.
    pub file: Option<PathBuf>,
}

/// The protocol given, with its settings; `None` for `auto`.
fn protocol(args: &ParseArgs) -> Result<Option<Protocol>, String> {
    let ProtocolChoice::Named(named) = &args.protocol else {
        if args.call_start.is_some() || args.call_end.is_some() {
            return Err("--call-start and --call-end need a named protocol, not auto".into());
        }
        return Ok(None);
    };
    let mut p = args.reasoning.apply(named.clone())?;
    if args.call_start.is_some() || args.call_end.is_some() {
        let Some(mut d) = p.delimiters() else {
            return Err(format!(
                "--call-start and --call-end do not apply to {}: its delimiters are fixed",
                p.name()
            ));
        };
        if let Some(s) = &args.call_start {
            d.call_start = s.clone();
        }
        if let Some(e) = &args.call_end {
            d.call_end = e.clone();
        }
        p = p.with_delimiters(d)?;
    }
    Ok(Some(p))
}

/// The input source: a file or stdin.
fn open_input(file: &Option<PathBuf>) -> Result<(Box<dyn Read>, String), String> {
    match file {
        None => Ok((Box::new(io::stdin()), "stdin".into())),
        Some(p) if p.as_os_str() == "-" => Ok((Box::new(io::stdin()), "stdin".into())),
        Some(p) => {
            let f = std::fs::File::open(p).map_err(|e| format!("{}: {}", p.display(), e))?;
            if f.metadata().map(|m| m.is_dir()).unwrap_or(false) {
                return Err(format!("{}: is a directory", p.display()));
            }
            Ok((Box::new(f), p.display().to_string()))
        }
    }
}

pub fn run(args: ParseArgs) -> u8 {
    let protocol = match protocol(&args) {
        Ok(p) => p,
        Err(e) => return fail_usage(&e),
    };
    let tools = match &args.tools {
        Some(path) => match super::load_tools(path) {
            Ok(t) => t,
            Err(e) => return fail_usage(&e),
        },
        None => ToolSet::empty(),
    };
    let (mut input, name) = match open_input(&args.file) {
        Ok(i) => i,
        Err(e) => return fail_usage(&e),
    };
    let mut out = Output::stdout();

    // Live streaming: parse each read as it arrives.
    if args.stream && args.chunk_size.is_none() && !args.stats {
        let parser = match protocol {
            Some(p) => Live::Named(Box::new(p.stream_parser(&tools))),
            None if args.reasoning.marker_suffix.is_some() => {
                return fail_usage(
                    "--marker-suffix needs a named protocol when the output is parsed live: with --protocol auto, the suffix is learned from the first marker",
                );
            }
            None => Live::Auto(Box::new(AutoParser::new(&tools, args.reasoning.setting()))),
        };
        return parse_live(parser, &mut input, &name, out);
    }

    let mut bytes = Vec::new();
    if let Err(e) = input.read_to_end(&mut bytes) {
        return fail_usage(&format!("{name}: {e}"));
    }
    let protocol = match protocol {
        Some(p) => p,
        None => {
            let d = Protocol::detect(&tools, &bytes);
            report_detected(&d);
            match args.reasoning.apply(d.protocol) {
                Ok(p) => p,
                Err(e) => return fail_usage(&e),
            }
        }
    };
    let chunk = if args.stream {
        args.chunk_size.map_or(bytes.len(), |c| c as usize).max(1)
    } else {
        bytes.len().max(1)
    };

    let started = Instant::now();
    // A stream's parts are printed as they come (a stream of 1-byte chunks makes about one part
    // a byte: kept, 10 MB of input held half a gigabyte); for --stats they are counted and
    // dropped, as a consumer of the stream would. A whole parse's parts are kept until printed.
    let keep = !args.stats;
    let mut printed: Vec<Part> = Vec::new();
    let (count, chunks, calls) = if args.stream {
        let mut parser = protocol.stream_parser(&tools);
        let mut buf = Vec::with_capacity(64);
        let (mut count, mut chunks) = (0, 0);
        for piece in bytes.chunks(chunk) {
            parser.push(piece, &mut buf);
            count += buf.len();
            if keep {
                for p in buf.drain(..) {
                    out.part(&p);
                }
            } else {
                buf.clear();
            }
            chunks += 1;
        }
        parser.finish(&mut buf);
        let calls = parser.call_count();
        count += buf.len() + 1;
        if keep {
            for p in buf.drain(..) {
                out.part(&p);
            }
            out.part(&finish_part(calls));
        }
        (count, chunks, calls)
    } else {
        let parsed = protocol.parse_generated(&tools, &bytes);
        let calls = parsed
            .parts
            .iter()
            .filter(|p| matches!(p, Part::ToolCall(_)))
            .count();
        let count = parsed.parts.len();
        if keep {
            printed = parsed.parts;
        }
        (count, 1, calls)
    };
    let elapsed = started.elapsed();

    if args.stats {
        let line = json!({
            "bytes": bytes.len(),
            "chunks": chunks,
            "parts": count,
            "toolCalls": calls,
            "elapsedMs": (elapsed.as_secs_f64() * 1000.0 * 1000.0).round() / 1000.0,
        });
        out.line(&line.to_string());
    } else {
        for p in &printed {
            out.part(p);
        }
    }
    out.close()
}

/// The parser of a live stream: a named protocol's, or `auto`'s, which holds the output until a
/// marker names the protocol and then parses it from its first byte as that protocol.
enum Live {
    Named(Box<StreamParser>),
    Auto(Box<AutoParser>),
}

impl Live {
    fn push(&mut self, chunk: &[u8], parts: &mut Vec<Part>) {
        match self {
            Live::Named(p) => p.push(chunk, parts),
            Live::Auto(p) => {
                if let Some(d) = p.push(chunk, parts) {
                    report_detected(&d);
                }
            }
        }
    }

    fn finish(&mut self, parts: &mut Vec<Part>) -> usize {
        match self {
            Live::Named(p) => {
                p.finish(parts);
                p.call_count()
            }
            Live::Auto(p) => {
                if let Some(d) = p.finish(parts) {
                    report_detected(&d);
                }
                p.call_count()
            }
        }
    }
}

/// `parse --stream` without `--chunk-size`: each read is parsed as it arrives.
fn parse_live(mut parser: Live, input: &mut Box<dyn Read>, name: &str, mut out: Output) -> u8 {
    let mut parts = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return fail_usage(&format!("{name}: {e}")),
        };
        parser.push(&buf[..n], &mut parts);
        for p in parts.drain(..) {
            out.part(&p);
        }
        out.flush();
    }
    let calls = parser.finish(&mut parts);
    for p in parts.drain(..) {
        out.part(&p);
    }
    out.part(&finish_part(calls));
    out.close()
}

fn finish_part(calls: usize) -> Part {
    Part::Finish {
        finish_reason: if calls > 0 {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        },
        usage: None,
    }
}
