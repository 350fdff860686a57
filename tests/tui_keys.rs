//! Key-driven tests: the whole playground (state machine, driver, drawing) on a `TestBackend`,
//! talking over real loopback HTTP to the built-in demo model at instant pace. Keys go in as
//! messages; the tests wait for the engine's events (never for a fixed time) and read the state
//! and the screen.

#[path = "../crates/toolscope-core/tests/support/mod.rs"]
mod support;
mod tui_support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ratatui::crossterm::event::KeyCode;

use toolscope::app::{App, Focus, Message, Overlay, Pace, Restore, RunState, SessionDirs};
use toolscope::tui::driver::Flow;
use toolscope_core::part::{FinishReason, Part};
use toolscope_core::session::{Session, journal};
use toolscope_demo::DemoOptions;
use tui_support::harness::{DEADLINE, Harness};
use tui_support::{alt, app, ctrl, first_call, key};

#[tokio::test]
async fn ctrl_r_on_the_demo_model_streams_a_tool_call() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('r'));
    assert!(h.app.run.is_running());
    h.run_to_end().await;
    assert_eq!(h.app.run.record.state, RunState::Done);
    let call = first_call(&h.app);
    assert_eq!(call.tool_name, "get_weather");
    assert_eq!(call.input["city"], "Paris");
    assert_eq!(h.app.run.record.finish, Some(FinishReason::ToolCalls));
    assert!(
        !h.app.run.record.wire.is_empty(),
        "the wire events are kept"
    );
    let screen = h.screen();
    for title in ["Tools", "Tool choice", "Prompt", "Raw", "Parts"] {
        assert!(
            screen.contains(&format!(" {title} ")),
            "{title} missing:\n{screen}"
        );
    }
    assert!(screen.contains("tool-call"), "{screen}");
    assert!(screen.contains("● done"), "{screen}");
}

#[tokio::test]
async fn ctrl_t_changes_the_mode_and_none_calls_nothing() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('t'));
    assert_eq!(h.app.choice.label(), "required");
    h.press(ctrl('t'));
    assert_eq!(h.app.choice.label(), "none");
    assert!(
        h.screen().contains("│ none │"),
        "the status line shows the mode"
    );
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert_eq!(h.app.run.record.state, RunState::Done);
    assert!(!h.has_tool_call());
    assert!(
        !h.app.run.record.parts.text().is_empty(),
        "it answers in text"
    );
    assert_eq!(h.app.run.record.finish, Some(FinishReason::Stop));
    // And the next mode forces a call again.
    h.press(ctrl('t'));
    assert_eq!(h.app.choice.label(), "tool:get_weather");
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert!(h.has_tool_call());
}

#[tokio::test]
async fn esc_cancels_and_the_http_request_stops() {
    // A demo server of our own, slow enough to be caught mid-stream, so that its statistics can
    // show the stream was cut by the client.
    let server = toolscope_demo::serve(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        DemoOptions {
            pace: Duration::from_millis(200),
        },
    )
    .await
    .unwrap();
    let mut stats = server.watch_stats();
    let mut h = Harness::new(160, 48);
    h.app.base_url = Some(server.base_url());
    h.press(ctrl('r'));
    h.until("the first output arrives", |a| {
        a.run.record.output_pieces > 0
    })
    .await;
    h.press(key(KeyCode::Esc));
    assert_eq!(h.app.run.record.state, RunState::Cancelled);
    assert_eq!(h.driver.running(), 0);
    assert!(h.screen().contains("● cancelled"));
    tokio::time::timeout(DEADLINE, stats.wait_for(|s| s.streams_cancelled == 1))
        .await
        .expect("the server sees the request go away")
        .unwrap();
    assert_eq!(stats.borrow().streams_finished, 0);
}

#[tokio::test]
async fn the_screen_follows_a_resize() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('r'));
    h.run_to_end().await;
    for (w, height) in [(80, 24), (40, 12), (100, 30)] {
        h.driver.terminal_mut().backend_mut().resize(w, height);
        h.press(Message::Resize { width: w, height });
        let screen = h.screen();
        assert_eq!(screen.lines().count(), height as usize);
        assert_eq!(
            screen.lines().next().unwrap().chars().count(),
            w as usize + 2,
            "quoted rows of the new width"
        );
        if w < 60 {
            assert!(screen.contains("Terminal too small"), "{screen}");
        } else {
            assert!(
                screen.contains(" Parts ") && screen.contains("tool-call"),
                "{screen}"
            );
        }
    }
}

