//! The compare view (Ctrl+K): the same request under auto, required, none and the first tool
//! forced, run at once, one column each, with a one-line verdict per column saying what the
//! tool choice made the model do, and a judgement: whether the tool choice was honoured and
//! whether the calls are valid against their tools' schemas.

use toolscope_core::part::Part;
use toolscope_core::tool::ToolChoice;

use super::parts::call_summary;
use super::run_view::{RunState, RunView};

pub struct Compare {
    /// Each column's title: its tool-choice mode, or `recorded` / `live` for a re-send.
    pub titles: Vec<String>,
    pub columns: Vec<RunView>,
    /// The tool choice each column's request made (what its judgement holds it to).
    pub choices: Vec<Option<ToolChoice>>,
    /// What the columns compare.
    pub kind: CompareKind,
    /// The column shown when the screen is too narrow for all of them side by side (←/→ or
    /// 1–4 choose it).
    pub zoomed: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareKind {
    /// One request under the four tool-choice modes (Ctrl+K).
    Modes,
    /// An open session's recorded answer beside the same request sent again live (F9).
    Resend,
}

impl Compare {
    /// The four tool-choice columns.
    pub fn modes(modes: &[ToolChoice], columns: Vec<RunView>) -> Compare {
        Compare {
            titles: modes.iter().map(|m| m.label()).collect(),
            columns,
            choices: modes.iter().cloned().map(Some).collect(),
            kind: CompareKind::Modes,
            zoomed: 0,
        }
    }
}

/// What a column's run amounted to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub text: String,
    pub kind: VerdictKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerdictKind {
    Waiting,
    Called,
    Text,
    Failed,
}

/// The one-line verdict of a run: which tool it called with what, or that it answered in text,
/// or how it failed.
pub fn verdict(view: &RunView) -> Verdict {
    let calls: Vec<_> = view.record.parts.tool_calls().collect();
    let v = |text: String, kind| Verdict { text, kind };
    if let Some(first) = calls.first() {
        let mut text = format!("called {}", call_summary(&first.tool_name, &first.input));
        if calls.len() > 1 {
            text.push_str(&format!(" + {} more", calls.len() - 1));
        }
        return v(text, VerdictKind::Called);
    }
    match &view.record.state {
        RunState::Failed { category, message } => {
            v(format!("{category}: {message}"), VerdictKind::Failed)
        }
        RunState::Cancelled => v("cancelled".into(), VerdictKind::Failed),
        RunState::NotSent { message } => v(format!("not sent: {message}"), VerdictKind::Failed),
        RunState::Idle => v("not run".into(), VerdictKind::Waiting),
        RunState::Streaming => {
            // A call being streamed is among the last rows (its deltas share one row).
            let calling = view.record.parts.rows.iter().rev().take(4).find_map(|r| {
                match &view.record.parts.parts[r.first] {
                    Part::ToolInputStart { tool_name, .. } => Some(tool_name.clone()),
                    _ => None,
                }
            });
            match calling {
                Some(name) => v(format!("calling {name}…"), VerdictKind::Waiting),
                None if view.record.parts.has_text() => {
                    v("answering in text…".into(), VerdictKind::Waiting)
                }
                None => v("waiting…".into(), VerdictKind::Waiting),
            }
        }
        RunState::Done => {
            if !view.record.parts.has_text() {
                v("answered nothing".into(), VerdictKind::Text)
            } else {
                v("answered in text".into(), VerdictKind::Text)
            }
        }
    }
}

/// One line of a column's judgement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    pub ok: bool,
    pub text: String,
}

