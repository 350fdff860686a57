//! The markup-with-parameters engine: `<function=NAME>` (or an `<invoke name=…>`, a bare `<NAME>`)
//! with `<parameter=KEY>value</parameter>` children, in the dialects of the qwen3-coder family
//! (qwen3-coder, seed-oss, minimax-m2, deepseek-dsml, glm-4.5, glm-4.7). A [`Dialect`] names
//! one family member's tags; the formats that use it are in `formats/`.

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::args::ArgsWriter;
use crate::json::JsonSink;
use crate::json::lexer::find1;
use crate::part::{Coercion, Delta, ErrorPart, Part, PartId, Warning};
use crate::protocol::span::SpanKind;
use crate::protocol::text::emit::Emitter;
use crate::protocol::text::held_args::{self, HeldArgs};
use crate::protocol::text::holdback::{
    Holdback, Separated, Steps, drive, read_again_at_end, strip_separators,
};
use crate::protocol::text::names;
use crate::protocol::text::run::DirectRun;
use crate::protocol::text::scanner::{Scanner, is_ws, ws_end};
use crate::protocol::text::xml::{self, Tag};
use crate::schema::{SchemaType, property_schema};
use crate::tool::{Tool, ToolSet};

const MAX_NAME: usize = 256;

/// How much whitespace may separate a candidate close tag from what decides it (see
/// [`MarkupScanner::decide`]); past that, the decision is taken without looking further.
const MAX_DECIDING_WS: usize = 64;

/// Deepest nesting of qwen markup tracked inside a value (deeper markup is plain value text).
const MAX_NEST: usize = 64;

/// The markup qwen3-coder uses.
#[derive(Clone, Debug, PartialEq, Eq)]
enum QTag {
    Incomplete,
    None,
    OpenToolCall(usize),
    CloseToolCall(usize),
    /// (Names are where they are in the text scanned, not copied out of it.)
    OpenFunction {
        name: Range<usize>,
        len: usize,
        self_closing: bool,
    },
    /// `<function=…>` whose name cannot be a function name (`{{ tc.name }}`, empty).
    BadFunction(usize),
    /// A bare opener followed by a JSON envelope (its literal's length).
    OpenJson(usize),
    CloseFunction(usize),
    OpenParameter {
        name: Range<usize>,
        len: usize,
        /// What the tag says the value is.
        value: ValueIs,
    },
    CloseParameter(usize),
    /// `<![CDATA[`: inside a value, opaque to the end of the section.
    CData(usize),
}

/// The suffix a suffixed dialect's markers carry (`<tool_call:SUFFIX>`), as far as it is known.
#[derive(Clone, Copy)]
enum Sfx<'a> {
    /// The dialect's markers carry none.
    No,
    /// Not known yet: any suffix (or none).
    Any,
    /// This one (or none).
    Is(&'a str),
}

/// The longest marker suffix read.
const MAX_SUFFIX: usize = 64;

const fn suffix_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')
}

/// `lit` (which starts with the syntax's open head `<`, or its close head `</` for a close tag,
/// whitespace allowed after a close head, and after any head in a spaced syntax) then, in a
/// suffixed dialect, an optional `:SUFFIX`, then optional whitespace then the tag's end (`>`):
/// `Some(Some(len))`, `Some(None)` while the text ends too early to tell, `None` when it is not
/// this tag.
fn closing(rest: &[u8], lit: &[u8], sfx: Sfx, syn: &TagSyntax) -> Option<Option<usize>> {
    // Most often the tag is the literal and its end, nothing between (`</parameter>`): what
    // the reading makes of that, found at once.
    let end = syn.end.as_bytes();
    if rest.len() >= lit.len() + end.len()
        && rest.starts_with(lit)
        && rest[lit.len()..].starts_with(end)
        && end[0] != b':'
        && !is_ws(end[0])
    {
        let head = match lit.starts_with(syn.close.as_bytes()) {
            true => syn.close.as_bytes(),
            false => syn.open.as_bytes(),
        };
        if lit.starts_with(head) && !lit.get(head.len()).is_some_and(|&b| is_ws(b)) {
            return Some(Some(lit.len() + end.len()));
        }
    }
    read_closing(rest, lit, sfx, syn)
}

/// [`closing`], read a byte at a time.
fn read_closing(rest: &[u8], lit: &[u8], sfx: Sfx, syn: &TagSyntax) -> Option<Option<usize>> {
    let (head, spaced) = match lit.starts_with(syn.close.as_bytes()) {
        true => (syn.close.as_bytes(), true),
        false => (syn.open.as_bytes(), syn.spaced),
    };
    let word = &lit[head.len()..];
    let n = head.len().min(rest.len());
    if rest[..n] != head[..n] {
        return None;
    }
    if rest.len() < head.len() {
        return Some(None);
    }
    let mut k = head.len();
    if spaced {
        while k < rest.len() && is_ws(rest[k]) && k < head.len() + 8 {
            k += 1;
        }
    }
    let n = word.len().min(rest.len() - k);
    if rest[k..k + n] != word[..n] {
        return None;
    }
    if n < word.len() {
        return Some(None);
    }
    k += word.len();
    if !matches!(sfx, Sfx::No) && rest.get(k) == Some(&b':') {
        let run = rest[k + 1..]
            .iter()
            .take(MAX_SUFFIX + 1)
            .take_while(|b| suffix_byte(**b))
            .count();
        if k + 1 + run == rest.len() && run <= MAX_SUFFIX {
            return Some(None);
        }
        if run == 0 || run > MAX_SUFFIX {
            return None;
        }
        if let Sfx::Is(known) = sfx
            && rest[k + 1..k + 1 + run] != *known.as_bytes()
        {
            return None;
        }
        k += 1 + run;
    }
    let ws_start = k;
    while k < rest.len() && is_ws(rest[k]) && k < ws_start + 8 {
        k += 1;
    }
    match after_literal(&rest[k..], syn.end.as_bytes())? {
        true => Some(Some(k + syn.end.len())),
        false => Some(None),
    }
}

/// How long the literal `lit` (an open tag's start: the syntax's open head, then its word and
/// what follows, `<invoke name=`) is at the start of `rest`, whitespace read past after the head
/// in a spaced syntax: `Some(Some(len))`, `Some(None)` while the text ends inside it, `None`
/// when it is not there.
fn open_literal(rest: &[u8], lit: &[u8], syn: &TagSyntax) -> Option<Option<usize>> {
    let head = syn.open.as_bytes();
    if !syn.spaced || !lit.starts_with(head) {
        return Some(after_literal(rest, lit)?.then_some(lit.len()));
    }
    if !after_literal(rest, head)? {
        return Some(None);
    }
    let ws = rest[head.len()..]
        .iter()
        .take(8)
        .take_while(|b| is_ws(**b))
        .count();
    let k = head.len() + ws;
    if k == rest.len() {
        return Some(None);
    }
    Some(after_literal(&rest[k..], &lit[head.len()..])?.then_some(k + lit.len() - head.len()))
}

/// A named opener's literal with its space collapsed (`<paramname=` for `<param name=`) or
/// written as a tokenizer's space marker (`Ġ`, U+0120): the length read, as [`open_literal`]
/// answers.
fn respaced_literal(rest: &[u8], lit: &[u8]) -> Option<Option<usize>> {
    let s = lit.iter().position(|&b| b == b' ')?;
    if !after_literal(rest, &lit[..s])? {
        return Some(None);
    }
    let after = &lit[s + 1..];
    let gap = match &rest[s..] {
        [0xC4, 0xA0, ..] => 2,
        [0xC4] => return Some(None),
        _ => 0,
    };
    Some(after_literal(&rest[s + gap..], after)?.then_some(s + gap + after.len()))
}

/// Whether `rest` starts with `lit`: `Some(true)` when it does, `Some(false)` while the text ends
/// inside it, `None` when it does not.
fn after_literal(rest: &[u8], lit: &[u8]) -> Option<bool> {
    let n = lit.len().min(rest.len());
    (rest[..n] == lit[..n]).then_some(n == lit.len())
}

/// Where `sub`, a slice of `text`, is in it.
fn range_in(text: &str, sub: &str) -> Range<usize> {
    let start = sub.as_ptr() as usize - text.as_ptr() as usize;
    start..start + sub.len()
}

/// `lit` then a name up to `>` (or `/>`): `Some(Some((name, len, self_closing)))`; the name is
/// empty when there is none. The name may be quoted; attributes after it (`<parameter=city
/// note="a > b">`) are read past, a `>` inside their quotes included.
fn named(
    text: &str,
    j: usize,
    lit: &str,
    colon_close: bool,
    syn: &TagSyntax,
) -> Option<Option<(Range<usize>, usize, bool)>> {
    let rest = &text.as_bytes()[j..];
    let opened = match open_literal(rest, lit.as_bytes(), syn) {
        None => respaced_literal(rest, lit.as_bytes()),
        found => found,
    };
    let Some(lit_len) = opened? else {
        return Some(None);
    };
    let body = &rest[lit_len..];
    let end_lit = syn.end.as_bytes();
    // Most often the name is quoted and the tag ends right after it (`<invoke name="f">`): what
    // the reading makes of that, found at once.
    let window = &body[..body.len().min(MAX_NAME)];
    if window.len() > 2 + end_lit.len()
        && let Some(&q @ (b'"' | b'\'')) = window.first()
        && q != end_lit[0]
        && let Some(e) = memchr::memchr(q, &window[1..])
        && window.get(e + 2) == Some(&end_lit[0])
        && body[e + 2..].starts_with(end_lit)
    {
        let name = j + lit_len + 1;
        return Some(Some((
            name..name + e,
            lit_len + e + 2 + end_lit.len(),
            false,
        )));
    }
    read_named(text, j, lit_len, colon_close, syn)
}

/// [`named`] after its literal (`lit_len` bytes at `j`), read a byte at a time.
fn read_named(
    text: &str,
    j: usize,
    lit_len: usize,
    colon_close: bool,
    syn: &TagSyntax,
) -> Option<Option<(Range<usize>, usize, bool)>> {
    let body = &text.as_bytes()[j + lit_len..];
    let end_lit = syn.end.as_bytes();
    // The tag's `>`: outside quotes, which open after `=` (the literal's own) or whitespace.
    // (Within the first MAX_NAME bytes: a quote not closed there leaves the tag undecided.)
    let window = &body[..body.len().min(MAX_NAME)];
    let mut end = None;
    let mut p = 0;
    while let Some(&b) = window.get(p) {
        match b {
            _ if b == end_lit[0] => match after_literal(&body[p..], end_lit) {
                Some(true) => {
                    end = Some(p);
                    break;
                }
                Some(false) => return Some(None),
                None if b == b'<' => return None,
                None => p += 1,
            },
            b'\n' if colon_close => {
                // `<parameter=-C:` then the end of the line: the tag ends at its `:`.
                let line = &text[j + lit_len..j + lit_len + p];
                let name = line.trim_end().strip_suffix(':')?.trim();
                let name = name.strip_prefix("parameter=").unwrap_or(name);
                if name.is_empty() || name.contains(['<', '>', '"', ' ']) {
                    return None;
                }
                let len = lit_len + line.trim_end().len();
                return Some(Some((range_in(text, name), len, false)));
            }
            b'<' | b'\n' => return None,
            b'"' | b'\'' if p == 0 || window[p - 1] == b'=' || is_ws(window[p - 1]) => {
                match window[p + 1..].iter().position(|&c| c == b) {
                    Some(e) => p += e + 2,
                    None => break,
                }
            }
            _ => p += 1,
        }
    }
    let Some(p) = end else {
        return (body.len() < MAX_NAME).then_some(None);
    };
    let raw = &text[j + lit_len..j + lit_len + p];
    let (raw, self_closing) = match raw.strip_suffix('/') {
        Some(r) => (r, true),
        None => (raw, false),
    };
    let raw = raw.trim();
    let name = match raw.as_bytes().first() {
        Some(&q @ (b'"' | b'\'')) => match raw.as_bytes()[1..].iter().position(|&c| c == q) {
            Some(e) => &raw[1..1 + e],
            None => raw.trim_matches(['"', '\'']),
        },
        _ => match raw.bytes().position(is_ws) {
            // A first word followed by attributes names the parameter; words without any `=`
            // are one name with spaces in it.
            Some(w) if raw.as_bytes()[w..].contains(&b'=') => &raw[..w],
            _ => raw,
        },
    };
    Some(Some((
        range_in(text, name),
        lit_len + p + end_lit.len(),
        self_closing,
    )))
}

