//! Judging answers: what one request gave, held against what its scenario expects, check by
//! check; and the streamed and whole answers of the same scenario held against each other.
//!
//! Each check is passed, failed, or does not apply to an answer (then it counts for neither).
//! A fault is charged where it starts, not again for what follows from it:
//! - an answer that failed (an `error` part with a category) fails `answered`, and no other
//!   check applies to it;
//! - an answer whose missing calls are explained by markup (call markup left in the text, or
//!   a call inside the reasoning) is charged to `no-leak` or `no-call-in-reasoning`; `tool-choice`
//!   and `calls` do not apply to it;
//! - an answer that ignored the tool choice is charged to `tool-choice`; `calls` (and precision
//!   and recall) do not apply to it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolscope_core::lint::{self, Leak, find_call_in_reasoning, find_leak};
use toolscope_core::part::{FinishReason, Part, ToolCall};
use toolscope_core::protocol::{Protocol, SpanKind};
use toolscope_core::provider::RunEvent;
use toolscope_core::tool::{ToolChoice, ToolSet};

use super::suite::{ExpectedCall, Scenario};

/// The checks, in the order the scorecard lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The request got an answer (no provider error).
    Answered,
    /// `required` and a forced tool answered with calls (of that tool), `none` without.
    ToolChoice,
    /// The calls the scenario expects, no more, with the required arguments of the right type
    /// (and the text it expects).
    Calls,
    /// Every call's arguments valid against its tool's schema after coercion.
    Schema,
    /// Every call's arguments valid as sent, before any coercion.
    SchemaAsSent,
    /// The wire's finish reason is tool calls exactly when calls came.
    Finish,
    /// No call markup or special token in the answer text, nor special tokens in reasoning.
    NoLeak,
    /// No call markup inside the reasoning.
    NoCallInReasoning,
    /// Streamed arguments arrived as arguments (not `{}` first, then sent whole).
    StreamedArgs,
    /// The streamed and the whole answer made the same calls with the same arguments.
    StreamEqual,
}

impl Check {
    pub const ALL: &'static [Check] = &[
        Check::Answered,
        Check::ToolChoice,
        Check::Calls,
        Check::Schema,
        Check::SchemaAsSent,
        Check::Finish,
        Check::NoLeak,
        Check::NoCallInReasoning,
        Check::StreamedArgs,
        Check::StreamEqual,
    ];

    /// The name in reports (kebab-case).
    pub fn name(self) -> &'static str {
        match self {
            Check::Answered => "answered",
            Check::ToolChoice => "tool-choice",
            Check::Calls => "calls",
            Check::Schema => "schema",
            Check::SchemaAsSent => "schema-as-sent",
            Check::Finish => "finish",
            Check::NoLeak => "no-leak",
            Check::NoCallInReasoning => "no-call-in-reasoning",
            Check::StreamedArgs => "streamed-args",
            Check::StreamEqual => "stream-equal",
        }
    }

    /// What passing means, for the scorecard.
    pub fn label(self) -> &'static str {
        match self {
            Check::Answered => "answered (no error)",
            Check::ToolChoice => "tool choice honoured",
            Check::Calls => "calls as expected",
            Check::Schema => "arguments valid (coerced)",
            Check::SchemaAsSent => "arguments valid as sent",
            Check::Finish => "finish reason right",
            Check::NoLeak => "no markup leaked",
            Check::NoCallInReasoning => "no call in reasoning",
            Check::StreamedArgs => "streamed args not {}",
            Check::StreamEqual => "stream = whole",
        }
    }

    pub fn from_name(name: &str) -> Option<Check> {
        Check::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// One request of the battery and what came back.
#[derive(Clone, Debug)]
pub struct Answer {
    pub scenario: usize,
    /// The run (0-based) of `--runs`.
    pub run: u32,
    pub stream: bool,
    pub request: toolscope_core::provider::Request,
    /// Every event of the run, raw wire events included.
    pub events: Vec<RunEvent>,
    /// Milliseconds from sending to the first output (text, reasoning or arguments).
    pub first_token_ms: Option<u64>,
    /// Milliseconds from sending to the end.
    pub elapsed_ms: u64,
}

/// The verdict on one answer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Judged {
    /// The checks that apply, passed or not, in [`Check`] order.
    pub checks: Vec<(Check, bool)>,
    /// Calls matched, made beyond what was expected, expected and not made (when `calls`
    /// applies).
    pub counts: Option<Counts>,
    /// Why each failed check failed, in words.
    pub notes: Vec<String>,
    /// The error message of an answer that failed, and its category.
    pub error: Option<(String, String)>,
    /// Output tokens per second after the first token (streamed answers).
    pub tokens_per_second: Option<f64>,
    /// The answer had neither text nor calls nor reasoning.
    pub empty: bool,
}

