//! The state machine, driven by messages alone: no terminal, no network, no clock.

use ratatui::crossterm::event::{
    KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use serde_json::json;

use super::*;
use crate::app::theme::Themes;
use crate::app::{RunId, RunState, Setup};
use toolscope_core::part::{FinishReason, Part, ToolCall};
use toolscope_core::provider::{Message as Msg, OutputText, Request, RunEvent};
use toolscope_core::tool::ToolChoice;

fn app() -> App {
    let mut app = App::new(Setup::default(), Themes::built_in());
    app.size = (160, 48);
    app
}

fn key(code: KeyCode) -> Message {
    Message::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

fn ctrl(c: char) -> Message {
    Message::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL))
}

fn alt(c: char) -> Message {
    Message::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::ALT))
}

fn started(fx: &[Effect]) -> Vec<(RunId, Request)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::StartRun { id, request } => Some((*id, (**request).clone())),
            _ => None,
        })
        .collect()
}

fn weather_call(id: &str) -> ToolCall {
    ToolCall {
        tool_call_id: id.into(),
        tool_name: "get_weather".into(),
        input: json!({"city": "Paris", "days": 3}),
        coercions: vec![],
        invalid: vec![],
        ..Default::default()
    }
}

/// Feeds a run that calls get_weather.
fn answer_with_call(app: &mut App, id: RunId) {
    let events = [
        RunEvent::Part(Part::ToolInputStart {
            id: "c1".into(),
            tool_name: "get_weather".into(),
        }),
        RunEvent::Output(OutputText {
            text: "{\"city\":\"Paris\",\"days\":3}".into(),
            tool_call_id: Some("c1".into()),
        }),
        RunEvent::Part(Part::tool_call(weather_call("c1"))),
        RunEvent::Part(Part::Finish {
            finish_reason: FinishReason::ToolCalls,
            usage: None,
        }),
    ];
    for (i, event) in events.into_iter().enumerate() {
        update(
            app,
            Message::Run {
                id,
                at_ms: 10 * i as u64,
                event,
            },
        );
    }
    update(app, Message::RunEnded { id, at_ms: 40 });
}

#[test]
fn ctrl_r_sends_the_request_the_panes_describe() {
    let mut app = app();
    let fx = update(&mut app, ctrl('r'));
    let runs = started(&fx);
    assert_eq!(runs.len(), 1);
    let (id, r) = &runs[0];
    assert_eq!(app.run.record.id, Some(*id));
    assert!(app.run.is_running());
    assert_eq!(r.provider, toolscope_demo::provider());
    assert_eq!(r.tools.len(), 3);
    assert_eq!(r.tool_choice, Some(ToolChoice::Auto));
    assert_eq!(r.protocol, None);
    assert_eq!(
        r.system.as_deref(),
        Some(super::super::prompt::EXAMPLE_SYSTEM)
    );
    assert_eq!(
        r.messages,
        [Msg::user(super::super::prompt::EXAMPLE_PROMPT)]
    );
}

#[test]
fn ctrl_t_and_ctrl_l_change_the_next_run() {
    let mut app = app();
    update(&mut app, ctrl('t'));
    assert_eq!(app.choice, ToolChoice::Required);
    update(&mut app, ctrl('t'));
    update(&mut app, ctrl('t'));
    assert_eq!(app.choice, ToolChoice::Tool("get_weather".into()));
    // Ctrl+L opens the picker; a typed filter and Enter choose.
    update(&mut app, ctrl('l'));
    assert!(matches!(
        app.overlay,
        Some(super::super::Overlay::Protocols(_))
    ));
    for c in "herm".chars() {
        update(&mut app, key(KeyCode::Char(c)));
    }
    update(&mut app, key(KeyCode::Enter));
    assert!(app.overlay.is_none());
    assert_eq!(app.protocol_name(), "hermes");
    let fx = update(&mut app, ctrl('r'));
    let (_, r) = &started(&fx)[0];
    assert_eq!(r.tool_choice, Some(ToolChoice::Tool("get_weather".into())));
    assert_eq!(r.protocol.as_ref().map(|p| p.name()), Some("hermes"));
    // Native is the first entry.
    update(&mut app, ctrl('l'));
    update(&mut app, key(KeyCode::Home));
    update(&mut app, key(KeyCode::Enter));
    assert_eq!(app.protocol_name(), "native");
}

