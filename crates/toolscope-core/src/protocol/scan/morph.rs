//! The morph engine: a call is an element named after the tool, `<NAME><KEY>value</KEY></NAME>`,
//! its children the arguments (nested elements are objects, repeated ones arrays). Two ways
//! models write it wrong are read too: the tool's name on a line of its own (`get_weather` or
//! `get_weather:`) followed by argument tags the schema lists, and a tool's tag with spaces after
//! its `<` (`< get_location/>`). The format that uses it is `formats/morph_xml.rs`.

use std::sync::Arc;

use serde_json::Value;

use crate::args::ArgsWriter;
use crate::json::JsonSink;
use crate::json::lexer::{find1, find2};
use crate::part::{Coercion, ErrorPart, PartId};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::held_args::{self, HeldArgs};
use crate::protocol::text::holdback::{Holdback, Separated, Steps, drive, read_again_at_end};
use crate::protocol::text::scanner::{Scanner, ws_end};
use crate::protocol::text::xml::{self, Entity, Tag, parse_tag, scan_entity};
use crate::schema::{is_plain_string, property_schema};
use crate::tool::{Tool, ToolSet};

/// How a tool's open tag was matched.
pub(crate) enum ToolOpen {
    Open {
        name: String,
        len: usize,
        self_closing: bool,
    },
    Partial,
    No,
}

/// Is there a known tool's open tag at `text[j]` (a `<`)?
pub(crate) fn match_tool_open(text: &str, j: usize, tools: &ToolSet) -> ToolOpen {
    match parse_tag(text, j) {
        Tag::Open {
            name,
            self_closing,
            len,
        } => match tools.get(name) {
            Some(_) => ToolOpen::Open {
                name: name.to_string(),
                len,
                self_closing,
            },
            None => ToolOpen::No,
        },
        Tag::Incomplete if xml::could_open_tool(text, j, tools) => ToolOpen::Partial,
        _ => ToolOpen::No,
    }
}

enum ParamMode {
    /// A plain string, streamed into the writer.
    Stream,
    /// A plain string collected (the call is holding its arguments).
    Collect(String),
    /// Anything else: the content is read as an XML fragment at the close.
    Tree(String),
}

struct Param {
    name: String,
    mode: ParamMode,
    /// Open elements of the same name inside (they are content).
    depth: usize,
    in_cdata: bool,
    /// A string argument is byte-exact but for its separating newlines.
    sep: Separated,
}

/// The body of a call written as text instead of argument elements
/// (`<send_email>Hi Bob, …</send_email>`).
struct Body {
    /// The argument the schema leaves no doubt the text is for; `None`: it is malformed.
    arg: Option<String>,
    /// The argument is a plain string, streamed as it arrives.
    stream: bool,
    sep: Separated,
    /// The text as read (entities decoded, CDATA unwrapped).
    value: String,
    in_cdata: bool,
}

struct Call {
    name: String,
    tool: Arc<Tool>,
    start: usize,
    raw: String,
    writer: ArgsWriter,
    id: Option<PartId>,
    args: HeldArgs,
    last_param_end: usize,
    trailing: String,
    failed: Option<String>,
}

enum State {
    Text,
    /// After the open tag, before the first argument.
    Open(Box<Call>),
    Between(Box<Call>),
    InParam(Box<Call>, Param),
    Body(Box<Call>, Body),
    /// Malformed: skipping to the call's close tag.
    Skip(Box<Call>),
}

/// What a close tag inside a value turned out to be.
enum Decision {
    Closes,
    Text,
    /// The text ends before it can be told.
    Undecided,
}

/// How much whitespace may separate an argument's close tag from what decides it.
const MAX_DECIDING_WS: usize = 64;

pub(crate) struct MorphScanner {
    tools: ToolSet,
    state: State,
    held: Holdback,
    /// The input has ended: what was held for lookahead is decided without it.
    at_end: bool,
    /// The next byte to arrive is at the start of a line (after spaces or tabs).
    line_start: bool,
}

/// How many spaces may follow a tag's `<`, or precede a tool's name on its line.
const MAX_SPACES: usize = 16;

/// The longest tool name looked for at the start of a line.
const MAX_NAME: usize = 256;

/// Whether the line state after `text` is the start of a line, given `was` before it.
fn line_start_after(text: &str, was: bool) -> bool {
    match text.trim_end_matches([' ', '\t']).as_bytes().last() {
        Some(b) => *b == b'\n',
        None => was,
    }
}

/// A byte of a tool's name written bare on its line.
fn is_bare_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.') || b >= 0x80
}

/// Whether `tool`'s schema lists `arg` among its properties (a schema without properties
/// does not vouch for a bare name line).
fn lists_argument(tool: &Tool, arg: &str) -> bool {
    let root = crate::schema::resolve(tool.schema(), tool.schema());
    property_schema(root, arg, root).is_some()
}

