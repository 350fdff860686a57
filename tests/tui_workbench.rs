//! The playground as a workbench (issue 13). Each defect found by trying the playground as a new
//! user is pinned here by a key-driven test: the whole playground on a `TestBackend`, against the
//! real demo model over loopback HTTP, waiting on the engine's events and never on a clock.

mod tui_support;

use std::path::PathBuf;

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::style::Color;

use toolscope::app::layout::{self, Screen};
use toolscope::app::theme::Themes;
use toolscope::app::{App, Focus, Message, Overlay, RawMode, editor};
use toolscope::tui::driver::Flow;
use toolscope_core::provider::Message as Msg;
use toolscope_core::tool::ToolChoice;
use tui_support::harness::Harness;
use tui_support::{alt, ctrl, first_call, first_error, key};

fn composer(app: &App) -> String {
    editor::text_of(&app.prompt.composer)
}

/// Ctrl+R, then the answer.
async fn run(h: &mut Harness) {
    h.press(ctrl('r'));
    h.run_to_end().await;
}

/// Tab until `focus` (at most once around the panes).
fn focus(h: &mut Harness, focus: Focus) {
    for _ in 0..12 {
        if h.app.focus == focus {
            return;
        }
        h.press(key(KeyCode::Tab));
    }
    assert_eq!(h.app.focus, focus, "Tab never reaches {focus:?}");
}

fn write_message(h: &mut Harness, text: &str) {
    h.app.prompt.composer = editor::prose(text);
}

/// The rows of the screen inside `area`, as text.
fn rows_in(h: &Harness, area: Rect) -> Vec<String> {
    let buf = h.driver.terminal().backend().buffer();
    (area.y..area.y + area.height)
        .map(|y| {
            (area.x..area.x + area.width)
                .map(|x| buf[(x, y)].symbol())
                .collect()
        })
        .collect()
}

fn main_areas(app: &App) -> layout::MainAreas {
    match layout::screen(Rect::new(0, 0, app.size.0, app.size.1), app) {
        Screen::Main(m) => m,
        other => panic!("not the main screen: {other:?}"),
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolscope-wb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

// 1. The answer drops out of the conversation.
#[tokio::test]
async fn d01_the_answer_stays_in_the_conversation_and_on_the_wire() {
    let mut h = Harness::new(160, 48);
    run(&mut h).await;
    assert!(h.has_tool_call(), "the demo model calls get_weather");
    h.press(Message::Paste("sunny, 21 °C".into()));
    run(&mut h).await;
    assert!(
        !h.has_tool_call(),
        "after the result the model answers in text"
    );
    let answer = h.app.run.record.parts.text();
    assert!(!answer.is_empty());
    focus(&mut h, Focus::Composer);
    h.type_text("And tomorrow?");
    h.press(ctrl('r'));
    let sent = h.app.run.record.request.clone().expect("sent").messages;
    let roles: Vec<&str> = sent.iter().map(Msg::role).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant", "user"],
        "{sent:#?}"
    );
    assert_eq!(
        sent[3],
        Msg::assistant(Some(answer), vec![]),
        "the text answer is on the wire"
    );
    assert_eq!(sent[4], Msg::user("And tomorrow?"));
    h.run_to_end().await;
}

// 2. Typed text goes nowhere after a turn.
#[tokio::test]
async fn d02_after_a_turn_typed_text_goes_to_an_empty_message_field() {
    let mut h = Harness::new(160, 48);
    run(&mut h).await;
    assert_eq!(h.app.focus, Focus::Result(0));
    h.press(Message::Paste("cloudy".into()));
    run(&mut h).await;
    assert_eq!(
        h.app.focus,
        Focus::Composer,
        "focus on an empty message field"
    );
    h.type_text("ok?");
    assert_eq!(composer(&h.app), "ok?", "no keystroke is dropped");
}

// 3. A follow-up is wiped; the old question stays in the field.
#[tokio::test]
async fn d03_a_follow_up_is_never_wiped_and_the_old_question_is_not_edited() {
    let mut h = Harness::new(160, 48);
    h.app.choice = ToolChoice::None;
    run(&mut h).await;
    assert!(!h.app.run.record.parts.text().is_empty());
    assert_eq!(h.app.focus, Focus::Composer);
    assert_eq!(composer(&h.app), "", "the question joined the conversation");
    assert_eq!(h.app.prompt.history().len(), 2, "question and answer");
    h.type_text("Thanks! And in Rome?");
    // A new conversation asks first; Esc keeps everything.
    h.press(ctrl('n'));
    h.press(key(KeyCode::Esc));
    assert_eq!(composer(&h.app), "Thanks! And in Rome?");
    assert_eq!(h.app.prompt.history().len(), 2);
}

// 4. Emulated `required` sends empty calls.
#[tokio::test]
async fn d04_emulated_required_fills_the_arguments() {
    let mut h = Harness::new(160, 48);
    h.pick_protocol("hermes");
    h.press(ctrl('t'));
    assert_eq!(h.app.choice, ToolChoice::Required);
    write_message(&mut h, "What's the weather in Lisbon for 2 days?");
    run(&mut h).await;
    let call = first_call(&h.app);
    assert_eq!(call.tool_name, "get_weather");
    assert_eq!(call.input["city"], "Lisbon", "{:?}", call.input);
    assert_eq!(call.input["days"], 2);
    assert!(call.invalid.is_empty(), "{:?}", call.invalid);
}

// 6. Lost work: F3 replaces edited tools without asking.
#[tokio::test]
async fn d06_loading_tools_over_edited_ones_asks_first() {
    let dir = temp_dir("f3");
    let path = dir.join("other.json");
    std::fs::write(
        &path,
        r#"[{"name": "lookup", "parameters": {"type": "object"}}]"#,
    )
    .unwrap();
    let mut h = Harness::new(160, 48);
    h.app.focus = Focus::Tools;
    h.press(key(KeyCode::End));
    h.press(key(KeyCode::Char(' ')));
    h.press(key(KeyCode::F(3)));
    h.press(Message::Paste(String::new()));
    for _ in 0.."tools.json".len() {
        h.press(key(KeyCode::Backspace));
    }
    h.press(Message::Paste(path.display().to_string()));
    h.press(key(KeyCode::Enter));
    assert!(
        h.screen().contains("Replace the edited tools?"),
        "{}",
        h.screen()
    );
    h.press(key(KeyCode::Char('y')));
    h.until("the file is loaded", |a| a.tools.valid.len() == 1)
        .await;
}

// 6. Lost work: F4 overwrites a file without asking.
#[tokio::test]
async fn d06_saving_over_an_existing_file_asks_first() {
    let dir = temp_dir("f4");
    let path = dir.join("tools.json");
    std::fs::write(&path, "[]").unwrap();
    let mut h = Harness::new(160, 48);
    h.press(key(KeyCode::F(4)));
    for _ in 0.."tools.json".len() {
        h.press(key(KeyCode::Backspace));
    }
    h.press(Message::Paste(path.display().to_string()));
    h.press(key(KeyCode::Enter));
    h.until("asked or saved", |a| {
        a.overlay.is_some()
            || a.notice
                .as_ref()
                .is_some_and(|n| n.text.starts_with("saved"))
    })
    .await;
    assert!(h.screen().contains("Overwrite"), "{}", h.screen());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "[]", "not yet");
    h.press(key(KeyCode::Char('y')));
    h.until("saved", |a| {
        a.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("saved"))
    })
    .await;
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .contains("get_weather")
    );
}

