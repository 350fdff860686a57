//! The `{"name": …, "arguments": {…}}` call envelope, read from lexer events.
//!
//! Hermes, gemma and the tool-choice answer all wrap a call in this object; the envelope finds
//! the tool name, routes the `arguments` value to the canonical argument writer of that tool
//! (streaming it when the name came first, holding it when it did not), ignores other keys, and
//! accepts an array of such objects as several calls. It never emits parts itself: it queues what
//! it found and the scanner turns that into parts, so that a speculative call (bare JSON that
//! may turn out not to be a call) can be dropped without a trace.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::args::{Args, ArgsWriter};
use crate::json::{JsonSink, ValueBuilder, Whole};
use crate::part::Delta;
use crate::tool::{Tool, ToolSet};

/// What the envelope found, in order.
#[derive(Debug)]
pub(crate) enum Found {
    /// A call object's tool name is known.
    Named { name: String },
    /// A call object is complete. `delta` is the canonical input not yet taken as deltas.
    Call {
        name: String,
        known: bool,
        delta: Option<Delta>,
        result: Result<Args, String>,
    },
}

enum ArgsValue {
    None,
    /// Streaming into the writer of a known (or unknown) tool.
    Writing(ArgsWriter),
    /// Arrived before the name: held whole.
    Held(ValueBuilder, usize),
    Done(Value),
    /// Streamed and complete.
    Written(ArgsWriter),
}

struct CallObject {
    name: Option<String>,
    key: Option<String>,
    name_string: Option<String>,
    args: ArgsValue,
    /// Nesting depth inside a value that is ignored (an unknown key's value).
    skipping: usize,
}

impl CallObject {
    fn new() -> Self {
        CallObject {
            name: None,
            key: None,
            name_string: None,
            args: ArgsValue::None,
            skipping: 0,
        }
    }
}

/// Keys that hold the tool's name (`tool_name`: Command R).
fn is_name_key(k: &str) -> bool {
    matches!(k, "name" | "tool_name")
}

/// Keys that hold the arguments.
fn is_args_key(k: &str) -> bool {
    matches!(k, "arguments" | "parameters" | "args" | "input")
}

/// A [`JsonSink`] that reads call envelopes.
pub(crate) struct Envelope {
    tools: ToolSet,
    /// Speculative reading refuses anything that is not clearly a call envelope.
    strict_keys: bool,
    /// Each call object names its tool by its only key: `{"get_weather": {…arguments…}}`.
    name_as_key: bool,
    /// An array of call objects may stand for several calls.
    arrays: bool,
    array: bool,
    started: bool,
    current: Option<CallObject>,
    found: Vec<Found>,
    /// Why the envelope refused the value, if it did.
    refused: Option<String>,
    /// The text is read whole: a value the lexer finds complete comes in one piece.
    whole: bool,
}

impl Envelope {
    pub(crate) fn new(tools: ToolSet, strict_keys: bool, arrays: bool) -> Self {
        Envelope {
            tools,
            strict_keys,
            name_as_key: false,
            arrays,
            array: false,
            started: false,
            current: None,
            found: Vec::new(),
            refused: None,
            whole: false,
        }
    }

    /// The text is read whole (see [`Emitter::is_whole`]): a value complete in the text at hand
    /// is read in one pass (see [`JsonSink::whole`]) rather than event by event.
    ///
    /// [`Emitter::is_whole`]: super::emit::Emitter::is_whole
    pub(crate) fn set_whole(&mut self, whole: bool) {
        self.whole = whole;
    }

    /// A whole call object or array of them, read as its events would be; `None` (nothing
    /// changed) where they would be refused somewhere, for the events to say where and why.
    fn whole_calls(&self, value: Whole) -> Option<(bool, Vec<(String, Value)>)> {
        match value {
            Whole::Members(members) => Some((false, vec![self.whole_call(members)?])),
            Whole::Value(Value::Array(items)) if self.arrays => {
                let mut calls = Vec::with_capacity(items.len());
                for item in items {
                    let Value::Object(object) = item else {
                        return None;
                    };
                    calls.push(self.whole_call(object)?);
                }
                Some((true, calls))
            }
            // (An object comes as its members.)
            Whole::Value(_) => None,
        }
    }

