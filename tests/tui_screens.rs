//! Screen tests: the playground drawn on a `TestBackend` and compared with reviewed snapshots
//! (`tests/snapshots/`), at 80×24 and 160×48, idle, after runs, with overlays, in compare and
//! in error states; and each pane alone. Runs are scripted with fixed times, so no snapshot
//! depends on a clock.

mod tui_support;

use insta::assert_snapshot;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::KeyCode;

use toolscope::app::{App, Focus};
use toolscope::tui::View;
use tui_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

fn both(name: &str, prepare: impl Fn(&mut App)) {
    for (w, h) in SIZES {
        let mut a = app(w, h);
        prepare(&mut a);
        assert_snapshot!(format!("{name}_{w}x{h}"), screen(&a, w, h));
    }
}

const HERMES_OUTPUT: &str = "I will check the weather.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": \"3\"}}\n</tool_call>\n<tool_call>{\"name\": \"search_web\" \"arguments\": {}</tool_call>";

#[test]
fn idle() {
    both("idle", |_| {});
}

#[test]
fn after_a_native_call() {
    both("native_call", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
    });
}

#[test]
fn hermes_with_spans_and_a_malformed_call() {
    both("hermes", |a| {
        pick_protocol(a, "hermes");
        let id = send(a, ctrl('r'))[0];
        let t = tools(a);
        feed(a, id, protocol_run("hermes", &t, HERMES_OUTPUT, 7), 10);
        a.focus = Focus::Raw;
    });
}

/// Auto: the request goes natively, and the markup the server left in the answer text is read
/// by the protocol its markers name; the status line shows which, the notice says why.
#[test]
fn auto_reads_the_markup_a_server_left_in_the_text() {
    const ANSWER: &str = "<think>Paris, three days.</think>\nI will check.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>";
    both("auto_detected", |a| {
        pick_protocol(a, "auto");
        let fx = toolscope::app::update(a, ctrl('r'));
        let Some(toolscope::app::Effect::StartRun { id, request }) = fx
            .into_iter()
            .find(|e| matches!(e, toolscope::app::Effect::StartRun { .. }))
        else {
            panic!("Ctrl+R starts a run");
        };
        assert!(request.detect_protocol && request.protocol.is_none());
        assert!(!request.tools.is_empty());
        let mut sse = String::new();
        for piece in ANSWER.as_bytes().chunks(9) {
            let piece = std::str::from_utf8(piece).unwrap();
            let chunk = serde_json::json!({"choices":[{"index":0,"delta":{"content":piece}}]});
            sse.push_str(&format!("data: {chunk}\n\n"));
        }
        sse.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":412,\"completion_tokens\":48}}\n\ndata: [DONE]\n\n");
        let mut framer = toolscope_core::provider::WireFramer::new(&request);
        let mut decoder = toolscope_core::provider::Decoder::new(&request);
        let mut events = Vec::new();
        for data in framer
            .push(sse.as_bytes())
            .into_iter()
            .chain(framer.finish())
        {
            events.extend(decoder.push(&data));
        }
        events.extend(decoder.finish());
        feed(a, id, events, 10);
        let d = a.run.record.detected.clone().expect("a choice");
        assert_eq!(d.protocol, "qwen3-coder");
        assert_eq!(a.protocol_shown(), "auto → qwen3-coder");
        let notice = notice_text(a);
        assert!(
            notice.starts_with("auto: read as qwen3-coder ("),
            "{notice}"
        );
        let call = first_call(a);
        assert_eq!(call.input, serde_json::json!({"city": "Paris", "days": 3}));
        assert_eq!(
            a.run.record.warnings, 0,
            "no finish mismatch for calls read from text"
        );
        a.focus = Focus::Raw;
    });
}

#[test]
fn wire_events() {
    both("wire", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        send(a, key(KeyCode::F(2)));
    });
}

#[test]
fn while_streaming() {
    both("streaming", |a| {
        let id = send(a, ctrl('r'))[0];
        let mut events = native_call();
        events.truncate(6);
        for (i, e) in events.into_iter().enumerate() {
            toolscope::app::update(
                a,
                toolscope::app::Message::Run {
                    id,
                    at_ms: 100 + 25 * i as u64,
                    event: e,
                },
            );
        }
    });
}

/// Issue 28: a server reading a long prompt sends nothing for minutes; until the first token
/// the status line says that it is waited for (and the Raw pane that no bytes came yet).
#[test]
fn before_the_first_token() {
    both("first_token", |a| {
        let id = send(a, ctrl('r'))[0];
        // A role-only chunk arrived: the server answered, and no token came yet.
        let event = toolscope_core::provider::RunEvent::Raw(toolscope_core::provider::RawEvent {
            at_ms: 100,
            data: r#"{"choices":[{"index":0,"delta":{"role":"assistant"}}]}"#.into(),
            status: None,
            retry_after: None,
        });
        toolscope::app::update(
            a,
            toolscope::app::Message::Run {
                id,
                at_ms: 100,
                event,
            },
        );
        assert!(a.run.record.first_output_ms.is_none());
    });
}

#[test]
fn help_overlay() {
    both("help", |a| {
        send(a, key(KeyCode::F(1)));
    });
}

#[test]
fn picker_overlay() {
    both("picker", |a| {
        send(a, ctrl('p'));
    });
}

#[test]
fn protocol_picker_overlay() {
    both("protocol_picker", |a| {
        send(a, ctrl('l'));
    });
    both("protocol_picker_filtered", |a| {
        send(a, ctrl('l'));
        for c in "deep".chars() {
            send(a, key(KeyCode::Char(c)));
        }
        send(a, key(KeyCode::Down));
    });
}

