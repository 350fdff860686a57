//! Calls framed by literal markers: the scanner behind the formats whose calls are special tokens
//! around JSON (DeepSeek, Kimi, Mistral, Llama, Granite, …).
//!
//! A format is data ([`FramedSyntax`]): an optional section that groups calls
//! (`<｜tool▁calls▁begin｜>` … `<｜tool▁calls▁end｜>`), the marker that opens one call, a header
//! that names the tool (and may give the call's id) up to where the arguments begin, the
//! arguments as one JSON object (or, with an empty header, JSON call envelopes
//! `{"name": …, "arguments": …}` that name the tools themselves), an optional suffix after the
//! JSON (a closing code fence), and the marker that closes one call — or none, when a call ends
//! where its JSON ends.
//!
//! A format may also have a second frame for its calls (see [`FramedScanner::alt_frame`]): another
//! pair of markers around the same body, as Command R+'s `Action: ```json` … ```` ``` ```` beside
//! Command A's `<|START_ACTION|>` … `<|END_ACTION|>`.
//!
//! What the scanner forgives: a call opened without its section marker, a missing call or
//! section close at the end of the output or before the next call, whitespace between the
//! pieces. A call that cannot be read stays in the output as text, with an error part saying why;
//! every marker that was read belongs to a call span. Markers split across chunks are held back
//! only while the chunk's end could still begin one, so the cost is linear in the text.

use std::sync::Arc;

use crate::args::ArgsWriter;
use crate::json::lexer::{find1, find2};
use crate::json::{Lexer, Step};
use crate::part::{ErrorPart, PartId};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::envelope::{Envelope, Found};
use crate::protocol::text::holdback::{Holdback, Steps, drive};
use crate::protocol::text::places::{Kept, cached};
use crate::protocol::text::run::DirectRun;
use crate::protocol::text::scanner::{Scanner, is_ws, ws_end};
use crate::tool::{Tool, ToolSet};

/// Where a call's header ends and its arguments begin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ArgsBegin {
    /// A marker, consumed (`<｜tool▁sep｜>`, `[ARGS]`).
    Marker(&'static str),
    /// The `{` that opens the arguments object, kept as their first byte.
    Object,
    /// With an empty header, the `[` of an array of call envelopes, kept.
    Array,
    /// With an empty header, the `[` of an array of objects that each name a tool by their
    /// only key, `[{"get_weather": {…}}]`, kept.
    KeyedArray,
}

/// The tool a header names, and the call id it gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub name: String,
    pub id: Option<String>,
}

/// A format of framed calls.
pub(crate) struct FramedSyntax {
    /// Markers that open and close a group of calls. A call may also open without it.
    pub section: Option<(&'static str, &'static str)>,
    /// The marker that opens one call.
    pub call_begin: &'static str,
    /// Where the header ends, tried in order at each position.
    pub args_begin: &'static [ArgsBegin],
    /// Reads a header (the text between the call's opening marker and its arguments); `None`
    /// when it names no tool. An empty header, or a header read as an empty name, means the
    /// JSON names the tools (envelopes).
    pub header: fn(&str) -> Option<Header>,
    /// Text that may follow the arguments' JSON before the call's close (a code fence).
    pub args_suffix: Option<&'static str>,
    /// The marker that closes one call; `None`: a call ends where its JSON ends.
    pub call_end: Option<&'static str>,
    /// Between calls that have no close marker, what joins them (Llama's `;`); another call
    /// (its JSON, without an opening marker) follows it.
    pub separator: Option<&'static str>,
}

impl FramedSyntax {
    /// Calls opened by `call_begin`, their arguments after `args_begin`, with nothing else:
    /// no section, no header (the JSON names the tool), no close, no separator. The rest is
    /// filled in with `FramedSyntax { call_end: …, ..FramedSyntax::new(…) }`.
    pub(crate) const fn new(call_begin: &'static str, args_begin: &'static [ArgsBegin]) -> Self {
        FramedSyntax {
            section: None,
            call_begin,
            args_begin,
            header: no_header,
            args_suffix: None,
            call_end: None,
            separator: None,
        }
    }
}

/// No header: the JSON names the tool.
fn no_header(_: &str) -> Option<Header> {
    None
}

/// The longest a header may be before the call is taken for malformed.
const MAX_HEADER: usize = 512;

/// The markup of one section (or one call outside a section) read so far.
struct Block {
    /// Offset of `raw`'s first byte.
    start: usize,
    raw: String,
    in_section: bool,
    /// Calls completed in this block.
    calls: usize,
    /// The bytes of `raw` that hold completed calls: what stays a call span if the rest of the
    /// block breaks.
    good: usize,
    /// The call was opened by the scanner's second frame (see [`FramedScanner::alt_frame`]).
    alt: bool,
    /// The call's opening marker was the prompt's (see [`FramedScanner::prefilled_opener`]).
    prefilled: bool,
}

impl Block {
    /// A block starting at `start`, its markup kept in `buf` (the buffer of an earlier block).
    fn new(start: usize, in_section: bool, mut buf: String) -> Self {
        buf.clear();
        Block {
            start,
            raw: buf,
            in_section,
            calls: 0,
            good: 0,
            alt: false,
            prefilled: false,
        }
    }

    fn end(&self) -> usize {
        self.start + self.raw.len()
    }

    /// Spans the completed calls and gives back the rest of the markup, which is not a call.
    fn split_good(mut self, em: &mut Emitter) -> (usize, String) {
        if self.good > 0 {
            em.span(self.start, self.start + self.good, SpanKind::ToolCall);
        }
        let rest = self.raw.split_off(self.good);
        (self.start + self.good, rest)
    }
}

/// A call's body being read.
enum Body {
    /// The arguments of the tool the header named.
    Args {
        name: String,
        id: PartId,
        writer: ArgsWriter,
        known: bool,
    },
    /// JSON envelopes that name their tools.
    Envelopes {
        env: Envelope,
        id: Option<PartId>,
        name: Option<String>,
        failed: Option<String>,
    },
}

struct Open {
    lexer: Lexer,
    body: Body,
}

/// Where a call is after its JSON.
struct After {
    suffixed: bool,
    trailing: String,
}

enum State {
    Text,
    /// Inside a section, between calls.
    Section(Block),
    /// After a call's opening marker: the header.
    Header(Block, String),
    Body(Block, Box<Open>),
    /// The JSON ended: the suffix, then the close. Whitespace read since the JSON (or its
    /// suffix) is kept apart: it is the call's if the close follows, else text.
    After(Block, Box<Open>, After),
    /// A broken call, skipped up to its close: why.
    Skip(Block, String),
    /// JSON at the start of a line that may be a call whose marker was stripped.
    Bare(Box<Bare>),
}

/// JSON at the start of a line that may be a call whose marker a server stripped: held until
/// it closes and the output ends after it (a call), or anything else shows it was text.
struct Bare {
    start: usize,
    raw: String,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// What must come next for this to stay a candidate: a `{` after an array's `[`, a key's
    /// quote after an object's `{`.
    expect: Option<u8>,
    closed: bool,
}

impl Bare {
    fn new(start: usize) -> Self {
        Bare {
            start,
            raw: String::new(),
            depth: 0,
            in_string: false,
            escaped: false,
            expect: None,
            closed: false,
        }
    }

