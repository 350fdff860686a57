//! The formats whose call is an XML element named after the tool (`morph-xml`, `yaml-xml`):
//! prompted for any model with the framed prompt, results in a `<tool_response>` element, and
//! only a known tool's name opens a call. One implementation for the family; a member is one
//! table entry: its name, the markers its calls open with, how it writes a call and a broken
//! one, and the engine that reads it.

use serde_json::Value;

use crate::protocol::spec::{COMMON_END_TOKENS, Card, Protocol, ProtocolSpec, Reasoning, framed};
use crate::protocol::text::scanner::Scanner;
use crate::protocol::text::xml;
use crate::tool::ToolSet;

/// A member of the family.
pub(crate) struct Element {
    /// Its card ([`Element::card`]): the markers a call opens with, for `--protocol auto`, are
    /// its tool markers (around each tool's name).
    pub card: Card,
    /// A call written in the member's markup.
    pub format_call: fn(name: &str, input: &Value) -> String,
    /// The format section of the system prompt, given the example call.
    pub prompt_section: fn(example_name: &str, example: &Value) -> String,
    /// A call written wrong in a way no tolerance repairs.
    pub malformed_call: fn(name: &str, input: &Value) -> String,
    /// The engine that reads the member's calls.
    pub scanner: fn(ToolSet) -> Box<dyn Scanner>,
}

impl Element {
    /// The card of a member named `name` whose calls open with `tool_markers` around a tool's
    /// name: prompted for any model, so the end tokens of the common chat templates, and
    /// reasoning in `<think>`.
    pub(crate) const fn card(
        name: &'static str,
        tool_markers: &'static [(&'static str, &'static str)],
    ) -> Card {
        Card {
            end_tokens: COMMON_END_TOKENS,
            reasoning: Reasoning::THINK,
            tool_markers,
            ..Card::new(name, "any model, prompted")
        }
    }
}

/// A call as the members write it: the element named after the tool, `argument` writing each
/// argument inside it.
pub(crate) fn element_call(
    name: &str,
    input: &Value,
    argument: fn(&mut String, &str, &Value),
) -> String {
    let mut s = format!("<{name}>\n");
    if let Value::Object(args) = input {
        for (k, v) in args {
            argument(&mut s, k, v);
        }
    }
    s.push_str(&format!("</{name}>"));
    s
}

impl ProtocolSpec for Element {
    crate::protocol::spec::card_methods!();

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        framed(p, tools, self.prompt_section)
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        (self.format_call)(name, input)
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        xml::format_result(name, result)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        (self.scanner)(tools.clone())
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        (self.malformed_call)(name, input)
    }
}
