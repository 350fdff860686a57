//! Schema-based coercion of tool-call arguments.
//!
//! Models rarely send arguments of exactly the declared types: `"3"` for `3`, `"TRUE"` for
//! `true`, a JSON object inside a string, `"a, b, c"` for an array, and (through the XML
//! protocols) `{"item": [...]}` or `{"0": .., "1": ..}` shapes for arrays. This module turns such
//! values into what the tool's JSON Schema asks for, and records every change as a [`Coercion`]
//! so that nothing changes silently. It owns the coercion rules; schema navigation (`$ref`,
//! property and item schemas) lives in [`crate::schema`], so that a value coerced whole and
//! a value coerced piecewise by the streaming writer see the same schema at every path.
//!
//! Coercion never fails: a value that cannot be brought to the schema's type is left as it is
//! (validation reports it afterwards).
//!
//! Records: one [`Coercion`] per value that changed, at its own path in the input. A value that
//! is rebuilt whole (a string parsed into an object, an `{item: [...]}` turned into an array, a
//! scalar wrapped into an array) is one record holding the final value; nothing inside it is
//! recorded again. An unchanged value has no record.
//!
//! Compositional contract (the streaming writer relies on it, and the tests check each line):
//! (a) an object under a schema whose [`schema::schema_type`] is `Object` is coerced exactly as
//! its properties would be one by one with [`schema::property_schema`] at `path/key`, in the
//! same key order, with the records concatenated; (b) an array under an `Array` schema with an
//! [`schema::items_schema`] is coerced exactly as its items one by one at `path/i`; (c) a
//! string under an [`schema::is_plain_string`] schema is never changed. (This holds for values
//! nested less than 256 deep; deeper values are left as they are.)

use std::fmt::Write as _;

use serde_json::{Map, Number, Value};

use crate::json::{parse_relaxed, pointer};
use crate::part::Coercion;
use crate::schema::{self, JsonType, field, map_field, resolve};

mod plain;
pub(crate) use plain::{Fit, Plain, TextFit};

/// The coerced value and every change made to reach it.
#[derive(Clone, Debug, PartialEq)]
pub struct Coerced {
    /// The value after coercion; the input itself when nothing needed changing.
    pub value: Value,
    /// One record per value that changed, its path a JSON pointer into `value`; empty when
    /// nothing changed.
    pub coercions: Vec<Coercion>,
}

/// Coerces `value` to fit `schema`, resolving `$ref`s against `schema` itself.
pub fn coerce(value: Value, schema: &Value) -> Coerced {
    let mut coercions = Vec::new();
    let value = coerce_at(value, Some(schema), schema, "", &mut coercions);
    Coerced { value, coercions }
}

/// Coerces `value` found at JSON pointer `path` under `schema` (`None`: no schema), resolving
/// `$ref`s against `root`, and appends each change to `out`.
pub(crate) fn coerce_at(
    value: Value,
    schema: Option<&Value>,
    root: &Value,
    path: &str,
    out: &mut Vec<Coercion>,
) -> Value {
    coerce_at_lazily(value, schema, root, || path.to_string(), out)
}

/// [`coerce_at`] with the path made only when a change may be recorded (most values already
/// have their schema's types, and the streaming writer builds a path from its frames).
pub(crate) fn coerce_at_lazily(
    value: Value,
    schema: Option<&Value>,
    root: &Value,
    path: impl FnOnce() -> String,
    out: &mut Vec<Coercion>,
) -> Value {
    if let Some(schema) = schema
        && unchanged(&value, schema, root, 0)
    {
        return value;
    }
    let mut cx = Cx {
        root,
        out,
        path: path(),
        quiet: 0,
        trial: 0,
        depth: 0,
    };
    cx.node(value, schema, true)
}

/// Whether coercion would leave `v` as it is under `schema`, recording nothing, told cheaply
/// for the common case: every value has the one type its schema names, all the way down, and no
/// schema on the way has a combinator, an `enum`/`const` or `nullable`, and no key lacks a
/// property schema. `false` when it cannot tell so simply: coercion then runs. (This follows
/// `node_under`, `apply` and `descend` for exactly those schemas: a value that fits its one type
/// is descended into, and a scalar comes out as it went in.)
fn unchanged(v: &Value, schema: &Value, root: &Value, depth: usize) -> bool {
    if depth >= 64 {
        return false;
    }
    let s = resolve(schema, root);
    let Value::Object(obj) = s else {
        return false;
    };
    if has_combinator(obj) || enum_options(s).is_some() || map_field(obj, "nullable").is_some() {
        return false;
    }
    let Some(t) = map_field(obj, "type")
        .and_then(Value::as_str)
        .and_then(JsonType::from_name)
    else {
        return false;
    };
    match v {
        Value::Object(members) => {
            t == JsonType::Object
                && members.iter().all(|(k, x)| {
                    schema::property_schema(s, k, root)
                        .is_some_and(|ps| unchanged(x, ps, root, depth + 1))
                })
        }
        Value::Array(items) => {
            t == JsonType::Array
                && items.iter().enumerate().all(|(i, x)| {
                    item_schema(s, i, items.len(), root)
                        .is_some_and(|is| unchanged(x, is, root, depth + 1))
                })
        }
        _ => t.fits(v),
    }
}

/// Nesting of schema combinators (`allOf` in `anyOf` in ...) followed for one value.
const MAX_SCHEMA_DEPTH: usize = 32;
/// Nesting of values below which nothing is coerced any more. The parser caps nesting at 128;
/// values built by hand may go deeper, and this keeps the recursion off the end of the stack.
const MAX_VALUE_DEPTH: usize = 256;
/// How many `anyOf` trials may run inside one another (each trial may select inside its own
/// branch); deeper selections take no trials.
const MAX_TRIAL_NESTING: u32 = 3;

/// An ordered set of types a schema accepts, in the order the schema lists them (conversions
/// are tried in that order). Fixed size: there are only seven types.
#[derive(Clone, Copy, Debug)]
struct Types {
    list: [JsonType; 7],
    len: usize,
}

impl Types {
    fn empty() -> Types {
        Types {
            list: [JsonType::Null; 7],
            len: 0,
        }
    }

    fn one(t: JsonType) -> Types {
        let mut ts = Types::empty();
        ts.push(t);
        ts
    }

    fn push(&mut self, t: JsonType) {
        if !self.contains(t) && self.len < self.list.len() {
            self.list[self.len] = t;
            self.len += 1;
        }
    }

    fn contains(&self, t: JsonType) -> bool {
        self.iter().any(|x| x == t)
    }

    fn iter(&self) -> impl Iterator<Item = JsonType> + '_ {
        self.list[..self.len].iter().copied()
    }

    fn fits(&self, v: &Value) -> bool {
        self.iter().any(|t| t.fits(v))
    }

    fn admits(&self, t: JsonType) -> bool {
        self.contains(t) || (t == JsonType::Integer && self.contains(JsonType::Number))
    }
}

/// `None` is "any type". `integer` and `number` meet in `integer`.
fn intersect(a: Option<Types>, b: Option<Types>) -> Option<Types> {
    let (Some(a), Some(b)) = (a, b) else {
        return a.or(b);
    };
    let mut out = Types::empty();
    for t in a.iter() {
        if b.contains(t) {
            out.push(t);
        } else if (t == JsonType::Number && b.contains(JsonType::Integer))
            || (t == JsonType::Integer && b.contains(JsonType::Number))
        {
            out.push(JsonType::Integer);
        }
    }
    Some(out)
}

fn union(a: Option<Types>, b: Option<Types>) -> Option<Types> {
    let (Some(mut a), Some(b)) = (a, b) else {
        return None;
    };
    for t in b.iter() {
        a.push(t);
    }
    Some(a)
}

/// Keywords that say something about the type or shape of a value, i.e. that coercion acts on.
/// A schema with none of them (only `description`, `required`, `minimum`, ...) asks for nothing.
const SHAPE_KEYWORDS: [&str; 8] = [
    "type",
    "properties",
    "additionalProperties",
    "patternProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
];

const COMBINATORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];

fn has_shape(obj: &Map<String, Value>) -> bool {
    SHAPE_KEYWORDS.iter().any(|k| map_field(obj, k).is_some())
}

fn has_combinator(obj: &Map<String, Value>) -> bool {
    COMBINATORS.iter().any(|k| map_field(obj, k).is_some())
}

/// The types one schema object accepts by its own keywords (combinators not included).
/// `type` wins; otherwise the shape keywords tell; OpenAPI's `nullable: true` adds `null`.
fn own_types(schema: &Value) -> Option<Types> {
    let Value::Object(obj) = schema else {
        return None;
    };
    let mut types = match map_field(obj, "type") {
        Some(Value::String(name)) => JsonType::from_name(name).map(Types::one),
        Some(Value::Array(names)) => {
            let mut ts = Types::empty();
            for t in names
                .iter()
                .filter_map(|n| n.as_str().and_then(JsonType::from_name))
            {
                ts.push(t);
            }
            (ts.len > 0).then_some(ts)
        }
        _ => {
            if ["properties", "additionalProperties", "patternProperties"]
                .iter()
                .any(|k| map_field(obj, k).is_some())
            {
                Some(Types::one(JsonType::Object))
            } else if map_field(obj, "items").is_some() || map_field(obj, "prefixItems").is_some() {
                Some(Types::one(JsonType::Array))
            } else if let Some(options) = enum_options(schema) {
                let mut ts = Types::empty();
                for o in options {
                    ts.push(JsonType::of(o));
                }
                (ts.len > 0).then_some(ts)
            } else {
                None
            }
        }
    };
    if let Some(ts) = types.as_mut()
        && map_field(obj, "nullable") == Some(&Value::Bool(true))
    {
        ts.push(JsonType::Null);
    }
    types
}

