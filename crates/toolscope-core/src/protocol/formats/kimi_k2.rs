//! `kimi-k2`: the tool-call section of Moonshot's Kimi K2 and K2 Thinking.
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! The header, `functions.NAME:INDEX`, is the call's id (its `toolCallId`); the tool's name is
//! between `functions.` and the last `:`. A header without the `functions.` prefix or without
//! the index still names the tool, and is still the id. Parallel calls are more call blocks in
//! the one section, with nothing between them and the index counting up. An id the output
//! gives twice is not reused: the second call gets an id of its own, with an error part saying
//! so.
//!
//! The template declares the tools in a system message of their own, `tool_declare`, as a JSON
//! array of OpenAI-style function objects; a result comes back in a `tool` message that starts
//! `## Return of ID`.
//!
//! Reasoning: K2 Thinking reasons in `<think>` … `</think>` and writes the open marker itself
//! (its template does not open the block), so by default the output starts outside reasoning;
//! `--reasoning-open` reads an output whose template opened it. K2 Thinking calls tools from
//! inside its reasoning (interleaved thinking), so calls inside `<think>` count
//! (`calls_inside`); the plain text around them there is reasoning. K2 Instruct does not reason,
//! and its outputs read the same.

use serde_json::{Value, json};

use super::sections::{SectionResults, Sectioned};
use crate::protocol::scan::framed::{ArgsBegin, FramedSyntax, Header};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Protocol, Reasoning};
use crate::protocol::text::prompt;
use crate::tool::ToolSet;

/// The tokens around an answer's calls.
const SECTION: (&str, &str) = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>");
const CALL_BEGIN: &str = "<|tool_call_begin|>";
const ARGS_BEGIN: &str = "<|tool_call_argument_begin|>";
const CALL_END: &str = "<|tool_call_end|>";
/// The system message that declares the tools, and its end.
const DECLARE: (&str, &str) = ("<|im_system|>tool_declare<|im_middle|>", "<|im_end|>");
/// How a result's text begins: the id of the call it answers follows.
const RETURN_OF: &str = "## Return of ";
const PREFIX: &str = "functions.";

/// `functions.NAME:INDEX`: the whole header is the id, the name is inside it.
fn header(head: &str) -> Option<Header> {
    let id = head.trim();
    let name = id.strip_prefix(PREFIX).unwrap_or(id);
    let name = match name.rsplit_once(':') {
        Some((name, index)) if !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit()) => {
            name
        }
        _ => name,
    };
    Some(Header {
        name: name.to_string(),
        id: Some(id.to_string()),
    })
}

static SYNTAX: FramedSyntax = FramedSyntax {
    section: Some(SECTION),
    call_begin: CALL_BEGIN,
    args_begin: &[ArgsBegin::Marker(ARGS_BEGIN)],
    header,
    args_suffix: None,
    call_end: Some(CALL_END),
    separator: None,
};

/// The id the template gives the `index`-th call of an answer.
fn call_id(name: &str, index: usize) -> String {
    format!("{PREFIX}{name}:{index}")
}

/// One call block.
fn block(name: &str, index: usize, args: &str) -> String {
    format!(
        "{CALL_BEGIN}{}{ARGS_BEGIN}{args}{CALL_END}",
        call_id(name, index)
    )
}

/// `kimi-k2`.
pub(crate) static KIMI_K2: Sectioned = Sectioned {
    card: Card {
        servers: &[vllm("kimi_k2"), sglang("kimi_k2"), llama_cpp("Kimi K2")],
        end_tokens: &["<|im_end|>"],
        reasoning: Reasoning::THINK.with_calls(),
        ..Card::new("kimi-k2", "Kimi K2, K2 Thinking")
    },
    syntax: &SYNTAX,
    block,
    joiner: "",
    prompt: system_prompt,
    read_prompt,
    results: SectionResults::Own {
        write: results,
        read: read_result,
    },
};