/// Ctrl+O, and the sessions listed.
async fn open_picker(h: &mut Harness) {
    h.press(ctrl('o'));
    h.until(
        "the sessions are listed",
        |a| matches!(&a.overlay, Some(Overlay::Sessions(p)) if p.entries.is_some()),
    )
    .await;
}

// 6. Lost work: Ctrl+O replaces the conversation without asking.
#[tokio::test]
async fn d06_opening_a_session_over_an_unsaved_conversation_asks_first() {
    let dir = temp_dir("ctrl-o");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("sessions/mode-auto.json"),
        dir.join("mode-auto.json"),
    )
    .unwrap();
    let mut a = tui_support::app(160, 48);
    a.sessions.project = Some(dir.clone());
    let mut h = Harness::with(a, None);
    h.app.choice = ToolChoice::None;
    run(&mut h).await;
    assert_eq!(h.app.prompt.history().len(), 2);
    open_picker(&mut h).await;
    h.press(key(KeyCode::Enter));
    let s = h.screen();
    assert!(s.contains("mode-auto.json?"), "{s}");
    assert!(s.contains("the conversation (2 messages)"), "{s}");
    h.press(key(KeyCode::Char('n')));
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.prompt.history().len(), 2, "the conversation stays");
    assert!(h.app.opened.is_none());
    open_picker(&mut h).await;
    h.press(key(KeyCode::Enter));
    h.press(key(KeyCode::Char('y')));
    h.until("the session is open", |a| a.opened.is_some()).await;
}

// 6. Lost work: a message being written (and typed results) went with Ctrl+O without a word.
#[tokio::test]
async fn d06_opening_a_session_over_a_typed_message_asks_first() {
    let dir = temp_dir("ctrl-o-draft");
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("sessions/mode-auto.json"),
        dir.join("mode-auto.json"),
    )
    .unwrap();
    let mut a = tui_support::app(160, 48);
    a.sessions.project = Some(dir.clone());
    let mut h = Harness::with(a, None);
    // The example message as it came: nothing to lose, nothing asked.
    open_picker(&mut h).await;
    h.press(key(KeyCode::Enter));
    assert!(
        !matches!(h.app.overlay, Some(Overlay::Confirm(_))),
        "{}",
        h.screen()
    );
    h.until("the session is open", |a| a.opened.is_some()).await;
    // A message typed since: it asks, and `n` keeps it.
    h.app.focus = Focus::Composer;
    h.type_text("My draft");
    open_picker(&mut h).await;
    h.press(key(KeyCode::Enter));
    let s = h.screen();
    assert!(s.contains("it replaces the message being written"), "{s}");
    h.press(key(KeyCode::Char('n')));
    assert!(composer(&h.app).ends_with("My draft"));
}

