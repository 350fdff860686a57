//! `gemma4`: Google Gemma 4's own tool-call tokens.
//!
//! ```text
//! <|channel>thought
//! Paris, so get_weather.<channel|><|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>
//! ```
//!
//! A call is `call:NAME{…}` in a `<|tool_call>` … `<tool_call|>` block. The arguments are Gemma's
//! own object syntax: bare keys, strings between two `<|"|>` tokens (raw text, byte-exact: no
//! escaping, so a string may hold newlines, quotes, braces, commas and tag-like text), bare
//! numbers, `true`, `false` and `null`, nested `{…}` objects and `[…]` arrays.
//!
//! What the parser forgives, each seen from real models:
//! - JSON-style quoting: `"city":"Paris"` (keys and strings in double quotes, with JSON's
//!   escapes); a key may also be written between `<|"|>` tokens;
//! - a bare word where a value belongs (`unit:celsius`): it is the string it spells (a number,
//!   `true`/`false`/`null` or Python's `True`/`False`/`None` are those values), typed by coercion
//!   against the schema as any other value;
//! - whitespace between the pieces, trailing commas;
//! - several calls in one block (`<|tool_call>call:f{…}call:g{…}<tool_call|>`, whitespace or
//!   commas between them) as well as one block per call, back to back;
//! - a missing `<tool_call|>` (at the end of the output, or where text or another block follows);
//! - a missing `<|tool_call>` before `call:NAME{…}` when NAME is one of the tools (a stray
//!   `<tool_call|>` after it belongs to it). Without the opening token, `call:` is prose unless a
//!   tool's name and `{` follow it at once (and no letter or digit precedes it): "the call: was
//!   fine" stays text with no error, and only a tail that may still become such a call is held
//!   back while streaming;
//! - `<|tool_call>NAME{…}` without `call:`.
//!
//! Markup that cannot be read stays in the output as text with an error part: a block that does
//! not hold a call, a name that cannot be a function name, a key without a value, nesting deeper
//! than 128 levels (`malformed-tool-call`), a call cut off by the end of the output
//! (`unfinished-tool-call`), a `<tool_call|>` outside any call. A tool that is not among the
//! tools is called and flagged (`unknown-tool`).
//!
//! Reasoning: `<|channel>thought\n` … `<channel|>`, written by the model itself (the template
//! closes an empty channel when thinking is off), so the output starts outside reasoning.
//! Gemma 4 calls tools from inside its thought channel, so calls there count.
//!
//! The prompt declares each tool as the template does in the system turn,
//! `<|tool>declaration:NAME{description:<|"|>…<|"|>,parameters:{…}}<tool|>`, the schema written in
//! the same object syntax (keys sorted, type names upper-cased); it reads back exactly. A result
//! comes back as `<|tool_response>response:NAME{value:<|"|>…<|"|>}<tool_response|>`.

use serde_json::Value;

use crate::protocol::scan::gemma_values::{
    CALL, CLOSE, Gemma4Scanner, OPEN, QUOTE, THOUGHT_CLOSE, THOUGHT_OPEN, read_value,
};
use crate::protocol::spec::server::{sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods};
use crate::protocol::text::prompt;
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::scanner::Scanner;
use crate::tool::{ToolDef, ToolSet};

/// `gemma4`.
pub(crate) struct Gemma4;

const DECLARATION: &str = "<|tool>declaration:";

const DECLARATION_END: &str = "<tool|>";

const RESPONSE_OPEN: &str = "<|tool_response>response:";

const RESPONSE_CLOSE: &str = "<tool_response|>";

/// The JSON Schema type names the template upper-cases.
const TYPE_NAMES: [&str; 7] = [
    "string", "number", "integer", "boolean", "array", "object", "null",
];

const CARD: Card = Card {
    servers: &[vllm("gemma4"), sglang("gemma4")],
    end_tokens: &["<turn|>", "<|tool_response>", "<eos>"],
    markers: &[OPEN],
    reasoning: Reasoning::between(THOUGHT_OPEN, THOUGHT_CLOSE).with_calls(),
    ..Card::new("gemma4", "Gemma 4")
};

impl ProtocolSpec for Gemma4 {
    card_methods!(CARD);