impl Steps for MorphScanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.text(text, i, base, em),
            State::Open(call) => self.between(call, false, text, i, base, em),
            State::Between(call) => self.between(call, true, text, i, base, em),
            State::InParam(call, param) => self.param(call, param, text, i, base, em),
            State::Body(call, body) => self.body(call, body, text, i, base, em),
            State::Skip(call) => self.skip(call, text, i, base, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }

    fn read(&mut self, text: &str, base: usize) {
        let read = if self.held.is_empty() {
            text.len()
        } else {
            self.held.held_start() - base
        };
        self.line_start = line_start_after(&text[..read], self.line_start);
    }
}

impl Scanner for MorphScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        // Plain text with nothing held, not at a line's start and without a line break: only a
        // `<` can start anything.
        if matches!(self.state, State::Text)
            && !self.line_start
            && find1(b'\n', piece.as_bytes()).is_none()
            && self.held.pass_plain_text(piece, em)
        {
            return;
        }
        // Inside a string argument, text without markup (`<`, `&`, or CDATA's end) is content
        // and nothing else.
        if let State::InParam(call, p) = &mut self.state {
            let plain = !p.in_cdata && !matches!(p.mode, ParamMode::Tree(_));
            if plain && self.held.is_empty() && find2(b'<', b'&', piece.as_bytes()).is_none() {
                self.line_start = line_start_after(piece, self.line_start);
                self.held.advance(piece.len());
                call.raw.push_str(piece);
                content(call, p, piece);
                if let Some(id) = &call.id
                    && let Some(d) = call.writer.take_delta()
                {
                    em.input_delta(id, d);
                }
                return;
            }
        }
        drive(self, piece, em);
        if let State::InParam(call, _) | State::Between(call) | State::Body(call, _) =
            &mut self.state
            && let Some(id) = &call.id
            && let Some(d) = call.writer.take_delta()
        {
            em.input_delta(id, d);
        }
    }

    fn finish(&mut self, em: &mut Emitter) {
        let hold = read_again_at_end(self, |s| &mut s.held, |s| s.at_end = true, em);
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => em.text(&hold),
            State::Open(mut call) => {
                call.raw.push_str(&hold);
                let end = call.start + call.raw.len();
                self.malformed(call, end, "unfinished-tool-call", em);
            }
            State::Between(mut call) if em.output_cut() => {
                // Cut off before the close tag: more arguments may have followed. (The
                // whitespace after the last argument is in the markup already.)
                call.trailing.clear();
                call.raw.push_str(&hold);
                let end = call.start + call.raw.len();
                call.failed = Some("the output was cut off before the close tag".into());
                self.malformed(call, end, "unfinished-tool-call", em);
            }
            State::Between(mut call) => {
                let end = call.last_param_end;
                let mut trailing = std::mem::take(&mut call.trailing);
                trailing.push_str(&hold);
                self.finish_call(call, end, em);
                em.text(&trailing);
            }
            State::Body(mut call, _) => {
                call.raw.push_str(&hold);
                let end = call.start + call.raw.len();
                call.failed =
                    Some("it is followed by text, with no arguments and no close tag".into());
                self.malformed(call, end, "unfinished-tool-call", em);
            }
            State::InParam(mut call, _) | State::Skip(mut call) => {
                call.raw.push_str(&hold);
                let end = call.start + call.raw.len();
                let reason = if call.failed.is_some() {
                    "malformed-tool-call"
                } else {
                    "unfinished-tool-call"
                };
                self.malformed(call, end, reason, em);
            }
        }
    }

    fn in_call(&self) -> bool {
        !matches!(self.state, State::Text)
    }
}

impl MorphScanner {
    pub(crate) fn new(tools: ToolSet) -> Self {
        MorphScanner {
            tools,
            state: State::Text,
            held: Holdback::default(),
            at_end: false,
            line_start: true,
        }
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        if line_start_after(&text[..i], self.line_start)
            && let Some(next) = self.name_line(text, i, i, base, em)
        {
            return next;
        }
        let mut j = i;
        while let Some(p) = find2(b'<', b'\n', &bytes[j..]) {
            let at = j + p;
            if bytes[at] == b'\n' {
                if let Some(next) = self.name_line(text, i, at + 1, base, em) {
                    return next;
                }
                j = at + 1;
                continue;
            }
            let open = match match_tool_open(text, at, &self.tools) {
                ToolOpen::No => self.spaced_tool_open(text, at),
                found => found,
            };
            match open {
                ToolOpen::Open {
                    name,
                    len,
                    self_closing,
                } => {
                    em.text(&text[i..at]);
                    let Some(tool) = self.tools.get_arc(&name).cloned() else {
                        em.text("<");
                        return at + 1;
                    };
                    let call = new_call(name, tool, base + at, &text[at..at + len], em);
                    if self_closing {
                        self.close_call(call, base + at + len, em);
                    } else {
                        self.state = State::Open(call);
                    }
                    return at + len;
                }
                ToolOpen::Partial => {
                    em.text(&text[i..at]);
                    return self.held.hold(text, at, base);
                }
                ToolOpen::No => {}
            }
            // A known tool's close tag with no call open: kept, reported.
            match parse_tag(text, at) {
                Tag::Close { name, len } if self.tools.get(name).is_some() => {
                    em.text(&text[i..at]);
                    em.error(ErrorPart {
                        tool_name: Some(name.to_string()),
                        ..ErrorPart::reason(
                            "malformed-tool-call",
                            format!("</{name}> closes no call and is kept as text"),
                        )
                    });
                    em.text(&text[at..at + len]);
                    em.span(base + at, base + at + len, SpanKind::Malformed);
                    return at + len;
                }
                Tag::Incomplete if could_close_tool(text, at, &self.tools) => {
                    em.text(&text[i..at]);
                    return self.held.hold(text, at, base);
                }
                _ => j = at + 1,
            }
        }
        em.text(&text[i..]);
        text.len()
    }

