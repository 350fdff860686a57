//! Tests of the parsers across the registry.

use serde_json::json;

use super::auto::AutoParser;
use super::parser::{StreamParser, answer_parser};
use super::spec::Protocol;
use crate::part::{Collapsed, Part};
use crate::tool::{ToolDef, ToolSet};

/// `--protocol auto` without any marker says what the chosen protocol found: calls read
/// from JSON envelopes are not "plain text" (the line said so, then a call followed).
#[test]
fn auto_without_a_marker_says_what_it_found() {
    let tools = tools();
    let fenced = "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"/a\"}}\n```";
    for text in [fenced, "plain words"] {
        let whole = Protocol::detect(&tools, text.as_bytes());
        let mut auto = AutoParser::new(&tools, None);
        let mut out = Vec::new();
        for b in text.as_bytes() {
            assert!(auto.push(std::slice::from_ref(b), &mut out).is_none());
        }
        let streamed = auto.finish(&mut out).expect("chosen at the end");
        assert_eq!(streamed.reason, whole.reason, "{text}");
        assert_eq!(auto.detected().unwrap().reason, whole.reason);
        if text == fenced {
            assert_eq!(Collapsed::of(&out).calls.len(), 1);
            assert!(
                whole.reason.contains("hermes read 1 call from JSON"),
                "{}",
                whole.reason
            );
            assert!(!whole.reason.contains("plain text"), "{}", whole.reason);
        } else {
            assert!(whole.reason.contains("plain text"), "{}", whole.reason);
        }
    }
}

fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "write_file",
            "Write a file",
            json!({"type":"object","properties":{
                "path":{"type":"string"},
                "content":{"type":"string"},
                "mode":{"type":"integer"},
                "append":{"type":"boolean"},
                "tags":{"type":"array","items":{"type":"string"}},
                "meta":{"type":"object","properties":{"owner":{"type":"string"},"size":{"type":"number"}}}
            }}),
        ),
        ToolDef::new("get_location", "", json!({"type":"object","properties":{}})),
    ])
    .unwrap()
}

fn whole(parser: StreamParser, text: &str) -> Collapsed {
    Collapsed::of(&parser.parse_whole(text.as_bytes()).parts)
}

#[test]
fn every_protocol_reads_back_the_calls_it_writes() {
    let inputs = [
        json!({"path":"/tmp/a.txt","content":"plain"}),
        json!({"path":"/x","content":"<b>bold</b> & \"quotes\" 'single'\nline two\n  indented","mode":644,"append":true}),
        json!({"path":"/y","content":"a </tool_call> b </parameter> c </content> d ```","tags":["one","two"]}),
        json!({"path":"/z","content":"é😀 unicode","meta":{"owner":"me","size":1.5}}),
        json!({}),
    ];
    // qwen3-coder has no escaping, yet its values hold its own close tags: what follows
    // each one decides. (A family whose template opens reasoning is read as an output that
    // closed it: the calls are the point here.)
    for p in Protocol::all() {
        let p = p.with_reasoning_open(Some(false));
        for input in &inputs {
            let text = format!("Before.\n{}\nAfter.", p.format_call("write_file", input));
            let got = whole(p.stream_parser(&tools()), &text);
            assert_eq!(
                got.calls,
                vec![("write_file".to_string(), input.clone())],
                "{}: {text}",
                p.name()
            );
            assert!(got.errors.is_empty(), "{}: {:?}", p.name(), got.errors);
            assert!(
                got.text.starts_with("Before.") && got.text.ends_with("After."),
                "{}: {:?}",
                p.name(),
                got.text
            );
        }
    }
}

/// Malformed example calls: broken in a way no tolerance repairs, so every protocol
/// reports them and makes no call, and keeps their text.
#[test]
fn every_protocols_malformed_call_is_reported_not_made() {
    let input = json!({"path": "/a", "mode": 7});
    for p in Protocol::all() {
        let p = p.with_reasoning_open(Some(false));
        let text = p.malformed_call("write_file", &input);
        let got = whole(p.stream_parser(&tools()), &text);
        assert!(
            got.calls.is_empty(),
            "{}: {text} gave {:?}",
            p.name(),
            got.calls
        );
        assert!(!got.errors.is_empty(), "{}: {text}", p.name());
        assert!(!got.text.is_empty(), "{}: nothing kept", p.name());
    }
    let h = Protocol::from_name("hermes").unwrap();
    assert_eq!(
        h.malformed_call("get_weather", &json!({"city": "Paris"})),
        r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "oops": }}</tool_call>"#
    );
    let m = Protocol::from_name("morph-xml").unwrap();
    assert_eq!(
        m.malformed_call("f", &json!({"city": "Paris"})),
        "<f><city>Paris</city><city>Paris</city></f>"
    );
}

