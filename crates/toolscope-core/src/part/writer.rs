//! The one writer of the stream-part grammar.
//!
//! Whoever produces stream parts (a protocol's stream parser, the provider assembler) writes them
//! through a [`PartWriter`], which owns what the grammar requires: at most one text or reasoning
//! block open at a time (opening one closes the other), every block opened before its deltas and
//! closed once, a call's `tool-input-start` only outside a block, its `tool-input-end` before its
//! `tool-call`, and ids minted in one scheme (`text-1`, `reasoning-1`, `call-1`, counting from 1
//! within one answer; call ids continue after those a conversation already used, see
//! [`PartWriter::continue_calls_after`]). A provider's own call ids are used as given.

use compact_str::ToCompactString;
use serde_json::Value;

use super::{Delta, Part, PartId, ToolCall};

/// Where written parts go: a plain list of parts, or a list of run events.
pub trait PartSink {
    /// Appends one part.
    fn push_part(&mut self, part: Part);
}

impl PartSink for Vec<Part> {
    fn push_part(&mut self, part: Part) {
        self.push(part);
    }
}

/// Writes parts in the stream grammar; one per answer.
#[derive(Debug, Default)]
pub struct PartWriter {
    text: Option<PartId>,
    reasoning: Option<PartId>,
    texts: u32,
    reasonings: u32,
    calls: u32,
}

impl PartWriter {
    /// A writer with no block open and every count at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of the open text block, if one is open.
    pub fn text_id(&self) -> Option<&PartId> {
        self.text.as_ref()
    }

    /// The id of the open reasoning block, if one is open.
    pub fn reasoning_id(&self) -> Option<&PartId> {
        self.reasoning.as_ref()
    }

    /// The open text block's id, opening one (`text-start`, after closing an open reasoning
    /// block) when none is open.
    pub fn open_text(&mut self, out: &mut impl PartSink) -> PartId {
        if let Some(id) = &self.text {
            return id.clone();
        }
        self.close_reasoning(out);
        self.texts += 1;
        let id: PartId = compact_str::format_compact!("text-{}", self.texts);
        self.text = Some(id.clone());
        out.push_part(Part::TextStart { id: id.clone() });
        id
    }

    /// A piece of text, in the open text block (opened if needed). Empty text writes nothing.
    pub fn text(&mut self, delta: Delta, out: &mut impl PartSink) {
        if delta.is_empty() {
            return;
        }
        let id = self.open_text(out);
        out.push_part(Part::TextDelta { id, delta });
    }

    /// Closes the open text block, if any.
    pub fn close_text(&mut self, out: &mut impl PartSink) {
        if let Some(id) = self.text.take() {
            out.push_part(Part::TextEnd { id });
        }
    }

    /// The open reasoning block's id, opening one (after closing an open text block) when none
    /// is open.
    pub fn open_reasoning(&mut self, out: &mut impl PartSink) -> PartId {
        if let Some(id) = &self.reasoning {
            return id.clone();
        }
        self.close_text(out);
        self.reasonings += 1;
        let id: PartId = compact_str::format_compact!("reasoning-{}", self.reasonings);
        self.reasoning = Some(id.clone());
        out.push_part(Part::ReasoningStart {
            id: id.clone(),
            redacted: false,
        });
        id
    }

    /// A reasoning block whose text the provider withheld: opened marked redacted (after closing
    /// any open block), and left open so that its end can carry the provider's metadata.
    pub fn open_redacted_reasoning(&mut self, out: &mut impl PartSink) -> PartId {
        self.close_blocks(out);
        self.reasonings += 1;
        let id: PartId = compact_str::format_compact!("reasoning-{}", self.reasonings);
        self.reasoning = Some(id.clone());
        out.push_part(Part::ReasoningStart {
            id: id.clone(),
            redacted: true,
        });
        id
    }

    /// A piece of reasoning, in the open reasoning block (opened if needed).
    pub fn reasoning(&mut self, delta: Delta, out: &mut impl PartSink) {
        if delta.is_empty() {
            return;
        }
        let id = self.open_reasoning(out);
        out.push_part(Part::ReasoningDelta { id, delta });
    }

    /// Closes the open reasoning block, if any.
    pub fn close_reasoning(&mut self, out: &mut impl PartSink) {
        self.close_reasoning_with(None, out);
    }

