//! `glm-4.7`: GLM 4.7 and GLM 5. The markup of `glm-4.5` written without newlines:
//!
//! ```text
//! <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>
//! ```
//!
//! It is read by the same scanner (so either protocol reads both forms); the prompt, past calls
//! and results are written the 4.7 way.

use serde_json::Value;

use super::glm45;
use crate::protocol::scan::markup::MarkupScanner;
use crate::protocol::spec::{Protocol, ProtocolSpec, Reasoning};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// `glm-4.7`.
pub(crate) struct Glm47;

impl ProtocolSpec for Glm47 {
    fn name(&self) -> &'static str {
        "glm-4.7"
    }

    fn aliases(&self) -> &'static [&'static str] {
        &["glm-5"]
    }

    fn families(&self) -> &'static str {
        "GLM 4.7, GLM 5"
    }

    fn end_tokens(&self) -> &'static [&'static str] {
        &["<|user|>", "<|observation|>", "<|endoftext|>"]
    }

    fn markers(&self, tools: &ToolSet) -> Vec<String> {
        tools
            .iter()
            .flat_map(|t| {
                let name = &t.def.name;
                [
                    format!("<tool_call>{name} <arg_key>"),
                    format!("<tool_call>{name} </tool_call>"),
                ]
            })
            .collect()
    }

    fn reasoning(&self) -> Reasoning {
        Reasoning::THINK
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        glm45::system_prompt(tools, "")
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        glm45::read_prompt(self.name(), system, "")
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        glm45::format_call(name, input, "")
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        glm45::format_result(result, "")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        glm45::read_result(text)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), &glm45::DIALECT))
    }

    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        glm45::malformed_call(input, "")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::tests_support::{every_split, tools};

    fn p() -> Protocol {
        Protocol::from_name("glm-4.7").unwrap()
    }

    #[test]
    fn calls_without_newlines_with_reasoning_and_text() {
        let call = p().format_call("get_weather", &json!({"city": "Paris", "days": 3}));
        assert_eq!(
            call,
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"
        );
        let text = format!("<think>Paris.</think>Checking.{call}{call}Done.");
        let c = every_split(&p(), &text);
        let want = (
            "get_weather".to_string(),
            json!({"city": "Paris", "days": 3}),
        );
        assert_eq!(c.calls, [want.clone(), want]);
        assert_eq!(c.reasoning, "Paris.");
        assert_eq!(c.text, "Checking.Done.");
        assert!(c.errors.is_empty(), "{:?}", c.errors);
    }

    #[test]
    fn newlines_inside_a_value_are_kept() {
        let text = "<tool_call>write_file<arg_key>content</arg_key><arg_value>\nline\n</arg_value></tool_call>";
        let c = every_split(&p(), text);
        assert_eq!(
            c.calls,
            [("write_file".into(), json!({"content": "\nline\n"}))]
        );
    }

    #[test]
    fn the_prompt_is_written_without_newlines_and_reads_back() {
        let prompt = p().system_prompt(&tools());
        assert!(
            prompt.contains("<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>"),
            "{prompt}"
        );
        let (back, set) = Protocol::detect_from_prompt(&prompt).unwrap();
        assert_eq!(back, p());
        assert_eq!(set.to_json(), tools().to_json());
        assert_eq!(
            p().format_result("get_weather", "sunny"),
            "<tool_response>sunny</tool_response>"
        );
        let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
        let c = every_split(&p(), &bad);
        assert!(c.calls.is_empty());
        assert_eq!(c.text, bad);
        assert!(!c.errors.is_empty());
    }
}
