//! `apertus`: Swiss AI Apertus, a JSON array of one-key objects between `<|tools_prefix|>` and
//! `<|tools_suffix|>`, each naming its tool by its key.
//!
//! ```text
//! <|tools_prefix|>[{"get_weather": {"city": "Paris"}}]<|tools_suffix|>
//! ```
//!
//! Parallel calls are more objects in the array (one tool per object). The model reasons
//! between `<|inner_prefix|>` and `<|inner_suffix|>`. The system prompt lists the tools as a JSON
//! array; a result comes back as a JSON object with the tool's name and its output.

use serde_json::{Value, json};

use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods, read_back};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `apertus`.
pub(crate) struct Apertus;

const CALL_BEGIN: &str = "<|tools_prefix|>";
const CALL_END: &str = "<|tools_suffix|>";
/// The tokens around reasoning.
const INNER: (&str, &str) = ("<|inner_prefix|>", "<|inner_suffix|>");
const TOOLS: ToolList = ToolList::functions("Available tools:\n```json\n", "\n```");

static SYNTAX: FramedSyntax = FramedSyntax {
    call_end: Some(CALL_END),
    ..FramedSyntax::new(CALL_BEGIN, &[ArgsBegin::KeyedArray])
};

/// The calls as one list, each an object whose key is the tool's name and whose value the
/// arguments' JSON (written by `args`).
fn calls_text(calls: &[(&str, &Value)], args: fn(&Value) -> String) -> String {
    let items: Vec<String> = calls
        .iter()
        .map(|(name, input)| format!("{{{}: {}}}", Value::from(*name), args(input)))
        .collect();
    format!("{CALL_BEGIN}[{}]{CALL_END}", items.join(", "))
}

const CARD: Card = Card {
    servers: &[vllm("apertus"), sglang("apertus2509"), llama_cpp("Apertus")],
    end_tokens: &["<|assistant_end|>"],
    markers: &[CALL_BEGIN],
    reasoning: Reasoning::between(INNER.0, INNER.1),
    ..Card::new("apertus", "Apertus 8B, 70B")
};

impl ProtocolSpec for Apertus {
    card_methods!(CARD);

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        format!(
            "{}\n\n\
             To call tools, write {CALL_BEGIN} then a JSON list with one object per call, whose only key is the \
             tool's name and whose value is the arguments object, then {CALL_END}. For example: {}\n\
             Think first between {} and {} if it helps. Call a tool only when it helps; \
             otherwise answer in text.\n",
            TOOLS.write(tools),
            prompt::example_call(tools, |name, input| calls_text(
                &[(name, input)],
                prompt::args_json
            )),
            INNER.0,
            INNER.1,
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(CALL_BEGIN) {
            return None;
        }
        read_back(self.name(), TOOLS.read(system))
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        calls_text(calls, prompt::args_json)
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        json!({"tool": name, "output": result}).to_string()
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::Object(o)) => o
                .get("output")
                .map_or_else(|| text.to_string(), prompt::value_text),
            _ => prompt::unwrap_result(text),
        }
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(FramedScanner::new(&SYNTAX, tools.clone()).stripped_opener())
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        calls_text(&[(name, input)], prompt::broken_args)
    }
}