/// Ctrl+L, typing and Enter choose the protocol; the status line shows it; Esc leaves it as it
/// was.
#[test]
fn the_protocol_picker_chooses_and_the_status_line_shows_it() {
    let mut a = app(160, 48);
    send(&mut a, ctrl('l'));
    for c in "qwen".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    send(&mut a, key(KeyCode::Enter));
    assert!(a.overlay.is_none());
    assert_eq!(a.protocol_name(), "qwen3-coder");
    assert!(screen(&a, 160, 48).contains("qwen3-coder"));
    send(&mut a, ctrl('l'));
    send(&mut a, key(KeyCode::Char('x')));
    // Esc clears the filter, a second Esc closes.
    send(&mut a, key(KeyCode::Esc));
    assert!(a.overlay.is_some());
    send(&mut a, key(KeyCode::Esc));
    assert!(a.overlay.is_none());
    assert_eq!(a.protocol_name(), "qwen3-coder");
    send(&mut a, ctrl('l'));
    send(&mut a, key(KeyCode::Home));
    send(&mut a, key(KeyCode::Enter));
    assert_eq!(a.protocol_name(), "native");
}

#[test]
fn compare_view() {
    both("compare", |a| {
        let ids = send(a, alt('k'));
        assert_eq!(ids.len(), 4);
        let call = native_call();
        let text = text_answer("I cannot use tools now, so here is an answer in plain text.");
        feed(a, ids[0], call.clone(), 30);
        feed(a, ids[1], call.clone(), 25);
        feed(a, ids[2], text, 20);
        feed(a, ids[3], call, 35);
    });
}

/// At 80 columns the compare view shows one column at a time, whole: ←/→ (or its number)
/// choose which; the header says which of how many. At 160 the four stand side by side.
#[test]
fn compare_one_column_at_a_time_at_80_columns() {
    let prepare = |a: &mut App| {
        let ids = send(a, alt('k'));
        let text = text_answer("I cannot use tools now, so here is an answer in plain text.");
        feed(a, ids[0], native_call(), 30);
        feed(a, ids[1], native_call(), 25);
        feed(a, ids[2], text, 20);
        feed(a, ids[3], native_call(), 35);
        send(a, key(KeyCode::Right));
        send(a, key(KeyCode::Right));
    };
    let mut a = app(80, 24);
    prepare(&mut a);
    assert_eq!(a.compare.as_ref().unwrap().zoomed, 2);
    let s = screen(&a, 80, 24);
    assert!(
        s.contains("3 of 4") && s.contains("answered in text"),
        "{s}"
    );
    assert!(!s.contains("required"), "only the zoomed column: {s}");
    assert_snapshot!("compare_zoomed_80x24", s);
    send(&mut a, key(KeyCode::Char('1')));
    send(&mut a, key(KeyCode::Left));
    assert_eq!(a.compare.as_ref().unwrap().zoomed, 3, "← wraps around");
    // Alt+E shows the request of the column shown.
    send(&mut a, alt('e'));
    assert!(screen(&a, 80, 24).contains("tool:get_weather"));
    let mut wide = app(160, 48);
    prepare(&mut wide);
    let s = screen(&wide, 160, 48);
    assert!(s.contains("required") && s.contains("auto") && !s.contains("3 of 4"));
}

/// The answers of the bundled battery from a demo server that drops the second of parallel
/// calls, in the order of the battery, each timed alike (so no figure depends on a clock).
fn verify_answers() -> Vec<toolscope::verify::score::Answer> {
    use toolscope::verify::battery;
    use toolscope::verify::suite::Suite;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let server = toolscope_demo::serve_persona(
            std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
            toolscope_demo::DemoOptions::instant(),
            Some(toolscope_demo::Persona::DropParallel),
        )
        .await
        .unwrap();
        let suite = Suite::bundled();
        let mut t = toolscope_core::provider::Request::new(
            toolscope_demo::provider(),
            toolscope_demo::DEFAULT_MODEL,
        );
        t.base_url = Some(server.base_url());
        t.sampling.temperature = Some(0.0);
        let jobs = battery::jobs(&suite, 1);
        let keys = toolscope_core::provider::Keys::default();
        let (mut answers, ending) = battery::run_jobs(
            &suite,
            &t,
            &keys,
            &jobs,
            4,
            |_, _, _| {},
            std::future::pending(),
        )
        .await;
        assert_eq!(ending, battery::Ending::Complete);
        for a in &mut answers {
            a.first_token_ms = Some(40);
            a.elapsed_ms = 240;
        }
        answers
    })
}

/// Alt+S on the demo, then the first `n` answers (all of them and the end, when `end`).
fn verify_fed(a: &mut App, answers: &[toolscope::verify::score::Answer], n: usize, end: bool) {
    use toolscope::app::{Effect, Message, update};
    let fx = update(a, alt('s'));
    let id = fx
        .iter()
        .find_map(|e| match e {
            Effect::StartVerify { id, .. } => Some(*id),
            _ => None,
        })
        .expect("the battery starts");
    for (i, answer) in answers.iter().take(n).enumerate() {
        let at_ms = 60 * (i as u64 + 1);
        let answer = Box::new(answer.clone());
        update(a, Message::VerifyAnswer { id, at_ms, answer });
    }
    if end {
        let ending = toolscope::verify::battery::Ending::Complete;
        let at_ms = 60 * (n as u64 + 1);
        update(a, Message::VerifyEnded { id, at_ms, ending });
    }
}

