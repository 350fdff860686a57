//! The prompt frame the prompted protocols share, and recognising one.
//!
//! The frame: what tools are for, the tools as JSON between `<tools>` and `</tools>` (one per
//! line), a `Tool call format:` line naming the protocol, the protocol's own format section with
//! an example built from the first tool, and the rules. The frame is what [`read_frame`] reads
//! back.
//!
//! [`read_frame`]: crate::protocol::spec::read_frame

use serde_json::{Map, Value, json};

use crate::schema::{JsonType, SchemaType, resolve, schema_type};
use crate::tool::{ToolDef, ToolSet};

/// The example call of a prompt, the first tool (or a placeholder) with example arguments, as
/// `write` writes a call of that tool with those arguments (the format's own writer).
pub(crate) fn example_call(tools: &ToolSet, write: impl FnOnce(&str, &Value) -> String) -> String {
    match tools.iter().next() {
        Some(t) => write(&t.def.name, &example_args(t.schema(), t.schema(), 0)),
        None => write("tool_name", &json!({})),
    }
}

/// A tool list as the DeepSeek templates write it, and families like them: a `## Tools`
/// section with one `### name` heading per tool, its description and its parameters' JSON
/// Schema, then how to call, showing `format`.
pub(crate) fn markdown_tools_prompt(tools: &ToolSet, format: &str) -> String {
    let mut s = markdown_tools(tools, "You can use these tools:");
    s.push_str(&format!(
        "To call tools, write exactly this, with nothing between the calls:\n{format}\n\n\
         - The tool name must be one of the tools above, exactly as written.\n\
         - The arguments must be one JSON object that follows the tool's Parameters schema.\n"
    ));
    s
}

/// The `## Tools` section of [`markdown_tools_prompt`], opened by `intro`: one `### name`
/// heading per tool, its description and its parameters' JSON Schema.
pub(crate) fn markdown_tools(tools: &ToolSet, intro: &str) -> String {
    let mut s = format!("## Tools\n{intro}\n\n");
    for t in tools.iter() {
        s.push_str(&format!(
            "### {}\nDescription: {}\n\nParameters: {}\n\n",
            t.def.name, t.def.description, t.def.parameters
        ));
    }
    s
}

/// The text between the first `begin` and the `end` after it, trimmed; all of `text`, trimmed,
/// when the markers are not there.
pub(crate) fn between(text: &str, begin: &str, end: &str) -> String {
    let inner = match text.find(begin) {
        Some(b) => {
            let rest = &text[b + begin.len()..];
            rest.find(end).map_or(rest, |e| &rest[..e])
        }
        None => text,
    };
    inner.trim().to_string()
}

/// The payload of a tool result as most protocols wrap it: lines that are one whole tag
/// (`<tool_response name="f">`) and code fences dropped, a one-line `<tag>inner</tag>` opened,
/// and the `content`/`result`/`output` of a JSON wrapper taken out.
pub(crate) fn unwrap_result(wrapped: &str) -> String {
    let kept: Vec<&str> = wrapped
        .lines()
        .filter(|l| {
            let t = l.trim();
            let whole_tag = t.starts_with('<') && t.find('>') == Some(t.len() - 1);
            !(t.starts_with("```") || whole_tag)
        })
        .collect();
    let text = kept.join("\n");
    let text = strip_outer_tag(text.trim());
    if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(text) {
        for key in ["content", "result", "output"] {
            match obj.get(key) {
                Some(Value::String(s)) => return s.clone(),
                Some(v) if obj.contains_key("name") => return v.to_string(),
                _ => {}
            }
        }
    }
    text.to_string()
}

/// `<tag>inner</tag>` on one line gives `inner`.
fn strip_outer_tag(text: &str) -> &str {
    let Some(rest) = text.strip_prefix('<') else {
        return text;
    };
    let Some(close) = rest.find('>') else {
        return text;
    };
    let tag = &rest[..close];
    if tag.is_empty() || tag.contains(' ') {
        return text;
    }
    let end = format!("</{tag}>");
    rest[close + 1..]
        .strip_suffix(end.as_str())
        .map_or(text, str::trim)
}

