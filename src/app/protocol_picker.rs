//! The protocol picker (Ctrl+L): "native" first, then "auto" (native, with the answer text read
//! by the protocol its markers name), then every protocol of the registry with the model
//! families it serves, filtered as you type (by name, alias, family, or the name a server gives
//! its parser), Enter to choose.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use super::fuzzy::{FilterKey, ListFilter};

use toolscope_core::protocol::Protocol;

/// One line of the picker.
#[derive(Clone, Debug)]
pub struct ProtocolEntry {
    /// `native`, or the protocol's name.
    pub name: &'static str,
    /// The model families (for native: what it means).
    pub families: &'static str,
    /// `None`: native (the provider's own tool calling), or auto.
    pub protocol: Option<Protocol>,
    /// Auto: native, with the answer text read with protocol detection.
    pub detect: bool,
}

/// What native means, on its line.
pub const NATIVE: &str = "the provider's own tool calling (no text protocol)";

/// What auto means, on its line.
pub const AUTO: &str = "native; calls in the text read by the detected protocol";

#[derive(Clone, Debug)]
pub struct ProtocolPicker {
    /// Native, auto, then every protocol of the registry.
    all: Vec<ProtocolEntry>,
    /// The filter, typed as you go: fuzzy, on the name, the families, the aliases and the
    /// names servers give their parsers; the name's matched letters are marked.
    pub list: ListFilter,
}

/// What a key did.
pub enum PickerOutcome {
    Open,
    Closed,
    /// `protocol: None` is native; with `detect`, auto.
    Chosen {
        protocol: Option<Protocol>,
        detect: bool,
    },
}

impl ProtocolPicker {
    /// The picker with the entry named `current` selected (`native`, `auto` or a protocol).
    pub fn new(current: &str) -> Self {
        let native = ProtocolEntry {
            name: "native",
            families: NATIVE,
            protocol: None,
            detect: false,
        };
        let auto = ProtocolEntry {
            name: "auto",
            families: AUTO,
            protocol: None,
            detect: true,
        };
        let all: Vec<ProtocolEntry> = [native, auto]
            .into_iter()
            .chain(Protocol::all().into_iter().map(|p| ProtocolEntry {
                name: p.name(),
                families: p.families(),
                protocol: Some(p),
                detect: false,
            }))
            .collect();
        let mut list = ListFilter::as_you_type();
        list.set_items(all.iter().map(haystack).collect());
        if let Some(i) = all.iter().position(|e| e.name == current) {
            list.select_item(i);
        }
        ProtocolPicker { all, list }
    }

    /// The entries the filter leaves, best match first (native, auto, then registry order
    /// without a filter).
    pub fn entries(&self) -> Vec<ProtocolEntry> {
        self.shown().map(|(e, _)| e.clone()).collect()
    }

    /// The rows shown: each entry and its name's matched letters.
    pub fn shown(&self) -> impl Iterator<Item = (&ProtocolEntry, &[usize])> {
        self.list.shown().map(|(i, marks)| (&self.all[i], marks))
    }

    /// How many entries there are in all.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// Handles a key: typing filters, arrows choose, Enter takes, Esc clears the filter, then
    /// closes.
    pub fn key(&mut self, key: KeyEvent) -> PickerOutcome {
        if self.list.key(&key) == FilterKey::Taken {
            return PickerOutcome::Open;
        }
        match key.code {
            KeyCode::Esc => PickerOutcome::Closed,
            KeyCode::Enter => match self.list.chosen().map(|i| &self.all[i]) {
                Some(e) => PickerOutcome::Chosen {
                    protocol: e.protocol.clone(),
                    detect: e.detect,
                },
                None => PickerOutcome::Open,
            },
            _ => PickerOutcome::Open,
        }
    }
}

