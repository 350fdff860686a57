//! `--protocol auto`: which protocol an output is written in, from the first marker it shows.
//!
//! Every protocol of the registry declares its call markers ([`ProtocolSpec::markers`], some of
//! them built from the tools' names) and, through its reasoning markers, what its reasoning looks
//! like. The detector reads the output from the start and stops at the first marker of any
//! protocol:
//!
//! - A call marker decides. Where several markers match at the same place the longest wins, so a
//!   marker that spells out what follows (`<tool_call>` then `<function=` for qwen3-coder, then
//!   `{` for hermes) tells formats that share a start apart. A marker several protocols declare
//!   goes to the first of them in registry order, and the reason says so.
//! - A reasoning marker that one protocol uses decides too (`[THINK]`, `<|START_THINKING|>`).
//!   One that several use (`<think>`) only narrows the choice to them: the next call marker
//!   decides among them (or, if it belongs to none of them, on its own). A close marker with no
//!   reasoning marker before it (`…</think>`: the output started inside reasoning) narrows to
//!   the protocols whose template opens the reasoning itself, where there are any.
//! - A call marker inside reasoning (after a reasoning open marker, before its close) goes to
//!   the protocols whose calls count there, when some of its owners are such (`<think>` then
//!   `<tool_call> {` is Arcee Trinity's, not hermes').
//! - Without any call marker, the output is read with the first protocol the reasoning markers
//!   left, or with the first of the registry when there was no marker at all (the output is then
//!   plain text in every protocol).
//!
//! In a pattern, a space stands for any run of whitespace, none included (`<tool_call> {`).
//! Detection looks at each byte a bounded number of times: it is linear in the output.
//!
//! [`ProtocolSpec::markers`]: super::spec::ProtocolSpec::markers

use super::REGISTRY;
use super::spec::Protocol;
use super::text::fences::{Match, match_at};
use crate::part::Part;
use crate::tool::ToolSet;

/// The reason given when no marker of any protocol was found.
pub(crate) const PLAIN_TEXT: &str = "no call or reasoning marker of any protocol: the output is plain text, read as the first protocol";

/// The reason when no marker chose the protocol but it read calls all the same (JSON
/// envelopes, bare or in a fence): what was found, not that the output is plain text.
pub(crate) fn found_without_marker(protocol: &Protocol, calls: usize) -> String {
    format!(
        "no call or reasoning marker of any protocol; {} read {calls} call{} from JSON envelopes \
         (bare or fenced) naming a tool",
        protocol.name(),
        if calls == 1 { "" } else { "s" }
    )
}

/// The protocol detection chose, and why, in words for a status line.
#[derive(Clone, Debug)]
pub struct Detected {
    /// The protocol, with its default settings.
    pub protocol: Protocol,
    /// Which marker chose it, where, and how a tie was broken.
    pub reason: String,
}

struct Entry {
    /// The pattern's literal pieces; whitespace may separate them.
    pieces: Vec<Vec<u8>>,
    /// The protocols that declare it, as registry indices in registry order.
    owners: Vec<usize>,
    reasoning: bool,
    /// A reasoning marker that opens reasoning (else it closes it).
    opens: bool,
    /// The owners for which this is the close of a reasoning block their output starts inside.
    inside: Vec<usize>,
    /// A call marker that begins with a reasoning close (`</think> <tool_call> {`): it tells an
    /// output that started inside reasoning, so it does not count after an open marker.
    after_close: bool,
}

/// Reads an output, whole or as it arrives, until it knows the protocol.
pub struct Detector {
    entries: Vec<Entry>,
    first: [bool; 256],
    buf: Vec<u8>,
    /// Where the next marker may start.
    from: usize,
    /// The protocols a shared reasoning marker left, and that marker.
    narrowed: Option<(Vec<usize>, String)>,
    /// The last reasoning marker found opened reasoning.
    in_reasoning: bool,
    /// A reasoning open marker was seen (the output did not start inside reasoning).
    opened: bool,
    decided: Option<Detected>,
}

