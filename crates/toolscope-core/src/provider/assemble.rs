//! From provider-neutral deltas to parts.
//!
//! Every adapter turns its wire events (streamed chunks or one whole body) into the same small
//! vocabulary of [`Delta`]s: text, reasoning, tool-call starts and argument fragments keyed by the
//! provider's index, whole tool calls, usage, a finish reason, the end, an error. The
//! [`Assembler`] owns everything that is the same across providers: part ids, opening and closing
//! text blocks, one [`ArgsStream`] per call (coercion, validation, canonical deltas), running
//! emulated output through a protocol's parser, and normalising the finish reason. Because the
//! streamed and the non-streamed answer of a provider both become deltas here, they give the same
//! parts by construction.

use serde_json::Value;

use crate::args::ArgsStream;
use crate::error::ProviderError;
use crate::lint::{self, AnswerFacts, AnswerRules};
use crate::part::{
    ErrorPart, FinishReason, Part, PartId, PartWriter, Source, ToolCall, ToolResult, Usage, Warning,
};
use crate::protocol::{AutoParser, Detected, StreamParser};
use crate::tool::ToolSet;

use super::event::{OutputText, RunEvent};

/// What a provider's wire said, in provider-neutral terms.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Delta {
    /// Answer text.
    Text(String),
    /// Reasoning text, streamed apart from the answer.
    Reasoning(String),
    /// The open reasoning block ends here, with what the provider needs back to continue after
    /// it (a signature, an item id); a block is opened for it when none is open, so that the
    /// metadata is never lost.
    ReasoningEnd(Option<Value>),
    /// A whole reasoning block whose text the provider withheld, with its encrypted content.
    RedactedReasoning(Option<Value>),
    /// A piece of refusal text; the pieces of one refusal become one `refusal` part.
    Refusal(String),
    /// A tool call begins (or more of its header arrives): `index` is the provider's key for it
    /// (OpenAI's `tool_calls[].index`, Anthropic's content-block index, Responses'
    /// `output_index`).
    ToolStart {
        index: u64,
        id: Option<String>,
        name: Option<String>,
        /// A server tool the provider runs itself.
        provider_executed: bool,
    },
    /// A fragment of a call's argument text.
    ToolArgs {
        index: u64,
        fragment: String,
    },
    /// The call at `index` is complete (for other blocks at that index, nothing).
    ToolEnd {
        index: u64,
    },
    /// A call that arrives whole (Gemini, Ollama, a finished server-tool item).
    ToolWhole {
        id: Option<String>,
        name: String,
        args: Value,
        provider_executed: bool,
        /// What the provider needs back with the call (Gemini's thought signature).
        metadata: Option<Value>,
    },
    /// The result of a provider-executed call. Without an id it answers the last such call;
    /// without a name it takes its call's.
    ToolResult {
        id: Option<String>,
        name: Option<String>,
        output: Value,
        is_error: bool,
    },
    /// A citation, annotation or grounding source.
    Source(Source),
    /// A finding of a wire rule of the stream lint.
    Warning(Warning),
    /// Token counts; fields present override earlier ones.
    Usage(Usage),
    /// The provider's finish reason, already in the part vocabulary. Closes open calls.
    Finish(FinishReason),
    /// The answer is over: emit `finish`.
    Done,
    Error(ProviderError),
}

/// How answer text becomes parts.
pub(crate) enum OutputParser {
    /// Native mode, or emulation with tool choice `none`: text is text.
    Text,
    /// Emulated mode: a protocol's stream parser finds the calls in the text (for `required` /
    /// `tool X`, the parser of the one `{name, arguments}` JSON answer).
    Protocol(Box<StreamParser>),
    /// Native mode read with protocol detection: the text is held until a marker names the
    /// protocol, then read by that protocol's parser from its first byte.
    Auto(Box<AutoParser>),
}