/// How one family of function-markup formats writes its tags. qwen3-coder's is [`QWEN`]; other
/// families (Seed-OSS, MiniMax M2, DeepSeek's DSML, GLM) write the same structure — an optional
/// block, functions, parameters holding raw values — with their own tags, and are read by the
/// same scanner with everything it forgives and decides.
///
/// [`QWEN`]: crate::protocol::formats::qwen3_coder::QWEN
pub(crate) struct Dialect {
    /// The block elements that hold calls (`<tool_call` and `</tool_call`); none where a call
    /// stands alone.
    pub blocks: &'static [BlockTag],
    /// How a function opens, and the literal of its close tag (`</function`).
    pub function: Opener,
    pub function_close: &'static str,
    /// A tag that may follow a function's name written as text (HY3's `<tool_sep>` after
    /// `<tool_call>NAME`): part of the function's opening, not its body.
    pub name_sep: Option<&'static str>,
    /// How a parameter opens, and the literal of its close tag (`</parameter`).
    pub parameter: Opener,
    pub parameter_close: &'static str,
    /// Whether every marker carries a per-checkpoint suffix before its `>`
    /// (`<tool_call:6124c78e>`, `</arg_value:6124c78e>`): the scanner reads any suffix until the
    /// first marker teaches it (and says so), or the one it is given. (Bare, keyed and close
    /// tags only.)
    pub suffixed: bool,
    /// Whether one newline after a parameter's open tag and one before its close tag separate
    /// the value from its tags (qwen3-coder) or are content (a family that writes none).
    pub separators: bool,
    /// An attribute of the parameter tag that says whether the value is text or JSON.
    pub string_attr: Option<ValueAttr>,
    /// A function's open tag and a parameter's, as messages show them (`NAME` stands for the
    /// name): `<function=NAME>`, `<parameter=…>`.
    pub function_shown: &'static str,
    pub parameter_shown: &'static str,
    /// Other spellings of the same tags, read alike (DeepSeek V4.1's `<｜DSML｜ invoke`, the
    /// ASCII `<|DSML|invoke`, MiniCPM's collapsed `<functionname=`). Their own `variants`,
    /// `frames` and shown tags are not used.
    pub variants: &'static [&'static Dialect],
    /// Markup that frames each function inside a block and belongs to the block (Step-3's
    /// `<｜tool_call_begin｜>function<｜tool_sep｜>` … `<｜tool_call_end｜>`): read past between
    /// functions.
    pub frames: &'static [&'static str],
    /// A parameter's open tag whose `>` was left out, ending in `:` at the end of its line
    /// (`<parameter=-C:`), is read as closed there (and a repeated `parameter=` is dropped from
    /// its name): a repair some models need.
    pub colon_close: bool,
    /// A CDATA section in a value is its content (MiniCPM's `<![CDATA[…]]>` values), rather
    /// than value text kept as written.
    pub unwrap_cdata: bool,
    /// How a tag is written around its word: XML's `<`, `</` and `>`, or special tokens.
    pub tags: &'static TagSyntax,
}

/// How a dialect writes a tag around its word: the head of an open tag and of a close tag, and
/// the tag's end. The literals of a [`Dialect`] begin with one of the heads (`<tool_call`,
/// `</tool_call`); the end follows the word, its attributes and any whitespace.
pub(crate) struct TagSyntax {
    pub open: &'static str,
    pub close: &'static str,
    pub end: &'static str,
    /// Whitespace may follow an open tag's head too (special tokens printed with spaces around
    /// them, `<|open|> call … <|sep|>`); it may always follow a close tag's head.
    pub spaced: bool,
    /// Names in attributes are written with entities (`&amp;`, `&quot;`) for `&` and `"`.
    pub escaped: bool,
}

/// XML's tags: `<word …>` and `</word>`.
pub(crate) const XML_TAGS: TagSyntax = TagSyntax {
    open: "<",
    close: "</",
    end: ">",
    spaced: false,
    escaped: false,
};

/// A name as an attribute writes it, its entities decoded where the syntax escapes them.
fn attr_name<'t>(raw: &'t str, syn: &TagSyntax) -> Cow<'t, str> {
    if syn.escaped && raw.contains('&') {
        Cow::Owned(xml::decode_entities(raw))
    } else {
        Cow::Borrowed(raw)
    }
}

/// What a parameter's tag says its value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ValueIs {
    /// Text, which the schema types (the tag says nothing).
    Text,
    /// Text by the tag's own statement (DSML's `string="true"`, K2 Horizon's
    /// `<ifm|arg_type>string`): the schema types it where it declares the argument; elsewhere
    /// it stays text.
    StatedText,
    /// JSON (DSML's `string="false"`).
    Json,
}

/// An attribute of a parameter's tag that says whether its value is text or JSON.
#[derive(Clone, Copy)]
pub(crate) enum ValueAttr {
    /// Set to `false`, the value is JSON (DSML's `string="false"`); else text.
    FalseIsJson(&'static str),
    /// Set to anything but the given word, the value is JSON (`type="object"`); set to it
    /// (`type="string"`) or absent, text.
    JsonUnless(&'static str, &'static str),
    /// Every value is JSON (no attribute says otherwise).
    AlwaysJson,
}

/// A block element's literals: `<tool_call` and `</tool_call`.
pub(crate) struct BlockTag {
    pub open: &'static str,
    pub close: &'static str,
}

/// How a function or a parameter opens, and where its name is.
pub(crate) enum Opener {
    /// The literal, then the name up to the tag's `>`: `<function=NAME>`, `<invoke name="NAME">`
    /// (the name may be quoted, attributes may follow it).
    Named(&'static str),
    /// The literal, then the name as text up to a newline or a `<`: GLM's `<tool_call>NAME`.
    Bare(&'static str),
    /// As [`Opener::Bare`], or the literal then a JSON envelope `{"name": …, "arguments": …}`
    /// up to the function's close (K2 Horizon's JSON style in `<ifm|tool_call>`).
    BareOrJson(&'static str),
    /// An element named after the argument, `<KEY>` … `</KEY>` (the literal is the open head,
    /// `<`): any element directly in a function is an argument; inside a value, elements are
    /// the value's own (an object's keys, an array's `<item>`s) and only the argument's own
    /// close tag ends it. (Text outside a function holds no arguments: such tags are text.)
    Element(&'static str),
    /// The name as the text of a key element, then the value's open tag: GLM's
    /// `<arg_key>NAME</arg_key><arg_value>` (whitespace may separate them). Where the key's
    /// close tag opens the value itself (`<|tool_arg:start|>NAME<|tool_arg:value|>`), `value` is
    /// empty. `kind` is a type element that may stand between the key and the value (K2
    /// Horizon's `<ifm|arg_type>string</ifm|arg_type>`: its open and close literals); the
    /// schema types the value whatever it says.
    Keyed {
        key: &'static str,
        key_close: &'static str,
        kind: Option<(&'static str, &'static str)>,
        value: &'static str,
    },
}

impl Opener {
    /// The literal the opener starts with.
    fn lit(&self) -> &'static str {
        match self {
            Opener::Named(lit) | Opener::Bare(lit) | Opener::BareOrJson(lit) => lit,
            Opener::Element(lit) => lit,
            Opener::Keyed { key, .. } => key,
        }
    }

    /// The element's name with its `<` (`<parameter`), however the name is written after it.
    fn element(&self) -> &'static str {
        let lit = self.lit();
        &lit[..lit.find(['=', ' ']).unwrap_or(lit.len())]
    }
}

impl Dialect {
    /// A function's open tag as messages show it.
    fn function_tag(&self, name: &str) -> String {
        self.function_shown.replace("NAME", name)
    }

    /// The first block tag, as messages show it (`<tool_call>`).
    fn block_shown(&self) -> String {
        self.blocks
            .first()
            .map_or_else(String::new, |b| format!("{}>", b.open))
    }
}

/// The literal then a name as text, up to a newline or `<` (or the end of the output, `at_end`):
/// `Some(Some((name, len)))`, where `len` does not count the byte that ended the name.
fn bare(
    text: &str,
    j: usize,
    lit: &str,
    name_sep: Option<&str>,
    sfx: Sfx,
    at_end: bool,
    syn: &TagSyntax,
) -> Option<Option<(Range<usize>, usize)>> {
    let rest = &text.as_bytes()[j..];
    let lit_len = match opener_len(rest, lit, sfx, syn)? {
        Some(len) => len,
        None => return Some(None),
    };
    let body = &rest[lit_len..];
    let end = body
        .iter()
        .take(MAX_NAME)
        .position(|b| matches!(b, b'\n' | b'<'));
    let p = match end {
        Some(p) => p,
        None if body.len() >= MAX_NAME => return Some(Some((j..j, lit_len))),
        None if at_end => body.len(),
        None => return Some(None),
    };
    let name = text[j + lit_len..j + lit_len + p].trim();
    let mut len = lit_len + p;
    // The tag that may end the name belongs to the opening.
    if let Some(sep) = name_sep {
        match opener_len(&rest[len..], sep, sfx, syn) {
            Some(Some(n)) => len += n,
            Some(None) if !at_end => return Some(None),
            // Cut off by the end of the output: the separator begun, not a body.
            Some(None) => len = rest.len(),
            None => {}
        }
    }
    Some(Some((range_in(text, name), len)))
}

/// The length of a bare opener's literal at the start of `rest` (with its suffix, in a
/// suffixed dialect).
fn opener_len(rest: &[u8], lit: &str, sfx: Sfx, syn: &TagSyntax) -> Option<Option<usize>> {
    match (sfx, lit.strip_suffix('>')) {
        (Sfx::Any | Sfx::Is(_), Some(stem)) => closing(rest, stem.as_bytes(), sfx, syn),
        _ => Some(after_literal(rest, lit.as_bytes())?.then_some(lit.len())),
    }
}

/// A bare opener followed (after whitespace) by `{`: the length of the literal, where the JSON
/// envelope begins.
fn json_opener(
    text: &str,
    j: usize,
    lit: &str,
    sfx: Sfx,
    at_end: bool,
    syn: &TagSyntax,
) -> Option<Option<usize>> {
    let rest = &text.as_bytes()[j..];
    let len = opener_len(rest, lit, sfx, syn)??;
    match rest[len..].iter().find(|b| !is_ws(**b)) {
        Some(b'{') => Some(Some(len)),
        Some(_) => None,
        None if at_end || rest.len() - len > MAX_DECIDING_WS => None,
        None => Some(None),
    }
}

/// A key element then the value's open tag: `<arg_key>NAME</arg_key>` `<arg_value>`.
fn keyed(
    text: &str,
    j: usize,
    (key, key_close, value): (&str, &str, &str),
    kind: Option<(&str, &str)>,
    sfx: Sfx,
    syn: &TagSyntax,
) -> Option<Option<(Range<usize>, usize, bool)>> {
    let bytes = text.as_bytes();
    let open = match closing(&bytes[j..], key.as_bytes(), sfx, syn)? {
        Some(len) => j + len,
        None => return Some(None),
    };
    let Some(p) = bytes[open..]
        .iter()
        .take(MAX_NAME)
        .position(|b| matches!(b, b'<' | b'\n'))
    else {
        return (bytes.len() - open < MAX_NAME).then_some(None);
    };
    if bytes[open + p] != b'<' {
        return None;
    }
    let name = range_in(text, text[open..open + p].trim());
    let mut k = open + p;
    k += match closing(&bytes[k..], key_close.as_bytes(), sfx, syn)? {
        Some(len) => len,
        None => return Some(None),
    };
    if value.is_empty() {
        return Some(Some((name, k - j, false)));
    }
    let ws = k;
    while k < bytes.len() && is_ws(bytes[k]) {
        k += 1;
        if k - ws > MAX_DECIDING_WS {
            return None;
        }
    }
    if k == bytes.len() {
        return Some(None);
    }
    // A type element before the value: the schema types the value where it declares it;
    // elsewhere `string` keeps it text.
    let mut stated_string = false;
    if let Some((open, close)) = kind
        && let Some(r) = closing(&bytes[k..], open.as_bytes(), sfx, syn)
    {
        let Some(len) = r else {
            return Some(None);
        };
        k += len;
        let Some(p) = bytes[k..].iter().take(MAX_NAME).position(|b| *b == b'<') else {
            return (bytes.len() - k < MAX_NAME).then_some(None);
        };
        stated_string = text[k..k + p].trim() == "string";
        k += p;
        k += match closing(&bytes[k..], close.as_bytes(), sfx, syn)? {
            Some(len) => len,
            None => return Some(None),
        };
        let ws = k;
        while k < bytes.len() && is_ws(bytes[k]) {
            k += 1;
            if k - ws > MAX_DECIDING_WS {
                return None;
            }
        }
        if k == bytes.len() {
            return Some(None);
        }
    }
    k += match closing(&bytes[k..], value.as_bytes(), sfx, syn)? {
        Some(len) => len,
        None => return Some(None),
    };
    Some(Some((name, k - j, stated_string)))
}

/// The value a parameter's open tag gives `attr` (quoted or not), if it gives one.
fn attr_value<'t>(tag: &'t str, attr: &str) -> Option<&'t str> {
    let (bytes, lit) = (tag.as_bytes(), attr.as_bytes());
    let &lead = lit.first()?;
    let mut from = 0;
    while let Some(p) = find1(lead, &bytes[from..]) {
        let at = from + p;
        if !bytes[at..].starts_with(lit) {
            from = at + 1;
            continue;
        }
        from = at + lit.len();
        let before_ok = at > 0 && is_ws(bytes[at - 1]);
        let rest = tag[from..].trim_start();
        if let (true, Some(v)) = (before_ok, rest.strip_prefix('=')) {
            let v = v.trim_start();
            return Some(match v.as_bytes().first() {
                Some(&q @ (b'"' | b'\'')) => {
                    let v = &v[1..];
                    &v[..v.bytes().position(|c| c == q).unwrap_or(v.len())]
                }
                _ => {
                    &v[..v
                        .bytes()
                        .position(|c| is_ws(c) || c == b'>' || c == b'<')
                        .unwrap_or(v.len())]
                }
            });
        }
    }
    None
}

/// What a parameter's open tag makes its value, by `attr`.
fn value_by_attr(tag: &str, attr: ValueAttr) -> ValueIs {
    let is_text = match attr {
        ValueAttr::FalseIsJson(a) => attr_value(tag, a).map(|v| !v.starts_with("false")),
        ValueAttr::JsonUnless(a, text) => attr_value(tag, a).map(|v| v == text),
        ValueAttr::AlwaysJson => return ValueIs::Json,
    };
    match is_text {
        None => ValueIs::Text,
        Some(true) => ValueIs::StatedText,
        Some(false) => ValueIs::Json,
    }
}

/// How many bytes the words of a dialect's open tags (after `<`) share at their start, and the
/// words of its close tags (after `</`): only the byte after those tells the tags apart (DSML's
/// tags all begin `｜DSML｜`).
struct Shared {
    open: usize,
    close: usize,
    /// What is asked of each of the dialect's literals before a tag is read as it, made once.
    parameter_close: Key,
    function_close: Key,
    function: Key,
    parameter: Key,
    /// Each block's close and open.
    blocks: Vec<(Key, Key)>,
}

/// Of one literal of a dialect: whether it is a close tag's, and its byte where the dialect's
/// words of that kind begin to differ (`None`: its word ends before). A tag in the text may be
/// the literal's only when it is of the same kind and has that byte there (or ends before it).
#[derive(Clone, Copy)]
struct Key {
    close: bool,
    lead: Option<u8>,
}

impl Key {
    fn of(lit: &str, syn: &TagSyntax, open: usize, close: usize) -> Self {
        let lit = lit.as_bytes();
        let is_close = lit.starts_with(syn.close.as_bytes());
        let (head, at) = match is_close {
            true => (syn.close.as_bytes(), close),
            false => (syn.open.as_bytes(), open),
        };
        let word = lit.get(head.len()..).unwrap_or_default();
        Key {
            close: is_close,
            lead: word.get(at).copied(),
        }
    }