impl Detector {
    /// A detector for outputs that call these tools (markup named after the tools, as in
    /// morph-xml, can only be recognised for them).
    pub fn new(tools: &ToolSet) -> Self {
        let mut entries: Vec<Entry> = Vec::new();
        let mut add = |pattern: &str, owner: usize, reasoning: bool, opens: bool, inside: bool| {
            let pieces: Vec<Vec<u8>> = pattern
                .split(' ')
                .filter(|p| !p.is_empty())
                .map(|p| p.as_bytes().to_vec())
                .collect();
            if pieces.is_empty() {
                return;
            }
            let e = match entries
                .iter_mut()
                .position(|e| e.pieces == pieces && e.reasoning == reasoning && e.opens == opens)
            {
                Some(k) => &mut entries[k],
                None => {
                    entries.push(Entry {
                        pieces,
                        owners: Vec::new(),
                        reasoning,
                        opens,
                        inside: Vec::new(),
                        after_close: false,
                    });
                    entries.last_mut().expect("just pushed")
                }
            };
            if !e.owners.contains(&owner) {
                e.owners.push(owner);
            }
            if inside && !e.inside.contains(&owner) {
                e.inside.push(owner);
            }
        };
        for (i, spec) in REGISTRY.iter().enumerate() {
            for m in spec.markers(tools) {
                add(&m, i, false, false, false);
            }
            let r = spec.reasoning();
            if let Some((open, close)) = r.markers {
                add(open, i, true, true, false);
                add(close, i, true, false, r.starts_inside);
            }
        }
        let closes: Vec<Vec<Vec<u8>>> = entries
            .iter()
            .filter(|e| e.reasoning && !e.opens)
            .map(|e| e.pieces.clone())
            .collect();
        for e in entries.iter_mut().filter(|e| !e.reasoning) {
            e.after_close = closes
                .iter()
                .any(|c| c.len() < e.pieces.len() && e.pieces[..c.len()] == c[..]);
        }
        let mut first = [false; 256];
        for e in &entries {
            first[e.pieces[0][0] as usize] = true;
        }
        Detector {
            entries,
            first,
            buf: Vec::new(),
            from: 0,
            narrowed: None,
            in_reasoning: false,
            opened: false,
            decided: None,
        }
    }

    /// Reads the next bytes; the choice, once there is one (and every time after).
    pub fn push(&mut self, bytes: &[u8]) -> Option<&Detected> {
        if self.decided.is_none() {
            self.buf.extend_from_slice(bytes);
            self.scan(false);
        }
        self.decided.as_ref()
    }

    /// The output is over: the choice, made now if no marker made it before.
    pub fn finish(&mut self) -> Detected {
        if self.decided.is_none() {
            self.scan(true);
        }
        if let Some(d) = &self.decided {
            return d.clone();
        }
        let (index, reason) = match &self.narrowed {
            Some((owners, marker)) => (
                owners[0],
                format!(
                    "no call marker; the reasoning marker {} is used by {}: read as the first of them",
                    shown(marker),
                    names(owners)
                ),
            ),
            None => (0, PLAIN_TEXT.to_string()),
        };
        let d = Detected {
            protocol: Protocol::of(REGISTRY[index]),
            reason,
        };
        self.decided = Some(d.clone());
        d
    }

    fn scan(&mut self, at_end: bool) {
        while self.from < self.buf.len() && self.decided.is_none() {
            let p = self.from;
            if !self.first[self.buf[p] as usize] {
                self.from += 1;
                continue;
            }
            let mut best: Option<(usize, usize)> = None;
            let mut partial = false;
            for (idx, e) in self.entries.iter().enumerate() {
                if e.after_close && self.opened {
                    continue;
                }
                match match_at(&self.buf, p, &e.pieces, at_end) {
                    Match::Full(len) if best.is_none_or(|(l, _)| len > l) => {
                        best = Some((len, idx));
                    }
                    Match::Partial => partial = true,
                    _ => {}
                }
            }
            if partial {
                // A marker (maybe a longer one) may still start here.
                return;
            }
            let Some((len, idx)) = best else {
                self.from += 1;
                continue;
            };
            self.from = p + len;
            let marker = String::from_utf8_lossy(&self.buf[p..p + len]).into_owned();
            self.found(idx, p, marker);
        }
    }

