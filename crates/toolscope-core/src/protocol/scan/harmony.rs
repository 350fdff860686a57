//! The harmony channel reader: messages with a header (`<|start|>` role, `<|channel|>` channel,
//! `to=` recipient, `<|constrain|>` type) up to `<|message|>`, then content up to an end token;
//! a recipient makes the message a call, the `analysis` channel is reasoning. An output that
//! writes a space after its special tokens (`<|channel|> analysis<|message|> …`) reads the same:
//! header words are split on whitespace anyway, and one space after `<|message|>` or an end
//! token is format. The format is `formats/harmony.rs`.

use crate::args::ArgsWriter;
use crate::json::lexer::find1;
use crate::json::{Lexer, Step};
use crate::part::{ErrorPart, PartId};
use crate::protocol::scan::forked::Handover as _;
use crate::protocol::scan::framed::valid_name;
use crate::protocol::scan::markup::{Dialect, MarkupScanner};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::holdback::{Holdback, Steps, drive};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// The channels of the format: reasoning, calls and preambles, the answer.
const CHANNELS: &[&str] = &["analysis", "commentary", "final"];

pub(crate) const START: &str = "<|start|>";

pub(crate) const CHANNEL: &str = "<|channel|>";

pub(crate) const MESSAGE: &str = "<|message|>";

pub(crate) const CONSTRAIN: &str = "<|constrain|>";

pub(crate) const END: &str = "<|end|>";

pub(crate) const CALL: &str = "<|call|>";

pub(crate) const RETURN: &str = "<|return|>";

/// The special tokens the scanner reads.
const TOKENS: [&str; 7] = [START, CHANNEL, MESSAGE, CONSTRAIN, END, CALL, RETURN];

/// What a message addressed to a tool holds.
#[derive(Clone, Copy)]
pub(crate) enum Body {
    /// The arguments as one JSON object (harmony).
    Json,
    /// Function markup in this dialect, read by the markup engine (ATEM's
    /// `<atem:function_calls>` block): the calls are its invokes.
    Markup(&'static Dialect),
}

/// A family's message syntax: harmony's ([`HARMONY`]), or another family's that writes its
/// messages the same way (a header up to `<|message|>`, content up to an end token).
pub(crate) struct Syntax {
    /// The special tokens read: the header's and the ends.
    pub tokens: &'static [&'static str],
    /// The tokens that end a message.
    pub ends: &'static [&'static str],
    /// Recipients that are no tool: what their message is (`to=self` reasoning, `to=user`
    /// text).
    pub readers: &'static [(&'static str, bool)],
    pub body: Body,
    /// The template opens the first header (`<|start|>assistant`, or `<|start|>` alone): an
    /// output that begins with a recipient (` to=self<|message|>`) or the role begins inside it.
    pub opened: bool,
    /// A whole ` to=RECIPIENT<|message|>` ends the message it stands in and begins the next,
    /// whatever end token the model left out (ATEM's models switch recipients so).
    pub switches: bool,
    /// A call named `f.f` that is none of the tools is the tool `f` (ATEM's template writes a
    /// bare tool's recipient doubled).
    pub doubled_names: bool,
}

/// Harmony's messages.
pub(crate) static HARMONY: Syntax = Syntax {
    tokens: &TOKENS,
    ends: &[END, CALL, RETURN],
    readers: &[],
    body: Body::Json,
    opened: false,
    switches: false,
    doubled_names: false,
};

/// The longest a header may be before it is taken for text.
const MAX_HEADER: usize = 512;

/// The longest recipient a switch (` to=RECIPIENT<|message|>`) may name.
const MAX_RECIPIENT: usize = 128;

/// The role a header the template opened with `<|start|>` alone names first.
const ROLE: &str = "assistant";

/// A byte of a recipient's name in a switch.
fn recipient_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b':' | b'/')
}

