//! Tool definitions, tool sets and tool choice.
//!
//! A tool is a name, a description and a JSON Schema for its arguments. A [`ToolSet`] owns the
//! tools of one request together with their compiled validators, so that every parser and
//! provider coerces and validates against the same schemas. Tool lists come from many places
//! (OpenAI, Anthropic and MCP entries, schemas of any draft, Python type names): what can be
//! read is read, and what had to be changed or left out is kept as a [`ToolWarning`]; only a
//! document that is not JSON, or a tool without a name, is refused. [`ToolChoice`] is checked
//! against the tools before any request leaves (the three pre-send failures of the spec).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::coerce::{Fit, Plain, TextFit};
use crate::error::{ErrorCategory, ProviderError};
use crate::part::Violation;
use crate::schema::{JsonType, SchemaType, is_plain_string, property_schema, schema_type};

mod schemas;

/// One tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// The name the model calls the tool by; unique within a [`ToolSet`] and never empty there.
    pub name: String,
    /// What the tool does, in words for the model; empty when the tools file gives none.
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments object.
    #[serde(default = "empty_object_schema")]
    pub parameters: Value,
}

fn empty_object_schema() -> Value {
    json!({"type": "object", "properties": {}})
}

impl ToolDef {
    /// A definition from its three parts, unchecked ([`ToolSet::new`] checks the name and schema).
    pub fn new(name: &str, description: &str, parameters: Value) -> Self {
        ToolDef {
            name: name.to_string(),
            description: description.to_string(),
            parameters,
        }
    }
}

/// A tool together with its compiled validator.
#[derive(Clone)]
pub struct Tool {
    /// The definition as given.
    pub def: ToolDef,
    /// The same value as `def.parameters`, shared so parsers can hold it without copying.
    schema: Arc<Value>,
    validator: Option<Arc<jsonschema::Validator>>,
    /// The schema read once for arguments that already fit it (see [`Plain`]).
    plain: Arc<Plain>,
    /// The parts of the schema a streamed call's nested objects and arrays were read under,
    /// shared (see [`Tool::share`]).
    shares: Arc<Mutex<Shares>>,
}

/// Parts of a tool's schema, shared, by the address of the part: in the tool's schema or in a share
/// made before (neither is ever freed or changed while the tool lives, so no other value can
/// be where one of them is).
type Shares = HashMap<usize, Arc<Value>>;

/// The most parts of a schema [`Tool::share`] keeps (a schema's nodes, and their nodes in the
/// shares: finite, as `$ref`s resolve into the schema itself; the bound is a guard).
const MAX_SHARES: usize = 1024;

/// Whether `part` is `tree` or one of its nodes.
fn holds(tree: &Value, part: *const Value) -> bool {
    std::ptr::eq(tree, part)
        || match tree {
            Value::Array(items) => items.iter().any(|v| holds(v, part)),
            Value::Object(o) => o.values().any(|v| holds(v, part)),
            _ => false,
        }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool").field("def", &self.def).finish()
    }
}

