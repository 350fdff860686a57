//! The verify battery in the playground (Alt+S), driven by keys: the whole playground on a
//! `TestBackend`, the battery sent over real loopback HTTP to the demo model (or to a demo
//! server with a known fault switched on). The tests wait for the engine's messages, never for
//! a fixed time.

mod tui_support;

use std::net::SocketAddr;

use ratatui::crossterm::event::KeyCode;

use toolscope::app::{Effect, Overlay, update};
use toolscope::verify::battery::Ending;
use toolscope_core::provider::ProviderKind;
use toolscope_demo::{DemoOptions, Persona};
use tui_support::harness::Harness;
use tui_support::{alt, app, key, notice_text};

#[tokio::test]
async fn alt_s_on_the_demo_runs_the_battery_and_scores_100_percent() {
    let mut h = Harness::new(160, 48);
    h.press(alt('s'));
    // The demo costs nothing: no question, the battery runs at once.
    assert!(h.app.overlay.is_none());
    let v = h.app.verify.as_ref().expect("a battery");
    assert!(v.is_running() && v.shown);
    let total = v.total;
    assert_eq!(total, 2 * v.suite.scenarios.len());
    h.until("the battery ends", |a| {
        a.verify.as_ref().is_some_and(|v| !v.is_running())
    })
    .await;
    let v = h.app.verify.as_ref().unwrap();
    assert_eq!(v.ending, Some(Ending::Complete));
    let r = v.report.as_ref().unwrap();
    assert_eq!(
        (r.requests.done, r.requests.planned),
        (total as u32, total as u32)
    );
    assert_eq!(r.overall.score, 1.0, "{:?}", r.faults());
    assert!(v.failures.is_empty());
    // The scorecard is the command line's, line for line.
    assert_eq!(
        v.lines,
        toolscope::verify::report::render(r, None)
            .lines()
            .collect::<Vec<_>>()
    );
    let screen = h.screen();
    assert!(screen.contains("scorecard"), "{screen}");
    assert!(
        screen.contains("score: 100% of answers fully right"),
        "{screen}"
    );
    assert!(
        screen.contains(&format!("done: {total} requests")),
        "{screen}"
    );
    // Esc closes the view; the panes are back.
    h.press(key(KeyCode::Esc));
    assert!(h.app.verify.is_none());
    assert!(h.screen().contains("Parts"));
}

#[test]
fn another_provider_asks_first_saying_how_many_requests_go_where() {
    let mut a = app(160, 48);
    a.provider = ProviderKind::from_name("anthropic").unwrap();
    a.model = "claude-x".into();
    let n = 2 * toolscope::verify::suite::Suite::bundled().scenarios.len();
    let fx = update(&mut a, alt('s'));
    assert!(fx.is_empty(), "nothing is sent before the answer");
    let Some(Overlay::Confirm(c)) = &a.overlay else {
        panic!("a question")
    };
    assert_eq!(
        c.question,
        format!("Send {n} requests to anthropic (claude-x)?")
    );
    assert!(
        c.details[0].contains("each streamed and whole"),
        "{:?}",
        c.details
    );
    // No: nothing runs.
    let fx = update(&mut a, key(KeyCode::Char('n')));
    assert!(fx.is_empty() && a.verify.is_none() && a.overlay.is_none());
    // Yes: the battery starts on the playground's target.
    update(&mut a, alt('s'));
    let fx = update(&mut a, key(KeyCode::Char('y')));
    let started = fx.iter().find_map(|e| match e {
        Effect::StartVerify { template, .. } => Some(template.clone()),
        _ => None,
    });
    let t = started.expect("the battery starts");
    assert_eq!(
        (t.provider.name(), t.model.as_str()),
        ("anthropic", "claude-x")
    );
    assert_eq!(t.sampling.temperature, Some(0.0));
    // A provider that needs a token bound gets its default one.
    assert_eq!(t.sampling.max_tokens, t.provider.default_max_tokens());
    assert!(t.sampling.max_tokens.is_some());
    assert!(a.verify.as_ref().is_some_and(|v| v.is_running()));
}

