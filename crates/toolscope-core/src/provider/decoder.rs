//! From wire events to run events: the adapter of the request's wire reads each event into
//! provider-neutral deltas, and the assembler turns those into parts.

use crate::error::{ErrorCategory, ProviderError};

use super::assemble::{Assembler, Delta};
use super::errors::response_error;
use super::event::{RawEvent, RunEvent};
use super::plan::Plan;
use super::request::{Message, Request};
use super::wires::WireDecoder;
use crate::lint::AnswerRules;

/// The highest `N` of the minted call ids (`call-N`) the request's conversation holds, in its
/// assistant calls and tool results; 0 when none. The answer's own minted ids continue after it,
/// so that ids are unique within a conversation; a replay reads the same recorded request and
/// mints the same ids. Ids a provider gave are never changed.
fn minted_calls_used(request: &Request) -> u32 {
    let number = |id: &str| {
        id.strip_prefix("call-")
            .filter(|n| !n.starts_with('0') && n.len() <= 9)
            .and_then(|n| n.parse::<u32>().ok())
            .unwrap_or(0)
    };
    request
        .messages
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .map(|c| number(c.tool_call_id.as_str()))
                .collect::<Vec<_>>(),
            Message::Tool { tool_call_id, .. } => vec![number(tool_call_id)],
            _ => Vec::new(),
        })
        .max()
        .unwrap_or(0)
}

/// Turns the wire events of one answer into run events. Works without HTTP: a replay feeds it
/// recorded wire events and gets the same events back.
pub struct Decoder {
    wire: Box<dyn WireDecoder>,
    assembler: Assembler,
    stream: bool,
    deltas: Vec<Delta>,
}

impl Decoder {
    /// A decoder for the answer to `request` (its provider, streaming or not, its tools, and its
    /// protocol when emulated).
    pub fn new(request: &Request) -> Self {
        Self::with_plan(request, &Plan::of(request))
    }

    pub(crate) fn with_plan(request: &Request, plan: &Plan) -> Self {
        let stream = request.stream;
        let format = request.provider.wire().format();
        let wire = format.decoder(stream);
        let rules = AnswerRules {
            tool_choice: request.tool_choice.clone(),
            single_call: request.sampling.parallel_tool_calls == Some(false) && plan.native_tools,
            finish_names_calls: plan.native_tools && format.finish_names_calls(),
        };
        let mut assembler = Assembler::new(
            request.tools.clone(),
            plan.output_parser(&request.tools),
            rules,
        );
        assembler.continue_call_ids_after(minted_calls_used(request));
        Decoder {
            wire,
            assembler,
            stream,
            deltas: Vec::new(),
        }
    }

    /// Decodes one wire event. Events after the end (`finish` or `error`) are ignored.
    pub fn push(&mut self, wire_event: &str) -> Vec<RunEvent> {
        let mut out = Vec::new();
        if self.assembler.is_done() {
            return out;
        }
        self.wire.push(wire_event, &mut self.deltas);
        for delta in self.deltas.drain(..) {
            self.assembler.push(delta, &mut out);
        }
        out
    }

    /// Decodes one recorded raw event: a wire event, or the body of a failed response (which
    /// ends the answer with its categorised error).
    pub fn push_raw(&mut self, raw: &RawEvent) -> Vec<RunEvent> {
        match raw.status {
            Some(status) => self.fail(response_error(status, raw.retry_after, &raw.data, "")),
            None => self.push(&raw.data),
        }
    }

    /// The wire events are over. A stream that had its finish reason ends normally (Gemini has
    /// no end marker; some OpenAI-compatible servers forget `[DONE]`); otherwise the answer was
    /// cut, and an `error` part says so after everything received.
    pub fn finish(&mut self) -> Vec<RunEvent> {
        let mut out = Vec::new();
        if self.assembler.is_done() {
            return out;
        }
        if self.stream && self.assembler.has_finish_reason() {
            self.assembler.push(Delta::Done, &mut out);
        } else if self.stream {
            self.assembler.fail(
                ProviderError::new(
                    ErrorCategory::ProviderUnavailable,
                    "the stream ended before the answer was complete",
                ),
                &mut out,
            );
        } else {
            self.assembler.fail(
                ProviderError::new(
                    ErrorCategory::ProviderInvalidResponse,
                    "the response body is empty",
                ),
                &mut out,
            );
        }
        out
    }

    /// Ends the answer with an error (a failed connection, a timeout, an HTTP error status).
    pub fn fail(&mut self, error: ProviderError) -> Vec<RunEvent> {
        let mut out = Vec::new();
        self.assembler.fail(error, &mut out);
        out
    }

    /// Whether the answer ended (a `finish` or `error` part was produced).
    pub fn is_done(&self) -> bool {
        self.assembler.is_done()
    }
}
