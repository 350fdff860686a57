//! The stream lint, check by check: for every code of `lint::CODES`, a constructed wire body
//! that breaks the rule (the warning appears, right after the event that revealed it, and
//! nothing else is dropped) and its clean twin (no warning at all). Bodies go through the real
//! framer and decoder, as a run or a replay does.

use serde_json::{Value, json};
use toolscope_core::lint;
use toolscope_core::part::{Collapsed, Part};
use toolscope_core::provider::{
    Decoder, Message, ProviderKind, RawEvent, Request, RunEvent, WireFramer,
};
use toolscope_core::session::Recorder;
use toolscope_core::tool::{ToolChoice, ToolDef, ToolSet};

fn request(provider: ProviderKind) -> Request {
    let mut r = Request::new(provider, "m");
    r.messages = vec![Message::user("Weather in Paris?")];
    r.tools = ToolSet::new(vec![
        ToolDef::new(
            "get_weather",
            "",
            json!({"type":"object","properties":{"city":{"type":"string"}}}),
        ),
        ToolDef::new(
            "get_time",
            "",
            json!({"type":"object","properties":{"city":{"type":"string"}}}),
        ),
    ])
    .unwrap();
    r
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| match e {
            Value::String(s) => format!("data: {s}\n\n"),
            other => format!("data: {other}\n\n"),
        })
        .collect()
}