    /// One call object, its keys in order, as `value_starts` and `end_string` read them.
    fn whole_call(
        &self,
        object: impl IntoIterator<Item = (String, Value)>,
    ) -> Option<(String, Value)> {
        /// Where the arguments stand, as `ArgsValue` would.
        enum Got {
            None,
            /// After the name, an object: streamed into the writer, which cannot take it back.
            Streamed(Value),
            /// Before the name, or not an object: held whole.
            Held(Value),
        }
        let mut name: Option<String> = None;
        let mut args = Got::None;
        for (key, value) in object {
            if is_name_key(&key) {
                let Value::String(n) = value else {
                    return None;
                };
                let n = n.trim();
                if name.is_some()
                    || n.is_empty()
                    || !super::names::is_function_name(n, &self.tools)
                    || (self.strict_keys && self.tools.get(n).is_none())
                {
                    return None;
                }
                name = Some(n.to_string());
            } else if is_args_key(&key) {
                if matches!(args, Got::Streamed(_)) {
                    return None;
                }
                args = if name.is_some() && value.is_object() {
                    Got::Streamed(value)
                } else {
                    Got::Held(value)
                };
            } else if self.strict_keys {
                return None;
            }
        }
        let name = name?;
        let args = match args {
            Got::Streamed(v) | Got::Held(v) => v,
            Got::None => Value::Object(Map::new()),
        };
        Some((name, args))
    }

    /// Call objects that name their tool by their only key, `{"get_weather": {"city": …}}`
    /// (Apertus), alone or in an array.
    pub(crate) fn keyed(tools: ToolSet) -> Self {
        Envelope {
            name_as_key: true,
            ..Envelope::new(tools, false, true)
        }
    }

    /// Takes what was found since the last call.
    pub(crate) fn take_found(&mut self) -> Vec<Found> {
        std::mem::take(&mut self.found)
    }

    /// Whether anything was found since the last [`Envelope::take_found`].
    pub(crate) fn has_found(&self) -> bool {
        !self.found.is_empty()
    }

    /// The argument deltas written since the last call, for the call in progress.
    pub(crate) fn take_delta(&mut self) -> Option<Delta> {
        match self.current.as_mut().map(|c| &mut c.args) {
            Some(ArgsValue::Writing(w)) | Some(ArgsValue::Written(w)) => w.take_delta(),
            _ => None,
        }
    }

    pub(crate) fn refusal(&self) -> Option<&str> {
        self.refused.as_deref()
    }

    fn refuse(&mut self, why: impl Into<String>) -> Result<(), String> {
        let why = why.into();
        self.refused = Some(why.clone());
        Err(why)
    }

    fn tool(&self, name: &str) -> Option<Arc<Tool>> {
        self.tools.get_arc(name).cloned()
    }

    /// The call object closes.
    fn close_call(&mut self) -> Result<(), String> {
        let Some(mut call) = self.current.take() else {
            return Ok(());
        };
        let Some(name) = call.name.take() else {
            return self.refuse("the call has no \"name\"");
        };
        let tool = self.tool(&name);
        let known = tool.is_some();
        let writer = match std::mem::replace(&mut call.args, ArgsValue::None) {
            ArgsValue::Written(w) | ArgsValue::Writing(w) => Ok(w),
            ArgsValue::Done(v) => {
                let mut w = ArgsWriter::new(tool);
                w.write_whole(v);
                Ok(w)
            }
            ArgsValue::None => {
                let mut w = ArgsWriter::new(tool);
                w.write_whole(Value::Object(Map::new()));
                Ok(w)
            }
            ArgsValue::Held(..) => Err("the arguments are incomplete".to_string()),
        };
        let (delta, result) = match writer {
            Ok(mut w) => (w.take_delta(), w.finish()),
            Err(e) => (None, Err(e)),
        };
        self.found.push(Found::Call {
            name,
            known,
            delta,
            result,
        });
        Ok(())
    }

    /// Routes an event to the arguments in progress. Returns `None` when the event is not for
    /// the arguments.
    /// An object or array opens inside a call object: in its arguments, inside a value that
    /// is skipped, or as the value of a key.
    fn nested_begins(
        &mut self,
        kind: ValueKind,
        event: impl Fn(&mut dyn JsonSink) -> Result<(), String> + Copy,
    ) -> Result<(), String> {
        if let Some(r) = self.args_event(event, 1) {
            return r;
        }
        if let Some(c) = self.current.as_mut().filter(|c| c.skipping > 0) {
            c.skipping += 1;
            return Ok(());
        }
        self.value_starts(kind)?;
        if let Some(r) = self.args_event(event, 1) {
            return r;
        }
        Ok(())
    }

