//! Reading JSON Schemas: following `$ref`, finding the schema of a property or an array item,
//! and telling what type a schema asks for.
//!
//! Coercion and the streaming argument writer both navigate schemas through these functions, so
//! that a value coerced whole and a value coerced as it streams in see the same schema at every
//! path.

use serde_json::Value;

/// How many `$ref` hops are followed before giving up (guards against cycles).
const MAX_REF_HOPS: usize = 32;

/// The entry `key` of a schema object. Schema objects are small: up to eight keys, a scan
/// compares a few short strings, which costs much less than hashing the key (these lookups run
/// for every value of every call).
#[inline]
pub(crate) fn field<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    match schema {
        Value::Object(o) => map_field(o, key),
        _ => None,
    }
}

/// [`field`] on the object itself.
#[inline(always)]
pub(crate) fn map_field<'a>(o: &'a serde_json::Map<String, Value>, key: &str) -> Option<&'a Value> {
    if o.len() <= 8 {
        o.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        o.get(key)
    }
}

/// Follows local `$ref`s (`#`, `#/$defs/X`, `#/definitions/X`, any JSON pointer into `root`).
/// A ref that cannot be followed leaves the schema as it is.
pub fn resolve<'a>(mut schema: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..MAX_REF_HOPS {
        let Some(Value::String(r)) = field(schema, "$ref") else {
            return schema;
        };
        let Some(pointer) = r.strip_prefix('#') else {
            return schema;
        };
        match root.pointer(pointer) {
            Some(target) if !std::ptr::eq(target, schema) => schema = target,
            _ => return schema,
        }
    }
    schema
}

/// One of JSON Schema's seven type names (`integer` is a kind of `number`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonType {
    /// `"string"`.
    String,
    /// `"number"`: any JSON number, integral or not.
    Number,
    /// `"integer"`: a number with no fractional part (`3.0` counts).
    Integer,
    /// `"boolean"`.
    Boolean,
    /// `"null"`.
    Null,
    /// `"object"`.
    Object,
    /// `"array"`.
    Array,
}

impl JsonType {
    /// The type a `type` keyword names.
    pub fn from_name(name: &str) -> Option<JsonType> {
        Some(match name {
            "string" => JsonType::String,
            "number" => JsonType::Number,
            "integer" => JsonType::Integer,
            "boolean" => JsonType::Boolean,
            "null" => JsonType::Null,
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            _ => return None,
        })
    }

