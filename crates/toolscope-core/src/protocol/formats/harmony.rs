//! `harmony`: OpenAI gpt-oss's message format, where every message names its channel.
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants Paris.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
//! ```
//!
//! A message is a header (`<|start|>` role, `<|channel|>` channel, optional `to=` recipient and
//! `<|constrain|>` content type) up to `<|message|>`, then its content up to `<|end|>`,
//! `<|call|>`, `<|return|>` or the next header. The template's generation prompt ends with
//! `<|start|>assistant`, so an output usually begins at `<|channel|>`. What a message becomes:
//!
//! - a recipient (`to=functions.NAME`, in the channel header or the role header) makes it a tool
//!   call whose content is the arguments' JSON, from any channel (gpt-oss calls from `analysis`
//!   too); a call ends at `<|call|>` (or `<|end|>`, `<|return|>`), or before the next header;
//! - the `analysis` channel is reasoning;
//! - `final`, `commentary` without a recipient, and text outside any message are text.
//!
//! A recipient is any name: `to=functions.NAME` calls NAME, and a built-in tool's recipient
//! (`to=browser.search`, `to=container.exec`, `to=python`) is a call to that name, which the
//! tool list does not have (an `unknown-tool` error says so), never plain text.
//!
//! LLM-jp 4.1 writes the same format with a space after every special token
//! (`<|start|> assistant<|channel|> analysis<|message|> …<|end|> `, recipient
//! ` to=functions.f`): a header with such a space marks the output as spaced, and from then on
//! one space after `<|message|>` or an end token is format (a span of markup), not content.
//!
//! Headers and end tokens become neither text nor reasoning: they are reported as
//! [`SpanKind::Markup`] spans (the header and close of a call are in its call span).
//!
//! The system prompt lists the tools as the template does in its developer message: a
//! `namespace functions` of TypeScript-like `type NAME = (_: {…}) => any;` declarations, each
//! under its description; a comment line gives each tool's exact JSON Schema too, since the
//! TypeScript form loses some of it (integers, formats), so that the prompt reads back exactly.
//! A tool result comes back as a message from the tool to the assistant:
//! `<|start|>functions.NAME to=assistant<|channel|>commentary<|message|>…<|end|>`.
//!
//! [`SpanKind::Markup`]: crate::protocol::span::SpanKind::Markup

use serde_json::Value;

use crate::protocol::scan::harmony::{
    CALL, CHANNEL, CONSTRAIN, END, HarmonyScanner, MESSAGE, RETURN, START,
};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::{ToolDef, ToolSet};

/// `harmony`.
pub(crate) struct Harmony;

/// The comment line that carries a tool's exact JSON Schema in the prompt.
const SCHEMA_LINE: &str = "// JSON Schema: ";

const NAMESPACE_OPEN: &str = "namespace functions {";

const NAMESPACE_CLOSE: &str = "} // namespace functions";

/// The tools as a TypeScript-like `namespace functions`: each tool's description as comments,
/// its exact JSON Schema on a comment line (what [`read_namespace`] reads back), and a
/// `type NAME = (_: {…}) => any;` declaration. Functionary's template writes the same namespace.
pub(crate) fn namespace(tools: &ToolSet) -> String {
    let mut s = String::from(NAMESPACE_OPEN);
    s.push_str("\n\n");
    for t in tools.iter() {
        for line in t
            .def
            .description
            .lines()
            .filter(|_| !t.def.description.is_empty())
        {
            s.push_str("// ");
            s.push_str(line);
            s.push('\n');
        }
        s.push_str(SCHEMA_LINE);
        s.push_str(&Value::Object(def_json(&t.def)).to_string());
        s.push('\n');
        s.push_str(&format!("type {} = ", t.def.name));
        render_function_type(&mut s, t.schema());
        s.push_str(";\n\n");
    }
    s.push_str(NAMESPACE_CLOSE);
    s
}

/// The tools of a [`namespace`] in `system`.
pub(crate) fn read_namespace(system: &str) -> Option<ToolSet> {
    let start = system.find(NAMESPACE_OPEN)? + NAMESPACE_OPEN.len();
    let end = start + system[start..].find(NAMESPACE_CLOSE)?;
    let defs = system[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix(SCHEMA_LINE))
        .map(|json| {
            let v: Value = serde_json::from_str(json).ok()?;
            // The schema line always carries the parameters.
            v.get("parameters")?;
            prompt::tool_def(&v)
        })
        .collect::<Option<Vec<_>>>()?;
    ToolSet::new(defs).ok()
}

/// One call's message, given its arguments' JSON.
fn call(name: &str, args: &str) -> String {
    format!(
        "{START}assistant{CHANNEL}commentary to=functions.{name} {CONSTRAIN}json{MESSAGE}{args}{CALL}"
    )
}

