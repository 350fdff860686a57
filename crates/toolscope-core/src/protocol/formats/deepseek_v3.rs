//! `deepseek-v3`: the special tokens of DeepSeek V3 and R1, with each call's arguments in a
//! JSON code fence after a `function` header.
//!
//! ````text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"city": "Paris"}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ````
//!
//! (`｜` is U+FF5C, `▁` is U+2581.) The header is the call's type (`function`), the separator
//! token and the tool's name on a line of its own. Parallel calls are more call blocks in the
//! one section, each after a newline, as the chat template joins them. Results come back each
//! between `<｜tool▁output▁begin｜>` and `<｜tool▁output▁end｜>`, the results of one turn together
//! in `<｜tool▁outputs▁begin｜>` … `<｜tool▁outputs▁end｜>`, one per line.
//!
//! Reasoning: R1 reasons in `<think>` … `</think>`; V3 does not reason. The default is that the
//! model writes `<think>` itself, as R1-0528 (the R1 that calls tools) does and as a V3 output
//! (with no reasoning at all) must be read. The first R1's template opens the block itself and
//! its outputs show only `</think>`: `--reasoning-open` reads those. Markup inside reasoning is
//! reasoning.
//!
//! The system prompt lists the tools the DeepSeek way: `## Tools`, then a `### name` heading, a
//! description and the parameters' JSON Schema for each, then the exact call format.
//!
//! What the parser forgives besides what every framed format does: a fence without `json`, no
//! fence at all, and a header without the `function` type (`name<｜tool▁sep｜>`, the V3.1 way).

use super::sections::{SectionResults, Sectioned};
use crate::protocol::scan::framed::{ArgsBegin, FramedSyntax, Header};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{Card, Reasoning, read_markdown_tools_prompt};
use crate::protocol::text::prompt;
use crate::tool::ToolSet;

// The family's special tokens (DeepSeek V3.1 writes the same ones).
pub(super) const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
pub(super) const CALLS_END: &str = "<｜tool▁calls▁end｜>";
pub(super) const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
pub(super) const CALL_END: &str = "<｜tool▁call▁end｜>";
pub(super) const SEP: &str = "<｜tool▁sep｜>";
const OUTPUTS_BEGIN: &str = "<｜tool▁outputs▁begin｜>";
const OUTPUTS_END: &str = "<｜tool▁outputs▁end｜>";
pub(super) const OUTPUT_BEGIN: &str = "<｜tool▁output▁begin｜>";
pub(super) const OUTPUT_END: &str = "<｜tool▁output▁end｜>";
const FENCE_JSON: &str = "```json";
const FENCE: &str = "```";
/// The call type the template writes before the separator.
const FUNCTION: &str = "function";

/// The header is `function<｜tool▁sep｜>name` (and the newline); without the separator, or with
/// nothing after it, the name is what there is.
fn header(head: &str) -> Option<Header> {
    let name = match head.split_once(SEP) {
        Some((kind, name)) if name.trim().is_empty() => kind,
        Some((_, name)) => name,
        None => head,
    };
    Some(Header {
        name: name.trim().to_string(),
        id: None,
    })
}

static SYNTAX: FramedSyntax = FramedSyntax {
    section: Some((CALLS_BEGIN, CALLS_END)),
    call_begin: CALL_BEGIN,
    args_begin: &[
        ArgsBegin::Marker(FENCE_JSON),
        ArgsBegin::Marker(FENCE),
        ArgsBegin::Object,
    ],
    header,
    args_suffix: Some(FENCE),
    call_end: Some(CALL_END),
    separator: None,
};