    /// An object or array closes in the arguments or in a skipped value (its result), or closes
    /// a level of the envelope (`None`).
    fn nested_ends(
        &mut self,
        event: impl FnOnce(&mut dyn JsonSink) -> Result<(), String>,
    ) -> Option<Result<(), String>> {
        if let Some(r) = self.args_event(event, -1) {
            return Some(r);
        }
        let c = self.current.as_mut().filter(|c| c.skipping > 0)?;
        c.skipping -= 1;
        Some(Ok(()))
    }

    fn args_event(
        &mut self,
        event: impl FnOnce(&mut dyn JsonSink) -> Result<(), String>,
        depth_change: isize,
    ) -> Option<Result<(), String>> {
        let call = self.current.as_mut()?;
        let result = match &mut call.args {
            ArgsValue::Writing(w) => {
                let r = event(w);
                if w.is_done()
                    && let ArgsValue::Writing(w) =
                        std::mem::replace(&mut call.args, ArgsValue::None)
                {
                    call.args = ArgsValue::Written(w);
                }
                r
            }
            ArgsValue::Held(b, depth) => {
                let r = event(b);
                *depth = depth.saturating_add_signed(depth_change);
                if *depth == 0
                    && let Some(v) = b.take()
                {
                    call.args = ArgsValue::Done(v);
                }
                r
            }
            _ => return None,
        };
        Some(result)
    }

    /// A value starts under the current key of the call object.
    fn value_starts(&mut self, kind: ValueKind) -> Result<Option<()>, String> {
        let strict = self.strict_keys;
        let Some(call) = self.current.as_mut() else {
            return Ok(None);
        };
        if call.skipping > 0 {
            return Ok(None);
        }
        let key = call.key.clone().unwrap_or_default();
        if self.name_as_key {
            return self.keyed_value_starts(key, kind);
        }
        if is_name_key(&key) {
            // A streamed call cannot take back its start: a second name is not a call.
            if call.name.is_some() {
                return self
                    .refuse(format!("the tool call has two \"{key}\" keys"))
                    .map(|_| None);
            }
            if kind != ValueKind::String {
                let _ = call;
                return self
                    .refuse(format!("the tool \"{key}\" is not a string"))
                    .map(|_| None);
            }
            call.name_string = Some(String::new());
            return Ok(Some(()));
        }
        if is_args_key(&key) {
            if matches!(call.args, ArgsValue::Writing(_) | ArgsValue::Written(_)) {
                // Deltas of the first arguments may be out already and cannot be taken back.
                return self
                    .refuse(format!("the tool call has two \"{key}\" keys"))
                    .map(|_| None);
            }
            if !matches!(call.args, ArgsValue::None) {
                // A second arguments key before the name: the later one wins, as in JSON.
                call.args = ArgsValue::None;
            }
            let tool = call
                .name
                .as_deref()
                .and_then(|n| self.tools.get_arc(n).cloned());
            let call = self.current.as_mut().expect("checked above");
            call.args = match (&call.name, kind) {
                // Streaming needs the schema, i.e. the name, and an object to write into.
                (Some(_), ValueKind::Object) => ArgsValue::Writing(ArgsWriter::new(tool)),
                _ => ArgsValue::Held(ValueBuilder::new(), 0),
            };
            return Ok(None);
        }
        if strict {
            return self
                .refuse(format!("\"{key}\" is not a key of a tool call"))
                .map(|_| None);
        }
        // Any other key (ids, types, …) is read and ignored.
        if matches!(kind, ValueKind::Object | ValueKind::Array) {
            call.skipping = 1;
        }
        Ok(Some(()))
    }
}

