//! Pieces shared by the XML-shaped protocols (morph-xml, yaml-xml, qwen3-coder): entity
//! decoding that survives chunk splits, escaping, tag-name characters and the result block.

/// The longest entity toolscope decodes, `&#x10FFFF;` (holdback bound).
pub(crate) const MAX_ENTITY: usize = 10;

/// Decodes one entity (`&lt;`, `&#65;`, `&#x41;`, …) given its text between `&` and `;`.
pub(crate) fn entity(name: &str) -> Option<char> {
    Some(match name {
        "lt" => '<',
        "gt" => '>',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => '\u{a0}',
        _ => {
            let num = name.strip_prefix('#')?;
            let code = match num.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => num.parse::<u32>().ok()?,
            };
            return char::from_u32(code);
        }
    })
}

/// What follows a `&`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entity {
    /// A known entity: the character, and the length of `&name;`.
    Char(char, usize),
    /// `&name;` that is not a known entity: kept as written (its length).
    Unknown(usize),
    /// A plain `&`.
    Text,
    /// The text ends inside a possible entity name.
    Incomplete,
}

/// Reads the entity at the start of `rest` (which starts with `&`). The decision depends only on
/// the name characters that follow and the byte after them, so it does not depend on where a
/// chunk ends.
pub(crate) fn scan_entity(rest: &str) -> Entity {
    let b = rest.as_bytes();
    let mut k = 1;
    while k < b.len() && k <= MAX_ENTITY && (b[k].is_ascii_alphanumeric() || b[k] == b'#') {
        k += 1;
    }
    if k == b.len() {
        return if k <= MAX_ENTITY {
            Entity::Incomplete
        } else {
            Entity::Text
        };
    }
    if b[k] != b';' || k == 1 {
        return Entity::Text;
    }
    match entity(&rest[1..k]) {
        Some(c) => Entity::Char(c, k + 1),
        None => Entity::Unknown(k + 1),
    }
}

/// Decodes the entities of a complete text; unknown ones stay as written.
pub(crate) fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        let after = &rest[p + 1..];
        match after.find(';').filter(|&q| q <= MAX_ENTITY) {
            Some(q) => match entity(&after[..q]) {
                Some(c) => {
                    out.push(c);
                    rest = &after[q + 1..];
                }
                None => {
                    out.push('&');
                    rest = after;
                }
            },
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Escapes text for an element's content (a carriage return too, so that it is never read as
/// part of a separating newline).
pub(crate) fn escape_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            _ => out.push(c),
        }
    }
    out
}

/// An element's escaped content, with separating newlines around it when the text itself
/// begins or ends with a newline (which would otherwise be read as a separator).
pub(crate) fn element_text(s: &str) -> String {
    let escaped = escape_text(s);
    if s.starts_with('\n') || s.ends_with('\n') {
        format!("\n{escaped}\n")
    } else {
        escaped
    }
}

/// A character that may appear in a tag name: anything but whitespace and markup.
pub(crate) fn is_name_byte(b: u8) -> bool {
    !matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | 0x0c | b'<' | b'>' | b'/' | b'=' | b'"' | b'\'' | b'&'
    )
}

pub(crate) use super::scanner::is_ws;

/// The longest tag toolscope reads (holdback bound); a `<` not closed by `>` within it is text.
pub(crate) const MAX_TAG: usize = 256;

/// What starts at a `<`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tag<'a> {
    /// The text ends before the tag could be told apart.
    Incomplete,
    /// A plain `<` (comparison, arrow, …): text.
    Text,
    /// `<name …>` or `<name …/>`; `len` covers the whole tag.
    Open {
        name: &'a str,
        self_closing: bool,
        len: usize,
    },
    /// `</name >`.
    Close { name: &'a str, len: usize },
    /// `<![CDATA[` (its length).
    CData(usize),
    /// `<!--` (its length).
    Comment(usize),
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

/// Reads the tag that starts at `text[j]` (which is `<`). A close tag may have whitespace after
/// its `</` (`</ get_weather>`); an attribute's quoted value may hold `>`.
pub(crate) fn parse_tag(text: &str, j: usize) -> Tag<'_> {
    parse_tag_with(text, j, false)
}