    /// The type of a value (a number is a `number`, whether or not it is integral).
    pub fn of(v: &Value) -> JsonType {
        match v {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }

    /// Whether `v` is of this type (an integral number is an `integer`).
    pub fn fits(self, v: &Value) -> bool {
        match (self, v) {
            (JsonType::String, Value::String(_))
            | (JsonType::Boolean, Value::Bool(_))
            | (JsonType::Null, Value::Null)
            | (JsonType::Object, Value::Object(_))
            | (JsonType::Array, Value::Array(_))
            | (JsonType::Number, Value::Number(_)) => true,
            (JsonType::Integer, Value::Number(n)) => is_integral(n),
            _ => false,
        }
    }
}

/// Whether a number has no fractional part (`3`, `3.0`, `-2e3`).
pub fn is_integral(n: &serde_json::Number) -> bool {
    n.is_i64()
        || n.is_u64()
        || n.as_f64()
            .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

impl From<JsonType> for SchemaType {
    fn from(t: JsonType) -> SchemaType {
        match t {
            JsonType::String => SchemaType::String,
            JsonType::Number => SchemaType::Number,
            JsonType::Integer => SchemaType::Integer,
            JsonType::Boolean => SchemaType::Boolean,
            JsonType::Null => SchemaType::Null,
            JsonType::Object => SchemaType::Object,
            JsonType::Array => SchemaType::Array,
        }
    }
}

/// What a schema asks for, as far as coercion is concerned: one type, any, or several.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SchemaType {
    /// Exactly a string.
    String,
    /// Exactly a number.
    Number,
    /// Exactly an integer.
    Integer,
    /// Exactly a boolean.
    Boolean,
    /// Exactly `null`.
    Null,
    /// Exactly an object (also a schema with `properties` and no `type`).
    Object,
    /// Exactly an array (also a schema with `items` or `prefixItems` and no `type`).
    Array,
    /// No constraint on the type (absent schema, `{}`, `true`).
    Any,
    /// More than one type may fit (`type` arrays, `anyOf`, `oneOf`, `allOf`, `enum` of mixed
    /// types): the value must be seen whole before it can be coerced.
    Mixed,
}

fn type_from_name(name: &str) -> Option<SchemaType> {
    JsonType::from_name(name).map(SchemaType::from)
}

/// The type a (resolved) schema asks for. `type` wins; without it, `properties` means object and
/// `items`/`prefixItems` mean array; combinators and type lists are [`SchemaType::Mixed`].
pub fn schema_type(schema: &Value, root: &Value) -> SchemaType {
    let schema = resolve(schema, root);
    let Value::Object(obj) = schema else {
        return SchemaType::Any;
    };
    if ["anyOf", "oneOf", "allOf"]
        .iter()
        .any(|k| map_field(obj, k).is_some())
    {
        return SchemaType::Mixed;
    }
    match map_field(obj, "type") {
        Some(Value::String(t)) => return type_from_name(t).unwrap_or(SchemaType::Any),
        Some(Value::Array(ts)) => {
            let ts: Vec<SchemaType> = ts
                .iter()
                .filter_map(|t| t.as_str().and_then(type_from_name))
                .collect();
            return match ts.as_slice() {
                [] => SchemaType::Any,
                [one] => *one,
                _ => SchemaType::Mixed,
            };
        }
        _ => {}
    }
    if map_field(obj, "properties").is_some()
        || map_field(obj, "additionalProperties").is_some()
        || map_field(obj, "patternProperties").is_some()
    {
        return SchemaType::Object;
    }
    if map_field(obj, "items").is_some() || map_field(obj, "prefixItems").is_some() {
        return SchemaType::Array;
    }
    if let Some(Value::Array(values)) = map_field(obj, "enum") {
        return if !values.is_empty() && values.iter().all(Value::is_string) {
            SchemaType::String
        } else {
            SchemaType::Mixed
        };
    }
    if map_field(obj, "const").is_some() {
        return SchemaType::Mixed;
    }
    SchemaType::Any
}

/// True when a string under this schema is never changed by coercion: a plain `"type":"string"`
/// without `enum`, `const` or `nullable` (under which `"null"` becomes null). Such strings can be
/// streamed out character by character.
pub fn is_plain_string(schema: &Value, root: &Value) -> bool {
    let resolved = resolve(schema, root);
    schema_type(resolved, root) == SchemaType::String
        && field(resolved, "enum").is_none()
        && field(resolved, "const").is_none()
        && field(resolved, "nullable") != Some(&Value::Bool(true))
}

/// The schema of property `key` of an object schema: `properties[key]`, else the first matching
/// `patternProperties` entry, else an object-valued `additionalProperties`. `None` means the
/// property has no schema (coerced by the schema-less rules).
pub fn property_schema<'a>(
    object_schema: &'a Value,
    key: &str,
    root: &'a Value,
) -> Option<&'a Value> {
    let object_schema = resolve(object_schema, root);
    if let Some(s) = field(object_schema, "properties").and_then(|p| field(p, key)) {
        return Some(s);
    }
    if let Some(Value::Object(patterns)) = field(object_schema, "patternProperties") {
        for (pattern, s) in patterns {
            if simple_pattern_matches(pattern, key) {
                return Some(s);
            }
        }
    }
    match field(object_schema, "additionalProperties") {
        Some(s @ Value::Object(_)) => Some(s),
        _ => None,
    }
}

/// The schema of every item of an array schema, when it is the same for every index: `items`
/// without `prefixItems`. `None` when there is no item schema or the array is a tuple.
pub fn items_schema<'a>(array_schema: &'a Value, root: &'a Value) -> Option<&'a Value> {
    let array_schema = resolve(array_schema, root);
    if field(array_schema, "prefixItems").is_some() {
        return None;
    }
    match field(array_schema, "items") {
        Some(s @ Value::Object(_)) => Some(s),
        _ => None,
    }
}