#[test]
fn verify_progress_and_scorecard() {
    let answers = verify_answers();
    both("verify_progress", |a| verify_fed(a, &answers, 13, false));
    both("verify_scorecard", |a| {
        verify_fed(a, &answers, answers.len(), true);
        a.notice = None;
    });
}

#[test]
fn a_provider_error() {
    both("rate_limited", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, rate_limited(), 120);
    });
}

#[test]
fn a_request_refused_before_sending() {
    both("refused", |a| {
        a.choice = toolscope_core::tool::ToolChoice::Tool("book_flight".into());
        assert!(send(a, ctrl('r')).is_empty());
    });
}

#[test]
fn broken_tools_json() {
    both("broken_tools", |a| {
        a.focus = Focus::Tools;
        send(a, key(KeyCode::Down));
        send(a, key(KeyCode::Char('x')));
    });
}

#[test]
fn a_second_turn_with_tool_results() {
    both("second_turn", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        send(
            a,
            toolscope::app::Message::Paste("{\"temp\": 21, \"sky\": \"clear\"}".into()),
        );
        let id = send(a, ctrl('r'))[0];
        feed(
            a,
            id,
            text_answer("It is clear and 21°C in Paris for the next three days."),
            30,
        );
    });
}

#[test]
fn part_detail_json() {
    both("part_detail", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        a.focus = Focus::Parts;
        send(a, key(KeyCode::Up));
        send(a, key(KeyCode::Up));
        send(a, key(KeyCode::Enter));
    });
}

#[test]
fn too_small() {
    let a = app(40, 12);
    assert_snapshot!("too_small_40x12", screen(&a, 40, 12));
}

#[test]
fn escape_sequences_in_output_are_shown_not_sent() {
    let mut a = app(80, 24);
    let id = send(&mut a, ctrl('r'))[0];
    feed(
        &mut a,
        id,
        text_answer("red \u{1b}[31mALERT\u{1b}[0m bell\u{7} rtl\u{202e}txt tab\tend"),
        10,
    );
    let s = screen(&a, 80, 24);
    assert!(s.contains("␛[31mALERT␛[0m bell␇ rtl⍰txt tab"), "{s}");
    assert!(!s.contains('\u{1b}'));
}

/// Draws one pane alone into a `width`×`height` screen.
fn pane(
    a: &App,
    width: u16,
    height: u16,
    draw: impl Fn(&mut ratatui::Frame<'_>, ratatui::layout::Rect, &App, &View),
) -> String {
    let mut t = Terminal::new(TestBackend::new(width, height)).unwrap();
    let view = View::new();
    t.draw(|f| {
        let area = f.area();
        draw(f, area, a, &view)
    })
    .unwrap();
    t.backend().to_string()
}

#[test]
fn each_pane_alone() {
    use toolscope::tui::panes;
    let mut a = app(160, 48);
    let id = send(&mut a, ctrl('r'))[0];
    feed(&mut a, id, native_call(), 40);
    assert_snapshot!("pane_tools", pane(&a, 60, 14, panes::tools::draw));
    a.choice = toolscope_core::tool::ToolChoice::Tool("gone".into());
    assert_snapshot!(
        "pane_tool_choice",
        pane(&a, 60, 6, |f, r, a, _| panes::tool_choice::draw(f, r, a))
    );
    a.choice = toolscope_core::tool::ToolChoice::Auto;
    assert_snapshot!(
        "pane_prompt",
        pane(&a, 60, 10, |f, r, a, _| panes::prompt::draw(f, r, a))
    );
    assert_snapshot!(
        "pane_raw",
        pane(&a, 60, 8, |f, r, a, _| panes::raw::draw(f, r, a))
    );
    assert_snapshot!("pane_parts", pane(&a, 60, 10, panes::parts::draw));
    assert_snapshot!(
        "pane_status",
        pane(&a, 120, 1, |f, r, a, _| panes::status::draw(f, r, a))
    );
}

#[test]
fn themes_colour_the_frames_and_the_json() {
    use ratatui::layout::Position;
    use toolscope::app::theme::Themes;
    for name in ["dark", "light", "high-contrast"] {
        let mut a = app(160, 48);
        a.theme = name.into();
        a.restyle();
        let theme = Themes::built_in().get(name).clone();
        let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
        let view = View::new();
        t.draw(|f| toolscope::tui::draw(f, &a, &view)).unwrap();
        let buf = t.backend().buffer();
        // The Raw pane's top-left corner is a border of an unfocused pane.
        let text = buf.content.iter().map(|c| c.symbol()).collect::<String>();
        let at = |needle: &str| {
            let i = text.find(needle).unwrap();
            let cells = text[..i].chars().count() as u16;
            Position::new(cells % 160, cells / 160)
        };
        assert_eq!(buf[at("┌ Raw")].fg, theme.ui.border, "{name}");
        // In the Tools pane, a key and a string of the JSON in the syntax colours.
        let key = at("\"name\"");
        assert_eq!(buf[key].fg, theme.syntax.key, "{name}");
        let string = at("\"get_weather\"");
        assert_eq!(buf[string].fg, theme.syntax.string, "{name}");
    }
}

/// Opens a bundled session (relative paths: tests run in the package folder).
fn open_session(a: &mut App, name: &str, pace: toolscope::app::Pace) {
    let path = std::path::PathBuf::from("sessions").join(name);
    let session = toolscope_core::session::Session::load(&path).unwrap();
    a.pace = pace;
    toolscope::app::update(
        a,
        toolscope::app::Message::SessionLoaded {
            path,
            result: Ok(Box::new(session)),
        },
    );
}

#[test]
fn session_picker() {
    both("session_picker", |a| {
        a.sessions.project = Some("sessions".into());
        send(a, ctrl('o'));
        let mut entries = toolscope::app::session::list(&["sessions".into()]);
        entries.insert(
            2,
            toolscope::app::SessionEntry {
                path: "sessions/broken.json".into(),
                summary: Err("the file is cut short (truncated JSON at line 40, column 3)".into()),
            },
        );
        toolscope::app::update(a, toolscope::app::Message::SessionsListed { entries });
        send(a, key(KeyCode::Down));
    });
}

/// `/` filters the session picker: the matches best first, their letters marked.
#[test]
fn session_picker_filtered() {
    both("session_picker_filtered", |a| {
        a.sessions.project = Some("sessions".into());
        send(a, ctrl('o'));
        let entries = toolscope::app::session::list(&["sessions".into()]);
        toolscope::app::update(a, toolscope::app::Message::SessionsListed { entries });
        send(a, key(KeyCode::Char('/')));
        for c in "dsml".chars() {
            send(a, key(KeyCode::Char(c)));
        }
    });
}

#[test]
fn session_replay_paused_mid_stream() {
    both("session_paused", |a| {
        open_session(a, "protocol-hermes.json", toolscope::app::Pace::Speed(1.0));
        for _ in 0..20 {
            send(a, key(KeyCode::F(6)));
        }
    });
}

#[test]
fn session_replayed_and_reparsed() {
    both("session_reparsed", |a| {
        open_session(a, "protocol-hermes.json", toolscope::app::Pace::Instant);
        a.protocol = None;
        send(a, key(KeyCode::F(8)));
    });
}

#[test]
fn session_resent_beside_the_recording() {
    both("session_resend", |a| {
        open_session(a, "mode-forced-tool.json", toolscope::app::Pace::Instant);
        send(a, key(KeyCode::F(9)));
    });
}

#[test]
fn restore_offer() {
    for (w, h) in SIZES {
        let session = toolscope_core::session::Session::load(std::path::Path::new(
            "sessions/protocol-qwen3-coder.json",
        ))
        .unwrap();
        let setup = toolscope::app::Setup {
            restore: Some(toolscope::app::Restore {
                journal: "/home/me/.local/share/toolscope/journal-4242.jsonl".into(),
                session: Box::new(session),
                ended: false,
            }),
            ..Default::default()
        };
        let mut a = App::new(setup, toolscope::app::theme::Themes::built_in());
        a.size = (w, h);
        assert_snapshot!(format!("restore_offer_{w}x{h}"), screen(&a, w, h));
    }
}

#[test]
fn request_view() {
    both("request_view", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        send(a, alt('e'));
    });
}

