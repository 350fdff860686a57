//! `functionary`: MeetKai Functionary, both of its call forms, read by the framed-marker engine
//! (one syntax per form, behind a form switch):
//!
//! ```text
//! >>>get_weather
//! {"city": "Paris"}>>>all
//! It is sunny.
//! <function=get_weather>{"city": "Paris"}</function>
//! ```
//!
//! v3.2 (Llama 3 based) writes `>>>` then a recipient: a function's name, a newline and its
//! arguments as one JSON object (the call ends where the object ends), or `all` and a newline
//! before plain text to the user. v3.1 (Llama 3.1 based) writes
//! `<function=NAME>{…}</function>`, the close optional at the end. They are one protocol: the
//! two forms never look alike, a server's Functionary parser reads both, and a user need not
//! know which checkpoint wrote an output. History and the prompt are written the v3.2 way (the
//! later release): the tools as a TypeScript-like `namespace functions`, results in a `tool`
//! turn. A turn ends with `<|eot_id|>` (v3.1 also `<|eom_id|>`).
//!
//! v3.2's template ends the prompt with the first `>>>`, so the model's output begins with its
//! recipient (`all\n…` or `get_weather\n{…}`): a first line that is `all` or names an offered
//! tool is read as if `>>>` stood before it; any other start is text.

use serde_json::Value;

use crate::protocol::scan::forms::{Form, FormSwitch};
use crate::protocol::scan::framed::{ArgsBegin, FramedScanner, FramedSyntax, Header, valid_name};
use crate::protocol::spec::server::llama_cpp;
use crate::protocol::spec::{Card, Protocol, ProtocolSpec, ResultWrap, card_methods, read_back};
use crate::protocol::text::prompt;
use crate::protocol::text::scanner::Scanner;
use crate::tool::ToolSet;

use super::harmony::{namespace, read_namespace};

/// `functionary`.
pub(crate) struct Functionary;

/// The recipient that opens text, not a call.
const ALL: &str = "all";
/// v3.1's call: its opening (the name and `>` follow) and its close.
const V31_TAGS: (&str, &str) = ("<function=", "</function>");
const INTRO: &str = "// Supported function definitions that should be called when necessary.\n";

fn name_header(head: &str) -> Option<Header> {
    let name = head.trim();
    valid_name(name).then(|| Header {
        name: name.to_string(),
        id: None,
    })
}

/// v3.2: `>>>NAME\n{…}`, the call ending with its JSON.
static V32: FramedSyntax = FramedSyntax {
    header: name_header,
    ..FramedSyntax::new(">>>", &[ArgsBegin::Marker("\n")])
};

/// v3.1: `<function=NAME>{…}</function>`.
static V31: FramedSyntax = FramedSyntax {
    header: name_header,
    call_end: Some(V31_TAGS.1),
    ..FramedSyntax::new(V31_TAGS.0, &[ArgsBegin::Marker(">")])
};

/// One v3.2 call, given its arguments' JSON.
fn call(name: &str, args: &str) -> String {
    format!(">>>{name}\n{args}")
}

const CARD: Card = Card {
    servers: &[
        llama_cpp("Functionary v3.2"),
        llama_cpp("Functionary v3.1 Llama 3.1"),
    ],
    end_tokens: &["<|eot_id|>", "<|eom_id|>"],
    // Text's recipient; a recipient that names a tool (v3.2), a v3.1 call.
    markers: &[">>>all"],
    tool_markers: &[(">>>", " {"), (V31_TAGS.0, ">")],
    // One message after the other.
    call_joiner: "",
    // Each result in a `tool` turn.
    results: ResultWrap::between("<|start_header_id|>tool<|end_header_id|>\n\n", "<|eot_id|>"),
    ..Card::new("functionary", "MeetKai Functionary v3.1, v3.2")
};

impl ProtocolSpec for Functionary {
    card_methods!(CARD);

    fn system_prompt(&self, p: &Protocol, tools: &ToolSet) -> String {
        format!(
            "{INTRO}{}\n\n\
             Start every message with >>> and a recipient. To call a function, the recipient is its name, then a \
             newline and its arguments as one JSON object:\n{}\n\
             To write to the user, the recipient is all, then a newline and your text:\n>>>all\nYour answer.\n\
             Several calls are several such messages one after another. Call functions only when they help.\n",
            namespace(tools),
            prompt::example_call(tools, |name, input| self.format_call(p, name, input))
        )
    }

    fn read_prompt(&self, system: &str) -> Option<(Protocol, ToolSet)> {
        if !system.starts_with(INTRO) {
            return None;
        }
        read_back(self.name(), read_namespace(system))
    }

    fn format_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, &prompt::args_json(input))
    }

    fn scanner(&self, _: &Protocol, tools: &ToolSet) -> Box<dyn Scanner> {
        let v32 = FramedScanner::new(&V32, tools.clone())
            .text_header(ALL)
            .prefilled_opener();
        let v31 = FramedScanner::new(&V31, tools.clone());
        Box::new(FormSwitch::new(v32, v31, V31_TAGS.0, |_, _| Form::Other))
    }

    fn malformed_call(&self, _: &Protocol, name: &str, input: &Value) -> String {
        call(name, &prompt::broken_args(input))
    }
}
