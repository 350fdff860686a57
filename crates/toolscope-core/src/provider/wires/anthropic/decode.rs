//! Reading Anthropic Messages answers: stream events or a whole body, into provider-neutral deltas.

use serde_json::{Value, json};

use crate::lint;
use crate::part::{FinishReason, Source, SourceType, Usage, Warning};
use crate::provider::assemble::Delta;
use crate::provider::errors::{ErrorBody, stream_error};

use super::{Anthropic, METADATA_KEY};
use crate::provider::wires::shared::{self, invalid};
use crate::provider::wires::{DecodeAnswers, WireDecoder};

pub(crate) fn finish_reason(s: &str) -> FinishReason {
    match s {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "tool_use" => FinishReason::ToolCalls,
        "refusal" => FinishReason::ContentFilter,
        // A server-tool loop paused; the turn goes on when the answer is sent back.
        "pause_turn" => FinishReason::Stop,
        _ => FinishReason::Other,
    }
}

/// Usage as Anthropic reports it: `input_tokens` leaves out the tokens read from and written to
/// the prompt cache, which are added in. A later `message_delta` may carry only the output.
fn usage(u: &Value) -> Usage {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    let cache_read = n("cache_read_input_tokens");
    let input = n("input_tokens")
        .map(|i| i + cache_read.unwrap_or(0) + n("cache_creation_input_tokens").unwrap_or(0));
    Usage {
        input_tokens: input,
        cached_input_tokens: cache_read.filter(|_| input.is_some()),
        output_tokens: n("output_tokens"),
        reasoning_tokens: None,
        total_tokens: None,
    }
}

/// What kind of content block is open at an index.
#[derive(Clone, Debug, PartialEq)]
enum Block {
    Text,
    /// A thinking block and the signature gathered for it so far.
    Thinking(String),
    /// A tool call, the client's or a server tool's.
    Call,
    /// A block with nothing more to come (a redacted thinking, a tool result, an unknown one).
    Other,
}

/// The blocks whose type ends in `_tool_result` are server-tool results (web search, web fetch,
/// code execution and its bash and text-editor kinds, tool search); MCP results have their own.
fn is_result_block(kind: &str) -> bool {
    kind.ends_with("_tool_result") || kind == "mcp_tool_result"
}

/// One citation of a text block as a source.
fn citation(c: &Value) -> Option<Source> {
    let s = |k: &str| c.get(k).and_then(Value::as_str).map(str::to_string);
    let cited_text = s("cited_text");
    Some(match s("url") {
        Some(url) => Source {
            source_type: SourceType::Url,
            url: Some(url),
            title: s("title"),
            cited_text,
        },
        None => Source {
            source_type: SourceType::Document,
            url: None,
            title: s("document_title").or_else(|| s("title")),
            cited_text,
        },
    })
}

/// One content block (of a whole response, or opened by `content_block_start`): the deltas it
/// makes, and what is open at its index.
fn block_start(index: u64, block: &Value, out: &mut Vec<Delta>) -> Block {
    let text = |k: &str| {
        block
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" => {
            out.push(Delta::Text(text("text")));
            for c in block
                .get("citations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.extend(citation(c).map(Delta::Source));
            }
            Block::Text
        }
        "thinking" => {
            out.push(Delta::Reasoning(text("thinking")));
            Block::Thinking(text("signature"))
        }
        "redacted_thinking" => {
            out.push(Delta::RedactedReasoning(Some(
                json!({METADATA_KEY: {"redactedData": text("data")}}),
            )));
            Block::Other
        }
        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
            out.push(Delta::ToolStart {
                index,
                id: block.get("id").and_then(Value::as_str).map(str::to_string),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                provider_executed: kind != "tool_use",
            });
            // In a stream the input starts as `{}` and comes in deltas; in a whole response it
            // is all here.
            match block.get("input") {
                Some(Value::Object(o)) if !o.is_empty() => out.push(Delta::ToolArgs {
                    index,
                    fragment: Value::Object(o.clone()).to_string(),
                }),
                _ => {}
            }
            Block::Call
        }
        k if is_result_block(k) => {
            let output = block.get("content").cloned().unwrap_or(Value::Null);
            // An error result is flagged, or its content is an `…_error` object.
            let is_error = block.get("is_error").and_then(Value::as_bool) == Some(true)
                || output
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.ends_with("_error"));
            out.push(Delta::ToolResult {
                id: block
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                name: None,
                output,
                is_error,
            });
            Block::Other
        }
        other => {
            out.push(unknown(&format!("a content block of type \"{other}\"")));
            Block::Other
        }
    }
}

