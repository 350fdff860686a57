//! Reading Responses answers: stream events or a whole body, into provider-neutral deltas.

use serde_json::{Value, json};

use crate::lint;
use crate::part::{FinishReason, Source, SourceType, Usage, Warning};
use crate::provider::assemble::Delta;
use crate::provider::errors::{ErrorBody, stream_error};

use super::{METADATA_KEY, OpenAiResponses};
use crate::provider::wires::shared::{self, invalid};
use crate::provider::wires::{DecodeAnswers, WireDecoder};

/// Usage as Responses reports it: input includes cached tokens, output includes reasoning.
fn usage(u: &Value) -> Usage {
    let n = |p: &str| u.pointer(p).and_then(Value::as_u64);
    Usage {
        input_tokens: n("/input_tokens"),
        cached_input_tokens: n("/input_tokens_details/cached_tokens"),
        output_tokens: n("/output_tokens"),
        reasoning_tokens: n("/output_tokens_details/reasoning_tokens"),
        total_tokens: n("/total_tokens"),
    }
}

/// The end of a response object (`response.completed` / `incomplete` / `failed`, or a whole
/// body): its error, or its finish reason and usage, then the end.
fn response_end(response: &Value, out: &mut Vec<Delta>) {
    let status = response.get("status").and_then(Value::as_str).unwrap_or("");
    if status == "failed" || response.get("error").is_some_and(|e| e.is_object()) {
        let error = json!({"error": response.get("error").cloned().unwrap_or(Value::Null)});
        let mut info = ErrorBody::from_value(&error);
        if !info.is_error() {
            info.message = Some("the response failed".into());
        }
        return out.push(Delta::Error(stream_error(&info)));
    }
    if let Some(u) = response.get("usage").filter(|u| u.is_object()) {
        out.push(Delta::Usage(usage(u)));
    }
    let reason = match status {
        "completed" => FinishReason::Stop,
        "incomplete" => match response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
        {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            _ => FinishReason::Other,
        },
        _ => FinishReason::Other,
    };
    out.push(Delta::Finish(reason));
    out.push(Delta::Done);
}

/// The item types of server tools, with the tool name each is shown under.
const SERVER_TOOLS: &[(&str, &str)] = &[
    ("web_search_call", "web_search"),
    ("file_search_call", "file_search"),
    ("code_interpreter_call", "code_interpreter"),
    ("image_generation_call", "image_generation"),
    ("mcp_call", "mcp"),
    ("mcp_list_tools", "mcp_list_tools"),
];

/// A finished server-tool item: the call the provider made, and its result.
fn server_tool(kind: &str, item: &Value, out: &mut Vec<Delta>) {
    let Some((_, tool)) = SERVER_TOOLS.iter().find(|(k, _)| *k == kind) else {
        return;
    };
    let get = |k: &str| item.get(k).cloned().unwrap_or(Value::Null);
    let id = item.get("id").and_then(Value::as_str).map(str::to_string);
    let mut name = tool.to_string();
    let mut is_error = false;
    let (input, output) = match kind {
        "web_search_call" => (
            item.get("action").cloned().unwrap_or(json!({})),
            json!({"status": get("status")}),
        ),
        "file_search_call" => (
            json!({"queries": get("queries")}),
            json!({"status": get("status"), "results": get("results")}),
        ),
        "code_interpreter_call" => (
            json!({"code": get("code"), "container_id": get("container_id")}),
            json!({"status": get("status"), "outputs": get("outputs")}),
        ),
        "image_generation_call" => (
            json!({}),
            json!({"status": get("status"), "result": get("result")}),
        ),
        "mcp_call" => {
            if let Some(n) = item.get("name").and_then(Value::as_str) {
                name = n.to_string();
            }
            let args = match item.get("arguments") {
                Some(Value::String(s)) => {
                    serde_json::from_str(s).unwrap_or(json!({"arguments": s}))
                }
                Some(v @ Value::Object(_)) => v.clone(),
                _ => json!({}),
            };
            let error = item.get("error").filter(|e| !e.is_null());
            is_error = error.is_some();
            let output = error.cloned().unwrap_or_else(|| get("output"));
            (args, output)
        }
        _ => (
            json!({"server_label": get("server_label")}),
            json!({"tools": get("tools")}),
        ),
    };
    out.push(Delta::ToolWhole {
        id: id.clone(),
        name: name.clone(),
        args: input,
        provider_executed: true,
        metadata: None,
    });
    out.push(Delta::ToolResult {
        id,
        name: Some(name),
        output,
        is_error,
    });
}

