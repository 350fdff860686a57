//! What the playground's screen and key tests share: an app on the example setup, drawing it on
//! a `TestBackend`, and runs scripted as fixed event sequences (fixed times, so snapshots never
//! depend on a clock).

#![allow(dead_code)]

pub mod harness;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use toolscope::app::theme::Themes;
use toolscope::app::{App, Effect, Message, RunId, Setup, update};
use toolscope::tui::View;
use toolscope_core::error::{ErrorCategory, ProviderError};
use toolscope_core::part::{ErrorPart, FinishReason, Part, ToolCall, Usage};
use toolscope_core::protocol::Protocol;
use toolscope_core::provider::{OutputText, RawEvent, RunEvent};
use toolscope_core::tool::ToolSet;

pub fn app(width: u16, height: u16) -> App {
    let mut app = App::new(Setup::default(), Themes::built_in());
    app.size = (width, height);
    app
}

/// The screen `app` draws at `width`×`height`, as text.
pub fn screen(app: &App, width: u16, height: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    let view = View::new();
    t.draw(|f| toolscope::tui::draw(f, app, &view)).unwrap();
    t.backend().to_string()
}

pub fn key(code: KeyCode) -> Message {
    Message::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

pub fn ctrl(c: char) -> Message {
    Message::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

/// Alt+`c` (Alt+K compare and Alt+E request work with an editor focused too).
pub fn alt(c: char) -> Message {
    Message::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT))
}

/// Sends `message` and returns the ids of the runs it started.
pub fn send(app: &mut App, message: Message) -> Vec<RunId> {
    update(app, message)
        .into_iter()
        .filter_map(|e| match e {
            Effect::StartRun { id, .. } => Some(id),
            _ => None,
        })
        .collect()
}

/// Feeds a scripted run: event `i` arrives at `step_ms * (i + 1)`.
pub fn feed(app: &mut App, id: RunId, events: Vec<RunEvent>, step_ms: u64) {
    let n = events.len() as u64;
    for (i, event) in events.into_iter().enumerate() {
        update(
            app,
            Message::Run {
                id,
                at_ms: step_ms * (i as u64 + 1),
                event,
            },
        );
    }
    update(
        app,
        Message::RunEnded {
            id,
            at_ms: step_ms * (n + 1),
        },
    );
}

fn raw(data: &str) -> RunEvent {
    RunEvent::Raw(RawEvent {
        at_ms: 0,
        data: data.into(),
        status: None,
        retry_after: None,
    })
}

fn out(text: &str, call: Option<&str>) -> RunEvent {
    RunEvent::Output(OutputText {
        text: text.into(),
        tool_call_id: call.map(Into::into),
    })
}

fn finish(reason: FinishReason, input: u64, output: u64) -> RunEvent {
    RunEvent::Part(Part::Finish {
        finish_reason: reason,
        usage: Some(Box::new(Usage {
            input_tokens: Some(input),
            output_tokens: Some(output),
            total_tokens: Some(input + output),
            ..Usage::default()
        })),
    })
}

/// A native call of get_weather streamed in three argument pieces, one coerced.
pub fn native_call() -> Vec<RunEvent> {
    let id = "call_1";
    let mut ev = vec![
        raw(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"get_weather"}}]}}]}"#,
        ),
        RunEvent::Part(Part::ToolInputStart {
            id: id.into(),
            tool_name: "get_weather".into(),
        }),
    ];
    for (piece, delta) in [
        ("{\"city\":", "{\"city\":"),
        ("\"Paris\",", "\"Paris\""),
        ("\"days\":\"3\"}", ",\"days\":3}"),
    ] {
        ev.push(raw(&format!(
            r#"{{"choices":[{{"delta":{{"tool_calls":[{{"index":0,"function":{{"arguments":{}}}}}]}}}}]}}"#,
            serde_json::to_string(piece).unwrap()
        )));
        ev.push(out(piece, Some(id)));
        ev.push(RunEvent::Part(Part::ToolInputDelta {
            id: id.into(),
            delta: delta.into(),
        }));
    }
    ev.push(RunEvent::Part(Part::ToolInputEnd { id: id.into() }));
    ev.push(RunEvent::Part(Part::tool_call(ToolCall {
        tool_call_id: id.into(),
        tool_name: "get_weather".into(),
        input: serde_json::json!({"city": "Paris", "days": 3}),
        coercions: vec![toolscope_core::part::Coercion {
            path: "/days".into(),
            from: serde_json::json!("3"),
            to: serde_json::json!(3),
        }],
        invalid: vec![],
        ..Default::default()
    })));
    ev.push(raw(
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ));
    ev.push(finish(FinishReason::ToolCalls, 312, 9));
    ev.push(raw("[DONE]"));
    ev
}

