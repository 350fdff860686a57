//! toolscope side by side with the two published Rust tool-call parser crates, `tool-parser` and
//! `dynamo-parsers`, in one process, on the same outputs.
//!
//! From one seeded corpus of 200 calls (nested arguments, strings with escapes and non-ASCII
//! text) it writes, per format, about 1 MB of model output with prose between the calls, and for
//! a format that groups several calls in one block, a second layout with every call in one block.
//! Each library parses each text whole, in 64-byte chunks and one character per chunk; its calls
//! are checked against the corpus, and a time counts only when every call is right. The table
//! gives the peer's time over toolscope's (above 1: toolscope is faster); a wrong cell says what
//! was wrong under its row.
//!
//! Run (from the repository root):
//! `cargo run --release --manifest-path benches/peers/Cargo.toml [-- FORMAT…]`

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

/// A format of toolscope, with the name each peer gives its parser of the same format.
struct Row {
    toolscope: &'static str,
    tool_parser: Option<&'static str>,
    dynamo: Option<&'static str>,
}

const ROWS: &[Row] = &[
    row("hermes", Some("qwen"), Some("hermes")),
    row("mistral", Some("mistral"), Some("mistral")),
    row("llama3-json", Some("llama"), Some("llama3_json")),
    row("functools", None, Some("phi4")),
    row("command-r", Some("cohere"), None),
    row("pythonic", Some("pythonic"), Some("pythonic")),
    row("deepseek-v3", Some("deepseek"), Some("deepseek_v3")),
    row("deepseek-v3.1", Some("deepseek31"), Some("deepseek_v3_1")),
    row("deepseek-dsml", Some("deepseek32"), Some("deepseek_v3_2")),
    row("kimi-k2", Some("kimik2"), Some("kimi_k2")),
    row("qwen3-coder", Some("qwen_xml"), Some("qwen3_coder")),
    row("glm-4.5", Some("glm45_moe"), None),
    row("glm-4.7", Some("glm47_moe"), Some("glm47")),
    row("minimax-m2", Some("minimax_m2"), Some("minimax_m2")),
    row("step3", Some("step3"), None),
    row("gemma4", Some("gemma4"), Some("gemma4")),
    row("jamba", None, Some("jamba")),
];

const fn row(
    toolscope: &'static str,
    tool_parser: Option<&'static str>,
    dynamo: Option<&'static str>,
) -> Row {
    Row {
        toolscope,
        tool_parser,
        dynamo,
    }
}

const CALLS: usize = 200;
const TARGET: usize = 1_000_000;
const SEED: u64 = 0x5eed_7001_5c09_e000;

// ---------------------------------------------------------------------------------------------
// The corpus

/// xorshift64*: a seeded generator, so every run writes the same texts.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "the",
    "model",
    "answer",
    "weather",
    "file",
    "Zürich",
    "東京",
    "naïve",
    "café",
    "résumé",
    "data",
    "stream",
    "Ελλάδα",
    "señor",
    "plan",
    "tool",
    "call",
    "réseau",
    "город",
    "🚀",
    "next",
    "check",
    "value",
    "quickly",
    "because",
    "ünïcödé",
    "日本語",
    "list",
    "open",
    "result",
];

/// Text inside a string argument: words, escapes (quote, backslash, newline, tab) and non-ASCII.
fn string_value(rng: &mut Rng, min: usize, max: usize) -> String {
    let len = min + rng.below(max - min + 1);
    let mut s = String::new();
    while s.len() < len {
        if !s.is_empty() {
            s.push_str(match rng.below(12) {
                0 => "\n",
                1 => "\t",
                2 => " \"quoted\" ",
                3 => " C:\\path\\to ",
                4 => ", ",
                _ => " ",
            });
        }
        s.push_str(rng.pick(WORDS));
    }
    s
}

/// The tools and their schemas: every call's arguments follow its tool's schema.
fn tool_schemas() -> Vec<(&'static str, Value)> {
    vec![
        (
            "search_web",
            json!({"type":"object","properties":{
                "query":{"type":"string"},
                "max_results":{"type":"integer"},
                "filters":{"type":"object","properties":{
                    "lang":{"type":"string"},"since":{"type":"string"},"safe":{"type":"boolean"}}},
                "tags":{"type":"array","items":{"type":"string"}}},
                "required":["query"]}),
        ),
        (
            "write_file",
            json!({"type":"object","properties":{
                "path":{"type":"string"},"content":{"type":"string"},
                "append":{"type":"boolean"},"mode":{"type":"integer"}},
                "required":["path","content"]}),
        ),
        (
            "get_weather",
            json!({"type":"object","properties":{
                "location":{"type":"string"},"days":{"type":"integer"},
                "offset":{"type":"integer"},
                "coords":{"type":"object","properties":{
                    "lat":{"type":"number"},"lon":{"type":"number"}}}},
                "required":["location"]}),
        ),
        (
            "create_event",
            json!({"type":"object","properties":{
                "title":{"type":"string"},
                "attendees":{"type":"array","items":{"type":"object","properties":{
                    "name":{"type":"string"},"email":{"type":"string"}}}},
                "duration_minutes":{"type":"integer"},
                "notes":{"type":"string"}},
                "required":["title"]}),
        ),
    ]
}