    /// Whether a tag of this kind (`closing_tag`), whose byte where the words differ is `lead`
    /// (`None`: the text ends before it), may be this literal's.
    #[inline(always)]
    fn may(self, closing_tag: bool, lead: Option<u8>) -> bool {
        self.close == closing_tag && self.lead.is_none_or(|w| lead.is_none_or(|b| w == b))
    }
}

impl Shared {
    fn of(d: &Dialect) -> Self {
        fn common<'a>(words: impl Iterator<Item = &'a [u8]>) -> usize {
            let mut words = words;
            let Some(first) = words.next() else {
                return 0;
            };
            words.fold(first.len(), |n, w| {
                n.min(first.iter().zip(w).take_while(|(a, b)| a == b).count())
            })
        }
        let open = d
            .blocks
            .iter()
            .map(|b| b.open)
            .chain([d.function.lit(), d.parameter.lit()])
            .map(|lit| lit.as_bytes().get(d.tags.open.len()..).unwrap_or_default());
        let close = d
            .blocks
            .iter()
            .map(|b| b.close)
            .chain([d.function_close, d.parameter_close])
            .map(|lit| lit.as_bytes().get(d.tags.close.len()..).unwrap_or_default());
        let (open, close) = (common(open), common(close));
        let key = |lit: &str| Key::of(lit, d.tags, open, close);
        Shared {
            open,
            close,
            parameter_close: key(d.parameter_close),
            function_close: key(d.function_close),
            function: key(d.function.lit()),
            parameter: key(d.parameter.lit()),
            blocks: d
                .blocks
                .iter()
                .map(|b| (key(b.close), key(b.open)))
                .collect(),
        }
    }
}

/// A tag cut off at the end of what the scanner holds, and what may follow it while the tag stays
/// cut off: a piece that is only that is held with it, and the tag is not read again until a
/// piece is more (see [`Scanner::take`]). One character a piece, a tag was read again at each of
/// its bytes.
#[derive(Clone, Copy)]
struct Waiting {
    expect: Expect,
    /// How many bytes are held, the tag's included: the expectation holds while they are all.
    held: usize,
}

impl Waiting {
    /// Whether `piece` goes on the tag cut off at the end of `held` without ending it (while
    /// `held` is what the expectation was told of); the expectation then says what may follow
    /// the two.
    #[inline]
    fn goes_on(&mut self, waits: &Waits, held: &str, piece: &str) -> bool {
        let held = held.as_bytes();
        self.held == held.len() && waits.takes(&mut self.expect, held, piece.as_bytes())
    }
}

/// What may follow a tag cut off, while it stays cut off.
#[derive(Clone, Copy)]
enum Expect {
    /// More of the literals of [`Waits`] in `may` (a set of their indices), read up to `at`,
    /// that the tag may still be (and is none of yet).
    Literal { may: u64, at: usize },
    /// The rest of a named opener's tag, after its literal: its name and any attributes, which
    /// [`read_named`] reads past to the tag's end (a `<` or a line's end outside quotes makes it
    /// no tag). `quote`: the quote of the quoted part it is in; `last`: its last byte (a quote
    /// after `=` or whitespace opens a quoted part); `room`: how many more bytes it may take
    /// under [`MAX_NAME`].
    Attrs {
        quote: Option<u8>,
        last: u8,
        room: usize,
    },
    /// Nothing more: the next byte may end the tag.
    Nothing,
    /// Not told yet: the tag is the held text's last `len` bytes (told when a piece comes that
    /// may be waited on; a piece of a few dozen bytes seldom is).
    Untold { len: usize },
}

/// The literals a tag may begin with in a dialect and its variants, for [`Expect`]: those the
/// tag readers read (every opener's, in the spellings [`respaced_literal`] reads too; every
/// close's), and those read at a tag's place in some states (the frames, the separators),
/// which a piece may not end.
struct Waits {
    lits: Vec<Vec<u8>>,
    /// Which of them the tag readers read; which are named openers' (a name follows); which
    /// are read by [`closing`] (the tag's end follows, after an optional suffix and whitespace).
    read: u64,
    named: u64,
    closing: u64,
    /// Which are read at a tag's place in some states (frames, separators): a piece that ends
    /// one is not waited on, even where the readers read it too.
    framing: u64,
    /// What may follow a tag's first byte, `<` (told once).
    lt: Option<Expect>,
    /// The first byte of the tag's end: a piece that holds it is not waited on (it most often
    /// ends the tag; a quoted name that holds it is read as any piece is).
    end: u8,
}

/// Whether `text` begins with `lit` (compared here: the literals are short, and most differ
/// from the text in their first bytes).
#[inline]
fn begins(text: &[u8], lit: &[u8]) -> bool {
    text.len() >= lit.len() && text.iter().zip(lit).all(|(a, b)| a == b)
}

/// The next byte `b` of a named opener's tag after its literal (see [`Expect::Attrs`]): whether
/// the tag is still cut off with it.
#[inline]
fn attr_step(quote: &mut Option<u8>, last: &mut u8, b: u8) -> bool {
    match *quote {
        Some(q) if b == q => *quote = None,
        Some(_) => {}
        None => match b {
            b'<' | b'\n' => return false,
            b'"' | b'\'' if *last == b'=' || is_ws(*last) => *quote = Some(b),
            _ => {}
        },
    }
    *last = b;
    true
}

