//! What the protocols' own tests share: tools, and a parse checked at every split.

use std::ops::Deref;

use serde_json::{Value, json};

use super::parser::StreamParser;
use super::span::SpanKind;
use super::spec::Protocol;
use super::text::scanner::Scanner;
use crate::part::{Collapsed, Part};
use crate::tool::{ToolDef, ToolSet};

/// `get_weather(city, days, unit)`, `search(query)`, `write_file(path, content)`.
pub(crate) fn tools() -> ToolSet {
    ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "Current weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"},"unit":{"enum":["c","f"]}},"required":["city"]}),
        ),
        ToolDef::new(
            "search",
            "Search the web",
            json!({"type":"object","properties":{"query":{"type":"string"}}}),
        ),
        ToolDef::new(
            "write_file",
            "Write a file",
            json!({"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}}),
        ),
    ])
    .expect("valid tools")
}

fn run(p: &Protocol, tools: &ToolSet, pieces: &[&[u8]]) -> Vec<Part> {
    let mut parser = p.stream_parser(tools);
    let mut out = Vec::new();
    for piece in pieces {
        parser.push(piece, &mut out);
    }
    parser.finish(&mut out);
    out
}

/// The collapsed parse of `text`, after checking that generate, every split into two
/// pieces, and one byte at a time all give it.
/// The cases every protocol answers the same way, written with the protocol's own
/// renderers: one call, two parallel calls, text before and after, reasoning before the call,
/// a call split at every byte, a call whose end markup is missing at the end of the output,
/// a malformed body (text and an error part), an unknown tool (a call and an error part).
pub(crate) fn standard_cases(p: &Protocol) {
    let paris = serde_json::json!({"city": "Paris"});
    let query = serde_json::json!({"query": "rust"});
    let one = p.format_call("get_weather", &paris);
    every_split(p, &one)
        .call("get_weather", paris.clone())
        .no_errors()
        .text_trimmed("");

    let two = p.format_calls(&[("get_weather", &paris), ("search", &query)]);
    every_split(p, &two)
        .calls(&[
            ("get_weather".into(), paris.clone()),
            ("search".into(), query.clone()),
        ])
        .no_errors();

    let around = format!("Let me look. {one}\nDone.");
    let c = every_split(p, &around).call_count(1);
    assert!(
        c.text.starts_with("Let me look.") && c.text.ends_with("Done."),
        "{around}"
    );

    if let Some(thought) = p.format_reasoning("Paris needs the weather tool.") {
        let text = format!("{thought}{one}");
        let c = every_split(p, &text);
        assert!(
            c.reasoning.contains("Paris needs the weather tool."),
            "{text}"
        );
        assert_eq!(c.calls.len(), 1, "{text}");
        assert!(!c.text.contains("weather tool"), "{text}");
    }

    // The call's end markup cut off: everything after the JSON's last bracket, or, in a
    // markup format, after the argument's own close tag (`</…>`, or a special token `<|…|>`,
    // or a tag of special tokens `<|close|>…<|sep|>`; or its value, where the argument has
    // none).
    let value_end = one.rfind("Paris").expect("the value is written") + "Paris".len();
    let cut = match one.rfind(['}', ']']).filter(|j| *j > value_end) {
        Some(j) => one[..j + 1].to_string(),
        None => {
            // (A markup value written as JSON ends with its string's quote.)
            let value_end = value_end + usize::from(one[value_end..].starts_with('"'));
            // (A family token written before every tag, MiniMax M3's namespace token, goes
            // with the tag.)
            let token = p
                .end_tokens()
                .iter()
                .find(|t| one[value_end..].starts_with(**t))
                .map_or(0, |t| t.len());
            let value_end = value_end + token;
            let rest = &one[value_end..];
            let nl = usize::from(rest.starts_with('\n'));
            let tag_end = |rest: &str| match rest.strip_prefix("<|close|>") {
                Some(after) => after.find("<|sep|>").map(|k| "<|close|>".len() + k + 6),
                None => rest.find('>'),
            };
            let close = (rest[nl..].starts_with("</") || rest[nl..].starts_with("<|"))
                .then(|| tag_end(&rest[nl..]))
                .flatten()
                .map(|k| value_end + nl + k + 1)
                .filter(|end| *end < one.trim_end().len());
            one[..close.unwrap_or(value_end)].to_string()
        }
    };
    // (A format whose call ends where its JSON ends has no end markup to cut.)
    if cut.len() < one.len() {
        every_split(p, &cut)
            .call("get_weather", paris.clone())
            .no_errors();
    }

    let bad = p.malformed_call("get_weather", &paris);
    every_split(p, &bad).kept().some_errors();

    let unknown = p.format_call("launch_rocket", &serde_json::json!({"stage": 1}));
    let c = every_split(p, &unknown);
    if unknown.contains("<launch_rocket>") {
        // A format whose element is named after the tool: only a known tool's name opens
        // a call, and an unknown one's markup is text.
        assert!(c.calls.is_empty(), "{unknown}");
        assert_eq!(c.text, unknown, "nothing lost");
    } else {
        // Without a schema a markup value stays the text it is (`"1"`); JSON keeps `1`.
        let stage = c.calls.first().map(|(_, v)| v["stage"].clone());
        assert_eq!(c.calls.len(), 1, "{unknown}");
        assert_eq!(c.calls[0].0, "launch_rocket", "{unknown}");
        assert!(
            stage == Some(serde_json::json!(1)) || stage == Some(serde_json::json!("1")),
            "{unknown}: {:?}",
            c.calls
        );
        assert_eq!(c.errors, ["unknown-tool"], "{unknown}");
    }

    // The prompt reads back as this protocol with these tools; results read back.
    let prompt = p.system_prompt(&tools());
    let (back, set) = Protocol::detect_from_prompt(&prompt).expect("the prompt is recognised");
    assert_eq!(back.with_reasoning_open(p.reasoning_open_setting()), *p);
    assert_eq!(set.to_json(), tools().to_json());
    assert_eq!(
        p.read_result(&p.format_result("get_weather", "18 degrees")),
        "18 degrees"
    );
}