    /// Reads `text`; gives the offset where the candidate failed (what follows is text), or
    /// `None` when all of it was taken.
    fn read(&mut self, text: &str) -> Option<usize> {
        for (k, &b) in text.as_bytes().iter().enumerate() {
            if self.closed {
                if is_ws(b) {
                    continue;
                }
                self.raw.push_str(&text[..k]);
                return Some(k);
            }
            if let Some(want) = self.expect {
                if is_ws(b) {
                    continue;
                }
                let ok = b == want || (want == b'"' && b == b'\'');
                if !ok {
                    self.raw.push_str(&text[..k]);
                    return Some(k);
                }
                self.expect = (want == b'{').then_some(b'"');
            }
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    if self.depth == 0 {
                        self.expect = Some(if b == b'[' { b'{' } else { b'"' });
                    }
                    self.depth += 1;
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    self.closed = self.depth == 0;
                }
                _ => {}
            }
        }
        self.raw.push_str(text);
        None
    }
}

pub(crate) struct FramedScanner {
    syntax: &'static FramedSyntax,
    tools: ToolSet,
    state: State,
    held: Holdback,
    /// The first bytes of the markers that open something in text.
    openers: Vec<u8>,
    /// A call may open without its marker at the very start of the output (Llama's bare JSON).
    bare_start: bool,
    /// The call marker is a special token that a server may have stripped
    /// (`skip_special_tokens`): a JSON call envelope naming an offered tool, alone at the start
    /// of a line and at the end of the output, is read as a call, and reported.
    stripped: bool,
    /// The bytes a call's JSON may begin with when its marker was stripped.
    bare_openers: Vec<u8>,
    /// The text read so far ends at the start of a line (after spaces or tabs).
    line_start: bool,
    /// Something other than whitespace was read.
    text_seen: bool,
    /// The markup buffer of the block that ended last.
    spare_raw: String,
    /// A second frame of one call: its opening and closing markers.
    alt: Option<(&'static str, &'static str)>,
    /// A header that opens text, not a call (Functionary's `>>>all`): its markup is format.
    text_header: Option<&'static str>,
    /// The prompt ends with the call marker (see [`FramedScanner::prefilled_opener`]).
    prefilled: bool,
    /// Another engine read some of the output (see [`FramedScanner::pass_over`]).
    passed: bool,
    /// The places found in the text last scanned, for when it is entered again after a call.
    marks: Kept<MarkerSearch<'static>>,
}

/// The search for the next byte that may open a marker in one piece of text: up to three bytes
/// at a time with `memchr`, each group's next hit remembered, so that every byte is looked at
/// once per group however many hits the other groups have.
#[derive(Default)]
struct OpenerSearch {
    /// Per group of three openers: where its next hit is (`None`: not searched past `from`).
    hits: [Option<Option<usize>>; 4],
}

impl OpenerSearch {
    /// The first byte at or after `from` that is one of `openers`.
    fn next(&mut self, openers: &[u8], bytes: &[u8], from: usize) -> Option<usize> {
        if bytes.len() - from < 16 {
            // A few bytes (a stream's small pieces): a look at each costs less than a search.
            return bytes[from..]
                .iter()
                .position(|c| openers.contains(c))
                .map(|p| from + p);
        }
        let mut first: Option<usize> = None;
        for (k, group) in openers.chunks(3).enumerate() {
            // (Past four groups, nothing is remembered.)
            let mut spare = None;
            let slot = self.hits.get_mut(k).unwrap_or(&mut spare);
            let hit = cached(slot, from, || find_any(group, &bytes[from..]));
            first = earlier(first, hit);
        }
        first
    }
}

/// The first byte of `hay` that is one of `set`: `memchr` per three bytes of the set (a plain
/// look at each byte of a short piece).
#[inline(always)]
fn find_any(set: &[u8], hay: &[u8]) -> Option<usize> {
    match *set {
        [a] => find1(a, hay),
        [a, b] => find2(a, b, hay),
        [a, b, c] if hay.len() >= 16 => memchr::memchr3(a, b, c, hay),
        _ if hay.len() < 16 => hay.iter().position(|c| set.contains(c)),
        // More than three: `memchr` per three, the earliest.
        _ => set
            .chunks(3)
            .filter_map(|g| match *g {
                [a] => memchr::memchr(a, hay),
                [a, b] => memchr::memchr2(a, b, hay),
                [a, b, c] => memchr::memchr3(a, b, c, hay),
                _ => None,
            })
            .min(),
    }
}

/// The earlier of two places, either of which may be missing.
fn earlier(a: Option<usize>, b: Option<usize>) -> Option<usize> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// How near the end of a text [`MarkerSearch`] looks at first bytes only (a stream's pieces are
/// shorter: a searcher per marker per piece would cost more than it saves).
const SHORT: usize = 256;

