//! The exact request (Ctrl+E): the method and URL, the headers (the key shown only as the
//! environment variable it comes from), the body pretty-printed, and, read out of the body for
//! people, the tool prompt a protocol rendered and the response format that emulates a forced
//! tool choice. A key copies it as a `curl` command that reads the key from its variable.
//!
//! The view is built once when it opens (or another compare column is chosen), from the request
//! a run sent, a replay recorded, or, before anything was sent, the one Ctrl+R would send.

use std::ops::Range;

use serde_json::Value;

use toolscope_core::emulate::response_format;
use toolscope_core::provider::{Auth, Request, redact_url, wire_request};
use toolscope_core::tool::ToolChoice;

use super::text_log::{Scroll, TextLog};

pub struct RequestView {
    /// Where the request comes from (`the request sent`, `compare · required`, …).
    pub title: String,
    pub text: TextLog,
    /// The lines that are JSON (the body, the response format's schema), to highlight.
    pub json: Vec<Range<usize>>,
    /// The request as a `curl` command.
    pub curl: String,
    pub scroll: Scroll,
    /// The compare column shown, when the compare view is open.
    pub column: Option<usize>,
}

/// The URL a request is sent to when it names no base URL and its provider has none (the demo
/// model listens on a port chosen when it starts).
pub const UNKNOWN_BASE: &str = "http://127.0.0.1:<port>/v1";

impl RequestView {
    /// The view of `request`, sent to `base` (the resolved base URL).
    pub fn new(title: String, request: &Request, base: &str) -> RequestView {
        let wire = wire_request(request, base);
        // Credentials in the URL (user information, a key parameter) are shown, and copied
        // into the curl command, as `[redacted]`.
        let url = redact_url(&wire.url);
        let mut lines: Vec<String> = Vec::new();
        let mut json = Vec::new();
        lines.push(format!("POST {url}"));
        let mut headers: Vec<Header> = vec![Header {
            name: "content-type".into(),
            value: "application/json".into(),
            key: None,
        }];
        if let Some(var) = request.provider.key_env() {
            let (name, value) = match request.provider.spec().auth {
                Auth::Bearer => ("authorization".to_string(), format!("Bearer ${var}")),
                Auth::Header(h) => (h.to_string(), format!("${var}")),
            };
            headers.push(Header {
                name,
                value,
                key: Some(var),
            });
        }
        for (name, value) in &wire.headers {
            headers.push(Header {
                name: name.to_string(),
                value: value.clone(),
                key: None,
            });
        }
        for h in &headers {
            match h.key {
                Some(var) => lines.push(format!(
                    "{}: {}   (the key from ${var} when sent; never shown)",
                    h.name, h.value
                )),
                None => lines.push(format!("{}: {}", h.name, h.value)),
            }
        }
        lines.push(String::new());
        let body = serde_json::to_string_pretty(&wire.body).unwrap_or_default();
        let start = lines.len();
        lines.extend(body.lines().map(str::to_string));
        json.push(start..lines.len());
        let emulated =
            request.protocol.is_some() || !request.provider.capabilities().native_forcing;
        if let Some(p) = &request.protocol
            && request.tool_choice != Some(ToolChoice::None)
            && !request.tools.is_empty()
        {
            lines.push(String::new());
            lines.push(format!(
                "── the tool prompt {} rendered (part of the system message above) ──",
                p.name()
            ));
            lines.extend(p.system_prompt(&request.tools).lines().map(str::to_string));
        }
        if request.protocol.is_none() && request.detect_protocol {
            lines.push(String::new());
            lines.push(
                "── protocol auto: the tools go natively; calls the server leaves in the answer text are read by the protocol their markers name ──"
                    .to_string(),
            );
        }
        if emulated
            && let Some(choice) = &request.tool_choice
            && request.provider.capabilities().response_format
            && let Some(rf) = response_format(choice, &request.tools)
        {
            lines.push(String::new());
            lines.push(format!(
                "── the response format that emulates tool choice {} (in the body above) ──",
                choice.label()
            ));
            let schema = serde_json::to_string_pretty(&rf.schema).unwrap_or_default();
            let start = lines.len();
            lines.extend(schema.lines().map(str::to_string));
            json.push(start..lines.len());
        }
        let mut text = TextLog::new();
        text.push_str(&lines.join("\n"));
        RequestView {
            title,
            text,
            json,
            curl: curl(&url, &headers, &wire.body),
            scroll: Scroll::top(),
            column: None,
        }
    }

    /// Whether line `i` is JSON.
    pub fn is_json(&self, line: usize) -> bool {
        self.json.iter().any(|r| r.contains(&line))
    }
}

