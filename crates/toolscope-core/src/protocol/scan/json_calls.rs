//! The scanner for protocols whose calls are JSON envelopes: hermes (`<tool_call>…</tool_call>`),
//! gemma (```` ```tool_call ```` fences) and the tool-choice answer (a bare `{name, arguments}`).
//!
//! Text is passed through as it arrives, except a tail that may be the beginning of a delimiter,
//! which is held until it is decided. A call's body goes through the incremental lexer into the
//! envelope, and the call ends when its JSON value ends: the close delimiter is consumed when it
//! follows, and forgiven when it does not (a model that forgot `</tool_call>`, or started the
//! next call first). Besides tagged calls, a JSON envelope alone at the start of a line or in a
//! ```` ```json ```` fence is read *speculatively*: it becomes a call only once it names a known
//! tool, and is given back as text otherwise.
//!
//! A body that is not JSON is malformed: it stays in the output as text, with an `error` part.
//! Where it ends is the first close delimiter after the breaking byte, or a close delimiter
//! inside the body (a value that held `</tool_call>` and then broke), whose remainder is then
//! read again; a byte is read again at most once, so the cost stays linear.

use crate::json::lexer::{find1, find2, find3};
use crate::json::{JsonSink, Lexer, Step};
use crate::part::{ErrorPart, PartId};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::envelope::{Envelope, Found};
use crate::protocol::text::holdback::Holdback;
use crate::protocol::text::run::{DirectRun, line_blank_change};
use crate::protocol::text::scanner::{Scanner, is_ws, ws_end};
use crate::tool::ToolSet;

/// What the scanner looks for.
#[derive(Clone, Debug)]
pub(crate) struct JsonScannerConfig {
    /// The start delimiter of a tagged call (`None`: no tagged calls).
    pub call_start: Option<String>,
    /// The close delimiter of a tagged call.
    pub call_end: String,
    /// Read a JSON envelope at the start of a line, and in ```` ```json ```` fences.
    pub loose_json: bool,
    /// Loose JSON is a call as soon as it begins (the tool-choice answer), instead of only once
    /// it names a known tool.
    pub commit_loose: bool,
    /// A second start delimiter of a tagged call, whose close is optional (xLAM's
    /// `[TOOL_CALLS]`: the call ends where its JSON ends).
    pub alt_start: Option<String>,
    /// A `[` that begins a line opens a bare array of calls, read like a bare envelope (on
    /// speculation, except at the very start of the output, where it is the format's own).
    pub bare_arrays: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Tagged,
    Fenced,
    Bare,
}

struct Call {
    /// Absolute offset where the markup starts.
    start: usize,
    /// The markup read so far: delimiter and body.
    raw: String,
    /// Where the JSON body starts in `raw`.
    body_start: usize,
    lexer: Lexer,
    env: Envelope,
    mode: Mode,
    speculative: bool,
    id: Option<PartId>,
    name: Option<String>,
    /// Whitespace after the JSON, before a possible close delimiter.
    trailing: String,
    /// A bare envelope that began after text on its line: a call only if the close delimiter
    /// follows it (the model left out the opening one); until then nothing of it is emitted.
    needs_close: bool,
    /// A call of the markup whose arguments could not be used.
    failed: Option<String>,
}

enum State {
    Text,
    Body(Box<Call>),
    After(Box<Call>),
    Skip(Box<Call>),
}

enum Flow {
    At(usize),
    /// Read this text (which continues where the current text stops) from this offset.
    Refeed(String, usize),
}

enum Match {
    Full(usize),
    Partial,
    No,
}

/// How far past a call's JSON the scanner looks for its close (stray brackets, a separator).
const MAX_AFTER: usize = 64;

/// A close tag of any name (`</think>`), or one cut off (`</tool_call` then something else),
/// at `text[k]`.
fn loose_close_tag(text: &str, k: usize) -> Match {
    let rest = &text.as_bytes()[k..];
    if rest.len() < 2 {
        return if rest == b"<" {
            Match::Partial
        } else {
            Match::No
        };
    }
    if &rest[..2] != b"</" {
        return Match::No;
    }
    let mut m = 2;
    while m < rest.len() && is_ws(rest[m]) && m < 10 {
        m += 1;
    }
    let name_start = m;
    while m < rest.len()
        && (rest[m].is_ascii_alphanumeric() || matches!(rest[m], b'_' | b'-' | b':' | b'.'))
    {
        m += 1;
        if m - name_start > MAX_AFTER {
            return Match::No;
        }
    }
    if m == rest.len() {
        return Match::Partial;
    }
    if m == name_start {
        return Match::No;
    }
    let name_end = m;
    while m < rest.len() && is_ws(rest[m]) && m - name_end < 8 {
        m += 1;
    }
    match rest.get(m) {
        None => Match::Partial,
        Some(b'>') => Match::Full(m + 1),
        // Cut: the name without its `>`.
        Some(_) => Match::Full(name_end),
    }
}

/// The close delimiter as matched: its core, and whether whitespace may precede a final `>`.
struct Delim {
    core: String,
    flexible_gt: bool,
    /// The configured delimiter ends in whitespace, so the core must be followed by some.
    needs_ws_after: bool,
}

impl Delim {
    fn close(s: &str) -> Self {
        let trimmed = s.trim();
        match trimmed.strip_suffix('>') {
            Some(core) if trimmed.starts_with('<') => Delim {
                core: core.to_string(),
                flexible_gt: true,
                needs_ws_after: false,
            },
            _ => Delim {
                core: trimmed.to_string(),
                flexible_gt: false,
                needs_ws_after: false,
            },
        }
    }

    fn start(s: &str) -> Self {
        let core = s.trim_end();
        Delim {
            core: core.to_string(),
            flexible_gt: false,
            needs_ws_after: core.len() < s.len(),
        }
    }