    /// The declarations of the template's system turn, then how a call is written.
    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let mut s = String::new();
        for t in tools.iter() {
            s.push_str(&declaration(&t.def));
        }
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        s.push_str(&format!(
            "To call a tool, write {OPEN}{CALL}NAME{{ARGUMENTS}}{CLOSE}. The arguments are \
             key:value pairs separated by commas, with bare keys: strings between {QUOTE} and \
             {QUOTE}, numbers, true, false and null bare, objects as {{key:value,…}} and arrays as \
             [value,…]. For example:\n{}\n\
             For several calls, write one block after the other. Each result comes back as \
             {RESPONSE_OPEN}NAME{{value:{QUOTE}…{QUOTE}}}{RESPONSE_CLOSE}. Call tools only when \
             they help; otherwise answer in text.\n",
            prompt::example_call(tools, format_call)
        ));
        s
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("{OPEN}{CALL}")) {
            return None;
        }
        let mut defs = Vec::new();
        let mut rest = system;
        while let Some(at) = rest.find(DECLARATION) {
            let after = &rest[at + DECLARATION.len()..];
            let brace = after.find('{')?;
            let name = after[..brace].trim().to_string();
            let (value, len) = read_value(&after[brace..])?;
            let mut entry = match value {
                Value::Object(o) => o,
                _ => return None,
            };
            let description = match entry.remove("description") {
                Some(Value::String(d)) => d,
                None => String::new(),
                Some(_) => return None,
            };
            let mut parameters = entry
                .remove("parameters")
                .unwrap_or_else(|| serde_json::json!({"type": "object"}));
            lower_types(&mut parameters);
            defs.push(ToolDef {
                name,
                description,
                parameters,
            });
            rest = &after[brace + len..];
        }
        Some((
            Protocol::from_name(self.name()).ok()?,
            ToolSet::new(defs).ok()?,
        ))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format_call(name, input)
    }

    /// One block per call, back to back, as the template writes them.
    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        calls
            .iter()
            .map(|(n, input)| format_call(n, input))
            .collect()
    }

    /// The template's tool response: a text result is the `value` of the response object.
    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        let mut s = format!("{RESPONSE_OPEN}{name}{{value:");
        write_string(&mut s, result);
        s.push('}');
        s.push_str(RESPONSE_CLOSE);
        s
    }

    /// The responses back to back, as the template writes them after the calls.
    fn format_results(&self, p: &Protocol, results: &[(&str, &str)]) -> String {
        results
            .iter()
            .map(|(n, r)| self.format_result(p, n, r))
            .collect()
    }

    /// The `value` of the first response (an object without one: its JSON).
    fn read_result(&self, _: &Protocol, text: &str) -> String {
        let read = || -> Option<String> {
            let at = text.find(RESPONSE_OPEN)? + RESPONSE_OPEN.len();
            let after = &text[at..];
            let brace = after.find('{')?;
            let (value, _) = read_value(&after[brace..])?;
            Some(match value {
                Value::Object(o)
                    if o.len() == 1 && o.get("value").is_some_and(Value::is_string) =>
                {
                    o.get("value")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                }
                other => other.to_string(),
            })
        };
        read().unwrap_or_else(|| text.trim().to_string())
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(Gemma4Scanner::new(tools.clone()))
    }

    /// A key with no value.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        let mut s = format!("{OPEN}{CALL}{name}{{");
        write_key(&mut s, &key);
        s.push(':');
        write_string(&mut s, &value);
        s.push_str(",oops:}");
        s.push_str(CLOSE);
        s
    }

    /// The thought channel as the model writes it: the newline after `thought` is the marker's.
    fn format_reasoning(&self, p: &Protocol, text: &str) -> Option<String> {
        Some(if p.reasoning_open() {
            format!("{text}{THOUGHT_CLOSE}")
        } else {
            format!("{THOUGHT_OPEN}{text}{THOUGHT_CLOSE}")
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Writing Gemma's object syntax.

/// A call as the model writes it.
fn format_call(name: &str, input: &Value) -> String {
    let mut s = format!("{OPEN}{CALL}{name}");
    match input {
        Value::Object(_) => write_value(&mut s, input, false),
        _ => s.push_str("{}"),
    }
    s.push_str(CLOSE);
    s
}

/// One tool's declaration, as the template writes it in the system turn.
fn declaration(def: &ToolDef) -> String {
    let mut s = format!("{DECLARATION}{}{{", def.name);
    if !def.description.is_empty() {
        s.push_str("description:");
        write_string(&mut s, &def.description);
        s.push(',');
    }
    s.push_str("parameters:");
    write_value(&mut s, &def.parameters, true);
    s.push('}');
    s.push_str(DECLARATION_END);
    s
}

/// A value in Gemma's syntax: keys sorted (the template's order); with `schema`, the values of
/// `type` keys that name a JSON Schema type upper-cased, as the template writes them.
fn write_value(out: &mut String, v: &Value, schema: bool) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item, schema);
            }
            out.push(']');
        }
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_key(out, k);
                out.push(':');
                let v = &o[k.as_str()];
                if schema && k == "type" && !v.is_object() {
                    write_value(out, &upper_type(v), false);
                } else {
                    write_value(out, v, schema);
                }
            }
            out.push('}');
        }
    }
}