/// A header of the request; `key` names the variable of a key it carries.
struct Header {
    name: String,
    value: String,
    key: Option<&'static str>,
}

/// Single-quotes `s` for a POSIX shell.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The request as a `curl` command: the key is read from its environment variable by the shell,
/// and the body goes through a quoted here-document (nothing in it is expanded).
fn curl(url: &str, headers: &[Header], body: &Value) -> String {
    let mut s = format!("curl -sN -X POST {}", quote(url));
    for h in headers {
        s.push_str(" \\\n  -H ");
        if h.key.is_some() {
            // Double quotes: the shell puts the key in from the variable.
            s.push_str(&format!("\"{}: {}\"", h.name, h.value));
        } else {
            s.push_str(&quote(&format!("{}: {}", h.name, h.value)));
        }
    }
    let body = serde_json::to_string_pretty(body).unwrap_or_default();
    s.push_str(&format!(" \\\n  --data-binary @- <<'JSON'\n{body}\nJSON\n"));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolscope_core::protocol::Protocol;
    use toolscope_core::provider::{Message, ProviderKind};
    use toolscope_core::tool::ToolSet;

    fn request(provider: ProviderKind) -> Request {
        let mut r = Request::new(provider, "m");
        r.messages = vec![Message::user("hi")];
        r.tools = ToolSet::from_json_text(
            r#"[{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]"#,
        )
        .unwrap();
        r.tool_choice = Some(ToolChoice::Required);
        r
    }

    #[test]
    fn keys_are_named_never_shown_and_curl_reads_them_from_the_environment() {
        let v = RequestView::new(
            "sent".into(),
            &request(ProviderKind::OPENAI),
            "https://api.openai.com/v1",
        );
        let text = v.text.as_str();
        assert!(
            text.starts_with("POST https://api.openai.com/v1/chat/completions\n"),
            "{text}"
        );
        assert!(
            text.contains("authorization: Bearer $OPENAI_API_KEY"),
            "{text}"
        );
        assert!(
            v.curl
                .contains("-H \"authorization: Bearer $OPENAI_API_KEY\""),
            "{}",
            v.curl
        );
        assert!(v.curl.contains("<<'JSON'\n{\n"), "{}", v.curl);
        assert!(v.is_json(5));
        let a = RequestView::new(
            "sent".into(),
            &request(ProviderKind::ANTHROPIC),
            "https://api.anthropic.com",
        );
        assert!(a.text.as_str().contains("x-api-key: $ANTHROPIC_API_KEY"));
        assert!(a.text.as_str().contains("anthropic-version: "));
    }

    #[test]
    fn an_emulated_request_shows_the_protocol_prompt_and_the_response_format() {
        let mut r = request(ProviderKind::OPENAI);
        r.protocol = Some(Protocol::from_name("hermes").unwrap());
        let v = RequestView::new("sent".into(), &r, "http://localhost:8000/v1");
        let text = v.text.as_str();
        assert!(
            text.contains("── the tool prompt hermes rendered"),
            "{text}"
        );
        assert!(text.contains("<tools>"), "{text}");
        assert!(
            text.contains("── the response format that emulates tool choice required"),
            "{text}"
        );
        assert_eq!(v.json.len(), 2);
    }

    #[test]
    fn an_auto_request_is_native_and_says_how_its_text_is_read() {
        let mut r = request(ProviderKind::OPENAI);
        r.detect_protocol = true;
        let v = RequestView::new("sent".into(), &r, "http://localhost:8000/v1");
        let text = v.text.as_str();
        assert!(text.contains("\"tools\": ["), "{text}");
        assert!(
            text.contains("── protocol auto: the tools go natively"),
            "{text}"
        );
        assert!(!text.contains("── the tool prompt"), "{text}");
    }

    #[test]
    fn credentials_in_the_base_url_are_redacted_and_the_path_goes_before_the_query() {
        let v = RequestView::new(
            "sent".into(),
            &request(ProviderKind::OPENAI),
            "http://alice:hunter2-secret@10.0.0.5:8000/v1?api_key=QK-secret-99",
        );
        let text = v.text.as_str();
        for shown in [text, v.curl.as_str()] {
            assert!(
                !shown.contains("hunter2-secret") && !shown.contains("QK-secret-99"),
                "{shown}"
            );
        }
        assert!(
            text.starts_with(
                "POST http://[redacted]@10.0.0.5:8000/v1/chat/completions?api_key=[redacted]\n"
            ),
            "{text}"
        );
        assert!(
            v.curl.contains("/v1/chat/completions?api_key=[redacted]"),
            "{}",
            v.curl
        );
    }
}