impl Tool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// The JSON Schema of the arguments (`def.parameters`), which coercion and validation follow.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// The parameters schema, shared.
    pub fn schema_arc(&self) -> Arc<Value> {
        self.schema.clone()
    }

    /// `part` of the schema (or of a share made before), shared: made once per tool, not copied
    /// again for every call that reads a value under it (a nested object's schema was copied,
    /// then dropped, for each streamed call: without that, hermes's and llama3-json's streamed
    /// calls take 1.03× fewer instructions at 64-byte pieces). A value that is no such part is
    /// copied.
    pub(crate) fn share(&self, part: &Value) -> Arc<Value> {
        if std::ptr::eq(&*self.schema, part) {
            return self.schema.clone();
        }
        let mut shares = self.shares.lock().unwrap_or_else(|e| e.into_inner());
        let at = part as *const Value as usize;
        if let Some(s) = shares.get(&at) {
            return s.clone();
        }
        let made = Arc::new(part.clone());
        if shares.len() < MAX_SHARES
            && (holds(&self.schema, part) || shares.values().any(|s| holds(s, part)))
        {
            shares.insert(at, made.clone());
        }
        made
    }

    /// What coercion and validation would make of `input`, when that is simple to tell (see
    /// [`Plain`]): [`Fit::Valid`] means coercion leaves it as it is and [`Tool::validate`] finds
    /// nothing.
    pub(crate) fn fit(&self, input: &Value) -> Fit {
        let fit = self.plain.fit(input);
        #[cfg(debug_assertions)]
        if fit != Fit::Unknown {
            let coerced = crate::coerce::coerce(input.clone(), &self.schema);
            debug_assert!(
                coerced.coercions.is_empty() && coerced.value == *input,
                "told unchanged, coerced to {:?} under {}",
                coerced,
                self.schema
            );
            debug_assert!(
                fit != Fit::Valid || self.validate(input).is_empty(),
                "told valid, invalid under {}",
                self.schema
            );
        }
        fit
    }

    /// The type of argument `name`'s schema (`property_schema`, then `schema_type`), `None`
    /// when the schema gives the argument none. A declared argument whose schema simply names
    /// one type is told by the plain reading at once; debug builds hold that to the walk.
    pub(crate) fn argument_type(&self, name: &str) -> Option<SchemaType> {
        let root = self.schema();
        let walked = || property_schema(root, name, root).map(|s| schema_type(s, root));
        match self.plain_argument_type(name) {
            Some(ty) => {
                debug_assert_eq!(walked(), Some(SchemaType::from(ty)), "{name} under {root}");
                Some(SchemaType::from(ty))
            }
            None => walked(),
        }
    }

    /// Whether argument `name`'s schema is a plain string (`is_plain_string`), told at once as
    /// [`Tool::argument_type`] tells its type.
    pub(crate) fn argument_is_plain_string(&self, name: &str) -> bool {
        let root = self.schema();
        let walked = || property_schema(root, name, root).is_some_and(|s| is_plain_string(s, root));
        match self.plain_argument_type(name) {
            Some(ty) => {
                debug_assert_eq!(walked(), ty == JsonType::String, "{name} under {root}");
                ty == JsonType::String
            }
            None => walked(),
        }
    }

    /// The one type the schema of the declared argument `name` names, when the plain reading
    /// has it (no combinator, `enum`, `const` or `nullable`).
    fn plain_argument_type(&self, name: &str) -> Option<JsonType> {
        self.plain
            .property(name)
            .and_then(|at| self.plain.node_type(at))
    }

    /// What coercion makes of `text` as the value of the declared argument `name` (a markup
    /// format's parameter), when that is simple to tell (see [`Plain::text`]).
    pub(crate) fn text_fit(&self, name: &str, text: &str) -> TextFit {
        match self.plain.property(name) {
            Some(at) => self.plain.text(at, text),
            None => TextFit::Unknown,
        }
    }

    /// The JSON Schema violations of `input`, as JSON pointers and messages.
    pub fn validate(&self, input: &Value) -> Vec<Violation> {
        let Some(v) = &self.validator else {
            return Vec::new();
        };
        // Most inputs are valid: checking is much cheaper than collecting errors.
        if v.is_valid(input) {
            return Vec::new();
        }
        v.iter_errors(input)
            .map(|e| Violation {
                path: e.instance_path().to_string(),
                message: e.to_string(),
            })
            .collect()
    }
}

/// The tools of one request. Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct ToolSet {
    tools: Arc<Vec<Arc<Tool>>>,
    warnings: Arc<Vec<ToolWarning>>,
}

/// Something in a tool definition that was read differently from how it was written, or left
/// out: a non-standard type name, a schema no JSON Schema draft accepts, a description that is
/// not text, a second tool of the same name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolWarning {
    /// The entry's position in the tools document, from 0.
    pub index: usize,
    /// The tool's name.
    pub name: String,
    /// What was done, as one phrase (a JSON pointer into the schema first, when it is about one
    /// place in it).
    pub message: String,
}