/// Every protocol of the registry answers the standard cases (none opts in or out).
#[test]
fn every_protocol_runs_the_standard_cases() {
    let mut failed = Vec::new();
    for p in Protocol::all() {
        let name = p.name();
        // The calls are written outside reasoning (a family whose template opens it, such
        // as minimax-m2, is read here as an output that does not start inside it).
        let p = p.with_reasoning_open(Some(false));
        if let Err(e) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| standard_cases(&p)))
        {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failed.push(format!(
                "{name}: {}",
                why.chars().take(400).collect::<String>()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// What a format's tests use, in one import.
pub(crate) mod prelude {
    pub(crate) use serde_json::json;

    pub(crate) use crate::part::{Collapsed, Part};
    pub(crate) use crate::protocol::span::SpanKind;
    pub(crate) use crate::protocol::spec::Protocol;
    pub(crate) use crate::protocol::tests_support::{
        call_span_is_the_call, first_chunk, named, notices, one_tool, spans, tools,
        two_calls_written, weather_call, whole,
    };
}

/// The collapsed parse of `text` by `p`, after checking that generate, one chunk, every split
/// into two pieces and one byte at a time all give it; its fields are checked with [`Got`]'s
/// methods.
pub(crate) fn every_split(p: &Protocol, text: &str) -> Got {
    every_split_with(p, &tools(), text)
}

/// [`every_split`] with other tools than the shared ones.
pub(crate) fn every_split_with(p: &Protocol, tools: &ToolSet, text: &str) -> Got {
    let bytes = text.as_bytes();
    let want = Collapsed::of(&p.parse_generated(tools, bytes).parts);
    assert_eq!(
        Collapsed::of(&run(p, tools, &[bytes])),
        want,
        "stream, one chunk"
    );
    for cut in 1..bytes.len() {
        let got = Collapsed::of(&run(p, tools, &[&bytes[..cut], &bytes[cut..]]));
        assert_eq!(got, want, "split at {cut} of {text:?}");
    }
    let ones: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(
        Collapsed::of(&run(p, tools, &ones)),
        want,
        "one byte at a time"
    );
    Got::new(text, want)
}

/// The collapsed parts of a whole parse of `text` (the generate path alone: no split checks).
pub(crate) fn whole(p: &Protocol, tools: &ToolSet, text: &str) -> Collapsed {
    Collapsed::of(&p.parse_generated(tools, text.as_bytes()).parts)
}

/// The spans of a whole parse of `text` by `p` with the shared tools, each with what it covers.
pub(crate) fn spans<'a>(p: &Protocol, text: &'a str) -> Vec<(SpanKind, &'a str)> {
    p.parse_generated(&tools(), text.as_bytes())
        .spans
        .iter()
        .map(|s| (s.kind, &text[s.start..s.end]))
        .collect()
}

/// The notices (warnings that only inform) of a whole parse of `text` with the shared tools.
pub(crate) fn notices(p: &Protocol, text: &str) -> Vec<String> {
    p.parse_generated(&tools(), text.as_bytes())
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Warning(w) if w.is_notice() => Some(w.message.clone()),
            _ => None,
        })
        .collect()
}

