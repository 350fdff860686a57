//! Filling tool arguments from a prompt and a JSON Schema.
//!
//! The demo model writes arguments the way a helpful model would: every `required` property is
//! present, values come from the prompt where the prompt has them (a place name for a `city`,
//! the prompt's subject for a `query`, the number before "days" for `days`), and otherwise from
//! the schema (its `default`, the first `enum` value, a number inside `minimum`/`maximum`).
//! Nested objects and arrays are filled recursively. The result always validates against
//! ordinary schemas; `pattern` is not honoured.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::prompt::{Name, Prompt, Word, stems_of};
use toolscope_core::schema;

/// Deeper than this (recursive `$ref`s), values are the simplest of their type.
const MAX_DEPTH: usize = 8;

/// The place used when a location-like argument is needed and the prompt names none.
pub const FALLBACK_PLACE: &str = "Paris";

/// Fills the arguments of one call. `focus` is the item this call is about when one prompt asks
/// for several calls ("Paris" for the first of "weather in Paris and Tokyo"); the other items
/// of that list are not used for this call. The result is always a JSON object.
pub fn fill_arguments(
    parameters: &Value,
    prompt: &Prompt,
    focus: Option<&str>,
    skip: &[String],
) -> Value {
    let mut filler = Filler {
        prompt,
        root: parameters,
        focus: focus.map(str::to_string),
        used_names: skip
            .iter()
            .filter(|s| Some(s.as_str()) != focus)
            .cloned()
            .collect(),
        used_numbers: HashSet::new(),
        used_keywords: 0,
    };
    match filler.value(parameters, &Hint::top(), 0) {
        v @ Value::Object(_) => v,
        _ => Value::Object(Map::new()),
    }
}

/// Fills any schema (used for structured output, `response_format` of type `json_schema`).
pub fn fill_value(schema: &Value, prompt: &Prompt) -> Value {
    let mut filler = Filler {
        prompt,
        root: schema,
        focus: None,
        used_names: HashSet::new(),
        used_numbers: HashSet::new(),
        used_keywords: 0,
    };
    filler.value(schema, &Hint::top(), 0)
}

/// What an argument is for, judged from its property name (then its description).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Location,
    Origin,
    Destination,
    Query,
    Path,
    Directory,
    Url,
    Email,
    Date,
    DateTime,
    Time,
    Person,
    Language,
    Unit,
    Expression,
    Identifier,
    Generic,
}

/// The words that give an argument its kind, checked in order: the first kind with one of its
/// words in the property name (or else the description) wins.
#[rustfmt::skip]
const KIND_WORDS: &[(Kind, &[&str])] = &[
    (Kind::Origin, &["origin", "departure", "source"]),
    (Kind::Destination, &["destination", "arrival"]),
    (Kind::Location, &[
        "city", "location", "place", "town", "country", "region", "where", "venue", "airport",
        "address", "area", "locality", "province",
    ]),
    (Kind::Url, &["url", "uri", "link", "href", "website", "endpoint"]),
    (Kind::Email, &["email", "mail"]),
    (Kind::Directory, &["dir", "directory", "folder", "cwd"]),
    (Kind::Path, &["path", "file", "filename", "filepath"]),
    (Kind::DateTime, &["datetime", "timestamp"]),
    (Kind::Date, &["date", "day", "birthday"]),
    (Kind::Time, &["time", "hour"]),
    (Kind::Expression, &["expression", "formula", "equation", "calculation", "math"]),
    (Kind::Language, &["language", "lang", "locale"]),
    (Kind::Unit, &["unit"]),
    (Kind::Identifier, &["id", "identifier", "uuid"]),
    (Kind::Person, &[
        "person", "user", "username", "contact", "recipient", "author", "owner", "who", "name",
    ]),
    (Kind::Query, &[
        "query", "q", "search", "term", "keyword", "question", "topic", "subject", "prompt", "text",
        "message", "content", "body", "input", "title", "note", "phrase", "description", "summary",
        "word",
    ]),
];