/// The places in a piece of text where [`FramedScanner::text`] has something to decide: where a
/// marker begins, where the text ends inside the start of one, and the bytes a call's JSON
/// begins with where calls may come without their marker. Markers are searched for whole (a
/// marker that begins with a common letter, `functools[`, would stop a search for its first byte
/// at every `f` of the prose), each one's next place remembered.
#[derive(Default)]
struct MarkerSearch<'m> {
    markers: [Option<&'m str>; 3],
    hits: [Option<Option<usize>>; 3],
    /// Each marker's searcher, made at its first search in this text: a whole text is searched
    /// again after every call, and making a searcher costs more than a short search.
    finders: [Option<memchr::memmem::Finder<'m>>; 3],
    bare: OpenerSearch,
    /// Near the end of a text (a stream's pieces): the markers' first bytes instead, a wider net
    /// that costs no searcher per piece.
    short: OpenerSearch,
}

impl<'m> MarkerSearch<'m> {
    fn new(markers: [Option<&'m str>; 3]) -> Self {
        MarkerSearch {
            markers,
            hits: [None; 3],
            finders: [None, None, None],
            bare: OpenerSearch::default(),
            short: OpenerSearch::default(),
        }
    }

    /// The first place at or after `from`. Within the last 256 bytes, the first byte at or after
    /// `from` that is one of `openers` (the markers' first bytes and `bare`): every place the
    /// whole search finds is among them.
    fn next(&mut self, bytes: &[u8], openers: &[u8], bare: &[u8], from: usize) -> Option<usize> {
        if bytes.len() - from < SHORT {
            return self.short.next(openers, bytes, from);
        }
        let mut first: Option<usize> = None;
        let searches = self
            .markers
            .iter()
            .zip(&mut self.hits)
            .zip(&mut self.finders);
        for ((m, slot), finder) in searches {
            let Some(m) = m.filter(|m| !m.is_empty()) else {
                continue;
            };
            let hit = cached(slot, from, || {
                finder
                    .get_or_insert_with(|| memchr::memmem::Finder::new(m))
                    .find(&bytes[from..])
            });
            // The text may end inside this marker's start.
            let tail = bytes.len().saturating_sub(m.len() - 1).max(from);
            let cut = (tail..bytes.len()).find(|&k| m.as_bytes().starts_with(&bytes[k..]));
            first = earlier(earlier(first, hit), cut);
        }
        if !bare.is_empty() {
            first = earlier(first, self.bare.next(bare, bytes, from));
        }
        first
    }
}

impl FramedScanner {
    pub(crate) fn new(syntax: &'static FramedSyntax, tools: ToolSet) -> Self {
        let mut openers = vec![syntax.call_begin.as_bytes()[0]];
        if let Some((begin, _)) = syntax.section {
            openers.push(begin.as_bytes()[0]);
        }
        openers.dedup();
        FramedScanner {
            syntax,
            tools,
            state: State::Text,
            held: Holdback::default(),
            openers,
            bare_start: false,
            stripped: false,
            bare_openers: Vec::new(),
            line_start: true,
            text_seen: false,
            spare_raw: String::new(),
            alt: None,
            text_header: None,
            prefilled: false,
            passed: false,
            marks: Kept::default(),
        }
    }

    /// Also reads calls framed by `begin` … `end` (a call, not a section: the body as the
    /// format's own calls have it), a second way the family writes them. A `begin` that is a
    /// plain word and is not followed by a call's JSON is text.
    pub(crate) fn alt_frame(mut self, begin: &'static str, end: &'static str) -> Self {
        self.alt = Some((begin, end));
        let b = begin.as_bytes()[0];
        if !self.openers.contains(&b) {
            self.openers.push(b);
        }
        self
    }

    /// The marker that opened `b`'s calls.
    fn begin_of(&self, b: &Block) -> &'static str {
        match self.alt {
            Some((begin, _)) if b.alt => begin,
            _ => self.syntax.call_begin,
        }
    }

    /// The marker that closes a call of `b`.
    fn end_of(&self, b: &Block) -> Option<&'static str> {
        match self.alt {
            Some((_, end)) if b.alt => Some(end),
            _ => self.syntax.call_end,
        }
    }

    /// A call marker whose header is `header` opens text, not a call: the marker, the header and
    /// what ends it are format (a markup span), and what follows is text.
    pub(crate) fn text_header(mut self, header: &'static str) -> Self {
        self.text_header = Some(header);
        self
    }

    /// The prompt ends with the call marker (Functionary's template ends with `>>>`), so the
    /// output begins with a header: its first line, when it is the text header or names an
    /// offered tool, is read as if the marker stood before it. Anything else at the start is
    /// text, as is an output that writes the marker itself.
    pub(crate) fn prefilled_opener(mut self) -> Self {
        self.prefilled = true;
        self
    }

    /// Also reads a call whose opening marker is left out at the very start of the output: the
    /// output begins (after whitespace) with the call's JSON.
    pub(crate) fn bare_first_call(mut self) -> Self {
        self.bare_start = true;
        self
    }

    /// Also reads calls whose marker a server stripped as a special token: a JSON envelope (an
    /// object, or an array where the format's calls are one) that names an offered tool, alone
    /// on its lines at the end of the output. What only looks like one stays text, silently;
    /// it is held back from the start of its line until it can be told.
    pub(crate) fn stripped_opener(mut self) -> Self {
        self.stripped = true;
        self.bare_openers = self.bare_bytes();
        for b in self.bare_bytes() {
            if !self.openers.contains(&b) {
                self.openers.push(b);
            }
        }
        self
    }

    /// The bytes a call's JSON may begin with when its marker is missing.
    fn bare_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for b in self.syntax.args_begin {
            match b {
                // A header that may be empty, or none at all (the JSON is an envelope).
                ArgsBegin::Object if (self.syntax.header)("").is_some() || self.headerless() => {
                    out.push(b'{')
                }
                ArgsBegin::Array | ArgsBegin::KeyedArray => out.push(b'['),
                _ => {}
            }
        }
        if self.bare_start {
            out.push(b'{');
        }
        out.dedup();
        out
    }

    /// In text, holding nothing back: a caller that gives some of the text to another scanner
    /// may do so here.
    pub(crate) fn idle(&self) -> bool {
        matches!(self.state, State::Text) && self.held.is_empty()
    }

    /// How much of `s` this scanner can be given in one piece without passing a place where it
    /// may become idle, for an engine that hands text over when it does: inside a JSON string
    /// value, everything up to the next quote or backslash (string content never ends a call or
    /// breaks it); elsewhere one character. Reading a long value costs one feed, not one a byte.
    pub(crate) fn quiet_run(&self, s: &str) -> usize {
        if let State::Body(_, open) = &self.state
            && self.held.is_empty()
            && let Some(q) = open.lexer.plain_string_quote()
        {
            let n = find2(q, b'\\', s.as_bytes()).unwrap_or(s.len());
            if n > 0 {
                return n;
            }
        }
        super::forked::one_char(s)
    }

    /// The offset of the next byte this scanner reads.
    pub(crate) fn pos(&self) -> usize {
        self.held.pos()
    }

    /// Whether it holds text back (the start of a marker it waits to see the end of).
    pub(crate) fn holds_text(&self) -> bool {
        !self.held.is_empty()
    }

    /// `len` bytes went to another scanner (only while [`FramedScanner::idle`]).
    pub(crate) fn pass_over(&mut self, len: usize) {
        self.held.advance(len);
        self.passed |= len > 0;
    }

    /// Whether `text` has a byte that may begin a marker opening something.
    fn may_open(&self, text: &str) -> bool {
        find_any(&self.openers, text.as_bytes()).is_some()
    }

    fn tool(&self, name: &str) -> Option<Arc<Tool>> {
        self.tools.get_arc(name).cloned()
    }

    /// Plain text up to the first marker that opens a section or a call.
    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        if !self.text_seen {
            let k = ws_end(bytes, i);
            if k == bytes.len() {
                em.text(&text[i..]);
                return text.len();
            }
            self.text_seen = true;
            let rest = &text[k..];
            let call = self.syntax.call_begin;
            if self.prefilled && !self.passed && !rest.starts_with(call) && !is_partial(rest, call)
            {
                em.text(&text[i..k]);
                let mut b = Block::new(base + k, false, std::mem::take(&mut self.spare_raw));
                b.prefilled = true;
                self.state = State::Header(b, String::new());
                return k;
            }
            if self.bare_start && bytes[k] == b'{' {
                em.text(&text[i..k]);
                self.state = State::Header(
                    Block::new(base + k, false, std::mem::take(&mut self.spare_raw)),
                    String::new(),
                );
                return k;
            }
        }
        let mut j = i;
        // The places found in this piece before (text is entered many times in one piece: once
        // after each call), so that no stretch of it is searched twice.
        let (syntax, alt) = (self.syntax, self.alt);
        self.marks.renew(text, base, || {
            MarkerSearch::new([
                Some(syntax.call_begin),
                syntax.section.map(|(begin, _)| begin),
                alt.map(|(alt, _)| alt),
            ])
        });
        let bare: &[u8] = if self.stripped {
            &self.bare_openers
        } else {
            &[]
        };
        while j < bytes.len() {
            // Jump to the next place that may open something (a whole text's prose at once).
            match self.marks.search.next(bytes, &self.openers, bare, j) {
                Some(p) => j = p,
                None => break,
            }
            let rest = &text[j..];
            if let Some((begin, _)) = self.syntax.section
                && rest.starts_with(begin)
            {
                em.text(&text[i..j]);
                let mut b = Block::new(base + j, true, std::mem::take(&mut self.spare_raw));
                b.raw.push_str(begin);
                self.state = State::Section(b);
                return j + begin.len();
            }
            let call = self.syntax.call_begin;
            if rest.starts_with(call) {
                em.text(&text[i..j]);
                let mut b = Block::new(base + j, false, std::mem::take(&mut self.spare_raw));
                b.raw.push_str(call);
                self.state = State::Header(b, String::new());
                return j + call.len();
            }
            if let Some((alt, _)) = self.alt
                && rest.starts_with(alt)
            {
                em.text(&text[i..j]);
                let mut b = Block::new(base + j, false, std::mem::take(&mut self.spare_raw));
                b.raw.push_str(alt);
                b.alt = true;
                self.state = State::Header(b, String::new());
                return j + alt.len();
            }
            if is_partial(rest, call)
                || self
                    .syntax
                    .section
                    .is_some_and(|(begin, _)| is_partial(rest, begin))
                || self.alt.is_some_and(|(alt, _)| is_partial(rest, alt))
            {
                em.text(&text[i..j]);
                return self.held.hold(text, j, base);
            }
            if self.stripped
                && self.bare_openers.contains(&bytes[j])
                && self.at_line_start(&text[..j])
            {
                em.text(&text[i..j]);
                self.state = State::Bare(Box::new(Bare::new(base + j)));
                return j;
            }
            j += 1;
        }
        em.text(&text[i..]);
        text.len()
    }

    /// Between calls of a section.
    fn section(
        &mut self,
        mut b: Block,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let k = ws_end(bytes, i);
        b.raw.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::Section(b);
            return k;
        }
        let rest = &text[k..];
        let call = self.syntax.call_begin;
        if rest.starts_with(call) {
            b.raw.push_str(call);
            self.state = State::Header(b, String::new());
            return k + call.len();
        }
        let end = self.syntax.section.map(|(_, end)| end);
        if let Some(end) = end.filter(|e| rest.starts_with(*e)) {
            b.raw.push_str(end);
            self.close_block(b, em);
            return k + end.len();
        }
        if is_partial(rest, call) || end.is_some_and(|e| is_partial(rest, e)) {
            self.state = State::Section(b);
            return self.held.hold(text, k, base);
        }
        // Something else: the section ends here without its close.
        self.end_section_early(b, em);
        k
    }

    /// A section that ends without its close marker (something else follows, the output ends, or
    /// a reasoning marker comes between its calls): after calls it stands (the whitespace read
    /// since is text); without any, its opening was not a call, and all of its markup (what
    /// the section held back included) is a malformed span.
    fn end_section_early(&mut self, b: Block, em: &mut Emitter) {
        if b.calls > 0 {
            let (_, rest) = b.split_good(em);
            em.text(&rest);
        } else {
            self.malformed(
                b,
                None,
                "malformed-tool-call",
                "a tool-call section with no call in it",
                em,
            );
        }
    }

    /// The markup of a block that ended well (a section close, or a call's close).
    fn close_block(&mut self, b: Block, em: &mut Emitter) {
        if b.calls == 0 && b.in_section {
            self.malformed(
                b,
                None,
                "malformed-tool-call",
                "a tool-call section with no call in it",
                em,
            );
            return;
        }
        em.span(b.start, b.end(), SpanKind::ToolCall);
        // The block's buffer is kept for the next one (a call allocates none for its markup).
        self.spare_raw = b.raw;
    }

    /// The header of a call, up to where its arguments begin.
    fn header(
        &mut self,
        mut b: Block,
        mut head: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut at_start = head.trim().is_empty();
        let mut j = i;
        while j < bytes.len() {
            if !text.is_char_boundary(j) {
                j += 1;
                continue;
            }
            for begin in self.syntax.args_begin {
                let (found, len, keep) = match *begin {
                    ArgsBegin::Marker(m) => {
                        if text[j..].starts_with(m) {
                            (true, m.len(), false)
                        } else if is_partial(&text[j..], m) {
                            head.push_str(&text[i..j]);
                            b.raw.push_str(&text[i..j]);
                            self.state = State::Header(b, head);
                            return self.held.hold(text, j, base);
                        } else {
                            (false, 0, false)
                        }
                    }
                    ArgsBegin::Object => (bytes[j] == b'{', 0, true),
                    ArgsBegin::Array | ArgsBegin::KeyedArray => {
                        (at_start && bytes[j] == b'[', 0, true)
                    }
                };
                if found {
                    head.push_str(&text[i..j]);
                    b.raw.push_str(&text[i..j]);
                    if !keep {
                        b.raw.push_str(&text[j..j + len]);
                    }
                    if *begin == ArgsBegin::Object
                        && let Some(junk) = self.junk_before_array(&head)
                    {
                        self.open_array_after_junk(b, junk, em);
                    } else {
                        self.open_body(b, head, *begin == ArgsBegin::KeyedArray, em);
                    }
                    return j + len;
                }
            }
            if b.prefilled
                && !text[j..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
            {
                // No name (`Let me look.`): the output began with text, read as such from here.
                b.raw.push_str(&text[i..j]);
                self.not_a_header(b, em);
                return j;
            }
            if !is_ws(bytes[j]) && self.headerless() {
                head.push_str(&text[i..j]);
                b.raw.push_str(&text[i..j]);
                self.state = State::Text;
                if self.plain_word(&b) {
                    // A marker that is a plain word (`functools`) followed by something other
                    // than an array: it was text.
                    let (_, rest) = b.split_good(em);
                    em.text(&rest);
                } else {
                    let why = "the tool-call marker is not followed by the JSON of its calls";
                    self.skip_or_fail(b, why.to_string(), em);
                }
                return j;
            }
            at_start &= is_ws(bytes[j]);
            j += 1;
            while j < bytes.len() && !text.is_char_boundary(j) {
                j += 1;
            }
            if head.len() + (j - i) > MAX_HEADER {
                head.push_str(&text[i..j]);
                b.raw.push_str(&text[i..j]);
                if b.prefilled {
                    self.not_a_header(b, em);
                    return j;
                }
                self.malformed(
                    b,
                    None,
                    "malformed-tool-call",
                    "the tool call's header is too long to name a tool",
                    em,
                );
                return j;
            }
        }
        head.push_str(&text[i..]);
        b.raw.push_str(&text[i..]);
        self.state = State::Header(b, head);
        text.len()
    }

    /// Whether a call ends where its JSON ends, with nothing after it that may still be the
    /// call's (no suffix, no close marker, no separator to another call): Mistral's
    /// `[TOOL_CALLS]f[ARGS]{…}`.
    fn ends_with_json(&self, b: &Block) -> bool {
        self.syntax.args_suffix.is_none()
            && self.end_of(b).is_none()
            && self.syntax.separator.is_none()
    }

    /// Whether the marker that opened `b` is a plain word (`functools`) rather than a special
    /// token.
    fn plain_word(&self, b: &Block) -> bool {
        self.begin_of(b)
            .bytes()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
    }

    /// Whether calls have no header: the call's JSON follows its marker.
    fn headerless(&self) -> bool {
        self.syntax
            .args_begin
            .iter()
            .all(|b| !matches!(b, ArgsBegin::Marker(_)))
            && !self.syntax.args_begin.is_empty()
            && (self.syntax.header)("").is_none()
    }

    /// Where a format's calls may be an array of envelopes, a header that is stray text and then
    /// the array's `[` (`[TOOL_CALLS]  junk [{…}]`, read up to the first item's `{`): the stray
    /// text, trimmed.
    fn junk_before_array(&self, head: &str) -> Option<String> {
        if !self.syntax.args_begin.contains(&ArgsBegin::Array) {
            return None;
        }
        let junk = head.trim_end().strip_suffix('[')?.trim();
        (!junk.is_empty()).then(|| junk.chars().take(80).collect())
    }

    /// The array of envelopes after stray text: its `[` was read into the header. The calls are
    /// read; the stray text stays in the call's markup, and an error says it was ignored.
    fn open_array_after_junk(&mut self, b: Block, junk: String, em: &mut Emitter) {
        let mut env = Envelope::new(self.tools.clone(), false, true);
        let mut lexer = Lexer::new();
        // The `[` is whole JSON so far: the lexer wants more.
        let _ = lexer.feed("[", &mut env);
        em.error(ErrorPart::reason(
            "ignored-text",
            format!(
                "text between {} and the calls' JSON is not part of a call: {junk}",
                self.begin_of(&b)
            ),
        ));
        self.state = State::Body(
            b,
            Box::new(Open {
                lexer,
                body: Body::Envelopes {
                    env,
                    id: None,
                    name: None,
                    failed: None,
                },
            }),
        );
    }

    /// The header is read: start the body (or report a header that names no tool).
    fn open_body(&mut self, b: Block, head: String, keyed: bool, em: &mut Emitter) {
        if self.text_header.is_some_and(|t| head.trim() == t) {
            let (at, rest) = b.split_good(em);
            em.span(at, at + rest.len(), SpanKind::Markup);
            self.spare_raw = rest;
            self.state = State::Text;
            return;
        }
        if b.prefilled
            && !(self.syntax.header)(&head)
                .is_some_and(|h| valid_name(&h.name) && self.tool(&h.name).is_some())
        {
            self.not_a_header(b, em);
            return;
        }
        // A header read as naming no one (an empty name) leaves the naming to the JSON, like an
        // empty header (Inkling's optional name before an envelope).
        let envelopes = head.trim().is_empty()
            || (self.syntax.header)(&head).is_some_and(|h| h.name.is_empty());
        let body = if envelopes {
            let env = if keyed {
                Envelope::keyed(self.tools.clone())
            } else {
                Envelope::new(self.tools.clone(), false, true)
            };
            Body::Envelopes {
                env,
                id: None,
                name: None,
                failed: None,
            }
        } else {
            let Some(h) = (self.syntax.header)(&head).filter(|h| valid_name(&h.name)) else {
                let why = format!(
                    "\"{}\" does not name a tool",
                    head.trim().chars().take(80).collect::<String>()
                );
                self.state = State::Text;
                self.skip_or_fail(b, why, em);
                return;
            };
            let tool = self.tool(&h.name);
            let known = tool.is_some();
            let id = em.begin_call_as(&h.name, h.id.as_deref());
            Body::Args {
                name: h.name,
                id,
                writer: ArgsWriter::new(tool),
                known,
            }
        };
        self.state = State::Body(
            b,
            Box::new(Open {
                lexer: Lexer::new(),
                body,
            }),
        );
    }

    /// A call whose JSON broke (or never ended) after running past a close marker: a stray quote
    /// made a string of the close and what followed it. The call is malformed up to its first
    /// close, and the text after that close is given back to be read again (the offset is
    /// rewound to it); `Err` gives the block back when no close was read.
    fn end_at_close(
        &mut self,
        mut b: Block,
        open: &mut Open,
        why: &str,
        em: &mut Emitter,
    ) -> Result<String, Block> {
        let Some(end) = self.end_of(&b) else {
            return Err(b);
        };
        let Some(p) = b.raw[b.good..].find(end) else {
            return Err(b);
        };
        let cut = b.good + p + end.len();
        self.abort(open, em);
        let tail = b.raw.split_off(cut);
        // What is read again starts where the close left the line, whatever chunk it came in.
        self.line_start = self.at_line_start(&b.raw);
        self.held.rewind(b.start + cut);
        self.malformed(b, None, "malformed-tool-call", why, em);
        Ok(tail)
    }

    /// Another engine's block follows (see the form switch): a header the prompt opened, still
    /// being read, was none.
    pub(crate) fn settle(&mut self, em: &mut Emitter) {
        if matches!(&self.state, State::Header(b, _) if b.prefilled)
            && let State::Header(mut b, _) = std::mem::replace(&mut self.state, State::Text)
        {
            b.raw.push_str(&self.held.take());
            self.not_a_header(b, em);
        }
    }

    /// The start of an output read as a header the prompt opened (see
    /// [`FramedScanner::prefilled_opener`]) that is none: text.
    fn not_a_header(&mut self, b: Block, em: &mut Emitter) {
        self.state = State::Text;
        let (_, rest) = b.split_good(em);
        em.text(&rest);
        self.spare_raw = rest;
    }

    /// What was read past a broken call's close (`tail`, see [`FramedScanner::end_at_close`]) is
    /// read again, then the rest of the chunk; gives back `end`, where the chunk's scan stops.
    fn read_again(&mut self, mut tail: String, rest: &str, em: &mut Emitter, end: usize) -> usize {
        tail.push_str(rest);
        self.feed(&tail, em);
        end
    }

    /// A broken call: with a close marker to look for, skip to it; else it ends here.
    fn skip_or_fail(&mut self, b: Block, why: String, em: &mut Emitter) {
        if self.end_of(&b).is_some() {
            self.state = State::Skip(b, why);
        } else {
            self.malformed(b, None, "malformed-tool-call", &why, em);
        }
    }

    fn body(
        &mut self,
        mut b: Block,
        mut open: Box<Open>,
        text: &str,
        i: usize,
        em: &mut Emitter,
    ) -> usize {
        let rest = &text[i..];
        let step = match &mut open.body {
            Body::Args { writer, .. } => {
                writer.set_whole(em.is_whole());
                open.lexer.feed(rest, writer)
            }
            Body::Envelopes { env, .. } => {
                env.set_whole(em.is_whole());
                open.lexer.feed(rest, env)
            }
        };
        let (consumed, done, error) = match step {
            Step::NeedMore => (rest.len(), false, None),
            Step::Done { consumed } => (consumed, true, None),
            Step::Error { consumed, error } => (consumed, false, Some(error.message)),
        };
        b.raw.push_str(&rest[..consumed]);
        sync(&mut open, em);
        if let Some(why) = error {
            let why = format!("the tool call's arguments are not valid JSON ({why})");
            return match self.end_at_close(b, &mut open, &why, em) {
                Ok(tail) => self.read_again(tail, &text[i + consumed..], em, text.len()),
                Err(b) => {
                    self.abort(&mut open, em);
                    self.skip_or_fail(b, why, em);
                    i + consumed
                }
            };
        }
        if done && open.lexer.repaired_a_quote() {
            // A quote taken for text, and the call's close inside the JSON: the quote was the
            // string's end, and the close the call's.
            let why = "the tool call's arguments are not valid JSON (a string ran past the \
                       call's close: a quote without the `:` or `,` after it)";
            match self.end_at_close(b, &mut open, why, em) {
                Ok(tail) => return self.read_again(tail, &text[i + consumed..], em, text.len()),
                Err(back) => b = back,
            }
        }
        if done && self.ends_with_json(&b) {
            // Nothing can follow the JSON that belongs to the call: it ends here, now.
            self.complete(b, open, em);
        } else if done {
            let after = After {
                suffixed: false,
                trailing: String::new(),
            };
            self.state = State::After(b, open, after);
        } else {
            self.state = State::Body(b, open);
        }
        i + consumed
    }

    /// After the JSON: the suffix, then the call's close.
    #[allow(clippy::too_many_arguments)]
    fn after(
        &mut self,
        mut b: Block,
        open: Box<Open>,
        mut after: After,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let k = ws_end(bytes, i);
        after.trailing.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::After(b, open, after);
            return k;
        }
        let rest = &text[k..];
        // A marker of the call: the whitespace before it is the call's too.
        let take = |b: &mut Block, after: &mut After, marker: &str| {
            b.raw.push_str(&std::mem::take(&mut after.trailing));
            b.raw.push_str(marker);
        };
        if let (Some(suffix), false) = (self.syntax.args_suffix, after.suffixed) {
            if rest.starts_with(suffix) {
                take(&mut b, &mut after, suffix);
                after.suffixed = true;
                self.state = State::After(b, open, after);
                return k + suffix.len();
            }
            if is_partial(rest, suffix) {
                self.state = State::After(b, open, after);
                return self.held.hold(text, k, base);
            }
        }
        if let Some(end) = self.end_of(&b) {
            if rest.starts_with(end) {
                take(&mut b, &mut after, end);
                self.complete(b, open, em);
                return k + end.len();
            }
            if is_partial(rest, end) {
                self.state = State::After(b, open, after);
                return self.held.hold(text, k, base);
            }
        } else if let Some(sep) = self.syntax.separator {
            if rest.starts_with(sep) {
                // Another call follows, its JSON without an opening marker.
                take(&mut b, &mut after, sep);
                if let Some(b) = self.finish_call(b, open, em) {
                    self.state = State::Header(b, String::new());
                }
                return k + sep.len();
            }
            if is_partial(rest, sep) {
                self.state = State::After(b, open, after);
                return self.held.hold(text, k, base);
            }
        }
        // No close where it should be: the call stands as read (a missing close is forgiven),
        // what followed it is read again from here, and the whitespace goes back to the text.
        self.complete_before(b, open, &after.trailing, em);
        k
    }

    /// Completes a call whose close is missing; `trailing` (whitespace read after it) is text,
    /// or part of the section that goes on.
    fn complete_before(&mut self, b: Block, open: Box<Open>, trailing: &str, em: &mut Emitter) {
        self.complete(b, open, em);
        match &mut self.state {
            State::Section(s) => s.raw.push_str(trailing),
            _ => em.text(trailing),
        }
    }

    /// The call's close was read (or is missing and forgiven): the call ends, and its block
    /// goes on in its section or ends.
    fn complete(&mut self, b: Block, open: Box<Open>, em: &mut Emitter) {
        if let Some(b) = self.finish_call(b, open, em) {
            if b.in_section {
                self.state = State::Section(b);
            } else {
                em.span(b.start, b.end(), SpanKind::ToolCall);
                self.spare_raw = b.raw;
            }
        }
    }

    /// Ends the call's parts. On success the block is returned with the call counted among its
    /// good markup; on failure the call's markup became text (the block's earlier calls stay).
    fn finish_call(
        &mut self,
        mut b: Block,
        mut open: Box<Open>,
        em: &mut Emitter,
    ) -> Option<Block> {
        self.state = State::Text;
        match open.body {
            Body::Args {
                name,
                id,
                mut writer,
                known,
            } => {
                if let Some(d) = writer.take_delta() {
                    em.input_delta(&id, d);
                }
                match writer.finish() {
                    Ok(args) => {
                        em.end_call(id.clone(), &name, args);
                        if !known {
                            em.unknown_tool(id, &name);
                        }
                    }
                    Err(e) => {
                        em.abort_call(&id);
                        let why = format!("tool call \"{name}\": {e}");
                        self.malformed(b, Some((id, name)), "malformed-tool-call", &why, em);
                        return None;
                    }
                }
            }
            Body::Envelopes { .. } => {
                sync(&mut open, em);
                let Body::Envelopes {
                    id, name, failed, ..
                } = open.body
                else {
                    unreachable!("matched above");
                };
                if let Some(why) = failed
                    .or_else(|| name.map(|n| format!("the envelope of \"{n}\" did not close")))
                {
                    if let Some(id) = &id {
                        em.abort_call(id);
                    }
                    self.malformed(b, None, "malformed-tool-call", &why, em);
                    return None;
                }
            }
        }
        b.calls += 1;
        b.good = b.raw.len();
        Some(b)
    }

    /// Aborts a call whose body broke.
    fn abort(&mut self, open: &mut Open, em: &mut Emitter) {
        match &open.body {
            Body::Args { id, .. } => em.abort_call(id),
            Body::Envelopes { id: Some(id), .. } => em.abort_call(id),
            Body::Envelopes { id: None, .. } => {}
        }
    }

    fn skip(
        &mut self,
        mut b: Block,
        why: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let end = self.end_of(&b).expect("skipping needs a close marker");
        let rest = &text[i..];
        match rest.find(end) {
            Some(p) => {
                b.raw.push_str(&rest[..p + end.len()]);
                self.malformed(b, None, "malformed-tool-call", &why, em);
                i + p + end.len()
            }
            None => {
                let keep = partial_len(rest, end);
                b.raw.push_str(&rest[..rest.len() - keep]);
                self.state = State::Skip(b, why);
                if keep > 0 {
                    self.held.hold(text, text.len() - keep, base)
                } else {
                    text.len()
                }
            }
        }
    }

    /// Markup that could not be read: reported, and kept as text.
    fn malformed(
        &mut self,
        b: Block,
        call: Option<(PartId, String)>,
        reason: &str,
        why: &str,
        em: &mut Emitter,
    ) {
        self.state = State::Text;
        let (id, name) = call.unzip();
        em.error(ErrorPart {
            tool_call_id: id,
            tool_name: name,
            ..ErrorPart::reason(reason, why)
        });
        // The calls the section completed before stay calls.
        let (start, rest) = b.split_good(em);
        em.text(&rest);
        em.span(start, start + rest.len(), SpanKind::Malformed);
    }

    /// Whether `before` (the text read before a byte) leaves that byte at the start of a line.
    fn at_line_start(&self, before: &str) -> bool {
        crate::protocol::text::fences::ends_at_line_start(before, self.line_start)
    }

    fn note_line_start(&mut self, text: &str) {
        self.line_start = self.at_line_start(text);
    }

    /// A candidate for a call whose marker was stripped.
    fn bare(&mut self, mut bare: Box<Bare>, text: &str, i: usize, em: &mut Emitter) -> usize {
        match bare.read(&text[i..]) {
            None => {
                self.state = State::Bare(bare);
                text.len()
            }
            Some(k) => {
                // Not a call: text, and what follows is read as usual.
                em.text(&bare.raw);
                i + k
            }
        }
    }

    /// At the end of the output, a candidate that closed (only whitespace after it) and names
    /// an offered tool is read as the call whose marker was stripped, and reported.
    fn finish_bare(&mut self, bare: Bare, held: &str, em: &mut Emitter) {
        let Bare {
            start,
            mut raw,
            closed,
            ..
        } = bare;
        raw.push_str(held);
        if !closed || !names_offered_tool(raw.trim_end(), &self.tools) {
            em.text(&raw);
            return;
        }
        self.held.rewind(start);
        let buf = std::mem::take(&mut self.spare_raw);
        self.state = State::Header(Block::new(start, false, buf), String::new());
        let calls = em.call_count();
        self.feed(&raw, em);
        self.finish(em);
        if em.call_count() > calls {
            em.error(ErrorPart::reason(
                "missing-call-opener",
                format!(
                    "read as a call although its opening marker {} is missing (a server that \
                     skips special tokens strips it)",
                    self.syntax.call_begin
                ),
            ));
        }
    }
}