    /// A tool's open tag with spaces after its `<` (`< get_location/>`, `<  get_weather>`) at
    /// `text[at]`: the spaces, the tool's name, optional spaces, then `>` or `/>`.
    fn spaced_tool_open(&self, text: &str, at: usize) -> ToolOpen {
        let bytes = text.as_bytes();
        let mut k = at + 1;
        while k < bytes.len() && matches!(bytes[k], b' ' | b'\t') && k - at <= MAX_SPACES {
            k += 1;
        }
        if k == at + 1 || k - at > MAX_SPACES {
            return ToolOpen::No;
        }
        let may_follow = !self.at_end;
        if k == bytes.len() {
            return if may_follow {
                ToolOpen::Partial
            } else {
                ToolOpen::No
            };
        }
        let n = k;
        while k < bytes.len() && xml::is_name_byte(bytes[k]) && k - n <= MAX_NAME {
            k += 1;
        }
        let name = &text[n..k];
        if k == bytes.len() {
            let prefix = !name.is_empty() && self.tools.iter().any(|t| t.name().starts_with(name));
            return if may_follow && prefix {
                ToolOpen::Partial
            } else {
                ToolOpen::No
            };
        }
        if self.tools.get(name).is_none() {
            return ToolOpen::No;
        }
        while k < bytes.len() && xml::is_ws(bytes[k]) && k - n <= MAX_NAME + MAX_SPACES {
            k += 1;
        }
        let self_closing = bytes.get(k) == Some(&b'/');
        let close = k + usize::from(self_closing);
        match bytes.get(close) {
            Some(b'>') => ToolOpen::Open {
                name: name.to_string(),
                len: close + 1 - at,
                self_closing,
            },
            None if may_follow => ToolOpen::Partial,
            _ => ToolOpen::No,
        }
    }

    /// A tool's name written on a line of its own (the line starts at `ls`; text not yet given
    /// out starts at `i`), `get_weather` or `get_weather:`, followed (after blank space) by an
    /// argument tag its schema lists: a call whose element is missing, opened at the name and
    /// reported. `None` when the line is not one; the offset to read on from when it is, or
    /// when the text ends before it can be told (the line is held).
    fn name_line(
        &mut self,
        text: &str,
        i: usize,
        ls: usize,
        base: usize,
        em: &mut Emitter,
    ) -> Option<usize> {
        let bytes = text.as_bytes();
        let may_follow = !self.at_end;
        let mut n = ls;
        while n < bytes.len() && matches!(bytes[n], b' ' | b'\t') && n - ls <= MAX_SPACES {
            n += 1;
        }
        if n == bytes.len() || n - ls > MAX_SPACES {
            return None;
        }
        let mut k = n;
        while k < bytes.len() && is_bare_name_byte(bytes[k]) && k - n <= MAX_NAME {
            k += 1;
        }
        // A name is at most MAX_NAME long; `text[n..k]` stops at a char boundary (the loop
        // stopped at an ASCII byte or the end) unless it was cut by the limit.
        if k == n || k - n > MAX_NAME || !text.is_char_boundary(k) {
            return None;
        }
        let hold = |this: &mut Self, em: &mut Emitter| {
            em.text(&text[i..n]);
            Some(this.held.hold(text, n, base))
        };
        let name = &text[n..k];
        if k == bytes.len() {
            let prefix = self.tools.iter().any(|t| t.name().starts_with(name));
            return if may_follow && prefix {
                hold(self, em)
            } else {
                None
            };
        }
        let tool = self.tools.get_arc(name).cloned()?;
        if bytes[k] == b':' {
            k += 1;
        }
        while k < bytes.len()
            && matches!(bytes[k], b' ' | b'\t' | b'\r')
            && k - n <= MAX_NAME + MAX_SPACES
        {
            k += 1;
        }
        if k == bytes.len() {
            return if may_follow { hold(self, em) } else { None };
        }
        if bytes[k] != b'\n' {
            return None;
        }
        let line_end = k;
        while k < bytes.len() && xml::is_ws(bytes[k]) && k - line_end <= MAX_DECIDING_WS {
            k += 1;
        }
        if k == bytes.len() {
            return if may_follow { hold(self, em) } else { None };
        }
        if bytes[k] != b'<' {
            return None;
        }
        match parse_tag(text, k) {
            Tag::Incomplete if may_follow => hold(self, em),
            Tag::Open { name: arg, .. } if lists_argument(&tool, arg) => {
                em.text(&text[i..n]);
                em.error(ErrorPart {
                    tool_name: Some(name.to_string()),
                    ..ErrorPart::reason(
                        "missing-call-tag",
                        format!(
                            "read as a call of {name} although its name stands on a line of its \
                             own instead of <{name}> around the arguments"
                        ),
                    )
                });
                let call = new_call(name.to_string(), tool, base + n, &text[n..k], em);
                self.state = State::Open(call);
                Some(k)
            }
            _ => None,
        }
    }