/// True and false positives of calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    pub tp: u32,
    pub fp: u32,
    #[serde(rename = "fn")]
    pub fn_: u32,
}

impl Counts {
    pub fn add(&mut self, o: Counts) {
        self.tp += o.tp;
        self.fp += o.fp;
        self.fn_ += o.fn_;
    }

    /// Precision, recall and F1; 1 where nothing was expected or made.
    pub fn prf(&self) -> (f64, f64, f64) {
        let ratio = |a: u32, b: u32| if b == 0 { 1.0 } else { a as f64 / b as f64 };
        let p = ratio(self.tp, self.tp + self.fp);
        let r = ratio(self.tp, self.tp + self.fn_);
        let f = if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        };
        (p, r, f)
    }
}

impl Judged {
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|(_, ok)| *ok)
    }

    pub fn failed_checks(&self) -> Vec<Check> {
        self.checks
            .iter()
            .filter(|(_, ok)| !ok)
            .map(|(c, _)| *c)
            .collect()
    }

    fn set(&mut self, check: Check, ok: bool, note: impl FnOnce() -> String) {
        self.checks.push((check, ok));
        if !ok {
            self.notes.push(format!("{}: {}", check.name(), note()));
        }
    }
}

/// What an answer said, collected from its parts.
#[derive(Default)]
pub struct Said {
    pub text: String,
    pub reasoning: String,
    pub calls: Vec<ToolCall>,
    pub finish: Option<FinishReason>,
    pub warnings: Vec<String>,
    pub error: Option<(String, String)>,
}

impl Said {
    pub fn of(events: &[RunEvent]) -> Said {
        let mut s = Said::default();
        for p in events.iter().filter_map(RunEvent::as_part) {
            match p {
                Part::Text { text } => s.text.push_str(text),
                Part::TextDelta { delta, .. } => s.text.push_str(delta),
                Part::Reasoning { text } => s.reasoning.push_str(text),
                Part::ReasoningDelta { delta, .. } => s.reasoning.push_str(delta),
                Part::ToolCall(c) if !c.provider_executed => s.calls.push(c.as_ref().clone()),
                Part::Finish { finish_reason, .. } => s.finish = Some(*finish_reason),
                Part::Warning(w) => s.warnings.push(w.code.clone()),
                Part::Error(e) => {
                    if let Some(c) = e.category {
                        s.error = Some((c.as_str().to_string(), e.message.clone()));
                    }
                }
                _ => {}
            }
        }
        s
    }

    /// The calls as (name, arguments), in order.
    pub fn call_list(&self) -> Vec<(String, Value)> {
        self.calls
            .iter()
            .map(|c| (c.tool_name.clone(), c.input.clone()))
            .collect()
    }
}