impl super::forked::Handover for FramedScanner {
    fn idle(&self) -> bool {
        FramedScanner::idle(self)
    }

    fn quiet_run(&self, s: &str) -> usize {
        FramedScanner::quiet_run(self, s)
    }

    fn pos(&self) -> usize {
        FramedScanner::pos(self)
    }

    fn pass_over(&mut self, len: usize) {
        FramedScanner::pass_over(self, len);
    }
}

impl Steps for FramedScanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.text(text, i, base, em),
            State::Section(b) => self.section(b, text, i, base, em),
            State::Header(b, head) => self.header(b, head, text, i, base, em),
            State::Body(b, open) => self.body(b, open, text, i, em),
            State::After(b, open, after) => self.after(b, open, after, text, i, base, em),
            State::Skip(b, why) => self.skip(b, why, text, i, base, em),
            State::Bare(bare) => self.bare(bare, text, i, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }

    fn read(&mut self, text: &str, _base: usize) {
        self.note_line_start(text);
    }
}

impl Scanner for FramedScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        if self.quiet(piece) && !self.may_open(piece) {
            return self.feed_quiet(piece, em);
        }
        // Places found are kept only within one piece's reading (see `marks`).
        self.marks.forget();
        drive(self, piece, em);
        self.marks.forget();
    }

    fn quiet_stops(&self) -> Option<Vec<u8>> {
        Some(self.openers.clone())
    }

    #[inline]
    fn quiet(&self, _piece: &str) -> bool {
        matches!(self.state, State::Text) && self.held.is_empty() && self.text_seen
    }

    fn pass_quiet(&mut self, piece: &str) {
        self.held.advance(piece.len());
        if self.stripped {
            self.note_line_start(piece);
        }
    }

    fn passes_by_run(&self) -> bool {
        true
    }

    fn pass_quiet_run(&mut self, run: &DirectRun) {
        self.held.advance(run.len);
        if self.stripped {
            self.line_start = run.ends_at_line_start(self.line_start);
        }
    }

    fn finish(&mut self, em: &mut Emitter) {
        let held = self.held.take();
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => em.text(&held),
            State::Section(mut b) => {
                b.raw.push_str(&held);
                if b.calls > 0 {
                    // The section's close is missing at the end: the calls stand.
                    let (_, rest) = b.split_good(em);
                    em.text(&rest);
                } else {
                    self.malformed(
                        b,
                        None,
                        "unfinished-tool-call",
                        "the output ended inside a tool-call section",
                        em,
                    );
                }
            }
            State::Header(mut b, _) if self.headerless() && self.plain_word(&b) => {
                // `functools` and nothing after it: a word, not a call.
                b.raw.push_str(&held);
                let (_, rest) = b.split_good(em);
                em.text(&rest);
            }
            State::Header(mut b, _) if b.prefilled => {
                b.raw.push_str(&held);
                self.not_a_header(b, em);
            }
            State::Header(mut b, _) => {
                b.raw.push_str(&held);
                self.malformed(
                    b,
                    None,
                    "unfinished-tool-call",
                    "the output ended before the tool call's arguments",
                    em,
                );
            }
            State::Body(mut b, mut open) => {
                b.raw.push_str(&held);
                let finished = match &mut open.body {
                    Body::Args { writer, .. } => open.lexer.finish(writer),
                    Body::Envelopes { env, .. } => open.lexer.finish(env),
                };
                match finished {
                    // Complete JSON without its close: the call is recovered.
                    Ok(()) if open.lexer.is_done() => self.complete(b, open, em),
                    _ => {
                        sync(&mut open, em);
                        let why = "the tool call's arguments are not valid JSON (a string ran \
                                   past the call's close)";
                        let b = match self.end_at_close(b, &mut open, why, em) {
                            Ok(tail) => {
                                self.feed(&tail, em);
                                self.finish(em);
                                return;
                            }
                            Err(b) => b,
                        };
                        self.abort(&mut open, em);
                        self.malformed(
                            b,
                            None,
                            "unfinished-tool-call",
                            "the output ended inside a tool call's arguments",
                            em,
                        );
                    }
                }
            }
            State::After(b, open, mut after) => {
                after.trailing.push_str(&held);
                self.complete_before(b, open, &after.trailing, em);
            }
            State::Skip(mut b, why) => {
                b.raw.push_str(&held);
                self.malformed(b, None, "malformed-tool-call", &why, em);
            }
            State::Bare(bare) => {
                self.finish_bare(*bare, &held, em);
                return;
            }
        }
        // A section still open after a recovered call ends here.
        if let State::Section(b) = std::mem::replace(&mut self.state, State::Text) {
            let (_, rest) = b.split_good(em);
            em.text(&rest);
        }
    }

    /// Between the calls of a section, or after a call's JSON (waiting only for its close), a
    /// reasoning marker cannot be a call's own text: it is the model moving on, and the section
    /// ends there (see [`Scanner::cut`]).
    fn in_call(&self) -> bool {
        match &self.state {
            State::Text | State::Bare(_) | State::Section(_) | State::After(..) => false,
            State::Header(b, _) => !b.prefilled,
            _ => true,
        }
    }

    /// After a call's JSON, with no suffix still to come and no close marker required (a
    /// missing one is forgiven), only a separator to another call may follow: past the call.
    fn in_args(&self) -> bool {
        match &self.state {
            State::Text | State::Bare(_) => false,
            // The start of the output, read as a header the prompt may have opened: text until
            // it names a tool.
            State::Header(b, _) if b.prefilled => false,
            State::After(b, _, after) => {
                (self.syntax.args_suffix.is_some() && !after.suffixed) || self.end_of(b).is_some()
            }
            _ => true,
        }
    }

    fn cut(&mut self, em: &mut Emitter) {
        match std::mem::replace(&mut self.state, State::Text) {
            // A reasoning marker follows: the candidate is not alone at the end; text.
            State::Bare(bare) => em.text(&bare.raw),
            // A reasoning marker after a call's JSON: the call stands as read (its close is
            // missing, forgiven), and its section ends with it.
            State::After(b, open, mut after) => {
                after.trailing.push_str(&self.held.take());
                self.complete_before(b, open, &after.trailing, em);
                if let State::Section(b) = std::mem::replace(&mut self.state, State::Text) {
                    self.end_section_early(b, em);
                }
            }
            // The start of the output, not yet known to name a tool: text.
            State::Header(mut b, _) if b.prefilled => {
                b.raw.push_str(&self.held.take());
                self.not_a_header(b, em);
            }
            // Between a section's calls: the section ends without its close.
            State::Section(mut b) => {
                b.raw.push_str(&self.held.take());
                self.end_section_early(b, em);
            }
            other => self.state = other,
        }
        if matches!(self.state, State::Text) {
            em.text(&self.held.take());
        }
    }
}