/// What the filter matches for an entry: its name (the letters marked), what it serves, its
/// aliases and the names servers give their parser (`--tool-call-parser qwen25`).
fn haystack(e: &ProtocolEntry) -> (String, usize) {
    let mut text = format!("{} {}", e.name, e.families);
    if let Some(p) = &e.protocol {
        for a in p.aliases() {
            text.push(' ');
            text.push_str(a);
        }
        for (_, n) in p.server_parsers() {
            text.push(' ');
            text.push_str(n);
        }
    }
    (text, e.name.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyModifiers;

    fn press(p: &mut ProtocolPicker, code: KeyCode) -> PickerOutcome {
        p.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn names(p: &ProtocolPicker) -> Vec<&'static str> {
        p.entries().iter().map(|e| e.name).collect()
    }

    #[test]
    fn native_and_auto_first_then_every_protocol_of_the_registry() {
        let p = ProtocolPicker::new("native");
        let mut want = vec!["native", "auto"];
        want.extend(Protocol::names());
        assert_eq!(names(&p), want);
        assert_eq!(p.list.selected, 0);
        let p = ProtocolPicker::new("kimi-k2");
        assert_eq!(names(&p)[p.list.selected], "kimi-k2");
        let mut p = ProtocolPicker::new("auto");
        assert_eq!(p.list.selected, 1);
        assert!(matches!(
            press(&mut p, KeyCode::Enter),
            PickerOutcome::Chosen {
                protocol: None,
                detect: true
            }
        ));
        // Typed, by its name or by what it does.
        for filter in ["auto", "detect"] {
            let mut p = ProtocolPicker::new("native");
            for c in filter.chars() {
                press(&mut p, KeyCode::Char(c));
            }
            assert_eq!(names(&p).first(), Some(&"auto"), "{filter}");
        }
    }

    /// A user who knows their server's `--tool-call-parser` finds ours by typing it.
    #[test]
    fn a_servers_parser_name_finds_the_protocol() {
        for (typed, want) in [
            ("qwen25", "hermes"),
            ("kimi_k2", "kimi-k2"),
            ("step3p5", "qwen3-coder"),
        ] {
            let mut p = ProtocolPicker::new("native");
            for c in typed.chars() {
                press(&mut p, KeyCode::Char(c));
            }
            assert!(names(&p).contains(&want), "{typed}: {:?}", names(&p));
        }
    }

    #[test]
    fn typing_filters_by_name_family_or_alias_and_enter_chooses() {
        let mut p = ProtocolPicker::new("native");
        for c in "deepseek".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        // Fuzzy: the names with the word in a row first, in registry order; letters spread
        // through another protocol's families rank after them.
        assert_eq!(
            names(&p)[..3],
            ["deepseek-v3", "deepseek-v3.1", "deepseek-dsml"]
        );
        let (_, marks) = p.shown().next().unwrap();
        assert_eq!(
            marks,
            [0, 1, 2, 3, 4, 5, 6, 7],
            "the name's matched letters"
        );
        press(&mut p, KeyCode::Down);
        let PickerOutcome::Chosen {
            protocol: Some(chosen),
            detect: false,
        } = press(&mut p, KeyCode::Enter)
        else {
            panic!("Enter chooses");
        };
        assert_eq!(chosen.name(), "deepseek-v3.1");
        // By family, case-insensitively, and by alias.
        let mut p = ProtocolPicker::new("native");
        for c in "QWEN".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert_eq!(
            names(&p)[..2],
            ["qwen3-coder", "hermes"],
            "name matches first"
        );
        let hermes = p.shown().nth(1).unwrap().1;
        assert!(
            hermes.is_empty(),
            "a family's match marks no letter of the name"
        );
        let mut p = ProtocolPicker::new("native");
        for c in "gpt-oss".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert_eq!(names(&p)[0], "harmony");
        // Backspace widens again; no match leaves nothing to choose.
        for _ in 0..7 {
            press(&mut p, KeyCode::Backspace);
        }
        assert_eq!(names(&p).len(), Protocol::names().len() + 2);
        for c in "zzz".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert!(names(&p).is_empty());
        assert!(matches!(press(&mut p, KeyCode::Enter), PickerOutcome::Open));
        // Esc clears the filter, a second Esc closes.
        assert!(matches!(press(&mut p, KeyCode::Esc), PickerOutcome::Open));
        assert_eq!(names(&p).len(), Protocol::names().len() + 2);
        assert!(matches!(press(&mut p, KeyCode::Esc), PickerOutcome::Closed));
        // Native is chosen like any other.
        let mut p = ProtocolPicker::new("hermes");
        press(&mut p, KeyCode::Home);
        assert!(matches!(
            press(&mut p, KeyCode::Enter),
            PickerOutcome::Chosen {
                protocol: None,
                detect: false
            }
        ));
    }
}
