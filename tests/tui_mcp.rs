//! The playground with MCP servers: the whole app (state machine, driver, drawing) on a
//! `TestBackend`, the demo model over loopback HTTP, and `toolscope serve-mcp-demo` run as a real
//! child process. Keys go in as messages; the tests wait for the engine's events (never for a
//! fixed time).

mod mcp_support;
#[path = "../crates/toolscope-core/tests/support/mod.rs"]
mod support;
mod tui_support;

use ratatui::crossterm::event::KeyCode;

use toolscope::app::mcp::ServerState;
use toolscope::app::theme::Themes;
use toolscope::app::{App, Focus, Message, Overlay, RunState, Setup};
use toolscope_core::error::ErrorCategory;
use toolscope_core::mcp::McpServerSpec;
use toolscope_core::part::Part;
use toolscope_core::provider::Message as Turn;
use toolscope_core::tool::ToolChoice;
use tui_support::harness::Harness;
use tui_support::{ctrl, first_error, key};

const BIN: &str = env!("CARGO_BIN_EXE_toolscope");

fn demo_server(flags: &str) -> McpServerSpec {
    McpServerSpec::stdio(&format!("'{BIN}' serve-mcp-demo {flags}")).unwrap()
}

/// The playground with no tools of its own, at most `max_steps` loop turns, and the demo MCP
/// server (with `flags`) connected and listed.
async fn harness(flags: &str, max_steps: usize) -> Harness {
    let setup = Setup {
        tools: "[]".into(),
        max_steps,
        ..Setup::default()
    };
    let mut app = App::new(setup, Themes::built_in());
    app.size = (160, 48);
    let mut h = Harness::with(app, None);
    h.press(Message::McpAdd {
        spec: demo_server(flags),
    });
    h.until("the server lists its tools", |a| {
        a.mcp.servers[0].state != ServerState::Connecting
    })
    .await;
    assert_eq!(h.app.mcp.servers[0].state, ServerState::Ready);
    h
}

/// Ctrl+N, saying yes when it asks.
fn new_conversation(h: &mut Harness) {
    h.press(ctrl('n'));
    if matches!(h.app.overlay, Some(Overlay::Confirm(_))) {
        h.press(key(KeyCode::Char('y')));
    }
    // The message being written stays through Ctrl+N: start it empty.
    h.app.prompt.composer = toolscope::app::editor::prose("");
    h.app.focus = Focus::Composer;
}

/// The Tools text checked now (as when typing pauses), the offered tools following it.
fn check_tools(h: &mut Harness) {
    let revision = h.app.tools.revision;
    h.press(Message::CheckTools { revision });
}

async fn settle(h: &mut Harness) {
    h.until("the runs and calls end", |a| {
        !a.is_running() && !a.mcp.executing()
    })
    .await;
}

