//! An MCP `CallToolResult` as toolscope shows it (a `tool-result` part) and as the model reads it
//! (the text of a tool message), and a failed call as an `error` part.
//!
//! Pure functions over JSON, with no feature: the MCP client (`mcp`, behind the `http` feature)
//! maps each live result through them, and a session replays its recorded results through the
//! same ones, so a replay shows exactly what the live loop showed. `mcp` re-exports them.

use serde_json::Value;

use crate::error::ErrorCategory;
use crate::part::{ErrorPart, PartId, ToolResult};

/// The outcome of one executed call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallOutcome {
    /// The `tool-result` part: `output` is the result's `structuredContent` when it has one,
    /// else the text of its content when that is all text, else its content blocks as given.
    pub part: ToolResult,
    /// What the model is sent back in the tool message: the content's text (other blocks
    /// described in brackets), `error: …` first when the tool reported a failure.
    pub text: String,
    /// The `CallToolResult` as received, as JSON: what a session records, and reads back into
    /// the same part and text with [`outcome`].
    pub result: Value,
}

/// Maps a `CallToolResult` (as JSON: `{content, structuredContent?, isError?}`) for the call
/// `tool_call_id` to the tool the model called `tool_name`.
#[cfg_attr(not(feature = "mcp"), allow(unreachable_pub))]
pub fn outcome(tool_call_id: &str, tool_name: &str, result: &Value) -> CallOutcome {
    let content: &[Value] = result
        .get("content")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);

    let all_text = content
        .iter()
        .all(|b| b.get("type").and_then(Value::as_str) == Some("text"));
    let texts: Vec<String> = content.iter().map(describe).collect();
    let joined = texts.join("\n");

    let output = match structured {
        Some(s) => s.clone(),
        None if all_text && !content.is_empty() => Value::String(joined.clone()),
        None => Value::Array(content.to_vec()),
    };
    let mut text = if joined.is_empty() {
        structured.map(Value::to_string).unwrap_or_default()
    } else {
        joined
    };
    if is_error {
        text = if text.is_empty() {
            "error: the tool failed and said nothing more".into()
        } else {
            format!("error: {text}")
        };
    }
    CallOutcome {
        part: ToolResult {
            tool_call_id: PartId::from(tool_call_id),
            tool_name: tool_name.to_string(),
            output,
            is_error,
            provider_executed: false,
        },
        text,
        result: result.clone(),
    }
}

/// A call that failed on the MCP side (the server could not be reached, failed the request,
/// closed, timed out; not a result with `isError`) as an `error` part: category
/// `tool_execution_failed`, naming the call when there is one.
pub(crate) fn failure(
    message: &str,
    tool_call_id: Option<&str>,
    tool_name: Option<&str>,
) -> ErrorPart {
    ErrorPart {
        category: Some(ErrorCategory::ToolExecutionFailed),
        message: message.to_string(),
        tool_call_id: tool_call_id.map(Into::into),
        tool_name: tool_name.map(str::to_string),
        ..ErrorPart::default()
    }
}

/// One content block as text for the model.
fn describe(block: &Value) -> String {
    let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
    match s("type") {
        "text" => s("text").to_string(),
        "image" | "audio" => {
            let data = s("data");
            format!(
                "[{} {}, {} bytes of base64]",
                s("type"),
                s("mimeType"),
                data.len()
            )
        }
        "resource" => {
            let r = block.get("resource").cloned().unwrap_or(Value::Null);
            match r.get("text").and_then(Value::as_str) {
                Some(t) => t.to_string(),
                None => format!(
                    "[resource {}]",
                    r.get("uri").and_then(Value::as_str).unwrap_or("")
                ),
            }
        }
        "resource_link" => format!("[resource link {} {}]", s("name"), s("uri")),
        other => format!("[{other} block]"),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_content_is_the_output_and_the_message() {
        let o = outcome(
            "c1",
            "get_weather",
            &json!({"content": [{"type": "text", "text": "sunny"}, {"type": "text", "text": "18 °C"}]}),
        );
        assert_eq!(o.part.output, json!("sunny\n18 °C"));
        assert_eq!(o.text, "sunny\n18 °C");
        assert!(!o.part.is_error);
        assert_eq!(o.part.tool_call_id, "c1");
    }

    #[test]
    fn structured_content_is_the_output() {
        let o = outcome(
            "c1",
            "t",
            &json!({"content": [], "structuredContent": {"temperature": 18}}),
        );
        assert_eq!(o.part.output, json!({"temperature": 18}));
        assert_eq!(o.text, r#"{"temperature":18}"#);
    }

    #[test]
    fn other_blocks_are_kept_and_described() {
        let o = outcome(
            "c1",
            "t",
            &json!({"content": [
                {"type": "text", "text": "here"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"}
            ]}),
        );
        assert_eq!(o.part.output.as_array().unwrap().len(), 4);
        assert_eq!(
            o.text,
            "here\n[image image/png, 4 bytes of base64]\nbody\n[resource link b file:///b]"
        );
    }

    #[test]
    fn a_tool_error_is_marked_in_the_part_and_the_message() {
        let o = outcome(
            "c1",
            "t",
            &json!({"content": [{"type": "text", "text": "unknown city"}], "isError": true}),
        );
        assert!(o.part.is_error);
        assert_eq!(o.text, "error: unknown city");
        let json = serde_json::to_value(crate::part::Part::ToolResult(Box::new(o.part))).unwrap();
        assert_eq!(json["type"], "tool-result");
        assert_eq!(json["isError"], true);
    }
}