    /// Between arguments (`started`: at least one argument was seen).
    fn between(
        &mut self,
        mut call: Box<Call>,
        started: bool,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let k = ws_end(bytes, i);
        call.raw.push_str(&text[i..k]);
        call.trailing.push_str(&text[i..k]);
        let park = |call: Box<Call>| {
            if started {
                State::Between(call)
            } else {
                State::Open(call)
            }
        };
        if k == bytes.len() {
            self.state = park(call);
            return k;
        }
        if bytes[k] == b'<' {
            let tag = parse_tag(text, k);
            // Another tool's open tag (one this tool takes no argument of) is another call.
            let next_call = matches!(tag, Tag::Open { name, .. }
                if self.tools.get(name).is_some() && !held_args::declares(Some(&call.tool), name));
            if next_call && !started {
                let why = "no arguments follow it before the next call";
                self.unread_body(call, "unfinished-tool-call", why, base + k, em);
                return k;
            }
            match tag {
                Tag::Incomplete => {
                    self.state = park(call);
                    return self.held.hold(text, k, base);
                }
                Tag::Close { name, len } if name == call.name => {
                    call.raw.push_str(&text[k..k + len]);
                    self.close_call(call, base + k + len, em);
                    return k + len;
                }
                // After arguments: an argument's close tag again is a stray repeat, consumed;
                // any other close tag is the call's, written wrong (`</think>`), and closes it.
                Tag::Close { name, len } if started => {
                    call.raw.push_str(&text[k..k + len]);
                    if held_args::declares(Some(&call.tool), name) {
                        call.trailing.clear();
                        call.last_param_end = base + k + len;
                        self.state = State::Between(call);
                    } else {
                        self.close_call(call, base + k + len, em);
                    }
                    return k + len;
                }
                Tag::Open {
                    name,
                    self_closing,
                    len,
                } if !next_call => {
                    call.raw.push_str(&text[k..k + len]);
                    call.trailing.clear();
                    if call.id.is_none() {
                        call.id = Some(em.begin_call(&call.name));
                    }
                    let name = name.to_string();
                    let tool = call.tool.clone();
                    if let Err(why) = call.args.open(Some(&tool), &name, "argument") {
                        call.failed = Some(why);
                        self.state = State::Skip(call);
                        return k + len;
                    }
                    let param = self.new_param(&call, name);
                    if let ParamMode::Stream = param.mode {
                        let _ = call.writer.key(&param.name);
                        let _ = call.writer.begin_string();
                    }
                    if self_closing {
                        self.end_param(
                            call,
                            param,
                            Value::String(String::new()),
                            base + k + len,
                            em,
                        );
                    } else {
                        self.state = State::InParam(call, param);
                    }
                    return k + len;
                }
                _ => {}
            }
        }
        if started {
            // After arguments, text (or another call) ends the call where its last argument
            // ended.
            let end = call.last_param_end;
            let trailing = std::mem::take(&mut call.trailing);
            self.finish_call(call, end, em);
            em.text(&trailing);
            return k;
        }
        // Text right after the open tag: the call's body is text, not argument elements.
        let trailing = std::mem::take(&mut call.trailing);
        let arg = held_args::body_argument(&call.tool);
        let stream = arg.as_deref().is_some_and(|a| {
            let root = call.tool.schema();
            property_schema(root, a, root).is_some_and(|s| is_plain_string(s, root))
        });
        let mut body = Body {
            arg,
            stream,
            sep: Separated::default(),
            value: String::new(),
            in_cdata: false,
        };
        if let Some(arg) = &body.arg {
            call.id = Some(em.begin_call(&call.name));
            if body.stream {
                let _ = call.writer.key(arg);
                let _ = call.writer.begin_string();
            }
        }
        body_text(&mut call, &mut body, &trailing);
        self.state = State::Body(call, body);
        k
    }