/// An example value for a schema: the first enum value, a default, or a placeholder of the right
/// type. Objects get their required properties (or the first two).
pub(crate) fn example_args(schema: &Value, root: &Value, depth: usize) -> Value {
    let schema = resolve(schema, root);
    if depth > 4 {
        return Value::Null;
    }
    if let Some(v) = schema.get("default").or_else(|| schema.get("const")) {
        return v.clone();
    }
    if let Some(Value::Array(vals)) = schema.get("enum")
        && let Some(v) = vals.first()
    {
        return v.clone();
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(first) = schema
            .get(key)
            .and_then(|v| v.as_array())
            .and_then(|a| a.first())
        {
            return example_args(first, root, depth + 1);
        }
    }
    let ty = match schema.get("type") {
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .map(str::to_string),
        _ => None,
    };
    let kind = match ty.as_deref().and_then(JsonType::from_name) {
        Some(t) => SchemaType::from(t),
        None => schema_type(schema, root),
    };
    match kind {
        SchemaType::String => Value::String("...".into()),
        SchemaType::Integer => json!(1),
        SchemaType::Number => json!(1.5),
        SchemaType::Boolean => json!(true),
        SchemaType::Null => Value::Null,
        SchemaType::Array => {
            let item = schema
                .get("items")
                .map_or(Value::String("...".into()), |i| {
                    example_args(i, root, depth + 1)
                });
            Value::Array(vec![item])
        }
        SchemaType::Object | SchemaType::Any | SchemaType::Mixed => {
            let mut out = Map::new();
            if let Some(Value::Object(props)) = schema.get("properties") {
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                for (k, v) in props {
                    if required.contains(&k.as_str()) || (required.is_empty() && out.len() < 2) {
                        out.insert(k.clone(), example_args(v, root, depth + 1));
                    }
                }
            }
            Value::Object(out)
        }
    }
}

/// The tools as one JSON array, as most chat templates list them: OpenAI-style function objects
/// (`{"type": "function", "function": {…}}`) when `wrapped`, else plain
/// `{"name", "description", "parameters"}` objects.
pub(crate) fn json_tools(tools: &ToolSet, wrapped: bool) -> String {
    let list: Vec<Value> = tools.iter().map(|t| tool_entry(&t.def, wrapped)).collect();
    Value::Array(list).to_string()
}

/// One tool as a template lists it: an OpenAI-style function object when `wrapped`, else a plain
/// `{"name", "description", "parameters"}` object.
fn tool_entry(def: &ToolDef, wrapped: bool) -> Value {
    let f = json!({"name": def.name, "description": def.description, "parameters": def.parameters});
    if wrapped {
        json!({"type": "function", "function": f})
    } else {
        f
    }
}

/// Reads back a tool entry of either form of [`tool_entry`]; `None` without a name.
pub(crate) fn tool_def(entry: &Value) -> Option<ToolDef> {
    let f = entry.get("function").unwrap_or(entry);
    Some(ToolDef {
        name: f.get("name")?.as_str()?.to_string(),
        description: f
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        parameters: f
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object"})),
    })
}

/// Where a prompt lists the tools and how: what stands before and after the list, whether its
/// entries are OpenAI-style function objects, and how they are laid out. It writes the list and
/// reads it back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ToolList {
    pub begin: &'static str,
    pub end: &'static str,
    pub wrapped: bool,
    pub layout: Layout,
}

/// How a [`ToolList`] lays out its entries.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Layout {
    /// One JSON array ([`json_tools`]).
    Array,
    /// One object a line, each between these markers (`<tool>` and `</tool>`, or nothing)
    /// ([`json_tool_lines`]).
    Lines(&'static str, &'static str),
    /// Indented objects, a blank line after each ([`pretty_tools`]); read back up to where the
    /// JSON ends.
    Pretty,
}

impl ToolList {
    /// OpenAI-style function objects between `begin` and `end`.
    pub(crate) const fn functions(begin: &'static str, end: &'static str) -> ToolList {
        ToolList {
            begin,
            end,
            wrapped: true,
            layout: Layout::Array,
        }
    }

    /// Plain `{"name", "description", "parameters"}` objects between `begin` and `end`.
    pub(crate) const fn plain(begin: &'static str, end: &'static str) -> ToolList {
        ToolList {
            begin,
            end,
            wrapped: false,
            layout: Layout::Array,
        }
    }

    /// The same objects one a line instead of in an array.
    pub(crate) const fn one_a_line(self) -> ToolList {
        self.each_line_in("", "")
    }

    /// The same objects one a line, each between `open` and `close`.
    pub(crate) const fn each_line_in(self, open: &'static str, close: &'static str) -> ToolList {
        ToolList {
            layout: Layout::Lines(open, close),
            ..self
        }
    }

    /// The same objects indented, a blank line after each.
    pub(crate) const fn pretty(self) -> ToolList {
        ToolList {
            layout: Layout::Pretty,
            ..self
        }
    }

    /// The tools between the markers.
    pub(crate) fn write(&self, tools: &ToolSet) -> String {
        let list = match self.layout {
            Layout::Array => json_tools(tools, self.wrapped),
            Layout::Lines(open, close) => json_tool_lines(tools, self.wrapped, open, close),
            Layout::Pretty => pretty_tools(tools, self.wrapped),
        };
        format!("{}{list}{}", self.begin, self.end)
    }

