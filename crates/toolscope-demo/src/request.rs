//! Reading an OpenAI Chat Completions request body into what the demo model decides from.
//!
//! Reading is lenient where OpenAI is lenient (content as a string or as an array of parts,
//! unknown fields ignored) and strict where OpenAI answers 400 (no `messages`, an unknown role,
//! a tool choice that names a missing tool). Every problem becomes a [`RequestError`] with the
//! message, `param` and `code` of an OpenAI error body; nothing here panics on any JSON value.

use serde_json::{Map, Value};

use toolscope_core::tool::{ToolChoice, ToolSet};

/// The default model name of the demo model (any name is accepted and echoed).
pub const DEFAULT_MODEL: &str = "demo-1";

/// A request the demo model cannot answer, as OpenAI would report it (status 400).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RequestError {
    pub message: String,
    /// The request field at fault, e.g. `messages`.
    pub param: Option<String>,
    pub code: Option<&'static str>,
}

impl RequestError {
    pub(crate) fn new(message: impl Into<String>, param: &str, code: Option<&'static str>) -> Self {
        RequestError {
            message: message.into(),
            param: Some(param.to_string()),
            code,
        }
    }

    /// A body that is not a JSON object.
    pub(crate) fn not_an_object() -> Self {
        RequestError {
            message: "The request body must be a JSON object.".into(),
            param: None,
            code: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `system` or `developer`.
    System,
    User,
    Assistant,
    Tool,
}

/// A tool call the assistant made earlier in the conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct PastCall {
    pub id: String,
    pub name: String,
    /// The arguments as sent (a JSON text, possibly not valid JSON).
    pub arguments: String,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Role,
    /// The text of the message (text parts joined; other parts ignored).
    pub content: String,
    /// Assistant messages: the calls it made.
    pub tool_calls: Vec<PastCall>,
    /// Tool messages: the call this result answers.
    pub tool_call_id: Option<String>,
    /// Tool messages may carry the tool's name (the older `function` role did).
    pub name: Option<String>,
}

/// What the response should look like, from `response_format`.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseFormat {
    Text,
    /// `{"type":"json_object"}`: any JSON object.
    JsonObject,
    /// `{"type":"json_schema","json_schema":{"schema":…}}`.
    JsonSchema(Value),
}

/// A chat-completions request as the demo model sees it.
#[derive(Clone, Debug)]
pub struct DemoRequest {
    /// Echoed in the response.
    pub model: String,
    pub messages: Vec<Message>,
    /// Native tools (`tools`); empty when none were sent.
    pub tools: ToolSet,
    /// `tool_choice`, when sent.
    pub tool_choice: Option<ToolChoice>,
    pub response_format: ResponseFormat,
    pub stream: bool,
    /// `stream_options.include_usage`.
    pub include_usage: bool,
    /// `parallel_tool_calls` (true unless sent as false).
    pub parallel_tool_calls: bool,
    /// `max_completion_tokens` or `max_tokens`.
    pub max_tokens: Option<u64>,
    /// A hash of what the answer depends on (not of `stream`), for call ids.
    pub hash: u64,
}