/// The values an `enum` (or a `const`) allows.
fn enum_options(schema: &Value) -> Option<&[Value]> {
    match (field(schema, "enum"), field(schema, "const")) {
        (Some(Value::Array(options)), _) => Some(options),
        (_, Some(c)) => Some(std::slice::from_ref(c)),
        _ => None,
    }
}

/// Which alternative of an `anyOf`/`oneOf` a value goes with.
enum Choice<'s> {
    Branch(&'s Value),
    /// The branches ask for types and none can be reached: leave the value alone.
    NoMatch,
    /// No branch says anything about the type (e.g. `anyOf` of `required` lists).
    Unconstrained,
}

/// The schemas a value must satisfy together: the schema itself, its `allOf` members and the
/// chosen `anyOf`/`oneOf` branches, flattened and resolved.
#[derive(Default)]
struct Plan<'s> {
    members: Vec<&'s Value>,
    seen: Vec<*const Value>,
    unmatched: bool,
}

struct Cx<'s, 'o> {
    root: &'s Value,
    out: &'o mut Vec<Coercion>,
    /// JSON pointer of the value being coerced.
    path: String,
    /// Above zero, changes are not recorded: inside a value that is recorded whole (a parsed
    /// string, a reshaped array) and inside trials.
    quiet: u32,
    /// Above zero, a trial is running: only the top-level type of its result matters, so
    /// containers are not descended into.
    trial: u32,
    depth: usize,
}

