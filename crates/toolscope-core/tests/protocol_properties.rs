//! Properties every protocol's stream parser must hold (DESIGN.md, semantics 1–5), checked on
//! generated markup: realistic call fragments, delimiters, quotes, multi-byte characters and
//! noise, in random orders, split into random chunks (one byte, random sizes, inside UTF-8
//! sequences).
//!
//! The protocols come from the registry, and each one's fragments from what it writes itself
//! (its calls, their pieces, a malformed call, a result) plus its hand-made test data in
//! `tests/data/protocols/<name>/`: a protocol added to the registry is checked here at once.

use std::collections::HashMap;
use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolscope_core::part::{Collapsed, Part};
use toolscope_core::protocol::{AutoParser, Protocol, StreamParser, answer_parser};
use toolscope_core::tool::{ToolDef, ToolSet};

fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]}},"required":["city"]}),
        ),
        ToolDef::new(
            "write_file",
            "Write a file",
            json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
        ),
        ToolDef::new(
            "calc",
            "Numbers",
            json!({"type":"object","properties":{"nums":{"type":"array","items":{"type":"number"}},"tags":{"type":"array","items":{"type":"string"}},"budget":{"type":"object","properties":{"min":{"type":"number"}}}}}),
        ),
        ToolDef::new("get_location", "Where am I", json!({"type":"object"})),
    ])
    .unwrap()
}

/// What every model output may contain, whatever its protocol.
const COMMON: &[&str] = &[
    "Sure. ",
    "text ",
    "\n",
    " ",
    "é",
    "😀",
    "<",
    ">",
    "&",
    "&amp;",
    "\"",
    "'",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\\",
    "/",
    "```",
    "```json\n",
    "<b>",
    "</b>",
    "a < b",
    "\u{0}",
    "\t",
];

/// Fragments of the tool-choice answer (`{name, arguments}` JSON, no protocol).
const ANSWER: &[&str] = &[
    "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}",
    "{name:'calc', arguments:{nums:'1, 2', tags:['a'],},}",
    "{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\":\\\"Oslo\\\"}\"}",
    "[{\"name\":\"get_location\"},{\"name\":\"nope\",\"arguments\":{\"x\":1}}]",
    "\"name\"",
    "\"arguments\"",
    "// c\n",
    "/* c */",
    "{\"city\": \"He said \"hi\" ok\"}",
    "```json\n{\"name\":\"get_location\",\"arguments\":{}}\n```",
];

/// The calls every protocol writes for its fragments: plain, nested, empty, unknown, and values
/// with markup, indentation and newlines.
fn sample_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("get_weather", json!({"city": "Paris", "days": 3})),
        (
            "write_file",
            json!({"path": "/a", "content": "<b>x</b>\n  indented\n"}),
        ),
        (
            "write_file",
            json!({"path": "/b", "content": "\n    x = 1\n\n  y = 2\n\n"}),
        ),
        (
            "write_file",
            json!({"path": "/c", "content": "s = \"</parameter>\\n<parameter=name>\" </content> </write_file> x"}),
        ),
        (
            "write_file",
            json!({"path": "/d", "content": "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>\n"}),
        ),
        (
            "calc",
            json!({"nums": [1, 2.5], "tags": ["a"], "budget": {"min": 1}}),
        ),
        ("get_location", json!({})),
        ("nope", json!({"x": 1})),
    ]
}

/// A call's markup cut where a decision is taken: before `<`, `{` and `[`, after `>`, `}`, `]`,
/// commas and newlines. Pieces recombined at random make broken, partial and nested markup.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if matches!(c, '<' | '{' | '[') && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(c);
        if matches!(c, '>' | '}' | ']' | '\n' | ',') {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A JSON array of strings in `tests/data/protocols/<protocol>/<file>`, if there is one: the
/// hand-made test data of a protocol.
fn protocol_data(protocol: &str, file: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/protocols")
        .join(protocol)
        .join(file);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        }
        Err(_) => Vec::new(),
    }
}