/// Whether a finished run honoured `choice`, and whether its calls are valid against their
/// schemas (nothing while it streams or when it failed).
pub fn judge(view: &RunView, choice: Option<&ToolChoice>) -> Vec<Judgement> {
    if view.record.state != RunState::Done {
        return Vec::new();
    }
    let calls: Vec<_> = view.record.parts.tool_calls().collect();
    let j = |ok: bool, text: String| Judgement { ok, text };
    let mut out = Vec::new();
    let honoured = match choice {
        Some(ToolChoice::Required) if calls.is_empty() => {
            j(false, "✗ required, but answered in text".into())
        }
        Some(ToolChoice::Required) => j(true, "✓ required: honoured".into()),
        Some(ToolChoice::None) => match calls.first() {
            Some(c) => j(false, format!("✗ none, but called {}", c.tool_name)),
            None => j(true, "✓ none: honoured".into()),
        },
        Some(ToolChoice::Tool(name)) => match calls.iter().find(|c| &c.tool_name != name) {
            _ if calls.is_empty() => j(false, format!("✗ {name} forced, but not called")),
            Some(other) => j(
                false,
                format!("✗ {name} forced, but called {}", other.tool_name),
            ),
            None => j(true, format!("✓ {name} forced: honoured")),
        },
        Some(ToolChoice::Auto) | None => j(true, "✓ auto: the model's choice".into()),
    };
    out.push(honoured);
    let malformed = view.record.parts.parts.iter().find_map(|p| match p {
        Part::Error(e) if e.category.is_none() => Some(e.message.clone()),
        _ => None,
    });
    if let Some(c) = calls.iter().find(|c| !c.invalid.is_empty()) {
        let v = &c.invalid[0];
        let at = if v.path.is_empty() {
            String::new()
        } else {
            format!(" at {}", v.path)
        };
        out.push(j(
            false,
            format!("✗ {} invalid{at}: {}", c.tool_name, v.message),
        ));
    } else if let Some(m) = malformed {
        out.push(j(false, format!("✗ {m}")));
    } else if !calls.is_empty() {
        let s = if calls.len() == 1 { "" } else { "s" };
        out.push(j(true, format!("✓ valid call{s} against the schema")));
    }
    out
}

/// The second line of a column: finish reason, total time, time to first token.
pub fn stats(view: &RunView) -> String {
    let mut parts = Vec::new();
    if let Some(f) = view.record.finish {
        parts.push(f.as_str().to_string());
    }
    if let Some(ms) = view.record.ended_ms.filter(|_| !view.is_running()) {
        parts.push(format_ms(ms));
    }
    if let Some(ms) = view.record.first_output_ms {
        parts.push(format!("ttft {}", format_ms(ms)));
    }
    parts.join(" · ")
}

/// `text` wrapped at words to `width` cells, one string a row (spaces at a row's end dropped).
pub fn rows(text: &str, width: usize) -> Vec<String> {
    super::text_log::wrap(text, width)
        .into_iter()
        .map(|r| text[r].trim_end().to_string())
        .collect()
}

/// A column's heading wrapped to `width`: its verdict, its judgements (each with whether it
/// holds) and its figures, row by row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heading {
    pub verdict: Vec<String>,
    pub judged: Vec<(bool, String)>,
    pub stats: Vec<String>,
}

impl Heading {
    pub fn of(view: &RunView, choice: Option<&ToolChoice>, width: usize) -> Heading {
        Heading {
            verdict: rows(&verdict(view).text, width),
            judged: judge(view, choice)
                .into_iter()
                .flat_map(|j| rows(&j.text, width).into_iter().map(move |r| (j.ok, r)))
                .collect(),
            stats: rows(&stats(view), width),
        }
    }
}

/// How many rows the columns give their verdict, judgement and figures at `width`, the most
/// any column needs so that the columns stay aligned, and at most `limit` in all (the
/// judgement gives way first, then the verdict; each keeps a row). A heading longer than its
/// rows ends in `…` there; Ctrl+E and the parts still show it all.
pub fn heading_rows(c: &Compare, width: usize, limit: usize) -> [u16; 3] {
    let mut most = [1usize, 1, 1];
    for (view, choice) in c.columns.iter().zip(&c.choices) {
        let h = Heading::of(view, choice.as_ref(), width);
        most[0] = most[0].max(h.verdict.len());
        most[1] = most[1].max(h.judged.len());
        most[2] = most[2].max(h.stats.len());
    }
    let limit = limit.max(3);
    while most.iter().sum::<usize>() > limit {
        let i = if most[1] > 1 {
            1
        } else if most[0] > 1 {
            0
        } else {
            2
        };
        most[i] -= 1;
    }
    most.map(|n| n as u16)
}

