//! The protocol picker (Ctrl+L): "native" first, then "auto" (native, with the answer text read
//! by the protocol its markers name), then every protocol of the registry with the model
//! families it serves, filtered as you type (by name, alias, family, or the name a server gives
//! its parser), Enter to choose.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

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

#[derive(Clone, Debug, Default)]
pub struct ProtocolPicker {
    /// What was typed; matched case-insensitively.
    pub filter: String,
    /// Index into [`ProtocolPicker::entries`].
    pub selected: usize,
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
        let mut p = ProtocolPicker::default();
        p.selected = p
            .entries()
            .iter()
            .position(|e| e.name == current)
            .unwrap_or(0);
        p
    }

    /// The entries the filter leaves: those whose name matches first, then those matched by a
    /// family or an alias; native first, then in registry order.
    pub fn entries(&self) -> Vec<ProtocolEntry> {
        let filter = self.filter.to_lowercase();
        let (mut by_name, by_other): (Vec<_>, Vec<_>) = self
            .matching()
            .into_iter()
            .partition(|e| e.name.to_lowercase().contains(&filter));
        by_name.extend(by_other);
        by_name
    }

    fn matching(&self) -> Vec<ProtocolEntry> {
        let filter = self.filter.to_lowercase();
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
        [native, auto]
            .into_iter()
            .chain(Protocol::all().into_iter().map(|p| ProtocolEntry {
                name: p.name(),
                families: p.families(),
                protocol: Some(p),
                detect: false,
            }))
            .filter(|e| {
                filter.is_empty()
                    || e.name.to_lowercase().contains(&filter)
                    || e.families.to_lowercase().contains(&filter)
                    || e.protocol.as_ref().is_some_and(|p| {
                        p.aliases()
                            .iter()
                            .any(|a| a.to_lowercase().contains(&filter))
                            // The name a server gives its parser (`--tool-call-parser qwen25`).
                            || p.server_parsers()
                                .iter()
                                .any(|(_, n)| n.to_lowercase().contains(&filter))
                    })
            })
            .collect()
    }

    /// Handles a key: typing filters, arrows choose, Enter takes, Esc closes.
    pub fn key(&mut self, key: KeyEvent) -> PickerOutcome {
        let n = self.entries().len();
        match key.code {
            KeyCode::Esc => return PickerOutcome::Closed,
            KeyCode::Enter => {
                return match self.entries().into_iter().nth(self.selected) {
                    Some(e) => PickerOutcome::Chosen {
                        protocol: e.protocol,
                        detect: e.detect,
                    },
                    None => PickerOutcome::Open,
                };
            }
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(n.saturating_sub(1)),
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(n.saturating_sub(1)),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n.saturating_sub(1),
            KeyCode::Backspace => {
                self.filter.pop();
                self.selected = 0;
            }
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.filter.push(c);
                self.selected = 0;
            }
            _ => {}
        }
        PickerOutcome::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(p.selected, 0);
        let p = ProtocolPicker::new("kimi-k2");
        assert_eq!(names(&p)[p.selected], "kimi-k2");
        let mut p = ProtocolPicker::new("auto");
        assert_eq!(p.selected, 1);
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
        assert_eq!(names(&p), ["deepseek-v3", "deepseek-v3.1", "deepseek-dsml"]);
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
        assert_eq!(names(&p), ["qwen3-coder", "hermes"], "name matches first");
        let mut p = ProtocolPicker::new("native");
        for c in "gpt-oss".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert_eq!(names(&p), ["harmony"]);
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