struct OpenCall {
    index: u64,
    id: PartId,
    name: Option<String>,
    /// Argument text that arrived before the name (the schema is not known yet).
    pending: String,
    args: Option<ArgsStream>,
    /// The argument text as sent, kept to report it if it does not parse.
    raw: String,
    /// How the streamed `{}` that some servers send before the arguments (sent whole after it)
    /// stands: see [`EmptyFirst`].
    empty_first: EmptyFirst,
    provider_executed: bool,
    metadata: Option<Value>,
}

/// A server that streams a call's arguments as `{}` and then sends them whole (`{}` then
/// `{"city":"Paris"}`): the first `{}` is held back until the next fragment shows whether the
/// arguments follow; if they do, it is dropped (with an `empty-args-streamed` warning), so the
/// call's arguments are the ones sent whole.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum EmptyFirst {
    /// Nothing of the arguments has arrived yet.
    #[default]
    Nothing,
    /// The first fragment was `{}`, held back.
    Held,
    /// The held `{}` was followed by the arguments and dropped.
    Dropped,
    /// The arguments began otherwise, or the `{}` stood alone.
    No,
}

/// A call whose arguments stopped short of a whole JSON value: cut by the token limit, or
/// malformed; which one is known only once the finish reason is.
struct CutCall {
    id: PartId,
    name: String,
    raw: String,
    problem: String,
}

/// The event that reports the choice of a detecting parser, on the push that made it.
fn detected_event(detected: Option<Detected>, out: &mut Vec<RunEvent>) {
    if let Some(d) = detected {
        out.push(RunEvent::Detected {
            protocol: d.protocol.name().to_string(),
            reason: d.reason,
        });
    }
}

/// Turns deltas into run events. One per answer.
pub(crate) struct Assembler {
    tools: ToolSet,
    output: OutputParser,
    /// Writes the parts of native mode; in emulated mode the output parser's writer is used, so
    /// that the answer's ids come from one count and its blocks never overlap.
    writer: PartWriter,
    calls: Vec<OpenCall>,
    /// Calls seen so far (keys of whole calls).
    calls_seen: usize,
    /// Calls for the client to answer seen so far, native or parsed from emulated output (the
    /// tool-calls finish reason).
    client_calls_seen: usize,
    /// The names of the client's finished calls, for the answer rules of the lint.
    client_calls: Vec<String>,
    /// How many of them were read from the text of a native answer (protocol detection).
    text_calls: usize,
    /// Whether any answer text arrived (detection reports a choice only for some text).
    had_text: bool,
    /// Provider-executed calls, for naming and pairing their results.
    provider_calls: Vec<(PartId, String)>,
    cut_calls: Vec<CutCall>,
    /// Refusal text not yet written as a part.
    refusal: String,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    rules: AnswerRules,
    spans: usize,
    done: bool,
    /// Native output (no protocol reads the text): the lint looks for markup in its text and
    /// reasoning when the answer ends.
    native_text: bool,
    /// The answer text and reasoning so far (at most [`SEEN_CAP`] bytes each), for that look.
    seen_text: String,
    seen_reasoning: String,
    /// Where the events of the delta being pushed begin in its `out`.
    push_start: usize,
}

/// How much of an answer's text (and of its reasoning) the lint looks through for markup.
const SEEN_CAP: usize = 1 << 20;

impl Assembler {
    pub(crate) fn new(tools: ToolSet, output: OutputParser, rules: AnswerRules) -> Self {
        Assembler {
            tools,
            writer: PartWriter::new(),
            calls: Vec::new(),
            calls_seen: 0,
            client_calls_seen: 0,
            client_calls: Vec::new(),
            text_calls: 0,
            had_text: false,
            provider_calls: Vec::new(),
            cut_calls: Vec::new(),
            refusal: String::new(),
            finish: None,
            usage: None,
            native_text: matches!(output, OutputParser::Text),
            output,
            rules,
            spans: 0,
            done: false,
            seen_text: String::new(),
            seen_reasoning: String::new(),
            push_start: 0,
        }
    }