    fn new_param(&self, call: &Call, name: String) -> Param {
        let root = call.tool.schema();
        let plain = property_schema(root, &name, root).is_some_and(|s| is_plain_string(s, root));
        let mode = match (plain, call.args.streams(Some(&call.tool), &name)) {
            (true, true) => ParamMode::Stream,
            (true, false) => ParamMode::Collect(String::new()),
            _ => ParamMode::Tree(String::new()),
        };
        Param {
            name,
            mode,
            depth: 0,
            in_cdata: false,
            sep: Separated::default(),
        }
    }

    /// Decides whether an argument's close tag (ending at `k`) ends it, from what follows: it
    /// does unless a tag follows that is neither an argument of the tool, nor the call's close,
    /// nor another call — markup like that means the close tag was part of the value. (Prose
    /// after it is the call's end with its close tag forgotten.)
    fn decide(&self, call: &Call, text: &str, k: usize) -> Decision {
        let bytes = text.as_bytes();
        let mut m = k;
        while m < bytes.len() && xml::is_ws(bytes[m]) {
            m += 1;
            if m - k > MAX_DECIDING_WS {
                return Decision::Closes;
            }
        }
        if m == bytes.len() {
            return if self.at_end {
                Decision::Closes
            } else {
                Decision::Undecided
            };
        }
        if bytes[m] != b'<' {
            return Decision::Closes;
        }
        match parse_tag(text, m) {
            Tag::Incomplete if self.at_end => Decision::Closes,
            Tag::Incomplete => Decision::Undecided,
            Tag::Open { name, .. } => {
                // An argument of this tool (given already or not: a repeat that the schema does
                // not allow is then reported), or another call.
                let argument = held_args::declares(Some(call.tool.as_ref()), name);
                if argument || self.tools.get(name).is_some() {
                    Decision::Closes
                } else {
                    Decision::Text
                }
            }
            // Any close tag: the call's, a repeat of an argument's, or a wrong one (`</think>`)
            // that the model closed the call with. (A value that held this close tag and then
            // another would be markup that closes what it never opened.)
            Tag::Close { .. } => Decision::Closes,
            Tag::CData(_) | Tag::Comment(_) => Decision::Text,
            Tag::Text => Decision::Closes,
        }
    }

    fn param(
        &mut self,
        mut call: Box<Call>,
        mut p: Param,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let tree = matches!(p.mode, ParamMode::Tree(_));
        let mut j = i;
        while j < bytes.len() {
            if p.in_cdata {
                match memchr::memmem::find(&bytes[j..], b"]]>") {
                    Some(e) => {
                        let body = &text[j..j + e];
                        call.raw.push_str(&text[j..j + e + 3]);
                        if tree {
                            push_tree(&mut p, &text[j..j + e + 3]);
                        } else {
                            content_verbatim(&mut call, &mut p, body);
                        }
                        p.in_cdata = false;
                        j += e + 3;
                        continue;
                    }
                    None => {
                        // Keep a possible partial "]]>" for the next chunk.
                        let keep = if self.at_end {
                            0
                        } else if text.ends_with("]]") {
                            2
                        } else {
                            usize::from(text.ends_with(']'))
                        };
                        let cut = text.len() - keep;
                        let body = &text[j..cut.max(j)];
                        call.raw.push_str(body);
                        if tree {
                            push_tree(&mut p, body);
                        } else {
                            content_verbatim(&mut call, &mut p, body);
                        }
                        self.state = State::InParam(call, p);
                        return if keep > 0 {
                            self.held.hold(text, cut.max(j), base)
                        } else {
                            text.len()
                        };
                    }
                }
            }
            let special = if tree {
                find1(b'<', &bytes[j..])
            } else {
                find2(b'<', b'&', &bytes[j..])
            };
            let Some(off) = special else {
                call.raw.push_str(&text[j..]);
                if tree {
                    push_tree(&mut p, &text[j..]);
                } else {
                    content(&mut call, &mut p, &text[j..]);
                }
                j = bytes.len();
                break;
            };
            let at = j + off;
            call.raw.push_str(&text[j..at]);
            if tree {
                push_tree(&mut p, &text[j..at]);
            } else {
                content(&mut call, &mut p, &text[j..at]);
            }
            if bytes[at] == b'&' {
                let Some((len, decoded)) = read_amp(text, at, self.at_end) else {
                    self.state = State::InParam(call, p);
                    return self.held.hold(text, at, base);
                };
                let markup = &text[at..at + len];
                call.raw.push_str(markup);
                match decoded {
                    Some(c) => content_verbatim(&mut call, &mut p, c.encode_utf8(&mut [0u8; 4])),
                    None => content(&mut call, &mut p, markup),
                }
                j = at + len;
                continue;
            }
            let markup = |call: &mut Call, p: &mut Param, len: usize| {
                call.raw.push_str(&text[at..at + len]);
                if tree {
                    push_tree(p, &text[at..at + len]);
                } else {
                    content(call, p, &text[at..at + len]);
                }
                at + len
            };
            match parse_tag(text, at) {
                Tag::Incomplete if !self.at_end => {
                    self.state = State::InParam(call, p);
                    return self.held.hold(text, at, base);
                }
                Tag::Close { name, len } if name == p.name && p.depth == 0 => {
                    match self.decide(&call, text, at + len) {
                        Decision::Undecided => {
                            self.state = State::InParam(call, p);
                            return self.held.hold(text, at, base);
                        }
                        Decision::Text => j = markup(&mut call, &mut p, len),
                        Decision::Closes => {
                            call.raw.push_str(&text[at..at + len]);
                            let value = take_value(&mut call, &mut p);
                            self.end_param(call, p, value, base + at + len, em);
                            return at + len;
                        }
                    }
                }
                Tag::Close { name, len } if name == call.name => {
                    // The argument was never closed: the call's close tag closes both.
                    call.raw.push_str(&text[at..at + len]);
                    let value = take_value(&mut call, &mut p);
                    let end = base + at + len;
                    self.end_param_then(call, p, value, end, em, true);
                    return at + len;
                }
                Tag::CData(n) => {
                    call.raw.push_str(&text[at..at + n]);
                    if tree {
                        push_tree(&mut p, &text[at..at + n]);
                    } else {
                        p.sep.mark();
                    }
                    p.in_cdata = true;
                    j = at + n;
                }
                Tag::Open {
                    name,
                    self_closing,
                    len,
                } => {
                    if name == p.name && !self_closing {
                        p.depth += 1;
                    }
                    j = markup(&mut call, &mut p, len);
                }
                Tag::Close { name, len } => {
                    if name == p.name {
                        p.depth -= 1;
                    }
                    j = markup(&mut call, &mut p, len);
                }
                Tag::Comment(_) | Tag::Text | Tag::Incomplete => {
                    j = markup(&mut call, &mut p, 1);
                }
            }
        }
        self.state = State::InParam(call, p);
        j
    }