fn call_args(rng: &mut Rng, tool: &str) -> Value {
    match tool {
        "search_web" => json!({
            "query": string_value(rng, 10, 60),
            "max_results": 1 + rng.below(50),
            "filters": {"lang": rng.pick(&["de", "ja", "fr", "el"]), "since": "2024-05-01",
                        "safe": rng.below(2) == 0},
            "tags": (0..1 + rng.below(4)).map(|_| rng.pick(WORDS).to_string()).collect::<Vec<_>>(),
        }),
        "write_file" => json!({
            "path": format!("/tmp/{}/f{}.txt", rng.pick(&["a", "b", "naïve"]), rng.below(1000)),
            "content": string_value(rng, 100, 1500),
            "append": rng.below(2) == 0,
            "mode": 420,
        }),
        "get_weather" => json!({
            "location": string_value(rng, 4, 20),
            "days": 1 + rng.below(14),
            "offset": -(rng.below(12) as i64) - 1,
            "coords": {"lat": (rng.below(18000) as f64 - 9000.0) / 100.0,
                       "lon": (rng.below(36000) as f64 - 18000.0) / 100.0},
        }),
        _ => json!({
            "title": string_value(rng, 5, 40),
            "attendees": (0..1 + rng.below(3)).map(|i| json!({
                "name": rng.pick(&["Zoë", "Jürgen", "陽菜", "Ana"]).to_string(),
                "email": format!("p{i}@example.org")})).collect::<Vec<_>>(),
            "duration_minutes": 15 * (1 + rng.below(8)),
            "notes": string_value(rng, 20, 300),
        }),
    }
}

fn corpus() -> Vec<(String, Value)> {
    let mut rng = Rng(SEED);
    let names: Vec<&str> = tool_schemas().iter().map(|(n, _)| *n).collect();
    (0..CALLS)
        .map(|_| {
            let name = rng.pick(&names);
            (name.to_string(), call_args(&mut rng, name))
        })
        .collect()
}

/// Prose between calls: sentences with nothing any format reads as markup.
fn prose(rng: &mut Rng, len: usize) -> String {
    let mut s = String::new();
    while s.len() < len {
        for _ in 0..8 + rng.below(10) {
            s.push_str(rng.pick(WORDS));
            s.push(' ');
        }
        s.pop();
        s.push_str(if rng.below(5) == 0 { ".\n\n" } else { ". " });
    }
    s
}

/// The layouts of a format's text.
#[derive(Clone, Copy, PartialEq)]
enum Layout {
    /// Prose, one call, prose, one call… (each call its own block).
    Prose,
    /// Prose, then every call in one block.
    Block,
    /// The prose alone, no call: what the text between calls costs each library (`--text`).
    Text,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::Prose => "prose",
            Layout::Block => "block",
            Layout::Text => "text",
        }
    }
    fn from_name(name: &str) -> Option<Layout> {
        [Layout::Prose, Layout::Block, Layout::Text]
            .into_iter()
            .find(|l| l.name() == name)
    }
}

/// The calls a text of `layout` holds: none in the prose alone.
fn expected(layout: Layout, calls: &Calls) -> &Calls {
    static NONE: Calls = Vec::new();
    if layout == Layout::Text { &NONE } else { calls }
}

fn write_text(protocol: &Protocol, calls: &[(String, Value)], layout: Layout) -> String {
    let mut rng = Rng(SEED ^ 0x9e37_79b9);
    match layout {
        Layout::Text => prose(&mut rng, TARGET),
        Layout::Prose => {
            let call_bytes: usize = calls
                .iter()
                .map(|(n, a)| protocol.format_call(n, a).len())
                .sum();
            let per_gap = TARGET.saturating_sub(call_bytes) / calls.len();
            let mut text = String::with_capacity(TARGET + 4096);
            for (name, args) in calls {
                text.push_str(&prose(&mut rng, per_gap.saturating_sub(40)));
                text.push('\n');
                text.push_str(&protocol.format_call(name, args));
                text.push('\n');
            }
            text
        }
        Layout::Block => {
            let refs: Vec<(&str, &Value)> = calls.iter().map(|(n, a)| (n.as_str(), a)).collect();
            let block = if protocol.name() == "mistral" {
                // Mistral's other form, which toolscope reads too: one JSON array of calls,
                // after a space as the tokenizer decodes it (tool-parser needs the space).
                let array: Vec<Value> = calls
                    .iter()
                    .map(|(n, a)| json!({"name": n, "arguments": a}))
                    .collect();
                format!("[TOOL_CALLS] {}", Value::Array(array))
            } else {
                protocol.format_calls(&refs)
            };
            let mut text = prose(&mut rng, TARGET.saturating_sub(block.len()));
            text.push('\n');
            text.push_str(&block);
            text
        }
    }
}

