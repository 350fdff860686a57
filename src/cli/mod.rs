//! The headless subcommands, one file each, and what they share: JSONL output on stdout that
//! stops quietly when the reader goes away, and the one-line usage error (exit 2).

use std::io::{self, BufWriter, Stdout, Write};

use clap::builder::{PossibleValuesParser, TypedValueParser};
use toolscope::app::providers;
use toolscope_core::protocol::Protocol;
use toolscope_core::provider::{Limits, ProviderKind, Timeouts};

pub mod lint;
pub mod parse;
pub mod play;
pub mod protocols;
pub mod replay;
pub mod run;
pub mod serve_demo;
pub mod serve_mcp_demo;
pub mod verify;

/// The `--provider` value parser: the names of the application's provider table, listed in
/// `--help` and in the error for a wrong one.
pub fn provider_parser() -> impl TypedValueParser<Value = ProviderKind> {
    let names: Vec<&'static str> = providers::all().iter().map(|k| k.name()).collect();
    PossibleValuesParser::new(names).try_map(|name: String| providers::parse(&name))
}

/// `--protocol`: a protocol of the registry by name or alias, or `auto`: the protocol is then
/// chosen from the output.
#[derive(Clone, Debug)]
pub enum ProtocolChoice {
    Auto,
    Named(Protocol),
}

/// The value parser of a `--protocol` that takes `auto` too.
pub fn protocol_choice_parser() -> impl TypedValueParser<Value = ProtocolChoice> {
    let mut names = vec!["auto"];
    names.extend(Protocol::cli_names());
    PossibleValuesParser::new(names).try_map(|name: String| match name.as_str() {
        "auto" => Ok(ProtocolChoice::Auto),
        _ => Protocol::from_name(&name).map(ProtocolChoice::Named),
    })
}

/// Why `--reasoning-open` is refused beside `--protocol auto` on a live request.
pub const AUTO_REASONING: &str = "--reasoning-open and --no-reasoning-open need a named protocol: with --protocol auto, the detected family's default applies (and text after a server's own reasoning field is read as outside reasoning)";

/// Why `--marker-suffix` is refused beside `--protocol auto` on a live request.
pub const AUTO_SUFFIX: &str = "--marker-suffix needs a named protocol on a live request: with --protocol auto, the suffix is learned from the first marker";

/// The one line that says which protocol `--protocol auto` chose, and why (stderr).
pub fn report_detected(d: &toolscope_core::protocol::Detected) {
    report_detection(d.protocol.name(), &d.reason);
}

/// [`report_detected`] from a run's [`RunEvent::Detected`](toolscope_core::provider::RunEvent).
pub fn report_detection(protocol: &str, reason: &str) {
    eprintln!("toolscope: --protocol auto: read as {protocol} ({reason})");
}

/// `--reasoning-open` / `--no-reasoning-open`: whether the output is read as starting inside
/// reasoning (templates that open the think block themselves), overriding the protocol's
/// family default; and `--marker-suffix`, the per-checkpoint suffix of a format whose markers
/// carry one. The protocol settings a flag makes.
#[derive(clap::Args, Debug, Default, Clone)]
pub struct ReasoningArgs {
    /// Read the output as starting inside reasoning (the chat template opened the think block).
    #[arg(long, conflicts_with = "no_reasoning_open")]
    pub reasoning_open: bool,
    /// Read the output as starting outside reasoning, whatever the family's default.
    #[arg(long)]
    pub no_reasoning_open: bool,
    /// The suffix every marker carries, for a format whose markers carry one (hy-v4's
    /// `<tool_call:SUFFIX>`; hy-v3's per-effort `<think:SUFFIX>`); without it the parser learns
    /// it from the first marker.
    #[arg(long, value_name = "SUFFIX")]
    pub marker_suffix: Option<String>,
}

impl ReasoningArgs {
    /// The reasoning-open setting given, if any.
    pub fn setting(&self) -> Option<bool> {
        match (self.reasoning_open, self.no_reasoning_open) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }

