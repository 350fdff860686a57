//! `toolscope run`: send one prompt to a provider and print the parts as JSONL.
//!
//! Keys come from the environment (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`) and
//! are never printed: the provider layer redacts them from every event before it gets here.
//! `--raw` prints each wire event as `{"type":"raw","data":…}` before the parts it produced.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde_json::json;

use super::ProtocolChoice;
use toolscope_core::part::Part;
use toolscope_core::provider::{Keys, Message, ProviderKind, Request, Run, RunEvent};
use toolscope_core::session::Recorder;
use toolscope_core::tool::ToolChoice;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The provider (openai is also any OpenAI-compatible server, with --base-url).
    #[arg(long, value_parser = super::provider_parser())]
    pub provider: ProviderKind,
    /// The model name (optional for demo).
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL, e.g. http://localhost:8000/v1 for vLLM.
    #[arg(long)]
    pub base_url: Option<String>,
    /// The tools file (a JSON array of {name, description, parameters}).
    #[arg(long)]
    pub tools: Option<PathBuf>,
    /// auto, required, none or tool:NAME.
    #[arg(long, value_parser = ToolChoice::parse)]
    pub tool_choice: Option<ToolChoice>,
    /// Emulate tool calling with a text protocol.
    /// `auto`: native tool calling, and calls the server left in the answer text read by the
    /// protocol their markers name.
    #[arg(long, value_parser = super::protocol_choice_parser())]
    pub protocol: Option<ProtocolChoice>,
    #[command(flatten)]
    pub reasoning: super::ReasoningArgs,
    /// The system prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// Ask for the whole answer at once instead of a stream.
    #[arg(long)]
    pub no_stream: bool,
    /// Also print each wire event, as {"type":"raw","data":…}, before the parts it produced.
    #[arg(long)]
    pub raw: bool,
    /// The most tokens to generate (Anthropic defaults to 4096).
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// The sampling temperature.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Save the run as a session file (written atomically when the run ends).
    #[arg(long, value_name = "FILE")]
    pub save: Option<PathBuf>,
    /// Seconds to wait for a connection.
    #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = positive_secs)]
    pub connect_timeout: f64,
    /// Seconds to wait for the next bytes of the answer before giving up.
    #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = positive_secs)]
    pub idle_timeout: f64,
    /// The prompt.
    pub prompt: String,
}

fn positive_secs(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 1e9 => Ok(v),
        _ => Err(format!("\"{s}\" is not a positive number of seconds")),
    }
}

/// Builds the request; an error is a one-line usage message (exit 2).
fn request_of(args: &RunArgs) -> Result<Request, String> {
    let provider = args.provider;
    let model = match (&args.model, provider.spec().default_model) {
        (Some(m), _) => m.clone(),
        (None, Some(m)) => m.to_string(),
        (None, None) => return Err(format!("--model is required for {provider}")),
    };
    let mut r = Request::new(provider, model);
    r.base_url = args.base_url.clone();
    r.system = args.system.clone();
    r.messages = vec![Message::user(args.prompt.clone())];
    if let Some(path) = &args.tools {
        r.tools = super::load_tools(path)?;
    }
    r.tool_choice = args.tool_choice.clone();
    match &args.protocol {
        Some(ProtocolChoice::Named(p)) => r.protocol = Some(args.reasoning.apply(p.clone())),
        Some(ProtocolChoice::Auto) => {
            if args.reasoning.setting().is_some() {
                return Err(super::AUTO_REASONING.into());
            }
            r.detect_protocol = true;
        }
        None => {}
    }
    r.stream = !args.no_stream;
    if let Some(m) = args.max_tokens {
        r.sampling.max_tokens = Some(m);
    }
    r.sampling.temperature = args.temperature;
    r.timeouts.connect_secs = args.connect_timeout;
    r.timeouts.idle_secs = args.idle_timeout;
    Ok(r)
}

pub fn run(args: RunArgs) -> u8 {
    let request = match request_of(&args) {
        Ok(r) => r,
        Err(e) => return super::fail_usage(&format!("run: {e}")),
    };
    if let Some(path) = &args.save {
        if let Err(e) = super::check_writable(path) {
            return super::fail_usage(&e);
        }
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolscope run: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let recorder = args.save.as_ref().map(|_| Recorder::new(request.clone()));
    let started = Instant::now();
    let (code, recorder) =
        runtime.block_on(print_run(request, Keys::from_env(), args.raw, recorder));
    if let (Some(path), Some(recorder)) = (&args.save, recorder) {
        let session = recorder.finish(None, started.elapsed().as_millis() as u64);
        if let Err(e) = session.save(path) {
            return super::fail_usage(&e.to_string());
        }
    }
    code
}

async fn print_run(
    request: Request,
    keys: Keys,
    raw: bool,
    mut recorder: Option<Recorder>,
) -> (u8, Option<Recorder>) {
    // The demo model is served for the length of this run (`_demo` keeps it up); with a base
    // URL the run talks to a demo server already running (`toolscope serve-demo`).
    let mut request = request;
    let _demo = match toolscope_demo::attach(&mut request).await {
        Ok(server) => server,
        Err(e) => {
            let part = Part::error(e.to_part());
            if let Some(r) = recorder.as_mut() {
                r.push(&RunEvent::Part(part.clone()));
            }
            println!("{}", part.to_json_line());
            return (1, recorder);
        }
    };
    let mut run = Run::start(request, keys);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut failed = false;
    let mut printing = true;
    while let Some(event) = run.next().await {
        if let Some(r) = recorder.as_mut() {
            r.push(&event);
        }
        if !printing {
            continue;
        }
        let line = match &event {
            RunEvent::Raw(r) if raw => json!({"type": "raw", "data": r.data}).to_string(),
            RunEvent::Detected { protocol, reason } => {
                super::report_detection(protocol, reason);
                continue;
            }
            RunEvent::Part(p) => {
                failed = matches!(p, Part::Error(e) if e.category.is_some());
                p.to_json_line()
            }
            _ => continue,
        };
        // Flush per line: the output is a live stream. A closed stdout (`| head`) ends the run,
        // which cancels the request, unless the run is being saved.
        if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
            if recorder.is_none() {
                return (0, None);
            }
            printing = false;
        }
    }
    (u8::from(failed), recorder)
}