fn kind_of_words(stems: &[String]) -> Kind {
    KIND_WORDS
        .iter()
        .find(|(_, words)| stems.iter().any(|s| words.contains(&s.as_str())))
        .map_or(Kind::Generic, |(kind, _)| *kind)
}

/// Where a value sits: the property name (or the array's name for its items) and its
/// description, which say what kind of value fits.
#[derive(Clone, Debug)]
struct Hint {
    key_stems: Vec<String>,
    kind: Kind,
    /// The index of an array item, so items differ.
    index: usize,
}

impl Hint {
    fn top() -> Hint {
        Hint {
            key_stems: Vec::new(),
            kind: Kind::Generic,
            index: 0,
        }
    }

    fn property(key: &str, schema: &Value) -> Hint {
        let key_stems = stems_of(key);
        let mut kind = kind_of_words(&key_stems);
        if kind == Kind::Generic {
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            kind = kind_of_words(&stems_of(description));
        }
        if let Some(format) = schema.get("format").and_then(Value::as_str) {
            kind = match format {
                "date" => Kind::Date,
                "date-time" => Kind::DateTime,
                "time" => Kind::Time,
                "email" | "idn-email" => Kind::Email,
                "uri" | "url" | "iri" => Kind::Url,
                _ => kind,
            };
        }
        Hint {
            key_stems,
            kind,
            index: 0,
        }
    }

    fn item(&self, index: usize) -> Hint {
        Hint {
            index,
            ..self.clone()
        }
    }
}

struct Filler<'a> {
    prompt: &'a Prompt,
    root: &'a Value,
    focus: Option<String>,
    used_names: HashSet<String>,
    used_numbers: HashSet<usize>,
    used_keywords: usize,
}