fn tool_results(app: &App) -> Vec<&toolscope_core::part::ToolResult> {
    app.run
        .record
        .parts
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some(r.as_ref()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_servers_tools_show_marked_and_the_loop_runs_to_a_text_answer() {
    let mut h = harness("", 8).await;
    let names: Vec<&str> = h.app.offered().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["get_weather", "search_web", "write_file"]);
    let screen = h.screen();
    assert!(
        screen.contains("● toolscope-demo"),
        "the server is shown with its state:\n{screen}"
    );
    assert!(screen.contains("get_weather — "), "{screen}");
    assert!(screen.contains("✓ 0 tools + 3 from MCP"), "{screen}");

    h.press(key(KeyCode::F(12)));
    assert!(h.app.mcp.auto.is_some(), "the loop runs");
    assert!(h.screen().contains("⟳ loop 1/8"), "{}", h.screen());
    h.until("the loop ends", |a| {
        a.mcp.auto.is_none() && !a.is_running() && !a.mcp.executing()
    })
    .await;
    let history = h.app.prompt.history();
    assert_eq!(history.len(), 4, "{history:#?}");
    let Turn::Assistant { tool_calls, .. } = &history[1] else {
        panic!("{history:#?}")
    };
    assert_eq!(tool_calls[0].tool_name, "get_weather");
    let Turn::Tool { content, .. } = &history[2] else {
        panic!("{history:#?}")
    };
    assert!(content.contains("\"city\":\"Paris\""), "{content}");
    assert!(
        matches!(&history[3], Turn::Assistant { content: Some(t), tool_calls, .. } if !t.is_empty() && tool_calls.is_empty())
    );
    assert_eq!(h.app.run.record.state, RunState::Done);
    let notice = h.app.last_notice.clone().unwrap().text;
    assert_eq!(notice, "the loop ended with a text answer after 2 steps");
    // The loop is kept for saving: turn, call, turn.
    assert_eq!(h.app.trail.len(), 2, "{:#?}", h.app.trail.len());
}

#[tokio::test]
async fn ctrl_g_executes_the_calls_shows_the_results_and_sends_the_next_turn() {
    let mut h = harness("", 8).await;
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert_eq!(h.app.prompt.pending.len(), 1);
    let runs_before = h.app.run.record.id;
    // Alt+G executes the call of the focused result field only and sends nothing.
    assert_eq!(
        h.app.focus,
        Focus::Result(0),
        "the answer's call waits there"
    );
    h.press(Message::Key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Char('g'),
        ratatui::crossterm::event::KeyModifiers::ALT,
    )));
    assert!(h.app.mcp.executing());
    assert!(h.screen().contains("⚙ executing 1 call"), "{}", h.screen());
    settle(&mut h).await;
    assert_eq!(h.app.run.record.id, runs_before, "nothing was sent");
    let results = tool_results(&h.app);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].tool_name, "get_weather");
    assert!(!results[0].is_error);
    assert_eq!(results[0].output["city"], "Paris");
    let field = h.app.prompt.results[0].lines().join("\n");
    assert!(field.contains("\"city\":\"Paris\""), "{field}");
    assert!(
        h.screen().contains("tool-result"),
        "the Parts pane shows the result:\n{}",
        h.screen()
    );
    // Issue 30: the status line no longer says it is executing once the result is in.
    assert!(!h.screen().contains("executing"), "{}", h.screen());
    assert_eq!(
        h.app.notice.as_ref().map(|n| n.text.as_str()),
        Some("MCP: get_weather answered; Ctrl+R sends the result")
    );
    // The saved run is the model's alone: the result is the loop's.
    let session = h.app.run.session(None).unwrap();
    assert!(
        !session
            .parts
            .iter()
            .any(|p| matches!(p, Part::ToolResult(_)))
    );
    // A typed (here: filled) result is never executed over.
    h.press(ctrl('g'));
    assert!(!h.app.mcp.executing());
    assert!(
        h.app
            .notice
            .as_ref()
            .unwrap()
            .text
            .contains("typed already")
    );
    // Ctrl+R sends it.
    h.press(ctrl('r'));
    h.run_to_end().await;
    assert_eq!(h.app.prompt.history().len(), 4);
    assert!(h.app.prompt.pending.is_empty());

    // The loop so far is kept for saving: the first turn and its call (the second turn is
    // the run shown).
    assert_eq!(h.app.trail.len(), 2);

    // Ctrl+G executes all, then sends.
    new_conversation(&mut h);
    h.type_text("What's the weather in Lyon?");
    h.press(ctrl('r'));
    assert!(
        h.app.trail.is_empty(),
        "a new conversation is not the old loop"
    );
    h.run_to_end().await;
    h.press(ctrl('g'));
    h.until("the next turn ends", |a| {
        !a.mcp.executing() && !a.is_running() && a.prompt.pending.is_empty()
    })
    .await;
    let n = h.app.prompt.history().len();
    assert!(
        matches!(&h.app.prompt.history()[n - 2], Turn::Tool { content, .. } if content.contains("Lyon")),
        "{:#?}",
        h.app.prompt.history()
    );
}