/// `850 ms`, `1.25 s`.
pub fn format_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{:.2} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolscope_core::part::{FinishReason, ToolCall};
    use toolscope_core::provider::RunEvent;

    #[test]
    fn headings_wrap_at_words_and_give_way_to_the_output() {
        assert_eq!(
            rows("✓ valid call against the schema", 18),
            ["✓ valid call", "against the schema"]
        );
        let mut v = RunView::idle();
        v.record.state = RunState::Streaming;
        let c = Compare::modes(&[ToolChoice::Required], vec![v]);
        assert_eq!(
            heading_rows(&c, 4, 20),
            [2, 1, 1],
            "waiting… takes two rows"
        );
        assert_eq!(heading_rows(&c, 4, 2), [1, 1, 1], "each part keeps a row");
    }

    #[test]
    fn verdicts_say_what_the_model_did() {
        let mut v = RunView::idle();
        v.record.state = RunState::Streaming;
        assert_eq!(verdict(&v).text, "waiting…");
        v.apply(
            RunEvent::Part(Part::ToolInputStart {
                id: "c".into(),
                tool_name: "get_weather".into(),
            }),
            3,
        );
        assert_eq!(verdict(&v).text, "calling get_weather…");
        v.apply(
            RunEvent::Part(Part::tool_call(ToolCall {
                tool_call_id: "c".into(),
                tool_name: "get_weather".into(),
                input: json!({"city": "Paris"}),
                coercions: vec![],
                invalid: vec![],
                ..Default::default()
            })),
            4,
        );
        v.apply(
            RunEvent::Part(Part::Finish {
                finish_reason: FinishReason::ToolCalls,
                usage: None,
            }),
            1250,
        );
        assert_eq!(verdict(&v).text, "called get_weather(city=Paris)");
        assert_eq!(stats(&v), "tool-calls · 1.25 s");
        let judged = |c: ToolChoice| {
            judge(&v, Some(&c))
                .into_iter()
                .map(|j| (j.ok, j.text))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            judged(ToolChoice::None),
            [
                (false, "✗ none, but called get_weather".to_string()),
                (true, "✓ valid call against the schema".to_string())
            ]
        );
        assert_eq!(
            judged(ToolChoice::Tool("search_web".into()))[0].1,
            "✗ search_web forced, but called get_weather"
        );
    }

    #[test]
    fn an_invalid_call_and_a_text_answer_to_required_are_judged() {
        let mut v = RunView::idle();
        v.record.state = RunState::Streaming;
        v.apply(
            RunEvent::Part(Part::tool_call(ToolCall {
                tool_call_id: "c".into(),
                tool_name: "get_weather".into(),
                input: json!({}),
                coercions: vec![],
                invalid: vec![toolscope_core::part::Violation {
                    path: String::new(),
                    message: "\"city\" is a required property".into(),
                }],
                ..Default::default()
            })),
            4,
        );
        v.apply(
            RunEvent::Part(Part::Finish {
                finish_reason: FinishReason::ToolCalls,
                usage: None,
            }),
            5,
        );
        let j = judge(&v, Some(&ToolChoice::Required));
        assert!(j[0].ok);
        assert_eq!(
            j[1].text,
            "✗ get_weather invalid: \"city\" is a required property"
        );
        let mut text = RunView::idle();
        text.record.state = RunState::Done;
        let j = judge(&text, Some(&ToolChoice::Required));
        assert_eq!(j[0].text, "✗ required, but answered in text");
    }
}