    fn found(&mut self, idx: usize, at: usize, marker: String) {
        let e = &self.entries[idx];
        let within: Vec<usize> = match &self.narrowed {
            Some((left, _)) => e
                .owners
                .iter()
                .copied()
                .filter(|o| left.contains(o))
                .collect(),
            // A close before any open: the output started inside reasoning.
            None if e.reasoning && !e.inside.is_empty() => e.inside.clone(),
            None => e.owners.clone(),
        };
        if e.reasoning {
            self.in_reasoning = e.opens;
            self.opened |= e.opens;
            match within.len() {
                0 => {}
                1 => {
                    self.decide(
                        within[0],
                        format!("the reasoning marker {} at byte {at}", shown(&marker)),
                    );
                }
                _ => self.narrowed = Some((within, marker)),
            }
            return;
        }
        let mut owners = if within.is_empty() {
            e.owners.clone()
        } else {
            within
        };
        let mut inside = "";
        if self.in_reasoning {
            let counted: Vec<usize> = owners
                .iter()
                .copied()
                .filter(|&o| REGISTRY[o].reasoning().calls_inside)
                .collect();
            if !counted.is_empty() && counted.len() < owners.len() {
                owners = counted;
                inside = " inside reasoning, where only its calls count";
            }
        }
        let reason = if owners.len() == 1 {
            format!("the call marker {} at byte {at}{inside}", shown(&marker))
        } else {
            format!(
                "the call marker {} at byte {at}, which {} all read: the first of them",
                shown(&marker),
                names(&owners)
            )
        };
        self.decide(owners[0], reason);
    }

    fn decide(&mut self, index: usize, reason: String) {
        self.decided = Some(Detected {
            protocol: Protocol::of(REGISTRY[index]),
            reason,
        });
    }
}

impl Protocol {
    /// Recognises a system prompt made by [`Protocol::system_prompt`] of any protocol: which
    /// protocol and which tools (used by a simulated model, which only sees the wire request).
    pub fn detect_from_prompt(system: &str) -> Option<(Protocol, ToolSet)> {
        REGISTRY.iter().find_map(|s| s.read_prompt(system))
    }

    /// `--protocol auto` on a whole output: the protocol its first marker identifies, and why
    /// (see [`Detector`] for the rules).
    pub fn detect(tools: &ToolSet, text: &[u8]) -> Detected {
        let mut d = detect(tools, text);
        if d.reason == PLAIN_TEXT {
            let calls = d.protocol.stream_parser(tools).parse_whole(text).parts;
            let calls = calls
                .iter()
                .filter(|p| matches!(p, Part::ToolCall(_)))
                .count();
            if calls > 0 {
                d.reason = found_without_marker(&d.protocol, calls);
            }
        }
        d
    }
}

/// Call markup found in a text: where, and the marker as written there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallMarker {
    /// The byte offset of the marker in the text.
    pub at: usize,
    /// The marker as the text has it.
    pub marker: String,
    /// The protocol that declares it (the first in registry order).
    pub protocol: &'static str,
}

/// The first call marker of any registered protocol in `text` (reasoning markers are not call
/// markup): what the stream lint looks for in answer text and reasoning that should hold none.
pub fn find_call_marker(tools: &ToolSet, text: &str) -> Option<CallMarker> {
    let d = Detector::new(tools);
    let buf = text.as_bytes();
    for p in 0..buf.len() {
        if !d.first[buf[p] as usize] {
            continue;
        }
        let best = d
            .entries
            .iter()
            .filter(|e| !e.reasoning)
            .filter_map(|e| match match_at(buf, p, &e.pieces, true) {
                Match::Full(len) => Some((len, e)),
                _ => None,
            })
            .max_by_key(|(len, _)| *len);
        if let Some((len, e)) = best {
            return Some(CallMarker {
                at: p,
                marker: String::from_utf8_lossy(&buf[p..p + len]).into_owned(),
                protocol: REGISTRY[e.owners[0]].name(),
            });
        }
    }
    None
}

/// The choice for a whole output.
pub(super) fn detect(tools: &ToolSet, text: &[u8]) -> Detected {
    let mut d = Detector::new(tools);
    d.push(text);
    d.finish()
}

fn shown(marker: &str) -> String {
    format!("{marker:?}")
}

