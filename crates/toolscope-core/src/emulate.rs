//! Tool-choice emulation through a JSON-schema response format.
//!
//! Providers without native tool calling can still be held to `required` or to one named tool:
//! the request asks for structured output (OpenAI `response_format`, Gemini `responseSchema`,
//! Ollama `format`) whose schema only admits `{"name": …, "arguments": …}` for the allowed
//! tools, and the answer becomes one tool call. This module builds that schema. Its one subtle
//! part is moving each tool's `$defs`/`definitions` to the root of the response schema: a tool
//! schema embedded under `properties.arguments` would otherwise point its `#/$defs/…` and `#`
//! references at the wrong document.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::json::pointer;
use crate::tool::{ToolChoice, ToolDef, ToolSet};

/// The name the response format is sent under (providers require one; it only labels it).
pub(crate) const RESPONSE_FORMAT_NAME: &str = "tool_call";

/// A JSON-schema response format constraining a model's answer to one tool call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResponseFormat {
    /// The label the format is sent under: always `tool_call`.
    pub name: String,
    /// For one forced tool, its description (absent when it has none); for `required`, a sentence
    /// naming every tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON Schema the answer must match: an object `{name, arguments}` with each tool's
    /// `$defs` moved to the root.
    pub schema: Value,
}

/// The response format that emulates `choice`: `None` for `auto` and `none` (nothing to
/// constrain), and when the choice cannot be met (a named tool missing from `tools`, `required`
/// without tools; [`ToolChoice::validate`] reports those before any request).
pub fn response_format(choice: &ToolChoice, tools: &ToolSet) -> Option<ResponseFormat> {
    match choice {
        ToolChoice::Auto | ToolChoice::None => None,
        ToolChoice::Tool(name) => {
            let tool = tools.get(name)?;
            let mut defs = Hoisted::default();
            let arguments = defs.embed(&tool.def);
            let mut schema = json!({
                "type": "object",
                "properties": {
                    "name": {"const": name},
                    "arguments": arguments,
                },
                "required": ["name", "arguments"],
            });
            defs.attach(&mut schema);
            let description = tool.def.description.trim();
            Some(ResponseFormat {
                name: RESPONSE_FORMAT_NAME.to_string(),
                description: (!description.is_empty()).then(|| description.to_string()),
                schema,
            })
        }
        ToolChoice::Required => {
            if tools.is_empty() {
                return None;
            }
            let mut defs = Hoisted::default();
            let embedded: Vec<(&str, Value)> = tools
                .iter()
                .map(|t| (t.name(), defs.embed(&t.def)))
                .collect();
            let names: Vec<&str> = embedded.iter().map(|(n, _)| *n).collect();
            // Built from the last tool backwards: each `else` holds the test for the next tool.
            // The final `else` is reached only by a name outside the `enum`, which the `enum`
            // already rejects; `false` says so to validators that check it on its own.
            let mut chain = Value::Bool(false);
            for (name, arguments) in embedded.into_iter().rev() {
                chain = json!({
                    "if": {"properties": {"name": {"const": name}}, "required": ["name"]},
                    "then": {"properties": {"arguments": arguments}},
                    "else": chain,
                });
            }
            let mut schema = json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "enum": names},
                    "arguments": {"type": "object"},
                },
                "required": ["name", "arguments"],
            });
            if let (Value::Object(top), Value::Object(chain)) = (&mut schema, chain) {
                top.extend(chain);
            }
            defs.attach(&mut schema);
            Some(ResponseFormat {
                name: RESPONSE_FORMAT_NAME.to_string(),
                description: Some(format!("A call to one of the tools: {}.", names.join(", "))),
                schema,
            })
        }
    }
}

/// The `$defs` of the response schema, gathered from the tools.
#[derive(Default)]
struct Hoisted {
    defs: Map<String, Value>,
}

/// Where one tool's references go once its schema is embedded.
struct Renames {
    defs: HashMap<String, String>,
    definitions: HashMap<String, String>,
    /// The `$defs` key holding the whole tool schema, when something refers to it by a pointer
    /// from its root (`#`, `#/properties/…`).
    whole: Option<String>,
}

