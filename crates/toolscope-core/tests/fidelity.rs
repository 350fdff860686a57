//! Parser fidelity, rule by rule (issue 10): byte-exact values, markup inside values, stray and
//! partial close tags, nothing silent, more call shapes, XML details, union coercion, relaxed
//! JSON. Every case is checked on the generate path and on streams of 1, 3 and 64-byte chunks,
//! which must all give the same text, calls and errors; every stream's input deltas must add up
//! to its calls' inputs. The inputs are made up here.

use serde_json::{Value, json};
use toolscope_core::part::{Collapsed, Part};
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "",
            json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}),
        ),
        ToolDef::new(
            "write_file",
            "",
            json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
        ),
        ToolDef::new(
            "calc",
            "",
            json!({"type":"object","properties":{"nums":{"type":"array","items":{"type":"number"}},"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}),
        ),
        ToolDef::new(
            "send_note",
            "",
            json!({"type":"object","properties":{"body":{"type":"string"},"urgent":{"type":"boolean"}}}),
        ),
        ToolDef::new(
            "send_email",
            "",
            json!({"type":"object","properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["to","subject","body"]}),
        ),
        ToolDef::new(
            "profile",
            "",
            json!({"type":"object","properties":{"nickname":{"type":["string","null"]},"age":{"type":["integer","string"]},"meta":{"anyOf":[{"type":"string"},{"type":"object"}]}}}),
        ),
        ToolDef::new("get_location", "", json!({"type":"object"})),
    ])
    .unwrap()
}

fn stream(p: &Protocol, text: &str, size: usize) -> Vec<Part> {
    let mut parser = p.stream_parser(&tools());
    let mut out = Vec::new();
    for piece in text.as_bytes().chunks(size) {
        parser.push(piece, &mut out);
    }
    parser.finish(&mut out);
    out
}

/// The input deltas of each call, concatenated, parse to its input.
fn deltas_add_up(parts: &[Part]) {
    let mut inputs: std::collections::HashMap<String, String> = Default::default();
    for p in parts {
        match p {
            Part::ToolInputStart { id, .. } => {
                inputs.insert(id.to_string(), String::new());
            }
            Part::ToolInputDelta { id, delta } => {
                inputs.get_mut(id.as_str()).unwrap().push_str(delta)
            }
            Part::ToolCall(c) => {
                let joined: Value = serde_json::from_str(&inputs[c.tool_call_id.as_str()]).unwrap();
                assert_eq!(joined, c.input);
            }
            _ => {}
        }
    }
}

/// Parses `text` with `protocol` whole and in 1, 3 and 64-byte chunks; all must agree. Returns
/// the collapsed result and the generate parts.
fn parse(protocol: &str, text: &str) -> (Collapsed, Vec<Part>) {
    let p = Protocol::from_name(protocol).unwrap();
    let generate = p.parse_generated(&tools(), text.as_bytes()).parts;
    let want = Collapsed::of(&generate);
    for size in [1, 3, 64] {
        let parts = stream(&p, text, size);
        assert_eq!(
            Collapsed::of(&parts),
            want,
            "{protocol}, {size}-byte chunks: {text:?}"
        );
        deltas_add_up(&parts);
    }
    (want, generate)
}

/// Expects exactly these calls and errors, and this text.
fn expect(protocol: &str, text: &str, calls: &[(&str, Value)], out_text: &str, errors: &[&str]) {
    let (got, _) = parse(protocol, text);
    let calls: Vec<(String, Value)> = calls
        .iter()
        .map(|(n, v)| (n.to_string(), v.clone()))
        .collect();
    assert_eq!(got.calls, calls, "{protocol}: calls of {text:?}");
    assert_eq!(got.text, out_text, "{protocol}: text of {text:?}");
    assert_eq!(got.errors, errors, "{protocol}: errors of {text:?}");
}

fn qwen_call(name: &str, params: &[(&str, &str)]) -> String {
    let mut s = format!("<tool_call>\n<function={name}>\n");
    for (k, v) in params {
        s.push_str(&format!("<parameter={k}>\n{v}\n</parameter>\n"));
    }
    s.push_str("</function>\n</tool_call>");
    s
}

// Rule 1: values arrive byte-exact.

#[test]
fn qwen_values_keep_indentation_and_newlines() {
    let code = "def f():\n    x = 1\n\n    return x\n";
    for (value, want) in [
        ("    x = 1", "    x = 1"),
        (code, code),
        ("", ""),
        ("\n", "\n"),
        ("  both  ", "  both  "),
    ] {
        let text = qwen_call("write_file", &[("path", "/a.py"), ("content", value)]);
        expect(
            "qwen3-coder",
            &text,
            &[("write_file", json!({"path":"/a.py","content":want}))],
            "",
            &[],
        );
    }
    // Only the separators are dropped: none when the value is on the tags' own line.
    expect(
        "qwen3-coder",
        "<tool_call><function=write_file><parameter=content>  x\n\n</parameter></function></tool_call>",
        &[("write_file", json!({"content":"  x\n"}))],
        "",
        &[],
    );
    // A value that is only a newline is the empty string.
    expect(
        "qwen3-coder",
        "<tool_call><function=write_file><parameter=content>\n</parameter></function></tool_call>",
        &[("write_file", json!({"content":""}))],
        "",
        &[],
    );
}

#[test]
fn morph_values_keep_indentation_and_newlines() {
    expect(
        "morph-xml",
        "<write_file><path>/a.py</path><content>\n    x = 1\n\n</content></write_file>",
        &[(
            "write_file",
            json!({"path":"/a.py","content":"    x = 1\n"}),
        )],
        "",
        &[],
    );
    expect(
        "morph-xml",
        "<write_file><content>  spaced  </content></write_file>",
        &[("write_file", json!({"content":"  spaced  "}))],
        "",
        &[],
    );
    expect(
        "morph-xml",
        "<write_file><content>\n</content></write_file>",
        &[("write_file", json!({"content":""}))],
        "",
        &[],
    );
    // CDATA is verbatim: its own newlines are content.
    expect(
        "morph-xml",
        "<write_file><content><![CDATA[\nif a < b:\n]]></content></write_file>",
        &[("write_file", json!({"content":"\nif a < b:\n"}))],
        "",
        &[],
    );
    // Numbers still read through their whitespace.
    expect(
        "morph-xml",
        "<get_weather><city> Oslo </city><days>\n 3 \n</days></get_weather>",
        &[("get_weather", json!({"city":" Oslo ","days":3}))],
        "",
        &[],
    );
}

#[test]
fn yaml_block_values_keep_indentation_and_newlines() {
    expect(
        "yaml-xml",
        "<write_file>\npath: /a.py\ncontent: |2+\n    x = 1\n  y = 2\n\n</write_file>",
        &[(
            "write_file",
            json!({"path":"/a.py","content":"  x = 1\ny = 2\n\n"}),
        )],
        "",
        &[],
    );
}

// Rule 2: markup inside values.

#[test]
fn qwen_close_tags_inside_values_are_decided_by_what_follows() {
    // A Python file whose string holds the format's close tag, followed by something that is
    // no parameter: value text.
    let py = "s = \"</parameter>\"\nprint(s)\n</parameter>\n# end";
    expect(
        "qwen3-coder",
        &qwen_call("write_file", &[("path", "/t.py"), ("content", py)]),
        &[("write_file", json!({"path":"/t.py","content":py}))],
        "",
        &[],
    );
    // A well-formed `</parameter>` then a well-formed parameter ends the value, whatever the
    // parameter's name: one the schema does not list is an argument of its own (the format
    // cannot hold this pair inside a value).
    expect(
        "qwen3-coder",
        "<tool_call>\n<function=write_file>\n<parameter=content>\ns = 1\n</parameter>\n<parameter=name>\nx\n</parameter>\n</function>\n</tool_call>",
        &[("write_file", json!({"content":"s = 1","name":"x"}))],
        "",
        &[],
    );
    // A template holding a whole call.
    let template = "{% if x %}\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n{% endif %}";
    expect(
        "qwen3-coder",
        &qwen_call("write_file", &[("content", template), ("path", "/t.j2")]),
        &[("write_file", json!({"content":template,"path":"/t.j2"}))],
        "",
        &[],
    );
    // CDATA is opaque.
    let cdata = "<![CDATA[ <function=beta> </parameter>\n</function> ]]>";
    expect(
        "qwen3-coder",
        &qwen_call("write_file", &[("content", cdata)]),
        &[("write_file", json!({"content":cdata}))],
        "",
        &[],
    );
    // A close tag followed by prose is value text.
    let prose = "see </parameter> and </function> here";
    expect(
        "qwen3-coder",
        &qwen_call("write_file", &[("content", prose)]),
        &[("write_file", json!({"content":prose}))],
        "",
        &[],
    );
    // A parameter that is set already follows: it is a parameter all the same, given twice,
    // and the call is reported as malformed (its markup kept as text), never read silently.
    let twice = "<tool_call><function=write_file><parameter=path>/a</parameter><parameter=content>x</parameter><parameter=path>y</parameter></function></tool_call>";
    expect("qwen3-coder", twice, &[], twice, &["malformed-tool-call"]);
    // A forgotten </parameter> before a parameter that can follow still ends the value.
    expect(
        "qwen3-coder",
        "<tool_call><function=write_file><parameter=content>x\n<parameter=path>/a</parameter></function></tool_call>",
        &[("write_file", json!({"content":"x","path":"/a"}))],
        "",
        &[],
    );
}

#[test]
fn qwen_holds_back_only_the_undecided_tail() {
    let p = Protocol::from_name("qwen3-coder").unwrap();
    let mut parser = p.stream_parser(&tools());
    let mut out = Vec::new();
    parser.push_str(
        "<tool_call><function=write_file><parameter=content>abc</parameter>\n",
        &mut out,
    );
    let streamed: String = out
        .iter()
        .filter_map(|p| match p {
            Part::ToolInputDelta { delta, .. } => Some(delta.to_string()),
            _ => None,
        })
        .collect();
    // "abc" went out; the close tag waits for what follows it.
    assert_eq!(streamed, "{\"content\":\"abc");
    parser.push_str(" more</parameter>\n</function></tool_call>", &mut out);
    parser.finish(&mut out);
    let c = Collapsed::of(&out);
    assert_eq!(
        c.calls,
        vec![(
            "write_file".to_string(),
            json!({"content":"abc</parameter>\n more"})
        )]
    );
}

#[test]
fn morph_and_yaml_close_tags_inside_values() {
    expect(
        "morph-xml",
        "<write_file><content>a</content>\n<b>x</b></content></write_file>",
        &[("write_file", json!({"content":"a</content>\n<b>x</b>"}))],
        "",
        &[],
    );
    // A known tool's open tag inside a value is text.
    expect(
        "morph-xml",
        "<write_file><content>call <get_weather><city>X</city></get_weather> like this</content></write_file>",
        &[(
            "write_file",
            json!({"content":"call <get_weather><city>X</city></get_weather> like this"}),
        )],
        "",
        &[],
    );
    expect(
        "yaml-xml",
        "<write_file>\npath: /d.md\ncontent: |\n  Close with </write_file>.\n  </write_file>\n</write_file>",
        &[(
            "write_file",
            json!({"path":"/d.md","content":"Close with </write_file>.\n</write_file>\n"}),
        )],
        "",
        &[],
    );
}

// Rule 3: stray and partial close tags are consumed or reported.

#[test]
fn hermes_recovers_calls_around_stray_wrong_and_partial_close_tags() {
    let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
    let paris = || ("get_weather", json!({"city":"Paris"}));
    // The opening tag forgotten after prose; the close tag is consumed.
    expect(
        "hermes",
        &format!("Let me check.\n{call}\n</tool_call>"),
        &[paris()],
        "Let me check.\n",
        &[],
    );
    // The same after prose on the call's own line: the close tag decides.
    expect(
        "hermes",
        &format!("Let me check. {call}</tool_call> ok"),
        &[paris()],
        "Let me check.  ok",
        &[],
    );
    expect(
        "hermes",
        &format!("Checking: {call}}}\n</tool_call>"),
        &[paris()],
        "Checking: ",
        &[],
    );
    // Without the close tag, JSON in prose is prose.
    let text = format!("A call looks like {call} in JSON; {{braces}} too.");
    expect("hermes", &text, &[], &text, &[]);
    let text = format!("Cut: {call}</tool_ca");
    expect("hermes", &text, &[], &text, &[]);
    // A known tool's envelope before the close tag whose arguments cannot be used: reported.
    let text = r#"So {"name": "get_weather", "arguments": "oops"}</tool_call>"#;
    expect("hermes", text, &[], text, &["malformed-tool-call"]);
    // An extra brace before the close tag.
    expect(
        "hermes",
        &format!("<tool_call>{call}}}</tool_call> ok"),
        &[paris()],
        " ok",
        &[],
    );
    // Whitespace after </.
    expect(
        "hermes",
        &format!("<tool_call>{call}</ tool_call>"),
        &[paris()],
        "",
        &[],
    );
    // A wrong close tag.
    expect(
        "hermes",
        &format!("<tool_call>{call}</think>"),
        &[paris()],
        "",
        &[],
    );
    // A close tag cut off by the end of the output, or by what follows.
    expect(
        "hermes",
        &format!("<tool_call>{call}</tool_ca"),
        &[paris()],
        "",
        &[],
    );
    expect(
        "hermes",
        &format!("<tool_call>{call}</tool_call\nThen more."),
        &[paris()],
        "\nThen more.",
        &[],
    );
    // A body that is no JSON is still kept, reported.
    expect(
        "hermes",
        "<tool_call>{oops</tool_call>",
        &[],
        "<tool_call>{oops</tool_call>",
        &["malformed-tool-call"],
    );
}

#[test]
fn gemma_consumes_a_close_fence_alone_on_its_line_only() {
    let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
    expect(
        "gemma",
        &format!("Checking.\n{call}\n```\nDone."),
        &[("get_weather", json!({"city":"Paris"}))],
        "Checking.\n\nDone.",
        &[],
    );
    expect(
        "gemma",
        &format!("{call}\n```python\nprint(1)\n```"),
        &[("get_weather", json!({"city":"Paris"}))],
        "\n```python\nprint(1)\n```",
        &[],
    );
}

#[test]
fn xml_close_tags_with_whitespace_and_wrong_close_tags() {
    expect(
        "morph-xml",
        "<get_weather><city>Oslo</city></ get_weather> after",
        &[("get_weather", json!({"city":"Oslo"}))],
        " after",
        &[],
    );
    expect(
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</ parameter>\n</ function>\n</think> after",
        &[("get_weather", json!({"city":"Oslo"}))],
        " after",
        &[],
    );
    expect(
        "yaml-xml",
        "<get_weather>\ncity: Oslo\n</ get_weather> after",
        &[("get_weather", json!({"city":"Oslo"}))],
        " after",
        &[],
    );
    // yaml-xml: a wrong close tag alone on its line, where YAML can hold no text, after a whole
    // mapping closes the call; inside a block scalar it is text, and after a body that is no
    // mapping it does not rescue the call.
    expect(
        "yaml-xml",
        "<get_weather>\ncity: Oslo\n</think> after",
        &[("get_weather", json!({"city":"Oslo"}))],
        " after",
        &[],
    );
    expect(
        "yaml-xml",
        "<write_file>\ncontent: |\n  a\n  </think>\n</write_file>",
        &[("write_file", json!({"content":"a\n</think>\n"}))],
        "",
        &[],
    );
    let text = "<get_weather>\ncity: [Oslo\n</think>\n</get_weather>";
    expect("yaml-xml", text, &[], text, &["malformed-tool-call"]);
    // morph-xml: a wrong close tag right after an argument closes the call and is consumed;
    // a stray repeat of an argument's close tag is consumed too.
    expect(
        "morph-xml",
        "<get_weather><city>Oslo</city></think> after",
        &[("get_weather", json!({"city":"Oslo"}))],
        " after",
        &[],
    );
    expect(
        "morph-xml",
        "<get_weather><city>Oslo</city>\n</think>\nafter",
        &[("get_weather", json!({"city":"Oslo"}))],
        "\nafter",
        &[],
    );
    expect(
        "morph-xml",
        "<get_weather><city>Oslo</city></city><days>2</days></get_weather> after",
        &[("get_weather", json!({"city":"Oslo","days":2}))],
        " after",
        &[],
    );
    // Inside a value whose own open tag came first, the close tag is the value's.
    expect(
        "morph-xml",
        "<write_file><content><b><content>x</content></b></content></write_file>",
        &[(
            "write_file",
            json!({"content":"<b><content>x</content></b>"}),
        )],
        "",
        &[],
    );
    // A function without its <tool_call>, and the stray </tool_call> after it.
    expect(
        "qwen3-coder",
        "Sure.\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n</function>\n</tool_call>\nDone.",
        &[("get_weather", json!({"city":"Oslo"}))],
        "Sure.\n\nDone.",
        &[],
    );
}

// Rule 4: nothing silent.

#[test]
fn a_text_body_goes_to_the_one_string_argument_or_is_reported() {
    let (c, parts) = parse("morph-xml", "<send_note>Hi Bob,\n  see you.</send_note>");
    assert_eq!(
        c.calls,
        vec![(
            "send_note".to_string(),
            json!({"body":"Hi Bob,\n  see you."})
        )]
    );
    let Part::ToolCall(call) = &parts[0] else {
        panic!("{parts:?}")
    };
    assert_eq!(call.coercions.len(), 1, "reported as a coercion");
    assert_eq!(call.coercions[0].to, json!({"body":"Hi Bob,\n  see you."}));
    // Three string arguments: no way to know which; kept, reported.
    let text = "<send_email>Hi Bob, see you.</send_email>";
    expect("morph-xml", text, &[], text, &["malformed-tool-call"]);
    // The same in qwen3-coder and yaml-xml.
    expect(
        "qwen3-coder",
        "<tool_call>\n<function=send_note>\nHi Bob\n</function>\n</tool_call>",
        &[("send_note", json!({"body":"Hi Bob"}))],
        "",
        &[],
    );
    let text = "<tool_call>\n<function=send_email>\nHi Bob\n</function>\n</tool_call>";
    expect("qwen3-coder", text, &[], text, &["malformed-tool-call"]);
    expect(
        "yaml-xml",
        "<send_note>\nHi Bob, see you.\n</send_note>",
        &[("send_note", json!({"body":"Hi Bob, see you."}))],
        "",
        &[],
    );
    let text = "<send_email>\nHi Bob, see you.\n</send_email>";
    expect("yaml-xml", text, &[], text, &["malformed-tool-call"]);
    // One required string argument among others.
    expect(
        "morph-xml",
        "<get_weather>Paris</get_weather>",
        &[("get_weather", json!({"city":"Paris"}))],
        "",
        &[],
    );
}

#[test]
fn markup_never_passes_as_plain_text_without_an_error() {
    // A known tool's tag in prose, with no arguments and no close tag.
    let text = "Use <get_weather> to look it up.";
    expect("morph-xml", text, &[], text, &["unfinished-tool-call"]);
    // A close tag with no call open.
    let text = "done </tool_call>";
    expect("hermes", text, &[], text, &["malformed-tool-call"]);
    let text = "done </get_weather>";
    expect("morph-xml", text, &[], text, &["malformed-tool-call"]);
    expect("yaml-xml", text, &[], text, &["malformed-tool-call"]);
    // A tool's tag with attributes in yaml-xml.
    let text = "<get_weather city=\"Paris\"></get_weather>";
    expect(
        "yaml-xml",
        text,
        &[],
        text,
        &["malformed-tool-call", "malformed-tool-call"],
    );
    // qwen3-coder: an empty block, stray close tags, a block that is not qwen markup.
    for text in [
        "<tool_call></tool_call>",
        "text </tool_call>",
        "a </function> b",
        "<tool_call>{\"name\": \"x\"}</tool_call>",
    ] {
        expect("qwen3-coder", text, &[], text, &["malformed-tool-call"]);
    }
    // A function that is no call keeps its markup; the block's other calls stand.
    expect(
        "qwen3-coder",
        "<tool_call><function=get_location/><function=send_email>Hi</function></tool_call>",
        &[("get_location", json!({}))],
        "<function=send_email>Hi</function>",
        &["malformed-tool-call"],
    );
}

// Rule 5: more call shapes.

#[test]
fn several_objects_in_one_wrapper_and_fenced_arrays_are_several_calls() {
    let a = r#"{"name": "get_weather", "arguments": {"city": "A"}}"#;
    let b = r#"{"name": "get_location", "arguments": {}}"#;
    let both = || {
        vec![
            ("get_weather", json!({"city":"A"})),
            ("get_location", json!({})),
        ]
    };
    expect(
        "hermes",
        &format!("<tool_call>\n{a}\n{b}\n</tool_call>"),
        &both(),
        "",
        &[],
    );
    expect(
        "hermes",
        &format!("<tool_call>{a}, {b}</tool_call>"),
        &both(),
        "",
        &[],
    );
    expect(
        "gemma",
        &format!("```tool_call\n{a},\n{b}\n```"),
        &both(),
        "",
        &[],
    );
    for protocol in ["hermes", "gemma"] {
        expect(
            protocol,
            &format!("Calls:\n```json\n[{a}, {b}]\n```\nok"),
            &both(),
            "Calls:\n\nok",
            &[],
        );
    }
    // A fenced array that is not calls stays text.
    let text = "```json\n[1, 2, 3]\n```";
    expect("hermes", text, &[], text, &[]);
}

#[test]
fn names_that_cannot_be_function_names_are_not_calls() {
    let text = r#"<tool_call>{"name": "{{ tc.name }}", "arguments": {}}</tool_call>"#;
    expect("hermes", text, &[], text, &["malformed-tool-call"]);
    let text = "<tool_call>\n<function={{ tc.name }}>\n</function>\n</tool_call>";
    let (c, _) = parse("qwen3-coder", text);
    assert!(c.calls.is_empty());
    assert_eq!(c.text, text);
    assert!(
        c.errors.iter().all(|e| e == "malformed-tool-call"),
        "{:?}",
        c.errors
    );
    let text = "<function=get weather>";
    expect("qwen3-coder", text, &[], text, &["malformed-tool-call"]);
}

// Rule 6: XML details.

#[test]
fn attributes_holding_gt_and_numeric_child_tags() {
    expect(
        "morph-xml",
        "<get_weather><city note=\"a > b\">Paris</city></get_weather>",
        &[("get_weather", json!({"city":"Paris"}))],
        "",
        &[],
    );
    // Attributes on a tool's open tag, or on qwen3-coder's function and parameter tags, are
    // read past (they are not arguments in these formats), `>` inside their quotes included.
    expect(
        "yaml-xml",
        "<get_weather note=\"a > b\">\ncity: Paris\n</get_weather>",
        &[("get_weather", json!({"city":"Paris"}))],
        "",
        &[],
    );
    expect(
        "qwen3-coder",
        "<tool_call>\n<function=get_weather note='x>y'>\n<parameter=city note=\"a > b\">\nParis\n</parameter>\n</function>\n</tool_call>",
        &[("get_weather", json!({"city":"Paris"}))],
        "",
        &[],
    );
    // A quoted name, and a name written with a space in it, still name the parameter.
    expect(
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=\"city\">\nParis\n</parameter>\n</function>\n</tool_call>",
        &[("get_weather", json!({"city":"Paris"}))],
        "",
        &[],
    );
    expect(
        "morph-xml",
        "<calc><nums><0>1</0><1>2.5</1></nums><pair><0>x</0><1>7</1></pair></calc>",
        &[("calc", json!({"nums":[1, 2.5],"pair":["x", 7]}))],
        "",
        &[],
    );
    expect(
        "qwen3-coder",
        "<tool_call>\n<function=calc>\n<parameter=nums>\n<0>1</0>\n<1>2.5</1>\n</parameter>\n</function>\n</tool_call>",
        &[("calc", json!({"nums":[1, 2.5]}))],
        "",
        &[],
    );
}

// Rule 7: unions and nulls, through the protocols.

#[test]
fn union_and_null_coercion_on_both_paths() {
    let text = qwen_call(
        "profile",
        &[("nickname", "None"), ("age", "42"), ("meta", "{\"a\": 1}")],
    );
    expect(
        "qwen3-coder",
        &text,
        &[("profile", json!({"nickname":null,"age":42,"meta":{"a":1}}))],
        "",
        &[],
    );
    expect(
        "morph-xml",
        "<profile><nickname>null</nickname><age>forty</age><meta>{broken</meta></profile>",
        &[(
            "profile",
            json!({"nickname":null,"age":"forty","meta":"{broken"}),
        )],
        "",
        &[],
    );
    expect(
        "hermes",
        r#"<tool_call>{"name":"profile","arguments":"\"{'nickname': None, 'age': '7'}\""}</tool_call>"#,
        &[("profile", json!({"nickname":null,"age":7}))],
        "",
        &[],
    );
}

// Rule 9: relaxed JSON.

#[test]
fn comments_end_at_carriage_returns_and_unknown_escapes_keep_their_character() {
    expect(
        "hermes",
        "<tool_call>{\"name\": \"write_file\", // the tool\r\"arguments\": {\"content\": \"costs \\$5, it\\'s \\q\"}}</tool_call>",
        &[("write_file", json!({"content":"costs $5, it's q"}))],
        "",
        &[],
    );
}
