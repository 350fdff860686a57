//! Running the battery: every scenario, streamed and whole, `runs` times, at most
//! `concurrency` requests at once, until done, stopped, or the endpoint shows it cannot
//! answer.

use std::time::Instant;

use tokio::task::JoinSet;
use toolscope_core::error::ErrorCategory;
use toolscope_core::part::Part;
use toolscope_core::provider::{Keys, ProviderKind, Request, Run, RunEvent};

use super::score::Answer;
use super::suite::Suite;

/// One request to make.
#[derive(Clone, Copy, Debug)]
pub struct Job {
    pub scenario: usize,
    pub run: u32,
    pub stream: bool,
}

/// Every request of the battery, run by run, each scenario streamed then whole.
pub fn jobs(suite: &Suite, runs: u32) -> Vec<Job> {
    let mut out = Vec::new();
    for run in 0..runs {
        for scenario in 0..suite.scenarios.len() {
            for stream in [true, false] {
                out.push(Job {
                    scenario,
                    run,
                    stream,
                });
            }
        }
    }
    out
}

/// How the battery ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    /// Every request was made.
    Complete,
    /// Stopped from outside.
    Stopped,
    /// The endpoint cannot answer (unreachable, refused the key, …): the first answers all
    /// failed so; the message of the first.
    GaveUp { category: String, message: String },
}

/// What to check when the battery gave up with an error of `category` on `provider`, with a
/// space before it (or nothing): ` (is the key set in OPENAI_API_KEY?)`. `model` names where
/// the model is set (`--model`, the picker).
pub fn hint(category: &str, provider: ProviderKind, model: &str) -> String {
    match category {
        "provider_authentication" => format!(
            " (is the key set{}?)",
            provider
                .key_env()
                .map_or(String::new(), |k| format!(" in {k}"))
        ),
        "provider_unavailable" | "provider_timeout" => {
            " (is the server running at that address?)".to_string()
        }
        "provider_invalid_model" => format!(" (check {model})"),
        _ => String::new(),
    }
}

/// Sends one request and collects its events with its timing.
pub async fn ask(request: Request, keys: Keys, job: Job) -> Answer {
    let sent = Instant::now();
    let mut run = Run::start(request.clone(), keys);
    let mut events = Vec::new();
    let mut first_token_ms = None;
    while let Some(e) = run.next().await {
        if first_token_ms.is_none() {
            let output = match &e {
                RunEvent::Output(o) => !o.text.is_empty(),
                RunEvent::Part(Part::ReasoningDelta { delta, .. }) => !delta.is_empty(),
                _ => false,
            };
            if output {
                first_token_ms = Some(sent.elapsed().as_millis() as u64);
            }
        }
        events.push(e);
    }
    Answer {
        scenario: job.scenario,
        run: job.run,
        stream: job.stream,
        request,
        events,
        first_token_ms,
        elapsed_ms: sent.elapsed().as_millis() as u64,
    }
}

/// The category of an answer's error, if it failed, its message and its HTTP status.
pub fn error_of(answer: &Answer) -> Option<(ErrorCategory, String, Option<u16>)> {
    answer.events.iter().rev().find_map(|e| match e.as_part() {
        Some(Part::Error(p)) => p.category.map(|c| (c, p.message.clone(), p.status)),
        _ => None,
    })
}

/// An error that says the endpoint will not answer any request of the battery: a refused key,
/// an unknown model, or no HTTP answer at all (unreachable, timed out). A server's 5xx is not:
/// the next request may well be answered.
fn fatal(category: ErrorCategory, status: Option<u16>) -> bool {
    match category {
        ErrorCategory::ProviderAuthentication | ErrorCategory::ProviderInvalidModel => true,
        ErrorCategory::ProviderUnavailable | ErrorCategory::ProviderTimeout => status.is_none(),
        _ => false,
    }
}

/// Runs `jobs` against `template` (provider, model, base URL, protocol, sampling), at most
/// `concurrency` at once. `progress` hears of each answer as it comes (done, of total); `stop`
/// ends the battery at once when it resolves (the requests in flight are dropped, which
/// cancels them). Returns the answers in job order and how it ended.
///
/// When the first `concurrency` answers (at least one) have all failed with an error that
/// says the endpoint cannot answer (unreachable, a refused key, an unknown model, a timeout),
/// no more requests are sent.
pub async fn run_jobs(
    suite: &Suite,
    template: &Request,
    keys: &Keys,
    jobs: &[Job],
    concurrency: usize,
    mut progress: impl FnMut(usize, usize, &Answer),
    stop: impl std::future::Future<Output = ()>,
) -> (Vec<Answer>, Ending) {
    let concurrency = concurrency.max(1);
    let mut set: JoinSet<(usize, Answer)> = JoinSet::new();
    let mut next = 0;
    let mut done: Vec<Option<Answer>> = vec![None; jobs.len()];
    let mut count = 0;
    let mut succeeded = false;
    let mut fatal_seen: Option<(String, String)> = None;
    let mut fatal_count = 0;
    tokio::pin!(stop);
    let ending = loop {
        while set.len() < concurrency && next < jobs.len() && fatal_seen.is_none() {
            let job = jobs[next];
            let request = Suite::request(&suite.scenarios[job.scenario], template, job.stream);
            let keys = keys.clone();
            let i = next;
            set.spawn(async move { (i, ask(request, keys, job).await) });
            next += 1;
        }
        if set.is_empty() {
            break match fatal_seen {
                Some((category, message)) if next < jobs.len() => {
                    Ending::GaveUp { category, message }
                }
                _ => Ending::Complete,
            };
        }
        tokio::select! {
            joined = set.join_next() => {
                let Some(Ok((i, answer))) = joined else { continue };
                count += 1;
                progress(count, jobs.len(), &answer);
                match error_of(&answer) {
                    Some((c, m, status)) if fatal(c, status) && !succeeded => {
                        fatal_count += 1;
                        if fatal_count >= concurrency.min(jobs.len()) || fatal_count >= 2 {
                            fatal_seen.get_or_insert((c.as_str().to_string(), m));
                        }
                    }
                    _ => succeeded = true,
                }
                done[i] = Some(answer);
            }
            () = &mut stop => {
                set.abort_all();
                break Ending::Stopped;
            }
        }
    };
    (done.into_iter().flatten().collect(), ending)
}

/// [`run_jobs`] on the target `template` names. A demo target without a base URL gets the
/// demo model started on a loopback port for the battery alone, answering at full speed, and
/// stopped when it ends; when it cannot start, nothing is sent and the battery gives up.
pub async fn run(
    suite: &Suite,
    template: &Request,
    keys: &Keys,
    jobs: &[Job],
    concurrency: usize,
    progress: impl FnMut(usize, usize, &Answer),
    stop: impl std::future::Future<Output = ()>,
) -> (Vec<Answer>, Ending) {
    let mut request = template.clone();
    let _demo = if toolscope_demo::needs_server(&request) {
        match toolscope_demo::start_local(toolscope_demo::DemoOptions::instant()).await {
            Ok(server) => {
                request.base_url = Some(server.base_url());
                Some(server)
            }
            Err(e) => {
                let ending = Ending::GaveUp {
                    category: e.category.as_str().into(),
                    message: e.message,
                };
                return (Vec::new(), ending);
            }
        }
    } else {
        None
    };
    run_jobs(suite, &request, keys, jobs, concurrency, progress, stop).await
}