impl fmt::Display for ToolWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tool \"{}\": {}", self.name, self.message)
    }
}

/// Why a list of tool definitions cannot be used at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToolsError {
    /// The document is not JSON; holds the JSON parser's message.
    #[error("not valid JSON: {0}")]
    Json(String),
    /// The document nests arrays and objects deeper than the JSON reader goes
    /// (128 levels); holds where it gave up.
    #[error(
        "nested deeper than {JSON_DEPTH_LIMIT} levels (the JSON reader's limit), {0}: a schema this deep cannot be read"
    )]
    TooDeep(String),
    /// The document is JSON but holds no list of tools (an array, `{"tools": […]}` or one tool).
    #[error("expected a JSON array of tools")]
    NotAnArray,
    /// An entry without a usable name (not an object, no name, a name that is not a string or
    /// is empty): nothing could call it.
    #[error("tool {index}: {problem}")]
    BadEntry {
        /// The entry's position in the array, from 0.
        index: usize,
        /// What is wrong, as one phrase.
        problem: String,
    },
    /// Two definitions given to [`ToolSet::new`] share this name, so a call to it would be
    /// ambiguous (a request with them is refused before it is sent). A tools file keeps the
    /// first and warns about the others instead.
    #[error("two tools are named \"{0}\"")]
    Duplicate(String),
}

/// How deep serde_json reads nested arrays and objects before it gives up.
pub(crate) const JSON_DEPTH_LIMIT: usize = 128;

/// Why a tool name cannot be used: a control character (a newline, an escape sequence) would
/// reach the model's prompt, a terminal or a log as a control, not as text.
fn name_problem(name: &str) -> Option<String> {
    let c = name.chars().find(|c| c.is_control())?;
    let shown: String = name
        .chars()
        .flat_map(char::escape_default)
        .take(80)
        .collect();
    Some(format!(
        "the name \"{shown}\" holds a control character (U+{:04X}); a tool name is plain text",
        c as u32
    ))
}

impl ToolSet {
    /// Checks and compiles the definitions. A definition without a name, or two of one name, is
    /// refused; everything else is read as well as it can be, with a [`ToolWarning`] for what was
    /// changed: type names outside JSON Schema's read as theirs, a schema that no draft accepts
    /// kept unvalidated.
    pub fn new(defs: Vec<ToolDef>) -> Result<Self, ToolsError> {
        Self::with_warnings(defs, Vec::new(), false, true)
    }

    /// `dedupe`: a second tool of a name is left out with a warning, not refused.
    /// `plain_names`: a name with a control character is refused.
    fn with_warnings(
        defs: Vec<ToolDef>,
        mut warnings: Vec<ToolWarning>,
        dedupe: bool,
        plain_names: bool,
    ) -> Result<Self, ToolsError> {
        let mut seen = HashSet::new();
        let mut tools = Vec::with_capacity(defs.len());
        for (index, mut def) in defs.into_iter().enumerate() {
            if def.name.trim().is_empty() {
                return Err(ToolsError::BadEntry {
                    index,
                    problem: "the name is empty".into(),
                });
            }
            if let Some(problem) = name_problem(&def.name).filter(|_| plain_names) {
                return Err(ToolsError::BadEntry { index, problem });
            }
            let mut warn = |message: String| {
                warnings.push(ToolWarning {
                    index,
                    name: def.name.clone(),
                    message,
                })
            };
            if !seen.insert(def.name.clone()) {
                if !dedupe {
                    return Err(ToolsError::Duplicate(def.name));
                }
                warn(format!(
                    "a second tool named \"{}\" (entry {index}) is left out",
                    def.name
                ));
                continue;
            }
            let checked = schemas::check(&def.parameters);
            for w in checked.warnings {
                warn(w);
            }
            def.parameters = checked.schema;
            tools.push(Arc::new(Tool {
                schema: Arc::new(def.parameters.clone()),
                plain: Arc::new(Plain::new(&def.parameters)),
                shares: Arc::default(),
                def,
                validator: checked.validator.map(Arc::new),
            }));
        }
        warnings.sort_by_key(|w| w.index);
        Ok(ToolSet {
            tools: Arc::new(tools),
            warnings: Arc::new(warnings),
        })
    }

