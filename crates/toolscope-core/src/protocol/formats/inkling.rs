//! `inkling`: Inkling's message blocks, in any order, each opened by `<|message_model|>` and a
//! content token and closed by `<|end_message|>`:
//!
//! ```text
//! <|message_model|><|content_thinking|>The user wants Paris.<|end_message|>
//! <|message_model|><|content_text|>Let me check.<|end_message|>
//! <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Paris"}}<|end_message|>
//! ```
//!
//! A tool block holds one `{"name", "args"}` envelope (the key is `args`), read whole (opener,
//! name, token, JSON, close) by the framed-marker engine; the tool's name may also stand
//! between `<|message_model|>` and the content token. A thinking block is reasoning, a text
//! block text; their tokens are format. The blocks are found here (the protocol has no reasoning
//! markers of its own): a thinking or text block ends at `<|end_message|>`, or where the next
//! block opens, or where the output ends. Parallel calls are more tool blocks. A tool block
//! whose `<|message_model|>` is not in the output (the prompt wrote it, so the output begins
//! with the content token or the tool's name and then the token; or the model left it out) is
//! read by a second engine that the content token opens. The model has no chat
//! template: the prompt below lists the tools as JSON, one a line, and a result comes back in a
//! `<|message_tool|>` block.

use serde_json::Value;

use crate::protocol::scan::forked::{after_look, hand_over};
use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax, Header, valid_name};
use crate::protocol::span::SpanKind;
use crate::protocol::spec::server::sglang;
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, ResultWrap, card_methods, read_back};
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `inkling`.
pub(crate) struct Inkling;

const MODEL: &str = "<|message_model|>";
const TEXT: &str = "<|content_text|>";
const THINKING: &str = "<|content_thinking|>";
const INVOKE: &str = "<|content_invoke_tool_json|>";
const END: &str = "<|end_message|>";
const TOOL: &str = "<|message_tool|>";
/// Around the prompt's list of tools.
const TOOLS: ToolList = ToolList::functions("<tools>\n", "</tools>").one_a_line();

/// The longest header (a tool's name) between `<|message_model|>` and the content token.
const MAX_HEADER: usize = 256;

/// A tool block: the opener, an optional name (the envelope names the tool), the content token,
/// the envelope, the close.
static SYNTAX: FramedSyntax = FramedSyntax {
    header: |head| {
        valid_name(head.trim()).then(|| Header {
            name: String::new(),
            id: None,
        })
    },
    call_end: Some(END),
    ..FramedSyntax::new(MODEL, &[ArgsBegin::Marker(INVOKE)])
};

/// A tool block whose `<|message_model|>` is not in the output (the prompt wrote it, or the
/// model left it out): the content token opens it.
static BARE: FramedSyntax = FramedSyntax {
    call_end: Some(END),
    ..FramedSyntax::new(INVOKE, &[ArgsBegin::Object])
};

/// The block being read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Text, a text block or a tool block: the engine reads it.
    Text,
    /// A thinking block, from this offset (its opening tokens).
    Thinking(usize),
}

/// What a `<|message_model|>` header ended with.
enum Opened {
    /// A content token: the block's kind and where its content begins.
    Kind(&'static str, usize),
    /// Not known yet.
    Partial,
    /// Not a block opener.
    Not,
}

/// What follows `<|message_model|>` at the start of `s` (`s` starts with it).
fn opened(s: &str, at_end: bool) -> Opened {
    let rest = &s[MODEL.len()..];
    let Some(p) = rest.find("<|") else {
        return if at_end || rest.len() > MAX_HEADER {
            Opened::Not
        } else {
            Opened::Partial
        };
    };
    if p > MAX_HEADER || rest[..p].contains('\n') {
        return Opened::Not;
    }
    let token = &rest[p..];
    for kind in [TEXT, THINKING, INVOKE] {
        if token.starts_with(kind) {
            return Opened::Kind(kind, MODEL.len() + p);
        }
        if kind.starts_with(token) && !at_end {
            return Opened::Partial;
        }
    }
    Opened::Not
}

/// Where the next of `tokens` (or a piece of one at the end) is in `s`.
fn find_token(s: &str, tokens: &[&str]) -> Option<usize> {
    let b = s.as_bytes();
    let mut k = 0;
    while let Some(d) = crate::json::lexer::find1(b'<', &b[k..]) {
        let at = k + d;
        let tail = &s[at..];
        if tokens
            .iter()
            .any(|t| tail.starts_with(t) || t.starts_with(tail))
        {
            return Some(at);
        }
        k = at + 1;
    }
    None
}

/// What ends a thinking block: the next block's opener or the close.
const THINKING_ENDS: [&str; 2] = [MODEL, END];
/// What the text between blocks is read up to: a block's opener, a close, or a tool block's
/// content token without its opener.
const TEXT_ENDS: [&str; 3] = [MODEL, END, INVOKE];

/// At the start of an output whose prompt opened the block: a tool's name then the content
/// token of a tool block (`get_weather<|content_invoke_tool_json|>`): `Some(Some(len))` of the
/// name, `Some(None)` while the text ends before it tells, `None` when it is not one.
fn prefilled_name(rest: &str, at_end: bool) -> Option<Option<usize>> {
    let name = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
        .map_or(rest.len(), |(k, _)| k);
    if name == 0 || name > MAX_HEADER {
        return None;
    }
    let after = &rest[name..];
    if after.starts_with(INVOKE) {
        Some(Some(name))
    } else if !at_end && INVOKE.starts_with(after) {
        Some(None)
    } else {
        None
    }
}

/// Finds the blocks; the framed engine reads what is not thinking (see the module
/// documentation).
struct InklingScanner {
    calls: FramedScanner,
    /// Tool blocks opened by their content token alone (see [`BARE`]).
    bare: FramedScanner,
    mode: Mode,
    /// Bytes read (the engine's offsets count them; it skips what it did not read).
    fed: usize,
    /// A block opener (or a piece of one) and what follows it, until its kind is known.
    look: String,
    /// Nothing was read yet: a prompt that ends with `<|message_model|>` leaves the output to
    /// begin with a content token.
    begun: bool,
}

impl InklingScanner {
    fn give(&mut self, s: &str, em: &mut Emitter) {
        if !s.is_empty() {
            hand_over(&mut self.calls, &mut self.fed, s, em);
        }
    }

