//! Session format, recording and replay, without HTTP: recorded provider transcripts are cut into
//! wire events by the real framer, decoded by the real decoder, recorded, saved, loaded and
//! replayed.

use std::path::PathBuf;

use serde_json::Value;

use super::*;
use crate::error::{ErrorCategory, ProviderError};
use crate::part::{FinishReason, Part};
use crate::protocol::Protocol;
use crate::provider::{Decoder, RunEvent, WireFramer};

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "toolscope-session-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    fs::create_dir_all(&d).unwrap();
    d
}

/// A live run simulated from a transcript: the events a `Run` would have given, with times.
fn live_events(scenario: &str) -> (Request, Vec<RunEvent>) {
    let dir = data(scenario);
    let request: Request =
        serde_json::from_str(&fs::read_to_string(dir.join("request.json")).unwrap()).unwrap();
    let body = fs::read(dir.join("stream.sse"))
        .or_else(|_| fs::read(dir.join("stream.ndjson")))
        .unwrap();
    let status: Option<Value> = fs::read_to_string(dir.join("status.json"))
        .ok()
        .map(|s| serde_json::from_str(&s).unwrap());
    let mut decoder = Decoder::new(&request);
    let mut events = Vec::new();
    if let Some(s) = status {
        let raw = RawEvent {
            at_ms: 40,
            data: String::from_utf8_lossy(&body).into_owned(),
            status: s["status"].as_u64().map(|v| v as u16),
            retry_after: s["retryAfter"].as_f64(),
        };
        events.push(RunEvent::Raw(raw.clone()));
        events.extend(decoder.push_raw(&raw));
        return (request, events);
    }
    let mut framer = WireFramer::new(&request);
    let mut at = 0;
    let mut wire = Vec::new();
    for chunk in body.chunks(37) {
        wire.extend(framer.push(chunk));
    }
    wire.extend(framer.finish());
    for data in wire {
        at += 7;
        let raw = RawEvent {
            at_ms: at,
            data,
            status: None,
            retry_after: None,
        };
        events.push(RunEvent::Raw(raw.clone()));
        events.extend(decoder.push_raw(&raw));
    }
    events.extend(decoder.finish());
    (request, events)
}

fn record(request: Request, events: &[RunEvent]) -> Session {
    let mut r = Recorder::new(request);
    for e in events {
        r.push(e);
    }
    r.finish(Some("test".into()), 999)
}

/// Sessions compare by what they serialise to.
fn same(s: &Session) -> Value {
    serde_json::to_value(s).unwrap()
}

fn parts(events: &[RunEvent]) -> Vec<Part> {
    events.iter().filter_map(|e| e.as_part().cloned()).collect()
}

#[test]
fn save_load_replay_gives_the_live_parts() {
    for scenario in [
        "openai/forced-tool-call",
        "openai/parallel-calls",
        "anthropic/tool-call",
        "gemini/function-call",
        "ollama/tool-calls",
        "openai/cut-stream",
        "openai/rate-limit",
    ] {
        let (request, live) = live_events(scenario);
        let session = record(request, &live);
        assert_eq!(session.parts, parts(&live), "{scenario}");
        let path = temp_dir().join(format!("{}.json", scenario.replace('/', "-")));
        session.save(&path).unwrap();
        let loaded = Session::load(&path).unwrap();
        assert_eq!(same(&loaded), same(&session), "{scenario}");
        let mut replay = Replay::new(&loaded, ReplayOptions::default());
        assert_eq!(replay.len(), loaded.events.len() + 1);
        let replayed = replay.run_to_end();
        assert_eq!(parts(&replayed), session.parts, "{scenario}");
        // Everything the live run produced comes back, raw events included, in order.
        assert_eq!(replayed, live, "{scenario}");
    }
}

#[test]
fn steps_carry_the_recorded_times() {
    let (request, live) = live_events("openai/forced-tool-call");
    let session = record(request, &live);
    let mut replay = Replay::new(&session, ReplayOptions::default());
    let mut times = Vec::new();
    while let Some(t) = replay.next_at_ms() {
        let step = replay.step().unwrap();
        assert_eq!(step.at_ms, t);
        times.push(t);
    }
    assert!(replay.is_done());
    assert_eq!(replay.position(), replay.len());
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(*times.last().unwrap(), 999);
}

