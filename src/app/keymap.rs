//! Which key does what: one table that both the key handling ([`super::update`]) and the help
//! overlay read, so the help cannot drift from the behaviour. It is the state machine's: keys
//! become actions here, and the terminal layer only shows the table (through [`super::help`]).

use super::Focus;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a global key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Run,
    Cancel,
    FocusNext,
    FocusPrev,
    CycleToolChoice,
    PickProtocol,
    Picker,
    Request,
    Compare,
    Verify,
    Execute,
    ExecuteOne,
    Loop,
    AddServer,
    NewConversation,
    ToggleWire,
    LoadTools,
    SaveTools,
    SaveSession,
    OpenSession,
    PlayPause,
    Step,
    Speed,
    Reparse,
    Resend,
    LastMessage,
    Zoom,
    Grow,
    Shrink,
    ResetSplits,
    Help,
    Quit,
}

/// A key and what it does.
#[derive(Debug)]
pub struct Binding {
    pub chords: &'static [(KeyCode, KeyModifiers)],
    /// How the help shows the key.
    pub keys: &'static str,
    pub action: Action,
    pub help: &'static str,
}

const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const NONE: KeyModifiers = KeyModifiers::NONE;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;
const ALT: KeyModifiers = KeyModifiers::ALT;
const ALT_SHIFT: KeyModifiers = KeyModifiers::ALT.union(KeyModifiers::SHIFT);

