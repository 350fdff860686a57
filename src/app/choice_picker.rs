//! `/` in the Tool choice pane: every mode (auto, required, none, then each tool forced by name,
//! with its description) in a list filtered as you type, fuzzy, the matched letters marked;
//! Enter chooses. With hundreds of tools, ←/→ through them one at a time is no way to find one.

use ratatui::crossterm::event::{KeyCode, KeyEvent};

use toolscope_core::tool::{ToolChoice, ToolSet};

use super::choice;
use super::fuzzy::{FilterKey, ListFilter};

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
    /// The filter, typed as you go; matches a label or a description, marks the label.
    pub list: ListFilter,
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
        let mut list = ListFilter::as_you_type();
        list.set_items(
            entries
                .iter()
                .map(|e| (format!("{} {}", e.label, e.detail), e.label.chars().count()))
                .collect(),
        );
        if let Some(i) = entries.iter().position(|e| e.choice == *current) {
            list.select_item(i);
        }
        ChoicePicker { entries, list }
    }

    /// The rows shown: each mode and its label's matched letters.
    pub fn shown(&self) -> impl Iterator<Item = (&ChoiceEntry, &[usize])> {
        self.list
            .shown()
            .map(|(i, marks)| (&self.entries[i], marks))
    }

    pub fn shown_len(&self) -> usize {
        self.list.shown_len()
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
        if self.list.key(&key) == FilterKey::Taken {
            return ChoiceOutcome::Open;
        }
        match key.code {
            KeyCode::Esc => ChoiceOutcome::Closed,
            KeyCode::Enter => match self.list.chosen() {
                Some(i) => ChoiceOutcome::Chosen(self.entries[i].choice.clone()),
                None => ChoiceOutcome::Open,
            },
            _ => ChoiceOutcome::Open,
        }
    }

    /// Pasted text joins the filter.
    pub fn paste(&mut self, text: &str) {
        self.list.paste(text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::KeyModifiers;
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
        assert_eq!(p.list.selected, 10, "the current mode selected");
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