#[test]
fn a_run_that_failed_without_a_wire_event_replays_its_failure() {
    let (request, mut live) = live_events("openai/forced-tool-call");
    // Cut the run after its first wire events and end it like an idle timeout would.
    let cut = live
        .iter()
        .position(|e| matches!(e, RunEvent::Part(Part::ToolInputDelta { .. })))
        .unwrap()
        + 1;
    live.truncate(cut);
    let timeout = ProviderError::new(ErrorCategory::ProviderUnavailable, "no bytes for 120 s");
    live.push(RunEvent::Part(Part::error(timeout.to_part())));
    let session = record(request, &live);
    assert_eq!(session.end.len(), 1);
    let replayed = Replay::new(&session, ReplayOptions::default()).run_to_end();
    assert_eq!(parts(&replayed), session.parts);
}

/// A hermes answer from a model that was asked natively, recorded: native, it is text.
fn native_hermes_session() -> Session {
    let request: Request = serde_json::from_value(serde_json::json!({
        "provider": "openai", "model": "m", "stream": true,
        "messages": [{"role": "user", "content": "weather?"}],
        "tools": [{"name": "get_weather", "description": "", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    }))
    .unwrap();
    let chunk = |content: &str| {
        serde_json::json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":content},"finish_reason":null}]}).to_string()
    };
    let stop = serde_json::json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string();
    let wire = [
        chunk("<tool_call>{\"name\": \"get_weather\", "),
        chunk("\"arguments\": {\"city\": \"Oslo\"}}</tool_call>"),
        stop,
        "[DONE]".to_string(),
    ];
    let mut decoder = Decoder::new(&request);
    let mut live = Vec::new();
    for (i, data) in wire.iter().enumerate() {
        let raw = RawEvent {
            at_ms: i as u64,
            data: data.clone(),
            status: None,
            retry_after: None,
        };
        live.push(RunEvent::Raw(raw.clone()));
        live.extend(decoder.push_raw(&raw));
    }
    live.extend(decoder.finish());
    let session = record(request, &live);
    assert!(!session.parts.iter().any(|p| matches!(p, Part::ToolCall(_))));
    session
}

#[test]
fn replay_re_reads_under_another_protocol() {
    // Under hermes, the text is a call.
    let session = native_hermes_session();

    let options = ReplayOptions {
        protocol: Some(Protocol::from_name("hermes").ok()),
        detect_protocol: false,
        tools: None,
    };
    let reparsed = parts(&Replay::new(&session, options).run_to_end());
    let call = reparsed.iter().find_map(|p| match p {
        Part::ToolCall(c) => Some(c),
        _ => None,
    });
    assert_eq!(
        call.map(|c| c.input.clone()),
        Some(serde_json::json!({"city": "Oslo"}))
    );
}

#[test]
fn replay_reads_native_text_with_protocol_detection() {
    // Read natively with detection, the text is a hermes call, and the choice is reported once
    // (before the call, on the event that made it).
    let session = native_hermes_session();
    let options = ReplayOptions {
        protocol: Some(None),
        detect_protocol: true,
        tools: None,
    };
    let mut replay = Replay::new(&session, options);
    assert!(replay.request().detect_protocol);
    let events = replay.run_to_end();
    let detected: Vec<(usize, &str)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            RunEvent::Detected { protocol, .. } => Some((i, protocol.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(detected.len(), 1, "{events:?}");
    assert_eq!(detected[0].1, "hermes");
    let call_at = events
        .iter()
        .position(|e| matches!(e, RunEvent::Part(Part::ToolCall(_))))
        .expect("a call");
    assert!(detected[0].0 < call_at);
    let call = match &events[call_at] {
        RunEvent::Part(Part::ToolCall(c)) => c,
        _ => unreachable!(),
    };
    assert_eq!(call.input, serde_json::json!({"city": "Oslo"}));
    // The call's markup is a span of the output, as in emulated mode.
    assert!(events.iter().any(|e| matches!(e, RunEvent::Span(_))));
    // The finish reason says the answer asks for a tool.
    assert!(events.iter().any(|e| matches!(
        e,
        RunEvent::Part(Part::Finish {
            finish_reason: FinishReason::ToolCalls,
            ..
        })
    )));

    // Saved with detection, the session says so and reads the same way again.
    let mut request = session.request.clone();
    request.detect_protocol = true;
    let text = serde_json::to_string(&request).unwrap();
    assert!(text.contains("\"detectProtocol\":true"), "{text}");
    let back: Request = serde_json::from_str(&text).unwrap();
    assert!(back.detect_protocol);
    let mut again = session.clone();
    again.request = back;
    assert_eq!(again.summary().protocol.as_deref(), Some("auto"));
    let replayed = Replay::new(&again, ReplayOptions::default()).run_to_end();
    assert!(
        replayed
            .iter()
            .any(|e| matches!(e, RunEvent::Part(Part::ToolCall(_))))
    );
    // Re-read natively without detection, it is text again.
    let native = ReplayOptions {
        protocol: Some(None),
        detect_protocol: false,
        tools: None,
    };
    let plain = Replay::new(&again, native).run_to_end();
    assert!(
        !plain
            .iter()
            .any(|e| matches!(e, RunEvent::Part(Part::ToolCall(_))))
    );
    assert!(!plain.iter().any(|e| matches!(e, RunEvent::Detected { .. })));
}

#[test]
fn replay_re_coerces_with_other_tools() {
    let (request, live) = live_events("openai/forced-tool-call");
    let session = record(request, &live);
    let name = session.parts.iter().find_map(|p| match p {
        Part::ToolCall(c) => Some(c.tool_name.clone()),
        _ => None,
    });
    let name = name.unwrap();
    // The same tool, now wanting an integer `city`: the string is kept and reported invalid.
    let tools = crate::tool::ToolSet::new(vec![crate::tool::ToolDef::new(
        &name,
        "",
        serde_json::json!({"type":"object","properties":{"city":{"type":"integer"}},"additionalProperties":false}),
    )])
    .unwrap();
    let reparsed = parts(
        &Replay::new(
            &session,
            ReplayOptions {
                protocol: None,
                detect_protocol: false,
                tools: Some(tools),
            },
        )
        .run_to_end(),
    );
    let call = reparsed.iter().find_map(|p| match p {
        Part::ToolCall(c) => Some(c.clone()),
        _ => None,
    });
    assert!(!call.unwrap().invalid.is_empty());
}

#[test]
fn broken_files_get_one_line_naming_the_file() {
    let (request, live) = live_events("openai/forced-tool-call");
    let good = serde_json::to_string_pretty(&record(request, &live)).unwrap();
    let dir = temp_dir();
    let newer = good.replacen("\"version\": 1", "\"version\": 7", 1);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.json",
            good.as_bytes()[..good.len() / 2].to_vec(),
            "cut short",
        ),
        ("empty.json", Vec::new(), "empty"),
        ("binary.json", vec![0xff, 0x00, 0xfe, 0x13, 0x37], "binary"),
        ("array.json", b"[1, 2]".to_vec(), "not an object"),
        (
            "other.json",
            b"{\"format\": \"something-else\", \"version\": 1}".to_vec(),
            "format \"something-else\"",
        ),
        (
            "no-format.json",
            b"{\"version\": 1}".to_vec(),
            "no \"format\"",
        ),
        ("newer.json", newer.into_bytes(), "newer toolscope"),
        (
            "garbage.json",
            b"{\"format\": \"toolscope-session\", \"version\": 1, \"request\": 3}".to_vec(),
            "not a valid session",
        ),
    ];
    for (name, bytes, want) in cases {
        let path = dir.join(name);
        fs::write(&path, &bytes).unwrap();
        let err = Session::load(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&path.display().to_string()),
            "{name}: {err}"
        );
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains('\n'), "{name}: {err}");
    }
    let missing = Session::load(&dir.join("missing.json"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("missing.json"));
    assert!(
        Session::load(&dir)
            .unwrap_err()
            .to_string()
            .contains("folder")
    );
}

#[test]
fn saving_is_atomic_and_leaves_no_temporary_file() {
    let (request, live) = live_events("openai/forced-tool-call");
    let session = record(request, &live);
    let dir = temp_dir().join("atomic");
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("s.json");
    fs::write(&path, "old").unwrap();
    session.save(&path).unwrap();
    assert_eq!(same(&Session::load(&path).unwrap()), same(&session));
    let names: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // A folder that does not exist fails cleanly, and names the file.
    let err = session
        .save(&dir.join("nope/s.json"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("nope/s.json"), "{err}");
}

#[test]
fn timestamps_are_rfc3339_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(rfc3339(1_795_219_200), "2026-11-21T00:00:00Z");
    assert!(now_rfc3339().starts_with("20") && now_rfc3339().ends_with('Z'));
}

// ---- MCP loops ----

/// A turn answered with `texts` streamed as OpenAI chunks, `gap` ms apart: the request and the
/// events a run would give.
fn text_turn(request: &Request, texts: &[&str], gap: u64) -> Vec<RunEvent> {
    let chunk = |content: &str| {
        serde_json::json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":content},"finish_reason":null}]}).to_string()
    };
    let stop = serde_json::json!({"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}).to_string();
    let mut wire: Vec<String> = texts.iter().map(|t| chunk(t)).collect();
    wire.push(stop);
    wire.push("[DONE]".into());
    let mut decoder = Decoder::new(request);
    let mut live = Vec::new();
    for (i, data) in wire.into_iter().enumerate() {
        let raw = RawEvent {
            at_ms: gap * (i as u64 + 1),
            data,
            status: None,
            retry_after: None,
        };
        live.push(RunEvent::Raw(raw.clone()));
        live.extend(decoder.push_raw(&raw));
    }
    live.extend(decoder.finish());
    live
}

fn weather_result() -> Value {
    serde_json::json!({
        "content": [{"type": "text", "text": "{\"city\":\"Paris\",\"temperature\":18}"}],
        "structuredContent": {"city": "Paris", "temperature": 18},
        "isError": false
    })
}

fn weather_mcp() -> McpRecord {
    McpRecord {
        servers: vec![McpServerRecord::stdio("weather", "weather-mcp --stdio")],
        tools: vec![McpToolRecord {
            server: "weather".into(),
            name: "get_weather".into(),
            offered_as: "get_weather".into(),
        }],
    }
}

/// A loop as the command line records it: a forced call, its result, a text answer. Returns the
/// session and every part the live loop printed, in order.
fn recorded_loop(outcome: RecordedOutcome) -> (Session, Vec<Part>) {
    let (request, first) = live_events("openai/forced-tool-call");
    let call = parts(&first)
        .into_iter()
        .find_map(|p| match p {
            Part::ToolCall(c) => Some(c),
            _ => None,
        })
        .unwrap();
    let mut r = Recorder::new(request.clone());
    for e in &first {
        r.push(e);
    }
    r.end_turn(120);
    let recorded = RecordedCall {
        at_ms: 125,
        ended_at_ms: 140,
        server: "weather".into(),
        name: "get_weather".into(),
        tool_name: call.tool_name.clone(),
        tool_call_id: call.tool_call_id.to_string(),
        arguments: call.input.clone(),
        outcome,
    };
    let mut printed = parts(&first);
    printed.extend(recorded.parts());
    let failed = matches!(recorded.outcome, RecordedOutcome::Error(_));
    r.tool_call(recorded);
    r.mcp(weather_mcp());
    if !failed {
        let mut second = request.clone();
        second.tool_choice = None;
        second.messages.push(crate::provider::Message::tool_result(
            call.tool_call_id.as_str(),
            "18 degrees",
        ));
        r.next_turn(second.clone(), 150);
        let live = text_turn(&second, &["It is ", "18 °C in Paris."], 5);
        for e in &live {
            r.push(e);
        }
        printed.extend(parts(&live));
    }
    (r.finish(Some("loop".into()), 60), printed)
}

fn loop_parts(session: &Session, options: ReplayOptions) -> Vec<Part> {
    parts(&LoopReplay::new(session, options).run_to_end())
}

#[test]
fn a_loop_is_saved_as_version_2_and_replays_every_step_at_its_time() {
    let (session, printed) = recorded_loop(RecordedOutcome::Result(weather_result()));
    assert_eq!(session.version, 2);
    assert_eq!(session.format_version(), 2);
    assert!(session.is_loop());
    let path = temp_dir().join("loop.json");
    session.save(&path).unwrap();
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"version\": 2"), "{text}");
    let json: Value = serde_json::from_str(&text).unwrap();
    let kinds: Vec<&str> = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["toolCall", "turn"]);
    assert_eq!(json["steps"][0]["result"], weather_result());
    assert_eq!(json["steps"][0]["toolName"], "get_weather");
    assert_eq!(json["mcp"]["servers"][0]["command"], "weather-mcp --stdio");
    assert_eq!(json["mcp"]["tools"][0]["offeredAs"], "get_weather");

    let loaded = Session::load(&path).unwrap();
    assert_eq!(same(&loaded), same(&session));
    assert_eq!(loaded.all_parts(), printed);
    // The whole loop replays to what the live loop printed, never running anything.
    assert_eq!(loop_parts(&loaded, ReplayOptions::default()), printed);
    // The one-turn replay is the first turn.
    let first = parts(&Replay::new(&loaded, ReplayOptions::default()).run_to_end());
    assert_eq!(first, loaded.parts);

    // Times: the first turn on its own clock, the result when the call ended, the second turn
    // from its request on.
    let mut replay = LoopReplay::new(&loaded, ReplayOptions::default());
    assert_eq!(replay.segments().len(), 3);
    let mut steps = Vec::new();
    while let Some(at) = replay.next_at_ms() {
        let step = replay.step().unwrap();
        assert_eq!(step.at_ms, at);
        steps.push(step);
    }
    assert!(replay.is_done());
    assert!(steps.windows(2).all(|w| w[0].at_ms <= w[1].at_ms));
    let result = steps.iter().find(|s| s.segment == 1).unwrap();
    assert_eq!(result.at_ms, 140);
    assert!(matches!(
        &result.events[..],
        [RunEvent::Part(Part::ToolResult(r))] if r.output["temperature"] == 18
    ));
    let second: Vec<&LoopStep> = steps.iter().filter(|s| s.segment == 2).collect();
    assert_eq!(second[0].at_ms, 155);
    assert!(second.iter().all(|s| s.at_ms >= 150));
    // The last turn ends when finish said.
    assert_eq!(second.last().unwrap().at_ms, 150 + 60);
    assert_eq!(loaded.duration_ms(), 210);

    let s = loaded.summary();
    assert_eq!((s.turns, s.tool_calls), (2, 1));
    assert_eq!(
        s.events,
        loaded.events.len()
            + loaded
                .turn_sessions()
                .iter()
                .skip(1)
                .map(|(_, t)| t.events.len())
                .sum::<usize>()
    );
    // Every turn is linted: the first answers a forced tool with `stop`, the second reports no
    // usage.
    let findings: Vec<(usize, String)> = loaded
        .lint()
        .into_iter()
        .map(|f| (f.turn, f.warning.code.to_string()))
        .collect();
    let want = [(0, "finish-mismatch"), (1, "usage-missing")].map(|(t, c)| (t, c.to_string()));
    assert_eq!(findings, want);
}

