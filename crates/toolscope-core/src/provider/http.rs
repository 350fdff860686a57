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

/// Seconds to wait, from `retry-after-ms` or `retry-after` (seconds, or an HTTP date: the time
/// from now until then, 0 for a date already past).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<f64> {
    retry_after_at(headers, std::time::SystemTime::now())
}

fn retry_after_at(headers: &reqwest::header::HeaderMap, now: std::time::SystemTime) -> Option<f64> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(ms / 1000.0).filter(|s| s.is_finite() && *s >= 0.0);
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return Some(secs).filter(|s| s.is_finite() && *s >= 0.0);
    }
    let at = http_date(value)?;
    let now = now
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_secs_f64();
    Some((at as f64 - now).max(0.0))
}

/// Seconds since the Unix epoch of an HTTP date in the preferred format of RFC 7231
/// (IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`). The obsolete RFC 850 and asctime forms are
/// not read; servers are required to send this one.
fn http_date(s: &str) -> Option<i64> {
    let (_weekday, rest) = s.split_once(", ")?;
    let mut f = rest.split(' ');
    let day: i64 = f.next()?.parse().ok()?;
    let month = match f.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = f.next()?.parse().ok()?;
    let mut t = f.next()?.split(':').map(|n| n.parse::<i64>().ok());
    let (h, m, sec) = (t.next()??, t.next()??, t.next()??);
    if f.next()? != "GMT" || f.next().is_some() || t.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day) || !(0..24).contains(&h) || !(0..60).contains(&m) {
        return None;
    }
    if !(0..=60).contains(&sec) || !(1970..=9999).contains(&year) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec)
}

/// Days from 1970-01-01 to this date of the proleptic Gregorian calendar.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
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
    // A timeout is its own category: a slow server is not a gone one.
    let category = if e.is_timeout() || cause.starts_with("timed out") {
        ErrorCategory::ProviderTimeout
    } else {
        ErrorCategory::ProviderUnavailable
    };
    ProviderError::new(category, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    fn headers(name: &'static str, value: &str) -> reqwest::header::HeaderMap {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(name, value.parse().unwrap());
        h
    }

    #[test]
    fn http_dates_are_read() {
        assert_eq!(
            http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        for bad in [
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "Sun, 06 Nov 1994 08:49:37 PST",
            "Sun, 06 Nov 1994 25:49:37 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "",
        ] {
            assert_eq!(http_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn retry_after_takes_seconds_or_a_date() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777);
        let at = |name, v| retry_after_at(&headers(name, v), now);
        assert_eq!(at("retry-after", "30"), Some(30.0));
        assert_eq!(at("retry-after-ms", "1500"), Some(1.5));
        assert_eq!(
            at("retry-after", "Sun, 06 Nov 1994 08:50:07 GMT"),
            Some(30.0)
        );
        assert_eq!(
            at("retry-after", "Sun, 06 Nov 1994 08:00:00 GMT"),
            Some(0.0)
        );
        assert_eq!(at("retry-after", "soon"), None);
        assert_eq!(at("retry-after", "-5"), None);
    }
}