#[test]
fn results_render_per_protocol() {
    let h = Protocol::from_name("hermes").unwrap();
    assert_eq!(
        h.format_result("get_weather", "{\"temp\": 21}"),
        "<tool_response>\n{\"name\": \"get_weather\", \"content\": {\"temp\":21}}\n</tool_response>"
    );
    assert!(
        Protocol::from_name("gemma")
            .unwrap()
            .format_result("x", "ok")
            .starts_with("```tool_response\n")
    );
    assert!(
        Protocol::from_name("morph-xml")
            .unwrap()
            .format_result("x", "ok")
            .contains("<tool_response name=\"x\">")
    );
    assert!(
        Protocol::from_name("qwen3-coder")
            .unwrap()
            .format_result("x", "ok")
            .contains("<tool_response>\nok\n")
    );
}

#[test]
fn the_tool_choice_answer_becomes_one_call() {
    let cases = [
        (
            r#"{"name": "write_file", "arguments": {"path": "/a", "mode": "7"}}"#,
            Some(json!({"path":"/a","mode":7})),
            vec![],
        ),
        (
            r#"{name: 'get_location', arguments: {},}"#,
            Some(json!({})),
            vec![],
        ),
        (
            "```json\n{\"name\":\"get_location\",\"arguments\":{}}\n```",
            Some(json!({})),
            vec![],
        ),
        (
            r#"{"name": "nope", "arguments": {"x": 1}}"#,
            Some(json!({"x":1})),
            vec!["unknown-tool"],
        ),
        (
            r#"{"name": "write_file", "arguments": {"path": "#,
            None,
            vec!["unfinished-tool-call"],
        ),
        (
            r#"{"tool": "write_file"}"#,
            None,
            vec!["malformed-tool-call"],
        ),
        ("I cannot call a tool.", None, vec![]),
    ];
    for (text, want, errors) in cases {
        let got = whole(answer_parser(&tools()), text);
        assert_eq!(got.calls.first().map(|c| c.1.clone()), want, "{text}");
        assert_eq!(got.errors, errors, "{text}");
        if want.is_none() {
            // A bad answer keeps its text.
            assert_eq!(got.text, text);
        }
    }
}

#[test]
fn invalid_utf8_is_replaced_and_reported_once() {
    let p = Protocol::from_name("hermes").unwrap();
    let parsed = p.parse_generated(
        &tools(),
        b"a\xff b \xfe<tool_call>{\"name\":\"get_location\"}</tool_call>",
    );
    let c = Collapsed::of(&parsed.parts);
    assert_eq!(c.text, "a\u{fffd} b \u{fffd}");
    assert_eq!(c.errors, ["invalid-utf8"]);
    assert_eq!(c.calls.len(), 1);
    assert_eq!(parsed.spans.len(), 1);
}

/// A JSON call body whose arguments already streamed cannot be renamed or given other
/// arguments by a later duplicate key: it is malformed (kept as text, with an error), and
/// every chunking says so, so deltas never belong to a call that is not the one finished.
#[test]
fn a_duplicate_name_or_arguments_key_is_malformed_on_both_paths() {
    let t = tools();
    for text in [
        r#"<tool_call>{"name":"write_file","arguments":{"path":"/a"},"name":"get_location"}</tool_call>"#,
        r#"<tool_call>{"name":"write_file","arguments":{"path":"/a"},"arguments":{"path":"/b"}}</tool_call>"#,
    ] {
        let p = Protocol::from_name("hermes").unwrap();
        let whole = whole(p.stream_parser(&t), text);
        assert!(whole.calls.is_empty(), "{text}: {whole:?}");
        assert_eq!(whole.text, text, "nothing lost");
        assert!(!whole.errors.is_empty());
        let mut parser = p.stream_parser(&t);
        let mut out = Vec::new();
        for b in text.as_bytes() {
            parser.push(std::slice::from_ref(b), &mut out);
        }
        parser.finish(&mut out);
        assert_eq!(Collapsed::of(&out), whole, "{text}");
        assert!(!out.iter().any(|p| matches!(p, Part::ToolCall(_))));
    }
    // Before the name, a second arguments key still wins, as in JSON.
    let p = Protocol::from_name("hermes").unwrap();
    let c = whole(
        p.stream_parser(&t),
        r#"<tool_call>{"arguments":{"path":"/a"},"arguments":{"path":"/b"},"name":"write_file"}</tool_call>"#,
    );
    assert_eq!(c.calls.len(), 1);
    assert_eq!(c.calls[0].1, json!({"path":"/b"}));
}

