//! `/` in the Tool choice pane: every mode (auto, required, none, then each tool forced by name,
//! with its description) in a list filtered as you type, fuzzy, the matched letters marked;
//! Enter chooses. With hundreds of tools, ←/→ through them one at a time is no way to find one.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use toolscope_core::tool::{ToolChoice, ToolSet};

use super::choice;
use super::fuzzy;

/// One mode of the list.
#[derive(Clone, Debug)]
pub struct ChoiceEntry {
    pub choice: ToolChoice,
    /// How the pane labels it (`auto`, `tool:get_weather`).
    pub label: String,
    /// The tool's description (what the other modes mean).
    pub detail: String,
}

pub struct ChoicePicker {
    entries: Vec<ChoiceEntry>,
    pub filter: String,
    /// The row selected among those shown.
    pub selected: usize,
    /// The entries the filter leaves, best first, with their label's matched letters.
    shown: Vec<(usize, Vec<usize>)>,
}

/// What a key did.
pub enum ChoiceOutcome {
    Open,
    Closed,
    Chosen(ToolChoice),
}

impl ChoicePicker {
    /// The modes for `tools`, the current one selected.
    pub fn new(tools: &ToolSet, current: &ToolChoice) -> ChoicePicker {
        let entries: Vec<ChoiceEntry> = choice::modes(tools)
            .into_iter()
            .map(|m| {
                let detail = match &m {
                    ToolChoice::Auto => "the model decides whether to call a tool".to_string(),
                    ToolChoice::Required => "the model must call a tool".to_string(),
                    ToolChoice::None => "the model must not call a tool".to_string(),
                    ToolChoice::Tool(name) => tools
                        .get(name)
                        .map(|t| t.def.description.clone())
                        .unwrap_or_default(),
                };
                ChoiceEntry {
                    label: m.label(),
                    choice: m,
                    detail,
                }
            })
            .collect();
        let mut p = ChoicePicker {
            entries,
            filter: String::new(),
            selected: 0,
            shown: Vec::new(),
        };
        p.refilter();
        p.selected = p
            .entries
            .iter()
            .position(|e| e.choice == *current)
            .unwrap_or(0);
        p
    }

    fn refilter(&mut self) {
        // The label and the description are matched; only the label's letters are marked.
        let texts: Vec<String> = self
            .entries
            .iter()
            .map(|e| format!("{} {}", e.label, e.detail))
            .collect();
        self.shown = fuzzy::filter(&self.filter, texts.iter().map(String::as_str))
            .into_iter()
            .map(|(i, m)| {
                let n = self.entries[i].label.chars().count();
                (i, m.positions.into_iter().filter(|&p| p < n).collect())
            })
            .collect();
        self.selected = 0;
    }

    /// The rows shown: each mode and its label's matched letters.
    pub fn shown(&self) -> impl Iterator<Item = (&ChoiceEntry, &[usize])> {
        self.shown
            .iter()
            .map(|(i, marks)| (&self.entries[*i], marks.as_slice()))
    }

    pub fn shown_len(&self) -> usize {
        self.shown.len()
    }

    /// How many modes there are in all.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Typing filters, ↑/↓ choose, Enter takes, Esc clears the filter and then closes.
    pub fn key(&mut self, key: KeyEvent) -> ChoiceOutcome {
        let n = self.shown.len();
        match key.code {
            KeyCode::Esc if !self.filter.is_empty() => {
                self.filter.clear();
                self.refilter();
            }
            KeyCode::Esc => return ChoiceOutcome::Closed,
            KeyCode::Enter => {
                return match self.shown.get(self.selected) {
                    Some((i, _)) => ChoiceOutcome::Chosen(self.entries[*i].choice.clone()),
                    None => ChoiceOutcome::Open,
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
                self.refilter();
            }
            KeyCode::Char(c)
                if !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                self.filter.push(c);
                self.refilter();
            }
            _ => {}
        }
        ChoiceOutcome::Open
    }

    /// Pasted text joins the filter.
    pub fn paste(&mut self, text: &str) {
        self.filter.push_str(text.trim());
        self.refilter();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolscope_core::tool::ToolDef;

    fn press(p: &mut ChoicePicker, code: KeyCode) -> ChoiceOutcome {
        p.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn many_tools(n: usize) -> ToolSet {
        ToolSet::new(
            (0..n)
                .map(|i| {
                    ToolDef::new(
                        &format!("tool_{i:03}"),
                        &format!("does thing number {i}"),
                        json!({"type": "object"}),
                    )
                })
                .chain([ToolDef::new(
                    "get_weather",
                    "The weather forecast for a city",
                    json!({"type": "object"}),
                )])
                .collect(),
        )
        .unwrap()
    }

    #[test]
    fn five_hundred_tools_are_found_by_typing() {
        let tools = many_tools(500);
        let mut p = ChoicePicker::new(&tools, &ToolChoice::Auto);
        assert_eq!(p.len(), 504);
        assert_eq!(p.shown_len(), 504);
        for c in "weather".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        let (first, marks) = p.shown().next().unwrap();
        assert_eq!(first.label, "tool:get_weather");
        assert_eq!(marks, [9, 10, 11, 12, 13, 14, 15], "the run in its name");
        let ChoiceOutcome::Chosen(chosen) = press(&mut p, KeyCode::Enter) else {
            panic!("Enter chooses")
        };
        assert_eq!(chosen, ToolChoice::Tool("get_weather".into()));
        // A description matches too; Esc clears the filter, then closes.
        let mut p = ChoicePicker::new(&tools, &ToolChoice::Tool("tool_007".into()));
        assert_eq!(p.selected, 10, "the current mode selected");
        for c in "forecast".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert_eq!(p.shown().next().unwrap().0.label, "tool:get_weather");
        assert!(matches!(press(&mut p, KeyCode::Esc), ChoiceOutcome::Open));
        assert_eq!(p.shown_len(), 504);
        assert!(matches!(press(&mut p, KeyCode::Esc), ChoiceOutcome::Closed));
        // Nothing matches: nothing to choose.
        let mut p = ChoicePicker::new(&tools, &ToolChoice::Auto);
        for c in "qqqq".chars() {
            press(&mut p, KeyCode::Char(c));
        }
        assert_eq!(p.shown_len(), 0);
        assert!(matches!(press(&mut p, KeyCode::Enter), ChoiceOutcome::Open));
    }
}
