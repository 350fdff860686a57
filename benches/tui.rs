//! Frame time of the playground (DESIGN.md, performance targets: under 2 ms a frame with 10 MB in
//! the Raw pane, work proportional to what is visible).
//!
//! One run holds about 10 MB of output (mostly short lines, with some lines of 100 KB and one of
//! 1 MB, as a model that writes a huge tool call would) with its spans, 10 MB of wire events,
//! and 100,000 parts. Each iteration draws the whole 160×48 screen on a `TestBackend`: every
//! pane's drawing code runs in full, then ratatui's diff. Cases: following the end of the
//! stream, scrolled to the middle with a part selected in the middle and its JSON shown, and the
//! wire view.
//!
//! A second group times a keystroke in the Tools pane and the frame after it (DESIGN.md: under
//! 2 ms in a 300 KB tools file): with the example tools, with 500 tools (about 380 KB), and, as
//! the baseline of the same run, the work every keystroke did before the check waited for a
//! pause and the highlighting became incremental (checking and highlighting the whole text).
//! The Tools pane's editor (`app::code_editor`) touches only the lines an edit changes, and the
//! pane measures and highlights only the rows it shows, so the big file costs little more than
//! the small one; what is left of the difference is mostly the Tool choice pane laying out its
//! 500 tools on every frame. One run on a loaded 2-core machine: 0.59 ms with the example tools,
//! 0.85 ms with 500 tools, against 254 ms for the old cost (1/298 of it; with
//! `ratatui_textarea::TextArea`, which laid out every line on each edit, it was 12.7 ms against
//! 295 ms, 1/23).
//!
//! A third group times the Prompt pane's conversation (issue 24): a short conversation (the
//! baseline), a 10 KB answer, 1,000 tool turns, and a 10 MB finished answer. The pane re-wrapped
//! the whole history on every frame: one run before the change, 165 µs for the short one, 3.03 ms
//! with 1,000 turns (18x) and 59.4 ms with the 10 MB answer (359x). The conversation's rows are
//! now made once per change of the history or the width (`app::transcript`), and a frame costs
//! what it shows: on a loaded 2-core machine 236 µs for the short one, 312 µs with 10 KB, 239 µs
//! with 1,000 turns, 301 µs with 10 MB (1.3x the short one, 0.97x the 10 KB one, which fills the
//! pane as much).
//!
//! A fourth times the per-event work besides drawing with an API key set: 3,003 events of an
//! OpenAI stream redacted and journaled. Before, each was serialised to look for the key, then
//! serialised again and flushed by the journal: 8.2 ms. With the key looked for in the event's
//! strings in place and the journal buffered: 3.8 ms, against 0.28 ms for writing the events as
//! JSON to memory once (the baseline of the same run).
//!
//! Run: `cargo bench --bench tui`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use toolscope::app::text_log::Scroll;
use toolscope::app::theme::Themes;
use toolscope::app::{App, Detail, Focus, Message, Overlay, RawMode, RunView, Setup, update};
use toolscope::tui::View;
use toolscope_core::part::{Part, ToolCall};
use toolscope_core::protocol::{Span, SpanKind};
use toolscope_core::provider::{OutputText, RawEvent, Request, RunEvent};

const OUTPUT_BYTES: usize = 10 * 1024 * 1024;
const PARTS: usize = 100_000;