impl<'s> Cx<'s, '_> {
    fn record(&mut self, from: Value, to: &Value) {
        if self.quiet == 0 {
            self.out.push(Coercion {
                path: self.path.clone(),
                from,
                to: to.clone(),
            });
        }
    }

    fn quietly(&mut self, f: impl FnOnce(&mut Self) -> Value) -> Value {
        self.quiet += 1;
        let v = f(self);
        self.quiet -= 1;
        v
    }

    /// Coerces one value. `may_wrap` is false for a value that was itself just wrapped into an
    /// array, so that a recursive array schema (`items: {$ref: "#"}`) cannot wrap it forever.
    fn node(&mut self, v: Value, schema: Option<&'s Value>, may_wrap: bool) -> Value {
        let Some(schema) = schema else {
            return self.schemaless(v);
        };
        if self.depth >= MAX_VALUE_DEPTH {
            return v;
        }
        self.depth += 1;
        let v = self.node_under(v, schema, may_wrap);
        self.depth -= 1;
        v
    }

    fn node_under(&mut self, v: Value, schema: &'s Value, may_wrap: bool) -> Value {
        let s = resolve(schema, self.root);
        match s {
            Value::Bool(true) => return self.schemaless(v),
            Value::Object(obj) if !has_combinator(obj) => {
                return if has_shape(obj) {
                    self.apply(v, std::slice::from_ref(&s), may_wrap)
                } else {
                    self.schemaless(v)
                };
            }
            Value::Object(_) => {}
            // `false` (nothing fits) or not a schema at all: nothing to aim for.
            _ => return v,
        }
        let mut plan = Plan::default();
        self.collect(&v, s, &mut plan, 0, may_wrap);
        if plan.members.is_empty() {
            return if plan.unmatched {
                v
            } else {
                self.schemaless(v)
            };
        }
        self.apply(v, &plan.members, may_wrap)
    }

    /// Flattens `schema` into `plan`: itself when it has shape keywords, its `allOf` members, and
    /// for each `anyOf`/`oneOf` the branch `v` goes with.
    fn collect(
        &mut self,
        v: &Value,
        schema: &'s Value,
        plan: &mut Plan<'s>,
        depth: usize,
        may_wrap: bool,
    ) {
        let s = resolve(schema, self.root);
        if depth > MAX_SCHEMA_DEPTH || plan.seen.contains(&(s as *const Value)) {
            return;
        }
        plan.seen.push(s);
        let obj = match s {
            Value::Object(obj) => obj,
            Value::Bool(false) => {
                plan.unmatched = true;
                return;
            }
            _ => return,
        };
        if has_shape(obj) {
            plan.members.push(s);
        }
        if let Some(Value::Array(all)) = map_field(obj, "allOf") {
            for m in all {
                self.collect(v, m, plan, depth + 1, may_wrap);
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                match self.select(v, branches, may_wrap) {
                    Choice::Branch(b) => self.collect(v, b, plan, depth + 1, may_wrap),
                    Choice::NoMatch => plan.unmatched = true,
                    Choice::Unconstrained => {}
                }
            }
        }
    }

    /// Picks the branch of an `anyOf`/`oneOf` for `v`: a branch whose type `v` already has (the
    /// best-matching one when several do), else the first branch that coercion brings `v` to.
    fn select(&mut self, v: &Value, branches: &'s [Value], may_wrap: bool) -> Choice<'s> {
        let candidates: Vec<(&'s Value, Types)> = branches
            .iter()
            .filter_map(|b| types_of(b, self.root, &mut Vec::new()).map(|ts| (b, ts)))
            .collect();
        if candidates.is_empty() {
            return Choice::Unconstrained;
        }
        if let Value::String(s) = v {
            return self.select_for_string(s, v, &candidates, may_wrap);
        }
        // A scalar fits a branch with an `enum` only when the enum takes it (loosely): for
        // `anyOf: [{enum: ["auto"]}, {type: integer}]`, `"5"` goes with the integer.
        let mut best: Option<(&'s Value, (u8, usize))> = None;
        for &(b, ts) in &candidates {
            let b = resolve(b, self.root);
            let enum_ok = v.is_object()
                || v.is_array()
                || enum_options(b).is_none_or(|o| !matches!(enum_match(v, o), EnumMatch::None));
            if ts.fits(v) && enum_ok {
                let score = branch_score(v, b);
                if best.is_none_or(|(_, s)| score > s) {
                    best = Some((b, score));
                }
            }
        }
        if let Some((b, _)) = best {
            return Choice::Branch(b);
        }
        if self.trial >= MAX_TRIAL_NESTING {
            return Choice::NoMatch;
        }
        for &(b, ts) in &candidates {
            self.trial += 1;
            let tried = self.quietly(|cx| cx.node(v.clone(), Some(b), may_wrap));
            self.trial -= 1;
            let enum_ok = enum_options(resolve(b, self.root))
                .is_none_or(|o| o.iter().any(|x| json_eq(x, &tried)));
            if ts.fits(&tried) && enum_ok {
                return Choice::Branch(b);
            }
        }
        Choice::NoMatch
    }

    /// The branch a string goes with: a branch that allows null when it spells null, else the
    /// first listed branch it parses as (see [`Cx::ordered_string`]); a branch that takes strings
    /// takes it unless it looks like a JSON structure that a later branch can hold.
    fn select_for_string(
        &mut self,
        s: &str,
        v: &Value,
        candidates: &[(&'s Value, Types)],
        may_wrap: bool,
    ) -> Choice<'s> {
        let enum_ok = |this: &Self, b: &'s Value, x: &Value| {
            enum_options(resolve(b, this.root))
                .is_none_or(|o| !matches!(enum_match(x, o), EnumMatch::None))
        };
        if is_null_text(s)
            && let Some(&(b, _)) = candidates
                .iter()
                .find(|(_, ts)| ts.contains(JsonType::Null))
        {
            return Choice::Branch(b);
        }
        let structured = looks_like_json(s);
        let mut string_branch = None;
        for &(b, ts) in candidates {
            if ts.contains(JsonType::String) && enum_ok(self, b, v) {
                if !structured {
                    return Choice::Branch(b);
                }
                string_branch.get_or_insert(b);
            }
            if ts.iter().all(|t| t == JsonType::String) || self.trial >= MAX_TRIAL_NESTING {
                continue;
            }
            self.trial += 1;
            let tried = self.quietly(|cx| cx.node(v.clone(), Some(b), may_wrap));
            self.trial -= 1;
            let exact = enum_options(resolve(b, self.root))
                .is_none_or(|o| o.iter().any(|x| json_eq(x, &tried)));
            if !tried.is_string() && ts.fits(&tried) && exact {
                return Choice::Branch(b);
            }
        }
        match string_branch {
            Some(b) => Choice::Branch(b),
            None => Choice::NoMatch,
        }
    }

    /// Coerces `v` to satisfy all of `members` (resolved schema objects with shape keywords).
    fn apply(&mut self, v: Value, members: &[&'s Value], may_wrap: bool) -> Value {
        if !v.is_object()
            && !v.is_array()
            && let Some(options) = members.iter().find_map(|m| enum_options(m))
        {
            match enum_match(&v, options) {
                EnumMatch::Exact => return v,
                EnumMatch::One(i) => {
                    let to = options[i].clone();
                    self.record(v, &to);
                    return to;
                }
                EnumMatch::None => {}
            }
        }
        let types = members
            .iter()
            .fold(None, |acc, m| intersect(acc, own_types(m)));
        let Some(types) = types else {
            return self.schemaless(v);
        };
        if let Value::String(s) = &v {
            // Where the schema allows null, the literal `null` (and Python's `None`) is null,
            // whatever else the schema allows.
            if types.contains(JsonType::Null) && is_null_text(s) {
                self.record(v, &Value::Null);
                return Value::Null;
            }
            if types.len > 1 && types.contains(JsonType::String) {
                return self.ordered_string(v, types, members, may_wrap);
            }
        }
        if types.fits(&v) {
            return self.descend(v, members, true);
        }
        // Types are tried in the schema's order, like the branches of an `anyOf`. With a single
        // type, a conversion that only gets close (a fractional number for an `integer`) is kept:
        // it is nearer to what was asked, and validation still reports it.
        let mut close = None;
        for t in types.iter() {
            if let Some(new) = self.convert(&v, t, members, may_wrap) {
                if t.fits(&new) {
                    self.record(v, &new);
                    return new;
                }
                close = Some(new);
            }
        }
        match close {
            Some(new) if types.len == 1 => {
                self.record(v, &new);
                new
            }
            _ => v,
        }
    }

    /// A string under a union that allows strings among other types takes the first listed
    /// type it parses as: `"42"` under `["integer","string"]` is 42, under `["string","integer"]`
    /// it stays `"42"`. A string that looks like a JSON object or array is read as the structure
    /// it spells when the union allows one (`{"a":1}` under `["string","object"]` is an object),
    /// and stays a string when no listed type takes it.
    fn ordered_string(
        &mut self,
        v: Value,
        types: Types,
        members: &[&'s Value],
        may_wrap: bool,
    ) -> Value {
        let Value::String(s) = &v else {
            return v;
        };
        let structured = looks_like_json(s);
        for t in types.iter() {
            if t == JsonType::String {
                if structured {
                    continue;
                }
                return v;
            }
            if let Some(new) = self.convert(&v, t, members, may_wrap)
                && t.fits(&new)
            {
                self.record(v, &new);
                return new;
            }
        }
        v
    }

    /// Coerces the members of a container that already has the right type.
    fn descend(&mut self, v: Value, members: &[&'s Value], may_wrap: bool) -> Value {
        if self.trial > 0 {
            return v;
        }
        match v {
            Value::Object(map) => Value::Object(self.descend_object(map, members)),
            Value::Array(items) => Value::Array(self.descend_array(items, members, may_wrap)),
            other => other,
        }
    }

    /// Coerces each member in place (keys and their order stay; no map is built again).
    fn descend_object(
        &mut self,
        mut map: Map<String, Value>,
        members: &[&'s Value],
    ) -> Map<String, Value> {
        let base = self.path.len();
        for (key, slot) in map.iter_mut() {
            // The path is only read by a record: inside a value recorded whole, none is made.
            if self.quiet == 0 {
                pointer::push(&mut self.path, key);
            }
            let value = std::mem::take(slot);
            let value = match members {
                [one] => {
                    let s = schema::property_schema(one, key, self.root);
                    self.node(value, s, true)
                }
                _ => {
                    let mut schemas: Vec<&'s Value> = Vec::new();
                    for m in members {
                        if let Some(s) = schema::property_schema(m, key, self.root)
                            && !schemas.iter().any(|x| std::ptr::eq(*x, s))
                        {
                            schemas.push(s);
                        }
                    }
                    if schemas.is_empty() {
                        self.schemaless(value)
                    } else {
                        // Every sub-schema that declares the key has its say, in order; a key
                        // that some sub-schema declares is never treated as unknown.
                        schemas
                            .into_iter()
                            .fold(value, |v, s| self.node(v, Some(s), true))
                    }
                }
            };
            self.path.truncate(base);
            *slot = value;
        }
        map
    }

    /// Coerces each item in place.
    fn descend_array(
        &mut self,
        mut items: Vec<Value>,
        members: &[&'s Value],
        may_wrap: bool,
    ) -> Vec<Value> {
        let len = items.len();
        let base = self.path.len();
        for (i, slot) in items.iter_mut().enumerate() {
            let value = std::mem::take(slot);
            if self.quiet == 0 {
                // Writing to a String cannot fail.
                let _ = write!(self.path, "/{i}");
            }
            let value = match members {
                [one] => {
                    let s = item_schema(one, i, len, self.root);
                    self.node(value, s, may_wrap)
                }
                _ => {
                    let schemas: Vec<&'s Value> = members
                        .iter()
                        .filter_map(|m| item_schema(m, i, len, self.root))
                        .collect();
                    if schemas.is_empty() {
                        self.schemaless(value)
                    } else {
                        schemas
                            .into_iter()
                            .fold(value, |v, s| self.node(v, Some(s), may_wrap))
                    }
                }
            };
            self.path.truncate(base);
            *slot = value;
        }
        items
    }

    /// Tries to turn `v` into type `t`; the result is recorded by the caller as one change, so
    /// whatever is coerced inside a freshly built value is not recorded again.
    fn convert(
        &mut self,
        v: &Value,
        t: JsonType,
        members: &[&'s Value],
        may_wrap: bool,
    ) -> Option<Value> {
        if let (Value::String(s), false) = (v, t == JsonType::String) {
            // Double-encoded: a JSON string literal holding the value (`"\"42\""`,
            // `"\"{'k': 1}\""`) is read for what it holds.
            if let Some(inner) = json_string_literal(s)
                && self.depth < MAX_VALUE_DEPTH
            {
                self.depth += 1;
                let got = self.convert(&Value::String(inner), t, members, may_wrap);
                self.depth -= 1;
                if got.is_some() {
                    return got;
                }
            }
        }
        match (t, v) {
            (JsonType::String, Value::Number(n)) => Some(Value::String(n.to_string())),
            (JsonType::String, Value::Bool(b)) => Some(Value::String(b.to_string())),
            (JsonType::String, Value::Object(_) | Value::Array(_)) => {
                serde_json::to_string(v).ok().map(Value::String)
            }
            (JsonType::Number | JsonType::Integer, Value::String(s)) => {
                parse_number(s, t == JsonType::Integer, Grammar::Lenient).map(Value::Number)
            }
            (JsonType::Boolean, Value::String(s)) => parse_bool(s).map(Value::Bool),
            (JsonType::Null, Value::String(s)) => is_null_text(s).then_some(Value::Null),
            (JsonType::Object, Value::String(s)) => match parse_relaxed(s) {
                Ok(parsed @ Value::Object(_)) => {
                    Some(self.quietly(|cx| cx.descend(parsed, members, true)))
                }
                _ => None,
            },
            (JsonType::Array, _) => self.make_array(v, members, may_wrap),
            _ => None,
        }
    }

    /// Builds an array from a string (JSON, else newline- or comma-separated), from the shapes
    /// XML protocols produce for repeated elements, or by wrapping a single value.
    fn make_array(&mut self, v: &Value, members: &[&'s Value], may_wrap: bool) -> Option<Value> {
        let (items, items_may_wrap) = match v {
            Value::String(s) => match parse_relaxed(s) {
                Ok(Value::Array(items)) => (items, true),
                // A JSON object: an XML shape, else one object of the array. Splitting its
                // text on commas would cut it to pieces.
                Ok(Value::Object(obj)) => match xml_array(&obj) {
                    Some(items) => (items, true),
                    None if may_wrap && self.items_admit_object(members) => {
                        (vec![Value::Object(obj)], false)
                    }
                    None => return None,
                },
                _ => {
                    let parts = split_list(s);
                    // One part that is the whole text is a wrap, not a split.
                    let wrapped = parts.len() == 1;
                    if wrapped && !may_wrap {
                        return None;
                    }
                    let parts = parts.into_iter().map(|p| Value::String(p.to_string()));
                    (parts.collect(), !wrapped)
                }
            },
            Value::Object(obj) => match xml_array(obj) {
                Some(items) => (items, true),
                None if may_wrap && self.items_admit_object(members) => (vec![v.clone()], false),
                None => return None,
            },
            Value::Array(_) => return None,
            scalar if may_wrap => (vec![scalar.clone()], false),
            _ => return None,
        };
        Some(self.quietly(|cx| {
            if cx.trial > 0 {
                return Value::Array(items);
            }
            Value::Array(cx.descend_array(items, members, items_may_wrap))
        }))
    }

    /// Whether a one-element array holding an object could satisfy the item schemas.
    fn items_admit_object(&self, members: &[&'s Value]) -> bool {
        members
            .iter()
            .all(|m| match item_schema(m, 0, 1, self.root) {
                None => true,
                Some(s) => types_of(s, self.root, &mut Vec::new())
                    .is_none_or(|ts| ts.admits(JsonType::Object)),
            })
    }

    /// The rules for a value without a schema: only strings change, and only when they clearly
    /// hold a boolean, a JSON number, or a JSON object or array.
    fn schemaless(&mut self, v: Value) -> Value {
        let Value::String(s) = &v else {
            return v;
        };
        let new = if let Some(b) = parse_bool(s) {
            Value::Bool(b)
        } else if let Some(n) = parse_number(s, false, Grammar::Json) {
            Value::Number(n)
        } else if looks_like_json(s) {
            // The parsed value is a container, and containers without a schema stay as they
            // are: their strings were quoted on purpose.
            match parse_relaxed(s) {
                Ok(parsed) => parsed,
                Err(_) => return v,
            }
        } else {
            return v;
        };
        self.record(v, &new);
        new
    }
}

/// The types a schema accepts, following `allOf` (intersection) and `anyOf`/`oneOf` (union).
/// `stack` holds the schemas being looked at, so that a recursive reference counts as "any".
fn types_of(schema: &Value, root: &Value, stack: &mut Vec<*const Value>) -> Option<Types> {
    let s = resolve(schema, root);
    if stack.len() > MAX_SCHEMA_DEPTH || stack.contains(&(s as *const Value)) {
        return None;
    }
    let Value::Object(obj) = s else {
        return None;
    };
    stack.push(s);
    let mut types = if has_shape(obj) { own_types(s) } else { None };
    if let Some(Value::Array(all)) = map_field(obj, "allOf") {
        for m in all {
            types = intersect(types, types_of(m, root, stack));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get(key) {
            let mut any: Option<Option<Types>> = None;
            for b in branches {
                let bt = types_of(b, root, stack);
                any = Some(match any {
                    None => bt,
                    Some(acc) => union(acc, bt),
                });
            }
            types = intersect(types, any.flatten());
        }
    }
    stack.pop();
    types
}

/// How well `v` (which already has the branch's type) matches a branch, for choosing among
/// several that fit: for scalars, an enum that holds it beats no enum beats a loose enum match;
/// for objects, agreeing on every `const` property, then declaring more of its keys.
fn branch_score(v: &Value, branch: &Value) -> (u8, usize) {
    match v {
        Value::Object(map) => {
            let Some(Value::Object(props)) = field(branch, "properties") else {
                return (1, 0);
            };
            let mut agrees = true;
            let mut declared = 0;
            for (k, value) in map {
                let Some(p) = props.get(k) else { continue };
                declared += 1;
                if let Some(options) = enum_options(p)
                    && options.len() == 1
                    && !json_eq(&options[0], value)
                {
                    agrees = false;
                }
            }
            (u8::from(agrees), declared)
        }
        Value::Array(_) => (1, 0),
        scalar => match enum_options(branch) {
            None => (2, 0),
            Some(options) => match enum_match(scalar, options) {
                EnumMatch::Exact => (3, 0),
                EnumMatch::One(_) => (1, 0),
                EnumMatch::None => (0, 0),
            },
        },
    }
}

/// The schema of item `i` of an array of `len` items: a tuple position when the array has the
/// tuple's length (`prefixItems`, or the older array form of `items`), else `items`.
fn item_schema<'s>(
    array_schema: &'s Value,
    i: usize,
    len: usize,
    root: &'s Value,
) -> Option<&'s Value> {
    let s = resolve(array_schema, root);
    let object = |v: Option<&'s Value>| v.filter(|v| v.is_object());
    if let Some(Value::Array(prefix)) = field(s, "prefixItems") {
        return if prefix.len() == len {
            prefix.get(i)
        } else {
            object(field(s, "items"))
        };
    }
    match field(s, "items") {
        Some(Value::Array(tuple)) => {
            if tuple.len() == len {
                tuple.get(i)
            } else {
                object(field(s, "additionalItems"))
            }
        }
        items => object(items),
    }
}

/// The array an XML protocol meant: `{item: [...]}` or `{item: x}`, an object whose keys are
/// all indices (in index order), or a single key wrapping an array.
fn xml_array(obj: &Map<String, Value>) -> Option<Vec<Value>> {
    if obj.len() == 1
        && let Some(item) = obj.get("item")
    {
        return Some(match item {
            Value::Array(items) => items.clone(),
            one => vec![one.clone()],
        });
    }
    if !obj.is_empty() {
        let indexed: Option<Vec<(u64, &Value)>> = obj
            .iter()
            .map(|(k, v)| {
                let index = if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
                    k.parse::<u64>().ok()
                } else {
                    None
                };
                index.map(|i| (i, v))
            })
            .collect();
        if let Some(mut indexed) = indexed {
            indexed.sort_by_key(|(i, _)| *i);
            return Some(indexed.into_iter().map(|(_, v)| v.clone()).collect());
        }
    }
    match obj.values().next() {
        Some(Value::Array(items)) if obj.len() == 1 => Some(items.clone()),
        _ => None,
    }
}

/// Splits a list written as text: one item per line when there are several lines, else
/// comma-separated; items are trimmed and empty ones dropped.
fn split_list(s: &str) -> Vec<&str> {
    let sep = if s.contains('\n') { '\n' } else { ',' };
    s.split(sep)
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect()
}

/// `null` (any case) or Python's `None`: the texts that mean null where a schema allows it.
fn is_null_text(s: &str) -> bool {
    let t = s.trim();
    t.eq_ignore_ascii_case("null") || t == "None"
}

/// The string a JSON (or relaxed, single-quoted) string literal holds, when `s` is exactly one.
fn json_string_literal(s: &str) -> Option<String> {
    let t = s.trim();
    if t.len() < 2 || !matches!(t.as_bytes()[0], b'"' | b'\'') {
        return None;
    }
    match parse_relaxed(t) {
        Ok(Value::String(inner)) => Some(inner),
        _ => None,
    }
}

fn looks_like_json(s: &str) -> bool {
    let t = s.trim();
    (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'))
}

fn parse_bool(s: &str) -> Option<bool> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("true") {
        Some(true)
    } else if t.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// Which number texts count as numbers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grammar {
    /// JSON's own grammar: used without a schema, where `"007"` or `"+1"` is more likely an
    /// identifier than a number and must not lose its leading characters.
    Json,
    /// When the schema asks for a number: also a leading `+`, leading zeros, `.5` and `5.`.
    Lenient,
}

/// Checks the grammar of a number text; returns (no fraction or exponent, some mantissa digit
/// is not zero).
fn scan_number(s: &str, grammar: Grammar) -> Option<(bool, bool)> {
    let b = s.as_bytes();
    let mut i = 0;
    match b.first() {
        Some(b'-') => i += 1,
        Some(b'+') if grammar == Grammar::Lenient => i += 1,
        _ => {}
    }
    let mut nonzero = false;
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        nonzero |= b[i] != b'0';
        i += 1;
    }
    let int_digits = i - int_start;
    if grammar == Grammar::Json && (int_digits == 0 || (int_digits > 1 && b[int_start] == b'0')) {
        return None;
    }
    let mut integer = true;
    if b.get(i) == Some(&b'.') {
        integer = false;
        i += 1;
        let frac_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            nonzero |= b[i] != b'0';
            i += 1;
        }
        let frac_digits = i - frac_start;
        if frac_digits == 0 && (grammar == Grammar::Json || int_digits == 0) {
            return None;
        }
    } else if int_digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        integer = false;
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let exp_start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp_start {
            return None;
        }
    }
    (i == b.len()).then_some((integer, nonzero))
}

/// A number from text (trimmed), or `None` when the text is not a number or the number cannot
/// be held without losing it: an integer beyond 64 bits, a float that overflows to infinity or
/// underflows to zero. Such texts stay strings, so their digits survive.
fn parse_number(text: &str, want_integer: bool, grammar: Grammar) -> Option<Number> {
    let s = text.trim();
    let (integer_text, nonzero) = scan_number(s, grammar)?;
    let unsigned = s.strip_prefix('+').unwrap_or(s);
    if integer_text {
        if let Ok(i) = unsigned.parse::<i64>() {
            return Some(Number::from(i));
        }
        return unsigned.parse::<u64>().ok().map(Number::from);
    }
    let f: f64 = unsigned.parse().ok()?;
    if !f.is_finite() || (f == 0.0 && nonzero) {
        return None;
    }
    // 2^63 and 2^64 are exact in f64; integral floats inside those bounds convert exactly.
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const U64_END: f64 = 18_446_744_073_709_551_616.0;
    if want_integer && f.fract() == 0.0 {
        if (-I64_END..I64_END).contains(&f) {
            return Some(Number::from(f as i64));
        }
        if (0.0..U64_END).contains(&f) {
            return Some(Number::from(f as u64));
        }
    }
    Number::from_f64(f)
}

/// JSON equality with numbers compared by value (`1` equals `1.0`, as in JSON Schema).
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        _ => a == b,
    }
}

enum EnumMatch {
    /// The value is one of the options.
    Exact,
    /// The value loosely matches exactly one option (by index).
    One(usize),
    None,
}

/// Matches a scalar against enum options: exactly, else by the first loose rule under which
/// anything matches (case, surrounding quotes, whitespace, the typed reading of a string); an
/// ambiguous loose match is no match.
fn enum_match(v: &Value, options: &[Value]) -> EnumMatch {
    if options.iter().any(|o| json_eq(o, v)) {
        return EnumMatch::Exact;
    }
    let pick = |matches: &mut dyn Iterator<Item = usize>| -> Option<EnumMatch> {
        let mut found: Option<usize> = None;
        for i in matches {
            match found {
                None => found = Some(i),
                Some(f) if json_eq(&options[f], &options[i]) => {}
                Some(_) => return Some(EnumMatch::None),
            }
        }
        found.map(EnumMatch::One)
    };
    let strings = || {
        options
            .iter()
            .enumerate()
            .filter_map(|(i, o)| o.as_str().map(|s| (i, s)))
    };
    match v {
        Value::String(s) => {
            let lower = s.to_lowercase();
            let unquoted = unquote(s);
            let squeezed = squeeze(s);
            let tiers: [&dyn Fn(&str) -> bool; 3] = [
                &|o| o.to_lowercase() == lower,
                &|o| unquoted.is_some_and(|u| u == o || u.to_lowercase() == o.to_lowercase()),
                &|o| squeeze(o) == squeezed,
            ];
            for tier in tiers {
                if let Some(m) = pick(&mut strings().filter(|(_, o)| tier(o)).map(|(i, _)| i)) {
                    return m;
                }
            }
            let typed = parse_number(s, false, Grammar::Lenient)
                .map(Value::Number)
                .or_else(|| parse_bool(s).map(Value::Bool))
                .or_else(|| s.trim().eq_ignore_ascii_case("null").then_some(Value::Null));
            match typed {
                Some(t) => {
                    let mut it = options
                        .iter()
                        .enumerate()
                        .filter(|(_, o)| json_eq(o, &t))
                        .map(|(i, _)| i);
                    pick(&mut it).unwrap_or(EnumMatch::None)
                }
                None => EnumMatch::None,
            }
        }
        Value::Number(_) | Value::Bool(_) => {
            let text = v.to_string();
            let mut it = strings()
                .filter(|(_, o)| o.trim().eq_ignore_ascii_case(&text))
                .map(|(i, _)| i);
            pick(&mut it).unwrap_or(EnumMatch::None)
        }
        _ => EnumMatch::None,
    }
}

/// The text inside one pair of matching quotes (`"…"`, `'…'` or `` `…` ``), if it is quoted.
fn unquote(s: &str) -> Option<&str> {
    let t = s.trim();
    let first = t.chars().next()?;
    if !matches!(first, '"' | '\'' | '`') || t.len() < 2 || !t.ends_with(first) {
        return None;
    }
    t.get(1..t.len() - 1)
}

/// Lower case without any whitespace.
fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(path: &str, from: Value, to: Value) -> Coercion {
        Coercion {
            path: path.to_string(),
            from,
            to,
        }
    }

    /// For values that change as a whole at the top: the result, and exactly one record at ""
    /// when it changed, none when it did not.
    fn check_whole(cases: &[(Value, Value, Value)]) {
        for (schema, input, want) in cases {
            let got = coerce(input.clone(), schema);
            assert_eq!(got.value, *want, "schema {schema}, input {input}");
            let want_records = if input == want {
                vec![]
            } else {
                vec![rec("", input.clone(), want.clone())]
            };
            assert_eq!(
                got.coercions, want_records,
                "schema {schema}, input {input}"
            );
        }
    }

    #[test]
    fn seed_quick_examples() {
        let got = coerce(json!("42"), &json!({"type":"number"}));
        assert_eq!(got.value, json!(42));

        let got = coerce(
            json!("1, 2, 3"),
            &json!({"type":"array","items":{"type":"number"}}),
        );
        assert_eq!(got.value, json!([1, 2, 3]));

        let schema =
            json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"boolean"}}});
        let got = coerce(json!(r#"{"a":"1","b":"true"}"#), &schema);
        assert_eq!(got.value, json!({"a":1,"b":true}));
        // One record for the string that became an object, holding the final object.
        assert_eq!(
            got.coercions,
            vec![rec(
                "",
                json!(r#"{"a":"1","b":"true"}"#),
                json!({"a":1,"b":true})
            )]
        );
    }

    #[test]
    fn strings_become_booleans_when_asked() {
        let b = json!({"type":"boolean"});
        check_whole(&[
            (b.clone(), json!("true"), json!(true)),
            (b.clone(), json!(" FALSE "), json!(false)),
            (b.clone(), json!("True"), json!(true)),
            (b.clone(), json!("yes"), json!("yes")),
            (b.clone(), json!(1), json!(1)),
            (b, json!(true), json!(true)),
        ]);
    }

    #[test]
    fn strings_become_numbers_when_asked() {
        let n = json!({"type":"number"});
        let i = json!({"type":"integer"});
        check_whole(&[
            (n.clone(), json!("42"), json!(42)),
            (n.clone(), json!(" -3.5 "), json!(-3.5)),
            (n.clone(), json!("1e3"), json!(1000.0)),
            (n.clone(), json!("2.5E-1"), json!(0.25)),
            (n.clone(), json!("+7"), json!(7)),
            (n.clone(), json!(".5"), json!(0.5)),
            (n.clone(), json!("007"), json!(7)),
            (n.clone(), json!("3.0"), json!(3.0)),
            (n.clone(), json!("abc"), json!("abc")),
            (n.clone(), json!("1,5"), json!("1,5")),
            (n.clone(), json!("NaN"), json!("NaN")),
            (n.clone(), json!("inf"), json!("inf")),
            (n.clone(), json!(""), json!("")),
            (n, json!("-"), json!("-")),
            (i.clone(), json!("3.0"), json!(3)),
            (i.clone(), json!("1e2"), json!(100)),
            (i.clone(), json!("-12"), json!(-12)),
            (
                i.clone(),
                json!("18446744073709551615"),
                json!(18446744073709551615u64),
            ),
            // Not an integer, but a number is closer to what was asked than a string.
            (i.clone(), json!("3.5"), json!(3.5)),
            (i, json!(3.0), json!(3.0)),
        ]);
    }

    #[test]
    fn numbers_that_cannot_be_held_stay_strings() {
        let huge = format!("1{}", "0".repeat(100_000));
        let tiny = format!("0.{}1", "0".repeat(100_000));
        let long_int = "123456789012345678901234567890".to_string();
        for schema in [
            json!({"type":"number"}),
            json!({"type":"integer"}),
            json!({}),
        ] {
            for text in [
                &huge,
                &tiny,
                &long_int,
                &"1e400".to_string(),
                &"-1e999".to_string(),
                &"1e-400".to_string(),
            ] {
                let got = coerce(json!(text), &schema);
                assert_eq!(
                    got.value,
                    json!(text),
                    "{schema} {}",
                    &text[..text.len().min(20)]
                );
                assert!(got.coercions.is_empty());
            }
        }
        // Inside an array the element keeps its digits too.
        let got = coerce(
            json!(format!("[{huge}]")),
            &json!({"type":"array","items":{"type":"number"}}),
        );
        assert!(got.value.is_array());
        assert!(got.value.to_string().contains(&huge));
    }

    #[test]
    fn schemaless_rules() {
        for schema in [json!({}), json!(true), json!({"description":"anything"})] {
            check_whole(&[
                (schema.clone(), json!("TRUE"), json!(true)),
                (schema.clone(), json!("false"), json!(false)),
                (schema.clone(), json!("12"), json!(12)),
                (schema.clone(), json!(" -1.5 "), json!(-1.5)),
                (schema.clone(), json!("1e2"), json!(100.0)),
                // Not JSON numbers: likely identifiers, kept whole.
                (schema.clone(), json!("007"), json!("007")),
                (schema.clone(), json!("+1"), json!("+1")),
                (schema.clone(), json!(".5"), json!(".5")),
                (schema.clone(), json!(r#"{"a":"1"}"#), json!({"a":"1"})),
                (schema.clone(), json!(" [1, \"2\"] "), json!([1, "2"])),
                (schema.clone(), json!("{}"), json!({})),
                (schema.clone(), json!("{not json}"), json!("{not json}")),
                (schema.clone(), json!("hello"), json!("hello")),
                (schema.clone(), json!("null"), json!("null")),
                (schema.clone(), json!(5), json!(5)),
                (schema.clone(), json!(null), json!(null)),
                (schema.clone(), json!({"a":"1"}), json!({"a":"1"})),
                (schema, json!(["true"]), json!(["true"])),
            ]);
        }
        // No schema at all.
        let mut out = Vec::new();
        assert_eq!(
            coerce_at(json!("true"), None, &json!({}), "/x", &mut out),
            json!(true)
        );
        assert_eq!(out, vec![rec("/x", json!("true"), json!(true))]);
    }

    #[test]
    fn string_schema_takes_the_text_form() {
        let s = json!({"type":"string"});
        check_whole(&[
            (s.clone(), json!(123), json!("123")),
            (s.clone(), json!(-1.5), json!("-1.5")),
            (s.clone(), json!(true), json!("true")),
            (
                s.clone(),
                json!({"a": 1, "b": [true]}),
                json!(r#"{"a":1,"b":[true]}"#),
            ),
            (s.clone(), json!([1, "x"]), json!(r#"[1,"x"]"#)),
            (s.clone(), json!(null), json!(null)),
            (s, json!("42"), json!("42")),
        ]);
    }

    #[test]
    fn object_schema() {
        let schema = json!({
            "type":"object",
            "properties": {"a":{"type":"number"}, "b":{"type":"boolean"}, "s":{"type":"string"}},
            "patternProperties": {"^n_": {"type":"integer"}},
            "additionalProperties": {"type":"boolean"}
        });
        // A string is parsed; the whole object is one record.
        check_whole(&[
            (
                schema.clone(),
                json!(r#"{"a":"1","n_x":"2"}"#),
                json!({"a":1,"n_x":2}),
            ),
            (schema.clone(), json!("{}"), json!({})),
            (schema.clone(), json!(" { } "), json!({})),
            (schema.clone(), json!("[1]"), json!("[1]")),
            (schema.clone(), json!("nope"), json!("nope")),
            (schema.clone(), json!(7), json!(7)),
        ]);

        // An object is coerced property by property, in order, one record per change.
        let got = coerce(
            json!({"zz":"true","s":5,"a":"2","n_1":"3","b":false}),
            &schema,
        );
        assert_eq!(
            got.value,
            json!({"zz":true,"s":"5","a":2,"n_1":3,"b":false})
        );
        let keys: Vec<&String> = got.value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["zz", "s", "a", "n_1", "b"]);
        assert_eq!(
            got.coercions,
            vec![
                rec("/zz", json!("true"), json!(true)),
                rec("/s", json!(5), json!("5")),
                rec("/a", json!("2"), json!(2)),
                rec("/n_1", json!("3"), json!(3)),
            ]
        );

        // Unknown properties are kept and get the schema-less rules.
        let closed = json!({"type":"object","properties":{"a":{"type":"integer"}},"additionalProperties":false});
        let got = coerce(
            json!({"a":"1","extra":"false","more":{"x":"1"},"s":"hi"}),
            &closed,
        );
        assert_eq!(
            got.value,
            json!({"a":1,"extra":false,"more":{"x":"1"},"s":"hi"})
        );
    }

    #[test]
    fn array_from_strings() {
        let nums = json!({"type":"array","items":{"type":"number"}});
        let strs = json!({"type":"array","items":{"type":"string"}});
        let any = json!({"type":"array"});
        check_whole(&[
            (
                nums.clone(),
                json!(r#"["1", 2, "3.5"]"#),
                json!([1, 2, 3.5]),
            ),
            (nums.clone(), json!("1, 2, 3"), json!([1, 2, 3])),
            (nums.clone(), json!("1,,2, "), json!([1, 2])),
            (nums.clone(), json!("1\n2\n\n 3 \n"), json!([1, 2, 3])),
            (nums.clone(), json!("5"), json!([5])),
            (nums.clone(), json!(""), json!([])),
            (strs.clone(), json!("a, b"), json!(["a", "b"])),
            (
                strs.clone(),
                json!("Paris, France\nOslo, Norway"),
                json!(["Paris, France", "Oslo, Norway"]),
            ),
            (strs.clone(), json!("Paris"), json!(["Paris"])),
            (strs, json!(r#"{"item": ["a", "b"]}"#), json!(["a", "b"])),
            (
                json!({"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}}),
                json!(r#"{"n": "1", "m": 2}"#),
                json!([{"n": 1, "m": 2}]),
            ),
            (any, json!("x, true"), json!(["x", true])),
        ]);
        // Arrays of arrays: lines, then commas.
        let grid = json!({"type":"array","items":{"type":"array","items":{"type":"integer"}}});
        check_whole(&[(grid, json!("1,2\n3,4"), json!([[1, 2], [3, 4]]))]);
    }

    #[test]
    fn array_tuples_follow_prefix_items_when_the_length_matches() {
        let tuple = json!({
            "type":"array",
            "prefixItems":[{"type":"string"},{"type":"integer"},{"type":"boolean"}],
            "items":{"type":"number"}
        });
        let got = coerce(json!([1, "2", "true"]), &tuple);
        assert_eq!(got.value, json!(["1", 2, true]));
        assert_eq!(got.coercions[0], rec("/0", json!(1), json!("1")));
        // A different length uses `items` for every element.
        assert_eq!(coerce(json!(["1", "2"]), &tuple).value, json!([1, 2]));
        // The older array form of `items` is a tuple too.
        let old = json!({"type":"array","items":[{"type":"string"},{"type":"integer"}]});
        assert_eq!(coerce(json!([1, "2"]), &old).value, json!(["1", 2]));
        assert_eq!(coerce(json!("a, 2"), &old).value, json!(["a", 2]));
    }

    #[test]
    fn array_from_xml_shapes_and_single_values() {
        let nums = json!({"type":"array","items":{"type":"integer"}});
        let objs =
            json!({"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}});
        check_whole(&[
            (nums.clone(), json!({"item": ["1", "2"]}), json!([1, 2])),
            (nums.clone(), json!({"item": "3"}), json!([3])),
            (
                nums.clone(),
                json!({"1": "b1", "0": "7", "10": "9"}),
                json!([7, "b1", 9]),
            ),
            (nums.clone(), json!({"values": ["4", 5]}), json!([4, 5])),
            (nums.clone(), json!(6), json!([6])),
            (nums.clone(), json!(true), json!([true])),
            (nums.clone(), json!(null), json!([null])),
            (
                json!({"type":"array","items":{"type":"string"}}),
                json!(6),
                json!(["6"]),
            ),
            // An object that is no known shape is one element, when the items take objects.
            (objs.clone(), json!({"n": "1"}), json!([{"n": 1}])),
            (
                nums.clone(),
                json!({"a": 1, "b": 2}),
                json!({"a": 1, "b": 2}),
            ),
            (nums, json!({}), json!({})),
        ]);
        // An array value is descended into, never reshaped.
        assert_eq!(coerce(json!([{"n":"2"}]), &objs).value, json!([{"n": 2}]));
    }

    #[test]
    fn null_type() {
        check_whole(&[
            (json!({"type":"null"}), json!("null"), json!(null)),
            (json!({"type":"null"}), json!(" NULL "), json!(null)),
            (json!({"type":"null"}), json!("nil"), json!("nil")),
            (json!({"type":"null"}), json!(0), json!(0)),
        ]);
    }

    #[test]
    fn type_lists_and_nullable() {
        check_whole(&[
            (json!({"type":["integer","null"]}), json!("5"), json!(5)),
            (
                json!({"type":["integer","null"]}),
                json!("null"),
                json!(null),
            ),
            (json!({"type":["integer","null"]}), json!(null), json!(null)),
            // The value already fits one of the types.
            (json!({"type":["string","integer"]}), json!("5"), json!("5")),
            (
                json!({"type":["number","boolean"]}),
                json!("true"),
                json!(true),
            ),
            (json!({"type":["boolean","string"]}), json!(3), json!("3")),
            (
                json!({"type":"integer","nullable":true}),
                json!("null"),
                json!(null),
            ),
            (
                json!({"type":"integer","nullable":true}),
                json!("4"),
                json!(4),
            ),
            // Where null is allowed, `null` and Python's `None` are null, whatever else is.
            (
                json!({"type":"string","nullable":true}),
                json!("null"),
                json!(null),
            ),
            (
                json!({"type":["string","null"]}),
                json!(" None "),
                json!(null),
            ),
            (
                json!({"type":["string","null"]}),
                json!("none"),
                json!("none"),
            ),
            (
                json!({"type":["null","string"]}),
                json!("text"),
                json!("text"),
            ),
            (
                json!({"type":"integer","nullable":false}),
                json!("null"),
                json!("null"),
            ),
            // Nothing reached exactly among several types: unchanged, as with `anyOf`.
            (
                json!({"type":["integer","null"]}),
                json!("3.5"),
                json!("3.5"),
            ),
            (
                json!({"anyOf":[{"type":"integer"},{"type":"null"}]}),
                json!("3.5"),
                json!("3.5"),
            ),
        ]);
    }

    #[test]
    fn unions_take_the_first_listed_type_a_string_parses_as() {
        check_whole(&[
            (json!({"type":["integer","string"]}), json!("42"), json!(42)),
            (
                json!({"type":["string","integer"]}),
                json!("42"),
                json!("42"),
            ),
            (
                json!({"type":["string","object"]}),
                json!(r#"{"a":1}"#),
                json!({"a":1}),
            ),
            (
                json!({"type":["object","string"]}),
                json!(r#"{"a":1"#),
                json!(r#"{"a":1"#),
            ),
            (
                json!({"type":["object","string"]}),
                json!("{not json}"),
                json!("{not json}"),
            ),
            (
                json!({"type":["boolean","string"]}),
                json!("True"),
                json!(true),
            ),
            (
                json!({"type":["array","string"]}),
                json!("a, b"),
                json!(["a", "b"]),
            ),
            (
                json!({"type":["string","array"]}),
                json!("a, b"),
                json!("a, b"),
            ),
            (
                json!({"anyOf":[{"type":"integer"},{"type":"string"}]}),
                json!("42"),
                json!(42),
            ),
            (
                json!({"anyOf":[{"type":"string"},{"type":"integer"}]}),
                json!("42"),
                json!("42"),
            ),
            (
                json!({"anyOf":[{"type":"string"},{"type":"object"}]}),
                json!(r#"{"a":1}"#),
                json!({"a":1}),
            ),
            (
                json!({"anyOf":[{"type":"object"},{"type":"string"}]}),
                json!("[broken"),
                json!("[broken"),
            ),
            (
                json!({"oneOf":[{"type":"string"},{"type":"null"}]}),
                json!("None"),
                json!(null),
            ),
        ]);
        let got = coerce(json!("42"), &json!({"type":["integer","string"]}));
        assert_eq!(got.coercions, vec![rec("", json!("42"), json!(42))]);
    }

    #[test]
    fn python_literals_and_double_encoded_json_for_non_string_targets() {
        let obj =
            json!({"type":"object","properties":{"k":{"type":"integer"},"b":{"type":"boolean"}}});
        check_whole(&[
            (
                obj.clone(),
                json!("{'k': 1, 'b': True, 'n': None}"),
                json!({"k": 1, "b": true, "n": null}),
            ),
            (obj.clone(), json!("\"{'k': 1}\""), json!({"k": 1})),
            (obj.clone(), json!(r#""{\"k\": \"2\"}""#), json!({"k": 2})),
            (
                json!({"type":"array","items":{"type":"string"}}),
                json!("['a', 'b']"),
                json!(["a", "b"]),
            ),
            (
                json!({"type":"array","items":{"type":"integer"}}),
                json!("\"[1, 2]\""),
                json!([1, 2]),
            ),
            (json!({"type":"integer"}), json!("\"42\""), json!(42)),
            (json!({"type":"boolean"}), json!("'False'"), json!(false)),
            (json!({"type":"null"}), json!("None"), json!(null)),
            // A string target keeps the text as written.
            (json!({"type":"string"}), json!("\"42\""), json!("\"42\"")),
        ]);
        let got = coerce(json!("\"{'k': '1'}\""), &obj);
        assert_eq!(
            got.coercions,
            vec![rec("", json!("\"{'k': '1'}\""), json!({"k": 1}))]
        );
    }

    #[test]
    fn any_of_and_one_of_pick_a_branch() {
        let opt_str = json!({"anyOf":[{"type":"string"},{"type":"null"}]});
        let opt_int = json!({"anyOf":[{"type":"integer"},{"type":"null"}]});
        check_whole(&[
            (opt_str.clone(), json!("null"), json!(null)),
            (opt_str.clone(), json!("None"), json!(null)),
            (opt_str.clone(), json!(null), json!(null)),
            (opt_str, json!(5), json!("5")),
            (opt_int.clone(), json!("null"), json!(null)),
            (opt_int.clone(), json!("7"), json!(7)),
            (opt_int, json!("seven"), json!("seven")),
            (
                json!({"oneOf":[{"type":"boolean"},{"type":"number"}]}),
                json!("2"),
                json!(2),
            ),
            (
                json!({"oneOf":[{"type":"boolean"},{"type":"number"}]}),
                json!("False"),
                json!(false),
            ),
            (
                json!({"anyOf":[{"type":"integer"},{"type":"boolean"}]}),
                json!("abc"),
                json!("abc"),
            ),
            (
                json!({"anyOf":[{"type":"integer"},{"type":"boolean"}]}),
                json!({"a":"1"}),
                json!({"a":"1"}),
            ),
            // A branch whose enum refuses the value does not fit it.
            (
                json!({"anyOf":[{"enum":["auto"]},{"type":"integer"}]}),
                json!("5"),
                json!(5),
            ),
            (
                json!({"anyOf":[{"enum":["auto"]},{"type":"integer"}]}),
                json!("AUTO"),
                json!("auto"),
            ),
            (
                json!({"anyOf":[{"enum":["auto"]},{"type":"integer"}]}),
                json!("c"),
                json!("c"),
            ),
            (
                json!({"anyOf":[{"type":"integer"},{"const":"none"}]}),
                json!("None"),
                json!("none"),
            ),
            // Branches that fit by type: the one whose enum holds the value wins.
            (
                json!({"anyOf":[{"enum":["a","b"]},{"enum":["c","d"]}]}),
                json!("D"),
                json!("d"),
            ),
            // Branches that say nothing about types leave the schema-less rules in charge.
            (
                json!({"anyOf":[{"required":["x"]},{"required":["y"]}]}),
                json!("1"),
                json!(1),
            ),
        ]);

        // Objects go with the branch whose `const` discriminator and keys they match.
        let union = json!({"oneOf":[
            {"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}}},
            {"type":"object","properties":{"kind":{"const":"rect"},"w":{"type":"number"},"h":{"type":"string"}}}
        ]});
        let got = coerce(json!({"kind":"rect","w":"2","h":3}), &union);
        assert_eq!(got.value, json!({"kind":"rect","w":2,"h":"3"}));
        let got = coerce(json!({"kind":"circle","r":"1.5"}), &union);
        assert_eq!(got.value, json!({"kind":"circle","r":1.5}));
        // A string holding an object tries the branches and takes the first that fits.
        let got = coerce(json!(r#"{"kind":"circle","r":"1"}"#), &union);
        assert_eq!(got.value, json!({"kind":"circle","r":1}));
    }

    #[test]
    fn all_of_applies_every_sub_schema() {
        let schema = json!({
            "$defs": {"Base": {"type":"object","properties":{"a":{"type":"integer"}}}},
            "allOf": [
                {"$ref":"#/$defs/Base"},
                {"properties":{"b":{"type":"string"}}},
                {"properties":{"a":{"minimum":0}}}
            ]
        });
        let got = coerce(json!({"a":"1","b":2,"c":"true","d":"x"}), &schema);
        assert_eq!(got.value, json!({"a":1,"b":"2","c":true,"d":"x"}));
        assert_eq!(
            got.coercions,
            vec![
                rec("/a", json!("1"), json!(1)),
                rec("/b", json!(2), json!("2")),
                rec("/c", json!("true"), json!(true)),
            ]
        );
        // Types meet: `number` and `integer` together are `integer`.
        check_whole(&[(
            json!({"type":"number","allOf":[{"type":"integer"}]}),
            json!("2.0"),
            json!(2),
        )]);
        // An allOf member that is only a description leaves the rest in charge.
        check_whole(&[(
            json!({"allOf":[{"description":"d"},{"type":"boolean"}]}),
            json!("true"),
            json!(true),
        )]);
    }

    #[test]
    fn refs_to_defs_and_definitions() {
        let schema = json!({
            "type":"object",
            "$defs": {"Days": {"type":"integer"}, "Node": {
                "type":"object",
                "properties": {"v":{"type":"integer"}, "kids":{"type":"array","items":{"$ref":"#/$defs/Node"}}}
            }},
            "definitions": {"Flag": {"type":"boolean"}},
            "properties": {
                "days": {"$ref":"#/$defs/Days"},
                "flag": {"$ref":"#/definitions/Flag"},
                "tree": {"$ref":"#/$defs/Node"},
                "me": {"$ref":"#"}
            }
        });
        let got = coerce(
            json!({"days":"3","flag":"false","tree":{"v":"1","kids":[{"v":"2","kids":"[]"}]},"me":{"days":"4"}}),
            &schema,
        );
        assert_eq!(
            got.value,
            json!({"days":3,"flag":false,"tree":{"v":1,"kids":[{"v":2,"kids":[]}]},"me":{"days":4}})
        );
        assert!(got.coercions.iter().any(|c| c.path == "/tree/kids/0/v"));
        assert!(got.coercions.iter().any(|c| c.path == "/me/days"));
    }

    #[test]
    fn cyclic_and_odd_schemas_terminate() {
        let cases = [
            json!({"$defs":{"A":{"allOf":[{"$ref":"#/$defs/A"}]}},"$ref":"#/$defs/A"}),
            json!({"$defs":{"A":{"anyOf":[{"$ref":"#/$defs/A"},{"$ref":"#/$defs/A"},{"type":"number"}]}},"$ref":"#/$defs/A"}),
            json!({"$defs":{"A":{"oneOf":[{"$ref":"#/$defs/A"},{"allOf":[{"$ref":"#/$defs/A"}]}]}},"$ref":"#/$defs/A"}),
            json!({"type":"array","items":{"$ref":"#"}}),
            json!({"anyOf":[{"type":"array","items":{"$ref":"#"}},{"type":"boolean"}]}),
            json!({"$ref":"#/nowhere"}),
            json!({"type": 5, "properties": 3, "items": "x", "enum": 1, "anyOf": "x"}),
            json!(false),
            json!(42),
        ];
        let inputs = [
            json!("5"),
            json!("x"),
            json!({"a":"1"}),
            json!([["1"]]),
            json!("[[1]]"),
            json!(null),
        ];
        for schema in &cases {
            for input in &inputs {
                // Terminates, and whatever it did is recorded consistently.
                let got = coerce(input.clone(), schema);
                if got.value == *input {
                    assert!(got.coercions.is_empty(), "{schema} {input}");
                }
            }
        }
        // A scalar under a recursive array schema is wrapped once, not forever.
        assert_eq!(coerce(json!(5), &cases[3]).value, json!([5]));
        assert_eq!(coerce(json!("5"), &cases[3]).value, json!(["5"]));
        // `false` accepts nothing: leave the value alone.
        check_whole(&[(json!(false), json!("1"), json!("1"))]);
    }

    #[test]
    fn deep_values_do_not_exhaust_the_stack() {
        let arrays = json!({"type":"array","items":{"anyOf":[{"$ref":"#"},{"type":"integer"}]}});
        let objects = json!({"type":"object","additionalProperties":{"$ref":"#"},"properties":{"n":{"type":"integer"}}});
        for depth in [128, 400] {
            let mut a = json!("1");
            let mut o = json!({"n":"1"});
            for _ in 0..depth {
                a = Value::Array(vec![a]);
                o = json!({ "k": o });
            }
            let got = coerce(a, &arrays);
            assert_eq!(got.coercions.len(), usize::from(depth < MAX_VALUE_DEPTH));
            let got = coerce(o, &objects);
            assert_eq!(got.coercions.len(), usize::from(depth < MAX_VALUE_DEPTH));
        }
    }

    #[test]
    fn enums_match_loosely_only_when_unambiguous() {
        let cities = json!({"type":"string","enum":["Paris","New York","london"]});
        check_whole(&[
            (cities.clone(), json!("Paris"), json!("Paris")),
            (cities.clone(), json!("paris"), json!("Paris")),
            (cities.clone(), json!("LONDON"), json!("london")),
            (cities.clone(), json!("'Paris'"), json!("Paris")),
            (cities.clone(), json!("\"new york\""), json!("New York")),
            (cities.clone(), json!("New  York"), json!("New York")),
            (cities.clone(), json!(" newyork "), json!("New York")),
            (cities.clone(), json!("Berlin"), json!("Berlin")),
            (cities, json!(3), json!("3")),
            // Two options differ only by case: no guess.
            (json!({"enum":["ab","AB"]}), json!("Ab"), json!("Ab")),
            (json!({"enum":["ab","AB"]}), json!("AB"), json!("AB")),
            (json!({"enum":[1, 2, 3]}), json!("2"), json!(2)),
            (json!({"enum":[1, 2, 3]}), json!(" 3.0 "), json!(3)),
            (json!({"enum":[1.5, 2]}), json!("1.5"), json!(1.5)),
            (json!({"enum":["1", "2"]}), json!(2), json!("2")),
            (json!({"enum":[true, "auto"]}), json!("TRUE"), json!(true)),
            (json!({"enum":[null, "x"]}), json!("null"), json!(null)),
            (json!({"const":"X"}), json!("x"), json!("X")),
            (json!({"const":"X"}), json!("X"), json!("X")),
            (json!({"const":5}), json!("5"), json!(5)),
            (
                json!({"type":"integer","enum":[1, 2]}),
                json!("7"),
                json!(7),
            ),
        ]);
    }

    #[test]
    fn paths_are_escaped_json_pointers() {
        let schema = json!({"type":"object","properties":{
            "a/b": {"type":"integer"},
            "~c": {"type":"array","items":{"type":"object","properties":{"x":{"type":"boolean"}}}}
        }});
        let got = coerce(json!({"a/b":"1","~c":[{"x":"true"},{"x":true}]}), &schema);
        assert_eq!(
            got.coercions,
            vec![
                rec("/a~1b", json!("1"), json!(1)),
                rec("/~0c/0/x", json!("true"), json!(true))
            ]
        );
        assert_eq!(pointer::child("/p", "a/~b"), "/p/a~1~0b");
        // coerce_at prefixes its own path.
        let mut out = Vec::new();
        coerce_at(
            json!({"a/b":"2"}),
            Some(&schema),
            &schema,
            "/args",
            &mut out,
        );
        assert_eq!(out, vec![rec("/args/a~1b", json!("2"), json!(2))]);
    }

    #[test]
    fn nested_changes_inside_a_parsed_value_are_one_record() {
        let schema = json!({"type":"object","properties":{"o":{"type":"object","properties":{"n":{"type":"integer"}}}}});
        let got = coerce(json!({"o": r#"{"n":"1"}"#}), &schema);
        assert_eq!(got.value, json!({"o":{"n":1}}));
        assert_eq!(
            got.coercions,
            vec![rec("/o", json!(r#"{"n":"1"}"#), json!({"n":1}))]
        );
        // Unchanged input: no records at all.
        let got = coerce(json!({"o":{"n":1}}), &schema);
        assert!(got.coercions.is_empty());
    }

    // The compositional contract the streaming writer relies on.

    fn fixed_root() -> Value {
        json!({
            "$defs": {
                "Obj": {
                    "type":"object",
                    "properties": {
                        "n":{"type":"number"}, "i":{"type":"integer"}, "b":{"type":"boolean"},
                        "s":{"type":"string"}, "e":{"enum":["Paris","London"]},
                        "list":{"type":"array","items":{"type":"integer"}},
                        "obj":{"$ref":"#/$defs/Obj"},
                        "u":{"anyOf":[{"type":"integer"},{"type":"null"}]},
                        "t":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}]}
                    },
                    "patternProperties": {"^x": {"type":"boolean"}},
                    "additionalProperties": {"type":"string"}
                },
                "Bare": {"properties": {"n": {"type":"number"}, "item": {"type":"array"}}},
                "Open": {"type":"object"},
                "Nullable": {"type":"object","nullable":true,"properties":{"b":{"type":"boolean"}}}
            },
            "arrays": [
                {"type":"array","items":{"type":"number"}},
                {"type":"array","items":{"$ref":"#/$defs/Obj"}},
                {"type":"array","items":{"anyOf":[{"type":"boolean"},{"type":"string"}]}},
                {"items":{"type":"array","items":{"type":"string"}}},
                {"type":"array","items":{"type":"string","enum":["a","b"]}}
            ]
        })
    }

    fn object_schemas(root: &Value) -> Vec<&Value> {
        ["Obj", "Bare", "Open", "Nullable"]
            .iter()
            .map(|k| &root["$defs"][*k])
            .collect()
    }

    fn array_schemas(root: &Value) -> Vec<&Value> {
        root["arrays"].as_array().unwrap().iter().collect()
    }

    fn assert_object_contract(value: Map<String, Value>, schema: &Value, root: &Value) {
        assert_eq!(
            schema::schema_type(schema, root),
            schema::SchemaType::Object
        );
        let mut whole_records = Vec::new();
        let whole = coerce_at(
            Value::Object(value.clone()),
            Some(schema),
            root,
            "/p",
            &mut whole_records,
        );
        let mut part_records = Vec::new();
        let mut parts = Map::new();
        for (k, v) in value {
            let sub = schema::property_schema(schema, &k, root);
            let path = pointer::child("/p", &k);
            parts.insert(k, coerce_at(v, sub, root, &path, &mut part_records));
        }
        let whole_keys: Vec<&String> = whole.as_object().unwrap().keys().collect();
        let part_keys: Vec<&String> = parts.keys().collect();
        assert_eq!(whole_keys, part_keys);
        assert_eq!(whole, Value::Object(parts));
        assert_eq!(whole_records, part_records);
    }

    fn assert_array_contract(value: Vec<Value>, schema: &Value, root: &Value) {
        assert_eq!(schema::schema_type(schema, root), schema::SchemaType::Array);
        let items = schema::items_schema(schema, root).unwrap();
        let mut whole_records = Vec::new();
        let whole = coerce_at(
            Value::Array(value.clone()),
            Some(schema),
            root,
            "/p",
            &mut whole_records,
        );
        let mut part_records = Vec::new();
        let parts: Vec<Value> = value
            .into_iter()
            .enumerate()
            .map(|(i, v)| coerce_at(v, Some(items), root, &format!("/p/{i}"), &mut part_records))
            .collect();
        assert_eq!(whole, Value::Array(parts));
        assert_eq!(whole_records, part_records);
    }

    #[test]
    fn contract_a_objects_are_coerced_property_by_property() {
        let root = fixed_root();
        let value = json!({"zz":5,"n":"1","obj":r#"{"i":"2"}"#,"x1":"true","u":"null","list":"1,2","e":"paris"});
        for schema in object_schemas(&root) {
            assert_object_contract(value.as_object().unwrap().clone(), schema, &root);
        }
    }

    #[test]
    fn contract_b_arrays_are_coerced_item_by_item() {
        let root = fixed_root();
        let value = json!(["1", {"n":"2"}, "a,b", true, null, "A", [1]]);
        for schema in array_schemas(&root) {
            assert_array_contract(value.as_array().unwrap().clone(), schema, &root);
        }
    }

    #[test]
    fn contract_c_plain_strings_are_left_alone() {
        let root = json!({"$defs":{"S":{"type":"string"}}});
        let schemas = [
            json!({"type":"string"}),
            json!({"type":["string"]}),
            json!({"type":"string","format":"date","maxLength":3}),
            json!({"$ref":"#/$defs/S"}),
        ];
        let texts = [
            "true",
            "42",
            "1e400",
            r#"{"a":1}"#,
            "[1]",
            "a,b",
            "null",
            " x ",
            "",
        ];
        for schema in &schemas {
            assert!(schema::is_plain_string(schema, &root), "{schema}");
            for text in texts {
                let mut out = Vec::new();
                let got = coerce_at(json!(text), Some(schema), &root, "/s", &mut out);
                assert_eq!(got, json!(text));
                assert!(out.is_empty());
            }
        }
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn leaf() -> impl Strategy<Value = Value> {
            let texts = vec![
                "1",
                "true",
                "FALSE",
                " 42 ",
                "3.0",
                "1e3",
                "null",
                "a,b",
                "x\ny",
                r#"{"a":"1"}"#,
                r#"[1,"2"]"#,
                "{}",
                "[]",
                "paris",
                "007",
                "",
                "1e999",
                r#"{"item":["1"]}"#,
            ];
            prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                any::<i64>().prop_map(Value::from),
                (-1e6f64..1e6).prop_map(Value::from),
                prop::sample::select(texts).prop_map(Value::from),
                "[a-z0-9 ,.\n]{0,8}".prop_map(Value::from),
            ]
        }

        fn key() -> impl Strategy<Value = String> {
            let keys = vec![
                "n", "i", "b", "s", "e", "list", "obj", "u", "t", "x1", "item", "0", "1", "zz",
                "a/b", "~t",
            ];
            prop::sample::select(keys).prop_map(String::from)
        }

        fn json_value() -> impl Strategy<Value = Value> {
            leaf().prop_recursive(3, 32, 5, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                    prop::collection::vec((key(), inner), 0..5)
                        .prop_map(|kv| Value::Object(kv.into_iter().collect())),
                ]
            })
        }

        proptest! {
            #[test]
            fn objects_compose(entries in prop::collection::vec((key(), json_value()), 0..8)) {
                let root = fixed_root();
                let map: Map<String, Value> = entries.into_iter().collect();
                for schema in object_schemas(&root) {
                    assert_object_contract(map.clone(), schema, &root);
                }
            }

            #[test]
            fn arrays_compose(items in prop::collection::vec(json_value(), 0..8)) {
                let root = fixed_root();
                for schema in array_schemas(&root) {
                    assert_array_contract(items.clone(), schema, &root);
                }
            }

            #[test]
            fn coercion_never_panics_and_records_every_change(v in json_value()) {
                let root = fixed_root();
                for schema in object_schemas(&root).into_iter().chain(array_schemas(&root)) {
                    let mut out = Vec::new();
                    let got = coerce_at(v.clone(), Some(schema), &root, "", &mut out);
                    prop_assert_eq!(got == v, out.is_empty());
                }
            }
        }
    }
}