    fn first_byte(&self) -> u8 {
        self.core.as_bytes().first().copied().unwrap_or(0)
    }

    fn matches(&self, text: &str, j: usize) -> Match {
        let rest = &text.as_bytes()[j..];
        let core = self.core.as_bytes();
        // A close tag may have whitespace after its `</` (`</ tool_call>`).
        if self.flexible_gt && core.starts_with(b"</") && rest.starts_with(b"</") {
            let ws = rest[2..].iter().take(9).take_while(|b| is_ws(**b)).count();
            if ws > 8 {
                return Match::No;
            }
            if ws > 0 {
                if 2 + ws == rest.len() {
                    return Match::Partial;
                }
                // Compare as if the whitespace were not there.
                return match self.matches_spaced(&rest[2 + ws..]) {
                    Match::Full(n) => Match::Full(n + 2 + ws),
                    other => other,
                };
            }
        }
        let n = core.len().min(rest.len());
        if core.is_empty() || rest[..n] != core[..n] {
            return Match::No;
        }
        if rest.len() < core.len() {
            return Match::Partial;
        }
        let mut k = core.len();
        if self.flexible_gt {
            while k < rest.len() && is_ws(rest[k]) {
                k += 1;
                if k - core.len() > 8 {
                    return Match::No;
                }
            }
            if k == rest.len() {
                return Match::Partial;
            }
            return if rest[k] == b'>' {
                Match::Full(k + 1)
            } else {
                Match::No
            };
        }
        if self.needs_ws_after {
            if k == rest.len() {
                return Match::Partial;
            }
            if !is_ws(rest[k]) {
                return Match::No;
            }
        }
        Match::Full(k)
    }

    /// The rest of a tag-like core after `</` and whitespace: the name, whitespace, `>`.
    fn matches_spaced(&self, rest: &[u8]) -> Match {
        let word = &self.core.as_bytes()[2..];
        let n = word.len().min(rest.len());
        if word.is_empty() || rest[..n] != word[..n] {
            return Match::No;
        }
        if rest.len() < word.len() {
            return Match::Partial;
        }
        let mut k = word.len();
        while k < rest.len() && is_ws(rest[k]) {
            k += 1;
            if k - word.len() > 8 {
                return Match::No;
            }
        }
        match rest.get(k) {
            None => Match::Partial,
            Some(b'>') => Match::Full(k + 1),
            Some(_) => Match::No,
        }
    }

    /// Whether the delimiter is an XML-like tag (`</tool_call>`), not a fence.
    fn is_tag(&self) -> bool {
        self.flexible_gt
    }

    /// The first match in `text` at or after `from`: (position, length).
    fn find(&self, text: &str, from: usize) -> Option<(usize, usize)> {
        let bytes = text.as_bytes();
        let first = self.first_byte();
        let mut j = from;
        while let Some(p) = find1(first, &bytes[j.min(bytes.len())..]) {
            let at = j + p;
            if let Match::Full(len) = self.matches(text, at) {
                return Some((at, len));
            }
            j = at + 1;
        }
        None
    }
}

/// A ```` ``` ```` fence with an optional `json` info string, a newline, whitespace and a `{`
/// (one call) or `[` (an array of calls). `Full(n)` gives the length up to (not including) it.
fn match_json_fence(text: &str, j: usize) -> Match {
    const MAX: usize = 64;
    let rest = &text.as_bytes()[j..];
    let fence = b"```";
    let n = fence.len().min(rest.len());
    if rest[..n] != fence[..n] {
        return Match::No;
    }
    if rest.len() < fence.len() {
        return Match::Partial;
    }
    let mut k = 3;
    let info_start = k;
    while k < rest.len() && rest[k].is_ascii_alphanumeric() {
        k += 1;
        if k > MAX {
            return Match::No;
        }
    }
    if k == rest.len() {
        return Match::Partial;
    }
    let info = &rest[info_start..k];
    if !(info.is_empty()
        || info.eq_ignore_ascii_case(b"json")
        || info.eq_ignore_ascii_case(b"json5"))
    {
        return Match::No;
    }
    while k < rest.len() && (rest[k] == b' ' || rest[k] == b'\t' || rest[k] == b'\r') {
        k += 1;
        if k > MAX {
            return Match::No;
        }
    }
    if k == rest.len() {
        return Match::Partial;
    }
    if rest[k] != b'\n' {
        return Match::No;
    }
    while k < rest.len() && is_ws(rest[k]) {
        k += 1;
        if k > MAX {
            return Match::No;
        }
    }
    if k == rest.len() {
        return Match::Partial;
    }
    if rest[k] == b'{' || rest[k] == b'[' {
        Match::Full(k)
    } else {
        Match::No
    }
}

/// A `[` at `bytes[j]` that opens an array of objects: whitespace, then `{`. `Partial` while
/// only whitespace follows it.
fn array_opens(bytes: &[u8], j: usize) -> Match {
    const MAX: usize = 64;
    let rest = &bytes[j + 1..];
    match rest.iter().take(MAX).position(|b| !is_ws(*b)) {
        Some(p) if rest[p] == b'{' => Match::Full(1),
        Some(_) => Match::No,
        None if rest.len() < MAX => Match::Partial,
        None => Match::No,
    }
}

/// Appends to a call's raw markup; a byte at a time is the common case when a stream arrives
/// byte by byte, and pushing one character avoids a copy call.
#[inline]
fn push_raw(raw: &mut String, s: &str) {
    match s.as_bytes() {
        [b] if b.is_ascii() => raw.push(*b as char),
        _ => raw.push_str(s),
    }
}

/// Whether only whitespace follows the last newline of `s` (`otherwise` when `s` has none).
fn line_blank_after(s: &str, otherwise: bool) -> bool {
    line_blank_change(s).unwrap_or(otherwise)
}