/// Whether the format writes several calls as one block (not as its calls one after another).
fn groups_calls(protocol: &Protocol, calls: &[(String, Value)]) -> bool {
    let two: Vec<(&str, &Value)> = calls[..2].iter().map(|(n, a)| (n.as_str(), a)).collect();
    let block = protocol.format_calls(&two);
    let apart = format!(
        "{}{}",
        protocol.format_call(two[0].0, two[0].1),
        protocol.format_call(two[1].0, two[1].1)
    );
    block.trim() != apart.trim() && block.replace('\n', "") != apart.replace('\n', "")
}

// ---------------------------------------------------------------------------------------------
// The libraries

/// How a text is handed over: whole, or in pieces (on character boundaries, as every library
/// takes `&str`).
#[derive(Clone, Copy)]
enum Chunking {
    Whole,
    Bytes64,
    Char1,
}

impl Chunking {
    const ALL: [Chunking; 3] = [Chunking::Char1, Chunking::Bytes64, Chunking::Whole];
    fn label(self) -> &'static str {
        match self {
            Chunking::Whole => "whole",
            Chunking::Bytes64 => "64 B",
            Chunking::Char1 => "1 char",
        }
    }
    fn pieces(self, text: &str) -> Vec<&str> {
        match self {
            Chunking::Whole => vec![text],
            Chunking::Char1 => text
                .char_indices()
                .map(|(i, c)| &text[i..i + c.len_utf8()])
                .collect(),
            Chunking::Bytes64 => {
                let mut out = Vec::with_capacity(text.len() / 64 + 1);
                let mut start = 0;
                while start < text.len() {
                    let mut end = (start + 64).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    out.push(&text[start..end]);
                    start = end;
                }
                out
            }
        }
    }
}

type Calls = Vec<(String, Value)>;

fn toolscope_pieces(
    protocol: &Protocol,
    tools: &ToolSet,
    text: &str,
    pieces: &[&str],
    chunking: Chunking,
) -> Calls {
    let mut calls = Vec::new();
    if let Chunking::Whole = chunking {
        // The whole-text path on a string, as every peer gets it (and as `verify` scores an
        // answer): `parse_text`, which does not check the UTF-8 of a `&str` again.
        let mut parsed = protocol.parse_text(tools, text);
        calls_of(&mut parsed.parts, &mut calls);
        return calls;
    }
    // The stream path as the provider loop drives it: the server's text deltas are strings, as
    // every peer's pieces are.
    let mut parser = protocol.stream_parser(tools);
    let mut out = Vec::with_capacity(64);
    for piece in pieces {
        parser.push_str(piece, &mut out);
        calls_of(&mut out, &mut calls);
    }
    parser.finish(&mut out);
    calls_of(&mut out, &mut calls);
    calls
}

/// The calls taken out of toolscope's parts, as a peer's are out of its results; the other
/// parts are dropped where they lie, as a peer's text is (moving each out of the vector to drop
/// it cost about 60 instructions a part, more than the parser spent on a character). Inlined
/// into the loop over the pieces: a call for each piece cost about 16 instructions a piece.
#[inline(always)]
fn calls_of(parts: &mut Vec<Part>, calls: &mut Calls) {
    for p in parts.iter_mut() {
        if let Part::ToolCall(c) = p {
            let c = std::mem::take(&mut **c);
            calls.push((c.tool_name, c.input));
        }
    }
    parts.clear();
}

fn tool_parser_tools() -> Vec<openai_protocol::common::Tool> {
    tool_schemas()
        .into_iter()
        .map(|(name, params)| {
            serde_json::from_value(json!({"type":"function","function":{
                "name": name, "description": "a tool", "parameters": params}}))
            .expect("a valid tool")
        })
        .collect()
}

fn dynamo_tools() -> Vec<dynamo_parsers::tool_calling::ToolDefinition> {
    tool_schemas()
        .into_iter()
        .map(
            |(name, params)| dynamo_parsers::tool_calling::ToolDefinition {
                name: name.to_string(),
                parameters: Some(params),
                strict: None,
            },
        )
        .collect()
}