#[tokio::test]
async fn a_tool_error_is_a_result_and_a_server_dying_mid_call_is_shown_and_survived() {
    let mut h = harness("--test-tools", 8).await;
    // isError: a result the model reads, marked.
    h.app.choice = ToolChoice::Tool("get_weather".into());
    new_conversation(&mut h);
    h.type_text("weather in Atlantis");
    h.press(ctrl('r'));
    h.run_to_end().await;
    let call = h.app.prompt.pending[0].clone();
    assert_eq!(call.input["city"], "Atlantis", "{call:?}");
    h.press(ctrl('g'));
    h.until("the call ends and the next turn", |a| {
        !a.mcp.executing() && !a.is_running() && a.prompt.history().len() >= 4
    })
    .await;
    let Turn::Tool { content, .. } = &h.app.prompt.history()[2] else {
        panic!("{:#?}", h.app.prompt.history())
    };
    assert!(content.starts_with("error: "), "{content}");

    // The server exits in the middle of a call: an error part with its category, the server
    // marked failed with the reason, its tools no longer offered, nothing sent.
    h.app.choice = ToolChoice::Tool("exit_now".into());
    new_conversation(&mut h);
    h.type_text("exit");
    h.press(ctrl('r'));
    h.run_to_end().await;
    let run = h.app.run.record.id;
    h.press(ctrl('g'));
    settle(&mut h).await;
    assert_eq!(
        h.app.run.record.id, run,
        "nothing was sent after the failure"
    );
    let error = first_error(&h.app).expect("an error part");
    assert_eq!(error.category, Some(ErrorCategory::ToolExecutionFailed));
    assert_eq!(error.tool_name.as_deref(), Some("exit_now"));
    h.until("the server is marked failed", |a| {
        matches!(a.mcp.servers[0].state, ServerState::Failed(_))
    })
    .await;
    assert!(h.app.offered().is_empty());
    assert!(
        h.screen().contains("✗ toolscope-demo · failed"),
        "{}",
        h.screen()
    );
    // The playground goes on: the result field still takes a typed result.
    assert_eq!(h.app.prompt.pending.len(), 1);
    h.app.choice = ToolChoice::Auto;
    h.app.focus = Focus::Result(0);
    h.type_text("gone");
    h.press(ctrl('r'));
    assert!(h.app.run.is_running(), "{:?}", h.app.run.record.state);
    h.run_to_end().await;
    assert_eq!(h.app.run.record.state, RunState::Done);
}

#[tokio::test]
async fn esc_cancels_a_hung_call_and_the_loop() {
    let mut h = harness("--test-tools", 8).await;
    h.app.choice = ToolChoice::Tool("hang".into());
    h.press(key(KeyCode::F(12)));
    h.until("the call hangs", |a| a.mcp.executing()).await;
    assert!(h.app.mcp.auto.is_some());
    h.press(key(KeyCode::Esc));
    assert!(!h.app.mcp.executing());
    assert!(h.app.mcp.auto.is_none());
    assert_eq!(
        h.app.notice.as_ref().unwrap().text,
        "cancelled: the MCP calls and the loop stop"
    );
    // The call's cancelled answer comes back and is ignored; the field waits for a result.
    let before = h.app.run.record.parts.parts.len();
    let answer = tokio::time::timeout(tui_support::harness::DEADLINE, async {
        loop {
            let m = h.driver.next_engine_message().await.unwrap();
            let called = matches!(m, Message::McpCalled { .. });
            h.driver.handle(&mut h.app, m);
            if called {
                break;
            }
        }
    });
    answer.await.expect("the cancelled call answers");
    assert_eq!(h.app.run.record.parts.parts.len(), before);
    assert_eq!(h.app.prompt.pending.len(), 1);
    assert!(h.app.prompt.results[0].lines().join("").is_empty());
}

