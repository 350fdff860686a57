//! Stream-parser throughput of every protocol (DESIGN.md, performance targets).
//!
//! Every protocol of the registry is measured. Texts: about 1 MB with 1000 calls, and one call
//! of about 1 MB. For the protocols the reference implementation has, the text is generated
//! exactly as its `bench` command generates its own (so the two can be compared byte for byte);
//! every other protocol writes the same calls with its own `format_call`. Chunk sizes: 1 byte and 64 bytes. The baseline, measured in the same run, hands
//! the same chunks to a consumer that only copies them: the ratio parse/baseline is the parser's
//! cost per byte over the cost of merely receiving the bytes.
//!
//! The whole-text group parses the 1000-call text as one finished output (`parse_generated`, the
//! path of `toolscope parse` and of non-streamed answers); its baseline is one copy of the text.
//!
//! Run: `cargo bench --bench parsers`. The reference: `node ../shared/reference/reference.mjs
//! bench` (see README).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;
use toolscope_core::part::Part;
use toolscope_core::protocol::Protocol;
use toolscope_core::tool::{ToolDef, ToolSet};

/// The call markup, with `BODY` where the filler goes: the reference generator's markup where the
/// reference has the protocol, else the protocol's own.
fn call_template(protocol: &Protocol, i: usize) -> String {
    reference_template(protocol.name(), i).unwrap_or_else(|| {
        protocol.format_call(
            "write",
            &json!({"path": format!("/tmp/f{i}.txt"), "n": i, "body": "BODY"}),
        )
    })
}

/// The markup of the reference's generator, for the protocols it has.
fn reference_template(protocol: &str, i: usize) -> Option<String> {
    Some(match protocol {
        "hermes" => format!(
            "<tool_call>{{\"name\":\"write\",\"arguments\":{{\"path\":\"/tmp/f{i}.txt\",\"n\":{i},\"body\":\"BODY\"}}}}</tool_call>"
        ),
        "gemma" => format!(
            "```tool_call\n{{\"name\":\"write\",\"arguments\":{{\"path\":\"/tmp/f{i}.txt\",\"n\":{i},\"body\":\"BODY\"}}}}\n```"
        ),
        "morph-xml" => {
            format!("<write><path>/tmp/f{i}.txt</path><n>{i}</n><body>BODY</body></write>")
        }
        "yaml-xml" => format!("<write>\npath: /tmp/f{i}.txt\nn: {i}\nbody: BODY\n</write>"),
        "qwen3-coder" => format!(
            "<tool_call>\n<function=write>\n<parameter=path>/tmp/f{i}.txt</parameter>\n<parameter=n>{i}</parameter>\n<parameter=body>BODY</parameter>\n</function>\n</tool_call>"
        ),
        _ => return None,
    })
}

/// `genBenchText` of the reference: ~1 MB, 1000 calls, prose between them.
pub fn many_calls(protocol: &Protocol, calls: usize, target: usize) -> String {
    let per_call = target / calls;
    let mut parts = Vec::with_capacity(calls);
    for i in 0..calls {
        let call = call_template(protocol, i);
        let note = format!("note {i} ");
        let filler = per_call.saturating_sub(call.len() + note.len() + 1);
        let body = "x".repeat(filler / 2);
        let prose = "y ".repeat(filler / 4);
        parts.push(format!(
            "{note}{prose}\n{}",
            call.replacen("BODY", &body, 1)
        ));
    }
    parts.join("\n")
}

/// One call whose body is about `size` bytes.
pub fn one_call(protocol: &Protocol, size: usize) -> String {
    call_template(protocol, 0).replacen("BODY", &"x".repeat(size), 1)
}

fn tools() -> ToolSet {
    ToolSet::new(vec![ToolDef::new(
        "write",
        "Write a file",
        json!({"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"},"body":{"type":"string"}}}),
    )])
    .expect("valid tools")
}

fn parse(protocol: &Protocol, tools: &ToolSet, text: &[u8], chunk: usize) -> usize {
    let mut parser = protocol.stream_parser(tools);
    let mut out: Vec<Part> = Vec::with_capacity(256);
    let mut parts = 0;
    for piece in text.chunks(chunk) {
        parser.push(piece, &mut out);
        parts += out.len();
        out.clear();
    }
    parser.finish(&mut out);
    parts + out.len()
}

fn copy(text: &[u8], chunk: usize) -> usize {
    let mut sink = Vec::with_capacity(text.len());
    for piece in text.chunks(chunk) {
        sink.extend_from_slice(black_box(piece));
    }
    sink.len()
}