/// [`parse_tag`], where `numeric` also reads names made of digits (`<0>…</0>`: the items of an
/// array, in an XML fragment).
fn parse_tag_with(text: &str, j: usize, numeric: bool) -> Tag<'_> {
    let rest = &text.as_bytes()[j..];
    for (lit, tag) in [
        (&b"<![CDATA["[..], Tag::CData(9)),
        (&b"<!--"[..], Tag::Comment(4)),
    ] {
        let n = lit.len().min(rest.len());
        if rest[..n] == lit[..n] {
            return if rest.len() < lit.len() {
                Tag::Incomplete
            } else {
                tag
            };
        }
    }
    if rest.len() < 2 {
        return Tag::Incomplete;
    }
    let closing = rest[1] == b'/';
    let mut name_start = if closing { 2 } else { 1 };
    if closing {
        while name_start < rest.len() && is_ws(rest[name_start]) {
            name_start += 1;
            if name_start > 10 {
                return Tag::Text;
            }
        }
    }
    if rest.len() <= name_start {
        return Tag::Incomplete;
    }
    let digits = numeric && rest[name_start].is_ascii_digit();
    if !is_name_start(rest[name_start]) && !digits {
        return Tag::Text;
    }
    let mut k = name_start;
    while k < rest.len() && is_name_byte(rest[k]) {
        if digits && !rest[k].is_ascii_digit() {
            return Tag::Text;
        }
        k += 1;
        if k > MAX_TAG {
            return Tag::Text;
        }
    }
    if k == rest.len() {
        return Tag::Incomplete;
    }
    let name = &text[j + name_start..j + k];
    if closing {
        while k < rest.len() && is_ws(rest[k]) {
            k += 1;
            if k > MAX_TAG {
                return Tag::Text;
            }
        }
        return match rest.get(k) {
            None => Tag::Incomplete,
            Some(b'>') => Tag::Close { name, len: k + 1 },
            Some(_) => Tag::Text,
        };
    }
    // Attributes, if any, run to the `>`; a quoted value may hold `>` (and `<`).
    if !matches!(rest[k], b'>' | b'/') && !is_ws(rest[k]) {
        return Tag::Text;
    }
    let mut quote: Option<u8> = None;
    while k < rest.len() {
        match (quote, rest[k]) {
            (Some(q), b) if b == q => quote = None,
            (Some(_), _) => {}
            (None, b'"' | b'\'') if rest[k - 1] == b'=' || is_ws(rest[k - 1]) => {
                quote = Some(rest[k]);
            }
            (None, b'>') => {
                let self_closing = rest[k - 1] == b'/';
                return Tag::Open {
                    name,
                    self_closing,
                    len: k + 1,
                };
            }
            (None, b'<') => return Tag::Text,
            (None, _) => {}
        }
        k += 1;
        if k > MAX_TAG {
            return Tag::Text;
        }
    }
    Tag::Incomplete
}

/// The deepest element nesting read inside a parameter; deeper tags are kept as text.
pub(crate) const MAX_FRAGMENT_DEPTH: usize = 64;