const CARD: Card = Card {
    aliases: &["gpt-oss"],
    servers: &[vllm("openai"), sglang("gpt-oss"), llama_cpp("GPT-OSS")],
    end_tokens: &[END, RETURN, CALL],
    // A channel, an assistant message (`<|start|>` and the role).
    markers: &[CHANNEL, "<|start|>assistant"],
    // Reasoning is the `analysis` channel, found by the scanner itself; calls from it count.
    reasoning: Reasoning::NONE.with_calls(),
    // `<|end|>`, `<|return|>` and `<|call|>` end messages: the scanner reads them.
    reads_end_tokens: true,
    // One message after the other.
    call_joiner: "",
    // One message after the other.
    results: ResultWrap::LINES.joined(""),
    ..Card::new("harmony", "gpt-oss, LLM-jp 4.1")
};

impl ProtocolSpec for Harmony {
    card_methods!(CARD);

    /// The developer message of the gpt-oss template: the channel rule of its system message,
    /// then `# Tools` / `## functions` and the TypeScript-like namespace.
    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        let mut s = String::from(
            "# Valid channels: analysis, commentary, final. Channel must be included for every message.\n\
             Calls to these tools must go to the commentary channel: 'functions'.\n\n# Tools\n\n## functions\n\n",
        );
        s.push_str(&namespace(tools));
        s.push_str(&format!(
            "\n\nTo call a tool, write a message to it on the commentary channel, with its arguments as one JSON object, \
             for example:\n{}\nFor several calls, write one such message after the other. Call tools only when they help; \
             otherwise answer in the final channel.\n",
            prompt::example_call(tools, |name, input| self.format_call(p, name, input))
        ));
        s
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains("must go to the commentary channel") {
            return None;
        }
        read_back(self.name(), read_namespace(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, &prompt::args_json(input))
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        format!("{START}functions.{name} to=assistant{CHANNEL}commentary{MESSAGE}{result}{END}")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, MESSAGE, END)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(HarmonyScanner::new(tools.clone()))
    }

    /// Arguments with a key and no value.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, &prompt::broken_args(input))
    }

    /// The analysis channel, as the model opens its answer with it.
    fn format_reasoning(&self, _: &Protocol, text: &str) -> Option<String> {
        Some(format!("{CHANNEL}analysis{MESSAGE}{text}{END}"))
    }
}

fn def_json(def: &ToolDef) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("name".into(), Value::String(def.name.clone()));
    m.insert("description".into(), Value::String(def.description.clone()));
    m.insert("parameters".into(), def.parameters.clone());
    m
}

/// `(_: {…}) => any`, or `() => any` for a tool without properties.
fn render_function_type(s: &mut String, schema: &Value) {
    match schema.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => {
            s.push_str("(_: ");
            render_object(s, schema, 0);
            s.push_str(") => any");
        }
        _ => s.push_str("() => any"),
    }
}

/// An object's properties, one a line under their descriptions; `?` marks the optional ones.
fn render_object(s: &mut String, schema: &Value, depth: usize) {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    s.push_str("{\n");
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, spec) in props {
            if let Some(d) = spec.get("description").and_then(Value::as_str) {
                for line in d.lines() {
                    s.push_str("// ");
                    s.push_str(line);
                    s.push('\n');
                }
            }
            s.push_str(name);
            if !required.contains(&name.as_str()) {
                s.push('?');
            }
            s.push_str(": ");
            render_type(s, spec, depth + 1);
            match spec.get("default") {
                Some(d) => {
                    s.push_str(", // default: ");
                    s.push_str(&d.to_string());
                }
                None => s.push(','),
            }
            s.push('\n');
        }
    }
    s.push('}');
}

