//! The whole-text parse reads JSON call bodies in one pass (strict JSON, coerced at once) where
//! the stream reads them event by event: both must give the same parts and spans, coercions
//! (their order included), validation, ids and errors, for every protocol.

use serde_json::{Value, json};
use toolscope_core::part::Part;
use toolscope_core::protocol::{Parsed, Protocol, answer_parser, generate_parts};
use toolscope_core::tool::{ToolDef, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Weather",
            json!({"type":"object","properties":{
                "city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]},
                "coords":{"type":"object","properties":{"lat":{"type":"number"},"lon":{"type":"number"}}},
                "when":{"anyOf":[{"type":"integer"},{"type":"string","format":"date"}]}},
                "required":["city"]}),
        ),
        ToolDef::new(
            "calc",
            "Numbers",
            json!({"type":"object","properties":{
                "nums":{"type":"array","items":{"type":"number"}},
                "tags":{"type":"array","items":{"type":"string"}},
                "flag":{"type":"boolean"},
                "opts":{"$ref":"#/$defs/opts"}},
                "$defs":{"opts":{"type":"object","properties":{"n":{"type":"integer"}}}}}),
        ),
        ToolDef::new("get_location", "Where am I", json!({"type":"object"})),
    ])
    .expect("valid tools")
}

/// The stream parser over the text as one chunk (which never takes the one-pass path), collapsed
/// to generate parts.
fn streamed(p: &Protocol, tools: &ToolSet, text: &str) -> Parsed {
    let mut parser = p.stream_parser(tools);
    let mut out = Vec::new();
    parser.push(text.as_bytes(), &mut out);
    parser.finish(&mut out);
    Parsed {
        spans: parser.spans().to_vec(),
        parts: generate_parts(out),
    }
}

fn same(p: &Protocol, tools: &ToolSet, text: &str) -> Parsed {
    let whole = p.parse_generated(tools, text.as_bytes());
    let stream = streamed(p, tools, text);
    assert_eq!(whole.parts, stream.parts, "{}: {text:?}", p.name());
    assert_eq!(whole.spans, stream.spans, "{}: {text:?}", p.name());
    assert_eq!(
        p.parse_text(tools, text).parts,
        stream.parts,
        "{}: {text:?}",
        p.name()
    );
    whole
}

/// Arguments that coercion changes in several places (the order of its records is checked),
/// that fit already, that nest, and that name no known tool.
fn sample_args() -> Vec<(&'static str, Value)> {
    vec![
        (
            "get_weather",
            json!({"city": "Zürich \"old\" \\ town\n😀", "days": "3", "unit": "c",
                   "coords": {"lat": "47.3", "lon": 8.5}, "when": "12"}),
        ),
        (
            "get_weather",
            json!({"city": 12, "days": 3.0, "extra": [1, {"a": null}]}),
        ),
        (
            "calc",
            json!({"nums": ["1", 2.5, "-3e2"], "tags": "a, b", "flag": "TRUE", "opts": {"n": "7"}}),
        ),
        (
            "calc",
            json!({"nums": "1, 2", "tags": [], "opts": "{\"n\": 1}"}),
        ),
        ("get_location", json!({})),
        ("nope", json!({"x": "1", "y": [true, -0.0, 1e300]})),
    ]
}

#[test]
fn every_protocol_reads_its_calls_whole_as_it_streams_them() {
    let tools = tools();
    let args = sample_args();
    for p in Protocol::all() {
        let p = p.with_reasoning_open(Some(false));
        for (name, input) in &args {
            let call = p.format_call(name, input);
            same(&p, &tools, &call);
            same(&p, &tools, &format!("Let me see.\n{call}\nDone."));
        }
        let calls: Vec<(&str, &Value)> = args.iter().map(|(n, a)| (*n, a)).collect();
        same(&p, &tools, &p.format_calls(&calls));
    }
}