fn names(owners: &[usize]) -> String {
    owners
        .iter()
        .map(|&o| REGISTRY[o].name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::tools;

    fn pick(text: &str) -> String {
        detect(&tools(), text.as_bytes())
            .protocol
            .name()
            .to_string()
    }

    #[test]
    fn every_protocol_declares_call_markers() {
        for spec in REGISTRY {
            assert!(!spec.markers(&tools()).is_empty(), "{}", spec.name());
        }
    }

    #[test]
    fn what_follows_a_shared_start_tells_formats_apart() {
        assert_eq!(
            pick("Sure.\n<tool_call>\n{\"name\": \"get_weather\"}"),
            "hermes"
        );
        assert_eq!(
            pick("<tool_call>\n<function=get_weather>\n<parameter=city>\nP\n</parameter>"),
            "qwen3-coder"
        );
        assert_eq!(
            pick("<get_weather>\n<city>Paris</city>\n</get_weather>"),
            "morph-xml"
        );
        assert_eq!(
            pick("<get_weather>\ncity: Paris\n</get_weather>"),
            "yaml-xml"
        );
        assert_eq!(
            pick("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather"),
            "deepseek-v3"
        );
        assert_eq!(
            pick("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{}"),
            "deepseek-v3.1"
        );
    }

    /// The shape of the markup tells the family, not the names of the tools offered: a GLM
    /// call to a tool the list does not hold is still GLM (and not hermes, whose `<tool_call>`
    /// it shares).
    #[test]
    fn the_shape_decides_whatever_the_tool_name() {
        assert_eq!(
            pick(
                "<tool_call>any_name\n<arg_key>k</arg_key>\n<arg_value>v</arg_value>\n</tool_call>"
            ),
            "glm-4.5"
        );
        assert_eq!(
            pick("<tool_call>weather.v2<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>"),
            "glm-4.7"
        );
        let none = ToolSet::empty();
        let d = detect(&none, b"<tool_call>f\n<arg_key>k</arg_key>");
        assert_eq!(d.protocol.name(), "glm-4.5", "{}", d.reason);
    }

    #[test]
    fn a_close_before_any_open_narrows_to_the_families_that_start_inside() {
        assert_eq!(
            pick(
                "The user wants Paris.\n</think>\nOn it.\n<tool_call>\n{\"name\": \"get_weather\"}"
            ),
            "ernie"
        );
        assert_eq!(
            pick("<think>hm</think>\nOn it.\n<tool_call>\n{\"name\": \"get_weather\"}"),
            "hermes"
        );
    }

    #[test]
    fn a_shared_reasoning_marker_narrows_and_a_call_marker_decides() {
        assert_eq!(pick("<think>hm</think><TOOLCALL>[]"), "nemotron");
        assert_eq!(
            pick("<think>hm</think>[TOOL_CALLS]get_weather[ARGS]{}"),
            "mistral"
        );
        let d = detect(&tools(), b"<think>only thinking</think> and text");
        assert_eq!(d.protocol.name(), "hermes");
        assert!(d.reason.contains("used by hermes"), "{}", d.reason);
        assert_eq!(pick("[THINK]x[/THINK]done"), "mistral");
        let d = detect(&tools(), b"plain words, no markup");
        assert!(d.reason.contains("plain text"), "{}", d.reason);
    }

    #[test]
    fn a_marker_several_protocols_declare_goes_to_the_first_and_says_so() {
        let d = detect(&tools(), b"[TOOL_CALLS][{\"name\": \"get_weather\"}]");
        assert_eq!(d.protocol.name(), "mistral");
        assert!(d.reason.contains("mistral, xlam"), "{}", d.reason);
    }

    #[test]
    fn streamed_in_any_pieces_the_choice_is_the_same() {
        let texts = [
            "Let me see.\n<tool_call>\n<function=get_weather>\n",
            "<think>a</think>\n<get_weather>\n<city>P</city></get_weather>",
            "x <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{}",
        ];
        for text in texts {
            let whole = pick(text);
            for cut in 0..=text.len() {
                let mut d = Detector::new(&tools());
                d.push(&text.as_bytes()[..cut]);
                d.push(&text.as_bytes()[cut..]);
                assert_eq!(d.finish().protocol.name(), whole, "{text:?} cut at {cut}");
            }
            let mut d = Detector::new(&tools());
            let mut early = None;
            for b in text.as_bytes() {
                if let Some(x) = d.push(std::slice::from_ref(b)) {
                    early.get_or_insert(x.protocol.name());
                }
            }
            assert_eq!(d.finish().protocol.name(), whole, "{text:?} byte by byte");
            if let Some(e) = early {
                assert_eq!(e, whole, "{text:?}: decided early");
            }
        }
    }
}