/// Keys that work wherever the focus is (not inside an overlay, which has its own keys).
pub const GLOBAL: &[Binding] = &[
    Binding {
        chords: &[(KeyCode::Char('r'), CTRL)],
        keys: "Ctrl+R",
        action: Action::Run,
        help: "send the conversation with what is typed; nothing new: the last turn again",
    },
    Binding {
        chords: &[(KeyCode::Esc, NONE)],
        keys: "Esc",
        action: Action::Cancel,
        help: "cancel the run; close compare, a search, an overlay",
    },
    Binding {
        chords: &[(KeyCode::Tab, NONE)],
        keys: "Tab",
        action: Action::FocusNext,
        help: "focus the next pane (and field)",
    },
    Binding {
        chords: &[(KeyCode::BackTab, SHIFT), (KeyCode::BackTab, NONE)],
        keys: "Shift+Tab",
        action: Action::FocusPrev,
        help: "focus the previous pane (and field)",
    },
    Binding {
        chords: &[(KeyCode::Char('t'), CTRL)],
        keys: "Ctrl+T",
        action: Action::CycleToolChoice,
        help: "next tool choice: auto → required → none → each tool",
    },
    Binding {
        chords: &[(KeyCode::Char('l'), CTRL)],
        keys: "Ctrl+L",
        action: Action::PickProtocol,
        help: "the protocol: native, auto or a text protocol (type to filter)",
    },
    Binding {
        chords: &[(KeyCode::Char('p'), CTRL)],
        keys: "Ctrl+P",
        action: Action::Picker,
        help: "provider, model (listed by the provider), base URL, settings",
    },
    Binding {
        chords: &[(KeyCode::Char('e'), ALT), (KeyCode::Char('e'), CTRL)],
        keys: "Alt+E",
        action: Action::Request,
        help: "the exact request: URL, headers, body, protocol prompt; c copies curl (Ctrl+E too outside an editor)",
    },
    Binding {
        chords: &[(KeyCode::Char('s'), CTRL)],
        keys: "Ctrl+S",
        action: Action::SaveSession,
        help: "save the run and its conversation as a session",
    },
    Binding {
        chords: &[(KeyCode::Char('o'), CTRL)],
        keys: "Ctrl+O",
        action: Action::OpenSession,
        help: "open a session (sessions/ and the data folder)",
    },
    Binding {
        chords: &[(KeyCode::Char('k'), ALT), (KeyCode::Char('k'), CTRL)],
        keys: "Alt+K",
        action: Action::Compare,
        help: "compare auto, required, none, a forced tool, each judged (asks first, except on the demo; Ctrl+K too outside an editor)",
    },
    Binding {
        chords: &[(KeyCode::Char('s'), ALT)],
        keys: "Alt+S",
        action: Action::Verify,
        help: "verify: the battery of tool-calling scenarios, scored (asks first, except on the demo); again: hide / show it",
    },
    Binding {
        chords: &[(KeyCode::Char('g'), CTRL)],
        keys: "Ctrl+G",
        action: Action::Execute,
        help: "MCP: execute the answer's calls on their servers, then send the results",
    },
    Binding {
        chords: &[(KeyCode::Char('g'), ALT)],
        keys: "Alt+G",
        action: Action::ExecuteOne,
        help: "MCP: execute the call of the focused result field only; nothing is sent",
    },
    Binding {
        chords: &[(KeyCode::F(12), NONE)],
        keys: "F12",
        action: Action::Loop,
        help: "MCP loop: execute, send, repeat until a text answer (asks first, except on the demo; Esc stops; --max-steps)",
    },
    Binding {
        chords: &[(KeyCode::F(11), NONE)],
        keys: "F11",
        action: Action::AddServer,
        help: "add an MCP server: a command, or URL[=TOKEN_ENV] (a in the MCP list too)",
    },
    Binding {
        chords: &[(KeyCode::Char('n'), CTRL)],
        keys: "Ctrl+N",
        action: Action::NewConversation,
        help: "a new conversation (asks before dropping one)",
    },
    Binding {
        chords: &[(KeyCode::F(2), NONE)],
        keys: "F2",
        action: Action::ToggleWire,
        help: "Raw pane: model output ⇄ wire events",
    },
    Binding {
        chords: &[(KeyCode::F(3), NONE)],
        keys: "F3",
        action: Action::LoadTools,
        help: "load the tools from a file",
    },
    Binding {
        chords: &[(KeyCode::F(4), NONE)],
        keys: "F4",
        action: Action::SaveTools,
        help: "save the tools to a file",
    },
    Binding {
        chords: &[(KeyCode::F(5), NONE)],
        keys: "F5",
        action: Action::PlayPause,
        help: "replay: pause / go on; from the start once ended",
    },
    Binding {
        chords: &[(KeyCode::F(6), NONE)],
        keys: "F6",
        action: Action::Step,
        help: "replay: one wire event, then pause",
    },
    Binding {
        chords: &[(KeyCode::F(7), NONE)],
        keys: "F7",
        action: Action::Speed,
        help: "replay speed: 1× → 2× → 4× → 10× → instant → 0.5×",
    },
    Binding {
        chords: &[(KeyCode::F(8), NONE)],
        keys: "F8",
        action: Action::Reparse,
        help: "what-if: re-parse with this protocol and these tools",
    },
    Binding {
        chords: &[(KeyCode::F(9), NONE)],
        keys: "F9",
        action: Action::Resend,
        help: "what-if: re-send live, beside the recorded answer",
    },
    Binding {
        chords: &[(KeyCode::F(10), NONE)],
        keys: "F10",
        action: Action::LastMessage,
        help: "the last status message in full (a click on the status line too); in Tools, every warning",
    },
    Binding {
        chords: &[(KeyCode::Char('z'), ALT)],
        keys: "Alt+Z",
        action: Action::Zoom,
        help: "zoom the focused pane to the whole screen, and back",
    },
    Binding {
        chords: &[
            (KeyCode::Char('='), ALT),
            (KeyCode::Char('+'), ALT),
            (KeyCode::Char('+'), ALT_SHIFT),
        ],
        keys: "Alt+=",
        action: Action::Grow,
        help: "give the focused pane more of the screen (its row's width and its row's height); remembered",
    },
    Binding {
        chords: &[(KeyCode::Char('-'), ALT)],
        keys: "Alt+-",
        action: Action::Shrink,
        help: "give the focused pane less of the screen; remembered",
    },
    Binding {
        chords: &[(KeyCode::Char('0'), ALT)],
        keys: "Alt+0",
        action: Action::ResetSplits,
        help: "the panes' shares back to the automatic ones",
    },
    Binding {
        chords: &[(KeyCode::F(1), NONE)],
        keys: "F1",
        action: Action::Help,
        help: "this help (←/→ here change the theme)",
    },
    Binding {
        chords: &[(KeyCode::Char('q'), CTRL), (KeyCode::Char('c'), CTRL)],
        keys: "Ctrl+Q",
        action: Action::Quit,
        help: "quit (Ctrl+C too; asks first when work is unsaved)",
    },
];

