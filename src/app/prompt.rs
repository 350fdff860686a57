//! The Prompt pane's state: the system prompt, the conversation, the message being written, and
//! a result field for each tool call of the last answer that has no result yet.
//!
//! The conversation is what the next request sends. A finished answer joins it at once (with a
//! result field for each call it made); what is typed (tool results, a message) joins it when a
//! request carrying it is sent, and stays in its field when the request is refused. Ctrl+R with
//! nothing new typed sends the last turn again, the new answer replacing the old one. The
//! history is plain [`Message`]s; the provider layer renders them natively or in the protocol's
//! format.

use std::cell::{Ref, RefCell};

use ratatui_textarea::TextArea;

use toolscope_core::part::ToolCall;
use toolscope_core::provider::{Message, Reasoning};

use super::editor;
use super::run_view::RunId;
use super::transcript::Transcript;

pub const EXAMPLE_SYSTEM: &str = "You are a helpful assistant. Use a tool when it helps.";
pub const EXAMPLE_PROMPT: &str = "What's the weather in Paris for the next 3 days?";

/// The placeholder of an empty message field.
const COMPOSER_HINT: &str = "type a message; Ctrl+R sends";

pub struct Prompt {
    pub system: TextArea<'static>,
    /// The conversation, oldest first (changed only through [`Prompt::history_mut`], which
    /// counts the changes).
    history: Vec<Message>,
    /// Changes of the conversation so far: what the transcript cache is keyed by.
    revision: u64,
    /// The conversation as last drawn, cut into rows (see [`Prompt::transcript`]).
    transcript: RefCell<Transcript>,
    pub composer: TextArea<'static>,
    /// The calls of the last answer that wait for a result, in order.
    pub pending: Vec<ToolCall>,
    /// One editor per pending call, in the same order.
    pub results: Vec<TextArea<'static>>,
    /// Rows the conversation is scrolled up from its end.
    pub transcript_scroll: usize,
    /// The message selected in the conversation (when it has the focus).
    pub selected: usize,
    /// The system prompt and message the fields were made with (what typing changes).
    made_with: (String, String),
    /// The conversation as it stood before a re-run dropped its later messages (the answer it
    /// runs again, and what followed), with the run that replaces them once it has started:
    /// given back when that run brings no answer (it failed, was stopped, or was empty).
    dropped: Option<(Option<RunId>, Dropped)>,
}

/// The part of the conversation a re-run takes away until its answer arrives.
struct Dropped {
    history: Vec<Message>,
    pending: Vec<ToolCall>,
    results: Vec<TextArea<'static>>,
}

/// What Ctrl+R would send, worked out from the conversation and the fields.
#[derive(Clone, Debug, PartialEq)]
pub struct Outgoing {
    /// The whole conversation to send.
    pub messages: Vec<Message>,
    /// Nothing new was typed: the last answer is dropped and its turn sent again.
    pub again: bool,
}

/// Why nothing can be sent yet, and which result field to fill (when one is the reason).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotReady {
    pub why: String,
    pub result: Option<usize>,
}

impl Prompt {
    pub fn new(system: &str, message: &str) -> Prompt {
        let made_with = (system.to_string(), message.to_string());
        let mut composer = editor::prose(message);
        composer.set_placeholder_text(COMPOSER_HINT);
        // Ready to add to the example prompt, or to send it as it is.
        composer.move_cursor(ratatui_textarea::CursorMove::Bottom);
        composer.move_cursor(ratatui_textarea::CursorMove::End);
        let mut system = editor::prose(system);
        system.set_placeholder_text("no system prompt");
        Prompt {
            system,
            history: Vec::new(),
            revision: 1,
            transcript: RefCell::default(),
            composer,
            pending: Vec::new(),
            results: Vec::new(),
            transcript_scroll: 0,
            selected: 0,
            made_with,
            dropped: None,
        }
    }

