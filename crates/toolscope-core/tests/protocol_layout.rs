//! Whitespace after a call is the call's layout, not answer text, in every protocol of the
//! registry: a model that pads its answer with newlines after a call (as a small model does
//! until its token limit when the server asked for a call it would not write in markup) gives
//! no text part of newlines. Whitespace before more text stays that text's.

use serde_json::json;
use toolscope_core::part::{Collapsed, Part};
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

/// One tool, `get_weather(city)`.
fn tools() -> ToolSet {
    let city = json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]});
    let tool = ToolDef::new("get_weather", "Weather for a city", city);
    ToolSet::new(vec![tool]).unwrap()
}

/// The parts of `text`, whole and streamed a byte at a time, checked equal when collapsed.
fn parse(protocol: &Protocol, text: &str) -> Collapsed {
    let tools = tools();
    let whole = protocol.parse_generated(&tools, text.as_bytes());
    let mut p = protocol.stream_parser(&tools);
    let mut out: Vec<Part> = Vec::new();
    for b in text.as_bytes() {
        p.push(std::slice::from_ref(b), &mut out);
    }
    p.finish(&mut out);
    let whole = Collapsed::of(&whole.parts);
    let streamed = Collapsed::of(&out);
    assert_eq!(
        (&whole.text, &whole.calls),
        (&streamed.text, &streamed.calls),
        "{}: {text:?} whole and at 1-byte chunks",
        protocol.name()
    );
    whole
}

#[test]
fn whitespace_after_a_call_is_layout_not_text() {
    let input = json!({"city": "Paris"});
    let mut failures = Vec::new();
    let mut covered = Vec::new();
    for protocol in Protocol::all() {
        let protocol = protocol.with_reasoning_open(Some(false));
        let call = protocol.format_call("get_weather", &input);
        let alone = parse(&protocol, &call);
        if alone.calls.len() != 1 {
            continue;
        }
        covered.push(protocol.name());
        let name = protocol.name();
        // Padding after the call, up to the end of the output: no text of it.
        let padded = parse(&protocol, &format!("{call}\n\n \n\t\n\n"));
        if padded.calls.len() != 1 || padded.text != alone.text {
            failures.push(format!(
                "{name}: padding after the call gave text {:?} (alone: {:?}) and {} calls",
                padded.text,
                alone.text,
                padded.calls.len()
            ));
        }
        // Whitespace between two calls: no text either.
        let two = parse(&protocol, &format!("{call}\n\n{call}\n"));
        if two.calls.len() == 2 && two.text != format!("{}{}", alone.text, alone.text) {
            failures.push(format!(
                "{name}: whitespace between two calls gave text {:?}",
                two.text
            ));
        }
        // Whitespace before more text is that text's, byte for byte.
        let then = parse(&protocol, &format!("{call}\n\nIt is sunny.\n"));
        if !then.text.ends_with("\n\nIt is sunny.\n") {
            failures.push(format!(
                "{name}: the text after the call lost its leading whitespace: {:?}",
                then.text
            ));
        }
    }
    eprintln!("covered: {}", covered.join(", "));
    assert!(
        covered.len() >= 20,
        "most protocols read their own call: {covered:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The shape the real server showed: a fenced JSON call, then newlines until the token limit.
#[test]
fn a_fenced_call_padded_with_newlines_gives_the_call_alone() {
    let hermes = Protocol::from_name("hermes").unwrap();
    let text = "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n```\n\n\n\n\n\n\n\n";
    let c = parse(&hermes, text);
    assert_eq!(c.calls.len(), 1);
    assert_eq!(c.text, "", "no text part of newlines");
}