impl DemoRequest {
    pub fn from_json(body: &Value) -> Result<DemoRequest, RequestError> {
        let Value::Object(obj) = body else {
            return Err(RequestError::not_an_object());
        };
        let model = match obj.get("model") {
            Some(Value::String(m)) if !m.is_empty() => m.clone(),
            None | Some(Value::Null) => DEFAULT_MODEL.to_string(),
            Some(_) => {
                return Err(RequestError::new(
                    "'model' must be a non-empty string.",
                    "model",
                    None,
                ));
            }
        };
        let messages = read_messages(obj.get("messages"))?;
        let tools = read_tools(obj.get("tools"))?;
        let tool_choice = read_tool_choice(obj.get("tool_choice"), &tools)?;
        let response_format = read_response_format(obj.get("response_format"))?;
        let flag = |key: &str, default: bool| -> Result<bool, RequestError> {
            match obj.get(key) {
                None | Some(Value::Null) => Ok(default),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(RequestError::new(
                    format!("'{key}' must be a boolean."),
                    key,
                    None,
                )),
            }
        };
        let stream = flag("stream", false)?;
        let parallel_tool_calls = flag("parallel_tool_calls", true)?;
        let include_usage = obj
            .get("stream_options")
            .and_then(|o| o.get("include_usage"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let max_tokens = ["max_completion_tokens", "max_tokens"]
            .iter()
            .find_map(|k| obj.get(*k).and_then(Value::as_u64));
        Ok(DemoRequest {
            model,
            hash: answer_hash(obj),
            messages,
            tools,
            tool_choice,
            response_format,
            stream,
            include_usage,
            parallel_tool_calls,
            max_tokens,
        })
    }

    /// The first system (or developer) message, if any.
    pub fn system(&self) -> Option<&str> {
        self.messages
            .iter()
            .find(|m| m.role == Role::System)
            .map(|m| m.content.as_str())
    }

    /// The latest user message, if any.
    pub fn latest_user(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::User)
            .map(|m| m.content.as_str())
    }
}

fn read_messages(value: Option<&Value>) -> Result<Vec<Message>, RequestError> {
    let entries = match value {
        None | Some(Value::Null) => {
            return Err(RequestError::new(
                "Missing required parameter: 'messages'.",
                "messages",
                Some("missing_required_parameter"),
            ));
        }
        Some(Value::Array(entries)) => entries,
        Some(_) => {
            return Err(RequestError::new(
                "'messages' must be an array.",
                "messages",
                None,
            ));
        }
    };
    if entries.is_empty() {
        return Err(RequestError::new(
            "'messages' must contain at least one message.",
            "messages",
            Some("empty_array"),
        ));
    }
    entries
        .iter()
        .enumerate()
        .map(|(i, entry)| read_message(i, entry))
        .collect()
}

fn read_message(i: usize, entry: &Value) -> Result<Message, RequestError> {
    let param = format!("messages[{i}]");
    let bad = |m: String| RequestError::new(m, &param, None);
    let Value::Object(obj) = entry else {
        return Err(bad(format!(
            "Invalid type for 'messages[{i}]': expected an object."
        )));
    };
    let role = match obj.get("role").and_then(Value::as_str) {
        Some("system" | "developer") => Role::System,
        Some("user") => Role::User,
        Some("assistant") => Role::Assistant,
        Some("tool" | "function") => Role::Tool,
        Some(other) => {
            return Err(bad(format!(
                "Invalid value for 'messages[{i}].role': '{other}'. Supported values are: 'system', 'developer', 'user', 'assistant' and 'tool'."
            )));
        }
        None => {
            return Err(bad(format!(
                "Missing required parameter: 'messages[{i}].role'."
            )));
        }
    };
    let content = content_text(obj.get("content"));
    let tool_calls = match obj.get("tool_calls") {
        Some(Value::Array(calls)) => calls.iter().map(read_past_call).collect(),
        _ => Vec::new(),
    };
    let tool_call_id = obj
        .get("tool_call_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    if role == Role::Tool && tool_call_id.is_none() && obj.get("name").is_none() {
        return Err(bad(format!(
            "Missing required parameter: 'messages[{i}].tool_call_id'."
        )));
    }
    Ok(Message {
        role,
        content,
        tool_calls,
        tool_call_id,
        name: obj.get("name").and_then(Value::as_str).map(str::to_string),
    })
}

/// The text of a `content` field: a string, or the `text` of each part of an array.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn read_past_call(call: &Value) -> PastCall {
    let function = call.get("function").unwrap_or(&Value::Null);
    let arguments = match function.get("arguments") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    PastCall {
        id: call
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        name: function
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        arguments,
    }
}