#[test]
fn request_view_of_an_emulated_request_not_sent_yet() {
    both("request_view_emulated", |a| {
        pick_protocol(a, "hermes");
        send(a, ctrl('t'));
        send(a, alt('e'));
        // Down to the rendered prompt and the response format.
        for _ in 0..4 {
            send(a, key(KeyCode::PageDown));
        }
    });
}

#[test]
fn a_three_turn_conversation() {
    both("three_turns", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        send(
            a,
            toolscope::app::Message::Paste("{\"temp\": 21, \"sky\": \"clear\"}".into()),
        );
        let id = send(a, ctrl('r'))[0];
        feed(
            a,
            id,
            text_answer("It is clear and 21°C in Paris for the next three days."),
            30,
        );
        send(a, toolscope::app::Message::Paste("And in Rome?".into()));
        let id = send(a, ctrl('r'))[0];
        feed(
            a,
            id,
            text_answer("I would have to call get_weather for Rome too."),
            30,
        );
        // The conversation has the focus, its first message selected.
        a.focus = Focus::Transcript;
        send(a, key(KeyCode::Home));
    });
}

#[test]
fn a_question_before_quitting() {
    both("confirm_quit", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        a.focus = Focus::Tools;
        send(a, key(KeyCode::Char(' ')));
        send(a, ctrl('q'));
    });
}

#[test]
fn editing_a_message() {
    both("edit_message", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, text_answer("Sunny all week."), 30);
        a.focus = Focus::Transcript;
        send(a, key(KeyCode::Home));
        send(a, key(KeyCode::Char('e')));
        send(a, toolscope::app::Message::Paste(" And in Rome?".into()));
    });
}

#[test]
fn searching_the_raw_pane() {
    both("search_raw", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(
            a,
            id,
            text_answer(
                "Paris is sunny today. Tomorrow Paris is cloudy, and then Paris gets rain.",
            ),
            20,
        );
        a.focus = Focus::Raw;
        send(a, key(KeyCode::Char('/')));
        send(a, toolscope::app::Message::Paste("paris".into()));
        send(a, key(KeyCode::Enter));
        send(a, key(KeyCode::Char('n')));
    });
}