#[test]
fn a_failed_call_replays_as_the_error_part_the_loop_printed() {
    let message = "weather: tools/call exit_now failed: the server closed the connection";
    let (session, printed) = recorded_loop(RecordedOutcome::Error(message.into()));
    let replayed = loop_parts(&session, ReplayOptions::default());
    assert_eq!(replayed, printed);
    let Some(Part::Error(e)) = replayed.last() else {
        panic!("{replayed:?}")
    };
    assert_eq!(e.category, Some(ErrorCategory::ToolExecutionFailed));
    #[cfg(feature = "mcp")]
    {
        let Some(Step::ToolCall(call)) = session.steps.first() else {
            panic!("a call")
        };
        let live = crate::mcp::McpError::Closed(message.into())
            .to_part(Some(&call.tool_call_id), Some(&call.tool_name));
        assert_eq!(**e, live);
    }
    let back = Session::from_json(&serde_json::to_string(&session).unwrap()).unwrap();
    assert_eq!(loop_parts(&back, ReplayOptions::default()), printed);
}

#[test]
fn replay_options_apply_to_every_turn() {
    // Two turns that wrote hermes markup natively: read as hermes, both are calls.
    let hermes = native_hermes_session();
    let mut r = Recorder::new(hermes.request.clone());
    r.extend(hermes.events.clone(), hermes.parts.clone());
    r.tool_call(RecordedCall {
        at_ms: 10,
        ended_at_ms: 12,
        server: "s".into(),
        name: "get_weather".into(),
        tool_name: "get_weather".into(),
        tool_call_id: "call_1".into(),
        arguments: serde_json::json!({"city": "Oslo"}),
        outcome: RecordedOutcome::Result(
            serde_json::json!({"content": [{"type": "text", "text": "cold"}]}),
        ),
    });
    r.next_turn(hermes.request.clone(), 20);
    r.extend(hermes.events.clone(), hermes.parts.clone());
    let session = r.finish(None, 3);
    let calls = |p: &[Part]| p.iter().filter(|p| matches!(p, Part::ToolCall(_))).count();
    assert_eq!(calls(&loop_parts(&session, ReplayOptions::default())), 0);
    let as_hermes = ReplayOptions {
        protocol: Some(Protocol::from_name("hermes").ok()),
        detect_protocol: false,
        tools: None,
    };
    let reread = loop_parts(&session, as_hermes);
    assert_eq!(calls(&reread), 2, "{reread:?}");
    // The recorded result is shown as it was.
    assert!(reread.iter().any(
        |p| matches!(p, Part::ToolResult(r) if r.output == "cold" && r.tool_call_id == "call_1")
    ));
    // Without an MCP record, a loop is still version 2.
    assert!(session.mcp.is_none());
    assert_eq!(session.format_version(), 2);
}