// 6. Lost work: Ctrl+S overwrites a file without asking.
#[tokio::test]
async fn d06_saving_a_session_over_an_existing_file_asks_first() {
    let dir = temp_dir("ctrl-s");
    let path = dir.join("kept.json");
    std::fs::write(&path, "{}").unwrap();
    let mut h = Harness::new(160, 48);
    h.app.choice = ToolChoice::None;
    run(&mut h).await;
    h.press(ctrl('s'));
    assert!(matches!(h.app.overlay, Some(Overlay::Path { .. })));
    let Some(Overlay::Path { editor: input, .. }) = &h.app.overlay else {
        unreachable!()
    };
    for _ in 0..editor::text_of(input).chars().count() {
        h.press(key(KeyCode::Backspace));
    }
    h.press(Message::Paste(path.display().to_string()));
    h.press(key(KeyCode::Enter));
    h.until("asked or saved", |a| {
        a.overlay.is_some()
            || a.notice
                .as_ref()
                .is_some_and(|n| n.text.starts_with("saved"))
    })
    .await;
    assert!(h.screen().contains("Overwrite"), "{}", h.screen());
    h.press(key(KeyCode::Esc));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}", "left alone");
    assert!(h.app.unsaved_turns, "still unsaved");
    h.press(ctrl('s'));
    let Some(Overlay::Path { editor: input, .. }) = &h.app.overlay else {
        panic!("a path prompt")
    };
    for _ in 0..editor::text_of(input).chars().count() {
        h.press(key(KeyCode::Backspace));
    }
    h.press(Message::Paste(path.display().to_string()));
    h.press(key(KeyCode::Enter));
    h.until("asked", |a| matches!(a.overlay, Some(Overlay::Confirm(_))))
        .await;
    h.press(key(KeyCode::Char('y')));
    h.until("saved", |a| {
        a.notice
            .as_ref()
            .is_some_and(|n| n.text.starts_with("saved"))
    })
    .await;
    let saved = toolscope_core::session::Session::load(&path).unwrap();
    assert_eq!(saved.request.messages.len(), 1);
    assert!(!h.app.unsaved_turns);
}

// 6. Lost work: Ctrl+Q quits with unsaved edits.
#[tokio::test]
async fn d06_quitting_with_unsaved_edits_asks_first() {
    let mut h = Harness::new(160, 48);
    h.app.focus = Focus::Tools;
    h.press(key(KeyCode::End));
    h.press(key(KeyCode::Char(' ')));
    assert_eq!(h.press(ctrl('q')), Flow::Continue, "it asks");
    assert!(h.screen().contains("Quit"), "{}", h.screen());
    h.press(key(KeyCode::Char('n')));
    assert!(h.app.overlay.is_none());
    h.press(ctrl('q'));
    assert_eq!(h.press(key(KeyCode::Char('y'))), Flow::Quit);
}

// 6. Lost work: there is no undo.
#[tokio::test]
async fn d06_editors_undo_and_redo() {
    let mut h = Harness::new(160, 48);
    write_message(&mut h, "");
    h.app.focus = Focus::Composer;
    h.type_text("abc");
    let undo = Message::Key(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL));
    let redo = Message::Key(KeyEvent::new(KeyCode::Char('y'), KeyModifiers::CONTROL));
    h.press(undo.clone());
    assert_ne!(composer(&h.app), "abc", "Ctrl+Z undoes");
    h.press(redo);
    assert_eq!(composer(&h.app), "abc", "Ctrl+Y redoes");
    h.app.focus = Focus::Tools;
    let before = h.app.tools.text();
    h.press(key(KeyCode::Char('x')));
    h.press(undo);
    assert_eq!(h.app.tools.text(), before, "the Tools editor too");
}

// 7. Themes that do not paint their background; help rows left unpainted.
#[test]
fn d07_every_theme_paints_every_cell() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    for name in Themes::built_in().names() {
        let mut a = tui_support::app(100, 40);
        a.theme = name.clone();
        a.restyle();
        for overlay in [None, Some(key(KeyCode::F(1)))] {
            if let Some(m) = overlay {
                toolscope::app::update(&mut a, m);
            }
            let mut t = Terminal::new(TestBackend::new(100, 40)).unwrap();
            let view = toolscope::tui::View::new();
            t.draw(|f| toolscope::tui::draw(f, &a, &view)).unwrap();
            let buf = t.backend().buffer();
            let unpainted = buf.content.iter().filter(|c| c.bg == Color::Reset).count();
            assert_eq!(
                unpainted, 0,
                "{name}: cells on the terminal's own background"
            );
        }
    }
}

// 7. A user theme without a name replaces `dark`; a bad key is not named.
#[test]
fn d07_user_themes_are_named_by_their_file_and_errors_name_file_and_key() {
    let dir = temp_dir("themes");
    std::fs::write(dir.join("solar.toml"), "[ui]\ntext = \"#fdf6e3\"\n").unwrap();
    std::fs::write(
        dir.join("bad.toml"),
        "name = \"bad\"\n[ui]\ntxet = \"red\"\n",
    )
    .unwrap();
    let (themes, problems) = Themes::load(Some(&dir));
    assert!(
        themes.names().contains(&"solar".to_string()),
        "{:?}",
        themes.names()
    );
    assert_eq!(
        themes.get("dark"),
        Themes::built_in().get("dark"),
        "dark is untouched"
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].contains("bad.toml") && problems[0].contains("ui.txet"),
        "{problems:?}"
    );
}

