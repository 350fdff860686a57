//! `yaml-xml`: the arguments as a YAML mapping inside an element named after the tool:
//! `<get_weather>\ncity: Paris\ndays: 3\n</get_weather>`.
//!
//! Only a known tool's name opens a call. The body is read to the call's close tag and parsed
//! whole there. Plain YAML scalars are kept as the strings they were written as and typed by
//! coercion against the schema (so `city: 007` stays `"007"` for a string and `days: 3` becomes
//! `3` for an integer), which is what YAML's own typing cannot know. The Gemma-style form with
//! the mapping inside the open tag itself (`<get_weather\ncity: Paris\n/>`) is read too; a body
//! that is not a mapping is a malformed call, kept as text. Attributes on the open tag are read
//! past, a `>` in their quoted values included; they are not arguments in this format, so an
//! attribute named like an argument keeps the tag as text with an error part.

use serde_json::Value;

use super::element::{Element, element_call};
use crate::protocol::scan::yaml::YamlScanner;
use crate::protocol::text::prompt::first_argument;

/// `yaml-xml`.
pub(crate) static YAML_XML: Element = Element {
    card: Element::card("yaml-xml", &[("<", ">\n")]),
    format_call,
    prompt_section,
    malformed_call,
    scanner: |tools| Box::new(YamlScanner::new(tools)),
};

/// A flow sequence that never closes.
fn malformed_call(name: &str, input: &Value) -> String {
    let (key, value) = first_argument(input);
    format!("<{name}>\n{key}: [{value}\n  - : :\n</{name}>")
}

/// A past call as yaml-xml markup.
pub(crate) fn format_call(name: &str, input: &Value) -> String {
    element_call(name, input, write_argument)
}

/// One argument as a line of the mapping (or a literal block).
fn write_argument(s: &mut String, k: &str, v: &Value) {
    s.push_str(&yaml_key(k));
    s.push(':');
    match v {
        Value::String(text) if block_safe(text) => {
            // A literal block keeps the text byte for byte: its chomping indicator says
            // how many newlines end it, an indentation indicator lets its first line
            // start with spaces.
            let trailing = text.len() - text.trim_end_matches('\n').len();
            let first = text.split('\n').find(|l| !l.is_empty()).unwrap_or("");
            s.push_str(" |");
            if first.starts_with([' ', '\t']) {
                s.push('2');
            }
            s.push_str(match trailing {
                0 => "-",
                1 => "",
                _ => "+",
            });
            s.push('\n');
            for line in text.strip_suffix('\n').unwrap_or(text).split('\n') {
                if !line.is_empty() {
                    s.push_str("  ");
                    s.push_str(line);
                }
                s.push('\n');
            }
        }
        Value::String(text) => {
            s.push(' ');
            s.push_str(&yaml_scalar(text));
            s.push('\n');
        }
        other => {
            s.push(' ');
            s.push_str(&other.to_string());
            s.push('\n');
        }
    }
}

/// Whether a string is written as a literal block, and can be read back unchanged from one:
/// several lines (or a close tag), some content, and no character YAML would not keep in a
/// block (carriage returns and other control characters but the tab).
fn block_safe(text: &str) -> bool {
    // A close tag in a one-line scalar would close the call; in a block it is value text.
    (text.contains('\n') || text.contains("</"))
        && !text.trim().is_empty()
        && !text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t')
}

fn yaml_key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        Value::String(k.to_string()).to_string()
    }
}

/// A string as a YAML scalar: plain when that reads back as the same string, else quoted.
fn yaml_scalar(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && s.trim() == s
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.ends_with(':')
        && !s.contains(['\n', '\t', '<'])
        && !matches!(s, "~" | "null" | "true" | "false" | "yes" | "no")
        && s.parse::<f64>().is_err();
    if plain_ok {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

/// The format section of the system prompt.
pub(crate) fn prompt_section(example_name: &str, example: &Value) -> String {
    format!(
        "To call a tool, write an XML element named after the tool whose content is a YAML mapping of the \
         arguments:\n<tool_name>\nargument_name: value\n</tool_name>\n\n\
         For example:\n{}\n\n\
         Use a literal block (|) for text with several lines, and quotes for text that YAML would read as \
         something else. Write one element per call. Results come back in a <tool_response> element.\n",
        format_call(example_name, example)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::scan::yaml::yaml_mapping;
    use crate::protocol::tests_support::prelude::*;

    /// The arguments of a call written by `format_call` for the tool `name`, read back as YAML.
    fn read_back(name: &str, call: &str) -> Value {
        let body = call
            .strip_prefix(&format!("<{name}>\n"))
            .and_then(|b| b.strip_suffix(&format!("</{name}>")))
            .expect("the tool's element around the mapping");
        Value::Object(yaml_mapping(body).expect("a mapping"))
    }

    #[test]
    fn literal_blocks_keep_indentation_and_newlines() {
        for text in [
            "\tx </f> y",
            "  lead\n\tsecond\n",
            "a\n\n\n",
            "\n\nb",
            "   \n x",
            "x\n  y\n",
            "x\n\ty\n",
        ] {
            let call = format_call("f", &json!({ "t": text }));
            assert_eq!(read_back("f", &call)["t"], text, "{call:?}");
        }
    }

    #[test]
    fn format_call_reads_back() {
        let input = json!({"path":"/tmp/a.txt","content":"line 1\nline 2\n","n":3,"flag":true,"odd":"007","colon":"a: b","tags":["x","y"]});
        let back = read_back("write", &format_call("write", &input));
        assert_eq!(back["content"], "line 1\nline 2\n");
        assert_eq!(back["odd"], "007");
        assert_eq!(back["colon"], "a: b");
        assert_eq!(back["path"], "/tmp/a.txt");
        assert_eq!(back["tags"], json!(["x", "y"]));
    }
}