    /// A call whose body is text: read to the call's close tag, where it becomes the argument
    /// the schema leaves no doubt about, or malformed markup. Another call's open tag before
    /// that makes the open tag a mention, kept as text and reported.
    fn body(
        &mut self,
        mut call: Box<Call>,
        mut body: Body,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while j < bytes.len() {
            if body.in_cdata {
                match memchr::memmem::find(&bytes[j..], b"]]>") {
                    Some(e) => {
                        call.raw.push_str(&text[j..j + e + 3]);
                        body_verbatim(&mut call, &mut body, &text[j..j + e]);
                        body.in_cdata = false;
                        j += e + 3;
                        continue;
                    }
                    None => {
                        let keep = if self.at_end {
                            0
                        } else if text.ends_with("]]") {
                            2
                        } else {
                            usize::from(text.ends_with(']'))
                        };
                        let cut = (text.len() - keep).max(j);
                        call.raw.push_str(&text[j..cut]);
                        body_verbatim(&mut call, &mut body, &text[j..cut]);
                        self.state = State::Body(call, body);
                        return if cut < text.len() {
                            self.held.hold(text, cut, base)
                        } else {
                            text.len()
                        };
                    }
                }
            }
            let Some(off) = find2(b'<', b'&', &bytes[j..]) else {
                call.raw.push_str(&text[j..]);
                body_text(&mut call, &mut body, &text[j..]);
                j = bytes.len();
                break;
            };
            let at = j + off;
            call.raw.push_str(&text[j..at]);
            body_text(&mut call, &mut body, &text[j..at]);
            if bytes[at] == b'&' {
                let Some((len, decoded)) = read_amp(text, at, self.at_end) else {
                    self.state = State::Body(call, body);
                    return self.held.hold(text, at, base);
                };
                let markup = &text[at..at + len];
                call.raw.push_str(markup);
                match decoded {
                    Some(c) => body_verbatim(&mut call, &mut body, c.encode_utf8(&mut [0u8; 4])),
                    None => body_text(&mut call, &mut body, markup),
                }
                j = at + len;
                continue;
            }
            match match_tool_open(text, at, &self.tools) {
                ToolOpen::Open { .. } => {
                    // Another call: the open tag before was a mention.
                    let end = base + at;
                    self.unread_body(
                        call,
                        "unfinished-tool-call",
                        "no arguments and no close tag follow it before the next call",
                        end,
                        em,
                    );
                    return at;
                }
                ToolOpen::Partial if !self.at_end => {
                    self.state = State::Body(call, body);
                    return self.held.hold(text, at, base);
                }
                _ => {}
            }
            match parse_tag(text, at) {
                Tag::Incomplete if !self.at_end => {
                    self.state = State::Body(call, body);
                    return self.held.hold(text, at, base);
                }
                Tag::Close { name, len } if name == call.name => {
                    call.raw.push_str(&text[at..at + len]);
                    let end = base + at + len;
                    self.end_body(call, body, end, em);
                    return at + len;
                }
                Tag::CData(n) => {
                    call.raw.push_str(&text[at..at + n]);
                    body.sep.mark();
                    body.in_cdata = true;
                    j = at + n;
                }
                Tag::Open { len, .. } | Tag::Close { len, .. } => {
                    call.raw.push_str(&text[at..at + len]);
                    body_text(&mut call, &mut body, &text[at..at + len]);
                    j = at + len;
                }
                Tag::Comment(_) | Tag::Text | Tag::Incomplete => {
                    call.raw.push('<');
                    body_text(&mut call, &mut body, "<");
                    j = at + 1;
                }
            }
        }
        self.state = State::Body(call, body);
        j
    }

