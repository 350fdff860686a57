//! The scorecard: rates per check, per scenario and overall, with their spread across runs;
//! its JSON form (`--json FILE`, schema `toolscope-verify/1`, documented in the README) and
//! its terminal form, alone or beside another report (`--against`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::score::{Answer, Check, Counts, Judged};
use super::suite::Suite;

/// The value of the report's `schema` field.
pub const SCHEMA: &str = "toolscope-verify/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: String,
    pub target: Target,
    /// The suite's name.
    pub suite: String,
    pub runs: u32,
    /// When the battery started (RFC 3339, UTC).
    pub started_at: String,
    pub elapsed_ms: u64,
    /// False when the battery was stopped (Ctrl+C) or gave up (an endpoint that cannot answer)
    /// before every request was made.
    pub complete: bool,
    pub requests: Requests,
    pub overall: Summary,
    pub scenarios: Vec<ScenarioReport>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Target {
    pub provider: String,
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
}

impl Target {
    /// The target a battery's request template names (its base URL without secrets).
    pub fn of(r: &toolscope_core::provider::Request) -> Target {
        Target {
            provider: r.provider.name().to_string(),
            model: r.model.clone(),
            base_url: r
                .base_url
                .as_deref()
                .map(toolscope_core::provider::redact_url),
            protocol: r
                .protocol
                .as_ref()
                .map(|p| p.name().to_string())
                .or(r.detect_protocol.then(|| "auto".to_string())),
        }
    }