/// `text` streamed through a protocol's parser in `chunk`-byte pieces: the output, the spans
/// as they are recognised, and the parts, as the provider layer sends them.
pub fn protocol_run(protocol: &str, tools: &ToolSet, text: &str, chunk: usize) -> Vec<RunEvent> {
    let mut parser = Protocol::from_name(protocol).unwrap().stream_parser(tools);
    let mut ev = Vec::new();
    let mut spans = 0;
    let mut parts = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + chunk).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let piece = &text[at..end];
        ev.push(raw(&format!(
            r#"{{"choices":[{{"delta":{{"content":{}}}}}]}}"#,
            serde_json::to_string(piece).unwrap()
        )));
        ev.push(out(piece, None));
        parser.push_str(piece, &mut parts);
        ev.extend(parser.spans()[spans..].iter().map(|s| RunEvent::Span(*s)));
        spans = parser.spans().len();
        ev.extend(parts.drain(..).map(RunEvent::Part));
        at = end;
    }
    parser.finish(&mut parts);
    ev.extend(parser.spans()[spans..].iter().map(|s| RunEvent::Span(*s)));
    ev.extend(parts.drain(..).map(RunEvent::Part));
    let reason = if parser.call_count() > 0 {
        FinishReason::ToolCalls
    } else {
        FinishReason::Stop
    };
    ev.push(finish(reason, 569, 40));
    ev
}

/// A plain text answer.
pub fn text_answer(text: &str) -> Vec<RunEvent> {
    let mut ev = Vec::new();
    ev.push(RunEvent::Part(Part::TextStart { id: "t".into() }));
    for word in text.split_inclusive(' ') {
        ev.push(out(word, None));
        ev.push(RunEvent::Part(Part::TextDelta {
            id: "t".into(),
            delta: word.into(),
        }));
    }
    ev.push(RunEvent::Part(Part::TextEnd { id: "t".into() }));
    ev.push(finish(FinishReason::Stop, 35, 55));
    ev
}

/// HTTP 429 from the provider.
pub fn rate_limited() -> Vec<RunEvent> {
    let mut e = ProviderError::new(
        ErrorCategory::ProviderRateLimit,
        "429 Too Many Requests: rate limit reached (retry after 2 s)",
    );
    e.status = Some(429);
    e.retry_after = Some(2.0);
    vec![
        raw(r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#),
        RunEvent::Part(Part::error(e.to_part())),
    ]
}

/// The status line's notice, or nothing.
pub fn notice_text(app: &App) -> String {
    app.notice
        .as_ref()
        .map(|n| n.text.clone())
        .unwrap_or_default()
}

/// The example tools.
pub fn tools(app: &App) -> ToolSet {
    app.tools.valid.clone()
}

/// Ctrl+L, the protocol's name typed as a filter, Enter: the protocol picker's way to a protocol.
pub fn pick_protocol(app: &mut App, name: &str) {
    send(app, ctrl('l'));
    for c in name.chars() {
        send(app, key(KeyCode::Char(c)));
    }
    send(app, key(KeyCode::Enter));
    assert_eq!(app.protocol_name(), name);
}

/// The first tool call of the run on screen.
pub fn first_call(app: &App) -> ToolCall {
    app.run
        .record
        .parts
        .tool_calls()
        .next()
        .cloned()
        .expect("a tool call")
}

/// The first error part of the run on screen, if any.
pub fn first_error(app: &App) -> Option<ErrorPart> {
    app.run.record.parts.parts.iter().find_map(|p| match p {
        Part::Error(e) => Some((**e).clone()),
        _ => None,
    })
}