/// Where a switch ends `text[from..end]`, `end` being where `<|message|>` stands: the offset
/// of the whitespace before its `to=` (or of the `to=` itself at `from` when the content began
/// there, `at_start`).
fn switch_before(text: &str, from: usize, end: usize, at_start: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut r = end;
    while r > from && end - r <= MAX_RECIPIENT && recipient_byte(bytes[r - 1]) {
        r -= 1;
    }
    if r == end || end - r > MAX_RECIPIENT || r < from + 3 || &bytes[r - 3..r] != b"to=" {
        return None;
    }
    let to = r - 3;
    if to > from && bytes[to - 1].is_ascii_whitespace() {
        Some(to - 1)
    } else {
        (to == from && at_start).then_some(to)
    }
}

/// Where the end of `text[from..end]` may begin a switch still arriving (whitespace, then a
/// beginning of `to=RECIPIENT`): the offset to hold back from.
fn switch_tail(text: &str, from: usize, end: usize, at_start: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let low = from.max(end.saturating_sub(MAX_RECIPIENT + 4));
    let w = (low..end).rev().find(|&k| bytes[k].is_ascii_whitespace());
    let tail = match w {
        Some(w) => w + 1,
        None if at_start && low == from => from,
        None => return None,
    };
    let rest = &bytes[tail..end];
    let may = if rest.len() <= 3 {
        b"to=".starts_with(rest)
    } else {
        rest.starts_with(b"to=") && rest[3..].iter().all(|&b| recipient_byte(b))
    };
    may.then_some(w.unwrap_or(from))
}

/// Whether the header the template opened goes on: a recipient, or the role then whitespace
/// or a token. `None`: the text so far does not tell (`token`: a token follows it).
fn opened_header(head: &str, token: bool) -> Option<bool> {
    if head.starts_with("to=") || (head.is_empty() && token) {
        return Some(true);
    }
    if let Some(rest) = head.strip_prefix(ROLE) {
        return match rest.bytes().next() {
            Some(b) => Some(b.is_ascii_whitespace()),
            None => token.then_some(true),
        };
    }
    if !token && (ROLE.starts_with(head) || "to=".starts_with(head)) {
        return None;
    }
    Some(false)
}

/// What plain content becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Reasoning,
}

/// A call whose arguments are being read.
struct Call {
    /// Offset of its header.
    start: usize,
    /// Its markup so far: kept as text if it breaks.
    raw: String,
    name: String,
    id: PartId,
    known: bool,
    lexer: Lexer,
    writer: ArgsWriter,
}

impl Call {
    /// The call breaks off (its arguments are not JSON, or never end): its part is aborted;
    /// its start, markup, id and name are what is left of it.
    fn give_up(self: Box<Self>, em: &mut Emitter) -> (usize, String, PartId, String) {
        em.abort_call(&self.id);
        let Call {
            start,
            raw,
            name,
            id,
            ..
        } = *self;
        (start, raw, id, name)
    }
}

enum State {
    /// The function markup of a message addressed to a tool, read by the markup engine up to
    /// the message's end.
    Markup(Box<MarkupScanner>),
    /// Content that is text or reasoning (text outside any message too), from `start`.
    Content { kind: Kind, start: usize },
    /// A header from its `<|start|>` or `<|channel|>` at `start`, up to `<|message|>`.
    Header { start: usize, raw: String },
    /// A call's arguments.
    Body(Box<Call>),
    /// A call's JSON ended: whitespace, then its end token. The whitespace read is kept apart.
    After(Box<Call>, String),
    /// A broken call, skipped to its end: its markup, and why.
    Skip {
        start: usize,
        raw: String,
        why: String,
        call: Option<(PartId, String)>,
    },
}