/// The scanner itself (see the module documentation).
pub(crate) struct JsonScanner {
    tools: ToolSet,
    cfg: JsonScannerConfig,
    start: Option<Delim>,
    alt_start: Option<Delim>,
    end: Delim,
    fence_end: Delim,
    state: State,
    /// Text held back because it may begin a delimiter, and the input offset.
    held: Holdback,
    /// Nothing but whitespace since the last newline, as far as text has been read (kept when
    /// loose JSON is read: a `{` asks it).
    line_blank: bool,
    /// Bytes before this offset have been read twice already and are not read again.
    refeed_guard: usize,
    /// A `{` after text on its line may open an envelope whose opening tag was left out (loose
    /// JSON with a close delimiter that is a tag: hermes).
    mid_line: bool,
    /// Where the first byte other than whitespace was read.
    first_content: Option<usize>,
    /// The bytes text is searched for: the start delimiter's first byte, a backtick, and the
    /// `{` of a bare envelope when loose JSON is read (repeated to fill three).
    marks: [u8; 3],
    /// Bytes besides those that may open something mid-line (the alternative start
    /// delimiter's first byte, the `[` of a bare array).
    extra: Vec<u8>,
    /// The last search for the next byte that can matter in text: `(searched from, found at,
    /// or the end of the text searched when `found` is false, found)`, in input offsets. Text
    /// is entered once per call on a line, and a long line without a newline must be searched
    /// once, not from each call to its end (which made one whole text quadratic).
    mark: (usize, usize, bool),
}

// The text another scanner read ends a line's run of text as far as this one knows.
super::forked::handover_by_holdback!(JsonScanner, |s: &mut JsonScanner| s.line_blank = false);

impl Scanner for JsonScanner {
    #[inline]
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        // Plain text with nothing held: what `text` would do, without the machinery (the common
        // case when a stream arrives a few bytes at a time). Only a mark (a delimiter's first
        // byte, a backtick, a `{` when loose JSON is read) or an extra byte can change anything;
        // whether the line is still blank is carried.
        if self.quiet(piece) {
            let [a, b, c] = self.marks;
            let bytes = piece.as_bytes();
            if find3(a, b, c, bytes).is_none() && self.find_extra(bytes).is_none() {
                return self.feed_quiet(piece, em);
            }
        }
        // Inside a string value of the call body, text without its quote or a backslash is a
        // string piece and nothing else.
        if let State::Body(call) = &mut self.state
            && let Some(quote) = call.lexer.plain_string_quote()
            && self.held.is_empty()
            && find2(quote, b'\\', piece.as_bytes()).is_none()
        {
            self.held.advance(piece.len());
            call.lexer.skip_string_piece(piece.len());
            // The envelope never refuses a string piece.
            let _ = call.env.string_piece(piece);
            push_raw(&mut call.raw, piece);
            Self::sync(call, em);
            return;
        }
        self.feed_marked(piece, em);
    }

    fn quiet_stops(&self) -> Option<Vec<u8>> {
        let mut stops = self.marks.to_vec();
        stops.extend_from_slice(&self.extra);
        Some(stops)
    }

    #[inline]
    fn quiet(&self, _piece: &str) -> bool {
        matches!(self.state, State::Text) && self.held.is_empty()
    }

    fn pass_quiet(&mut self, piece: &str) {
        self.note_content(piece.as_bytes(), 0, self.held.pos());
        if self.cfg.loose_json {
            self.line_blank = line_blank_after(piece, self.line_blank);
        }
        self.held.advance(piece.len());
    }

    fn passes_by_run(&self) -> bool {
        // The first content is noted once.
        self.first_content.is_some()
    }

    fn pass_quiet_run(&mut self, run: &DirectRun) {
        if self.cfg.loose_json {
            self.line_blank = run.line_blank.unwrap_or(self.line_blank);
        }
        self.held.advance(run.len);
    }

    /// The input has ended.
    fn finish(&mut self, em: &mut Emitter) {
        loop {
            let hold = self.held.take();
            match std::mem::replace(&mut self.state, State::Text) {
                State::Text => {
                    em.text(&hold);
                    return;
                }
                State::After(mut call) if call.needs_close => {
                    // Cut off before its close delimiter was complete: text.
                    let trailing = std::mem::take(&mut call.trailing);
                    self.give_back(call, em);
                    em.text(&trailing);
                    em.text(&hold);
                    return;
                }
                State::After(call) => {
                    if hold.is_empty() {
                        self.close_without_delimiter(call, em);
                    } else {
                        // Held because it may close the call, and cut off by the end: a partial
                        // close delimiter (or a fence) closes it.
                        em.span(call.start, self.held.pos(), SpanKind::ToolCall);
                    }
                    return;
                }
                State::Skip(mut call) => {
                    call.raw.push_str(&hold);
                    let why = call.failed.take().unwrap_or_default();
                    let end = call.start + call.raw.len();
                    self.malformed(call, end, "malformed-tool-call", why, em);
                    return;
                }
                State::Body(mut call) => {
                    let result = call.lexer.finish(&mut call.env);
                    Self::sync(&mut call, em);
                    match result {
                        Ok(()) if !call.speculative && call.failed.is_none() => {
                            em.span(call.start, call.start + call.raw.len(), SpanKind::ToolCall);
                            return;
                        }
                        _ if call.speculative => {
                            self.give_back(call, em);
                            return;
                        }
                        _ => {}
                    }
                    let end = if call.mode == Mode::Fenced {
                        &self.fence_end
                    } else {
                        &self.end
                    };
                    if call.mode != Mode::Bare
                        && let Some((p, len)) = end.find(&call.raw, call.body_start)
                    {
                        let abs = call.start + p;
                        if abs >= self.refeed_guard {
                            let again = call.raw.split_off(p + len);
                            self.refeed_guard = self.held.pos();
                            let resume = call.start + call.raw.len();
                            self.malformed(
                                call,
                                resume,
                                "malformed-tool-call",
                                "the tool call is not valid JSON".into(),
                                em,
                            );
                            self.held.rewind(resume);
                            self.feed(&again, em);
                            continue;
                        }
                    }
                    let (reason, why) = match (call.failed.take(), result) {
                        (Some(w), _) => ("malformed-tool-call", w),
                        (None, Err(e)) => (
                            "unfinished-tool-call",
                            format!("the output ended inside a tool call ({e})"),
                        ),
                        (None, Ok(())) => (
                            "unfinished-tool-call",
                            "the output ended inside a tool call".into(),
                        ),
                    };
                    let end = call.start + call.raw.len();
                    self.malformed(call, end, reason, why, em);
                    return;
                }
            }
        }
    }

    /// A bare object or array that has named no tool yet is not a call yet: a reasoning marker
    /// there is a marker (see [`Scanner::cut`]).
    /// Past a bare call's JSON, where no close is needed, the call is done: a reasoning marker
    /// there is a marker too.
    fn in_call(&self) -> bool {
        match &self.state {
            State::Text => false,
            State::Body(call) => !Self::unnamed_bare(call),
            // An envelope read on speculation after text on its line is a call only if its
            // close tag follows: until then it is text held back, not a call.
            State::After(call) => !Self::done_bare(call) && !call.needs_close,
            _ => true,
        }
    }

    /// After a call's JSON, waiting for a close tag that may be left out: past the call. A
    /// fenced call waits for its fence's close, which is the call's own.
    fn in_args(&self) -> bool {
        match &self.state {
            State::Text => false,
            State::After(call) => call.mode == Mode::Fenced || call.needs_close,
            _ => true,
        }
    }

    /// A reasoning marker follows: text held because it may begin a delimiter (a fence's
    /// backticks, part of `<tool_call>`) is cut off there, and is the text it is. Without this
    /// a fence before a reasoning block would join a `{` after it into one call across it.
    fn cut(&mut self, em: &mut Emitter) {
        if matches!(&self.state, State::Body(call) if Self::unnamed_bare(call))
            && let State::Body(mut call) = std::mem::replace(&mut self.state, State::Text)
        {
            // The candidate ends at the marker: it was the text it is.
            call.raw.push_str(&self.held.take());
            self.give_back(call, em);
            return;
        }
        if matches!(&self.state, State::After(call) if call.needs_close)
            && let State::After(mut call) = std::mem::replace(&mut self.state, State::Text)
        {
            // The envelope waited for its close tag, and a marker came: it was the text it is.
            let trailing = std::mem::take(&mut call.trailing);
            self.give_back(call, em);
            em.text(&trailing);
            em.text(&self.held.take());
            return;
        }
        if matches!(&self.state, State::After(call) if Self::done_bare(call))
            && let State::After(call) = std::mem::replace(&mut self.state, State::Text)
        {
            // The call stands; what was held after it (stray brackets) is text.
            let hold = self.held.take();
            self.close_without_delimiter(call, em);
            em.text(&hold);
            return;
        }
        if !matches!(self.state, State::Text) || self.held.is_empty() {
            return;
        }
        let hold = self.held.take();
        self.line_blank = line_blank_after(&hold, self.line_blank);
        em.text(&hold);
    }
}

