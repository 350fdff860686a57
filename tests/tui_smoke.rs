//! Smoke test of the real binary in a real terminal: tmux runs `toolscope` at 160×48; the test
//! sees the five pane titles, presses Ctrl+R and sees a `tool-call` part from the demo model,
//! opens the help with F1, quits with Ctrl+Q and checks the exit status.
//!
//! It polls `tmux capture-pane` until the expected text appears (with a generous deadline),
//! never sleeping a fixed time as an assertion. tmux runs on a private socket so the user's own
//! tmux is never touched. The tests need tmux, so they are ignored in a plain `cargo test` (which
//! lists them as ignored, with what they need); `.ci/run` installs tmux and runs them, and
//! `cargo test --test tui_smoke -- --ignored` runs them here.

mod tmux_support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tmux_support::Tmux;

const BIN: &str = env!("CARGO_BIN_EXE_toolscope");
const DEADLINE: Duration = Duration::from_secs(60);

/// Polls the screen until `text` is gone from it (an overlay closed), so that the next key does
/// not arrive glued to the one before (an Esc right before an F1's escape sequence reads as
/// other keys).
fn wait_gone(tmux: &Tmux, text: &str) {
    tmux.wait_until(&format!("{text:?} is gone"), |s| !s.contains(text));
}

/// Polls the screen until every one of `texts` is on it.
fn wait_for(tmux: &Tmux, texts: &[&str]) -> String {
    tmux.wait_until(&format!("{texts:?} are on it"), |s| {
        texts.iter().all(|t| s.contains(t))
    })
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// Fails with what to install when tmux is missing (the tests asked for it by name).
fn need_tmux() {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(found, "this test needs tmux: apt-get install -y tmux");
}

/// A tmux server of the test's own, with a folder for toolscope's data.
fn tmux(name: &str) -> Tmux {
    let id = format!("toolscope-{name}-{}", std::process::id());
    let dir = std::env::temp_dir().join(&id);
    std::fs::create_dir_all(&dir).unwrap();
    Tmux {
        socket: id.clone(),
        session: id,
        dir,
        deadline: DEADLINE,
    }
}

/// Starts toolscope at 160×48 in a new tmux session; the shell writes its exit status.
fn start_demo(tmux: &Tmux) {
    start_with(tmux, "");
}

/// Starts toolscope with `args` (shell words, quoted by the caller).
fn start_with(tmux: &Tmux, args: &str) {
    // Logs, journals and user themes go to the test's own folder.
    let dir = quote(&tmux.dir);
    tmux.start_shell(&format!(
        "XDG_DATA_HOME={dir} XDG_CONFIG_HOME={dir} {bin} {args}",
        bin = quote(Path::new(BIN)),
    ));
}

#[test]
#[ignore = "needs tmux"]
fn the_binary_runs_in_tmux() {
    need_tmux();
    let tmux = tmux("smoke");
    start_demo(&tmux);

    wait_for(
        &tmux,
        &[
            " Tools ",
            " Tool choice ",
            " Prompt ",
            " Raw ",
            " Parts ",
            "demo · demo-1",
        ],
    );
    tmux.keys(&["C-r"]);
    wait_for(&tmux, &["tool-call", "● done"]);
    tmux.keys(&["F1"]);
    wait_for(&tmux, &[" Help ", "Everywhere"]);
    // The conversation is not saved: quitting asks first.
    tmux.keys(&["C-q"]);
    wait_for(&tmux, &["Quit with unsaved work?"]);
    tmux.keys(&["y"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    assert!(
        tmux.dir.join("toolscope").join("toolscope.log").exists(),
        "the log goes to the data directory"
    );
}

/// One whole MCP loop in the real binary: `toolscope serve-mcp-demo` started by the playground
/// (`toolscope` as the command is this binary), its tools listed in the Tools pane, F12 runs
/// the loop on the demo model to a text answer with the tool's result in the conversation.
#[test]
#[ignore = "needs tmux"]
fn an_mcp_loop_runs_in_tmux() {
    need_tmux();
    let tmux = tmux("mcp");
    start_with(&tmux, "--mcp 'toolscope serve-mcp-demo' --max-steps 4");
    wait_for(
        &tmux,
        &[
            "● toolscope-demo · toolscope serve-mcp-demo · 3 tools",
            "✓ 0 tools + 3 from MCP",
        ],
    );
    tmux.keys(&["F12"]);
    let screen = wait_for(&tmux, &["the loop ended with a text answer after 2 steps"]);
    assert!(screen.contains("tool    get_weather ⇐"), "{screen}");
    assert!(screen.contains("\"city\":\"Paris\""), "{screen}");
    tmux.keys(&["C-q"]);
    wait_for(&tmux, &["Quit with unsaved work?"]);
    tmux.keys(&["y"]);
    assert_eq!(tmux.wait_for_exit(), "0");
}

/// The journals toolscope left in its data folder.
fn journals(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("toolscope"))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("journal-"))
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
#[ignore = "needs tmux"]
fn a_killed_terminal_loses_nothing() {
    need_tmux();
    let tmux = tmux("crash");
    start_demo(&tmux);
    wait_for(&tmux, &[" Parts ", "demo · demo-1"]);
    tmux.keys(&["C-r"]);
    wait_for(&tmux, &["tool-call", "● done"]);
    let journal = journals(&tmux.dir);
    assert_eq!(journal.len(), 1, "the run is journaled: {journal:?}");
    // The terminal goes away (tmux hangs up on toolscope) without anything being saved.
    let _ = tmux.cmd(&["kill-session", "-t", &tmux.session]);
    let pid = journal[0]
        .file_stem()
        .and_then(|s| {
            s.to_string_lossy()
                .strip_prefix("journal-")?
                .parse::<u32>()
                .ok()
        })
        .expect("the journal is named after the process");
    let start = Instant::now();
    while Path::new("/proc").join(pid.to_string()).exists() {
        assert!(start.elapsed() < DEADLINE, "toolscope did not stop");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(journal[0].exists(), "the journal outlives the terminal");

    // The next start offers the run back; Enter restores it and saves it as a session.
    start_demo(&tmux);
    wait_for(&tmux, &["Restore the interrupted run?", "1 tool call(s)"]);
    tmux.keys(&["Enter"]);
    wait_for(&tmux, &["saved the session", "tool-call", "replayed"]);
    assert!(
        !journal[0].exists(),
        "the journal goes once the run is saved"
    );
    let saved: Vec<_> = std::fs::read_dir(tmux.dir.join("toolscope").join("sessions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    tmux.keys(&["C-q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    assert!(
        journals(&tmux.dir).is_empty(),
        "a clean exit leaves no journal"
    );
}

#[test]
#[ignore = "needs tmux"]
fn a_three_turn_conversation_is_saved_whole() {
    need_tmux();
    let tmux = tmux("turns");
    start_demo(&tmux);
    wait_for(&tmux, &[" Parts ", "demo · demo-1"]);
    // Turn 1: the demo model calls get_weather; the focus is on its result field.
    tmux.keys(&["C-r"]);
    wait_for(&tmux, &["tool-call", "● done", "type the tool's result"]);
    // Turn 2: the result goes; the model answers in text.
    tmux.keys(&["-l", "sunny, 21 C"]);
    tmux.keys(&["C-r"]);
    wait_for(&tmux, &["get_weather ⇐ sunny, 21 C", "│ stop │"]);
    // Turn 3: a follow-up in the (empty, focused) message field.
    tmux.keys(&["-l", "And tomorrow?"]);
    tmux.keys(&["C-r"]);
    wait_for(
        &tmux,
        &[
            "you     And tomorrow?",
            "answer about \"tomorrow\"",
            "● done",
        ],
    );
    tmux.keys(&["C-s"]);
    wait_for(&tmux, &["Save the session to"]);
    tmux.keys(&["Enter"]);
    wait_for(&tmux, &["saved the session"]);
    let dir = tmux.dir.join("toolscope").join("sessions");
    let saved: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let session = toolscope_core::session::Session::load(&saved[0]).unwrap();
    let roles: Vec<&str> = session.request.messages.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant", "user"]);
    assert!(matches!(
        &session.request.messages[3],
        toolscope_core::provider::Message::Assistant { content: Some(t), .. } if t.contains("sunny, 21 C")
    ));
    let answer = toolscope_core::part::Collapsed::of(&session.parts);
    assert!(answer.text.contains("tomorrow"), "{:?}", answer.text);
    // Saved: quitting asks nothing.
    tmux.keys(&["C-q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
}

/// The theme, provider, model, settings and last prompt are read back at start from the config
/// and data directories, and what changes is written back, never with a key.
#[test]
#[ignore = "needs tmux"]
fn remembered_state_is_restored_at_start() {
    need_tmux();
    let tmux = tmux("remember");
    let home = tmux.dir.join("toolscope");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(
        home.join("settings.toml"),
        "theme = \"high-contrast\"\nprovider = \"demo\"\nmodel = \"demo-1\"\n\n[sampling]\ntemperature = 0.25\nmaxTokens = 64\n",
    )
    .unwrap();
    std::fs::write(
        home.join("last.json"),
        r#"{"tools": "", "system": "Be brief.", "message": "A remembered question"}"#,
    )
    .unwrap();
    start_demo(&tmux);
    wait_for(
        &tmux,
        &["A remembered question", "Be brief.", "demo · demo-1"],
    );
    // The exact request carries the remembered settings.
    tmux.keys(&["M-e"]);
    wait_for(&tmux, &["not sent yet"]);
    tmux.keys(&["End"]);
    wait_for(&tmux, &["\"temperature\": 0.25", "\"max_tokens\": 64"]);
    tmux.keys(&["Escape"]);
    // The theme is changed in the help overlay, and written back at once.
    wait_gone(&tmux, "not sent yet");
    tmux.keys(&["F1"]);
    wait_for(&tmux, &[" Help "]);
    tmux.keys(&["Left"]);
    tmux.keys(&["Escape"]);
    wait_gone(&tmux, " Help ");
    tmux.keys(&["C-q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    let settings = std::fs::read_to_string(home.join("settings.toml")).unwrap();
    assert!(!settings.contains("high-contrast"), "{settings}");
    assert!(settings.contains("temperature = 0.25"), "{settings}");
    let last = std::fs::read_to_string(home.join("last.json")).unwrap();
    assert!(last.contains("A remembered question"), "{last}");
    assert!(last.contains("get_weather"), "the example tools: {last}");
}

impl Tmux {
    /// Starts toolscope so that its pid can be read (`pid` in the test folder), and, once it
    /// exited, the terminal's line settings are written (`stty`) and the pane stays open to be
    /// asked about its modes.
    fn start_to_signal(&self) {
        let inner = format!(
            "echo $$ > {pid}; exec {bin}",
            pid = quote(&self.dir.join("pid")),
            bin = quote(Path::new(BIN)),
        );
        let script = format!(
            "cd {dir} && XDG_DATA_HOME={dir} XDG_CONFIG_HOME={dir} sh -c {inner}; echo $? > {status}.part; stty -a > {stty}; mv {status}.part {status}; exec sleep 600",
            dir = quote(&self.dir),
            inner = quote(Path::new(&inner)),
            status = quote(&self.dir.join("exit-status")),
            stty = quote(&self.dir.join("stty")),
        );
        self.new_session(&script);
    }

    /// The pane's modes, as tmux keeps them: alternate screen, cursor shown, mouse reporting
    /// (tmux 3.3 does not say whether bracketed paste is on).
    fn modes(&self) -> String {
        let out = self.cmd(&[
            "display-message",
            "-p",
            "-t",
            &self.session,
            "alt=#{alternate_on} cursor=#{cursor_flag} mouse=#{mouse_any_flag}#{mouse_button_flag}#{mouse_standard_flag}#{mouse_sgr_flag}",
        ]);
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// Every signal that ends the playground gives the terminal back (raw mode off, the main screen,
/// the cursor shown, no mouse or paste reporting) and exits with 128 + the signal's number.
#[test]
#[ignore = "needs tmux"]
fn every_ending_signal_restores_the_terminal() {
    need_tmux();
    for (signal, status) in [
        ("INT", "130"),
        ("QUIT", "131"),
        ("TERM", "143"),
        ("HUP", "129"),
    ] {
        let tmux = tmux(&format!("sig{signal}"));
        tmux.start_to_signal();
        wait_for(&tmux, &[" Parts ", "demo · demo-1"]);
        assert!(tmux.modes().starts_with("alt=1"), "{}", tmux.modes());
        let pid = std::fs::read_to_string(tmux.dir.join("pid")).unwrap();
        let kill = Command::new("kill")
            .args([format!("-{signal}"), pid.trim().to_string()])
            .output()
            .unwrap();
        assert!(kill.status.success(), "{kill:?}");
        assert_eq!(tmux.wait_for_exit(), status, "SIG{signal}");
        assert_eq!(tmux.modes(), "alt=0 cursor=1 mouse=0000", "SIG{signal}");
        let stty = std::fs::read_to_string(tmux.dir.join("stty")).unwrap();
        let modes: Vec<&str> = stty.split_whitespace().collect();
        for mode in ["icanon", "echo", "isig"] {
            assert!(modes.contains(&mode), "SIG{signal}: {mode} is off: {stty}");
        }
    }
}

/// Issue 25, point 8: flags are for one run. A hand-edited settings file (comments, a key this
/// toolscope does not know) is left byte for byte as it was by a playground started with
/// `--theme`, `--model` and `--base-url` and quit without changing a setting.
#[test]
#[ignore = "needs tmux"]
fn flags_never_reach_the_settings_file() {
    need_tmux();
    let tmux = tmux("flags");
    let home = tmux.dir.join("toolscope");
    std::fs::create_dir_all(&home).unwrap();
    let hand_edited = "# chosen by hand\ntheme = \"high-contrast\" # easier on the eyes\nprovider = \"demo\"\nmodel = \"demo-1\"\nnot_yet_known = true\n\n[sampling]\ntemperature = 0.25\n";
    std::fs::write(home.join("settings.toml"), hand_edited).unwrap();
    start_with(
        &tmux,
        "--theme light --model flag-model --base-url http://127.0.0.1:9/v1",
    );
    wait_for(&tmux, &["demo · flag-model"]);
    tmux.keys(&["C-q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    assert_eq!(
        std::fs::read_to_string(home.join("settings.toml")).unwrap(),
        hand_edited
    );
}

impl Tmux {
    /// Starts toolscope with `args` and the test's folder as HOME (the config and data folders
    /// found the usual way under it: `.config/toolscope`, `.local/share/toolscope`).
    fn start_in_home(&self, args: &str) {
        self.start_shell(&format!(
            "env -u XDG_DATA_HOME -u XDG_CONFIG_HOME HOME={dir} {bin} {args}",
            dir = quote(&self.dir),
            bin = quote(Path::new(BIN)),
        ));
    }
}

/// The README's MCP loop for a returning user: a HOME whose remembered tools (from an earlier
/// run, with a `get_weather` of the user's own) would shadow the servers' tools. With servers
/// and no `--tools` the Tools JSON starts empty, F12 runs the loop to a text answer on the
/// server's tool, and the remembered tools are still there for the next start without servers.
#[test]
#[ignore = "needs tmux"]
fn the_readme_mcp_loop_runs_for_a_returning_user() {
    need_tmux();
    let tmux = tmux("mcp-home");
    let data = tmux.dir.join(".local/share/toolscope");
    std::fs::create_dir_all(&data).unwrap();
    let remembered = r#"[{"name": "get_weather", "description": "my own, from an earlier run", "parameters": {"type": "object", "properties": {"town": {"type": "string"}}}}]"#;
    std::fs::write(
        data.join("last.json"),
        serde_json::json!({"tools": remembered, "system": "", "message": "What's the weather in Paris?"})
            .to_string(),
    )
    .unwrap();
    tmux.start_in_home("--mcp 'toolscope serve-mcp-demo' --max-steps 4");
    let screen = wait_for(
        &tmux,
        &[
            "● toolscope-demo · toolscope serve-mcp-demo · 3 tools",
            "✓ 0 tools + 3 from MCP",
        ],
    );
    assert!(!screen.contains("my own, from an earlier run"), "{screen}");
    tmux.keys(&["F12"]);
    let screen = wait_for(&tmux, &["the loop ended with a text answer after 2 steps"]);
    assert!(screen.contains("tool    get_weather ⇐"), "{screen}");
    assert!(!screen.contains("no MCP server serves"), "{screen}");
    tmux.keys(&["C-q"]);
    wait_for(&tmux, &["Quit with unsaved work?"]);
    tmux.keys(&["y"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    let last = std::fs::read_to_string(data.join("last.json")).unwrap();
    assert!(
        last.contains("my own, from an earlier run"),
        "the user's tools are kept for the next start: {last}"
    );
}