/// Reads the content of a parameter element as a value: its text (entities decoded, CDATA
/// unwrapped, without its separating newlines) when it has no child elements; otherwise an
/// object of its children, repeated children becoming arrays (numeric ones, `<0>…</0>`, become
/// index keys that coercion reads as an array), with any non-blank text kept under `#text`. One
/// pass with a stack: unmatched close tags are text, unclosed elements close at the end.
pub(crate) fn fragment_value(s: &str) -> serde_json::Value {
    struct Frame {
        name: String,
        children: Vec<(String, serde_json::Value)>,
        text: String,
    }
    fn value_of(f: Frame) -> serde_json::Value {
        use serde_json::{Map, Value};
        if f.children.is_empty() {
            // A leaf keeps its text but for the separating newlines, as a string argument does.
            return Value::String(super::holdback::strip_separators(&f.text).to_string());
        }
        let text = f.text.trim_matches(|c: char| c.is_ascii_whitespace());
        // Children grouped by name in order of first appearance; a repeated name is an array.
        let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
        let mut groups: Vec<(String, Vec<Value>)> = Vec::new();
        for (k, v) in f.children {
            match index.get(&k) {
                Some(&g) => groups[g].1.push(v),
                None => {
                    index.insert(k.clone(), groups.len());
                    groups.push((k, vec![v]));
                }
            }
        }
        let mut map = Map::new();
        for (k, mut vs) in groups {
            let v = if vs.len() == 1 {
                vs.pop().unwrap_or(Value::Null)
            } else {
                Value::Array(vs)
            };
            map.insert(k, v);
        }
        if !text.is_empty() {
            map.insert("#text".into(), Value::String(text.to_string()));
        }
        Value::Object(map)
    }

    let bytes = s.as_bytes();
    let mut stack = vec![Frame {
        name: String::new(),
        children: Vec::new(),
        text: String::new(),
    }];
    let mut i = 0;
    while i < bytes.len() {
        let next = bytes[i..]
            .iter()
            .position(|&b| b == b'<' || b == b'&')
            .map_or(bytes.len(), |p| i + p);
        if let Some(top) = stack.last_mut() {
            top.text.push_str(&s[i..next]);
        }
        i = next;
        if i >= bytes.len() {
            break;
        }
        let top_text = |stack: &mut Vec<Frame>, t: &str| {
            if let Some(top) = stack.last_mut() {
                top.text.push_str(t);
            }
        };
        if bytes[i] == b'&' {
            let after = &s[i + 1..];
            match after
                .find(';')
                .filter(|&q| q <= MAX_ENTITY)
                .and_then(|q| entity(&after[..q]).map(|c| (q, c)))
            {
                Some((q, c)) => {
                    let mut tmp = [0u8; 4];
                    top_text(&mut stack, c.encode_utf8(&mut tmp));
                    i += q + 2;
                }
                None => {
                    top_text(&mut stack, "&");
                    i += 1;
                }
            }
            continue;
        }
        match parse_tag_with(s, i, true) {
            Tag::CData(n) => {
                let body = &s[i + n..];
                match body.find("]]>") {
                    Some(e) => {
                        top_text(&mut stack, &body[..e]);
                        i += n + e + 3;
                    }
                    None => {
                        top_text(&mut stack, body);
                        i = bytes.len();
                    }
                }
            }
            Tag::Comment(n) => match s[i + n..].find("-->") {
                Some(e) => i += n + e + 3,
                None => i = bytes.len(),
            },
            Tag::Open {
                name,
                self_closing,
                len,
            } if self_closing || stack.len() <= MAX_FRAGMENT_DEPTH => {
                if self_closing {
                    if let Some(top) = stack.last_mut() {
                        top.children
                            .push((name.to_string(), serde_json::Value::String(String::new())));
                    }
                } else {
                    stack.push(Frame {
                        name: name.to_string(),
                        children: Vec::new(),
                        text: String::new(),
                    });
                }
                i += len;
            }
            Tag::Close { name, len } if stack.iter().skip(1).any(|f| f.name == name) => {
                while let Some(f) = stack.pop() {
                    let done = f.name == name;
                    let fname = f.name.clone();
                    let v = value_of(f);
                    if let Some(parent) = stack.last_mut() {
                        parent.children.push((fname, v));
                    }
                    if done {
                        break;
                    }
                }
                i += len;
            }
            Tag::Open { len, .. } | Tag::Close { len, .. } => {
                top_text(&mut stack, &s[i..i + len]);
                i += len;
            }
            Tag::Text | Tag::Incomplete => {
                top_text(&mut stack, "<");
                i += 1;
            }
        }
    }
    while stack.len() > 1 {
        if let Some(f) = stack.pop() {
            let fname = f.name.clone();
            let v = value_of(f);
            if let Some(parent) = stack.last_mut() {
                parent.children.push((fname, v));
            }
        }
    }
    stack.pop().map_or(serde_json::Value::Null, value_of)
}