#[test]
fn a_recorder_given_kept_data_makes_the_same_session_as_one_fed_event_by_event() {
    let (session, _) = recorded_loop(RecordedOutcome::Result(weather_result()));
    let turns = session.turn_sessions();
    let mut r = Recorder::from_run(
        turns[0].1.request.clone(),
        turns[0].1.events.clone(),
        turns[0].1.parts.clone(),
    );
    r.end_turn(turns[0].1.ended_at_ms);
    let Some(Step::ToolCall(call)) = session.steps.first() else {
        panic!("a call")
    };
    r.tool_call((**call).clone());
    r.next_turn(turns[1].1.request.clone(), turns[1].0);
    r.extend(turns[1].1.events.clone(), turns[1].1.parts.clone());
    assert_eq!(r.parts(), &turns[1].1.parts[..]);
    r.mcp(weather_mcp());
    // Recording the same servers again adds nothing.
    r.mcp(weather_mcp());
    let mut rebuilt = r.finish(Some("loop".into()), 60);
    rebuilt.created_at = session.created_at.clone();
    assert_eq!(same(&rebuilt), same(&session));
}

#[test]
fn a_stop_step_replays_its_parts_last() {
    let (request, first) = live_events("openai/forced-tool-call");
    let mut r = Recorder::new(request);
    for e in &first {
        r.push(e);
    }
    let warning = Part::warning(crate::part::Warning::new("max-steps", "stopped after 1"));
    r.stop(300, vec![warning.clone()]);
    let session = r.finish(None, 100);
    assert_eq!(session.version, 2);
    let back = Session::from_json(&serde_json::to_string_pretty(&session).unwrap()).unwrap();
    let replayed = loop_parts(&back, ReplayOptions::default());
    assert_eq!(replayed.last(), Some(&warning));
    assert_eq!(replayed, back.all_parts());
    assert_eq!(back.duration_ms(), 300);
}

