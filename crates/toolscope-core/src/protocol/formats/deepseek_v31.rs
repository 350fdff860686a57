//! `deepseek-v3.1`: DeepSeek V3.1's special tokens around one JSON object per call.
//!
//! ```text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ```
//!
//! (`｜` is U+FF5C, `▁` is U+2581.) Parallel calls are chained inside one section, with nothing
//! between them; results come back each between `<｜tool▁output▁begin｜>` and
//! `<｜tool▁output▁end｜>`. The model reasons in `<think>` … `</think>`; in thinking mode the
//! template opens the block itself (`--reasoning-open`). The system prompt lists the tools under
//! `## Tools` as the template does: a `### name` heading, a description and the parameters'
//! JSON Schema each.

use super::deepseek_v3::{
    CALL_BEGIN, CALL_END, CALLS_BEGIN, CALLS_END, OUTPUT_BEGIN, OUTPUT_END, SEP, deepseek_card,
};
use super::sections::{SectionResults, Sectioned};
use crate::protocol::scan::framed::{ArgsBegin, FramedSyntax, Header};
use crate::protocol::spec::server::{llama_cpp, sglang, vllm};
use crate::protocol::spec::{ResultWrap, read_markdown_tools_prompt};
use crate::protocol::text::prompt;

static SYNTAX: FramedSyntax = FramedSyntax {
    section: Some((CALLS_BEGIN, CALLS_END)),
    header: |head| {
        Some(Header {
            name: head.trim().to_string(),
            id: None,
        })
    },
    call_end: Some(CALL_END),
    ..FramedSyntax::new(CALL_BEGIN, &[ArgsBegin::Marker(SEP)])
};

/// How the system prompt shows the call format; recognising the prompt looks for it.
const FORMAT: &str = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool_name<｜tool▁sep｜>arguments_json<｜tool▁call▁end｜>…<｜tool▁calls▁end｜>";

fn block(name: &str, _index: usize, args: &str) -> String {
    format!("{CALL_BEGIN}{name}{SEP}{args}{CALL_END}")
}

/// `deepseek-v3.1`.
pub(crate) static DEEPSEEK_V31: Sectioned = Sectioned {
    card: deepseek_card(
        "deepseek-v3.1",
        "DeepSeek V3.1",
        &[
            vllm("deepseek_v31"),
            sglang("deepseekv31"),
            llama_cpp("DeepSeek V3.1"),
        ],
    ),
    syntax: &SYNTAX,
    block,
    // Parallel calls are chained, nothing between them.
    joiner: "",
    prompt: |tools| prompt::markdown_tools_prompt(tools, FORMAT),
    read_prompt: |name, system| read_markdown_tools_prompt(name, FORMAT, system),
    // Each result in its own output block, one after the other.
    results: SectionResults::Wrapped(ResultWrap::between(OUTPUT_BEGIN, OUTPUT_END).joined("")),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&DEEPSEEK_V31);

    #[test]
    fn parallel_calls_chain_in_one_section_and_results_in_blocks() {
        let written = two_calls_written(&P, "rust");
        assert_eq!(written.matches(CALLS_BEGIN).count(), 1);
        let r = P.format_results(&[("get_weather", "18 degrees"), ("search", "none")]);
        assert_eq!(r.matches(OUTPUT_BEGIN).count(), 2);
        let prompt = P.system_prompt(&tools());
        assert!(prompt.contains("## Tools") && prompt.contains("### get_weather"));
        // The generate path gives the same parts.
        let parsed = P.parse_generated(
            &tools(),
            P.format_call("get_weather", &json!({})).as_bytes(),
        );
        assert!(matches!(parsed.parts[0], Part::ToolCall(_)));
        assert_eq!(Collapsed::of(&parsed.parts).calls.len(), 1);
    }
}
