//! The conversation as the Prompt pane shows it: each message cut into labelled rows at the
//! width of the pane.
//!
//! A [`Transcript`] is made from the history once and kept until the history changes or the
//! width does ([`super::Prompt::transcript`] caches it by the history's revision and the width).
//! A row is a byte range of its message's own text, never a copy of it, so a frame costs the rows
//! it shows: a 10 MB answer in the conversation is wrapped once, not on every frame. Each tool
//! result is labelled with its call's name, found in one pass over the history.

use std::collections::HashMap;
use std::ops::Range;

use toolscope_core::provider::Message;

use super::parts::call_summary;
use super::text_log::wrap;

/// How a row is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// Message text (the user's, the model's).
    Text,
    /// A tool call of an answer.
    Call,
    /// What is not the conversation's own text: the system message, tool results, the answer
    /// streaming in.
    Dim,
}

/// One row to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row<'a> {
    /// The message the row belongs to (none: a row about the run in flight).
    pub message: Option<usize>,
    /// The label in front of the row: who wrote it, on the first row of each block only.
    pub label: &'static str,
    pub text: &'a str,
    pub kind: RowKind,
}

/// A run of text that wraps as one: a message's text, one call of an answer, a tool result.
#[derive(Clone, Debug)]
struct Block {
    message: usize,
    who: &'static str,
    kind: RowKind,
    text: BlockText,
}

#[derive(Clone, Debug)]
enum BlockText {
    /// The message's own text (its `content`).
    Content,
    /// Text made for the transcript (a call's summary, a tool result with its call's name).
    Made(String),
}

#[derive(Clone, Debug)]
struct Line {
    block: usize,
    /// Byte range in the block's text.
    range: Range<usize>,
    /// The first row of its block (the one with the label).
    first: bool,
}

/// The conversation's rows at one width.
#[derive(Clone, Debug, Default)]
pub struct Transcript {
    /// The history revision and the width it was made for.
    pub(super) key: (u64, usize),
    blocks: Vec<Block>,
    rows: Vec<Line>,
    /// The rows of each message.
    by_message: Vec<Range<usize>>,
}

impl Transcript {
    /// The rows of `history` at `width` cells (the text column, without the labels).
    pub fn new(history: &[Message], width: usize) -> Transcript {
        let mut t = Transcript::default();
        // The name of each call, by id: a tool result is labelled with it.
        let names: HashMap<&str, &str> = history
            .iter()
            .filter_map(|m| match m {
                Message::Assistant { tool_calls, .. } => Some(tool_calls),
                _ => None,
            })
            .flatten()
            .rev()
            .map(|c| (c.tool_call_id.as_str(), c.tool_name.as_str()))
            .collect();
        for (i, m) in history.iter().enumerate() {
            let start = t.rows.len();
            match m {
                Message::System { content } => t.push(i, "system", RowKind::Dim, content, width),
                Message::User { content } => t.push(i, "you", RowKind::Text, content, width),
                Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } => {
                    if let Some(c) = content {
                        t.push(i, "model", RowKind::Text, c, width);
                    }
                    for (k, c) in tool_calls.iter().enumerate() {
                        // One label for the answer: its text's, or its first call's.
                        let who = if content.is_none() && k == 0 {
                            "model"
                        } else {
                            ""
                        };
                        let summary = format!("→ {}", call_summary(&c.tool_name, &c.input));
                        t.push_made(i, who, RowKind::Call, summary, width);
                    }
                }
                Message::Tool {
                    tool_call_id,
                    content,
                } => {
                    let name = names
                        .get(tool_call_id.as_str())
                        .copied()
                        .unwrap_or(tool_call_id);
                    let text = format!("{name} ⇐ {content}");
                    t.push_made(i, "tool", RowKind::Dim, text, width);
                }
            }
            t.by_message.push(start..t.rows.len());
        }
        t
    }

    /// A block of the message's own text (`text`).
    fn push(&mut self, message: usize, who: &'static str, kind: RowKind, text: &str, width: usize) {
        self.blocks.push(Block {
            message,
            who,
            kind,
            text: BlockText::Content,
        });
        self.wrap_last(text, width);
    }

    /// A block of text made for the transcript.
    fn push_made(
        &mut self,
        message: usize,
        who: &'static str,
        kind: RowKind,
        text: String,
        width: usize,
    ) {
        self.push(message, who, kind, &text, width);
        let last = self.blocks.len() - 1;
        self.blocks[last].text = BlockText::Made(text);
    }

    /// Cuts the text of the last block into rows.
    fn wrap_last(&mut self, text: &str, width: usize) {
        let block = self.blocks.len() - 1;
        for (range, first) in rows_of(text, width) {
            self.rows.push(Line {
                block,
                range,
                first,
            });
        }
    }

    fn text_of<'a>(&'a self, block: usize, history: &'a [Message]) -> &'a str {
        let b = &self.blocks[block];
        match &b.text {
            BlockText::Made(s) => s,
            BlockText::Content => match history.get(b.message) {
                Some(Message::System { content } | Message::User { content }) => content,
                Some(Message::Assistant {
                    content: Some(c), ..
                }) => c,
                _ => "",
            },
        }
    }

    /// How many rows the conversation takes.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Row `i`, its text read from `history` (the history it was made from).
    pub fn row<'a>(&'a self, i: usize, history: &'a [Message]) -> Row<'a> {
        let line = &self.rows[i];
        let block = &self.blocks[line.block];
        Row {
            message: Some(block.message),
            label: if line.first { block.who } else { "" },
            text: &self.text_of(line.block, history)[line.range.clone()],
            kind: block.kind,
        }
    }

    /// The rows of message `i`.
    pub fn rows_of_message(&self, i: usize) -> Option<Range<usize>> {
        self.by_message.get(i).filter(|r| !r.is_empty()).cloned()
    }
}