    /// Takes note of the answer text and reasoning among `events`.
    fn absorb(&mut self, events: &[RunEvent]) {
        for e in events {
            let (seen, delta) = match e {
                RunEvent::Part(Part::TextDelta { delta, .. }) => (&mut self.seen_text, delta),
                RunEvent::Part(Part::ReasoningDelta { delta, .. }) => {
                    (&mut self.seen_reasoning, delta)
                }
                _ => continue,
            };
            if seen.len() < SEEN_CAP {
                seen.push_str(delta);
            }
        }
    }

    /// The lint's findings about markup where none belongs, in native output: call markup or
    /// special tokens in the text (or special tokens in the reasoning) of an answer that did
    /// not end for tool calls, and call markup inside the reasoning.
    fn markup_findings(&self, reason: FinishReason) -> Vec<Warning> {
        let mut out = Vec::new();
        if !self.native_text {
            return out;
        }
        if reason != FinishReason::ToolCalls {
            let leak = lint::find_leak(&self.tools, &self.seen_text)
                .map(|l| (l, "text"))
                .or_else(|| {
                    lint::find_leak(&self.tools, &self.seen_reasoning)
                        .filter(|l| !l.call)
                        .map(|l| (l, "reasoning"))
                });
            if let Some((l, place)) = leak {
                out.push(Warning::new(
                    lint::MARKUP_LEAK,
                    format!(
                        "{} {:?} in the answer {place} at byte {}, and the finish reason is not tool calls",
                        if l.call { "call markup" } else { "the special token" },
                        l.markup,
                        l.at
                    ),
                ));
            }
        }
        if let Some(l) = lint::find_call_in_reasoning(&self.tools, &self.seen_reasoning) {
            out.push(Warning::new(
                lint::CALL_IN_REASONING,
                format!(
                    "call markup {:?} inside the reasoning at byte {}: a call there is not made",
                    l.markup, l.at
                ),
            ));
        }
        out
    }

    /// The writer of this answer's parts: the output parser's in emulated mode.
    fn writer(&mut self) -> &mut PartWriter {
        match &mut self.output {
            OutputParser::Protocol(parser) => parser.writer(),
            OutputParser::Auto(parser) => parser.writer(),
            OutputParser::Text => &mut self.writer,
        }
    }

    /// Call ids this answer mints continue after `call-{used}` (the conversation's earlier
    /// calls), in whichever writer writes the calls.
    pub(crate) fn continue_call_ids_after(&mut self, used: u32) {
        self.writer.continue_calls_after(used);
        self.writer().continue_calls_after(used);
    }

    /// Whether the answer ended (with `finish` or `error`); later deltas are ignored.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Whether a finish reason arrived (an end of stream after it is a normal end).
    pub(crate) fn has_finish_reason(&self) -> bool {
        self.finish.is_some()
    }

    pub(crate) fn push(&mut self, delta: Delta, out: &mut Vec<RunEvent>) {
        if self.done {
            return;
        }
        self.push_start = out.len();
        self.push_delta(delta, out);
        if !self.done && self.native_text {
            let start = self.push_start.min(out.len());
            self.absorb(&out[start..]);
        }
    }