/// Whether `json` is a call envelope (or an array of them) that names an offered tool: by its
/// `name` (or `tool_name`), or as the only key of an object (`{"get_weather": {…}}`).
fn names_offered_tool(json: &str, tools: &ToolSet) -> bool {
    fn names(v: &serde_json::Value, tools: &ToolSet) -> bool {
        let Some(obj) = v.as_object() else {
            return false;
        };
        let named = ["name", "tool_name"]
            .iter()
            .filter_map(|k| obj.get(*k).and_then(|n| n.as_str()))
            .any(|n| tools.get(n).is_some());
        named || (obj.len() == 1 && obj.keys().all(|k| tools.get(k).is_some()))
    }
    match crate::json::parse_relaxed(json) {
        Ok(serde_json::Value::Array(items)) => {
            !items.is_empty() && items.iter().all(|v| names(v, tools))
        }
        Ok(v) => names(&v, tools),
        Err(_) => false,
    }
}

/// Turns what an envelope body found into parts; the argument deltas of the call in progress.
fn sync(open: &mut Open, em: &mut Emitter) {
    match &mut open.body {
        Body::Args { id, writer, .. } => {
            if let Some(d) = writer.take_delta() {
                em.input_delta(id, d);
            }
        }
        Body::Envelopes {
            env,
            id,
            name,
            failed,
        } => {
            for found in env.take_found() {
                match found {
                    Found::Named { name: n } => {
                        *id = Some(em.begin_call(&n));
                        *name = Some(n);
                    }
                    Found::Call {
                        name: n,
                        known,
                        delta,
                        result,
                    } => {
                        let call_id = id.take().unwrap_or_else(|| em.begin_call(&n));
                        *name = None;
                        match result {
                            Ok(args) => {
                                if let Some(d) = delta {
                                    em.input_delta(&call_id, d);
                                }
                                em.end_call(call_id.clone(), &n, args);
                                if !known {
                                    em.unknown_tool(call_id, &n);
                                }
                            }
                            Err(e) => {
                                em.abort_call(&call_id);
                                *failed = Some(format!("tool call \"{n}\": {e}"));
                            }
                        }
                    }
                }
            }
            if let Some(call_id) = id
                && let Some(d) = env.take_delta()
            {
                em.input_delta(call_id, d);
            }
            if let (None, Some(why)) = (&failed, env.refusal()) {
                *failed = Some(why.to_string());
            }
        }
    }
}

