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

use super::errors::status_error;
use super::http;
use super::keys::Keys;
use super::secret_url::{self, redact_url, url_secrets};
use super::spec::{Auth, ProviderKind};

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
    let (base, query) = secret_url::split_query(&base);
    let keys = url_secrets(base_url.unwrap_or(""))
        .into_iter()
        .fold(keys.clone(), |k, s| k.with_secret(s));
    let client = http::client(Duration::from_secs(10))?;
    let format = provider.wire().format();
    let mut names = Vec::new();
    let mut page: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let url =
            secret_url::with_query(format.models_url(&base, page.as_deref()), query.as_deref());
        let mut req = client.get(&url).timeout(TIMEOUT);
        let url = redact_url(&url);
        for (name, value) in format.models_headers() {
            req = req.header(name, value);
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
        let (mut more, next) = format.models_page(&value);
        names.append(&mut more);
        match next {
            Some(n) => page = Some(n),
            None => break,
        }
    }
    if format.models_sorted() {
        names.sort();
    }
    names.dedup();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::spec::Wire;
    use serde_json::json;

    #[test]
    fn every_wire_lists_its_models_and_pages() {
        let (names, next) = Wire::OpenAiChat
            .format()
            .models_page(&json!({"object":"list","data":[{"id":"gpt-4o"},{"id":"gpt-4o-mini"}]}));
        assert_eq!(
            (names, next),
            (vec!["gpt-4o".into(), "gpt-4o-mini".into()], None)
        );
        let (names, next) = Wire::Anthropic.format().models_page(
            &json!({"data":[{"id":"claude-sonnet-4-5","type":"model"}],"has_more":true,"last_id":"claude-sonnet-4-5"}),
        );
        assert_eq!(names, ["claude-sonnet-4-5"]);
        assert_eq!(next.as_deref(), Some("claude-sonnet-4-5"));
        let (names, next) = Wire::Gemini.format().models_page(
            &json!({"models":[
                {"name":"models/gemini-2.5-flash","supportedGenerationMethods":["generateContent","countTokens"]},
                {"name":"models/text-embedding-004","supportedGenerationMethods":["embedContent"]}
            ],"nextPageToken":"abc"}),
        );
        assert_eq!(names, ["gemini-2.5-flash"]);
        assert_eq!(next.as_deref(), Some("abc"));
        let (names, _) = Wire::Ollama.format().models_page(
            &json!({"models":[{"name":"qwen3:8b","size":1},{"name":"llama3.2:latest"}]}),
        );
        assert_eq!(names, ["qwen3:8b", "llama3.2:latest"]);
        assert_eq!(
            Wire::Gemini.format().models_url("https://g", Some("t")),
            "https://g/v1beta/models?pageSize=1000&pageToken=t"
        );
        assert_eq!(
            Wire::Ollama.format().models_url("http://o", None),
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