impl JsonScanner {
    pub(crate) fn new(tools: ToolSet, cfg: JsonScannerConfig) -> Self {
        let end = Delim::close(&cfg.call_end);
        let mut extra: Vec<u8> = cfg
            .alt_start
            .iter()
            .filter_map(|d| d.bytes().next())
            .collect();
        if cfg.bare_arrays {
            extra.push(b'[');
        }
        extra.dedup();
        let cfg_mid_line =
            cfg.loose_json && !cfg.commit_loose && cfg.call_start.is_some() && end.is_tag();
        let first = cfg
            .call_start
            .as_deref()
            .and_then(|d| d.bytes().next())
            .unwrap_or(b'`');
        let marks = [first, b'`', if cfg.loose_json { b'{' } else { b'`' }];
        JsonScanner {
            start: cfg.call_start.as_deref().map(Delim::start),
            alt_start: cfg.alt_start.as_deref().map(Delim::start),
            end: Delim::close(&cfg.call_end),
            fence_end: Delim::close("```"),
            tools,
            cfg,
            state: State::Text,
            held: Holdback::default(),
            line_blank: true,
            refeed_guard: 0,
            mid_line: cfg_mid_line,
            first_content: None,
            marks,
            extra,
            mark: (0, 0, false),
        }
    }

    /// The offset from `text[j]` of the next mark (see `marks`) or extra byte, if any: searched
    /// once per stretch of input, however often text is entered within it.
    fn next_mark(&mut self, bytes: &[u8], j: usize, base: usize) -> Option<usize> {
        let (at, end) = (base + j, base + bytes.len());
        let (from, to, found) = self.mark;
        if from <= at && at <= to && ((found && to < end) || (!found && to == end)) {
            return found.then(|| to - at);
        }
        let [a, b, c] = self.marks;
        let mut next = find3(a, b, c, &bytes[j..]);
        // (The searches read up to what they find, or to the end.)
        #[cfg(test)]
        tests::SEARCHED.with(|n| n.set(n.get() + next.map_or(bytes.len() - j, |p| p + 1)));
        if !self.extra.is_empty() {
            let upto = next.unwrap_or(bytes.len() - j);
            #[cfg(test)]
            tests::SEARCHED.with(|n| n.set(n.get() + upto));
            if let Some(p) = self.find_extra(&bytes[j..j + upto]) {
                next = Some(p);
            }
        }
        self.mark = match next {
            Some(p) => (at, at + p, true),
            None => (at, end, false),
        };
        next
    }

    /// A piece that may hold markup, or arrives while something is held.
    #[inline(never)]
    fn feed_marked(&mut self, piece: &str, em: &mut Emitter) {
        let (text, base) = self.held.join(piece);
        let mut next = self.run(&text, base, em);
        while let Some((t, b)) = next {
            next = self.run(&t, b, em);
        }
    }