    /// Whether any protocol setting was given.
    pub fn any(&self) -> bool {
        self.setting().is_some() || self.marker_suffix.is_some()
    }

    /// `protocol` with the settings applied (unchanged without any), or why one does not apply
    /// to it (a marker suffix for a format whose markers carry none).
    pub fn apply(&self, protocol: Protocol) -> Result<Protocol, String> {
        let protocol = match self.setting() {
            Some(open) => protocol.with_reasoning_open(Some(open)),
            None => protocol,
        };
        match &self.marker_suffix {
            Some(s) => protocol
                .with_marker_suffix(Some(s))
                .map_err(|e| format!("--marker-suffix: {e}")),
            None => Ok(protocol),
        }
    }
}

/// The MCP servers of `--mcp` (stdio commands; `toolscope` as the program is this binary, on
/// the PATH or not) and `--mcp-url` (`URL[=TOKEN_ENV]`), in that order, or a usage error
/// naming the flag.
pub fn mcp_servers(
    commands: &[String],
    urls: &[String],
) -> Result<Vec<toolscope_core::mcp::McpServerSpec>, String> {
    use toolscope_core::mcp::McpServerSpec;
    let exe = std::env::current_exe().ok();
    let mut out = Vec::new();
    for cmd in commands {
        let spec = McpServerSpec::stdio(cmd).map_err(|e| format!("--mcp: {e}"))?;
        out.push(toolscope::app::mcp::this_toolscope(spec, exe.as_deref()));
    }
    for url in urls {
        out.push(McpServerSpec::http(url).map_err(|e| format!("--mcp-url: {e}"))?);
    }
    Ok(out)
}

/// `--mcp-max-message`'s default, in MiB: the core's.
pub const DEFAULT_MCP_MAX_MESSAGE_MB: u64 = (toolscope_core::mcp::DEFAULT_MAX_MESSAGE >> 20) as u64;

/// `--mcp-max-message MB`: 1 MiB to 64 GiB.
pub fn mcp_max_message_parser() -> clap::builder::RangedU64ValueParser<u64> {
    clap::value_parser!(u64).range(1..=65_536)
}

/// The MCP connection options of `--mcp-max-message MB`.
pub fn mcp_options(max_message_mb: u64) -> toolscope_core::mcp::McpOptions {
    toolscope_core::mcp::McpOptions {
        max_message: usize::try_from(max_message_mb << 20).unwrap_or(usize::MAX),
        limit_hint: "raise it with --mcp-max-message MB".into(),
    }
}

