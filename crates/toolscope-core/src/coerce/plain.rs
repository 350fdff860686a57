//! A tool's schema read once, for the common case of arguments that already fit it.
//!
//! Most calls a model writes have, all the way down, the one type each schema names. Coercion
//! then changes nothing and validation finds nothing, but telling so walks the value against the
//! schema's JSON (a `$ref` resolved and a keyword looked up at every node, a property found by
//! hashing its name) and then again in the validator. [`Plain`] is that schema read once into a
//! tree of the nodes this common case meets, so one walk of the value tells both:
//!
//! - [`Fit::Unchanged`]: coercion leaves the value as it is and records nothing. This is exactly
//!   what `unchanged` in the module above tells, for the schemas it follows (one type name, no
//!   combinator, `enum`, `const` or `nullable`, every key a declared property); anything else is
//!   [`Fit::Unknown`], and coercion runs as ever.
//! - [`Fit::Valid`]: moreover the value is valid against the schema, because every node on the
//!   way has no keyword that validation checks beyond its type, its declared properties and its
//!   `required` names (no `$ref`, bounds, patterns, formats or annotations a draft reads
//!   differently), and an integer is written as one.
//!
//! Debug builds check both answers against the full paths.

use std::collections::HashMap;

use serde_json::Value;

use super::{Grammar, enum_options, has_combinator, json_string_literal, parse_bool, parse_number};
use crate::json::parse_relaxed;
use crate::schema::{JsonType, field, map_field, resolve};

/// How deep a value is followed (as coercion's own check does); deeper values are left to the
/// full paths.
const MAX_DEPTH: usize = 64;
/// The keywords a node may have for a value it fits to be known valid: those validation reads
/// here (`type`, `properties`, `required`, `items`, and `additionalProperties`, which never
/// applies to a value whose keys are all declared), definitions that apply only where referred
/// to, and annotations no draft validates.
const BARE_KEYWORDS: [&str; 15] = [
    "type",
    "properties",
    "required",
    "items",
    "additionalProperties",
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "$schema",
    "$defs",
    "definitions",
    "deprecated",
    "readOnly",
];

/// What [`Plain::fit`] tells of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Nothing simple: coerce and validate as ever.
    Unknown,
    /// Coercion leaves the value as it is, recording nothing.
    Unchanged,
    /// Coercion leaves it as it is, and it is valid against the schema.
    Valid,
}

/// What [`Plain::text`] tells of a text written as an argument's value.
#[derive(Debug, PartialEq)]
pub(crate) enum TextFit {
    /// Nothing simple: coerce as ever.
    Unknown,
    /// Coercion leaves the text as it is, recording nothing.
    Kept,
    /// Coercion makes the text this value, a change it records.
    Becomes(Value),
}

/// A tool's parameters schema read for [`Plain::fit`]: its nodes, the first the root. A schema
/// value is read once wherever it is referred to from, so a schema that refers to itself is a
/// node that refers to itself.
#[derive(Debug)]
pub(crate) struct Plain {
    nodes: Vec<Node>,
}

#[derive(Debug)]
enum Node {
    /// A schema this reading does not follow: no value fits it simply.
    Opaque,
    Scalar {
        ty: JsonType,
        bare: bool,
    },
    Object {
        props: Box<[(Box<str>, usize)]>,
        /// The `required` names as a mask of `props` indices; `None` when they cannot be told
        /// so (not a list of names, a name that is no property, more than 64 properties).
        required: Option<u64>,
        bare: bool,
    },
    Array {
        /// `None`: no schema for the items, so only an empty array fits.
        items: Option<usize>,
        bare: bool,
    },
}

impl Plain {
    /// Reads `schema` (a tool's parameters schema, its own `$ref` root).
    pub(crate) fn new(schema: &Value) -> Plain {
        let mut reader = Reader {
            root: schema,
            nodes: Vec::new(),
            read: HashMap::new(),
        };
        reader.read(schema);
        Plain {
            nodes: reader.nodes,
        }
    }

    /// What coercion and validation would make of `value`, when that is simple to tell.
    pub(crate) fn fit(&self, value: &Value) -> Fit {
        let mut valid = true;
        if !self.fits(0, value, 0, &mut valid) {
            Fit::Unknown
        } else if valid {
            Fit::Valid
        } else {
            Fit::Unchanged
        }
    }

    /// The node of the root object's declared property `name`, if the root is a simple object
    /// schema that declares it.
    pub(crate) fn property(&self, name: &str) -> Option<usize> {
        match self.nodes.first()? {
            Node::Object { props, .. } => props
                .iter()
                .find(|(key, _)| **key == *name)
                .map(|&(_, at)| at),
            _ => None,
        }
    }

