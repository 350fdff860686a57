//! A tmux server of a test's own, running the real binary in a terminal: keys go in, the screen
//! comes out, and the shell writes toolscope's exit status to a file when it ends. The waits
//! poll the screen (or the file) until what the test waits for is there, up to a deadline.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

pub struct Tmux {
    /// The tmux server's socket name (`-L`), the test's own.
    pub socket: String,
    /// The session toolscope runs in.
    pub session: String,
    /// The folder toolscope runs in, with its exit-status file.
    pub dir: PathBuf,
    /// How long a wait may take before the test fails.
    pub deadline: Duration,
}

/// `s` quoted for `sh`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Tmux {
    pub fn cmd(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// Runs `command` (shell words) in the test's folder in a new 160×48 session; the shell then
    /// writes the exit status to the folder's `exit-status`.
    pub fn start_shell(&self, command: &str) {
        let script = format!(
            "cd {dir} && {command}; echo $? > {status}",
            dir = quote(self.dir.to_str().unwrap()),
            status = quote(self.dir.join("exit-status").to_str().unwrap()),
        );
        self.new_session(&script);
    }

    /// Runs the shell script `script` in a new 160×48 session.
    pub fn new_session(&self, script: &str) {
        let out = self.cmd(&[
            "new-session",
            "-d",
            "-s",
            &self.session,
            "-x",
            "160",
            "-y",
            "48",
            "sh",
            "-c",
            script,
        ]);
        assert!(out.status.success(), "tmux new-session failed: {out:?}");
    }

    pub fn screen(&self) -> String {
        let out = self.cmd(&["capture-pane", "-p", "-t", &self.session]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sends `keys` (tmux key names, or `-l` and literal text).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.session];
        args.extend_from_slice(keys);
        let out = self.cmd(&args);
        assert!(out.status.success(), "send-keys failed: {out:?}");
    }

    /// Polls the screen until `done` holds of it; gives that screen.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < self.deadline,
                "timed out waiting until {what}; the screen is:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Polls for the exit status the shell writes when toolscope ends.
    pub fn wait_for_exit(&self) -> String {
        let path = self.dir.join("exit-status");
        let start = Instant::now();
        loop {
            if let Ok(s) = std::fs::read_to_string(&path)
                && s.ends_with('\n')
            {
                return s.trim().to_string();
            }
            assert!(
                start.elapsed() < self.deadline,
                "toolscope did not exit; the screen is:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