/// A session file as the first toolscope wrote them (format version 1), written out here.
const VERSION_1: &str = r#"{
  "format": "toolscope-session",
  "version": 1,
  "name": "hello",
  "createdAt": "2026-11-21T04:30:00Z",
  "toolscope": "0.1.0",
  "request": {
    "provider": "openai",
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": true
  },
  "events": [
    {"atMs": 5, "data": "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}"},
    {"atMs": 9, "data": "{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}"},
    {"atMs": 10, "data": "[DONE]"}
  ],
  "endedAtMs": 12,
  "parts": [
    {"type": "text-start", "id": "text-1"},
    {"type": "text-delta", "id": "text-1", "delta": "Hello"},
    {"type": "text-end", "id": "text-1"},
    {"type": "warning", "code": "usage-missing", "message": "the answer ended without reporting its token usage"},
    {"type": "finish", "finishReason": "stop"}
  ]
}"#;

#[test]
fn a_version_1_file_reads_and_a_plain_session_is_still_written_as_version_1() {
    let session = Session::from_json(VERSION_1).unwrap();
    assert_eq!(session.version, 1);
    assert!(!session.is_loop() && session.mcp.is_none());
    assert_eq!(session.segments().len(), 1);
    let replayed = parts(&Replay::new(&session, ReplayOptions::default()).run_to_end());
    assert_eq!(replayed, session.parts, "{replayed:?}");
    assert_eq!(
        loop_parts(&session, ReplayOptions::default()),
        session.parts
    );
    let s = session.summary();
    assert_eq!((s.turns, s.tool_calls, s.events), (1, 0, 3));
    // Written again, it is version 1 with no new field, which the first toolscope reads.
    let written: Value = serde_json::to_value(&session).unwrap();
    assert_eq!(written["version"], 1);
    assert!(written.get("mcp").is_none() && written.get("steps").is_none());
    let mut original: Value = serde_json::from_str(VERSION_1).unwrap();
    let mut written = written;
    // The request is written with its defaults filled in; everything else as it was.
    let request = written.as_object_mut().unwrap().remove("request").unwrap();
    original.as_object_mut().unwrap().remove("request");
    assert_eq!(written, original);
    assert_eq!(request["model"], "m");
    // Even when the in-memory version says otherwise, what is written follows the content.
    let mut bumped = session.clone();
    bumped.version = VERSION;
    assert_eq!(serde_json::to_value(&bumped).unwrap()["version"], 1);
    bumped.mcp = Some(weather_mcp());
    assert_eq!(serde_json::to_value(&bumped).unwrap()["version"], 2);
}

