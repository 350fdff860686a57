//! Stream-parser throughput of every protocol (DESIGN.md, performance targets).
//!
//! Texts: about 1 MB with 1000 calls, generated exactly as the reference implementation's
//! `bench` command generates its own (so the two can be compared byte for byte), and one call of
//! about 1 MB. Chunk sizes: 1 byte and 64 bytes. The baseline, measured in the same run, hands
//! the same chunks to a consumer that only copies them: the ratio parse/baseline is the parser's
//! cost per byte over the cost of merely receiving the bytes.
//!
//! Run: `cargo bench --bench parsers`. The reference: `node ../shared/reference/reference.mjs
//! bench` (see README).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use std::time::Duration;
use toolscope::core::part::Part;
use toolscope::core::protocol::Protocol;
use toolscope::core::tool::{ToolDef, ToolSet};

/// The call markup of the reference's generator, with `BODY` where the filler goes.
fn call_template(protocol: &str, i: usize) -> String {
    match protocol {
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
        other => panic!("{other}"),
    }
}

/// `genBenchText` of the reference: ~1 MB, 1000 calls, prose between them.
pub fn many_calls(protocol: &str, calls: usize, target: usize) -> String {
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
pub fn one_call(protocol: &str, size: usize) -> String {
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

fn benches(c: &mut Criterion) {
    let tools = tools();
    // TOOLSCOPE_BENCH_DUMP=DIR writes the texts, for `toolscope parse --stats` and comparison.
    if let Some(dir) = std::env::var_os("TOOLSCOPE_BENCH_DUMP") {
        let dir = std::path::PathBuf::from(dir);
        let _ = std::fs::create_dir_all(&dir);
        for name in Protocol::NAMES {
            let _ = std::fs::write(
                dir.join(format!("{name}-1000-calls.txt")),
                many_calls(name, 1000, 1_000_000),
            );
            let _ = std::fs::write(
                dir.join(format!("{name}-one-call.txt")),
                one_call(name, 1_000_000),
            );
        }
    }
    for name in Protocol::NAMES {
        let protocol = Protocol::from_name(name).expect("known protocol");
        let many = many_calls(name, 1000, 1_000_000);
        let one = one_call(name, 1_000_000);
        assert_eq!(
            protocol
                .parse_generated(&tools, many.as_bytes())
                .parts
                .iter()
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count(),
            1000
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
    }
    let text = many_calls("hermes", 1000, 1_000_000);
    let mut group = c.benchmark_group("baseline/copy");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Bytes(text.len() as u64));
    for chunk in [1usize, 64] {
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