/// A `url_citation` annotation (or a file citation) as a source.
fn annotation(a: &Value) -> Option<Source> {
    let s = |k: &str| a.get(k).and_then(Value::as_str).map(str::to_string);
    match a.get("type").and_then(Value::as_str)? {
        "url_citation" => Some(Source {
            source_type: SourceType::Url,
            url: s("url"),
            title: s("title"),
            cited_text: None,
        }),
        "file_citation" | "container_file_citation" | "file_path" => Some(Source {
            source_type: SourceType::Document,
            url: None,
            title: s("filename").or_else(|| s("file_id")),
            cited_text: None,
        }),
        _ => None,
    }
}

fn unknown(what: &str, kind: &str) -> Delta {
    Delta::Warning(Warning::new(
        lint::UNKNOWN_BLOCK,
        format!("{what} of type \"{kind}\" that toolscope does not know; it is not shown"),
    ))
}

/// A reasoning item, finished: its end, carrying the item to send back.
fn reasoning_end(item: &Value) -> Delta {
    Delta::ReasoningEnd(Some(json!({METADATA_KEY: {"item": item}})))
}

/// The summary text of a reasoning item (its parts joined by blank lines), or its reasoning
/// text where a server sends that instead.
fn reasoning_text(item: &Value) -> String {
    let texts = |key: &str| -> Vec<&str> {
        item.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect()
    };
    let summary = texts("summary");
    if summary.is_empty() {
        texts("content").join("\n\n")
    } else {
        summary.join("\n\n")
    }
}

/// A whole (non-streamed) response, or a `response` object met in a stream.
fn body(v: &Value, out: &mut Vec<Delta>) {
    if v.get("error").is_some_and(|e| e.is_object()) && v.get("output").is_none() {
        return out.push(Delta::Error(stream_error(&ErrorBody::from_value(v))));
    }
    let Some(items) = v.get("output").and_then(Value::as_array) else {
        if v.get("status").and_then(Value::as_str) == Some("failed") {
            return response_end(v, out);
        }
        return out.push(invalid("the response has no output".into()));
    };
    for (i, item) in items.iter().enumerate() {
        let index = i as u64;
        let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "message" => {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let ptype = part.get("type").and_then(Value::as_str).unwrap_or("");
                    match ptype {
                        "output_text" => {
                            let text = part.get("text").and_then(Value::as_str).unwrap_or("");
                            out.push(Delta::Text(text.to_string()));
                            for a in part
                                .get("annotations")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if let Some(s) = annotation(a) {
                                    out.push(Delta::Source(s));
                                }
                            }
                        }
                        "refusal" => {
                            let text = part.get("refusal").and_then(Value::as_str).unwrap_or("");
                            out.push(Delta::Refusal(text.to_string()));
                        }
                        other => out.push(unknown("a message content part", other)),
                    }
                }
            }
            "function_call" => {
                let s = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                out.push(Delta::ToolStart {
                    index,
                    id: s("call_id").or_else(|| s("id")),
                    name: s("name"),
                    provider_executed: false,
                });
                out.push(Delta::ToolArgs {
                    index,
                    fragment: arguments_text(item.get("arguments")),
                });
                out.push(Delta::ToolEnd { index });
            }
            "reasoning" => {
                out.push(Delta::Reasoning(reasoning_text(item)));
                out.push(reasoning_end(item));
            }
            k if SERVER_TOOLS.iter().any(|(s, _)| *s == k) => server_tool(k, item, out),
            other => out.push(unknown("an output item", other)),
        }
    }
    response_end(v, out);
}

fn arguments_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => String::new(),
        Some(other) => other.to_string(),
    }
}

/// What the decoder knows of one output item of a stream.
#[derive(Debug)]
struct Item {
    kind: String,
    id: String,
    done: bool,
    /// Argument text received for a function call (some servers send only the `.done`).
    args: usize,
    /// Summary parts seen of a reasoning item.
    summary_parts: usize,
    /// Content parts announced by `response.content_part.added`.
    parts: Vec<u64>,
}

/// Decodes the wire events of one answer.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    stream: bool,
    items: Vec<Item>,
    /// The first event was seen (it must be `response.created`).
    started: bool,
    last_sequence: Option<u64>,
    /// An order problem was reported (later ones follow from it and are not).
    disordered: bool,
}