    /// The conversation, oldest first.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// The conversation, to change (a new revision: the transcript is made again).
    fn history_mut(&mut self) -> &mut Vec<Message> {
        self.revision += 1;
        &mut self.history
    }

    /// The conversation cut into rows `width` cells wide, made again only when the conversation
    /// or the width changed since the last call.
    pub fn transcript(&self, width: usize) -> Ref<'_, Transcript> {
        let key = (self.revision, width);
        if self.transcript.borrow().key != key {
            let mut t = Transcript::new(&self.history, width);
            t.key = key;
            *self.transcript.borrow_mut() = t;
        }
        self.transcript.borrow()
    }

    /// What was typed into the fields and is not in the conversation yet: a message being
    /// written, tool results, a changed system prompt (each named for a question).
    pub fn typed(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self
            .user_text()
            .is_some_and(|t| t.trim() != self.made_with.1.trim())
        {
            out.push("the message being written");
        }
        if self.any_result_typed() {
            out.push("the typed tool results");
        }
        if editor::text_of(&self.system).trim() != self.made_with.0.trim() {
            out.push("the edited system prompt");
        }
        out
    }

    pub fn system_text(&self) -> Option<String> {
        let s = editor::text_of(&self.system);
        (!s.trim().is_empty()).then_some(s)
    }

    /// The message being written, if it has any text.
    pub fn user_text(&self) -> Option<String> {
        let s = editor::text_of(&self.composer);
        (!s.trim().is_empty()).then_some(s)
    }

    /// Whether anything was typed into a result field.
    fn any_result_typed(&self) -> bool {
        self.results
            .iter()
            .any(|r| !editor::text_of(r).trim().is_empty())
    }

    /// What Ctrl+R sends: the conversation, the typed results of the pending calls, and the
    /// message being written. With nothing new typed, the last turn again (without its answer).
    pub fn outgoing(&self) -> Result<Outgoing, NotReady> {
        let user = self.user_text();
        let mut messages = self.history.clone();
        if !self.pending.is_empty() {
            if self.any_result_typed() {
                if let Some(i) = self
                    .results
                    .iter()
                    .position(|r| editor::text_of(r).trim().is_empty())
                {
                    return Err(NotReady {
                        why: format!("type the result of {} first", self.call_named(i)),
                        result: Some(i),
                    });
                }
                for (call, result) in self.pending.iter().zip(&self.results) {
                    messages.push(Message::tool_result(
                        call.tool_call_id.to_string(),
                        editor::text_of(result),
                    ));
                }
            } else if user.is_some() {
                return Err(NotReady {
                    why: format!(
                        "type the result of {} first: a message follows the results of the calls",
                        self.call_named(0)
                    ),
                    result: Some(0),
                });
            } else {
                return Ok(self.again());
            }
        }
        match user {
            Some(text) => messages.push(Message::user(text)),
            None if self.pending.is_empty() => match messages.last() {
                Some(Message::Assistant { .. }) => return Ok(self.again()),
                Some(_) => {}
                None => {
                    return Err(NotReady {
                        why: "type a message first".into(),
                        result: None,
                    });
                }
            },
            None => {}
        }
        Ok(Outgoing {
            messages,
            again: false,
        })
    }

    /// The last turn without its answer.
    fn again(&self) -> Outgoing {
        let mut messages = self.history.clone();
        if matches!(messages.last(), Some(Message::Assistant { .. })) {
            messages.pop();
        }
        Outgoing {
            messages,
            again: true,
        }
    }

    /// The request carrying `out` was sent: what was typed joins the conversation.
    pub fn commit(&mut self, out: &Outgoing) {
        if out.again {
            self.keep_dropped();
        }
        *self.history_mut() = out.messages.clone();
        self.pending.clear();
        self.results.clear();
        if !out.again && self.user_text().is_some() {
            self.clear_composer();
        }
        self.transcript_scroll = 0;
    }

    fn clear_composer(&mut self) {
        self.composer = editor::prose("");
        self.composer.set_placeholder_text(COMPOSER_HINT);
    }

    /// An answer to `sent` arrived: the conversation becomes what was sent and the answer, with
    /// a result field for each call. Returns false when the answer was empty (it does not join).
    pub fn answered(
        &mut self,
        sent: &[Message],
        text: String,
        calls: Vec<ToolCall>,
        reasoning: Vec<Reasoning>,
    ) -> bool {
        *self.history_mut() = sent.to_vec();
        self.pending.clear();
        self.results.clear();
        self.transcript_scroll = 0;
        let content = (!text.trim().is_empty()).then_some(text);
        if content.is_none() && calls.is_empty() {
            return false;
        }
        self.results = calls
            .iter()
            .map(|_| {
                let mut t = editor::prose("");
                t.set_placeholder_text("type the tool's result");
                t
            })
            .collect();
        self.pending = calls.clone();
        // What the provider needs back to continue (signatures, reasoning items) rides along.
        self.history_mut().push(Message::Assistant {
            content,
            tool_calls: calls,
            reasoning,
        });
        true
    }

    /// Puts `text` in the result field of the pending call `tool_call_id` (a result recorded
    /// in a session, played back); nothing when no call of that id waits.
    pub fn fill_result(&mut self, tool_call_id: &str, text: &str) {
        if let Some(i) = self
            .pending
            .iter()
            .position(|c| c.tool_call_id.as_str() == tool_call_id)
            && let Some(r) = self.results.get_mut(i)
        {
            *r = editor::prose(text);
        }
    }

    /// Replaces the conversation (a session was opened): no call waits for a result.
    pub fn set_history(&mut self, messages: Vec<Message>) {
        self.dropped = None;
        *self.history_mut() = messages;
        self.pending.clear();
        self.results.clear();
        self.transcript_scroll = 0;
        self.selected = self.history.len().saturating_sub(1);
    }

    /// Pending call `i` as a person tells it from the others: its tool's name, and where two
    /// calls share it, which one (`get_weather (call 2 of 2, id call-2)`).
    fn call_named(&self, i: usize) -> String {
        let name = &self.pending[i].tool_name;
        let same: Vec<usize> = (0..self.pending.len())
            .filter(|&k| self.pending[k].tool_name == *name)
            .collect();
        if same.len() < 2 {
            return name.clone();
        }
        let nth = same.iter().position(|&k| k == i).unwrap_or(0) + 1;
        format!(
            "{name} (call {nth} of {}, id {})",
            same.len(),
            self.pending[i].tool_call_id
        )
    }

    /// The tools whose result is typed in its field and not sent yet, in order.
    pub fn typed_results(&self) -> Vec<&str> {
        self.pending
            .iter()
            .zip(&self.results)
            .filter(|(_, r)| !editor::text_of(r).trim().is_empty())
            .map(|(c, _)| c.tool_name.as_str())
            .collect()
    }

    /// Whether a new conversation would drop anything: messages, or typed results.
    pub fn has_conversation(&self) -> bool {
        !self.history.is_empty() || self.any_result_typed()
    }

    /// Starts a new conversation: the messages and the result fields go; the system prompt and
    /// the message being written stay.
    pub fn new_conversation(&mut self) {
        self.set_history(Vec::new());
    }

    /// Drops message `i`; an answer's tool results go with it (a result without its call cannot
    /// be sent). Returns how many messages went.
    pub fn delete(&mut self, i: usize) -> usize {
        if i >= self.history.len() {
            return 0;
        }
        let ids: Vec<String> = match &self.history[i] {
            Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .map(|c| c.tool_call_id.to_string())
                .collect(),
            _ => Vec::new(),
        };
        self.dropped = None;
        let before = self.history.len();
        let mut k = 0;
        self.history_mut().retain(|m| {
            let keep = k != i
                && !matches!(m, Message::Tool { tool_call_id, .. } if ids.contains(tool_call_id));
            k += 1;
            keep
        });
        if i + 1 >= before {
            // The last answer went: its calls no longer wait for results.
            self.pending.clear();
            self.results.clear();
        }
        self.selected = self.selected.min(self.history.len().saturating_sub(1));
        before - self.history.len()
    }

    /// The text of message `i` as an edit starts from it (an answer's text, without its calls).
    pub fn text_of(&self, i: usize) -> Option<String> {
        Some(match self.history.get(i)? {
            Message::System { content } | Message::User { content } => content.clone(),
            Message::Assistant { content, .. } => content.clone().unwrap_or_default(),
            Message::Tool { content, .. } => content.clone(),
        })
    }

    /// Replaces the text of message `i`; an answer left with neither text nor calls is refused.
    pub fn edit(&mut self, i: usize, text: String) -> Result<(), String> {
        let Some(m) = self.history_mut().get_mut(i) else {
            return Err("that message is gone".into());
        };
        match m {
            Message::System { content } | Message::User { content } => {
                if text.trim().is_empty() {
                    return Err("a message cannot be empty; d deletes it".into());
                }
                *content = text;
            }
            Message::Tool { content, .. } => *content = text,
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if text.trim().is_empty() && tool_calls.is_empty() {
                    return Err("an answer cannot be empty; d deletes it".into());
                }
                *content = (!text.trim().is_empty()).then_some(text);
            }
        }
        Ok(())
    }

    /// The conversation up to the turn of message `i`, to run again from there: up to and with
    /// `i` when it is a user or tool message, before it when it is an answer. Returns how many
    /// later messages go.
    pub fn cut_after(&mut self, i: usize) -> usize {
        let keep = match self.history.get(i) {
            Some(Message::Assistant { .. }) => i,
            Some(_) => i + 1,
            None => return 0,
        };
        let dropped = self.history.len() - keep;
        if dropped > 0 || !self.pending.is_empty() {
            self.keep_dropped();
        }
        self.history_mut().truncate(keep);
        self.pending.clear();
        self.results.clear();
        self.selected = self.selected.min(self.history.len().saturating_sub(1));
        dropped
    }

    /// Keeps the conversation as it stands, to give back if the re-run about to start brings no
    /// answer (a re-run already waiting keeps the conversation from before it).
    fn keep_dropped(&mut self) {
        if self.dropped.is_none() {
            self.dropped = Some((
                None,
                Dropped {
                    history: self.history.clone(),
                    pending: self.pending.clone(),
                    results: self.results.clone(),
                },
            ));
        }
    }

    /// The re-run that replaces the dropped messages started as run `id`.
    pub fn dropped_for(&mut self, id: RunId) {
        if let Some((run, _)) = &mut self.dropped {
            *run = Some(id);
        }
    }

    /// Run `id` ended (`None`: the re-run never started). With an answer the dropped messages
    /// are gone for good; without one they come back. Returns whether they came back.
    pub fn rerun_ended(&mut self, id: Option<RunId>, answered: bool) -> bool {
        let Some((_, before)) = self.dropped.take_if(|(run, _)| *run == id) else {
            return false;
        };
        if answered {
            return false;
        }
        *self.history_mut() = before.history;
        self.pending = before.pending;
        self.results = before.results;
        self.selected = self.selected.min(self.history.len().saturating_sub(1));
        true
    }

    /// Messages a re-run from message `i` would drop.
    pub fn later_than(&self, i: usize) -> usize {
        match self.history.get(i) {
            Some(Message::Assistant { .. }) => self.history.len() - i,
            Some(_) => self.history.len() - i - 1,
            None => 0,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A call of `name` with no arguments (the transcript's tests use it too).
    pub(crate) fn call(id: &str, name: &str) -> ToolCall {
        ToolCall {
            tool_call_id: id.into(),
            tool_name: name.into(),
            input: json!({}),
            ..Default::default()
        }
    }

    fn sent(p: &mut Prompt) -> Vec<Message> {
        let out = p.outgoing().unwrap();
        p.commit(&out);
        out.messages
    }

    #[test]
    fn a_conversation_goes_turn_by_turn() {
        let mut p = Prompt::new("sys", "weather?");
        let first = sent(&mut p);
        assert_eq!(first, [Message::user("weather?")]);
        assert!(
            p.user_text().is_none(),
            "the message joined the conversation"
        );
        assert!(p.answered(
            &first,
            String::new(),
            vec![call("c1", "get_weather")],
            Vec::new()
        ));
        assert_eq!(p.results.len(), 1);
        // A message alone cannot follow unanswered calls.
        p.composer.insert_str("and?");
        assert_eq!(p.outgoing().unwrap_err().result, Some(0));
        p.composer = editor::prose("");
        p.results[0].insert_str("sunny");
        let second = sent(&mut p);
        assert_eq!(
            second,
            [
                Message::user("weather?"),
                Message::assistant(None, vec![call("c1", "get_weather")]),
                Message::tool_result("c1", "sunny"),
            ]
        );
        assert!(p.answered(&second, "It is sunny.".into(), vec![], Vec::new()));
        p.composer.insert_str("tomorrow?");
        let third = sent(&mut p);
        assert_eq!(third.len(), 5);
        assert_eq!(
            third[3],
            Message::assistant(Some("It is sunny.".into()), vec![])
        );
        assert_eq!(third[4], Message::user("tomorrow?"));
    }

    #[test]
    fn nothing_typed_sends_the_last_turn_again() {
        let mut p = Prompt::new("", "hi");
        let first = sent(&mut p);
        p.answered(&first, "hello".into(), vec![], Vec::new());
        let out = p.outgoing().unwrap();
        assert!(out.again);
        assert_eq!(out.messages, [Message::user("hi")]);
        // The same with calls whose results are all empty.
        p.answered(&first, String::new(), vec![call("c", "f")], Vec::new());
        assert!(p.outgoing().unwrap().again);
        // A partly typed set of results says which one is missing.
        p.answered(
            &first,
            String::new(),
            vec![call("a", "f"), call("b", "g")],
            Vec::new(),
        );
        p.results[0].insert_str("x");
        let e = p.outgoing().unwrap_err();
        assert_eq!(
            e,
            NotReady {
                why: "type the result of g first".into(),
                result: Some(1)
            }
        );
        // Issue 30: of two calls to the same tool, it says which one.
        p.answered(
            &first,
            String::new(),
            vec![call("a", "get_weather"), call("b", "get_weather")],
            Vec::new(),
        );
        p.results[0].insert_str("x");
        assert_eq!(
            p.outgoing().unwrap_err().why,
            "type the result of get_weather (call 2 of 2, id b) first"
        );
        // An empty conversation needs a message.
        let p = Prompt::new("", "");
        assert!(p.outgoing().is_err());
    }

    #[test]
    fn messages_are_edited_deleted_and_cut() {
        let mut p = Prompt::new("", "");
        p.set_history(vec![
            Message::user("a"),
            Message::assistant(None, vec![call("c", "f")]),
            Message::tool_result("c", "r"),
            Message::assistant(Some("done".into()), vec![]),
        ]);
        assert!(p.edit(0, " ".into()).is_err());
        p.edit(0, "b".into()).unwrap();
        assert_eq!(p.text_of(0).as_deref(), Some("b"));
        assert_eq!(p.later_than(2), 1);
        assert_eq!(p.later_than(3), 1);
        // Deleting the call drops its result too.
        assert_eq!(p.delete(1), 2);
        assert_eq!(p.history().len(), 2);
        assert_eq!(p.cut_after(1), 1);
        assert_eq!(p.history(), [Message::user("b")]);
    }
}
