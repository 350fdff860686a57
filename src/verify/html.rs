//! The HTML report (`--report FILE.html`): one self-contained page — inline CSS, an inline SVG
//! chart drawn here, no script, nothing fetched — with the scorecard, the rate of fully right
//! answers per scenario (beside a second report's with `--against`), a grid of every check per
//! scenario, and for each failure the request as sent, the raw stream as received and the
//! parts toolscope read from it, so one can see exactly what went wrong. Opens offline.

use std::fmt::Write as _;

use toolscope_core::provider::{RunEvent, wire_body};

use super::report::{OVERALL_ROWS, Rate, Report, Verdict, pct};
use super::score::{Check, clip};
use super::suite::Suite;

/// The most characters of a failure's request, raw stream or parts shown (the session file
/// holds them whole).
const MAX_SHOWN: usize = 64 * 1024;

const STYLE: &str = r#"
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;background:#fafafa;color:#1d1d1f}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#555}.score{font-size:28px;font-weight:600}
table{border-collapse:collapse;background:#fff;margin:8px 0}
th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0;font-weight:600}
td.ok{background:#e6f4ea;color:#1e6b34}td.bad{background:#fce8e6;color:#a50e0e}td.na{color:#999}
pre{background:#fff;border:1px solid #ddd;padding:8px;overflow:auto;max-height:420px;white-space:pre-wrap;word-break:break-all;font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
details{background:#fff;border:1px solid #ddd;margin:8px 0;padding:6px 10px}
summary{cursor:pointer;font-weight:600}
.notes li{color:#a50e0e}
svg text{font:12px system-ui,sans-serif;fill:#1d1d1f}
"#;

/// The page.
pub fn page(
    suite: &Suite,
    report: &Report,
    other: Option<&Report>,
    verdicts: &[Verdict<'_>],
) -> String {
    let mut h = String::with_capacity(64 * 1024);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>toolscope verify · {}</title><style>{STYLE}</style></head><body><main>",
        escape(&report.target.label())
    );
    let _ = write!(
        h,
        "<h1>toolscope verify</h1><p class=\"sub\">{} · suite {} · {} scenario(s) × {} run(s), streamed and whole · {} of {} requests in {:.1} s · started {}{}</p>",
        escape(&report.target.label()),
        escape(&report.suite),
        report.scenarios.len(),
        report.runs,
        report.requests.done,
        report.requests.planned,
        report.elapsed_ms as f64 / 1000.0,
        escape(&report.started_at),
        if report.complete {
            ""
        } else {
            " · <strong>incomplete</strong>"
        }
    );
    let _ = write!(
        h,
        "<p><span class=\"score\">{}</span> of answers fully right ({}/{}) · calls F1 {}</p>",
        pct(report.overall.score),
        report.overall.passed,
        report.overall.answers,
        pct(report.overall.calls.f1)
    );
    if let Some(o) = other {
        let _ = write!(
            h,
            "<p>Against <strong>{}</strong>: <span class=\"score\">{}</span> ({}/{}) · calls F1 {}</p>",
            escape(&o.target.label()),
            pct(o.overall.score),
            o.overall.passed,
            o.overall.answers,
            pct(o.overall.calls.f1)
        );
    }
    // The scorecard.
    h.push_str("<h2>Scorecard</h2><table><tr><th>check</th>");
    let reports: Vec<&Report> = std::iter::once(report).chain(other).collect();
    for r in &reports {
        let _ = write!(h, "<th>{}</th>", escape(&r.target.label()));
    }
    h.push_str("</tr>");
    for check in Check::ALL {
        if reports.iter().all(|r| r.rate(*check).is_none()) {
            continue;
        }
        let _ = write!(h, "<tr><td>{}</td>", escape(check.label()));
        for r in &reports {
            h.push_str(&rate_td(r.rate(*check)));
        }
        h.push_str("</tr>");
    }
    for (label, cell) in OVERALL_ROWS {
        let _ = write!(h, "<tr><td>{label}</td>");
        for r in &reports {
            let _ = write!(h, "<td>{}</td>", cell(r));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    // The chart.
    h.push_str("<h2>Answers fully right, per scenario</h2>");
    h.push_str(&chart(report, other));
    // The grid.
    h.push_str("<h2>Checks per scenario</h2><table><tr><th>scenario</th>");
    let used: Vec<Check> = Check::ALL
        .iter()
        .copied()
        .filter(|c| report.rate(*c).is_some())
        .collect();
    for c in &used {
        let _ = write!(h, "<th>{}</th>", escape(c.name()));
    }
    h.push_str("<th>F1</th></tr>");
    for s in &report.scenarios {
        let _ = write!(
            h,
            "<tr><td title=\"{}\">{}</td>",
            escape(&s.about),
            escape(&s.name)
        );
        for c in &used {
            let rate = s.summary.checks.iter().find(|r| r.check == c.name());
            h.push_str(&rate_td(rate));
        }
        let c = &s.summary.calls;
        if c.tp + c.fp + c.fn_ == 0 {
            h.push_str("<td class=\"na\">–</td>");
        } else {
            let _ = write!(h, "<td>{}</td>", pct(c.f1));
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
    // The failures.
    let failed: Vec<&Verdict<'_>> = verdicts.iter().filter(|v| !v.judged.passed()).collect();
    let _ = write!(h, "<h2>Failures ({})</h2>", failed.len());
    if failed.is_empty() {
        h.push_str("<p>None: every answer passed every check.</p>");
    }
    for v in failed {
        let scenario = &suite.scenarios[v.answer.scenario];
        let _ = write!(
            h,
            "<details><summary>{} · run {} · {} · failed {}</summary>",
            escape(&scenario.name),
            v.answer.run + 1,
            if v.answer.stream { "streamed" } else { "whole" },
            escape(
                &v.judged
                    .failed_checks()
                    .iter()
                    .map(|c| c.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
        let _ = write!(h, "<p>{}</p><ul class=\"notes\">", escape(&scenario.about));
        for n in &v.judged.notes {
            let _ = write!(h, "<li>{}</li>", escape(n));
        }
        h.push_str("</ul>");
        if let Some(s) = &v.session {
            let _ = write!(
                h,
                "<p>Session: <code>{}</code> (<code>toolscope replay {}</code>)</p>",
                escape(s),
                escape(s)
            );
        }
        let (url, body) = wire_body(
            &v.answer.request,
            v.answer.request.base_url.as_deref().unwrap_or(""),
        );
        let body = serde_json::to_string_pretty(&body).unwrap_or_default();
        let _ = write!(
            h,
            "<h3>Request</h3><p><code>POST {}</code></p><pre>{}</pre>",
            escape(&shown_url(&url, report)),
            escape(&clip(&body, MAX_SHOWN))
        );
        let raw: String = v
            .answer
            .events
            .iter()
            .filter_map(|e| match e {
                RunEvent::Raw(r) => Some(format!("[{} ms] {}\n", r.at_ms, r.data)),
                _ => None,
            })
            .collect();
        let _ = write!(
            h,
            "<h3>Raw stream</h3><pre>{}</pre>",
            escape(&clip(&raw, MAX_SHOWN))
        );
        let parts: String = v
            .answer
            .events
            .iter()
            .filter_map(|e| e.as_part().map(|p| p.to_json_line() + "\n"))
            .collect();
        let _ = write!(
            h,
            "<h3>Parts</h3><pre>{}</pre></details>",
            escape(&clip(&parts, MAX_SHOWN))
        );
    }
    h.push_str(
        "<p class=\"sub\">Made by <code>toolscope verify</code>. Each check, and how a fault is charged, is described in toolscope's README.</p></main></body></html>\n",
    );
    h
}

/// The request's URL as the report names the target (the demo's loopback address is not
/// the target's).
fn shown_url(url: &str, report: &Report) -> String {
    match &report.target.base_url {
        Some(_) => toolscope_core::provider::redact_url(url),
        None => url
            .split_once("/v1/")
            .map_or(url.to_string(), |(_, rest)| format!("(demo)/v1/{rest}")),
    }
}

fn rate_td(rate: Option<&Rate>) -> String {
    match rate {
        None => "<td class=\"na\">–</td>".into(),
        Some(r) => {
            let class = if r.passed == r.total { "ok" } else { "bad" };
            let spread = r
                .spread
                .map_or(String::new(), |s| format!(" ±{:.1}", s.sd * 100.0));
            format!(
                "<td class=\"{class}\">{} ({}/{}){spread}</td>",
                pct(r.rate),
                r.passed,
                r.total
            )
        }
    }
}

/// Horizontal bars: the share of fully right answers of each scenario (two bars a scenario
/// with a second report).
fn chart(report: &Report, other: Option<&Report>) -> String {
    let rows = report.scenarios.len();
    let per = if other.is_some() { 2 } else { 1 };
    let bar = 14;
    let gap = 8;
    let label_w = 170;
    let width = 720;
    let plot = width - label_w - 60;
    let row_h = per * bar + gap;
    let height = rows * row_h + 40;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"answers fully right per scenario\">"
    );
    // Grid lines at 0, 50 and 100%.
    for (i, p) in [0, 50, 100].iter().enumerate() {
        let x = label_w + plot * p / 100;
        let _ = write!(
            s,
            "<line x1=\"{x}\" y1=\"10\" x2=\"{x}\" y2=\"{}\" stroke=\"#ccc\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"{}\">{p}%</text>",
            height - 22,
            height - 8,
            ["start", "middle", "end"][i]
        );
    }
    let colors = ["#1a73e8", "#e8710a"];
    for (i, sc) in report.scenarios.iter().enumerate() {
        let y0 = 10 + i * row_h;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            label_w - 8,
            y0 + per * bar / 2 + 4,
            escape(&sc.name)
        );
        let scores = std::iter::once(Some(sc.summary.score)).chain(other.map(|o| {
            o.scenarios
                .iter()
                .find(|x| x.name == sc.name)
                .map(|x| x.summary.score)
        }));
        for (k, score) in scores.enumerate() {
            let y = y0 + k * bar;
            match score {
                Some(v) => {
                    let w = (plot as f64 * v).round() as usize;
                    let _ = write!(
                        s,
                        "<rect x=\"{label_w}\" y=\"{y}\" width=\"{w}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect><text x=\"{}\" y=\"{}\">{}</text>",
                        bar - 2,
                        colors[k],
                        escape(&sc.name),
                        pct(v),
                        label_w + w + 4,
                        y + bar - 4,
                        pct(v)
                    );
                }
                None => {
                    let _ = write!(
                        s,
                        "<text x=\"{}\" y=\"{}\">not in this report</text>",
                        label_w + 4,
                        y + bar - 4
                    );
                }
            }
        }
    }
    s.push_str("</svg>");
    if let Some(o) = other {
        let _ = write!(
            s,
            "<p><span style=\"color:{}\">■</span> {} &nbsp; <span style=\"color:{}\">■</span> {}</p>",
            colors[0],
            escape(&report.target.label()),
            colors[1],
            escape(&o.target.label())
        );
    }
    s
}

/// Text made safe inside HTML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than line breaks and tabs are shown, not sent.
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn escape_leaves_no_markup_and_no_control_character() {
        assert_eq!(
            escape("<script>a & 'b' \"c\"\u{1b}[2J</script>"),
            "&lt;script&gt;a &amp; &#39;b&#39; &quot;c&quot;\\u{1b}[2J&lt;/script&gt;"
        );
    }
}
