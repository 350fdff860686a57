//! What can be a function name. Template leftovers (`{{ tc.name }}`), prose and markup written
//! where a name belongs are not calls: a protocol that reads a name from free text checks it here
//! and reports the markup as malformed instead of calling a tool no one defined.

use crate::tool::ToolSet;

/// Whether `name` can name a function: one of the tools (whatever its name is made of), or a
/// non-empty run of letters, digits, `_`, `-`, `.` and `:`.
pub(crate) fn is_function_name(name: &str, tools: &ToolSet) -> bool {
    tools.get(name).is_some()
        || (!name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
}

/// The tool a doubled name stands for: `f` for `f.f`, where `f` is one of the tools and `f.f`
/// none (MuseGlimmer's template writes a bare tool's recipient so, and its models name the call
/// after it). Any other dotted name is its own.
pub(crate) fn undoubled<'a>(name: &'a str, tools: &ToolSet) -> Option<&'a str> {
    let (head, tail) = name.split_once('.')?;
    (head == tail && tools.get(name).is_none() && tools.get(head).is_some()).then_some(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_leftovers() {
        let tools = ToolSet::empty();
        for ok in ["get_weather", "weather.v2", "ns:tool", "a-b", "天気", "f1"] {
            assert!(is_function_name(ok, &tools), "{ok}");
        }
        for bad in [
            "",
            "{{ tc.name }}",
            "get weather",
            "a/b",
            "f()",
            "<x>",
            "\"q\"",
        ] {
            assert!(!is_function_name(bad, &tools), "{bad}");
        }
    }

    #[test]
    fn a_doubled_name_is_the_tool_only_where_it_is_one() {
        let tools = crate::protocol::tests_support::tools();
        assert_eq!(undoubled("search.search", &tools), Some("search"));
        for other in ["search", "search.find", "x.x", "search.search.search"] {
            assert_eq!(undoubled(other, &tools), None, "{other}");
        }
    }
}