/// Whether `rest` (shorter than `marker`) is a beginning of it: the marker may complete in the
/// next chunk.
fn is_partial(rest: &str, marker: &str) -> bool {
    rest.len() < marker.len() && marker.starts_with(rest)
}

/// How many bytes at the end of `text` may begin `marker`.
fn partial_len(text: &str, marker: &str) -> usize {
    let max = (marker.len() - 1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| {
            text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..])
        })
        .unwrap_or(0)
}

/// A name a function can have: letters, digits, `_`, `-`, `.`, `:` (template leftovers such as
/// `{{ tc.name }}` are not names).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 256
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::tests_support::scan_every_split;

    #[test]
    fn the_marker_search_finds_whole_markers_bare_openers_and_a_cut_marker_at_the_end() {
        let pad = "x".repeat(SHORT + 10);
        let text = format!("fun fact: functools[ and {{x}} then [<|go|> {pad} end functo");
        let text = text.as_bytes();
        let tail = text.len() - 6;
        let markers = [Some("functools["), Some("<|go|>"), None];
        // Far from the end, markers whole (no stop at the other f's) and the bare openers.
        let mut search = MarkerSearch::new(markers);
        let mut found = Vec::new();
        let mut at = 0;
        while let Some(p) = search.next(text, b"f<{[", b"{[", at) {
            if p >= text.len() - SHORT {
                break;
            }
            found.push(p);
            at = p + 1;
        }
        assert_eq!(found, [10, 19, 25, 34, 35]);
        // Near the end, the markers' first bytes: a wider net, the cut marker in it.
        let mut search = MarkerSearch::new(markers);
        let near_end = text.len() - 20;
        let hits: Vec<usize> =
            std::iter::successors(search.next(text, b"f<", b"", near_end), |&p| {
                search.next(text, b"f<", b"", p + 1)
            })
            .collect();
        assert_eq!(hits, [tail]);
        // Without bare openers, far from the end: only the markers.
        let mut search = MarkerSearch::new(markers);
        assert_eq!(search.next(text, b"f<", b"", 11), Some(35));
    }

    #[test]
    fn the_opener_search_finds_every_opener_in_order_whatever_its_group() {
        let text = b"ab<cd{ef[gh]A|z<";
        for openers in [&b"<"[..], b"<{", b"<{[", b"<{[A", b"<{[A|z"] {
            let mut search = OpenerSearch::default();
            let mut found = Vec::new();
            let mut at = 0;
            while let Some(p) = search.next(openers, text, at) {
                found.push(p);
                at = p + 1;
            }
            let expected: Vec<usize> = (0..text.len())
                .filter(|&i| openers.contains(&text[i]))
                .collect();
            assert_eq!(found, expected, "{:?}", std::str::from_utf8(openers));
        }
    }
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;

    /// `<<NAME|{…}>>`: a marker, the name as the header, a marker, the JSON, a close.
    pub(crate) static SYNTAX: FramedSyntax = FramedSyntax {
        section: None,
        call_begin: "<<",
        args_begin: &[ArgsBegin::Marker("|")],
        header: |h| {
            Some(Header {
                name: h.trim().to_string(),
                id: None,
            })
        },
        args_suffix: None,
        call_end: Some(">>"),
        separator: None,
    };

    fn make(tools: ToolSet) -> Box<dyn Scanner> {
        Box::new(FramedScanner::new(&SYNTAX, tools))
    }

    standard_cases!(|tools| FramedScanner::new(&SYNTAX, tools);
        r#"<<get_weather|{"city": "Paris"}>>"#,
        r#"<<get_weather|{"city": "Pa"#,
        r#"<<get_weather|{"city": }>>"#);

    /// A key or value whose quote is missing its colon or comma is read on as a string with a
    /// stray quote in it; the string must not run past the call's close into the next call.
    #[test]
    fn a_broken_call_ends_at_its_close_and_the_next_call_is_read() {
        for broken in [
            r#"<<get_weather|{"city" 1}>>"#,
            r#"<<get_weather|{"city": "Rome" "days": 2}>>"#,
            r#"<<get_weather|{"city": "Rome}>>"#,
        ] {
            let text = format!(r#"{broken} after <<get_weather|{{"city": "Paris"}}>> end"#);
            for cut in [false, true] {
                scan_every_split(&make, &text, cut)
                    .calls(&[(
                        "get_weather".to_string(),
                        serde_json::json!({"city": "Paris"}),
                    )])
                    .errors(&["malformed-tool-call"])
                    .text(format!("{broken} after  end"));
            }
        }
    }
}
