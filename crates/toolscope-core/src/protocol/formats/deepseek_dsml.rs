//! `deepseek-dsml`: DeepSeek V3.2 and V4, whose calls are DSML markup — `<｜DSML｜invoke>`
//! elements in a `<｜DSML｜function_calls>` block (V4: `<｜DSML｜tool_calls>`), each argument a
//! `<｜DSML｜parameter>` element that says whether its value is text or JSON:
//!
//! ```text
//! <｜DSML｜function_calls>
//! <｜DSML｜invoke name="get_weather">
//! <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
//! <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! </｜DSML｜function_calls>
//! ```
//!
//! (`｜` is U+FF5C.) A `string="true"` value is raw text, byte-exact, typed by the schema; a
//! `string="false"` value is JSON (relaxed; text that is not JSON stays text and the schema
//! types it). The markup is read by the function-markup scanner qwen3-coder uses, with all it
//! forgives and decides (close tags inside values, a missing close tag, an invoke without its
//! block). The model reasons in `<think>` … `</think>`; in thinking mode the template opens the
//! block itself (`--reasoning-open`). The template lists the tools as JSON inside `<functions>`
//! after the call format, and gives results back in `<function_results>`, one `<result>` each.

use serde_json::Value;

use super::qwen3_coder;
use crate::protocol::scan::markup::{BlockTag, Dialect, MarkupScanner, Opener};
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning};
use crate::protocol::text::prompt;
use crate::protocol::text::prompt::first_argument;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `deepseek-dsml`.
pub(crate) struct DeepseekDsml;

const P: &str = "｜DSML｜";
const BLOCK: &str = "function_calls";
const TOOLS_BEGIN: &str = "Here are the functions available in JSONSchema format:\n<functions>\n";
const TOOLS_END: &str = "</functions>";
const RESULTS_BEGIN: &str = "<function_results>";
const RESULTS_END: &str = "</function_results>";
const RESULT_BEGIN: &str = "<result>";
const RESULT_END: &str = "</result>";

const DIALECT: Dialect = Dialect {
    blocks: &[
        BlockTag {
            open: "<｜DSML｜function_calls",
            close: "</｜DSML｜function_calls",
        },
        BlockTag {
            open: "<｜DSML｜tool_calls",
            close: "</｜DSML｜tool_calls",
        },
    ],
    function: Opener::Named("<｜DSML｜invoke name="),
    function_close: "</｜DSML｜invoke",
    parameter: Opener::Named("<｜DSML｜parameter name="),
    parameter_close: "</｜DSML｜parameter",
    separators: false,
    string_attr: Some("string"),
    function_shown: "<｜DSML｜invoke name=\"NAME\">",
    parameter_shown: "<｜DSML｜parameter name=…>",
};

impl ProtocolSpec for DeepseekDsml {
    fn name(&self) -> &'static str {
        "deepseek-dsml"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["deepseek-v3.2", "deepseek-v4"]
    }

    fn families(&self) -> &'static str {
        "DeepSeek V3.2, V4"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["<｜end▁of▁sentence｜>"]
    }

    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        vec![
            format!("<{P}function_calls>"),
            format!("<{P}tool_calls>"),
            format!("<{P}invoke name="),
        ]
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning::THINK
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let (name, example) = prompt::example_call(tools);
        let tools_json = prompt::json_tool_lines(tools, false, "", "");
        format!(
            "## Tools\n\n\
             You have access to a set of tools you can use to answer the user's question.\n\
             You can invoke functions by writing a \"<{P}{BLOCK}>\" block like the following as part of your reply:\n\
             <{P}{BLOCK}>\n<{P}invoke name=\"$FUNCTION_NAME\">\n\
             <{P}parameter name=\"$PARAMETER_NAME\" string=\"true|false\">$PARAMETER_VALUE</{P}parameter>\n...\n\
             </{P}invoke>\n</{P}{BLOCK}>\n\n\
             Write string values as they are, without quotes or escaping, with string=\"true\"; write \
             numbers, booleans, arrays and objects as JSON, with string=\"false\". Several invokes in one \
             block are calls made together. For example:\n{}\n\n\
             Results come back in <function_results>, one <result> per call.\n\n\
             {TOOLS_BEGIN}{tools_json}{TOOLS_END}\n",
            format_calls(&[(&name, &example)])
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(&format!("<{P}{BLOCK}>")) {
            return None;
        }
        let tools = prompt::read_json_tool_lines(system, TOOLS_BEGIN, TOOLS_END, "", "")?;
        Some((Protocol::from_name(self.name()).ok()?, tools))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format_calls(&[(name, input)])
    }

    fn format_calls(&self, _: &Protocol, calls: &[(&str, &Value)]) -> String {
        format_calls(calls)
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format!("{RESULTS_BEGIN}\n{RESULT_BEGIN}{result}{RESULT_END}\n{RESULTS_END}")
    }

    fn format_results(&self, _: &Protocol, results: &[(&str, &str)]) -> String {
        let each: String = results
            .iter()
            .map(|(_, r)| format!("{RESULT_BEGIN}{r}{RESULT_END}\n"))
            .collect();
        format!("{RESULTS_BEGIN}\n{each}{RESULTS_END}")
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
            "<{P}{BLOCK}>\n<{P}invoke name=\"\">\n<{P}parameter name=\"{key}\" string=\"true\">{value}</{P}parameter>\n</{P}invoke>\n</{P}{BLOCK}>"
        )
    }
}