/// An OpenAI chunk with this delta (and finish reason).
fn chunk(delta: Value, finish: Option<&str>) -> Value {
    json!({"choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
}

fn usage() -> Value {
    json!({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":5,"total_tokens":10}})
}

fn call_start(index: u64, id: &str, name: &str) -> Value {
    chunk(
        json!({"tool_calls":[{"index":index,"id":id,"type":"function","function":{"name":name,"arguments":""}}]}),
        None,
    )
}

fn call_args(index: u64, args: &str) -> Value {
    chunk(
        json!({"tool_calls":[{"index":index,"function":{"arguments":args}}]}),
        None,
    )
}

/// A stream of OpenAI chunks: these, the finish, the usage, `[DONE]`.
fn openai(mut events: Vec<Value>, finish: &str) -> String {
    events.push(chunk(json!({}), Some(finish)));
    events.push(usage());
    events.push(json!("[DONE]"));
    sse(&events)
}

/// The run events of a body, fed to the framer in one piece per wire event.
fn decode(request: &Request, body: &str) -> Vec<RunEvent> {
    let mut framer = WireFramer::new(request);
    let mut decoder = Decoder::new(request);
    let mut out = Vec::new();
    for data in framer
        .push(body.as_bytes())
        .into_iter()
        .chain(framer.finish())
    {
        out.push(RunEvent::Raw(RawEvent {
            data: data.clone(),
            ..RawEvent::default()
        }));
        out.extend(decoder.push(&data));
    }
    out.extend(decoder.finish());
    out
}

fn codes(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Part(Part::Warning(w)) => Some(w.code.clone()),
            _ => None,
        })
        .collect()
}

struct Case {
    code: &'static str,
    request: Request,
    bad: String,
    clean: String,
}

fn cases() -> Vec<Case> {
    let chat = |f: fn(&mut Request)| {
        let mut r = request(ProviderKind::OPENAI);
        f(&mut r);
        r
    };
    let weather = |id: &str| {
        vec![
            call_start(0, id, "get_weather"),
            call_args(0, "{\"city\":\"Paris\"}"),
        ]
    };
    let anthropic = |blocks: &[Value], order: &[usize]| -> String {
        let mut events = vec![
            json!({"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}),
        ];
        let mut body: Vec<Value> = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            body.push(json!({"type":"content_block_start","index":i,"content_block":b}));
            body.push(json!({"type":"content_block_delta","index":i,"delta":{"type":"text_delta","text":"Hi"}}));
            body.push(json!({"type":"content_block_stop","index":i}));
        }
        events.extend(order.iter().map(|&i| body[i].clone()));
        events.push(json!({"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}));
        events.push(json!({"type":"message_stop"}));
        sse(&events)
    };
    let text_block = json!({"type":"text","text":""});
    vec![
        Case {
            code: lint::MISSING_INDEX,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    chunk(
                        json!({"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":""}}]}),
                        None,
                    ),
                    chunk(
                        json!({"tool_calls":[{"function":{"arguments":"{\"city\":\"Paris\"}"}}]}),
                        None,
                    ),
                ],
                "tool_calls",
            ),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::DUPLICATE_INDEX,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    chunk(
                        json!({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":"}},{"index":0,"function":{"arguments":"\"Paris\"}"}}]}),
                        None,
                    ),
                ],
                "tool_calls",
            ),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::ID_CHANGED,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    chunk(
                        json!({"tool_calls":[{"index":0,"id":"c2","function":{"arguments":"{}"}}]}),
                        None,
                    ),
                ],
                "tool_calls",
            ),
            // Repeating the same id is no contradiction.
            clean: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    chunk(
                        json!({"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{}"}}]}),
                        None,
                    ),
                ],
                "tool_calls",
            ),
        },
        Case {
            code: lint::NAME_CHANGED,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    chunk(
                        json!({"tool_calls":[{"index":0,"function":{"name":"get_time","arguments":"{}"}}]}),
                        None,
                    ),
                ],
                "tool_calls",
            ),
            clean: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    chunk(
                        json!({"tool_calls":[{"index":0,"function":{"name":"get_weather","arguments":"{}"}}]}),
                        None,
                    ),
                ],
                "tool_calls",
            ),
        },
        Case {
            code: lint::ARGUMENTS_NOT_JSON,
            request: chat(|_| {}),
            // Relaxed JSON toolscope repairs, which a strict client would not parse.
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    call_args(0, "{city: 'Paris',}"),
                ],
                "tool_calls",
            ),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::EVENT_ORDER,
            request: request(ProviderKind::ANTHROPIC),
            // The second block's delta comes before the block starts.
            bad: anthropic(
                &[text_block.clone(), text_block.clone()],
                &[0, 1, 2, 4, 3, 5],
            ),
            clean: anthropic(
                &[text_block.clone(), text_block.clone()],
                &[0, 1, 2, 3, 4, 5],
            ),
        },
        Case {
            code: lint::UNKNOWN_BLOCK,
            request: request(ProviderKind::ANTHROPIC),
            bad: anthropic(
                &[
                    text_block.clone(),
                    json!({"type":"hologram","shape":"cube"}),
                ],
                &[0, 1, 2, 3, 5],
            ),
            clean: anthropic(std::slice::from_ref(&text_block), &[0, 1, 2]),
        },
        Case {
            code: lint::FINISH_MISMATCH,
            request: chat(|_| {}),
            bad: openai(weather("c1"), "stop"),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::TOOL_CHOICE_IGNORED,
            request: chat(|r| r.tool_choice = Some(ToolChoice::Required)),
            bad: openai(vec![chunk(json!({"content":"Sunny."}), None)], "stop"),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::WRONG_TOOL,
            request: chat(|r| r.tool_choice = Some(ToolChoice::Tool("get_time".into()))),
            bad: openai(weather("c1"), "tool_calls"),
            clean: openai(
                vec![
                    call_start(0, "c1", "get_time"),
                    call_args(0, "{\"city\":\"Paris\"}"),
                ],
                "tool_calls",
            ),
        },
        Case {
            code: lint::PARALLEL_IGNORED,
            request: chat(|r| r.sampling.parallel_tool_calls = Some(false)),
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    call_args(0, "{}"),
                    call_start(1, "c2", "get_time"),
                    call_args(1, "{}"),
                ],
                "tool_calls",
            ),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::MARKUP_LEAK,
            request: chat(|_| {}),
            bad: openai(
                vec![chunk(
                    json!({"content":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"}),
                    None,
                )],
                "stop",
            ),
            clean: openai(
                vec![chunk(json!({"content":"Sunny, 18 °C."}), None)],
                "stop",
            ),
        },
        Case {
            code: lint::CALL_IN_REASONING,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    chunk(
                        json!({"reasoning_content":"<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>"}),
                        None,
                    ),
                    chunk(json!({"content":"Let me check."}), None),
                ],
                "stop",
            ),
            clean: openai(
                vec![
                    chunk(
                        json!({"reasoning_content":"The user wants the weather."}),
                        None,
                    ),
                    chunk(json!({"content":"Sunny."}), None),
                ],
                "stop",
            ),
        },
        Case {
            code: lint::EMPTY_ARGS_STREAMED,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    call_args(0, "{}"),
                    call_args(0, "{\"city\":\"Paris\"}"),
                ],
                "tool_calls",
            ),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::TYPE_MISMATCH,
            request: chat(|_| {}),
            bad: openai(
                vec![
                    call_start(0, "c1", "get_weather"),
                    call_args(0, "{\"city\":42}"),
                ],
                "tool_calls",
            ),
            clean: openai(weather("c1"), "tool_calls"),
        },
        Case {
            code: lint::USAGE_MISSING,
            request: chat(|_| {}),
            bad: sse(&[
                chunk(json!({"content":"Sunny."}), None),
                chunk(json!({}), Some("stop")),
                json!("[DONE]"),
            ]),
            clean: openai(vec![chunk(json!({"content":"Sunny."}), None)], "stop"),
        },
    ]
}

