//! Sessions in the playground, at the level of the state machine: opening a session fills the
//! panes and plays its answer back through the same decoder and parser as a live run; the
//! playback's pace, pause and steps; re-parsing under another protocol or other tools; the
//! re-send view; the picker, with broken files; the restore offer. Time only enters through
//! wake-up messages, which these tests deliver by hand, adding up the delays the playback asked
//! for (no test waits for a clock).

mod tui_support;

use std::path::{Path, PathBuf};

use ratatui::crossterm::event::KeyCode;

use toolscope::app::compare::CompareKind;
use toolscope::app::theme::Themes;
use toolscope::app::{
    App, Effect, FilePurpose, Message, Overlay, Pace, Restore, RunState, SessionEntry, Setup,
    update,
};
use toolscope_core::part::Part;
use toolscope_core::protocol::{Protocol, generate_parts};
use toolscope_core::session::Session;
use tui_support::{app, ctrl, key, notice_text, screen};

fn bundled(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions")
        .join(name)
}

fn load(name: &str) -> Session {
    Session::load(&bundled(name)).unwrap()
}

/// Opens a bundled session the way the picker or `--session` does.
fn open(app: &mut App, name: &str) -> Vec<Effect> {
    update(
        app,
        Message::SessionLoaded {
            path: bundled(name),
            result: Ok(Box::new(load(name))),
        },
    )
}

/// Delivers every wake-up the playback asks for, at once; returns the milliseconds it asked
/// to wait in all.
fn drive(app: &mut App, mut fx: Vec<Effect>) -> u64 {
    let mut waited = 0;
    loop {
        let wake = fx.iter().find_map(|e| match e {
            Effect::Wake { token, after_ms } => Some((*token, *after_ms)),
            _ => None,
        });
        let Some((token, after_ms)) = wake else {
            return waited;
        };
        waited += after_ms;
        fx = update(app, Message::Wake { token });
    }
}

fn parts(app: &App) -> Vec<Part> {
    app.run.record.parts.parts.clone()
}

fn tool_calls(parts: &[Part]) -> usize {
    parts
        .iter()
        .filter(|p| matches!(p, Part::ToolCall(_)))
        .count()
}

fn fkey(n: u8) -> Message {
    key(KeyCode::F(n))
}