#[test]
fn esc_cancels_and_late_events_are_dropped() {
    let mut app = app();
    let fx = update(&mut app, ctrl('r'));
    let (id, _) = started(&fx)[0].clone();
    let fx = update(&mut app, key(KeyCode::Esc));
    assert!(matches!(fx[..], [Effect::CancelRun { id: c }] if c == id));
    assert_eq!(app.run.record.state, RunState::Cancelled);
    answer_with_call(&mut app, id);
    assert!(
        app.run.record.parts.is_empty(),
        "events after the cancel are dropped"
    );
    assert!(app.prompt.pending.is_empty());
    assert_eq!(
        app.prompt.history().len(),
        1,
        "the question stays, unanswered"
    );
    // Nothing running: Esc does nothing more.
    assert!(update(&mut app, key(KeyCode::Esc)).is_empty());
}

#[test]
fn a_forced_tool_that_is_gone_is_refused_before_sending() {
    let mut app = app();
    app.choice = ToolChoice::Tool("nope".into());
    let fx = update(&mut app, ctrl('r'));
    assert!(started(&fx).is_empty());
    assert_eq!(app.run.record.state.word(), "not sent");
    assert!(matches!(app.run.record.parts.parts[..], [Part::Error(_)]));
    assert!(app.notice.as_ref().unwrap().error);
}

#[test]
fn broken_tools_are_refused_before_sending() {
    let mut app = app();
    app.focus = Focus::Tools;
    let fx = update(&mut app, key(KeyCode::Char('x')));
    // The check waits for typing to pause, then runs on the message it asked for.
    let later = fx.iter().find_map(|e| match e {
        Effect::Later { message, .. } => Some((**message).clone()),
        _ => None,
    });
    assert!(app.tools.problem().is_none());
    update(&mut app, later.expect("a check after the pause"));
    assert!(app.tools.problem().is_some());
    let fx = update(&mut app, ctrl('r'));
    assert!(started(&fx).is_empty());
    assert!(matches!(app.run.record.state, RunState::NotSent { .. }));
    assert!(
        app.prompt.user_text().is_some(),
        "a refused request leaves the message where it was"
    );
}

#[test]
fn a_turn_with_a_call_continues_with_the_typed_result() {
    let mut app = app();
    let fx = update(&mut app, ctrl('r'));
    let (id, _) = started(&fx)[0].clone();
    answer_with_call(&mut app, id);
    assert_eq!(app.run.record.state, RunState::Done);
    assert_eq!(app.prompt.pending.len(), 1);
    assert_eq!(app.prompt.history().len(), 2, "the answer joined at once");
    assert_eq!(
        app.focus,
        Focus::Result(0),
        "the result field takes the focus"
    );
    // A message cannot follow the call before its result.
    app.prompt.composer.insert_str("and?");
    assert!(started(&update(&mut app, ctrl('r'))).is_empty());
    assert!(app.notice.as_ref().unwrap().text.contains("get_weather"));
    app.prompt.composer = editor::prose("");
    update(&mut app, Message::Paste("sunny, 21°C".into()));
    let fx = update(&mut app, ctrl('r'));
    let (_, r) = &started(&fx)[0];
    assert_eq!(
        r.messages,
        [
            Msg::user(super::super::prompt::EXAMPLE_PROMPT),
            Msg::assistant(None, vec![weather_call("c1")]),
            Msg::tool_result("c1", "sunny, 21°C"),
        ]
    );
}

#[test]
fn compare_starts_four_runs_and_esc_closes_it() {
    let mut app = app();
    let fx = update(&mut app, alt('k'));
    let runs = started(&fx);
    let choices: Vec<String> = runs
        .iter()
        .map(|(_, r)| r.tool_choice.as_ref().unwrap().label())
        .collect();
    assert_eq!(choices, ["auto", "required", "none", "tool:get_weather"]);
    assert!(app.is_running());
    let fx = update(&mut app, key(KeyCode::Esc));
    assert_eq!(fx.len(), 4, "all four are cancelled");
    update(&mut app, key(KeyCode::Esc));
    assert!(app.compare.is_none());
}

