//! Text protocols for models without native tool calling.
//!
//! A protocol renders the tool list into a system prompt, renders past tool calls and tool
//! results into history text, and parses the model's output back into parts, whole or as a
//! stream. The whole-text parse runs the stream parser over one chunk, so the two paths cannot
//! disagree; the stream parser itself is written so that any chunking gives the same parts
//! (up to how text and argument deltas are split).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::part::{ErrorPart, Part};
use crate::core::tool::ToolSet;

mod emit;
mod envelope;
mod gemma;
mod held_args;
mod hermes;
mod holdback;
mod json_scanner;
mod morph_xml;
mod prompt;
mod qwen3_coder;
mod utf8;
mod xml;
mod yaml_xml;

use emit::Emitter;
use json_scanner::{JsonScanner, JsonScannerConfig};
use utf8::Utf8Decoder;

/// The delimiters of the `hermes` protocol (and of `gemma`, which is hermes in code fences).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Delimiters {
    pub call_start: String,
    pub call_end: String,
    pub response_start: String,
    pub response_end: String,
}

impl Delimiters {
    pub fn hermes() -> Self {
        Delimiters {
            call_start: "<tool_call>".into(),
            call_end: "</tool_call>".into(),
            response_start: "<tool_response>".into(),
            response_end: "</tool_response>".into(),
        }
    }

    pub fn gemma() -> Self {
        Delimiters {
            call_start: "```tool_call\n".into(),
            call_end: "\n```".into(),
            response_start: "```tool_response\n".into(),
            response_end: "\n```".into(),
        }
    }
}

/// A text protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "name")]
pub enum Protocol {
    /// `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, delimiters configurable.
    Hermes(Delimiters),
    /// hermes inside ```` ```tool_call ```` fences.
    Gemma,
    /// `<get_weather><city>Paris</city></get_weather>`.
    MorphXml,
    /// `<get_weather>\ncity: Paris\n</get_weather>`.
    YamlXml,
    /// `<tool_call>\n<function=f>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call>`.
    Qwen3Coder,
}

impl Protocol {
    /// The names used on the command line, in the order Ctrl+L cycles through them.
    pub const NAMES: [&'static str; 5] =
        ["hermes", "gemma", "morph-xml", "yaml-xml", "qwen3-coder"];

    pub fn from_name(name: &str) -> Result<Self, String> {
        Ok(match name {
            "hermes" => Protocol::Hermes(Delimiters::hermes()),
            "gemma" => Protocol::Gemma,
            "morph-xml" => Protocol::MorphXml,
            "yaml-xml" => Protocol::YamlXml,
            "qwen3-coder" => Protocol::Qwen3Coder,
            _ => {
                return Err(format!(
                    "unknown protocol \"{name}\" (expected one of: {})",
                    Self::NAMES.join(", ")
                ));
            }
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Protocol::Hermes(_) => "hermes",
            Protocol::Gemma => "gemma",
            Protocol::MorphXml => "morph-xml",
            Protocol::YamlXml => "yaml-xml",
            Protocol::Qwen3Coder => "qwen3-coder",
        }
    }

    /// Every protocol with its default settings.
    pub fn all() -> Vec<Protocol> {
        Self::NAMES
            .iter()
            .map(|n| Self::from_name(n).expect("every listed name parses"))
            .collect()
    }
}

/// A byte range of the parsed text and what it became.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub kind: SpanKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SpanKind {
    /// Markup that became a tool call.
    ToolCall,
    /// Markup that looked like a tool call but could not be parsed (kept as text).
    Malformed,
}

/// The result of parsing a whole text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    /// `text`, `tool-call` and `error` parts, in order.
    pub parts: Vec<Part>,
    pub spans: Vec<Span>,
}

impl Protocol {
    /// The system prompt that teaches a model the tools and this protocol's call format. The
    /// tools appear in it as JSON, one per line, between `<tools>` and `</tools>` lines, and a
    /// `Tool call format:` line names the protocol.
    pub fn system_prompt(&self, tools: &ToolSet) -> String {
        prompt::system_prompt(self, tools)
    }

    /// A past tool call as the model would have written it (for conversation history).
    pub fn format_call(&self, name: &str, input: &Value) -> String {
        match self {
            Protocol::Hermes(d) => hermes::format_call(d, name, input),
            Protocol::Gemma => hermes::format_call(&Delimiters::gemma(), name, input),
            Protocol::MorphXml => morph_xml::format_call(name, input),
            Protocol::YamlXml => yaml_xml::format_call(name, input),
            Protocol::Qwen3Coder => qwen3_coder::format_call(name, input),
        }
    }

