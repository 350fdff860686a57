//! Listing the models a provider offers, for pickers: `GET {base}/models` on OpenAI-compatible
//! servers, Anthropic's and Gemini's model lists (following their pages), and Ollama's
//! `/api/tags`. Needs the `http` feature.
//!
//! The key is sent as the provider's [`Auth`] says, exactly as for a run; a failure is a
//! [`ProviderError`] of the same categories (a wrong key is `provider_authentication`, an
//! unreachable server `provider_unavailable`).

use std::time::Duration;

use serde_json::Value;

use crate::error::{ErrorCategory, ProviderError};

use super::ANTHROPIC_VERSION;
use super::errors::status_error;
use super::http;
use super::keys::Keys;
use super::spec::{Auth, ProviderKind, Wire};

/// The most pages of a paged list that are read.
const MAX_PAGES: usize = 10;

/// How long a listing may take in all.
const TIMEOUT: Duration = Duration::from_secs(20);

/// The names of the models `provider` offers at `base_url` (else its default base URL), as the
/// model field of a request takes them.
pub async fn list_models(
    provider: ProviderKind,
    base_url: Option<&str>,
    keys: &Keys,
) -> Result<Vec<String>, ProviderError> {
    let Some(base) = base_url
        .map(str::to_string)
        .or_else(|| provider.default_base_url().map(str::to_string))
    else {
        return Err(ProviderError::new(
            ErrorCategory::ProviderInvalidRequest,
            format!("{provider} has no default base URL; give one to list its models"),
        ));
    };
    // A query on the base URL (a key some servers take there) goes after each page's path; the
    // URL is named in errors without its credentials.
    let (base, query) = super::secret_url::split_query(&base);
    let keys = super::url_secrets(base_url.unwrap_or(""))
        .into_iter()
        .fold(keys.clone(), |k, s| k.with_secret(s));
    let client = http::client(Duration::from_secs(10))?;
    let mut names = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let url = super::secret_url::with_query(
            page_url(provider.wire(), &base, page.as_deref()),
            query.as_deref(),
        );
        let mut req = client.get(&url).timeout(TIMEOUT);
        let url = super::redact_url(&url);
        if provider.wire() == Wire::Anthropic {
            req = req.header("anthropic-version", ANTHROPIC_VERSION);
        }
        if let Some(key) = keys.get(provider) {
            req = match provider.spec().auth {
                Auth::Header(name) => req.header(name, key.expose()),
                Auth::Bearer => req.bearer_auth(key.expose()),
            };
        }
        let response = req
            .send()
            .await
            .map_err(|e| http::transport_error(&e, &url))?;
        let status = response.status();
        let retry_after = http::retry_after(response.headers());
        let body = response
            .text()
            .await
            .map_err(|e| http::transport_error(&e, &url))?;
        if !status.is_success() {
            return Err(status_error(
                status.as_u16(),
                retry_after,
                &keys.redact(&body),
                &url,
            ));
        }
        let value: Value = serde_json::from_str(&body).map_err(|e| {
            ProviderError::new(
                ErrorCategory::ProviderInvalidResponse,
                format!("the model list from {url} is not JSON: {e}"),
            )
        })?;
        let (mut more, next) = parse_page(provider.wire(), &value);
        names.append(&mut more);
        match next {
            Some(n) => page = Some(n),
            None => break,
        }
    }
    if matches!(
        provider.wire(),
        Wire::OpenAiChat | Wire::OpenAiResponses | Wire::Ollama
    ) {
        names.sort();
    }
    names.dedup();
    Ok(names)
}

/// The URL of one page of the list (`page`: the token or id the previous page gave).
fn page_url(wire: Wire, base: &str, page: Option<&str>) -> String {
    match (wire, page) {
        (Wire::OpenAiChat | Wire::OpenAiResponses, _) => format!("{base}/models"),
        (Wire::Anthropic, None) => format!("{base}/v1/models?limit=1000"),
        (Wire::Anthropic, Some(after)) => {
            format!("{base}/v1/models?limit=1000&after_id={}", encode(after))
        }
        (Wire::Gemini, None) => format!("{base}/v1beta/models?pageSize=1000"),
        (Wire::Gemini, Some(token)) => {
            format!(
                "{base}/v1beta/models?pageSize=1000&pageToken={}",
                encode(token)
            )
        }
        (Wire::Ollama, _) => format!("{base}/api/tags"),
    }
}