#[test]
fn d07_a_theme_that_cannot_be_read_is_named_on_the_command_line() {
    let dir = temp_dir("theme-cli");
    let themes = dir.join("toolscope").join("themes");
    std::fs::create_dir_all(&themes).unwrap();
    std::fs::write(themes.join("mine.toml"), "[ui]\ntxet = \"red\"\n").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolscope"))
        .args(["--theme", "mine"])
        .env("XDG_CONFIG_HOME", &dir)
        .env("XDG_DATA_HOME", &dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("mine.toml") && err.contains("ui.txet"),
        "{err}"
    );
}

// 8. Every keystroke in the Tools pane re-validates everything at once.
#[tokio::test]
async fn d08_tools_are_checked_after_a_pause_not_on_every_key() {
    let mut h = Harness::new(160, 48);
    h.app.focus = Focus::Tools;
    h.press(key(KeyCode::Char('x')));
    assert!(
        h.app.tools.problem().is_none(),
        "not checked on the keystroke itself"
    );
    assert!(h.screen().contains("checking"), "{}", h.screen());
    h.until("the pause has passed and the check ran", |a| {
        a.tools.problem().is_some()
    })
    .await;
    assert!(h.screen().contains("✗ invalid"));
}

// 9. The picker: cursor at column 0, no URL check, local errors labelled as the provider's.
#[tokio::test]
async fn d09_the_picker_keeps_the_cursor_and_checks_the_url() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('p'));
    let to_base_url = |h: &mut Harness| {
        for _ in 0..8 {
            if matches!(&h.app.overlay, Some(Overlay::Picker(p)) if p.field == toolscope::app::picker::PickerField::BaseUrl)
            {
                return;
            }
            h.press(key(KeyCode::Tab));
        }
        panic!("Tab never reaches the base URL");
    };
    to_base_url(&mut h);
    h.press(Message::Paste("htp:/oops".into()));
    assert!(h.screen().contains("not a URL"), "{}", h.screen());
    h.press(key(KeyCode::Enter));
    assert!(h.app.overlay.is_some(), "a bad URL is not applied");
    for _ in 0.."htp:/oops".len() {
        h.press(key(KeyCode::Backspace));
    }
    let url = "http://127.0.0.1:9/v1";
    h.press(Message::Paste(url.into()));
    h.press(key(KeyCode::Enter));
    assert!(h.app.overlay.is_none());
    assert_eq!(h.app.base_url.as_deref(), Some(url));
    h.press(ctrl('p'));
    to_base_url(&mut h);
    let Some(Overlay::Picker(p)) = &h.app.overlay else {
        panic!("the picker")
    };
    assert_eq!(p.base_url.cursor(), (0, url.len()), "the cursor at the end");
}

#[tokio::test]
async fn d09_a_request_refused_before_sending_says_not_sent() {
    let mut h = Harness::new(160, 48);
    h.app.choice = ToolChoice::Tool("book_flight".into());
    h.press(ctrl('r'));
    let s = h.screen();
    assert!(s.contains("not sent"), "{s}");
    assert!(!s.contains("provider_invalid_request"), "{s}");
}

// 10. Text wraps mid-word; editor lines are cut without a marker; `w` in Raw switches views.
#[tokio::test]
async fn d10_text_wraps_at_words() {
    let mut h = Harness::new(80, 24);
    h.app.choice = ToolChoice::None;
    write_message(
        &mut h,
        "Tell me about the weather in Paris, Tokyo and Lisbon, please, in some detail.",
    );
    run(&mut h).await;
    let raw = layout::inner(main_areas(&h.app).raw);
    let rows = rows_in(&h, raw);
    for pair in rows.windows(2) {
        let (a, b) = (pair[0].trim_end_matches(' '), &pair[1]);
        let full = a.chars().count() == raw.width as usize;
        let joined = a.ends_with(|c: char| c.is_alphanumeric())
            && b.starts_with(|c: char| c.is_alphanumeric());
        assert!(!(full && joined), "a word cut in two:\n{a}\n{b}");
    }
}

#[tokio::test]
async fn d10_editor_lines_cut_at_the_edge_are_marked() {
    let h = Harness::new(80, 24);
    let tools = layout::inner(main_areas(&h.app).tools);
    let rows = rows_in(&h, tools);
    assert!(
        rows.iter().any(|r| r.trim_end().ends_with('›')),
        "{}",
        rows.join("\n")
    );
}

#[tokio::test]
async fn d10_typing_w_in_the_raw_pane_does_not_switch_views() {
    let mut h = Harness::new(80, 24);
    h.app.focus = Focus::Raw;
    h.press(key(KeyCode::Char('w')));
    assert_eq!(h.app.raw_mode, RawMode::Output);
}