    /// The tools a prompt lists between the markers.
    pub(crate) fn read(&self, system: &str) -> Option<ToolSet> {
        match self.layout {
            Layout::Array => read_json_tools(system, self.begin, self.end),
            Layout::Lines(open, close) => {
                read_json_tool_lines(system, self.begin, self.end, open, close)
            }
            Layout::Pretty => read_pretty_tools(system, self.begin),
        }
    }
}

/// Reads back a JSON array of tools (either form of [`json_tools`]) written between `begin`
/// and `end` in `system`.
pub(crate) fn read_json_tools(system: &str, begin: &str, end: &str) -> Option<ToolSet> {
    let start = system.find(begin)? + begin.len();
    let stop = start + system[start..].find(end)?;
    let list: Vec<Value> = serde_json::from_str(system[start..stop].trim()).ok()?;
    let defs = list.iter().map(tool_def).collect::<Option<Vec<_>>>()?;
    ToolSet::new(defs).ok()
}

/// The tools one JSON object per line, each between `open` and `close` (`<tool>` and `</tool>`
/// in MiniMax's template, nothing in GLM's): OpenAI-style function objects when `wrapped`, else
/// plain `{"name", "description", "parameters"}` objects.
pub(crate) fn json_tool_lines(tools: &ToolSet, wrapped: bool, open: &str, close: &str) -> String {
    tools
        .iter()
        .map(|t| format!("{open}{}{close}\n", tool_entry(&t.def, wrapped)))
        .collect()
}

/// Reads back the tools [`json_tool_lines`] wrote between `begin` and `end` in `system`.
pub(crate) fn read_json_tool_lines(
    system: &str,
    begin: &str,
    end: &str,
    open: &str,
    close: &str,
) -> Option<ToolSet> {
    let start = system.find(begin)? + begin.len();
    let stop = start + system[start..].find(end)?;
    let defs = system[start..stop]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let json = l.strip_prefix(open)?.strip_suffix(close)?;
            tool_def(&serde_json::from_str(json).ok()?)
        })
        .collect::<Option<Vec<_>>>()?;
    ToolSet::new(defs).ok()
}

/// A value as markup formats write it raw: a string as its text, anything else as JSON.
pub(crate) fn value_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// The arguments' JSON as a call writes it: an object, else `{}`.
pub(crate) fn args_json(input: &Value) -> String {
    if input.is_object() {
        input.to_string()
    } else {
        "{}".to_string()
    }
}

/// Arguments' JSON that breaks: the first argument of `input`, then a key with no value
/// (`{"city": "Paris", "oops": }`), what a malformed example call is built from.
pub(crate) fn broken_args(input: &Value) -> String {
    let (key, value) = first_argument(input);
    format!("{{\"{key}\": \"{value}\", \"oops\": }}")
}

/// The first argument of `input` as a key and its text (`input`/`x` when there is none): what a
/// malformed example call is built from.
pub(crate) fn first_argument(input: &Value) -> (String, String) {
    input
        .as_object()
        .and_then(|o| o.iter().next())
        .map(|(k, v)| (k.clone(), value_text(v)))
        .unwrap_or_else(|| ("input".to_string(), "x".to_string()))
}

/// The tools as indented JSON objects, a blank line after each (Llama 3 and xLAM templates):
/// OpenAI-style function objects when `wrapped`, else plain `{"name", "description",
/// "parameters"}` objects.
pub(crate) fn pretty_tools(tools: &ToolSet, wrapped: bool) -> String {
    let mut s = String::new();
    for t in tools.iter() {
        let f = tool_entry(&t.def, wrapped);
        s.push_str(&serde_json::to_string_pretty(&f).unwrap_or_else(|_| f.to_string()));
        s.push_str("\n\n");
    }
    s
}

/// Reads back the tools [`pretty_tools`] wrote after `instructions` in `system` (either form).
pub(crate) fn read_pretty_tools(system: &str, instructions: &str) -> Option<ToolSet> {
    let at = system.find(instructions)? + instructions.len();
    let mut defs = Vec::new();
    for v in serde_json::Deserializer::from_str(&system[at..]).into_iter::<Value>() {
        let Ok(v) = v else { break };
        defs.push(tool_def(&v)?);
    }
    ToolSet::new(defs).ok()
}