impl Filler<'_> {
    fn value(&mut self, schema: &Value, hint: &Hint, depth: usize) -> Value {
        let schema = schema::resolve(schema, self.root);
        let Value::Object(obj) = schema else {
            // `true` or `{}`-like: any value; a string fits every kind of hint.
            return Value::String(self.string(hint, &Map::new()));
        };
        if let Some(c) = obj.get("const") {
            return c.clone();
        }
        if let Some(Value::Array(values)) = obj.get("enum")
            && let Some(v) = self.pick_enum(values, obj.get("default"))
        {
            return v;
        }
        if depth >= MAX_DEPTH {
            return simplest(obj);
        }
        if let Some(Value::Array(branches)) = obj.get("allOf") {
            let merged = merge_all_of(obj, branches, self.root);
            return self.value(&merged, hint, depth + 1);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                let branch = branches
                    .iter()
                    .find(|b| schema::resolve(b, self.root).get("type") != Some(&json!("null")))
                    .or(branches.first());
                if let Some(branch) = branch {
                    return self.value(branch, hint, depth + 1);
                }
            }
        }
        match type_name(obj) {
            "object" => self.object(obj, depth),
            "array" => self.array(obj, hint, depth),
            "integer" => self.number(obj, hint, true),
            "number" => self.number(obj, hint, false),
            "boolean" => self.boolean(obj, hint),
            "null" => Value::Null,
            _ => Value::String(self.string(hint, obj)),
        }
    }

    fn object(&mut self, obj: &Map<String, Value>, depth: usize) -> Value {
        let properties = match obj.get("properties") {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let required: Option<Vec<String>> =
            obj.get("required").and_then(Value::as_array).map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            });
        let mut out = Map::new();
        for (key, prop_schema) in &properties {
            // Without a `required` list every property is written (a helpful model fills the
            // form); with one, the optional properties appear when the prompt mentions them.
            let wanted = match &required {
                None => true,
                Some(r) => r.contains(key) || self.mentioned(key, prop_schema),
            };
            if wanted {
                let hint = Hint::property(key, schema::resolve(prop_schema, self.root));
                out.insert(key.clone(), self.value(prop_schema, &hint, depth + 1));
            }
        }
        for key in required.iter().flatten() {
            if !out.contains_key(key) {
                let hint = Hint::property(key, &Value::Null);
                out.insert(key.clone(), Value::String(self.string(&hint, &Map::new())));
            }
        }
        Value::Object(out)
    }

    /// An optional property is worth writing when the prompt says its name or one of its enum
    /// values ("in fahrenheit" for `units`).
    fn mentioned(&self, key: &str, prop_schema: &Value) -> bool {
        let generic = [
            "get", "is", "has", "use", "include", "enable", "with", "max", "min", "num",
        ];
        let key_hit = stems_of(key)
            .iter()
            .filter(|s| !generic.contains(&s.as_str()) && s.len() > 1)
            .any(|s| self.prompt.mentions(s));
        let enum_hit = schema::resolve(prop_schema, self.root)
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|values| values.iter().any(|v| self.enum_score(v) > 0));
        key_hit || enum_hit
    }

    fn array(&mut self, obj: &Map<String, Value>, hint: &Hint, depth: usize) -> Value {
        if let Some(Value::Array(prefix)) = obj.get("prefixItems") {
            return Value::Array(
                prefix
                    .iter()
                    .enumerate()
                    .map(|(i, s)| self.value(s, &hint.item(i), depth + 1))
                    .collect(),
            );
        }
        let items = obj.get("items").cloned().unwrap_or(Value::Bool(true));
        let min = obj.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
        let max = obj
            .get("maxItems")
            .and_then(Value::as_u64)
            .map_or(usize::MAX, |m| m as usize);
        // As many items as the prompt offers of the right kind, one to three.
        let offered = match hint.kind {
            Kind::Location | Kind::Origin | Kind::Destination | Kind::Person => self
                .prompt
                .names
                .iter()
                .filter(|n| !self.used_names.contains(&n.text))
                .count(),
            Kind::Path | Kind::Directory => self.prompt.paths.len(),
            Kind::Url => self.prompt.urls.len(),
            Kind::Email => self.prompt.emails.len(),
            _ => match type_name_of(&items, self.root) {
                "integer" | "number" => self.prompt.numbers.len(),
                "string" => self.prompt.keywords().len(),
                _ => 1,
            },
        };
        let count = offered.clamp(1, 3).max(min.min(16)).min(max);
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let v = self.value(&items, &hint.item(i), depth + 1);
            out.push(v);
        }
        Value::Array(out)
    }

    fn number(&mut self, obj: &Map<String, Value>, hint: &Hint, integer: bool) -> Value {
        let from_prompt = self.take_number(hint);
        let default = obj.get("default").and_then(Value::as_f64);
        let mut n = from_prompt
            .or(default)
            .unwrap_or_else(|| default_number(hint) + hint.index as f64);
        let min = obj.get("minimum").and_then(Value::as_f64);
        let max = obj.get("maximum").and_then(Value::as_f64);
        let xmin = obj.get("exclusiveMinimum").and_then(Value::as_f64);
        let xmax = obj.get("exclusiveMaximum").and_then(Value::as_f64);
        let step = if integer { 1.0 } else { 0.5 };
        if let Some(m) = min {
            n = n.max(m);
        }
        if let Some(m) = xmin
            && n <= m
        {
            n = m + step;
        }
        if let Some(m) = max {
            n = n.min(m);
        }
        if let Some(m) = xmax
            && n >= m
        {
            n = m - step;
        }
        if integer {
            n = n.round();
        }
        if let Some(m) = obj
            .get("multipleOf")
            .and_then(Value::as_f64)
            .filter(|m| *m > 0.0)
        {
            n = (n / m).round() * m;
            if min.is_some_and(|lo| n < lo) || xmin.is_some_and(|lo| n <= lo) {
                n += m;
            }
        }
        number_value(n, integer)
    }

    /// A number from the prompt: first one next to a word of the property's name ("3 days" for
    /// `days`), else the next one not yet used.
    fn take_number(&mut self, hint: &Hint) -> Option<f64> {
        let words = &self.prompt.words;
        let near_name =
            |w: Option<&Word>| w.is_some_and(|w| hint.key_stems.iter().any(|k| k == &w.stem));
        let numbers = &self.prompt.numbers;
        let pick = numbers
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.used_numbers.contains(i))
            .find(|(_, n)| {
                near_name(words.get(n.word + 1))
                    || near_name(n.word.checked_sub(1).and_then(|p| words.get(p)))
            })
            .or_else(|| {
                numbers
                    .iter()
                    .enumerate()
                    .find(|(i, _)| !self.used_numbers.contains(i))
            })
            .map(|(i, n)| (i, n.value));
        let (i, value) = pick?;
        self.used_numbers.insert(i);
        Some(value)
    }

    fn boolean(&self, obj: &Map<String, Value>, hint: &Hint) -> Value {
        let generic = [
            "is", "has", "include", "enable", "use", "with", "should", "allow", "show", "get",
        ];
        let distinctive: Vec<&String> = hint
            .key_stems
            .iter()
            .filter(|s| !generic.contains(&s.as_str()))
            .collect();
        let words = &self.prompt.words;
        let said = words.iter().enumerate().any(|(i, w)| {
            let negated = words[i.saturating_sub(2)..i].iter().any(|p| {
                matches!(
                    p.stem.as_str(),
                    "no" | "not" | "without" | "don't" | "dont" | "never" | "exclude"
                )
            });
            distinctive.contains(&&w.stem) && !negated
        });
        if said {
            return Value::Bool(true);
        }
        Value::Bool(obj.get("default").and_then(Value::as_bool).unwrap_or(false))
    }

    fn string(&mut self, hint: &Hint, obj: &Map<String, Value>) -> String {
        let s = self.raw_string(hint, obj);
        let max = obj
            .get("maxLength")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        let min = obj
            .get("minLength")
            .and_then(Value::as_u64)
            .map(|m| m as usize);
        let mut s: String = match max {
            Some(m) => s.chars().take(m).collect(),
            None => s,
        };
        if let Some(m) = min {
            while s.chars().count() < m.min(1024) {
                s.push('x');
            }
        }
        s
    }

    fn raw_string(&mut self, hint: &Hint, obj: &Map<String, Value>) -> String {
        let default = obj.get("default").and_then(Value::as_str);
        if let Some(d) = default
            && matches!(
                hint.kind,
                Kind::Generic | Kind::Unit | Kind::Language | Kind::Time
            )
        {
            return d.to_string();
        }
        // Code or content to write: a fenced block of the prompt, byte for byte.
        if matches!(hint.kind, Kind::Query | Kind::Generic)
            && hint
                .key_stems
                .iter()
                .any(|s| BLOCK_WORDS.contains(&s.as_str()))
            && let Some(block) = self.prompt.blocks.get(hint.index)
        {
            return block.clone();
        }
        // What the prompt offers for this kind of value, if anything.
        let p = self.prompt;
        let nth = |list: &[String]| list.get(hint.index).cloned();
        let from_prompt = match hint.kind {
            Kind::Location | Kind::Person => self.next_name(None),
            Kind::Origin => self.next_name(Some("from")),
            Kind::Destination => self.next_name(Some("to")),
            Kind::Path | Kind::Directory => nth(&p.paths),
            Kind::Url => nth(&p.urls),
            Kind::Email => nth(&p.emails),
            Kind::Date => nth(&p.dates),
            Kind::DateTime => nth(&p.dates).map(|d| format!("{d}T09:00:00Z")),
            Kind::Expression => p.expression.clone(),
            Kind::Language => p
                .words
                .iter()
                .find(|w| LANGUAGES.iter().any(|l| l.eq_ignore_ascii_case(&w.text)))
                .map(|w| w.text.clone()),
            Kind::Unit => ["fahrenheit", "imperial", "celsius", "metric", "kelvin"]
                .into_iter()
                .find(|u| p.mentions(u))
                .map(str::to_string),
            Kind::Identifier => p
                .numbers
                .get(hint.index)
                .map(|n| number_value(n.value, true).to_string()),
            Kind::Time => nth(&p.times),
            Kind::Query | Kind::Generic => self.text_from_prompt(hint),
        };
        if let Some(v) = from_prompt {
            return v;
        }
        if let Some(d) = default {
            return d.to_string();
        }
        let numbered = |base: &str| {
            if hint.index == 0 {
                base.to_string()
            } else {
                format!("{base}{}", hint.index + 1)
            }
        };
        match hint.kind {
            Kind::Location | Kind::Origin => FALLBACK_PLACE.to_string(),
            Kind::Destination => "Tokyo".to_string(),
            Kind::Person => "Alice".to_string(),
            Kind::Path => numbered("./README.md"),
            Kind::Directory => "./".to_string(),
            Kind::Url => "https://example.com".to_string(),
            Kind::Email => numbered("alice@example.com"),
            Kind::Date => "2025-01-15".to_string(),
            Kind::DateTime => "2025-01-15T09:00:00Z".to_string(),
            Kind::Time => "09:00".to_string(),
            Kind::Language => "English".to_string(),
            Kind::Unit => "celsius".to_string(),
            Kind::Identifier => format!("{}", hint.index + 1),
            Kind::Expression | Kind::Query | Kind::Generic => {
                if p.subject.is_empty() {
                    numbered("toolscope")
                } else {
                    p.subject.clone()
                }
            }
        }
    }

    /// Free text: the call's focus, a keyword for the later items of an array (and for tag-like
    /// properties), else the prompt's subject.
    fn text_from_prompt(&mut self, hint: &Hint) -> Option<String> {
        if (hint.index > 0 || is_tag_like(hint))
            && let Some(k) = self.next_keyword()
        {
            return Some(k);
        }
        if let Some(focus) = self.focus.take() {
            return Some(focus);
        }
        // A property of no known kind ("restaurant", "product") most likely wants a name the
        // prompt gives ("Chez Panisse"); a query wants the whole subject.
        if hint.kind == Kind::Generic
            && let Some(name) = self.next_name(None)
        {
            return Some(name);
        }
        (!self.prompt.subject.is_empty() && hint.index == 0).then(|| self.prompt.subject.clone())
    }

    /// The next capitalised name of the prompt not yet used in this call: the call's focus
    /// first, then a name after the preferred preposition ("from" for an origin), then the
    /// first unused one.
    fn next_name(&mut self, after: Option<&str>) -> Option<String> {
        if let Some(focus) = self.focus.take() {
            self.used_names.insert(focus.clone());
            return Some(focus);
        }
        let names = &self.prompt.names;
        let unused = |n: &&Name| !self.used_names.contains(&n.text);
        let chosen = after
            .and_then(|a| {
                names
                    .iter()
                    .filter(unused)
                    .find(|n| n.after.as_deref() == Some(a))
            })
            .or_else(|| names.iter().find(unused))?
            .text
            .clone();
        self.used_names.insert(chosen.clone());
        Some(chosen)
    }

    fn next_keyword(&mut self) -> Option<String> {
        let k = self.prompt.keywords().get(self.used_keywords).cloned();
        self.used_keywords += 1;
        k
    }

    /// The enum value that the prompt mentions most, else the default, else the first value.
    fn pick_enum(&self, values: &[Value], default: Option<&Value>) -> Option<Value> {
        let best = values.iter().map(|v| (self.enum_score(v), v)).fold(
            None::<(usize, &Value)>,
            |best, (score, v)| match best {
                Some((b, _)) if b >= score => best,
                _ => Some((score, v)),
            },
        );
        match best {
            Some((score, v)) if score > 0 => Some(v.clone()),
            _ => default
                .filter(|d| values.contains(d))
                .or(values.first())
                .cloned(),
        }
    }

    fn enum_score(&self, value: &Value) -> usize {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Null => return 0,
            other => other.to_string(),
        };
        stems_of(&text)
            .iter()
            .filter(|s| self.prompt.mentions(s))
            .count()
    }
}