#[test]
fn tab_walks_the_panes_and_a_click_focuses_one() {
    let mut app = app();
    app.focus = Focus::Tools;
    let mut seen = vec![app.focus];
    for _ in 0..6 {
        update(&mut app, key(KeyCode::Tab));
        seen.push(app.focus);
    }
    // Tab into the Prompt pane lands in the message field, then goes on to the system prompt.
    assert_eq!(
        seen,
        [
            Focus::Tools,
            Focus::ToolChoice,
            Focus::Composer,
            Focus::System,
            Focus::Raw,
            Focus::Parts,
            Focus::Tools
        ]
    );
    // Back into it from below with Shift+Tab: the message field too.
    app.focus = Focus::Raw;
    update(&mut app, key(KeyCode::BackTab));
    assert_eq!(app.focus, Focus::Composer);
    update(&mut app, key(KeyCode::BackTab));
    assert_eq!(app.focus, Focus::ToolChoice);
    // The Raw pane sits at the bottom left.
    update(
        &mut app,
        Message::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column: 5,
            row: 40,
            modifiers: KeyModifiers::NONE,
        }),
    );
    assert_eq!(app.focus, Focus::Raw);
}

#[test]
fn parts_can_be_selected_and_copied() {
    let mut app = app();
    let fx = update(&mut app, ctrl('r'));
    let (id, _) = started(&fx)[0].clone();
    answer_with_call(&mut app, id);
    app.focus = Focus::Parts;
    update(&mut app, key(KeyCode::Up));
    update(&mut app, key(KeyCode::Up));
    assert_eq!(app.run.cursor.selected, Some(1));
    let fx = update(&mut app, key(KeyCode::Char('c')));
    match &fx[..] {
        [Effect::Copy { text }] => assert!(text.contains("\"type\":\"tool-call\""), "{text}"),
        other => panic!("{other:?}"),
    }
    update(&mut app, key(KeyCode::Enter));
    assert!(matches!(&app.overlay, Some(Overlay::Detail(d)) if d.title == "tool-call"));
    update(&mut app, key(KeyCode::Esc));
    assert!(app.overlay.is_none());
}

#[test]
fn the_picker_changes_provider_and_model_for_the_next_run() {
    let mut app = app();
    update(&mut app, ctrl('p'));
    assert!(matches!(app.overlay, Some(Overlay::Picker(_))));
    assert!(app.prompt.history().is_empty());
    update(&mut app, key(KeyCode::Right)); // demo → openai (wraps)
    update(&mut app, key(KeyCode::Enter));
    assert!(app.overlay.is_none());
    assert_eq!(app.provider, toolscope_core::provider::ProviderKind::OPENAI);
    assert_eq!(app.model, "gpt-4o-mini");
}

#[test]
fn help_changes_the_theme_and_quit_is_an_effect() {
    let mut app = app();
    update(&mut app, key(KeyCode::F(1)));
    update(&mut app, key(KeyCode::Right));
    assert_eq!(app.theme, "light");
    update(&mut app, key(KeyCode::Esc));
    assert!(app.overlay.is_none());
    F2_toggles(&mut app);
    let fx = update(&mut app, ctrl('q'));
    assert!(matches!(fx[..], [Effect::Quit]));
}

#[allow(non_snake_case)]
fn F2_toggles(app: &mut App) {
    update(app, key(KeyCode::F(2)));
    assert_eq!(app.raw_mode, RawMode::Wire);
    update(app, key(KeyCode::F(2)));
    assert_eq!(app.raw_mode, RawMode::Output);
}

