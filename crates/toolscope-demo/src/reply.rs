//! The demo model's answer as a sequence of pieces, the unit of streaming.
//!
//! A [`Reply`] is what the model decided (text, tool calls, or a failure to demonstrate), already
//! cut into token-like [`Piece`]s. The server sends one SSE chunk per piece, and builds the
//! non-streamed response by joining the same pieces, so the two can never disagree.

/// One streamed unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// A fragment of the assistant's text.
    Text(String),
    /// A tool call begins (its arguments follow as [`Piece::CallArgs`]).
    CallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of a call's arguments text.
    CallArgs { index: usize, fragment: String },
    /// A fragment of reasoning, sent apart from the answer (`reasoning_content`); only the
    /// server personas write it.
    Reasoning(String),
}

/// A failure the prompt asked for (see the failure demos in the module docs of `demo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `#429`: HTTP 429 with `retry-after`.
    RateLimit,
    /// `#500`: HTTP 500.
    ServerError,
    /// `#cut`: part of the answer, then the connection drops.
    Cut,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    Stop,
    ToolCalls,
    /// Cut short by `max_tokens`.
    Length,
}

impl Finish {
    /// The OpenAI `finish_reason`.
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::ToolCalls => "tool_calls",
            Finish::Length => "length",
        }
    }
}

/// A finished tool call, as joined from the pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallText {
    pub id: String,
    pub name: String,
    /// The arguments JSON text (deliberately invalid for `#malformed`).
    pub arguments: String,
}

/// What the demo model answers to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    pub pieces: Vec<Piece>,
    pub finish: Finish,
    /// Approximate tokens of the request.
    pub prompt_tokens: u64,
    pub fault: Option<Fault>,
}

/// Each call's start, then its arguments text in the fragments `fragments` cuts it into.
pub fn call_pieces(calls: Vec<CallText>, fragments: impl Fn(String) -> Vec<String>) -> Vec<Piece> {
    let mut pieces = Vec::new();
    for (index, call) in calls.into_iter().enumerate() {
        pieces.push(Piece::CallStart {
            index,
            id: call.id,
            name: call.name,
        });
        pieces.extend(
            fragments(call.arguments)
                .into_iter()
                .map(|fragment| Piece::CallArgs { index, fragment }),
        );
    }
    pieces
}

impl Reply {
    /// A text answer, cut into pieces.
    pub fn text(text: &str, prompt_tokens: u64) -> Reply {
        Reply {
            pieces: split_pieces(text).into_iter().map(Piece::Text).collect(),
            finish: Finish::Stop,
            prompt_tokens,
            fault: None,
        }
    }

    /// Tool calls; each call's arguments text is cut into pieces.
    pub fn calls(calls: Vec<CallText>, prompt_tokens: u64) -> Reply {
        Reply {
            pieces: call_pieces(calls, |arguments| split_pieces(&arguments)),
            finish: Finish::ToolCalls,
            prompt_tokens,
            fault: None,
        }
    }

    /// A failure with no content (429, 500).
    pub fn failure(fault: Fault, prompt_tokens: u64) -> Reply {
        Reply {
            pieces: Vec::new(),
            finish: Finish::Stop,
            prompt_tokens,
            fault: Some(fault),
        }
    }

    /// Keeps at most `max` pieces (`max_tokens`); a reply cut short finishes with `length`.
    pub fn limit(mut self, max: Option<u64>) -> Reply {
        let count = |p: &Piece| !matches!(p, Piece::CallStart { .. });
        let tokens = self.pieces.iter().filter(|p| count(p)).count() as u64;
        if let Some(max) = max.filter(|m| tokens > *m) {
            let mut kept = 0;
            self.pieces.retain(|p| {
                if count(p) {
                    kept += 1;
                }
                kept <= max
            });
            self.finish = Finish::Length;
        }
        self
    }

    /// The completion tokens: one per text or argument piece.
    pub fn completion_tokens(&self) -> u64 {
        self.pieces
            .iter()
            .filter(|p| !matches!(p, Piece::CallStart { .. }))
            .count() as u64
    }

    /// The assistant's text, joined (`None` when the reply has no text pieces).
    pub fn content(&self) -> Option<String> {
        self.joined(|p| match p {
            Piece::Text(t) => Some(t),
            _ => None,
        })
    }