    fn run(&mut self, text: &str, base: usize, em: &mut Emitter) -> Option<(String, usize)> {
        let mut i = 0;
        while i < text.len() {
            let flow = match std::mem::replace(&mut self.state, State::Text) {
                State::Text => Flow::At(self.text(text, i, base, em)),
                State::Body(call) => self.body(call, text, i, base, em),
                State::After(call) => Flow::At(self.after(call, text, i, base, em)),
                State::Skip(call) => Flow::At(self.skip(call, text, i, base, em)),
            };
            match flow {
                Flow::At(j) => i = j,
                Flow::Refeed(t, b) => return Some((t, b)),
            }
        }
        None
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let start_byte = self.start.as_ref().map(|d| d.first_byte());
        let loose = self.cfg.loose_json;
        self.note_content(bytes, i, base);
        // Newlines are not stops: whether a `{` begins its line is asked only of a `{`, by
        // looking back from it (`seen` is where `line_blank` holds).
        let mut seen = i;
        let mut j = i;
        while j < bytes.len() {
            // Jump to the next byte that can matter.
            match self.next_mark(bytes, j, base) {
                Some(p) => j += p,
                None => {
                    j = bytes.len();
                    break;
                }
            }
            if loose {
                self.line_blank = line_blank_after(&text[seen..j], self.line_blank);
                seen = j;
            }
            let b = bytes[j];
            if b == b'{' && loose {
                if self.line_blank {
                    // Only whitespace before it on its line: a bare envelope.
                    em.text(&text[i..j]);
                    self.begin(Mode::Bare, "", base + j, !self.cfg.commit_loose);
                    return j;
                }
                if self.mid_line {
                    // After text on the line: an envelope whose `<tool_call>` was left out,
                    // read on speculation until its close tag shows (or does not).
                    em.text(&text[i..j]);
                    self.begin(Mode::Bare, "", base + j, true);
                    if let State::Body(call) = &mut self.state {
                        call.needs_close = true;
                    }
                    return j;
                }
                j += 1;
                continue;
            }
            if Some(b) == start_byte {
                if let Some(d) = &self.start {
                    match d.matches(text, j) {
                        Match::Full(len) => {
                            em.text(&text[i..j]);
                            self.begin(Mode::Tagged, &text[j..j + len], base + j, false);
                            return j + len;
                        }
                        Match::Partial => {
                            em.text(&text[i..j]);
                            return self.held.hold(text, j, base);
                        }
                        Match::No => {}
                    }
                }
                // A close tag with no call open: kept, reported (a fence closes too many other
                // things to count).
                if self.end.is_tag() && self.end.first_byte() == b {
                    match self.end.matches(text, j) {
                        Match::Full(len) => {
                            em.text(&text[i..j]);
                            em.error(ErrorPart::reason(
                                "malformed-tool-call",
                                format!("{} closes no call and is kept as text", &text[j..j + len]),
                            ));
                            em.text(&text[j..j + len]);
                            em.span(base + j, base + j + len, SpanKind::Malformed);
                            self.line_blank = false;
                            return j + len;
                        }
                        Match::Partial => {
                            em.text(&text[i..j]);
                            return self.held.hold(text, j, base);
                        }
                        Match::No => {}
                    }
                }
            }
            if let Some(d) = self.alt_start.as_ref().filter(|d| d.first_byte() == b) {
                match d.matches(text, j) {
                    Match::Full(len) => {
                        em.text(&text[i..j]);
                        self.begin(Mode::Tagged, &text[j..j + len], base + j, false);
                        return j + len;
                    }
                    Match::Partial => {
                        em.text(&text[i..j]);
                        return self.held.hold(text, j, base);
                    }
                    Match::No => {}
                }
            }
            if b == b'[' && self.cfg.bare_arrays {
                match array_opens(bytes, j) {
                    Match::Full(_) => {
                        em.text(&text[i..j]);
                        // At the very start of the output the array is the format's own;
                        // elsewhere it is a call only once it names a known tool.
                        let at_start = self.first_content.is_none_or(|f| f == base + j);
                        let speculative = !at_start && !self.cfg.commit_loose;
                        self.begin(Mode::Bare, "", base + j, speculative);
                        return j;
                    }
                    Match::Partial => {
                        em.text(&text[i..j]);
                        return self.held.hold(text, j, base);
                    }
                    Match::No => {}
                }
            }
            if b == b'`' && loose {
                match match_json_fence(text, j) {
                    Match::Full(len) => {
                        em.text(&text[i..j]);
                        self.begin(
                            Mode::Fenced,
                            &text[j..j + len],
                            base + j,
                            !self.cfg.commit_loose,
                        );
                        return j + len;
                    }
                    Match::Partial => {
                        em.text(&text[i..j]);
                        return self.held.hold(text, j, base);
                    }
                    Match::No => {}
                }
            }
            j += 1;
        }
        if loose {
            self.line_blank = line_blank_after(&text[seen..j], self.line_blank);
        }
        em.text(&text[i..j]);
        j
    }

    /// Notes where the first byte other than whitespace is, if `bytes[i..]` (at input offset
    /// `base + i`) holds it and none was read before.
    #[inline(always)]
    fn note_content(&mut self, bytes: &[u8], i: usize, base: usize) {
        if self.first_content.is_none()
            && let Some(p) = bytes[i..].iter().position(|&b| !is_ws(b))
        {
            self.first_content = Some(base + i + p);
        }
    }

    /// The first of the extra bytes in `bytes`.
    #[inline(always)]
    fn find_extra(&self, bytes: &[u8]) -> Option<usize> {
        match self.extra.as_slice() {
            [] => None,
            [a] => find1(*a, bytes),
            [a, b] => find2(*a, *b, bytes),
            more => bytes.iter().position(|c| more.contains(c)),
        }
    }