// 5. Long text is cut and never readable.
#[tokio::test]
async fn d05_long_text_reads_whole_in_a_detail_view() {
    let mut h = Harness::new(80, 24);
    h.app.choice = ToolChoice::None;
    run(&mut h).await;
    let answer = h.app.run.record.parts.text();
    assert!(answer.len() > 100, "a long answer: {answer}");
    h.app.focus = Focus::Parts;
    for _ in 0..10 {
        h.press(key(KeyCode::Up));
        let i = h.app.run.cursor.selected.unwrap();
        if h.app.run.record.parts.rows[i].label == "text-delta" {
            break;
        }
    }
    h.press(key(KeyCode::Enter));
    let Some(Overlay::Detail(d)) = &h.app.overlay else {
        panic!("a detail view:\n{}", h.screen())
    };
    assert_eq!(d.as_str(), answer, "the whole text");
    assert!(h.screen().contains("text-delta"), "{}", h.screen());
    // Every word of it is on the screen at 80×24, wrapped (it fits in the window).
    let screen = h.screen();
    let last = answer.split_whitespace().last().unwrap();
    assert!(screen.contains(last), "{last}:\n{screen}");
    h.press(key(KeyCode::Char('c')));
    assert!(h.clipboard_text().starts_with("\x1b]52;c;"));
    h.press(key(KeyCode::Esc));
    assert!(h.app.overlay.is_none());
    // A status message cut short says so, and reads whole with F10.
    let mut h = Harness::new(160, 48);
    h.app.choice = ToolChoice::Tool("book_a_flight_to_somewhere_warm_and_sunny".into());
    h.press(ctrl('r'));
    let notice = h.app.notice.clone().unwrap().text;
    let status = h.screen().lines().last().unwrap().to_string();
    assert!(status.contains("… F10"), "{status}");
    h.press(key(KeyCode::F(10)));
    let Some(Overlay::Detail(d)) = &h.app.overlay else {
        panic!("a detail view")
    };
    assert_eq!(d.as_str(), notice);
}

/// The OSC 52 writes of the clipboard, decoded.
fn copied(h: &Harness) -> Vec<String> {
    use base64::Engine as _;
    h.clipboard_text()
        .split('\x07')
        .filter_map(|s| s.strip_prefix("\x1b]52;c;"))
        .map(|b| {
            let bytes = base64::engine::general_purpose::STANDARD.decode(b).unwrap();
            String::from_utf8(bytes).unwrap()
        })
        .collect()
}

#[tokio::test]
async fn ctrl_e_shows_the_exact_request_never_the_key_and_copies_curl() {
    let secret = "sk-test-0123456789-secret";
    let keys = toolscope_core::provider::Keys::default()
        .with(toolscope_core::provider::ProviderKind::OPENAI, secret);
    let mut h = Harness::with_keys(tui_support::app(160, 48), None, keys);
    // Before anything is sent: what Ctrl+R would send, to OpenAI.
    h.app.provider = toolscope_core::provider::ProviderKind::OPENAI;
    h.app.model = "gpt-4o-mini".into();
    h.press(alt('e'));
    let screen = h.screen();
    assert!(screen.contains("not sent yet"), "{screen}");
    assert!(screen.contains("POST https://api.openai.com/v1/chat/completions"));
    assert!(
        screen.contains("authorization: Bearer $OPENAI_API_KEY"),
        "{screen}"
    );
    assert!(!screen.contains(secret));
    h.press(key(KeyCode::Char('c')));
    let curl = copied(&h).pop().unwrap();
    assert!(curl.starts_with("curl -sN -X POST 'https://api.openai.com/v1/chat/completions'"));
    assert!(
        curl.contains("\"authorization: Bearer $OPENAI_API_KEY\""),
        "{curl}"
    );
    assert!(!curl.contains(secret));
    h.press(key(KeyCode::Esc));

    // A live emulated run on the demo model: the rendered protocol prompt and response format.
    h.app.provider = toolscope_demo::provider();
    h.app.model = "demo-1".into();
    h.pick_protocol("hermes");
    h.press(ctrl('t'));
    run(&mut h).await;
    h.press(alt('e'));
    let Some(Overlay::Request(v)) = &h.app.overlay else {
        panic!("the request view")
    };
    assert_eq!(v.title, "the request sent");
    let text = v.text.as_str().to_string();
    assert!(text.starts_with("POST http://127.0.0.1:"), "{text}");
    assert!(
        text.contains("── the tool prompt hermes rendered"),
        "{text}"
    );
    assert!(text.contains("── the response format that emulates tool choice required"));
    h.press(key(KeyCode::PageDown));
    assert!(
        h.screen().contains("lines "),
        "the position shows: {}",
        h.screen()
    );
    h.press(key(KeyCode::Esc));

    // Compare columns, one after the other.
    h.press(alt('k'));
    h.run_to_end().await;
    h.press(alt('e'));
    let title = |h: &Harness| match &h.app.overlay {
        Some(Overlay::Request(v)) => v.title.clone(),
        _ => panic!("the request view"),
    };
    assert!(title(&h).starts_with("column auto"), "{}", title(&h));
    h.press(key(KeyCode::Right));
    assert!(title(&h).starts_with("column required"), "{}", title(&h));
    h.press(key(KeyCode::Esc));
    h.press(key(KeyCode::Esc));

    // A replay: the request recorded in the session.
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions/mode-auto.json");
    let session = toolscope_core::session::Session::load(&path).unwrap();
    h.app.pace = toolscope::app::Pace::Instant;
    h.press(Message::SessionLoaded {
        path,
        result: Ok(Box::new(session)),
    });
    h.press(alt('e'));
    assert!(
        title(&h).starts_with("recorded in the session"),
        "{}",
        title(&h)
    );
}