/// What [`find_token`] found.
enum Found {
    /// A whole token at this offset.
    Token(usize, &'static str),
    /// The text's end from this offset may begin a token.
    Partial(usize),
    None,
}

/// The first of `tokens` in `text` from `from`, or a beginning of one at its end.
fn find_token(text: &str, from: usize, tokens: &[&'static str]) -> Found {
    let bytes = text.as_bytes();
    let mut j = from;
    while let Some(k) = find1(b'<', &bytes[j..]) {
        let at = j + k;
        // `<` is ASCII: `at` is a char boundary.
        let rest = &text[at..];
        if let Some(t) = tokens.iter().find(|t| rest.starts_with(**t)) {
            return Found::Token(at, t);
        }
        if tokens
            .iter()
            .any(|t| rest.len() < t.len() && t.starts_with(rest))
        {
            return Found::Partial(at);
        }
        j = at + 1;
    }
    Found::None
}

fn found_is_token(f: &Found) -> bool {
    matches!(f, Found::Token(..))
}

/// What a header says.
#[derive(Debug, Default, PartialEq)]
struct HeaderInfo {
    role: Option<String>,
    channel: Option<String>,
    recipient: Option<String>,
}

impl HeaderInfo {
    /// Reads a header (from its opening token, `<|message|>` excluded).
    fn read(raw: &str) -> Self {
        #[derive(PartialEq)]
        enum Sec {
            Role,
            Channel,
            Other,
        }
        let mut info = HeaderInfo::default();
        // A header the template opened, or a switch, begins with its role or recipient.
        let (mut sec, mut rest) = match (raw.strip_prefix(START), raw.strip_prefix(CHANNEL)) {
            (Some(r), _) => (Sec::Role, r),
            (None, Some(r)) => (Sec::Channel, r),
            (None, None) => (Sec::Role, raw),
        };
        loop {
            let next = [CHANNEL, CONSTRAIN, MESSAGE]
                .iter()
                .filter_map(|t| rest.find(t).map(|p| (p, *t)))
                .min();
            let seg = next.map_or(rest, |(p, _)| &rest[..p]);
            for word in seg.split_whitespace() {
                if let Some(r) = word.strip_prefix("to=") {
                    info.recipient.get_or_insert_with(|| r.to_string());
                    continue;
                }
                let slot = match sec {
                    Sec::Role => &mut info.role,
                    Sec::Channel => &mut info.channel,
                    Sec::Other => continue,
                };
                slot.get_or_insert_with(|| word.to_string());
            }
            match next {
                Some((p, t)) => {
                    sec = if t == CHANNEL && info.channel.is_none() {
                        Sec::Channel
                    } else {
                        Sec::Other
                    };
                    rest = &rest[p + t.len()..];
                }
                None => break,
            }
        }
        info
    }

    /// The tool the message is addressed to, when it is a call: a recipient other than the
    /// assistant, in an assistant's message. `functions.` is taken off.
    fn callee(&self) -> Option<&str> {
        let r = self.recipient.as_deref()?;
        if r == "assistant" || self.role.as_deref().is_some_and(|role| role != "assistant") {
            return None;
        }
        Some(r.strip_prefix("functions.").unwrap_or(r))
    }
}

pub(crate) struct HarmonyScanner {
    tools: ToolSet,
    state: State,
    held: Holdback,
    /// The output writes a space after its special tokens (LLM-jp's tokenizer does): seen in a
    /// header, and from then on one space after `<|message|>` or an end token is format.
    spaced: bool,
    /// One space, if the next byte is one, is format (see `spaced`).
    eat_space: bool,
    syn: &'static Syntax,
    /// Reading the header the template opened (see [`Syntax::opened`]), until it is told.
    implicit: bool,
}

/// Whether a header shows the spaced style: a space right after one of its special tokens.
fn spaced_header(raw: &str) -> bool {
    [START, CHANNEL, CONSTRAIN]
        .iter()
        .any(|t| raw.contains(&format!("{t} ")[..]))
}

fn emit(em: &mut Emitter, kind: Kind, s: &str) {
    match kind {
        Kind::Text => em.text(s),
        Kind::Reasoning => em.reasoning(s),
    }
}

impl HarmonyScanner {
    pub(crate) fn new(tools: ToolSet) -> Self {
        Self::with_syntax(tools, &HARMONY)
    }

    /// A scanner of messages written in `syn`.
    pub(crate) fn with_syntax(tools: ToolSet, syn: &'static Syntax) -> Self {
        HarmonyScanner {
            tools,
            state: if syn.opened {
                State::Header {
                    start: 0,
                    raw: String::new(),
                }
            } else {
                State::Content {
                    kind: Kind::Text,
                    start: 0,
                }
            },
            held: Holdback::default(),
            spaced: false,
            eat_space: false,
            syn,
            implicit: syn.opened,
        }
    }

    fn is_end(&self, t: &str) -> bool {
        self.syn.ends.contains(&t)
    }

    /// Content ends at `at`: a reasoning block closes with its span.
    fn close_content(kind: Kind, start: usize, at: usize, em: &mut Emitter) {
        if kind == Kind::Reasoning {
            em.end_reasoning();
            em.span(start, at, SpanKind::Reasoning);
        }
    }

    fn content(
        &mut self,
        kind: Kind,
        start: usize,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        if std::mem::take(&mut self.eat_space) && text.as_bytes()[i] == b' ' {
            let at = base + i;
            em.span(at, at + 1, SpanKind::Markup);
            self.state = State::Content {
                kind,
                start: at + 1,
            };
            return i + 1;
        }
        let at_start = base + i == start;
        match find_token(text, i, self.syn.tokens) {
            Found::None => {
                let hold = self.switch_tail(text, i, text.len(), at_start);
                emit(em, kind, &text[i..hold.unwrap_or(text.len())]);
                self.state = State::Content { kind, start };
                match hold {
                    Some(w) => self.held.hold(text, w, base),
                    None => text.len(),
                }
            }
            Found::Partial(j) => {
                let hold = self.switch_before(text, i, j, at_start).unwrap_or(j);
                emit(em, kind, &text[i..hold]);
                self.state = State::Content { kind, start };
                self.held.hold(text, hold, base)
            }
            Found::Token(j, t) => {
                if t == MESSAGE && self.syn.switches {
                    // A switch, or a bare `<|message|>`: a header without a recipient, which
                    // opens the answer.
                    let w = switch_before(text, i, j, at_start).unwrap_or(j);
                    emit(em, kind, &text[i..w]);
                    Self::close_content(kind, start, base + w, em);
                    self.open_message(base + w, format!("{}{MESSAGE}", &text[w..j]), em);
                    return j + MESSAGE.len();
                }
                emit(em, kind, &text[i..j]);
                let at = base + j;
                match t {
                    START | CHANNEL => {
                        Self::close_content(kind, start, at, em);
                        self.state = State::Header {
                            start: at,
                            raw: t.to_string(),
                        };
                    }
                    t if self.is_end(t) => {
                        Self::close_content(kind, start, at, em);
                        em.span(at, at + t.len(), SpanKind::Markup);
                        self.eat_space = self.spaced;
                        self.state = State::Content {
                            kind: Kind::Text,
                            start: at + t.len(),
                        };
                    }
                    // Header tokens out of place are content.
                    _ => {
                        emit(em, kind, t);
                        self.state = State::Content { kind, start };
                    }
                }
                j + t.len()
            }
        }
    }

    fn header(
        &mut self,
        start: usize,
        mut raw: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let found = find_token(text, i, self.syn.tokens);
        let j = match found {
            Found::Token(j, _) | Found::Partial(j) => j,
            Found::None => text.len(),
        };
        if self.implicit {
            // The header the template opened holds a recipient first; anything else is
            // content, and the output never began inside a header.
            let mut seen = raw.clone();
            seen.push_str(&text[i..j]);
            let head = seen.trim_start();
            if opened_header(head, found_is_token(&found)) == Some(false) {
                self.implicit = false;
                em.text(&raw);
                self.state = State::Content {
                    kind: Kind::Text,
                    start,
                };
                return i;
            }
        }
        if raw.len() + (j - i) > MAX_HEADER {
            // Too long to be a header: cut at the limit, and read on as text.
            let mut cut = i + MAX_HEADER.saturating_sub(raw.len());
            while !text.is_char_boundary(cut) {
                cut += 1;
            }
            raw.push_str(&text[i..cut]);
            self.bad_header(start, raw, false, em);
            return cut;
        }
        raw.push_str(&text[i..j]);
        match found {
            Found::None => {
                self.state = State::Header { start, raw };
                text.len()
            }
            Found::Partial(_) => {
                self.state = State::Header { start, raw };
                self.held.hold(text, j, base)
            }
            Found::Token(_, t) => match t {
                MESSAGE => {
                    raw.push_str(t);
                    self.implicit = false;
                    self.open_message(start, raw, em);
                    j + t.len()
                }
                CHANNEL | CONSTRAIN => {
                    raw.push_str(t);
                    self.state = State::Header { start, raw };
                    j + t.len()
                }
                // A header cut short by another message or an end: read again as content.
                _ => {
                    self.bad_header(start, raw, false, em);
                    j
                }
            },
        }
    }

    /// A header that never reached `<|message|>`: its text stays text; if it addressed a tool,
    /// an error says the call was not made.
    fn bad_header(&mut self, start: usize, raw: String, at_end: bool, em: &mut Emitter) {
        self.implicit = false;
        self.state = State::Content {
            kind: Kind::Text,
            start: start + raw.len(),
        };
        match HeaderInfo::read(&raw).callee() {
            Some(name) => {
                let (reason, why) = if at_end {
                    (
                        "unfinished-tool-call",
                        format!("the output ended inside the header of a call to \"{name}\""),
                    )
                } else {
                    (
                        "malformed-tool-call",
                        format!("the header of a call to \"{name}\" has no <|message|>"),
                    )
                };
                let name = name.to_string();
                self.malformed(start, raw, Some((None, name)), reason, &why, em);
            }
            None => em.text(&raw),
        }
    }

    /// A header was read: a call, reasoning, or text follows.
    fn open_message(&mut self, start: usize, raw: String, em: &mut Emitter) {
        let info = HeaderInfo::read(&raw);
        self.spaced |= spaced_header(&raw);
        let reader = info
            .recipient
            .as_deref()
            .and_then(|r| self.syn.readers.iter().find(|(name, _)| *name == r));
        if let Some(&(_, reasoning)) = reader {
            let end = start + raw.len();
            em.span(start, end, SpanKind::Markup);
            self.eat_space = self.spaced;
            let kind = if reasoning {
                Kind::Reasoning
            } else {
                Kind::Text
            };
            self.state = State::Content { kind, start: end };
            return;
        }
        if let (Some(name), Body::Markup(dialect)) = (info.callee(), self.syn.body)
            && valid_name(name)
        {
            // The header is the call's frame; the markup after it holds the calls.
            let end = start + raw.len();
            em.span(start, end, SpanKind::Markup);
            let mut inner =
                MarkupScanner::new(self.tools.clone(), dialect).undoubling(self.syn.doubled_names);
            inner.pass_over(end);
            self.state = State::Markup(Box::new(inner));
            return;
        }
        match info.callee() {
            Some(name) if valid_name(name) => {
                let tool = self.tools.get_arc(name).cloned();
                let known = tool.is_some();
                let id = em.begin_call(name);
                let mut writer = ArgsWriter::new(tool);
                writer.set_whole(em.is_whole());
                self.state = State::Body(Box::new(Call {
                    start,
                    raw,
                    name: name.to_string(),
                    id,
                    known,
                    lexer: Lexer::new(),
                    writer,
                }));
            }
            Some(name) => {
                let why = format!(
                    "\"{}\" does not name a tool",
                    name.chars().take(80).collect::<String>()
                );
                self.state = State::Skip {
                    start,
                    raw,
                    why,
                    call: None,
                };
            }
            None if info
                .channel
                .as_deref()
                .is_some_and(|c| !CHANNELS.contains(&c)) =>
            {
                // No channel harmony knows (a stray `<|channel|>`, a channel of another
                // format): the header is not taken for markup, and nothing in it is lost.
                let channel: String = info.channel.unwrap_or_default().chars().take(80).collect();
                em.error(ErrorPart::reason(
                    "unknown-channel",
                    format!(
                        "a message header names the channel \"{channel}\", which is none of {}: \
                         kept as text",
                        CHANNELS.join(", ")
                    ),
                ));
                em.text(&raw);
                self.state = State::Content {
                    kind: Kind::Text,
                    start: start + raw.len(),
                };
            }
            None => {
                let end = start + raw.len();
                em.span(start, end, SpanKind::Markup);
                self.eat_space = self.spaced;
                let kind = if info.channel.as_deref() == Some("analysis") {
                    Kind::Reasoning
                } else {
                    Kind::Text
                };
                self.state = State::Content { kind, start: end };
            }
        }
    }

    fn body(&mut self, mut call: Box<Call>, text: &str, i: usize, em: &mut Emitter) -> usize {
        let rest = &text[i..];
        let step = call.lexer.feed(rest, &mut call.writer);
        let (consumed, done, error) = match step {
            Step::NeedMore => (rest.len(), false, None),
            Step::Done { consumed } => (consumed, true, None),
            Step::Error { consumed, error } => (consumed, false, Some(error.message)),
        };
        call.raw.push_str(&rest[..consumed]);
        if let Some(d) = call.writer.take_delta() {
            em.input_delta(&call.id, d);
        }
        if let Some(why) = error {
            let (start, raw, id, name) = call.give_up(em);
            self.state = State::Skip {
                start,
                raw,
                why: format!("the arguments of \"{name}\" are not valid JSON ({why})"),
                call: Some((id, name)),
            };
        } else if done {
            self.state = State::After(call, String::new());
        } else {
            self.state = State::Body(call);
        }
        i + consumed
    }

    fn after(
        &mut self,
        mut call: Box<Call>,
        mut trailing: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut k = i;
        while k < bytes.len() && bytes[k].is_ascii_whitespace() {
            k += 1;
        }
        trailing.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::After(call, trailing);
            return k;
        }
        let rest = &text[k..];
        if let Some(t) = self.syn.ends.iter().find(|t| rest.starts_with(**t)) {
            call.raw.push_str(&trailing);
            call.raw.push_str(t);
            self.complete(call, em);
            self.eat_space = self.spaced;
            return k + t.len();
        }
        if self
            .syn
            .tokens
            .iter()
            .any(|t| rest.len() < t.len() && t.starts_with(rest))
        {
            self.state = State::After(call, trailing);
            return self.held.hold(text, k, base);
        }
        // No end token: the call stands as read, and what follows is read again as content.
        self.complete(call, em);
        em.text(&trailing);
        k
    }

    /// The call's arguments are complete (its end read, or missing and forgiven).
    fn complete(&mut self, mut call: Box<Call>, em: &mut Emitter) {
        let end = call.start + call.raw.len();
        self.state = State::Content {
            kind: Kind::Text,
            start: end,
        };
        if let Some(d) = call.writer.take_delta() {
            em.input_delta(&call.id, d);
        }
        let Call {
            start,
            raw,
            name,
            id,
            known,
            writer,
            ..
        } = *call;
        match writer.finish() {
            Ok(args) => {
                em.end_call(id.clone(), &name, args);
                em.span(start, end, SpanKind::ToolCall);
                if !known {
                    em.unknown_tool(id, &name);
                }
            }
            Err(e) => {
                em.abort_call(&id);
                let why = format!("tool call \"{name}\": {e}");
                self.malformed(
                    start,
                    raw,
                    Some((Some(id), name)),
                    "malformed-tool-call",
                    &why,
                    em,
                );
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn skip(
        &mut self,
        start: usize,
        mut raw: String,
        why: String,
        call: Option<(PartId, String)>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let mut from = i;
        loop {
            match find_token(text, from, self.syn.tokens) {
                Found::Token(j, t) => match t {
                    t if self.is_end(t) => {
                        raw.push_str(&text[i..j + t.len()]);
                        let call = call.map(|(id, n)| (Some(id), n));
                        self.malformed(start, raw, call, "malformed-tool-call", &why, em);
                        self.eat_space = self.spaced;
                        return j + t.len();
                    }
                    START | CHANNEL => {
                        raw.push_str(&text[i..j]);
                        let call = call.map(|(id, n)| (Some(id), n));
                        self.malformed(start, raw, call, "malformed-tool-call", &why, em);
                        return j;
                    }
                    _ => from = j + t.len(),
                },
                Found::Partial(j) => {
                    raw.push_str(&text[i..j]);
                    self.state = State::Skip {
                        start,
                        raw,
                        why,
                        call,
                    };
                    return self.held.hold(text, j, base);
                }
                Found::None => {
                    raw.push_str(&text[i..]);
                    self.state = State::Skip {
                        start,
                        raw,
                        why,
                        call,
                    };
                    return text.len();
                }
            }
        }
    }

    /// A tool's message of function markup: given to the markup engine up to the message's
    /// end token, which ends the markup too.
    fn markup(
        &mut self,
        mut inner: Box<MarkupScanner>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let tokens = if self.syn.switches {
            self.syn.tokens
        } else {
            self.syn.ends
        };
        match find_token(text, i, tokens) {
            Found::Token(j, MESSAGE) => {
                if let Some(w) = self.switch_before(text, i, j, false) {
                    // The next message's switch ends this one.
                    inner.feed(&text[i..w], em);
                    inner.finish(em);
                    self.open_message(base + w, format!("{}{MESSAGE}", &text[w..j]), em);
                } else {
                    inner.feed(&text[i..j + MESSAGE.len()], em);
                    self.state = State::Markup(inner);
                }
                j + MESSAGE.len()
            }
            Found::Token(j, START) => {
                // The next message's header ends this one.
                inner.feed(&text[i..j], em);
                inner.finish(em);
                self.state = State::Header {
                    start: base + j,
                    raw: START.to_string(),
                };
                j + START.len()
            }
            Found::Token(j, t) => {
                inner.feed(&text[i..j], em);
                inner.finish(em);
                em.span(base + j, base + j + t.len(), SpanKind::Markup);
                self.eat_space = self.spaced;
                self.state = State::Content {
                    kind: Kind::Text,
                    start: base + j + t.len(),
                };
                j + t.len()
            }
            Found::Partial(j) => {
                let hold = self.switch_before(text, i, j, false).unwrap_or(j);
                inner.feed(&text[i..hold], em);
                self.state = State::Markup(inner);
                self.held.hold(text, hold, base)
            }
            Found::None => {
                let hold = self.switch_tail(text, i, text.len(), false);
                inner.feed(&text[i..hold.unwrap_or(text.len())], em);
                self.state = State::Markup(inner);
                match hold {
                    Some(w) => self.held.hold(text, w, base),
                    None => text.len(),
                }
            }
        }
    }

    /// [`switch_before`], where the syntax switches.
    fn switch_before(&self, text: &str, from: usize, end: usize, at_start: bool) -> Option<usize> {
        self.syn
            .switches
            .then(|| switch_before(text, from, end, at_start))
            .flatten()
    }

    /// [`switch_tail`], where the syntax switches.
    fn switch_tail(&self, text: &str, from: usize, end: usize, at_start: bool) -> Option<usize> {
        self.syn
            .switches
            .then(|| switch_tail(text, from, end, at_start))
            .flatten()
    }

    /// Markup that could not be read: reported, and kept as text.
    fn malformed(
        &mut self,
        start: usize,
        raw: String,
        call: Option<(Option<PartId>, String)>,
        reason: &str,
        why: &str,
        em: &mut Emitter,
    ) {
        let end = start + raw.len();
        self.state = State::Content {
            kind: Kind::Text,
            start: end,
        };
        let (id, name) = match call {
            Some((id, name)) => (id, Some(name)),
            None => (None, None),
        };
        em.error(ErrorPart {
            tool_call_id: id,
            tool_name: name,
            ..ErrorPart::reason(reason, why)
        });
        em.text(&raw);
        em.span(start, end, SpanKind::Malformed);
    }
}

impl Steps for HarmonyScanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let state = std::mem::replace(
            &mut self.state,
            State::Content {
                kind: Kind::Text,
                start: 0,
            },
        );
        match state {
            State::Content { kind, start } => self.content(kind, start, text, i, base, em),
            State::Header { start, raw } => self.header(start, raw, text, i, base, em),
            State::Body(call) => self.body(call, text, i, em),
            State::Markup(inner) => self.markup(inner, text, i, base, em),
            State::After(call, trailing) => self.after(call, trailing, text, i, base, em),
            State::Skip {
                start,
                raw,
                why,
                call,
            } => self.skip(start, raw, why, call, text, i, base, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }
}

impl Scanner for HarmonyScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        if let State::Content { kind, start } = self.state
            && !self.eat_space
            && self.held.is_empty()
            && find1(b'<', piece.as_bytes()).is_none()
            && self
                .switch_tail(piece, 0, piece.len(), start == self.held.pos())
                .is_none()
        {
            self.held.advance(piece.len());
            emit(em, kind, piece);
            return;
        }
        drive(self, piece, em);
    }

    fn finish(&mut self, em: &mut Emitter) {
        let held = self.held.take();
        let end = self.held.pos();
        let state = std::mem::replace(
            &mut self.state,
            State::Content {
                kind: Kind::Text,
                start: end,
            },
        );
        match state {
            State::Content { kind, start } => {
                emit(em, kind, &held);
                Self::close_content(kind, start, end, em);
            }
            State::Header { start, mut raw } => {
                raw.push_str(&held);
                self.bad_header(start, raw, true, em);
            }
            State::Body(mut call) => {
                call.raw.push_str(&held);
                let finished = call.lexer.finish(&mut call.writer);
                if finished.is_ok() && call.lexer.is_done() {
                    // Complete JSON without its end token: the call is recovered.
                    self.complete(call, em);
                } else {
                    if let Some(d) = call.writer.take_delta() {
                        em.input_delta(&call.id, d);
                    }
                    let why = format!("the output ended inside the arguments of \"{}\"", call.name);
                    let (start, raw, id, name) = call.give_up(em);
                    self.malformed(
                        start,
                        raw,
                        Some((Some(id), name)),
                        "unfinished-tool-call",
                        &why,
                        em,
                    );
                }
            }
            State::After(call, mut trailing) => {
                trailing.push_str(&held);
                self.complete(call, em);
                em.text(&trailing);
            }
            State::Markup(mut inner) => {
                inner.feed(&held, em);
                inner.finish(em);
            }
            State::Skip {
                start,
                mut raw,
                why,
                call,
            } => {
                raw.push_str(&held);
                let call = call.map(|(id, n)| (Some(id), n));
                self.malformed(start, raw, call, "malformed-tool-call", &why, em);
            }
        }
    }

    fn in_call(&self) -> bool {
        matches!(
            self.state,
            State::Body(_) | State::After(..) | State::Skip { .. } | State::Markup(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;

    #[test]
    fn headers_are_read() {
        let h = HeaderInfo::read(
            "<|start|>assistant<|channel|>commentary to=functions.f <|constrain|>json",
        );
        assert_eq!(h.role.as_deref(), Some("assistant"));
        assert_eq!(h.channel.as_deref(), Some("commentary"));
        assert_eq!(h.callee(), Some("f"));
        let h = HeaderInfo::read("<|start|>functions.f to=assistant<|channel|>commentary");
        assert_eq!(h.callee(), None);
        assert_eq!(
            HeaderInfo::read("<|channel|>final").channel.as_deref(),
            Some("final")
        );
    }

    standard_cases!(HarmonyScanner::new;
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Pa",
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": }<|call|>");
}