/// A run with ~10 MB of output and wire events and 100,000 parts.
fn big_run() -> RunView {
    let mut run = RunView::started(1, Request::new(toolscope_demo::provider(), "demo-1"));
    let mut answer = 0usize;
    let mut i = 0usize;
    let push = |run: &mut RunView, text: &str, at: u64| {
        run.apply(
            RunEvent::Output(OutputText {
                text: text.to_string(),
                tool_call_id: None,
            }),
            at,
        );
    };
    while answer < OUTPUT_BYTES {
        let text = if i % 500 == 499 {
            // A long line, 100 KB, as one piece.
            format!("{}\n", "x".repeat(100 * 1024))
        } else if i.is_multiple_of(3) {
            let call = format!(
                "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Paris {i}\"}}}}</tool_call>\n"
            );
            let span = Span {
                start: answer,
                end: answer + call.len() - 1,
                kind: SpanKind::ToolCall,
            };
            push(&mut run, &call, i as u64);
            run.apply(RunEvent::Span(span), i as u64);
            answer += call.len();
            i += 1;
            continue;
        } else {
            format!("line {i}: the model says something about the weather \u{1b}[0m in Paris.\n")
        };
        push(&mut run, &text, i as u64);
        answer += text.len();
        i += 1;
    }
    // One line of 1 MB at the very end, still arriving.
    push(&mut run, &"y".repeat(1024 * 1024), i as u64);
    // Wire events: one per 1 KB of output.
    let chunk = "d".repeat(1000);
    for k in 0..(OUTPUT_BYTES / 1000) {
        run.apply(
            RunEvent::Raw(RawEvent {
                at_ms: k as u64,
                data: format!("{{\"choices\":[{{\"delta\":{{\"content\":\"{chunk}\"}}}}]}}"),
                status: None,
                retry_after: None,
            }),
            k as u64,
        );
    }
    // Parts: calls of six parts each (five rows), until 100,000.
    let mut n = 0;
    let mut call = 0;
    while n < PARTS {
        let id: toolscope_core::part::PartId = format!("call_{call}").into();
        let parts = [
            Part::ToolInputStart {
                id: id.clone(),
                tool_name: "get_weather".into(),
            },
            Part::ToolInputDelta {
                id: id.clone(),
                delta: "{\"city\":".into(),
            },
            Part::ToolInputDelta {
                id: id.clone(),
                delta: format!("\"Paris {call}\"}}").into(),
            },
            Part::ToolInputEnd { id: id.clone() },
            Part::tool_call(ToolCall {
                tool_call_id: id.clone(),
                tool_name: "get_weather".into(),
                input: serde_json::json!({"city": format!("Paris {call}")}),
                coercions: vec![],
                invalid: vec![],
                ..Default::default()
            }),
            Part::TextDelta {
                id: "t".into(),
                delta: "and then ".into(),
            },
        ];
        for p in parts {
            run.apply(RunEvent::Part(p), n as u64);
            n += 1;
        }
        call += 1;
    }
    assert!(run.is_running(), "still streaming: no finish yet");
    run
}

fn app_with(run: RunView) -> App {
    let mut app = App::new(Setup::default(), Themes::built_in());
    app.size = (160, 48);
    app.run = run;
    app
}

fn frame(c: &mut Criterion) {
    let run = big_run();
    assert!(run.shown.output.len() >= OUTPUT_BYTES);
    assert!(run.record.parts.parts.len() >= PARTS);
    eprintln!(
        "raw output {:.1} MB in {} segments, wire {:.1} MB, {} parts in {} rows",
        run.shown.output.len() as f64 / 1048576.0,
        run.shown.output.segment_count(),
        run.record.wire.text().len() as f64 / 1048576.0,
        run.record.parts.parts.len(),
        run.record.parts.rows.len()
    );
    let mut app = app_with(run);
    let view = View::new();
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let mut group = c.benchmark_group("frame 160x48, 10 MB raw, 100k parts");

    group.bench_function("following the stream", |b| {
        b.iter(|| {
            terminal
                .draw(|f| toolscope::tui::draw(f, black_box(&app), &view))
                .unwrap();
        })
    });

    let middle = app.run.shown.output.segment_count() / 2;
    app.run.cursor.output_scroll = Scroll::At {
        segment: middle,
        row: 0,
    };
    let rows = app.run.record.parts.rows.len();
    app.run.select(rows / 2, 20);
    app.focus = Focus::Parts;
    let detail = Detail::of_row(&app.run.record.parts, rows / 2).expect("a row");
    app.overlay = Some(Overlay::Detail(Box::new(detail)));
    group.bench_function("scrolled to the middle, a part shown whole", |b| {
        b.iter(|| {
            terminal
                .draw(|f| toolscope::tui::draw(f, black_box(&app), &view))
                .unwrap();
        })
    });

    app.overlay = None;
    app.raw_mode = RawMode::Wire;
    group.bench_function("wire events", |b| {
        b.iter(|| {
            terminal
                .draw(|f| toolscope::tui::draw(f, black_box(&app), &view))
                .unwrap();
        })
    });
    group.finish();
}