/// The readline chords an editor keeps for itself (Tools, system prompt, message, result
/// fields): with an editor focused they edit, and no global action takes them. The actions
/// they would be elsewhere (Ctrl+K compare, Ctrl+E request) have Alt chords that work
/// everywhere.
pub const READLINE: &[(char, &str)] = &[
    ('k', "kill to the end of the line"),
    ('e', "end of the line"),
    ('u', "clear to the start of the line"),
    ('a', "start of the line"),
    ('w', "delete the word before the cursor"),
];

/// Keys of one pane, for the help overlay.
pub const PANE_KEYS: &[(&str, &str, &str)] = &[
    ("Tools", "type", "edit the JSON; checked when typing pauses"),
    (
        "MCP list",
        "↑↓ Enter a d r v",
        "copy a tool into the JSON; add, remove, reconnect a server; view",
    ),
    (
        "Lists",
        "/",
        "filter as you type, fuzzy, letters marked (MCP list, Parts, sessions; the protocol, tool-choice and model lists filter as soon as you type); Enter done, Esc clear",
    ),
    (
        "Editors",
        "Ctrl+Z / Ctrl+Y",
        "undo / redo a word of typing at a time (Tools, prompt, results, fields)",
    ),
    (
        "Editors",
        "Ctrl+A Ctrl+E",
        "start, end of the line (readline; Alt+E is the request there)",
    ),
    (
        "Editors",
        "Ctrl+K Ctrl+U Ctrl+W",
        "kill to the end of the line, clear to its start, delete the word back (Alt+K compares)",
    ),
    (
        "Tool choice",
        "←/→ / Enter",
        "choose the mode or the forced tool; find one by typing (fuzzy)",
    ),
    ("Prompt", "type", "system prompt, message, tool results"),
    (
        "Conversation",
        "↑↓ Enter d",
        "choose a message; edit it; delete it",
    ),
    (
        "Conversation",
        "r v",
        "run again from it (asks); read it whole",
    ),
    (
        "Raw",
        "↑↓ PgUp/Dn Home/End",
        "scroll; End follows the stream",
    ),
    ("Raw", "/ n N", "search; next, previous match"),
    (
        "Raw, Parts",
        "t",
        "the last run's timeline: first token, each call's start and end, tokens/s over time",
    ),
    (
        "Parts",
        "? n N",
        "search the parts' text; next, previous match",
    ),
    ("Parts", "/", "filter by part type or tool name"),
    ("Parts", "↑↓ PgUp/Dn Home/End", "select a part; End follows"),
    (
        "Parts",
        "Enter",
        "the selected part in full (JSON, whole text)",
    ),
    ("Parts", "c", "copy the part's JSON (OSC 52)"),
    (
        "Detail",
        "↑↓ PgUp/Dn g/G c",
        "scroll; top, end; copy the whole text",
    ),
    (
        "Request",
        "↑↓ g/G c ←/→",
        "scroll; top, end; copy as curl; other compare column",
    ),
    ("Picker", "Tab ←/→ ↑↓", "fields; choices; listed models"),
    (
        "Sessions",
        "↑↓ / Enter",
        "in the Ctrl+O picker: choose; filter as you type (fuzzy); open",
    ),
    (
        "Verify",
        "↑↓ Enter",
        "choose a failed answer; open it as a session",
    ),
    (
        "Verify",
        "PgUp/Dn Home/End r Esc",
        "scroll the scorecard; run again; stop the battery, then close",
    ),
    ("Questions", "y n", "yes (Enter) or no (Esc)"),
    (
        "Compare",
        "←/→ 1-4",
        "the column shown when the four do not fit side by side (80 columns)",
    ),
    (
        "Mouse",
        "click, wheel",
        "focus a pane; in an editor the cursor goes there, on a list row (MCP list, Parts, a message of the conversation, the protocol, tool-choice and session pickers) it is selected; the wheel scrolls",
    ),
];

