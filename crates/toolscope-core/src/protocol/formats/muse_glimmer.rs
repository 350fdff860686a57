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
use crate::protocol::spec::server::vllm;
use crate::protocol::spec::{
    Card, Protocol, ProtocolSpec, Reasoning, ResultWrap, card_methods, read_back,
};
use crate::protocol::text::prompt::{self, ToolList};
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

/// Ends a message (a call, reasoning); ends the turn.
const EOM: &str = "<|eom|>";
const EOT: &str = "<|eot|>";
const TOOLS: ToolList = ToolList::plain(
    "In this environment you have access to a set of tools you can use to answer the user's question.\n\n<functions>\n",
    "</functions>",
)
.one_a_line();
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
    servers: &[vllm("muse_glimmer")],
    // The message ends: the scanner reads them.
    end_tokens: &[EOM, EOT],
    // Reasoning is the `self` recipient's messages, found by the scanner; markup there is
    // reasoning.
    reasoning: Reasoning::NONE,
    reads_end_tokens: true,
    // One message per call, one after the other.
    call_joiner: "",
    // One message after the other.
    results: ResultWrap::LINES.joined(""),
    ..Card::new("muse-glimmer", "MuseGlimmer")
};

impl ProtocolSpec for MuseGlimmer {
    card_methods!(CARD);

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
        format!(
            "{}\n\n\
             {FORMAT} in a message addressed to the tool ({START}assistant to=NAME{MESSAGE}), \
             like the following:\n\
             <atem:function_calls>\n<atem:invoke name=\"$FUNCTION_NAME\">\n\
             <atem:parameter name=\"$PARAMETER_NAME\">$PARAMETER_VALUE</atem:parameter>\n...\n\
             </atem:invoke>\n</atem:function_calls>{EOM}\n\n\
             String and scalar parameters are written as they are; lists and objects as JSON. \
             Think in a message to self, and answer in a message to user that ends with {EOT}. \
             For example:\n{}\n\n\
             Each result comes back in a message from the tool.\n",
            TOOLS.write(tools),
            prompt::example_call(tools, call),
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.contains(FORMAT) {
            return None;
        }
        read_back(self.name(), TOOLS.read(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, input)
    }

    fn format_result(&self, _: &Protocol, name: &str, result: &str) -> String {
        format!("{START}{name} to=assistant{MESSAGE}{result}{EOM}")
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
    use super::*;
    use crate::protocol::tests_support::prelude::*;

    /// The protocol under test.
    const P: Protocol = Protocol::of(&MuseGlimmer);

    const CALL: &str = "<|start|>assistant to=get_weather<|message|><atem:function_calls>\n\
        <atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Paris</atem:parameter>\n\
        <atem:parameter name=\"days\">3</atem:parameter>\n</atem:invoke>\n</atem:function_calls><|eom|>";

    #[test]
    fn a_malformed_call_names_no_tool() {
        let bad = P.malformed_call("get_weather", &json!({"city": "Paris"}));
        assert!(bad.contains("to={{get_weather}}"), "{bad}");
    }

    /// The template writes a bare tool's recipient doubled (`get_weather.get_weather`) and
    /// the model names the call so: read as the tool (the case file), and said.
    #[test]
    fn a_doubled_name_is_said() {
        let text = CALL.replace("get_weather", "get_weather.get_weather");
        let said = notices(&P, &text);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("get_weather.get_weather"), "{said:?}");
    }

    #[test]
    fn the_prompt_reads_back() {
        let system = P.system_prompt(&tools());
        let (back, read) = MuseGlimmer.read_prompt(&system).unwrap();
        assert_eq!(back, P);
        assert_eq!(read.len(), tools().len());
    }
}