/// A type name (or a list of them) as the template writes it: upper-cased.
fn upper_type(v: &Value) -> Value {
    match v {
        Value::String(s) if TYPE_NAMES.contains(&s.as_str()) => Value::String(s.to_uppercase()),
        Value::Array(a) => Value::Array(a.iter().map(upper_type).collect()),
        other => other.clone(),
    }
}

/// Undoes [`upper_type`] wherever a `type` key holds upper-cased type names.
fn lower_types(v: &mut Value) {
    fn lower(v: &mut Value) {
        match v {
            Value::String(s) => {
                let low = s.to_lowercase();
                if *s != low && TYPE_NAMES.contains(&low.as_str()) {
                    *s = low;
                }
            }
            Value::Array(a) => a.iter_mut().for_each(lower),
            _ => {}
        }
    }
    match v {
        Value::Object(o) => {
            for (k, v) in o.iter_mut() {
                if k == "type" && !v.is_object() {
                    lower(v);
                } else {
                    lower_types(v);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(lower_types),
        _ => {}
    }
}

/// A string between `<|"|>` tokens; one that holds the token itself (which the raw form cannot
/// carry) as a JSON string, which the parser reads too.
fn write_string(out: &mut String, s: &str) {
    if s.contains(QUOTE) {
        out.push_str(&Value::String(s.to_string()).to_string());
    } else {
        out.push_str(QUOTE);
        out.push_str(s);
        out.push_str(QUOTE);
    }
}

/// A key: bare when it reads back as itself, else quoted.
fn write_key(out: &mut String, k: &str) {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'$' | b'@'));
    if bare {
        out.push_str(k);
    } else {
        write_string(out, k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&Gemma4);

    /// The writers write as the model does. (The parses and the spans: the case file.)
    #[test]
    fn the_writers_write_as_the_model_does() {
        assert_eq!(
            P.format_call("get_weather", &json!({"days": 3, "city": "Paris"})),
            "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}<tool_call|>"
        );
        assert_eq!(
            P.malformed_call("get_weather", &json!({"city": "Paris"})),
            "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,oops:}<tool_call|>"
        );
        assert_eq!(
            P.format_reasoning("hm").as_deref(),
            Some("<|channel>thought\nhm<channel|>")
        );
        assert!(!P.reasoning_open());
    }

    #[test]
    fn nested_objects_and_arrays_hold_strings_with_markup() {
        let t = one_tool(
            "plan",
            json!({"type":"object","properties":{
                "steps":{"type":"array","items":{"type":"object"}},
                "meta":{"type":"object"}
            }}),
        );
        let text = "<|tool_call>call:plan{steps:[{name:<|\"|>a, b\n}<|\"|>,n:1.5,ok:true},{name:<|\"|><tool_call|>[x]<|\"|>,none:null}],meta:{deep:{list:[<|\"|>{\"q\"}<|\"|>,-2,[]]}}}<tool_call|>";
        let c = whole(&P, &t, text);
        assert_eq!(
            c.calls,
            [(
                "plan".into(),
                json!({"steps":[{"name":"a, b\n}","n":1.5,"ok":true},{"name":"<tool_call|>[x]","none":null}],
                       "meta":{"deep":{"list":["{\"q\"}",-2,[]]}}})
            )]
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        // Written by the protocol, read back at every split.
        let input = json!({"nums": [1, 2.5], "tags": ["<|\"|> inside", "x"], "budget": {"min": 1}});
        let text = P.format_call("calc", &input);
        let t = one_tool("calc", json!({"type":"object"}));
        let got = whole(&P, &t, &text);
        assert_eq!(got.calls, [("calc".into(), input)]);
    }

    #[test]
    fn deep_nesting_is_reported_not_a_crash() {
        let deep = format!(
            "<|tool_call>call:search{{query:{}1{}}}<tool_call|>",
            "[".repeat(200),
            "]".repeat(200)
        );
        let c = whole(&P, &tools(), &deep);
        assert!(c.calls.is_empty());
        assert_eq!(c.errors, ["malformed-tool-call"]);
        assert_eq!(c.text, deep);
        let ok = format!(
            "<|tool_call>call:search{{query:{}1{}}}<tool_call|>",
            "[".repeat(100),
            "]".repeat(100)
        );
        let c = whole(&P, &tools(), &ok);
        assert_eq!(c.calls.len(), 1);
        // Huge runs end cleanly too, at one byte per chunk.
        let huge = format!("<|tool_call>call:search{{query:{}", "{a:".repeat(50_000));
        let mut parser = P.stream_parser(&tools());
        let mut out = Vec::new();
        for b in huge.as_bytes().chunks(1) {
            parser.push(b, &mut out);
        }
        parser.finish(&mut out);
        assert!(out.iter().any(|p| matches!(p, Part::Error(_))));
        assert!(!out.iter().any(|p| matches!(p, Part::ToolCall(_))));
    }

    #[test]
    fn only_the_ambiguous_tail_is_held_back() {
        let (_, out) = first_chunk(&P, b"It was the call: ok <|tool_c");
        assert_eq!(Collapsed::of(&out).text, "It was the call: ok ");
        let (_, out) = first_chunk(&P, b"x call:get_wea");
        assert_eq!(Collapsed::of(&out).text, "x ");
        // A string value streams up to a possible delimiter.
        let (_, out) = first_chunk(&P, b"<|tool_call>call:write_file{content:<|\"|>abc<|\"");
        let deltas: String = out
            .iter()
            .filter_map(|p| match p {
                Part::ToolInputDelta { delta, .. } => Some(delta.to_string()),
                _ => None,
            })
            .collect();
        assert_eq!(deltas, "{\"content\":\"abc");
    }

    #[test]
    fn the_prompt_declares_the_tools_and_reads_back() {
        let prompt = P.system_prompt(&tools());
        assert!(
            prompt.starts_with("<|tool>declaration:get_weather{description:<|\"|>Current weather for a city<|\"|>,parameters:{properties:{city:{type:<|\"|>STRING<|\"|>},days:{type:<|\"|>INTEGER<|\"|>},unit:{enum:[<|\"|>c<|\"|>,<|\"|>f<|\"|>]}},required:[<|\"|>city<|\"|>],type:<|\"|>OBJECT<|\"|>}}<tool|>"),
            "{prompt}"
        );
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, P);
        assert_eq!(set.to_json(), tools().to_json());
        // Schemas whose keys and strings need quoting read back exactly too.
        let odd = ToolSet::new(vec![ToolDef::new(
            "odd",
            "Has \"quotes\", <|\"|> and\nlines",
            json!({"type":["string","null"],"properties":{"a key":{"type":"string","default":"<|\"|>"},"type":{"type":"object"}},"x-n":1.5,"ok":false}),
        )])
        .unwrap();
        let (_, set) = Protocol::detect_from_prompt(&P.system_prompt(&odd)).unwrap();
        assert_eq!(set.to_json(), odd.to_json());
        let (_, set) = Protocol::detect_from_prompt(&P.system_prompt(&ToolSet::empty())).unwrap();
        assert!(set.is_empty());
    }

    #[test]
    fn results_read_back() {
        let r = P.format_result("get_weather", "18 degrees");
        assert_eq!(
            r,
            "<|tool_response>response:get_weather{value:<|\"|>18 degrees<|\"|>}<tool_response|>"
        );
        assert_eq!(P.read_result(&r), "18 degrees");
        let tricky = "{\"t\": 21}\n<|\"|> and <tool_response|>";
        assert_eq!(P.read_result(&P.format_result("f", tricky)), tricky);
        let two = P.format_results(&[("a", "1"), ("b", "2")]);
        assert_eq!(two.matches("<|tool_response>").count(), 2);
    }
}