impl Hoisted {
    /// A `$defs` key not taken yet, starting from `base`. Taken at once (with a placeholder), so
    /// that the map keeps the order in which keys were handed out.
    fn claim(&mut self, base: String) -> String {
        let mut key = base.clone();
        let mut n = 2;
        while self.defs.contains_key(&key) {
            key = format!("{base}_{n}");
            n += 1;
        }
        self.defs.insert(key.clone(), Value::Null);
        key
    }

    /// The tool's parameters as they go under `properties.arguments`: its `$defs` and
    /// `definitions` moved to the root under `<tool>__<name>` and its references rewritten.
    fn embed(&mut self, tool: &ToolDef) -> Value {
        let mut schema = tool.parameters.clone();
        let Value::Object(obj) = &mut schema else {
            // A boolean schema refers to nothing.
            return schema;
        };
        // Both only mean something at the root of a document; embedded, `$id` would make the
        // tool a document of its own and point its `#` references back into it.
        obj.shift_remove("$schema");
        obj.shift_remove("$id");
        let defs = take_defs(obj, "$defs");
        let definitions = take_defs(obj, "definitions");
        let mut renames = Renames {
            defs: HashMap::new(),
            definitions: HashMap::new(),
            whole: None,
        };
        for (k, _) in &defs {
            let key = self.claim(format!("{}__{k}", tool.name));
            renames.defs.insert(k.clone(), key);
        }
        for (k, _) in &definitions {
            let key = self.claim(format!("{}__{k}", tool.name));
            renames.definitions.insert(k.clone(), key);
        }
        if refers_to_root(&schema)
            || defs
                .iter()
                .chain(&definitions)
                .any(|(_, d)| refers_to_root(d))
        {
            renames.whole = Some(self.claim(tool.name.clone()));
        }
        for (k, mut d) in defs {
            rewrite_refs(&mut d, &renames);
            if let Some(key) = renames.defs.get(&k) {
                self.defs.insert(key.clone(), d);
            }
        }
        for (k, mut d) in definitions {
            rewrite_refs(&mut d, &renames);
            if let Some(key) = renames.definitions.get(&k) {
                self.defs.insert(key.clone(), d);
            }
        }
        rewrite_refs(&mut schema, &renames);
        match renames.whole {
            Some(key) => {
                let reference = json!({"$ref": format!("#/$defs/{}", pointer_token(&key))});
                self.defs.insert(key, schema);
                reference
            }
            None => schema,
        }
    }

    fn attach(self, schema: &mut Value) {
        if let (false, Value::Object(top)) = (self.defs.is_empty(), schema) {
            top.insert("$defs".to_string(), Value::Object(self.defs));
        }
    }
}

fn take_defs(obj: &mut Map<String, Value>, key: &str) -> Vec<(String, Value)> {
    match obj.shift_remove(key) {
        Some(Value::Object(defs)) => defs.into_iter().collect(),
        Some(other) => {
            // Not a map of schemas: keep it where it was, untouched.
            obj.insert(key.to_string(), other);
            Vec::new()
        }
        None => Vec::new(),
    }
}