fn read_tools(value: Option<&Value>) -> Result<ToolSet, RequestError> {
    match value {
        None | Some(Value::Null) => Ok(ToolSet::empty()),
        Some(v @ Value::Array(_)) => ToolSet::from_json(v).map_err(|e| {
            RequestError::new(
                format!("Invalid 'tools': {e}."),
                "tools",
                Some("invalid_tools"),
            )
        }),
        Some(_) => Err(RequestError::new(
            "'tools' must be an array.",
            "tools",
            None,
        )),
    }
}

fn read_tool_choice(
    value: Option<&Value>,
    tools: &ToolSet,
) -> Result<Option<ToolChoice>, RequestError> {
    let invalid = || {
        RequestError::new(
            "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or {\"type\": \"function\", \"function\": {\"name\": …}}.",
            "tool_choice",
            Some("invalid_value"),
        )
    };
    let choice = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::String(s)) => match s.as_str() {
            "auto" => ToolChoice::Auto,
            "none" => ToolChoice::None,
            "required" => ToolChoice::Required,
            _ => return Err(invalid()),
        },
        Some(Value::Object(o)) => {
            let name = o
                .get("function")
                .and_then(|f| f.get("name"))
                .or_else(|| o.get("name"))
                .and_then(Value::as_str)
                .ok_or_else(invalid)?;
            ToolChoice::Tool(name.to_string())
        }
        Some(_) => return Err(invalid()),
    };
    match &choice {
        ToolChoice::Required | ToolChoice::Tool(_) if tools.is_empty() => Err(RequestError::new(
            "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
            "tool_choice",
            None,
        )),
        ToolChoice::Tool(name) if tools.get(name).is_none() => Err(RequestError::new(
            format!(
                "Invalid value for 'tool_choice': no function named '{name}' was specified in the 'tools' parameter."
            ),
            "tool_choice",
            None,
        )),
        _ => Ok(Some(choice)),
    }
}

fn read_response_format(value: Option<&Value>) -> Result<ResponseFormat, RequestError> {
    let Some(Value::Object(obj)) = value else {
        return match value {
            None | Some(Value::Null) => Ok(ResponseFormat::Text),
            Some(_) => Err(RequestError::new(
                "'response_format' must be an object.",
                "response_format",
                None,
            )),
        };
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("text") => Ok(ResponseFormat::Text),
        Some("json_object") => Ok(ResponseFormat::JsonObject),
        Some("json_schema") => match obj.get("json_schema").and_then(|j| j.get("schema")) {
            Some(schema @ (Value::Object(_) | Value::Bool(_))) => {
                Ok(ResponseFormat::JsonSchema(schema.clone()))
            }
            _ => Err(RequestError::new(
                "Missing required parameter: 'response_format.json_schema.schema'.",
                "response_format.json_schema.schema",
                Some("missing_required_parameter"),
            )),
        },
        _ => Err(RequestError::new(
            "Invalid value for 'response_format.type': expected 'text', 'json_object' or 'json_schema'.",
            "response_format.type",
            Some("invalid_value"),
        )),
    }
}

/// FNV-1a over the fields the answer depends on, so that the same request gets the same call
/// ids whether it is streamed or not.
fn answer_hash(obj: &Map<String, Value>) -> u64 {
    let mut h = Fnv::new();
    for key in [
        "model",
        "messages",
        "tools",
        "tool_choice",
        "response_format",
        "parallel_tool_calls",
    ] {
        h.write(key.as_bytes());
        h.write(
            obj.get(key)
                .map(Value::to_string)
                .unwrap_or_default()
                .as_bytes(),
        );
    }
    h.finish()
}

/// The FNV-1a hash: tiny, stable across runs and platforms (unlike `DefaultHasher`).
pub struct Fnv(u64);

impl Fnv {
    pub fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    pub fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn finish(&self) -> u64 {
        self.0
    }

