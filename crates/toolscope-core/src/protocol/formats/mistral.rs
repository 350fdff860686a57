//! `mistral`: the `[TOOL_CALLS]` token of the Mistral family, in each of its forms.
//!
//! ```text
//! [TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}                    (v11 and later)
//! [TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Paris"}  (with the call's id)
//! [TOOL_CALLS]get_weather{"city": "Paris"}                          (seen without [ARGS])
//! [TOOL_CALLS][{"name": "get_weather", "arguments": {…}, "id": "a1b2c3d4e"}]   (v3)
//! ```
//!
//! A call ends where its JSON ends; parallel calls repeat `[TOOL_CALLS]` (or are more items of
//! the v3 array). Stray text between `[TOOL_CALLS]` and the v3 array (`[TOOL_CALLS]  junk [{…}]`)
//! does not hide the calls: they are read, and an `ignored-text` error names the stray text. The
//! tokenizers v13 and later write reasoning as the special tokens `[THINK]` … `[/THINK]` and a
//! call as its name, `[ARGS]` and the JSON, without an id. The tools are listed as OpenAI-style function objects between
//! `[AVAILABLE_TOOLS]` and `[/AVAILABLE_TOOLS]`, results come back between `[TOOL_RESULTS]` and
//! `[/TOOL_RESULTS]`, and Magistral reasons between `[THINK]` and `[/THINK]`.

use serde_json::{Value, json};

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax, Header};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `mistral`.
pub(crate) struct Mistral;

const TOOL_CALLS: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";
const TOOLS: ToolList = ToolList::functions("[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]");
/// Each result in `[TOOL_RESULTS]`, one after the other.
const RESULTS: ResultWrap = ResultWrap::between("[TOOL_RESULTS]", "[/TOOL_RESULTS]").joined("");

static SYNTAX: FramedSyntax = FramedSyntax {
    header: |head| {
        let (name, id) = match head.split_once(CALL_ID) {
            Some((name, id)) => (name, Some(id.trim().to_string())),
            None => (head, None),
        };
        Some(Header {
            name: name.trim().to_string(),
            id: id.filter(|i| !i.is_empty()),
        })
    },
    ..FramedSyntax::new(
        TOOL_CALLS,
        &[ArgsBegin::Marker(ARGS), ArgsBegin::Object, ArgsBegin::Array],
    )
};

/// One call.
fn call(name: &str, input: &Value) -> String {
    format!("{TOOL_CALLS}{name}{ARGS}{}", prompt::args_json(input))
}

const CARD: Card = Card {
    servers: &[
        vllm("mistral"),
        sglang("mistral"),
        llama_cpp("Mistral Nemo"),
        llama_cpp("Magistral"),
    ],
    end_tokens: &["</s>"],
    markers: &["[TOOL_CALLS]", "[TOOL_CALLS] ["],
    reasoning: Reasoning::between("[THINK]", "[/THINK]"),
    // One call after the other.
    call_joiner: "",
    results: RESULTS,
    ..Card::new(
        "mistral",
        "Mistral 7B v0.3, Nemo, Small 3.x, Devstral, Magistral, Ministral 3",
    )
};

impl ProtocolSpec for Mistral {
    card_methods!(CARD);

    /// The tools as the template lists them: OpenAI-style function objects in
    /// `[AVAILABLE_TOOLS]`, then how a call looks.
    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "{}\n\nTo call a tool, write {TOOL_CALLS}, its name, {ARGS} and its arguments as one JSON object, \
             for example:\n{}\nFor several calls, write one after the other. Results come back between {} and \
             {}. Call tools only when they help; otherwise answer in text.\n",
            TOOLS.write(tools),
            prompt::example_call(tools, call),
            RESULTS.begin,
            RESULTS.end,
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        read_back(self.name(), TOOLS.read(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, input)
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        let content =
            serde_json::from_str::<Value>(result).unwrap_or_else(|_| Value::String(result.into()));
        RESULTS.around(&json!({"content": content}).to_string())
    }

    /// The `content` of the `{"content": …}` object the template wraps each result in.
    fn read_result(&self, _: &Protocol, text: &str) -> String {
        let inner = RESULTS.inside(text);
        match serde_json::from_str::<Value>(inner.trim()) {
            Ok(Value::Object(obj)) if obj.len() == 1 && obj.contains_key("content") => {
                prompt::value_text(&obj["content"])
            }
            _ => prompt::unwrap_result(&inner),
        }
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(FramedScanner::new(&SYNTAX, tools.clone()).stripped_opener())
    }

    /// Arguments with a key and no value.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format!("{TOOL_CALLS}{name}{ARGS}{}", prompt::broken_args(input))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&Mistral);

    /// Text between `[TOOL_CALLS]` and the v3 array stays in the call's markup (span); what
    /// follows the array is text. (The parses: the case file.)
    #[test]
    fn text_before_the_array_is_in_the_call_span() {
        let text =
            r#"[TOOL_CALLS]  junk [{"name": "get_weather", "arguments": {"city": "Paris"}}] trail"#;
        let parsed = P.parse_generated(&tools(), text.as_bytes());
        let call_span = &parsed.spans[0];
        assert_eq!(
            &text[call_span.start..call_span.end],
            text.strip_suffix(" trail").unwrap()
        );
    }

    #[test]
    fn the_call_id_is_the_tool_call_id() {
        let text = r#"[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"city": "Oslo"}"#;
        let parsed = P.parse_generated(&tools(), text.as_bytes());
        match &parsed.parts[0] {
            crate::part::Part::ToolCall(c) => assert_eq!(&*c.tool_call_id, "a1b2c3d4e"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parallel_calls_repeat_the_token() {
        let written = two_calls_written(&P, "rust");
        assert_eq!(written.matches(TOOL_CALLS).count(), 2);
    }
}