/// Events that concern one output item by its `output_index`, with no effect of their own here.
const ITEM_EVENT_PREFIXES: &[&str] = &[
    "response.web_search_call.",
    "response.file_search_call.",
    "response.code_interpreter_call.",
    "response.code_interpreter_call_code.",
    "response.image_generation_call.",
    "response.mcp_call.",
    "response.mcp_call_arguments.",
    "response.mcp_list_tools.",
    "response.output_text.done",
    "response.refusal.done",
    "response.content_part.done",
    "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.done",
    "response.reasoning_text.done",
];

impl Decoder {
    pub(crate) fn new(stream: bool) -> Self {
        Decoder {
            stream,
            ..Decoder::default()
        }
    }

    /// The open item an event names, if it is open; an order finding otherwise. An event names
    /// its item by `output_index`, by `item_id` (part and delta events) or by the id of the
    /// `item` it carries (`response.output_item.done`): some servers (llama.cpp's) send no
    /// `output_index` at all, which is allowed as long as the id names an open item.
    fn open_item(&mut self, kind: &str, v: &Value, out: &mut Vec<Delta>) -> Option<usize> {
        let index = v.get("output_index").and_then(Value::as_u64);
        let id = v
            .get("item_id")
            .or_else(|| v.pointer("/item/id"))
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let found = index
            .map(|i| i as usize)
            .filter(|i| self.items.get(*i).is_some_and(|it| !it.done))
            .or_else(|| {
                let id = id?;
                self.items.iter().position(|it| it.id == id && !it.done)
            });
        if found.is_none() {
            let message = match (index, id) {
                (Some(i), _) => format!(
                    "{kind} arrived for output item {i}, which is not open (added and not yet done)"
                ),
                (None, Some(id)) => format!(
                    "{kind} arrived for item {id}, which is not open (added and not yet done)"
                ),
                (None, None) => format!(
                    "{kind} names no output_index and no item id, so it belongs to no open item"
                ),
            };
            shared::order_finding(&mut self.disordered, message, out);
        }
        found
    }

