//! JSON pointers (RFC 6901): the paths coercion records and validation reports.

use std::borrow::Cow;

/// A key or index escaped for a pointer: `~` as `~0`, `/` as `~1`.
pub(crate) fn escape(token: &str) -> Cow<'_, str> {
    // Bytes, not chars: keys are short and this runs for every value coercion visits.
    if token.bytes().any(|b| b == b'~' || b == b'/') {
        Cow::Owned(token.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(token)
    }
}

/// An escaped token read back.
pub(crate) fn unescape(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

/// Appends `/token` (escaped) to `path`.
pub(crate) fn push(path: &mut String, token: &str) {
    path.push('/');
    path.push_str(&escape(token));
}

/// The pointer of member `token` (a key or an index) of the value at `path`.
#[cfg(test)]
pub(crate) fn child(path: &str, token: &str) -> String {
    let mut p = String::with_capacity(path.len() + token.len() + 1);
    p.push_str(path);
    push(&mut p, token);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_compose() {
        for t in ["plain", "a/b", "~x", "~1/~0", ""] {
            assert_eq!(unescape(&escape(t)), t);
        }
        assert_eq!(child("/a", "b/c~"), "/a/b~1c~0");
        assert_eq!(child("", "0"), "/0");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
    }
}
