//! `toolscope verify`: score an endpoint's tool calling on a battery of scenarios.
//!
//! Every scenario of the suite (the bundled one, or `--suite FILE`) is sent streamed and whole,
//! `--runs N` times, at most `--concurrency K` requests at once; each answer is judged check by
//! check (see `toolscope::verify::score`), and the scorecard is printed on stdout. A progress
//! line goes to stderr while it runs, when stderr is a terminal.
//!
//! Each answer that failed a check is saved as a session (`--failures DIR`, `verify-failures`
//! by default; `toolscope replay FILE` and the playground open it). `--json FILE` writes the
//! report (schema `toolscope-verify/1`), `--report FILE.html` a self-contained page.
//! `--against URL|REPORT.json` puts a second endpoint or a saved report beside it; the second
//! endpoint has the first's provider and model unless `--against-provider` and
//! `--against-model` say otherwise, and its key comes from `--against-key-env VAR` when given
//! (so a vLLM deployment can sit beside the maker's API, or two OpenAI-compatible servers with
//! different keys side by side). `--list` lists the suite's scenarios and needs no provider.
//!
//! Exit status: 0 when every check of every answer passed; 1 when a check failed, or the
//! endpoint could not answer (unreachable, a refused key, an unknown model: said on stderr,
//! after the first answers showed it), or the model answered nothing at all; 2 for bad usage or
//! a broken suite file; 130 / 143 when stopped by SIGINT / SIGTERM (what was measured is
//! printed and written all the same).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use toolscope::verify::battery::{self, Ending, Job};
use toolscope::verify::failure;
use toolscope::verify::html;
use toolscope::verify::report::{Meta, Report, Target, Verdict, render};
use toolscope::verify::score::{self, Answer, Judged};
use toolscope::verify::suite::Suite;
use toolscope_core::provider::{Keys, ProviderKind, Request};
use toolscope_core::session::now_rfc3339;

use super::ProtocolChoice;

#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The provider (openai is also any OpenAI-compatible server: vLLM, SGLang, llama.cpp,
    /// LM Studio…, with --base-url).
    #[arg(long, value_parser = super::provider_parser(), required_unless_present = "list")]
    pub provider: Option<ProviderKind>,
    /// The model name (optional for demo).
    #[arg(long)]
    pub model: Option<String>,
    /// The API base URL, e.g. http://localhost:8000/v1 for vLLM.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Emulate tool calling with a text protocol (the tools in the prompt, the calls read from
    /// the text); `auto`: native tool calling, and calls left in the text read by the protocol
    /// their markers name.
    #[arg(long, value_parser = super::protocol_choice_parser())]
    pub protocol: Option<ProtocolChoice>,
    /// A suite file of your own (TOML; the bundled one documents the format).
    #[arg(long, value_name = "FILE")]
    pub suite: Option<PathBuf>,
    /// Run the battery this many times (models are not deterministic): rates come with their
    /// spread across runs.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub runs: u32,
    /// At most this many requests at once.
    #[arg(long, value_name = "K", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub concurrency: u32,
    /// Put a second endpoint (a base URL: same provider and model, unless --against-provider
    /// and --against-model) or a saved report (--json) beside this one.
    #[arg(long, value_name = "URL|REPORT.json")]
    pub against: Option<String>,
    /// The provider of the --against endpoint (by default --provider's): anthropic beside
    /// openai for a vLLM server, say.
    #[arg(long, value_name = "P", requires = "against", value_parser = super::provider_parser())]
    pub against_provider: Option<ProviderKind>,
    /// The model of the --against endpoint (by default --model's when the provider is the same,
    /// else the provider's default model).
    #[arg(long, value_name = "M", requires = "against")]
    pub against_model: Option<String>,
    /// The environment variable holding the --against endpoint's key (by default its
    /// provider's usual one, e.g. ANTHROPIC_API_KEY): two servers of one provider with
    /// different keys.
    #[arg(long, value_name = "VAR", requires = "against")]
    pub against_key_env: Option<String>,
    /// Write the report as JSON (schema toolscope-verify/1).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write a self-contained HTML report: the scorecard, a chart, and each failure's request,
    /// raw stream and parts.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// The folder each failed answer is saved to as a session (created when needed).
    #[arg(long, value_name = "DIR", default_value = "verify-failures")]
    pub failures: PathBuf,
    /// Save no session of the failed answers.
    #[arg(long, conflicts_with = "failures")]
    pub no_failures: bool,
    /// The sampling temperature sent with every request (0 makes the streamed and the whole
    /// answer comparable).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// The most tokens each answer may generate (a scenario's own `max_tokens` wins): bounds
    /// a model that runs on, on a slow server.
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u32>,
    /// List the suite's scenarios and exit.
    #[arg(long)]
    pub list: bool,
    /// The waits and bounds of each request.
    #[command(flatten)]
    pub wire: super::WireArgs,
}