#[test]
fn the_picker_with_listed_models_and_settings() {
    both("picker_models", |a| {
        a.provider = toolscope_core::provider::ProviderKind::OLLAMA;
        a.model = "qwen3".into();
        send(a, ctrl('p'));
        toolscope::app::update(
            a,
            toolscope::app::Message::ModelsListed {
                provider: toolscope_core::provider::ProviderKind::OLLAMA,
                base_url: None,
                result: Ok(vec![
                    "llama3.2:latest".into(),
                    "qwen3:8b".into(),
                    "qwen3:32b".into(),
                    "qwen3-coder:30b".into(),
                ]),
            },
        );
        send(a, key(KeyCode::Tab));
        send(a, key(KeyCode::Down));
        send(a, key(KeyCode::Down));
        for _ in 0..2 {
            send(a, key(KeyCode::Tab));
        }
        send(a, toolscope::app::Message::Paste("0.2".into()));
        send(a, key(KeyCode::Tab));
        send(a, toolscope::app::Message::Paste("lots".into()));
    });
}

#[test]
fn a_long_message_in_full() {
    both("message_detail", |a| {
        a.choice = toolscope_core::tool::ToolChoice::Tool("book_a_flight".into());
        send(a, ctrl('r'));
        send(a, key(KeyCode::F(10)));
    });
}

/// A tools file read with warnings (a Python type name) says so on the Tools pane's border, at
/// both sizes.
#[test]
fn tools_warnings_are_on_the_tools_pane_title() {
    for (w, h) in SIZES {
        let mut a = app(w, h);
        a.tools.set_text(
            r#"[{"name":"price","parameters":{"type":"object","properties":{"amount":{"type":"float"},"n":{"type":"int"}}}}]"#,
        );
        let shown = screen(&a, w, h);
        let title = shown
            .lines()
            .find(|l| l.contains("Tools"))
            .unwrap_or_default();
        assert!(title.contains("✓ 1 tool"), "{title}");
        // The count first, then as much of the first warning as there is room for.
        assert!(title.contains("⚠ 2 warnings (F10)"), "{title}");
        if w >= 160 {
            assert!(
                title.contains("⚠ 2 warnings (F10): tool \"price\": /properties/amount"),
                "{title}"
            );
        }
    }
}

/// Two MCP servers: one ready (a tool offered under another name, because the Tools JSON has
/// one of its name), one that failed with its reason.
fn two_mcp_servers(a: &mut App) {
    use toolscope::app::Message;
    use toolscope::app::mcp::ServerId;
    use toolscope_core::mcp::McpServerSpec;
    let add = |a: &mut App, spec: &str| -> ServerId {
        let spec = McpServerSpec::stdio(spec).unwrap();
        send(a, Message::McpAdd { spec });
        a.mcp.servers.last().unwrap().id
    };
    let ready = add(a, "toolscope serve-mcp-demo");
    let tool = |name: &str, d: &str| serde_json::json!({"name": name, "description": d, "inputSchema": {"type": "object"}});
    send(
        a,
        Message::McpListed {
            server: ready,
            result: Ok((
                "toolscope-demo".into(),
                vec![
                    tool("get_weather", "Get the weather for a city."),
                    tool("lookup", "Look a word up."),
                ],
            )),
        },
    );
    let failed = add(a, "/opt/missing-server --port 1");
    send(
        a,
        Message::McpListed {
            server: failed,
            result: Err("cannot start \"/opt/missing-server --port 1\": No such file or directory (os error 2)".into()),
        },
    );
}

/// MCP servers in the Tools pane: one ready, one failed; the MCP list focused.
#[test]
fn mcp_servers_in_the_tools_pane() {
    both("mcp_servers", |a| {
        two_mcp_servers(a);
        a.focus = Focus::Mcp;
        a.mcp.select_row(1);
    });
}

/// `/` in the MCP list filters it as you type (fuzzy, names and descriptions, the name's
/// letters marked); while it is typed the list's letter keys are the filter's; Enter ends the
/// typing and the list's keys act on the rows left; Esc clears, the selection kept.
#[test]
fn filtering_the_mcp_list() {
    use toolscope::app::Overlay;
    both("mcp_filtered", |a| {
        two_mcp_servers(a);
        a.focus = Focus::Mcp;
        send(a, key(KeyCode::Char('/')));
        for c in "lkp".chars() {
            send(a, key(KeyCode::Char(c)));
        }
    });
    let mut a = app(160, 48);
    two_mcp_servers(&mut a);
    a.focus = Focus::Mcp;
    let names = |a: &App| -> Vec<String> {
        a.mcp
            .shown()
            .iter()
            .map(|(r, _)| match r {
                toolscope::app::mcp::Row::Server(i) => a.mcp.servers[*i].name.clone(),
                toolscope::app::mcp::Row::Tool { server, tool, .. } => a.mcp.servers[*server].tools
                    [*tool]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            })
            .collect()
    };
    assert_eq!(names(&a).len(), 4);
    send(&mut a, key(KeyCode::Char('/')));
    // `d` is typed, not "remove the server".
    for c in "word".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    assert_eq!(a.mcp.servers.len(), 2);
    assert_eq!(names(&a), ["lookup"], "matched by its description");
    let s = screen(&a, 160, 48);
    assert!(s.contains("/word") && s.contains("1 of 4 rows"), "{s}");
    assert!(s.contains("Enter done"), "the key bar while typing: {s}");
    send(&mut a, key(KeyCode::Enter));
    assert!(!a.mcp.list.typing && a.overlay.is_none());
    send(&mut a, key(KeyCode::Char('v')));
    assert!(
        matches!(&a.overlay, Some(Overlay::Detail(_))),
        "v views the row the filter left"
    );
    send(&mut a, key(KeyCode::Esc));
    send(&mut a, key(KeyCode::Esc));
    assert!(!a.mcp.list.active());
    assert_eq!(names(&a).len(), 4);
    assert_eq!(a.mcp.selected_tool().unwrap()["name"], "lookup");
    // No match says so.
    send(&mut a, key(KeyCode::Char('/')));
    for c in "zzz".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    assert!(screen(&a, 160, 48).contains("no server or tool matches /zzz"));
}