#[tokio::test]
async fn the_loop_stops_at_its_step_limit_with_the_results_filled_in_not_sent() {
    let mut h = harness("", 1).await;
    h.press(key(KeyCode::F(12)));
    h.until("the loop stops", |a| {
        a.mcp.auto.is_none() && !a.is_running() && !a.mcp.executing()
    })
    .await;
    assert_eq!(h.app.prompt.history().len(), 2, "one turn only");
    assert_eq!(tool_results(&h.app).len(), 1, "the call was executed");
    assert!(!h.app.prompt.results[0].lines().join("").is_empty());
    let notice = h.app.last_notice.clone().unwrap().text;
    assert!(
        notice.starts_with("the loop stopped at its limit of 1 step"),
        "{notice}"
    );
}

#[tokio::test]
async fn servers_are_added_and_removed_at_run_time_and_a_tool_is_copied_into_the_json() {
    let mut h = harness("--test-tools", 8).await;
    // Copy get_weather into the editable tools: Tab into the MCP list, the tool's row, Enter.
    h.app.focus = Focus::Tools;
    h.press(key(KeyCode::Tab));
    assert_eq!(h.app.focus, Focus::Mcp);
    h.press(key(KeyCode::Down));
    h.press(key(KeyCode::Enter));
    check_tools(&mut h);
    assert_eq!(h.app.tools.valid.len(), 1);
    assert_eq!(
        h.app.tools.valid.iter().next().unwrap().name(),
        "get_weather"
    );
    // The user's copy keeps its name; the server's is offered under another.
    assert!(h.app.offered().get("toolscope-demo__get_weather").is_some());
    assert!(h.app.mcp.route("get_weather").is_none());
    // Undo takes the copy back.
    h.app.focus = Focus::Tools;
    h.press(ctrl('z'));
    check_tools(&mut h);
    assert_eq!(h.app.tools.valid.len(), 0);

    // A server that cannot start is shown with its error; the app goes on.
    h.press(key(KeyCode::F(11)));
    assert!(matches!(h.app.overlay, Some(Overlay::AddServer(_))));
    h.type_text("/nonexistent/mcp-server --flag");
    h.press(key(KeyCode::Enter));
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.focus, Focus::Mcp);
    h.until("the second server fails", |a| {
        matches!(a.mcp.servers[1].state, ServerState::Failed(_))
    })
    .await;
    let screen = h.screen();
    assert!(
        screen.contains("✗ mcp-server · failed: cannot start"),
        "{screen}"
    );
    // Removed with d.
    assert_eq!(h.app.mcp.selected_server().unwrap().name, "mcp-server");
    h.press(key(KeyCode::Char('d')));
    assert_eq!(h.app.mcp.servers.len(), 1);

    // A tool-list change is followed: add_tool makes the server list late_tool.
    let before = h.app.offered().len();
    h.app.choice = ToolChoice::Tool("add_tool".into());
    h.press(ctrl('r'));
    h.run_to_end().await;
    h.press(ctrl('g'));
    h.until("the new tool is listed", |a| {
        a.offered().get("late_tool").is_some()
    })
    .await;
    assert_eq!(h.app.offered().len(), before + 1);
}