    fn give_bare(&mut self, s: &str, em: &mut Emitter) {
        if !s.is_empty() {
            hand_over(&mut self.bare, &mut self.fed, s, em);
        }
    }

    /// Tokens that are format: a markup span, not given to the engine.
    fn markup(&mut self, len: usize, em: &mut Emitter) {
        em.span(self.fed, self.fed + len, SpanKind::Markup);
        self.fed += len;
    }

    fn end_thinking(&mut self, em: &mut Emitter) {
        if let Mode::Thinking(start) = self.mode {
            em.end_reasoning();
            em.span(start, self.fed, SpanKind::Reasoning);
            self.mode = Mode::Text;
        }
    }

    /// Reads `s` from `i` up to where it must wait for more; gives back where it stopped.
    fn read(&mut self, s: &str, mut i: usize, at_end: bool, em: &mut Emitter) -> usize {
        if !self.begun && i < s.len() {
            // The block the prompt opened: a text or thinking token first is its content token,
            // and a tool's name before a tool block's token is its header.
            let rest = &s[i..];
            let kind = [TEXT, THINKING].into_iter().find(|k| rest.starts_with(k));
            if kind.is_none() && !at_end && [TEXT, THINKING].iter().any(|k| k.starts_with(rest)) {
                return i;
            }
            match prefilled_name(rest, at_end) {
                Some(None) => return i,
                Some(Some(len)) => {
                    self.markup(len, em);
                    i += len;
                }
                None => {}
            }
            self.begun = true;
            if let Some(kind) = kind {
                self.markup(kind.len(), em);
                if kind == THINKING {
                    self.mode = Mode::Thinking(self.fed);
                }
                i += kind.len();
            }
        }
        while i < s.len() {
            let rest = &s[i..];
            if let Mode::Thinking(_) = self.mode {
                let Some(at) = find_token(rest, &THINKING_ENDS) else {
                    em.reasoning(rest);
                    self.fed += rest.len();
                    return s.len();
                };
                em.reasoning(&rest[..at]);
                self.fed += at;
                i += at;
                let rest = &s[i..];
                if rest.starts_with(END) {
                    self.end_thinking(em);
                    self.markup(END.len(), em);
                    i += END.len();
                } else if rest.starts_with(MODEL) {
                    self.end_thinking(em);
                } else if at_end {
                    em.reasoning(rest);
                    self.fed += rest.len();
                    return s.len();
                } else {
                    return i;
                }
                continue;
            }
            if !self.bare.idle() && !self.bare.in_call() {
                // After a block's JSON read by the other engine: its close, or the block ends
                // without it (forgiven) before what comes next. Where that engine holds the
                // start of the close, it reads on (up to the next `<`) and decides.
                if self.bare.holds_text() {
                    let n = crate::json::lexer::find1(b'<', &rest.as_bytes()[1..])
                        .map_or(rest.len(), |p| p + 1);
                    self.give_bare(&rest[..n], em);
                    i += n;
                    continue;
                }
                if rest.starts_with(END) {
                    self.give_bare(END, em);
                    i += END.len();
                    continue;
                }
                if !at_end && END.starts_with(rest) {
                    return i;
                }
                self.bare.cut(em);
            }
            if self.calls.in_call() || self.bare.in_call() {
                // Inside a call: the engine decides, up to the next `<`.
                let n = crate::json::lexer::find1(b'<', &rest.as_bytes()[1..])
                    .map_or(rest.len(), |p| p + 1);
                if self.bare.in_call() {
                    self.give_bare(&rest[..n], em);
                } else {
                    self.give(&rest[..n], em);
                }
                i += n;
                continue;
            }
            let Some(at) = find_token(rest, &TEXT_ENDS) else {
                self.give(rest, em);
                return s.len();
            };
            self.give(&rest[..at], em);
            i += at;
            let rest = &s[i..];
            if !self.calls.idle() && !rest.starts_with(MODEL) && !MODEL.starts_with(rest) {
                // The engine holds the start of an opener (`<`) that this token is not: it was
                // text, before the token.
                self.calls.cut(em);
            }
            if rest.starts_with(INVOKE) {
                // A tool block without its opener: the other engine reads it, from its token.
                self.give_bare(INVOKE, em);
                i += INVOKE.len();
                continue;
            }
            if !at_end && INVOKE.starts_with(rest) && !MODEL.starts_with(rest) {
                return i;
            }
            if rest.starts_with(END) {
                // The close of a text block.
                self.markup(END.len(), em);
                i += END.len();
                continue;
            }
            if !rest.starts_with(MODEL) {
                if at_end {
                    self.give(rest, em);
                    return s.len();
                }
                return i;
            }
            match opened(rest, at_end) {
                Opened::Partial => return i,
                Opened::Not => {
                    self.give(MODEL, em);
                    i += MODEL.len();
                }
                Opened::Kind(kind, _) if kind == INVOKE => {
                    // The engine reads the whole tool block, from its opener.
                    self.give(MODEL, em);
                    i += MODEL.len();
                }
                Opened::Kind(kind, content) => {
                    // The opener and content token are format; a thinking block's content is
                    // reasoning.
                    let len = content + kind.len();
                    self.markup(len, em);
                    if kind == THINKING {
                        self.mode = Mode::Thinking(self.fed);
                    }
                    i += len;
                }
            }
        }
        s.len()
    }
}

impl Scanner for InklingScanner {
    fn feed(&mut self, text: &str, em: &mut Emitter) {
        let joined = after_look(&mut self.look, text);
        let s = joined.as_ref();
        let stop = self.read(s, 0, false, em);
        self.look.push_str(&s[stop..]);
    }

