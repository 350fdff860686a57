//! The HTTP client side of a run: the client with its connect timeout, the `retry-after`
//! headers, and how a failed connection becomes an error.

use std::time::Duration;

use crate::error::{ErrorCategory, ProviderError};

/// The most redirects followed for one request (all within the base URL's origin).
const MAX_REDIRECTS: usize = 10;

/// A client for one run. Proxies from the environment are honoured, as users expect.
///
/// Redirects are followed only within the origin (scheme, host and port) of the URL the request
/// was sent to. A redirect to another origin is not followed and the run fails saying where it
/// pointed: the key travels in a header (`Authorization`, `x-api-key`, `x-goog-api-key`, or the
/// basic credentials of the base URL), and reqwest strips only some of them on the way to
/// another host, so the one safe rule is that a request carrying a key never leaves its origin.
pub(crate) fn client(connect_timeout: Duration) -> Result<reqwest::Client, ProviderError> {
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let Some(first) = attempt.previous().first() else {
                return attempt.follow();
            };
            if attempt.url().origin() != first.origin() {
                let to = attempt.url().origin().ascii_serialization();
                return attempt.error(CrossOrigin(to));
            }
            if attempt.previous().len() > MAX_REDIRECTS {
                return attempt.error(CrossOrigin(String::new()));
            }
            attempt.follow()
        }))
        .build()
        .map_err(|e| {
            ProviderError::new(
                ErrorCategory::ProviderUnavailable,
                format!("cannot set up the HTTP client: {e}"),
            )
        })
}

/// Seconds to wait, from `retry-after-ms` or `retry-after` (seconds; an HTTP date is not
/// interpreted).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<f64> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(ms / 1000.0).filter(|s| s.is_finite() && *s >= 0.0);
    }
    get("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
}

/// Why a redirect was not followed: it led to this other origin (empty: too many redirects).
#[derive(Debug)]
struct CrossOrigin(String);

impl std::fmt::Display for CrossOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_empty() {
            write!(f, "more than {MAX_REDIRECTS} redirects")
        } else {
            write!(
                f,
                "the server redirected to {}, another origin; toolscope follows redirects only \
                 within the base URL's origin, so that a key is never sent elsewhere (give the \
                 URL the API answers at as the base URL)",
                self.0
            )
        }
    }
}

impl std::error::Error for CrossOrigin {}

/// A failed send, connection or read.
pub(crate) fn transport_error(e: &reqwest::Error, url: &str) -> ProviderError {
    let what = if e.is_redirect() {
        format!("the request to {url} was redirected")
    } else if e.is_connect() {
        format!("cannot connect to {url}")
    } else if e.is_timeout() {
        format!("timed out talking to {url}")
    } else if e.is_body() || e.is_decode() {
        format!("the response from {url} broke off")
    } else {
        format!("the request to {url} failed")
    };
    // The source chain says why (refused, reset, DNS, TLS); reqwest's own Display does not.
    let mut cause = String::new();
    let mut src: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(s) = src {
        cause = s.to_string();
        src = s.source();
    }
    // A connect timeout surfaces as a bare "deadline has elapsed"; say what it was.
    if e.is_connect() && (e.is_timeout() || cause.contains("deadline has elapsed")) {
        cause = "timed out (connect timeout)".to_string();
    }
    let message = if cause.is_empty() {
        what
    } else {
        format!("{what}: {cause}")
    };
    ProviderError::new(ErrorCategory::ProviderUnavailable, message)
}