    fn begin(&mut self, mode: Mode, delimiter: &str, start: usize, speculative: bool) {
        self.first_content.get_or_insert(start);
        let body_start = delimiter.len();
        // Room for a call's usual size, so that a whole text's body goes in without a regrowth.
        let mut raw = String::with_capacity(delimiter.len() + 256);
        raw.push_str(delimiter);
        self.state = State::Body(Box::new(Call {
            start,
            raw,
            body_start,
            lexer: Lexer::new(),
            // A bare envelope read on speculation is one object; a tagged or fenced one (or the
            // tool-choice answer) may be an array of calls.
            env: Envelope::new(
                self.tools.clone(),
                speculative,
                mode != Mode::Bare || !speculative || self.cfg.bare_arrays,
            ),
            mode,
            speculative,
            id: None,
            name: None,
            trailing: String::new(),
            needs_close: false,
            failed: None,
        }));
    }

    /// Turns what the envelope found into parts.
    fn sync(call: &mut Call, em: &mut Emitter) {
        if call.needs_close {
            // Nothing is emitted before the close delimiter decides.
            return;
        }
        if call.env.has_found() {
            Self::sync_found(call, em);
        }
        if let Some(id) = &call.id
            && let Some(d) = call.env.take_delta()
        {
            em.input_delta(id, d);
        }
    }

    /// The names and calls the envelope found.
    fn sync_found(call: &mut Call, em: &mut Emitter) {
        for found in call.env.take_found() {
            match found {
                Found::Named { name, .. } => {
                    call.speculative = false;
                    call.id = Some(em.begin_call(&name));
                    call.name = Some(name);
                }
                Found::Call {
                    name,
                    known,
                    delta,
                    result,
                } => {
                    let id = match call.id.take() {
                        Some(id) => id,
                        None => em.begin_call(&name),
                    };
                    call.name = None;
                    match result {
                        Ok(args) => {
                            if let Some(d) = delta {
                                em.input_delta(&id, d);
                            }
                            em.end_call(id.clone(), &name, args);
                            if !known {
                                em.unknown_tool(id, &name);
                            }
                        }
                        Err(e) => {
                            em.abort_call(&id);
                            call.failed = Some(format!("tool call \"{name}\": {e}"));
                        }
                    }
                }
            }
        }
    }

