//! Credentials in a base URL: `http://user:secret@host/v1`, `…/v1?api_key=…`.
//!
//! Some servers take their key in the URL, as basic-auth user information or as a query
//! parameter. Such a URL is a secret wherever it is shown or saved: [`redact_url`] replaces the
//! user information and the value of every known key parameter with `[redacted]` (errors,
//! sessions, the request view, the `curl` copy, settings all go through it), and a run redacts
//! the values themselves from every event it hands over, in case a server echoes them. The URL
//! is used as given only for sending.
//!
//! A base URL with a query keeps it after the endpoint's path: `http://h/v1?api_key=K` sends
//! `http://h/v1/chat/completions?api_key=K` ([`endpoint`]).

/// Query parameters whose value is taken for a key, compared without case and with `-` and `_`
/// alike.
pub(crate) const KEY_PARAMS: &[&str] = &[
    "key",
    "api_key",
    "apikey",
    "x_api_key",
    "token",
    "access_token",
    "auth_token",
    "id_token",
    "refresh_token",
    "auth",
    "authorization",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "pwd",
    "sig",
    "signature",
    "subscription_key",
    "code",
];

/// What replaces a secret.
pub(crate) const REDACTED: &str = "[redacted]";

/// Whether a query parameter's name is one of [`KEY_PARAMS`].
pub(crate) fn is_key_param(name: &str) -> bool {
    let name = name.trim().to_ascii_lowercase().replace('-', "_");
    KEY_PARAMS.contains(&name.as_str())
}

/// The pieces of a URL that matter here. Not a full URL parser: enough to find the user
/// information (between `://` and the last `@` of the authority) and the query.
struct Pieces<'a> {
    /// `http://`
    scheme: &'a str,
    userinfo: Option<&'a str>,
    /// Host and port.
    host: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn pieces(url: &str) -> Pieces<'_> {
    let (rest, fragment) = match url.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (url, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let (scheme, rest) = match rest.find("://") {
        Some(i) => rest.split_at(i + 3),
        None => ("", rest),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    Pieces {
        scheme,
        userinfo,
        host,
        path,
        query,
        fragment,
    }
}

/// `url` with its user information and the values of its key parameters replaced by
/// `[redacted]`: what may be shown or saved. A URL without them comes back unchanged.
pub fn redact_url(url: &str) -> String {
    let p = pieces(url);
    if p.userinfo.is_none()
        && !p.query.is_some_and(|q| {
            q.split('&')
                .any(|kv| is_key_param(kv.split('=').next().unwrap_or("")))
        })
    {
        return url.to_string();
    }
    let mut out = String::with_capacity(url.len());
    out.push_str(p.scheme);
    if p.userinfo.is_some() {
        out.push_str(REDACTED);
        out.push('@');
    }
    out.push_str(p.host);
    out.push_str(p.path);
    if let Some(q) = p.query {
        out.push('?');
        out.push_str(&redact_query(q));
    }
    if let Some(f) = p.fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

fn redact_query(q: &str) -> String {
    q.split('&')
        .map(|kv| match kv.split_once('=') {
            Some((k, _)) if is_key_param(k) => format!("{k}={REDACTED}"),
            _ => kv.to_string(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// The secret values in `url` (the user information, its password alone, each key parameter's
/// value, as written and percent-decoded), for redacting them from text that might echo them.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
pub(crate) fn url_secrets(url: &str) -> Vec<String> {
    let p = pieces(url);
    let mut out = Vec::new();
    if let Some(u) = p.userinfo {
        out.push(u.to_string());
        if let Some((_, pass)) = u.split_once(':') {
            out.push(pass.to_string());
        }
    }
    for kv in p.query.into_iter().flat_map(|q| q.split('&')) {
        if let Some((k, v)) = kv.split_once('=')
            && is_key_param(k)
        {
            out.push(v.to_string());
        }
    }
    let decoded: Vec<String> = out.iter().map(|s| percent_decode(s)).collect();
    out.extend(decoded);
    out.retain(|s| !s.is_empty());
    out.sort();
    out.dedup();
    out
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The base URL without its query (and without a trailing `/` on its path), and its query.
pub(crate) fn split_query(base: &str) -> (String, Option<String>) {
    let base = base.split('#').next().unwrap_or("");
    match base.split_once('?') {
        Some((b, q)) => (
            b.trim_end_matches('/').to_string(),
            Some(q.to_string()).filter(|q| !q.is_empty()),
        ),
        None => (base.trim_end_matches('/').to_string(), None),
    }
}

/// `url` (an endpoint built on a base without its query) with the base's `query` added after
/// its own: `…/v1/chat/completions?api_key=K`, `…:streamGenerateContent?alt=sse&key=K`.
pub(crate) fn with_query(url: String, query: Option<&str>) -> String {
    match query {
        None => url,
        Some(q) if url.contains('?') => format!("{url}&{q}"),
        Some(q) => format!("{url}?{q}"),
    }
}

/// The endpoint `path` (which may carry a query of its own) under `base`, the base's query kept
/// after the path.
pub fn endpoint(base: &str, path: &str) -> String {
    let (b, q) = split_query(base);
    with_query(format!("{b}{path}"), q.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_information_and_key_parameters_are_redacted() {
        let cases = [
            ("https://api.openai.com/v1", "https://api.openai.com/v1"),
            (
                "http://alice:s3cret@10.0.0.2:8000/v1",
                "http://[redacted]@10.0.0.2:8000/v1",
            ),
            ("http://tok@h/v1", "http://[redacted]@h/v1"),
            (
                "http://h/v1?api_key=K1&Api-Key=K2&model=x&Token=K3",
                "http://h/v1?api_key=[redacted]&Api-Key=[redacted]&model=x&Token=[redacted]",
            ),
            (
                "http://u:p@h/v1/chat/completions?key=K#frag",
                "http://[redacted]@h/v1/chat/completions?key=[redacted]#frag",
            ),
            // An @ in the path is not user information.
            ("http://h/v1/@me", "http://h/v1/@me"),
            ("", ""),
            ("not a url", "not a url"),
        ];
        for (url, want) in cases {
            assert_eq!(redact_url(url), want, "{url}");
        }
    }

    #[test]
    fn secrets_are_listed_raw_and_decoded() {
        let s = url_secrets("http://alice:p%40ss@h/v1?access_token=a%2Bb&q=1");
        for want in ["alice:p%40ss", "p%40ss", "p@ss", "a%2Bb", "a+b"] {
            assert!(s.contains(&want.to_string()), "{want} in {s:?}");
        }
        assert!(!s.contains(&"1".to_string()));
        assert!(url_secrets("https://api.openai.com/v1").is_empty());
    }

    #[test]
    fn paths_join_before_the_query() {
        assert_eq!(
            endpoint("http://h/v1?api_key=K", "/chat/completions"),
            "http://h/v1/chat/completions?api_key=K"
        );
        assert_eq!(
            endpoint("http://h/v1/?api_key=K", "/chat/completions"),
            "http://h/v1/chat/completions?api_key=K"
        );
        assert_eq!(
            endpoint(
                "https://g?key=K",
                "/v1beta/models/m:streamGenerateContent?alt=sse"
            ),
            "https://g/v1beta/models/m:streamGenerateContent?alt=sse&key=K"
        );
        assert_eq!(endpoint("http://h/v1/", "/x"), "http://h/v1/x");
    }
}