#[tokio::test]
async fn esc_stops_a_running_battery_and_keeps_what_was_measured() {
    let mut h = Harness::new(160, 48);
    h.press(alt('s'));
    h.until("three answers", |a| {
        a.verify.as_ref().is_some_and(|v| v.answers.len() >= 3)
    })
    .await;
    // Typing is not blocked: the view hides and the panes take keys while it runs.
    h.press(alt('s'));
    assert!(!h.app.verify.as_ref().unwrap().shown);
    assert!(h.screen().contains("✓ verify "), "{}", h.screen());
    h.press(alt('s'));
    let measured = h.app.verify.as_ref().unwrap().answers.len();
    let total = h.app.verify.as_ref().unwrap().total;
    h.press(key(KeyCode::Esc));
    let v = h.app.verify.as_ref().unwrap();
    assert_eq!(v.ending, Some(Ending::Stopped));
    let r = v.report.as_ref().unwrap();
    assert_eq!(r.requests.done as usize, measured);
    assert!(!r.complete);
    assert!(
        h.screen()
            .contains(&format!("stopped after {measured} of {total} requests")),
        "{}",
        h.screen()
    );
    assert!(notice_text(&h.app).contains("verify stopped"));
    // Whatever the stopped battery still had queued changes nothing.
    while let Ok(Some(m)) = tokio::time::timeout(
        std::time::Duration::from_millis(200),
        h.driver.next_engine_message(),
    )
    .await
    {
        h.press(m);
    }
    assert_eq!(h.app.verify.as_ref().unwrap().answers.len(), measured);
    // A second Esc closes the view.
    h.press(key(KeyCode::Esc));
    assert!(h.app.verify.is_none());
}

#[tokio::test]
async fn a_failed_answer_opens_as_a_session() {
    let server = toolscope_demo::serve_persona(
        SocketAddr::from(([127, 0, 0, 1], 0)),
        DemoOptions::instant(),
        Some(Persona::DropParallel),
    )
    .await
    .unwrap();
    let mut a = app(160, 48);
    a.provider = ProviderKind::from_name("openai").unwrap();
    a.base_url = Some(server.base_url());
    let mut h = battery_to_its_end(a, "the battery ends").await;
    let v = h.app.verify.as_ref().unwrap();
    assert_eq!(v.ending, Some(Ending::Complete));
    assert_eq!(v.report.as_ref().unwrap().faults(), ["calls"]);
    assert!(!v.failures.is_empty());
    let screen = h.screen();
    assert!(screen.contains("failed answers"), "{screen}");
    // The second failure, opened: its session is in the panes and plays back.
    h.press(key(KeyCode::Down));
    let chosen = h.app.verify.as_ref().unwrap().failures[1].label.clone();
    h.press(key(KeyCode::Enter));
    let opened = h.app.opened.as_ref().expect("the session opened");
    assert_eq!(
        opened.session.name.as_deref(),
        Some(&*format!("verify: {chosen}"))
    );
    assert!(opened.session.request.base_url == Some(server.base_url()));
    assert!(!h.app.verify.as_ref().unwrap().shown, "the view gives way");
    assert!(
        notice_text(&h.app).starts_with(&format!("opened verify: {chosen}")),
        "{}",
        notice_text(&h.app)
    );
    h.until("the replay ends", |a| {
        a.playback.as_ref().is_some_and(|p| p.is_done())
    })
    .await;
    assert!(h.has_tool_call(), "the recorded call is in the parts");
    // Alt+S shows the scorecard again.
    h.press(alt('s'));
    assert!(h.app.verify.as_ref().unwrap().shown);
}

#[tokio::test]
async fn an_endpoint_that_cannot_answer_is_said_and_what_was_measured_kept() {
    // A port nothing listens on (bound, then let go).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut a = app(160, 48);
    a.provider = ProviderKind::from_name("openai").unwrap();
    a.model = "m".into();
    a.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
    let h = battery_to_its_end(a, "the battery gives up").await;
    let v = h.app.verify.as_ref().unwrap();
    let Some(Ending::GaveUp { category, .. }) = &v.ending else {
        panic!("gave up: {:?}", v.ending)
    };
    assert_eq!(category, "provider_unavailable");
    let r = v.report.as_ref().unwrap();
    assert!(!r.complete && (r.requests.done as usize) < v.total);
    assert_eq!(r.faults(), ["answered"]);
    let screen = h.screen();
    assert!(
        screen.contains("cannot answer: provider_unavailable"),
        "{screen}"
    );
    assert!(notice_text(&h.app).contains("cannot answer"));
}

/// The battery on an endpoint that costs (Alt+S, then `y` to the question), to its end.
async fn battery_to_its_end(a: toolscope::app::App, what: &str) -> Harness {
    let mut h = Harness::with(a, None);
    h.press(alt('s'));
    h.press(key(KeyCode::Char('y')));
    h.until(what, |a| a.verify.as_ref().is_some_and(|v| !v.is_running()))
        .await;
    h
}
