//! `muse-glimmer`: MuseGlimmer's messages, addressed by recipient, with calls in ATEM markup.
//!
//! ```text
//!  to=self<|message|>Paris, so the weather tool.<|eom|><|start|>assistant to=get_weather<|message|><atem:function_calls>
//! <atem:invoke name="get_weather">
//! <atem:parameter name="city">Paris</atem:parameter>
//! </atem:invoke>
//! </atem:function_calls><|eom|>
//! ```
//!
//! Each message is `<|start|>assistant to=RECIPIENT<|message|>` … and ends with `<|eom|>` (or
//! `<|eot|>`, which ends the turn); the template opens the first header itself, so the output
//! begins with ` to=…`. A message to `self` is reasoning, a message to `user` is the answer, and
//! a message to a tool holds an `<atem:function_calls>` block whose `<atem:invoke>`s are the
//! calls (read by the function-markup engine). ATEM markup in a `self` or `user` message is
//! their text, never a call. Values are typed by the schema: text as it is, byte-exact, and
//! lists and objects as JSON. The messages are read by the harmony channel engine in ATEM's syntax.
//!
//! The template lists the tools as JSON, one a line, in a `<functions>` block of the system
//! message, with the call format; a result comes back in a message from the tool.

use serde_json::Value;

use crate::protocol::scan::harmony::{Body, HarmonyScanner, MESSAGE, START, Syntax};
use crate::protocol::scan::markup::{BlockTag, Dialect, Opener, XML_TAGS};
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, read_back};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// Ends a message (a call, reasoning); ends the turn.
const EOM: &str = "<|eom|>";
const EOT: &str = "<|eot|>";
const TOOLS: (&str, &str) = (
    "In this environment you have access to a set of tools you can use to answer the user's question.\n\n<functions>\n",
    "</functions>",
);
const FORMAT: &str = "You can invoke a function by writing a \"<atem:function_calls>\" block";

/// ATEM's markup: DSML's structure under the `atem:` prefix.
static ATEM: Dialect = Dialect {
    blocks: &[BlockTag {
        open: "<atem:function_calls",
        close: "</atem:function_calls",
    }],
    function: Opener::Named("<atem:invoke name="),
    function_close: "</atem:invoke",
    name_sep: None,
    parameter: Opener::Named("<atem:parameter name="),
    parameter_close: "</atem:parameter",
    separators: false,
    suffixed: false,
    string_attr: None,
    function_shown: "<atem:invoke name=\"NAME\">",
    parameter_shown: "<atem:parameter name=…>",
    variants: &[],
    frames: &[],
    colon_close: false,
    unwrap_cdata: false,
    tags: &XML_TAGS,
};

/// ATEM's messages.
static SYNTAX: Syntax = Syntax {
    tokens: &[START, MESSAGE, EOM, EOT],
    ends: &[EOM, EOT],
    readers: &[("self", true), ("user", false)],
    body: Body::Markup(&ATEM),
    opened: true,
    switches: true,
    doubled_names: true,
};

/// `muse-glimmer`.
pub(crate) struct MuseGlimmer;

/// One call's message.
fn call(name: &str, input: &Value) -> String {
    let mut s = format!(
        "{START}assistant to={name}{MESSAGE}<atem:function_calls>\n<atem:invoke name=\"{name}\">\n"
    );
    if let Value::Object(args) = input {
        for (k, v) in args {
            s.push_str(&format!(
                "<atem:parameter name=\"{k}\">{}</atem:parameter>\n",
                prompt::value_text(v)
            ));
        }
    }
    s.push_str(&format!("</atem:invoke>\n</atem:function_calls>{EOM}"));
    s
}

const CARD: Card = Card {
    servers: &[("vllm", "muse_glimmer")],
    // The message ends: the scanner reads them.
    end_tokens: &[EOM, EOT],
    // Reasoning is the `self` recipient's messages, found by the scanner; markup there is
    // reasoning.
    reasoning: Reasoning::NONE,
    ..Card::new("muse-glimmer", "MuseGlimmer")
};