/// Two calls as `p` writes them in one answer: `get_weather` for Paris, then `search` for
/// `query`.
pub(crate) fn two_calls_written(p: &Protocol, query: &str) -> String {
    p.format_calls(&[
        ("get_weather", &json!({"city": "Paris"})),
        ("search", &json!({"query": query})),
    ])
}

/// The registered protocol with this name or alias, with its default settings.
pub(crate) fn named(name: &str) -> Protocol {
    Protocol::from_name(name).expect("a registered protocol")
}

/// A stream parser of `p` with the shared tools, and the parts it puts out for `chunk`, the
/// first bytes of a stream that goes on (what it holds back is not in them).
pub(crate) fn first_chunk(p: &Protocol, chunk: &[u8]) -> (StreamParser, Vec<Part>) {
    let mut parser = p.stream_parser(&tools());
    let mut out = Vec::new();
    parser.push(chunk, &mut out);
    (parser, out)
}

/// A call of `get_weather` for `city` as `p` writes it.
pub(crate) fn weather_call(p: &Protocol, city: &str) -> String {
    p.format_call("get_weather", &json!({ "city": city }))
}

/// The span of a call that `p` wrote between text is the call, without the text around it.
pub(crate) fn call_span_is_the_call(p: &Protocol) {
    let call = weather_call(p, "Paris");
    let text = format!("Let me check. {call} Done.");
    assert_eq!(spans(p, &text)[0], (SpanKind::ToolCall, call.as_str()));
}

/// A set of one tool, `name` with the parameters `schema`.
pub(crate) fn one_tool(name: &str, schema: Value) -> ToolSet {
    ToolSet::new(vec![ToolDef::new(name, "", schema)]).expect("a valid tool")
}

/// A scanner as a format makes it, for the engines' own tests (no format around it: no end
/// tokens, fences or reasoning splitter).
pub(crate) type MakeScanner<'a> = &'a dyn Fn(ToolSet) -> Box<dyn Scanner>;

/// Runs a scanner alone over `pieces`, then ends the output (cut off, or as the model meant).
fn scan(make: MakeScanner, pieces: &[&[u8]], cut: bool) -> Vec<Part> {
    let mut parser = StreamParser::with_scanner(make(tools()));
    let mut out = Vec::new();
    for piece in pieces {
        parser.push(piece, &mut out);
    }
    if cut {
        parser.finish_cut(&mut out);
    } else {
        parser.finish(&mut out);
    }
    out
}

/// The collapsed parse of `text` by a scanner alone, after checking that one chunk, every split
/// into two pieces and one byte at a time all give it.
pub(crate) fn scan_every_split(make: MakeScanner, text: &str, cut: bool) -> Got {
    let bytes = text.as_bytes();
    let want = Collapsed::of(&scan(make, &[bytes], cut));
    for at in 1..bytes.len() {
        let got = Collapsed::of(&scan(make, &[&bytes[..at], &bytes[at..]], cut));
        assert_eq!(got, want, "split at {at} of {text:?}");
    }
    let ones: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(
        Collapsed::of(&scan(make, &ones, cut)),
        want,
        "one byte at a time"
    );
    Got::new(text, want)
}

/// What an engine's own tests give it: one call of `get_weather` with `{"city": "Paris"}` in the
/// engine's markup, that call cut off inside its arguments, and a malformed call.
pub(crate) struct EngineCase<'a> {
    pub call: &'a str,
    pub unfinished: &'a str,
    pub malformed: &'a str,
}