/// A loop run in the playground is saved whole (Ctrl+S) and replays whole in a playground with
/// no MCP server at all: each call's recorded result, each turn, nothing executed.
#[tokio::test]
async fn a_loop_is_saved_whole_and_replays_without_its_server() {
    let mut h = harness("", 8).await;
    h.press(key(KeyCode::F(12)));
    h.until("the loop ends", |a| {
        a.mcp.auto.is_none() && !a.is_running() && !a.mcp.executing()
    })
    .await;
    let live_answer = h.app.run.record.parts.text();
    let dir = std::env::temp_dir().join(format!("toolscope-mcp-save-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("loop.json");
    h.press(ctrl('s'));
    let Some(Overlay::Path { editor, .. }) = &mut h.app.overlay else {
        panic!("Ctrl+S asks where")
    };
    **editor = toolscope::app::editor::editor(&path.display().to_string());
    h.press(key(KeyCode::Enter));
    h.until("the session is saved", |_| path.exists()).await;
    let saved = toolscope_core::session::Session::load(&path).unwrap();
    assert!(saved.is_loop());
    assert_eq!(saved.format_version(), 2);
    let kinds: Vec<&str> = saved
        .steps
        .iter()
        .map(|s| match s {
            toolscope_core::session::Step::ToolCall(_) => "call",
            toolscope_core::session::Step::Turn(_) => "turn",
            toolscope_core::session::Step::Stop(_) => "stop",
        })
        .collect();
    assert_eq!(kinds, ["call", "turn"]);
    let mcp = saved.mcp.as_ref().expect("the servers are recorded");
    assert_eq!(mcp.servers[0].name, "toolscope-demo");
    assert!(
        mcp.servers[0]
            .command
            .as_deref()
            .unwrap()
            .ends_with("serve-mcp-demo ")
    );
    assert_eq!(mcp.tools.len(), 3);
    // The saved run parts are the model's; the call's result is in its step.
    assert!(!saved.parts.iter().any(|p| matches!(p, Part::ToolResult(_))));

    // A playground without servers replays it whole, instantly.
    let mut app = App::new(Setup::default(), Themes::built_in());
    app.size = (160, 48);
    app.pace = toolscope::app::Pace::Instant;
    let mut r = Harness::with(app, None);
    r.press(Message::SessionLoaded {
        path: path.clone(),
        result: Ok(Box::new(saved)),
    });
    assert!(r.app.mcp.servers.is_empty());
    assert!(
        r.app.playback.as_ref().is_some_and(|p| p.is_done()),
        "an instant replay plays every turn"
    );
    assert_eq!(r.app.run.record.parts.text(), live_answer);
    assert_eq!(
        r.app.prompt.history().len(),
        4,
        "{:#?}",
        r.app.prompt.history()
    );
    let Turn::Tool { content, .. } = &r.app.prompt.history()[2] else {
        panic!("{:#?}", r.app.prompt.history())
    };
    assert!(content.contains("\"city\":\"Paris\""), "{content}");
    let p = r.app.playback.as_ref().unwrap();
    assert_eq!((p.turn, p.turns), (2, 2));
    assert!(r.screen().contains("done · replayed"), "{}", r.screen());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The bundled MCP loop steps through with F6: the first turn's call, its recorded result in
/// the Parts pane and the result field, then the second turn in a view of its own.
#[tokio::test]
async fn the_bundled_loop_steps_turn_by_turn() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions/mcp-loop.json");
    let session = toolscope_core::session::Session::load(&path).unwrap();
    assert!(session.is_loop());
    let mut app = App::new(Setup::default(), Themes::built_in());
    app.size = (160, 48);
    let mut h = Harness::with(app, None);
    h.press(Message::SessionLoaded {
        path,
        result: Ok(Box::new(session)),
    });
    // Paused before the first event, then one step at a time.
    h.press(key(KeyCode::F(5)));
    let mut saw_result_in_turn_1 = false;
    let mut saw_turn_2 = false;
    for _ in 0..2000 {
        if h.app.playback.as_ref().is_none_or(|p| p.is_done()) {
            break;
        }
        h.press(key(KeyCode::F(6)));
        let p = h.app.playback.as_ref().unwrap();
        if p.turn == 1 && !tool_results(&h.app).is_empty() {
            saw_result_in_turn_1 = true;
            let field = h.app.prompt.results[0].lines().join("\n");
            assert!(
                field.contains("Paris"),
                "the result field is filled: {field}"
            );
        }
        if p.turn == 2 {
            saw_turn_2 = true;
            assert!(
                h.app
                    .notice
                    .as_ref()
                    .unwrap()
                    .text
                    .starts_with("step turn 2/2 · "),
                "{:?}",
                h.app.notice
            );
        }
    }
    assert!(saw_result_in_turn_1 && saw_turn_2);
    assert_eq!(h.app.prompt.history().len(), 4);
    assert!(h.app.prompt.pending.is_empty(), "the loop ended in text");
}

/// A streamable-HTTP server added at run time (F11, its URL typed): its tools are listed and a
/// call runs there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_added_at_run_time_serves_the_loop() {
    let server = mcp_support::http_server().await;
    let setup = Setup {
        tools: "[]".into(),
        ..Setup::default()
    };
    let mut app = App::new(setup, Themes::built_in());
    app.size = (160, 48);
    let mut h = Harness::with(app, None);
    h.press(key(KeyCode::F(11)));
    h.type_text(&server.url);
    h.press(key(KeyCode::Enter));
    h.until("the HTTP server lists its tools", |a| {
        a.mcp.servers[0].state != ServerState::Connecting
    })
    .await;
    assert_eq!(h.app.mcp.servers[0].state, ServerState::Ready);
    assert_eq!(h.app.offered().len(), 3, "every page of tools/list");
    assert!(
        h.screen()
            .contains(&format!("● toolscope-demo · {} · 3 tools", server.url)),
        "{}",
        h.screen()
    );
    h.press(key(KeyCode::F(12)));
    h.until("the loop ends", |a| {
        a.mcp.auto.is_none() && !a.is_running() && !a.mcp.executing()
    })
    .await;
    assert_eq!(
        h.app.prompt.history().len(),
        4,
        "{:#?}",
        h.app.prompt.history()
    );
    assert!(
        server.seen_auth.lock().unwrap().is_empty(),
        "no token asked for, none sent"
    );
}

/// A server whose `tools/list` holds malformed tools between good ones: the good ones are
/// offered, the bad ones named in the notice with what is wrong, and the server is ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_tool_is_named_in_the_notice_and_the_others_are_offered() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp_hostile_server.py");
    let setup = Setup {
        tools: "[]".into(),
        ..Setup::default()
    };
    let mut app = App::new(setup, Themes::built_in());
    app.size = (160, 48);
    let mut h = Harness::with(app, None);
    h.press(Message::McpAdd {
        spec: McpServerSpec::stdio(&format!("python3 '{script}' --bad-tools")).unwrap(),
    });
    h.until("the server lists its tools", |a| {
        a.mcp.servers[0].state != ServerState::Connecting
    })
    .await;
    assert_eq!(h.app.mcp.servers[0].state, ServerState::Ready);
    let offered: Vec<&str> = h.app.offered().iter().map(|t| t.name()).collect();
    assert_eq!(offered, ["echo", "flood", "huge"]);
    let notice = h.app.last_notice.clone().unwrap();
    assert!(notice.error, "{notice:?}");
    assert!(
        notice.text.contains("tool 1 is left out: missing \"name\""),
        "{}",
        notice.text
    );
    assert!(
        notice
            .text
            .contains("tool 2 is left out: \"name\" must be a string"),
        "{}",
        notice.text
    );
}