/// Fragments a model output is made of: the common ones, then what the protocol itself writes
/// (whole calls, their pieces, a malformed call, a tool result), then its hand-made fragments.
fn fragments(protocol: Option<&Protocol>) -> Vec<String> {
    let mut out: Vec<String> = COMMON.iter().map(|s| s.to_string()).collect();
    match protocol {
        None => out.extend(ANSWER.iter().map(|s| s.to_string())),
        Some(protocol) => {
            for (name, input) in sample_calls() {
                let call = protocol.format_call(name, &input);
                out.extend(pieces(&call));
                out.push(call);
            }
            out.push(protocol.malformed_call("get_weather", &json!({"city": "Oslo"})));
            if let Some((open, close)) = protocol.reasoning().markers {
                out.push(open.to_string());
                out.push(close.to_string());
                let call = protocol.format_call("get_weather", &json!({"city": "Rome"}));
                let thought = format!("maybe {call} or not\n  indented");
                if let Some(r) = protocol.format_reasoning(&thought) {
                    out.extend(pieces(&r));
                    out.push(r);
                }
            }
            out.push(protocol.format_result("get_weather", "{\"t\": 21}"));
            out.extend(protocol_data(protocol.name(), "fragments.json"));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// What the properties run on: every protocol of the registry, and the tool-choice answer parser.
struct Parser {
    name: String,
    protocol: Option<Protocol>,
    fragments: Vec<String>,
}

fn parsers() -> &'static [Parser] {
    static PARSERS: LazyLock<Vec<Parser>> = LazyLock::new(|| {
        let mut all: Vec<Parser> = Vec::new();
        for p in Protocol::all() {
            // A protocol with reasoning markers also runs with the other reasoning-open setting.
            let flipped = p
                .reasoning()
                .markers
                .map(|_| p.clone().with_reasoning_open(Some(!p.reasoning_open())));
            for (name, p) in [
                (p.name().to_string(), Some(p.clone())),
                (format!("{}+flipped", p.name()), flipped),
            ] {
                if let Some(p) = p {
                    all.push(Parser {
                        name,
                        fragments: fragments(Some(&p)),
                        protocol: Some(p),
                    });
                }
            }
        }
        all.push(Parser {
            name: "answer".into(),
            protocol: None,
            fragments: fragments(None),
        });
        all
    });
    &PARSERS
}

/// The name of `p`'s parser that reads an output which is not inside reasoning at its start
/// (for a family whose template opens reasoning, the flipped one): where calls are the point.
fn reasoning_closed(p: &Protocol) -> String {
    if p.reasoning_open() {
        format!("{}+flipped", p.name())
    } else {
        p.name().to_string()
    }
}

fn parser_of(name: &str) -> &'static Parser {
    parsers()
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no parser {name}"))
}

fn parser(name: &str) -> StreamParser {
    match &parser_of(name).protocol {
        None => answer_parser(&tools()),
        Some(p) => p.stream_parser(&tools()),
    }
}

fn run(name: &str, bytes: &[u8], sizes: &[usize]) -> Vec<Part> {
    push_all(&mut parser(name), bytes, sizes)
}

/// `bytes` pushed into `p` in pieces of the sizes (round and round), then the end: the parts.
fn push_all(p: &mut StreamParser, bytes: &[u8], sizes: &[usize]) -> Vec<Part> {
    let mut out = Vec::new();
    let mut rest = bytes;
    let mut k = 0;
    while !rest.is_empty() {
        let n = sizes[k % sizes.len()].clamp(1, rest.len());
        p.push(&rest[..n], &mut out);
        rest = &rest[n..];
        k += 1;
    }
    p.finish(&mut out);
    out
}

/// As [`run`], with the text handed over as strings: pieces of about the sizes, widened to the
/// next character boundary.
fn run_str(name: &str, text: &str, sizes: &[usize]) -> Vec<Part> {
    let mut p = parser(name);
    let mut out = Vec::new();
    let mut rest = text;
    let mut k = 0;
    while !rest.is_empty() {
        let mut n = sizes[k % sizes.len()].clamp(1, rest.len());
        while !rest.is_char_boundary(n) {
            n += 1;
        }
        p.push_str(&rest[..n], &mut out);
        rest = &rest[n..];
        k += 1;
    }
    p.finish(&mut out);
    out
}

/// The stream is well formed: blocks open before their deltas and close once; each call's input
/// deltas, concatenated, parse to the input of its `tool-call`.
fn check_stream(parts: &[Part]) -> Result<(), String> {
    let mut open_text: Option<String> = None;
    let mut inputs: HashMap<String, (String, bool)> = HashMap::new();
    for p in parts {
        match p {
            Part::TextStart { id } => {
                if open_text.is_some() {
                    return Err(format!("text-start {id} inside an open text block"));
                }
                open_text = Some(id.to_string());
            }
            Part::TextDelta { id, delta } => {
                if open_text.as_deref() != Some(id) {
                    return Err(format!("text-delta for {id} outside its block"));
                }
                if delta.is_empty() {
                    return Err("empty text-delta".into());
                }
            }
            Part::TextEnd { id } if open_text.take().as_deref() != Some(id) => {
                return Err(format!("text-end for {id} that is not open"));
            }
            Part::ToolInputStart { id, .. } => {
                if open_text.is_some() {
                    return Err("tool-input-start inside an open text block".into());
                }
                if inputs
                    .insert(id.to_string(), (String::new(), false))
                    .is_some()
                {
                    return Err(format!("tool-input-start {id} twice"));
                }
            }
            Part::ToolInputDelta { id, delta } => match inputs.get_mut(id.as_str()) {
                Some((buf, false)) => buf.push_str(delta),
                _ => return Err(format!("tool-input-delta for {id} outside its input")),
            },
            Part::ToolInputEnd { id } => match inputs.get_mut(id.as_str()) {
                Some((_, ended @ false)) => *ended = true,
                _ => return Err(format!("tool-input-end for {id} that is not open")),
            },
            Part::ToolCall(c) => {
                let Some((deltas, true)) = inputs.get(c.tool_call_id.as_str()) else {
                    return Err(format!(
                        "tool-call {} without a finished input",
                        c.tool_call_id
                    ));
                };
                let joined: Value = serde_json::from_str(deltas)
                    .map_err(|e| format!("deltas {deltas:?} do not parse: {e}"))?;
                if joined != c.input {
                    return Err(format!("deltas {joined} differ from the input {}", c.input));
                }
                if !c.input.is_object() {
                    return Err("input is not an object".into());
                }
            }
            _ => {}
        }
    }
    if open_text.is_some() {
        return Err("a text block is never closed".into());
    }
    if let Some((id, _)) = inputs.iter().find(|(_, (_, ended))| !ended) {
        return Err(format!("the input of {id} is never closed"));
    }
    Ok(())
}

fn arb_text(p: &'static Parser) -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(p.fragments.clone()), 0..24).prop_map(|v| v.concat())
}

fn arb_case() -> impl Strategy<Value = (&'static str, String, Vec<usize>)> {
    let names: Vec<&'static str> = parsers().iter().map(|p| p.name.as_str()).collect();
    prop::sample::select(names).prop_flat_map(|name| {
        (
            Just(name),
            arb_text(parser_of(name)),
            prop::collection::vec(1usize..9, 1..6),
        )
    })
}

/// Semantics 2 on one case (the property `nothing_is_lost`): every byte of the output is in the
/// text, in a call span or in a reasoning span (whose content, markers and calls left out, is the
/// reasoning).
fn nothing_lost(name: &str, text: &str, sizes: &[usize]) -> Result<(), TestCaseError> {
    let mut p = parser(name);
    let out = push_all(&mut p, text.as_bytes(), sizes);
    use toolscope_core::protocol::SpanKind;
    let in_span = |kind: SpanKind, at: usize| {
        p.spans()
            .iter()
            .any(|s| s.kind == kind && s.start <= at && at < s.end)
    };
    let mut kept = String::new();
    for (at, c) in text.char_indices() {
        if !in_span(SpanKind::ToolCall, at)
            && !in_span(SpanKind::Reasoning, at)
            && !in_span(SpanKind::Markup, at)
        {
            kept.push(c);
        }
    }
    let protocol = parser_of(name).protocol.as_ref();
    let mut thought = String::new();
    // The suffix the first marker taught, in a family whose markers carry a per-checkpoint
    // one after a colon (`<think:SFX>`): a marker with another suffix is no marker, and stays
    // the reasoning's text. (A stem without the colon, `<ifm|think`, is completed by any.)
    let mut learned: Option<String> = None;
    let mut blocks: Vec<_> = p
        .spans()
        .iter()
        .filter(|s| s.kind == SpanKind::Reasoning)
        .collect();
    blocks.sort_by_key(|s| s.start);
    for block in blocks {
        // The block's reasoning, and where in the text each of its bytes is (calls taken out
        // of the middle of a block move the bytes after them).
        let mut body = String::new();
        let mut body_at: Vec<usize> = Vec::new();
        for (i, c) in text[block.start..block.end].char_indices() {
            let at = block.start + i;
            // Calls, and format tokens (a family's end tokens), are not reasoning.
            if !in_span(SpanKind::ToolCall, at) && !in_span(SpanKind::Markup, at) {
                body.push(c);
                body_at.extend(at..at + c.len_utf8());
            }
        }
        if let Some((open, close)) = protocol.and_then(|p| p.reasoning().markers) {
            // Markers with several spellings (special tokens printed with spaces around
            // them) are read in any of them.
            let spelled = protocol.and_then(|p| p.reasoning_spellings());
            let spelling = |head: &str, fits: &dyn Fn(&str) -> bool| {
                spelled.and_then(|(_, _, sp)| {
                    sp.iter()
                        .map(|s| format!("{head}{s}"))
                        .find(|m| fits(m.as_str()))
                })
            };
            let open = spelled
                .and_then(|(head, _, _)| spelling(head, &|m| body.starts_with(m)))
                .unwrap_or_else(|| open.to_string());
            let close = spelled
                .and_then(|(_, head, _)| spelling(head, &|m| body.ends_with(m)))
                .unwrap_or_else(|| close.to_string());
            let (open, close) = (open.as_str(), close.as_str());
            // (Format tokens taken out before it, `<|eom|>`, do not move its start.)
            let opened_by_template = (0..block.start).all(|i| in_span(SpanKind::Markup, i))
                && protocol.is_some_and(|p| p.reasoning_open());
            // A marker inside markup that failed as a call was the call's text, and stays
            // (as reasoning, with the rest of that markup).
            // Stems (`<think:`) are completed by the rest of the marker, up to its `>`.
            let stems = protocol.is_some_and(|p| p.reasoning_stems());
            // What completes a stem is a suffix of letters, digits, `_` and `-`, as the
            // parser reads it (`</think:</arg_key:…>` is no marker).
            let suffix_ok = |s: &str| {
                s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            };
            if !opened_by_template
                && body.starts_with(open)
                && !in_span(SpanKind::Malformed, body_at[0])
            {
                let len = match body.find('>') {
                    Some(gt) if stems && suffix_ok(&body[open.len()..gt]) => {
                        if open.ends_with(':') {
                            learned.get_or_insert_with(|| body[open.len()..gt].to_string());
                        }
                        gt + 1
                    }
                    _ => open.len(),
                };
                body.drain(..len);
                body_at.drain(..len);
            }
            let close_at = if stems {
                let close_at = body.rfind(close).filter(|&at| {
                    let suffix = body[at + close.len()..].strip_suffix('>');
                    at + close.len() < body.len()
                        && suffix.is_some_and(|s| {
                            suffix_ok(s) && learned.as_deref().is_none_or(|l| l == s)
                        })
                });
                if let Some(at) = close_at
                    && close.ends_with(':')
                {
                    let suffix = &body[at + close.len()..body.len() - 1];
                    learned.get_or_insert_with(|| suffix.to_string());
                }
                close_at
            } else {
                body.ends_with(close).then(|| body.len() - close.len())
            };
            if let Some(at) = close_at
                && !in_span(SpanKind::Malformed, body_at[at])
            {
                body.truncate(at);
            }
        }
        thought.push_str(&body);
    }
    let collapsed = Collapsed::of(&out);
    // Text outside call and reasoning spans is exactly the text parts, except whitespace
    // that separated a call from its close tag.
    let squash = |s: &str| s.split_whitespace().collect::<String>();
    prop_assert_eq!(
        squash(&collapsed.text),
        squash(&kept),
        "spans {:?}",
        p.spans()
    );
    prop_assert_eq!(
        squash(&collapsed.reasoning),
        squash(&thought),
        "spans {:?}",
        p.spans()
    );
    Ok(())
}

/// [`nothing_lost`] for one text, fed a byte at a time and whole.
fn nothing_lost_a_byte_at_a_time_and_whole(name: &str, text: &str) {
    for sizes in [[1], [usize::MAX]] {
        if let Err(e) = nothing_lost(name, text, &sizes) {
            panic!("chunks {sizes:?}: {e}");
        }
    }
}

/// A broken call inside reasoning (trinity makes calls there) runs to its close or the next call,
/// and a reasoning close marker inside it is its text: that marker stays in the reasoning, even
/// where a call follows it in the same reasoning block. (A random draw found this case.)
#[test]
fn a_close_marker_inside_a_broken_call_stays_in_the_reasoning() {
    let text = "<tool_call>\0</think><tool_call>\n{\"name\": \"calc\", \"arguments\": {\"nums\":[1,2.5],\"tags\":[\"a\"],\"budget\":{\"min\":1}}}\n</tool_call>";
    nothing_lost_a_byte_at_a_time_and_whole("trinity+flipped", text);
}

/// A reasoning close whose suffix is not the one the open marker taught is no marker
/// (`<think:6124c78e>` … `</think:opensource>`): it stays the reasoning's text, and the
/// property's own reading of the markers learns the suffix as the parser does. (A random draw
/// found the property reading it as the close.)
#[test]
fn a_close_with_another_suffix_stays_in_the_reasoning() {
    let text = "<think:6124c78e></think:opensource>";
    nothing_lost_a_byte_at_a_time_and_whole("hy-v4", text);
}

/// Reasoning read while markup that then failed as a call was open (lfm2's call start, then a
/// think block) has its own span, and the failed markup's span does not cover it: the
/// reasoning's markers are markers, not the markup's text. (A random draw found the malformed
/// span running over the reasoning.)
#[test]
fn a_malformed_span_does_not_cover_the_reasoning_read_inside_it() {
    let text = "<|tool_call_start|><think>\nmaybe <|tool_call_start|>[get_weather(city=\"Rome\")]<|tool_call_end|> or not\n  indented\n</think>\n";
    nothing_lost_a_byte_at_a_time_and_whole("lfm2", text);
}

/// A stream of one character a piece counts a run of prose once, when the run ends: the fences
/// must still learn where the run left the line, so that a fence opening on the next line is
/// taken out around the call there as it is in the whole text, and a backtick in mid-line stays
/// text; and so must a scanner that reads a call whose marker a server stripped only at a line's
/// start (and, as such a call, only at the output's end), one that reads JSON on a blank line,
/// and gemma4's, which reads a bare `call:` after the end of a word.
#[test]
fn what_follows_a_run_of_prose_is_read_as_in_the_whole_text() {
    // internlm's call marker is a special token, which a server may strip; gemma4 reads a bare
    // `call:` only where a word ends before it.
    let bare = "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}";
    let call = "call:get_weather{city:<|\"|>Paris<|\"|>}";
    for (name, text, calls) in [
        ("internlm", format!("Let me check that first.\n{bare}"), 1),
        (
            "internlm",
            format!("Let me check that first.\n  \n \t{bare}"),
            1,
        ),
        ("internlm", format!("Let me check that first. {bare}"), 0),
        ("gemma4", format!("Let me look that up. {call}"), 1),
        ("gemma4", format!("Let me look that up{call}"), 0),
        ("gemma4", format!("Let me look that up, magic{call}"), 0),
        ("gemma4", format!("Let me look that up, magic {call}"), 1),
        // A word that may begin a bare call waits for the next piece (on the run of prose: see
        // `Lead`), and is text when it begins none: before a call, a marker, a character of
        // more than one byte, or the end.
        ("gemma4", format!("Then I call the tool: {call}"), 1),
        ("gemma4", format!("Let me look that up, ca{call}"), 0),
        ("gemma4", format!("Let me look that up, cal, {call}"), 1),
        (
            "gemma4",
            format!("Let me look that up, c<|tool_call>{call}<tool_call|>"),
            1,
        ),
        (
            "gemma4",
            "Let me look that up, cé c日本 caf c\u{1F680}".into(),
            0,
        ),
        ("gemma4", "Let me look that up, then call".into(), 0),
        ("gemma4", "Let me look that up, then c".into(), 0),
        (
            "gemma4",
            format!("<|channel>thought\nI could call it, c<channel|>Then I call it. {call}"),
            1,
        ),
        (
            "gemma4",
            format!("<|channel>thought\nI will {call} then ca<channel|>Done, call"),
            1,
        ),
    ] {
        let whole = read_alike_in_small_pieces(name, &text);
        assert_eq!(whole.calls.len(), calls, "{name}: {text:?}");
    }
    // hermes reads JSON that opens a blank line as a call that lost its tags: this one is no
    // call (no arguments), which it says.
    let json = "{\"name\": \"get_weather\", \"content\": {\"t\": 21}}";
    for (text, errors) in [
        (format!("Let me check that first.\n{json}\nDone."), 1),
        (format!("Let me check that first.\n \r\n{json}\nDone."), 1),
        (format!("Let me check that first. {json}\nDone."), 0),
    ] {
        let whole = read_alike_in_small_pieces("hermes", &text);
        assert_eq!(whole.errors.len(), errors, "{text:?}");
    }
    // A fence around a call is taken out where it opens a line.
    let calls = [
        (
            "hermes",
            "<tool_call>\n{\"name\": \"calc\", \"arguments\": {\"nums\": [1]}}\n</tool_call>",
        ),
        (
            "qwen3-coder",
            "<tool_call>\n<function=calc>\n<parameter=nums>\n[1]\n</parameter>\n</function>\n</tool_call>",
        ),
        (
            "minimax-m2",
            "<minimax:tool_call>\n<invoke name=\"calc\">\n<parameter name=\"nums\">[1]</parameter>\n</invoke>\n</minimax:tool_call>",
        ),
    ];
    for (name, call) in calls {
        let prose = if name == "minimax-m2" { "</think>" } else { "" };
        for (text, fenced) in [
            (
                format!("{prose}Let me check that first.\n```\n{call}\n```\nDone."),
                true,
            ),
            (
                format!("{prose}Let me check that first. ```\n{call}\n```\nDone."),
                false,
            ),
        ] {
            let whole = read_alike_in_small_pieces(name, &text);
            assert_eq!(whole.calls.len(), 1, "{name}: {text:?}");
            assert_eq!(whole.text.contains('`'), !fenced, "{name}: {text:?}");
        }
    }
}

/// `text` read by `name` in small pieces (one byte or character, a few, five), as bytes and as
/// strings, gives what it gives whole, which is returned.
fn read_alike_in_small_pieces(name: &str, text: &str) -> Collapsed {
    let whole = Collapsed::of(&run(name, text.as_bytes(), &[usize::MAX]));
    for sizes in [&[1][..], &[1, 1, 2], &[5]] {
        let got = Collapsed::of(&run(name, text.as_bytes(), sizes));
        assert_eq!(got, whole, "{name}, chunks {sizes:?}: {text:?}");
        let got = Collapsed::of(&run_str(name, text, sizes));
        assert_eq!(got, whole, "{name}, str chunks {sizes:?}: {text:?}");
    }
    whole
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// Semantics 1: any chunking gives the text, calls and errors of the whole-text parse.
    #[test]
    fn any_chunking_equals_generate((name, text, sizes) in arb_case()) {
        let whole = run(name, text.as_bytes(), &[usize::MAX]);
        let generate = match &parser_of(name).protocol {
            Some(p) => p.parse_generated(&tools(), text.as_bytes()).parts,
            None => toolscope_core::protocol::generate_parts(whole.clone()),
        };
        let want = Collapsed::of(&generate);
        prop_assert_eq!(&Collapsed::of(&whole), &want);
        for how in [vec![1], sizes.clone()] {
            let got = run(name, text.as_bytes(), &how);
            prop_assert_eq!(&Collapsed::of(&got), &want, "chunks {:?}", how);
        }
        // Text handed over as strings (not validated again) reads as its bytes do, whole or in
        // pieces on character boundaries.
        if let Some(p) = &parser_of(name).protocol {
            let as_text = p.parse_text(&tools(), &text);
            prop_assert_eq!(&Collapsed::of(&as_text.parts), &want, "parse_text");
            prop_assert_eq!(
                as_text.spans,
                p.parse_generated(&tools(), text.as_bytes()).spans,
                "parse_text spans"
            );
        }
        let got = run_str(name, &text, &sizes);
        prop_assert_eq!(&Collapsed::of(&got), &want, "str chunks {:?}", sizes);
    }

    /// Semantics 3 and the part grammar: deltas add up, blocks are well formed.
    #[test]
    fn deltas_add_up_and_blocks_are_well_formed((name, text, sizes) in arb_case()) {
        for how in [vec![1], sizes, vec![usize::MAX]] {
            let parts = run(name, text.as_bytes(), &how);
            if let Err(e) = check_stream(&parts) {
                prop_assert!(false, "{} with chunks {:?}: {}\n{:?}", name, how, e, text);
            }
        }
    }

    /// Semantics 2: nothing is lost. Every byte of the output is in the text, in a call span or
    /// in a reasoning span (whose content, markers and calls left out, is the reasoning).
    #[test]
    fn nothing_is_lost((name, text, sizes) in arb_case()) {
        nothing_lost(name, &text, &sizes)?;
    }

    /// Semantics 5: arbitrary bytes never panic, in any protocol, at any chunking.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300), sizes in prop::collection::vec(1usize..7, 1..4)) {
        for name in parsers().iter().map(|p| p.name.as_str()) {
            let whole = run(name, &bytes, &[usize::MAX]);
            let parts = run(name, &bytes, &sizes);
            prop_assert!(check_stream(&parts).is_ok());
            prop_assert_eq!(Collapsed::of(&parts), Collapsed::of(&whole));
            // The whole-text parse (valid text validated at once, invalid bytes decoded and
            // reported) gives what the stream does.
            if let Some(p) = &parser_of(name).protocol {
                let generate = p.parse_generated(&tools(), &bytes).parts;
                prop_assert_eq!(Collapsed::of(&generate), Collapsed::of(&whole));
            }
        }
    }

    /// `--protocol auto`: at any chunking the same protocol is chosen, and the parts are exactly
    /// that protocol's (the held text is parsed from its first byte), well formed.
    #[test]
    fn auto_chooses_the_same_at_any_chunking_and_parses_as_the_choice((name, text, sizes) in arb_case()) {
        let auto = |how: &[usize]| {
            let mut p = AutoParser::new(&tools(), None);
            let mut out = Vec::new();
            let mut chosen = Vec::new();
            let mut rest = text.as_bytes();
            let mut k = 0;
            while !rest.is_empty() {
                let n = how[k % how.len()].clamp(1, rest.len());
                chosen.extend(p.push(&rest[..n], &mut out));
                rest = &rest[n..];
                k += 1;
            }
            chosen.extend(p.finish(&mut out));
            (chosen, out)
        };
        let (chosen, whole) = auto(&[usize::MAX]);
        prop_assert_eq!(chosen.len(), 1, "{}: the choice is made once", name);
        let protocol = chosen[0].protocol.clone();
        let mut direct = protocol.stream_parser(&tools());
        let mut want = Vec::new();
        direct.push(text.as_bytes(), &mut want);
        direct.finish(&mut want);
        prop_assert_eq!(&whole, &want);
        for how in [vec![1], sizes] {
            let (again, parts) = auto(&how);
            prop_assert_eq!(again.len(), 1);
            prop_assert_eq!(again[0].protocol.name(), protocol.name(), "chunks {:?}", how);
            prop_assert!(check_stream(&parts).is_ok());
            prop_assert_eq!(Collapsed::of(&parts), Collapsed::of(&whole), "chunks {:?}", how);
        }
    }
}