    fn body(
        &mut self,
        mut call: Box<Call>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> Flow {
        let rest = &text[i..];
        call.env.set_whole(em.is_whole());
        match call.lexer.feed(rest, &mut call.env) {
            Step::NeedMore => {
                push_raw(&mut call.raw, rest);
                Self::sync(&mut call, em);
                self.state = State::Body(call);
                Flow::At(text.len())
            }
            Step::Done { consumed } => {
                call.raw.push_str(&rest[..consumed]);
                Self::sync(&mut call, em);
                let at = i + consumed;
                if call.needs_close && call.env.has_found() {
                    // A known tool's envelope: a call if its close delimiter follows.
                    self.state = State::After(call);
                } else if call.speculative {
                    self.give_back(call, em);
                } else if let Some(why) = call.failed.take() {
                    let end = base + at;
                    self.malformed(call, end, "malformed-tool-call", why, em);
                } else if call.mode == Mode::Bare && self.start.is_none() {
                    em.span(call.start, call.start + call.raw.len(), SpanKind::ToolCall);
                    self.line_blank = false;
                } else {
                    // A bare call may be followed by the close delimiter of a call whose opening
                    // one the model left out.
                    self.state = State::After(call);
                }
                Flow::At(at)
            }
            Step::Error { consumed, error } => {
                call.raw.push_str(&rest[..consumed]);
                Self::sync(&mut call, em);
                let at = i + consumed;
                if call.speculative {
                    self.give_back(call, em);
                    return Flow::At(at);
                }
                // The lexer counts from the start of the body; report offsets in the output.
                let at_output = call.start + call.body_start + error.offset;
                let why = call.env.refusal().map(str::to_string).unwrap_or_else(|| {
                    format!("{} at byte {at_output} of the output", error.message)
                });
                self.broken(call, text, at, base, why, em)
            }
        }
    }

    /// A committed call's body broke at `at`. Decides where the malformed markup ends.
    fn broken(
        &mut self,
        mut call: Box<Call>,
        text: &str,
        at: usize,
        base: usize,
        why: String,
        em: &mut Emitter,
    ) -> Flow {
        let why = format!("the tool call is not valid JSON ({why})");
        if call.mode == Mode::Bare {
            self.malformed(call, base + at, "malformed-tool-call", why, em);
            return Flow::At(at);
        }
        // A close delimiter inside the body ends the markup there; the rest is read again.
        let end = if call.mode == Mode::Fenced {
            &self.fence_end
        } else {
            &self.end
        };
        if let Some((p, len)) = end.find(&call.raw, call.body_start) {
            let abs = call.start + p;
            if abs >= self.refeed_guard {
                let mut again = call.raw.split_off(p + len);
                again.push_str(&text[at..]);
                self.refeed_guard = base + at;
                let resume = call.start + call.raw.len();
                let end_abs = resume;
                self.malformed(call, end_abs, "malformed-tool-call", why, em);
                return Flow::Refeed(again, resume);
            }
        }
        call.failed = Some(why);
        self.state = State::Skip(call);
        Flow::At(at)
    }

    fn after(
        &mut self,
        mut call: Box<Call>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let k = ws_end(bytes, i);
        call.trailing.push_str(&text[i..k]);
        if k == bytes.len() {
            self.state = State::After(call);
            return k;
        }
        let consume = |this: &mut Self, mut call: Box<Call>, to: usize, em: &mut Emitter| {
            if call.needs_close {
                // The close delimiter decides: the envelope was a call all along.
                call.needs_close = false;
                call.speculative = false;
                Self::sync(&mut call, em);
                if let Some(why) = call.failed.take() {
                    let trailing = std::mem::take(&mut call.trailing);
                    call.raw.push_str(&trailing);
                    call.raw.push_str(&text[k..to]);
                    this.malformed(call, base + to, "malformed-tool-call", why, em);
                    return to;
                }
            }
            em.span(call.start, base + to, SpanKind::ToolCall);
            this.line_blank = false;
            to
        };
        // The close delimiter, possibly after brackets the JSON did not need (`}}</tool_call>`).
        let mut m = k;
        while m < bytes.len()
            && m - k <= MAX_AFTER
            && (matches!(bytes[m], b'}' | b']') || (m > k && is_ws(bytes[m])))
        {
            m += 1;
        }
        if m == bytes.len() && m - k <= MAX_AFTER {
            self.state = State::After(call);
            return self.held.hold(text, k, base);
        }
        match self.close_at(call.mode, text, m) {
            Match::Full(len) => return consume(self, call, m + len, em),
            Match::Partial => {
                self.state = State::After(call);
                return self.held.hold(text, k, base);
            }
            Match::No => {}
        }
        if call.needs_close {
            // No close delimiter: the JSON was text after all.
            let trailing = std::mem::take(&mut call.trailing);
            self.give_back(call, em);
            self.line_blank = line_blank_after(&trailing, self.line_blank);
            em.text(&trailing);
            return k;
        }
        if call.mode != Mode::Bare {
            // More calls in the same wrapper, separated by commas or newlines.
            let mut m = k;
            if bytes[m] == b',' {
                m += 1;
                while m < bytes.len() && is_ws(bytes[m]) && m - k <= MAX_AFTER {
                    m += 1;
                }
            }
            if m == bytes.len() && m - k <= MAX_AFTER {
                self.state = State::After(call);
                return self.held.hold(text, k, base);
            }
            if bytes[m] == b'{' {
                em.span(call.start, base + m, SpanKind::ToolCall);
                let speculative = call.mode == Mode::Fenced && !self.cfg.commit_loose;
                self.begin(call.mode, "", base + m, speculative);
                return m;
            }
            // A wrong or cut close tag where the close tag belongs (`</think>`, `</tool_call`)
            // closes the call.
            if self.end.is_tag() && call.mode == Mode::Tagged {
                match loose_close_tag(text, k) {
                    Match::Full(len) => return consume(self, call, k + len, em),
                    Match::Partial => {
                        self.state = State::After(call);
                        return self.held.hold(text, k, base);
                    }
                    Match::No => {}
                }
            }
        }
        self.close_without_delimiter(call, em);
        k
    }

    /// The close delimiter of a call of `mode` at `text[k]`. A fence that closes a bare call must
    /// stand alone on its line (otherwise it opens the next code block).
    fn close_at(&self, mode: Mode, text: &str, k: usize) -> Match {
        let end = if mode == Mode::Fenced {
            &self.fence_end
        } else {
            &self.end
        };
        match end.matches(text, k) {
            Match::Full(len) if mode == Mode::Bare && !end.is_tag() => {
                let rest = &text.as_bytes()[k + len..];
                match rest.iter().position(|b| !matches!(b, b' ' | b'\t' | b'\r')) {
                    None => Match::Partial,
                    Some(p) if rest[p] == b'\n' => Match::Full(len),
                    Some(_) => Match::No,
                }
            }
            other => other,
        }
    }

    /// The JSON ended and no close delimiter followed: the call stands, what followed is text.
    fn close_without_delimiter(&mut self, call: Box<Call>, em: &mut Emitter) {
        em.span(call.start, call.start + call.raw.len(), SpanKind::ToolCall);
        self.line_blank = line_blank_after(&call.trailing, false);
        em.text(&call.trailing);
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
        let end = if call.mode == Mode::Fenced {
            &self.fence_end
        } else {
            &self.end
        };
        let end_byte = end.first_byte();
        let start_byte = self.start.as_ref().map(|d| d.first_byte());
        let mut j = i;
        while j < bytes.len() {
            let b = bytes[j];
            if b == end_byte {
                match end.matches(text, j) {
                    Match::Full(len) => {
                        call.raw.push_str(&text[i..j + len]);
                        let why = call.failed.take().unwrap_or_default();
                        self.malformed(call, base + j + len, "malformed-tool-call", why, em);
                        return j + len;
                    }
                    Match::Partial => {
                        call.raw.push_str(&text[i..j]);
                        self.state = State::Skip(call);
                        return self.held.hold(text, j, base);
                    }
                    Match::No => {}
                }
            }
            if Some(b) == start_byte
                && call.mode == Mode::Tagged
                && let Some(d) = &self.start
            {
                match d.matches(text, j) {
                    Match::Full(_) => {
                        call.raw.push_str(&text[i..j]);
                        let why = call.failed.take().unwrap_or_default();
                        self.malformed(call, base + j, "malformed-tool-call", why, em);
                        return j;
                    }
                    Match::Partial => {
                        call.raw.push_str(&text[i..j]);
                        self.state = State::Skip(call);
                        return self.held.hold(text, j, base);
                    }
                    Match::No => {}
                }
            }
            j += 1;
        }
        call.raw.push_str(&text[i..]);
        self.state = State::Skip(call);
        text.len()
    }

    /// Speculative JSON that is not a call goes back into the text.
    /// A bare candidate (no delimiter) whose JSON has named no tool yet.
    fn unnamed_bare(call: &Call) -> bool {
        call.mode == Mode::Bare && call.id.is_none()
    }

    /// A bare call past its JSON that needs no close (one may still follow, forgiven if not).
    fn done_bare(call: &Call) -> bool {
        call.mode == Mode::Bare && !call.needs_close
    }

    fn give_back(&mut self, call: Box<Call>, em: &mut Emitter) {
        self.line_blank = line_blank_after(&call.raw, false);
        em.text(&call.raw);
    }

    /// The markup could not be read as a call: report it and keep it as text.
    fn malformed(
        &mut self,
        call: Box<Call>,
        end_abs: usize,
        reason: &str,
        why: String,
        em: &mut Emitter,
    ) {
        if let Some(id) = &call.id {
            em.abort_call(id);
        }
        em.error(ErrorPart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            ..ErrorPart::reason(reason, why)
        });
        em.text(&call.raw);
        em.span(call.start, end_abs, SpanKind::Malformed);
        self.line_blank = line_blank_after(&call.raw, false);
    }
}