    /// A tool result as it is shown to the model in the conversation.
    pub fn format_result(&self, name: &str, result: &str) -> String {
        match self {
            Protocol::Hermes(d) => hermes::format_result(d, name, result),
            Protocol::Gemma => hermes::format_result(&Delimiters::gemma(), name, result),
            Protocol::MorphXml | Protocol::YamlXml => xml::format_result(name, result),
            Protocol::Qwen3Coder => qwen3_coder::format_result(name, result),
        }
    }

    /// Recognises a system prompt made by [`Protocol::system_prompt`]: which protocol and which
    /// tools (used by the demo model, which only sees the wire request).
    pub fn detect_from_prompt(system: &str) -> Option<(Protocol, ToolSet)> {
        prompt::detect(system)
    }

    /// A stream parser for this protocol and these tools.
    pub fn stream_parser(&self, tools: &ToolSet) -> StreamParser {
        let scanner = match self {
            Protocol::Hermes(d) => {
                Scanner::Json(JsonScanner::new(tools.clone(), hermes::scanner_config(d)))
            }
            Protocol::Gemma => Scanner::Json(JsonScanner::new(
                tools.clone(),
                hermes::scanner_config(&Delimiters::gemma()),
            )),
            Protocol::MorphXml => Scanner::Morph(morph_xml::MorphScanner::new(tools.clone())),
            Protocol::YamlXml => Scanner::Yaml(yaml_xml::YamlScanner::new(tools.clone())),
            Protocol::Qwen3Coder => Scanner::Qwen(qwen3_coder::QwenScanner::new(tools.clone())),
        };
        StreamParser::with_scanner(scanner)
    }

    /// Parses a whole text (bytes; invalid UTF-8 is replaced and reported). Runs the stream
    /// parser over one chunk, so the two paths cannot disagree.
    pub fn parse_generated(&self, tools: &ToolSet, text: &[u8]) -> Parsed {
        self.stream_parser(tools).parse_whole(text)
    }
}

/// A stream parser for a tool-choice answer: the JSON `{"name": …, "arguments": {…}}` a model
/// writes under a response format that forces a call (`required` or a named tool). Text around
/// the JSON stays text; JSON that is not a valid call is kept as text with an `error` part.
pub fn answer_parser(tools: &ToolSet) -> StreamParser {
    StreamParser::with_scanner(Scanner::Json(JsonScanner::new(
        tools.clone(),
        JsonScannerConfig {
            call_start: None,
            call_end: String::new(),
            loose_json: true,
            commit_loose: true,
        },
    )))
}

// One scanner per parser, never moved after creation: boxing the variants would only add an
// indirection on the hot path.
#[allow(clippy::large_enum_variant)]
enum Scanner {
    Json(JsonScanner),
    Morph(morph_xml::MorphScanner),
    Yaml(yaml_xml::YamlScanner),
    Qwen(qwen3_coder::QwenScanner),
}

impl Scanner {
    fn feed(&mut self, text: &str, em: &mut Emitter) {
        match self {
            Scanner::Json(s) => s.feed(text, em),
            Scanner::Morph(s) => s.feed(text, em),
            Scanner::Yaml(s) => s.feed(text, em),
            Scanner::Qwen(s) => s.feed(text, em),
        }
    }

    fn finish(&mut self, em: &mut Emitter) {
        match self {
            Scanner::Json(s) => s.finish(em),
            Scanner::Morph(s) => s.finish(em),
            Scanner::Yaml(s) => s.finish(em),
            Scanner::Qwen(s) => s.finish(em),
        }
    }
}

/// An incremental parser of one model output. Feed it chunks of any size (byte chunks may split
/// UTF-8 sequences), then call [`StreamParser::finish`]. It emits `text-start/delta/end`,
/// `tool-input-start/delta/end`, `tool-call` and `error` parts, never `finish`.
pub struct StreamParser {
    decoder: Utf8Decoder,
    scanner: Scanner,
    em: Emitter,
    invalid_reported: bool,
    finished: bool,
}