#[test]
fn a_newer_version_is_refused_and_malformed_steps_are_named() {
    let (session, _) = recorded_loop(RecordedOutcome::Result(weather_result()));
    let good: Value = serde_json::to_value(&session).unwrap();
    let dir = temp_dir();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = good.clone();
        f(&mut v);
        serde_json::to_vec_pretty(&v).unwrap()
    };
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "v3.json",
            with(&|v| v["version"] = 3.into()),
            "newer toolscope (format version 3; this toolscope reads versions up to 2)",
        ),
        (
            "v0.json",
            with(&|v| v["version"] = 0.into()),
            "version 0 does not exist",
        ),
        (
            "unknown-step.json",
            with(&|v| v["steps"][1]["type"] = "dance".into()),
            "step 2 of the loop (type \"dance\")",
        ),
        (
            "no-id.json",
            with(&|v| {
                v["steps"][0].as_object_mut().unwrap().remove("toolCallId");
            }),
            "step 1 of the loop (type \"toolCall\"): missing field `toolCallId`",
        ),
        (
            "both.json",
            with(&|v| v["steps"][0]["error"] = "boom".into()),
            "both a \"result\" and an \"error\"",
        ),
        (
            "bad-turn.json",
            with(&|v| v["steps"][1]["request"] = 3.into()),
            "step 2 of the loop (type \"turn\")",
        ),
        (
            "steps-object.json",
            with(&|v| v["steps"] = serde_json::json!({"a": 1})),
            "\"steps\" is not a list",
        ),
        (
            "bad-mcp.json",
            with(&|v| v["mcp"]["servers"] = "toolscope".into()),
            "its \"mcp\" record",
        ),
    ];
    for (name, bytes, want) in cases {
        let path = dir.join(name);
        fs::write(&path, &bytes).unwrap();
        let err = Session::load(&path).unwrap_err().to_string();
        assert!(
            err.starts_with(&path.display().to_string()),
            "{name}: {err}"
        );
        assert!(err.contains(want), "{name}: {err}");
        assert!(!err.contains('\n'), "{name}: {err}");
    }
}