/// The names of the attributes in `attrs` (what an open tag holds after its name): `a="x > y"
/// b='z' c=w d` gives `a`, `b`, `c`, `d`.
pub(crate) fn attribute_names(attrs: &str) -> Vec<&str> {
    let b = attrs.as_bytes();
    let mut names = Vec::new();
    let mut k = 0;
    while k < b.len() {
        if !is_name_byte(b[k]) {
            k += 1;
            continue;
        }
        let start = k;
        while k < b.len() && is_name_byte(b[k]) {
            k += 1;
        }
        names.push(&attrs[start..k]);
        while k < b.len() && is_ws(b[k]) {
            k += 1;
        }
        if b.get(k) != Some(&b'=') {
            continue;
        }
        k += 1;
        while k < b.len() && is_ws(b[k]) {
            k += 1;
        }
        match b.get(k) {
            Some(&q @ (b'"' | b'\'')) => {
                k += 1;
                while k < b.len() && b[k] != q {
                    k += 1;
                }
                k += 1;
            }
            _ => {
                while k < b.len() && !is_ws(b[k]) {
                    k += 1;
                }
            }
        }
    }
    names
}

/// Whether the incomplete tag at `text[j]` (a `<` near the end of the text) may still become the
/// open tag of one of the tools: its name so far is a prefix of a tool's name, or is a tool's
/// name followed by the start of its attributes.
pub(crate) fn could_open_tool(text: &str, j: usize, tools: &crate::tool::ToolSet) -> bool {
    let rest = &text.as_bytes()[j + 1..];
    let n = rest
        .iter()
        .position(|&b| !is_name_byte(b))
        .unwrap_or(rest.len());
    let so_far = &text[j + 1..j + 1 + n];
    if n == rest.len() {
        tools.iter().any(|t| t.name().starts_with(so_far))
    } else {
        tools.get(so_far).is_some()
    }
}