/// A streamed OpenAI answer of `content` in pieces of 5 bytes, ending with `finish`.
fn content_reply(content: &str, finish: &str) -> support::Reply {
    let mut events: Vec<serde_json::Value> = content
        .as_bytes()
        .chunks(5)
        .map(|c| {
            serde_json::json!({"choices":[{"index":0,"delta":{"content": std::str::from_utf8(c).unwrap()}}]})
        })
        .collect();
    events.push(serde_json::json!({"choices":[{"index":0,"delta":{},"finish_reason": finish}]}));
    events.push(serde_json::json!("[DONE]"));
    support::Reply::sse_data(&events, support::End::Clean)
}

fn hermes_call(city: &str) -> String {
    format!(
        "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}</tool_call>"
    )
}

/// The playground against a loopback OpenAI-compatible server answering `replies`, reading
/// calls as hermes, with the demo MCP server listed.
async fn scripted(replies: Vec<support::Reply>) -> (Harness, support::MockServer) {
    let server = support::MockServer::start(replies).await;
    let mut h = harness("", 8).await;
    h.app.provider = toolscope_core::provider::ProviderKind::OPENAI;
    h.app.model = "m".into();
    h.app.base_url = Some(server.url());
    h.pick_protocol("hermes");
    (h, server)
}