/// Property names that take a fenced block of the prompt whole (`content`, `code`, …).
const BLOCK_WORDS: &[&str] = &[
    "code", "content", "source", "body", "script", "snippet", "data", "text", "patch", "diff",
];

#[rustfmt::skip]
const LANGUAGES: &[&str] = &[
    "English", "French", "Spanish", "German", "Italian", "Portuguese", "Dutch", "Japanese",
    "Chinese", "Korean", "Russian", "Arabic", "Hindi",
];

fn is_tag_like(hint: &Hint) -> bool {
    hint.key_stems
        .iter()
        .any(|s| matches!(s.as_str(), "tag" | "label" | "category" | "keyword"))
}

/// The type a schema object asks for, reading `type` (first non-null entry of a list) and,
/// without it, the shape (`properties` means object, `items` means array).
fn type_name(obj: &Map<String, Value>) -> &str {
    match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or_else(|| ts.iter().filter_map(Value::as_str).next())
            .unwrap_or("string"),
        _ if obj.contains_key("properties") || obj.contains_key("required") => "object",
        _ if obj.contains_key("items") || obj.contains_key("prefixItems") => "array",
        _ if obj.contains_key("minimum") || obj.contains_key("maximum") => "number",
        _ => "string",
    }
}

fn type_name_of<'v>(schema: &'v Value, root: &'v Value) -> &'v str {
    match schema::resolve(schema, root) {
        Value::Object(obj) => type_name(obj),
        _ => "string",
    }
}

