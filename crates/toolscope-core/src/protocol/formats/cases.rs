//! The formats' parse cases as data: one `cases.txt` per protocol in
//! `tests/data/protocols/<name>/` (its format is in `tests/data/protocols/README.md`), read by
//! one driver that runs every case of every registered protocol at every split.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::protocol::Protocol;
use crate::protocol::span::SpanKind;
use crate::protocol::tests_support::{every_split_with, tools};
use crate::tool::ToolSet;

/// One case: a model output and what its parse must be. A section the case does not state is
/// not checked.
#[derive(Debug, Default, PartialEq)]
struct Case {
    name: String,
    /// The line of its `===` heading.
    line: usize,
    /// The name of a `=== tools:` block of the file; the shared tools when `None`.
    tools: Option<String>,
    reasoning_open: Option<bool>,
    marker_suffix: Option<String>,
    input: String,
    reasoning: Option<String>,
    text: Option<String>,
    calls: Option<Calls>,
    errors: Option<Vec<String>>,
    /// What the protocol's own writers must write somewhere in the input.
    written: Vec<Writing>,
    /// The protocol `--protocol auto` must pick for the input.
    detected: Option<String>,
    /// The spans of the input's parse, in order, each with the text it covers.
    spans: Option<Vec<(SpanKind, String)>>,
    /// What the protocol's system prompt for the case's tools starts with or holds.
    prompt: Vec<PromptPiece>,
}

/// A line of a case's `--- prompt` section.
#[derive(Debug, PartialEq)]
enum PromptPiece {
    /// `starts "text"`: the prompt starts with the text.
    Starts(String),
    /// `holds "text"`: the prompt holds the text somewhere.
    Holds(String),
}

impl PromptPiece {
    fn read(line: &str) -> Result<PromptPiece, String> {
        let (kind, json) = line.split_once(' ').unwrap_or((line, ""));
        let text = || serde_json::from_str(json).map_err(|e| e.to_string());
        match kind {
            "starts" => Ok(PromptPiece::Starts(text()?)),
            "holds" => Ok(PromptPiece::Holds(text()?)),
            _ => Err(format!("unknown prompt check {kind:?} (starts, holds)")),
        }
    }

    /// Checks the prompt.
    fn check(&self, prompt: &str) {
        match self {
            PromptPiece::Starts(text) => assert!(
                prompt.starts_with(text.as_str()),
                "the prompt does not start with {text:?}: {prompt:?}"
            ),
            PromptPiece::Holds(text) => assert!(
                prompt.contains(text.as_str()),
                "the prompt does not hold {text:?}: {prompt:?}"
            ),
        }
    }
}

/// A line of a case's `--- written` section: a piece of the input that the protocol's writer
/// writes, so that the case also checks the writer's output reads back.
#[derive(Debug, PartialEq)]
enum Writing {
    /// `call ["name", {arguments}]`: [`Protocol::format_call`].
    Call(String, Value),
    /// `calls [["name", {arguments}], …]`: [`Protocol::format_calls`].
    Calls(Vec<(String, Value)>),
    /// `malformed ["name", {arguments}]`: [`Protocol::malformed_call`].
    Malformed(String, Value),
    /// `reasoning "text"`: [`Protocol::format_reasoning`].
    Reasoning(String),
    /// `results [["name", "result"], …]`: [`Protocol::format_results`].
    Results(Vec<(String, String)>),
}

impl Writing {
    fn read(line: &str) -> Result<Writing, String> {
        let (kind, json) = line.split_once(' ').unwrap_or((line, ""));
        let e = |e: serde_json::Error| e.to_string();
        Ok(match kind {
            "call" => {
                let (name, args) = serde_json::from_str(json).map_err(e)?;
                Writing::Call(name, args)
            }
            "calls" => Writing::Calls(serde_json::from_str(json).map_err(e)?),
            "malformed" => {
                let (name, args) = serde_json::from_str(json).map_err(e)?;
                Writing::Malformed(name, args)
            }
            "reasoning" => Writing::Reasoning(serde_json::from_str(json).map_err(e)?),
            "results" => Writing::Results(serde_json::from_str(json).map_err(e)?),
            _ => {
                return Err(format!(
                    "unknown writer {kind:?} (call, calls, malformed, reasoning, results)"
                ));
            }
        })
    }