impl Waits {
    /// `None` where arguments are elements (any tag may be one), or where the readers' tags end
    /// differently.
    fn of(readers: &[(&'static Dialect, Shared)]) -> Option<Self> {
        let end = readers.first()?.0.tags.end;
        if readers.iter().any(|(d, _)| d.tags.end != end) {
            return None;
        }
        let end = end.as_bytes().first().copied()?;
        let mut w = Waits {
            lits: Vec::new(),
            read: 0,
            named: 0,
            closing: 0,
            framing: 0,
            lt: None,
            end,
        };
        // (A tag whose end is a quote is not waited on inside a name.)
        let names = !matches!(end, b'"' | b'\'');
        let add = |w: &mut Waits, lit: &[u8], named: bool, closing: bool| {
            let bit = w.bit(lit);
            w.read |= bit;
            if named && names {
                w.named |= bit;
            }
            if closing {
                w.closing |= bit;
            }
        };
        add(&mut w, b"<![CDATA[", false, false);
        for (d, _) in readers {
            if matches!(d.parameter, Opener::Element(_)) {
                return None;
            }
            for opener in [&d.function, &d.parameter] {
                let lit = opener.lit();
                match opener {
                    Opener::Named(_) => {
                        add(&mut w, lit.as_bytes(), true, false);
                        if let Some(s) = lit.find(' ') {
                            for space in ["", "\u{120}"] {
                                let respaced = [&lit[..s], space, &lit[s + 1..]].concat();
                                add(&mut w, respaced.as_bytes(), true, false);
                            }
                        }
                    }
                    Opener::Element(_) => {}
                    _ => add(&mut w, lit.as_bytes(), false, false),
                }
            }
            for lit in [d.function_close, d.parameter_close]
                .into_iter()
                .chain(d.blocks.iter().flat_map(|b| [b.open, b.close]))
            {
                add(&mut w, lit.as_bytes(), false, true);
            }
        }
        for (d, _) in readers {
            for lit in d
                .frames
                .iter()
                .copied()
                .chain(d.name_sep)
                .chain([FRAME_SEP])
            {
                w.framing |= w.bit(lit.as_bytes());
            }
        }
        // (A set of literals is a word's bits.)
        if w.lits.len() > 64 {
            return None;
        }
        w.lt = w.expect(b"<");
        Some(w)
    }

    /// The bit of `lit` in the sets, the literal added if it is new (a literal two readers share
    /// is one: the tag may be it alone); none past the 64th.
    fn bit(&mut self, lit: &[u8]) -> u64 {
        let at = match self.lits.iter().position(|l| l == lit) {
            Some(at) => at,
            None => {
                self.lits.push(lit.to_vec());
                self.lits.len() - 1
            }
        };
        1u64.checked_shl(at as u32).unwrap_or(0)
    }

    /// What may follow `r`, a tag cut off (read as [`QTag::Incomplete`]) at the end of the held
    /// text, while it stays cut off; `None` when that cannot be told from the literals alone.
    fn expect(&self, r: &[u8]) -> Option<Expect> {
        if r == b"<" && self.lt.is_some() {
            return self.lt;
        }
        // A literal that `r` is, or runs past, reads what follows it: nothing is told, but
        // for a named opener's name.
        let past = |l: &Vec<u8>| l.len() <= r.len() && begins(r, l);
        let may = self
            .lits
            .iter()
            .enumerate()
            .filter(|(_, l)| l.len() > r.len() && begins(l, r))
            .fold(0u64, |may, (i, _)| may | 1 << i);
        if may != 0 {
            if may & self.read == 0 || self.lits.iter().any(past) {
                return None;
            }
            return Some(Expect::Literal { may, at: r.len() });
        }
        // A named opener's name: `r` runs past exactly one literal, that opener's.
        let mut opened = self.lits.iter().enumerate().filter(|(_, l)| past(l));
        let (i, lit) = opened.next()?;
        if self.named & !self.framing & (1 << i) == 0 || opened.next().is_some() {
            return None;
        }
        let body = &r[lit.len()..];
        let room = (MAX_NAME - 1).checked_sub(body.len())?;
        let (mut quote, mut last) = (None, b'=');
        body.iter()
            .all(|&b| attr_step(&mut quote, &mut last, b))
            .then_some(Expect::Attrs { quote, last, room })
    }

    /// Whether `piece` after a tag cut off as `expect` says, at the end of `held`, keeps it so;
    /// `expect` then says what may follow the two.
    #[inline]
    fn takes(&self, expect: &mut Expect, held: &[u8], piece: &[u8]) -> bool {
        if find1(self.end, piece).is_some() {
            return false;
        }
        if let Expect::Untold { len } = *expect {
            *expect = self
                .expect(&held[held.len() - len..])
                .unwrap_or(Expect::Nothing);
        }
        match expect {
            Expect::Literal { may, at } => {
                let to = *at + piece.len();
                let (mut still, mut ended) = (0u64, 0u64);
                let mut left = *may;
                while left != 0 {
                    let i = left.trailing_zeros() as usize;
                    left &= left - 1;
                    let lit = &self.lits[i];
                    if begins(&lit[*at..], &piece[..lit.len().min(to) - *at]) {
                        match lit.len().cmp(&to) {
                            std::cmp::Ordering::Greater => still |= 1 << i,
                            std::cmp::Ordering::Equal => ended |= 1 << i,
                            // A literal the piece runs past is read: the piece is more.
                            std::cmp::Ordering::Less => return false,
                        }
                    }
                }
                *expect = match (still, ended) {
                    // The tag may still be one the readers read (not only a frame).
                    (still, 0) if still & self.read != 0 => Expect::Literal { may: still, at: to },
                    // A frame ended is read as one.
                    (0, one) if one & self.framing != 0 => return false,
                    // The piece ends one literal, which the tag may be alone: a named opener's,
                    // whose name follows, or a close's, whose end (or suffix) does.
                    (0, one) if one.is_power_of_two() && one & self.named != 0 => Expect::Attrs {
                        quote: None,
                        last: b'=',
                        room: MAX_NAME - 1,
                    },
                    (0, one) if one.is_power_of_two() && one & self.closing != 0 => Expect::Nothing,
                    _ => return false,
                };
            }
            Expect::Attrs { quote, last, room } => {
                if piece.len() > *room || !piece.iter().all(|&b| attr_step(quote, last, b)) {
                    return false;
                }
                *room -= piece.len();
            }
            Expect::Nothing | Expect::Untold { .. } => return false,
        }
        true
    }
}

fn qtag(
    text: &str,
    j: usize,
    tools: &ToolSet,
    d: &Dialect,
    shared: &Shared,
    sfx: Sfx,
    at_end: bool,
) -> QTag {
    let rest = &text.as_bytes()[j..];
    if rest.get(1) == Some(&b'!') || rest.len() == 1 {
        let lit = b"<![CDATA[";
        let n = lit.len().min(rest.len());
        if rest[..n] == lit[..n] {
            return if n < lit.len() {
                QTag::Incomplete
            } else {
                QTag::CData(lit.len())
            };
        }
    }
    // Only the tags whose word has the text's byte where the dialect's words begin to differ
    // are tried: a stream arriving byte by byte asks again at every byte of a tag. (`None`: the
    // text ends before that byte, and every tag is still possible; a word that ends before it
    // is always tried.)
    let syn = d.tags;
    let (open_head, close_head) = (syn.open.as_bytes(), syn.close.as_bytes());
    if rest.len() < close_head.len() && close_head.starts_with(rest) {
        // A close tag's head, cut off: any tag is still possible.
        return QTag::Incomplete;
    }
    let closing_tag = rest.starts_with(close_head);
    let head = if closing_tag { close_head } else { open_head };
    let (word_at, shared_len) = if closing_tag || syn.spaced {
        let ws = rest
            .get(head.len()..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| is_ws(**b))
            .count();
        (
            head.len() + ws,
            if closing_tag {
                shared.close
            } else {
                shared.open
            },
        )
    } else {
        (head.len(), shared.open)
    };
    let lead = rest.get(word_at + shared_len).copied();
    let may = |key: Key| key.may(closing_tag, lead);
    let element = matches!(d.parameter, Opener::Element(_));
    if !element
        && may(shared.parameter_close)
        && let Some(r) = closing(rest, d.parameter_close.as_bytes(), sfx, syn)
    {
        return r.map_or(QTag::Incomplete, QTag::CloseParameter);
    }
    if may(shared.function_close)
        && let Some(r) = closing(rest, d.function_close.as_bytes(), sfx, syn)
    {
        return r.map_or(QTag::Incomplete, QTag::CloseFunction);
    }
    for (b, (close, _)) in d.blocks.iter().zip(&shared.blocks) {
        if may(*close)
            && let Some(r) = closing(rest, b.close.as_bytes(), sfx, syn)
        {
            return r.map_or(QTag::Incomplete, QTag::CloseToolCall);
        }
    }
    for (b, (_, open)) in d.blocks.iter().zip(&shared.blocks) {
        if may(*open)
            && let Some(r) = closing(rest, b.open.as_bytes(), sfx, syn)
        {
            return r.map_or(QTag::Incomplete, QTag::OpenToolCall);
        }
    }
    if closing_tag {
        // Any other close tag is an element's, where arguments are elements.
        return match element.then(|| xml::parse_tag(text, j)) {
            Some(Tag::Close { len, .. }) => QTag::CloseParameter(len),
            Some(Tag::Incomplete) => QTag::Incomplete,
            _ => QTag::None,
        };
    }
    if let Opener::BareOrJson(lit) = d.function
        && may(shared.function)
    {
        match json_opener(text, j, lit, sfx, at_end, syn) {
            Some(Some(len)) => return QTag::OpenJson(len),
            Some(None) => return QTag::Incomplete,
            None => {}
        }
    }
    if may(shared.function) {
        let opened = match d.function {
            Opener::Named(lit) => named(text, j, lit, false, syn),
            Opener::Bare(lit) | Opener::BareOrJson(lit) => {
                bare(text, j, lit, d.name_sep, sfx, at_end, syn)
                    .map(|r| r.map(|(name, len)| (name, len, false)))
            }
            Opener::Keyed { .. } | Opener::Element(_) => None,
        };
        if let Some(r) = opened {
            return r.map_or(QTag::Incomplete, |(name, len, self_closing)| {
                if names::is_function_name(&attr_name(&text[name.clone()], syn), tools) {
                    QTag::OpenFunction {
                        name,
                        len,
                        self_closing,
                    }
                } else {
                    QTag::BadFunction(len)
                }
            });
        }
    }
    if may(shared.parameter) {
        // The name, the tag's length, and whether a type element said the value is a string.
        let opened = match d.parameter {
            Opener::Named(lit) => named(text, j, lit, d.colon_close, syn)
                .map(|r| r.map(|(name, len, _)| (name, len, false))),
            Opener::Bare(lit) | Opener::BareOrJson(lit) => {
                bare(text, j, lit, None, sfx, at_end, syn).map(|r| r.map(|(n, l)| (n, l, false)))
            }
            Opener::Element(_) => match xml::parse_tag(text, j) {
                Tag::Open {
                    name,
                    len,
                    self_closing: false,
                } => Some(Some((range_in(text, name), len, false))),
                Tag::Incomplete => Some(None),
                _ => None,
            },
            Opener::Keyed {
                key,
                key_close,
                kind,
                value,
            } => keyed(text, j, (key, key_close, value), kind, sfx, syn),
        };
        if let Some(r) = opened {
            return match r {
                None => QTag::Incomplete,
                Some((name, ..)) if name.is_empty() => QTag::None,
                Some((name, len, stated_string)) => {
                    let value = match d.string_attr {
                        Some(attr) => value_by_attr(&text[j..j + len], attr),
                        None if stated_string => ValueIs::StatedText,
                        None => ValueIs::Text,
                    };
                    QTag::OpenParameter { name, len, value }
                }
            };
        }
    }
    QTag::None
}

/// The tag at `text[j]` as any of the `readers` (a dialect and its variants) reads it: the first
/// that reads a tag there, unless one before it still waits for more text.
fn qtag_any(
    text: &str,
    j: usize,
    tools: &ToolSet,
    readers: &[(&'static Dialect, Shared)],
    sfx: Sfx,
    at_end: bool,
) -> QTag {
    for (d, shared) in readers {
        match qtag(text, j, tools, d, shared, sfx, at_end) {
            QTag::None => {}
            // Whatever the readers after it say, the answer waits for this one's.
            QTag::Incomplete => return QTag::Incomplete,
            t => return t,
        }
    }
    QTag::None
}

/// The separator that ends a frame before the function's tag (Step-3's), after which the model
/// may repeat the function's name.
const FRAME_SEP: &str = "<｜tool_sep｜>";

/// A name, then whitespace, then a tag's `<`, at the start of `rest`: `Some(Some(len))` up to
/// the `<`, `Some(None)` while the text ends before it tells, `None` when it is not one.
fn name_before_tag(rest: &[u8], at_end: bool) -> Option<Option<usize>> {
    let name = rest
        .iter()
        .take(MAX_NAME)
        .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
        .count();
    let ws = rest[name..]
        .iter()
        .take(MAX_DECIDING_WS)
        .take_while(|&&b| is_ws(b))
        .count();
    match rest.get(name + ws) {
        Some(b'<') if name > 0 => Some(Some(name + ws)),
        None if !at_end && name < MAX_NAME && ws < MAX_DECIDING_WS => Some(None),
        _ => None,
    }
}

/// Whether `rest` starts with one of `frames`: `Some(Some(len))`, `Some(None)` while the text
/// ends inside one, `None` when it does not.
fn frame_at(rest: &[u8], frames: &[&str]) -> Option<Option<usize>> {
    let mut partial = false;
    for f in frames {
        match after_literal(rest, f.as_bytes()) {
            Some(true) => return Some(Some(f.len())),
            Some(false) => partial = true,
            None => {}
        }
    }
    partial.then_some(None)
}

struct Block {
    start: usize,
    wrapped: bool,
    functions: usize,
    /// How many of its functions became calls.
    calls: usize,
    /// The block's markup from `raw_start` on: what no span covers yet (markup that may still
    /// be kept as text) and what came after. A covered function's markup is let go, so that a
    /// block of many calls does not hold them all.
    raw: String,
    raw_start: usize,
    /// Where the spans given so far end: each function's markup gets its own span (a call, or
    /// malformed markup kept as text), the block's own tags go with its functions.
    covered: usize,
}

impl Block {
    /// A block whose markup so far is `raw`, kept in `buf` (the buffer of an earlier block).
    fn new(start: usize, wrapped: bool, raw: &str, mut buf: String) -> Self {
        buf.clear();
        buf.push_str(raw);
        Block {
            start,
            wrapped,
            functions: 0,
            calls: 0,
            raw: buf,
            raw_start: start,
            covered: start,
        }
    }

    /// Where the markup passed on so far ends.
    fn end(&self) -> usize {
        self.raw_start + self.raw.len()
    }

    /// The markup from the end of the last span to `end`.
    fn uncovered(&self, end: usize) -> &str {
        // (An `end` before what was let go is nothing: the markup up to it is covered.)
        let from = self
            .covered
            .saturating_sub(self.raw_start)
            .min(self.raw.len());
        let to = end
            .saturating_sub(self.raw_start)
            .clamp(from, self.raw.len());
        &self.raw[from..to]
    }

    /// Lets go of the markup that spans now cover: nothing reads it again.
    fn release_covered(&mut self) {
        let cut = self
            .covered
            .saturating_sub(self.raw_start)
            .min(self.raw.len());
        // Most often the markup passed on ends where the span does.
        if cut == self.raw.len() {
            self.raw.clear();
        } else {
            self.raw.drain(..cut);
        }
        self.raw_start += cut;
    }

    /// The markup up to `end` became calls (or, when none of the block's functions did, is
    /// kept as text: the failure was reported where it happened).
    fn cover(&mut self, end: usize, em: &mut Emitter) {
        if self.calls == 0 {
            self.keep_as_text(end, em);
        } else if end > self.covered {
            em.span(self.covered, end, SpanKind::ToolCall);
            self.covered = end;
            self.release_covered();
        }
    }

    /// The markup up to `end` could not be read: it stays in the output as text.
    fn keep_as_text(&mut self, end: usize, em: &mut Emitter) {
        em.text(self.uncovered(end));
        if end > self.covered {
            em.span(self.covered, end, SpanKind::Malformed);
            self.covered = end;
        }
    }
}

enum Mode {
    Stream,
    Collect(String),
}

/// Qwen markup written inside a value (a template, a file about tool calls): it is value text,
/// and its close tags belong to it, not to the value's element.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Nest {
    ToolCall,
    Function,
    Parameter,
}

struct Param {
    name: String,
    mode: Mode,
    sep: Separated,
    /// The format defines no separating newlines: every byte of the value is content.
    verbatim: bool,
    /// What the tag said the value is.
    value: ValueIs,
    nest: Vec<Nest>,
    in_cdata: bool,
}

impl Param {
    /// Opens a nested element of value text.
    fn nest(&mut self, n: Nest) {
        if self.nest.len() < MAX_NEST {
            self.nest.push(n);
        }
    }

    /// A close tag of kind `n`: closes the innermost nested element of that kind (and what is
    /// open inside it) when there is one.
    fn unnest(&mut self, n: Nest) -> bool {
        match self.nest.iter().rposition(|x| *x == n) {
            Some(p) => {
                self.nest.truncate(p);
                true
            }
            None => false,
        }
    }
}

/// What a close tag in a value turned out to be.
enum Decision {
    Closes,
    Text,
    /// The text ends before it can be told.
    Undecided,
}

/// The close tags that may end a value (see [`MarkupScanner::decide`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Closer {
    Parameter,
    Function,
    ToolCall,
}

struct Func {
    name: String,
    tool: Option<Arc<Tool>>,
    id: PartId,
    writer: ArgsWriter,
    args: HeldArgs,
    stray: String,
    failed: Option<String>,
}

enum State {
    Text,
    Wrapper(Block),
    /// A `<tool_call>` block that is not qwen markup, kept as text to its close.
    Skip(Block),
    // The function is boxed: the state moves at every piece, and a function is most of it.
    Function(Block, Box<Func>),
    Param(Block, Box<Func>, Box<Param>),
    /// A function written without `<tool_call>` ended; a stray `</tool_call>` may follow (held
    /// whitespace in the string).
    AfterBare(Block, String),
    /// A JSON envelope after a bare opener, up to the function's close (the JSON so far).
    Json(Block, String),
}

pub(crate) struct MarkupScanner {
    tools: ToolSet,
    dialect: &'static Dialect,
    /// The dialect and its variants, each with the bytes its tags share.
    readers: Vec<(&'static Dialect, Shared)>,
    state: State,
    held: Holdback,
    /// The input has ended: what was held for lookahead is decided without it.
    at_end: bool,
    /// The box of the function that ended last, for the next one.
    spare: Option<Box<Func>>,
    /// The box of the parameter that ended last.
    spare_param: Option<Box<Param>>,
    /// The markup buffer of the block that ended last.
    spare_raw: String,
    /// The suffix the markers carry, for a suffixed dialect: given, or learned from the first.
    suffix: Option<String>,
    /// A function named `f.f` that is none of the tools is the tool `f` (see
    /// [`names::undoubled`]).
    undouble: bool,
    /// How many pieces were fed, and the last tag read: in which feed, where in that feed's
    /// text, and what it is. The lookahead that decides whether a close tag closes reads the
    /// tag after it, which the state after the close then reads again, in the same text.
    feeds: u64,
    last_at: Cell<(u64, usize)>,
    last_tag: Cell<Option<QTag>>,
    /// The last tag read as cut off: in which feed, and how many bytes of it there were.
    cut_off: Cell<(u64, usize)>,
    /// The literals of [`Expect`] (none where arguments are elements).
    waits: Option<Arc<Waits>>,
    /// What the held text's last tag, cut off, may go on with (see [`Scanner::take`]).
    waiting: Option<Waiting>,
}

impl Steps for MarkupScanner {
    #[inline]
    fn step(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => self.text(text, i, base, em),
            State::Wrapper(b) => self.wrapper(b, text, i, base, em),
            State::Skip(b) => self.skip(b, text, i, base, em),
            State::Function(b, f) => self.function(b, f, text, i, base, em),
            State::Param(b, f, p) => self.param(b, f, p, text, i, base),
            State::AfterBare(b, ws) => self.after_bare(b, ws, text, i, base, em),
            State::Json(b, json) => self.json(b, json, text, i, base, em),
        }
    }

    fn held(&mut self) -> &mut Holdback {
        &mut self.held
    }
}

impl Scanner for MarkupScanner {
    fn feed(&mut self, piece: &str, em: &mut Emitter) {
        // Plain text with nothing held: only a `<` can start anything.
        if matches!(self.state, State::Text) && self.held.pass_plain_text(piece, em) {
            return;
        }
        if self.value_text(piece, false, |id, d| em.input_delta(id, d)) {
            return;
        }
        self.feeds = self.feeds.wrapping_add(1);
        drive(self, piece, em);
        if let State::Function(_, f) | State::Param(_, f, _) = &mut self.state
            && let Some(d) = f.writer.take_delta()
        {
            em.input_delta(&f.id, d);
        }
        self.waiting = self.waiting();
    }

    fn takes_pieces(&self) -> bool {
        true
    }

    #[inline]
    fn take(&mut self, piece: &str, em: &mut Emitter, out: &mut Vec<Part>) -> bool {
        // A value's text, its delta written at once (the piece holds no quiet stop, `<`).
        if self.value_text(piece, true, |id, d| em.input_delta_to(id, d, out)) {
            return true;
        }
        let (Some(w), Some(waits)) = (&mut self.waiting, &self.waits) else {
            return false;
        };
        if !w.goes_on(waits, self.held.text(), piece) {
            return false;
        }
        w.held += piece.len();
        self.held.wait(piece);
        true
    }

    #[cfg(debug_assertions)]
    fn waits(&self, piece: &str) -> bool {
        let (Some(w), Some(waits)) = (&self.waiting, &self.waits) else {
            return false;
        };
        let mut w = *w;
        w.goes_on(waits, self.held.text(), piece)
    }

    #[cfg(debug_assertions)]
    fn held_for_check(&self) -> String {
        let state = match &self.state {
            State::Text => "text",
            State::Wrapper(_) => "wrapper",
            State::Skip(_) => "skip",
            State::Function(..) => "function",
            State::Param(..) => "param",
            State::AfterBare(..) => "after bare",
            State::Json(..) => "json",
        };
        format!("{state}: {}", self.held.text())
    }

    fn quiet_stops(&self) -> Option<Vec<u8>> {
        Some(vec![b'<'])
    }

    #[inline]
    fn quiet(&self, _piece: &str) -> bool {
        matches!(self.state, State::Text) && self.held.is_empty()
    }

    fn pass_quiet(&mut self, piece: &str) {
        self.held.advance(piece.len());
    }

    fn passes_by_run(&self) -> bool {
        true
    }

    fn pass_quiet_run(&mut self, run: &DirectRun) {
        self.held.advance(run.len);
    }

    fn finish(&mut self, em: &mut Emitter) {
        let hold = read_again_at_end(self, |s| &mut s.held, |s| s.at_end = true, em);
        match std::mem::replace(&mut self.state, State::Text) {
            State::Text => em.text(&hold),
            State::Wrapper(mut b) => {
                b.raw.push_str(&hold);
                let end = b.end();
                if b.functions == 0 {
                    em.error(ErrorPart::reason(
                        "unfinished-tool-call",
                        format!(
                            "the output ended inside a {} block",
                            self.dialect.block_shown()
                        ),
                    ));
                    b.keep_as_text(end, em);
                } else {
                    b.cover(end, em);
                }
            }
            State::Skip(mut b) => {
                em.text(&hold);
                b.raw.push_str(&hold);
                em.span(b.start, self.held.pos(), SpanKind::Malformed);
            }
            State::AfterBare(_, mut ws) => {
                ws.push_str(&hold);
                em.text(&ws);
            }
            State::Json(mut b, mut json) => {
                json.push_str(&hold);
                b.raw.push_str(&hold);
                let end = b.end();
                // Without its close, the envelope is a call only when the output ended as the
                // model meant it and the JSON is whole.
                if !em.output_cut() && read_envelope(&json).is_ok() {
                    self.end_json(b, &json, end, true, em);
                } else {
                    em.error(ErrorPart::reason(
                        "unfinished-tool-call",
                        format!(
                            "the output ended inside the JSON of {}",
                            self.dialect.function.lit()
                        ),
                    ));
                    b.keep_as_text(end, em);
                }
            }
            State::Function(mut b, mut f) => {
                f.stray.push_str(&hold);
                b.raw.push_str(&hold);
                let end = b.end();
                let opener = self.dialect.parameter.lit();
                let why = if em.output_cut() {
                    // Cut off before its close: what it would have held is not known.
                    Some("the output was cut off before")
                } else if ends_inside_tag(&f.stray, opener, self.dialect.tags) {
                    // `<param` at the very end: a parameter was beginning, not a value.
                    Some("the output ended inside a tag, before")
                } else {
                    None
                };
                match why {
                    Some(why) => {
                        let why =
                            format!("{why} {} was closed", self.dialect.function_tag(&f.name));
                        self.unfinished(b, f, end, why, em);
                    }
                    None => self.end_function(b, f, end, true, em),
                }
            }
            State::Param(mut b, f, _) => {
                b.raw.push_str(&hold);
                let end = b.end();
                let why = format!(
                    "the output ended inside a parameter of {}",
                    self.dialect.function_tag(&f.name)
                );
                self.unfinished(b, f, end, why, em);
            }
        }
    }

    fn in_call(&self) -> bool {
        !matches!(self.state, State::Text)
    }

    /// After a function written without its block, only a stray close may follow: past it.
    fn in_args(&self) -> bool {
        !matches!(self.state, State::Text | State::AfterBare(..))
    }

    /// A reasoning marker follows: a tag held back for what follows it is cut off there. A name
    /// that needed its end (GLM's `<tool_call>NAME`) is a call's start interrupted, kept as text
    /// and reported; anything shorter is the text it is.
    fn cut(&mut self, em: &mut Emitter) {
        if !matches!(self.state, State::Text) || self.held.is_empty() {
            return;
        }
        let start = self.held.held_start();
        let hold = self.held.take();
        match qtag_any(&hold, 0, &self.tools, &self.readers, self.sfx(), true) {
            QTag::OpenFunction { .. } | QTag::BadFunction(_) => stray_markup(
                em,
                &hold,
                start,
                "is cut off by a reasoning marker and kept as text",
            ),
            _ => em.text(&hold),
        }
    }
}

super::forked::handover_by_holdback!(MarkupScanner);

impl MarkupScanner {
    /// A scanner of function markup written in `dialect`.
    pub(crate) fn new(tools: ToolSet, dialect: &'static Dialect) -> Self {
        MarkupScanner {
            tools,
            dialect,
            readers: std::iter::once(dialect)
                .chain(dialect.variants.iter().copied())
                .map(|d| (d, Shared::of(d)))
                .collect(),
            state: State::Text,
            held: Holdback::default(),
            at_end: false,
            spare: None,
            spare_param: None,
            spare_raw: String::new(),
            suffix: None,
            undouble: false,
            feeds: 0,
            last_at: Cell::new((0, 0)),
            last_tag: Cell::new(None),
            cut_off: Cell::new((0, 0)),
            waits: None,
            waiting: None,
        }
        .with_waits()
    }

    fn with_waits(mut self) -> Self {
        // A parser is made per answer, and a dialect's literals are always the same: made once
        // for each dialect (for DSML's four spellings, making them took about 240,000
        // instructions, 2% of reading the peers benchmark's 1 MB text whole).
        static MADE: Mutex<Vec<(usize, Option<Arc<Waits>>)>> = Mutex::new(Vec::new());
        let key = std::ptr::from_ref(self.dialect) as usize;
        let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
        self.waits = match made.iter().find(|(k, _)| *k == key) {
            Some((_, waits)) => waits.clone(),
            None => {
                let waits = Waits::of(&self.readers).map(Arc::new);
                made.push((key, waits.clone()));
                waits
            }
        };
        self
    }

    /// What the held text's last tag may go on with while it stays cut off, after a feed: when
    /// the feed ended holding a tag read as cut off, to the end of what is held.
    fn waiting(&self) -> Option<Waiting> {
        self.waits.as_ref()?;
        let held = self.held.len();
        let (feed, len) = self.cut_off.get();
        if held == 0 || self.at_end || feed != self.feeds || len > held {
            return None;
        }
        Some(Waiting {
            expect: Expect::Untold { len },
            held,
        })
    }

    /// Another scanner's block follows: a function written without its block is not followed by
    /// a stray close, and the whitespace read after it is text.
    pub(crate) fn settle(&mut self, em: &mut Emitter) {
        if !self.held.is_empty() {
            return;
        }
        if !matches!(self.state, State::AfterBare(..)) {
            return;
        }
        if let State::AfterBare(b, ws) = std::mem::replace(&mut self.state, State::Text) {
            em.text(&ws);
            self.retire(b);
        }
    }

    /// Inside a value with nothing held, a piece without a `<` (or `]`, in CDATA) is content
    /// and nothing else: read as such, its argument delta given to `write`. (`no_lt`: the piece
    /// is known to hold no `<`.)
    #[inline]
    fn value_text(&mut self, piece: &str, no_lt: bool, write: impl FnOnce(&PartId, Delta)) -> bool {
        let State::Param(b, f, p) = &mut self.state else {
            return false;
        };
        let special = match (p.in_cdata, no_lt) {
            (true, _) => Some(b']'),
            (false, true) => None,
            (false, false) => Some(b'<'),
        };
        if !self.held.is_empty() || special.is_some_and(|c| find1(c, piece.as_bytes()).is_some()) {
            return false;
        }
        self.held.advance(piece.len());
        content(f, p, piece);
        b.raw.push_str(piece);
        if let Some(d) = f.writer.take_delta() {
            write(&f.id, d);
        }
        true
    }

    /// Whether arguments are elements named after them.
    fn elements(&self) -> bool {
        matches!(self.dialect.parameter, Opener::Element(_))
    }

    fn qtag(&self, text: &str, j: usize) -> QTag {
        // The same place in the same text, read with the same suffix and end: the same tag.
        if self.last_at.get() == (self.feeds, j)
            && let Some(tag) = self.last_tag.take()
        {
            self.last_tag.set(Some(tag.clone()));
            return tag;
        }
        let tag = qtag_any(text, j, &self.tools, &self.readers, self.sfx(), self.at_end);
        // (A tag cut off by the end of the text is read again with more of it.)
        if tag != QTag::Incomplete {
            self.last_at.set((self.feeds, j));
            self.last_tag.set(Some(tag.clone()));
        } else {
            self.cut_off.set((self.feeds, text.len() - j));
        }
        tag
    }

    /// The suffix the markers carry, as far as it is known.
    fn sfx(&self) -> Sfx<'_> {
        match (&self.suffix, self.dialect.suffixed) {
            (_, false) => Sfx::No,
            (Some(s), true) => Sfx::Is(s),
            (None, true) => Sfx::Any,
        }
    }

    /// The suffix of `tag`, the first marker of a call (`<tool_calls:SUFFIX>`), when the
    /// dialect's markers carry one and it is not known yet: it is from now on, and a notice
    /// says so.
    fn learn(&mut self, tag: &str, em: &mut Emitter) {
        if !self.dialect.suffixed || self.suffix.is_some() {
            return;
        }
        let Some(head) = tag.find('>').map(|e| &tag[..e]) else {
            return;
        };
        let Some(sfx) = head.find(':').map(|c| head[c + 1..].trim_end()) else {
            return;
        };
        em.notice(Warning::new(
            "learned-marker-suffix",
            format!(
                "the call markers carry the suffix \"{sfx}\" (learned from {head}>); markers with another suffix are text"
            ),
        ));
        self.suffix = Some(sfx.to_string());
        // A tag read before is read again with the suffix.
        self.last_tag.set(None);
    }

    /// The scanner with the suffix its dialect's markers carry set (`None`: learned from the
    /// first marker).
    pub(crate) fn with_suffix(mut self, suffix: Option<&str>) -> Self {
        self.suffix = suffix.map(str::to_string);
        self
    }

    /// Reads a function named `f.f` that is none of the tools as the tool `f`, and says so.
    pub(crate) fn undoubling(mut self, undouble: bool) -> Self {
        self.undouble = undouble;
        self
    }

    fn text(&mut self, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            match self.qtag(text, at) {
                QTag::OpenToolCall(len) => {
                    em.text(&text[i..at]);
                    self.learn(&text[at..at + len], em);
                    let buf = std::mem::take(&mut self.spare_raw);
                    let block = Block::new(base + at, true, &text[at..at + len], buf);
                    self.state = State::Wrapper(block);
                    return at + len;
                }
                QTag::OpenFunction {
                    name,
                    len,
                    self_closing,
                } => {
                    em.text(&text[i..at]);
                    self.learn(&text[at..at + len], em);
                    let buf = std::mem::take(&mut self.spare_raw);
                    let block = Block::new(base + at, false, &text[at..at + len], buf);
                    let name = attr_name(&text[name], self.dialect.tags);
                    self.open_function(block, &name, self_closing, base + at + len, em);
                    return at + len;
                }
                QTag::Incomplete => {
                    em.text(&text[i..at]);
                    return self.held.hold(text, at, base);
                }
                QTag::BadFunction(len) => {
                    em.text(&text[i..at]);
                    stray_markup(
                        em,
                        &text[at..at + len],
                        base + at,
                        "is not a function name; the markup is kept as text",
                    );
                    return at + len;
                }
                QTag::OpenJson(len) => {
                    em.text(&text[i..at]);
                    let buf = std::mem::take(&mut self.spare_raw);
                    let block = Block::new(base + at, false, &text[at..at + len], buf);
                    self.state = State::Json(block, String::new());
                    return at + len;
                }
                QTag::CloseParameter(_) | QTag::OpenParameter { .. } if self.elements() => {
                    j = at + 1
                }
                QTag::CloseToolCall(len)
                | QTag::CloseFunction(len)
                | QTag::CloseParameter(len)
                | QTag::OpenParameter { len, .. } => {
                    em.text(&text[i..at]);
                    stray_markup(
                        em,
                        &text[at..at + len],
                        base + at,
                        "is outside a tool call and kept as text",
                    );
                    return at + len;
                }
                QTag::CData(_) | QTag::None => j = at + 1,
            }
        }
        em.text(&text[i..]);
        text.len()
    }