    pub fn of(text: &str) -> u64 {
        let mut h = Fnv::new();
        h.write(text.as_bytes());
        h.finish()
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Fnv::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather_tools() -> Value {
        json!([{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}])
    }

    #[test]
    fn reads_a_full_request() {
        let body = json!({
            "model": "m",
            "messages": [
                {"role":"developer","content":"sys"},
                {"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
                {"role":"tool","tool_call_id":"c1","content":"sunny"}
            ],
            "tools": weather_tools(),
            "tool_choice": {"type":"function","function":{"name":"get_weather"}},
            "stream": true,
            "stream_options": {"include_usage": true},
            "parallel_tool_calls": false,
            "max_tokens": 7,
            "response_format": {"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object"}}}
        });
        let r = DemoRequest::from_json(&body).unwrap();
        assert_eq!(r.model, "m");
        assert_eq!(r.system(), Some("sys"));
        assert_eq!(r.latest_user(), Some("a\nb"));
        assert_eq!(r.messages[2].tool_calls[0].name, "get_weather");
        assert_eq!(r.messages[3].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(r.tool_choice, Some(ToolChoice::Tool("get_weather".into())));
        assert!(r.stream && r.include_usage && !r.parallel_tool_calls);
        assert_eq!(r.max_tokens, Some(7));
        assert_eq!(
            r.response_format,
            ResponseFormat::JsonSchema(json!({"type":"object"}))
        );
    }

    #[test]
    fn stream_does_not_change_the_hash() {
        let a = json!({"messages":[{"role":"user","content":"hi"}],"stream":true});
        let b = json!({"messages":[{"role":"user","content":"hi"}]});
        let c = json!({"messages":[{"role":"user","content":"ho"}]});
        let hash = |v: &Value| DemoRequest::from_json(v).unwrap().hash;
        assert_eq!(hash(&a), hash(&b));
        assert_ne!(hash(&b), hash(&c));
        assert_eq!(DemoRequest::from_json(&b).unwrap().model, DEFAULT_MODEL);
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let user = json!([{"role":"user","content":"hi"}]);
        let cases = [
            (json!([]), None, "must be a JSON object"),
            (
                json!({}),
                Some("messages"),
                "Missing required parameter: 'messages'",
            ),
            (json!({"messages": []}), Some("messages"), "at least one"),
            (
                json!({"messages": "hi"}),
                Some("messages"),
                "must be an array",
            ),
            (
                json!({"messages": [3]}),
                Some("messages[0]"),
                "expected an object",
            ),
            (
                json!({"messages": [{"content":"x"}]}),
                Some("messages[0]"),
                "role",
            ),
            (
                json!({"messages": [{"role":"robot"}]}),
                Some("messages[0]"),
                "'robot'",
            ),
            (
                json!({"messages": [{"role":"tool","content":"x"}]}),
                Some("messages[0]"),
                "tool_call_id",
            ),
            (
                json!({"messages": user, "model": 3}),
                Some("model"),
                "model",
            ),
            (
                json!({"messages": user, "tools": {}}),
                Some("tools"),
                "array",
            ),
            (
                json!({"messages": user, "tools": [{"type":"function"}]}),
                Some("tools"),
                "Invalid 'tools'",
            ),
            (
                json!({"messages": user, "tool_choice": "required"}),
                Some("tool_choice"),
                "only allowed when",
            ),
            (
                json!({"messages": user, "tools": weather_tools(), "tool_choice": "sometimes"}),
                Some("tool_choice"),
                "Invalid value",
            ),
            (
                json!({"messages": user, "tools": weather_tools(), "tool_choice": {"type":"function","function":{"name":"nope"}}}),
                Some("tool_choice"),
                "'nope'",
            ),
            (
                json!({"messages": user, "stream": "yes"}),
                Some("stream"),
                "boolean",
            ),
            (
                json!({"messages": user, "response_format": {"type":"xml"}}),
                Some("response_format.type"),
                "Invalid value",
            ),
            (
                json!({"messages": user, "response_format": {"type":"json_schema"}}),
                Some("response_format.json_schema.schema"),
                "Missing",
            ),
        ];
        for (body, param, want) in cases {
            let e = DemoRequest::from_json(&body).unwrap_err();
            assert_eq!(e.param.as_deref(), param, "{body}");
            assert!(e.message.contains(want), "{body}: {}", e.message);
        }
    }
}