    /// What `p` writes for it (`None`: the protocol does not write reasoning).
    fn write(&self, p: &Protocol) -> Option<String> {
        match self {
            Writing::Call(name, args) => Some(p.format_call(name, args)),
            Writing::Calls(calls) => {
                let calls: Vec<(&str, &Value)> =
                    calls.iter().map(|(n, a)| (n.as_str(), a)).collect();
                Some(p.format_calls(&calls))
            }
            Writing::Malformed(name, args) => Some(p.malformed_call(name, args)),
            Writing::Reasoning(text) => p.format_reasoning(text),
            Writing::Results(results) => {
                let results: Vec<(&str, &str)> = results
                    .iter()
                    .map(|(n, r)| (n.as_str(), r.as_str()))
                    .collect();
                Some(p.format_results(&results))
            }
        }
    }
}

/// What a case's `--- calls` section says.
#[derive(Debug, PartialEq)]
enum Calls {
    /// These calls, in order (none for an empty section).
    These(Vec<(String, Value)>),
    /// No call, and the whole input kept as text.
    Kept,
}

/// A case file read: its tool sets and its cases, in file order.
#[derive(Debug, Default)]
struct CaseFile {
    tools: HashMap<String, ToolSet>,
    cases: Vec<Case>,
}

/// A line of a case file: its number, its text, and whether a line break ends it.
type Line<'a> = (usize, &'a str, bool);

/// The body that starts at line `*i`: the lines up to the next line that opens a section or a
/// block (`=== …`, `--- …`), where `*i` is left.
fn body<'a, 'b>(lines: &'b [Line<'a>], i: &mut usize) -> &'b [Line<'a>] {
    let start = *i;
    while *i < lines.len() && !(lines[*i].1.starts_with("=== ") || lines[*i].1.starts_with("--- "))
    {
        *i += 1;
    }
    &lines[start..*i]
}