#[test]
fn coercions_of_a_call_read_whole_are_reported_in_document_order() {
    let tools = tools();
    let hermes = Protocol::from_name("hermes").unwrap();
    let text = "<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"nums\": [\"1\", 2, \"3\"], \"flag\": \"TRUE\", \"opts\": {\"n\": \"7\"}}}\n</tool_call>";
    let parsed = same(&hermes, &tools, text);
    let [Part::ToolCall(call)] = parsed.parts.as_slice() else {
        panic!("one call: {:?}", parsed.parts)
    };
    assert_eq!(
        call.input,
        json!({"nums": [1, 2, 3], "flag": true, "opts": {"n": 7}})
    );
    let paths: Vec<&str> = call.coercions.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(paths, ["/nums/0", "/nums/2", "/flag", "/opts/n"]);
}

/// Envelopes whose reading depends on the order and repetition of their keys, and bodies that
/// are relaxed JSON: the one-pass reader must leave each to the events or read it as they do.
#[test]
fn envelopes_read_whole_keep_every_rule_of_the_events() {
    let tools = tools();
    let bodies = [
        // Arguments before the name (held, coerced at the close).
        r#"{"arguments": {"city": "Oslo", "days": "2"}, "name": "get_weather"}"#,
        // Arguments as a JSON string.
        r#"{"name": "get_weather", "arguments": "{\"city\": \"Oslo\", \"days\": \"2\"}"}"#,
        // Other keys, and the other spellings of both.
        r#"{"id": "x1", "type": "function", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}"#,
        // No arguments at all.
        r#"{"name": "get_location"}"#,
        // Two names, two argument objects after the name, arguments twice before it.
        r#"{"name": "get_weather", "tool_name": "calc", "arguments": {}}"#,
        r#"{"name": "get_weather", "arguments": {"city": "A"}, "parameters": {"city": "B"}}"#,
        r#"{"arguments": {"city": "A"}, "parameters": {"city": "B"}, "name": "get_weather"}"#,
        // A key given twice (left to the events).
        r#"{"name": "get_weather", "arguments": {"city": "A", "city": "B"}}"#,
        // Names that are no names.
        r#"{"name": "  ", "arguments": {}}"#,
        r#"{"name": 7, "arguments": {}}"#,
        r#"{"name": "not a name!", "arguments": {}}"#,
        r#"{"arguments": {}}"#,
        // Arrays of calls, and arrays with something else in them.
        r#"[{"name": "get_location"}, {"name": "get_weather", "arguments": {"city": "B"}}]"#,
        r#"[{"name": "get_location"}, "get_weather"]"#,
        r#"[]"#,
        // Relaxed JSON, which only the events read.
        r#"{name: 'get_weather', arguments: {city: 'Oslo', days: '2',},}"#,
        "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"line\nbreak\"}}",
        r#"{"name": "get_weather", "arguments": {"city": "He said "hi" ok"}}"#,
        // Cut.
        r#"{"name": "get_weather", "arguments": {"city": "Os"#,
    ];
    let hermes = Protocol::from_name("hermes").unwrap();
    for body in bodies {
        same(
            &hermes,
            &tools,
            &format!("Sure.\n<tool_call>\n{body}\n</tool_call>\nok"),
        );
        same(&hermes, &tools, &format!("<tool_call>{body}"));
    }
    // The same bodies where each protocol writes a JSON envelope or arguments object.
    for p in Protocol::all() {
        let p = p.with_reasoning_open(Some(false));
        let marker = p.format_call("get_location", &json!({}));
        for body in bodies {
            let text = marker.replace("{}", body);
            same(&p, &tools, &text);
        }
    }
}

/// The tool-choice answer (a whole JSON envelope, no protocol) reads the same whole.
#[test]
fn the_answer_parser_reads_a_whole_answer_as_it_streams_it() {
    let tools = tools();
    for text in [
        r#"{"name": "get_weather", "arguments": {"city": "Oslo", "days": "2"}}"#,
        r#"{"name": "nope", "arguments": {"x": 1}}"#,
        r#"Here: {"name": "get_location", "arguments": {}} done"#,
    ] {
        let whole = answer_parser(&tools).parse_whole_text(text);
        let mut p = answer_parser(&tools);
        let mut out = Vec::new();
        p.push_str(text, &mut out);
        p.finish(&mut out);
        assert_eq!(whole.parts, generate_parts(out), "{text}");
    }
}