/// The `tool_declare` message as the template writes it, then how a call looks.
fn system_prompt(tools: &ToolSet) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {
                "name": t.def.name, "description": t.def.description, "parameters": t.def.parameters,
            }})
        })
        .collect();
    format!(
        "{}{}{}\n\n\
         To call tools, write one section with one block per call:\n\
         {}{}{}\n\
         The block's id is functions.NAME:INDEX, the tool's name and the call's index (0 for \
         the first call, 1 for the next, and so on); the arguments are one JSON object that \
         follows the tool's parameters. For several calls, write the blocks one after the \
         other inside the one section. Each result comes back as \"{RETURN_OF}ID\" and the \
         result on the next line. Call tools only when they help; otherwise answer in text.\n",
        DECLARE.0,
        Value::Array(list),
        DECLARE.1,
        SECTION.0,
        prompt::example_call(tools, |name, input| block(
            name,
            0,
            &prompt::args_json(input)
        )),
        SECTION.1,
    )
}

fn read_prompt(name: &str, system: &str) -> Option<(Protocol, ToolSet)> {
    let start = system.find(DECLARE.0)? + DECLARE.0.len();
    let list = serde_json::Deserializer::from_str(&system[start..])
        .into_iter::<Vec<Value>>()
        .next()?
        .ok()?;
    let defs = list
        .iter()
        .map(prompt::tool_def)
        .collect::<Option<Vec<_>>>()?;
    Some((Protocol::from_name(name).ok()?, ToolSet::new(defs).ok()?))
}

/// Each result under the id of the call it answers, in order.
fn results(results: &[(&str, &str)]) -> String {
    results
        .iter()
        .enumerate()
        .map(|(i, (n, r))| format!("{RETURN_OF}{}\n{r}", call_id(n, i)))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The text after the `## Return of ID` line.
fn read_result(text: &str) -> String {
    let text = text.trim_start();
    match text.strip_prefix(RETURN_OF) {
        Some(rest) => rest.split_once('\n').map_or("", |(_, r)| r).to_string(),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&KIMI_K2);

    fn call_ids(text: &str) -> Vec<String> {
        P.parse_generated(&tools(), text.as_bytes())
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::ToolCall(c) => Some(c.tool_call_id.to_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_call_span_is_the_call() {
        call_span_is_the_call(&P);
    }

    #[test]
    fn the_id_is_the_tool_call_id() {
        let text = "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Oslo\"}<|tool_call_end|><|tool_calls_section_end|>";
        assert_eq!(call_ids(text), ["functions.get_weather:0"]);
        // Without the prefix or the index, the header still names the tool and is the id.
        let bare = format!("{CALL_BEGIN} get_weather:3 {ARGS_BEGIN}{{}}{CALL_END}");
        assert_eq!(call_ids(&bare), ["get_weather:3"]);
    }

    #[test]
    fn two_parallel_calls_count_their_index_up() {
        let written = two_calls_written(&P, "rust");
        assert_eq!(written.matches(SECTION.0).count(), 1);
        assert_eq!(
            call_ids(&written),
            ["functions.get_weather:0", "functions.search:1"]
        );
    }

    #[test]
    fn an_id_given_twice_is_not_reused() {
        let text = format!("{}{}", weather_call(&P, "Paris"), weather_call(&P, "Oslo"));
        let ids = call_ids(&text);
        assert_eq!(ids[0], "functions.get_weather:0");
        assert_ne!(ids[1], ids[0]);
    }

    /// The template does not open the block (`--reasoning-open` reads one that did: the case
    /// file).
    #[test]
    fn reasoning_is_not_open_by_default() {
        assert!(!P.reasoning_open());
    }

    /// With reasoning open, `</think>` right after a section's opening is the close of the
    /// reasoning: every byte is under a span. (The parses: the case file.)
    #[test]
    fn the_think_close_after_a_section_opening_closes_the_reasoning_span() {
        let p = P.with_reasoning_open(Some(true));
        let text = "<|tool_calls_section_begin|></think>";
        let parsed = p.parse_generated(&tools(), text.as_bytes());
        assert!(
            parsed
                .spans
                .iter()
                .any(|s| s.kind == SpanKind::Reasoning && s.start == 0 && s.end == text.len()),
            "{:?}",
            parsed.spans
        );
    }

    #[test]
    fn results_and_the_prompt_read_back() {
        let r = P.format_results(&[("get_weather", "18 degrees"), ("search", "none")]);
        assert!(r.starts_with("## Return of functions.get_weather:0\n18 degrees"));
        assert!(r.contains("## Return of functions.search:1\nnone"));
        assert_eq!(
            P.read_result(&P.format_result("f", "18 degrees\nand wind")),
            "18 degrees\nand wind"
        );
        assert!(P.system_prompt(&tools()).starts_with(DECLARE.0));
    }
}
