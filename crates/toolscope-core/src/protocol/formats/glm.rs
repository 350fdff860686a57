//! The GLM family of the markup engine, one table entry per member ([`Glm`]): `glm-4.5` (GLM 4.5
//! and 4.6) and `glm-4.7` (GLM 4.7 and GLM 5). A call is a `<tool_call>` element holding the
//! function's name as text, then each argument as a key element and a value element, one per
//! line:
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Paris</arg_value>
//! <arg_key>days</arg_key>
//! <arg_value>3</arg_value>
//! </tool_call>
//! ```
//!
//! Values follow `<arg_value>` at once: every byte up to `</arg_value>` is the value, typed by
//! the schema (the template writes text as it is and anything else as JSON). GLM 4.7 writes the
//! same markup without the newlines
//! (`<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>`);
//! both are read by the function-markup scanner qwen3-coder uses, with all it forgives and
//! decides (close tags inside values decided by what follows, a missing `</arg_value>` or
//! `</tool_call>`), so either reads the other's output. The model reasons in `<think>` …
//! `</think>`. The template lists the tools one JSON object per line in `<tools>` and gives each
//! result back in a `<tool_response>` element of an observation turn.

use serde_json::Value;

use crate::protocol::scan::markup::{Dialect, MarkupScanner, Opener};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, card_methods};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// One member of the family: its names, and what it writes between the elements of a call.
pub(crate) struct Glm {
    /// Its names, models, end tokens and reasoning markers.
    card: Card,
    /// Between the elements of a call, and around a result (a newline in 4.5, nothing in 4.7).
    sep: &'static str,
    /// What `--protocol auto` allows between a tool's name and what follows it (`\n ` where the
    /// family writes a newline: a space stands for any run of whitespace).
    gap: &'static str,
}

/// `glm-4.5`.
pub(crate) static GLM45: Glm = Glm {
    card: Card {
        name: "glm-4.5",
        aliases: &["glm-4.6"],
        families: "GLM 4.5, 4.6",
        servers: &[],
        end_tokens: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        markers: &[],
        reasoning: Reasoning::THINK,
    },
    sep: "\n",
    gap: "\n ",
};

/// `glm-4.7`: the prompt, past calls and results are written the 4.7 way; the same scanner reads
/// both forms.
pub(crate) static GLM47: Glm = Glm {
    card: Card {
        name: "glm-4.7",
        aliases: &["glm-5"],
        families: "GLM 4.7, GLM 5",
        servers: &[],
        end_tokens: &["<|user|>", "<|observation|>", "<|endoftext|>"],
        markers: &[],
        reasoning: Reasoning::THINK,
    },
    sep: "",
    gap: " ",
};

/// GLM's call markup: no block, the name as text after `<tool_call>`, key and value elements.
const DIALECT: Dialect = Dialect {
    blocks: &[],
    function: Opener::Bare("<tool_call>"),
    function_close: "</tool_call",
    parameter: Opener::Keyed {
        key: "<arg_key",
        key_close: "</arg_key",
        value: "<arg_value",
    },
    parameter_close: "</arg_value",
    separators: false,
    string_attr: None,
    function_shown: "<tool_call>NAME",
    parameter_shown: "<arg_key>…</arg_key><arg_value>…</arg_value>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
};

const TOOLS_BEGIN: &str = "# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n";
const TOOLS_END: &str = "</tools>";
const RESULT_BEGIN: &str = "<tool_response>";
const RESULT_END: &str = "</tool_response>";

/// GLM's system prompt, its format block written with `sep` between the elements (a newline in
/// 4.5, nothing in 4.7).
fn system_prompt(tools: &ToolSet, sep: &str) -> String {
    let (name, example) = prompt::example_call(tools);
    format!(
        "{TOOLS_BEGIN}{}{TOOLS_END}\n\n\
         For each function call, output the function name and arguments within the following XML format:\n\
         <tool_call>{{function-name}}{sep}<arg_key>{{arg-key-1}}</arg_key>{sep}<arg_value>{{arg-value-1}}</arg_value>{sep}\
         <arg_key>{{arg-key-2}}</arg_key>{sep}<arg_value>{{arg-value-2}}</arg_value>{sep}...{sep}</tool_call>\n\n\
         For example:\n{}\n\n\
         Write text values as they are and numbers, booleans, arrays and objects as JSON. Write one \
         <tool_call> element per call. Call a tool only when it helps; otherwise answer in text. Each \
         result comes back in a <tool_response> element.\n",
        prompt::json_tool_lines(tools, true, "", ""),
        format_call(&name, &example, sep)
    )
}