/// A schema as a TypeScript type: enums as unions of literals, integers as `number`, arrays as
/// `T[]`, objects inline, unions joined by `|`.
fn render_type(s: &mut String, schema: &Value, depth: usize) {
    if depth > 8 {
        s.push_str("any");
        return;
    }
    if let Some(Value::Array(vals)) = schema.get("enum") {
        let lits: Vec<String> = vals.iter().map(Value::to_string).collect();
        s.push_str(&lits.join(" | "));
        return;
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(alts)) = schema.get(key) {
            for (i, alt) in alts.iter().enumerate() {
                if i > 0 {
                    s.push_str(" | ");
                }
                render_type(s, alt, depth + 1);
            }
            return;
        }
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if types.is_empty() {
        s.push_str("any");
        return;
    }
    for (i, t) in types.iter().enumerate() {
        if i > 0 {
            s.push_str(" | ");
        }
        match *t {
            "string" => s.push_str("string"),
            "integer" | "number" => s.push_str("number"),
            "boolean" => s.push_str("boolean"),
            "null" => s.push_str("null"),
            "array" => match schema.get("items") {
                Some(items) => {
                    render_type(s, items, depth + 1);
                    s.push_str("[]");
                }
                None => s.push_str("any[]"),
            },
            "object" if schema.get("properties").is_some() => render_object(s, schema, depth),
            _ => s.push_str("object"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&Harmony);

    const WEATHER: &str = "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\", \"days\": \"3\"}<|call|>";

    #[test]
    fn a_call_is_one_span() {
        assert_eq!(spans(&P, WEATHER), [(SpanKind::ToolCall, WEATHER)]);
    }

    #[test]
    fn two_parallel_calls_are_two_messages() {
        let written = two_calls_written(&P, "rust");
        assert_eq!(written.matches(CALL).count(), 2);
    }

    #[test]
    fn headers_around_text_are_markup() {
        let text = format!(
            "<|channel|>final<|message|>Let me check.<|end|>{WEATHER}<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
        );
        let kinds: Vec<SpanKind> = spans(&P, &text).iter().map(|s| s.0).collect();
        assert_eq!(
            kinds,
            [
                SpanKind::Markup,
                SpanKind::Markup,
                SpanKind::ToolCall,
                SpanKind::Markup,
                SpanKind::Markup
            ]
        );
    }

    #[test]
    fn reasoning_is_spanned_between_its_headers() {
        let text = format!("<|channel|>analysis<|message|>Paris, so get_weather.<|end|>{WEATHER}");
        assert_eq!(
            spans(&P, &text)[..3],
            [
                (SpanKind::Markup, "<|channel|>analysis<|message|>"),
                (SpanKind::Reasoning, "Paris, so get_weather."),
                (SpanKind::Markup, "<|end|>"),
            ]
        );
        let parsed = P.parse_generated(&tools(), text.as_bytes());
        assert!(matches!(parsed.parts[0], Part::Reasoning { .. }));
    }

    #[test]
    fn a_malformed_body_is_a_malformed_span() {
        let bad = P.malformed_call("get_weather", &json!({"city": "Paris"}));
        let text = format!("{bad} then");
        assert_eq!(spans(&P, &text)[0], (SpanKind::Malformed, bad.as_str()));
    }

    /// A call with the recipient in the role header is one span, whatever its channel.
    #[test]
    fn the_recipient_in_the_role_header_is_one_span() {
        for header in [
            "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>",
            "<|start|>assistant to=functions.get_weather<|channel|>analysis <|constrain|>json<|message|>",
        ] {
            let text = format!("{header}{{\"city\": \"Oslo\"}}<|call|>");
            assert_eq!(spans(&P, &text), [(SpanKind::ToolCall, text.as_str())]);
        }
    }

    /// LLM-jp 4.1 writes a space after every special token: every byte is still covered by a
    /// span or is text. (The parses: the case file.)
    #[test]
    fn spaced_special_tokens_are_covered() {
        let text = "<|channel|> analysis<|message|> hmm<|end|> <|start|> assistant<|channel|> final<|message|>  Two spaces kept one.<|return|>";
        let parsed = P.parse_generated(&tools(), text.as_bytes());
        let c = Collapsed::of(&parsed.parts);
        let covered: usize = parsed.spans.iter().map(|s| s.end - s.start).sum();
        assert_eq!(covered + c.text.len(), text.len(), "{:?}", parsed.spans);
    }

    /// Nothing is lost: a stray `<|channel|>` header, or one naming a channel harmony does not
    /// know, stays text (reported), and so does what follows it.
    #[test]
    fn a_header_of_no_known_channel_is_kept_as_text() {
        let p = P;
        for text in [
            "Hello <|channel|>SECRETWORDS<|message|>tail",
            "<|start|>assistant<|channel|>weird<|message|>unknown channel text<|end|>",
        ] {
            let c = whole(&p, &ToolSet::default(), text);
            for word in ["SECRETWORDS", "tail", "weird", "unknown channel text"] {
                if text.contains(word) {
                    assert!(c.text.contains(word), "{word} lost from {text:?}: {c:?}");
                }
            }
            assert_eq!(c.errors, ["unknown-channel"], "{text:?}");
        }
        // The known channels are still read as before.
        let c = crate::part::Collapsed::of(
            &p.parse_generated(
                &ToolSet::default(),
                b"<|channel|>analysis<|message|>think<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>",
            )
            .parts,
        );
        assert_eq!((c.reasoning.as_str(), c.text.as_str()), ("think", "ok"));
    }

    #[test]
    fn prompt_history_and_results_read_back() {
        let prompt = P.system_prompt(&tools());
        assert!(prompt.contains("# Tools\n\n## functions\n\nnamespace functions {"));
        assert!(prompt.contains("// Current weather for a city\n// JSON Schema: "));
        assert!(prompt.contains(
            "type get_weather = (_: {\ncity: string,\ndays?: number,\nunit?: \"c\" | \"f\",\n}) => any;"
        ));
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, P);
        assert_eq!(set.to_json(), tools().to_json());
        assert_eq!(
            P.format_call("get_weather", &json!({"city": "Paris"})),
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>"
        );
        assert_eq!(
            P.format_result("get_weather", "18 degrees"),
            "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>18 degrees<|end|>"
        );
        assert_eq!(
            P.read_result(&P.format_result("f", "18 degrees")),
            "18 degrees"
        );
        let parsed = P.parse_generated(&tools(), WEATHER.as_bytes());
        assert_eq!(Collapsed::of(&parsed.parts).calls.len(), 1);
    }
}