/// The rows of `text` at `width` cells: byte ranges in `text`, and whether the row is the
/// first (the one labelled). Each line wraps on its own; an empty text has no rows.
pub fn rows_of(text: &str, width: usize) -> impl Iterator<Item = (Range<usize>, bool)> + '_ {
    let base = text.as_ptr() as usize;
    text.lines().enumerate().flat_map(move |(k, line)| {
        let at = line.as_ptr() as usize - base;
        wrap(line, width)
            .into_iter()
            .enumerate()
            .map(move |(j, r)| (at + r.start..at + r.end, k == 0 && j == 0))
    })
}

/// The rows shown of `total` in a view `height` rows tall, scrolled `scroll` rows up from the
/// end, and moved as little as needed to show the rows `keep` (the selected message's).
pub fn window(
    total: usize,
    height: usize,
    scroll: usize,
    keep: Option<Range<usize>>,
) -> Range<usize> {
    let mut end = total.saturating_sub(scroll.min(total.saturating_sub(height)));
    if let Some(keep) = keep.filter(|k| !k.is_empty()) {
        let (first, last) = (keep.start, keep.end - 1);
        if last + 1 > end {
            end = last + 1;
        }
        if first < end.saturating_sub(height) {
            end = (first + height).min(total);
        }
    }
    end.saturating_sub(height)..end
}

/// The rows the Prompt pane shows after the conversation's, as texts (and whether each is an
/// error): the answer of the run in flight as it streams (only its end, what a field
/// `field_w` wide and `height` tall can show), or why the last turn has none.
pub fn after(app: &super::App, field_w: usize, height: u16) -> Vec<(String, bool)> {
    use super::RunState;
    let history = app.prompt.history();
    // Rows after the conversation's: the answer of the run in flight, as it streams; or why the
    // last turn has none. Short, made on each frame.
    let mut after: Vec<(String, bool)> = Vec::new();
    let main_turn = app.compare.is_none()
        && app
            .run
            .record
            .request
            .as_ref()
            .is_some_and(|r| r.messages.len() == history.len());
    if main_turn {
        match &app.run.record.state {
            RunState::Streaming => {
                // Only the end of the answer can show: no more than the field holds (the whole
                // text of a long answer, wrapped every frame, cost a frame as much as the run).
                let room = field_w * height as usize * 4;
                let (so_far, cut) = app.run.record.parts.text_tail(room);
                let calls = app.run.record.parts.call_count();
                let mut shown = if so_far.trim().is_empty() {
                    "streaming…".to_string()
                } else if cut {
                    format!("…{so_far}…")
                } else {
                    format!("{so_far}…")
                };
                if calls > 0 {
                    shown.push_str(&format!(
                        " ({calls} call{})",
                        if calls == 1 { "" } else { "s" }
                    ));
                }
                after.push((shown, false));
            }
            RunState::Failed { category, .. } => after.push((
                format!("✗ no answer ({category}); Ctrl+R sends the turn again"),
                true,
            )),
            RunState::Cancelled => after.push((
                "no answer (cancelled); Ctrl+R sends the turn again".to_string(),
                false,
            )),
            _ => {}
        }
    }
    after
}