#[test]
fn every_bundled_session_replays_in_the_playground_as_recorded() {
    let mut names: Vec<String> = std::fs::read_dir(bundled(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 8);
    for name in names {
        let mut a = app(160, 48);
        let fx = open(&mut a, &name);
        drive(&mut a, fx);
        let session = load(&name);
        // An MCP loop plays every turn: the view shows the last one.
        let last_turn = session.steps.iter().rev().find_map(|s| match s {
            toolscope_core::session::Step::Turn(t) => Some(t.parts.clone()),
            _ => None,
        });
        let want = last_turn.unwrap_or_else(|| session.parts.clone());
        // The same parts; the text held until the choice arrives in fewer, larger deltas.
        assert_eq!(generate_parts(parts(&a)), generate_parts(want), "{name}");
        assert!(!a.run.is_running(), "{name}");
        // The panes show the recorded request.
        assert_eq!(a.model, session.request.model, "{name}");
        assert_eq!(a.provider, session.request.provider, "{name}");
        assert_eq!(
            a.protocol.as_ref().map(|p| p.name()),
            session.request.protocol.as_ref().map(|p| p.name()),
            "{name}"
        );
        assert_eq!(a.tools.valid.len(), session.request.tools.len(), "{name}");
        assert!(a.tools.problem().is_none(), "{name}");
    }
}

#[test]
fn recorded_pace_and_speed_scale_the_waits() {
    let session = load("protocol-hermes.json");
    let last = session.ended_at_ms;
    for (pace, expected) in [
        (Pace::Speed(1.0), last),
        (Pace::Speed(2.0), last / 2),
        (Pace::Speed(10.0), last / 10),
    ] {
        let mut a = app(160, 48);
        a.pace = pace;
        let fx = open(&mut a, "protocol-hermes.json");
        assert!(a.run.is_running(), "a paced replay streams");
        let waited = drive(&mut a, fx);
        // Each wait is rounded to a millisecond on its own.
        let slack = session.events.len() as u64;
        assert!(
            waited.abs_diff(expected) <= slack,
            "{pace:?}: waited {waited} ms, expected about {expected}"
        );
        assert_eq!(parts(&a), session.parts);
    }
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let fx = open(&mut a, "protocol-hermes.json");
    assert!(!fx.iter().any(|e| matches!(e, Effect::Wake { .. })));
    assert_eq!(parts(&a), session.parts);
}

#[test]
fn the_replay_keeps_the_recorded_times() {
    let mut a = app(160, 48);
    a.pace = Pace::Speed(10.0);
    let fx = open(&mut a, "mode-auto.json");
    drive(&mut a, fx);
    let session = load("mode-auto.json");
    let last = session.events.last().unwrap().at_ms;
    assert_eq!(
        a.run.record.ended_ms,
        Some(last),
        "ended with the finish event"
    );
    assert!(a.run.record.first_output_ms.is_some());
    assert_eq!(a.run.record.state, RunState::Done);
}

#[test]
fn step_by_step_and_pause() {
    let session = load("mode-required.json");
    let mut a = app(160, 48);
    let _ = open(&mut a, "mode-required.json");
    // Pause: the wake-up asked for before is stale and does nothing.
    let before = a.playback.as_ref().unwrap().token;
    update(&mut a, fkey(5));
    assert!(a.playback.as_ref().unwrap().paused);
    let shown = a.run.record.parts.parts.len();
    let fx = update(&mut a, Message::Wake { token: before });
    assert!(fx.is_empty());
    assert_eq!(a.run.record.parts.parts.len(), shown);
    assert!(screen(&a, 160, 48).contains("paused"));
    // F6 takes one wire event at a time; the parts only grow, and in the end match.
    let mut last = shown;
    let mut steps = 0;
    while a.playback.as_ref().is_some_and(|p| !p.replay.is_done()) {
        let fx = update(&mut a, fkey(6));
        assert!(!fx.iter().any(|e| matches!(e, Effect::Wake { .. })));
        let now = a.run.record.parts.parts.len();
        assert!(now >= last);
        last = now;
        steps += 1;
        assert!(steps <= session.events.len() + 1, "too many steps");
    }
    assert_eq!(parts(&a), session.parts);
    // F6 on an ended replay starts over, paused, one event in.
    update(&mut a, fkey(6));
    let p = a.playback.as_ref().unwrap();
    assert!(p.paused);
    assert_eq!(p.replay.position(), 1);
    // F5 goes on from there to the end.
    let fx = update(&mut a, fkey(5));
    drive(&mut a, fx);
    assert_eq!(parts(&a), session.parts);
}

#[test]
fn f7_changes_the_speed_of_a_replay_in_progress() {
    let session = load("mode-none.json");
    let mut a = app(160, 48);
    let _ = open(&mut a, "mode-none.json");
    for _ in 0..4 {
        update(&mut a, fkey(7));
    }
    assert_eq!(a.pace, Pace::Instant);
    // Instant takes every remaining step at once.
    assert!(a.playback.as_ref().unwrap().replay.is_done());
    assert_eq!(parts(&a), session.parts);
}

#[test]
fn reparse_under_another_protocol_and_back() {
    let session = load("protocol-hermes.json");
    assert_eq!(tool_calls(&session.parts), 1);
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let _ = open(&mut a, "protocol-hermes.json");
    // Native: the markup stays text, no call.
    a.protocol = None;
    update(&mut a, fkey(8));
    assert_eq!(tool_calls(&parts(&a)), 0);
    assert!(a.run.record.parts.text().contains("<tool_call>"));
    assert!(a.opened.as_ref().unwrap().reading.contains("native"));
    // Under morph-xml's parser, hermes markup is not a call either.
    a.protocol = Some(Protocol::from_name("morph-xml").unwrap());
    update(&mut a, fkey(8));
    assert_eq!(tool_calls(&parts(&a)), 0);
    // Back under hermes: the recorded parts again.
    a.protocol = Some(Protocol::from_name("hermes").unwrap());
    update(&mut a, fkey(8));
    assert_eq!(parts(&a), session.parts);
}

#[test]
fn reparse_with_another_schema_reruns_coercion() {
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let _ = open(&mut a, "mode-auto.json");
    let call = |a: &App| a.run.record.parts.tool_calls().next().cloned().unwrap();
    let recorded = call(&a);
    assert_eq!(recorded.tool_name, "get_weather");
    // `days` becomes a string in the schema: the same output now coerces to a string.
    let mut tools: serde_json::Value = serde_json::from_str(&a.tools.text()).unwrap();
    tools[0]["parameters"]["properties"]["days"]["type"] = "string".into();
    a.tools.set_text(&tools.to_string());
    update(&mut a, fkey(8));
    let reparsed = call(&a);
    assert_eq!(reparsed.input["days"], serde_json::json!("3"));
    assert_eq!(recorded.input["days"], serde_json::json!(3));
    assert!(!reparsed.coercions.is_empty());
}

#[test]
fn resend_puts_the_recorded_answer_beside_a_live_one() {
    let session = load("mode-forced-tool.json");
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let _ = open(&mut a, "mode-forced-tool.json");
    let fx = update(&mut a, fkey(9));
    let sent: Vec<_> = fx
        .iter()
        .filter_map(|e| match e {
            Effect::StartRun { request, .. } => Some(request.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "one live request");
    assert_eq!(
        serde_json::to_value(&*sent[0]).unwrap(),
        serde_json::to_value(&session.request).unwrap(),
        "the very request recorded"
    );
    let c = a.compare.as_ref().unwrap();
    assert_eq!(c.kind, CompareKind::Resend);
    assert_eq!(c.titles, ["recorded", "live"]);
    assert_eq!(c.columns[0].record.parts.parts, session.parts);
    assert!(c.columns[1].is_running());
    let s = screen(&a, 160, 48);
    assert!(s.contains("Re-send"), "{s}");
    assert!(s.contains("recorded"), "{s}");
    // Esc cancels the live run, then closes the view.
    let fx = update(&mut a, key(KeyCode::Esc));
    assert!(fx.iter().any(|e| matches!(e, Effect::CancelRun { .. })));
    update(&mut a, key(KeyCode::Esc));
    assert!(a.compare.is_none());
}

#[test]
fn what_ifs_need_an_open_session() {
    let mut a = app(80, 24);
    for n in [5, 6, 8, 9] {
        let fx = update(&mut a, fkey(n));
        assert!(fx.is_empty());
        let notice = a.notice.clone().unwrap();
        assert!(notice.error && notice.text.contains("Ctrl+O"), "{notice:?}");
    }
}

#[test]
fn ctrl_s_proposes_a_timestamped_file_and_saves_the_run() {
    let mut a = app(160, 48);
    a.clock = || 1_795_000_000;
    a.sessions.project = Some(PathBuf::from("sessions"));
    // Nothing to save before a run.
    update(&mut a, ctrl('s'));
    assert!(a.notice.as_ref().unwrap().error);
    assert!(a.overlay.is_none());
    a.pace = Pace::Instant;
    let _ = open(&mut a, "mode-auto.json");
    update(&mut a, ctrl('s'));
    let Some(Overlay::Path { purpose, save, .. }) = &a.overlay else {
        panic!("a path prompt")
    };
    assert_eq!((*purpose, *save), (FilePurpose::Session, true));
    let s = screen(&a, 160, 48);
    assert!(s.contains("Save the session to"), "{s}");
    assert!(
        s.contains("sessions/session-2026-11-18T11-06-40Z.json"),
        "{s}"
    );
    let fx = update(&mut a, key(KeyCode::Enter));
    let [Effect::SaveSession { path, session, .. }] = &fx[..] else {
        panic!("one save: {fx:?}")
    };
    assert_eq!(
        path,
        Path::new("sessions/session-2026-11-18T11-06-40Z.json")
    );
    let recorded = load("mode-auto.json");
    assert_eq!(session.parts, recorded.parts);
    assert_eq!(session.events, recorded.events);
    assert_eq!(
        serde_json::to_value(&session.request).unwrap(),
        serde_json::to_value(&recorded.request).unwrap()
    );
    assert_eq!(session.created_at, "2026-11-18T11:06:40Z");
}

fn entry(path: &str, summary: Result<&str, &str>) -> SessionEntry {
    let s = load("mode-auto.json").summary();
    SessionEntry {
        path: PathBuf::from(path),
        summary: summary.map(|_| s).map_err(str::to_string),
    }
}

#[test]
fn the_picker_lists_opens_and_names_broken_files() {
    let mut a = app(160, 48);
    let fx = update(&mut a, ctrl('o'));
    assert!(matches!(&fx[..], [Effect::ListSessions { .. }]));
    assert!(screen(&a, 160, 48).contains("reading the folders"));
    update(
        &mut a,
        Message::SessionsListed {
            entries: vec![
                entry("sessions/mode-auto.json", Ok("")),
                entry("sessions/cut.json", Err("the file is cut short")),
            ],
        },
    );
    let s = screen(&a, 160, 48);
    assert!(s.contains("Open a session"), "{s}");
    assert!(s.contains("mode-auto.json") && s.contains("demo-1"), "{s}");
    assert!(s.contains("✗ the file is cut short"), "{s}");
    // Enter on a broken file: an error in the status line; the playground goes on.
    update(&mut a, key(KeyCode::Down));
    let fx = update(&mut a, key(KeyCode::Enter));
    assert!(fx.is_empty());
    assert!(a.overlay.is_none());
    let n = a.notice.clone().unwrap();
    assert!(n.error && n.text.contains("sessions/cut.json"), "{n:?}");
    // Enter on a good one asks to load it.
    update(&mut a, ctrl('o'));
    update(
        &mut a,
        Message::SessionsListed {
            entries: vec![entry("sessions/mode-auto.json", Ok(""))],
        },
    );
    let fx = update(&mut a, key(KeyCode::Enter));
    assert!(matches!(&fx[..], [Effect::LoadSession { path }] if path.ends_with("mode-auto.json")));
}

#[test]
fn a_session_that_cannot_be_read_is_an_error_in_the_status_line() {
    let mut a = app(160, 48);
    let fx = update(
        &mut a,
        Message::SessionLoaded {
            path: PathBuf::from("x.json"),
            result: Err("x.json: the file is empty, not a session".into()),
        },
    );
    assert!(fx.is_empty());
    let n = a.notice.clone().unwrap();
    assert!(n.error && n.text.starts_with("x.json: "), "{n:?}");
    assert!(a.opened.is_none());
    assert!(screen(&a, 160, 48).contains("x.json: the file is empty"));
}

#[test]
fn the_restore_offer_restores_or_discards() {
    let session = load("protocol-qwen3-coder.json");
    let restore = Restore {
        journal: PathBuf::from("/data/journal-7.jsonl"),
        session: Box::new(session.clone()),
        ended: false,
    };
    let setup = || Setup {
        restore: Some(restore.clone()),
        sessions: toolscope::app::SessionDirs {
            data: Some(PathBuf::from("/data/sessions")),
            ..Default::default()
        },
        ..Setup::default()
    };
    let mut a = App::new(setup(), Themes::built_in());
    a.clock = || 1_795_000_000;
    let s = screen(&a, 160, 48);
    assert!(s.contains("Restore the interrupted run?"), "{s}");
    // Keys other than Enter and d leave the offer up.
    update(&mut a, ctrl('r'));
    assert!(matches!(a.overlay, Some(Overlay::Restore(_))));
    let fx = update(&mut a, key(KeyCode::Enter));
    let saved = fx.iter().find_map(|e| match e {
        Effect::SaveSession {
            path, then_remove, ..
        } => Some((path.clone(), then_remove.clone())),
        _ => None,
    });
    assert_eq!(
        saved,
        Some((
            PathBuf::from("/data/sessions/recovered-2026-11-18T11-06-40Z.json"),
            Some(PathBuf::from("/data/journal-7.jsonl"))
        ))
    );
    assert_eq!(parts(&a), session.parts, "restored and shown at once");
    let mut b = App::new(setup(), Themes::built_in());
    let fx = update(&mut b, key(KeyCode::Char('d')));
    assert!(
        matches!(&fx[..], [Effect::RemoveFile { path }] if path == Path::new("/data/journal-7.jsonl"))
    );
    assert!(b.overlay.is_none() && b.opened.is_none());
}

#[test]
fn resend_goes_to_the_model_the_status_line_shows() {
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let _ = open(&mut a, "wire-openai.json");
    let recorded = load("wire-openai.json").request;
    a.base_url = Some("http://127.0.0.1:9/v1".into());
    a.model = "other-model".into();
    let fx = update(&mut a, fkey(9));
    let Some(Effect::StartRun { request, .. }) =
        fx.iter().find(|e| matches!(e, Effect::StartRun { .. }))
    else {
        panic!("a live request: {fx:?}")
    };
    assert_eq!(request.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
    assert_eq!(request.model, "other-model");
    assert_eq!(
        serde_json::to_value(&request.messages).unwrap(),
        serde_json::to_value(&recorded.messages).unwrap()
    );
    assert_eq!(request.tools.len(), recorded.tools.len());
}

#[test]
fn a_replay_started_again_reads_as_last_re_parsed() {
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let _ = open(&mut a, "protocol-hermes.json");
    a.protocol = None;
    update(&mut a, fkey(8));
    assert_eq!(tool_calls(&parts(&a)), 0);
    // The protocol changes again, but F5 replays the session as it was last re-parsed.
    a.protocol = Some(Protocol::from_name("hermes").unwrap());
    update(&mut a, fkey(5));
    assert_eq!(tool_calls(&parts(&a)), 0, "still read natively");
    update(&mut a, fkey(8));
    assert_eq!(tool_calls(&parts(&a)), 1);
}

/// Ctrl+L → auto, then F8: every bundled protocol session re-read natively with detection finds
/// the protocol it was recorded under and the same parts; the notice and the status line say
/// which protocol read the text.
#[test]
fn reparse_with_auto_reads_each_protocol_session_as_its_protocol() {
    let mut names: Vec<String> = std::fs::read_dir(bundled(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("protocol-") && !n.contains("forced"))
        .collect();
    names.sort();
    assert!(names.len() >= 25, "{names:?}");
    for name in names {
        let session = load(&name);
        let recorded = session.request.protocol.clone().unwrap();
        let mut a = app(160, 48);
        a.pace = Pace::Instant;
        let _ = open(&mut a, &name);
        update(&mut a, ctrl('l'));
        for c in "auto".chars() {
            update(&mut a, key(KeyCode::Char(c)));
        }
        update(&mut a, key(KeyCode::Enter));
        assert_eq!(a.protocol_name(), "auto", "{name}");
        update(&mut a, fkey(8));
        let detected = a
            .run
            .record
            .detected
            .clone()
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(
            detected.protocol,
            recorded.name(),
            "{name}: {}",
            detected.reason
        );
        // The same parts; the text held until the choice arrives in fewer, larger deltas.
        assert_eq!(
            generate_parts(parts(&a)),
            generate_parts(session.parts.clone()),
            "{name}"
        );
        let notice = notice_text(&a);
        assert!(
            notice.contains(&format!("re-parsed as auto (read as {}", recorded.name())),
            "{name}: {notice}"
        );
        let s = screen(&a, 160, 48);
        assert!(
            s.contains(&format!("auto → {}", recorded.name())),
            "{name}: {s}"
        );
    }
}

/// F8 then Ctrl+S saves what was sent and received, with the re-parse beside it as a re-parse,
/// never as if the request had been sent under the new protocol.
#[test]
fn saving_after_a_reparse_keeps_what_was_sent_and_the_reparse_beside_it() {
    let session = load("protocol-hermes.json");
    let mut a = app(160, 48);
    a.pace = Pace::Instant;
    let _ = open(&mut a, "protocol-hermes.json");
    a.protocol = Some(Protocol::from_name("morph-xml").unwrap());
    update(&mut a, fkey(8));
    assert_eq!(tool_calls(&parts(&a)), 0);
    update(&mut a, ctrl('s'));
    assert!(matches!(a.overlay, Some(Overlay::Path { .. })));
    let fx = update(&mut a, key(KeyCode::Enter));
    let saved = fx
        .iter()
        .find_map(|e| match e {
            Effect::SaveSession { session, .. } => Some(session.clone()),
            _ => None,
        })
        .expect("a save");
    assert_eq!(
        saved.request.protocol.as_ref().map(|p| p.name()),
        Some("hermes"),
        "the request as it was sent"
    );
    assert_eq!(
        saved.parts, session.parts,
        "the parts as they were received"
    );
    assert_eq!(saved.events, session.events);
    let reparse = saved.reparse.as_ref().expect("the re-parse, beside it");
    assert_eq!(reparse.protocol, "morph-xml");
    assert_eq!(tool_calls(&reparse.parts), 0);
    // The file says so, and reads back the same.
    let json = serde_json::to_string(&*saved).unwrap();
    let back = Session::from_json(&json).unwrap();
    assert_eq!(back.reparse, saved.reparse);
    // Opening it says it holds a re-parse.
    let mut b = app(160, 48);
    update(
        &mut b,
        Message::SessionLoaded {
            path: bundled("protocol-hermes.json"),
            result: Ok(Box::new(back)),
        },
    );
    assert!(notice_text(&b).contains("saved with a re-parse as morph-xml"));

    // Saved as recorded: no re-parse in the file.
    let mut c = app(160, 48);
    c.pace = Pace::Instant;
    let _ = open(&mut c, "protocol-hermes.json");
    update(&mut c, ctrl('s'));
    let fx = update(&mut c, key(KeyCode::Enter));
    let plain = fx
        .iter()
        .find_map(|e| match e {
            Effect::SaveSession { session, .. } => Some(session.clone()),
            _ => None,
        })
        .unwrap();
    assert!(plain.reparse.is_none());
    assert!(!serde_json::to_string(&*plain).unwrap().contains("reparse"));
}

/// `/` in the session picker filters the bundled sessions as you type (fuzzy, best match
/// first), Backspace widens it, Esc drops the filter and a second Esc closes; Enter opens the
/// selected match.
#[test]
fn the_session_picker_filters_as_you_type() {
    let mut a = app(160, 48);
    a.sessions.project = Some(bundled(""));
    update(&mut a, ctrl('o'));
    let entries = toolscope::app::session::list(&[bundled("")]);
    let all = entries.len();
    assert!(all >= 40, "{all}");
    update(&mut a, Message::SessionsListed { entries });
    let names = |a: &App| -> Vec<String> {
        let Some(Overlay::Sessions(p)) = &a.overlay else {
            panic!("the picker")
        };
        p.shown().map(|(e, _)| e.file_name()).collect()
    };
    update(&mut a, key(KeyCode::Char('/')));
    for c in "kimi".chars() {
        update(&mut a, key(KeyCode::Char(c)));
    }
    let found = names(&a);
    assert_eq!(found[0], "protocol-kimi-k2.json", "the closest first");
    assert!(found.len() < all / 4, "{found:?}");
    let s = screen(&a, 160, 48);
    assert!(
        s.contains("/kimi") && s.contains(&format!("{} of {all}", found.len())),
        "{s}"
    );
    // Backspace widens; a fuzzy query finds letters in order, word starts first.
    for _ in 0..4 {
        update(&mut a, key(KeyCode::Backspace));
    }
    for c in "m2".chars() {
        update(&mut a, key(KeyCode::Char(c)));
    }
    let found = names(&a);
    assert_eq!(found[0], "protocol-minimax-m2.json", "{found:?}");
    assert!(found.len() < all);
    // Nothing matches: the list says so.
    update(&mut a, key(KeyCode::Char('q')));
    update(&mut a, key(KeyCode::Char('q')));
    assert!(names(&a).is_empty());
    assert!(screen(&a, 160, 48).contains("no session matches /m2qq"));
    // Esc drops the filter (the picker stays), a second Esc closes.
    update(&mut a, key(KeyCode::Esc));
    assert_eq!(names(&a).len(), all);
    update(&mut a, key(KeyCode::Char('/')));
    for c in "forced".chars() {
        update(&mut a, key(KeyCode::Char(c)));
    }
    let fx = update(&mut a, key(KeyCode::Enter));
    assert!(
        matches!(&fx[..], [Effect::LoadSession { path }] if path.ends_with("mode-forced-tool.json")),
        "{fx:?}"
    );
    update(&mut a, ctrl('o'));
    update(&mut a, key(KeyCode::Esc));
    assert!(a.overlay.is_none());
}