    /// What was read differently from how it was written, or left out, in document order.
    pub fn warnings(&self) -> &[ToolWarning] {
        &self.warnings
    }

    /// A set with no tools, as a request without tools carries. A call a parser still finds then
    /// names an unknown tool and comes with an `unknown-tool` error part.
    pub fn empty() -> Self {
        ToolSet::default()
    }

    /// Parses a tools document: a JSON array of `{name, description, parameters}` entries, of
    /// OpenAI's `{type: "function", function: {…}}` entries, of Anthropic's `{name,
    /// input_schema}` or of MCP's `{name, inputSchema}` (also an MCP `{"tools": […]}` listing, or
    /// one tool alone, read as a list of one with a warning). Refused only when it is not JSON
    /// (or nested too deep to read), or a tool has no usable name (empty, or with a control
    /// character): a second tool of a name is left out with a warning, and the rest is read as
    /// [`ToolSet::new`] reads it.
    /// A UTF-8 byte order mark before the document is skipped.
    pub fn from_json_text(text: &str) -> Result<Self, ToolsError> {
        let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
        let value: Value = serde_json::from_str(text).map_err(|e| {
            // serde_json says "recursion limit exceeded" for valid JSON nested too deep.
            if e.to_string().starts_with("recursion limit exceeded") {
                ToolsError::TooDeep(format!("at line {}, column {}", e.line(), e.column()))
            } else {
                ToolsError::Json(e.to_string())
            }
        })?;
        Self::from_document(&value, true)
    }

    /// Like [`ToolSet::from_json_text`], for a document already parsed, except that names are
    /// taken as they are (a control character included): for a caller that makes names fit
    /// itself, as the MCP catalog does with a server's listing.
    pub fn from_json(value: &Value) -> Result<Self, ToolsError> {
        Self::from_document(value, false)
    }

    fn from_document(value: &Value, plain_names: bool) -> Result<Self, ToolsError> {
        let entries: &[Value] = match value {
            Value::Array(entries) => entries,
            Value::Object(o) => match o.get("tools") {
                Some(Value::Array(entries)) => entries,
                _ if o.contains_key("name") || o.contains_key("function") => {
                    std::slice::from_ref(value)
                }
                _ => return Err(ToolsError::NotAnArray),
            },
            _ => return Err(ToolsError::NotAnArray),
        };
        let mut defs = Vec::with_capacity(entries.len());
        let mut warnings = Vec::new();
        for (index, entry) in entries.iter().enumerate() {
            defs.push(def_from_entry(index, entry, &mut warnings)?);
        }
        if matches!(value, Value::Object(o) if !o.contains_key("tools")) {
            warnings.push(ToolWarning {
                index: 0,
                name: defs[0].name.clone(),
                message: "the document is one tool, not an array of tools: read as a list of one"
                    .into(),
            });
        }
        Self::with_warnings(defs, warnings, true, plain_names)
    }

