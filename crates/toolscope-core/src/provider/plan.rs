//! What a request asks of the wire, native or emulated, decided once per request.
//!
//! Native mode sends the tools and the tool choice in the provider's own fields. Emulated mode
//! (a `--protocol`, any provider) sends no native tools: the protocol's prompt teaches the tools
//! in the system message, past calls and results are written as the protocol writes them, and
//! the answer text is parsed by the protocol's stream parser. `required` and `tool X` are
//! emulated by asking for one JSON object `{name, arguments}`, constrained by a JSON-schema
//! response format where the provider has one (not Anthropic, which is only told so in the
//! prompt). Ollama's native `/api/chat` has no tool choice, so its `required` and `tool X` are
//! emulated the same way even without a protocol. A native request may read its answer text
//! with protocol detection (`detect_protocol`): the server's own template taught the tools, and
//! the calls it did not parse are found in the text. The [`Plan`] is shared by the request builder
//! and the decoder so that they cannot disagree.

use crate::emulate::{ResponseFormat, response_format};
use crate::part::ToolCall;
use crate::protocol::{AutoParser, Protocol, answer_parser};
use crate::tool::{Tool, ToolChoice, ToolSet};

use super::assemble::OutputParser;
use super::request::{Message, Reasoning, Request};
use super::spec::ProviderKind;

/// How the answer text is read.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Output {
    Text,
    Protocol(Protocol),
    JsonAnswer,
    /// Native text read with protocol detection.
    Auto,
}

/// The request as the wire will carry it.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    /// Send the tools in the provider's native field.
    pub native_tools: bool,
    /// The native tool choice to map (`None`: leave the field out).
    pub native_choice: Option<ToolChoice>,
    /// Past calls and results are written as text by this protocol instead of natively.
    pub history_protocol: Option<Protocol>,
    /// The system text to send: the caller's, then the tool prompt, then the JSON-answer rule.
    pub system: Option<String>,
    pub response_format: Option<ResponseFormat>,
    pub output: Output,
}

impl Plan {
    pub(crate) fn of(req: &Request) -> Plan {
        let forcing = matches!(
            req.tool_choice,
            Some(ToolChoice::Required | ToolChoice::Tool(_))
        );
        let mut system: Vec<String> = req.system_text().into_iter().collect();
        let mut plan = Plan {
            native_tools: false,
            native_choice: None,
            history_protocol: req.protocol.clone(),
            system: None,
            response_format: None,
            output: Output::Text,
        };
        match &req.protocol {
            Some(protocol) => {
                // Emulated. `none` sends no tool prompt and parses nothing.
                if req.tool_choice != Some(ToolChoice::None) && !req.tools.is_empty() {
                    system.push(protocol.system_prompt(&req.tools));
                    if forcing {
                        plan.output = Output::JsonAnswer;
                    } else {
                        plan.output = Output::Protocol(protocol.clone());
                    }
                }
            }
            None if !req.provider.capabilities().native_forcing => match &req.tool_choice {
                Some(ToolChoice::None) => {}
                Some(ToolChoice::Required | ToolChoice::Tool(_)) => {
                    system.push(tools_listing(&req.tools));
                    plan.output = Output::JsonAnswer;
                }
                Some(ToolChoice::Auto) | None => plan.native_tools = !req.tools.is_empty(),
            },
            None => {
                plan.native_tools = !req.tools.is_empty();
                // A tool choice without tools is refused by the APIs; with none, there is
                // nothing to choose from anyway.
                if plan.native_tools {
                    plan.native_choice = req.tool_choice.clone();
                }
            }
        }
        if req.protocol.is_none() && req.detect_protocol && plan.output == Output::Text {
            plan.output = Output::Auto;
        }
        if plan.output == Output::JsonAnswer
            && let Some(choice) = &req.tool_choice
        {
            system.push(json_answer_rule(choice, req.provider));
            if req.provider.capabilities().response_format {
                plan.response_format = response_format(choice, &req.tools);
            }
        }
        plan.system = (!system.is_empty()).then(|| system.join("\n\n"));
        plan
    }

    /// The tools to declare natively: all of them, except on a wire without `allowed_tools`,
    /// which is sent only the allowed ones (a forced tool keeps them all: it names its own).
    pub(crate) fn declared<'a>(&self, req: &'a Request) -> Vec<&'a Tool> {
        let allowed = &req.sampling.allowed_tools;
        let restrict = !allowed.is_empty()
            && !req.provider.wire().format().allowed_tools()
            && !matches!(req.tool_choice, Some(ToolChoice::Tool(_)));
        req.tools
            .iter()
            .filter(|t| !restrict || allowed.iter().any(|a| a == t.name()))
            .collect()
    }

    pub(crate) fn output_parser(&self, tools: &ToolSet) -> OutputParser {
        match &self.output {
            Output::Text => OutputParser::Text,
            Output::Protocol(p) => OutputParser::Protocol(Box::new(p.stream_parser(tools))),
            Output::JsonAnswer => OutputParser::Protocol(Box::new(answer_parser(tools))),
            Output::Auto => OutputParser::Auto(Box::new(AutoParser::new(tools, None))),
        }
    }
}