/// `TOOLSCOPE_BENCH_ONCE=PROTOCOL:CHUNK:COPIES`: parses the 1000-call text of PROTOCOL, COPIES
/// times in one stream, at CHUNK bytes a piece (`whole`: as one finished output, the whole-text
/// path), and exits: what `scripts/instructions.sh` counts the instructions of (under valgrind,
/// where the machine's load does not move the figure).
fn parse_once(spec: &str) {
    let mut it = spec.split(':');
    let (Some(name), Some(chunk), Some(copies)) = (it.next(), it.next(), it.next()) else {
        panic!("TOOLSCOPE_BENCH_ONCE is PROTOCOL:CHUNK:COPIES, not {spec:?}");
    };
    let protocol = Protocol::from_name(name)
        .unwrap_or_else(|e| panic!("{e}"))
        .with_reasoning_open(Some(false));
    let copies: usize = copies.parse().expect("COPIES is a number");
    let one = many_calls(&protocol, 1000, 1_000_000);
    let text = vec![one.as_str(); copies].join("\n");
    let parts = match chunk {
        "whole" => protocol
            .parse_generated(&tools(), black_box(text.as_bytes()))
            .parts
            .len(),
        n => {
            let chunk: usize = n.parse().expect("CHUNK is a number or `whole`");
            parse(&protocol, &tools(), black_box(text.as_bytes()), chunk)
        }
    };
    println!(
        "{name} chunk {chunk} copies {copies}: {} bytes, {parts} parts",
        text.len()
    );
}

fn benches(c: &mut Criterion) {
    if let Ok(spec) = std::env::var("TOOLSCOPE_BENCH_ONCE") {
        parse_once(&spec);
        std::process::exit(0);
    }
    let tools = tools();
    // TOOLSCOPE_BENCH_DUMP=DIR writes the texts, for `toolscope parse --stats` and comparison.
    if let Some(dir) = std::env::var_os("TOOLSCOPE_BENCH_DUMP") {
        let dir = std::path::PathBuf::from(dir);
        let _ = std::fs::create_dir_all(&dir);
        for protocol in Protocol::all() {
            let protocol = protocol.with_reasoning_open(Some(false));
            let name = protocol.name();
            let _ = std::fs::write(
                dir.join(format!("{name}-1000-calls.txt")),
                many_calls(&protocol, 1000, 1_000_000),
            );
            let _ = std::fs::write(
                dir.join(format!("{name}-one-call.txt")),
                one_call(&protocol, 1_000_000),
            );
        }
    }
    for protocol in Protocol::all() {
        // Calls are what is measured: an output not inside reasoning at its start.
        let protocol = protocol.with_reasoning_open(Some(false));
        let name = protocol.name();
        let many = many_calls(&protocol, 1000, 1_000_000);
        let one = one_call(&protocol, 1_000_000);
        assert_eq!(
            protocol
                .parse_generated(&tools, many.as_bytes())
                .parts
                .iter()
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count(),
            1000,
            "{name}: the bench text must parse to its 1000 calls"
        );
        let mut group = c.benchmark_group(format!("stream/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(3));
        for chunk in [1usize, 64] {
            group.throughput(Throughput::Bytes(many.len() as u64));
            group.bench_with_input(
                BenchmarkId::new("1000-calls", chunk),
                &chunk,
                |b, &chunk| b.iter(|| parse(&protocol, &tools, black_box(many.as_bytes()), chunk)),
            );
        }
        group.throughput(Throughput::Bytes(one.len() as u64));
        group.bench_with_input(BenchmarkId::new("one-1MB-call", 1), &1usize, |b, &chunk| {
            b.iter(|| parse(&protocol, &tools, black_box(one.as_bytes()), chunk))
        });
        group.finish();
        // The whole-text path (`toolscope parse`, non-streamed answers): the finished output.
        let mut group = c.benchmark_group(format!("whole/{name}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_millis(300))
            .measurement_time(Duration::from_secs(2));
        group.throughput(Throughput::Bytes(many.len() as u64));
        group.bench_function("1000-calls", |b| {
            b.iter(|| {
                protocol
                    .parse_generated(&tools, black_box(many.as_bytes()))
                    .parts
                    .len()
            })
        });
        group.finish();
    }
    let hermes = Protocol::from_name("hermes").expect("hermes is registered");
    let text = many_calls(&hermes, 1000, 1_000_000);
    let mut group = c.benchmark_group("baseline/copy");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(text.len() as u64));
    for chunk in [1usize, 64, text.len()] {
        group.bench_with_input(
            BenchmarkId::new("1000-calls", chunk),
            &chunk,
            |b, &chunk| b.iter(|| copy(black_box(text.as_bytes()), chunk)),
        );
    }
    group.finish();
}

criterion_group!(parsers, benches);
criterion_main!(parsers);