/// Keywords whose values are data, not schemas: a `$ref` inside them is not a reference.
const DATA_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// Calls `f` on every `$ref` string of a schema.
fn visit_refs(schema: &Value, f: &mut impl FnMut(&str)) {
    match schema {
        Value::Object(obj) => {
            for (k, v) in obj {
                match v {
                    _ if DATA_KEYWORDS.contains(&k.as_str()) => {}
                    Value::String(r) if k == "$ref" => f(r),
                    _ => visit_refs(v, f),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| visit_refs(v, f)),
        _ => {}
    }
}

/// Calls `f` on every `$ref` string of a schema, to change it.
fn visit_refs_mut(schema: &mut Value, f: &mut impl FnMut(&mut String)) {
    match schema {
        Value::Object(obj) => {
            for (k, v) in obj.iter_mut() {
                match v {
                    _ if DATA_KEYWORDS.contains(&k.as_str()) => {}
                    Value::String(r) if k == "$ref" => f(r),
                    _ => visit_refs_mut(v, f),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| visit_refs_mut(v, f)),
        _ => {}
    }
}

/// Whether a schema has a reference into its root document other than through `$defs` or
/// `definitions` (those are moved by name).
fn refers_to_root(schema: &Value) -> bool {
    let mut found = false;
    visit_refs(schema, &mut |r| {
        if let Some(pointer) = r.strip_prefix('#') {
            let mut tokens = pointer.split('/').skip(1);
            let through_defs =
                matches!(tokens.next(), Some("$defs" | "definitions")) && tokens.next().is_some();
            found |= pointer.is_empty() || (pointer.starts_with('/') && !through_defs);
        }
    });
    found
}

fn rewrite_refs(schema: &mut Value, renames: &Renames) {
    visit_refs_mut(schema, &mut |r| {
        if let Some(new) = rewritten(r, renames) {
            *r = new;
        }
    });
}

/// The new form of reference `r`, if it changes: `#/$defs/X/rest` becomes
/// `#/$defs/<tool>__X/rest`, and a pointer from the tool's root (`#`, `#/properties/…`) goes
/// through the `$defs` entry holding the whole tool. Other references (other documents,
/// `#anchor`s) are left alone.
fn rewritten(r: &str, renames: &Renames) -> Option<String> {
    let pointer = r.strip_prefix('#')?;
    if !pointer.is_empty() && !pointer.starts_with('/') {
        return None;
    }
    let mut segments = pointer.splitn(4, '/').skip(1);
    let (first, second) = (segments.next(), segments.next());
    let rest = segments.next();
    let table = match first {
        Some("$defs") => Some(&renames.defs),
        Some("definitions") => Some(&renames.definitions),
        _ => None,
    };
    if let (Some(table), Some(second)) = (table, second)
        && let Some(key) = table.get(&unescape_token(second))
    {
        let mut out = format!("#/$defs/{}", pointer_token(key));
        if let Some(rest) = rest {
            out.push('/');
            out.push_str(rest);
        }
        return Some(out);
    }
    let whole = renames.whole.as_ref()?;
    Some(format!("#/$defs/{}{pointer}", pointer_token(whole)))
}

/// A reference token as written in a URI fragment: JSON-pointer escaped (`~0`, `~1`) and
/// percent-encoded where a fragment does not allow the character.
fn pointer_token(key: &str) -> String {
    let escaped = pointer::escape(key);
    let mut out = String::with_capacity(escaped.len());
    for b in escaped.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The key a fragment token names: percent-decoded, then JSON-pointer unescaped.
fn unescape_token(token: &str) -> String {
    let bytes = token.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                // Two hex digits make at most 255.
                decoded.push(u8::try_from(hi * 16 + lo).unwrap_or(b'%'));
                i += 3;
            }
            (b, _, _) => {
                decoded.push(b);
                i += 1;
            }
        }
    }
    let text = String::from_utf8(decoded).unwrap_or_else(|_| token.to_string());
    pointer::unescape(&text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weather() -> ToolDef {
        ToolDef::new(
            "get_weather",
            "Weather for a city",
            json!({
                "type":"object",
                "properties":{"city":{"type":"string"},"days":{"type":"integer"}},
                "required":["city"]
            }),
        )
    }

    fn location() -> ToolDef {
        ToolDef::new("get_location", "", json!({"type":"object","properties":{}}))
    }

    /// A tool whose schema refers to its `$defs`, its `definitions`, itself (`#`) and a pointer
    /// from its root; its `City` clashes by name with `book`'s.
    fn trip() -> ToolDef {
        ToolDef::new(
            "plan_trip",
            "Plan a trip",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type":"object",
                "$defs": {
                    "City": {"type":"string","minLength":2},
                    "Leg": {"type":"object","properties":{"to":{"$ref":"#/$defs/City"}},"required":["to"]},
                    "My City/Name": {"type":"string","maxLength":5}
                },
                "definitions": {"Days": {"type":"integer","minimum":1}},
                "properties": {
                    "from": {"$ref":"#/$defs/City"},
                    "legs": {"type":"array","items":{"$ref":"#/$defs/Leg"}},
                    "days": {"$ref":"#/definitions/Days"},
                    "alias": {"$ref":"#/$defs/My%20City~1Name"},
                    "same_as_from": {"$ref":"#/properties/from"},
                    "next": {"$ref":"#"},
                    "note": {"type":"string","default":{"$ref":"#/$defs/City"}}
                },
                "required":["from"]
            }),
        )
    }

    fn book() -> ToolDef {
        ToolDef::new(
            "book",
            "Book a hotel",
            json!({
                "type":"object",
                "definitions": {"City": {"type":"integer"}},
                "properties": {"city_id": {"$ref":"#/definitions/City"}},
                "required":["city_id"]
            }),
        )
    }

    fn tools() -> ToolSet {
        ToolSet::new(vec![weather(), location(), trip(), book()]).unwrap()
    }

    fn validator(format: &ResponseFormat) -> jsonschema::Validator {
        jsonschema::validator_for(&format.schema)
            .unwrap_or_else(|e| panic!("does not compile: {e}\n{:#}", format.schema))
    }

    fn call(name: &str, arguments: Value) -> Value {
        json!({"name": name, "arguments": arguments})
    }

    #[test]
    fn auto_none_and_unmeetable_choices_have_no_format() {
        let set = tools();
        assert_eq!(response_format(&ToolChoice::Auto, &set), None);
        assert_eq!(response_format(&ToolChoice::None, &set), None);
        assert_eq!(
            response_format(&ToolChoice::Tool("missing".into()), &set),
            None
        );
        assert_eq!(
            response_format(&ToolChoice::Required, &ToolSet::empty()),
            None
        );
        assert_eq!(
            response_format(&ToolChoice::Tool("get_weather".into()), &ToolSet::empty()),
            None
        );
    }

    #[test]
    fn a_named_tool_is_a_const_name_and_its_schema() {
        let f = response_format(&ToolChoice::Tool("get_weather".into()), &tools()).unwrap();
        assert_eq!(f.name, RESPONSE_FORMAT_NAME);
        assert_eq!(f.description.as_deref(), Some("Weather for a city"));
        assert_eq!(
            f.schema,
            json!({
                "type":"object",
                "properties":{"name":{"const":"get_weather"},"arguments":weather().parameters},
                "required":["name","arguments"]
            })
        );
        let v = validator(&f);
        assert!(v.is_valid(&call("get_weather", json!({"city":"Oslo","days":3}))));
        assert!(!v.is_valid(&call("get_location", json!({"city":"Oslo"}))));
        assert!(!v.is_valid(&call("get_weather", json!({"city":3}))));
        assert!(!v.is_valid(&call("get_weather", json!({"days":3}))));
        assert!(!v.is_valid(&json!({"name":"get_weather"})));
        assert!(!v.is_valid(&json!({"arguments":{"city":"Oslo"}})));

        // No description: none is sent.
        let f = response_format(&ToolChoice::Tool("get_location".into()), &tools()).unwrap();
        assert_eq!(f.description, None);
        let text = serde_json::to_string(&f).unwrap();
        assert!(!text.contains("description"), "{text}");
    }

    #[test]
    fn required_accepts_any_tool_with_its_own_arguments() {
        let f = response_format(&ToolChoice::Required, &tools()).unwrap();
        assert_eq!(
            f.schema["properties"]["name"]["enum"],
            json!(["get_weather", "get_location", "plan_trip", "book"])
        );
        assert_eq!(f.schema["if"]["properties"]["name"]["const"], "get_weather");
        let v = validator(&f);
        let good = [
            call("get_weather", json!({"city":"Oslo"})),
            call("get_location", json!({})),
            call(
                "plan_trip",
                json!({"from":"Oslo","legs":[{"to":"Rome"}],"days":2}),
            ),
            call("book", json!({"city_id": 7})),
        ];
        for g in &good {
            assert!(v.is_valid(g), "{g}");
        }
        let bad = [
            call("get_time", json!({})),
            call("get_weather", json!({"city": 1})),
            call("get_weather", json!({})),
            call("book", json!({"city_id": "Oslo"})),
            call("get_location", json!("{}")),
            json!({"name":"get_location"}),
            json!({"arguments":{}}),
        ];
        for b in &bad {
            assert!(!v.is_valid(b), "{b}");
        }
    }

    #[test]
    fn refs_still_point_at_the_right_schemas_once_embedded() {
        for choice in [ToolChoice::Tool("plan_trip".into()), ToolChoice::Required] {
            let f = response_format(&choice, &tools()).unwrap();
            let defs = f.schema["$defs"].as_object().unwrap();
            for key in [
                "plan_trip__City",
                "plan_trip__Leg",
                "plan_trip__Days",
                "plan_trip",
            ] {
                assert!(defs.contains_key(key), "{key} missing: {:?}", defs.keys());
            }
            assert!(defs.contains_key("plan_trip__My City/Name"));
            // The root-only keywords do not travel into a sub-schema; the rest keeps its order.
            let keys: Vec<&String> = defs["plan_trip"].as_object().unwrap().keys().collect();
            assert_eq!(keys, ["type", "properties", "required"]);
            // Data that looks like a reference is left alone.
            assert_eq!(
                defs["plan_trip"]["properties"]["note"]["default"],
                json!({"$ref":"#/$defs/City"})
            );

            let v = validator(&f);
            let ok = json!({
                "from":"Oslo",
                "legs":[{"to":"Rome"}],
                "days":3,
                "alias":"Oz",
                "same_as_from":"Bergen",
                "next":{"from":"Rome"}
            });
            assert!(v.is_valid(&call("plan_trip", ok)), "{choice}");
            let wrong = [
                json!({"from":"O"}),                        // $defs/City: minLength
                json!({"from":"Oslo","legs":[{"to":1}]}),   // $defs/Leg -> $defs/City
                json!({"from":"Oslo","legs":[{}]}),         // $defs/Leg: required
                json!({"from":"Oslo","days":0}),            // definitions/Days
                json!({"from":"Oslo","alias":"Oslo City"}), // escaped def name
                json!({"from":"Oslo","same_as_from":"B"}),  // #/properties/from
                json!({"from":"Oslo","next":{}}),           // # (required from)
                json!({"from":"Oslo","next":{"from":"R"}}), // # then $defs/City
            ];
            for w in wrong {
                assert!(!v.is_valid(&call("plan_trip", w.clone())), "{choice}: {w}");
            }
        }
    }

    #[test]
    fn same_def_names_in_two_tools_stay_apart() {
        let f = response_format(&ToolChoice::Required, &tools()).unwrap();
        let defs = f.schema["$defs"].as_object().unwrap();
        assert_eq!(defs["plan_trip__City"]["type"], "string");
        assert_eq!(defs["book__City"]["type"], "integer");
        let v = validator(&f);
        assert!(v.is_valid(&call("book", json!({"city_id": 3}))));
        assert!(!v.is_valid(&call("book", json!({"city_id": "Oslo"}))));
        assert!(!v.is_valid(&call("plan_trip", json!({"from": 3}))));
    }

    #[test]
    fn clashing_hoisted_names_get_a_suffix() {
        // `a` with def `b__c` and `a__b` with def `c` would both become `a__b__c`.
        let set = ToolSet::new(vec![
            ToolDef::new(
                "a",
                "",
                json!({"type":"object","$defs":{"b__c":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/b__c"}}}),
            ),
            ToolDef::new(
                "a__b",
                "",
                json!({"type":"object","$defs":{"c":{"type":"integer"}},"properties":{"x":{"$ref":"#/$defs/c"}}}),
            ),
        ])
        .unwrap();
        let f = response_format(&ToolChoice::Required, &set).unwrap();
        let defs = f.schema["$defs"].as_object().unwrap();
        assert_eq!(defs.keys().collect::<Vec<_>>(), ["a__b__c", "a__b__c_2"]);
        let v = validator(&f);
        assert!(v.is_valid(&call("a", json!({"x":"s"}))));
        assert!(!v.is_valid(&call("a", json!({"x":1}))));
        assert!(v.is_valid(&call("a__b", json!({"x":1}))));
        assert!(!v.is_valid(&call("a__b", json!({"x":"s"}))));
    }

    #[test]
    fn boolean_tool_schemas_embed_as_they_are() {
        let set = ToolSet::new(vec![ToolDef::new("anything", "", json!(true))]).unwrap();
        let f = response_format(&ToolChoice::Tool("anything".into()), &set).unwrap();
        assert_eq!(f.schema["properties"]["arguments"], json!(true));
        assert!(validator(&f).is_valid(&call("anything", json!({"k": 1}))));
    }
}
