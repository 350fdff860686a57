//! The stream lint: the rules a wire and a request set for an answer, checked on every run and
//! replay, and on saved sessions.
//!
//! A finding is a `warning` part ([`Warning`]) with a code, written right after the wire event
//! that revealed it; nothing is dropped or changed because of it. The checks come in two kinds:
//!
//! - wire rules, checked by each adapter's decoder as it reads its events (a tool-call fragment
//!   without `index`, Anthropic or Responses events out of their documented order, a block type
//!   toolscope does not know);
//! - answer rules, checked once the answer is over against what the request asked
//!   (`AnswerRules`): the finish reason against the calls, the tool choice, one call at most,
//!   usage.
//!
//! [`Session::lint`](crate::session::Session::lint) replays a saved session through the same
//! decoder and collects the findings with the index of the wire event behind each; `toolscope
//! lint` prints them.

use crate::part::{FinishReason, Warning};
use crate::protocol::{Protocol, find_call_marker};
use crate::tool::{ToolChoice, ToolSet};

/// Every code the lint can report, with what it means. The first group is checked by the
/// decoders of the wires it names, the second once an answer ends.
pub const CODES: &[(&str, &str)] = &[
    (
        MISSING_INDEX,
        "a streamed tool-call fragment without `index` (OpenAI Chat Completions)",
    ),
    (
        DUPLICATE_INDEX,
        "two tool-call entries with the same index in one chunk (OpenAI Chat Completions)",
    ),
    (
        ID_CHANGED,
        "a later fragment of a call carries another id than its first",
    ),
    (
        NAME_CHANGED,
        "a later fragment of a call carries another name than its first",
    ),
    (
        ARGUMENTS_NOT_JSON,
        "a call's assembled arguments are not strict JSON (toolscope may still have repaired them)",
    ),
    (
        EVENT_ORDER,
        "Anthropic or Responses events out of their documented order",
    ),
    (
        UNKNOWN_BLOCK,
        "a block, part, item or event type toolscope does not know, or content it cannot show",
    ),
    (
        FINISH_MISMATCH,
        "the finish reason says `stop` with tool calls, or `tool_calls` without one",
    ),
    (
        TOOL_CHOICE_IGNORED,
        "`required` or a forced tool answered without a call, or `none` answered with one",
    ),
    (WRONG_TOOL, "a tool was forced and another one was called"),
    (
        PARALLEL_IGNORED,
        "`parallel_tool_calls: false` and several calls",
    ),
    (
        USAGE_MISSING,
        "the answer ended without the usage its wire reports",
    ),
    (
        MARKUP_LEAK,
        "a protocol's call markup or a family's special tokens in the answer text or reasoning, finish reason not `tool-calls`",
    ),
    (
        CALL_IN_REASONING,
        "call markup inside reasoning, in a family whose calls there do not count",
    ),
    (
        EMPTY_ARGS_STREAMED,
        "a call streamed as `{}` whose final arguments are not empty",
    ),
    (
        TYPE_MISMATCH,
        "an argument whose type contradicts the schema (a number sent as a string)",
    ),
    (
        STREAM_DIFFERS,
        "verify: the streamed and the whole answer to the same request disagree",
    ),
];

/// A streamed tool-call fragment without `index`.
pub const MISSING_INDEX: &str = "missing-index";
/// Two entries with the same index in one chunk.
pub const DUPLICATE_INDEX: &str = "duplicate-index";
/// A later fragment contradicts the call's first id.
pub const ID_CHANGED: &str = "id-changed";
/// A later fragment contradicts the call's first name.
pub const NAME_CHANGED: &str = "name-changed";
/// A call's assembled arguments do not parse as JSON.
pub const ARGUMENTS_NOT_JSON: &str = "arguments-not-json";
/// `stop` with tool calls, or `tool_calls` without one.
pub const FINISH_MISMATCH: &str = "finish-mismatch";
/// The tool choice was not honoured.
pub const TOOL_CHOICE_IGNORED: &str = "tool-choice-ignored";
/// Forced X, called Y.
pub const WRONG_TOOL: &str = "wrong-tool";
/// `parallel_tool_calls: false` and several calls.
pub const PARALLEL_IGNORED: &str = "parallel-ignored";
/// Usage was expected and not sent.
pub const USAGE_MISSING: &str = "usage-missing";
/// Events out of their documented order.
pub const EVENT_ORDER: &str = "event-order";
/// A block type toolscope does not know.
pub const UNKNOWN_BLOCK: &str = "unknown-block";
/// Call markup or special tokens in answer text or reasoning.
pub const MARKUP_LEAK: &str = "markup-leak";
/// Call markup inside reasoning where calls there do not count.
pub const CALL_IN_REASONING: &str = "call-in-reasoning";
/// A call streamed as `{}`, its arguments sent whole afterwards.
pub const EMPTY_ARGS_STREAMED: &str = "empty-args-streamed";
/// An argument of the wrong type for its schema.
pub const TYPE_MISMATCH: &str = "type-mismatch";
/// The streamed and the whole answer disagree (`toolscope verify`).
pub const STREAM_DIFFERS: &str = "stream-differs";