    fn finish(&mut self, em: &mut Emitter) {
        let look = std::mem::take(&mut self.look);
        self.read(&look, 0, true, em);
        self.end_thinking(em);
        for engine in [&mut self.calls, &mut self.bare] {
            let passed = self.fed - engine.pos();
            if passed > 0 && engine.idle() {
                engine.pass_over(passed);
            }
        }
        self.bare.finish(em);
        self.calls.finish(em);
    }

    fn in_call(&self) -> bool {
        self.calls.in_call() || self.bare.in_call()
    }

    fn in_args(&self) -> bool {
        self.calls.in_args() || self.bare.in_args()
    }
}

/// One call's message, given its arguments' JSON.
fn call(name: &str, args: &str) -> String {
    format!(
        "{MODEL}{name}{INVOKE}{{\"name\":{},\"args\":{args}}}{END}",
        Value::from(name)
    )
}

const CARD: Card = Card {
    servers: &[sglang("inkling")],
    end_tokens: &["<|endoftext|>", "<|content_model_end_sampling|>"],
    markers: &[MODEL, INVOKE, THINKING],
    // One message after the other.
    call_joiner: "",
    // Each result in a text message of the tool.
    results: ResultWrap::between("<|message_tool|><|content_text|>", END),
    ..Card::new("inkling", "Inkling")
};

impl ProtocolSpec for Inkling {
    card_methods!(CARD);

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        format!(
            "You can call these tools, one JSON object a line:\n{}\n\n\
             To call a tool, write a model message whose content is the call as JSON, with the tool's \"name\" \
             and its \"args\":\n{}\n\
             Several calls are several such messages. Each result comes back in a {TOOL} message. Call a tool \
             only when it helps; otherwise answer in a text message.\n",
            TOOLS.write(tools),
            prompt::example_call(tools, |name, input| self.format_call(p, name, input))
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(INVOKE) {
            return None;
        }
        read_back(self.name(), TOOLS.read(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, &prompt::args_json(input))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(InklingScanner {
            calls: FramedScanner::new(&SYNTAX, tools.clone()),
            bare: FramedScanner::new(&BARE, tools.clone()),
            mode: Mode::Text,
            fed: 0,
            look: String::new(),
            begun: false,
        })
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, &prompt::broken_args(input))
    }

    fn format_reasoning(&self, _: &Protocol, text: &str) -> Option<String> {
        Some(format!("{MODEL}{THINKING}{text}{END}"))
    }
}
