//! The parts of a run as the Parts pane lists them.
//!
//! Every part is kept as parsed. For display, consecutive deltas of the same block (the
//! `text-delta`s of one text, the `tool-input-delta`s of one call) share one row whose summary
//! grows as they arrive: this is how arguments are seen growing live, and why a 100,000-part run
//! is still a list one can read. Rows are built as parts arrive (constant work per part), so
//! drawing only reads the rows that are visible.

use serde_json::Value;

use toolscope_core::part::{Part, PartId, ToolCall};

/// The most bytes of joined deltas the detail view shows.
pub const DETAIL_LIMIT: usize = 8 * 1024;

/// One row of the Parts pane: one part, or a run of deltas of the same block.
#[derive(Clone, Debug, PartialEq)]
pub struct PartRow {
    /// The part type name (`text-delta`, `tool-call`, …).
    pub label: &'static str,
    /// Index of the first part of the row in [`PartList::parts`].
    pub first: usize,
    /// How many parts the row stands for.
    pub count: usize,
    /// What the row says: the deltas joined, a call's name and input, an error message, …
    pub summary: String,
    pub marks: Marks,
}

/// What deserves attention in a part.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// Coercions applied to a call's arguments.
    pub coerced: usize,
    /// JSON Schema violations left after coercion.
    pub invalid: usize,
    /// An `error` part.
    pub error: bool,
    /// A `warning` part: a finding of the stream lint.
    pub warning: bool,
}

#[derive(Clone, Debug, Default)]
pub struct PartList {
    pub parts: Vec<Part>,
    pub rows: Vec<PartRow>,
    /// Indices of the `tool-call` parts, so that counting and listing calls does not walk all
    /// the parts on every frame.
    calls: Vec<usize>,
    /// Bytes of answer text so far.
    text_bytes: usize,
    /// Block id of the last row, when it is a run of deltas (the next delta of that block joins).
    open_delta: Option<PartId>,
}

impl PartList {
    pub fn push(&mut self, part: Part) {
        let index = self.parts.len();
        let label = part.type_name();
        match &part {
            Part::ToolCall(_) => self.calls.push(index),
            Part::TextDelta { delta, .. } => self.text_bytes += delta.len(),
            Part::Text { text } => self.text_bytes += text.len(),
            _ => {}
        }
        let delta = match &part {
            Part::TextDelta { id, delta }
            | Part::ReasoningDelta { id, delta }
            | Part::ToolInputDelta { id, delta } => Some((id.clone(), delta.as_str())),
            _ => None,
        };
        match delta {
            Some((id, text)) => {
                let joins = self.open_delta.as_ref() == Some(&id)
                    && self.rows.last().is_some_and(|r| r.label == label);
                if joins {
                    let row = self.rows.last_mut().expect("checked above");
                    row.count += 1;
                    row.summary.push_str(text);
                } else {
                    self.rows.push(PartRow {
                        label,
                        first: index,
                        count: 1,
                        summary: text.to_string(),
                        marks: Marks::default(),
                    });
                    self.open_delta = Some(id);
                }
            }
            None => {
                self.rows.push(PartRow {
                    label,
                    first: index,
                    count: 1,
                    summary: summary(&part),
                    marks: marks(&part),
                });
                self.open_delta = None;
            }
        }
        self.parts.push(part);
    }

    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// What the Parts pane's filter matches for each row: its type (the letters marked) and the
    /// name of the tool it belongs to, if any (a delta of a call's input is of its tool).
    pub fn filter_items(&self) -> Vec<(String, usize)> {
        let mut tools: std::collections::HashMap<&PartId, &str> = Default::default();
        self.rows
            .iter()
            .map(|row| {
                let mut tool = "";
                for part in &self.parts[row.first..row.first + row.count] {
                    match part {
                        Part::ToolInputStart { id, tool_name, .. } => {
                            tools.insert(id, tool_name.as_str());
                            tool = tool_name;
                        }
                        Part::ToolInputDelta { id, .. } | Part::ToolInputEnd { id, .. } => {
                            tool = tools.get(id).copied().unwrap_or(tool);
                        }
                        Part::ToolCall(c) => tool = &c.tool_name,
                        Part::ToolResult(r) => tool = &r.tool_name,
                        _ => {}
                    }
                }
                (format!("{} {tool}", row.label), row.label.chars().count())
            })
            .collect()
    }

    /// The parts of row `i`.
    pub fn parts_of(&self, i: usize) -> &[Part] {
        match self.rows.get(i) {
            Some(r) => &self.parts[r.first..r.first + r.count],
            None => &[],
        }
    }