#[tokio::test]
async fn search_finds_marks_and_steps_through_matches() {
    let mut h = Harness::new(160, 48);
    h.app.choice = ToolChoice::None;
    run(&mut h).await;
    let text = h.app.run.shown.output.as_str().to_string();
    let n = text.to_lowercase().matches("no").count();
    assert!(n >= 2, "{text}");
    h.app.focus = Focus::Raw;
    h.press(key(KeyCode::Char('/')));
    h.type_text("no");
    assert!(
        h.screen().contains("/no▏"),
        "the query shows as it is typed"
    );
    h.press(key(KeyCode::Enter));
    let s = h.app.search.clone().unwrap();
    assert_eq!(s.count, n);
    let first = s.at.unwrap();
    assert_eq!(text[first..first + 2].to_lowercase(), "no");
    assert!(
        h.screen().contains(&format!("{n} matches")),
        "{}",
        h.screen()
    );
    // The matches in view are marked in the match colours.
    let theme = h.app.theme().clone();
    let marked = h
        .driver
        .terminal()
        .backend()
        .buffer()
        .content
        .iter()
        .filter(|c| c.bg == theme.ui.warning)
        .count();
    assert!(marked >= 2 * n, "{marked} cells marked");
    h.press(key(KeyCode::Char('n')));
    let second = h.app.search.as_ref().unwrap().at.unwrap();
    assert!(second > first);
    h.press(key(KeyCode::Char('N')));
    assert_eq!(h.app.search.as_ref().unwrap().at, Some(first));
    h.press(key(KeyCode::Esc));
    assert!(h.app.search.is_none());
    // In the Parts pane a match selects its row.
    h.app.focus = Focus::Parts;
    h.press(key(KeyCode::Char('/')));
    h.type_text("finish");
    h.press(key(KeyCode::Enter));
    let i = h.app.run.cursor.selected.unwrap();
    assert_eq!(h.app.run.record.parts.rows[i].label, "finish");
    assert!(h.screen().contains(&format!("row {} of", i + 1)));
}

#[tokio::test]
async fn native_calls_are_labelled_with_their_tool_in_the_raw_pane() {
    let mut h = Harness::new(160, 48);
    run(&mut h).await;
    let out = h.app.run.shown.output.as_str();
    assert!(out.starts_with("▸ get_weather #call_"), "{out}");
    assert!(h.screen().contains("▸ get_weather #call_"));
}

#[tokio::test]
async fn a_message_is_edited_deleted_and_the_conversation_runs_again_from_it() {
    let mut h = Harness::new(160, 48);
    h.app.choice = ToolChoice::None;
    run(&mut h).await;
    h.type_text("And in Rome?");
    run(&mut h).await;
    assert_eq!(h.app.prompt.history().len(), 4);
    focus(&mut h, Focus::Transcript);
    h.press(key(KeyCode::Home));
    assert_eq!(h.app.prompt.selected, 0);
    // Edit the first question.
    h.press(key(KeyCode::Char('e')));
    assert!(
        h.screen().contains("Edit message 1 (user)"),
        "{}",
        h.screen()
    );
    h.press(key(KeyCode::End));
    h.type_text(" Please.");
    h.press(key(KeyCode::Enter));
    assert!(h.app.overlay.is_none());
    let Msg::User { content } = &h.app.prompt.history()[0] else {
        panic!("a user message")
    };
    assert!(content.ends_with(" Please."), "{content}");
    // Run again from it: the three later messages go, after asking.
    h.press(key(KeyCode::Char('r')));
    assert!(
        h.screen().contains("Run again from message 1?"),
        "{}",
        h.screen()
    );
    assert!(
        h.screen().contains("the 3 later messages"),
        "{}",
        h.screen()
    );
    h.press(key(KeyCode::Char('y')));
    assert_eq!(h.app.run.record.request.as_ref().unwrap().messages.len(), 1);
    h.run_to_end().await;
    assert_eq!(h.app.prompt.history().len(), 2);
    // Delete the answer, after asking.
    focus(&mut h, Focus::Transcript);
    h.press(key(KeyCode::End));
    h.press(key(KeyCode::Char('d')));
    assert!(h.screen().contains("Delete message 2 (assistant)?"));
    h.press(key(KeyCode::Char('y')));
    assert_eq!(h.app.prompt.history().len(), 1);
}

#[tokio::test]
async fn the_picker_lists_the_models_and_applies_the_settings() {
    let mut h = Harness::new(160, 48);
    h.press(ctrl('p'));
    h.until("the demo model's models are listed", |a| {
        matches!(&a.overlay, Some(Overlay::Picker(p))
            if matches!(p.models, toolscope::app::picker::ModelList::Listed { .. }))
    })
    .await;
    assert!(h.screen().contains("1 of 1 listed"), "{}", h.screen());
    let to = |h: &mut Harness, f: toolscope::app::picker::PickerField| {
        for _ in 0..10 {
            if matches!(&h.app.overlay, Some(Overlay::Picker(p)) if p.field == f) {
                return;
            }
            h.press(key(KeyCode::Tab));
        }
        panic!("no field {f:?}");
    };
    use toolscope::app::picker::PickerField;
    to(&mut h, PickerField::Temperature);
    h.type_text("0.3");
    to(&mut h, PickerField::Seed);
    h.type_text("7x");
    assert!(h.screen().contains("✗ seed: \"7x\""), "{}", h.screen());
    h.press(key(KeyCode::Enter));
    assert!(h.app.overlay.is_some(), "a bad seed is not applied");
    h.press(key(KeyCode::Backspace));
    to(&mut h, PickerField::Parallel);
    h.press(key(KeyCode::Right));
    h.press(key(KeyCode::Right));
    to(&mut h, PickerField::Effort);
    h.press(key(KeyCode::Right));
    h.press(key(KeyCode::Enter));
    assert!(h.app.overlay.is_none());
    h.press(ctrl('r'));
    let s = &h.app.run.record.request.as_ref().unwrap().sampling;
    assert_eq!(s.temperature, Some(0.3));
    assert_eq!(s.seed, Some(7));
    assert_eq!(s.parallel_tool_calls, Some(false));
    assert_eq!(
        s.reasoning_effort,
        Some(toolscope_core::provider::ReasoningEffort::Minimal)
    );
    h.run_to_end().await;
}