impl StreamParser {
    fn with_scanner(scanner: Scanner) -> Self {
        StreamParser {
            decoder: Utf8Decoder::new(),
            scanner,
            em: Emitter::new(),
            invalid_reported: false,
            finished: false,
        }
    }

    /// Parses the next chunk of bytes and appends the parts it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        let StreamParser {
            decoder,
            scanner,
            em,
            invalid_reported,
            ..
        } = self;
        em.attach(out);
        decoder.decode(chunk, |piece, invalid_at| {
            scanner.feed(piece, em);
            if let Some(at) = invalid_at {
                report_invalid(invalid_reported, at, em);
            }
        });
        em.detach(out);
    }

    /// Parses the next chunk of text.
    pub fn push_str(&mut self, chunk: &str, out: &mut Vec<Part>) {
        self.push(chunk.as_bytes(), out)
    }

    /// Ends the stream: closes open text, recovers or reports an unfinished call.
    pub fn finish(&mut self, out: &mut Vec<Part>) {
        if self.finished {
            return;
        }
        self.finished = true;
        let StreamParser {
            decoder,
            scanner,
            em,
            invalid_reported,
            ..
        } = self;
        em.attach(out);
        decoder.finish(|piece, invalid_at| {
            scanner.feed(piece, em);
            if let Some(at) = invalid_at {
                report_invalid(invalid_reported, at, em);
            }
        });
        scanner.finish(em);
        em.end_text();
        em.detach(out);
    }

    /// The spans recognised so far, in order; byte offsets into the decoded text.
    pub fn spans(&self) -> &[Span] {
        self.em.spans()
    }

    /// How many tool calls were completed so far.
    pub fn call_count(&self) -> usize {
        self.em.call_count()
    }

    /// Parses a whole text and gives the generate parts (`text`, `tool-call`, `error`).
    pub fn parse_whole(mut self, text: &[u8]) -> Parsed {
        let mut stream = Vec::new();
        self.push(text, &mut stream);
        self.finish(&mut stream);
        Parsed {
            parts: generate_parts(stream),
            spans: self.em.spans().to_vec(),
        }
    }
}

fn report_invalid(reported: &mut bool, at: usize, em: &mut Emitter) {
    if !*reported {
        *reported = true;
        em.error(ErrorPart::reason(
            "invalid-utf8",
            format!(
                "the output is not valid UTF-8 at byte {at}; invalid bytes are shown as U+FFFD"
            ),
        ));
    }
}

/// Turns stream parts into generate parts: text deltas merged into `text` parts between
/// tool calls and errors.
pub fn generate_parts(stream: Vec<Part>) -> Vec<Part> {
    let mut out = Vec::new();
    let mut text = String::new();
    for part in stream {
        match part {
            Part::TextDelta { delta, .. } => text.push_str(&delta),
            Part::Text { text: t } => text.push_str(&t),
            Part::ToolCall(_) | Part::Error(_) => {
                if !text.is_empty() {
                    out.push(Part::Text {
                        text: std::mem::take(&mut text),
                    });
                }
                out.push(part);
            }
            _ => {}
        }
    }
    if !text.is_empty() {
        out.push(Part::Text { text });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::part::Collapsed;
    use crate::core::tool::ToolDef;
    use serde_json::json;

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
        // qwen3-coder has no escaping: a value cannot hold its own `</parameter>` or
        // `</tool_call>`, so that protocol gets the same value without them.
        let qwen_safe =
            json!({"path":"/y","content":"a </toolbox> b </content> c ```","tags":["one","two"]});
        for p in Protocol::all() {
            for input in &inputs {
                let input = if p == Protocol::Qwen3Coder
                    && input["content"]
                        .as_str()
                        .is_some_and(|c| c.contains("</parameter>"))
                {
                    &qwen_safe
                } else {
                    input
                };
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

    #[test]
    fn results_render_per_protocol() {
        let h = Protocol::from_name("hermes").unwrap();
        assert_eq!(
            h.format_result("get_weather", "{\"temp\": 21}"),
            "<tool_response>\n{\"name\": \"get_weather\", \"content\": {\"temp\":21}}\n</tool_response>"
        );
        assert!(
            Protocol::Gemma
                .format_result("x", "ok")
                .starts_with("```tool_response\n")
        );
        assert!(
            Protocol::MorphXml
                .format_result("x", "ok")
                .contains("<tool_response name=\"x\">")
        );
        assert!(
            Protocol::Qwen3Coder
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
}
