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
    assert!(timestamped_name().starts_with("session-20"));
    assert!(!timestamped_name().contains(':'));
}
