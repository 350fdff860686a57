//! A call cut off by the end of the output (the token limit, a broken stream) is never taken
//! for a finished call: for every protocol of the registry, every output cut at any character
//! inside a call gives either no call, or the call as it was written whole, and only when what
//! arrived could not have gone on into another call. Checked with `finish_cut`, the end the
//! provider runs take when the finish reason says the output was cut.

use serde_json::{Value, json};
use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(vec![ToolDef::new(
        "get_weather",
        "Weather for a city",
        json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]}},"required":["city"]}),
    )])
    .unwrap()
}

/// Calls whose markup shares long prefixes: a value cut short, a number cut short, an
/// argument left out at the end, a second argument cut off.
fn candidates() -> Vec<Value> {
    vec![
        json!({"city": "Paris", "days": 3}),
        json!({"city": "Paris", "days": 35}),
        json!({"city": "Paris", "days": 3, "unit": "c"}),
        json!({"city": "Par"}),
        json!({"city": "Paris"}),
        json!({"city": "Paris Nord", "days": 3}),
    ]
}

fn calls(parts: &[Part]) -> Vec<Value> {
    parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some(c.input.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_cut_call_is_never_a_finished_call() {
    let tools = tools();
    let mut failures = Vec::new();
    let mut checked = 0;
    for protocol in Protocol::all() {
        // The output starts outside reasoning, so that the calls are calls in every family.
        let protocol = protocol.with_reasoning_open(Some(false));
        let texts: Vec<(Value, String)> = candidates()
            .into_iter()
            .map(|input| {
                let text = protocol.format_call("get_weather", &input);
                (input, text)
            })
            .collect();
        for (input, text) in &texts {
            // The whole call is read as written (else the check below says nothing).
            let mut whole = Vec::new();
            let mut parser = protocol.stream_parser(&tools);
            parser.push_str(text, &mut whole);
            parser.finish_cut(&mut whole);
            if calls(&whole) != vec![input.clone()] {
                failures.push(format!(
                    "{}: the whole call {text:?} gave {:?}",
                    protocol.name(),
                    calls(&whole)
                ));
                continue;
            }
            for (cut, _) in text.char_indices().skip(1) {
                checked += 1;
                let prefix = &text[..cut];
                let mut parts = Vec::new();
                let mut parser = protocol.stream_parser(&tools);
                parser.push_str(prefix, &mut parts);
                parser.finish_cut(&mut parts);
                let found = calls(&parts);
                if found.is_empty() {
                    continue;
                }
                let ambiguous = texts
                    .iter()
                    .any(|(other, t)| other != input && t.starts_with(prefix));
                if found != vec![input.clone()] || ambiguous {
                    failures.push(format!(
                        "{}: cut at {prefix:?} gave the finished call {found:?}",
                        protocol.name()
                    ));
                }
            }
        }
    }
    assert!(checked > 1000, "only {checked} cuts checked");
    assert!(
        failures.is_empty(),
        "{} cuts gave a finished call:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Whether every value of `found` is (a prefix of) the value of the same argument in `full`:
/// an output that ended early may give less, never something else.
fn within(found: &Value, full: &Value) -> bool {
    match (found, full) {
        (Value::Object(f), Value::Object(w)) => f
            .iter()
            .all(|(k, v)| w.get(k).is_some_and(|wv| within(v, wv))),
        (Value::String(f), Value::String(w)) => w.starts_with(f.as_str()),
        (Value::Number(f), Value::Number(w)) => w.to_string().starts_with(&f.to_string()),
        (f, w) => f == w,
    }
}

/// Where the output simply ended (no finish reason saying it was cut), the formats' tolerances
/// recover a call missing its close; but what ended inside a tag (`<param` at the very end) is
/// never taken for a value.
#[test]
fn an_output_that_ends_early_gives_no_value_it_did_not_hold() {
    let tools = tools();
    let mut failures = Vec::new();
    for protocol in Protocol::all() {
        let protocol = protocol.with_reasoning_open(Some(false));
        for input in candidates() {
            let text = protocol.format_call("get_weather", &input);
            for (cut, _) in text.char_indices().skip(1) {
                let parsed = protocol.parse_generated(&tools, &text.as_bytes()[..cut]);
                for call in calls(&parsed.parts) {
                    if !within(&call, &input) {
                        failures.push(format!(
                            "{}: {:?} gave {call}",
                            protocol.name(),
                            &text[..cut]
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
