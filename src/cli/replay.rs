//! `toolscope replay`: play a saved session back through the same decoder and parser as the
//! live run, at the recorded pace, faster, or at once; optionally re-read under another protocol
//! or other tools.
//!
//! With `--jsonl` it prints the parts as JSONL, as `run` printed them live; without, a readable
//! rendition: the reasoning set apart between `thinking «` and `»`, the answer text as it
//! arrives, each tool call (and a server tool's result) on a line of its own, refusals, sources,
//! lint warnings, errors and the finish reason.
//!
//! A session that recorded an MCP tool loop is played whole: each model turn through its own
//! decoder (re-read under `--protocol`/`--tools` like the first), and between them the recorded
//! result of each tool call (or its failure), at the time it came back, and the loop's
//! `max-steps` warning when it stopped there. No tool is run and no server is started: the
//! results are the recorded ones.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::provider::RunEvent;
use toolscope_core::session::{LoopReplay, Replay, ReplayOptions, Segment, Session};

use super::fail_usage;

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The session file.
    pub file: PathBuf,
    /// Play N times faster than recorded (0.5 is half speed).
    #[arg(long, value_name = "X", conflicts_with = "instant", value_parser = positive_speed)]
    pub speed: Option<f64>,
    /// Play everything at once.
    #[arg(long)]
    pub instant: bool,
    /// Re-read the output under this protocol (`toolscope protocols` lists them), `native` for
    /// no protocol, or `auto`: the protocol the output's first call or reasoning marker names.
    #[arg(long, value_name = "NAME")]
    pub protocol: Option<String>,
    /// Re-coerce and re-validate the calls against these tools.
    #[arg(long, value_name = "FILE")]
    pub tools: Option<PathBuf>,
    /// Print the parts as JSONL, as `run` printed them.
    #[arg(long)]
    pub jsonl: bool,
    /// With these, the output is re-read under the protocol (the one given, else the session's)
    /// starting inside or outside reasoning.
    #[command(flatten)]
    pub reasoning: super::ReasoningArgs,
}

fn positive_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("\"{s}\" is not a positive speed")),
    }
}