#[tokio::test]
async fn a_tool_result_continues_the_conversation() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert_eq!(h.app.focus, Focus::Result(0));
    h.press(Message::Paste("sunny, 21 °C".into()));
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert_eq!(h.app.run.record.state, RunState::Done);
    assert!(!h.has_tool_call(), "after the result the model answers");
    assert_eq!(
        h.app.prompt.history().len(),
        4,
        "the text answer joined too"
    );
    let screen = h.screen();
    assert!(screen.contains("get_weather ⇐ sunny, 21 °C"), "{screen}");
}

#[tokio::test]
async fn a_text_protocol_run_highlights_the_call_span() {
    let mut h = Harness::new(160, 48);
    h.pick_protocol("hermes");
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert!(h.has_tool_call());
    assert!(h.app.run.shown.output.as_str().contains("<tool_call>"));
    assert!(
        h.app
            .run
            .shown
            .highlights
            .iter()
            .any(|x| h.app.run.shown.output.as_str()[x.range.clone()].starts_with("<tool_call>")),
        "the call's markup is highlighted"
    );
}

#[tokio::test]
async fn auto_on_the_demo_model_sends_natively_and_reports_how_the_text_was_read() {
    let mut h = Harness::new(160, 48);
    h.pick_protocol("auto");
    h.press(ctrl('r'));
    h.run_to_end().await;
    let request = h.app.run.record.request.clone().unwrap();
    assert!(request.detect_protocol && request.protocol.is_none());
    // The demo model answers a native request with a native call; its text held no markup.
    let call = first_call(&h.app);
    assert_eq!(call.tool_name, "get_weather");
    assert_eq!(h.app.run.record.finish, Some(FinishReason::ToolCalls));
    assert_eq!(h.app.run.record.warnings, 0);
    // An answer without text had nothing for detection to read: no choice is reported.
    assert_eq!(h.app.run.record.detected, None);
    assert!(h.screen().contains("│ auto │"), "{}", h.screen());
    // Ctrl+L shows auto as the current choice.
    h.press(ctrl('l'));
    assert!(h.screen().contains("current: auto"), "{}", h.screen());

    // Tool choice none: the demo answers in text, which has no marker of any protocol.
    let mut h = Harness::new(160, 48);
    h.pick_protocol("auto");
    h.press(ctrl('t'));
    h.press(ctrl('t'));
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert!(!h.has_tool_call());
    assert!(!h.app.run.record.parts.text().is_empty());
    let d = h
        .app
        .run
        .record
        .detected
        .clone()
        .expect("the choice is reported");
    assert!(
        d.reason.contains("no call or reasoning marker"),
        "{}",
        d.reason
    );
    let screen = h.screen();
    assert!(
        screen.contains(&format!("auto → {}", d.protocol)),
        "{screen}"
    );
}

#[tokio::test]
async fn compare_runs_four_tool_choices_side_by_side() {
    let mut h = Harness::new(160, 48);
    h.press(alt('k'));
    h.run_to_end().await;
    let verdicts: Vec<String> = h
        .app
        .compare
        .as_ref()
        .unwrap()
        .columns
        .iter()
        .map(|c| toolscope::app::compare::verdict(c).text)
        .collect();
    assert!(
        verdicts[0].starts_with("called get_weather("),
        "{verdicts:?}"
    );
    assert!(verdicts[1].starts_with("called "), "{verdicts:?}");
    assert_eq!(verdicts[2], "answered in text");
    assert!(
        verdicts[3].starts_with("called get_weather("),
        "{verdicts:?}"
    );
    let screen = h.screen();
    for mode in ["auto", "required", "none", "tool:get_weather"] {
        assert!(screen.contains(&format!(" {mode} ")), "{mode}:\n{screen}");
    }
    h.press(key(KeyCode::Esc));
    assert!(h.app.compare.is_none());
}

#[tokio::test]
async fn copying_a_part_writes_osc52() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('r'));
    h.run_to_end().await;
    h.app.focus = Focus::Parts;
    h.press(key(KeyCode::Char('c')));
    let written = String::from_utf8(h.clipboard.lock().unwrap().clone()).unwrap();
    assert!(written.starts_with("\x1b]52;c;") && written.ends_with('\x07'));
    // The conversation is not saved: quitting asks first.
    assert_eq!(h.press(ctrl('q')), Flow::Continue);
    assert_eq!(h.press(key(KeyCode::Char('y'))), Flow::Quit);
}