#[cfg(test)]
mod tests {
    use super::{JsonScanner, JsonScannerConfig};
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;
    use std::cell::Cell;

    use crate::part::Collapsed;
    use crate::protocol::spec::Protocol;
    use crate::protocol::tests_support::tools;

    thread_local! {
        /// Bytes the search for the next byte that matters has looked at, in this thread.
        pub(super) static SEARCHED: Cell<usize> = const { Cell::new(0) };
    }

    /// Parses `text` whole (one chunk) and gives the collapsed parts and the bytes searched.
    fn whole(protocol: &str, text: &str) -> (Collapsed, usize) {
        let p = Protocol::from_name(protocol).unwrap();
        SEARCHED.with(|n| n.set(0));
        let parsed = p.parse_generated(&tools(), text.as_bytes());
        (Collapsed::of(&parsed.parts), SEARCHED.with(Cell::get))
    }

    /// A long line of envelopes and prose, with no newline: entered once per envelope, the
    /// search for the next mark must not run to the end of the text each time (whole-text
    /// parsing of 16 MB took 0.77 s where 4 MB took 0.06 s).
    #[test]
    fn one_long_line_is_searched_once_not_once_per_call() {
        let call = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        for protocol in ["hermes", "xlam"] {
            let mut costs = Vec::new();
            for n in [200, 800] {
                let text =
                    format!("{call} {}", ["Plain words between calls. ", call].join(" ")).repeat(n);
                let (c, searched) = whole(protocol, &text);
                assert!(c.text.contains("Plain words"), "{protocol}");
                assert!(
                    searched <= 2 * text.len(),
                    "{protocol}: {searched} bytes searched for {} bytes of text",
                    text.len()
                );
                costs.push(searched);
            }
            // Four times the text, at most about four times the search.
            assert!(costs[1] <= 5 * costs[0], "{protocol}: {costs:?}");
        }
    }

    /// The engine's own cases: a tagged call, a bare envelope alone on its line, one after text
    /// with its close tag (the opening tag left out), and JSON after text that is only text.
    #[test]
    fn tagged_bare_and_speculative_envelopes() {
        let env = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let paris = || {
            (
                "get_weather".to_string(),
                serde_json::json!({"city": "Paris"}),
            )
        };
        let (c, _) = whole("hermes", &format!("<tool_call>{env}</tool_call>"));
        assert_eq!(c.calls, [paris()]);
        let (c, _) = whole("hermes", &format!("Sure.\n{env}\n"));
        assert_eq!(c.calls, [paris()]);
        let (c, _) = whole("hermes", &format!("Sure. {env}</tool_call>"));
        assert_eq!((c.calls, c.text.as_str()), (vec![paris()], "Sure. "));
        let (c, _) = whole("hermes", &format!("Sure. {env} was the call."));
        assert!(c.calls.is_empty());
        assert_eq!(c.text, format!("Sure. {env} was the call."));
    }

    /// Whether a `{` begins its line is read back from the `{` (newlines are not stops): only
    /// whitespace may stand between the line's start and it, whether it comes in the same piece,
    /// in pieces of its own, or at the start of the output.
    #[test]
    fn a_bare_envelope_begins_its_line_after_whitespace_only() {
        let env = r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#;
        let hermes = Protocol::from_name("hermes").unwrap();
        let streamed = |pieces: &[&str]| {
            let mut parser = hermes.stream_parser(&tools());
            let mut parts = Vec::new();
            for piece in pieces {
                parser.push_str(piece, &mut parts);
            }
            parser.finish(&mut parts);
            Collapsed::of(&parts)
        };
        for lead in ["", " \t", "Sure.\n", "Sure.\n \t", "a\n\nb\n  "] {
            let text = format!("{lead}{env} done");
            let (c, _) = whole("hermes", &text);
            assert_eq!(c.calls.len(), 1, "{text:?}");
            let (head, tail) = lead.split_at(lead.rfind('\n').map_or(0, |p| p + 1));
            let c = streamed(&[head, tail, env, " done"]);
            assert_eq!(c.calls.len(), 1, "{text:?} in pieces");
        }
        // Text before it on its line: a call only with the close tag, which is not here.
        for lead in ["Sure. ", "Sure.\n x ", "\n.{"] {
            let text = format!("{lead}{env} done");
            let (c, _) = whole("hermes", &text);
            assert!(c.calls.is_empty(), "{text:?}");
            assert_eq!(c.text, text);
            let c = streamed(&[lead, env, " done"]);
            assert!(c.calls.is_empty(), "{text:?} in pieces");
        }
    }

    /// Tagged calls only: `<call>{"name": …, "arguments": {…}}</call>`.
    fn tagged(tools: ToolSet) -> JsonScanner {
        JsonScanner::new(
            tools,
            JsonScannerConfig {
                call_start: Some("<call>".into()),
                call_end: "</call>".into(),
                loose_json: false,
                commit_loose: false,
                alt_start: None,
                bare_arrays: false,
            },
        )
    }

    standard_cases!(tagged;
        r#"<call>{"name": "get_weather", "arguments": {"city": "Paris"}}</call>"#,
        r#"<call>{"name": "get_weather", "arguments": {"city": "Pa"#,
        r#"<call>{"name": "get_weather", "arguments": {"city": }}</call>"#);
}