#[test]
fn every_check_fires_on_its_broken_body_and_stays_quiet_on_the_clean_one() {
    let cases = cases();
    for (code, _) in lint::CODES {
        // `toolscope verify` finds this one, comparing two answers; no decoder can.
        if *code == lint::STREAM_DIFFERS {
            continue;
        }
        assert!(
            cases.iter().any(|c| c.code == *code),
            "no case for the lint code {code}"
        );
    }
    for case in &cases {
        let bad = decode(&case.request, &case.bad);
        let found = codes(&bad);
        assert_eq!(found, [case.code], "{}: {bad:#?}", case.code);
        let clean = decode(&case.request, &case.clean);
        assert!(codes(&clean).is_empty(), "{}: {clean:#?}", case.code);
        // A warning drops nothing: the calls and text are those of a decoder that ignores it.
        let parts: Vec<Part> = bad.iter().filter_map(|e| e.as_part().cloned()).collect();
        assert!(
            matches!(parts.last(), Some(Part::Finish { .. })),
            "{}",
            case.code
        );
    }
}

#[test]
fn a_warning_follows_the_event_that_revealed_it() {
    let case = cases()
        .into_iter()
        .find(|c| c.code == lint::MISSING_INDEX)
        .unwrap();
    let events = decode(&case.request, &case.bad);
    let at = events
        .iter()
        .position(|e| matches!(e, RunEvent::Part(Part::Warning(_))))
        .unwrap();
    // The closest raw event before it is the fragment without index.
    let raw = events[..at]
        .iter()
        .rev()
        .find_map(|e| match e {
            RunEvent::Raw(r) => Some(r.data.clone()),
            _ => None,
        })
        .unwrap();
    assert!(
        raw.contains("\"tool_calls\":[{\"id\":\"c1\""),
        "the fragment without index: {raw}"
    );
    // The answer-level checks come at the end, before the finish.
    let case = cases()
        .into_iter()
        .find(|c| c.code == lint::FINISH_MISMATCH)
        .unwrap();
    let parts: Vec<Part> = decode(&case.request, &case.bad)
        .iter()
        .filter_map(|e| e.as_part().cloned())
        .collect();
    let n = parts.len();
    assert!(matches!(parts[n - 2], Part::Warning(_)));
    assert_eq!(Collapsed::of(&parts).calls.len(), 1);
}

#[test]
fn a_saved_session_lints_to_the_same_findings() {
    for case in cases() {
        let mut recorder = Recorder::new(case.request.clone());
        for e in decode(&case.request, &case.bad) {
            recorder.push(&e);
        }
        let session = recorder.finish(None, 0);
        let findings = session.lint();
        let found: Vec<&str> = findings.iter().map(|f| f.warning.code.as_str()).collect();
        assert_eq!(found, [case.code]);
        assert!(findings[0].event <= session.events.len());
    }
}