/// The end of the block at `index`: a thinking block ends with its signature, a call is
/// complete.
fn block_end(index: u64, block: Block, out: &mut Vec<Delta>) {
    match block {
        Block::Thinking(signature) => {
            let metadata =
                (!signature.is_empty()).then(|| json!({METADATA_KEY: {"signature": signature}}));
            out.push(Delta::ReasoningEnd(metadata));
        }
        Block::Call => out.push(Delta::ToolEnd { index }),
        Block::Text | Block::Other => {}
    }
}

fn unknown(what: &str) -> Delta {
    Delta::Warning(Warning::new(
        lint::UNKNOWN_BLOCK,
        format!("{what} that toolscope does not know; it is not shown"),
    ))
}

/// The refusal of a message: the explanation in `stop_details` when the model refused, and a
/// refusal part saying none was given when `stop_reason` is `refusal` without one (the shape
/// Claude 4 models sent first), so a refused answer is never an empty one.
fn refusal(stop_reason: Option<&str>, details: Option<&Value>, out: &mut Vec<Delta>) {
    let details = details.filter(|d| d.get("type").and_then(Value::as_str) == Some("refusal"));
    if details.is_none() && stop_reason != Some("refusal") {
        return;
    }
    let field = |k: &str| details.and_then(|d| d.get(k)).and_then(Value::as_str);
    let text = match (field("explanation"), field("category")) {
        (Some(e), _) => e.to_string(),
        (None, Some(c)) => {
            format!("The model refused (category `{c}`); the provider gave no explanation.")
        }
        (None, None) => {
            "The model refused (stop_reason `refusal`); the provider gave no explanation.".into()
        }
    };
    out.push(Delta::Refusal(text));
}

/// Where a stream is in Anthropic's documented order: `message_start`, then each content block
/// opened, filled and closed in index order, then `message_delta`, then `message_stop`.
#[derive(Debug, Default)]
struct Order {
    started: bool,
    next_index: u64,
    delta_seen: bool,
    reported: bool,
}

#[derive(Debug, Default)]
pub(crate) struct Decoder {
    stream: bool,
    blocks: Vec<(u64, Block)>,
    order: Order,
}

impl Decoder {
    pub(crate) fn new(stream: bool) -> Self {
        Decoder {
            stream,
            ..Decoder::default()
        }
    }

    /// Checks an event against the documented order before it is read.
    fn check_order(&mut self, kind: &str, index: u64, out: &mut Vec<Delta>) {
        let open = self.blocks.iter().any(|(i, _)| *i == index);
        let problem = match kind {
            "message_start" if self.order.started => Some("a second message_start".to_string()),
            "message_start" | "ping" => None,
            _ if !self.order.started => Some(format!("{kind} before message_start")),
            "content_block_start" | "content_block_delta" | "content_block_stop"
                if self.order.delta_seen =>
            {
                Some(format!("{kind} after message_delta"))
            }
            "content_block_start" if index != self.order.next_index || open => Some(format!(
                "content_block_start for index {index} where index {} was next",
                self.order.next_index
            )),
            "content_block_delta" | "content_block_stop" if !open => {
                Some(format!("{kind} for index {index}, which is not open"))
            }
            "message_delta" if !self.blocks.is_empty() => Some(format!(
                "message_delta while content block {} is still open",
                self.blocks[0].0
            )),
            "message_stop" if !self.order.delta_seen => {
                Some("message_stop without a message_delta before it".to_string())
            }
            _ => None,
        };
        match kind {
            "message_start" => self.order.started = true,
            "content_block_start" => self.order.next_index = self.order.next_index.max(index + 1),
            "message_delta" => self.order.delta_seen = true,
            _ => {}
        }
        if let Some(p) = problem {
            shared::order_finding(&mut self.order.reported, p, out);
        }
    }