    fn open_function(
        &mut self,
        mut block: Block,
        name: &str,
        self_closing: bool,
        end: usize,
        em: &mut Emitter,
    ) {
        let name = match names::undoubled(name, &self.tools).filter(|_| self.undouble) {
            Some(head) => {
                em.notice(Warning::new(
                    "doubled-tool-name",
                    format!("the call names \"{name}\": read as the tool \"{head}\""),
                ));
                head
            }
            None => name,
        };
        let tool = self.tools.get_arc(name).cloned();
        let mut writer = ArgsWriter::new(tool.clone());
        writer.set_whole(em.is_whole());
        let _ = writer.begin_object();
        let id = em.begin_call(name);
        block.functions += 1;
        // The box of the last function and its strings, when there is one: a call allocates
        // none of them anew.
        let f = match self.spare.take() {
            Some(mut f) => {
                f.name.clear();
                f.name.push_str(name);
                f.tool = tool;
                f.id = id;
                f.writer = writer;
                f.args = HeldArgs::default();
                f.stray.clear();
                f.failed = None;
                f
            }
            None => Box::new(Func {
                name: name.to_string(),
                tool,
                id,
                writer,
                args: HeldArgs::default(),
                stray: String::new(),
                failed: None,
            }),
        };
        if self_closing {
            self.end_function(block, f, end, false, em);
        } else {
            self.state = State::Function(block, f);
        }
    }