/// Arguments as a peer gives them (a JSON string), as a value; text that is not JSON stays a
/// string, so that the check shows it.
fn args_value(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.to_string()))
}

async fn tool_parser_run(
    name: &str,
    tools: &[openai_protocol::common::Tool],
    text: &str,
    pieces: &[&str],
    chunking: Chunking,
) -> Result<Calls, String> {
    let registry = tool_parser::ParserFactory::new();
    let mut parser = registry
        .registry()
        .create_parser(name)
        .ok_or_else(|| format!("no parser {name}"))?;
    if let Chunking::Whole = chunking {
        let (_, calls) = parser
            .parse_complete_with_tools(text, tools)
            .await
            .map_err(|e| e.to_string())?;
        return Ok(calls
            .into_iter()
            .map(|c| (c.function.name, args_value(&c.function.arguments)))
            .collect());
    }
    // Calls by index: the name, then argument deltas.
    let mut calls: BTreeMap<usize, (String, String)> = BTreeMap::new();
    for piece in pieces {
        let r = parser
            .parse_incremental(piece, tools)
            .await
            .map_err(|e| e.to_string())?;
        for item in r.calls {
            let call = calls.entry(item.tool_index).or_default();
            if let Some(n) = item.name {
                call.0 = n;
            }
            call.1.push_str(&item.parameters);
        }
    }
    if let Some(rest) = parser.get_unstreamed_tool_args() {
        for item in rest {
            let call = calls.entry(item.tool_index).or_default();
            call.1.push_str(&item.parameters);
        }
    }
    Ok(calls
        .into_values()
        .map(|(n, a)| (n, args_value(&a)))
        .collect())
}