/// Calls as V3.2 writes them: every invoke in one `function_calls` block.
fn format_calls(calls: &[(&str, &Value)]) -> String {
    qwen3_coder::format_invokes(P, BLOCK, calls, true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::tests_support::{every_split, tools};

    fn p() -> Protocol {
        Protocol::from_name("deepseek-dsml").unwrap()
    }

    const CALL: &str = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";

    #[test]
    fn one_call_with_reasoning_and_text_around() {
        let text = format!("<think>Paris.</think>Checking.\n{CALL}\nDone.");
        let c = every_split(&p(), &text);
        assert_eq!(
            c.calls,
            [("get_weather".into(), json!({"city": "Paris", "days": 3}))]
        );
        assert_eq!(c.reasoning, "Paris.");
        assert_eq!(c.text, "Checking.\n\nDone.");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[test]
    fn v4_tool_calls_blocks_and_parallel_invokes() {
        let text = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Oslo</｜DSML｜parameter>\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">rain</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [
                ("get_weather".into(), json!({"city": "Oslo"})),
                ("search".into(), json!({"query": "rain"}))
            ]
        );
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[test]
    fn string_false_values_are_json_and_string_true_values_are_text() {
        // An unknown tool has no schema: only the attribute says what a value is.
        let text = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"plan\">\n<｜DSML｜parameter name=\"steps\" string=\"false\">[1, {\"a\": true}]</｜DSML｜parameter>\n<｜DSML｜parameter name=\"n\" string=\"false\">2.5</｜DSML｜parameter>\n<｜DSML｜parameter name=\"code\" string=\"true\">[1, 2]</｜DSML｜parameter>\n<｜DSML｜parameter name=\"word\" string=\"false\">hello</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [(
                "plan".into(),
                json!({"steps": [1, {"a": true}], "n": 2.5, "code": "[1, 2]", "word": "hello"})
            )]
        );
        assert_eq!(c.errors, ["unknown-tool"]);
    }

    #[test]
    fn values_are_byte_exact_and_may_hold_markup() {
        let content = "\n  x = \"</｜DSML｜parameter>\"\n<｜DSML｜invoke name=\"y\">\n\n";
        let text = format!(
            "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"write_file\">\n<｜DSML｜parameter name=\"content\" string=\"true\">{content}</｜DSML｜parameter>\n<｜DSML｜parameter name=\"path\" string=\"true\">/a.py</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
        );
        let c = every_split(&p(), &text);
        assert_eq!(
            c.calls,
            [(
                "write_file".into(),
                json!({"content": content, "path": "/a.py"})
            )]
        );
    }

    #[test]
    fn unterminated_and_malformed() {
        let cut = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Par";
        let c = every_split(&p(), cut);
        assert!(c.calls.is_empty());
        assert_eq!(c.text, cut, "nothing lost");
        assert_eq!(c.errors, ["unfinished-tool-call"]);
        let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
        let c = every_split(&p(), &bad);
        assert!(c.calls.is_empty());
        assert_eq!(c.text, bad, "nothing lost");
        assert!(!c.errors.is_empty());
    }

    #[test]
    fn the_prompt_lists_the_tools_and_reads_back() {
        let prompt = p().system_prompt(&tools());
        assert!(
            prompt.contains("<functions>\n{\"name\":\"get_weather\""),
            "{prompt}"
        );
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, p());
        assert_eq!(set.to_json(), tools().to_json());
        let two = p().format_results(&[("a", "1"), ("b", "2")]);
        assert_eq!(
            two,
            "<function_results>\n<result>1</result>\n<result>2</result>\n</function_results>"
        );
        assert_eq!(
            p().read_result(&p().format_result("get_weather", "sunny")),
            "sunny"
        );
        assert_eq!(Protocol::from_name("deepseek-v3.2").unwrap(), p());
    }

    #[test]
    fn auto_reads_it_from_its_block() {
        let d = Protocol::detect(&tools(), CALL.as_bytes());
        assert_eq!(d.protocol.name(), "deepseek-dsml", "{}", d.reason);
    }
}