/// One turn of the conversation as the wire carries it, after the plan decided how past calls
/// and results are written: natively, or as protocol text (then there are no `Results` and no
/// assistant `calls`).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Turn<'a> {
    User(String),
    Assistant {
        text: Option<String>,
        calls: &'a [ToolCall],
        /// The answer's reasoning blocks, for the wires that send them back.
        reasoning: &'a [Reasoning],
    },
    /// Consecutive tool results, kept together (Anthropic and Gemini want them in one turn).
    Results(Vec<ToolResult<'a>>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ToolResult<'a> {
    pub id: &'a str,
    /// The tool's name, looked up in the history (empty if it cannot be found).
    pub name: &'a str,
    pub content: &'a str,
}

impl Plan {
    /// The conversation after the system prompt.
    pub(crate) fn turns<'a>(&self, req: &'a Request) -> Vec<Turn<'a>> {
        let mut out: Vec<Turn<'a>> = Vec::new();
        for m in req.turns() {
            match m {
                // Validation allows a system message only first, and `turns` skips it.
                Message::System { .. } => {}
                Message::User { content } => out.push(Turn::User(content.clone())),
                Message::Assistant {
                    content,
                    tool_calls,
                    reasoning,
                } => match &self.history_protocol {
                    Some(p) if !tool_calls.is_empty() => {
                        let mut text: Vec<String> =
                            content.iter().filter(|c| !c.is_empty()).cloned().collect();
                        let calls: Vec<(&str, &serde_json::Value)> = tool_calls
                            .iter()
                            .map(|c| (c.tool_name.as_str(), &c.input))
                            .collect();
                        text.push(p.format_calls(&calls));
                        out.push(Turn::Assistant {
                            text: Some(text.join("\n")),
                            calls: &[],
                            reasoning: &[],
                        });
                    }
                    _ => out.push(Turn::Assistant {
                        text: content.clone().filter(|c| !c.is_empty()),
                        calls: tool_calls,
                        reasoning,
                    }),
                },
                Message::Tool {
                    tool_call_id,
                    content,
                } => {
                    let name = req.tool_name_of(tool_call_id).unwrap_or("");
                    let r = ToolResult {
                        id: tool_call_id,
                        name,
                        content,
                    };
                    match out.last_mut() {
                        Some(Turn::Results(rs)) => rs.push(r),
                        _ => out.push(Turn::Results(vec![r])),
                    }
                }
            }
        }
        // Emulated: results that follow each other are one user turn, written together the
        // protocol's way.
        if let Some(p) = &self.history_protocol {
            for turn in &mut out {
                if let Turn::Results(rs) = turn {
                    let results: Vec<(&str, &str)> =
                        rs.iter().map(|r| (r.name, r.content)).collect();
                    *turn = Turn::User(p.format_results(&results));
                }
            }
        }
        out
    }
}

/// The tools for a model that has no protocol prompt (Ollama's emulated `required`).
fn tools_listing(tools: &ToolSet) -> String {
    let list = serde_json::to_string_pretty(&tools.to_json()).unwrap_or_default();
    format!("You can call these tools:\n<tools>\n{list}\n</tools>")
}

/// The instruction that goes with a JSON-answer tool choice.
fn json_answer_rule(choice: &ToolChoice, provider: ProviderKind) -> String {
    let which = match choice {
        ToolChoice::Tool(name) => format!("the tool \"{name}\""),
        _ => "exactly one of the tools".to_string(),
    };
    // Without a response format, the prompt alone has to hold the model to the JSON.
    let enforced = if !provider.capabilities().response_format {
        " No other format is accepted."
    } else {
        ""
    };
    format!(
        "You must call {which} now. Answer with a single JSON object and nothing else, of the \
         form {{\"name\": \"<tool name>\", \"arguments\": {{...}}}}, where \"arguments\" \
         follows the tool's parameter schema. Do not write any text before or after it.{enforced}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ToolDef;
    use serde_json::json;

    fn tools() -> ToolSet {
        ToolSet::new(vec![
            ToolDef::new(
                "get_weather",
                "Weather",
                json!({"type":"object","properties":{"city":{"type":"string"}}}),
            ),
            ToolDef::new("get_time", "", json!({"type":"object"})),
        ])
        .unwrap()
    }

    #[test]
    fn ollama_emulates_forced_choices_without_a_protocol() {
        let mut r = Request::new(ProviderKind::OLLAMA, "llama");
        r.tools = tools();
        r.tool_choice = Some(ToolChoice::Tool("get_time".into()));
        let p = Plan::of(&r);
        assert!(!p.native_tools);
        assert_eq!(p.output, Output::JsonAnswer);
        let rf = p.response_format.unwrap();
        assert_eq!(rf.schema["properties"]["name"]["const"], "get_time");
        assert!(p.system.unwrap().contains("<tools>"));
        r.tool_choice = Some(ToolChoice::None);
        let p = Plan::of(&r);
        assert!(!p.native_tools && p.system.is_none() && p.output == Output::Text);
        r.tool_choice = Some(ToolChoice::Auto);
        assert!(Plan::of(&r).native_tools);
    }

    #[test]
    fn native_mode_omits_the_choice_without_tools() {
        let mut r = Request::new(ProviderKind::OPENAI, "m");
        r.tool_choice = Some(ToolChoice::None);
        let p = Plan::of(&r);
        assert!(!p.native_tools && p.native_choice.is_none());
        r.tools = tools();
        let p = Plan::of(&r);
        assert!(p.native_tools);
        assert_eq!(p.native_choice, Some(ToolChoice::None));
    }
}