    /// The reasoning, joined (`None` when the reply has none).
    pub fn reasoning(&self) -> Option<String> {
        self.joined(|p| match p {
            Piece::Reasoning(t) => Some(t),
            _ => None,
        })
    }

    /// The pieces `pick` takes, joined (`None` when it takes none).
    fn joined(&self, pick: impl Fn(&Piece) -> Option<&str>) -> Option<String> {
        let mut text = None::<String>;
        for t in self.pieces.iter().filter_map(pick) {
            text.get_or_insert_with(String::new).push_str(t);
        }
        text
    }

    /// The tool calls, joined from their pieces.
    pub fn tool_calls(&self) -> Vec<CallText> {
        let mut calls: Vec<CallText> = Vec::new();
        for p in &self.pieces {
            match p {
                Piece::CallStart { id, name, .. } => calls.push(CallText {
                    id: id.clone(),
                    name: name.clone(),
                    arguments: String::new(),
                }),
                Piece::CallArgs { index, fragment } => {
                    if let Some(c) = calls.get_mut(*index) {
                        c.arguments.push_str(fragment);
                    }
                }
                Piece::Text(_) | Piece::Reasoning(_) => {}
            }
        }
        calls
    }
}

/// Cuts text into token-like pieces: a run of letters and digits (at most eight characters) or
/// of other symbols (at most three), each with the whitespace before it. Markup and JSON thus
/// arrive split inside tags and between quotes, the way a real tokenizer splits them.
pub fn split_pieces(text: &str) -> Vec<String> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Symbol,
    }
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut class: Option<Class> = None;
    let mut run = 0;
    for c in text.chars() {
        if c.is_whitespace() {
            if class.is_some() {
                pieces.push(std::mem::take(&mut current));
                class = None;
            }
            current.push(c);
            continue;
        }
        let this = if c.is_alphanumeric() {
            Class::Word
        } else {
            Class::Symbol
        };
        let limit = if this == Class::Word { 8 } else { 3 };
        if class.is_some() && (class != Some(this) || run >= limit) {
            pieces.push(std::mem::take(&mut current));
            class = None;
        }
        if class.is_none() {
            run = 0;
        }
        current.push(c);
        class = Some(this);
        run += 1;
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Approximate tokens of a text: the number of pieces it splits into.
pub fn count_tokens(text: &str) -> u64 {
    split_pieces(text).len() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_words_symbols_and_tags() {
        assert_eq!(split_pieces("Hello, world!"), ["Hello", ",", " world", "!"]);
        assert_eq!(
            split_pieces("<tool_call>{\"city\": \"Paris\"}"),
            [
                "<", "tool", "_", "call", ">{\"", "city", "\":", " \"", "Paris", "\"}"
            ]
        );
        assert_eq!(split_pieces("abcdefghij"), ["abcdefgh", "ij"]);
        assert_eq!(split_pieces("  a\n\nb "), ["  a", "\n\nb", " "]);
        assert_eq!(split_pieces("héllo wörld"), ["héllo", " wörld"]);
        assert!(split_pieces("").is_empty());
        for text in ["a b", "{\"x\":[1,2]}", "\n\n", "日本語のテキスト"] {
            assert_eq!(split_pieces(text).concat(), text);
        }
    }

    #[test]
    fn calls_join_back_from_their_pieces() {
        let calls = vec![
            CallText {
                id: "a".into(),
                name: "f".into(),
                arguments: "{\"x\": 1}".into(),
            },
            CallText {
                id: "b".into(),
                name: "g".into(),
                arguments: "{}".into(),
            },
        ];
        let r = Reply::calls(calls.clone(), 3);
        assert_eq!(r.tool_calls(), calls);
        assert_eq!(r.content(), None);
        assert_eq!(r.finish, Finish::ToolCalls);
        assert_eq!(r.completion_tokens(), 6);
    }

    #[test]
    fn limit_cuts_and_says_length() {
        let r = Reply::text("one two three four", 1).limit(Some(2));
        assert_eq!(r.content().as_deref(), Some("one two"));
        assert_eq!(r.finish, Finish::Length);
        let r = Reply::text("one two", 1).limit(Some(2));
        assert_eq!(r.finish, Finish::Stop);
    }
}