    /// Closes the open reasoning block, if any, its end carrying what the provider needs back
    /// to continue after it (a signature, an item id).
    pub fn close_reasoning_with(
        &mut self,
        provider_metadata: Option<Value>,
        out: &mut impl PartSink,
    ) {
        if let Some(id) = self.reasoning.take() {
            out.push_part(Part::ReasoningEnd {
                id,
                provider_metadata: provider_metadata.map(Box::new),
            });
        }
    }

    /// Closes whichever block is open.
    pub fn close_blocks(&mut self, out: &mut impl PartSink) {
        self.close_text(out);
        self.close_reasoning(out);
    }

    /// Minted call ids continue after `call-{used}`: a later answer in a conversation does not
    /// reuse the ids of the calls before it.
    pub fn continue_calls_after(&mut self, used: u32) {
        self.calls = self.calls.max(used);
    }

    /// A new call id, `call-N`, for a call its source gave none.
    pub fn next_call_id(&mut self) -> PartId {
        self.calls += 1;
        // `ToCompactString` writes an integer's digits without the formatting machinery, which
        // cost more than the rest of a whole text's call around it.
        let mut id = PartId::const_new("call-");
        id.push_str(&self.calls.to_compact_string());
        id
    }

    /// A call begins: closes the open block and writes `tool-input-start`.
    pub fn start_call(&mut self, id: &PartId, tool_name: &str, out: &mut impl PartSink) {
        self.close_blocks(out);
        out.push_part(Part::ToolInputStart {
            id: id.clone(),
            tool_name: tool_name.to_string(),
        });
    }

    /// A piece of the call's input JSON. Empty deltas write nothing.
    pub fn input_delta(&mut self, id: &PartId, delta: Delta, out: &mut impl PartSink) {
        if !delta.is_empty() {
            out.push_part(Part::ToolInputDelta {
                id: id.clone(),
                delta,
            });
        }
    }

    /// The call is complete: `tool-input-end`, then the `tool-call`.
    pub fn end_call(&mut self, call: ToolCall, out: &mut impl PartSink) {
        out.push_part(Part::ToolInputEnd {
            id: call.tool_call_id.clone(),
        });
        out.push_part(Part::tool_call(call));
    }

    /// A call that was announced turned out malformed: its input ends, and no `tool-call`
    /// follows (the caller reports why).
    pub fn abort_call(&mut self, id: &PartId, out: &mut impl PartSink) {
        out.push_part(Part::ToolInputEnd { id: id.clone() });
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn call_ids_count_in_decimal() {
        let mut w = PartWriter::new();
        let ids: Vec<PartId> = (0..1001).map(|_| w.next_call_id()).collect();
        for (n, id) in [
            (1, "call-1"),
            (9, "call-9"),
            (10, "call-10"),
            (1001, "call-1001"),
        ] {
            assert_eq!(ids[n - 1], id);
        }
        w.calls = u32::MAX - 1;
        assert_eq!(w.next_call_id(), format!("call-{}", u32::MAX));
    }

    #[test]
    fn blocks_never_overlap_and_ids_count_from_one() {
        let mut w = PartWriter::new();
        let mut out: Vec<Part> = Vec::new();
        w.reasoning("think".into(), &mut out);
        w.text("a".into(), &mut out);
        w.text("".into(), &mut out);
        w.text("b".into(), &mut out);
        let id = w.next_call_id();
        w.start_call(&id, "f", &mut out);
        w.input_delta(&id, "{}".into(), &mut out);
        w.end_call(
            ToolCall {
                tool_call_id: id,
                tool_name: "f".into(),
                input: json!({}),
                coercions: vec![],
                invalid: vec![],
                ..Default::default()
            },
            &mut out,
        );
        w.reasoning("again".into(), &mut out);
        w.close_blocks(&mut out);
        let kinds: Vec<String> = out
            .iter()
            .map(|p| {
                let v = serde_json::to_value(p).unwrap();
                let id = v.get("id").or(v.get("toolCallId")).cloned();
                format!("{} {}", v["type"].as_str().unwrap(), id.unwrap_or_default())
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "reasoning-start \"reasoning-1\"",
                "reasoning-delta \"reasoning-1\"",
                "reasoning-end \"reasoning-1\"",
                "text-start \"text-1\"",
                "text-delta \"text-1\"",
                "text-delta \"text-1\"",
                "text-end \"text-1\"",
                "tool-input-start \"call-1\"",
                "tool-input-delta \"call-1\"",
                "tool-input-end \"call-1\"",
                "tool-call \"call-1\"",
                "reasoning-start \"reasoning-2\"",
                "reasoning-delta \"reasoning-2\"",
                "reasoning-end \"reasoning-2\"",
            ]
        );
    }
}