/// Special tokens of model families that never belong in answer text or reasoning, beyond the
/// call markers and end-of-turn tokens the protocol registry declares: the families' own
/// framing tokens, which a server that skips its parser (or prints special tokens) lets through.
pub const SPECIAL_TOKENS: &[&str] = &[
    "<|tool_call_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_argument_begin|>",
    "\u{ff5c}DSML\u{ff5c}",
    "]<]minimax[>[",
    "]~b]",
    "<|open|>",
    "<|close|>",
    "<|sep|>",
    "<|python_tag|>",
    "<|tool_call>",
    "<tool_call|>",
    "<|START_ACTION|>",
    "<|tool_calls_section_end|>",
];

/// Markup found where none belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leak {
    /// Byte offset in the text.
    pub at: usize,
    /// The markup as found.
    pub markup: String,
    /// A protocol's call marker (rather than a special token).
    pub call: bool,
}

/// The first call markup (a call marker of any registered protocol) or special token (an
/// end-of-turn token of the registry, or one of [`SPECIAL_TOKENS`]) in `text`.
pub fn find_leak(tools: &ToolSet, text: &str) -> Option<Leak> {
    let call = find_call_marker(tools, text).map(|m| Leak {
        at: m.at,
        markup: m.marker,
        call: true,
    });
    let ends = Protocol::all();
    let token = ends
        .iter()
        .flat_map(|p| p.end_tokens().iter().copied())
        .chain(SPECIAL_TOKENS.iter().copied())
        .filter_map(|t| text.find(t).map(|at| (at, t)))
        .min_by_key(|(at, t)| (*at, usize::MAX - t.len()))
        .map(|(at, t)| Leak {
            at,
            markup: t.to_string(),
            call: false,
        });
    match (call, token) {
        (Some(c), Some(t)) if t.at < c.at => Some(t),
        (Some(c), _) => Some(c),
        (None, t) => t,
    }
}

/// The first call markup in reasoning (`None` when there is none).
pub fn find_call_in_reasoning(tools: &ToolSet, reasoning: &str) -> Option<Leak> {
    find_call_marker(tools, reasoning).map(|m| Leak {
        at: m.at,
        markup: m.marker,
        call: true,
    })
}

/// What the request asked of the answer, for the checks made when it ends.
#[derive(Clone, Debug, Default)]
pub(crate) struct AnswerRules {
    pub tool_choice: Option<ToolChoice>,
    /// `parallel_tool_calls: false` was sent.
    pub single_call: bool,
    /// The wire has a finish reason of its own for tool calls (OpenAI Chat Completions,
    /// Anthropic), and the calls are native: the reason must agree with the calls. Gemini,
    /// Ollama and Responses have none, and emulated calls are text to the wire.
    pub finish_names_calls: bool,
}

/// What the answer turned out to be, when it ended normally.
pub(crate) struct AnswerFacts<'a> {
    /// The finish reason the wire gave (normalised), before a `stop` with calls became
    /// `tool-calls`.
    pub wire_finish: Option<FinishReason>,
    /// The names of the calls the client is to answer, in order (provider-executed ones left
    /// out).
    pub calls: &'a [String],
    /// How many of those calls were read from the answer text (protocol detection on a native
    /// request): the wire's finish reason cannot know of them.
    pub text_calls: usize,
    pub has_usage: bool,
}