async fn dynamo_run(
    name: &str,
    tools: &[dynamo_parsers::tool_calling::ToolDefinition],
    text: &str,
    pieces: &[&str],
    chunking: Chunking,
) -> Result<Calls, String> {
    use dynamo_parsers::tool_calling::jail::{Annotated, JailedStream};
    use dynamo_protocols::types::{
        ChatChoiceStream, ChatCompletionMessageContent, ChatCompletionStreamResponseDelta,
        CreateChatCompletionStreamResponse, FinishReason, Role,
    };
    use futures::StreamExt as _;
    if let Chunking::Whole = chunking {
        let (calls, _) = dynamo_parsers::tool_calling::try_tool_call_parse_aggregate_finalize(
            text,
            Some(name),
            Some(tools),
        )
        .await
        .map_err(|e| e.to_string())?;
        return Ok(calls
            .into_iter()
            .map(|c| (c.function.name, args_value(&c.function.arguments)))
            .collect());
    }
    // The streaming path: chunks of a chat completion stream through the tool-call jail.
    #[allow(deprecated)]
    let chunk = |content: Option<&str>| {
        let choice = ChatChoiceStream {
            index: 0,
            delta: ChatCompletionStreamResponseDelta {
                role: Some(Role::Assistant),
                content: content.map(|c| ChatCompletionMessageContent::Text(c.to_string())),
                tool_calls: None,
                function_call: None,
                refusal: None,
                reasoning_content: None,
            },
            finish_reason: content.is_none().then_some(FinishReason::Stop),
            logprobs: None,
        };
        Annotated {
            data: Some(CreateChatCompletionStreamResponse {
                id: "bench".to_string(),
                choices: vec![choice],
                created: 0,
                model: "bench".to_string(),
                system_fingerprint: None,
                object: "chat.completion.chunk".to_string(),
                usage: None,
                service_tier: None,
            }),
            id: None,
            event: None,
            comment: None,
            error: None,
        }
    };
    // The jail takes a stream of owned chunk objects: making them (one string per piece) is
    // part of its time, as a server makes them from the tokens it decodes.
    let input: Vec<_> = pieces
        .iter()
        .map(|p| chunk(Some(p)))
        .chain(std::iter::once(chunk(None)))
        .collect();
    let input = futures::stream::iter(input);
    let jail = JailedStream::builder()
        .tool_call_parser(name)
        .tool_definitions(tools.to_vec())
        .build();
    let mut out = std::pin::pin!(jail.apply(input));
    let mut calls: BTreeMap<u32, (String, String)> = BTreeMap::new();
    let mut base = 0u32;
    while let Some(a) = out.next().await {
        let Some(resp) = a.data else { continue };
        for choice in resp.choices {
            let mut top = base;
            for tc in choice.delta.tool_calls.unwrap_or_default() {
                // Indexes restart in each released block: number calls across the stream.
                let index = base + tc.index;
                top = top.max(index + 1);
                let call = calls.entry(index).or_default();
                if let Some(f) = tc.function {
                    if let Some(n) = f.name {
                        call.0 = n;
                    }
                    if let Some(args) = f.arguments {
                        call.1.push_str(&args);
                    }
                }
            }
            base = top;
        }
    }
    Ok(calls
        .into_values()
        .map(|(n, a)| (n, args_value(&a)))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Checking and timing

/// What is wrong with `got` against the corpus, if anything.
fn check(expected: &Calls, got: &Calls) -> Option<String> {
    let right = expected.iter().zip(got).filter(|(e, g)| e == g).count();
    if right == expected.len() && got.len() == expected.len() {
        return None;
    }
    let mut why = format!("{right}/{} right, {} found", expected.len(), got.len());
    if let Some(i) = (0..expected.len()).find(|&i| got.get(i) != Some(&expected[i])) {
        let short = |v: &Value| {
            let s = v.to_string();
            let cut: String = s.chars().take(160).collect();
            if cut.len() < s.len() {
                format!("{cut}…")
            } else {
                s
            }
        };
        let e = &expected[i];
        let _ = write!(
            why,
            "; first wrong, call {i}: expected {} {}",
            e.0,
            short(&e.1)
        );
        match got.get(i) {
            Some(g) => {
                let _ = write!(why, ", got {} {}", g.0, short(&g.1));
            }
            None => why.push_str(", got nothing"),
        }
    }
    Some(why)
}

/// A cell: the best time over the runs that fit in about a second (at least one; a cell whose
/// first run takes longer runs once), or what was wrong. A fixed number of runs of a cheap cell
/// (a whole text takes about a millisecond) all fall in one stretch of the host's load; runs
/// over a second give both sides the same chance of its quiet moments.
fn measure(
    mut run: impl FnMut() -> Result<Calls, String>,
    expected: &Calls,
) -> Result<Duration, String> {
    let start = Instant::now();
    let got = run()?;
    let mut best = start.elapsed();
    if let Some(why) = check(expected, &got) {
        return Err(why);
    }
    let mut runs = 1;
    // PEERS_RUNS=N: exactly N runs, to profile one cell; PEERS_SECONDS=S: a window of S seconds.
    let exact: Option<u32> = std::env::var("PEERS_RUNS")
        .ok()
        .and_then(|n| n.parse().ok());
    // (A value that is no duration, negative or not finite, is the default.)
    let window = std::env::var("PEERS_SECONDS")
        .ok()
        .and_then(|s| Duration::try_from_secs_f64(s.parse().ok()?).ok())
        .unwrap_or(Duration::from_secs(1));
    while match exact {
        Some(n) => runs < n,
        None => start.elapsed() < window,
    } {
        let t = Instant::now();
        std::hint::black_box(run()?);
        best = best.min(t.elapsed());
        runs += 1;
    }
    Ok(best)
}

/// One peer's cell: its best time on `text` in `chunking`, or what was wrong (a panic is a
/// wrong cell, not the end of the run).
fn run_peer(
    peer: &str,
    name: &str,
    tp_tools: &[openai_protocol::common::Tool],
    dy_tools: &[dynamo_parsers::tool_calling::ToolDefinition],
    text: &str,
    chunking: Chunking,
    calls: &Calls,
) -> Result<Duration, String> {
    let pieces = chunking.pieces(text);
    measure(
        || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            let run = std::panic::AssertUnwindSafe(|| {
                rt.block_on(async {
                    if peer == "tool-parser" {
                        tool_parser_run(name, tp_tools, text, &pieces, chunking).await
                    } else {
                        dynamo_run(name, dy_tools, text, &pieces, chunking).await
                    }
                })
            });
            std::panic::catch_unwind(run).unwrap_or_else(|p| {
                let what = p
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| p.downcast_ref::<&str>().copied())
                    .unwrap_or("?");
                Err(format!(
                    "panicked: {}",
                    what.chars().take(200).collect::<String>()
                ))
            })
        },
        calls,
    )
}

/// How a cell stopped at the limit begins its note.
const STOPPED: &str = "did not finish";

/// Which cell a child process measures (see [`peer_cell`]).
struct CellArgs<'a> {
    format: &'a str,
    layout: Layout,
    peer: &'a str,
    chunking: Chunking,
}