impl ProtocolSpec for MuseGlimmer {
    fn card(&self) -> &Card {
        &CARD
    }

    fn reads_end_tokens(&self) -> bool {
        true
    }

    /// A message to a tool that opens ATEM markup; the reasoning message, whose header the
    /// template opened or not.
    fn markers(&self, _tools: &ToolSet) -> Vec<String> {
        let name = crate::protocol::text::fences::NAME;
        // (Whole from `<|start|>`, so that they are longer than harmony's `<|start|>assistant`
        // where both begin.)
        vec![
            format!("to={name}{MESSAGE} <atem:function_calls>"),
            format!("to=self{MESSAGE}"),
            format!("{START}assistant to={name}{MESSAGE} <atem:function_calls>"),
            format!("{START}assistant to=self{MESSAGE}"),
        ]
    }

    fn system_prompt(&self, _: &Protocol, tools: &ToolSet) -> String {
        let (name, example) = prompt::example_call(tools);
        format!(
            "{}{}{}\n\n\
             {FORMAT} in a message addressed to the tool ({START}assistant to=NAME{MESSAGE}), \
             like the following:\n\
             <atem:function_calls>\n<atem:invoke name=\"$FUNCTION_NAME\">\n\
             <atem:parameter name=\"$PARAMETER_NAME\">$PARAMETER_VALUE</atem:parameter>\n...\n\
             </atem:invoke>\n</atem:function_calls>{EOM}\n\n\
             String and scalar parameters are written as they are; lists and objects as JSON. \
             Think in a message to self, and answer in a message to user that ends with {EOT}. \
             For example:\n{}\n\n\
             Each result comes back in a message from the tool.\n",
            TOOLS.0,
            prompt::json_tool_lines(tools, false, "", ""),
            TOOLS.1,
            call(&name, &example),
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(FORMAT) {
            return None;
        }
        read_back(
            self.name(),
            prompt::read_json_tool_lines(system, TOOLS.0, TOOLS.1, "", ""),
        )
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, input)
    }