#[tokio::test]
async fn tools_are_saved_to_and_loaded_from_a_file() {
    let dir = std::env::temp_dir().join(format!("toolscope-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.json");
    let mut h = Harness::new(160, 48);
    h.press(key(KeyCode::F(4)));
    h.press(Message::Paste(String::new()));
    // Replace the suggested name with ours.
    for _ in 0.."tools.json".len() {
        h.press(key(KeyCode::Backspace));
    }
    h.press(Message::Paste(path.display().to_string()));
    h.press(key(KeyCode::Enter));
    h.until("the file is saved", |a| {
        a.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("saved"))
    })
    .await;
    let saved = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        toolscope_core::tool::ToolSet::from_json_text(&saved)
            .unwrap()
            .len(),
        3
    );
    std::fs::write(
        &path,
        r#"[{"name": "lookup", "description": "Look a word up.", "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}]"#,
    )
    .unwrap();
    h.press(key(KeyCode::F(3)));
    h.press(key(KeyCode::Enter));
    h.until("the file is loaded", |a| a.tools.valid.len() == 1)
        .await;
    assert!(h.screen().contains("✓ 1 tool "));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_main_loop_caps_frames_while_events_flood_in_and_quits() {
    // Our own demo server, so that the test can wait for the stream's end on its statistics.
    // Paced, so that the loop handles the events as they stream (with no pace the server is
    // done before the client has read anything, and Ctrl+Q, handled first, would win).
    let server = toolscope_demo::serve(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        DemoOptions {
            pace: Duration::from_millis(3),
        },
    )
    .await
    .unwrap();
    let mut stats = server.watch_stats();
    let mut h = Harness::new(160, 48);
    h.app.base_url = Some(server.base_url());
    // A text answer: many events.
    h.app.choice = toolscope_core::tool::ToolChoice::None;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tx.send(ctrl('r')).unwrap();
    let quit = async move {
        stats.wait_for(|s| s.streams_finished == 1).await.unwrap();
        // The conversation is not saved, so Ctrl+Q asks; y answers.
        tx.send(ctrl('q')).unwrap();
        tx.send(key(KeyCode::Char('y'))).unwrap();
        tx
    };
    let frames_before = h.driver.frames();
    let started = std::time::Instant::now();
    let (result, _tx) = tokio::time::timeout(DEADLINE, async {
        tokio::join!(h.driver.run(&mut h.app, rx), quit)
    })
    .await
    .expect("the loop quits on Ctrl+Q");
    result.unwrap();
    let elapsed_ms = started.elapsed().as_millis() as u64;
    let frames = h.driver.frames() - frames_before;
    let events = h.app.run.record.parts.parts.len() + h.app.run.record.wire.len();
    assert!(events > 20, "the loop handled the stream: {events} events");
    eprintln!("{frames} frames for {events} events in {elapsed_ms} ms");
    // The first frame, then at most one per 16 ms, then none after Ctrl+Q.
    let cap = 2 + elapsed_ms / 16;
    assert!(
        frames <= cap,
        "{frames} frames in {elapsed_ms} ms for {events} events (cap {cap})"
    );
}

/// A fresh folder for one test's sessions and journal.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolscope-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn app_in(dir: &Path) -> App {
    let mut a = app(160, 48);
    a.sessions = SessionDirs {
        project: None,
        data: Some(dir.join("sessions")),
        journal: Some(dir.join("journal-1.jsonl")),
    };
    a
}