/// How the system prompt shows the call format; recognising the prompt looks for it.
const FORMAT: &str = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>tool_name\n```json\narguments_json\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";

/// One call block, as the template renders it.
fn block(name: &str, _index: usize, args: &str) -> String {
    format!("{CALL_BEGIN}{FUNCTION}{SEP}{name}\n{FENCE_JSON}\n{args}\n{FENCE}{CALL_END}")
}

/// The card of a DeepSeek format, named `name`, for the models `families`, its parser named
/// `servers` by the inference servers: the family's end-of-sentence token and its reasoning in
/// `<think>` … `</think>`.
pub(super) const fn deepseek_card(
    name: &'static str,
    families: &'static str,
    servers: &'static [(&'static str, &'static str)],
) -> Card {
    Card {
        servers,
        end_tokens: &["<｜end▁of▁sentence｜>"],
        reasoning: Reasoning::THINK,
        ..Card::new(name, families)
    }
}

/// `deepseek-v3`.
pub(crate) static DEEPSEEK_V3: Sectioned = Sectioned {
    card: Card {
        markers: &[
            "<｜tool▁calls▁begin｜> <｜tool▁call▁begin｜>function<｜tool▁sep｜>",
            "<｜tool▁call▁begin｜>function<｜tool▁sep｜>",
        ],
        ..deepseek_card(
            "deepseek-v3",
            "DeepSeek R1, V3",
            &[
                vllm("deepseek_v3"),
                sglang("deepseekv3"),
                llama_cpp("DeepSeek R1"),
            ],
        )
    },
    syntax: &SYNTAX,
    block,
    // The calls in one section, one per line.
    joiner: "\n",
    prompt: system_prompt,
    read_prompt: |name, system| read_markdown_tools_prompt(name, FORMAT, system),
    results: SectionResults::Own {
        write: results,
        read: |text| prompt::between(text, OUTPUT_BEGIN, OUTPUT_END),
    },
};

/// The tools under `## Tools` as the DeepSeek templates list them, then the format.
fn system_prompt(tools: &ToolSet) -> String {
    let mut s = prompt::markdown_tools(tools, "You have access to the following tools:");
    s.push_str(&format!(
        "IMPORTANT: ALWAYS adhere to this exact format for tool use:\n{FORMAT}\n\n\
         Where:\n\
         - `tool_name` must be exactly one of the tools above;\n\
         - `arguments_json` must be one JSON object that follows the tool's Parameters schema;\n\
         - for several calls, write one {CALL_BEGIN}…{CALL_END} block per call, each on a new \
         line, all inside the one {CALLS_BEGIN}…{CALLS_END}.\n\
         Results come back between {OUTPUT_BEGIN} and {OUTPUT_END}.\n"
    ));
    s
}

/// The results of one turn in one outputs block, one per line.
fn results(results: &[(&str, &str)]) -> String {
    let outputs: Vec<String> = results
        .iter()
        .map(|(_, r)| format!("{OUTPUT_BEGIN}{r}{OUTPUT_END}"))
        .collect();
    format!("{OUTPUTS_BEGIN}{}{OUTPUTS_END}", outputs.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&DEEPSEEK_V3);

    #[test]
    fn the_call_span_is_the_call() {
        call_span_is_the_call(&P);
    }

    #[test]
    fn parallel_calls_are_two_blocks_of_one_section() {
        let written = two_calls_written(&P, "rust");
        assert_eq!(written.matches(CALLS_BEGIN).count(), 1);
        assert_eq!(written.matches(CALL_BEGIN).count(), 2);
        assert!(written.contains(&format!("{CALL_END}\n{CALL_BEGIN}")));
        let r = P.format_results(&[("get_weather", "18 degrees"), ("search", "none")]);
        assert_eq!(r.matches(OUTPUTS_BEGIN).count(), 1);
        assert_eq!(r.matches(OUTPUT_BEGIN).count(), 2);
    }

    /// By default the model opens the reasoning block itself (the first R1's template opened
    /// it: `--reasoning-open`, in the case file).
    #[test]
    fn reasoning_is_not_open_by_default() {
        assert!(!P.reasoning_open());
    }

    #[test]
    fn the_prompt_and_the_generate_path() {
        let prompt = P.system_prompt(&tools());
        assert!(prompt.contains("## Tools") && prompt.contains("### get_weather"));
        // deepseek-v3.1's prompt is not taken for this one, nor this one for it.
        let v31 = Protocol::from_name("deepseek-v3.1").unwrap();
        assert_eq!(
            Protocol::detect_from_prompt(&v31.system_prompt(&tools()))
                .unwrap()
                .0,
            v31
        );
        let parsed = P.parse_generated(&tools(), weather_call(&P, "Oslo").as_bytes());
        assert!(matches!(parsed.parts[0], Part::ToolCall(_)));
    }
}