/// Reads a case file; an error names the line it is about.
fn read_cases(text: &str) -> Result<CaseFile, String> {
    let lines: Vec<Line> = text
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| match l.strip_suffix('\n') {
            Some(l) => (i + 1, l, true),
            None => (i + 1, l, false),
        })
        .collect();
    let mut file = CaseFile::default();
    let mut i = 0;
    // Before the first heading: comments and blank lines only.
    while i < lines.len() && !lines[i].1.starts_with("=== ") {
        let (n, line, _) = lines[i];
        if !(line.trim().is_empty() || line.starts_with('#')) {
            return Err(format!(
                "line {n}: expected a `=== case name` or `=== tools: name` heading, found {line:?}"
            ));
        }
        i += 1;
    }
    while i < lines.len() {
        let (n, heading, _) = lines[i];
        let Some(name) = heading.strip_prefix("=== ").map(str::trim) else {
            return Err(format!(
                "line {n}: expected a `===` heading, found {heading:?}"
            ));
        };
        i += 1;
        let head = body(&lines, &mut i);
        if let Some(set) = name.strip_prefix("tools:").map(str::trim) {
            let entries: Vec<&str> = head
                .iter()
                .map(|l| l.1)
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .collect();
            let tools = ToolSet::from_json_text(&format!("[{}]", entries.join(",")))
                .map_err(|e| format!("line {n}: tools {set:?}: {e}"))?;
            if file.tools.insert(set.to_string(), tools).is_some() {
                return Err(format!("line {n}: a second tool set named {set:?}"));
            }
            if i < lines.len() && lines[i].1.starts_with("--- ") {
                return Err(format!("line {}: a tool set has no sections", lines[i].0));
            }
            continue;
        }
        if name.is_empty() {
            return Err(format!("line {n}: a case without a name"));
        }
        if file.cases.iter().any(|c| c.name == name) {
            return Err(format!("line {n}: a second case named {name:?}"));
        }
        let mut case = Case {
            name: name.to_string(),
            line: n,
            ..Case::default()
        };
        for &(m, line, _) in head {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((key, value)) = line.split_once(':') else {
                return Err(format!(
                    "line {m}: expected an option `key: value`, found {line:?}"
                ));
            };
            let value = value.trim();
            match key.trim() {
                "tools" => case.tools = Some(value.to_string()),
                "reasoning-open" => {
                    case.reasoning_open = Some(match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(format!("line {m}: reasoning-open is true or false")),
                    })
                }
                "marker-suffix" => case.marker_suffix = Some(value.to_string()),
                other => return Err(format!("line {m}: unknown option {other:?}")),
            }
        }
        let mut input = None;
        while i < lines.len() && lines[i].1.starts_with("--- ") {
            let (m, marker, _) = lines[i];
            let words: Vec<&str> = marker["--- ".len()..].split_whitespace().collect();
            let (section, json) = match words[..] {
                [section] => (section, false),
                [section, "json"] => (section, true),
                _ => {
                    return Err(format!(
                        "line {m}: expected `--- section` or `--- section json`, found {marker:?}"
                    ));
                }
            };
            i += 1;
            let body = body(&lines, &mut i);
            let seen = match section {
                "input" => input.is_some(),
                "reasoning" => case.reasoning.is_some(),
                "text" => case.text.is_some(),
                "calls" => case.calls.is_some(),
                "errors" => case.errors.is_some(),
                "written" => !case.written.is_empty(),
                "detected" => case.detected.is_some(),
                "spans" => case.spans.is_some(),
                "prompt" => !case.prompt.is_empty(),
                _ => {
                    return Err(format!(
                        "line {m}: unknown section {section:?} (input, reasoning, text, calls, errors, written, detected, spans, prompt)"
                    ));
                }
            };
            if seen {
                return Err(format!("line {m}: a second `{section}` section"));
            }
            match section {
                "input" | "reasoning" | "text" => {
                    let value = if json {
                        json_string(body, m)?
                    } else {
                        verbatim(body)
                    };
                    match section {
                        "input" => input = Some(value),
                        "reasoning" => case.reasoning = Some(value),
                        _ => case.text = Some(value),
                    }
                }
                _ if json => return Err(format!("line {m}: `{section}` takes no `json`")),
                "calls" => case.calls = Some(read_calls(body)?),
                "spans" => case.spans = Some(read_spans(body)?),
                "prompt" => {
                    for (n, line) in listed(body) {
                        case.prompt
                            .push(PromptPiece::read(line).map_err(|e| format!("line {n}: {e}"))?);
                    }
                }
                "detected" => {
                    let names: Vec<(usize, &str)> = listed(body).collect();
                    let [(_, name)] = names[..] else {
                        return Err(format!("line {m}: `detected` holds one protocol name"));
                    };
                    Protocol::from_name(name).map_err(|e| format!("line {m}: {e}"))?;
                    case.detected = Some(name.to_string());
                }
                "written" => {
                    for (n, line) in listed(body) {
                        case.written
                            .push(Writing::read(line).map_err(|e| format!("line {n}: {e}"))?);
                    }
                }
                _ => {
                    case.errors = Some(
                        listed(body)
                            .map(|(_, l)| match l {
                                "(no reason)" => String::new(),
                                l => l.to_string(),
                            })
                            .collect(),
                    )
                }
            }
        }
        let no_input = format!("line {n}: case {name:?} has no `--- input`");
        let asks_of_input = case.reasoning.is_some()
            || case.text.is_some()
            || case.calls.is_some()
            || case.errors.is_some()
            || !case.written.is_empty()
            || case.detected.is_some()
            || case.spans.is_some();
        // (A case about the prompt alone has no model output to read.)
        case.input = match input {
            Some(input) => input,
            None if !asks_of_input && !case.prompt.is_empty() => String::new(),
            None => return Err(no_input),
        };
        if case.reasoning.is_none()
            && case.text.is_none()
            && case.calls.is_none()
            && case.errors.is_none()
            && case.written.is_empty()
            && case.detected.is_none()
            && case.spans.is_none()
            && case.prompt.is_empty()
        {
            return Err(format!("line {n}: case {name:?} expects nothing"));
        }
        file.cases.push(case);
    }
    for case in &file.cases {
        if let Some(set) = &case.tools
            && !file.tools.contains_key(set)
        {
            return Err(format!(
                "line {}: no `=== tools: {set}` block in the file",
                case.line
            ));
        }
    }
    Ok(file)
}

/// A text section's body as it is written: its lines, each line break but the last one's.
fn verbatim(body: &[Line]) -> String {
    let mut out = String::new();
    for (k, &(_, line, newline)) in body.iter().enumerate() {
        out.push_str(line);
        if newline && k + 1 < body.len() {
            out.push('\n');
        }
    }
    out
}