/// The cases every engine answers the same way, run on the scanner alone at every split: a
/// call; text around it; an unfinished call, reported and kept as text when the output is cut
/// off, and never taken for a whole call when it stops there; a malformed call, reported and
/// kept as text.
pub(crate) fn engine_cases(make: MakeScanner, case: &EngineCase) {
    let paris = json!({"city": "Paris"});
    for cut in [false, true] {
        scan_every_split(make, case.call, cut)
            .call("get_weather", paris.clone())
            .no_errors()
            .text_trimmed("");
    }

    let around = format!("Let me look.\n{}\nDone.", case.call);
    let c = scan_every_split(make, &around, false)
        .call("get_weather", paris.clone())
        .no_errors();
    assert!(
        c.text.starts_with("Let me look.") && c.text.trim_end().ends_with("Done."),
        "{around}: {:?}",
        c.text
    );

    scan_every_split(make, case.unfinished, true)
        .kept()
        .errors(&["unfinished-tool-call"]);
    let c = scan_every_split(make, case.unfinished, false);
    assert!(
        c.calls.iter().all(|(_, v)| *v != paris),
        "{}: {:?}",
        case.unfinished,
        c.calls
    );
    assert!(
        !c.errors.is_empty() || !c.calls.is_empty(),
        "{}: neither a call nor an error",
        case.unfinished
    );

    scan_every_split(make, case.malformed, false)
        .kept()
        .some_errors();
}

/// A parse and the input it came from. Each method checks one field and hands the parse back
/// for the next, so a test states what it expects and not the steps; a failed check names the
/// input and the whole parse. The fields stay readable through `Deref`.
#[derive(Debug)]
pub(crate) struct Got {
    input: String,
    parse: Collapsed,
}

impl Deref for Got {
    type Target = Collapsed;

    fn deref(&self) -> &Collapsed {
        &self.parse
    }
}

impl Got {
    fn new(input: &str, parse: Collapsed) -> Got {
        Got {
            input: input.to_string(),
            parse,
        }
    }

    /// The calls, names and arguments, in order.
    #[track_caller]
    pub(crate) fn calls(self, want: &[(String, Value)]) -> Got {
        assert_eq!(
            self.parse.calls, want,
            "calls of {:?}: {self:?}",
            self.input
        );
        self
    }

    /// One call, this tool with these arguments.
    #[track_caller]
    pub(crate) fn call(self, name: &str, input: Value) -> Got {
        self.calls(&[(name.to_string(), input)])
    }

    /// No call, and the whole input kept as text: nothing lost.
    #[track_caller]
    pub(crate) fn kept(self) -> Got {
        let got = self.no_calls();
        assert_eq!(got.parse.text, got.input, "nothing lost: {got:?}");
        got
    }

    #[track_caller]
    pub(crate) fn no_calls(self) -> Got {
        assert!(self.parse.calls.is_empty(), "{self:?}");
        self
    }

    #[track_caller]
    pub(crate) fn call_count(self, want: usize) -> Got {
        assert_eq!(self.parse.calls.len(), want, "{self:?}");
        self
    }

    #[track_caller]
    pub(crate) fn text(self, want: impl AsRef<str>) -> Got {
        assert_eq!(self.parse.text, want.as_ref(), "text of {:?}", self.input);
        self
    }

    /// The text without the white space at its ends.
    #[track_caller]
    pub(crate) fn text_trimmed(self, want: impl AsRef<str>) -> Got {
        assert_eq!(self.parse.text.trim(), want.as_ref(), "{self:?}");
        self
    }

    #[track_caller]
    pub(crate) fn reasoning(self, want: impl AsRef<str>) -> Got {
        assert_eq!(
            self.parse.reasoning,
            want.as_ref(),
            "reasoning of {:?}",
            self.input
        );
        self
    }

    /// The error parts' reasons, in order.
    #[track_caller]
    pub(crate) fn errors(self, want: &[&str]) -> Got {
        assert_eq!(self.parse.errors, want, "errors of {:?}", self.input);
        self
    }

    #[track_caller]
    pub(crate) fn no_errors(self) -> Got {
        assert!(self.parse.errors.is_empty(), "{self:?}");
        self
    }

    #[track_caller]
    pub(crate) fn some_errors(self) -> Got {
        assert!(!self.parse.errors.is_empty(), "{self:?}");
        self
    }
}