#[tokio::test]
async fn the_theme_settings_tools_and_prompt_are_remembered() {
    let dir = temp_dir("remember");
    let files = toolscope::app::StateFiles {
        settings: Some(dir.join("config").join("settings.toml")),
        last: Some(dir.join("data").join("last.json")),
    };
    let mut a = tui_support::app(160, 48);
    a.state = files.clone();
    let mut h = Harness::with(a, None);
    h.press(key(KeyCode::F(1)));
    h.press(key(KeyCode::Right));
    h.press(key(KeyCode::Esc));
    let settings = std::fs::read_to_string(files.settings.as_ref().unwrap()).unwrap();
    assert!(settings.contains("theme = \"light\""), "{settings}");
    write_message(&mut h, "Remember me");
    assert_eq!(h.press(ctrl('q')), Flow::Quit);
    let last = std::fs::read_to_string(files.last.as_ref().unwrap()).unwrap();
    let (state, problems) = toolscope::app::Remembered::parse(
        Some(("settings.toml", &settings)),
        Some(("last.json", &last)),
    );
    assert!(problems.is_empty(), "{problems:?}");
    let mut setup = toolscope::app::Setup::default();
    state.apply(&mut setup, &toolscope::app::providers::all());
    assert_eq!(setup.theme, "light");
    assert_eq!(setup.prompt, "Remember me");
    assert!(setup.tools.contains("get_weather"));
    assert!(!settings.contains("API_KEY") && !last.contains("API_KEY"));
}

#[tokio::test]
async fn compare_judges_the_tool_choice_and_the_calls() {
    let mut h = Harness::new(160, 48);
    h.app.tools.set_text(
        r#"[{"name":"set_code","description":"Set the door code.","parameters":{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]{4}$"}},"required":["code"]}}]"#,
    );
    write_message(&mut h, "Set the door code please");
    h.press(alt('k'));
    h.run_to_end().await;
    let c = h.app.compare.as_ref().unwrap();
    let judged: Vec<Vec<String>> = c
        .columns
        .iter()
        .zip(&c.choices)
        .map(|(v, choice)| {
            toolscope::app::compare::judge(v, choice.as_ref())
                .into_iter()
                .map(|j| j.text)
                .collect()
        })
        .collect();
    assert_eq!(judged[1][0], "✓ required: honoured", "{judged:?}");
    assert!(
        judged[1][1].starts_with("✗ set_code invalid at /code:"),
        "{judged:?}"
    );
    assert_eq!(judged[2], ["✓ none: honoured"], "{judged:?}");
    assert_eq!(judged[3][0], "✓ set_code forced: honoured", "{judged:?}");
    let screen = h.screen();
    assert!(screen.contains("✗ set_code invalid at /code"), "{screen}");
}

// 5 and 10. A compare column's verdict, judgement and figures were cut at the column's edge
// ("✓ get_weather forced: honou…"); they wrap at words and read whole.
#[tokio::test]
async fn compare_headings_wrap_at_words_and_read_whole() {
    for (w, hgt) in [(80, 24), (120, 36), (160, 48)] {
        let mut h = Harness::new(w, hgt);
        h.press(alt('k'));
        h.run_to_end().await;
        // At 80 columns one column shows at a time: each is looked at in turn (→).
        for _ in 0..h.app.compare.as_ref().unwrap().columns.len() {
            let Screen::Compare(areas) = layout::screen(Rect::new(0, 0, w, hgt), &h.app) else {
                panic!("the compare screen")
            };
            let c = h.app.compare.as_ref().unwrap();
            for ((col, view), choice) in areas.columns.iter().zip(&c.columns).zip(&c.choices) {
                if col.width == 0 {
                    continue;
                }
                let rows = rows_in(&h, layout::inner(*col));
                // A word wider than the column breaks inside; compare without the spaces.
                let words = |s: &str| s.split_whitespace().collect::<String>();
                let shown = words(&rows.join(" "));
                let mut heading = vec![toolscope::app::compare::verdict(view).text];
                heading.extend(
                    toolscope::app::compare::judge(view, choice.as_ref())
                        .into_iter()
                        .map(|j| j.text),
                );
                heading.push(toolscope::app::compare::stats(view));
                for text in heading {
                    assert!(
                        shown.contains(&words(&text)),
                        "{w}x{hgt}: {text:?} is not whole in\n{}",
                        rows.join("\n")
                    );
                }
            }
            h.press(key(KeyCode::Right));
        }
    }
}