pub fn run(args: ReplayArgs) -> u8 {
    let session = match Session::load(&args.file) {
        Ok(s) => s,
        Err(e) => return fail_usage(&e.to_string()),
    };
    let mut protocol = match args.protocol.as_deref() {
        None => None,
        Some("native") => Some(None),
        Some("auto") => {
            let tools = session.request.tools.clone();
            // Every turn's output, so that a loop whose first turn has no marker is read by
            // the protocol a later one names.
            let text: String = session
                .turn_sessions()
                .iter()
                .map(|(_, turn)| Replay::output_text(turn))
                .collect();
            let d = Protocol::detect(&tools, text.as_bytes());
            super::report_detected(&d);
            Some(Some(d.protocol))
        }
        Some(name) => match Protocol::from_name(name) {
            Ok(p) => Some(Some(p)),
            Err(e) => return fail_usage(&format!("replay: {e}")),
        },
    };
    if args.reasoning.any() {
        let base = match &protocol {
            Some(p) => p.clone(),
            None => session.request.protocol.clone(),
        };
        let Some(base) = base else {
            return fail_usage(
                "replay: --reasoning-open, --no-reasoning-open and --marker-suffix need a protocol (--protocol NAME, or a session recorded with one)",
            );
        };
        protocol = Some(Some(match args.reasoning.apply(base) {
            Ok(p) => p,
            Err(e) => return fail_usage(&format!("replay: {e}")),
        }));
    }
    let tools = match &args.tools {
        None => None,
        Some(path) => match super::load_tools(path) {
            Ok(t) => Some(t),
            Err(e) => return fail_usage(&e),
        },
    };
    let speed = if args.instant {
        None
    } else {
        Some(args.speed.unwrap_or(1.0))
    };
    let options = ReplayOptions {
        protocol,
        detect_protocol: false,
        tools,
    };
    let mut replay = LoopReplay::new(&session, options);
    if !args.jsonl {
        let s = session.summary();
        // The first turn's request as this replay reads it (with a changed protocol).
        let request = replay.turn().map_or(&session.request, Replay::request);
        let turns = if session.is_loop() {
            format!(
                ", {} model turns, {} tool call{}",
                s.turns,
                s.tool_calls,
                if s.tool_calls == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        eprintln!(
            "# {}: {} / {}, tool choice {}, protocol {}{turns}, {} wire events, {:.1} s",
            args.file.display(),
            s.provider,
            s.model,
            s.tool_choice.as_deref().unwrap_or("absent"),
            match &request.protocol {
                Some(p) => p.name(),
                None if request.detect_protocol => "auto",
                None => "native",
            },
            s.events,
            session.duration_ms() as f64 / 1000.0,
        );
    }

    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut view = Readable::default();
    let mut shown_segment = 0;
    let started = Instant::now();
    let mut failed = false;
    while let Some(at_ms) = replay.next_at_ms() {
        if let Some(speed) = speed {
            let due = Duration::from_secs_f64(at_ms as f64 / 1000.0 / speed);
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                let _ = out.flush();
                std::thread::sleep(wait);
            }
        }
        let Some(step) = replay.step() else { break };
        if !args.jsonl && step.segment != shown_segment {
            shown_segment = step.segment;
            let turn = replay.segments()[..=step.segment]
                .iter()
                .filter(|s| matches!(s, Segment::Turn { .. }))
                .count();
            let written = match &replay.segments()[step.segment] {
                Segment::Turn { .. } if step.segment > 0 => {
                    view.line(&mut out, &format!("── turn {turn} ──"))
                }
                Segment::Call { call, .. } => {
                    let mut line = format!("⇒ tools/call {} on {}", call.tool_name, call.server);
                    if call.name != call.tool_name {
                        line.push_str(&format!(" (there: {})", call.name));
                    }
                    view.line(&mut out, &line)
                }
                _ => Ok(()),
            };
            if written.is_err() {
                return 0;
            }
        }
        for event in &step.events {
            if let RunEvent::Detected { protocol, reason } = event {
                // A session recorded with detection reads its text the same way again.
                super::report_detection(protocol, reason);
            }
            let RunEvent::Part(part) = event else {
                continue;
            };
            failed = matches!(part, Part::Error(e) if e.category.is_some());
            let written = if args.jsonl {
                writeln!(out, "{}", part.to_json_line())
            } else {
                view.write(&mut out, part)
            };
            if written.is_err() {
                return 0;
            }
        }
        if speed.is_some() && out.flush().is_err() {
            return 0;
        }
    }
    if !args.jsonl {
        let _ = writeln!(out);
    }
    let _ = out.flush();
    u8::from(failed)
}

/// The readable rendition of parts.
#[derive(Default)]
struct Readable {
    at_line_start: bool,
}

impl Readable {
    fn line(&mut self, out: &mut impl Write, line: &str) -> io::Result<()> {
        if !self.at_line_start {
            writeln!(out)?;
        }
        writeln!(out, "{line}")?;
        self.at_line_start = true;
        Ok(())
    }

    fn text(&mut self, out: &mut impl Write, text: &str) -> io::Result<()> {
        write!(out, "{text}")?;
        self.at_line_start = text.ends_with('\n');
        Ok(())
    }

    /// Reasoning is set apart from the answer: it starts on a line of its own after `thinking «`
    /// and ends with `»` on the next.
    fn open_reasoning(&mut self, out: &mut impl Write) -> io::Result<()> {
        if !self.at_line_start {
            writeln!(out)?;
        }
        writeln!(out, "thinking «")?;
        self.at_line_start = true;
        Ok(())
    }

    fn write(&mut self, out: &mut impl Write, part: &Part) -> io::Result<()> {
        match part {
            Part::TextDelta { delta, .. } => self.text(out, delta),
            Part::Text { text } => self.text(out, text),
            Part::ReasoningStart { .. } => self.open_reasoning(out),
            Part::ReasoningDelta { delta, .. } => self.text(out, delta),
            Part::ReasoningEnd { .. } => self.line(out, "»"),
            Part::Reasoning { text } => {
                self.open_reasoning(out)?;
                self.text(out, text)?;
                self.line(out, "»")
            }
            Part::ToolCall(c) => {
                let mut line = format!("→ {} {}", c.tool_name, c.input);
                if !c.coercions.is_empty() {
                    line.push_str(&format!("  ({} coerced)", c.coercions.len()));
                }
                if !c.invalid.is_empty() {
                    line.push_str(&format!(
                        "  ({} invalid: {})",
                        c.invalid.len(),
                        c.invalid[0].message
                    ));
                }
                self.line(out, &line)
            }
            Part::Error(e) => {
                let what = e.kind().unwrap_or("error");
                self.line(out, &format!("✗ {what}: {}", e.message))
            }
            Part::ToolResult(r) => self.line(out, &format!("⇐ {} {}", r.tool_name, r.output)),
            Part::Refusal { text } => self.line(out, &format!("⊘ refusal: {text}")),
            Part::Source(s) => {
                let what = s.url.as_deref().or(s.title.as_deref()).unwrap_or("");
                self.line(out, &format!("↗ source: {what}"))
            }
            Part::Warning(w) => self.line(out, &format!("⚠ {}: {}", w.code, w.message)),
            Part::Finish {
                finish_reason,
                usage,
            } => {
                let mut line = format!("■ finish: {}", finish_reason.as_str());
                if let Some(u) = usage {
                    line.push_str(&format!(
                        " ({} tokens in, {} out)",
                        u.input_tokens.map_or("?".into(), |n| n.to_string()),
                        u.output_tokens.map_or("?".into(), |n| n.to_string())
                    ));
                }
                self.line(out, &line)
            }
            _ => Ok(()),
        }
    }
}