    /// Inside `<tool_call>`, between functions.
    fn wrapper(
        &mut self,
        mut b: Block,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        loop {
            let from = j;
            j = ws_end(bytes, j);
            b.raw.push_str(&text[from..j]);
            if j == bytes.len() {
                self.state = State::Wrapper(b);
                return j;
            }
            // The frame around each function is the block's own markup.
            match frame_at(&bytes[j..], self.dialect.frames) {
                Some(Some(len)) => {
                    // After a frame's separator, the function's name the model may repeat
                    // before its tag (`function<｜tool_sep｜>edit_file\n<steptml:invoke …`) is
                    // the frame's too.
                    let mut name = 0;
                    if text[j..j + len].ends_with(FRAME_SEP) {
                        match name_before_tag(&bytes[j + len..], self.at_end) {
                            Some(Some(n)) => name = n,
                            Some(None) => {
                                self.state = State::Wrapper(b);
                                return self.held.hold(text, j, base);
                            }
                            None => {}
                        }
                    }
                    b.raw.push_str(&text[j..j + len + name]);
                    j += len + name;
                }
                Some(None) if !self.at_end => {
                    self.state = State::Wrapper(b);
                    return self.held.hold(text, j, base);
                }
                _ => break,
            }
        }
        if bytes[j] == b'<' {
            match self.qtag(text, j) {
                QTag::Incomplete => {
                    self.state = State::Wrapper(b);
                    return self.held.hold(text, j, base);
                }
                QTag::CloseToolCall(len) => {
                    b.raw.push_str(&text[j..j + len]);
                    self.end_block(b, base + j + len, em);
                    return j + len;
                }
                QTag::OpenFunction {
                    name,
                    len,
                    self_closing,
                } => {
                    b.raw.push_str(&text[j..j + len]);
                    let name = attr_name(&text[name], self.dialect.tags);
                    self.open_function(b, &name, self_closing, base + j + len, em);
                    return j + len;
                }
                QTag::OpenJson(len) => {
                    b.raw.push_str(&text[j..j + len]);
                    self.state = State::Json(b, String::new());
                    return j + len;
                }
                _ if b.functions > 0 => {
                    // A wrong close tag where </tool_call> belongs closes the block.
                    match xml::parse_tag(text, j) {
                        Tag::Incomplete => {
                            self.state = State::Wrapper(b);
                            return self.held.hold(text, j, base);
                        }
                        Tag::Close { len, .. } => {
                            b.raw.push_str(&text[j..j + len]);
                            self.end_block(b, base + j + len, em);
                            return j + len;
                        }
                        _ => {}
                    }
                }
                _ => {}
            }
        }
        // Something that is not a function: before any function the block is not qwen markup
        // (kept as text to its close, reported); after one, the block ends here.
        if b.functions == 0 {
            em.error(ErrorPart::reason(
                "malformed-tool-call",
                format!(
                    "a {} block that does not start with {} is kept as text",
                    self.dialect.block_shown(),
                    self.dialect.function_tag("…")
                ),
            ));
            em.text(&b.raw);
            b.raw.clear();
            self.state = State::Skip(b);
        } else {
            let end = b.end();
            b.cover(end, em);
        }
        j
    }