/// A peer's cell, measured in a child process that is stopped after `limit` (a peer that is
/// quadratic in its input can take hours on a 1 MB text one character at a time); `None` as
/// the limit measures it here. The child is this program with `--cell FORMAT LAYOUT PEER
/// CHUNKING`, and answers with one line (see [`answer_cell`]).
fn peer_cell(
    cell: &CellArgs,
    limit: Option<Duration>,
    here: impl FnOnce() -> Result<Duration, String>,
) -> Result<Duration, String> {
    let Some(limit) = limit else {
        return here();
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot run a cell apart: {e}"))?;
    let mut child = std::process::Command::new(exe)
        .args([
            "--cell",
            cell.format,
            cell.layout.name(),
            cell.peer,
            cell.chunking.label(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run a cell apart: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{STOPPED} in {} s", limit.as_secs()));
            }
        }
    }
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        use std::io::Read as _;
        let _ = stdout.read_to_string(&mut out);
    }
    let line = out.lines().last().unwrap_or("").to_string();
    if let Some(secs) = line.strip_prefix("ok ") {
        secs.parse::<f64>()
            .map(Duration::from_secs_f64)
            .map_err(|_| format!("the cell's process answered {line:?}"))
    } else if let Some(why) = line.strip_prefix("wrong ") {
        Err(why.to_string())
    } else {
        Err(format!(
            "the cell's process ended without an answer ({line:?})"
        ))
    }
}

/// `--cell FORMAT LAYOUT PEER CHUNKING`: measures that one cell and prints `ok SECONDS` or
/// `wrong WHY` (on one line).
fn answer_cell(args: &[String], calls: &Calls) {
    let [format, layout, peer, chunking] = args else {
        println!("wrong --cell takes FORMAT LAYOUT PEER CHUNKING");
        return;
    };
    let Some(row) = ROWS.iter().find(|r| r.toolscope == format) else {
        println!("wrong no such format {format}");
        return;
    };
    let name = if peer == "tool-parser" {
        row.tool_parser
    } else {
        row.dynamo
    };
    let (Some(name), Some(layout), Some(chunking)) = (
        name,
        Layout::from_name(layout),
        Chunking::ALL.into_iter().find(|c| c.label() == chunking),
    ) else {
        println!("wrong no such cell");
        return;
    };
    let protocol = Protocol::from_name(format)
        .expect("a registered protocol")
        .with_reasoning_open(Some(false));
    let text = write_text(&protocol, calls, layout);
    match run_peer(
        peer,
        name,
        &tool_parser_tools(),
        &dynamo_tools(),
        &text,
        chunking,
        expected(layout, calls),
    ) {
        Ok(t) => println!("ok {}", t.as_secs_f64()),
        Err(why) => println!("wrong {}", why.replace('\n', " ")),
    }
}

/// What `--help` prints.
const USAGE: &str = "\
toolscope and the Rust tool-call parser crates, side by side on the same ~1 MB texts

usage: cargo run --release --manifest-path benches/peers/Cargo.toml -- [OPTIONS] [FORMAT...]

  FORMAT...            only these formats (default: every format in the table)
  --whole              whole texts only (no 64-byte or one-character pieces)
  --toolscope-only     leave the peers out
  --text               also each format's prose alone (no call; every library must find none):
                       what the text between calls costs
  --sample             print each format's first two calls, one after the other and as a block
  --cell-limit SECONDS how long one peer cell may take, in a process of its own (default 300;
                       0: every cell in this process, without a limit)
  -h, --help           this text