/// Whether a file can be written at `path` (its folder exists and is a folder); the error is one
/// line naming the file.
pub fn check_writable(path: &std::path::Path) -> Result<(), String> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if path.is_dir() {
        return Err(format!("{}: is a folder", path.display()));
    }
    if !dir.is_dir() {
        return Err(format!(
            "{}: the folder {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    Ok(())
}

/// A command-line error as one line: clap's message without its `error:` prefix, its hint to try
/// `--help`, and its line breaks (the list of possible values joins the line).
pub fn usage_line(clap_message: &str) -> String {
    clap_message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .map(|l| l.strip_prefix("error: ").unwrap_or(l))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Prints a one-line error for bad usage or a bad input file and gives exit status 2.
/// Reads a tools file for a headless command; what the file had to have read differently (a
/// Python type name, a schema of no draft, …) is said on stderr, one line each.
pub fn load_tools(path: &std::path::Path) -> Result<toolscope_core::tool::ToolSet, String> {
    let tools = toolscope_core::tool::ToolSet::load(path)?;
    for w in tools.warnings() {
        eprintln!("toolscope: warning: {}: {w}", path.display());
    }
    Ok(tools)
}

pub fn fail_usage(message: &str) -> u8 {
    let line = message.replace('\n', " ");
    eprintln!("toolscope: {line}");
    2
}

/// JSONL on stdout. A closed pipe (`| head`) ends the output without an error.
pub struct Output {
    out: BufWriter<Stdout>,
    broken: bool,
}

impl Output {
    pub fn stdout() -> Self {
        Output {
            out: BufWriter::with_capacity(64 * 1024, io::stdout()),
            broken: false,
        }
    }

    pub fn line(&mut self, line: &str) {
        if self.broken {
            return;
        }
        if writeln!(self.out, "{line}").is_err() {
            self.broken = true;
        }
    }

    pub fn part(&mut self, part: &toolscope_core::part::Part) {
        if self.broken {
            return;
        }
        let ok =
            serde_json::to_writer(&mut self.out, part).is_ok() && self.out.write_all(b"\n").is_ok();
        if !ok {
            self.broken = true;
        }
    }

    pub fn flush(&mut self) {
        if !self.broken && self.out.flush().is_err() {
            self.broken = true;
        }
    }

    /// Flushes and gives exit status 0.
    pub fn close(mut self) -> u8 {
        self.flush();
        0
    }
}

/// How long a request waits and how much of its answer is held: the flags `run` and the
/// playground share.
#[derive(clap::Args, Debug, Clone)]
pub struct WireArgs {
    /// Seconds to wait for a connection.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = run::positive_secs)]
    pub connect_timeout: f64,
    /// Seconds to wait for the answer to begin: the response, then the first token. A server on
    /// a CPU sends nothing while it reads a long prompt, so this is longer than the idle timeout.
    #[arg(long, value_name = "SECS", default_value_t = toolscope_core::provider::DEFAULT_FIRST_TOKEN_SECS, value_parser = run::positive_secs)]
    pub first_token_timeout: f64,
    /// Seconds a stream that has begun may send nothing before it counts as stalled (an error
    /// part of category provider_timeout).
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = run::positive_secs)]
    pub idle_timeout: f64,
    /// The largest wire event (one SSE event, one NDJSON line, a whole body), in MiB: a larger
    /// one ends the answer with a provider_invalid_response error quoting its start.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub max_event_mib: u32,
    /// The most raw wire text one answer keeps, in MiB: beyond it the oldest raw events are
    /// dropped from memory and from a saved session (with a raw-dropped warning); every part is
    /// kept.
    #[arg(long, value_name = "MIB", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_raw_mib: u32,
}

/// The flags' defaults (as when none is given).
impl Default for WireArgs {
    fn default() -> Self {
        let (t, l) = (Timeouts::default(), Limits::default());
        WireArgs {
            connect_timeout: t.connect_secs,
            first_token_timeout: t.first_token_secs,
            idle_timeout: t.idle_secs,
            max_event_mib: (l.event_bytes >> 20) as u32,
            max_raw_mib: (l.raw_bytes >> 20) as u32,
        }
    }
}

impl WireArgs {
    /// Sets the waits and bounds these flags give.
    pub fn apply(&self, timeouts: &mut Timeouts, limits: &mut Limits) {
        timeouts.connect_secs = self.connect_timeout;
        timeouts.first_token_secs = self.first_token_timeout;
        timeouts.idle_secs = self.idle_timeout;
        limits.event_bytes = (self.max_event_mib as usize) << 20;
        limits.raw_bytes = (self.max_raw_mib as usize) << 20;
    }
}

#[cfg(test)]
mod wire_args_tests {
    use super::WireArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[command(flatten)]
        wire: WireArgs,
    }

    /// What a caller that builds the arguments by hand gets is what no flag gives.
    #[test]
    fn the_default_is_what_no_flag_gives() {
        let parsed = Flags::parse_from(["toolscope"]).wire;
        let default = WireArgs::default();
        assert_eq!(format!("{parsed:?}"), format!("{default:?}"));
        let f = Flags::parse_from([
            "toolscope",
            "--max-raw-mib",
            "2",
            "--first-token-timeout",
            "5",
        ]);
        let (mut t, mut l) = Default::default();
        f.wire.apply(&mut t, &mut l);
        assert_eq!(l.raw_bytes, 2 << 20);
        assert_eq!(t.first_token_secs, 5.0);
    }
}