    /// The close tag of a call whose body is text.
    fn end_body(&mut self, mut call: Box<Call>, mut body: Body, end: usize, em: &mut Emitter) {
        let Some(arg) = body.arg.take() else {
            let why = "its body is text, not argument elements, and the schema has no single \
                       string argument to put it in";
            self.unread_body(call, "malformed-tool-call", why, end, em);
            return;
        };
        body.sep.close(|piece| {
            body.value.push_str(piece);
            if body.stream {
                let _ = call.writer.string_piece(piece);
            }
        });
        if body.stream {
            let _ = call.writer.end_string();
        } else {
            let _ = call.writer.key(&arg);
            let _ = call.writer.scalar(Value::String(body.value.clone()));
        }
        call.writer.record(Coercion {
            path: String::new(),
            from: Value::String(body.value.clone()),
            to: serde_json::json!({ arg: body.value }),
        });
        self.finish_call(call, end, em);
    }

    /// A text body that is no call: the markup stays, reported.
    fn unread_body(
        &mut self,
        mut call: Box<Call>,
        reason: &str,
        why: &str,
        end: usize,
        em: &mut Emitter,
    ) {
        call.failed = Some(why.to_string());
        self.malformed(call, end, reason, em);
    }

    fn end_param(&mut self, call: Box<Call>, p: Param, value: Value, end: usize, em: &mut Emitter) {
        self.end_param_then(call, p, value, end, em, false)
    }

    /// An argument is complete: written, or held until the end of the call.
    fn end_param_then(
        &mut self,
        mut call: Box<Call>,
        p: Param,
        value: Value,
        end: usize,
        em: &mut Emitter,
        close: bool,
    ) {
        match p.mode {
            ParamMode::Stream => {
                let _ = call.writer.end_string();
            }
            _ => call.args.complete(&mut call.writer, &p.name, value),
        }
        call.last_param_end = end;
        if let Some(id) = &call.id
            && let Some(d) = call.writer.take_delta()
        {
            em.input_delta(id, d);
        }
        if close {
            self.close_call(call, end, em);
        } else {
            self.state = State::Between(call);
        }
    }

    fn skip(
        &mut self,
        mut call: Box<Call>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            match parse_tag(text, at) {
                Tag::Close { name, len } if name == call.name => {
                    call.raw.push_str(&text[i..at + len]);
                    self.malformed(call, base + at + len, "malformed-tool-call", em);
                    return at + len;
                }
                Tag::Incomplete if !self.at_end => {
                    call.raw.push_str(&text[i..at]);
                    self.state = State::Skip(call);
                    return self.held.hold(text, at, base);
                }
                _ => j = at + 1,
            }
        }
        call.raw.push_str(&text[i..]);
        self.state = State::Skip(call);
        text.len()
    }

    /// The close tag arrived (or the element closed itself).
    fn close_call(&mut self, call: Box<Call>, end: usize, em: &mut Emitter) {
        self.finish_call(call, end, em);
    }

    fn finish_call(&mut self, mut call: Box<Call>, end: usize, em: &mut Emitter) {
        let id = match call.id.take() {
            Some(id) => id,
            None => em.begin_call(&call.name),
        };
        call.args.write_into(&mut call.writer);
        let _ = call.writer.end_object();
        if let Some(d) = call.writer.take_delta() {
            em.input_delta(&id, d);
        }
        match std::mem::replace(&mut call.writer, ArgsWriter::new(None)).finish() {
            Ok(args) => {
                em.end_call(id, &call.name, args);
                em.span(call.start, end, SpanKind::ToolCall);
            }
            Err(why) => {
                call.id = Some(id);
                call.failed = Some(why);
                self.malformed(call, end, "malformed-tool-call", em);
            }
        }
    }

    fn malformed(&mut self, call: Box<Call>, end: usize, reason: &str, em: &mut Emitter) {
        if let Some(id) = &call.id {
            em.abort_call(id);
        }
        let why = call
            .failed
            .clone()
            .unwrap_or_else(|| "the output ended inside a tool call".into());
        em.error(ErrorPart {
            tool_call_id: call.id.clone(),
            tool_name: Some(call.name.clone()),
            ..ErrorPart::reason(reason, format!("<{}>: {why}", call.name))
        });
        em.text(&call.raw);
        em.span(call.start, end, SpanKind::Malformed);
    }
}

