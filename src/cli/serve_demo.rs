//! `toolscope serve-demo`: run the built-in demo model as a standalone OpenAI-compatible server
//! on 127.0.0.1, for other tools (or another toolscope) to talk to.
//!
//! The first line on stdout is `listening on http://127.0.0.1:PORT` (scripts and tests read the
//! port from it); the server then runs until Ctrl+C or SIGTERM and exits 0. A port that cannot
//! be bound exits 2 with one line on stderr.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use clap::Args;

use toolscope_demo::{DemoOptions, Persona};

/// The port used when none is given.
pub const DEFAULT_PORT: u16 = 8377;

#[derive(Args, Debug)]
pub struct ServeDemoArgs {
    /// The port to listen on at 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = DEFAULT_PORT)]
    pub port: u16,
    /// Milliseconds between two streamed pieces (0 streams as fast as possible).
    #[arg(long, value_name = "N", default_value_t = DemoOptions::DEFAULT_PACE.as_millis() as u64)]
    pub pace_ms: u64,
    /// Serve with one known server fault switched on, for `toolscope verify` (or any client) to
    /// find; each is described in the README.
    #[arg(long, value_name = "NAME", value_parser = persona_parser())]
    pub persona: Option<Persona>,
}

/// `--persona`: the names of the demo's persona list.
fn persona_parser() -> impl clap::builder::TypedValueParser<Value = Persona> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = Persona::ALL.iter().map(|p| p.name()).collect();
    clap::builder::PossibleValuesParser::new(names)
        .map(|name: String| Persona::from_name(&name).expect("a listed name"))
}

pub fn run(args: ServeDemoArgs) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("toolscope serve-demo: cannot start the async runtime: {e}");
            return 1;
        }
    };
    runtime.block_on(serve(args))
}

async fn serve(args: ServeDemoArgs) -> u8 {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, args.port));
    let options = DemoOptions {
        pace: Duration::from_millis(args.pace_ms),
    };
    let server = match toolscope_demo::serve_persona(addr, options, args.persona).await {
        Ok(s) => s,
        Err(e) => return super::fail_usage(&format!("serve-demo: cannot listen on {addr}: {e}")),
    };
    // Signal handlers go in before the first line: whoever reads it may stop us right away.
    let mut interrupts = match Interrupts::install() {
        Ok(i) => i,
        Err(e) => {
            eprintln!("toolscope: serve-demo: cannot listen for signals: {e}");
            return 1;
        }
    };
    let mut stdout = std::io::stdout();
    // The first line is a contract: scripts wait for it and read the port from it.
    let announced = writeln!(stdout, "listening on http://{}", server.local_addr())
        .and_then(|()| stdout.flush());
    if announced.is_err() {
        return 1;
    }
    eprintln!(
        "OpenAI base URL: {} (any model name, any API key). Prompts with #429, #500, #cut or #malformed demonstrate failures. Ctrl+C stops.",
        server.base_url()
    );
    if let Some(p) = args.persona {
        eprintln!("persona {}: {}", p.name(), p.about());
    }
    interrupts.wait().await;
    server.shutdown().await;
    0
}

/// Ctrl+C, and SIGTERM where there is such a thing, registered when installed (not when first
/// waited on, as `tokio::signal::ctrl_c` would).
struct Interrupts {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl Interrupts {
    fn install() -> std::io::Result<Interrupts> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Interrupts {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        {
            Ok(Interrupts {})
        }
    }

    async fn wait(&mut self) {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.interrupt.recv() => {}
                _ = self.terminate.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            // Without a handler, a failed registration means Ctrl+C ends the process anyway.
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