/// `patternProperties` keys are ECMA regexes; toolscope has no regex engine in its core, so it
/// understands the common anchored forms (`^prefix`, `suffix$`, `^exact$`, `.*`) and treats
/// anything else as a match only when the pattern is a plain substring of the key.
fn simple_pattern_matches(pattern: &str, key: &str) -> bool {
    if pattern == ".*" || pattern.is_empty() {
        return true;
    }
    let is_plain = |s: &str| {
        !s.contains([
            '\\', '.', '*', '+', '?', '[', ']', '(', ')', '{', '}', '|', '^', '$',
        ])
    };
    let anchored_start = pattern.strip_prefix('^');
    let body = anchored_start.unwrap_or(pattern);
    let anchored_end = body.strip_suffix('$');
    let body = anchored_end.unwrap_or(body);
    if !is_plain(body) {
        return false;
    }
    match (anchored_start.is_some(), anchored_end.is_some()) {
        (true, true) => key == body,
        (true, false) => key.starts_with(body),
        (false, true) => key.ends_with(body),
        (false, false) => key.contains(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_are_read_from_type_or_shape() {
        let root = json!({});
        let cases = [
            (json!({"type":"string"}), SchemaType::String),
            (json!({"type":"integer"}), SchemaType::Integer),
            (json!({"type":["string","null"]}), SchemaType::Mixed),
            (json!({"type":["number"]}), SchemaType::Number),
            (json!({"properties":{}}), SchemaType::Object),
            (json!({"items":{}}), SchemaType::Array),
            (json!({"prefixItems":[]}), SchemaType::Array),
            (json!({"anyOf":[{"type":"string"}]}), SchemaType::Mixed),
            (json!({"enum":["a","b"]}), SchemaType::String),
            (json!({"enum":["a",1]}), SchemaType::Mixed),
            (json!({}), SchemaType::Any),
            (json!(true), SchemaType::Any),
        ];
        for (schema, want) in cases {
            assert_eq!(schema_type(&schema, &root), want, "{schema}");
        }
    }

    #[test]
    fn refs_are_followed_and_cycles_stop() {
        let root = json!({
            "$defs": {"City": {"type":"string"}, "Loop": {"$ref":"#/$defs/Loop"}},
            "definitions": {"N": {"type":"number"}},
            "properties": {
                "city": {"$ref":"#/$defs/City"},
                "n": {"$ref":"#/definitions/N"},
                "l": {"$ref":"#/$defs/Loop"},
                "x": {"$ref":"https://example.com/s.json"}
            }
        });
        let p = |k| property_schema(&root, k, &root).unwrap();
        assert_eq!(schema_type(p("city"), &root), SchemaType::String);
        assert_eq!(schema_type(p("n"), &root), SchemaType::Number);
        assert_eq!(schema_type(p("l"), &root), SchemaType::Any);
        assert_eq!(schema_type(p("x"), &root), SchemaType::Any);
    }

    #[test]
    fn property_and_item_schemas() {
        let root = json!({
            "properties": {"a": {"type":"string"}},
            "patternProperties": {"^x_": {"type":"integer"}},
            "additionalProperties": {"type":"boolean"}
        });
        assert_eq!(
            property_schema(&root, "a", &root).unwrap()["type"],
            "string"
        );
        assert_eq!(
            property_schema(&root, "x_1", &root).unwrap()["type"],
            "integer"
        );
        assert_eq!(
            property_schema(&root, "zz", &root).unwrap()["type"],
            "boolean"
        );
        let closed = json!({"properties":{}, "additionalProperties": false});
        assert!(property_schema(&closed, "zz", &closed).is_none());

        let arr = json!({"type":"array","items":{"type":"number"}});
        assert_eq!(items_schema(&arr, &arr).unwrap()["type"], "number");
        let tuple =
            json!({"type":"array","prefixItems":[{"type":"number"}],"items":{"type":"string"}});
        assert!(items_schema(&tuple, &tuple).is_none());
    }

    #[test]
    fn plain_strings_exclude_enums() {
        let root = json!({});
        assert!(is_plain_string(&json!({"type":"string"}), &root));
        assert!(is_plain_string(
            &json!({"type":"string","format":"uri"}),
            &root
        ));
        assert!(!is_plain_string(
            &json!({"type":"string","enum":["a"]}),
            &root
        ));
        assert!(!is_plain_string(&json!({"type":["string","null"]}), &root));
        assert!(!is_plain_string(
            &json!({"type":"string","nullable":true}),
            &root
        ));
    }
}