/// `n` tools as a pretty-printed JSON array, each with a description and a few parameters
/// (about 600 bytes each).
fn many_tools(n: usize) -> String {
    let tools: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "name": format!("tool_{i}"),
                "description": format!("Tool number {i}: looks something up in the records of department {i} and returns what it finds, with dates and amounts."),
                "parameters": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look up"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                        "since": {"type": "string", "format": "date"},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "exact": {"type": "boolean"}
                    },
                    "required": ["query"]
                }
            })
        })
        .collect();
    serde_json::to_string_pretty(&tools).unwrap()
}

fn key(code: KeyCode) -> Message {
    Message::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn keystroke(c: &mut Criterion) {
    let mut group = c.benchmark_group("keystroke in the Tools pane and its frame, 160x48");
    for (name, text) in [
        (
            "example tools (3 tools, 2 KB)",
            toolscope::app::tools::EXAMPLE_TOOLS.to_string(),
        ),
        ("500 tools (300 KB)", many_tools(500)),
    ] {
        let setup = Setup {
            tools: text.clone(),
            ..Setup::default()
        };
        let mut app = App::new(setup, Themes::built_in());
        app.size = (160, 48);
        app.focus = Focus::Tools;
        // The cursor in the middle of the text, inside a description.
        let lines = app.tools.editor.lines().len();
        let row = lines / 2;
        app.tools
            .editor
            .set_cursor(toolscope::app::code_editor::Pos::new(row, usize::MAX));
        let view = View::new();
        let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
        terminal
            .draw(|f| toolscope::tui::draw(f, &app, &view))
            .unwrap();
        eprintln!("{name}: {} bytes, {lines} lines", text.len());
        // Each iteration is one keystroke and the frame after it: a letter, then its erasure,
        // so that the text stays the same size.
        let mut typed = false;
        group.bench_function(name, |b| {
            b.iter(|| {
                let k = if typed {
                    key(KeyCode::Backspace)
                } else {
                    key(KeyCode::Char('x'))
                };
                typed = !typed;
                black_box(update(&mut app, k));
                terminal
                    .draw(|f| toolscope::tui::draw(f, black_box(&app), &view))
                    .unwrap();
            })
        });
        if text.len() > 100_000 {
            // The baseline: what each keystroke cost before, checking and highlighting it all.
            group.bench_function(
                "500 tools: the whole check and highlight (the old cost)",
                |b| {
                    b.iter(|| {
                        black_box(
                            toolscope_core::tool::ToolSet::from_json_text(black_box(&text)).is_ok(),
                        );
                        black_box(toolscope::tui::highlight::json_lines(text.lines()).len());
                    })
                },
            );
        }
    }
    group.finish();
}

/// A conversation of `turns` tool turns (question, call, result), then a question and `answer` as the
/// last answer.
fn conversation(turns: usize, answer: String) -> Vec<toolscope_core::provider::Message> {
    use toolscope_core::provider::Message as Turn;
    let mut history = Vec::new();
    for i in 0..turns {
        let id = format!("call_{i}");
        history.push(Turn::user(format!("What is the weather in city {i}?")));
        history.push(Turn::assistant(
            None,
            vec![ToolCall {
                tool_call_id: id.clone().into(),
                tool_name: "get_weather".into(),
                input: serde_json::json!({"city": format!("city {i}")}),
                ..Default::default()
            }],
        ));
        history.push(Turn::tool_result(id, format!("sunny, {i} degrees")));
    }
    history.push(Turn::user("And the whole story?"));
    history.push(Turn::assistant(Some(answer), vec![]));
    history
}

/// A finished answer of about `bytes`: lines of prose, with a line of 100 KB every 500 lines
/// and one of 1 MB in the middle.
fn long_answer(bytes: usize) -> String {
    let mut s = String::with_capacity(bytes + 2 * 1024 * 1024);
    let mut i = 0;
    while s.len() < bytes {
        if i % 500 == 499 {
            s.push_str(&"x".repeat(100 * 1024));
        } else if i == 5000 {
            s.push_str(&"y".repeat(1024 * 1024));
        } else {
            s.push_str(&format!(
                "line {i}: the model says something about the weather in Paris, at length."
            ));
        }
        s.push('\n');
        i += 1;
    }
    s
}

/// The Prompt pane's conversation: a frame with a short conversation (the baseline of the same
/// run), with a 10 KB answer (enough to fill the pane: the like-for-like baseline), with 1,000
/// tool turns, and with a 10 MB finished answer at its end (issue 24: under 2 ms, no more than a
/// short one).
fn transcript(c: &mut Criterion) {
    let mut group = c.benchmark_group("frame 160x48, the conversation");
    group.sample_size(20);
    for (name, history) in [
        ("short conversation", conversation(1, "It is sunny.".into())),
        (
            "a 10 KB finished answer",
            conversation(1, long_answer(10 * 1024)),
        ),
        (
            "1,000 tool turns",
            conversation(1000, "It is sunny.".into()),
        ),
        (
            "a 10 MB finished answer",
            conversation(1, long_answer(OUTPUT_BYTES)),
        ),
    ] {
        let mut app = App::new(Setup::default(), Themes::built_in());
        app.size = (160, 48);
        app.prompt.set_history(history);
        let view = View::new();
        let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                terminal
                    .draw(|f| toolscope::tui::draw(f, black_box(&app), &view))
                    .unwrap();
            })
        });
    }
    group.finish();
}