    /// Reads a tools file; the error is one line naming the file and the problem. The warnings
    /// are the set's ([`ToolSet::warnings`]).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = std::fs::read(path).map_err(|e| format!("{}: {}", path.display(), e))?;
        let text =
            String::from_utf8(text).map_err(|_| format!("{}: not UTF-8 text", path.display()))?;
        Self::from_json_text(&text).map_err(|e| format!("{}: {}", path.display(), e))
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// The tools, in the order they were defined.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter().map(|t| t.as_ref())
    }

    /// The tool named `name` (exact, case-sensitive match); `None` for an unknown tool.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.get_arc(name).map(|t| t.as_ref())
    }

    /// The tool named `name`, shared (parsers keep it for the length of a call).
    pub fn get_arc(&self, name: &str) -> Option<&Arc<Tool>> {
        self.tools.iter().find(|t| t.def.name == name)
    }

    /// Copies of the definitions, in order.
    pub fn defs(&self) -> Vec<ToolDef> {
        self.tools.iter().map(|t| t.def.clone()).collect()
    }

    /// The tools as a JSON array of `{name, description, parameters}`.
    pub fn to_json(&self) -> Value {
        Value::Array(
            self.tools
                .iter()
                .map(|t| serde_json::to_value(&t.def).unwrap_or(Value::Null))
                .collect(),
        )
    }

    /// The longest tool name, in bytes (bounds how much text a scanner holds back).
    pub fn max_name_len(&self) -> usize {
        self.tools
            .iter()
            .map(|t| t.def.name.len())
            .max()
            .unwrap_or(0)
    }
}

fn def_from_entry(
    index: usize,
    entry: &Value,
    warnings: &mut Vec<ToolWarning>,
) -> Result<ToolDef, ToolsError> {
    let bad = |problem: &str| ToolsError::BadEntry {
        index,
        problem: problem.to_string(),
    };
    let Value::Object(obj) = entry else {
        return Err(bad("expected an object"));
    };
    // OpenAI's wrapper: {type: "function", function: {name, description, parameters}}.
    let obj: &Map<String, Value> = match obj.get("function") {
        Some(Value::Object(inner)) if obj.get("name").is_none() => inner,
        Some(_) if obj.get("name").is_none() => return Err(bad("\"function\" must be an object")),
        _ => obj,
    };
    let name = match obj.get("name") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err(bad("\"name\" must be a string")),
        None => return Err(bad("missing \"name\"")),
    };
    if name.trim().is_empty() {
        return Err(bad("the name is empty"));
    }
    let description = match obj.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            warnings.push(ToolWarning {
                index,
                name: name.clone(),
                message: "\"description\" is not a string and is left out".into(),
            });
            String::new()
        }
    };
    let parameters = ["parameters", "input_schema", "inputSchema"]
        .iter()
        .find_map(|k| obj.get(*k))
        .cloned()
        .unwrap_or_else(empty_object_schema);
    Ok(ToolDef {
        name,
        description,
        parameters,
    })
}

/// How the model may use the tools.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "type", content = "name")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call tools.
    None,
    /// The model must call this tool.
    Tool(String),
}