    /// A malformed `<tool_call>` block (already reported): text up to its `</tool_call>`, or up to
    /// a new block or function. `b.raw` counts what was passed on.
    fn skip(&mut self, mut b: Block, text: &str, i: usize, base: usize, em: &mut Emitter) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            match self.qtag(text, at) {
                QTag::CloseToolCall(len) => {
                    em.text(&text[i..at + len]);
                    b.raw.push_str(&text[i..at + len]);
                    em.span(b.start, base + at + len, SpanKind::Malformed);
                    return at + len;
                }
                QTag::OpenToolCall(_) | QTag::OpenFunction { .. } | QTag::OpenJson(_) => {
                    em.text(&text[i..at]);
                    em.span(b.start, base + at, SpanKind::Malformed);
                    return at;
                }
                QTag::Incomplete => {
                    em.text(&text[i..at]);
                    self.state = State::Skip(b);
                    return self.held.hold(text, at, base);
                }
                _ => j = at + 1,
            }
        }
        em.text(&text[i..]);
        self.state = State::Skip(b);
        text.len()
    }

    fn end_block(&mut self, mut b: Block, end: usize, em: &mut Emitter) {
        if b.functions == 0 {
            // `<tool_call></tool_call>`: nothing was called; the markup stays, reported.
            em.error(ErrorPart::reason(
                "malformed-tool-call",
                format!(
                    "an empty {} block is kept as text",
                    self.dialect.block_shown()
                ),
            ));
            b.keep_as_text(end, em);
        } else {
            b.cover(end, em);
        }
        self.retire(b);
    }

    /// A block is over: its markup's buffer is kept for the next (a call allocates none).
    fn retire(&mut self, b: Block) {
        self.spare_raw = b.raw;
    }

    /// After a function written without `<tool_call>`: whitespace, then a stray `</tool_call>`
    /// that belongs to it (a model that forgot the opening tag), or anything else.
    fn after_bare(
        &mut self,
        mut b: Block,
        mut ws: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while j < bytes.len() && is_ws(bytes[j]) && ws.len() + (j - i) < MAX_DECIDING_WS {
            j += 1;
        }
        ws.push_str(&text[i..j]);
        if j == bytes.len() {
            self.state = State::AfterBare(b, ws);
            return j;
        }
        if bytes[j] == b'<' {
            match self.qtag(text, j) {
                QTag::Incomplete => {
                    self.state = State::AfterBare(b, ws);
                    return self.held.hold(text, j, base);
                }
                QTag::CloseToolCall(len) => {
                    b.raw.push_str(&ws);
                    b.raw.push_str(&text[j..j + len]);
                    b.cover(base + j + len, em);
                    self.retire(b);
                    return j + len;
                }
                _ => {}
            }
        }
        em.text(&ws);
        self.retire(b);
        j
    }

    /// Inside a JSON envelope after a bare opener: up to the function's close (or the block's).
    fn json(
        &mut self,
        mut b: Block,
        mut json: String,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while let Some(p) = find1(b'<', &bytes[j..]) {
            let at = j + p;
            let close = match self.qtag(text, at) {
                QTag::Incomplete => {
                    json.push_str(&text[i..at]);
                    b.raw.push_str(&text[i..at]);
                    self.state = State::Json(b, json);
                    return self.held.hold(text, at, base);
                }
                QTag::CloseFunction(len) => Some((len, false)),
                QTag::CloseToolCall(len) => Some((len, true)),
                _ => None,
            };
            let Some((len, block)) = close else {
                j = at + 1;
                continue;
            };
            json.push_str(&text[i..at]);
            b.raw.push_str(&text[i..at + len]);
            self.end_json(b, &json, base + at + len, block, em);
            return at + len;
        }
        json.push_str(&text[i..]);
        b.raw.push_str(&text[i..]);
        self.state = State::Json(b, json);
        text.len()
    }

    /// A JSON envelope is over: a call of the tool it names, with its arguments, or its markup
    /// kept as text and reported.
    fn end_json(
        &mut self,
        mut b: Block,
        json: &str,
        end: usize,
        close_block: bool,
        em: &mut Emitter,
    ) {
        b.functions += 1;
        match read_envelope(json) {
            Ok((name, input)) => {
                let tool = self.tools.get_arc(&name).cloned();
                let id = em.begin_call(&name);
                let mut writer = ArgsWriter::new(tool.clone());
                writer.write_whole(input);
                if let Some(d) = writer.take_delta() {
                    em.input_delta(&id, d);
                }
                match writer.finish() {
                    Ok(args) => {
                        em.end_call(id.clone(), &name, args);
                        if tool.is_none() {
                            em.unknown_tool(id, &name);
                        }
                        b.calls += 1;
                        b.cover(end, em);
                    }
                    Err(why) => {
                        em.abort_call(&id);
                        em.error(ErrorPart {
                            tool_call_id: Some(id),
                            tool_name: Some(name.clone()),
                            ..ErrorPart::reason("malformed-tool-call", why)
                        });
                        b.keep_as_text(end, em);
                    }
                }
            }
            Err(why) => {
                em.error(ErrorPart::reason(
                    "malformed-tool-call",
                    format!("{}{{…}}: {why}", self.dialect.function.lit()),
                ));
                b.keep_as_text(end, em);
            }
        }
        if close_block {
            self.retire(b);
        } else if b.wrapped {
            self.state = State::Wrapper(b);
        } else {
            self.state = State::AfterBare(b, String::new());
        }
    }

    /// Inside a function, between parameters.
    fn function(
        &mut self,
        mut b: Block,
        mut f: Box<Func>,
        text: &str,
        i: usize,
        base: usize,
        em: &mut Emitter,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        while j < bytes.len() {
            let Some(p) = find1(b'<', &bytes[j..]) else {
                f.stray.push_str(&text[j..]);
                b.raw.push_str(&text[j..]);
                j = bytes.len();
                break;
            };
            let at = j + p;
            f.stray.push_str(&text[j..at]);
            b.raw.push_str(&text[j..at]);
            match self.qtag(text, at) {
                QTag::Incomplete => {
                    self.state = State::Function(b, f);
                    return self.held.hold(text, at, base);
                }
                QTag::OpenParameter { name, len, value } => {
                    b.raw.push_str(&text[at..at + len]);
                    match self.start_param(
                        &mut f,
                        &attr_name(&text[name], self.dialect.tags),
                        value,
                    ) {
                        Ok(p) => self.state = State::Param(b, f, p),
                        Err(why) => {
                            f.failed = Some(why);
                            self.state = State::Function(b, f);
                        }
                    }
                    return at + len;
                }
                QTag::CloseFunction(len) => {
                    b.raw.push_str(&text[at..at + len]);
                    let end = base + at + len;
                    self.end_function(b, f, end, false, em);
                    return at + len;
                }
                QTag::CloseToolCall(len) => {
                    b.raw.push_str(&text[at..at + len]);
                    let end = base + at + len;
                    self.end_function(b, f, end, true, em);
                    return at + len;
                }
                QTag::OpenFunction { .. } | QTag::OpenToolCall(_) | QTag::OpenJson(_) => {
                    // A new call begins: this function was never closed.
                    let end = base + at;
                    self.end_function(b, f, end, false, em);
                    return at;
                }
                QTag::CloseParameter(len) | QTag::BadFunction(len) => {
                    f.stray.push_str(&text[at..at + len]);
                    b.raw.push_str(&text[at..at + len]);
                    j = at + len;
                }
                QTag::CData(_) | QTag::None => {
                    f.stray.push('<');
                    b.raw.push('<');
                    j = at + 1;
                }
            }
        }
        self.state = State::Function(b, f);
        j
    }

    fn start_param(
        &mut self,
        f: &mut Func,
        name: &str,
        value: ValueIs,
    ) -> Result<Box<Param>, String> {
        f.args.open(f.tool.as_deref(), name, "parameter")?;
        let stream = value != ValueIs::Json && f.args.streams(f.tool.as_deref(), name);
        if stream {
            let _ = f.writer.key(name);
            let _ = f.writer.begin_string();
        }
        let verbatim = !self.dialect.separators;
        // The box of the last parameter and its buffers, when there is one.
        Ok(match self.spare_param.take() {
            Some(mut p) => {
                p.name.clear();
                p.name.push_str(name);
                p.mode = match std::mem::replace(&mut p.mode, Mode::Stream) {
                    _ if stream => Mode::Stream,
                    Mode::Collect(mut buf) => {
                        buf.clear();
                        Mode::Collect(buf)
                    }
                    Mode::Stream => Mode::Collect(String::new()),
                };
                p.sep = Separated::default();
                p.verbatim = verbatim;
                p.value = value;
                p.nest.clear();
                p.in_cdata = false;
                p
            }
            None => Box::new(Param {
                name: name.to_string(),
                mode: if stream {
                    Mode::Stream
                } else {
                    Mode::Collect(String::new())
                },
                sep: Separated::default(),
                verbatim,
                value,
                nest: Vec::new(),
                in_cdata: false,
            }),
        })
    }

    /// Whether `<parameter=name>` can begin a parameter of the function now: the tool takes
    /// such an argument, and it is not set yet (or may repeat).
    fn opens(f: &Func, name: &str) -> bool {
        held_args::declares(f.tool.as_deref(), name) && f.args.can_open(f.tool.as_deref(), name)
    }

    /// Decides whether a close tag inside a value (ending at `k`) ends the value, from what
    /// follows it after whitespace: `</parameter>` does when a parameter opens next (whatever
    /// its name), or the function or the block closes; `</function>` (its
    /// `</parameter>` forgotten) when the block closes or another call begins; `</tool_call>`
    /// only at the end of the output. Anything else makes it value text.
    fn decide(&self, closer: Closer, text: &str, k: usize) -> Decision {
        let bytes = text.as_bytes();
        let mut m = k;
        while m < bytes.len() && is_ws(bytes[m]) {
            m += 1;
            if m - k > MAX_DECIDING_WS {
                return if closer == Closer::ToolCall {
                    Decision::Text
                } else {
                    Decision::Closes
                };
            }
        }
        if m == bytes.len() {
            return if self.at_end {
                Decision::Closes
            } else {
                Decision::Undecided
            };
        }
        if bytes[m] != b'<' || closer == Closer::ToolCall {
            return Decision::Text;
        }
        match (closer, self.qtag(text, m)) {
            // A close tag cut off by the end of the output is the close the model meant.
            (_, QTag::Incomplete) if self.at_end => Decision::Closes,
            (_, QTag::Incomplete) => Decision::Undecided,
            // Whatever the name: a parameter the schema does not list is still a parameter
            // (a misspelt or undeclared one), kept and left to validation.
            (Closer::Parameter, QTag::OpenParameter { .. }) => Decision::Closes,
            (Closer::Parameter, QTag::CloseFunction(_) | QTag::CloseToolCall(_)) => {
                Decision::Closes
            }
            // The next function begins: the function's close was left out (the function
            // state ends it there).
            (Closer::Parameter, QTag::OpenFunction { .. }) => Decision::Closes,
            (
                Closer::Function,
                QTag::CloseToolCall(_)
                | QTag::OpenToolCall(_)
                | QTag::OpenFunction { .. }
                | QTag::OpenJson(_),
            ) => Decision::Closes,
            _ => Decision::Text,
        }
    }

    fn param(
        &mut self,
        mut b: Block,
        mut f: Box<Func>,
        mut p: Box<Param>,
        text: &str,
        i: usize,
        base: usize,
    ) -> usize {
        let bytes = text.as_bytes();
        let mut j = i;
        loop {
            if p.in_cdata {
                match memchr::memmem::find(&bytes[j..], b"]]>") {
                    Some(e) => {
                        let end = j + e + 3;
                        let upto = if self.dialect.unwrap_cdata {
                            end - 3
                        } else {
                            end
                        };
                        content(&mut f, &mut p, &text[j..upto]);
                        b.raw.push_str(&text[j..end]);
                        p.in_cdata = false;
                        j = end;
                        continue;
                    }
                    None => {
                        // Keep a possible partial "]]>" for the next chunk.
                        let tail = &bytes[j..];
                        let keep = if tail.ends_with(b"]]") {
                            2
                        } else {
                            usize::from(tail.ends_with(b"]"))
                        };
                        let cut = if self.at_end {
                            text.len()
                        } else {
                            text.len() - keep
                        };
                        content(&mut f, &mut p, &text[j..cut]);
                        b.raw.push_str(&text[j..cut]);
                        self.state = State::Param(b, f, p);
                        return if cut < text.len() {
                            self.held.hold(text, cut, base)
                        } else {
                            text.len()
                        };
                    }
                }
            }
            let Some(off) = find1(b'<', &bytes[j..]) else {
                break;
            };
            let at = j + off;
            content(&mut f, &mut p, &text[j..at]);
            b.raw.push_str(&text[j..at]);
            let markup = |len: usize, f: &mut Func, p: &mut Param, b: &mut Block| {
                content(f, p, &text[at..at + len]);
                b.raw.push_str(&text[at..at + len]);
                at + len
            };
            let closer = match self.qtag(text, at) {
                QTag::Incomplete => {
                    self.state = State::Param(b, f, p);
                    return self.held.hold(text, at, base);
                }
                QTag::CData(len) => {
                    j = if self.dialect.unwrap_cdata {
                        b.raw.push_str(&text[at..at + len]);
                        at + len
                    } else {
                        markup(len, &mut f, &mut p, &mut b)
                    };
                    p.in_cdata = true;
                    continue;
                }
                QTag::CloseParameter(len)
                    if self.elements() && !closes_element(&text[at..at + len], &p.name) =>
                {
                    j = markup(len, &mut f, &mut p, &mut b);
                    continue;
                }
                QTag::OpenParameter { name, len, .. } if self.elements() => {
                    // The value's own element (an object's key, an array's item); one named
                    // as the argument nests, so that its close is not the argument's.
                    if text[name] == p.name {
                        p.nest(Nest::Parameter);
                    }
                    j = markup(len, &mut f, &mut p, &mut b);
                    continue;
                }
                QTag::CloseParameter(len) if !p.unnest(Nest::Parameter) => {
                    Some((Closer::Parameter, len))
                }
                QTag::CloseFunction(len) if !p.unnest(Nest::Function) => {
                    Some((Closer::Function, len))
                }
                QTag::CloseToolCall(len) if !p.unnest(Nest::ToolCall) => {
                    Some((Closer::ToolCall, len))
                }
                QTag::CloseParameter(len) | QTag::CloseFunction(len) | QTag::CloseToolCall(len) => {
                    j = markup(len, &mut f, &mut p, &mut b);
                    continue;
                }
                QTag::OpenParameter { name, len, .. } => {
                    // A `</parameter>` forgotten: a parameter that can begin here ends this one.
                    if p.nest.is_empty()
                        && Self::opens(&f, &attr_name(&text[name], self.dialect.tags))
                    {
                        self.end_param(&mut f, p);
                        self.state = State::Function(b, f);
                        return at;
                    }
                    // Inside a function written in the value, it opens that function's
                    // parameter (whose close tag is its own); elsewhere it is just text.
                    if p.nest.last() == Some(&Nest::Function) {
                        p.nest(Nest::Parameter);
                    }
                    j = markup(len, &mut f, &mut p, &mut b);
                    continue;
                }
                QTag::OpenFunction { len, .. } | QTag::BadFunction(len) | QTag::OpenJson(len) => {
                    p.nest(Nest::Function);
                    j = markup(len, &mut f, &mut p, &mut b);
                    continue;
                }
                QTag::OpenToolCall(len) => {
                    p.nest(Nest::ToolCall);
                    j = markup(len, &mut f, &mut p, &mut b);
                    continue;
                }
                QTag::None => None,
            };
            let Some((closer, len)) = closer else {
                j = markup(1, &mut f, &mut p, &mut b);
                continue;
            };
            match self.decide(closer, text, at + len) {
                Decision::Undecided => {
                    self.state = State::Param(b, f, p);
                    return self.held.hold(text, at, base);
                }
                Decision::Text => j = markup(len, &mut f, &mut p, &mut b),
                Decision::Closes if closer == Closer::Parameter => {
                    b.raw.push_str(&text[at..at + len]);
                    self.end_param(&mut f, p);
                    self.state = State::Function(b, f);
                    return at + len;
                }
                Decision::Closes => {
                    // The value ends here; the function state reads the close tag itself.
                    self.end_param(&mut f, p);
                    self.state = State::Function(b, f);
                    return at;
                }
            }
        }
        content(&mut f, &mut p, &text[j..]);
        b.raw.push_str(&text[j..]);
        self.state = State::Param(b, f, p);
        text.len()
    }

    /// A parameter's value ends; its box is kept for the next.
    fn end_param(&mut self, f: &mut Func, mut p: Box<Param>) {
        end_param(f, &mut p);
        self.spare_param = Some(p);
    }

    fn end_function(
        &mut self,
        b: Block,
        mut f: Box<Func>,
        end: usize,
        close_block: bool,
        em: &mut Emitter,
    ) {
        let known = f.tool.is_some();
        let stray = f.stray.trim();
        // A function whose whole body is text: the argument the schema leaves no doubt about.
        let mut body_why = None;
        let param_lit = self.dialect.parameter.element();
        // (Where arguments are elements named after them, text in the body is no argument.)
        // A body that is one `json` element (Kimi K3's `<|open|>json type="object"<|sep|>{…}
        // <|close|>json<|sep|>`) holds the arguments as JSON.
        let block = (f.args.is_empty() && f.failed.is_none())
            .then(|| json_block(stray, self.dialect.tags))
            .flatten();
        let json_body = match block {
            Some(inner) => match crate::json::parse_relaxed(inner) {
                Ok(Value::Object(args)) => Some(args),
                _ => {
                    f.failed = Some("the json element holds no JSON object".into());
                    None
                }
            },
            None if f.args.is_empty() && f.failed.is_none() => {
                json_arguments(stray, f.tool.as_deref())
            }
            None => None,
        };
        if let Some(args) = json_body {
            // A body that is one JSON object naming the tool's arguments: its members are the
            // arguments (models of these families write JSON there at times).
            for (key, value) in args {
                let _ = f.writer.key(&key);
                let _ = f.writer.scalar(value);
            }
            f.stray.clear();
        } else if f.args.is_empty() && !stray.is_empty() && f.failed.is_none() {
            let body_arg = match self.elements() {
                true => None,
                false => f.tool.as_deref().and_then(held_args::body_argument),
            };
            match body_arg {
                Some(arg) if !f.stray.contains(param_lit) => {
                    let body = strip_separators(&f.stray).to_string();
                    let _ = f.writer.key(&arg);
                    let _ = f.writer.scalar(Value::String(body.clone()));
                    f.writer.record(Coercion {
                        path: String::new(),
                        from: Value::String(body.clone()),
                        to: serde_json::json!({ arg: body }),
                    });
                    f.stray.clear();
                }
                _ if !f.stray.contains(param_lit) => {
                    body_why = Some(format!(
                        "the body is text, not {} elements, and {} to put it in",
                        self.dialect.parameter_shown,
                        if known {
                            "the schema has no single string argument"
                        } else {
                            "the tool is unknown, with no schema"
                        }
                    ));
                }
                _ => {}
            }
        }
        if f.failed.is_none()
            && body_why.is_none()
            && let Some(change) = f.args.unwrap_wrapper(f.tool.as_deref())
        {
            f.writer.record(change);
        }
        f.args.write_into(&mut f.writer);
        let _ = f.writer.end_object();
        if let Some(d) = f.writer.take_delta() {
            em.input_delta(&f.id, d);
        }
        let result = match f.failed.take().or(body_why) {
            Some(why) => Err(why),
            None => std::mem::replace(&mut f.writer, ArgsWriter::new(None)).finish(),
        };
        let mut b = b;
        match result {
            Ok(args) => {
                em.end_call(f.id.clone(), &f.name, args);
                if !known {
                    em.unknown_tool(f.id.clone(), &f.name);
                }
                let stray = f.stray.trim();
                if !stray.is_empty() {
                    em.error(ErrorPart {
                        tool_call_id: Some(f.id.clone()),
                        tool_name: Some(f.name.clone()),
                        ..ErrorPart::reason(
                            "ignored-text",
                            format!(
                                "text inside {} that is not a parameter: {stray}",
                                self.dialect.function_tag(&f.name)
                            ),
                        )
                    });
                }
                b.calls += 1;
                b.cover(end, em);
            }
            Err(why) => {
                // Nothing was called: the function's markup stays in the output.
                em.abort_call(&f.id);
                em.error(ErrorPart {
                    tool_call_id: Some(f.id.clone()),
                    tool_name: Some(f.name.clone()),
                    ..ErrorPart::reason(
                        "malformed-tool-call",
                        format!("{}: {why}", self.dialect.function_tag(&f.name)),
                    )
                });
                b.keep_as_text(end, em);
            }
        }
        self.spare = Some(f);
        if close_block {
            self.retire(b);
            return;
        }
        self.state = if b.wrapped {
            State::Wrapper(b)
        } else {
            State::AfterBare(b, String::new())
        };
    }

    /// A function the output left open: no call, an `unfinished-tool-call` error saying `why`,
    /// and its markup kept as text.
    fn unfinished(
        &mut self,
        mut b: Block,
        f: Box<Func>,
        end: usize,
        why: String,
        em: &mut Emitter,
    ) {
        em.abort_call(&f.id);
        em.error(ErrorPart {
            tool_call_id: Some(f.id.clone()),
            tool_name: Some(f.name.clone()),
            ..ErrorPart::reason("unfinished-tool-call", why)
        });
        b.keep_as_text(end, em);
        self.spare = Some(f);
    }
}

/// A call envelope: `{"name": …, "arguments": {…}}` (also `parameters`; arguments given as a
/// JSON string are opened).
fn read_envelope(json: &str) -> Result<(String, Value), String> {
    let Ok(Value::Object(mut env)) = crate::json::parse_relaxed(json.trim()) else {
        return Err("the body is not a JSON object".into());
    };
    let Some(Value::String(name)) = env.remove("name") else {
        return Err("the JSON has no \"name\"".into());
    };
    if name.is_empty() {
        return Err("the JSON's \"name\" is empty".into());
    }
    let input = match env.remove("arguments").or_else(|| env.remove("parameters")) {
        None => Value::Object(Default::default()),
        Some(Value::String(s)) => crate::json::parse_relaxed(s.trim())
            .map_err(|_| "the arguments string is not JSON".to_string())?,
        Some(v) => v,
    };
    Ok((name, input))
}

/// Whether the close tag `tag` (`</city>`) is the element `name`'s.
fn closes_element(tag: &str, name: &str) -> bool {
    let word = tag.trim_start_matches("</").trim_end_matches('>').trim();
    word == name
}