// 5. An error in the Parts pane reads whole: Enter on it shows its full message.
#[tokio::test]
async fn d05_an_error_part_reads_whole() {
    let mut h = Harness::new(80, 24);
    write_message(&mut h, "#429 What's the weather in Lima?");
    run(&mut h).await;
    let message = first_error(&h.app).expect("an error part").message;
    assert!(message.len() > 80, "longer than a row: {message}");
    h.app.focus = Focus::Parts;
    for _ in 0..10 {
        let i = h.app.run.cursor.selected.unwrap_or(0);
        if h.app.run.record.parts.rows[i].label == "error" {
            break;
        }
        h.press(key(KeyCode::Up));
    }
    h.press(key(KeyCode::Enter));
    let Some(Overlay::Detail(d)) = &h.app.overlay else {
        panic!("a detail view:\n{}", h.screen())
    };
    assert!(d.as_str().contains(&message), "{}", d.as_str());
    let words = |s: &str| s.split_whitespace().collect::<String>();
    assert!(
        words(&h.screen().replace(['│', '┃', '"'], "")).contains(&words(&message)),
        "{}",
        h.screen()
    );
}

// Issue 30: Ctrl+N's question did not mention a typed, unsent tool result, which was then lost
// (and with the turns saved, it did not ask at all).
#[tokio::test]
async fn a_new_conversation_names_the_typed_results_it_would_drop() {
    let mut h = Harness::new(160, 48);
    run(&mut h).await;
    assert_eq!(h.app.prompt.pending.len(), 1, "the demo calls a tool");
    assert_eq!(h.app.focus, Focus::Result(0));
    h.type_text("sunny");
    // The turns were saved: only the typed result would be lost.
    h.app.unsaved_turns = false;
    h.press(ctrl('n'));
    let screen = h.screen();
    assert!(h.app.overlay.is_some(), "it asks first:\n{screen}");
    assert!(
        screen.contains("the typed result of get_weather is dropped, unsent"),
        "{screen}"
    );
    // Esc keeps it.
    h.press(key(KeyCode::Esc));
    assert_eq!(h.app.prompt.typed_results(), vec!["get_weather"]);
}

/// In an editor the readline chords edit (Ctrl+A start, Ctrl+E end, Ctrl+W the word back,
/// Ctrl+U to the start, Ctrl+K to the end of the line) and open nothing; Alt+K compares and
/// Alt+E shows the request from there, and Ctrl+K and Ctrl+E still do outside an editor.
#[test]
fn readline_keys_in_editors_and_the_actions_they_shadowed() {
    let mut a = tui_support::app(160, 48);
    a.focus = Focus::Composer;
    a.prompt.composer = editor::prose("");
    let typed = |a: &mut App, s: &str| {
        for c in s.chars() {
            tui_support::send(a, key(KeyCode::Char(c)));
        }
    };
    typed(&mut a, "hello big world");
    tui_support::send(&mut a, ctrl('a'));
    assert_eq!(
        a.prompt.composer.cursor(),
        ratatui_textarea::DataCursor(0, 0)
    );
    tui_support::send(&mut a, ctrl('e'));
    assert!(
        a.overlay.is_none(),
        "Ctrl+E in an editor is not the request"
    );
    assert_eq!(
        a.prompt.composer.cursor(),
        ratatui_textarea::DataCursor(0, 15)
    );
    tui_support::send(&mut a, ctrl('w'));
    assert_eq!(composer(&a), "hello big ");
    for _ in 0..4 {
        tui_support::send(&mut a, key(KeyCode::Left));
    }
    tui_support::send(&mut a, ctrl('k'));
    assert!(a.overlay.is_none() && a.compare.is_none(), "Ctrl+K edits");
    assert_eq!(composer(&a), "hello ");
    typed(&mut a, "there");
    tui_support::send(&mut a, ctrl('u'));
    assert_eq!(composer(&a), "", "Ctrl+U clears to the start");
    // The same in the Tools JSON editor.
    a.focus = Focus::Tools;
    let before = a.tools.text();
    tui_support::send(&mut a, ctrl('e'));
    tui_support::send(&mut a, ctrl('u'));
    assert!(a.overlay.is_none());
    assert_ne!(a.tools.text(), before, "Ctrl+U cleared the line's start");
    tui_support::send(&mut a, ctrl('z'));
    assert_eq!(a.tools.text(), before);
    // Alt+E and Alt+K from an editor; Ctrl+E and Ctrl+K where no editor has the focus.
    a.focus = Focus::Composer;
    typed(&mut a, "Weather in Paris?");
    tui_support::send(&mut a, alt('e'));
    assert!(matches!(a.overlay, Some(Overlay::Request(_))), "Alt+E");
    tui_support::send(&mut a, key(KeyCode::Esc));
    a.focus = Focus::Raw;
    tui_support::send(&mut a, ctrl('e'));
    assert!(matches!(a.overlay, Some(Overlay::Request(_))), "Ctrl+E");
    tui_support::send(&mut a, key(KeyCode::Esc));
    a.focus = Focus::Composer;
    tui_support::send(&mut a, alt('k'));
    assert!(a.compare.is_some(), "Alt+K compares (at once on the demo)");
    tui_support::send(&mut a, key(KeyCode::Esc));
    tui_support::send(&mut a, key(KeyCode::Esc));
    assert!(a.compare.is_none());
    a.focus = Focus::Parts;
    tui_support::send(&mut a, ctrl('k'));
    assert!(a.compare.is_some(), "Ctrl+K outside an editor");
}