/// A `json` text section's body: one JSON string, over as many lines as it likes.
fn json_string(body: &[Line], marker: usize) -> Result<String, String> {
    let joined: String = body.iter().map(|l| l.1).collect::<Vec<_>>().join("\n");
    serde_json::from_str::<String>(joined.trim())
        .map_err(|e| format!("line {marker}: the section is not one JSON string: {e}"))
}

/// The lines of a list section that say something (blank ones and `#` comments left out).
fn listed<'a>(body: &'a [Line<'a>]) -> impl Iterator<Item = (usize, &'a str)> {
    body.iter()
        .map(|&(n, l, _)| (n, l.trim_end()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
}

/// A `--- calls` body: `kept`, or one call a line, `name {arguments}` or `["name", {arguments}]`.
fn read_calls(body: &[Line]) -> Result<Calls, String> {
    let lines: Vec<(usize, &str)> = listed(body).collect();
    if let [(_, "kept")] = lines[..] {
        return Ok(Calls::Kept);
    }
    let mut calls = Vec::new();
    for (n, line) in lines {
        let call = if line.starts_with('[') {
            serde_json::from_str::<(String, Value)>(line).map_err(|e| e.to_string())
        } else {
            let (name, args) = line.split_once(' ').unwrap_or((line, ""));
            serde_json::from_str::<Value>(args)
                .map(|v| (name.to_string(), v))
                .map_err(|e| e.to_string())
        };
        calls.push(call.map_err(|e| {
            format!("line {n}: expected `name {{arguments}}` or `[\"name\", {{arguments}}]`: {e}")
        })?);
    }
    Ok(Calls::These(calls))
}

/// A `--- spans` body: one span a line, its kind and the text it covers as a JSON string
/// (`tool-call "<tool_call>…</tool_call>"`).
fn read_spans(body: &[Line]) -> Result<Vec<(SpanKind, String)>, String> {
    listed(body)
        .map(|(n, line)| {
            let (kind, covered) = line.split_once(' ').unwrap_or((line, ""));
            let kind = serde_json::from_value(Value::from(kind)).map_err(|_| {
                format!(
                    "line {n}: unknown span kind {kind:?} (tool-call, malformed, reasoning, markup)"
                )
            })?;
            let covered = serde_json::from_str(covered)
                .map_err(|e| format!("line {n}: expected `kind \"covered text\"`: {e}"))?;
            Ok((kind, covered))
        })
        .collect()
}

/// The spans of the generate path's parse of `input`, each with the text it covers, as a
/// `--- spans` section writes them.
fn spans_of(p: &Protocol, tools: &ToolSet, input: &str) -> Vec<(SpanKind, String)> {
    p.parse_generated(tools, input.as_bytes())
        .spans
        .iter()
        .map(|s| (s.kind, input[s.start..s.end].to_string()))
        .collect()
}

/// Runs one case: the parse at every split, checking each section the case states, then what
/// the writers write and what `--protocol auto` picks.
fn run_case(p: &Protocol, file: &CaseFile, case: &Case) {
    let mut p = p.clone();
    if case.reasoning_open.is_some() {
        p = p.with_reasoning_open(case.reasoning_open);
    }
    if let Some(suffix) = &case.marker_suffix {
        p = p.with_marker_suffix(Some(suffix)).expect("a valid suffix");
    }
    let shared = tools();
    let set = case
        .tools
        .as_ref()
        .map_or(&shared, |name| &file.tools[name]);
    let parsed = case.reasoning.is_some()
        || case.text.is_some()
        || case.calls.is_some()
        || case.errors.is_some();
    if parsed {
        let mut got = every_split_with(&p, set, &case.input);
        if let Some(reasoning) = &case.reasoning {
            got = got.reasoning(reasoning);
        }
        if let Some(text) = &case.text {
            got = got.text(text);
        }
        match &case.calls {
            Some(Calls::These(calls)) => got = got.calls(calls),
            Some(Calls::Kept) => got = got.kept(),
            None => {}
        }
        if let Some(errors) = &case.errors {
            let errors: Vec<&str> = errors.iter().map(String::as_str).collect();
            got.errors(&errors);
        }
    }
    if let Some(want) = &case.spans {
        let got = spans_of(&p, set, &case.input);
        // A failure shows the spans there are as the section writes them.
        let lines: String = got
            .iter()
            .map(|(kind, covered)| {
                let kind = serde_json::to_value(kind).expect("a kind");
                format!(
                    "{} {}\n",
                    kind.as_str().unwrap_or("?"),
                    Value::from(covered.as_str())
                )
            })
            .collect();
        assert!(got == *want, "spans of {:?}:\n{lines}", case.input);
    }
    for writing in &case.written {
        let written = writing.write(&p);
        assert!(
            written
                .as_ref()
                .is_some_and(|w| !w.is_empty() && case.input.contains(w.as_str())),
            "{writing:?} writes {written:?}, which the input {:?} does not hold",
            case.input
        );
    }
    if !case.prompt.is_empty() {
        let prompt = p.system_prompt(set);
        for piece in &case.prompt {
            piece.check(&prompt);
        }
    }
    if let Some(want) = &case.detected {
        let d = Protocol::detect(set, case.input.as_bytes());
        assert_eq!(
            d.protocol.name(),
            want,
            "auto on {:?}: {}",
            case.input,
            d.reason
        );
    }
}

/// The folder of the protocols' data.
fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/protocols")
}

/// The text of a panic, for a report.
fn panic_text(e: &(dyn std::any::Any + Send)) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// How many cases the case files hold at the least (as many as they held when the format tests
/// moved into them): a file that loses cases fails here.
const AT_LEAST: usize = 577;

/// Every registered protocol has a case file, and every case of it holds at every split.
#[test]
fn every_protocol_answers_its_cases() {
    let mut failed = String::new();
    let mut ran = 0;
    for p in Protocol::all() {
        let path = data_dir().join(p.name()).join("cases.txt");
        let file = match std::fs::read_to_string(&path) {
            Ok(text) => read_cases(&text),
            Err(e) => Err(format!("cannot read it: {e}")),
        };
        let file = match file {
            Ok(file) if file.cases.is_empty() => Err("it holds no case".to_string()),
            other => other,
        };
        let file = match file {
            Ok(file) => file,
            Err(e) => {
                let _ = writeln!(failed, "{}: {e}", path.display());
                continue;
            }
        };
        for case in &file.cases {
            ran += 1;
            let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_case(&p, &file, case);
            }));
            if let Err(e) = run {
                let why: String = panic_text(&*e).chars().take(600).collect();
                let _ = writeln!(
                    failed,
                    "{} case {:?} (line {}): {why}",
                    p.name(),
                    case.name,
                    case.line
                );
            }
        }
    }
    println!("{ran} cases");
    assert!(failed.is_empty(), "{failed}");
    assert!(ran >= AT_LEAST, "{ran} cases, fewer than {AT_LEAST}");
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_case_reads_byte_exact() {
        let file = read_cases(concat!(
            "# a comment\n\n",
            "=== one\n",
            "reasoning-open: false\n",
            "--- input\n",
            "a  \n\n<b>\n\n",
            "--- reasoning\n",
            "--- text json\n",
            "\"--- x\\n\"\n",
            "--- calls\n",
            "get_weather {\"city\": \"Paris\"}\n",
            "[\"two words\", {}]\n\n",
            "--- errors\n",
            "unknown-tool\n(no reason)\n\n",
            "--- written\n",
            "call [\"search\", {\"query\": \"x\"}]\n",
            "reasoning \"hm\"\n",
            "=== two\n",
            "tools: small\n",
            "--- input\n",
            "x\n",
            "--- calls\n",
            "kept\n",
            "=== tools: small\n",
            "{\"name\": \"search\", \"parameters\": {\"type\": \"object\"}}\n",
        ))
        .unwrap();
        let one = &file.cases[0];
        assert_eq!(one.line, 3);
        assert_eq!(one.input, "a  \n\n<b>\n");
        assert_eq!(one.reasoning.as_deref(), Some(""));
        assert_eq!(one.text.as_deref(), Some("--- x\n"));
        assert_eq!(one.reasoning_open, Some(false));
        assert_eq!(
            one.calls,
            Some(Calls::These(vec![
                ("get_weather".into(), json!({"city": "Paris"})),
                ("two words".into(), json!({})),
            ]))
        );
        assert_eq!(
            one.errors,
            Some(vec!["unknown-tool".to_string(), String::new()])
        );
        assert_eq!(
            one.written,
            [
                Writing::Call("search".into(), json!({"query": "x"})),
                Writing::Reasoning("hm".into()),
            ]
        );
        let two = &file.cases[1];
        assert_eq!((two.input.as_str(), &two.calls), ("x", &Some(Calls::Kept)));
        assert_eq!(two.tools.as_deref(), Some("small"));
        assert_eq!(file.tools["small"].len(), 1);
        let file = read_cases("=== auto\n--- input\nx\n--- detected\nhermes\n").unwrap();
        assert_eq!(file.cases[0].detected.as_deref(), Some("hermes"));
        let file = read_cases(
            "=== p\n--- prompt\nstarts \"# Tools\\n\"\nholds \"<tools>\"\n=== r\n--- input\nx\n--- written\nresults [[\"a\", \"1\"]]\n",
        )
        .unwrap();
        assert_eq!(
            (file.cases[0].input.as_str(), &file.cases[0].prompt[..]),
            (
                "",
                &[
                    PromptPiece::Starts("# Tools\n".into()),
                    PromptPiece::Holds("<tools>".into())
                ][..]
            )
        );
        assert_eq!(
            file.cases[1].written,
            [Writing::Results(vec![("a".into(), "1".into())])]
        );
        let file =
            read_cases("=== s\n--- input\nx\n--- spans\ntool-call \"<a>\"\n\nmarkup \"\\n\"\n")
                .unwrap();
        assert_eq!(
            file.cases[0].spans,
            Some(vec![
                (SpanKind::ToolCall, "<a>".to_string()),
                (SpanKind::Markup, "\n".to_string()),
            ])
        );
    }

    #[test]
    fn the_last_line_of_a_file_may_lack_its_line_break() {
        let file = read_cases("=== a\n--- input\nend\n--- text\nend").unwrap();
        assert_eq!(file.cases[0].input, "end");
        assert_eq!(file.cases[0].text.as_deref(), Some("end"));
    }

    #[test]
    fn a_malformed_file_names_its_line() {
        for (text, want) in [
            ("stray\n=== a\n", "line 1:"),
            (
                "=== a\n--- input\nx\n--- texts\n",
                "line 4: unknown section",
            ),
            (
                "=== a\ncolour: red\n--- input\nx\n--- text\nx\n",
                "line 2: unknown option",
            ),
            (
                "=== a\n--- text\nx\n",
                "line 1: case \"a\" has no `--- input`",
            ),
            (
                "=== a\n--- input\nx\n",
                "line 1: case \"a\" expects nothing",
            ),
            ("=== a\n--- input\nx\n--- calls\nget_weather {\n", "line 5:"),
            (
                "=== a\n--- input json\nx\n--- text\n\n",
                "line 2: the section is not one JSON string",
            ),
            (
                "=== a\n--- input\nx\n--- text\n\n=== a\n--- input\ny\n--- text\n",
                "line 6: a second case",
            ),
            (
                "=== a\ntools: t\n--- input\nx\n--- text\n",
                "line 1: no `=== tools: t` block",
            ),
            (
                "=== a\n--- input\nx\n--- input\ny\n--- text\n",
                "line 4: a second `input`",
            ),
            (
                "=== a\n--- input\nx\n--- written\nwrite [1]\n",
                "line 5: unknown writer",
            ),
            (
                "=== a\n--- input\nx\n--- detected\nno-such-protocol\n",
                "line 4: unknown protocol",
            ),
            (
                "=== a\n--- input\nx\n--- spans\ncall \"x\"\n",
                "line 5: unknown span kind",
            ),
            (
                "=== a\n--- prompt\nbegins \"x\"\n",
                "line 3: unknown prompt check",
            ),
            (
                "=== a\n--- prompt\nholds \"x\"\n--- text\nx\n",
                "line 1: case \"a\" has no `--- input`",
            ),
            (
                "=== a\n--- input\nx\n--- spans\nmarkup x\n",
                "line 5: expected `kind \"covered text\"`",
            ),
        ] {
            let e = read_cases(text).expect_err(text);
            assert!(e.starts_with(want), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_failing_case_says_which_section() {
        let p = Protocol::from_name("hermes").unwrap();
        let file = read_cases("=== a\n--- input\nhello\n--- text\nbye\n").unwrap();
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_case(&p, &file, &file.cases[0])
        }))
        .unwrap_err();
        assert!(
            panic_text(&*e).contains("text of \"hello\""),
            "{}",
            panic_text(&*e)
        );
    }
}
