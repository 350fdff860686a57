//! The stream's timeline of a run: when the first output came (time to first token), when each
//! tool call started and ended, and the output rate over time. Recorded as the events arrive
//! (a replayed session arrives at its recorded pace, so it has the same timeline), read by the
//! run's timeline view (`t` in the Raw and Parts panes) and the compare columns.

use toolscope_core::part::{Part, PartId};

/// What a run's stream did when, in milliseconds since the request was sent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Timeline {
    /// When each output piece (answer text, a call's argument text, reasoning) arrived.
    pub pieces_ms: Vec<u64>,
    /// The tool calls, in the order they started.
    pub calls: Vec<CallSpan>,
}

/// One tool call on the timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallSpan {
    pub id: PartId,
    pub name: String,
    /// When its first part came (`tool-input-start`, or the call itself when it came whole).
    pub start_ms: u64,
    /// When the finished `tool-call` came; `None` while its arguments still stream.
    pub end_ms: Option<u64>,
}

impl Timeline {
    /// An output piece arrived.
    pub fn piece(&mut self, at_ms: u64) {
        self.pieces_ms.push(at_ms);
    }

    /// A part arrived: calls start and end.
    pub fn part(&mut self, part: &Part, at_ms: u64) {
        match part {
            Part::ToolInputStart { id, tool_name } => self.calls.push(CallSpan {
                id: id.clone(),
                name: tool_name.clone(),
                start_ms: at_ms,
                end_ms: None,
            }),
            Part::ToolCall(call) => {
                match self
                    .calls
                    .iter_mut()
                    .find(|c| c.id == call.tool_call_id && c.end_ms.is_none())
                {
                    Some(c) => c.end_ms = Some(at_ms),
                    None => self.calls.push(CallSpan {
                        id: call.tool_call_id.clone(),
                        name: call.tool_name.clone(),
                        start_ms: at_ms,
                        end_ms: Some(at_ms),
                    }),
                }
            }
            _ => {}
        }
    }

    /// The output rate over `0..end_ms` in `buckets` equal slices: each slice's middle (in
    /// seconds) and the pieces per second in it (one piece is one token for most servers).
    pub fn rate(&self, end_ms: u64, buckets: usize) -> Vec<(f64, f64)> {
        let buckets = buckets.max(1);
        let end_ms = end_ms.max(1);
        let width = (end_ms as f64 / buckets as f64).max(1.0);
        let mut counts = vec![0u64; buckets];
        for &t in &self.pieces_ms {
            let i = ((t as f64 / width) as usize).min(buckets - 1);
            counts[i] += 1;
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(i, n)| {
                let mid = (i as f64 + 0.5) * width / 1000.0;
                (mid, n as f64 * 1000.0 / width)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolscope_core::part::ToolCall;

    fn call(id: &str, name: &str) -> Part {
        Part::tool_call(ToolCall {
            tool_call_id: id.into(),
            tool_name: name.into(),
            input: json!({}),
            ..ToolCall::default()
        })
    }

    #[test]
    fn calls_start_and_end_and_the_rate_is_per_second() {
        let mut t = Timeline::default();
        t.part(
            &Part::ToolInputStart {
                id: "call_1".into(),
                tool_name: "get_weather".into(),
            },
            100,
        );
        t.part(&call("call_1", "get_weather"), 300);
        // A call that came whole is a point.
        t.part(&call("call_2", "search"), 450);
        assert_eq!(
            t.calls,
            [
                CallSpan {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    start_ms: 100,
                    end_ms: Some(300)
                },
                CallSpan {
                    id: "call_2".into(),
                    name: "search".into(),
                    start_ms: 450,
                    end_ms: Some(450)
                },
            ]
        );
        // Ten pieces in the first half second, none in the second: 20/s, then 0/s.
        for i in 0..10 {
            t.piece(i * 50);
        }
        let rate = t.rate(1000, 2);
        assert_eq!(rate, [(0.25, 20.0), (0.75, 0.0)]);
        // A piece past the end counts in the last slice.
        t.piece(5000);
        assert_eq!(t.rate(1000, 2)[1], (0.75, 2.0));
    }
}
