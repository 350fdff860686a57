//! Smoke test of the real binary in a real terminal: tmux runs `toolscope` at 160×48; the test
//! sees the five pane titles, presses Ctrl+R and sees a `tool-call` part from the demo model,
//! opens the help with F1, quits with Ctrl+Q and checks the exit status.
//!
//! It polls `tmux capture-pane` until the expected text appears (with a generous deadline),
//! never sleeping a fixed time as an assertion. tmux runs on a private socket so the user's own
//! tmux is never touched. Without tmux the test is skipped with a reason, unless `CI` is set,
//! where it fails (CI installs it: `apt-get install -y tmux`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_toolscope");
const DEADLINE: Duration = Duration::from_secs(60);

struct Tmux {
    socket: String,
    session: String,
    dir: PathBuf,
}

impl Tmux {
    fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    fn screen(&self) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        let out = self.cmd(&args);
        assert!(out.status.success(), "send-keys failed: {out:?}");
    }

    /// Polls the screen until every one of `texts` is on it.
    fn wait_for(&self, texts: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if texts.iter().all(|t| screen.contains(t)) {
                return screen;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {texts:?}; the screen is:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls for the file the shell writes the exit status to.
    fn wait_for_exit(&self) -> String {
        let path = self.dir.join("exit-status");
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&path)
                && s.ends_with('\n')
            {
                return s.trim().to_string();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "toolscope did not exit; the screen is:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tmux_missing() -> bool {
    !Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

#[test]
fn the_binary_runs_in_tmux() {
    if tmux_missing() {
        if std::env::var_os("CI").is_some() {
            panic!("tmux is required in CI: apt-get install -y tmux");
        }
        eprintln!("skipping the tmux smoke test: tmux is not installed (apt-get install -y tmux)");
        return;
    }
    let id = format!("toolscope-smoke-{}", std::process::id());
    let dir = std::env::temp_dir().join(&id);
    std::fs::create_dir_all(&dir).unwrap();
    let tmux = Tmux {
        socket: id.clone(),
        session: id,
        dir,
    };
    // Logs and user themes go to a directory of the test's own.
    let script = format!(
        "cd {dir} && XDG_DATA_HOME={dir} XDG_CONFIG_HOME={dir} {bin}; echo $? > {status}",
        dir = quote(&tmux.dir),
        bin = quote(Path::new(BIN)),
        status = quote(&tmux.dir.join("exit-status")),
    );
    let out = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        &tmux.session,
        "-x",
        "160",
        "-y",
        "48",
        "sh",
        "-c",
        &script,
    ]);
    assert!(out.status.success(), "tmux new-session failed: {out:?}");

    tmux.wait_for(&[
        " Tools ",
        " Tool choice ",
        " Prompt ",
        " Raw ",
        " Parts ",
        "demo · demo-1",
    ]);
    tmux.keys(&["C-r"]);
    tmux.wait_for(&["tool-call", "● done"]);
    tmux.keys(&["F1"]);
    tmux.wait_for(&[" Help ", "Everywhere"]);
    tmux.keys(&["C-q"]);
    assert_eq!(tmux.wait_for_exit(), "0");
    assert!(
        tmux.dir.join("toolscope").join("toolscope.log").exists(),
        "the log goes to the data directory"
    );
}