/// The simplest value of a schema's type (used past [`MAX_DEPTH`]).
fn simplest(obj: &Map<String, Value>) -> Value {
    match type_name(obj) {
        "object" => json!({}),
        "array" => json!([]),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!(""),
    }
}

/// One schema holding the properties and `required` entries of every `allOf` branch.
fn merge_all_of(parent: &Map<String, Value>, branches: &[Value], root: &Value) -> Value {
    let mut merged = parent.clone();
    merged.remove("allOf");
    let mut properties = match merged.remove("properties") {
        Some(Value::Object(p)) => p,
        _ => Map::new(),
    };
    let mut required: Vec<Value> = match merged.remove("required") {
        Some(Value::Array(r)) => r,
        _ => Vec::new(),
    };
    for branch in branches {
        let Value::Object(b) = schema::resolve(branch, root) else {
            continue;
        };
        if let Some(Value::Object(p)) = b.get("properties") {
            for (k, v) in p {
                properties.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        if let Some(Value::Array(r)) = b.get("required") {
            for k in r {
                if !required.contains(k) {
                    required.push(k.clone());
                }
            }
        }
        for (k, v) in b {
            if !matches!(k.as_str(), "properties" | "required") {
                merged.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
    }
    if !properties.is_empty() {
        merged.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        merged.insert("required".into(), Value::Array(required));
    }
    Value::Object(merged)
}

/// The default of a numeric argument without a number in the prompt, by what its name says.
fn default_number(hint: &Hint) -> f64 {
    let has = |words: &[&str]| hint.key_stems.iter().any(|s| words.contains(&s.as_str()));
    if has(&["lat", "latitude"]) {
        48.8566
    } else if has(&["lon", "lng", "longitude"]) {
        2.3522
    } else if has(&[
        "day", "count", "limit", "result", "n", "k", "top", "size", "number", "num", "max",
    ]) {
        3.0
    } else if has(&["amount", "price", "budget", "total"]) {
        10.0
    } else if has(&["age"]) {
        30.0
    } else if has(&["year"]) {
        2025.0
    } else {
        1.0
    }
}

fn number_value(n: f64, integer: bool) -> Value {
    if (integer || n.fract() == 0.0) && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(json!(0), Value::Number)
    }
}

/// The stems of a tool's name and description, used to tell tool words from names.
pub fn vocabulary<'a>(texts: impl IntoIterator<Item = &'a str>) -> HashSet<String> {
    texts.into_iter().flat_map(stems_of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(text: &str) -> Prompt {
        Prompt::analyse(
            text,
            &vocabulary(["get_weather", "Get the weather for a city", "search"]),
        )
    }

    fn fill(schema: Value, text: &str) -> Value {
        fill_arguments(&schema, &prompt(text), None, &[])
    }

    #[test]
    fn strings_by_kind() {
        let schema = json!({"type":"object","properties":{
            "city":{"type":"string"},
            "query":{"type":"string"},
            "path":{"type":"string"},
            "url":{"type":"string"},
            "when":{"type":"string","format":"date"},
            "expression":{"type":"string"},
            "language":{"type":"string"},
            "x":{"type":"string","description":"The town to look at"}
        },"required":["city","query","path","url","when","expression","language","x"]});
        let got = fill(
            schema,
            "Weather in Lyon and Nice on 2025-04-02: read notes.txt, see https://a.example, compute 2 + 3 in French",
        );
        assert_eq!(got["city"], "Lyon");
        assert_eq!(got["x"], "Nice");
        assert_eq!(got["path"], "notes.txt");
        assert_eq!(got["url"], "https://a.example");
        assert_eq!(got["when"], "2025-04-02");
        assert_eq!(got["expression"], "2 + 3");
        assert_eq!(got["language"], "French");
        assert!(
            got["query"]
                .as_str()
                .is_some_and(|q| q.starts_with("Weather in Lyon and Nice")),
            "{got}"
        );
    }

    #[test]
    fn fallbacks_without_prompt_values() {
        let schema = json!({"type":"object","properties":{
            "city":{"type":"string"}, "file_path":{"type":"string"}, "email":{"type":"string"}
        },"required":["city","file_path","email"]});
        assert_eq!(
            fill(schema, "what is up"),
            json!({"city": FALLBACK_PLACE, "file_path": "./README.md", "email": "alice@example.com"})
        );
    }

    #[test]
    fn origins_and_destinations_follow_prepositions() {
        let schema = json!({"type":"object","properties":{
            "destination":{"type":"string"}, "origin":{"type":"string"}
        },"required":["destination","origin"]});
        assert_eq!(
            fill(schema, "Flights from Berlin to Rome"),
            json!({"destination":"Rome","origin":"Berlin"})
        );
    }

    #[test]
    fn numbers_from_the_prompt_and_the_bounds() {
        let schema = json!({"type":"object","properties":{
            "days":{"type":"integer","minimum":1,"maximum":7},
            "limit":{"type":"integer","minimum":5,"maximum":10},
            "ratio":{"type":"number","exclusiveMaximum":1},
            "step":{"type":"integer","minimum":3,"multipleOf":5},
            "lat":{"type":"number"}
        },"required":["days","limit","ratio","step","lat"]});
        let got = fill(schema.clone(), "forecast for Oslo for the next 12 days");
        assert_eq!(got["days"], 7, "12 clamped to the maximum");
        assert_eq!(got["limit"], 5, "default 3 raised to the minimum");
        assert_eq!(got["ratio"], 0.5);
        assert_eq!(got["step"], 5);
        assert_eq!(got["lat"], 48.8566);
        let got = fill(schema, "4 days please, at most 8");
        assert_eq!(got["days"], 4);
        assert_eq!(got["limit"], 8, "the next unused number");
    }

    #[test]
    fn enums_booleans_and_optional_properties() {
        let schema = json!({"type":"object","properties":{
            "city":{"type":"string"},
            "units":{"type":"string","enum":["celsius","fahrenheit"]},
            "include_forecast":{"type":"boolean"},
            "verbose":{"type":"boolean","default":false},
            "detail":{"enum":["low","high"],"default":"high"},
            "days":{"type":"integer"}
        },"required":["city","include_forecast","verbose","detail"]});
        let got = fill(
            schema.clone(),
            "Weather in Paris in fahrenheit with the forecast",
        );
        assert_eq!(
            got,
            json!({"city":"Paris","units":"fahrenheit","include_forecast":true,"verbose":false,"detail":"high"})
        );
        let got = fill(schema, "Weather in Paris without a forecast");
        assert_eq!(
            got,
            json!({"city":"Paris","include_forecast":false,"verbose":false,"detail":"high"})
        );
    }

    #[test]
    fn nested_objects_arrays_and_refs() {
        let schema = json!({
            "type":"object",
            "$defs":{"Stop":{"type":"object","properties":{"city":{"type":"string"},"nights":{"type":"integer","minimum":1}},"required":["city","nights"]}},
            "properties":{
                "trip":{"type":"object","properties":{
                    "stops":{"type":"array","items":{"$ref":"#/$defs/Stop"},"minItems":2},
                    "tags":{"type":"array","items":{"type":"string"},"maxItems":2},
                    "pair":{"type":"array","prefixItems":[{"type":"integer"},{"type":"boolean"}]}
                },"required":["stops","tags","pair"]}
            },
            "required":["trip"]
        });
        let got = fill(schema, "Plan a trip through Rome and Vienna");
        let trip = &got["trip"];
        assert_eq!(
            trip["stops"],
            json!([{"city":"Rome","nights":1},{"city":"Vienna","nights":1}])
        );
        assert_eq!(trip["tags"], json!(["plan", "trip"]));
        assert_eq!(trip["pair"], json!([1, false]));
    }

    #[test]
    fn combinators_types_and_recursion() {
        let schema = json!({
            "type":"object",
            "$defs":{"Node":{"type":"object","properties":{"child":{"$ref":"#/$defs/Node"}},"required":["child"]}},
            "properties":{
                "a":{"anyOf":[{"type":"null"},{"type":"integer","minimum":2}]},
                "b":{"type":["null","boolean"]},
                "c":{"allOf":[{"properties":{"x":{"type":"string","const":"k"}},"required":["x"]},{"properties":{"y":{"type":"integer"}},"required":["y"]}]},
                "d":{"const":[1,2]},
                "node":{"$ref":"#/$defs/Node"},
                "e":{"type":"string","maxLength":3,"default":"abcdef"},
                "f":{"type":"string","minLength":12}
            }
        });
        let got = fill(schema, "hi");
        assert_eq!(got["a"], 2);
        assert_eq!(got["b"], false);
        assert_eq!(got["c"], json!({"x":"k","y":1}));
        assert_eq!(got["d"], json!([1, 2]));
        assert_eq!(got["e"], "abc");
        assert_eq!(got["f"].as_str().map(|s| s.chars().count()), Some(12));
        let mut depth = 0;
        let mut node = &got["node"];
        while let Some(child) = node.get("child") {
            depth += 1;
            node = child;
        }
        assert!((3..=MAX_DEPTH).contains(&depth), "{depth}");
    }

    #[test]
    fn focus_and_skip_pick_the_item_of_a_parallel_call() {
        let schema =
            json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]});
        let p = prompt("weather in Paris and Tokyo");
        let skip = vec!["Paris".to_string(), "Tokyo".to_string()];
        assert_eq!(
            fill_arguments(&schema, &p, Some("Tokyo"), &skip),
            json!({"city":"Tokyo"})
        );
        assert_eq!(
            fill_arguments(&schema, &p, Some("Paris"), &skip),
            json!({"city":"Paris"})
        );
    }

    #[test]
    fn odd_schemas_give_objects() {
        for schema in [
            json!(true),
            json!({}),
            json!({"type":"object"}),
            json!({"type":"string"}),
            json!({"$ref":"#"}),
            json!(null),
        ] {
            assert!(fill(schema.clone(), "x").is_object(), "{schema}");
        }
        assert_eq!(
            fill_value(
                &json!({"type":"array","items":{"type":"integer"}}),
                &prompt("1 and 2")
            ),
            json!([1, 2])
        );
    }
}