#[test]
fn hostile_inputs_end_cleanly() {
    let deep = "[".repeat(100_000);
    let digits = "9".repeat(100_000);
    let cases: Vec<Vec<u8>> = vec![
        format!("<tool_call>{{\"name\":\"get_weather\",\"arguments\":{deep}").into_bytes(),
        format!(
            "<tool_call>{{\"name\":\"calc\",\"arguments\":{{\"nums\":[{digits}]}}}}</tool_call>"
        )
        .into_bytes(),
        format!("<calc><nums>{digits}</nums></calc>").into_bytes(),
        format!("<calc><budget>{}</budget></calc>", "<a>".repeat(100_000)).into_bytes(),
        format!("<calc>\nnums: {deep}\n</calc>").into_bytes(),
        format!(
            "<get_weather>\ncity: {}\n</get_weather>",
            "- ".repeat(100_000)
        )
        .into_bytes(),
        format!(
            "<tool_call><function=calc><parameter=nums>{deep}</parameter></function></tool_call>"
        )
        .into_bytes(),
        b"\0\0<tool_call>\0{\0}\xff\xfe</tool_call>".to_vec(),
        "<tool_call><get_weather><city><tool_call></city><function=x><"
            .repeat(2000)
            .into_bytes(),
    ];
    for bytes in &cases {
        for name in parsers().iter().map(|p| p.name.as_str()) {
            for sizes in [[usize::MAX], [1], [7]] {
                let parts = run(name, bytes, &sizes);
                check_stream(&parts).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        }
    }
}

/// Values that put a decision (an entity, an escape, a close tag, a CDATA end, a multi-byte
/// character) where a chunk boundary may fall.
const TRICKY_VALUES: &[&str] = &[
    "&x&quot;",
    "a &amp b &amp; c",
    "<![CDATA[ ]] > ]]]>",
    "x</con y",
    "<content>in</content>",
    "a\\\"b",
    "é😀",
    "\n  spaced  \n",
    "a<parameter b",
    "'quoted: yes'",
    "|\n  l1\n  </b>",
    "[a, b]",
    "plain # not a comment?",
    "\n    x = 1\n",
    "trailing\n\n",
    "\n",
    "  lead",
    "s = \"</parameter>\n<parameter=name>\"",
    "a</content>\n<b>x</b>",
    "<![CDATA[<function=beta>]]>",
    "x </write_file> y",
    "<tool_call><function=f></function></tool_call>",
];

/// Tricky texts split at every single point; one byte at a time and whole must agree: each
/// protocol's hand-made tricky texts (`tests/data/protocols/<name>/tricky.json`), and the tricky
/// values written by each protocol itself.
#[test]
fn tricky_values_survive_every_split() {
    let mut cases: Vec<(&str, String)> = Vec::new();
    for p in parsers() {
        let Some(protocol) = &p.protocol else {
            continue;
        };
        for text in protocol_data(&p.name, "tricky.json") {
            cases.push((&p.name, text));
        }
        for v in TRICKY_VALUES {
            let call = protocol.format_call("write_file", &json!({"path": "/a", "content": v}));
            cases.push((&p.name, format!("pre {call} post")));
        }
    }
    for (name, text) in &cases {
        let bytes = text.as_bytes();
        let want = Collapsed::of(&run(name, bytes, &[usize::MAX]));
        for cut in 1..bytes.len() {
            let mut p = parser(name);
            let mut out = Vec::new();
            p.push(&bytes[..cut], &mut out);
            p.push(&bytes[cut..], &mut out);
            p.finish(&mut out);
            assert_eq!(Collapsed::of(&out), want, "{name}: {text:?} split at {cut}");
            check_stream(&out).unwrap_or_else(|e| panic!("{name}: {text:?} split at {cut}: {e}"));
        }
        assert_eq!(
            Collapsed::of(&run(name, bytes, &[1])),
            want,
            "{name}: {text:?} one byte at a time"
        );
    }
}

/// Every protocol of the registry has its hand-made test data: fragments and tricky texts.
#[test]
fn every_protocol_has_its_test_data() {
    for p in Protocol::all() {
        for file in ["fragments.json", "tricky.json"] {
            assert!(
                !protocol_data(p.name(), file).is_empty(),
                "tests/data/protocols/{}/{file} is missing or empty",
                p.name()
            );
        }
    }
}

/// Pieces of string values that a protocol must carry through byte for byte (semantics 3):
/// indentation, blank lines, newlines at either end, and text that looks like the protocols'
/// own markup. Close tags are followed by text, so that no value is ambiguous (a value that ends
/// in `</parameter>` right before `</function>` cannot be told from the real close in
/// qwen3-coder, which has no escaping).
const VALUE_PIECES: &[&str] = &[
    "x = 1",
    "    ",
    "\t",
    "\n",
    "\n\n",
    "é😀",
    "</parameter> a",
    "b </function> c",
    "</tool_call> d",
    "<parameter=name>",
    "<tool_call>",
    "<tool_call>\n<function=f>\n<parameter=a>\n1\n</parameter>\n</function>\n</tool_call>",
    "</content> e",
    "<content>nested</content>",
    "</write_file> f",
    "<write_file>",
    "<![CDATA[ <function=beta> </parameter> ]]>",
    "&amp; &lt;",
    "```",
    "{\"name\": \"x\"}",
    "key: value",
    "- item",
    "# not a comment",
    "'q'",
    "\"dq\"",
    "\\",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Semantics 3: a string value written by a protocol reads back exactly, whole and at any
    /// chunking, with no error: indentation, newlines at its ends and markup inside included.
    #[test]
    fn string_values_read_back_byte_exact(
        pieces in prop::collection::vec(prop::sample::select(VALUE_PIECES), 0..8),
        sizes in prop::collection::vec(1usize..9, 1..4),
    ) {
        let content: String = pieces.concat();
        let input = json!({"path": "/a", "content": content});
        for p in Protocol::all() {
            let text = format!("Before.\n{}\nAfter.", p.format_call("write_file", &input));
            for how in [vec![usize::MAX], vec![1], sizes.clone()] {
                let got = Collapsed::of(&run(&reasoning_closed(&p), text.as_bytes(), &how));
                prop_assert_eq!(
                    &got.calls,
                    &vec![("write_file".to_string(), input.clone())],
                    "{} chunks {:?}: {:?}", p.name(), how, text
                );
                prop_assert!(got.errors.is_empty(), "{}: {:?} {:?}", p.name(), got.errors, text);
            }
        }
    }
}

/// An envelope after text on its line is a call only if `</tool_call>` follows it; a reasoning
/// close marker that follows instead ends the reasoning, and the envelope is reasoning text (it
/// was read as the call's own text, and the answer after it as reasoning). A random draw of
/// `nothing_is_lost` found this case.
#[test]
fn a_close_marker_after_an_envelope_waiting_for_its_close_tag_ends_the_reasoning() {
    let text = " \"arguments\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</think>The answer.";
    for sizes in [vec![1], vec![7], vec![usize::MAX]] {
        if let Err(e) = nothing_lost("trinity+flipped", text, &sizes) {
            panic!("chunks {sizes:?}: {e}");
        }
        let out = run("trinity+flipped", text.as_bytes(), &sizes);
        let parts = Collapsed::of(&out);
        assert_eq!(parts.text, "The answer.", "chunks {sizes:?}");
        assert!(parts.reasoning.ends_with("\"Paris\"}}"), "chunks {sizes:?}");
        assert!(!out.iter().any(|p| matches!(p, Part::ToolCall(_))));
    }
}

/// Inside reasoning, text that looks like a call (a JSON envelope, the format's own call, a
/// python call, a cut gemma4 call, a bare XML tag), with or without prose before it, then the
/// reasoning's close marker: the marker ends the reasoning, whatever the text before it became,
/// and the answer after it is text. Every protocol with plain reasoning markers, in both
/// reasoning-open settings, whole and a byte at a time. (The first case, found by a random draw
/// of `nothing_is_lost`, read the marker and the whole answer as reasoning.)
#[test]
fn a_close_marker_after_call_like_reasoning_ends_it() {
    let mut wrong = Vec::new();
    for p in parsers() {
        let Some(protocol) = &p.protocol else {
            continue;
        };
        let Some((open, close)) = protocol.reasoning().markers else {
            continue;
        };
        // (Stems and spelled markers are completed by what follows them: not these texts.)
        if protocol.reasoning_stems() || protocol.reasoning_spellings().is_some() {
            continue;
        }
        let bodies = [
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}".to_string(),
            protocol.format_call("get_weather", &json!({"city": "Paris"})),
            "[get_weather(city=\"Paris\")]".to_string(),
            "call:get_weather{city:".to_string(),
            "<function=get_weather>".to_string(),
        ];
        for body in &bodies {
            for lead in ["", "I think of "] {
                for opened in [true, false] {
                    let marker = if opened { open } else { "" };
                    let text = format!("{marker}{lead}{body}{close}The answer.");
                    let inside = opened || protocol.reasoning_open();
                    for sizes in [vec![usize::MAX], vec![1]] {
                        let c = Collapsed::of(&run(&p.name, text.as_bytes(), &sizes));
                        if c.reasoning.contains(close)
                            || (inside && !c.text.ends_with("The answer."))
                        {
                            wrong.push(format!(
                                "{} {sizes:?} {text:?}: text {:?}, reasoning {:?}",
                                p.name, c.text, c.reasoning
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