/// Issue 25, point 9: the temporary file a killed save left behind is removed by the next save
/// to that folder: only files of our own pattern, and only when the process that wrote it is
/// gone (or the file is a day old). A live process's file is a save in progress and stays.
#[test]
fn a_save_cleans_up_temporary_files_that_killed_saves_left() {
    let dir = temp_dir().join("leftovers");
    fs::create_dir_all(&dir).unwrap();
    // Pids above the kernel's largest (4194304) never run.
    let dead = dir.join(".old.json.toolscope-4999999.tmp");
    let live = dir.join(".busy.json.toolscope-1.tmp");
    let stale = dir.join(".stale.json.toolscope-1.tmp");
    let others = [
        dir.join(".odd.json.toolscope-notapid.tmp"),
        dir.join(".another-program.json.4999999.tmp"),
        dir.join("notes.toolscope-4999999.tmp"),
        dir.join(".keep.json.toolscope-4999999.txt"),
    ];
    for f in [&dead, &live, &stale].into_iter().chain(&others) {
        fs::write(f, "half a session").unwrap();
    }
    let two_days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(2 * 86_400);
    fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(two_days_ago)
        .unwrap();
    let session = Recorder::new(crate::provider::Request::new(
        crate::provider::ProviderKind::OPENAI,
        "m",
    ))
    .finish(None, 0);
    session.save(&dir.join("new.json")).unwrap();
    assert!(!dead.exists(), "a dead save's file goes");
    if cfg!(target_os = "linux") {
        assert!(live.exists(), "a live process's save in progress stays");
    }
    assert!(!stale.exists(), "a day-old file goes");
    for f in &others {
        assert!(f.exists(), "not ours: {}", f.display());
    }
    assert!(dir.join("new.json").exists());
    let _ = fs::remove_dir_all(&dir);
}