/// `value` as a query value: every byte but the unreserved ones percent-encoded (a page token
/// is often base64, whose `+`, `/` and `=` would otherwise change meaning).
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The model names of one page, and what asks for the next page when there is one.
fn parse_page(wire: Wire, v: &Value) -> (Vec<String>, Option<String>) {
    let strings = |list: Option<&Value>, key: &str| -> Vec<String> {
        list.and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| m.get(key).and_then(Value::as_str))
            .map(str::to_string)
            .collect()
    };
    match wire {
        Wire::OpenAiChat | Wire::OpenAiResponses => (strings(v.get("data"), "id"), None),
        Wire::Anthropic => {
            let next = match v.get("has_more").and_then(Value::as_bool) {
                Some(true) => v.get("last_id").and_then(Value::as_str).map(str::to_string),
                _ => None,
            };
            (strings(v.get("data"), "id"), next)
        }
        Wire::Gemini => {
            // Only the models that generate content; named without their `models/` prefix.
            let names = v
                .get("models")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|m| {
                    m.get("supportedGenerationMethods")
                        .and_then(Value::as_array)
                        .is_none_or(|ms| ms.iter().any(|x| x == "generateContent"))
                })
                .filter_map(|m| m.get("name").and_then(Value::as_str))
                .map(|n| n.strip_prefix("models/").unwrap_or(n).to_string())
                .collect();
            let next = v
                .get("nextPageToken")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            (names, next)
        }
        Wire::Ollama => (strings(v.get("models"), "name"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_wire_lists_its_models_and_pages() {
        let (names, next) = parse_page(
            Wire::OpenAiChat,
            &json!({"object":"list","data":[{"id":"gpt-4o"},{"id":"gpt-4o-mini"}]}),
        );
        assert_eq!(
            (names, next),
            (vec!["gpt-4o".into(), "gpt-4o-mini".into()], None)
        );
        let (names, next) = parse_page(
            Wire::Anthropic,
            &json!({"data":[{"id":"claude-sonnet-4-5","type":"model"}],"has_more":true,"last_id":"claude-sonnet-4-5"}),
        );
        assert_eq!(names, ["claude-sonnet-4-5"]);
        assert_eq!(next.as_deref(), Some("claude-sonnet-4-5"));
        let (names, next) = parse_page(
            Wire::Gemini,
            &json!({"models":[
                {"name":"models/gemini-2.5-flash","supportedGenerationMethods":["generateContent","countTokens"]},
                {"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]}
            ],"nextPageToken":"abc"}),
        );
        assert_eq!(names, ["gemini-2.5-flash"]);
        assert_eq!(next.as_deref(), Some("abc"));
        let (names, _) = parse_page(
            Wire::Ollama,
            &json!({"models":[{"name":"qwen3:8b","size":1},{"name":"llama3.2:latest"}]}),
        );
        assert_eq!(names, ["qwen3:8b", "llama3.2:latest"]);
        assert_eq!(
            page_url(Wire::Gemini, "https://g", Some("t")),
            "https://g/v1beta/models?pageSize=1000&pageToken=t"
        );
        assert_eq!(
            page_url(Wire::Ollama, "http://o", None),
            "http://o/api/tags"
        );
    }

    #[tokio::test]
    async fn a_loopback_server_is_listed_and_its_refusal_categorised() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            for (status, body) in [
                ("200 OK", r#"{"models":[{"name":"b:1"},{"name":"a:2"}]}"#),
                ("401 Unauthorized", r#"{"error":"bad key"}"#),
            ] {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = vec![0u8; 4096];
                let n = s.read(&mut buf).await.unwrap();
                let head = String::from_utf8_lossy(&buf[..n]).to_string();
                assert!(head.starts_with("GET /api/tags "), "{head}");
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                s.write_all(reply.as_bytes()).await.unwrap();
            }
        });
        let keys = Keys::default();
        let names = list_models(ProviderKind::OLLAMA, Some(&base), &keys)
            .await
            .unwrap();
        assert_eq!(names, ["a:2", "b:1"]);
        let e = list_models(ProviderKind::OLLAMA, Some(&base), &keys)
            .await
            .unwrap_err();
        assert_eq!(e.category, ErrorCategory::ProviderAuthentication);
        server.await.unwrap();
    }

    /// A loopback server that answers `replies` in turn and hands back each request's head.
    async fn serve(replies: Vec<String>) -> (String, tokio::task::JoinHandle<Vec<String>>) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let mut heads = Vec::new();
            for body in replies {
                let (mut s, _) = listener.accept().await.unwrap();
                let mut buf = vec![0u8; 8192];
                let n = s.read(&mut buf).await.unwrap();
                heads.push(String::from_utf8_lossy(&buf[..n]).to_lowercase());
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                s.write_all(reply.as_bytes()).await.unwrap();
            }
            heads
        });
        (base, server)
    }

    #[tokio::test]
    async fn pages_are_followed_with_their_tokens_encoded_and_the_key_in_its_header() {
        let key = "gm-key-0123456789";
        let (base, server) = serve(vec![
            json!({"models":[{"name":"models/b"}],"nextPageToken":"a+b/c="}).to_string(),
            json!({"models":[{"name":"models/a"}]}).to_string(),
        ])
        .await;
        let keys = Keys::default().with(ProviderKind::GEMINI, key);
        let names = list_models(ProviderKind::GEMINI, Some(&base), &keys)
            .await
            .unwrap();
        assert_eq!(names, ["b", "a"]);
        let heads = server.await.unwrap();
        assert!(
            heads[0].starts_with("get /v1beta/models?pagesize=1000 "),
            "{}",
            heads[0]
        );
        assert!(
            heads[1].starts_with("get /v1beta/models?pagesize=1000&pagetoken=a%2bb%2fc%3d "),
            "{}",
            heads[1]
        );
        assert!(heads[1].contains(&format!("x-goog-api-key: {key}")));

        let (base, server) = serve(vec![
            json!({"data":[{"id":"claude-b"}],"has_more":true,"last_id":"claude-b"}).to_string(),
            json!({"data":[{"id":"claude-a"}],"has_more":false}).to_string(),
        ])
        .await;
        let keys = Keys::default().with(ProviderKind::ANTHROPIC, key);
        let names = list_models(ProviderKind::ANTHROPIC, Some(&base), &keys)
            .await
            .unwrap();
        assert_eq!(names, ["claude-b", "claude-a"]);
        let heads = server.await.unwrap();
        assert!(
            heads[1].starts_with("get /v1/models?limit=1000&after_id=claude-b "),
            "{}",
            heads[1]
        );
        assert!(heads[0].contains(&format!("x-api-key: {key}")));
        assert!(heads[0].contains("anthropic-version: "));
    }
}