#[test]
fn saving_and_loading_tools_go_through_effects() {
    let mut app = app();
    update(&mut app, key(KeyCode::F(4)));
    let fx = update(&mut app, key(KeyCode::Enter));
    match &fx[..] {
        [Effect::SaveFile { path, contents, .. }] => {
            assert_eq!(path.to_str(), Some("tools.json"));
            assert!(contents.contains("get_weather"));
        }
        other => panic!("{other:?}"),
    }
    update(&mut app, key(KeyCode::F(3)));
    let fx = update(&mut app, key(KeyCode::Enter));
    assert!(matches!(fx[..], [Effect::LoadFile { .. }]));
    update(
        &mut app,
        Message::FileLoaded {
            purpose: FilePurpose::Tools,
            path: "t.json".into(),
            result: Ok(r#"[{"name":"only","parameters":{"type":"object"}}]"#.into()),
        },
    );
    assert_eq!(app.tools.valid.len(), 1);
    assert!(app.notice.as_ref().unwrap().text.contains("loaded 1 tools"));
}

/// A failed provider run: an error part, then the end of the stream.
fn fail(app: &mut App, id: RunId) {
    let error = toolscope_core::error::ProviderError::new(
        toolscope_core::error::ErrorCategory::ProviderUnavailable,
        "connection refused",
    );
    update(
        app,
        Message::Run {
            id,
            at_ms: 5,
            event: RunEvent::Part(Part::Error(Box::new(error.to_part()))),
        },
    );
    update(app, Message::RunEnded { id, at_ms: 6 });
}

/// The conversation after one question answered with a get_weather call, its result typed.
fn answered_once(app: &mut App) -> Vec<Msg> {
    let fx = update(app, ctrl('r'));
    let (id, _) = started(&fx)[0].clone();
    answer_with_call(app, id);
    app.prompt.results[0] = ratatui_textarea::TextArea::from(["18°C"]);
    assert_eq!(app.prompt.history().len(), 2);
    app.prompt.history().to_vec()
}

#[test]
fn a_rerun_that_fails_gives_the_earlier_answer_back() {
    // Ctrl+R with nothing new typed runs the last turn again, its answer set aside.
    let mut app = app();
    let before = answered_once(&mut app);
    app.prompt.results[0] = ratatui_textarea::TextArea::default();
    let fx = update(&mut app, ctrl('r'));
    let (id, request) = started(&fx)[0].clone();
    assert_eq!(request.messages, before[..1]);
    assert_eq!(app.prompt.history().len(), 1, "set aside while it runs");
    fail(&mut app, id);
    assert_eq!(
        app.prompt.history(),
        before,
        "the failed re-run took the answer"
    );
    assert_eq!(
        app.prompt.pending.len(),
        1,
        "its call waits for a result again"
    );
    assert_eq!(app.prompt.results.len(), 1);
    assert!(
        app.notice
            .as_ref()
            .unwrap()
            .text
            .contains("the re-run brought no answer")
    );

    // `r` on the answer, then Esc while it streams: the answer and its typed result come back.
    let mut app = self::app();
    let before = answered_once(&mut app);
    app.focus = Focus::Transcript;
    app.prompt.selected = 1;
    update(&mut app, key(KeyCode::Char('r')));
    // It asks first (the answer goes), then runs.
    let fx = update(&mut app, key(KeyCode::Char('y')));
    assert_eq!(started(&fx).len(), 1);
    assert_eq!(app.prompt.history().len(), 1);
    update(&mut app, key(KeyCode::Esc));
    assert!(!app.run.is_running());
    assert_eq!(app.prompt.history(), before);
    assert_eq!(
        super::super::editor::text_of(&app.prompt.results[0]),
        "18°C"
    );

    // A re-run that answers replaces the answer for good.
    let mut app = self::app();
    answered_once(&mut app);
    app.prompt.results[0] = ratatui_textarea::TextArea::default();
    let fx = update(&mut app, ctrl('r'));
    let (id, _) = started(&fx)[0].clone();
    answer_with_call(&mut app, id);
    assert_eq!(app.prompt.history().len(), 2);
    // Nothing is set aside any more: a later stop or failure has nothing to give back.
    assert!(!app.prompt.rerun_ended(Some(id), false));
    assert!(!app.prompt.rerun_ended(None, false));
}

/// Ctrl+K sends one request per tool-choice mode: to the demo at once, to any other provider
/// only after asking, with the count and the destination in the question.
#[test]
fn compare_asks_before_sending_several_requests_to_a_real_provider() {
    let mut app = app();
    assert_eq!(
        started(&update(&mut app, alt('k'))).len(),
        4,
        "the demo: at once"
    );

    let mut app = self::app();
    app.provider = toolscope_core::provider::ProviderKind::OPENAI;
    app.model = "gpt-x".into();
    app.base_url = Some("http://127.0.0.1:9/v1".into());
    assert!(started(&update(&mut app, alt('k'))).is_empty());
    let Some(super::super::Overlay::Confirm(c)) = &app.overlay else {
        panic!("asks: {:?}", app.overlay.is_some())
    };
    assert_eq!(c.question, "Send 4 requests to openai (gpt-x)?");
    // No: nothing is sent.
    assert!(started(&update(&mut app, key(KeyCode::Char('n')))).is_empty());
    assert!(app.overlay.is_none() && app.compare.is_none());
    // Yes: the four requests go.
    update(&mut app, alt('k'));
    let runs = started(&update(&mut app, key(KeyCode::Char('y'))));
    assert_eq!(runs.len(), 4);
    assert!(
        runs.iter()
            .all(|(_, r)| r.provider == toolscope_core::provider::ProviderKind::OPENAI)
    );
    assert!(app.compare.is_some());
}

/// Alt+= and Alt+- grow and shrink the focused pane (its row's width and the rows' heights),
/// within bounds; Alt+0 goes back to the automatic shares. The shares are remembered in the
/// settings file, and a playground started from it lays its panes out the same.
#[test]
fn splits_resize_with_keys_and_are_remembered() {
    use super::super::layout::{self, Screen, Splits};
    use super::super::remember::{Remembered, SettingsWrite};
    let areas = |a: &App| match layout::screen(ratatui::layout::Rect::new(0, 0, 160, 48), a) {
        Screen::Main(m) => m,
        other => panic!("{other:?}"),
    };
    let mut app = app();
    app.state.settings = Some("settings.toml".into());
    app.focus = Focus::Tools;
    let before = areas(&app);
    let fx = update(&mut app, alt('='));
    let after = areas(&app);
    assert!(after.tools.width > before.tools.width, "wider");
    assert!(after.tools.height > before.tools.height, "taller");
    assert!(after.raw.height < before.raw.height);
    let Some(Effect::Remember { state, .. }) = fx.last() else {
        panic!("remembered: {fx:?}")
    };
    let SettingsWrite::Edit(text) = state.settings_write(None) else {
        panic!("written")
    };
    assert!(
        text.contains("[layout]") && text.contains("tools = 55"),
        "{text}"
    );
    // Read back at the next start: the same layout.
    let (read, problems) = Remembered::parse(Some(("settings.toml", &text)), None);
    assert!(problems.is_empty(), "{problems:?}");
    let mut setup = Setup::default();
    read.apply(&mut setup, &crate::app::providers::all());
    assert_eq!(setup.splits, app.splits);
    let mut again = App::new(setup, Themes::built_in());
    again.size = (160, 48);
    assert_eq!(areas(&again), after);
    // The Parts pane grows to the left and up; shares stop at their bounds.
    app.focus = Focus::Parts;
    for _ in 0..20 {
        update(&mut app, alt('='));
    }
    assert_eq!(app.splits.raw, Splits::MIN);
    assert_eq!(app.splits.top, Some(Splits::MIN));
    let fx = update(&mut app, alt('='));
    assert!(fx.is_empty(), "nothing changed, nothing written");
    assert!(
        app.notice
            .as_ref()
            .unwrap()
            .text
            .contains("as large or as small")
    );
    update(&mut app, alt('-'));
    assert_eq!(app.splits.raw, Splits::MIN + Splits::STEP);
    update(&mut app, alt('0'));
    assert_eq!(app.splits, Splits::default());
    assert_eq!(areas(&app), before);
}