    fn event(&mut self, v: &Value, out: &mut Vec<Delta>) {
        let Some(kind) = v.get("type").and_then(Value::as_str) else {
            return out.push(invalid(format!(
                "a stream event has no type: {}",
                shared::quote(&v.to_string())
            )));
        };
        if kind == "error" {
            let info = ErrorBody::from_value(&json!({"error": v}));
            return out.push(Delta::Error(stream_error(&info)));
        }
        if !self.started {
            self.started = true;
            if kind != "response.created" {
                shared::order_finding(
                    &mut self.disordered,
                    format!("the stream began with {kind}, not response.created"),
                    out,
                );
            }
        }
        if let Some(seq) = v.get("sequence_number").and_then(Value::as_u64) {
            if let Some(last) = self.last_sequence
                && seq != last + 1
            {
                shared::order_finding(
                    &mut self.disordered,
                    format!(
                        "sequence_number {seq} follows {last} (an event is missing or out of order)"
                    ),
                    out,
                );
            }
            self.last_sequence = Some(seq);
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        match kind {
            "response.created" | "response.in_progress" | "response.queued" => {}
            "response.output_item.added" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                let index = v
                    .get("output_index")
                    .and_then(Value::as_u64)
                    .unwrap_or(self.items.len() as u64);
                if index != self.items.len() as u64 {
                    shared::order_finding(
                        &mut self.disordered,
                        format!(
                            "output item {index} was added after {} item(s)",
                            self.items.len()
                        ),
                        out,
                    );
                }
                let item_kind = item.get("type").and_then(Value::as_str).unwrap_or("");
                self.items.push(Item {
                    kind: item_kind.to_string(),
                    id: item
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    done: false,
                    args: 0,
                    summary_parts: 0,
                    parts: Vec::new(),
                });
                match item_kind {
                    "function_call" => {
                        let g = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                        out.push(Delta::ToolStart {
                            index,
                            id: g("call_id").or_else(|| g("id")),
                            name: g("name"),
                            provider_executed: false,
                        });
                        let args = arguments_text(item.get("arguments"));
                        if !args.is_empty() {
                            self.items.last_mut().expect("pushed").args += args.len();
                            out.push(Delta::ToolArgs {
                                index,
                                fragment: args,
                            });
                        }
                    }
                    "message" | "reasoning" => {}
                    k if SERVER_TOOLS.iter().any(|(s, _)| *s == k) => {}
                    other => out.push(unknown("an output item", other)),
                }
            }
            "response.content_part.added" => {
                if let Some(i) = self.open_item(kind, v, out) {
                    let content = v.get("content_index").and_then(Value::as_u64).unwrap_or(0);
                    self.items[i].parts.push(content);
                    match v.pointer("/part/type").and_then(Value::as_str) {
                        Some("output_text" | "refusal" | "reasoning_text") | None => {}
                        Some(other) => out.push(unknown("a message content part", other)),
                    }
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                if let Some(i) = self.open_item(kind, v, out) {
                    let content = v.get("content_index").and_then(Value::as_u64).unwrap_or(0);
                    if !self.items[i].parts.contains(&content) {
                        shared::order_finding(
                            &mut self.disordered,
                            format!(
                                "{kind} arrived for content part {content} of output item {i} before response.content_part.added"
                            ),
                            out,
                        );
                    }
                }
                if kind == "response.output_text.delta" {
                    out.push(Delta::Text(s("delta")));
                } else {
                    out.push(Delta::Refusal(s("delta")));
                }
            }
            "response.output_text.annotation.added" => {
                self.open_item(kind, v, out);
                if let Some(a) = v.get("annotation").and_then(annotation) {
                    out.push(Delta::Source(a));
                }
            }
            "response.function_call_arguments.delta" | "response.function_call_arguments.done" => {
                let Some(i) = self.open_item(kind, v, out) else {
                    return;
                };
                let index = i as u64;
                if kind.ends_with(".delta") {
                    let d = s("delta");
                    self.items[i].args += d.len();
                    out.push(Delta::ToolArgs { index, fragment: d });
                } else if self.items[i].args == 0 {
                    // Only the whole arguments came.
                    let args = s("arguments");
                    self.items[i].args = args.len();
                    out.push(Delta::ToolArgs {
                        index,
                        fragment: args,
                    });
                }
            }
            "response.reasoning_summary_part.added" => {
                if let Some(i) = self.open_item(kind, v, out) {
                    // Summary parts of one item are one reasoning block, a blank line apart.
                    if self.items[i].summary_parts > 0 {
                        out.push(Delta::Reasoning("\n\n".into()));
                    }
                    self.items[i].summary_parts += 1;
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.open_item(kind, v, out);
                out.push(Delta::Reasoning(s("delta")));
            }
            "response.output_item.done" => {
                let item = v.get("item").cloned().unwrap_or(Value::Null);
                let Some(i) = self.open_item(kind, v, out) else {
                    return;
                };
                self.items[i].done = true;
                match self.items[i].kind.as_str() {
                    "function_call" => {
                        if self.items[i].args == 0 {
                            let args = arguments_text(item.get("arguments"));
                            out.push(Delta::ToolArgs {
                                index: i as u64,
                                fragment: args,
                            });
                        }
                        out.push(Delta::ToolEnd { index: i as u64 });
                    }
                    "reasoning" => {
                        if self.items[i].summary_parts == 0 {
                            // A server that sent no summary events: the text is in the item.
                            out.push(Delta::Reasoning(reasoning_text(&item)));
                        }
                        out.push(reasoning_end(&item));
                    }
                    "message" => {}
                    k => {
                        let k = k.to_string();
                        server_tool(&k, &item, out);
                    }
                }
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                // A response that failed or stopped short may leave items open; a completed one
                // closes them all first.
                if let (true, Some(open)) = (
                    kind == "response.completed",
                    self.items.iter().position(|it| !it.done),
                ) {
                    shared::order_finding(
                        &mut self.disordered,
                        format!("{kind} arrived while output item {open} was still open"),
                        out,
                    );
                }
                let response = v.get("response").cloned().unwrap_or(Value::Null);
                response_end(&response, out);
            }
            k if ITEM_EVENT_PREFIXES.iter().any(|p| k.starts_with(p)) => {
                self.open_item(kind, v, out);
            }
            other => out.push(unknown("an event", other)),
        }
    }
}

impl DecodeAnswers for OpenAiResponses {
    fn decoder(&self, stream: bool) -> Box<dyn WireDecoder> {
        Box::new(Decoder::new(stream))
    }
}

impl WireDecoder for Decoder {
    fn push(&mut self, data: &str, out: &mut Vec<Delta>) {
        let data = data.trim();
        if self.stream && data == "[DONE]" {
            // Not part of this wire, but some servers add it after the end.
            return;
        }
        let v = match shared::parse(data, self.stream) {
            Ok(v) => v,
            Err(e) => return out.push(e),
        };
        if !self.stream || v.get("object").and_then(Value::as_str) == Some("response") {
            // A whole body (also one met where a stream was expected).
            return body(&v, out);
        }
        self.event(&v, out);
    }
}