environment:
  PEERS_ONCE=FORMAT:LAYOUT:TIMES  parse one text (LAYOUT prose, block or text) TIMES times with
                                  toolscope only, whole, and exit (for perf or valgrind)
  PEERS_CHUNK=64|1char            with PEERS_ONCE: stream it in those pieces instead
  PEERS_SECONDS=S                 how long a cell runs (default 1; a cell is its best run)
  PEERS_RUNS=N                    exactly N runs a cell instead (to profile one)
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{USAGE}");
        return;
    }
    let toolscope_only = args.iter().any(|a| a == "--toolscope-only");
    let whole_only = args.iter().any(|a| a == "--whole");
    let with_text = args.iter().any(|a| a == "--text");
    let calls = corpus();
    if let Some(at) = args.iter().position(|a| a == "--cell") {
        std::panic::set_hook(Box::new(|_| {}));
        return answer_cell(&args[at + 1..], &calls);
    }
    // `--cell-limit SECONDS` (default 300): how long one peer's cell may take, in a process of
    // its own; 0 measures every cell in this process, without a limit.
    let mut cell_limit = Some(Duration::from_secs(300));
    if let Some(at) = args.iter().position(|a| a == "--cell-limit") {
        let Some(secs) = args.get(at + 1).and_then(|s| s.parse::<u64>().ok()) else {
            eprintln!("--cell-limit takes a whole number of seconds (0: no limit)");
            std::process::exit(2);
        };
        cell_limit = (secs > 0).then(|| Duration::from_secs(secs));
    }
    let only: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !(a.starts_with("--") || (*i > 0 && args[i - 1] == "--cell-limit")))
        .map(|(_, a)| a)
        .collect();
    let schemas = tool_schemas();
    let tools = ToolSet::new(
        schemas
            .iter()
            .map(|(n, s)| ToolDef::new(n, "a tool", s.clone()))
            .collect(),
    )
    .expect("valid tools");
    if let Ok(spec) = std::env::var("PEERS_ONCE") {
        return parse_once(&spec, &calls, &tools);
    }
    let tp_tools = tool_parser_tools();
    let dy_tools = dynamo_tools();
    // A peer's panic is reported in its cell; the default hook would print it mid-table.
    std::panic::set_hook(Box::new(|_| {}));

    println!(
        "toolscope (this tree) vs tool-parser 1.10.0 and dynamo-parsers 11.0.1: {CALLS} calls, ~1 MB per text"
    );
    println!(
        "cells: peer time / toolscope time (above 1: toolscope is faster); -: the peer has no such parser; ✗: wrong, ⧗: stopped at the cell limit (under the row)\n"
    );
    println!(
        "{:<22} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
        "format (layout)",
        "ts 1ch",
        "ts 64B",
        "ts whole",
        "tp 1ch",
        "tp 64B",
        "tp whole",
        "dy 1ch",
        "dy 64B",
        "dy whole"
    );
    let mut wrong = Vec::new();
    for row in ROWS {
        if !only.is_empty() && !only.iter().any(|o| o.as_str() == row.toolscope) {
            continue;
        }
        let protocol = Protocol::from_name(row.toolscope)
            .expect("a registered protocol")
            .with_reasoning_open(Some(false));
        if args.iter().any(|a| a == "--sample") {
            // What the texts look like: the first two calls, one after the other and as a block.
            let two: Vec<(&str, &Value)> =
                calls[..2].iter().map(|(n, a)| (n.as_str(), a)).collect();
            println!(
                "== {}\n{}\n-- block:\n{}",
                row.toolscope,
                protocol.format_call(two[0].0, two[0].1),
                protocol.format_calls(&two)
            );
            continue;
        }
        let mut layouts = vec![Layout::Prose];
        if protocol.name() == "mistral" || groups_calls(&protocol, &calls) {
            layouts.push(Layout::Block);
        }
        if with_text {
            layouts.push(Layout::Text);
        }
        for layout in layouts {
            let text = write_text(&protocol, &calls, layout);
            let label = format!("{} ({})", row.toolscope, layout.name());
            let expected = expected(layout, &calls);
            let ts_cell = |chunking: Chunking| {
                let pieces = chunking.pieces(&text);
                measure(
                    || {
                        Ok(toolscope_pieces(
                            &protocol, &tools, &text, &pieces, chunking,
                        ))
                    },
                    expected,
                )
            };
            let skip = |chunking: Chunking| whole_only && !matches!(chunking, Chunking::Whole);
            let mut ts_times: Vec<Option<Result<Duration, String>>> = Chunking::ALL
                .into_iter()
                .map(|c| (!skip(c)).then(|| ts_cell(c)))
                .collect();
            // The peers' cells: `None` where the peer has no parser of the format.
            let mut peer_times: Vec<Option<Result<Duration, String>>> = Vec::new();
            for (peer, name) in [("tool-parser", row.tool_parser), ("dynamo", row.dynamo)] {
                for chunking in Chunking::ALL {
                    let name = name.filter(|_| !toolscope_only && !skip(chunking));
                    let Some(name) = name else {
                        peer_times.push(None);
                        continue;
                    };
                    let r = peer_cell(
                        &CellArgs {
                            format: row.toolscope,
                            layout,
                            peer,
                            chunking,
                        },
                        cell_limit,
                        || run_peer(peer, name, &tp_tools, &dy_tools, &text, chunking, expected),
                    );
                    peer_times.push(Some(r));
                }
            }
            // toolscope again after the peers, its best of both: on a loaded machine one
            // stretch of bad luck does not make every ratio of the row.
            for (k, chunking) in Chunking::ALL.into_iter().enumerate() {
                if let Some(Ok(t)) = ts_times[k]
                    && let Ok(again) = ts_cell(chunking)
                {
                    ts_times[k] = Some(Ok(t.min(again)));
                }
            }
            let mut line = format!("{label:<22}");
            for (k, chunking) in Chunking::ALL.into_iter().enumerate() {
                match &ts_times[k] {
                    None => {
                        let _ = write!(line, " {:>9}", "");
                    }
                    Some(Ok(t)) => {
                        let _ = write!(line, " {:>7.1}ms", t.as_secs_f64() * 1e3);
                    }
                    Some(Err(why)) => {
                        let _ = write!(line, " {:>9}", "✗");
                        wrong.push(format!("{label} toolscope {}: {why}", chunking.label()));
                    }
                }
            }
            for (i, cell) in peer_times.iter().enumerate() {
                let (peer, k) = (if i < 3 { "tool-parser" } else { "dynamo" }, i % 3);
                if k == 0 {
                    line.push_str(" |");
                }
                let chunking = Chunking::ALL[k];
                match (cell, &ts_times[k]) {
                    (None, _) if skip(chunking) => {
                        let _ = write!(line, " {:>9}", "");
                    }
                    (None, _) => {
                        let _ = write!(line, " {:>9}", "-");
                    }
                    (Some(Ok(t)), Some(Ok(ts))) => {
                        let _ = write!(line, " {:>8.1}×", t.as_secs_f64() / ts.as_secs_f64());
                    }
                    (Some(Ok(t)), _) => {
                        let _ = write!(line, " {:>7.1}ms", t.as_secs_f64() * 1e3);
                    }
                    (Some(Err(why)), _) => {
                        let mark = if why.starts_with(STOPPED) {
                            "⧗"
                        } else {
                            "✗"
                        };
                        let _ = write!(line, " {:>9}", mark);
                        wrong.push(format!("{label} {peer} {}: {why}", chunking.label()));
                    }
                }
            }
            println!("{line}");
            // What was wrong, under its row (a long run shows it as it goes).
            for w in wrong.drain(..) {
                println!("    ✗ {w}");
            }
        }
    }
}