    /// One message per call, one after the other.
    fn call_joiner(&self) -> &'static str {
        ""
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        format!("{START}{name} to=assistant{MESSAGE}{result}{EOM}")
    }

    /// One message after the other.
    fn results(&self) -> ResultWrap {
        ResultWrap::LINES.joined("")
    }

    fn read_result(&self, _: &Protocol, text: &str) -> String {
        let body = text.split_once(MESSAGE).map_or(text, |(_, b)| b);
        body.strip_suffix(EOM).unwrap_or(body).to_string()
    }

    fn format_reasoning(&self, _: &Protocol, text: &str) -> Option<String> {
        Some(format!("{START}assistant to=self{MESSAGE}{text}{EOM}"))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        Box::new(HarmonyScanner::with_syntax(tools.clone(), &SYNTAX))
    }

    /// A message addressed to a template leftover, not a tool's name.
    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        let (key, value) = prompt::first_argument(input);
        format!(
            "{START}assistant to={{{{{name}}}}}{MESSAGE}<atem:function_calls>\n<atem:invoke name=\"{name}\">\n\
             <atem:parameter name=\"{key}\">{value}</atem:parameter>\n</atem:invoke>\n</atem:function_calls>{EOM}"
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::tests_support::{every_split, search_for, tools, weather_paris_days};

    fn p() -> Protocol {
        Protocol::from_name("muse-glimmer").unwrap()
    }

    const CALL: &str = "<|start|>assistant to=get_weather<|message|><atem:function_calls>\n\
        <atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Paris</atem:parameter>\n\
        <atem:parameter name=\"days\">3</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>";

    #[test]
    fn reasoning_a_call_and_the_answer_by_recipient() {
        let text = format!(
            " to=self<|message|>Paris, so the weather tool.<|eom|>{CALL}\
             <|start|>assistant to=user<|message|>Checking now.<|eot|>"
        );
        every_split(&p(), &text)
            .reasoning("Paris, so the weather tool.")
            .text("Checking now.")
            .calls(&[weather_paris_days(3)])
            .no_errors();
    }

    #[test]
    fn parallel_calls_in_one_block_or_in_messages_of_their_own() {
        let one_block = " to=get_weather<|message|><atem:function_calls>\n\
            <atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Oslo</atem:parameter>\n</atem:invoke>\n\
            <atem:invoke name=\"search\">\n<atem:parameter name=\"query\">rain</atem:parameter>\n</atem:invoke>\n\
            </atem:function_calls><|eom|>";
        let two = p().format_calls(&[
            ("get_weather", &json!({"city": "Oslo"})),
            ("search", &json!({"query": "rain"})),
        ]);
        for text in [one_block.to_string(), two] {
            let c = every_split(&p(), &text).calls(&[
                ("get_weather".into(), json!({"city": "Oslo"})),
                search_for("rain"),
            ]);
            assert_eq!((c.text.trim(), c.errors.len()), ("", 0), "{text}");
        }
    }

    #[test]
    fn atem_markup_to_self_or_to_user_is_not_a_call() {
        let markup = "<atem:function_calls>\n<atem:invoke name=\"search\">\n\
            <atem:parameter name=\"query\">x</atem:parameter>\n</atem:invoke>\n</atem:function_calls>";
        let text = format!(
            " to=self<|message|>Maybe {markup}<|eom|><|start|>assistant to=user<|message|>Like {markup}<|eot|>"
        );
        every_split(&p(), &text)
            .no_calls()
            .reasoning(format!("Maybe {markup}"))
            .text(format!("Like {markup}"))
            .no_errors();
    }

    #[test]
    fn json_values_and_text_values() {
        let text = " to=write_file<|message|><atem:function_calls><atem:invoke name=\"write_file\">\
            <atem:parameter name=\"path\">a.txt</atem:parameter>\
            <atem:parameter name=\"content\">{\"not\": \"an object\"} <b>x</b></atem:parameter>\
            </atem:invoke></atem:function_calls><|eom|>";
        every_split(&p(), text).call(
            "write_file",
            json!({"path": "a.txt", "content": "{\"not\": \"an object\"} <b>x</b>"}),
        );
    }

    #[test]
    fn an_output_that_does_not_begin_inside_a_header_is_text() {
        every_split(&p(), "Hello there.").text("Hello there.");
        every_split(&p(), "Hi<|eot|>").text("Hi");
    }

    #[test]
    fn unfinished_and_malformed_calls_are_reported() {
        let cut = " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n\
            <atem:parameter name=\"city\">Pa";
        every_split(&p(), cut).no_calls().error_count(1);
        let bad = p().malformed_call("get_weather", &json!({"city": "Paris"}));
        assert!(bad.contains("to={{get_weather}}"), "{bad}");
        every_split(&p(), &bad).kept().some_errors();
        // An invoke without a name, in a tool's message: reported, its markup kept as text.
        let nameless = " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"\">\n\
            <atem:parameter name=\"city\">Paris</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>";
        let c = every_split(&p(), nameless).no_calls().some_errors();
        assert!(c.text.contains("<atem:invoke name=\"\">"), "{}", c.text);
    }

    #[test]
    fn auto_tells_it_from_harmony_where_both_begin_with_start() {
        let written = format!(
            "{}{CALL}",
            p().format_reasoning("Paris, so the weather tool.").unwrap()
        );
        let d = Protocol::detect(&tools(), written.as_bytes());
        assert_eq!(d.protocol, p(), "{}", d.reason);
        let harmony = "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>";
        let d = Protocol::detect(&tools(), harmony.as_bytes());
        assert_eq!(d.protocol.name(), "harmony", "{}", d.reason);
    }

    /// The template may open the header with `<|start|>` alone: the output then names its
    /// role, and a header without a recipient is the answer.
    #[test]
    fn a_first_header_that_names_the_role_or_no_recipient() {
        let c = every_split(&p(), "assistant<|message|>Plain.<|eot|>");
        assert_eq!((c.text.as_str(), c.reasoning.as_str()), ("Plain.", ""));
        assert!(c.errors.is_empty(), "{:?}", c.errors);
        let text = format!("assistant to=self<|message|>Hm.<|eom|>{CALL}");
        every_split(&p(), &text).reasoning("Hm.").call_count(1);
        every_split(&p(), "<|start|>assistant<|message|>Plain.<|eot|>").text("Plain.");
        // A word that only begins like the role is text.
        every_split(&p(), "assume nothing").text("assume nothing");
    }

    /// A tool's message the model did not end before its next header: the call is made and
    /// the next message read.
    #[test]
    fn a_tool_message_cut_off_by_the_next_header() {
        let open = CALL.strip_suffix("<|eom|>").unwrap();
        let text = format!("{open}<|start|>assistant to=user<|message|>Done.<|eot|>");
        every_split(&p(), &text)
            .call("get_weather", json!({"city": "Paris", "days": 3}))
            .text("Done.")
            .no_errors();
    }

    /// A message the model left without `<|eom|>`: a whole ` to=RECIPIENT<|message|>` switches
    /// to the next message wherever it stands.
    #[test]
    fn a_recipient_switch_without_an_end_token() {
        let text = " to=self<|message|>quick thought to=user<|message|>Here you go.<|eot|>";
        every_split(&p(), text)
            .reasoning("quick thought")
            .text("Here you go.");
        let open = CALL.strip_prefix("<|start|>assistant").unwrap().to_string();
        let text = format!(" to=self<|message|>Weather first.{open} to=user<|message|>Done.");
        every_split(&p(), &text)
            .reasoning("Weather first.")
            .call_count(1)
            .text("Done.");
        // `to=` that is not a switch stays where it is.
        let text = " to=user<|message|>Send it to=me, or to= you.<|eot|>";
        every_split(&p(), text).text("Send it to=me, or to= you.");
    }

    /// The template writes a bare tool's recipient doubled (`get_weather.get_weather`) and
    /// the model names the call so: read as the tool, and said; a bare `<|message|>` header
    /// opens the answer.
    #[test]
    fn a_doubled_name_is_the_tool_and_a_bare_header_the_answer() {
        let text = CALL.replace("get_weather", "get_weather.get_weather");
        every_split(&p(), &text)
            .call("get_weather", json!({"city": "Paris", "days": 3}))
            .no_errors();
        let parsed = p().parse_generated(&tools(), text.as_bytes());
        let said: Vec<_> = parsed
            .parts
            .iter()
            .filter_map(|part| match part {
                crate::part::Part::Warning(w) if w.is_notice() => Some(w.message.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("get_weather.get_weather"), "{said:?}");
        // Another dotted name is its own name.
        let c = every_split(&p(), &CALL.replace("get_weather", "weather.get_weather"));
        assert_eq!(c.calls[0].0, "weather.get_weather");
        let c = every_split(&p(), " to=self<|message|>Hm.<|message|>The answer.<|eot|>");
        assert_eq!(
            (c.reasoning.as_str(), c.text.as_str()),
            ("Hm.", "The answer.")
        );
    }

    #[test]
    fn the_prompt_reads_back() {
        let system = p().system_prompt(&tools());
        let (back, read) = MuseGlimmer.read_prompt(&system).unwrap();
        assert_eq!(back, p());
        assert_eq!(read.len(), tools().len());
        assert_eq!(
            p().read_result(&p().format_result("search", "none")),
            "none"
        );
    }
}