impl Envelope {
    /// In a keyed call object, the key is the tool's name and its value the arguments.
    fn keyed_value_starts(&mut self, key: String, kind: ValueKind) -> Result<Option<()>, String> {
        let Some(call) = self.current.as_ref() else {
            return Ok(None);
        };
        if call.name.is_some() {
            return self
                .refuse(format!(
                    "a tool call object names a second tool (\"{key}\"): one call per object"
                ))
                .map(|_| None);
        }
        let name = key.trim().to_string();
        if name.is_empty() {
            return self.refuse("the tool name is empty").map(|_| None);
        }
        if kind != ValueKind::Object {
            return self
                .refuse(format!("the arguments of \"{name}\" are not a JSON object"))
                .map(|_| None);
        }
        let tool = self.tools.get_arc(&name).cloned();
        let call = self.current.as_mut().expect("checked above");
        call.name = Some(name.clone());
        call.args = ArgsValue::Writing(ArgsWriter::new(tool));
        self.found.push(Found::Named { name });
        Ok(None)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ValueKind {
    Object,
    Array,
    String,
    Scalar,
}

impl JsonSink for Envelope {
    fn takes_whole(&self) -> bool {
        self.whole && !self.started && !self.name_as_key
    }

    fn whole(&mut self, value: Whole) -> bool {
        let Some((array, calls)) = self.whole_calls(value) else {
            return false;
        };
        self.started = true;
        self.array = array;
        for (name, args) in calls {
            let tool = self.tool(&name);
            self.found.push(Found::Named { name: name.clone() });
            self.found.push(Found::Call {
                name,
                known: tool.is_some(),
                // Nobody takes deltas of a whole text.
                delta: None,
                result: ArgsWriter::whole_value(tool, args),
            });
        }
        true
    }

    fn begin_object(&mut self) -> Result<(), String> {
        if !self.started {
            self.started = true;
            self.current = Some(CallObject::new());
            return Ok(());
        }
        if self.array && self.current.is_none() {
            self.current = Some(CallObject::new());
            return Ok(());
        }
        self.nested_begins(ValueKind::Object, |s| s.begin_object())
    }

    fn end_object(&mut self) -> Result<(), String> {
        match self.nested_ends(|s| s.end_object()) {
            Some(r) => r,
            None => self.close_call(),
        }
    }

    fn begin_array(&mut self) -> Result<(), String> {
        if !self.started {
            if !self.arrays {
                return self.refuse("a bare JSON array is not read as tool calls");
            }
            self.started = true;
            self.array = true;
            return Ok(());
        }
        if self.current.is_none() {
            return self.refuse("an array of calls holds something other than call objects");
        }
        self.nested_begins(ValueKind::Array, |s| s.begin_array())
    }

    fn end_array(&mut self) -> Result<(), String> {
        // The end of the array of calls needs nothing more.
        self.nested_ends(|s| s.end_array()).unwrap_or(Ok(()))
    }

    fn key(&mut self, key: &str) -> Result<(), String> {
        if let Some(r) = self.args_event(|s| s.key(key), 0) {
            return r;
        }
        match self.current.as_mut() {
            Some(c) if c.skipping == 0 => c.key = Some(key.to_string()),
            _ => {}
        }
        Ok(())
    }

    fn begin_string(&mut self) -> Result<(), String> {
        if !self.started || (self.array && self.current.is_none()) {
            return self.refuse("a tool call must be a JSON object");
        }
        if let Some(r) = self.args_event(|s| s.begin_string(), 0) {
            return r;
        }
        self.value_starts(ValueKind::String)?;
        if let Some(r) = self.args_event(|s| s.begin_string(), 0) {
            return r;
        }
        Ok(())
    }

    fn string_piece(&mut self, piece: &str) -> Result<(), String> {
        if let Some(r) = self.args_event(|s| s.string_piece(piece), 0) {
            return r;
        }
        if let Some(name) = self.current.as_mut().and_then(|c| c.name_string.as_mut()) {
            name.push_str(piece);
        }
        Ok(())
    }

    fn end_string(&mut self) -> Result<(), String> {
        if let Some(r) = self.args_event(|s| s.end_string(), 0) {
            return r;
        }
        let Some(call) = self.current.as_mut() else {
            return Ok(());
        };
        if let Some(name) = call.name_string.take() {
            let name = name.trim().to_string();
            if name.is_empty() {
                return self.refuse("the tool \"name\" is empty");
            }
            if !super::names::is_function_name(&name, &self.tools) {
                return self.refuse(format!("\"{name}\" cannot be a function name"));
            }
            if self.strict_keys && self.tools.get(&name).is_none() {
                return self.refuse(format!("\"{name}\" is not one of the tools"));
            }
            let call = self.current.as_mut().expect("checked above");
            // A name after the arguments: they were held and are written at the close.
            call.name = Some(name.clone());
            self.found.push(Found::Named { name });
        }
        Ok(())
    }

    fn scalar(&mut self, value: Value) -> Result<(), String> {
        if !self.started || (self.array && self.current.is_none()) {
            return self.refuse("a tool call must be a JSON object");
        }
        if let Some(r) = self.args_event(|s| s.scalar(value.clone()), 0) {
            return r;
        }
        self.value_starts(ValueKind::Scalar)?;
        if let Some(r) = self.args_event(|s| s.scalar(value), 0) {
            return r;
        }
        Ok(())
    }
}