/// The target's request, before any scenario fills it; an error is a usage line.
fn template(
    provider: ProviderKind,
    model: Option<&str>,
    base_url: Option<String>,
    args: &VerifyArgs,
) -> Result<Request, String> {
    let model = match (model, provider.spec().default_model) {
        (Some(m), _) => m.to_string(),
        (None, Some(m)) => m.to_string(),
        (None, None) => return Err(format!("--model is required for {provider}")),
    };
    let mut r = Request::new(provider, model);
    r.base_url = base_url;
    match &args.protocol {
        Some(ProtocolChoice::Named(p)) => r.protocol = Some(p.clone()),
        Some(ProtocolChoice::Auto) => r.detect_protocol = true,
        None => {}
    }
    r.sampling.temperature = Some(args.temperature);
    r.sampling.max_tokens = args.max_tokens.or(r.sampling.max_tokens);
    args.wire.apply(&mut r.timeouts, &mut r.limits);
    Ok(r)
}

pub fn run(args: VerifyArgs) -> u8 {
    let suite = match &args.suite {
        Some(path) => Suite::load(path),
        None => Ok(Suite::bundled()),
    };
    let suite = match suite {
        Ok(s) => s,
        Err(e) => return super::fail_usage(&format!("verify: --suite {e}")),
    };
    if args.list {
        for s in &suite.scenarios {
            println!("{:<16} {:<20} {}", s.name, s.tool_choice.label(), s.about);
        }
        return 0;
    }
    for path in [&args.json, &args.report].into_iter().flatten() {
        if let Err(e) = super::check_writable(path) {
            return super::fail_usage(&format!("verify: {e}"));
        }
    }
    let Some(provider) = args.provider else {
        return super::fail_usage("verify: --provider is required (except with --list)");
    };
    let given = match template(
        provider,
        args.model.as_deref(),
        args.base_url.clone(),
        &args,
    ) {
        Ok(r) => r,
        Err(e) => return super::fail_usage(&format!("verify: {e}")),
    };
    // --against: a saved report, or a second endpoint.
    enum Against {
        Saved(Box<Report>),
        Live(Box<Request>),
    }
    let keys = Keys::from_env();
    let mut against_keys = keys.clone();
    let against = match &args.against {
        None => None,
        Some(a) if a.ends_with(".json") || Path::new(a).is_file() => {
            match Report::load(Path::new(a)) {
                Ok(r) => Some(Against::Saved(Box::new(r))),
                Err(e) => return super::fail_usage(&format!("verify: --against {e}")),
            }
        }
        Some(url) => {
            let against_provider = args.against_provider.unwrap_or(provider);
            // The first endpoint's model is only a default for the same provider: another
            // provider's model names are its own.
            let model = args
                .against_model
                .as_deref()
                .or((against_provider == provider).then_some(given.model.as_str()));
            let r = match template(against_provider, model, Some(url.clone()), &args) {
                Ok(r) => r,
                Err(e) => {
                    let e = e.replace("--model", "--against-model");
                    return super::fail_usage(&format!("verify: --against: {e}"));
                }
            };
            if let Some(var) = &args.against_key_env {
                match against_key(against_provider, var) {
                    Ok(key) => against_keys = against_keys.with(against_provider, key),
                    Err(e) => return super::fail_usage(&format!("verify: {e}")),
                }
            }
            Some(Against::Live(Box::new(r)))
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("toolscope verify: cannot start the async runtime: {e}");
            return 1;
        }
    };
    let mut signals = {
        let _context = runtime.enter();
        match Signals::install() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("toolscope verify: cannot listen for signals: {e}");
                return 1;
            }
        }
    };
    let progress = std::io::stderr().is_terminal();
    let jobs = battery::jobs(&suite, args.runs);
    let concurrency = args.concurrency as usize;
    let failures_dir = (!args.no_failures).then(|| args.failures.clone());

    let outcome = runtime.block_on(async {
        let first = measure(
            &suite,
            &given,
            &keys,
            &jobs,
            concurrency,
            progress,
            &mut signals,
            "",
        )
        .await;
        let second = match (&against, &first.ending) {
            (Some(Against::Live(r)), Ending::Complete | Ending::GaveUp { .. }) => Some(
                measure(
                    &suite,
                    r,
                    &against_keys,
                    &jobs,
                    concurrency,
                    progress,
                    &mut signals,
                    "[B] ",
                )
                .await,
            ),
            _ => None,
        };
        (first, second)
    });
    let (first, second) = outcome;
    let mut code = 0u8;
    let report = finish(&suite, &first, failures_dir.as_deref(), "", &mut code);
    let other = match (&against, &second) {
        (Some(Against::Saved(r)), _) => Some((**r).clone()),
        (_, Some(m)) => {
            let dir = failures_dir.as_ref().map(|d| d.join("against"));
            Some(finish(&suite, m, dir.as_deref(), "[B] ", &mut code))
        }
        _ => None,
    };
    let text = render(&report, other.as_ref());
    let mut stdout = std::io::stdout();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report).expect("a report serialises");
        if let Err(e) = write_atomic(path, json.as_bytes()) {
            eprintln!("toolscope verify: {e}");
            code = code.max(1);
        } else {
            eprintln!("toolscope verify: the report is in {}", path.display());
        }
    }
    if let Some(path) = &args.report {
        let verdicts = verdicts(&first);
        let page = html::page(&suite, &report, other.as_ref(), &verdicts);
        if let Err(e) = write_atomic(path, page.as_bytes()) {
            eprintln!("toolscope verify: {e}");
            code = code.max(1);
        } else {
            eprintln!("toolscope verify: the HTML report is in {}", path.display());
        }
    }
    if let Ending::Stopped = first.ending {
        return 128 + signals.last.unwrap_or(2);
    }
    let live_other = match (&second, &other) {
        (Some(_), Some(o)) => Some(o),
        _ => None,
    };
    let all_right = |r: &Report| r.overall.score >= 1.0 && r.complete;
    if !all_right(&report) || live_other.is_some_and(|o| !all_right(o)) {
        code = code.max(1);
    }
    code
}