/// `/` in the Parts pane filters the rows by part type or tool name, in time order, the type's
/// letters marked; the arrows move through the rows left and Enter shows one in full; `?` is
/// the text search.
#[test]
fn filtering_the_parts() {
    use toolscope::app::Overlay;
    both("parts_filtered", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        a.focus = Focus::Parts;
        send(a, key(KeyCode::Char('/')));
        for c in "weather".chars() {
            send(a, key(KeyCode::Char(c)));
        }
    });
    let mut a = app(160, 48);
    let id = send(&mut a, ctrl('r'))[0];
    feed(&mut a, id, native_call(), 40);
    a.focus = Focus::Parts;
    let labels = |a: &App| -> Vec<&str> {
        a.parts_filter
            .shown()
            .map(|(i, _)| a.run.record.parts.rows[i].label)
            .collect()
    };
    send(&mut a, key(KeyCode::Char('/')));
    for c in "weather".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    let found = labels(&a);
    assert!(
        found.contains(&"tool-call") && found.iter().all(|l| l.starts_with("tool")),
        "the rows of get_weather, in time order: {found:?}"
    );
    assert_eq!(found.last(), Some(&"tool-call"));
    for _ in 0..7 {
        send(&mut a, key(KeyCode::Backspace));
    }
    for c in "fin".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    assert_eq!(labels(&a), ["finish"]);
    let (_, marks) = a.parts_filter.shown().next().unwrap();
    assert_eq!(marks, [0, 1, 2]);
    send(&mut a, key(KeyCode::Enter));
    assert!(!a.parts_filter.typing);
    let finish = a
        .run
        .record
        .parts
        .rows
        .iter()
        .position(|r| r.label == "finish");
    assert_eq!(a.run.cursor.selected, finish, "the row left is selected");
    send(&mut a, key(KeyCode::Enter));
    assert!(matches!(&a.overlay, Some(Overlay::Detail(_))));
    send(&mut a, key(KeyCode::Esc));
    // Esc clears the filter; `?` searches the text.
    send(&mut a, key(KeyCode::Esc));
    assert!(!a.parts_filter.active());
    send(&mut a, key(KeyCode::Char('?')));
    assert!(a.search.as_ref().is_some_and(|s| s.editing));
}

/// The key bar: the status line shows the keys that act in the focused pane, at 80 and 160
/// columns (whole entries only, the help key last), and while a search is typed or shown.
#[test]
fn the_key_bar_follows_the_focus() {
    use toolscope::tui::panes;
    let focuses = [
        ("Tools", Focus::Tools),
        ("MCP", Focus::Mcp),
        ("Tool choice", Focus::ToolChoice),
        ("System", Focus::System),
        ("Message", Focus::Composer),
        ("Result", Focus::Result(0)),
        ("Conversation", Focus::Transcript),
        ("Raw", Focus::Raw),
        ("Parts", Focus::Parts),
    ];
    let mut shots = String::new();
    for width in [80u16, 160] {
        for (name, focus) in focuses {
            let mut a = app(width, 48);
            a.focus = focus;
            let line = pane(&a, width, 1, |f, r, a, _| panes::status::draw(f, r, a));
            shots.push_str(&format!("{name:>12} {}\n", line.trim_end()));
        }
        let mut a = app(width, 48);
        a.focus = Focus::Raw;
        a.search = Some(toolscope::app::search::Search::new(
            toolscope::app::search::SearchPane::Raw,
        ));
        let line = pane(&a, width, 1, |f, r, a, _| panes::status::draw(f, r, a));
        shots.push_str(&format!("{:>12} {}\n", "typing /", line.trim_end()));
        if let Some(s) = &mut a.search {
            s.editing = false;
        }
        let line = pane(&a, width, 1, |f, r, a, _| panes::status::draw(f, r, a));
        shots.push_str(&format!("{:>12} {}\n", "found", line.trim_end()));
    }
    assert!(shots.contains("Enter edit · d delete · r re-run · v view"));
    assert_snapshot!("key_bar", shots);
}

/// Alt+Z zooms the focused pane to the whole screen (here the Parts pane after a native call)
/// and back; every pane zooms without a panic at every size.
#[test]
fn a_zoomed_pane() {
    use ratatui::crossterm::event::{KeyEvent, KeyModifiers};
    let alt_z =
        || toolscope::app::Message::Key(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::ALT));
    both("zoomed_parts", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        a.focus = Focus::Parts;
        send(a, alt_z());
        assert!(a.zoom);
    });
    for (w, h) in [(60, 20), (80, 24), (160, 48)] {
        for focus in [
            Focus::Tools,
            Focus::Mcp,
            Focus::ToolChoice,
            Focus::System,
            Focus::Transcript,
            Focus::Composer,
            Focus::Raw,
            Focus::Parts,
        ] {
            let mut a = app(w, h);
            a.focus = focus;
            send(&mut a, alt_z());
            let zoomed = screen(&a, w, h);
            send(&mut a, alt_z());
            assert!(!a.zoom);
            assert_ne!(zoomed, screen(&a, w, h), "{focus:?} at {w}×{h}");
        }
    }
}

