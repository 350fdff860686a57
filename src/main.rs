//! The `toolscope` command: with no subcommand it opens the playground TUI; `parse`, `run`,
//! `replay`, `lint`, `verify`, `protocols`, `serve-demo` and `serve-mcp-demo` are headless and print parts (findings,
//! protocols) as JSONL.
//!
//! Exit status: 0 on success, 1 when a provider or stream failed (after an `error` part) or the
//! lint found something, 2 for bad usage or a bad input file (one line on stderr naming the file
//! and the problem), and 128 + the signal's number when a signal ended the playground or a run
//! (130 SIGINT, 131 SIGQUIT, 143 SIGTERM, 129 SIGHUP).

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "toolscope",
    version,
    about = "A terminal playground for LLM tool calling"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// With no subcommand: the playground.
    #[command(flatten)]
    play: cli::play::PlayArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse a model output with a text protocol and print the parts as JSONL.
    Parse(cli::parse::ParseArgs),
    /// Send a prompt to a provider and print the parts as JSONL.
    Run(Box<cli::run::RunArgs>),
    /// Play a saved session back, at the recorded pace, faster or at once.
    Replay(cli::replay::ReplayArgs),
    /// Check saved sessions against the rules of their wire and request (the stream lint).
    Lint(cli::lint::LintArgs),
    /// List the text protocols, from the registry.
    Protocols(cli::protocols::ProtocolsArgs),
    /// Score an endpoint's tool calling on a battery of scenarios, streamed and whole.
    #[command(
        override_usage = "toolscope verify --provider <PROVIDER> [OPTIONS]\n       toolscope verify --list [--suite <FILE>]"
    )]
    Verify(Box<cli::verify::VerifyArgs>),
    /// Serve the built-in demo model as an OpenAI-compatible endpoint on 127.0.0.1.
    ServeDemo(cli::serve_demo::ServeDemoArgs),
    /// Serve the demo tools as an MCP server on stdin and stdout (for --mcp).
    ServeMcpDemo(cli::serve_mcp_demo::ServeMcpDemoArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Help and version go to stdout as clap writes them; a usage error is one line on stderr.
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => return ExitCode::from(cli::fail_usage(&cli::usage_line(&e.to_string()))),
    };
    let code = match cli.command {
        Some(Command::Parse(args)) => cli::parse::run(args),
        Some(Command::Run(args)) => cli::run::run(*args),
        Some(Command::Verify(args)) => cli::verify::run(*args),
        Some(Command::ServeDemo(args)) => cli::serve_demo::run(args),
        Some(Command::ServeMcpDemo(args)) => cli::serve_mcp_demo::run(args),
        Some(Command::Replay(args)) => cli::replay::run(args),
        Some(Command::Lint(args)) => cli::lint::run(args),
        Some(Command::Protocols(args)) => cli::protocols::run(args),
        None => cli::play::run(cli.play),
    };
    ExitCode::from(code)
}