#[tokio::test]
async fn a_run_saved_with_ctrl_s_opens_with_ctrl_o_and_replays_the_same_parts() {
    let dir = temp_dir("save-open");
    let journal = dir.join("journal-1.jsonl");
    let mut h = Harness::with(app_in(&dir), Some(journal.clone()));
    h.press(ctrl('r'));
    assert_eq!(h.driver.journal_file(), Some(journal.as_path()));
    h.run_to_end().await;
    let live = h.app.run.record.parts.parts.clone();
    assert!(live.iter().any(|p| matches!(p, Part::ToolCall(_))));
    assert!(journal.exists(), "the run is journaled as it streams");

    h.press(ctrl('s'));
    assert!(h.screen().contains("Save the session to"));
    h.press(key(KeyCode::Enter));
    h.until("the session is saved", |a| {
        a.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("saved the session"))
    })
    .await;
    let saved: Vec<_> = std::fs::read_dir(dir.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let session = Session::load(&saved[0]).unwrap();
    assert_eq!(session.parts, live);

    // Ctrl+O lists it; Enter opens it; the replay gives the same parts.
    h.app.pace = Pace::Instant;
    h.press(ctrl('o'));
    h.until(
        "the picker is filled",
        |a| matches!(&a.overlay, Some(Overlay::Sessions(p)) if p.entries.is_some()),
    )
    .await;
    let name = saved[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(h.screen().contains(&name), "{}", h.screen());
    h.press(key(KeyCode::Enter));
    h.until("the session is open", |a| a.opened.is_some()).await;
    assert!(!h.app.run.is_running());
    assert_eq!(h.app.run.record.parts.parts, live);
    assert!(h.screen().contains("replayed"), "{}", h.screen());

    // A clean exit removes the journal.
    assert_eq!(h.press(ctrl('q')), Flow::Quit);
    assert!(!journal.exists());
}

/// The journal is buffered: events go into it as they arrive, out to the operating system with
/// each frame, and whole at the run's end. A key the server echoes never reaches it.
#[tokio::test]
async fn the_journal_is_whole_when_the_run_ends_and_never_holds_the_key() {
    const KEY: &str = "sk-test-journal-0123456789";
    let mut events: Vec<serde_json::Value> = ["Your key ", "is ", KEY, ", kept ", "here."]
        .iter()
        .map(|c| serde_json::json!({"choices":[{"index":0,"delta":{"content": c}}]}))
        .collect();
    events.push(serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}));
    events.push(serde_json::json!("[DONE]"));
    let server =
        support::MockServer::start(vec![support::Reply::sse_data(&events, support::End::Clean)])
            .await;
    let dir = temp_dir("journal-key");
    let journal = dir.join("journal-1.jsonl");
    let keys = toolscope_core::provider::Keys::default()
        .with(toolscope_core::provider::ProviderKind::OPENAI, KEY);
    let mut h = Harness::with_keys(app_in(&dir), Some(journal.clone()), keys);
    h.app.provider = toolscope_core::provider::ProviderKind::OPENAI;
    h.app.model = "m".into();
    h.app.base_url = Some(server.url());
    h.press(ctrl('r'));
    // The engine's messages are handled without drawing a frame, as a flood of events is; a
    // frame drawn after the first part writes out everything so far.
    let mut framed = false;
    let wait = async {
        loop {
            let m = h.driver.next_engine_message().await.expect("open");
            let ended = matches!(m, Message::RunEnded { .. });
            h.driver.handle(&mut h.app, m);
            if ended {
                break;
            }
            if !framed && !h.app.run.record.parts.parts.is_empty() {
                framed = true;
                h.driver.draw(&h.app).unwrap();
                let so_far = journal::recover(&journal).unwrap();
                assert_eq!(so_far.session.parts, h.app.run.record.parts.parts);
            }
        }
    };
    tokio::time::timeout(DEADLINE, wait)
        .await
        .expect("the run ends");
    assert!(framed);
    assert_eq!(h.app.run.record.state, RunState::Done);
    // No frame since: the run's end wrote the journal out whole.
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(!text.contains(KEY), "the key reached the journal: {text}");
    assert!(text.contains("[redacted]"), "{text}");
    let r = journal::recover(&journal).unwrap();
    assert!(r.ended);
    assert_eq!(r.session.parts, h.app.run.record.parts.parts);
    assert_eq!(r.session.events.len(), h.app.run.record.wire.len());
    assert!(!h.screen().contains(KEY));
}

#[tokio::test]
async fn an_interrupted_run_is_restored_from_its_journal() {
    let dir = temp_dir("journal");
    let journal = dir.join("journal-1.jsonl");
    let mut h = Harness::with(app_in(&dir), Some(journal.clone()));
    h.press(ctrl('r'));
    // The playground dies while the call's arguments stream in.
    h.until("arguments are streaming", |a| {
        a.run
            .record
            .parts
            .parts
            .iter()
            .any(|p| matches!(p, Part::ToolInputDelta { .. }))
    })
    .await;
    assert!(h.app.run.is_running());
    let seen = h.app.run.record.parts.parts.clone();
    drop(h);

    let recovered = journal::recover(&journal).unwrap();
    assert!(!recovered.ended);
    assert_eq!(
        recovered.session.parts, seen,
        "nothing the screen showed is lost"
    );

    let mut a = app_in(&dir);
    a.overlay = Some(Overlay::Restore(Box::new(Restore {
        journal: journal.clone(),
        session: Box::new(recovered.session),
        ended: false,
    })));
    let mut h = Harness::with(a, None);
    assert!(h.screen().contains("Restore the interrupted run?"));
    h.press(key(KeyCode::Enter));
    h.until("the restored run is saved", |a| {
        a.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("saved the session"))
    })
    .await;
    assert!(!journal.exists(), "the journal goes once the run is saved");
    let saved: Vec<_> = std::fs::read_dir(dir.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1);
    assert!(
        saved[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("recovered-")
    );
    assert_eq!(Session::load(&saved[0]).unwrap().parts, seen);
    // The restored prefix is shown as it was; the stream it lost is marked as cut.
    assert_eq!(&h.app.run.record.parts.parts[..seen.len()], &seen[..]);
}