/// Calls as one JSON array of envelopes, `[{"name": "f", "arguments": {…}}, …]`, with the keys
/// the family uses (`tool_name`/`parameters` in Command R, …). Arguments that are not an object
/// are written as `{}`.
pub(crate) fn envelope_array(calls: &[(&str, &Value)], name_key: &str, args_key: &str) -> String {
    let items: Vec<String> = calls
        .iter()
        .map(|(name, input)| {
            format!(
                "{{\"{name_key}\": {}, \"{args_key}\": {}}}",
                Value::from(*name),
                args_json(input)
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}

/// A call envelope whose arguments break: a key with no value.
pub(crate) fn malformed_envelope(
    name: &str,
    input: &Value,
    name_key: &str,
    args_key: &str,
) -> String {
    format!(
        "[{{\"{name_key}\": {}, \"{args_key}\": {}}}]",
        Value::from(name),
        broken_args(input)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::spec::{Delimiters, Protocol};

    fn tools() -> ToolSet {
        ToolSet::new(vec![
            ToolDef::new(
                "get_weather",
                "Current weather for a city",
                json!({"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]},"days":{"type":"integer"}},"required":["city","unit"]}),
            ),
            ToolDef::new("search", "Search the web", json!({"type":"object","properties":{"q":{"type":"string"}}})),
        ])
        .unwrap()
    }

    #[test]
    fn a_tool_list_writes_between_its_markers_and_reads_back() {
        for wrapped in [false, true] {
            let list = if wrapped {
                ToolList::functions("<list>", "</list>")
            } else {
                ToolList::plain("<list>", "</list>")
            };
            let written = list.write(&tools());
            assert!(written.starts_with("<list>[{") && written.ends_with("}]</list>"));
            assert_eq!(written.contains("\"function\""), wrapped, "{written}");
            let system = format!("Intro.\n{written}\nMore.");
            assert_eq!(list.read(&system).unwrap().to_json(), tools().to_json());
        }
        assert!(
            ToolList::plain("<list>", "</list>")
                .read("no list here")
                .is_none()
        );
    }

    #[test]
    fn a_tool_list_one_a_line_writes_each_tool_on_its_line_and_reads_back() {
        let lines = ToolList::plain("<list>\n", "</list>").one_a_line();
        let written = lines.write(&tools());
        assert_eq!(written.lines().count(), 4, "{written}");
        assert!(written.starts_with("<list>\n{\"name\"") && written.ends_with("}\n</list>"));
        assert_eq!(lines.read(&written).unwrap().to_json(), tools().to_json());
        let tagged = ToolList::functions("<list>\n", "</list>").each_line_in("<tool>", "</tool>");
        let written = tagged.write(&tools());
        assert!(
            written.contains("\n<tool>{\"type\":\"function\""),
            "{written}"
        );
        assert_eq!(tagged.read(&written).unwrap().to_json(), tools().to_json());
        // A line without its markers is not a tool of this list.
        assert!(tagged.read(&lines.write(&tools())).is_none());
    }

    #[test]
    fn every_prompt_is_recognised_with_its_tools() {
        let mut protocols = Protocol::all();
        let hermes = Protocol::from_name("hermes").unwrap();
        let own = hermes.delimiters().unwrap();
        protocols.push(
            hermes
                .with_delimiters(Delimiters {
                    call_start: "<function_call>".into(),
                    call_end: "</function_call>".into(),
                    ..own
                })
                .unwrap(),
        );
        for p in protocols {
            let prompt = p.system_prompt(&tools());
            let (back, set) = Protocol::detect_from_prompt(&prompt)
                .unwrap_or_else(|| panic!("{} not detected", p.name()));
            assert_eq!(back, p);
            assert_eq!(set.to_json(), tools().to_json());
            assert!(prompt.contains("get_weather"));
        }
        assert!(Protocol::detect_from_prompt("You are a helpful assistant.").is_none());
    }

    #[test]
    fn examples_follow_the_schema() {
        let t = tools();
        let w = t.get("get_weather").unwrap();
        assert_eq!(
            example_args(w.schema(), w.schema(), 0),
            json!({"city":"...","unit":"c"})
        );
        let s = t.get("search").unwrap();
        assert_eq!(example_args(s.schema(), s.schema(), 0), json!({"q":"..."}));
    }

    #[test]
    fn results_are_unwrapped() {
        let cases = [
            (
                "<tool_response>\n{\"name\": \"get_weather\", \"content\": \"sunny\"}\n</tool_response>",
                "sunny",
            ),
            (
                "```tool_response\n{\"name\": \"f\", \"content\": {\"t\": 1}}\n```",
                "{\"t\":1}",
            ),
            (
                "<get_weather_result>21 degrees</get_weather_result>",
                "21 degrees",
            ),
            (
                "<tool_response name=\"f\">\n18 degrees\n</tool_response>",
                "18 degrees",
            ),
            ("plain result", "plain result"),
        ];
        for (wrapped, want) in cases {
            assert_eq!(unwrap_result(wrapped), want, "{wrapped}");
        }
    }
}