    fn push_delta(&mut self, delta: Delta, out: &mut Vec<RunEvent>) {
        // A refusal ends where anything else of the answer begins.
        if !matches!(
            delta,
            Delta::Refusal(_) | Delta::Usage(_) | Delta::Warning(_) | Delta::Source(_)
        ) {
            self.flush_refusal(out);
        }
        if let (
            Delta::Reasoning(_) | Delta::ReasoningEnd(_) | Delta::RedactedReasoning(_),
            OutputParser::Auto(parser),
        ) = (&delta, &mut self.output)
        {
            // The wire keeps reasoning apart: the text does not start inside it.
            parser.reasoning_given_apart();
        }
        match delta {
            Delta::Text(t) => self.text(t, out),
            Delta::Reasoning(t) => self.reasoning(t, out),
            Delta::ReasoningEnd(metadata) => {
                let writer = self.writer();
                if writer.reasoning_id().is_none() && metadata.is_some() {
                    writer.open_reasoning(out);
                }
                writer.close_reasoning_with(metadata, out);
            }
            Delta::RedactedReasoning(metadata) => {
                let writer = self.writer();
                writer.open_redacted_reasoning(out);
                writer.close_reasoning_with(metadata, out);
            }
            Delta::Refusal(t) => self.refusal.push_str(&t),
            Delta::ToolStart {
                index,
                id,
                name,
                provider_executed,
            } => self.tool_start(index, id, name, provider_executed, out),
            Delta::ToolArgs { index, fragment } => self.tool_args(index, fragment, out),
            Delta::ToolEnd { index } => {
                if let Some(i) = self.calls.iter().position(|c| c.index == index) {
                    let call = self.calls.remove(i);
                    self.close_call(call, out);
                }
            }
            Delta::ToolWhole {
                id,
                name,
                args,
                provider_executed,
                metadata,
            } => {
                // A whole call goes through the same path as a streamed one, so its input is
                // coerced and validated the same way.
                let index = u64::MAX - self.calls_seen as u64;
                self.tool_start(index, id, Some(name), provider_executed, out);
                if let Some(call) = self.calls.iter_mut().find(|c| c.index == index) {
                    call.metadata = metadata;
                }
                let fragment = match args {
                    Value::String(s) => s,
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                self.tool_args(index, fragment, out);
                self.push(Delta::ToolEnd { index }, out);
            }
            Delta::ToolResult {
                id,
                name,
                output,
                is_error,
            } => self.tool_result(id, name, output, is_error, out),
            Delta::Source(s) => part(out, Part::Source(Box::new(s))),
            Delta::Warning(w) => part(out, Part::warning(w)),
            Delta::Usage(u) => {
                let cur = self.usage.get_or_insert_with(Usage::default);
                cur.input_tokens = u.input_tokens.or(cur.input_tokens);
                cur.cached_input_tokens = u.cached_input_tokens.or(cur.cached_input_tokens);
                cur.output_tokens = u.output_tokens.or(cur.output_tokens);
                cur.reasoning_tokens = u.reasoning_tokens.or(cur.reasoning_tokens);
                cur.total_tokens = u.total_tokens.or(cur.total_tokens);
            }
            Delta::Finish(reason) => {
                self.finish = Some(reason);
                self.close_all_calls(out);
                self.report_cut_calls(out);
            }
            Delta::Done => self.end(out),
            Delta::Error(e) => self.fail(e, out),
        }
    }

    /// Ends the answer with an `error` part. Everything decoded before stays; text the output
    /// parser still held is flushed first so that nothing is lost.
    pub(crate) fn fail(&mut self, e: ProviderError, out: &mut Vec<RunEvent>) {
        if self.done {
            return;
        }
        self.flush_refusal(out);
        // The output parser ends first: its blocks (and reasoning written through its writer)
        // close with it, in order. The answer broke off: what it left open is unfinished.
        self.close_output(true, out);
        self.close_reasoning(out);
        self.report_cut_calls(out);
        part(out, Part::error(e.to_part()));
        self.done = true;
    }

    fn end(&mut self, out: &mut Vec<RunEvent>) {
        self.flush_refusal(out);
        let cut = matches!(
            self.finish,
            Some(FinishReason::Length | FinishReason::ContentFilter)
        );
        self.close_output(cut, out);
        self.close_reasoning(out);
        self.close_all_calls(out);
        self.report_cut_calls(out);
        // OpenAI answers `stop` for a forced tool, Gemini `STOP`, Ollama `stop`: a normal end
        // with calls is a tool-calls end. Other reasons (length, error, …) say more and stay.
        let reason = match self.finish {
            Some(FinishReason::Stop) | None if self.client_calls_seen > 0 => {
                FinishReason::ToolCalls
            }
            Some(r) => r,
            None => FinishReason::Unknown,
        };
        let usage = self.usage.map(|mut u| {
            if let (Some(i), Some(o)) = (u.input_tokens, u.output_tokens) {
                u.total_tokens = Some(i + o);
            }
            u
        });
        if self.native_text {
            let start = self.push_start.min(out.len());
            self.absorb(&out[start..]);
        }
        let mut findings = self.markup_findings(reason);
        findings.extend(self.rules.check(&AnswerFacts {
            wire_finish: self.finish,
            calls: &self.client_calls,
            text_calls: self.text_calls,
            has_usage: usage.is_some(),
        }));
        for w in findings {
            part(out, Part::warning(w));
        }
        part(
            out,
            Part::Finish {
                finish_reason: reason,
                usage: usage.map(Box::new),
            },
        );
        self.done = true;
    }

    fn flush_refusal(&mut self, out: &mut Vec<RunEvent>) {
        if self.refusal.is_empty() {
            return;
        }
        self.writer().close_blocks(out);
        let text = std::mem::take(&mut self.refusal);
        part(out, Part::Refusal { text });
    }

    fn text(&mut self, t: String, out: &mut Vec<RunEvent>) {
        if t.is_empty() {
            return;
        }
        self.had_text = true;
        // Opening the text block closes open reasoning (the writer keeps blocks apart); in
        // emulated mode the text may itself be reasoning, which the parser decides.
        out.push(RunEvent::Output(OutputText {
            text: t.clone(),
            tool_call_id: None,
        }));
        match &mut self.output {
            OutputParser::Text => self.writer.text(t.into(), out),
            OutputParser::Protocol(parser) => {
                let mut parts = Vec::new();
                parser.push_str(&t, &mut parts);
                self.forward(parts, out);
            }
            OutputParser::Auto(parser) => {
                let mut parts = Vec::new();
                let detected = parser.push(t.as_bytes(), &mut parts);
                detected_event(detected, out);
                self.forward(parts, out);
            }
        }
    }

    /// Forwards parts of an output parser, with the spans it recognised meanwhile.
    fn forward(&mut self, parts: Vec<Part>, out: &mut Vec<RunEvent>) {
        for p in parts {
            if let Part::ToolCall(c) = &p {
                self.calls_seen += 1;
                self.client_calls_seen += 1;
                self.client_calls.push(c.tool_name.clone());
                if matches!(self.output, OutputParser::Auto(_)) {
                    self.text_calls += 1;
                }
            }
            part(out, p);
        }
        let spans = match &self.output {
            OutputParser::Protocol(parser) => parser.spans(),
            OutputParser::Auto(parser) => parser.spans(),
            OutputParser::Text => return,
        };
        for s in spans.iter().skip(self.spans) {
            out.push(RunEvent::Span(*s));
        }
        self.spans = spans.len();
    }

    fn reasoning(&mut self, t: String, out: &mut Vec<RunEvent>) {
        self.writer().reasoning(t.into(), out);
    }

    fn close_reasoning(&mut self, out: &mut Vec<RunEvent>) {
        self.writer().close_reasoning(out);
    }

    /// Closes the text and ends the output parser (emulated output is complete only now).
    /// `cut`: the output did not end as the model meant it to (the token limit, a content
    /// filter, a broken stream), so a call it left open is unfinished, never recovered.
    fn close_output(&mut self, cut: bool, out: &mut Vec<RunEvent>) {
        self.writer.close_text(out);
        let mut parts = Vec::new();
        match &mut self.output {
            OutputParser::Text => return,
            OutputParser::Protocol(parser) if cut => parser.finish_cut(&mut parts),
            OutputParser::Protocol(parser) => parser.finish(&mut parts),
            OutputParser::Auto(parser) => {
                let detected = if cut {
                    parser.finish_cut(&mut parts)
                } else {
                    parser.finish(&mut parts)
                };
                // An answer without text (only native calls) had nothing to read.
                detected_event(detected.filter(|_| self.had_text), out);
            }
        }
        // The last spans go out before the parser does.
        self.forward(parts, out);
        self.output = OutputParser::Text;
    }

    fn tool_start(
        &mut self,
        index: u64,
        id: Option<String>,
        name: Option<String>,
        provider_executed: bool,
        out: &mut Vec<RunEvent>,
    ) {
        let name = name.filter(|n| !n.is_empty());
        if let Some(call) = self.calls.iter_mut().find(|c| c.index == index) {
            // More of the header of a call already open (some servers repeat it, or send the
            // name after the id).
            if call.name.is_none() && name.is_some() {
                call.name = name;
                let (call_id, tool_name) = (call.id.clone(), call.name.clone().unwrap_or_default());
                let pending = std::mem::take(&mut call.pending);
                call.args = Some(if call.provider_executed {
                    ArgsStream::new(None)
                } else {
                    ArgsStream::new(self.tools.get(&tool_name))
                });
                self.writer().start_call(&call_id, &tool_name, out);
                if !pending.is_empty() {
                    self.tool_args(index, pending, out);
                }
            }
            return;
        }
        let writer = self.writer();
        writer.close_blocks(out);
        let id: PartId = match id.filter(|i| !i.is_empty()) {
            Some(i) => i.into(),
            None => writer.next_call_id(),
        };
        if let Some(n) = &name {
            writer.start_call(&id, n, out);
        }
        self.calls_seen += 1;
        if !provider_executed {
            self.client_calls_seen += 1;
        }
        // A server tool's input is the provider's business: shown as sent, not coerced against
        // the client's tools.
        let args = name.as_deref().map(|n| match provider_executed {
            true => ArgsStream::new(None),
            false => ArgsStream::new(self.tools.get(n)),
        });
        self.calls.push(OpenCall {
            index,
            id,
            name,
            pending: String::new(),
            args,
            raw: String::new(),
            empty_first: EmptyFirst::Nothing,
            provider_executed,
            metadata: None,
        });
    }

    fn tool_args(&mut self, index: u64, fragment: String, out: &mut Vec<RunEvent>) {
        if fragment.is_empty() {
            return;
        }
        if !self.calls.iter().any(|c| c.index == index) {
            // Arguments for a call whose header never came: open it nameless.
            self.tool_start(index, None, None, false, out);
        }
        let Some(call) = self.calls.iter_mut().find(|c| c.index == index) else {
            return;
        };
        match &mut call.args {
            None => call.pending.push_str(&fragment),
            Some(args) => {
                call.raw.push_str(&fragment);
                out.push(RunEvent::Output(OutputText {
                    text: fragment.clone(),
                    tool_call_id: Some(call.id.clone()),
                }));
                match call.empty_first {
                    EmptyFirst::Nothing if fragment.trim() == "{}" => {
                        call.empty_first = EmptyFirst::Held;
                        return;
                    }
                    EmptyFirst::Nothing => call.empty_first = EmptyFirst::No,
                    EmptyFirst::Held if fragment.trim().is_empty() => return,
                    EmptyFirst::Held if fragment.trim_start().starts_with('{') => {
                        call.empty_first = EmptyFirst::Dropped;
                        let name = call.name.clone().unwrap_or_default();
                        let warning = Warning {
                            tool_call_id: Some(call.id.clone()),
                            tool_name: Some(name.clone()),
                            ..Warning::new(
                                lint::EMPTY_ARGS_STREAMED,
                                format!(
                                    "the arguments of {name} were streamed as `{{}}`, then sent whole: read as the whole ones"
                                ),
                            )
                        };
                        out.push(RunEvent::Part(Part::warning(warning)));
                    }
                    EmptyFirst::Held => {
                        call.empty_first = EmptyFirst::No;
                        args.push("{}");
                    }
                    _ => {}
                }
                args.push(&fragment);
                if let Some(delta) = args.take_delta() {
                    let id = call.id.clone();
                    self.writer().input_delta(&id, delta, out);
                }
            }
        }
    }

    fn tool_result(
        &mut self,
        id: Option<String>,
        name: Option<String>,
        output: Value,
        is_error: bool,
        out: &mut Vec<RunEvent>,
    ) {
        let id: PartId = match id.filter(|i| !i.is_empty()) {
            Some(i) => i.into(),
            None => match self.provider_calls.last() {
                Some((last, _)) => last.clone(),
                None => self.writer().next_call_id(),
            },
        };
        let name = name
            .filter(|n| !n.is_empty())
            .or_else(|| {
                self.provider_calls
                    .iter()
                    .find(|(c, _)| *c == id)
                    .map(|(_, n)| n.clone())
            })
            .unwrap_or_default();
        self.writer().close_blocks(out);
        part(
            out,
            Part::ToolResult(Box::new(ToolResult {
                tool_call_id: id,
                tool_name: name,
                output,
                is_error,
                provider_executed: true,
            })),
        );
    }

    fn close_all_calls(&mut self, out: &mut Vec<RunEvent>) {
        for call in std::mem::take(&mut self.calls) {
            self.close_call(call, out);
        }
    }

    fn close_call(&mut self, call: OpenCall, out: &mut Vec<RunEvent>) {
        let (Some(name), Some(args)) = (call.name, call.args) else {
            part(
                out,
                Part::error(ErrorPart {
                    tool_call_id: Some(call.id),
                    message: format!(
                        "a tool call arrived without a tool name; its arguments were: {}",
                        clip(&call.pending)
                    ),
                    arguments: Some(call.pending),
                    ..ErrorPart::reason("malformed-tool-call", "")
                }),
            );
            return;
        };
        let mut args = args;
        let sent = match call.empty_first {
            EmptyFirst::Held => {
                // The `{}` stood alone: those are the arguments.
                args.push("{}");
                call.raw.as_str()
            }
            // The dropped `{}` is not part of the arguments sent whole.
            EmptyFirst::Dropped => call.raw.trim_start().trim_start_matches("{}"),
            _ => call.raw.as_str(),
        };
        let strict_json =
            sent.trim().is_empty() || serde_json::from_str::<serde::de::IgnoredAny>(sent).is_ok();
        match args.finish() {
            Ok((args, last)) => {
                if !strict_json {
                    part(out, Part::warning(not_json(&call.id, &name, &call.raw)));
                }
                let known = call.provider_executed || self.tools.get(&name).is_some();
                let writer = self.writer();
                if let Some(delta) = last {
                    writer.input_delta(&call.id, delta, out);
                }
                let tool_call = ToolCall {
                    tool_call_id: call.id.clone(),
                    tool_name: name.clone(),
                    input: args.input,
                    coercions: args.coercions,
                    invalid: args.invalid,
                    provider_executed: call.provider_executed,
                    provider_metadata: call.metadata,
                };
                let mismatched: Vec<String> = tool_call
                    .coercions
                    .iter()
                    .map(|c| {
                        format!(
                            "{} sent as {}, read as {}",
                            shown_path(&c.path),
                            c.from,
                            c.to
                        )
                    })
                    .collect();
                writer.end_call(tool_call, out);
                if !call.provider_executed && !mismatched.is_empty() {
                    // Native arguments are JSON: a value the schema had to change was sent with
                    // the wrong type.
                    part(
                        out,
                        Part::warning(Warning {
                            tool_call_id: Some(call.id.clone()),
                            tool_name: Some(name.clone()),
                            ..Warning::new(
                                lint::TYPE_MISMATCH,
                                format!(
                                    "the arguments of {name} contradict the schema's types: {}",
                                    mismatched.join("; ")
                                ),
                            )
                        }),
                    );
                }
                if call.provider_executed {
                    self.provider_calls.push((call.id, name));
                    return;
                }
                self.client_calls.push(name.clone());
                if !known {
                    part(
                        out,
                        Part::error(ErrorPart {
                            tool_call_id: Some(call.id),
                            tool_name: Some(name.clone()),
                            ..ErrorPart::reason(
                                "unknown-tool",
                                format!(
                                    "the model called \"{name}\", which is not among the tools"
                                ),
                            )
                        }),
                    );
                }
            }
            Err(problem) => {
                self.writer().abort_call(&call.id, out);
                let cut = CutCall {
                    id: call.id,
                    name,
                    raw: call.raw,
                    problem,
                };
                if truncated(&cut.problem) && self.finish.is_none() {
                    // The arguments stopped short: the finish reason, still to come, says
                    // whether the token limit cut them.
                    self.cut_calls.push(cut);
                } else {
                    self.report_cut_call(cut, out);
                }
            }
        }
    }

    fn report_cut_calls(&mut self, out: &mut Vec<RunEvent>) {
        for cut in std::mem::take(&mut self.cut_calls) {
            self.report_cut_call(cut, out);
        }
    }

    /// The error of a call that did not complete, with the argument text received: an
    /// unfinished call when the token limit (or a failure) ended the answer inside it, a
    /// malformed one otherwise.
    fn report_cut_call(&mut self, cut: CutCall, out: &mut Vec<RunEvent>) {
        let by_limit =
            truncated(&cut.problem) && matches!(self.finish, Some(FinishReason::Length) | None);
        let CutCall {
            id,
            name,
            raw,
            problem,
        } = cut;
        let error = if by_limit {
            let why = match self.finish {
                Some(_) => "the token limit cut it",
                None => "the answer broke off",
            };
            ErrorPart::reason(
                "unfinished-tool-call",
                format!(
                    "the answer ended inside the arguments of {name} ({why}); received: {}",
                    clip(&raw)
                ),
            )
        } else {
            if !raw.trim().is_empty() {
                part(out, Part::warning(not_json(&id, &name, &raw)));
            }
            ErrorPart::reason(
                "malformed-tool-call",
                format!(
                    "the arguments of {name} are not a JSON object ({problem}): {}",
                    clip(&raw)
                ),
            )
        };
        part(
            out,
            Part::error(ErrorPart {
                tool_call_id: Some(id),
                tool_name: Some(name),
                arguments: Some(raw),
                ..error
            }),
        );
    }
}

/// A JSON pointer for a message (`/` for the whole value).
fn shown_path(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// Whether the arguments' problem is that they stopped short (the text is a prefix of JSON).
fn truncated(problem: &str) -> bool {
    problem.contains("unexpected end of input")
}

/// The lint finding for a call whose argument text is not JSON.
fn not_json(id: &PartId, name: &str, raw: &str) -> Warning {
    Warning {
        tool_call_id: Some(id.clone()),
        tool_name: Some(name.to_string()),
        ..Warning::new(
            lint::ARGUMENTS_NOT_JSON,
            format!(
                "the arguments of {name} as sent are not JSON: {}",
                clip(raw)
            ),
        )
    }
}

fn part(out: &mut Vec<RunEvent>, p: Part) {
    out.push(RunEvent::Part(p));
}

/// At most 2 KB of `s` for a message (the whole text is in the raw wire events).
fn clip(s: &str) -> String {
    const MAX: usize = 2048;
    if s.len() <= MAX {
        return s.to_string();
    }
    let mut end = MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &s[..end], s.len())
}