/// Reads back [`system_prompt`] written with `sep`, as the protocol named `name`.
fn read_prompt(name: &str, system: &str, sep: &str) -> Option<(Protocol, ToolSet)> {
    let format = format!("<tool_call>{{function-name}}{sep}<arg_key>");
    if !system.contains(&format) {
        return None;
    }
    let tools = prompt::read_json_tool_lines(system, TOOLS_BEGIN, TOOLS_END, "", "")?;
    Some((Protocol::from_name(name).ok()?, tools))
}

/// A call as GLM writes it, `sep` between its elements.
fn format_call(name: &str, input: &Value, sep: &str) -> String {
    let mut s = format!("<tool_call>{name}{sep}");
    if let Value::Object(args) = input {
        for (k, v) in args {
            let text = prompt::value_text(v);
            s.push_str(&format!(
                "<arg_key>{k}</arg_key>{sep}<arg_value>{text}</arg_value>{sep}"
            ));
        }
    }
    s.push_str("</tool_call>");
    s
}

/// A result, `sep` around it.
fn format_result(result: &str, sep: &str) -> String {
    format!("{RESULT_BEGIN}{sep}{result}{sep}{RESULT_END}")
}

fn read_result(text: &str) -> String {
    prompt::between(text, RESULT_BEGIN, RESULT_END)
}

/// A key without its value: the markup breaks where an argument belongs.
fn malformed_call(input: &Value, sep: &str) -> String {
    let (key, _) = crate::protocol::text::prompt::first_argument(input);
    format!("<tool_call>{{{{ tc.name }}}}{sep}<arg_key>{key}</arg_key>{sep}</tool_call>")
}

impl ProtocolSpec for Glm {
    card_methods!(without markers);

    fn markers(&self, tools: &ToolSet) -> Vec<String> {
        let gap = self.gap;
        tools
            .iter()
            .flat_map(|t| {
                let name = &t.def.name;
                [
                    format!("<tool_call>{name}{gap}<arg_key>"),
                    format!("<tool_call>{name}{gap}</tool_call>"),
                ]
            })
            .collect()
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        system_prompt(tools, self.sep)
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        read_prompt(self.name(), system, self.sep)
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        format_call(name, input, self.sep)
    }

    fn format_result(&self, _: &Protocol, _name: &str, result: &str) -> String {
        format_result(result, self.sep)
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        read_result(text)
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(MarkupScanner::new(tools.clone(), &DIALECT))
    }

    fn malformed_call(&self, _: &Protocol, _name: &str, input: &Value) -> String {
        malformed_call(input, self.sep)
    }
}

#[cfg(test)]
mod tests {
    mod glm45 {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
        use crate::protocol::tests_support::{every_split, tools};

        fn p() -> Protocol {
            Protocol::from_name("glm-4.5").unwrap()
        }

        const CALL: &str = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";

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
        fn parallel_calls_and_the_4_7_form() {
            let text = format!(
                "{CALL}\n<tool_call>search<arg_key>query</arg_key><arg_value>rain</arg_value></tool_call>"
            );
            let c = every_split(&p(), &text);
            assert_eq!(
                c.calls,
                [
                    ("get_weather".into(), json!({"city": "Paris", "days": 3})),
                    ("search".into(), json!({"query": "rain"}))
                ]
            );
            assert!(c.errors.is_empty(), "{:?}", c.errors);
        }