/// The journal of a run with an API key set: 1,000 wire chunks of an OpenAI stream and the events
/// decoded from them, each redacted (as the provider layer hands it out) and journaled (as the
/// driver writes it), then the journal closed. The work the playground does per event besides
/// drawing.
fn journal(c: &mut Criterion) {
    use toolscope_core::provider::{Decoder, Keys, ProviderKind};
    use toolscope_core::session::journal::Journal;
    let request = Request::new(ProviderKind::OPENAI, "m");
    let mut decoder = Decoder::new(&request);
    let mut events = Vec::new();
    for i in 0..1000u64 {
        let raw = RawEvent {
            at_ms: i,
            data: serde_json::json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m",
                "choices": [{"index": 0, "delta": {"content": format!("word {i} of the answer ")}, "finish_reason": null}]})
            .to_string(),
            status: None,
            retry_after: None,
        };
        events.push(RunEvent::Raw(raw.clone()));
        events.extend(decoder.push_raw(&raw));
    }
    events.extend(decoder.finish());
    let keys = Keys::default().with(ProviderKind::OPENAI, "sk-bench-0123456789abcdef");
    let path = std::env::temp_dir().join(format!(
        "toolscope-bench-journal-{}.jsonl",
        std::process::id()
    ));
    let mut group = c.benchmark_group("journal, an API key set");
    group.sample_size(20);
    // The baseline of the same run: each event written out as JSON once, to memory.
    group.bench_function("baseline: the events as JSON in memory", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(1 << 20);
            for e in &events {
                serde_json::to_writer(&mut out, black_box(e)).unwrap();
                out.push(b'\n');
            }
            out.len()
        })
    });
    group.bench_function(
        format!("{} events redacted and journaled", events.len()),
        |b| {
            b.iter(|| {
                let mut j = Journal::create(&path, &request).unwrap();
                for e in &events {
                    let e = keys.redact_event(black_box(e.clone()));
                    j.append(&e).unwrap();
                }
                drop(j);
            })
        },
    );
    group.finish();
    std::fs::remove_file(&path).ok();
}

criterion_group!(benches, transcript, journal, frame, keystroke);
criterion_main!(benches);