/// `reset` makes a used parser parse the next output exactly as a new one would: nothing of the
/// last output (a call left open halfway, held-back bytes, the call count) carries over, for
/// every protocol and for the tool-choice answer parser.
#[test]
fn reset_parses_the_next_output_as_a_new_parser_would() {
    let tools = tools();
    let feed = |parser: &mut StreamParser, text: &str| {
        let mut out = Vec::new();
        parser.push_str(text, &mut out);
        parser.finish(&mut out);
        out
    };
    for p in Protocol::all() {
        let call = p.format_call("get_weather", &json!({"city": "Paris"}));
        let second = format!("Before.\n{call}");
        let mut used = p.stream_parser(&tools);
        // Halfway through a call, then reset without finishing.
        let mut out = Vec::new();
        used.push(&call.as_bytes()[..call.len() / 2], &mut out);
        used.reset();
        assert_eq!(
            feed(&mut used, &second),
            feed(&mut p.stream_parser(&tools), &second),
            "{}",
            p.name()
        );
        // After a finished output.
        used.reset();
        assert_eq!(used.call_count(), 0, "{}", p.name());
        assert_eq!(
            feed(&mut used, &second),
            feed(&mut p.stream_parser(&tools), &second),
            "{}",
            p.name()
        );
    }
    let answer = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
    let mut used = answer_parser(&tools);
    feed(&mut used, answer);
    used.reset();
    assert_eq!(
        feed(&mut used, answer),
        feed(&mut answer_parser(&tools), answer)
    );
}

/// A caller that shares the parser's writer (the provider loop, for reasoning the wire carries
/// apart) may close the open text block between two pieces of a run of plain text: the next
/// piece opens a new block and is not lost, whatever way the pieces before it went.
#[test]
fn text_after_the_writer_closed_the_block_opens_a_new_one() {
    let tools = tools();
    for p in Protocol::all() {
        let mut parser = p.stream_parser(&tools);
        let mut out = Vec::new();
        for piece in ["Plain", " text", " goes", " on"] {
            parser.push_str(piece, &mut out);
        }
        parser.writer().close_blocks(&mut out);
        parser.push_str(" after", &mut out);
        parser.push_str(" it.", &mut out);
        parser.finish(&mut out);
        let text: String = out
            .iter()
            .filter_map(|part| match part {
                Part::TextDelta { delta, .. } | Part::ReasoningDelta { delta, .. } => {
                    Some(delta.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(text, "Plain text goes on after it.", "{}", p.name());
        let mut open = None;
        for part in &out {
            match part {
                Part::TextStart { id } | Part::ReasoningStart { id, .. } => {
                    assert!(
                        open.is_none(),
                        "{}: a block opened inside another",
                        p.name()
                    );
                    open = Some(id.clone());
                }
                Part::TextDelta { id, .. } | Part::ReasoningDelta { id, .. } => {
                    assert_eq!(
                        open.as_ref(),
                        Some(id),
                        "{}: a delta outside its block",
                        p.name()
                    )
                }
                Part::TextEnd { id } | Part::ReasoningEnd { id, .. } => {
                    assert_eq!(open.take().as_ref(), Some(id), "{}", p.name())
                }
                _ => {}
            }
        }
    }
}

/// The servers' parser names each protocol lists: only servers we know, and one server's name
/// for its parser leads to one protocol only (a user who knows their server's parser finds
/// exactly one of ours).
#[test]
fn server_parser_names_are_known_servers_and_unique_per_server() {
    const SERVERS: &[&str] = &["vllm", "sglang", "llama.cpp", "fastdeploy"];
    let mut seen = std::collections::HashMap::new();
    for p in Protocol::all() {
        for (server, name) in p.server_parsers() {
            assert!(
                SERVERS.contains(server),
                "{}: unknown server {server:?}",
                p.name()
            );
            assert!(
                !name.trim().is_empty(),
                "{}: empty name for {server}",
                p.name()
            );
            if let Some(other) = seen.insert((*server, *name), p.name()) {
                panic!(
                    "{server} parser {name:?} listed by both {other} and {}",
                    p.name()
                );
            }
        }
    }
    // The families the servers read are there (a spot check that the table is filled in).
    for (protocol, server, name) in [
        ("hermes", "vllm", "hermes"),
        ("harmony", "sglang", "gpt-oss"),
        ("kimi-k2", "llama.cpp", "Kimi K2"),
    ] {
        let p = Protocol::from_name(protocol).unwrap();
        assert!(p.server_parsers().contains(&(server, name)), "{protocol}");
    }
}