/// Issue 25, point 9: a version that is there but not a usable number says what it is and
/// what was expected, instead of "no format version".
#[test]
fn a_version_of_the_wrong_kind_says_what_is_wrong() {
    let (session, _) = recorded_loop(RecordedOutcome::Result(weather_result()));
    let good: Value = serde_json::to_value(&session).unwrap();
    for (version, says) in [
        (
            serde_json::json!("1"),
            "\"version\" is a string (\"1\"), expected a number",
        ),
        (
            serde_json::json!(1.5),
            "\"version\" is 1.5, expected a whole number",
        ),
        (
            serde_json::json!(-2),
            "\"version\" is -2, expected a whole number",
        ),
        (
            serde_json::json!(null),
            "\"version\" is null, expected a number",
        ),
        (
            serde_json::json!([1]),
            "\"version\" is a list, expected a number",
        ),
        (
            serde_json::json!(true),
            "\"version\" is true, expected a number",
        ),
    ] {
        let mut v = good.clone();
        v["version"] = version.clone();
        let e = Session::from_json(&v.to_string()).unwrap_err();
        assert!(e.contains(says), "{version}: {e}");
    }
    let mut v = good.clone();
    v.as_object_mut().unwrap().remove("version");
    let e = Session::from_json(&v.to_string()).unwrap_err();
    assert_eq!(
        e,
        "the session has no format version (no \"version\" field)"
    );
}

#[test]
fn raw_text_beyond_the_limit_drops_the_oldest_events_never_a_part() {
    let (mut request, live) = live_events("openai/parallel-calls");
    let raw_bytes: usize = live
        .iter()
        .filter_map(|e| match e {
            RunEvent::Raw(r) => Some(r.data.len()),
            _ => None,
        })
        .sum();
    let limit = raw_bytes / 3;
    request.limits.raw_bytes = limit;
    let mut r = Recorder::new(request);
    let mut most = 0;
    for e in &live {
        r.push(e);
        most = most.max(r.raw_held());
    }
    assert!(most <= limit, "{most} raw bytes held, limit {limit}");
    assert!(r.raw_dropped() > 0);
    let session = r.finish(None, 999);
    let kept: usize = session.events.iter().map(|e| e.data.len()).sum();
    assert!(kept <= limit && kept > 0);
    // The newest events are the ones kept.
    let last_raw = live.iter().rev().find_map(|e| match e {
        RunEvent::Raw(r) => Some(r.clone()),
        _ => None,
    });
    assert_eq!(session.events.last(), last_raw.as_ref());
    // Every part is kept, and a warning says what was dropped.
    let live_parts = parts(&live);
    assert_eq!(&session.parts[..live_parts.len()], &live_parts[..]);
    match session.parts.last() {
        Some(Part::Warning(w)) => {
            assert_eq!(w.code, "raw-dropped");
            assert!(w.message.contains("oldest"), "{}", w.message);
        }
        other => panic!("no notice: {other:?}"),
    }
    // Replay gives every part back, from the events kept and the recorded ending.
    let replayed = Replay::new(&session, ReplayOptions::default()).run_to_end();
    assert_eq!(parts(&replayed), session.parts);
}