impl AnswerRules {
    /// The findings about an answer that ended with a finish reason.
    pub(crate) fn check(&self, facts: &AnswerFacts<'_>) -> Vec<Warning> {
        let mut out = Vec::new();
        let n = facts.calls.len();
        let wire_calls = n.saturating_sub(facts.text_calls);
        if self.finish_names_calls {
            match facts.wire_finish {
                Some(FinishReason::Stop) if wire_calls > 0 => out.push(Warning::new(
                    FINISH_MISMATCH,
                    format!(
                        "the finish reason is `stop`, but the answer made {wire_calls} tool call(s)"
                    ),
                )),
                Some(FinishReason::ToolCalls) if n == 0 => out.push(Warning::new(
                    FINISH_MISMATCH,
                    "the finish reason says tool calls, but the answer made none",
                )),
                _ => {}
            }
        }
        // A cut answer (length, filter, error) did not get to honour the choice.
        let whole = matches!(
            facts.wire_finish,
            None | Some(FinishReason::Stop | FinishReason::ToolCalls)
        );
        match &self.tool_choice {
            Some(ToolChoice::Required) if whole && n == 0 => out.push(Warning::new(
                TOOL_CHOICE_IGNORED,
                "the tool choice is `required`, and the answer made no tool call",
            )),
            Some(ToolChoice::Tool(x)) if whole && n == 0 => out.push(Warning::new(
                TOOL_CHOICE_IGNORED,
                format!("the tool \"{x}\" was forced, and the answer made no tool call"),
            )),
            Some(ToolChoice::None) if n > 0 => out.push(Warning::new(
                TOOL_CHOICE_IGNORED,
                format!("the tool choice is `none`, and the answer made {n} tool call(s)"),
            )),
            _ => {}
        }
        if let Some(ToolChoice::Tool(x)) = &self.tool_choice {
            for name in facts.calls.iter().filter(|c| *c != x) {
                out.push(Warning {
                    tool_name: Some(name.clone()),
                    ..Warning::new(
                        WRONG_TOOL,
                        format!("the tool \"{x}\" was forced, and the answer called \"{name}\""),
                    )
                });
            }
        }
        if self.single_call && n > 1 {
            out.push(Warning::new(
                PARALLEL_IGNORED,
                format!("`parallel_tool_calls` is false, and the answer made {n} tool calls"),
            ));
        }
        if !facts.has_usage {
            out.push(Warning::new(
                USAGE_MISSING,
                "the answer ended without reporting its token usage",
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(rules: &AnswerRules, facts: &AnswerFacts<'_>) -> Vec<String> {
        rules.check(facts).into_iter().map(|w| w.code).collect()
    }

    #[test]
    fn answer_rules_hold_the_request_to_its_word() {
        let calls = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let none: Vec<String> = Vec::new();
        let two = calls(&["get_weather", "get_time"]);
        let facts = |calls, finish| AnswerFacts {
            wire_finish: Some(finish),
            calls,
            text_calls: 0,
            has_usage: true,
        };
        let native = AnswerRules {
            finish_names_calls: true,
            ..AnswerRules::default()
        };
        assert_eq!(
            codes(&native, &facts(&two, FinishReason::Stop)),
            [FINISH_MISMATCH]
        );
        assert_eq!(
            codes(&native, &facts(&none, FinishReason::ToolCalls)),
            [FINISH_MISMATCH]
        );
        assert!(codes(&native, &facts(&two, FinishReason::ToolCalls)).is_empty());
        // Calls read from the text of a native answer are unknown to the wire's finish reason;
        // one the wire itself carried still counts.
        let from_text = |text_calls| AnswerFacts {
            text_calls,
            ..facts(&two, FinishReason::Stop)
        };
        assert!(codes(&native, &from_text(2)).is_empty());
        assert_eq!(codes(&native, &from_text(1)), [FINISH_MISMATCH]);
        let forced = AnswerRules {
            tool_choice: Some(ToolChoice::Tool("get_time".into())),
            single_call: true,
            ..AnswerRules::default()
        };
        assert_eq!(
            codes(&forced, &facts(&two, FinishReason::ToolCalls)),
            [WRONG_TOOL, PARALLEL_IGNORED]
        );
        assert_eq!(
            codes(&forced, &facts(&none, FinishReason::Stop)),
            [TOOL_CHOICE_IGNORED]
        );
        // A cut answer did not get to call.
        assert!(codes(&forced, &facts(&none, FinishReason::Length)).is_empty());
        let never = AnswerRules {
            tool_choice: Some(ToolChoice::None),
            ..AnswerRules::default()
        };
        assert_eq!(
            codes(&never, &facts(&two, FinishReason::Stop)),
            [TOOL_CHOICE_IGNORED]
        );
        let required = AnswerRules {
            tool_choice: Some(ToolChoice::Required),
            ..AnswerRules::default()
        };
        let no_usage = AnswerFacts {
            has_usage: false,
            ..facts(&none, FinishReason::Stop)
        };
        assert_eq!(
            codes(&required, &no_usage),
            [TOOL_CHOICE_IGNORED, USAGE_MISSING]
        );
        assert!(CODES.iter().any(|(c, _)| *c == EVENT_ORDER));
    }
}