/// The keys that act where the focus is, for the status line's key bar (helix, lazygit): the
/// pane's own keys first, then the run key and help. Each key is one the help lists (a test
/// checks it), written short (`^R` for Ctrl+R).
pub fn key_bar(
    focus: Focus,
    searching: bool,
    typing_query: bool,
    typing_filter: bool,
) -> &'static [(&'static str, &'static str)] {
    if typing_query {
        return &[("Enter", "find"), ("Esc", "close")];
    }
    if typing_filter {
        return &[("↑↓", "choose"), ("Enter", "done"), ("Esc", "clear")];
    }
    if searching && focus == Focus::Raw {
        return &[
            ("n/N", "next/previous"),
            ("/", "new search"),
            ("Esc", "close"),
        ];
    }
    if searching && focus == Focus::Parts {
        return &[
            ("n/N", "next/previous"),
            ("?", "new search"),
            ("Esc", "close"),
        ];
    }
    match focus {
        Focus::Tools => &[
            ("^Z", "undo"),
            ("F3", "load"),
            ("F4", "save"),
            ("^R", "run"),
            ("F1", "help"),
        ],
        Focus::Mcp => &[
            ("Enter", "copy tool"),
            ("/", "filter"),
            ("a", "add"),
            ("d", "remove"),
            ("r", "reconnect"),
            ("v", "view"),
            ("F1", "help"),
        ],
        Focus::ToolChoice => &[
            ("←/→", "choose"),
            ("^T", "next mode"),
            ("^R", "run"),
            ("F1", "help"),
        ],
        Focus::System | Focus::Composer => &[
            ("^R", "send"),
            ("^Z", "undo"),
            ("Alt+K", "compare"),
            ("Alt+E", "request"),
            ("F1", "help"),
        ],
        Focus::Result(_) => &[
            ("^R", "send results"),
            ("^G", "run on MCP"),
            ("^Z", "undo"),
            ("F1", "help"),
        ],
        Focus::Transcript => &[
            ("Enter", "edit"),
            ("d", "delete"),
            ("r", "re-run"),
            ("v", "view"),
            ("F1", "help"),
        ],
        Focus::Raw => &[
            ("↑↓", "scroll"),
            ("End", "follow"),
            ("/", "search"),
            ("t", "timeline"),
            ("F2", "wire"),
            ("F1", "help"),
        ],
        Focus::Parts => &[
            ("↑↓", "select"),
            ("Enter", "detail"),
            ("c", "copy"),
            ("/", "filter"),
            ("?", "search"),
            ("t", "timeline"),
            ("F1", "help"),
        ],
    }
}

/// The compare view's key bar.
pub const COMPARE_BAR: &[(&str, &str)] = &[
    ("←/→", "column"),
    ("^R", "again"),
    ("Alt+E", "request"),
    ("Esc", "close"),
    ("F1", "help"),
];

/// The global action of `key` where the focus is: none for a readline chord while an editor
/// has the focus ([`READLINE`]).
pub fn global_at(key: &KeyEvent, focus: Focus) -> Option<Action> {
    let editing = matches!(
        focus,
        Focus::Tools | Focus::System | Focus::Composer | Focus::Result(_)
    );
    if editing
        && READLINE
            .iter()
            .any(|&(c, _)| matches(key, KeyCode::Char(c), CTRL))
    {
        return None;
    }
    global(key)
}

/// The keys of the verify view (Alt+S), for the key bar: while the battery runs, and once it
/// ended.
pub fn verify_bar(running: bool) -> &'static [(&'static str, &'static str)] {
    if running {
        &[("Esc", "stop"), ("Alt+S", "hide"), ("F1", "help")]
    } else {
        &[
            ("↑↓", "choose"),
            ("Enter", "open"),
            ("r", "again"),
            ("Esc", "close"),
            ("F1", "help"),
        ]
    }
}

/// The global action of `key`, if it has one.
pub fn global(key: &KeyEvent) -> Option<Action> {
    GLOBAL
        .iter()
        .find(|b| b.chords.iter().any(|&(c, m)| matches(key, c, m)))
        .map(|b| b.action)
}