/// Whether `text` ends (after whitespace) inside a tag that begins with `opener` or a part of
/// it: `<`, `<param`, `<parameter=ci`, with no `>` yet.
fn ends_inside_tag(text: &str, opener: &str, syn: &TagSyntax) -> bool {
    let text = text.trim_end();
    // The head itself cut off (`<|op`).
    let head_cut = (1..syn.open.len()).any(|n| {
        text.len() >= n
            && text.is_char_boundary(text.len() - n)
            && syn.open.starts_with(&text[text.len() - n..])
    });
    head_cut
        || text.rfind(syn.open).is_some_and(|i| {
            let tail = &text[i..];
            // (Spaces after a spaced syntax's head are read past, as the tag is.)
            let tail = match syn.spaced {
                true => format!("{}{}", syn.open, tail[syn.open.len()..].trim_start()),
                false => tail.to_string(),
            };
            !tail.contains(syn.end) && (opener.starts_with(&tail) || tail.starts_with(opener))
        })
}

/// Qwen markup where it means nothing (a close tag outside a call, a function whose name is not
/// a name): kept as text, reported.
fn stray_markup(em: &mut Emitter, tag: &str, start: usize, what: &str) {
    em.error(ErrorPart::reason(
        "malformed-tool-call",
        format!("{tag} {what}"),
    ));
    em.text(tag);
    em.span(start, start + tag.len(), SpanKind::Malformed);
}

/// Value text, without the separating newlines.
fn content(f: &mut Func, p: &mut Param, s: &str) {
    let Param {
        sep,
        mode,
        verbatim,
        ..
    } = p;
    let out = |piece: &str| match mode {
        Mode::Stream => {
            let _ = f.writer.string_piece(piece);
        }
        Mode::Collect(buf) => buf.push_str(piece),
    };
    if *verbatim {
        sep.push_verbatim(s, out);
    } else {
        sep.push(s, out);
    }
}

fn end_param(f: &mut Func, p: &mut Param) {
    let Param { sep, mode, .. } = p;
    sep.close(|piece| match mode {
        Mode::Stream => {
            let _ = f.writer.string_piece(piece);
        }
        Mode::Collect(buf) => buf.push_str(piece),
    });
    match std::mem::replace(&mut p.mode, Mode::Stream) {
        Mode::Stream => {
            let _ = f.writer.end_string();
        }
        Mode::Collect(value) => match p.value {
            // Written as JSON; text that is not JSON stays text (coercion types it).
            ValueIs::Json => {
                let value =
                    crate::json::parse_relaxed(value.trim()).unwrap_or(Value::String(value));
                f.args.complete(&mut f.writer, &p.name, value)
            }
            ValueIs::StatedText if !structured(f.tool.as_deref(), &p.name) => {
                f.args.complete_text(&mut f.writer, &p.name, value)
            }
            _ => {
                let value = xml_value(f.tool.as_deref(), &p.name, value);
                f.args.complete(&mut f.writer, &p.name, value)
            }
        },
    }
}

/// A value written as XML elements (`<item>1</item>…`, `<0>a</0><1>b</1>`) where the schema asks
/// for an array or an object is read as those elements, as morph-xml reads them; any other value
/// stays the text it is (coercion types it).
fn xml_value(tool: Option<&Tool>, name: &str, text: String) -> Value {
    if structured(tool, name)
        && text.trim_start().starts_with('<')
        && let v @ Value::Object(_) = xml::fragment_value(&text)
    {
        return v;
    }
    Value::String(text)
}

/// What a function body that is one `json` element holds (`<json>{…}</json>`, or in the
/// dialect's tags `<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>`).
fn json_block<'b>(body: &'b str, syn: &TagSyntax) -> Option<&'b str> {
    let rest = body
        .strip_prefix(syn.open)?
        .trim_start()
        .strip_prefix("json")?;
    if !rest.starts_with(|c: char| c.is_whitespace() || syn.end.starts_with(c)) {
        return None;
    }
    let inner = &rest[rest.find(syn.end)? + syn.end.len()..];
    let inner = inner.trim_end().strip_suffix(syn.end)?.trim_end();
    let inner = inner
        .strip_suffix("json")?
        .trim_end()
        .strip_suffix(syn.close)?;
    Some(inner.trim())
}

/// A function body that is one JSON object (read relaxed) whose keys name arguments of `tool`
/// (any, for a tool that is not among the tools): its members.
fn json_arguments(body: &str, tool: Option<&Tool>) -> Option<serde_json::Map<String, Value>> {
    if !body.starts_with('{') {
        return None;
    }
    let Ok(Value::Object(args)) = crate::json::parse_relaxed(body) else {
        return None;
    };
    let named = |t: &Tool| {
        let root = t.schema();
        args.keys()
            .any(|k| property_schema(root, k, root).is_some())
    };
    tool.is_none_or(named).then_some(args)
}

/// Whether the schema of argument `name` asks for an array or an object.
fn structured(tool: Option<&Tool>, name: &str) -> bool {
    tool.is_some_and(|t| {
        t.argument_type(name)
            .is_some_and(|ty| matches!(ty, SchemaType::Array | SchemaType::Object))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::tests_support::{EngineCase, engine_cases};
    use crate::protocol::text::scanner::Scanner;
    use crate::tool::ToolSet;

    /// `<calls><fn=NAME><arg=KEY>value</arg></fn></calls>`, no separator newlines.
    pub(crate) const DIALECT: Dialect = Dialect {
        blocks: &[BlockTag {
            open: "<calls",
            close: "</calls",
        }],
        function: Opener::Named("<fn="),
        function_close: "</fn",
        name_sep: None,
        parameter: Opener::Named("<arg="),
        parameter_close: "</arg",
        separators: false,
        suffixed: false,
        string_attr: None,
        function_shown: "<fn=NAME>",
        parameter_shown: "<arg=…>",
        variants: &[],
        frames: &[],
        colon_close: false,
        unwrap_cdata: false,
        tags: &XML_TAGS,
    };

    /// Special tokens around the word, spaced: the other way dialects write tags.
    static SPACED: TagSyntax = TagSyntax {
        open: "<|open|>",
        close: "<|close|>",
        end: "<|sep|>",
        spaced: true,
        escaped: true,
    };

    proptest::proptest! {
        /// A tag found at once (its literal, then its end; a quoted name, then the end) is the
        /// tag the byte-by-byte reading finds, and so is anything else: any text after any
        /// literal, in either syntax, with or without suffixes.
        #[test]
        fn a_tag_found_at_once_is_the_tag_read_a_byte_at_a_time(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "<", "</", ">", "/", "=", "\"", "'", ":", " ", "\n", "\t", "ab", "x_1", "日",
                "parameter", "invoke", " name=", "<|sep|>", "<|open|>", "<|close|>", "|>", "6124",
                "\"ab\">", "'x_1'>", "\"a b\"", "\"日\"<|sep|>", "\"q\"/>", ">", "<|sep|>",
            ]), 0..10),
            lit in proptest::sample::select(vec![
                "</parameter", "</invoke", "<minimax:tool_call", "</minimax:tool_call",
                "<parameter name=", "<invoke name=", "<parameter=", "<|close|>argument",
                "<|open|>argument key=", "<|open|>tools", "<|close|> tools",
            ]),
            lead in proptest::bool::ANY,
            colon_close in proptest::bool::ANY,
        ) {
            let after = pieces.concat();
            let text = if lead { format!("{lit}{after}") } else { after };
            let rest = text.as_bytes();
            for syn in [&XML_TAGS, &SPACED] {
                for sfx in [Sfx::No, Sfx::Any, Sfx::Is("6124")] {
                    proptest::prop_assert_eq!(
                        closing(rest, lit.as_bytes(), sfx, syn),
                        read_closing(rest, lit.as_bytes(), sfx, syn)
                    );
                }
                let opened = match open_literal(rest, lit.as_bytes(), syn) {
                    None => respaced_literal(rest, lit.as_bytes()),
                    found => found,
                };
                if let Some(Some(lit_len)) = opened {
                    proptest::prop_assert_eq!(
                        named(&text, 0, lit, colon_close, syn),
                        read_named(&text, 0, lit_len, colon_close, syn)
                    );
                }
            }
        }
    }

    /// `<tool_calls><invoke name="NAME"><parameter name="KEY">…`: named openers with a space.
    static INVOKE: Dialect = Dialect {
        blocks: &[BlockTag {
            open: "<tool_calls",
            close: "</tool_calls",
        }],
        function: Opener::Named("<invoke name="),
        function_close: "</invoke",
        parameter: Opener::Named("<parameter name="),
        parameter_close: "</parameter",
        colon_close: true,
        ..DIALECT
    };

    /// `<tool_call>NAME<name>KEY</name><arg>…`: a bare name, keyed arguments, a
    /// separator after the name, a frame, and a variant.
    static KEYED: Dialect = Dialect {
        blocks: &[],
        function: Opener::Bare("<tool_call>"),
        function_close: "</tool_call",
        name_sep: Some("<sep>"),
        parameter: Opener::Keyed {
            key: "<name",
            key_close: "</name",
            kind: None,
            value: "<arg",
        },
        parameter_close: "</arg",
        variants: &[&INVOKE],
        frames: &["<frame|>"],
        ..DIALECT
    };

    /// Special tokens, spaced, with suffixes.
    static TOKENS: Dialect = Dialect {
        blocks: &[BlockTag {
            open: "<|open|>tools",
            close: "<|close|>tools",
        }],
        function: Opener::Named("<|open|>call name="),
        function_close: "<|close|>call",
        parameter: Opener::Keyed {
            key: "<|open|>key",
            key_close: "<|close|>key",
            kind: None,
            value: "",
        },
        parameter_close: "<|close|>value",
        suffixed: true,
        tags: &SPACED,
        ..DIALECT
    };

    /// A dialect's tag `text` cut off, as every reader reads it.
    fn read(scanner: &MarkupScanner, text: &str, sfx: Sfx) -> QTag {
        qtag_any(text, 0, &scanner.tools, &scanner.readers, sfx, false)
    }

    proptest::proptest! {
        /// A tag cut off stays cut off with every piece waiting says it goes on without
        /// ending (see [`Waits`]), however it goes on and in whatever pieces.
        #[test]
        fn a_tag_waited_on_is_still_cut_off(
            pieces in proptest::collection::vec(proptest::sample::select(vec![
                "<", "</", ">", "/", "=", "\"", "'", ":", " ", "\n", "ab", "x_1", "日", "\u{120}",
                "parameter", "invoke", " name=", "name=", "tool_call", "tool_calls", "arg_key",
                "arg_value", "key", "value", "name", "arg", "call", "tools", "sep", "frame|", "<|sep|>",
                "<|open|>", "<|close|>", "|>", "6124", "![CDATA[", "p", "a", "r", "k", "_",
            ]), 1..12),
            head in proptest::sample::select(vec!["<", "</", "<|open|>", "<|close|>", "<|"]),
            dialect in 0usize..4,
            steps in proptest::collection::vec(1usize..4, 1..40),
            known in proptest::bool::ANY,
        ) {
            let text = format!("{head}{}", pieces.concat());
            let dialect: &'static Dialect = [&DIALECT, &INVOKE, &KEYED, &TOKENS][dialect];
            let scanner = MarkupScanner::new(ToolSet::default(), dialect);
            let Some(waits) = scanner.waits.as_deref() else {
                return Err(proptest::test_runner::TestCaseError::fail("no literals"));
            };
            let sfx = match (dialect.suffixed, known) {
                (false, _) => Sfx::No,
                (true, true) => Sfx::Is("6124"),
                (true, false) => Sfx::Any,
            };
            for k in (1..=text.len()).filter(|&k| text.is_char_boundary(k)) {
                if read(&scanner, &text[..k], sfx) != QTag::Incomplete {
                    continue;
                }
                let Some(mut expect) = waits.expect(&text.as_bytes()[..k]) else {
                    continue;
                };
                let mut at = k;
                for step in &steps {
                    let mut next = (at + step).min(text.len());
                    while !text.is_char_boundary(next) {
                        next += 1;
                    }
                    let (held, piece) = text.as_bytes()[..next].split_at(at);
                    if next == at || !waits.takes(&mut expect, held, piece) {
                        break;
                    }
                    proptest::prop_assert_eq!(
                        read(&scanner, &text[..next], sfx),
                        QTag::Incomplete,
                        "{:?} after {:?}",
                        &text[k..next],
                        &text[..k]
                    );
                    at = next;
                }
            }
        }
    }

    /// A tag arriving a byte at a time is waited on at every byte but its first and its last:
    /// the literal, the name, the quotes.
    #[test]
    fn a_tag_a_byte_at_a_time_is_read_twice() {
        let cases: [(&Dialect, &str); 8] = [
            (&INVOKE, "<invoke name=\"get_weather\">"),
            (&INVOKE, "<parameter name='city'>"),
            (&INVOKE, "<parametername=\"city\">"),
            (&INVOKE, "</parameter>"),
            (&INVOKE, "<tool_calls>"),
            (&DIALECT, "<fn=get_weather>"),
            (&DIALECT, "</calls>"),
            (&KEYED, "</arg>"),
        ];
        for (dialect, tag) in cases {
            let scanner = MarkupScanner::new(ToolSet::default(), dialect);
            let waits = scanner.waits.as_deref().expect("literals");
            let mut expect = waits.expect(b"<").expect("a tag begun");
            let bytes = tag.as_bytes();
            let waited = (1..bytes.len())
                .take_while(|&i| waits.takes(&mut expect, &bytes[..i], &bytes[i..=i]))
                .count();
            assert_eq!(waited, bytes.len() - 2, "{tag}");
        }
    }

    standard_cases!(|tools| MarkupScanner::new(tools, &DIALECT);
        "<calls><fn=get_weather><arg=city>Paris</arg></fn></calls>",
        "<calls><fn=get_weather><arg=city>Pa",
        "<calls><fn=><arg=city>Paris</arg></fn></calls>");
}