/// Issue 25, point 9: a session saved to a folder that does not exist (a mistyped path) is not
/// saved into a new folder without asking; `y` creates the folder and saves, `n` leaves the
/// disk as it was.
#[tokio::test]
async fn the_save_dialog_asks_before_it_creates_a_folder() {
    let base = std::env::temp_dir().join(format!("toolscope-mkdir-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).unwrap();
    let mut h = Harness::new(160, 48);
    h.press(ctrl('r'));
    h.run_to_end().await;
    for (answer, created) in [('n', false), ('y', true)] {
        let typo = base.join("sesions").join("deep").join("mine.json");
        h.press(ctrl('s'));
        let Some(Overlay::Path { editor, .. }) = &mut h.app.overlay else {
            panic!("the save dialog")
        };
        **editor = toolscope::app::editor::editor(&typo.display().to_string());
        h.press(key(KeyCode::Enter));
        h.until("the dialog asks", |a| {
            matches!(a.overlay, Some(Overlay::Confirm(_)))
        })
        .await;
        assert!(h.screen().contains("does not exist"), "{}", h.screen());
        assert!(
            !base.join("sesions").exists(),
            "nothing is made before the answer"
        );
        h.press(key(KeyCode::Char(answer)));
        if created {
            h.until("the session is saved", |a| {
                a.notice
                    .as_ref()
                    .is_some_and(|n| n.text.starts_with("saved the session"))
            })
            .await;
        }
        assert!(h.app.overlay.is_none());
        assert_eq!(typo.exists(), created, "after {answer}");
    }
    let _ = std::fs::remove_dir_all(&base);
}

/// Issue 30: the Tools pane's border has room for the first warning only; F10 there lists them
/// all (the others appeared nowhere in the playground).
#[test]
fn f10_in_the_tools_pane_lists_every_warning() {
    let mut h = Harness::new(160, 48);
    let text = r#"[
      {"name": "a", "parameters": {"type": "object", "properties": {"x": {"type": "float"}}}},
      {"name": "b", "parameters": 3},
      {"name": "c", "parameters": {"type": "object", "properties": {"y": {"type": "wat"}}}}
    ]"#;
    h.app.tools.set_text(text);
    let warnings = h.app.tools.warnings();
    assert!(warnings.len() >= 3, "{warnings:?}");
    h.app.focus = Focus::Tools;
    h.press(Message::Resize {
        width: 160,
        height: 48,
    });
    assert!(h.screen().contains("warnings (F10)"), "{}", h.screen());
    h.press(key(KeyCode::F(10)));
    let screen = h.screen();
    for w in &warnings {
        let start: String = w.chars().take(30).collect();
        assert!(screen.contains(&start), "{start:?} is not shown:\n{screen}");
    }
}

/// Issue 30: `g` and `G` go to the top and the end of a view, as in less (they did nothing).
#[test]
fn g_and_capital_g_go_to_the_top_and_the_end_of_a_view() {
    let mut h = Harness::new(80, 24);
    let long: Vec<String> = (1..=200).map(|i| format!("line {i}")).collect();
    h.app.overlay = Some(Overlay::Detail(Box::new(
        toolscope::app::detail::Detail::text("long", &long.join("\n")),
    )));
    h.press(key(KeyCode::Char('g')));
    assert!(h.screen().contains("line 1 "), "{}", h.screen());
    assert!(!h.screen().contains("line 200"));
    h.press(key(KeyCode::Char('G')));
    assert!(h.screen().contains("line 200"), "{}", h.screen());
    h.press(key(KeyCode::Char('g')));
    assert!(!h.screen().contains("line 200"), "{}", h.screen());
}