impl ToolChoice {
    /// Parses the command-line form: `auto`, `required`, `none` or `tool:NAME`.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(ToolChoice::Auto),
            "required" => Ok(ToolChoice::Required),
            "none" => Ok(ToolChoice::None),
            _ => match s.strip_prefix("tool:") {
                Some(name) if !name.is_empty() => Ok(ToolChoice::Tool(name.to_string())),
                _ => Err(format!(
                    "unknown tool choice \"{s}\" (expected auto, required, none or tool:NAME)"
                )),
            },
        }
    }

    /// The short label used on screen and on the command line.
    pub fn label(&self) -> String {
        match self {
            ToolChoice::Auto => "auto".into(),
            ToolChoice::Required => "required".into(),
            ToolChoice::None => "none".into(),
            ToolChoice::Tool(name) => format!("tool:{name}"),
        }
    }

    /// The pre-send check: `required` and a named tool need tools, and a named tool must be
    /// among them. A failure is a `provider_invalid_request`, and no request may be sent.
    pub fn validate(&self, tools: &ToolSet) -> Result<(), ProviderError> {
        let fail = |m: String| Err(ProviderError::new(ErrorCategory::ProviderInvalidRequest, m));
        match self {
            ToolChoice::Required if tools.is_empty() => fail(
                "tool_choice \"required\" needs at least one tool, and no tools were given".into(),
            ),
            ToolChoice::Tool(name) if tools.is_empty() => fail(format!(
                "tool_choice forces the tool \"{name}\", and no tools were given"
            )),
            ToolChoice::Tool(name) if tools.get(name).is_none() => fail(format!(
                "tool_choice forces the tool \"{name}\", which is not among the tools ({})",
                tools
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => Ok(()),
        }
    }
}

impl fmt::Display for ToolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part of the schema is shared once per tool (the same `Arc` for every call); a value
    /// that is no part of it is copied, never kept.
    #[test]
    fn a_part_of_the_schema_is_shared_once() {
        let tools = ToolSet::new(vec![ToolDef::new(
            "t",
            "",
            json!({"type":"object","properties":{"meta":{"type":"object","properties":{
                "tags":{"type":"array","items":{"type":"string"}}}}}}),
        )])
        .unwrap();
        let tool = tools.get("t").unwrap();
        let root = tool.schema();
        assert!(Arc::ptr_eq(&tool.share(root), &tool.schema_arc()));
        let meta = &root["properties"]["meta"];
        let first = tool.share(meta);
        assert_eq!(*first, *meta);
        assert!(Arc::ptr_eq(&first, &tool.share(meta)));
        // A part of a share is shared too.
        let tags = &first["properties"]["tags"];
        assert!(Arc::ptr_eq(&tool.share(tags), &tool.share(tags)));
        // A value that is not part of the schema: a copy each time.
        let other = json!({"type":"string"});
        let a = tool.share(&other);
        assert_eq!(*a, other);
        assert!(!Arc::ptr_eq(&a, &tool.share(&other)));
        assert_eq!(tool.shares.lock().unwrap().len(), 2);
    }

    fn weather() -> ToolDef {
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
        )
    }

    #[test]
    fn loads_plain_and_openai_entries() {
        let text = r#"[
          {"name":"a","description":"A","parameters":{"type":"object"}},
          {"type":"function","function":{"name":"b","parameters":{"type":"object","properties":{"x":{"type":"integer"}}}}},
          {"name":"c","input_schema":{"type":"object"}},
          {"name":"d"}
        ]"#;
        let set = ToolSet::from_json_text(text).unwrap();
        let names: Vec<_> = set.iter().map(|t| t.name().to_string()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        assert_eq!(
            set.get("b").unwrap().schema()["properties"]["x"]["type"],
            "integer"
        );
        assert_eq!(set.get("d").unwrap().schema(), &empty_object_schema());
    }

    #[test]
    fn only_non_json_or_a_nameless_tool_refuses_the_document() {
        let cases = [
            ("{", "not valid JSON"),
            ("{}", "expected a JSON array"),
            ("3", "expected a JSON array"),
            ("[1]", "tool 0: expected an object"),
            (r#"[{"description":"x"}]"#, "tool 0: missing \"name\""),
            (r#"[{"name":" "}]"#, "the name is empty"),
            (
                r#"[{"name":"a"},{"name":3}]"#,
                "tool 1: \"name\" must be a string",
            ),
        ];
        for (text, want) in cases {
            let err = ToolSet::from_json_text(text).unwrap_err().to_string();
            assert!(err.contains(want), "{text}: got {err:?}, want {want:?}");
        }
    }

    #[test]
    fn a_set_built_in_code_refuses_two_tools_of_one_name() {
        let err = ToolSet::new(vec![weather(), weather()]).unwrap_err();
        assert_eq!(err, ToolsError::Duplicate("get_weather".into()));
    }

    #[test]
    fn odd_tools_are_read_with_warnings() {
        let text = r#"[
          {"name":"a","parameters":{"type":"object","properties":{"x":{"type":"wat"}}}},
          {"name":"b","parameters":3},
          {"name":"a","parameters":{}},
          {"name":"c","description":7,"parameters":{"type":"object","properties":{"p":{"type":"float"}}}},
          {"name":"d","input_schema":{"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}]}}}}
        ]"#;
        let set = ToolSet::from_json_text(text).unwrap();
        let names: Vec<_> = set.iter().map(|t| t.name().to_string()).collect();
        assert_eq!(names, ["a", "b", "c", "d"]);
        let shown: Vec<String> = set.warnings().iter().map(|w| w.to_string()).collect();
        assert_eq!(shown.len(), 5, "{shown:#?}");
        assert!(shown[0].starts_with("tool \"a\": parameters is not a valid JSON Schema"));
        assert!(shown[1].starts_with("tool \"b\": parameters is a number"));
        assert!(shown[2].contains("a second tool named \"a\""));
        assert!(shown[3].contains("\"description\" is not a string"));
        assert_eq!(
            shown[4],
            "tool \"c\": /properties/p/type: type \"float\" is read as \"number\""
        );
        // The tool with a broken schema is still usable, unvalidated.
        assert!(set.get("a").unwrap().validate(&json!({"x": 1})).is_empty());
        assert_eq!(
            set.get("c").unwrap().schema()["properties"]["p"]["type"],
            "number"
        );
        assert!(
            !set.get("c")
                .unwrap()
                .validate(&json!({"p": "x"}))
                .is_empty()
        );
        // A draft-07 tuple is read under draft 7.
        let d = set.get("d").unwrap();
        assert!(d.validate(&json!({"t": ["x"]})).is_empty());
        assert!(!d.validate(&json!({"t": [1]})).is_empty());
    }

    #[test]
    fn mcp_listings_and_single_tools_are_documents_too() {
        let mcp = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}"#;
        let set = ToolSet::from_json_text(mcp).unwrap();
        assert_eq!(
            set.get("echo").unwrap().schema()["properties"]["text"]["type"],
            "string"
        );
        let one = r#"{"name":"solo","input_schema":{"type":"object"}}"#;
        assert_eq!(ToolSet::from_json_text(one).unwrap().len(), 1);
        // Read, and said (issue 25): a list of one was meant, most likely.
        assert_eq!(ToolSet::from_json_text(one).unwrap().warnings().len(), 1);
    }

    #[test]
    fn load_names_the_file() {
        let dir = std::env::temp_dir().join(format!("toolscope-tools-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.json");
        std::fs::write(&path, "[{]").unwrap();
        let err = ToolSet::load(&path).unwrap_err();
        assert!(err.starts_with(&path.display().to_string()), "{err}");
        assert!(!err.contains('\n'));
        let missing = ToolSet::load(&dir.join("missing.json")).unwrap_err();
        assert!(missing.contains("missing.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn validation_reports_json_pointers() {
        let set = ToolSet::new(vec![weather()]).unwrap();
        let t = set.get("get_weather").unwrap();
        assert!(t.validate(&json!({"city":"Oslo"})).is_empty());
        let v = t.validate(&json!({"city": 3}));
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].path, "/city");
        assert_eq!(t.validate(&json!({}))[0].path, "");
    }

    #[test]
    fn tool_choice_parses_the_command_line_forms() {
        assert_eq!(ToolChoice::parse("auto"), Ok(ToolChoice::Auto));
        assert_eq!(ToolChoice::parse("required"), Ok(ToolChoice::Required));
        assert_eq!(ToolChoice::parse("none"), Ok(ToolChoice::None));
        assert_eq!(
            ToolChoice::parse("tool:x"),
            Ok(ToolChoice::Tool("x".into()))
        );
        assert!(ToolChoice::parse("tool:").is_err());
        assert!(ToolChoice::parse("any").is_err());
        for c in [ToolChoice::Auto, ToolChoice::Tool("get_weather".into())] {
            assert_eq!(ToolChoice::parse(&c.label()), Ok(c));
        }
    }

    #[test]
    fn tool_choice_pre_send_validation() {
        let none = ToolSet::empty();
        let some = ToolSet::new(vec![weather()]).unwrap();
        let invalid = |c: ToolChoice, t: &ToolSet| {
            let e = c.validate(t).unwrap_err();
            assert_eq!(e.category, ErrorCategory::ProviderInvalidRequest);
            e.message
        };
        assert!(invalid(ToolChoice::Required, &none).contains("required"));
        assert!(invalid(ToolChoice::Tool("get_weather".into()), &none).contains("no tools"));
        assert!(invalid(ToolChoice::Tool("search".into()), &some).contains("not among"));
        assert!(ToolChoice::Auto.validate(&none).is_ok());
        assert!(ToolChoice::None.validate(&none).is_ok());
        assert!(ToolChoice::Required.validate(&some).is_ok());
        assert!(
            ToolChoice::Tool("get_weather".into())
                .validate(&some)
                .is_ok()
        );
    }

    /// Issue 25, point 9: a tools file saved with a UTF-8 byte order mark (as some Windows
    /// editors do) is read like one without.
    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = "\u{FEFF}[{\"name\": \"get_weather\", \"parameters\": {}}]";
        let set = ToolSet::from_json_text(text).unwrap();
        assert_eq!(set.defs()[0].name, "get_weather");
        assert!(set.warnings().is_empty());
    }

    /// One tool object where an array was expected is read as a list of one, with a warning
    /// that says so.
    #[test]
    fn one_tool_alone_is_read_with_a_warning() {
        let set = ToolSet::from_json_text(r#"{"name": "get_weather", "parameters": {}}"#).unwrap();
        assert_eq!(set.len(), 1);
        let w: Vec<String> = set.warnings().iter().map(|w| w.to_string()).collect();
        assert_eq!(
            w,
            [
                "tool \"get_weather\": the document is one tool, not an array of tools: read as a list of one"
            ]
        );
        // An MCP listing ({"tools": [...]}) is a list already: no warning.
        let listing = ToolSet::from_json_text(r#"{"tools": [{"name": "a", "inputSchema": {}}]}"#);
        assert!(listing.unwrap().warnings().is_empty());
    }

    /// A name with a control character (a stray newline, an escape sequence) is refused with
    /// the character named.
    #[test]
    fn a_name_with_control_characters_is_refused() {
        for (name, says) in [
            ("get\nweather", "U+000A"),
            ("\u{1b}[31mred", "U+001B"),
            ("tab\there", "U+0009"),
            ("del\u{7f}", "U+007F"),
            ("c1\u{85}", "U+0085"),
        ] {
            let text = serde_json::json!([{"name": name, "parameters": {}}]).to_string();
            let e = ToolSet::from_json_text(&text).unwrap_err().to_string();
            assert!(e.starts_with("tool 0: the name "), "{e}");
            assert!(e.contains(says), "{name:?}: {e}");
            assert!(e.contains("control character"), "{e}");
            assert!(
                !e.contains('\u{1b}') && !e.contains('\n'),
                "the message is one clean line: {e:?}"
            );
        }
    }

    /// A schema nested deeper than the JSON reader's limit says so, instead of "not valid JSON".
    #[test]
    fn a_schema_too_deep_to_read_says_so() {
        let mut schema = String::from("{}");
        for _ in 0..200 {
            schema = format!("{{\"type\": \"object\", \"properties\": {{\"x\": {schema}}}}}");
        }
        let text = format!("[{{\"name\": \"deep\", \"parameters\": {schema}}}]");
        let e = ToolSet::from_json_text(&text).unwrap_err().to_string();
        assert!(e.contains("nested deeper than"), "{e}");
        assert!(e.contains("128"), "{e}");
        assert!(!e.starts_with("not valid JSON"), "{e}");
        // Broken JSON is still named as such.
        let e = ToolSet::from_json_text("[{").unwrap_err().to_string();
        assert!(e.starts_with("not valid JSON"), "{e}");
    }
}