    /// The JSON of row `i` as the detail view shows it: the part itself, or for a run of deltas
    /// one part holding all of them joined.
    pub fn detail_json(&self, i: usize) -> String {
        let parts = self.parts_of(i);
        let value = match parts {
            [] => return String::new(),
            [one] => serde_json::to_value(one).unwrap_or(Value::Null),
            [first, ..] => {
                let mut v = serde_json::to_value(first).unwrap_or(Value::Null);
                if let Some(obj) = v.as_object_mut() {
                    let joined = &self.rows[i].summary;
                    // The detail view shows the start of a huge block; a copy gets all of it.
                    let shown = if joined.len() > DETAIL_LIMIT {
                        let mut cut = DETAIL_LIMIT;
                        while !joined.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        format!("{}… ({} bytes in all)", &joined[..cut], joined.len())
                    } else {
                        joined.clone()
                    };
                    obj.insert("delta".into(), Value::String(shown));
                }
                v
            }
        };
        serde_json::to_string_pretty(&value).unwrap_or_default()
    }

    /// Row `i` as JSON lines, one per part (what a copy puts on the clipboard).
    pub fn jsonl(&self, i: usize) -> String {
        let mut out = String::new();
        for p in self.parts_of(i) {
            out.push_str(&p.to_json_line());
            out.push('\n');
        }
        out
    }

    /// The finished tool calls, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.calls.iter().filter_map(|&i| match &self.parts[i] {
            Part::ToolCall(c) => Some(c.as_ref()),
            _ => None,
        })
    }

    pub fn call_count(&self) -> usize {
        self.calls.len()
    }

    /// Whether any answer text arrived.
    pub fn has_text(&self) -> bool {
        self.text_bytes > 0
    }

    /// The answer text (the text deltas, joined).
    /// The end of [`PartList::text`]: its last `max_bytes` bytes or a little more (cut at a
    /// character boundary), and whether anything before them was left out. Its cost follows the
    /// tail, not the whole text, so a streaming answer can be shown every frame.
    pub fn text_tail(&self, max_bytes: usize) -> (String, bool) {
        let mut pieces: Vec<&str> = Vec::new();
        let mut len = 0;
        let mut cut = false;
        for p in self.parts.iter().rev() {
            let t = match p {
                Part::TextDelta { delta, .. } => delta.as_str(),
                Part::Text { text } => text.as_str(),
                _ => continue,
            };
            if t.is_empty() {
                continue;
            }
            if len >= max_bytes {
                cut = true;
                break;
            }
            len += t.len();
            pieces.push(t);
        }
        let mut out: String = pieces.into_iter().rev().collect();
        if out.len() > max_bytes {
            let mut from = out.len() - max_bytes;
            while !out.is_char_boundary(from) {
                from += 1;
            }
            out.drain(..from);
            cut = true;
        }
        (out, cut)
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::TextDelta { delta, .. } => out.push_str(delta),
                Part::Text { text } => out.push_str(text),
                _ => {}
            }
        }
        out
    }
}

/// A call's input as `name(key=value, …)`, values as compact JSON (strings unquoted when short
/// and plain).
pub fn call_summary(name: &str, input: &Value) -> String {
    let args = match input.as_object() {
        Some(obj) => obj
            .iter()
            .map(|(k, v)| format!("{k}={}", short_value(v)))
            .collect::<Vec<_>>()
            .join(", "),
        None => input.to_string(),
    };
    format!("{name}({args})")
}

fn short_value(v: &Value) -> String {
    match v {
        Value::String(s) if s.len() <= 40 && !s.contains([',', '(', ')', '=', '\n']) => s.clone(),
        other => other.to_string(),
    }
}

fn summary(part: &Part) -> String {
    match part {
        Part::Text { text } | Part::Reasoning { text } => text.clone(),
        Part::ReasoningStart { id, redacted: true } => format!("#{id} redacted by the provider"),
        Part::TextStart { id } | Part::ReasoningStart { id, .. } => format!("#{id}"),
        Part::TextEnd { id } | Part::ReasoningEnd { id, .. } | Part::ToolInputEnd { id } => {
            format!("#{id}")
        }
        Part::ToolInputStart { id, tool_name } => format!("{tool_name} #{id}"),
        Part::ToolCall(c) => {
            // A server tool's call says so first: it is not the client's to answer.
            let server = if c.provider_executed {
                "run by the provider: "
            } else {
                ""
            };
            format!(
                "{server}{} #{}",
                call_summary(&c.tool_name, &c.input),
                c.tool_call_id
            )
        }
        Part::ToolResult(r) => {
            let failed = if r.is_error { " failed:" } else { "" };
            format!("{} ⇐{failed} {} #{}", r.tool_name, r.output, r.tool_call_id)
        }
        Part::Source(src) => match (&src.url, &src.title) {
            (Some(url), Some(title)) => format!("{title} <{url}>"),
            (Some(url), None) => url.clone(),
            (None, title) => title.clone().unwrap_or_default(),
        },
        Part::Refusal { text } => text.clone(),
        Part::Warning(w) => format!("{}: {}", w.code, w.message),
        Part::Finish {
            finish_reason,
            usage,
        } => {
            let mut s = finish_reason.as_str().to_string();
            if let Some(u) = usage {
                s.push_str(&usage_text(u));
            }
            s
        }
        Part::Error(e) => {
            let kind = e.kind().unwrap_or("");
            if kind.is_empty() {
                e.message.clone()
            } else {
                format!("{kind}: {}", e.message)
            }
        }
        other => other.to_json_line(),
    }
}

