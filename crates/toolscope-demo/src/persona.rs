//! Server personas: the demo model served with one known fault of real inference servers
//! switched on, so that `toolscope verify` (and anyone) can see each fault offline.
//!
//! A persona changes the answer the model decided, after the decision and before the wire: the
//! model stays right, the "server" around it goes wrong in exactly one way. Each persona is one
//! entry of [`Persona::ALL`]; `toolscope serve-demo --persona NAME` lists them.

use serde_json::Value;

use crate::reply::{CallText, Fault, Finish, Piece, Reply, call_pieces, split_pieces};
use crate::request::DemoRequest;

/// One known server fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Persona {
    /// The call markup the server parsed is also left in `content` (a parser that does not
    /// strip what it read).
    Leak,
    /// Only the first of several parallel calls is sent.
    DropParallel,
    /// Streamed, a call's arguments arrive as `{}`, then whole in one piece.
    EmptyArgs,
    /// Numbers in arguments are sent as strings (`"days": "3"`).
    QuotedNumbers,
    /// `tool_choice: "required"` is ignored: the model answers as it likes (here in text).
    IgnoreRequired,
    /// The whole (non-streamed) answer's arguments differ from the streamed ones.
    StreamDiffers,
    /// The call is left inside the reasoning (`reasoning_content`) and never sent as a call.
    CallInReasoning,
    /// The third request to the server answers HTTP 500.
    Error500Third,
}

impl Persona {
    /// Every persona, in the order `--help` lists them.
    pub const ALL: &'static [Persona] = &[
        Persona::Leak,
        Persona::DropParallel,
        Persona::EmptyArgs,
        Persona::QuotedNumbers,
        Persona::IgnoreRequired,
        Persona::StreamDiffers,
        Persona::CallInReasoning,
        Persona::Error500Third,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Persona::Leak => "leak",
            Persona::DropParallel => "drop-parallel",
            Persona::EmptyArgs => "empty-args",
            Persona::QuotedNumbers => "quoted-numbers",
            Persona::IgnoreRequired => "ignore-required",
            Persona::StreamDiffers => "stream-differs",
            Persona::CallInReasoning => "call-in-reasoning",
            Persona::Error500Third => "error-500-third",
        }
    }

    /// What the fault is, in a line.
    pub fn about(self) -> &'static str {
        match self {
            Persona::Leak => "call markup leaked into content beside the parsed calls",
            Persona::DropParallel => "the second and later parallel calls dropped",
            Persona::EmptyArgs => "arguments streamed as {} then sent whole",
            Persona::QuotedNumbers => "numbers in arguments quoted as strings",
            Persona::IgnoreRequired => "tool_choice required ignored (answers in text)",
            Persona::StreamDiffers => "streamed and whole answers differ",
            Persona::CallInReasoning => "the call left inside the reasoning",
            Persona::Error500Third => "HTTP 500 on the third request",
        }
    }

    /// The persona of a name.
    pub fn from_name(name: &str) -> Option<Persona> {
        Self::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// The answer as the faulty server sends it. `request_number` counts the requests the
    /// server received, this one included (from 1).
    pub fn apply(self, reply: Reply, request: &DemoRequest, request_number: u64) -> Reply {
        if reply.fault.is_some() {
            return reply;
        }
        let calls = reply.tool_calls();
        match self {
            Persona::Error500Third if request_number == 3 => {
                Reply::failure(Fault::ServerError, reply.prompt_tokens)
            }
            Persona::Error500Third => reply,
            Persona::IgnoreRequired
                if request.tool_choice == Some(toolscope_core::tool::ToolChoice::Required) =>
            {
                let mut free = request.clone();
                free.tool_choice = Some(toolscope_core::tool::ToolChoice::None);
                crate::model::respond(&free)
            }
            Persona::IgnoreRequired => reply,
            _ if calls.is_empty() => reply,
            Persona::Leak => {
                let markup: String = calls.iter().map(hermes_markup).collect();
                let mut pieces: Vec<Piece> =
                    split_pieces(&markup).into_iter().map(Piece::Text).collect();
                pieces.extend(reply.pieces);
                Reply { pieces, ..reply }
            }
            Persona::DropParallel => {
                let keep = |p: &Piece| match p {
                    Piece::CallStart { index, .. } | Piece::CallArgs { index, .. } => *index == 0,
                    _ => true,
                };
                let pieces = reply.pieces.iter().filter(|p| keep(p)).cloned().collect();
                Reply { pieces, ..reply }
            }
            Persona::EmptyArgs if request.stream => {
                let pieces = call_pieces(calls, |arguments| vec!["{}".into(), arguments]);
                Reply { pieces, ..reply }
            }
            Persona::EmptyArgs => reply,
            Persona::QuotedNumbers => rewrite_calls(reply, calls, quote_numbers),
            Persona::StreamDiffers if !request.stream => {
                let tools = request.tools.clone();
                let calls = calls
                    .into_iter()
                    .map(|mut c| {
                        if let (Ok(mut v), Some(tool)) = (
                            serde_json::from_str::<Value>(&c.arguments),
                            tools.get(&c.name),
                        ) {
                            change_free_string(&mut v, tool.schema());
                            c.arguments = v.to_string();
                        }
                        c
                    })
                    .collect();
                rewrite_calls(reply, calls, |_| {})
            }
            Persona::StreamDiffers => reply,
            Persona::CallInReasoning => {
                let mut thought = String::from("The user wants a tool call, so I call it now.\n");
                thought.extend(calls.iter().map(hermes_markup));
                let pieces = split_pieces(&thought)
                    .into_iter()
                    .map(Piece::Reasoning)
                    .collect();
                Reply {
                    pieces,
                    finish: Finish::Stop,
                    ..reply
                }
            }
        }
    }
}