/// The message of the conversation drawn at row `y` of the Prompt pane's conversation `area`
/// (rows bottom-aligned, scrolled as the drawing scrolls them), if a message is there.
pub fn message_at(app: &super::App, area: ratatui::layout::Rect, y: u16) -> Option<usize> {
    let field_w = super::layout::PromptAreas::field(area).width.max(1) as usize;
    let history = app.prompt.history();
    let conversation = app.prompt.transcript(field_w);
    let extra: usize = after(app, field_w, area.height)
        .iter()
        .map(|(text, _)| rows_of(text, field_w).count())
        .sum();
    let total = conversation.len() + extra;
    let h = area.height as usize;
    let selected = (app.focus == super::Focus::Transcript).then_some(app.prompt.selected);
    let shown = window(
        total,
        h,
        app.prompt.transcript_scroll,
        selected.and_then(|i| conversation.rows_of_message(i)),
    );
    let pad = h - shown.len();
    let k = (y.checked_sub(area.y)? as usize).checked_sub(pad)?;
    let i = shown.start + k;
    (i < conversation.len())
        .then(|| conversation.row(i, history).message)
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::prompt::tests::call;

    fn shown(t: &Transcript, history: &[Message]) -> Vec<(Option<usize>, String, String)> {
        (0..t.len())
            .map(|i| {
                let r = t.row(i, history);
                (r.message, r.label.to_string(), r.text.to_string())
            })
            .collect()
    }

    #[test]
    fn messages_wrap_under_their_labels_and_results_name_their_calls() {
        let history = vec![
            Message::user("one two three four\nfive"),
            Message::assistant(None, vec![call("c1", "get_weather"), call("c2", "f")]),
            Message::tool_result("c2", "ok"),
            Message::tool_result("c9", "lost"),
            Message::assistant(Some("done".into()), vec![]),
        ];
        let t = Transcript::new(&history, 10);
        let s = |m: usize, l: &str, t: &str| (Some(m), l.to_string(), t.to_string());
        assert_eq!(
            shown(&t, &history),
            [
                s(0, "you", "one two "),
                s(0, "", "three four"),
                s(0, "", "five"),
                s(1, "model", "→ "),
                s(1, "", "get_weathe"),
                s(1, "", "r()"),
                // The second call of the same answer is not a second `model` turn.
                s(1, "", "→ f()"),
                s(2, "tool", "f ⇐ ok"),
                s(3, "tool", "c9 ⇐ lost"),
                s(4, "model", "done"),
            ]
        );
        assert_eq!(t.rows_of_message(1), Some(3..7));
        assert_eq!(t.rows_of_message(9), None);
    }

    #[test]
    fn the_window_keeps_the_selection_in_view() {
        // Following the end.
        assert_eq!(window(10, 4, 0, None), 6..10);
        // Scrolled up, at most to the top.
        assert_eq!(window(10, 4, 3, None), 3..7);
        assert_eq!(window(10, 4, 99, None), 0..4);
        // Fewer rows than the view.
        assert_eq!(window(2, 4, 0, None), 0..2);
        // A selection above the view brings its first row in; below, its last.
        assert_eq!(window(10, 4, 0, Some(1..3)), 1..5);
        assert_eq!(window(10, 4, 6, Some(7..9)), 5..9);
    }
}
