//! What a run produces, in order: the raw wire events and what each of them produced (output
//! text, spans of emulated calls, parts). The same events come from a live run and from a replay.

use serde::{Deserialize, Serialize};

use crate::part::{Part, PartId, PartSink};
use crate::protocol::Span;

/// One thing that happened during a run, in order. Serialised with an `event` tag; a part keeps
/// its own `type` tag beside it: `{"event":"part","type":"text-delta",…}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum RunEvent {
    /// A wire event as received, before what it produced.
    Raw(RawEvent),
    /// A piece of the model's output as it arrived: answer text, or (with `toolCallId`) a piece
    /// of a native call's argument text.
    Output(OutputText),
    /// Emulated mode: a span of the output text (byte offsets into the concatenated answer
    /// `output` events, those without `toolCallId`) that became a tool call or was malformed.
    Span(Span),
    /// A part the event produced, in the part vocabulary.
    Part(Part),
    /// A native request read with protocol detection (`--protocol auto`): the protocol the
    /// answer text is read with, and why. Once per answer, when the choice is made.
    Detected {
        /// The protocol's name.
        protocol: String,
        /// Which marker chose it, where, and how a tie was broken.
        reason: String,
    },
}

/// A wire event: an SSE `data` payload, an NDJSON line, or a whole non-streamed body (also the
/// body of an HTTP error, which then carries its status).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawEvent {
    /// Milliseconds since the request was sent.
    pub at_ms: u64,
    /// The event's text exactly as it came: the SSE `data` payload, one NDJSON line, or the whole
    /// body. Replay feeds it to the same decoder again.
    pub data: String,
    /// The HTTP status, on the body of a failed response only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The failed response's `retry-after`, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<f64>,
}

/// A piece of model output as the wire delivered it, before any parsing: what the Raw pane shows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputText {
    /// The piece of text; in replay, the same pieces in the same order.
    pub text: String,
    /// For argument text of a native tool call, the call's id; absent for answer text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<PartId>,
}

impl RunEvent {
    /// The part, when the event is one.
    pub fn as_part(&self) -> Option<&Part> {
        match self {
            RunEvent::Part(p) => Some(p),
            _ => None,
        }
    }
}

impl PartSink for Vec<RunEvent> {
    fn push_part(&mut self, part: Part) {
        self.push(RunEvent::Part(part));
    }
}