/// Whether the incomplete tag at `text[j]` may still become a known tool's close tag.
fn could_close_tool(text: &str, j: usize, tools: &ToolSet) -> bool {
    let rest = &text.as_bytes()[j..];
    let mut k = 1;
    if rest.get(k) != Some(&b'/') {
        return rest.len() <= 1;
    }
    k += 1;
    while k < rest.len() && xml::is_ws(rest[k]) {
        k += 1;
    }
    let n = rest[k..]
        .iter()
        .position(|&b| !xml::is_name_byte(b))
        .unwrap_or(rest.len() - k);
    let so_far = &text[j + k..j + k + n];
    if k + n == rest.len() {
        tools.iter().any(|t| t.name().starts_with(so_far))
    } else {
        tools.get(so_far).is_some()
    }
}

/// Content of a string argument, without its separating newlines, streamed or collected.
fn content(call: &mut Call, p: &mut Param, s: &str) {
    let Param { sep, mode, .. } = p;
    sep.push(s, |piece| write_content(call, mode, piece));
}

/// Content that cannot hold a separator (CDATA text, a decoded character).
fn content_verbatim(call: &mut Call, p: &mut Param, s: &str) {
    let Param { sep, mode, .. } = p;
    sep.push_verbatim(s, |piece| write_content(call, mode, piece));
}

fn write_content(call: &mut Call, mode: &mut ParamMode, piece: &str) {
    match mode {
        ParamMode::Stream => {
            let _ = call.writer.string_piece(piece);
        }
        ParamMode::Collect(buf) => buf.push_str(piece),
        ParamMode::Tree(_) => {}
    }
}

/// Text of a call's text body.
fn body_text(call: &mut Call, body: &mut Body, s: &str) {
    let Body {
        sep, value, stream, ..
    } = body;
    sep.push(s, |piece| {
        value.push_str(piece);
        if *stream {
            let _ = call.writer.string_piece(piece);
        }
    });
}

fn body_verbatim(call: &mut Call, body: &mut Body, s: &str) {
    let Body {
        sep, value, stream, ..
    } = body;
    sep.push_verbatim(s, |piece| {
        value.push_str(piece);
        if *stream {
            let _ = call.writer.string_piece(piece);
        }
    });
}

fn push_tree(p: &mut Param, s: &str) {
    if let ParamMode::Tree(buf) = &mut p.mode {
        buf.push_str(s);
    }
}

/// A call opened at `start` by `opening` (its open tag, or its name line).
fn new_call(name: String, tool: Arc<Tool>, start: usize, opening: &str, em: &Emitter) -> Box<Call> {
    let mut writer = ArgsWriter::new(Some(tool.clone()));
    writer.set_whole(em.is_whole());
    let mut call = Box::new(Call {
        name,
        writer,
        tool,
        start,
        raw: opening.to_string(),
        id: None,
        args: HeldArgs::default(),
        last_param_end: start + opening.len(),
        trailing: String::new(),
        failed: None,
    });
    // Writing into a fresh writer cannot be refused.
    let _ = call.writer.begin_object();
    call
}

/// The complete value of an argument (its closing separator dropped).
fn take_value(call: &mut Call, p: &mut Param) -> Value {
    let Param { sep, mode, .. } = p;
    sep.close(|piece| write_content(call, mode, piece));
    match &mut p.mode {
        ParamMode::Stream => Value::Null,
        ParamMode::Collect(buf) => Value::String(std::mem::take(buf)),
        ParamMode::Tree(buf) => xml::fragment_value(buf),
    }
}

/// The `&` at `at` in a value: how many bytes it takes, and the character it stands for (none
/// where it stands for itself, as an unknown entity or a lone `&` does); `None` while it may
/// still become an entity with the next piece.
fn read_amp(text: &str, at: usize, at_end: bool) -> Option<(usize, Option<char>)> {
    match scan_entity(&text[at..]) {
        Entity::Char(c, len) => Some((len, Some(c))),
        Entity::Unknown(len) => Some((len, None)),
        Entity::Incomplete if !at_end => None,
        Entity::Text | Entity::Incomplete => Some((1, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;

    standard_cases!(MorphScanner::new;
        "<get_weather><city>Paris</city></get_weather>",
        "<get_weather><city>Pa",
        "<get_weather><city>Paris</city><city>Paris</city></get_weather>");
}