/// One battery on one endpoint: the answers, judged.
struct Measured {
    request: Request,
    answers: Vec<Answer>,
    judged: Vec<Judged>,
    ending: Ending,
    started_at: String,
    elapsed_ms: u64,
    planned: u32,
    runs: u32,
}

#[allow(clippy::too_many_arguments)]
async fn measure(
    suite: &Suite,
    given: &Request,
    keys: &Keys,
    jobs: &[Job],
    concurrency: usize,
    progress: bool,
    signals: &mut Signals,
    tag: &str,
) -> Measured {
    let started_at = now_rfc3339();
    let started = Instant::now();
    let names: Vec<String> = suite.scenarios.iter().map(|s| s.name.clone()).collect();
    let tag = tag.to_string();
    let show = move |done: usize, total: usize, a: &Answer| {
        if progress {
            let width = 30;
            let filled = done * width / total.max(1);
            eprint!(
                "\r\x1b[K{tag}[{}{}] {done}/{total} {} ({})",
                "█".repeat(filled),
                "·".repeat(width - filled),
                names[a.scenario],
                if a.stream { "streamed" } else { "whole" }
            );
            let _ = std::io::stderr().flush();
        }
    };
    let (answers, ending) =
        battery::run(suite, given, keys, jobs, concurrency, show, signals.next()).await;
    if progress {
        eprint!("\r\x1b[K");
    }
    let judged = score::judge_all(suite, &answers);
    Measured {
        request: given.clone(),
        answers,
        judged,
        ending,
        started_at,
        elapsed_ms: started.elapsed().as_millis() as u64,
        planned: jobs.len() as u32,
        runs: jobs.iter().map(|j| j.run + 1).max().unwrap_or(1),
    }
}

fn verdicts(m: &Measured) -> Vec<Verdict<'_>> {
    m.answers
        .iter()
        .zip(&m.judged)
        .map(|(answer, judged)| Verdict {
            answer,
            judged,
            session: None,
        })
        .collect()
}