    /// One line naming it.
    pub fn label(&self) -> String {
        let mut s = format!("{} {}", self.provider, self.model);
        if let Some(u) = &self.base_url {
            let _ = write!(s, " at {u}");
        }
        if let Some(p) = &self.protocol {
            let _ = write!(s, " (protocol {p})");
        }
        s
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requests {
    pub planned: u32,
    pub done: u32,
}

/// Rates over a set of answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub answers: u32,
    /// Answers that passed every check that applied to them.
    pub passed: u32,
    /// `passed / answers` (1 with no answers).
    pub score: f64,
    /// One entry per check that applied to any answer, in the scorecard's order.
    pub checks: Vec<Rate>,
    pub calls: CallScores,
    pub latency: Latency,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    /// The check's name (`answered`, `tool-choice`, `calls`, `schema`, `schema-as-sent`,
    /// `finish`, `no-leak`, `no-call-in-reasoning`, `streamed-args`, `stream-equal`).
    pub check: String,
    pub passed: u32,
    pub total: u32,
    pub rate: f64,
    /// With several runs: the rate's spread across them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub min: f64,
    pub max: f64,
    /// The standard deviation of the per-run rates.
    pub sd: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallScores {
    pub tp: u32,
    pub fp: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    /// The median time to the first token of the streamed answers, in milliseconds.
    pub first_token_ms: Option<f64>,
    /// The median output tokens per second of the streamed answers, after the first token.
    pub tokens_per_second: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioReport {
    pub name: String,
    pub about: String,
    pub summary: Summary,
    pub failures: Vec<Failure>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// The run (1-based).
    pub run: u32,
    pub stream: bool,
    /// The checks it failed.
    pub failed: Vec<String>,
    /// Why, one line per failed check.
    pub notes: Vec<String>,
    /// The session file it was saved as, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// A judged answer with where its session went.
pub struct Verdict<'a> {
    pub answer: &'a Answer,
    pub judged: &'a Judged,
    pub session: Option<String>,
}

/// What the report is built from beside the verdicts.
pub struct Meta {
    pub target: Target,
    pub runs: u32,
    pub started_at: String,
    pub elapsed_ms: u64,
    pub planned: u32,
    pub complete: bool,
}

impl Report {
    pub fn build(suite: &Suite, meta: Meta, verdicts: &[Verdict<'_>]) -> Report {
        let all: Vec<&Verdict<'_>> = verdicts.iter().collect();
        let scenarios = suite
            .scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let mine: Vec<&Verdict<'_>> =
                    verdicts.iter().filter(|v| v.answer.scenario == i).collect();
                let mut failures: Vec<Failure> = mine
                    .iter()
                    .filter(|v| !v.judged.passed())
                    .map(|v| Failure {
                        run: v.answer.run + 1,
                        stream: v.answer.stream,
                        failed: v
                            .judged
                            .failed_checks()
                            .iter()
                            .map(|c| c.name().to_string())
                            .collect(),
                        notes: v.judged.notes.clone(),
                        session: v.session.clone(),
                    })
                    .collect();
                failures.sort_by_key(|f| (f.run, !f.stream));
                ScenarioReport {
                    name: s.name.clone(),
                    about: s.about.clone(),
                    summary: summarise(&mine, meta.runs),
                    failures,
                }
            })
            .collect();
        Report {
            schema: SCHEMA.into(),
            target: meta.target,
            suite: suite.name.clone(),
            runs: meta.runs,
            started_at: meta.started_at,
            elapsed_ms: meta.elapsed_ms,
            complete: meta.complete,
            requests: Requests {
                planned: meta.planned,
                done: verdicts.len() as u32,
            },
            overall: summarise(&all, meta.runs),
            scenarios,
        }
    }

    /// Reads a saved report (`--json`); the error is one line.
    pub fn load(path: &std::path::Path) -> Result<Report, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the report: {e}", path.display()))?;
        let r: Report = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a toolscope verify report: {e}", path.display()))?;
        if r.schema != SCHEMA {
            return Err(format!(
                "{}: a report of schema \"{}\", not \"{SCHEMA}\"",
                path.display(),
                r.schema
            ));
        }
        Ok(r)
    }

    /// The rate of a check overall (`None` when it never applied).
    pub fn rate(&self, check: Check) -> Option<&Rate> {
        self.overall.checks.iter().find(|r| r.check == check.name())
    }

    /// The checks with a rate below 1 overall.
    pub fn faults(&self) -> Vec<String> {
        self.overall
            .checks
            .iter()
            .filter(|r| r.passed < r.total)
            .map(|r| r.check.clone())
            .collect()
    }
}

fn summarise(verdicts: &[&Verdict<'_>], runs: u32) -> Summary {
    let answers = verdicts.len() as u32;
    let passed = verdicts.iter().filter(|v| v.judged.passed()).count() as u32;
    let mut checks = Vec::new();
    for check in Check::ALL {
        let mut per_run: BTreeMap<u32, (u32, u32)> = BTreeMap::new();
        for v in verdicts {
            for (c, ok) in &v.judged.checks {
                if c == check {
                    let e = per_run.entry(v.answer.run).or_default();
                    e.0 += u32::from(*ok);
                    e.1 += 1;
                }
            }
        }
        let (p, t) = per_run
            .values()
            .fold((0, 0), |(p, t), (a, b)| (p + a, t + b));
        if t == 0 {
            continue;
        }
        let spread = (runs > 1 && per_run.len() > 1).then(|| {
            let rates: Vec<f64> = per_run
                .values()
                .map(|(a, b)| *a as f64 / *b as f64)
                .collect();
            let mean = rates.iter().sum::<f64>() / rates.len() as f64;
            let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / rates.len() as f64;
            Spread {
                min: rates.iter().copied().fold(f64::INFINITY, f64::min),
                max: rates.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                sd: var.sqrt(),
            }
        });
        checks.push(Rate {
            check: check.name().into(),
            passed: p,
            total: t,
            rate: p as f64 / t as f64,
            spread,
        });
    }
    let mut counts = Counts::default();
    for v in verdicts {
        if let Some(c) = v.judged.counts {
            counts.add(c);
        }
    }
    let (precision, recall, f1) = counts.prf();
    let first: Vec<f64> = verdicts
        .iter()
        .filter(|v| v.answer.stream && v.judged.error.is_none())
        .filter_map(|v| v.answer.first_token_ms.map(|m| m as f64))
        .collect();
    let tps: Vec<f64> = verdicts
        .iter()
        .filter_map(|v| v.judged.tokens_per_second)
        .collect();
    Summary {
        answers,
        passed,
        score: if answers == 0 {
            1.0
        } else {
            passed as f64 / answers as f64
        },
        checks,
        calls: CallScores {
            tp: counts.tp,
            fp: counts.fp,
            fn_: counts.fn_,
            precision,
            recall,
            f1,
        },
        latency: Latency {
            first_token_ms: median(first),
            tokens_per_second: median(tps),
        },
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    })
}

/// A rate as a percentage, with its spread across runs when there is one.
/// A scorecard cell: what a report shows in one row.
pub type Cell = fn(&Report) -> String;

/// The rows both scorecards (text and HTML) end with, over all scenarios: a label, and a
/// report's cell.
pub const OVERALL_ROWS: [(&str, Cell); 3] = [
    ("calls precision / recall / F1", |r| {
        let c = &r.overall.calls;
        format!("{} / {} / {}", pct(c.precision), pct(c.recall), pct(c.f1))
    }),
    ("first token (median)", |r| {
        r.overall
            .latency
            .first_token_ms
            .map_or("–".into(), |m| format!("{m:.0} ms"))
    }),
    ("tokens/s (median)", |r| {
        r.overall
            .latency
            .tokens_per_second
            .map_or("–".into(), |t| format!("{t:.0}"))
    }),
];

/// `[A] `, `[B] `… before a line about one of several reports; nothing when there is one.
fn tag(i: usize, reports: usize) -> String {
    if reports > 1 {
        format!("[{}] ", (b'A' + i as u8) as char)
    } else {
        String::new()
    }
}

pub fn pct(r: f64) -> String {
    let p = r * 100.0;
    if (p - p.round()).abs() < 0.05 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

fn rate_cell(rate: Option<&Rate>) -> String {
    match rate {
        None => "–".into(),
        Some(r) => {
            let mut s = format!("{} ({}/{})", pct(r.rate), r.passed, r.total);
            if let Some(sp) = r.spread {
                let _ = write!(
                    s,
                    " ±{:.1} [{}–{}]",
                    sp.sd * 100.0,
                    pct(sp.min),
                    pct(sp.max)
                );
            }
            s
        }
    }
}

fn summary_rate(s: &Summary, check: Check) -> Option<&Rate> {
    s.checks.iter().find(|r| r.check == check.name())
}

/// The scorecard as text: alone, or beside `other` (`--against`) in a second column.
pub fn render(report: &Report, other: Option<&Report>) -> String {
    let mut out = String::new();
    let reports: Vec<&Report> = std::iter::once(report).chain(other).collect();
    let _ = writeln!(
        out,
        "toolscope verify · suite {} · {} scenario(s) × {} run(s), streamed and whole",
        report.suite,
        report.scenarios.len(),
        report.runs
    );
    for (i, r) in reports.iter().enumerate() {
        let tag = tag(i, reports.len());
        let _ = writeln!(
            out,
            "{tag}{} · {} of {} requests in {:.1} s{}",
            r.target.label(),
            r.requests.done,
            r.requests.planned,
            r.elapsed_ms as f64 / 1000.0,
            if r.complete { "" } else { " · INCOMPLETE" }
        );
    }
    out.push('\n');
    // Per scenario: F1, answers fully right, and what failed.
    let width = report
        .scenarios
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(8)
        .max(8);
    let col = 26;
    let mut head = format!("{:<width$}", "scenario");
    for (i, _) in reports.iter().enumerate() {
        let name = if reports.len() > 1 {
            format!("  {}", (b'A' + i as u8) as char)
        } else {
            String::new()
        };
        let _ = write!(head, "  {:<col$}", format!("right · F1{name}"));
    }
    let _ = writeln!(out, "{head}  failed");
    for s in &report.scenarios {
        let mut line = format!("{:<width$}", s.name);
        let mut failed = Vec::new();
        for (i, r) in reports.iter().enumerate() {
            match r.scenarios.iter().find(|o| o.name == s.name) {
                Some(o) if o.summary.answers == 0 => {
                    let _ = write!(line, "  {:<col$}", "not run");
                }
                Some(o) => {
                    let m = &o.summary;
                    let cell = format!(
                        "{}/{} · {}",
                        m.passed,
                        m.answers,
                        if m.calls.tp + m.calls.fp + m.calls.fn_ == 0 {
                            "–".to_string()
                        } else {
                            pct(m.calls.f1)
                        }
                    );
                    let _ = write!(line, "  {cell:<col$}");
                    let f: Vec<String> = m
                        .checks
                        .iter()
                        .filter(|r| r.passed < r.total)
                        .map(|r| r.check.clone())
                        .collect();
                    if !f.is_empty() {
                        let tag = if reports.len() > 1 {
                            format!("{}: ", (b'A' + i as u8) as char)
                        } else {
                            String::new()
                        };
                        failed.push(format!("{tag}{}", f.join(", ")));
                    }
                }
                None => {
                    let _ = write!(line, "  {:<col$}", "(not in this report)");
                }
            }
        }
        let failed = if failed.is_empty() {
            "✓".to_string()
        } else {
            format!("✗ {}", failed.join(" | "))
        };
        let _ = writeln!(out, "{line}  {failed}");
    }
    out.push('\n');
    // Overall, check by check.
    let label_w = 30;
    let col = 34;
    let mut head = format!("{:<label_w$}", "check");
    if reports.len() > 1 {
        for i in 0..reports.len() {
            let _ = write!(head, "  {:<col$}", (b'A' + i as u8) as char);
        }
    }
    let _ = writeln!(out, "{}", head.trim_end());
    // A row: its label, then one cell a report.
    let mut row = |label: &str, cell: &dyn Fn(&Report) -> String| {
        let mut line = format!("{label:<label_w$}");
        for r in &reports {
            let _ = write!(line, "  {:<col$}", cell(r));
        }
        let _ = writeln!(out, "{}", line.trim_end());
    };
    for check in Check::ALL {
        if reports.iter().all(|r| r.rate(*check).is_none()) {
            continue;
        }
        row(check.label(), &|r| {
            rate_cell(summary_rate(&r.overall, *check))
        });
    }
    for (label, cell) in OVERALL_ROWS {
        row(label, &cell);
    }
    out.push('\n');
    for (i, r) in reports.iter().enumerate() {
        let tag = tag(i, reports.len());
        let _ = writeln!(
            out,
            "{tag}score: {} of answers fully right ({}/{})",
            pct(r.overall.score),
            r.overall.passed,
            r.overall.answers
        );
    }
    out
}
