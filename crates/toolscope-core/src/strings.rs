//! Every string a serialisable value holds, visited in place: what redaction checks without
//! writing the value out as JSON.
//!
//! [`any_str`] walks a value through its `Serialize` implementation (so that a field added later
//! is walked too) and stops at the first string the test accepts; numbers, booleans and the
//! shape of the value cost nothing. Map keys, enum variant names and byte strings that are UTF-8
//! are strings too.

use std::fmt;

use serde::ser::{self, Serialize};

/// Whether `test` holds for any string in `value`.
pub(crate) fn any_str<T, F>(value: &T, test: F) -> bool
where
    T: Serialize + ?Sized,
    F: FnMut(&str) -> bool,
{
    let mut scan = Scan { test };
    matches!(value.serialize(&mut scan), Err(Stop::Found))
}

struct Scan<F> {
    test: F,
}

/// Why the walk stopped: a string matched, or the value refused to serialise.
#[derive(Debug)]
enum Stop {
    Found,
    Other,
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stop::Found => "found",
            Stop::Other => "cannot be serialised",
        })
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop::Other
    }
}

impl<F: FnMut(&str) -> bool> Scan<F> {
    fn check(&mut self, s: &str) -> Result<(), Stop> {
        if (self.test)(s) {
            Err(Stop::Found)
        } else {
            Ok(())
        }
    }
}

/// Numbers and other values without text: nothing to check.
macro_rules! nothing {
    ($($name:ident: $ty:ty),* $(,)?) => {
        $(fn $name(self, _: $ty) -> Result<(), Stop> {
            Ok(())
        })*
    };
}

/// The start of a compound value (a sequence, tuple, map or struct): the same walker walks its
/// parts, whatever the name, index or length.
macro_rules! compound_starts {
    ($($method:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $method(self, $(_: $arg),*) -> Result<Self, Stop> {
            Ok(self)
        })*
    };
}

impl<F: FnMut(&str) -> bool> ser::Serializer for &mut Scan<F> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    nothing!(
        serialize_bool: bool,
        serialize_i8: i8,
        serialize_i16: i16,
        serialize_i32: i32,
        serialize_i64: i64,
        serialize_i128: i128,
        serialize_u8: u8,
        serialize_u16: u16,
        serialize_u32: u32,
        serialize_u64: u64,
        serialize_u128: u128,
        serialize_f32: f32,
        serialize_f64: f64,
    );

    fn serialize_char(self, c: char) -> Result<(), Stop> {
        self.check(c.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, s: &str) -> Result<(), Stop> {
        self.check(s)
    }

    fn serialize_bytes(self, b: &[u8]) -> Result<(), Stop> {
        match std::str::from_utf8(b) {
            Ok(s) => self.check(s),
            Err(_) => self.check(&String::from_utf8_lossy(b)),
        }
    }

    fn serialize_none(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Stop> {
        self.check(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }

    compound_starts!(
        serialize_seq(Option<usize>),
        serialize_tuple(usize),
        serialize_tuple_struct(&'static str, usize),
        serialize_tuple_variant(&'static str, u32, &'static str, usize),
        serialize_map(Option<usize>),
        serialize_struct(&'static str, usize),
        serialize_struct_variant(&'static str, u32, &'static str, usize),
    );

    fn collect_str<T: fmt::Display + ?Sized>(self, value: &T) -> Result<(), Stop> {
        self.check(&value.to_string())
    }
}

/// The parts of a compound value, each walked in turn (a struct field's name, the key type in
/// parentheses, is not text of the value).
macro_rules! elements {
    ($($trait:ident :: $method:ident $(($key:ty))?),* $(,)?) => {
        $(impl<F: FnMut(&str) -> bool> ser::$trait for &mut Scan<F> {
            type Ok = ();
            type Error = Stop;

            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $(_: $key,)?
                value: &T,
            ) -> Result<(), Stop> {
                value.serialize(&mut **self)
            }

            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        })*
    };
}

elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
    SerializeStruct::serialize_field(&'static str),
    SerializeStructVariant::serialize_field(&'static str),
);

impl<F: FnMut(&str) -> bool> ser::SerializeMap for &mut Scan<F> {
    type Ok = ();
    type Error = Stop;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        key.serialize(&mut **self)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_string_is_visited_wherever_it_sits() {
        let value = json!({"a": [1, {"b": "deep secret-key here"}], "secret-key": 2});
        let mut seen = Vec::new();
        assert!(!any_str(&value, |s| {
            seen.push(s.to_string());
            false
        }));
        assert_eq!(seen, ["a", "b", "deep secret-key here", "secret-key"]);
        assert!(any_str(&value, |s| s.contains("secret-key")));
        assert!(!any_str(&json!([1, 2.5, true, null]), |_| true));
    }
}