/// Judges one answer against its scenario.
pub fn judge(scenario: &Scenario, answer: &Answer) -> Judged {
    let said = Said::of(&answer.events);
    let mut j = Judged::default();
    if let Some((category, message)) = &said.error {
        j.error = Some((category.clone(), message.clone()));
        j.set(Check::Answered, false, || format!("{category}: {message}"));
        return j;
    }
    j.checks.push((Check::Answered, true));
    let tools: &ToolSet = &scenario.tools;
    let expected = &scenario.expect.calls;
    let n = said.calls.len();
    j.empty = n == 0 && said.text.trim().is_empty() && said.reasoning.trim().is_empty();
    let leak = find_leak(tools, &said.text).or_else(|| call_in_text(tools, &said.text));
    // In reasoning, call markup is a call left there; other special tokens are a leak.
    let in_reasoning = find_call_in_reasoning(tools, &said.reasoning);
    let reasoning_leak = find_leak(tools, &said.reasoning).filter(|l| !l.call);
    let explained =
        n < expected.len() && (leak.as_ref().is_some_and(|l| l.call) || in_reasoning.is_some());
    // Tool choice.
    let honoured = match &scenario.tool_choice {
        _ if explained => None,
        ToolChoice::Required => Some((n > 0, "`required`, and no call came".to_string())),
        ToolChoice::Tool(x) => Some((
            n > 0 && said.calls.iter().all(|c| &c.tool_name == x),
            format!(
                "\"{x}\" forced, and the answer called {}",
                names_or_none(&said.calls)
            ),
        )),
        ToolChoice::None => Some((
            n == 0,
            format!(
                "`none`, and the answer called {}",
                names_or_none(&said.calls)
            ),
        )),
        ToolChoice::Auto => None,
    };
    if let Some((ok, why)) = &honoured {
        j.set(Check::ToolChoice, *ok, || why.clone());
    }
    // The calls expected.
    if !explained && honoured.as_ref().is_none_or(|(ok, _)| *ok) {
        let (counts, misses) = match_calls(expected, &said.calls);
        j.counts = Some(counts);
        let text_ok = !scenario.expect.text || !said.text.trim().is_empty();
        let ok = counts.fp == 0 && counts.fn_ == 0 && text_ok;
        j.set(Check::Calls, ok, || {
            let mut why = format!(
                "expected {} call(s), made {} ({}), {} as expected",
                expected.len(),
                n,
                names_or_none(&said.calls),
                counts.tp
            );
            for m in &misses {
                why.push_str("; ");
                why.push_str(m);
            }
            if !text_ok {
                why.push_str("; no text answer");
            }
            why
        });
    }
    if n > 0 {
        let invalid: Vec<String> = said
            .calls
            .iter()
            .flat_map(|c| {
                c.invalid
                    .iter()
                    .map(move |v| format!("{} {}: {}", c.tool_name, v.path, v.message))
            })
            .collect();
        j.set(Check::Schema, invalid.is_empty(), || invalid.join("; "));
        let coerced: Vec<String> = said
            .calls
            .iter()
            .flat_map(|c| {
                c.coercions
                    .iter()
                    .map(move |k| format!("{} {}: {} → {}", c.tool_name, k.path, k.from, k.to))
            })
            .collect();
        j.set(
            Check::SchemaAsSent,
            coerced.is_empty() && invalid.is_empty(),
            || {
                if coerced.is_empty() {
                    invalid.join("; ")
                } else {
                    format!("coerced: {}", coerced.join("; "))
                }
            },
        );
    }
    // The finish reason: the parts' reason (tool-calls when calls came) and the lint's
    // finding on the wire's own reason.
    let mismatch = said.warnings.iter().any(|w| w == lint::FINISH_MISMATCH);
    let finish_ok = !mismatch && (said.finish == Some(FinishReason::ToolCalls)) == (n > 0);
    j.set(Check::Finish, finish_ok, || {
        format!(
            "finish reason {} with {n} call(s){}",
            said.finish.map_or("none", |f| f.as_str()),
            if mismatch {
                " (the wire's reason contradicts the calls)"
            } else {
                ""
            }
        )
    });
    let leaked = leak.as_ref().or(reasoning_leak.as_ref());
    j.set(Check::NoLeak, leaked.is_none(), || {
        let l = leaked.expect("a leak");
        let place = if leak.is_some() { "text" } else { "reasoning" };
        format!("{:?} in the answer {place} at byte {}", l.markup, l.at)
    });
    if !said.reasoning.is_empty() || in_reasoning.is_some() {
        j.set(Check::NoCallInReasoning, in_reasoning.is_none(), || {
            let l = in_reasoning.as_ref().expect("a call");
            format!("{:?} in the reasoning at byte {}", l.markup, l.at)
        });
    }
    if answer.stream && n > 0 {
        let empty = said.warnings.iter().any(|w| w == lint::EMPTY_ARGS_STREAMED);
        j.set(Check::StreamedArgs, !empty, || {
            "arguments streamed as {} and then sent whole".into()
        });
    }
    if answer.stream
        && let Some(first) = answer.first_token_ms
    {
        let tokens = output_tokens(&answer.events);
        let secs = (answer.elapsed_ms.saturating_sub(first)) as f64 / 1000.0;
        if tokens > 1 && secs > 0.0 {
            j.tokens_per_second = Some(tokens as f64 / secs);
        }
    }
    j
}