    /// The one type node `at` names, when it is a simple node (see the module).
    pub(crate) fn node_type(&self, at: usize) -> Option<JsonType> {
        match &self.nodes[at] {
            Node::Opaque => None,
            Node::Scalar { ty, .. } => Some(*ty),
            Node::Object { .. } => Some(JsonType::Object),
            Node::Array { .. } => Some(JsonType::Array),
        }
    }

    /// What coercion makes of `text`, a string, as the value of node `at` one level below the
    /// root (a markup format's parameter, whose value is always text), when that is simple to
    /// tell. This follows coercion's conversion of a string under one type name: a string stays
    /// a string; a number or a boolean is read from the text or the text stays as it is; an
    /// object or an array is read as JSON and known only when it then fits its node simply
    /// (coercion would descend into it and change nothing). A text that is itself a JSON string
    /// literal (double-encoded), and any other case, is left to coercion.
    pub(crate) fn text(&self, at: usize, text: &str) -> TextFit {
        let Node::Scalar { ty, .. } = &self.nodes[at] else {
            return self.structure(at, text);
        };
        if *ty == JsonType::String {
            return TextFit::Kept;
        }
        if json_string_literal(text).is_some() {
            return TextFit::Unknown;
        }
        let read = match ty {
            JsonType::Integer | JsonType::Number => {
                parse_number(text, *ty == JsonType::Integer, Grammar::Lenient).map(Value::Number)
            }
            JsonType::Boolean => parse_bool(text).map(Value::Bool),
            _ => return TextFit::Unknown,
        };
        read.map_or(TextFit::Kept, TextFit::Becomes)
    }

    /// [`Plain::text`] for an object or array node.
    fn structure(&self, at: usize, text: &str) -> TextFit {
        let object = match &self.nodes[at] {
            Node::Object { .. } => true,
            Node::Array { .. } => false,
            _ => return TextFit::Unknown,
        };
        if json_string_literal(text).is_some() {
            return TextFit::Unknown;
        }
        match parse_relaxed(text) {
            Ok(v) if v.is_object() == object && v.is_array() != object => {
                if self.fits(at, &v, 1, &mut true) {
                    TextFit::Becomes(v)
                } else {
                    TextFit::Unknown
                }
            }
            // Not JSON of the node's type: an object's text stays as it is, an array's is read
            // in other ways (split, wrapped).
            _ if object => TextFit::Kept,
            _ => TextFit::Unknown,
        }
    }

    /// Whether `v` fits node `at` simply (see the module); clears `valid` where validity is not
    /// known.
    fn fits(&self, at: usize, v: &Value, depth: usize, valid: &mut bool) -> bool {
        if depth >= MAX_DEPTH {
            return false;
        }
        match (&self.nodes[at], v) {
            (
                Node::Object {
                    props,
                    required,
                    bare,
                },
                Value::Object(members),
            ) => {
                let mut seen = 0u64;
                let all = members.iter().all(|(k, x)| {
                    let Some(i) = props.iter().position(|(name, _)| **name == **k) else {
                        return false;
                    };
                    if i < 64 {
                        seen |= 1 << i;
                    }
                    self.fits(props[i].1, x, depth + 1, valid)
                });
                if all && !(*bare && required.is_some_and(|r| seen & r == r)) {
                    *valid = false;
                }
                all
            }
            (Node::Array { items, bare }, Value::Array(xs)) => {
                if !*bare {
                    *valid = false;
                }
                match items {
                    Some(node) => xs.iter().all(|x| self.fits(*node, x, depth + 1, valid)),
                    None => xs.is_empty(),
                }
            }
            (Node::Scalar { ty, bare }, v) => {
                if !ty.fits(v) {
                    return false;
                }
                // An integral float is an integer to coercion; drafts differ on it.
                if !*bare || (*ty == JsonType::Integer && !v.is_i64() && !v.is_u64()) {
                    *valid = false;
                }
                true
            }
            _ => false,
        }
    }
}

/// Reads a schema into [`Plain`]'s nodes.
struct Reader<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// The node read for each schema value, by address (each is read once).
    read: HashMap<*const Value, usize>,
}