/// Issue 28: every answer's calls got `call-1`; in the playground's conversation the ids are
/// unique, and each result answers its own call.
#[tokio::test]
async fn the_loop_gives_every_call_in_the_conversation_its_own_id() {
    let (mut h, server) = scripted(vec![
        content_reply(&hermes_call("Paris"), "stop"),
        content_reply(
            &format!("{}{}", hermes_call("Rome"), hermes_call("Tokyo")),
            "stop",
        ),
        content_reply("All done.", "stop"),
    ])
    .await;
    h.press(key(KeyCode::F(12)));
    // To a provider other than the demo, the loop asks first.
    assert!(
        h.screen().contains("up to 8 requests to openai (m)"),
        "{}",
        h.screen()
    );
    h.press(key(KeyCode::Char('y')));
    h.until("the loop ends", |a| {
        a.mcp.auto.is_none() && !a.is_running() && !a.mcp.executing()
    })
    .await;
    let mut calls = Vec::new();
    let mut results = Vec::new();
    for m in h.app.prompt.history() {
        match m {
            Turn::Assistant { tool_calls, .. } => {
                calls.extend(tool_calls.iter().map(|c| c.tool_call_id.to_string()))
            }
            Turn::Tool { tool_call_id, .. } => results.push(tool_call_id.clone()),
            _ => {}
        }
    }
    assert_eq!(
        calls,
        ["call-1", "call-2", "call-3"],
        "{:#?}",
        h.app.prompt.history()
    );
    assert_eq!(results, calls);
    assert_eq!(server.recorded().len(), 3);
}

/// Issue 28: a cut answer (`finish_reason: length`) stops the F12 loop with a notice; its
/// complete call is not executed and no next turn is sent.
#[tokio::test]
async fn the_loop_stops_at_a_cut_answer_without_running_its_calls() {
    let cut = format!(
        "{}\n<tool_call>{{\"name\": \"get_weather\", \"argu",
        hermes_call("Paris")
    );
    let (mut h, server) = scripted(vec![
        content_reply(&cut, "length"),
        content_reply("never asked for", "stop"),
    ])
    .await;
    h.press(key(KeyCode::F(12)));
    // To a provider other than the demo, the loop asks first.
    assert!(
        h.screen().contains("up to 8 requests to openai (m)"),
        "{}",
        h.screen()
    );
    h.press(key(KeyCode::Char('y')));
    h.until("the loop ends", |a| {
        a.mcp.auto.is_none() && !a.is_running() && !a.mcp.executing()
    })
    .await;
    assert!(
        tool_results(&h.app).is_empty(),
        "a call of a cut answer ran"
    );
    assert_eq!(server.recorded().len(), 1, "a next turn was sent");
    let notice = h.app.last_notice.clone().unwrap().text;
    assert!(
        notice.contains("cut") && notice.contains("length"),
        "{notice}"
    );
}

/// F12 after a cut answer sent by hand (Ctrl+R) does not run that answer's calls either.
#[tokio::test]
async fn f12_after_a_cut_answer_runs_none_of_its_calls() {
    let cut = format!(
        "{}\n<tool_call>{{\"name\": \"get_weather\", \"argu",
        hermes_call("Paris")
    );
    let (mut h, server) = scripted(vec![
        content_reply(&cut, "length"),
        content_reply("never asked for", "stop"),
    ])
    .await;
    h.press(ctrl('r'));
    h.run_to_end().await;
    h.press(key(KeyCode::F(12)));
    settle(&mut h).await;
    assert!(h.app.mcp.auto.is_none(), "the loop did not start");
    assert!(
        tool_results(&h.app).is_empty(),
        "a call of a cut answer ran"
    );
    assert_eq!(server.recorded().len(), 1, "a next turn was sent");
    let notice = h.app.last_notice.clone().unwrap().text;
    assert!(
        notice.contains("cut") && notice.contains("length"),
        "{notice}"
    );
}