fn matches(key: &KeyEvent, code: KeyCode, mods: KeyModifiers) -> bool {
    let relevant = KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SHIFT;
    let have = key.modifiers & relevant;
    match (key.code, code) {
        // Shift is ignored on letters (Caps Lock; terminals that report Ctrl+Shift+R for Ctrl+R).
        (KeyCode::Char(a), KeyCode::Char(b)) => {
            a.to_ascii_lowercase() == b && have - KeyModifiers::SHIFT == mods - KeyModifiers::SHIFT
        }
        (a, b) => a == b && have == mods & relevant,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key bar and the help agree: every key the bar shows is one the help lists, for the
    /// pane or for everywhere.
    #[test]
    fn the_key_bar_shows_keys_the_help_lists() {
        let focuses = [
            Focus::Tools,
            Focus::Mcp,
            Focus::ToolChoice,
            Focus::System,
            Focus::Composer,
            Focus::Result(0),
            Focus::Transcript,
            Focus::Raw,
            Focus::Parts,
        ];
        let listed: Vec<String> = GLOBAL
            .iter()
            .map(|b| b.keys.to_string())
            .chain(PANE_KEYS.iter().map(|(_, k, _)| k.to_string()))
            .chain(["Enter".to_string(), "Esc".to_string()])
            .collect();
        let in_help = |key: &str| {
            let long = key.replace('^', "Ctrl+");
            let parts: Vec<&str> = long.split('/').collect();
            listed.iter().any(|l| {
                l.split([' ', '/']).any(|w| w == long)
                    || (parts.len() > 1 && l.contains(&long.replace('/', " ")))
                    || l.contains(&long)
            })
        };
        for f in focuses {
            for (search, typing, filter) in [
                (false, false, false),
                (true, false, false),
                (true, true, false),
                (false, false, true),
            ] {
                let bar = key_bar(f, search, typing, filter);
                assert!(!bar.is_empty(), "{f:?}");
                for (key, what) in bar {
                    assert!(in_help(key), "{f:?}: {key} ({what}) is not in the help");
                }
            }
        }
        for (key, what) in COMPARE_BAR {
            assert!(in_help(key), "compare: {key} ({what}) is not in the help");
        }
        for running in [true, false] {
            for (key, what) in verify_bar(running) {
                assert!(in_help(key), "verify: {key} ({what}) is not in the help");
            }
        }
        // The conversation's bar is the one the issue asked for.
        assert_eq!(
            key_bar(Focus::Transcript, false, false, false)[..4],
            [
                ("Enter", "edit"),
                ("d", "delete"),
                ("r", "re-run"),
                ("v", "view")
            ]
        );
    }

    fn key(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, mods)
    }

    #[test]
    fn every_binding_is_reachable_and_plain_letters_are_not_taken() {
        for b in GLOBAL {
            for &(c, m) in b.chords {
                assert_eq!(global(&key(c, m)), Some(b.action), "{}", b.keys);
            }
        }
        assert_eq!(
            global(&key(KeyCode::Char('R'), CTRL | SHIFT)),
            Some(Action::Run)
        );
        assert_eq!(global(&key(KeyCode::Char('r'), NONE)), None);
        assert_eq!(global(&key(KeyCode::Char('r'), KeyModifiers::ALT)), None);
        assert_eq!(global(&key(KeyCode::Enter, NONE)), None);
    }

    /// In an editor the readline chords edit; the actions Ctrl+K and Ctrl+E have elsewhere are
    /// on Alt+K and Alt+E everywhere, and the help names every chord.
    #[test]
    fn readline_chords_are_the_editors_and_the_actions_move_to_alt() {
        let editors = [
            Focus::Tools,
            Focus::System,
            Focus::Composer,
            Focus::Result(0),
        ];
        for f in editors {
            for &(c, _) in READLINE {
                assert_eq!(
                    global_at(&key(KeyCode::Char(c), CTRL), f),
                    None,
                    "{f:?} {c}"
                );
            }
            assert_eq!(
                global_at(&key(KeyCode::Char('k'), ALT), f),
                Some(Action::Compare)
            );
            assert_eq!(
                global_at(&key(KeyCode::Char('e'), ALT), f),
                Some(Action::Request)
            );
            // The other chords stay global in an editor.
            assert_eq!(
                global_at(&key(KeyCode::Char('r'), CTRL), f),
                Some(Action::Run)
            );
        }
        for f in [
            Focus::Mcp,
            Focus::ToolChoice,
            Focus::Transcript,
            Focus::Raw,
            Focus::Parts,
        ] {
            assert_eq!(
                global_at(&key(KeyCode::Char('k'), CTRL), f),
                Some(Action::Compare)
            );
            assert_eq!(
                global_at(&key(KeyCode::Char('e'), CTRL), f),
                Some(Action::Request)
            );
        }
        let help: String = PANE_KEYS.iter().map(|(_, k, _)| format!("{k} ")).collect();
        for &(c, _) in READLINE {
            let chord = format!("Ctrl+{}", c.to_ascii_uppercase());
            assert!(help.contains(&chord), "{chord} is not in the help");
        }
    }
}