/// A call written as hermes markup.
fn hermes_markup(call: &CallText) -> String {
    let arguments: Value =
        serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments.clone()));
    let body = serde_json::json!({"name": call.name, "arguments": arguments});
    format!("<tool_call>\n{body}\n</tool_call>\n")
}

/// The reply with each call's arguments rewritten by `change`.
fn rewrite_calls(reply: Reply, calls: Vec<CallText>, change: impl Fn(&mut Value)) -> Reply {
    let calls = calls
        .into_iter()
        .map(|mut c| {
            if let Ok(mut v) = serde_json::from_str::<Value>(&c.arguments) {
                change(&mut v);
                c.arguments = v.to_string();
            }
            c
        })
        .collect();
    let rewritten = Reply::calls(calls, reply.prompt_tokens);
    // Text before the calls stays.
    let mut pieces: Vec<Piece> = reply
        .pieces
        .into_iter()
        .filter(|p| matches!(p, Piece::Text(_)))
        .collect();
    pieces.extend(rewritten.pieces);
    Reply { pieces, ..reply }
}

fn quote_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => *v = Value::String(n.to_string()),
        Value::Array(items) => items.iter_mut().for_each(quote_numbers),
        Value::Object(map) => map.values_mut().for_each(quote_numbers),
        _ => {}
    }
}

/// Changes the first top-level string argument whose schema leaves it free (no enum, const,
/// format or pattern), so that the arguments differ and stay valid.
fn change_free_string(v: &mut Value, schema: &Value) {
    let Value::Object(map) = v else { return };
    let free = |key: &str| {
        let p = &schema["properties"][key];
        ["enum", "const", "format", "pattern", "maxLength"]
            .iter()
            .all(|k| p.get(k).is_none())
    };
    if let Some((_, Value::String(s))) = map
        .iter_mut()
        .find(|(k, v)| v.is_string() && free(k.as_str()))
    {
        s.push_str(" (whole)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather_request(stream: bool, choice: &str) -> DemoRequest {
        DemoRequest::from_json(&json!({
            "model": "demo",
            "stream": stream,
            "tool_choice": choice,
            "messages": [{"role": "user", "content": "Weather for 3 days in Paris and Tokyo?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city", "days"]}}}]
        }))
        .unwrap()
    }

    #[test]
    fn each_persona_changes_the_answer_its_own_way() {
        let r = weather_request(true, "auto");
        let plain = crate::model::respond(&r);
        assert_eq!(plain.tool_calls().len(), 2);
        let apply = |p: Persona, r: &DemoRequest, n| p.apply(crate::model::respond(r), r, n);
        let leak = apply(Persona::Leak, &r, 1);
        assert!(leak.content().unwrap().contains("<tool_call>"));
        assert_eq!(leak.tool_calls(), plain.tool_calls());
        assert_eq!(apply(Persona::DropParallel, &r, 1).tool_calls().len(), 1);
        let empty = apply(Persona::EmptyArgs, &r, 1);
        assert!(empty.tool_calls()[0].arguments.starts_with("{}{"));
        let quoted = apply(Persona::QuotedNumbers, &r, 1);
        assert!(quoted.tool_calls()[0].arguments.contains("\"days\":\"3\""));
        let whole = weather_request(false, "auto");
        assert_ne!(
            apply(Persona::StreamDiffers, &whole, 1).tool_calls(),
            crate::model::respond(&whole).tool_calls()
        );
        assert_eq!(apply(Persona::StreamDiffers, &r, 1), plain);
        let hidden = apply(Persona::CallInReasoning, &r, 1);
        assert!(hidden.tool_calls().is_empty());
        assert!(hidden.reasoning().unwrap().contains("<tool_call>"));
        let required = weather_request(true, "required");
        assert!(
            apply(Persona::IgnoreRequired, &required, 1)
                .tool_calls()
                .is_empty()
        );
        assert_eq!(apply(Persona::IgnoreRequired, &r, 1), plain);
        assert_eq!(
            apply(Persona::Error500Third, &r, 3).fault,
            Some(Fault::ServerError)
        );
        assert_eq!(apply(Persona::Error500Third, &r, 2), plain);
        for p in Persona::ALL {
            assert_eq!(Persona::from_name(p.name()), Some(*p));
        }
    }
}