/// Saves the failures, says on stderr how the battery ended, and builds the report.
fn finish(
    suite: &Suite,
    m: &Measured,
    failures: Option<&Path>,
    tag: &str,
    code: &mut u8,
) -> Report {
    let mut verdicts = verdicts(m);
    if let Some(dir) = failures {
        let failed: Vec<usize> = (0..verdicts.len())
            .filter(|&i| !verdicts[i].judged.passed())
            .collect();
        if !failed.is_empty() {
            match std::fs::create_dir_all(dir) {
                Err(e) => {
                    eprintln!(
                        "toolscope verify: {tag}cannot create {}: {e}; the failures are not saved",
                        dir.display()
                    );
                }
                Ok(()) => {
                    for i in failed {
                        let v = &verdicts[i];
                        let path = dir.join(failure::file_name(suite, v.answer));
                        let session = failure::session(suite, &m.request, v.answer);
                        match session.save(&path) {
                            Ok(()) => verdicts[i].session = Some(path.display().to_string()),
                            Err(e) => eprintln!("toolscope verify: {tag}{e}"),
                        }
                    }
                    eprintln!(
                        "toolscope verify: {tag}each failed answer is saved as a session in {} (open one with `toolscope replay FILE`)",
                        dir.display()
                    );
                }
            }
        }
    }
    let complete = m.ending == Ending::Complete;
    match &m.ending {
        Ending::Complete => {}
        Ending::Stopped => eprintln!(
            "toolscope verify: {tag}stopped after {} of {} requests; the scorecard covers those",
            m.answers.len(),
            m.planned
        ),
        Ending::GaveUp { category, message } => {
            let hint = battery::hint(category, m.request.provider, "--model");
            eprintln!(
                "toolscope verify: {tag}{} cannot answer: {category}: {message}{hint}; stopped after {} of {} requests",
                Target::of(&m.request).label(),
                m.answers.len(),
                m.planned
            );
            *code = (*code).max(1);
        }
    }
    let answered = m.judged.iter().filter(|j| j.error.is_none()).count();
    if answered > 0
        && m.judged
            .iter()
            .filter(|j| j.error.is_none())
            .all(|j| j.empty)
    {
        eprintln!(
            "toolscope verify: {tag}the model answered nothing (no text, no call, no reasoning) to any of the {answered} requests it answered"
        );
        *code = (*code).max(1);
    }
    Report::build(
        suite,
        Meta {
            target: Target::of(&m.request),
            runs: m.runs,
            started_at: m.started_at.clone(),
            elapsed_ms: m.elapsed_ms,
            planned: m.planned,
            complete,
        },
        &verdicts,
    )
}

/// The key of the --against endpoint, read from `var`; an error is a usage line.
fn against_key(provider: ProviderKind, var: &str) -> Result<String, String> {
    if provider.key_env().is_none() {
        return Err(format!(
            "--against-key-env {var}: the provider {provider} takes no key"
        ));
    }
    match std::env::var(var).map(|v| v.trim().to_string()) {
        Ok(v) if !v.is_empty() => Ok(v),
        _ => Err(format!(
            "--against-key-env {var}: the variable is not set (or empty)"
        )),
    }
}

/// Writes `bytes` to `path` through a temporary file beside it.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let name = path
        .file_name()
        .map_or("report".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(toolscope_core::session::temp_name(&name));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("{}: cannot write: {e}", path.display())
        })
}

/// SIGINT (Ctrl+C) and SIGTERM, registered before anything is sent.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    last: Option<u8>,
}

impl Signals {
    fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            last: None,
        })
    }

    async fn next(&mut self) {
        let n = tokio::select! {
            _ = self.interrupt.recv() => 2,
            _ = self.terminate.recv() => 15,
        };
        self.last = Some(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: VerifyArgs,
    }

    fn args(extra: &[&str]) -> VerifyArgs {
        let mut argv = vec!["verify", "--provider", "anthropic", "--model", "m"];
        argv.extend(extra);
        Cli::parse_from(argv).args
    }

    /// A provider whose wire refuses a request without a token bound (Anthropic) keeps its
    /// default when --max-tokens is not given: the battery's requests were sent without one.
    #[test]
    fn the_token_bound_is_the_providers_unless_given() {
        let anthropic = ProviderKind::from_name("anthropic").unwrap();
        let r = template(anthropic, Some("m"), None, &args(&[])).unwrap();
        assert!(anthropic.default_max_tokens().is_some());
        assert_eq!(r.sampling.max_tokens, anthropic.default_max_tokens());
        let r = template(anthropic, Some("m"), None, &args(&["--max-tokens", "77"])).unwrap();
        assert_eq!(r.sampling.max_tokens, Some(77));
    }
}