        #[test]
        fn a_call_without_arguments_and_spaces_between_elements() {
            let text = "<tool_call>search</tool_call><tool_call>search <arg_key>query</arg_key> <arg_value>x y</arg_value> </tool_call>";
            let c = every_split(&p(), text);
            assert_eq!(
                c.calls,
                [
                    ("search".into(), json!({})),
                    ("search".into(), json!({"query": "x y"}))
                ]
            );
            assert!(c.errors.is_empty(), "{:?}", c.errors);
        }

        #[test]
        fn values_are_byte_exact_and_may_hold_markup() {
            let content = "\n  a = \"</arg_value>\"\n<tool_call>x\n\n";
            let text = format!(
                "<tool_call>write_file\n<arg_key>content</arg_key>\n<arg_value>{content}</arg_value>\n<arg_key>path</arg_key>\n<arg_value>/a.py</arg_value>\n</tool_call>"
            );
            let c = every_split(&p(), &text);
            assert_eq!(
                c.calls,
                [(
                    "write_file".into(),
                    json!({"content": content, "path": "/a.py"})
                )]
            );
            assert!(c.errors.is_empty(), "{:?}", c.errors);
        }

        #[test]
        fn unterminated_malformed_unknown_and_other_formats() {
            let cut = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par";
            let c = every_split(&p(), cut);
            assert!(c.calls.is_empty());
            assert_eq!(c.text, cut, "nothing lost");
            assert_eq!(c.errors, ["unfinished-tool-call"]);

            let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
            let c = every_split(&p(), &bad);
            assert!(c.calls.is_empty());
            assert_eq!(c.text, bad, "nothing lost");
            assert!(
                c.errors.iter().all(|e| e == "malformed-tool-call"),
                "{:?}",
                c.errors
            );
            assert!(!c.errors.is_empty());

            let unknown = p().format_call("launch", &json!({"stage": 1}));
            let c = every_split(&p(), &unknown);
            assert_eq!(c.calls, [("launch".into(), json!({"stage": "1"}))]);
            assert_eq!(c.errors, ["unknown-tool"]);

            // A hermes call is no GLM call: kept, reported.
            let hermes = "<tool_call>{\"name\": \"get_weather\"}</tool_call>";
            let c = every_split(&p(), hermes);
            assert!(c.calls.is_empty());
            assert_eq!(c.text, hermes, "nothing lost");
            assert!(!c.errors.is_empty());
        }

        #[test]
        fn a_name_cut_off_by_the_end_of_the_output_is_still_the_call() {
            let c = every_split(&p(), "Sure.<tool_call>search");
            assert_eq!(c.calls, [("search".into(), json!({}))]);
            assert_eq!(c.text, "Sure.");
        }

        #[test]
        fn a_name_cut_off_by_a_reasoning_marker_is_kept_and_reported() {
            let c = every_split(&p(), "<tool_call>search<think>hm</think>rest");
            assert!(c.calls.is_empty());
            assert_eq!(c.text, "<tool_call>searchrest");
            assert_eq!(c.reasoning, "hm");
            assert_eq!(c.errors, ["malformed-tool-call"]);
        }

        #[test]
        fn the_prompt_lists_the_tools_and_reads_back() {
            let prompt = p().system_prompt(&tools());
            assert!(
                prompt.contains("<tools>\n{\"type\":\"function\""),
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

        #[test]
        fn auto_tells_4_5_from_4_7_and_hermes() {
            let d = Protocol::detect(&tools(), CALL.as_bytes());
            assert_eq!(d.protocol.name(), "glm-4.5", "{}", d.reason);
            let d = Protocol::detect(
                &tools(),
                b"<tool_call>search<arg_key>query</arg_key><arg_value>x</arg_value></tool_call>",
            );
            assert_eq!(d.protocol.name(), "glm-4.7", "{}", d.reason);
            let d = Protocol::detect(&tools(), b"<tool_call>{\"name\": \"search\"}</tool_call>");
            assert_eq!(d.protocol.name(), "hermes", "{}", d.reason);
        }
    }

    mod glm47 {
        use serde_json::json;

        use crate::protocol::spec::Protocol;
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
                prompt.contains(
                    "<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key><arg_value>"
                ),
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
}
