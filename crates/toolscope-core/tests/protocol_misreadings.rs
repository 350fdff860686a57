//! Misreadings, each checked for every protocol of the registry whose format has the construct
//! (the tests name the protocols they covered).

use serde_json::{Value, json};
use toolscope_core::part::{Collapsed, Part};
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}),
        ),
        ToolDef::new(
            "closed",
            "A tool whose schema forbids other arguments",
            json!({"type":"object","properties":{"x":{"type":"string"}},"additionalProperties":false}),
        ),
    ])
    .unwrap()
}

/// A parameter the schema does not list ends the parameter before it like any other: its value
/// is kept (validation reports it where the schema forbids it), and the value before it does
/// not swallow it.
#[test]
fn a_parameter_the_schema_does_not_list_is_its_own_argument() {
    let tools = tools();
    let mut failures = Vec::new();
    let cases = [
        ("get_weather", json!({"city": "Paris", "note": "hello"})),
        ("get_weather", json!({"note": "hello", "city": "Paris"})),
        (
            "get_weather",
            json!({"city": "Paris", "note": "two\nlines", "days": 3}),
        ),
        ("closed", json!({"x": "1", "z": "hello"})),
    ];
    let mut covered = Vec::new();
    for protocol in Protocol::all() {
        let protocol = protocol.with_reasoning_open(Some(false));
        // Where an argument's element is named after the argument (`<note>hello</note>`), an
        // element the schema does not list cannot be told from markup in the value before it
        // (HTML, say): those formats keep their lookahead, and are not covered here.
        if protocol
            .format_call("get_weather", &cases[0].1)
            .contains("<note>")
        {
            eprintln!(
                "{}: arguments are elements named after them; not covered",
                protocol.name()
            );
            continue;
        }
        covered.push(protocol.name());
        for (name, input) in &cases {
            let text = protocol.format_call(name, input);
            let parsed = protocol.parse_generated(&tools, text.as_bytes());
            let c = Collapsed::of(&parsed.parts);
            let got: Vec<&Value> = c.calls.iter().map(|(_, v)| v).collect();
            if got != vec![input] {
                failures.push(format!("{}: {text:?} gave {got:?}", protocol.name()));
                continue;
            }
            let invalid = parsed.parts.iter().any(|p| {
                matches!(p, Part::ToolCall(call) if call.invalid.iter().any(|v| v.message.contains('z') || v.path.contains('z')))
            });
            if *name == "closed" && !invalid {
                failures.push(format!(
                    "{}: the undeclared z of a closed schema is not reported: {:?}",
                    protocol.name(),
                    parsed.parts
                ));
            }
        }
    }
    eprintln!("covered: {}", covered.join(", "));
    for markup in [
        "qwen3-coder",
        "minimax-m2",
        "glm-4.5",
        "glm-4.7",
        "deepseek-dsml",
        "seed-oss",
    ] {
        assert!(covered.contains(&markup), "{markup} is not covered");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Parses `text` whole and at 1-byte chunks; both must agree.
fn parse_both(
    protocol: &Protocol,
    tools: &ToolSet,
    text: &str,
) -> (Collapsed, Vec<toolscope_core::protocol::Span>) {
    let parsed = protocol.parse_generated(tools, text.as_bytes());
    let whole = Collapsed::of(&parsed.parts);
    let mut parser = protocol.stream_parser(tools);
    let mut parts = Vec::new();
    for b in text.as_bytes() {
        parser.push(std::slice::from_ref(b), &mut parts);
    }
    parser.finish(&mut parts);
    assert_eq!(
        Collapsed::of(&parts),
        whole,
        "{}: 1-byte chunks of {text:?}",
        protocol.name()
    );
    assert_eq!(
        parser.spans(),
        parsed.spans.as_slice(),
        "{}: spans of {text:?}",
        protocol.name()
    );
    (whole, parsed.spans)
}

/// A family's end-of-turn tokens are format: taken out of the answer's text and reasoning, kept
/// in the raw output under a span.
#[test]
fn end_tokens_are_not_answer_text() {
    let tools = tools();
    let mut failures = Vec::new();
    let mut covered = Vec::new();
    let input = json!({"city": "Paris"});
    for protocol in Protocol::all() {
        let protocol = protocol.with_reasoning_open(Some(false));
        if protocol.end_tokens().is_empty() {
            eprintln!("{}: declares no end tokens", protocol.name());
            continue;
        }
        covered.push(protocol.name());
        let call = protocol.format_call("get_weather", &input);
        for token in protocol.end_tokens() {
            for (text, calls) in [
                (format!("Sure, it is sunny.{token}"), 0),
                (format!("{call}{token}"), 1),
                (format!("Let me check.\n{call}\n{token}\n"), 1),
                (format!("Done.{token}{token}"), 0),
            ] {
                let (got, spans) = parse_both(&protocol, &tools, &text);
                let leaked = got.text.contains(token) || got.reasoning.contains(token);
                if leaked || got.calls.len() != calls {
                    failures.push(format!(
                        "{}: {text:?} gave text {:?}, reasoning {:?}, calls {:?}",
                        protocol.name(),
                        got.text,
                        got.reasoning,
                        got.calls
                    ));
                }
                // Nothing lost: every token's bytes are under a span.
                for (at, _) in text.match_indices(token) {
                    let end = at + token.len();
                    if !spans.iter().any(|s| s.start <= at && end <= s.end) {
                        failures.push(format!(
                            "{}: {token} at {at} of {text:?} is under no span: {spans:?}",
                            protocol.name()
                        ));
                    }
                }
            }
        }
    }
    eprintln!("covered: {}", covered.join(", "));
    assert!(
        covered.len() >= 20,
        "only {} protocols declare end tokens",
        covered.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Takes out what servers that decode with `skip_special_tokens` strip: special tokens of the
/// shapes the families use (`<|…|>`, `<｜…｜>`, `[TOOL_CALLS]`, `<TOOLCALL>`).
fn strip_special(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    'outer: while !rest.is_empty() {
        for (open, close) in [
            ("<|", "|>"),
            ("<｜", "｜>"),
            ("</TOOLCALL", ">"),
            ("<TOOLCALL", ">"),
        ] {
            if let Some(after) = rest.strip_prefix(open)
                && let Some(end) = after.find(close)
                && !after[..end].contains(['<', '{', '"', '\n'])
            {
                rest = &after[end + close.len()..];
                continue 'outer;
            }
        }
        if let Some(after) = rest.strip_prefix('[')
            && let Some(end) = after.find(']')
        {
            let inner = &after[..end];
            if !inner.is_empty() && inner.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
                rest = &after[end + 1..];
                continue;
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A call whose opening special token the server stripped: where what is left is a JSON call
/// envelope naming an offered tool (alone, or at the end after text), it is read as a call with
/// an error part saying the opener was missing; what only looks like one stays text.
#[test]
fn a_call_whose_opener_was_stripped_is_read_and_reported() {
    let tools = tools();
    let mut failures = Vec::new();
    let mut covered = Vec::new();
    let input = json!({"city": "Paris"});
    for protocol in Protocol::all() {
        let protocol = protocol.with_reasoning_open(Some(false));
        let mut call = protocol.format_call("get_weather", &input);
        if protocol.name() == "mistral" {
            // Its older form, an array of envelopes, is the one whose rest is unambiguous.
            call = format!("[TOOL_CALLS] [{{\"name\": \"get_weather\", \"arguments\": {input}}}]");
        }
        let stripped = strip_special(&call);
        let json_left = stripped != call
            && serde_json::from_str::<Value>(stripped.trim())
                .is_ok_and(|v| v.is_object() || v.is_array());
        if !json_left {
            continue;
        }
        // Formats whose calls are bare JSON anyway read it without a missing opener.
        let plain = protocol.parse_generated(&tools, call.as_bytes());
        covered.push(protocol.name());
        // A format whose model writes the JSON bare at the start (Llama's JSON calls) reads it
        // there as its own form: only what follows text is a stripped opener.
        let alone = protocol.parse_generated(&tools, stripped.as_bytes());
        let native_at_start = Collapsed::of(&alone.parts).errors.is_empty()
            && !Collapsed::of(&alone.parts).calls.is_empty();
        let mut texts = vec![format!("Let me check.\n{}\n", stripped.trim())];
        if !native_at_start {
            texts.push(stripped.clone());
            texts.push(format!(" {stripped}"));
        }
        for text in texts {
            let (got, _) = parse_both(&protocol, &tools, &text);
            if got.calls != Collapsed::of(&plain.parts).calls
                || !got.errors.iter().any(|e| e == "missing-call-opener")
            {
                failures.push(format!("{}: {text:?} gave {got:?}", protocol.name()));
            }
        }
        // What only looks like one stays text, silently.
        let lead = if native_at_start { "Text.\n" } else { "" };
        for text in [
            format!("{lead}[1, 2]"),
            format!("{lead}{{\"a\": 1}}"),
            format!("{lead}{}", stripped.replace("get_weather", "not_a_tool")),
            format!("{lead}{}\nand then more text", stripped.trim()),
            format!("Inline {} here", stripped.trim()),
        ] {
            let (got, _) = parse_both(&protocol, &tools, &text);
            if !got.calls.is_empty() || !got.errors.is_empty() || got.text != text {
                failures.push(format!("{}: {text:?} gave {got:?}", protocol.name()));
            }
        }
    }
    eprintln!("covered: {}", covered.join(", "));
    for p in [
        "mistral",
        "llama3-json",
        "granite",
        "command-r",
        "apertus",
        "nemotron",
    ] {
        assert!(covered.contains(&p), "{p} is not covered ({covered:?})");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A code fence around a call (```` ```json ```` on the line before it, ```` ``` ```` after) is
/// format in every protocol, as the JSON formats always read it: the call is read and the fence
/// lines are no text. A fence around anything else stays text, and a fence inside a call's
/// arguments stays in the value.
#[test]
fn a_fence_around_a_call_is_format_in_every_protocol() {
    let tools = ToolSet::new(vec![ToolDef::new(
        "write_file",
        "Write a file",
        json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
    )])
    .unwrap();
    let plain = json!({"path": "/a"});
    let code = json!({"path": "/b.md", "content": "# T\n```\nx = 1\n```\n"});
    let mut failures = Vec::new();
    for protocol in Protocol::all() {
        let protocol = protocol.with_reasoning_open(Some(false));
        for input in [&plain, &code] {
            let call = protocol.format_call("write_file", input);
            let alone = protocol.parse_generated(&tools, call.as_bytes());
            let want = Collapsed::of(&alone.parts).calls;
            // A call that is a fence itself (gemma's ```tool_call) is not wrapped in another.
            if want.len() != 1 || call.starts_with("```") {
                continue;
            }
            for (text, rest) in [
                (format!("```json\n{call}\n```"), ""),
                (format!("Sure:\n```\n{call}\n```\nDone."), "Sure:\n\nDone."),
            ] {
                let (got, _) = parse_both(&protocol, &tools, &text);
                if got.calls != want
                    || got.text.trim() != rest.trim()
                    || got.text.contains("```json")
                {
                    failures.push(format!("{}: {text:?} gave {got:?}", protocol.name()));
                }
            }
        }
        let prose = "Run this:\n```python\nprint(1)\n```\nok";
        let (got, _) = parse_both(&protocol, &tools, prose);
        if got.text != prose || !got.calls.is_empty() {
            failures.push(format!("{}: {prose:?} gave {got:?}", protocol.name()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An output read as starting inside reasoning because the family's template usually opens the
/// think block, in a run where it did not (thinking off): a call before any close marker is a
/// call, not reasoning. The text before it stays reasoning (a stream cannot take back what it
/// sent); what comes after the call is answer text. A block the model closes itself is still
/// reasoning, calls and all, by the family's own rule.
#[test]
fn a_call_ends_reasoning_the_template_was_presumed_to_open() {
    let tools = tools();
    let input = json!({"city": "Paris"});
    let mut covered = Vec::new();
    for protocol in Protocol::all() {
        let r = protocol.reasoning();
        if !protocol.reasoning_open() || r.calls_inside {
            continue;
        }
        let (_, close) = r
            .markers
            .expect("a protocol that starts inside reasoning has markers");
        let call = protocol.format_call("get_weather", &input);
        let name = protocol.name();

        let text = format!("Let me look.{call}\nDone.");
        let (got, _) = parse_both(&protocol, &tools, &text);
        assert_eq!(
            got.calls,
            vec![("get_weather".to_string(), input.clone())],
            "{name}: {text:?}"
        );
        assert_eq!(got.reasoning.trim(), "Let me look.", "{name}: {text:?}");
        assert_eq!(got.text.trim(), "Done.", "{name}: {text:?}");
        assert!(got.errors.is_empty(), "{name}: {text:?}: {:?}", got.errors);

        // A call and nothing before it: no reasoning at all.
        let (got, spans) = parse_both(&protocol, &tools, &call);
        assert_eq!(got.calls.len(), 1, "{name}: {call:?}");
        assert_eq!(got.reasoning, "", "{name}: {call:?}");
        assert!(
            spans
                .iter()
                .all(|s| s.kind != toolscope_core::protocol::SpanKind::Reasoning),
            "{name}: {call:?}: {spans:?}"
        );

        // With its close marker, the block is the family's: markup in it is reasoning.
        let close = if protocol.reasoning_stems() {
            format!("{close}>")
        } else {
            close.to_string()
        };
        {
            let text = format!("Thinking.{close}Answer.");
            let (got, _) = parse_both(&protocol, &tools, &text);
            assert_eq!(
                (got.reasoning.trim(), got.text.trim()),
                ("Thinking.", "Answer."),
                "{name}"
            );
        }
        covered.push(name);
    }
    assert!(covered.len() >= 4, "covered only {covered:?}");
}

/// A value the format itself states is a string (K2 Horizon's `<ifm|arg_type>string`, Kimi K3's
/// `type="string"`, DSML's and GCML's `string="true"`) stays the text it is where the schema
/// does not declare the argument (`12345` is no number then); where the schema declares it,
/// the schema types it whatever the format said.
#[test]
fn a_value_the_format_states_is_text_stays_text_when_undeclared() {
    let tools = tools();
    let cases = [
        (
            "k2-horizon",
            "<ifm|tool_calls><ifm|tool_call>get_weather\n<ifm|arg_key>city</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>Oslo</ifm|arg_value><ifm|arg_key>zip</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>12345</ifm|arg_value><ifm|arg_key>days</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>3</ifm|arg_value><ifm|arg_key>n</ifm|arg_key><ifm|arg_value>12</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
        ),
        (
            "kimi-k3",
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Oslo<|close|>argument<|sep|><|open|>argument key=\"zip\" type=\"string\"<|sep|>12345<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"string\"<|sep|>3<|close|>argument<|sep|><|open|>argument key=\"n\"<|sep|>12<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
        ),
        (
            "deepseek-dsml",
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Oslo</｜DSML｜parameter>\n<｜DSML｜parameter name=\"zip\" string=\"true\">12345</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"true\">3</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">12</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
        ),
        (
            "gigachat",
            "<｜GCML｜tool_calls><｜GCML｜invoke name=\"get_weather\"><｜GCML｜parameter name=\"city\" string=\"true\">Oslo</｜GCML｜parameter><｜GCML｜parameter name=\"zip\" string=\"true\">12345</｜GCML｜parameter><｜GCML｜parameter name=\"days\" string=\"true\">3</｜GCML｜parameter><｜GCML｜parameter name=\"n\" string=\"false\">12</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>",
        ),
    ];
    each_reads_one_call(
        &cases,
        &tools,
        json!({"city": "Oslo", "zip": "12345", "days": 3, "n": 12}),
    );
}

/// Each `(protocol, text)`, read as starting outside reasoning, whole and at 1-byte chunks,
/// gives one `get_weather` call with `want` as its input and no error.
fn each_reads_one_call(cases: &[(&str, &str)], tools: &ToolSet, want: Value) {
    for (name, text) in cases {
        let protocol = Protocol::from_name(name)
            .unwrap()
            .with_reasoning_open(Some(false));
        let (got, _) = parse_both(&protocol, tools, text);
        assert_eq!(
            got.calls,
            vec![("get_weather".to_string(), want.clone())],
            "{name}"
        );
        assert!(got.errors.is_empty(), "{name}: {:?}", got.errors);
    }
}

/// One argument that wraps all the others (`<param name="arguments">{"city": …}</param>`), named
/// `arguments`, `parameters` or `properties`, which the schema does not declare: its members
/// are the arguments (reported as a coercion). A tool that declares such an argument keeps it.
#[test]
fn a_wrapper_argument_holding_the_arguments_is_unwrapped() {
    let tools = ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}),
        ),
        ToolDef::new(
            "run",
            "Runs a command",
            json!({"type":"object","properties":{"arguments":{"type":"string"}}}),
        ),
    ])
    .unwrap();
    let markup = [
        "minicpm5",
        "qwen3-coder",
        "glm-4.5",
        "deepseek-dsml",
        "minimax-m2",
        "seed-oss",
        "dots",
    ];
    for name in markup {
        let protocol = Protocol::from_name(name)
            .unwrap()
            .with_reasoning_open(Some(false));
        for wrapper in ["arguments", "properties"] {
            let call = protocol.format_call(
                "get_weather",
                &json!({ wrapper: "{'city': 'Paris', \"days\": \"2\"}" }),
            );
            let (got, _) = parse_both(&protocol, &tools, &call);
            assert_eq!(
                got.calls,
                vec![(
                    "get_weather".to_string(),
                    json!({"city": "Paris", "days": 2})
                )],
                "{name}: {call:?}"
            );
            assert!(got.errors.is_empty(), "{name}: {:?}", got.errors);
        }
        let call = protocol.format_call("run", &json!({"arguments": "{\"a\": 1}"}));
        let (got, _) = parse_both(&protocol, &tools, &call);
        assert_eq!(
            got.calls,
            vec![("run".to_string(), json!({"arguments": "{\"a\": 1}"}))],
            "{name}: {call:?}"
        );
    }
}

/// Inkling: a tool block the prompt opened (the prompt ends with `<|message_model|>`, so the
/// output begins with the tool's name or the content token), and a tool block whose
/// `<|message_model|>` the model left out, are calls; what does not hold a call stays text.
#[test]
fn inkling_tool_blocks_without_their_opener_are_calls() {
    let p = Protocol::from_name("inkling").unwrap();
    let tools = tools();
    let env = "{\"name\":\"get_weather\",\"args\":{\"city\":\"Paris\"}}";
    let weather = vec![("get_weather".to_string(), json!({"city": "Paris"}))];
    let calls = [
        (
            format!("get_weather<|content_invoke_tool_json|>{env}<|end_message|>"),
            "",
        ),
        (
            format!("<|content_invoke_tool_json|>{env}<|end_message|>"),
            "",
        ),
        (format!("<|content_invoke_tool_json|>{env}"), ""),
        (
            format!("Let me check.<|end_message|><|content_invoke_tool_json|>{env}<|end_message|>"),
            "Let me check.",
        ),
        (
            format!(
                "<|message_model|><|content_text|>Sure.<|end_message|><|content_invoke_tool_json|>{env}<|end_message|>"
            ),
            "Sure.",
        ),
    ];
    for (text, answer) in calls {
        let (got, spans) = parse_both(&p, &tools, &text);
        assert_eq!(got.calls, weather, "{text:?}");
        assert_eq!(got.text, answer, "{text:?}");
        assert!(got.errors.is_empty(), "{text:?}: {:?}", got.errors);
        assert!(
            spans
                .iter()
                .any(|s| s.kind == toolscope_core::protocol::SpanKind::ToolCall),
            "{text:?}"
        );
    }
    // A broken envelope is reported; words before the token that are no tool's name are text.
    let (got, _) = parse_both(
        &p,
        &tools,
        "<|content_invoke_tool_json|>{\"name\": broken<|end_message|>",
    );
    assert!(got.calls.is_empty() && !got.errors.is_empty(), "{got:?}");
    let (got, _) = parse_both(&p, &tools, "Hello there.");
    assert_eq!((got.text.as_str(), got.calls.len()), ("Hello there.", 0));
}

/// A reasoning close marker with no open marker before it, read with a family default that
/// starts outside reasoning (the prompt opened reasoning unannounced: Kimi K3's and Qwen 3's
/// thinking templates do): the marker is format, never answer text, and a notice says the
/// text before it was reasoning read as text and how to read such outputs.
#[test]
fn a_close_marker_without_its_open_marker_is_format_and_a_notice() {
    let tools = tools();
    let mut covered = Vec::new();
    for protocol in Protocol::all() {
        let Some((_, close)) = protocol.reasoning().markers else {
            continue;
        };
        if protocol.reasoning_open() {
            continue;
        }
        let close = if protocol.takes_marker_suffix() {
            format!("{close}6124c78e>")
        } else if protocol.reasoning_stems() {
            format!("{close}>")
        } else {
            close.to_string()
        };
        let name = protocol.name();
        let text = format!("Thinking.{close}Answer.");
        let (got, spans) = parse_both(&protocol, &tools, &text);
        assert_eq!(
            (got.reasoning.as_str(), got.text.as_str()),
            ("", "Thinking.Answer."),
            "{name}"
        );
        assert!(
            spans
                .iter()
                .any(|s| s.kind == toolscope_core::protocol::SpanKind::Reasoning),
            "{name}: {spans:?}"
        );
        let parsed = protocol.parse_generated(&tools, text.as_bytes());
        let notices = parsed
            .parts
            .iter()
            .filter(|p| {
                serde_json::to_string(p)
                    .unwrap()
                    .contains("reasoning-close-without-open")
            })
            .count();
        assert_eq!(notices, 1, "{name}: {:?}", parsed.parts);
        covered.push(name);
    }
    assert!(
        covered.contains(&"kimi-k3") && covered.contains(&"hermes"),
        "{covered:?}"
    );
    // Kimi K3's spaced spelling, and a call after it.
    let k3 = Protocol::from_name("kimi-k3").unwrap();
    let text = "Check.<|close|> think <|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Oslo<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
    text_then_weather(&k3, text, "Check.", json!({"city": "Oslo"}));
}

/// `text`, whole and at 1-byte chunks, is the answer `answer` and one `get_weather` call with
/// `input`.
fn text_then_weather(protocol: &Protocol, text: &str, answer: &str, input: Value) {
    let (got, _) = parse_both(protocol, &tools(), text);
    assert_eq!(got.text, answer, "{}", protocol.name());
    assert_eq!(
        got.calls,
        vec![("get_weather".to_string(), input)],
        "{}",
        protocol.name()
    );
}

/// A markup call whose body is one JSON object naming the tool's arguments, instead of argument
/// elements: its members are the arguments (the whole JSON text went into the tool's one
/// string argument before). A body that names none of them is still the string argument's.
#[test]
fn a_json_object_as_a_markup_calls_body_is_its_arguments() {
    let tools = tools();
    let cases = [
        (
            "glm-4.5",
            "<tool_call>get_weather\n{\"city\": \"Paris\", \"days\": \"2\"}\n</tool_call>",
        ),
        (
            "hy-v3",
            "<tool_calls>\n<tool_call>get_weather<tool_sep>{\"city\": \"Paris\", \"days\": 2}\n</tool_call>\n</tool_calls>",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=get_weather>\n{'city': 'Paris', 'days': 2}\n</function>\n</tool_call>",
        ),
        (
            "minimax-m2",
            "<minimax:tool_call>\n<invoke name=\"get_weather\">\n{\"city\": \"Paris\", \"days\": 2}\n</invoke>\n</minimax:tool_call>",
        ),
    ];
    each_reads_one_call(&cases, &tools, json!({"city": "Paris", "days": 2}));
    let glm = Protocol::from_name("glm-4.5").unwrap();
    let (got, _) = parse_both(
        &glm,
        &tools,
        "<tool_call>get_weather\n{\"town\": \"Paris\"}\n</tool_call>",
    );
    assert_eq!(
        got.calls,
        vec![(
            "get_weather".to_string(),
            json!({"city": "{\"town\": \"Paris\"}"})
        )]
    );
}

/// Kimi K3's arguments as one `json` block (`<|open|>json type="object"<|sep|>{…}<|close|>json
/// <|sep|>`) are the call's arguments; a block that holds no JSON object is a malformed call,
/// reported and kept as text (it went into the tool's one string argument, markup and all).
#[test]
fn kimi_k3_arguments_in_one_json_block() {
    let tools = tools();
    let p = Protocol::from_name("kimi-k3").unwrap();
    let call = |json: &str| {
        format!(
            "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>json type=\"object\"<|sep|>{json}<|close|>json<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"
        )
    };
    let (got, _) = parse_both(&p, &tools, &call("{\"city\": \"Paris\", \"days\": \"2\"}"));
    assert_eq!(
        got.calls,
        vec![(
            "get_weather".to_string(),
            json!({"city": "Paris", "days": 2})
        )]
    );
    assert!(got.errors.is_empty(), "{:?}", got.errors);
    let text = call("{broken");
    let (got, _) = parse_both(&p, &tools, &text);
    assert!(got.calls.is_empty());
    assert_eq!(got.errors.len(), 1, "{:?}", got.errors);
    assert_eq!(got.text, text);
}

/// GigaChat 3's message separator is one token with the two newlines after it
/// (`<|message_sep|>\n\n`): the answer before a call is its text without them.
#[test]
fn gigachat_3s_separator_takes_its_newlines() {
    let p = Protocol::from_name("gigachat").unwrap();
    let text = "I'll check.<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</s>";
    text_then_weather(&p, text, "I'll check.", json!({"city": "Paris"}));
}

/// HY3 calls closed by `<end_of_tool_call>` (some builds write them so, without the block, with
/// the arguments as elements or one JSON object, the markers suffixed or not) are calls; the
/// JSON and the close tag went into the tool's one string argument before.
#[test]
fn hy3_calls_closed_by_end_of_tool_call() {
    let p = Protocol::from_name("hy-v3").unwrap();
    let tools = tools();
    let weather = vec![(
        "get_weather".to_string(),
        json!({"city": "Paris", "days": 2}),
    )];
    for text in [
        "<tool_call>get_weather<tool_sep>{\"city\": \"Paris\", \"days\": 2}<end_of_tool_call>",
        "<tool_call:opensource>get_weather<tool_sep:opensource>{\"city\": \"Paris\", \"days\": 2}<end_of_tool_call:opensource>",
        "<tool_call:opensource>get_weather<tool_sep:opensource><arg_key:opensource>city</arg_key:opensource><arg_value:opensource>Paris</arg_value:opensource><arg_key:opensource>days</arg_key:opensource><arg_value:opensource>2</arg_value:opensource><end_of_tool_call:opensource>",
    ] {
        let (got, _) = parse_both(&p, &tools, text);
        assert_eq!(got.calls, weather, "{text:?}");
        assert!(got.errors.is_empty(), "{text:?}: {:?}", got.errors);
        assert_eq!(got.text, "", "{text:?}");
    }
}