    fn event(&mut self, v: &Value, out: &mut Vec<Delta>) {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            return out.push(invalid(format!(
                "a stream event has no type: {}",
                shared::quote(&v.to_string())
            )));
        };
        if kind == "message" {
            // A whole response where events were expected (a proxy that does not stream).
            return body(v, out);
        }
        self.check_order(kind, index, out);
        match kind {
            "message_start" => {
                if let Some(u) = v.pointer("/message/usage") {
                    out.push(Delta::Usage(usage(u)));
                }
            }
            "content_block_start" => {
                if let Some(b) = v.get("content_block") {
                    let block = block_start(index, b, out);
                    self.blocks.retain(|(i, _)| *i != index);
                    self.blocks.push((index, block));
                }
            }
            "content_block_delta" => {
                let Some(d) = v.get("delta") else { return };
                let s = |k: &str| d.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                match d.get("type").and_then(Value::as_str).unwrap_or("") {
                    "text_delta" => out.push(Delta::Text(s("text"))),
                    "thinking_delta" => out.push(Delta::Reasoning(s("thinking"))),
                    "signature_delta" => {
                        if let Some((_, Block::Thinking(sig))) =
                            self.blocks.iter_mut().find(|(i, _)| *i == index)
                        {
                            sig.push_str(&s("signature"));
                        }
                    }
                    "input_json_delta" => out.push(Delta::ToolArgs {
                        index,
                        fragment: s("partial_json"),
                    }),
                    "citations_delta" => {
                        out.extend(d.get("citation").and_then(citation).map(Delta::Source))
                    }
                    other => out.push(unknown(&format!("a delta of type \"{other}\""))),
                }
            }
            "content_block_stop" => {
                if let Some(i) = self.blocks.iter().position(|(i, _)| *i == index) {
                    let (_, block) = self.blocks.remove(i);
                    block_end(index, block, out);
                } else {
                    out.push(Delta::ToolEnd { index });
                }
            }
            "message_delta" => {
                refusal(
                    v.pointer("/delta/stop_reason").and_then(Value::as_str),
                    v.pointer("/delta/stop_details"),
                    out,
                );
                if let Some(r) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    out.push(Delta::Finish(finish_reason(r)));
                }
                if let Some(u) = v.get("usage") {
                    out.push(Delta::Usage(usage(u)));
                }
            }
            "message_stop" => out.push(Delta::Done),
            "ping" => {}
            other => out.push(unknown(&format!("an event of type \"{other}\""))),
        }
    }
}

impl DecodeAnswers for Anthropic {
    fn decoder(&self, stream: bool) -> Box<dyn WireDecoder> {
        Box::new(Decoder::new(stream))
    }
}

impl WireDecoder for Decoder {
    fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        let v = match shared::parse(data, self.stream) {
            Ok(v) => v,
            Err(e) => return out.push(e),
        };
        if v.get("type").and_then(Value::as_str) == Some("error") {
            return out.push(Delta::Error(stream_error(&ErrorBody::from_value(&v))));
        }
        if self.stream {
            self.event(&v, out);
        } else {
            body(&v, out);
        }
    }
}

fn body(v: &Value, out: &mut Vec<Delta>) {
    let Some(blocks) = v.get("content").and_then(Value::as_array) else {
        return out.push(invalid("the response has no content".into()));
    };
    for (i, b) in blocks.iter().enumerate() {
        let block = block_start(i as u64, b, out);
        block_end(i as u64, block, out);
    }
    refusal(
        v.get("stop_reason").and_then(Value::as_str),
        v.get("stop_details"),
        out,
    );
    if let Some(u) = v.get("usage") {
        out.push(Delta::Usage(usage(u)));
    }
    if let Some(r) = v.get("stop_reason").and_then(Value::as_str) {
        out.push(Delta::Finish(finish_reason(r)));
    }
    out.push(Delta::Done);
}