/// The filter's matched letters are marked in the file names (bold, underlined), the others not.
#[test]
fn the_session_filter_marks_the_matched_letters() {
    use ratatui::style::Modifier;
    let mut a = app(160, 48);
    a.sessions.project = Some("sessions".into());
    send(&mut a, ctrl('o'));
    let entries = toolscope::app::session::list(&["sessions".into()]);
    toolscope::app::update(&mut a, toolscope::app::Message::SessionsListed { entries });
    send(&mut a, key(KeyCode::Char('/')));
    for c in "dsml".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    let mut t = Terminal::new(TestBackend::new(160, 48)).unwrap();
    t.draw(|f| toolscope::tui::draw(f, &a, &View::new()))
        .unwrap();
    let buf = t.backend().buffer();
    let name = "protocol-deepseek-dsml.json";
    let (x, y) = (0..48u16)
        .find_map(|y| {
            let row: String = (0..160u16)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect();
            row.find(name)
                .map(|at| (row[..at].chars().count() as u16, y))
        })
        .expect("the row");
    let marked: String = name
        .chars()
        .enumerate()
        .filter(|&(k, _)| {
            buf[(x + k as u16, y)]
                .modifier
                .contains(Modifier::UNDERLINED)
        })
        .map(|(_, c)| c)
        .collect();
    assert_eq!(marked, "dsml");
}

/// `/` in the Tool choice pane: the modes filtered as you type, the tool found by a part of its
/// name, Enter makes it the choice.
#[test]
fn the_tool_choice_is_found_by_typing() {
    both("choice_filtered", |a| {
        a.focus = Focus::ToolChoice;
        send(a, key(KeyCode::Char('/')));
        for c in "wf".chars() {
            send(a, key(KeyCode::Char(c)));
        }
    });
    let mut a = app(160, 48);
    a.focus = Focus::ToolChoice;
    send(&mut a, key(KeyCode::Char('/')));
    for c in "wf".chars() {
        send(&mut a, key(KeyCode::Char(c)));
    }
    send(&mut a, key(KeyCode::Enter));
    assert!(a.overlay.is_none());
    assert_eq!(
        a.choice,
        toolscope_core::tool::ToolChoice::Tool("write_file".into())
    );
}

/// At 80×24, after one call, the conversation shows the question, the call and the result
/// field (the Prompt pane takes more of a short screen once there is a conversation).
#[test]
fn the_conversation_after_one_call_fits_at_80x24() {
    let mut a = app(80, 24);
    let id = send(&mut a, ctrl('r'))[0];
    feed(&mut a, id, native_call(), 40);
    let s = screen(&a, 80, 24);
    assert!(s.contains("you     What's the weather"), "{s}");
    assert!(s.contains("model   → get_weather"), "{s}");
    assert!(s.contains("result  get_weather"), "{s}");
}

/// `t` in the Raw or Parts pane: the last run's timeline, drawn from the times its events came
/// (time to first token, the call's span, the output rate); before any run it says how to get
/// one. Each compare column has the same as a two-row strip.
#[test]
fn the_timeline_of_the_last_run() {
    use toolscope::app::Overlay;
    both("timeline", |a| {
        let id = send(a, ctrl('r'))[0];
        feed(a, id, native_call(), 40);
        a.focus = Focus::Parts;
        send(a, key(KeyCode::Char('t')));
        assert!(matches!(a.overlay, Some(Overlay::Timeline)));
    });
    let mut a = app(160, 48);
    a.focus = Focus::Raw;
    send(&mut a, key(KeyCode::Char('t')));
    assert!(a.overlay.is_none());
    assert!(screen(&a, 160, 48).contains("no run yet"));
    let id = send(&mut a, ctrl('r'))[0];
    feed(&mut a, id, native_call(), 40);
    let t = &a.run.record.timeline;
    assert_eq!(t.calls.len(), 1);
    let call = &t.calls[0];
    assert_eq!(call.name, "get_weather");
    let end = call.end_ms.expect("the call ended");
    assert!(call.start_ms < end, "{call:?}");
    assert!(!t.pieces_ms.is_empty());
    assert!(
        t.pieces_ms.windows(2).all(|w| w[0] <= w[1]),
        "in time order"
    );
    send(&mut a, key(KeyCode::Char('t')));
    let s = screen(&a, 160, 48);
    assert!(s.contains("Timeline of the last run"), "{s}");
    assert!(s.contains("first token") && s.contains("1 call"), "{s}");
    assert!(
        s.contains("get_wea") && s.contains('█'),
        "the call's span: {s}"
    );
    send(&mut a, key(KeyCode::Esc));
    assert!(a.overlay.is_none());
}

fn click_at(a: &mut App, x: u16, y: u16) {
    use ratatui::crossterm::event::{KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
    send(
        a,
        toolscope::app::Message::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: x,
            row: y,
            modifiers: KeyModifiers::NONE,
        }),
    );
}

fn main_areas(a: &App, w: u16, h: u16) -> toolscope::app::layout::MainAreas {
    match toolscope::app::layout::screen(ratatui::layout::Rect::new(0, 0, w, h), a) {
        toolscope::app::layout::Screen::Main(m) => m,
        other => panic!("{other:?}"),
    }
}

