//! Owning the real terminal: raw mode, the alternate screen, mouse and paste reporting, and
//! giving all of it back on every way out (normal exit, error, panic).
//!
//! Mouse reporting asks for clicks, drags and the wheel only (not every motion), so that moving
//! the mouse over an idle playground wakes nothing. Terminal input is read on a thread of its
//! own and sent as [`Message`]s into the driver's queue.

use std::io::{self, Stdout, Write};
use std::sync::Once;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use tokio::sync::mpsc::UnboundedSender;

use crate::app::Message;

pub type RealTerminal = Terminal<CrosstermBackend<Stdout>>;

/// Button presses and drags (1000, 1002) in SGR encoding (1006), without all-motion (1003).
const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1006h";
const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1002l\x1b[?1000l";

/// Takes over the terminal. The panic hook that gives it back is installed first, so a panic
/// at any later point leaves a usable shell.
pub fn enter() -> io::Result<RealTerminal> {
    install_panic_hook();
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
    out.write_all(MOUSE_ON.as_bytes())?;
    out.flush()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
    terminal.clear()?;
    Ok(terminal)
}

/// Gives the terminal back. Safe to call more than once, and when `enter` failed halfway.
pub fn restore() {
    let mut out = io::stdout();
    let _ = out.write_all(MOUSE_OFF.as_bytes());
    let _ = execute!(
        out,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
    let _ = out.flush();
    let _ = disable_raw_mode();
}

fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            tracing::error!("panic: {info}");
            previous(info);
        }));
    });
}

/// Reads terminal input on a thread of its own, sending each event as a message. The thread
/// ends when the queue is gone or the terminal cannot be read.
pub fn spawn_input(tx: UnboundedSender<Message>) {
    std::thread::Builder::new()
        .name("toolscope-input".into())
        .spawn(move || {
            loop {
                let message = match event::read() {
                    Ok(Event::Key(k)) => Message::Key(k),
                    Ok(Event::Mouse(m)) => Message::Mouse(m),
                    Ok(Event::Paste(s)) => Message::Paste(s),
                    Ok(Event::Resize(width, height)) => Message::Resize { width, height },
                    Ok(_) => continue,
                    Err(e) => {
                        tracing::warn!("terminal input ended: {e}");
                        return;
                    }
                };
                if tx.send(message).is_err() {
                    return;
                }
            }
        })
        .expect("the input thread starts");
}