/// `PEERS_ONCE=FORMAT:LAYOUT:TIMES` (layout `prose`, `block`, or `text`: the prose alone): parses that text whole with
/// toolscope TIMES times (`PEERS_CHUNK=1char` or `64`: streamed in those pieces) and exits, for counting instructions under valgrind (the difference
/// between two counts is the cost of the parses alone).
fn parse_once(spec: &str, calls: &Calls, tools: &ToolSet) {
    let mut it = spec.split(':');
    let (Some(name), Some(layout), Some(times)) = (it.next(), it.next(), it.next()) else {
        eprintln!("PEERS_ONCE is FORMAT:LAYOUT:TIMES, not {spec:?}");
        std::process::exit(2);
    };
    let protocol = match Protocol::from_name(name) {
        Ok(protocol) => protocol.with_reasoning_open(Some(false)),
        Err(why) => {
            eprintln!("PEERS_ONCE: {why}");
            std::process::exit(2);
        }
    };
    let Some(layout) = Layout::from_name(layout) else {
        eprintln!("PEERS_ONCE: the layout is prose, block or text, not {layout:?}");
        std::process::exit(2);
    };
    let text = write_text(&protocol, calls, layout);
    let Ok(times) = times.parse::<usize>() else {
        eprintln!("PEERS_ONCE=FORMAT:LAYOUT:TIMES: TIMES is a whole number, not {times:?}");
        std::process::exit(2);
    };
    // PEERS_CHUNK=1char or 64: the stream path instead, in those pieces.
    let chunking = match std::env::var("PEERS_CHUNK").as_deref() {
        Ok("1char") => Some(Chunking::Char1),
        Ok("64") => Some(Chunking::Bytes64),
        _ => None,
    };
    let mut found = 0;
    for _ in 0..times {
        found += match chunking {
            Some(c) => {
                let pieces = c.pieces(&text);
                toolscope_pieces(&protocol, tools, &text, &pieces, c).len()
            }
            None => protocol
                .parse_text(tools, std::hint::black_box(&text))
                .parts
                .iter()
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count(),
        };
    }
    println!(
        "{name}: {} bytes, {found} calls in {times} parses",
        text.len()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_is_the_same_every_run_and_has_what_it_promises() {
        let a = corpus();
        assert_eq!(a, corpus());
        assert_eq!(a.len(), CALLS);
        let all = serde_json::to_string(&a.iter().map(|c| &c.1).collect::<Vec<_>>()).unwrap();
        for needle in ["\\\"", "\\n", "\\\\", "ü", "東京", "-"] {
            assert!(all.contains(needle), "the corpus has no {needle}");
        }
    }

    #[test]
    fn char_and_64_byte_pieces_cover_the_text() {
        let text = "aé東🚀".repeat(40);
        for c in [Chunking::Char1, Chunking::Bytes64, Chunking::Whole] {
            assert_eq!(c.pieces(&text).concat(), text);
        }
        assert!(
            Chunking::Bytes64
                .pieces(&text)
                .iter()
                .all(|p| p.len() <= 67)
        );
    }
}
