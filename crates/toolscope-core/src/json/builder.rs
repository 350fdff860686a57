//! Builds a `serde_json::Value` from lexer events: the whole-text parse, and every value the
//! argument writer has to see whole before it can coerce it.

use serde_json::{Map, Value};

use super::lexer::JsonSink;

struct Frame {
    container: Value,
    /// The key under which this container goes into its parent object.
    key: Option<String>,
}

/// A [`JsonSink`] that assembles the value it is told about.
#[derive(Default)]
pub(crate) struct ValueBuilder {
    stack: Vec<Frame>,
    key: Option<String>,
    string: Option<String>,
    done: Option<Value>,
    /// How many members the outermost object has room for from the start.
    room: usize,
}

impl ValueBuilder {
    /// A builder that has seen no event yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// A builder of a call's arguments: their object has room for a few members from the
    /// start (its map was regrown, and its table rehashed, twice on the way).
    pub(crate) fn for_arguments() -> Self {
        ValueBuilder {
            room: 8,
            ..Self::default()
        }
    }

    /// The finished value, once the top-level value is complete.
    pub(crate) fn take(&mut self) -> Option<Value> {
        self.done.take()
    }

    /// A whole value, where the next value goes.
    pub(crate) fn value(&mut self, v: Value) {
        self.insert(v);
    }

    fn insert(&mut self, v: Value) {
        match self.stack.last_mut() {
            Some(Frame {
                container: Value::Object(m),
                ..
            }) => {
                m.insert(self.key.take().unwrap_or_default(), v);
            }
            Some(Frame {
                container: Value::Array(a),
                ..
            }) => a.push(v),
            _ => self.done = Some(v),
        }
    }

    fn close(&mut self) {
        if let Some(frame) = self.stack.pop() {
            self.key = frame.key;
            self.insert(frame.container);
        }
    }
}

impl JsonSink for ValueBuilder {
    fn begin_object(&mut self) -> Result<(), String> {
        let map = match self.stack.is_empty() {
            true => Map::with_capacity(self.room),
            false => Map::new(),
        };
        self.stack.push(Frame {
            container: Value::Object(map),
            key: self.key.take(),
        });
        Ok(())
    }
    fn end_object(&mut self) -> Result<(), String> {
        self.close();
        Ok(())
    }
    fn begin_array(&mut self) -> Result<(), String> {
        self.stack.push(Frame {
            container: Value::Array(Vec::new()),
            key: self.key.take(),
        });
        Ok(())
    }
    fn end_array(&mut self) -> Result<(), String> {
        self.close();
        Ok(())
    }
    fn key(&mut self, key: &str) -> Result<(), String> {
        self.key = Some(key.to_string());
        Ok(())
    }
    fn begin_string(&mut self) -> Result<(), String> {
        self.string = Some(String::new());
        Ok(())
    }
    fn string_piece(&mut self, piece: &str) -> Result<(), String> {
        if let Some(s) = &mut self.string {
            s.push_str(piece);
        }
        Ok(())
    }
    fn end_string(&mut self) -> Result<(), String> {
        let s = self.string.take().unwrap_or_default();
        self.insert(Value::String(s));
        Ok(())
    }
    fn scalar(&mut self, value: Value) -> Result<(), String> {
        self.insert(value);
        Ok(())
    }
    // A value begun and ended in the text at hand is read at once (a JSON argument that a
    // markup format writes as text, a whole output's JSON): the same value, without an event
    // per token.
    fn takes_whole(&self) -> bool {
        self.stack.is_empty() && self.done.is_none()
    }
    fn whole(&mut self, value: super::whole::Whole) -> bool {
        self.insert(value.into_value());
        true
    }
}
