//! `minimax-m2`: MiniMax M2 and M2.5. Calls are `<invoke>` elements in a `<minimax:tool_call>`
//! block, each argument a `<parameter name=…>` element holding its value as raw text:
//!
//! ```text
//! <think>Paris, so get_weather.</think>
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="city">Paris</parameter>
//! <parameter name="days">3</parameter>
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! The template opens `<think>` itself, so the output starts inside reasoning and shows only
//! `</think>` (`--reasoning-open false` reads an output that does not). Values follow their tag
//! at once and are typed by the schema (the template writes text as it is and anything else as
//! JSON); every byte between the tags is the value. The markup is read by the function-markup
//! scanner qwen3-coder uses, with all it forgives and decides (close tags inside values, a
//! missing `</parameter>` or `</invoke>`, an `<invoke>` without its block). The template lists
//! the tools one JSON object per `<tool>` line inside `<tools>` and gives results back in a
//! `tool` turn, each in a `<response>` element.

use serde_json::Value;

use super::qwen3_coder;
use crate::protocol::scan::markup::{BlockTag, Dialect, MarkupScanner, Opener};
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning};
use crate::protocol::text::prompt;
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `minimax-m2`.
pub(crate) struct MinimaxM2;

const BLOCK: &str = "minimax:tool_call";
const TOOLS_BEGIN: &str = "# Tools\nYou may call one or more tools to assist with the user query.\nHere are the tools available in JSONSchema format:\n\n<tools>\n";
const TOOLS_END: &str = "</tools>";
const RESULT_BEGIN: &str = "<response>";
const RESULT_END: &str = "</response>";

const DIALECT: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<minimax:tool_call",
        close: "</minimax:tool_call",
    }],
    function: Opener::Named("<invoke name="),
    function_close: "</invoke",
    parameter: Opener::Named("<parameter name="),
    parameter_close: "</parameter",
    separators: false,
    string_attr: None,
    function_shown: "<invoke name=\"NAME\">",
    parameter_shown: "<parameter name=…>",
};

impl ProtocolSpec for MinimaxM2 {
    fn name(&self) -> &'static str {
        "minimax-m2"
    }

    fn families(&self) -> &'static str {
        "MiniMax M2, M2.1, M2.5"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["[e~["]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![format!("<{BLOCK}> <invoke name="), "<invoke name=".into()]
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning {
            starts_inside: true,
            ..Reasoning::THINK
        }
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let (name, example) = prompt::example_call(tools);
        format!(
            "{TOOLS_BEGIN}{}{TOOLS_END}\n\n\
             When making tool calls, use XML format to invoke tools and pass parameters:\n\n\
             <{BLOCK}>\n<invoke name=\"tool-name-1\">\n<parameter name=\"param-key-1\">param-value-1</parameter>\n\
             <parameter name=\"param-key-2\">param-value-2</parameter>\n...\n</invoke>\n</{BLOCK}>\n\n\
             For example:\n{}\n\n\
             Write text values as they are and numbers, booleans, arrays and objects as JSON. Several \
             <invoke> elements in one block are calls made together. Call a tool only when it helps; \
             otherwise answer in text. Results come back in a tool turn, each in a <response> element.\n",
            prompt::json_tool_lines(tools, false, "<tool>", "</tool>"),
            format_calls(&[(&name, &example)])
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("<{BLOCK}>")) {
            return None;
        }
        let tools =
            prompt::read_json_tool_lines(system, TOOLS_BEGIN, TOOLS_END, "<tool>", "</tool>")?;
        Some((Protocol::from_name(self.name()).ok()?, tools))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format_calls(&[(name, input)])
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        format_calls(calls)
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format!("{RESULT_BEGIN}{result}{RESULT_END}")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        prompt::between(text, RESULT_BEGIN, RESULT_END)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), &DIALECT))
    }

    /// An invoke without a name.
    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        let (key, value) = first_argument(input);
        format!(
            "<{BLOCK}>\n<invoke name=\"\">\n<parameter name=\"{key}\">{value}</parameter>\n</invoke>\n</{BLOCK}>"
        )
    }
}