/// A click in an editor puts the cursor there; a click on a row of the MCP list selects that
/// row and focuses the list (not the JSON editor above it, so that a key that follows is the
/// list's); a click on a Parts row selects it.
#[test]
fn clicks_put_the_cursor_and_select_rows() {
    use toolscope::app::layout::{self, PromptAreas};
    use toolscope::app::{Overlay, editor};
    let (w, h) = (160, 48);
    let mut a = app(w, h);
    a.prompt.composer = editor::prose("hello world");
    screen(&a, w, h);
    let m = main_areas(&a, w, h);
    let areas = layout::prompt_areas(layout::inner(m.prompt), &a);
    let field = PromptAreas::field(areas.composer);
    click_at(&mut a, field.x + 6, field.y);
    assert_eq!(a.focus, Focus::Composer);
    assert_eq!(
        a.prompt.composer.cursor(),
        ratatui_textarea::DataCursor(0, 6)
    );
    // Past the end of the line: its end.
    click_at(&mut a, field.x + 40, field.y);
    assert_eq!(
        a.prompt.composer.cursor(),
        ratatui_textarea::DataCursor(0, 11)
    );
    // The system prompt.
    let field = PromptAreas::field(areas.system);
    click_at(&mut a, field.x + 4, field.y);
    assert_eq!(a.focus, Focus::System);
    assert_eq!(a.prompt.system.cursor(), ratatui_textarea::DataCursor(0, 4));
    // The Tools JSON: past its line numbers, on the line clicked.
    let (text, list) = layout::tools_split(layout::inner(m.tools), &a);
    assert!(list.is_none());
    let gutter = layout::tools_gutter(a.tools.editor.lines().len()) as u16;
    click_at(&mut a, text.x + gutter + 4, text.y + 2);
    assert_eq!(a.focus, Focus::Tools);
    let c = a.tools.editor.cursor();
    assert_eq!((c.row, c.col), (2, 4), "{c:?}");
    // The MCP list: the row clicked, the list focused; `v` then views that tool.
    two_mcp_servers(&mut a);
    screen(&a, w, h);
    let m = main_areas(&a, w, h);
    let (_, list) = layout::tools_split(layout::inner(m.tools), &a);
    let list = list.expect("the MCP list");
    let before = a.tools.text();
    click_at(&mut a, list.x + 4, list.y + 3);
    assert_eq!(a.focus, Focus::Mcp);
    assert_eq!(a.mcp.selected_tool().unwrap()["name"], "lookup");
    send(&mut a, key(KeyCode::Char('v')));
    assert!(matches!(a.overlay, Some(Overlay::Detail(_))));
    send(&mut a, key(KeyCode::Esc));
    assert_eq!(a.tools.text(), before, "nothing typed into the JSON");
    // A Parts row.
    let id = send(&mut a, ctrl('r'))[0];
    feed(&mut a, id, native_call(), 40);
    screen(&a, w, h);
    let m = main_areas(&a, w, h);
    let inner = layout::inner(m.parts);
    click_at(&mut a, inner.x + 2, inner.y + 1);
    assert_eq!(a.focus, Focus::Parts);
    assert_eq!(a.run.cursor.selected, Some(1));
    // A message of the conversation: the one on the row clicked is chosen.
    let m = main_areas(&a, w, h);
    let conv = layout::prompt_areas(layout::inner(m.prompt), &a).transcript;
    let rows: Vec<String> = screen(&a, w, h).lines().map(str::to_string).collect();
    let row_of = |needle: &str| -> u16 {
        (conv.y..conv.y + conv.height)
            .find(|&y| rows[y as usize].contains(needle))
            .unwrap_or_else(|| panic!("{needle} in the conversation:\n{}", rows.join("\n")))
    };
    let (you, model) = (row_of("you     hello world"), row_of("get_weather(city="));
    click_at(&mut a, conv.x + 10, you);
    assert_eq!((a.focus, a.prompt.selected), (Focus::Transcript, 0));
    click_at(&mut a, conv.x + 10, model);
    assert_eq!(a.prompt.selected, 1);
}

/// Alt+= twice on the Tools pane: it has more of the top row and the top row more of the
/// screen; the status line is where it was.
#[test]
fn resized_panes() {
    both("resized", |a| {
        a.focus = Focus::Tools;
        send(a, alt('='));
        send(a, alt('='));
        assert_eq!(a.splits.tools, 60);
    });
}

/// A click on a row of a list window (the protocol picker, the session picker) selects that
/// row; Enter takes it.
#[test]
fn a_click_selects_a_row_of_a_list_window() {
    use toolscope::app::Overlay;
    let (w, h) = (160, 48);
    let mut a = app(w, h);
    send(&mut a, ctrl('l'));
    let rows: Vec<String> = screen(&a, w, h).lines().map(str::to_string).collect();
    let y = rows
        .iter()
        .position(|r| r.contains("┃hermes "))
        .expect("hermes listed") as u16;
    click_at(&mut a, 60, y);
    let Some(Overlay::Protocols(p)) = &a.overlay else {
        panic!("the picker")
    };
    assert_eq!(p.entries()[p.list.selected].name, "hermes");
    send(&mut a, key(KeyCode::Enter));
    assert_eq!(a.protocol_name(), "hermes");
    // The session picker: the row clicked is the one opened.
    let bundled = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions");
    a.sessions.project = Some(bundled.clone());
    send(&mut a, ctrl('o'));
    let entries = toolscope::app::session::list(&[bundled]);
    send(&mut a, toolscope::app::Message::SessionsListed { entries });
    let rows: Vec<String> = screen(&a, w, h).lines().map(str::to_string).collect();
    let y = rows
        .iter()
        .position(|r| r.contains("mcp-loop.json"))
        .expect("mcp-loop listed") as u16;
    click_at(&mut a, 60, y);
    let Some(Overlay::Sessions(p)) = &a.overlay else {
        panic!("the session picker")
    };
    assert_eq!(p.chosen().unwrap().file_name(), "mcp-loop.json");
}