impl Reader<'_> {
    fn read(&mut self, schema: &Value) -> usize {
        if let Some(&at) = self.read.get(&std::ptr::from_ref(schema)) {
            return at;
        }
        let at = self.nodes.len();
        self.nodes.push(Node::Opaque);
        self.read.insert(schema, at);
        self.nodes[at] = self.node(schema);
        at
    }

    fn node(&mut self, schema: &Value) -> Node {
        let root = self.root;
        let referred = field(schema, "$ref").is_some();
        let s = resolve(schema, root);
        let Value::Object(obj) = s else {
            return Node::Opaque;
        };
        if has_combinator(obj) || enum_options(s).is_some() || map_field(obj, "nullable").is_some()
        {
            return Node::Opaque;
        }
        let Some(ty) = map_field(obj, "type")
            .and_then(Value::as_str)
            .and_then(JsonType::from_name)
        else {
            return Node::Opaque;
        };
        let bare = !referred && obj.keys().all(|k| BARE_KEYWORDS.contains(&k.as_str()));
        match ty {
            JsonType::Object => {
                // Keys that are no declared property go to `patternProperties` or an
                // `additionalProperties` schema: not followed here (such a key is Unknown).
                let props: Box<[(Box<str>, usize)]> = match map_field(obj, "properties") {
                    Some(Value::Object(p)) => p
                        .iter()
                        .map(|(k, ps)| (k.as_str().into(), self.read(ps)))
                        .collect(),
                    _ => Box::new([]),
                };
                let required = match map_field(obj, "required") {
                    None => Some(0),
                    Some(Value::Array(names)) if props.len() <= 64 => {
                        names.iter().try_fold(0u64, |mask, n| {
                            let i = props.iter().position(|(k, _)| Some(&**k) == n.as_str())?;
                            Some(mask | 1 << i)
                        })
                    }
                    Some(_) => None,
                };
                Node::Object {
                    props,
                    required,
                    bare,
                }
            }
            JsonType::Array => {
                if map_field(obj, "prefixItems").is_some() {
                    return Node::Opaque;
                }
                let items = match map_field(obj, "items") {
                    Some(Value::Array(_)) => return Node::Opaque,
                    Some(is @ Value::Object(_)) => Some(self.read(is)),
                    _ => None,
                };
                Node::Array { items, bare }
            }
            ty => Node::Scalar { ty, bare },
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "where"},
                "days": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "at": {"type": "object", "properties": {"lat": {"type": "number"}},
                       "required": ["lat"], "additionalProperties": false},
                "unit": {"type": "string", "enum": ["c", "f"]},
                "note": {"type": "string", "minLength": 2},
                "loc": {"$ref": "#/$defs/loc"}
            },
            "required": ["city"],
            "$defs": {"loc": {"type": "string"}}
        })
    }

    fn fit(v: Value) -> Fit {
        Plain::new(&schema()).fit(&v)
    }

    #[test]
    fn values_of_the_named_types_are_valid() {
        assert_eq!(fit(json!({"city": "Oslo"})), Fit::Valid);
        assert_eq!(
            fit(json!({"city": "Oslo", "days": 3, "tags": ["a"], "at": {"lat": -1.5}})),
            Fit::Valid
        );
        assert_eq!(fit(json!({"city": "Oslo", "tags": []})), Fit::Valid);
    }

    #[test]
    fn what_coercion_may_change_is_unknown() {
        // A string for an integer, an enum, an undeclared key, a key of no simple schema.
        assert_eq!(fit(json!({"city": "Oslo", "days": "3"})), Fit::Unknown);
        assert_eq!(fit(json!({"city": "Oslo", "unit": "c"})), Fit::Unknown);
        assert_eq!(fit(json!({"city": "Oslo", "other": 1})), Fit::Unknown);
        assert_eq!(fit(json!({"city": "Oslo", "tags": [1]})), Fit::Unknown);
        assert_eq!(fit(json!([1])), Fit::Unknown);
    }

    #[test]
    fn validity_is_claimed_only_where_every_keyword_is_read() {
        // Required names missing, at the root and below.
        assert_eq!(fit(json!({"days": 3})), Fit::Unchanged);
        assert_eq!(fit(json!({"city": "Oslo", "at": {}})), Fit::Unchanged);
        // A bound validation checks, a schema reached by `$ref`, an integral float.
        assert_eq!(fit(json!({"city": "Oslo", "note": "x"})), Fit::Unchanged);
        assert_eq!(fit(json!({"city": "Oslo", "loc": "x"})), Fit::Unchanged);
        assert_eq!(fit(json!({"city": "Oslo", "days": 3.0})), Fit::Unchanged);
    }

    #[test]
    fn a_schema_that_refers_to_itself_is_read_once() {
        let tree = json!({"type": "object", "properties": {
            "left": {"$ref": "#"}, "right": {"$ref": "#"}, "v": {"type": "integer"}}});
        let plain = Plain::new(&tree);
        assert_eq!(plain.nodes.len(), 4, "{plain:?}");
        assert_eq!(
            plain.fit(&json!({"left": {"right": {"v": 1}}})),
            Fit::Unchanged
        );
        let mut deep = json!({"v": 1});
        for _ in 0..70 {
            deep = json!({"left": deep});
        }
        assert_eq!(plain.fit(&deep), Fit::Unknown);
    }
}