/// A tool result for the XML-shaped protocols.
pub(crate) fn format_result(name: &str, result: &str) -> String {
    format!(
        "<tool_response name=\"{}\">\n{}\n</tool_response>",
        escape_text(name).replace('"', "&quot;"),
        result
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_names_skip_quoted_values() {
        assert_eq!(
            attribute_names(" a=\"x > y=z\" b='q' c=w d "),
            ["a", "b", "c", "d"]
        );
        assert_eq!(attribute_names(""), Vec::<&str>::new());
        assert_eq!(attribute_names(" city = \"Paris\""), ["city"]);
    }

    #[test]
    fn tags() {
        let cases = [
            (
                "<a>",
                Tag::Open {
                    name: "a",
                    self_closing: false,
                    len: 3,
                },
            ),
            (
                "<get_weather/>",
                Tag::Open {
                    name: "get_weather",
                    self_closing: true,
                    len: 14,
                },
            ),
            (
                "<a x=\"1\">",
                Tag::Open {
                    name: "a",
                    self_closing: false,
                    len: 9,
                },
            ),
            (
                "<a />",
                Tag::Open {
                    name: "a",
                    self_closing: true,
                    len: 5,
                },
            ),
            ("</a >", Tag::Close { name: "a", len: 5 }),
            (
                "<weather.v2>",
                Tag::Open {
                    name: "weather.v2",
                    self_closing: false,
                    len: 12,
                },
            ),
            ("<![CDATA[x", Tag::CData(9)),
            ("<!--", Tag::Comment(4)),
            ("<![CD", Tag::Incomplete),
            ("<", Tag::Incomplete),
            ("</", Tag::Incomplete),
            ("<ab", Tag::Incomplete),
            ("<a b", Tag::Incomplete),
            ("< b", Tag::Text),
            ("<3", Tag::Text),
            ("</a b>", Tag::Text),
            ("<a<b>", Tag::Text),
            ("<a x<", Tag::Text),
            ("</ a>", Tag::Close { name: "a", len: 5 }),
            (
                "</  get_weather >",
                Tag::Close {
                    name: "get_weather",
                    len: 17,
                },
            ),
            ("</ ", Tag::Incomplete),
            ("</ 3", Tag::Text),
            (
                "<note data=\"a > b\">",
                Tag::Open {
                    name: "note",
                    self_closing: false,
                    len: 19,
                },
            ),
            (
                "<n a='<x>' b=\"y\"/>",
                Tag::Open {
                    name: "n",
                    self_closing: true,
                    len: 18,
                },
            ),
            ("<note data=\"a > b", Tag::Incomplete),
            ("<0>", Tag::Text),
        ];
        for (text, want) in cases {
            assert_eq!(parse_tag(text, 0), want, "{text}");
        }
    }

    #[test]
    fn fragments() {
        use serde_json::json;
        let cases = [
            ("42", json!("42")),
            ("  a &amp; b ", json!("  a & b ")),
            ("\n  indented\n\n", json!("  indented\n")),
            ("<0>a</0><1>b</1>", json!({"0":"a","1":"b"})),
            ("<x><10>c</10></x>", json!({"x":{"10":"c"}})),
            ("<1a>x</1a>", json!("<1a>x</1a>")),
            ("<![CDATA[a < b]]>", json!("a < b")),
            ("<min>10</min><max>20</max>", json!({"min":"10","max":"20"})),
            (
                "<item>1</item><item>2.5</item>",
                json!({"item":["1","2.5"]}),
            ),
            ("<a><b>x</b></a>", json!({"a":{"b":"x"}})),
            ("<a/><b></b>", json!({"a":"","b":""})),
            ("if a < b then", json!("if a < b then")),
            ("</stray> x", json!("</stray> x")),
            ("<open>never closed", json!({"open":"never closed"})),
            ("t <x>1</x>", json!({"x":"1","#text":"t"})),
            ("<!-- c -->v", json!("v")),
        ];
        for (text, want) in cases {
            assert_eq!(fragment_value(text), want, "{text}");
        }
        let deep = "<a>".repeat(10_000);
        let _ = fragment_value(&deep);
    }

    #[test]
    fn entity_scanning_looks_only_at_the_name() {
        assert_eq!(scan_entity("&lt;x"), Entity::Char('<', 4));
        assert_eq!(scan_entity("&#x41;"), Entity::Char('A', 6));
        assert_eq!(scan_entity("&bogus;"), Entity::Unknown(7));
        assert_eq!(scan_entity("&x&quot;"), Entity::Text);
        assert_eq!(scan_entity("& b"), Entity::Text);
        assert_eq!(scan_entity("&;"), Entity::Text);
        assert_eq!(scan_entity("&quo"), Entity::Incomplete);
        assert_eq!(scan_entity("&"), Entity::Incomplete);
        assert_eq!(scan_entity("&abcdefghijkl"), Entity::Text);
    }

    #[test]
    fn entities() {
        assert_eq!(
            decode_entities("&lt;b&gt; &amp; &quot;q&quot; &#65;&#x42; &bogus; & x"),
            "<b> & \"q\" AB &bogus; & x"
        );
        assert_eq!(escape_text("a<b&c>"), "a&lt;b&amp;c&gt;");
        assert_eq!(decode_entities(&escape_text("x < y && z")), "x < y && z");
    }
}