/// Judges every answer of a battery against its scenario, and each streamed answer against
/// its whole twin (same scenario, same run) when both came: the verdicts, in the answers'
/// order. The terminal scorecard, the JSON and HTML reports and the playground's verify view
/// all judge through here.
pub fn judge_all(suite: &super::suite::Suite, answers: &[Answer]) -> Vec<Judged> {
    let mut judged: Vec<Judged> = answers
        .iter()
        .map(|a| judge(&suite.scenarios[a.scenario], a))
        .collect();
    for i in 0..answers.len() {
        if !answers[i].stream {
            continue;
        }
        let twin = answers.iter().position(|b| {
            !b.stream && b.scenario == answers[i].scenario && b.run == answers[i].run
        });
        if let Some(t) = twin {
            let whole = judged[t].clone();
            judge_pair((&answers[i], &mut judged[i]), (&answers[t], &whole));
        }
    }
    judged
}

/// Judges the streamed and the whole answer of one scenario and run against each other: adds
/// `stream-equal` to the streamed answer's verdict when both answered.
pub fn judge_pair(streamed: (&Answer, &mut Judged), whole: (&Answer, &Judged)) {
    let (sa, sj) = streamed;
    let (wa, wj) = whole;
    if sj.error.is_some() || wj.error.is_some() {
        return;
    }
    let s = Said::of(&sa.events).call_list();
    let w = Said::of(&wa.events).call_list();
    let ok = s == w;
    let note = || {
        let show = |l: &[(String, Value)]| {
            l.iter()
                .map(|(n, v)| format!("{n}({})", clip(&v.to_string(), 120)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!("streamed: [{}]; whole: [{}]", show(&s), show(&w))
    };
    let at = sj
        .checks
        .iter()
        .position(|(c, _)| *c > Check::StreamEqual)
        .unwrap_or(sj.checks.len());
    sj.checks.insert(at, (Check::StreamEqual, ok));
    if !ok {
        sj.notes
            .push(format!("{}: {}", Check::StreamEqual.name(), note()));
    }
}

/// The output tokens of an answer: its usage when reported, else an estimate (4 bytes a
/// token) from the output text.
pub fn output_tokens(events: &[RunEvent]) -> u64 {
    let reported = events.iter().rev().find_map(|e| match e.as_part() {
        Some(Part::Finish { usage: Some(u), .. }) => u.output_tokens,
        _ => None,
    });
    reported.unwrap_or_else(|| {
        let bytes: usize = events
            .iter()
            .map(|e| match e {
                RunEvent::Output(o) => o.text.len(),
                RunEvent::Part(Part::ReasoningDelta { delta, .. }) => delta.len(),
                _ => 0,
            })
            .sum();
        (bytes / 4) as u64
    })
}

/// A call written in the answer text without any protocol's marker — a JSON envelope naming a
/// tool, bare or in a fence — that the server did not read as a call: it counts as call markup
/// left in the text.
fn call_in_text(tools: &ToolSet, text: &str) -> Option<Leak> {
    if text.trim().is_empty() || tools.is_empty() {
        return None;
    }
    let detected = Protocol::detect(tools, text.as_bytes());
    let parsed = detected
        .protocol
        .stream_parser(tools)
        .parse_whole_text(text);
    let first = parsed.spans.iter().find(|s| s.kind == SpanKind::ToolCall)?;
    let at = first.start.min(text.len());
    let end = first.end.min(text.len()).max(at);
    let shown: String = text
        .get(at..end)
        .unwrap_or_default()
        .chars()
        .take(60)
        .collect();
    parsed
        .parts
        .iter()
        .any(|p| matches!(p, Part::ToolCall(_)))
        .then_some(Leak {
            at,
            markup: shown,
            call: true,
        })
}

fn names_or_none(calls: &[ToolCall]) -> String {
    if calls.is_empty() {
        return "nothing".into();
    }
    calls
        .iter()
        .map(|c| c.tool_name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Matches the calls made to the calls expected: each expected call takes the first call not
/// yet taken of its tool that has what it requires.
fn match_calls(expected: &[ExpectedCall], made: &[ToolCall]) -> (Counts, Vec<String>) {
    let mut taken = vec![false; made.len()];
    let mut tp = 0;
    let mut misses = Vec::new();
    for e in expected {
        let mut why_not = None;
        let found = made.iter().enumerate().position(|(i, c)| {
            if taken[i] || c.tool_name != e.tool {
                return false;
            }
            match requirement_missed(e, &c.input) {
                None => true,
                Some(m) => {
                    why_not.get_or_insert(m);
                    false
                }
            }
        });
        match found {
            Some(i) => {
                taken[i] = true;
                tp += 1;
            }
            None => misses.push(match why_not {
                Some(m) => format!("{}: {m}", e.tool),
                None => format!("{}: not called", e.tool),
            }),
        }
    }
    let counts = Counts {
        tp,
        fp: (made.len() as u32).saturating_sub(tp),
        fn_: (expected.len() as u32).saturating_sub(tp),
    };
    (counts, misses)
}

/// What the arguments lack of what the expected call requires, if anything.
fn requirement_missed(e: &ExpectedCall, input: &Value) -> Option<String> {
    for (arg, t) in &e.args {
        match input.get(arg) {
            None => return Some(format!("argument \"{arg}\" missing")),
            Some(v) if !is_type(v, t) => {
                return Some(format!("argument \"{arg}\" is {}, not {t}", type_of(v)));
            }
            _ => {}
        }
    }
    for (arg, needles) in &e.contains {
        let Some(s) = input.get(arg).and_then(Value::as_str) else {
            return Some(format!("argument \"{arg}\" is not a string"));
        };
        if let Some(n) = needles.iter().find(|n| !s.contains(n.as_str())) {
            return Some(format!("argument \"{arg}\" lost {n:?}"));
        }
    }
    for (arg, least) in &e.min_length {
        let len = match input.get(arg) {
            Some(Value::String(s)) => s.chars().count(),
            Some(Value::Array(a)) => a.len(),
            _ => 0,
        };
        if len < *least {
            return Some(format!(
                "argument \"{arg}\" has length {len}, less than {least}"
            ));
        }
    }
    None
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        "integer" => {
            v.as_i64().is_some()
                || v.as_u64().is_some()
                || v.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => false,
    }
}

fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// At most `max` characters of `s`.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let cut: String = s.chars().take(max).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolscope_core::tool::ToolDef;

    /// One tool, `get_weather(city)`.
    fn tools() -> ToolSet {
        let city =
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]});
        let tool = ToolDef::new("get_weather", "Weather for a city", city);
        ToolSet::new(vec![tool]).unwrap()
    }

    #[test]
    fn a_call_written_as_text_is_found_and_prose_is_not() {
        let fenced =
            "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```";
        let found = call_in_text(&tools(), fenced).expect("the fenced envelope");
        assert!(found.call);
        assert!(found.markup.contains("get_weather"), "{found:?}");
        for prose in [
            "It is sunny in Paris, 18 °C.",
            "I would use get_weather for that, but tools are off.",
            "{\"answer\": 42}",
            "",
        ] {
            assert_eq!(call_in_text(&tools(), prose), None, "{prose}");
        }
    }

    #[test]
    fn counts_give_precision_recall_and_f1() {
        let c = Counts {
            tp: 1,
            fp: 0,
            fn_: 1,
        };
        let (p, r, f) = c.prf();
        assert_eq!((p, r), (1.0, 0.5));
        assert!((f - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(Counts::default().prf(), (1.0, 1.0, 1.0));
    }
}