/// Calls as the family writes them: every invoke in one block.
fn format_calls(calls: &[(&str, &Value)]) -> String {
    qwen3_coder::format_invokes("", BLOCK, calls, false)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::tests_support::{every_split, tools};

    fn p() -> Protocol {
        Protocol::from_name("minimax-m2").unwrap()
    }

    const CALL: &str = "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>";

    #[test]
    fn starts_inside_reasoning_then_calls_with_text_around() {
        let text = format!("Paris needs the weather.\n</think>\nChecking.\n{CALL}\nDone.");
        let c = every_split(&p(), &text);
        assert_eq!(
            c.calls,
            [("get_weather".into(), json!({"city": "Paris", "days": 3}))]
        );
        assert_eq!(c.reasoning.trim(), "Paris needs the weather.");
        assert_eq!(c.text, "\nChecking.\n\nDone.");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[test]
    fn an_output_that_does_not_reason_reads_with_reasoning_closed() {
        let closed = p().with_reasoning_open(Some(false));
        let c = every_split(&closed, CALL);
        assert_eq!(c.calls.len(), 1);
        assert_eq!(c.reasoning, "");
    }

    #[test]
    fn parallel_invokes_in_one_block() {
        let text = p().format_calls(&[
            ("get_weather", &json!({"city": "Paris"})),
            ("search", &json!({"query": "rain"})),
        ]);
        assert_eq!(text.matches("<minimax:tool_call>").count(), 1);
        let c = every_split(&p(), &format!("</think>{text}"));
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), json!({"city": "Paris"})),
                ("search".into(), json!({"query": "rain"}))
            ]
        );
    }

    #[test]
    fn values_are_byte_exact_and_may_hold_markup() {
        let content = "\n  fn main() {}\n<parameter name=\"path\">x</parameter>\n\n";
        let text = format!(
            "</think><minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter name=\"path\">/a.rs</parameter>\n<parameter name=\"content\">{content}</parameter>\n</invoke>\n</minimax:tool_call>"
        );
        let c = every_split(&p(), &text);
        assert_eq!(
            c.calls,
            [(
                "write_file".into(),
                json!({"path": "/a.rs", "content": content})
            )]
        );
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        // `days` is an integer, `city` a string: JSON-looking text there stays text.
        let text = "</think><minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">[1, 2]</parameter>\n<parameter name=\"days\"> 4 </parameter>\n</invoke>\n</minimax:tool_call>";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [("get_weather".into(), json!({"city": "[1, 2]", "days": 4}))]
        );
    }

    #[test]
    fn names_may_be_single_quoted_or_bare() {
        for tag in ["<invoke name='get_weather'>", "<invoke name=get_weather>"] {
            let text = format!(
                "</think><minimax:tool_call>\n{tag}\n<parameter name='city'>Oslo</parameter>\n</invoke>\n</minimax:tool_call>"
            );
            let c = every_split(&p(), &text);
            assert_eq!(c.calls, [("get_weather".into(), json!({"city": "Oslo"}))]);
        }
    }

    #[test]
    fn unterminated_malformed_and_unknown() {
        let cut = "</think><minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Par";
        let c = every_split(&p(), cut);
        assert!(c.calls.is_empty());
        assert!(
            c.text.contains("<parameter name=\"city\">Par"),
            "{:?}",
            c.text
        );
        assert!(c.errors.iter().any(|e| e.contains("unfinished-tool-call")));

        let bad = format!(
            "</think>{}",
            p().malformed_call("get_weather", &json!({"city": "Paris"}))
        );
        let c = every_split(&p(), &bad);
        assert!(c.calls.is_empty());
        assert!(c.text.contains("<invoke name=\"\">"), "{:?}", c.text);
        assert!(c.errors.iter().any(|e| e.contains("malformed-tool-call")));

        let unknown = "</think><minimax:tool_call>\n<invoke name=\"fly\">\n<parameter name=\"to\">Mars</parameter>\n</invoke>\n</minimax:tool_call>";
        let c = every_split(&p(), unknown);
        assert_eq!(c.calls, [("fly".into(), json!({"to": "Mars"}))]);
        assert!(c.errors.iter().any(|e| e.contains("unknown-tool")));
    }

    #[test]
    fn auto_reads_it_from_its_block_or_invoke() {
        let d = Protocol::detect(&tools(), CALL.as_bytes());
        assert_eq!(d.protocol.name(), "minimax-m2", "{}", d.reason);
    }

    #[test]
    fn the_prompt_lists_the_tools_and_reads_back() {
        let prompt = p().system_prompt(&tools());
        assert!(
            prompt.contains("<tool>{\"name\":\"get_weather\""),
            "{prompt}"
        );
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, p());
        assert_eq!(set.to_json(), tools().to_json());
        assert_eq!(
            p().read_result(&p().format_result("get_weather", "sunny")),
            "sunny"
        );
    }
}
