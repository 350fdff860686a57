//! The arguments of an XML-shaped call (morph-xml, qwen3-coder) as their elements arrive.
//!
//! An argument element may repeat, making an array, when its schema allows one (or gives no
//! schema); repeating any other argument makes the call malformed. Once an argument that may
//! still repeat has appeared, the call holds it and every argument after it until the call ends,
//! so that the input deltas stay a prefix of the final input; arguments before it are written as
//! they complete.

use compact_str::CompactString;
use serde_json::Value;

use crate::args::ArgsWriter;
use crate::json::JsonSink;
use crate::part::Coercion;
use crate::schema::{SchemaType, schema_type};
use crate::tool::Tool;

/// Arguments seen so far, in order, with the values held for the end of the call.
#[derive(Default)]
pub(crate) struct HeldArgs {
    /// Each argument's name (most are short: kept inline) and its values; the list keeps its
    /// room from one call to the next.
    params: Vec<(CompactString, Vec<Value>)>,
    /// The arguments whose values the format stated are text (see `ArgsWriter::stated_text`).
    stated_text: Vec<String>,
    holding: bool,
}

impl HeldArgs {
    /// A new argument element opens. `tool` is `None` for a tool that is not among the tools.
    pub(crate) fn open(
        &mut self,
        tool: Option<&Tool>,
        name: &str,
        what: &str,
    ) -> Result<(), String> {
        let repeatable = repeatable(tool, name);
        if self.params.iter().any(|(n, _)| n == name) {
            if !repeatable {
                return Err(format!(
                    "the {what} \"{name}\" is given twice and its schema is not an array"
                ));
            }
        } else {
            self.params.push((name.into(), Vec::new()));
        }
        self.holding |= repeatable;
        Ok(())
    }

    /// Whether an element for argument `name` could open now: the argument is not set yet, or
    /// it may repeat (see [`HeldArgs::open`]).
    pub(crate) fn can_open(&self, tool: Option<&Tool>, name: &str) -> bool {
        !self.params.iter().any(|(n, _)| n == name) || repeatable(tool, name)
    }

    /// Whether no argument element was seen.
    pub(crate) fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Whether argument `name` of `tool` is a plain string that can stream into the writer now.
    pub(crate) fn streams(&self, tool: Option<&Tool>, name: &str) -> bool {
        !self.holding && tool.is_some_and(|t| t.argument_is_plain_string(name))
    }

    /// A complete argument value: held, or written now.
    pub(crate) fn complete(&mut self, writer: &mut ArgsWriter, name: &str, value: Value) {
        if self.holding {
            if let Some((_, values)) = self.params.iter_mut().find(|(n, _)| n == name) {
                values.push(value);
            }
        } else {
            let _ = writer.key(name);
            let _ = writer.scalar(value);
        }
    }

    /// A complete argument value the format states is text (K2 Horizon's
    /// `<ifm|arg_type>string`, DSML's `string="true"`): where the schema does not declare the
    /// argument, it stays text.
    pub(crate) fn complete_text(&mut self, writer: &mut ArgsWriter, name: &str, value: String) {
        if self.holding {
            if !self.stated_text.iter().any(|n| n == name) {
                self.stated_text.push(name.to_string());
            }
            self.complete(writer, name, Value::String(value));
        } else {
            let _ = writer.key(name);
            let _ = writer.stated_text(Value::String(value));
        }
    }

    /// The call ends with one argument that wraps all the others (`<param name="arguments">{…}
    /// </param>`): an argument named `arguments`, `parameters` or `properties` that the schema
    /// does not declare (while it declares others), whose value is a JSON object. Its members
    /// become the arguments, and the change is returned to be reported with the coercions.
    pub(crate) fn unwrap_wrapper(&mut self, tool: Option<&Tool>) -> Option<Coercion> {
        let [(name, values)] = self.params.as_slice() else {
            return None;
        };
        let [value] = values.as_slice() else {
            return None;
        };
        if !WRAPPERS.contains(&name.as_str()) || declares(tool, name) || tool.is_none() {
            return None;
        }
        let object = match value {
            Value::String(s) => match crate::json::parse_relaxed(s.trim()) {
                Ok(Value::Object(o)) => o,
                _ => return None,
            },
            Value::Object(o) => o.clone(),
            _ => return None,
        };
        let change = Coercion {
            path: String::new(),
            from: serde_json::json!({ name.as_str(): value }),
            to: Value::Object(object.clone()),
        };
        self.params = object
            .into_iter()
            .map(|(k, v)| (k.into(), vec![v]))
            .collect();
        self.stated_text.clear();
        Some(change)
    }

    /// The call ends: the held arguments are written in the order they first appeared. One
    /// occurrence is coerced as it is (a CSV string or `<item>` children become an array
    /// there); several are the items of an array.
    pub(crate) fn write_into(&mut self, writer: &mut ArgsWriter) {
        for (name, mut values) in self.params.drain(..) {
            let value = match values.len() {
                0 => continue,
                1 => values.pop().unwrap_or(Value::Null),
                _ => Value::Array(values),
            };
            let _ = writer.key(&name);
            let _ = if value.is_string() && self.stated_text.iter().any(|t| *t == name) {
                writer.stated_text(value)
            } else {
                writer.scalar(value)
            };
        }
        self.stated_text.clear();
    }
}

/// The names a model gives one argument that wraps all the others.
const WRAPPERS: [&str; 3] = ["arguments", "parameters", "properties"];

/// Whether argument `name` of `tool` may be given several times (its items making an array).
fn repeatable(tool: Option<&Tool>, name: &str) -> bool {
    match tool {
        None => true,
        Some(t) => t
            .argument_type(name)
            .is_none_or(|ty| matches!(ty, SchemaType::Array | SchemaType::Mixed | SchemaType::Any)),
    }
}

/// Whether `name` is an argument `tool` declares, or could take: a tool that is not among the
/// tools, or whose schema lists no properties or allows any, takes any name.
pub(crate) fn declares(tool: Option<&Tool>, name: &str) -> bool {
    let Some(t) = tool else {
        return true;
    };
    let root = crate::schema::resolve(t.schema(), t.schema());
    t.argument_type(name).is_some()
        || crate::schema::field(root, "properties").is_none()
        || crate::schema::field(root, "additionalProperties")
            == Some(&serde_json::Value::Bool(true))
}

/// The argument a call's whole body goes to when the body is plain text instead of argument
/// elements (`<send_email>Hi Bob, …</send_email>`), if the schema leaves no doubt: its only
/// string property, else its only required string property.
pub(crate) fn body_argument(tool: &Tool) -> Option<String> {
    let root = tool.schema();
    let schema = crate::schema::resolve(root, root);
    let props = crate::schema::field(schema, "properties")?.as_object()?;
    let is_string = |name: &str| {
        props
            .get(name)
            .is_some_and(|s| schema_type(s, root) == SchemaType::String)
    };
    let only = |mut names: Vec<&str>| (names.len() == 1).then(|| names.remove(0).to_string());
    let strings: Vec<&str> = props
        .keys()
        .map(String::as_str)
        .filter(|k| is_string(k))
        .collect();
    if let Some(one) = only(strings) {
        return Some(one);
    }
    let required: Vec<&str> = schema
        .get("required")
        .and_then(|r| r.as_array())
        .map(|r| {
            r.iter()
                .filter_map(|k| k.as_str())
                .filter(|k| is_string(k))
                .collect()
        })
        .unwrap_or_default();
    only(required)
}
