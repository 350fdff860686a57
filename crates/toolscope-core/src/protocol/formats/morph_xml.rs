//! `morph-xml`: one element per call, named after the tool, one child element per argument:
//! `<get_weather><city>Paris</city><days>3</days></get_weather>`.
//!
//! Only a known tool's name opens a call. A string argument is raw text up to its close tag
//! (HTML and a stray `<` inside are kept, entities decoded, CDATA unwrapped), byte-exact but for
//! the one newline after the open tag and the one before the close tag, and streams out as it
//! arrives; any other argument is read as an XML fragment and coerced whole. An argument's close
//! tag followed by an open tag that is neither an argument of the tool nor another call, or by
//! CDATA or a comment, is part of the value (a value that holds its own close tag); only that
//! undecided tail is held back. After the arguments, a repeat of an argument's close tag is
//! consumed and any other close tag (`</think>`) is the call's, written wrong: it closes the call.
//! A repeated element is an array when the schema allows one (or gives no schema) and a
//! malformed call otherwise. Arguments that may still repeat are held to the end of the call, and
//! everything after them with them, so the deltas stay a prefix of the final input. A call whose
//! close tag never comes ends after its last argument.
//!
//! A tool's element whose body is text, not argument elements (`<send_email>Hi Bob</send_email>`),
//! is a call when the schema leaves no doubt where the text goes (its only string argument, or
//! its only required one), reported as a coercion; otherwise, or when no close tag follows (a
//! mention of the tag in prose), the markup stays as text with an error part. A tool's close tag
//! with no call open is reported too: a known tool's tag never passes silently.
//!
//! Two ways of writing a call wrong are read as calls: the tool's name on a line of its own
//! (`get_weather` or `get_weather:`) followed by argument tags that its schema lists, with no
//! element around them (the call starts at the name and is reported as `missing-call-tag`), and
//! a tool's tag with spaces after its `<` (`< get_location/>`).

use serde_json::Value;

use super::element::{Element, element_call};
use crate::protocol::scan::morph::MorphScanner;
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::xml;

/// `morph-xml`.
pub(crate) static MORPH_XML: Element = Element {
    // The tool's element and an argument's, or the tool's element empty.
    card: Element::card("morph-xml", &[("<", "> <"), ("<", "/>")]),
    format_call,
    prompt_section,
    malformed_call,
    scanner: |tools| Box::new(MorphScanner::new(tools)),
};

/// Stray markup inside a string argument is kept as text, so the break is an argument given
/// twice although its schema is not an array.
fn malformed_call(name: &str, input: &Value) -> String {
    let scalar = input.as_object().and_then(|args| {
        args.iter().find_map(|(k, v)| match v {
            Value::String(s) => Some((k.clone(), s.clone())),
            Value::Number(_) | Value::Bool(_) => Some((k.clone(), v.to_string())),
            _ => None,
        })
    });
    match scalar {
        Some((k, v)) => format!("<{name}><{k}>{v}</{k}><{k}>{v}</{k}></{name}>"),
        None => {
            let (key, value) = first_argument(input);
            format!("<{name}><{key}>{value}</{key}>\n<{name}>")
        }
    }
}

/// A past call as morph-xml markup.
pub(crate) fn format_call(name: &str, input: &Value) -> String {
    element_call(name, input, |s, k, v| write_element(s, k, v, 0))
}

fn write_element(s: &mut String, name: &str, v: &Value, depth: usize) {
    match v {
        Value::Array(items) => {
            for item in items {
                write_element(s, name, item, depth);
            }
        }
        Value::Object(map) if depth < 8 => {
            s.push_str(&format!("<{name}>\n"));
            for (k, v) in map {
                write_element(s, k, v, depth + 1);
            }
            s.push_str(&format!("</{name}>\n"));
        }
        Value::String(text) => {
            s.push_str(&format!("<{name}>{}</{name}>\n", xml::element_text(text)))
        }
        other => s.push_str(&format!(
            "<{name}>{}</{name}>\n",
            xml::escape_text(&other.to_string())
        )),
    }
}

/// The format section of the system prompt.
pub(crate) fn prompt_section(example_name: &str, example: &Value) -> String {
    format!(
        "To call a tool, write an XML element named after the tool, with one child element per argument, named \
         after the argument:\n<tool_name>\n<argument_name>value</argument_name>\n</tool_name>\n\n\
         For example:\n{}\n\n\
         Write text values as they are (escape & and < as &amp; and &lt;, or wrap the text in <![CDATA[ ]]>). \
         For an array, repeat the element once per item; for an object, nest one element per property. \
         Write one element per call. Results come back in a <tool_response> element.\n",
        format_call(example_name, example)
    )
}

#[cfg(test)]
mod tests {
    use crate::protocol::tests_support::prelude::*;
    /// A call written as the tool's name on a line of its own, its argument tags below: the
    /// call's span starts at the name. (The parses: the case file.)
    #[test]
    fn a_tool_name_on_its_own_line_starts_the_span() {
        let tools = one_tool(
            "get_weather",
            json!({"type":"object","properties":{"city":{"type":"string"}}}),
        );
        let text = "Sure.\nget_weather\n<city>Seoul</city>";
        let p = Protocol::from_name("morph-xml").unwrap();
        let parsed = p.parse_generated(&tools, text.as_bytes());
        let span = parsed
            .spans
            .iter()
            .find(|s| s.kind == crate::protocol::SpanKind::ToolCall);
        assert_eq!(
            span.map(|s| &text[s.start..s.end]),
            Some("get_weather\n<city>Seoul</city>")
        );
    }
}