/// ` · in 12 · out 34` for the token counts present.
pub fn usage_text(u: &toolscope_core::part::Usage) -> String {
    let mut s = String::new();
    if let Some(n) = u.input_tokens {
        s.push_str(&format!(" · in {n}"));
    }
    if let Some(n) = u.cached_input_tokens.filter(|n| *n > 0) {
        s.push_str(&format!(" ({n} cached)"));
    }
    if let Some(n) = u.output_tokens {
        s.push_str(&format!(" · out {n}"));
    }
    if let Some(n) = u.reasoning_tokens.filter(|n| *n > 0) {
        s.push_str(&format!(" ({n} reasoning)"));
    }
    s
}

fn marks(part: &Part) -> Marks {
    match part {
        Part::ToolCall(c) => Marks {
            coerced: c.coercions.len(),
            invalid: c.invalid.len(),
            ..Marks::default()
        },
        Part::Error(_) | Part::Refusal { .. } => Marks {
            error: true,
            ..Marks::default()
        },
        Part::Warning(_) => Marks {
            warning: true,
            ..Marks::default()
        },
        _ => Marks::default(),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_tail_of_the_text_is_its_end_and_says_when_it_is_cut() {
        let mut list = PartList::default();
        for piece in ["Héllo", "", " wörld", ", and more"] {
            list.push(Part::TextDelta {
                id: "t".into(),
                delta: piece.into(),
            });
        }
        let whole = list.text();
        assert_eq!(list.text_tail(1000), (whole.clone(), false));
        for max in 0..whole.len() {
            let (tail, cut) = list.text_tail(max);
            assert!(whole.ends_with(&tail), "{max}: {tail:?}");
            assert!(cut, "{max}");
            assert!(tail.len() <= max + 3, "{max}: {tail:?}");
        }
        assert_eq!(list.text_tail(whole.len()), (whole, false));
    }

    use super::*;
    use serde_json::json;
    use toolscope_core::part::{Coercion, FinishReason};

    fn id(s: &str) -> PartId {
        s.into()
    }

    #[test]
    fn deltas_of_one_block_share_a_growing_row() {
        let mut l = PartList::default();
        l.push(Part::ToolInputStart {
            id: id("c1"),
            tool_name: "get_weather".into(),
        });
        for d in ["{\"city\"", ":\"Paris\"", "}"] {
            l.push(Part::ToolInputDelta {
                id: id("c1"),
                delta: d.into(),
            });
        }
        l.push(Part::ToolInputEnd { id: id("c1") });
        l.push(Part::tool_call(ToolCall {
            tool_call_id: id("c1"),
            tool_name: "get_weather".into(),
            input: json!({"city": "Paris", "days": 3}),
            coercions: vec![Coercion {
                path: "/days".into(),
                from: json!("3"),
                to: json!(3),
            }],
            invalid: vec![],
            ..Default::default()
        }));
        l.push(Part::Finish {
            finish_reason: FinishReason::ToolCalls,
            usage: None,
        });
        let labels: Vec<_> = l.rows.iter().map(|r| (r.label, r.count)).collect();
        assert_eq!(
            labels,
            [
                ("tool-input-start", 1),
                ("tool-input-delta", 3),
                ("tool-input-end", 1),
                ("tool-call", 1),
                ("finish", 1)
            ]
        );
        assert_eq!(l.rows[1].summary, "{\"city\":\"Paris\"}");
        assert_eq!(l.rows[3].summary, "get_weather(city=Paris, days=3) #c1");
        assert_eq!(l.rows[3].marks.coerced, 1);
        assert!(
            l.detail_json(1)
                .contains("\"delta\": \"{\\\"city\\\":\\\"Paris\\\"}\"")
        );
        assert_eq!(l.jsonl(1).lines().count(), 3);
        assert_eq!(l.tool_calls().count(), 1);
    }

    #[test]
    fn deltas_of_different_blocks_do_not_join() {
        let mut l = PartList::default();
        for i in ["a", "b", "a"] {
            l.push(Part::TextDelta {
                id: id(i),
                delta: "x".into(),
            });
        }
        assert_eq!(l.rows.len(), 3);
        assert_eq!(l.text(), "xxx");
    }
}
