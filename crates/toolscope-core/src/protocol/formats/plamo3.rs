//! `plamo3`: PLaMo 3's tags around each call's name and JSON arguments, a member of the
//! special-token section family.
//!
//! ```text
//! <|plamo:begin_tool_requests:plamo|><|plamo:begin_tool_request:plamo|><|plamo:begin_tool_name:plamo|>get_weather<|plamo:end_tool_name:plamo|><|plamo:begin_tool_arguments:plamo|><|plamo:constrain|>json<|plamo:msg|>{"city": "Paris"}<|plamo:end_tool_arguments:plamo|><|plamo:end_tool_request:plamo|><|plamo:end_tool_requests:plamo|>
//! ```
//!
//! Parallel calls are more `tool_request` blocks in the one `tool_requests` section. The
//! arguments may also follow `<|plamo:begin_tool_arguments:plamo|>` at once, without the
//! `<|plamo:constrain|>json<|plamo:msg|>` pair (the earlier form). The tags are not single
//! tokens, so a stream may split them anywhere: the engine holds back only a tail that could
//! still begin one. The model reasons between `<|plamo:begin_think:plamo|>` and
//! `<|plamo:end_think:plamo|>`. The prompt lists the tools as JSON, one a line, and results come
//! back each between `<|plamo:begin_tool_result:plamo|>` and `<|plamo:end_tool_result:plamo|>`.

use super::sections::{SectionResults, Sectioned};
use crate::protocol::scan::framed::{ArgsBegin, FramedSyntax, Header, valid_name};
use crate::protocol::spec::server::vllm;
use crate::protocol::spec::{Card, Protocol, Reasoning, ResultWrap, read_back};
use crate::protocol::text::prompt::{self, ToolList};
use crate::tool::ToolSet;

/// PLaMo's tag `<|plamo:WHAT:plamo|>`.
macro_rules! tag {
    ($what:literal) => {
        concat!("<|plamo:", $what, ":plamo|>")
    };
}

const REQUESTS_BEGIN: &str = tag!("begin_tool_requests");
const REQUESTS_END: &str = tag!("end_tool_requests");
const REQUEST_BEGIN: &str = tag!("begin_tool_request");
const REQUEST_END: &str = tag!("end_tool_request");
const NAME_BEGIN: &str = tag!("begin_tool_name");
const NAME_END: &str = tag!("end_tool_name");
const ARGS_BEGIN: &str = tag!("begin_tool_arguments");
const ARGS_END: &str = tag!("end_tool_arguments");
const CONSTRAIN: &str = "<|plamo:constrain|>json";
const MSG: &str = "<|plamo:msg|>";
/// Each result between its tags, one after the other.
const RESULTS: ResultWrap =
    ResultWrap::between(tag!("begin_tool_result"), tag!("end_tool_result")).joined("");
const TOOLS: ToolList =
    ToolList::functions(concat!(tag!("begin_tools"), "\n"), tag!("end_tools")).one_a_line();

/// The header between `<|plamo:begin_tool_request:plamo|>` and the arguments: the name in its
/// tags, then the arguments' tag, with the `constrain`/`msg` pair's first half when the
/// arguments follow `<|plamo:msg|>`.
fn header(head: &str) -> Option<Header> {
    let rest = head.trim_start().strip_prefix(NAME_BEGIN)?;
    let (name, rest) = rest.split_once(NAME_END)?;
    let rest = rest.trim_start().strip_prefix(ARGS_BEGIN)?.trim();
    if !(rest.is_empty() || rest == CONSTRAIN) {
        return None;
    }
    let name = name.trim();
    valid_name(name).then(|| Header {
        name: name.to_string(),
        id: None,
    })
}

static SYNTAX: FramedSyntax = FramedSyntax {
    section: Some((REQUESTS_BEGIN, REQUESTS_END)),
    call_begin: REQUEST_BEGIN,
    // `<|plamo:msg|>` where the arguments follow it, else the arguments' `{` itself.
    args_begin: &[ArgsBegin::Marker(MSG), ArgsBegin::Object],
    header,
    args_suffix: Some(ARGS_END),
    call_end: Some(REQUEST_END),
    separator: None,
};

fn block(name: &str, _index: usize, args: &str) -> String {
    format!(
        "{REQUEST_BEGIN}{NAME_BEGIN}{name}{NAME_END}{ARGS_BEGIN}{CONSTRAIN}{MSG}{args}{ARGS_END}{REQUEST_END}"
    )
}

fn system_prompt(tools: &ToolSet) -> String {
    let example = prompt::example_call(tools, |name, input| {
        format!(
            "{REQUESTS_BEGIN}{}{REQUESTS_END}",
            block(name, 0, &input.to_string())
        )
    });
    format!(
        "You can use the following tools, one JSON object a line:\n{}\n\n\
         To call tools, open {REQUESTS_BEGIN}, write one {REQUEST_BEGIN} … {REQUEST_END} block per call \
         (the tool's name between {NAME_BEGIN} and {NAME_END}, then its arguments as a JSON object between \
         {ARGS_BEGIN}{CONSTRAIN}{MSG} and {ARGS_END}), and close {REQUESTS_END}.\n\n\
         For example:\n{example}\n\n\
         Each result comes back between {} and {}. Call a tool only when it helps; \
         otherwise answer in text.\n",
        TOOLS.write(tools),
        RESULTS.begin,
        RESULTS.end,
    )
}

fn read_prompt(name: &str, system: &str) -> Option<(Protocol, ToolSet)> {
    if !system.contains(REQUESTS_BEGIN) {
        return None;
    }
    read_back(name, TOOLS.read(system))
}

/// `plamo3`.
pub(crate) static PLAMO3: Sectioned = Sectioned {
    card: Card {
        aliases: &["plamo-3"],
        servers: &[vllm("plamo3")],
        // The token that opens the next turn ends this one (the model's end of sequence).
        end_tokens: &["<|plamo:tag|>"],
        reasoning: Reasoning::between(tag!("begin_think"), tag!("end_think")),
        ..Card::new("plamo3", "PLaMo 3")
    },
    syntax: &SYNTAX,
    block,
    joiner: "",
    prompt: system_prompt,
    read_prompt,
    results: SectionResults::Wrapped(RESULTS),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    #[test]
    fn parallel_calls_are_one_requests_block() {
        let p = Protocol::from_name("plamo3").unwrap();
        let written = two_calls_written(&p, "x");
        assert_eq!(written.matches(REQUESTS_BEGIN).count(), 1);
    }
}
