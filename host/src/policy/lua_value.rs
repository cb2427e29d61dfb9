//! A Lua value read as serde data: how a Lua policy's returned table
//! becomes a [`super::Policy`] through the same serde derive as a RON file.
//!
//! mlua's own serde support reports a mistake as text only; this reader
//! reports it as ron's typed error, with the enclosing struct (as ron's
//! reader fills it in) and the field whose value is wrong, so RON and Lua
//! policies word every mistake alike (`super::error_words`).

use std::fmt;

use mlua::Value;
use serde::de::{self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, Unexpected, Visitor};

/// A value that does not fit: ron's error, and the field it is the value
/// of, when inside a table.
#[derive(Debug)]
pub struct LuaValueError {
    pub code: ron::Error,
    pub field: Option<String>,
}

impl LuaValueError {
    fn new(code: ron::Error) -> LuaValueError {
        LuaValueError { code, field: None }
    }

    /// Names the struct a field error happened in, unless a nested one
    /// already did (as ron's own reader does).
    fn in_struct(mut self, name: &str) -> LuaValueError {
        use ron::Error as E;
        match &mut self.code {
            E::NoSuchStructField { outer, .. }
            | E::MissingStructField { outer, .. }
            | E::DuplicateStructField { outer, .. }
                if outer.is_none() =>
            {
                *outer = Some(name.to_string());
            }
            _ => {}
        }
        self
    }

    /// Names the field whose value this is, unless a nested one did.
    fn at_field(mut self, name: &str) -> LuaValueError {
        self.field.get_or_insert_with(|| name.to_string());
        self
    }
}

impl fmt::Display for LuaValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.code.fmt(f)
    }
}

impl std::error::Error for LuaValueError {}

impl de::Error for LuaValueError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        LuaValueError::new(ron::Error::custom(msg))
    }
    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        LuaValueError::new(ron::Error::invalid_type(unexp, exp))
    }
    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn de::Expected) -> Self {
        LuaValueError::new(ron::Error::invalid_value(unexp, exp))
    }
    fn invalid_length(len: usize, exp: &dyn de::Expected) -> Self {
        LuaValueError::new(ron::Error::invalid_length(len, exp))
    }
    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        LuaValueError::new(ron::Error::unknown_variant(variant, expected))
    }
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        LuaValueError::new(ron::Error::unknown_field(field, expected))
    }
    fn missing_field(field: &'static str) -> Self {
        LuaValueError::new(ron::Error::missing_field(field))
    }
    fn duplicate_field(field: &'static str) -> Self {
        LuaValueError::new(ron::Error::duplicate_field(field))
    }
}

/// Reads `value` as a `T`.
pub fn from_lua<T: DeserializeOwned>(value: Value) -> Result<T, LuaValueError> {
    T::deserialize(Reader(value))
}

/// A Lua value as a serde `Deserializer`: nil, booleans, integers, floats
/// and strings as themselves, a table with a sequence part as a sequence,
/// any other table as a map (or struct), a string as a unit enum variant.
struct Reader(Value);

impl<'de> IntoDeserializer<'de, LuaValueError> for Reader {
    type Deserializer = Reader;
    fn into_deserializer(self) -> Reader {
        self
    }
}

fn unexpected(v: &Value) -> Unexpected<'static> {
    Unexpected::Other(v.type_name())
}

impl<'de> de::Deserializer<'de> for Reader {
    type Error = LuaValueError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LuaValueError> {
        match self.0 {
            Value::Nil => visitor.visit_unit(),
            Value::Boolean(b) => visitor.visit_bool(b),
            Value::Integer(i) => visitor.visit_i64(i),
            Value::Number(n) => visitor.visit_f64(n),
            Value::String(s) => visitor.visit_string(s.to_string_lossy()),
            Value::Table(t) if t.raw_len() > 0 => Reader(Value::Table(t)).deserialize_seq(visitor),
            Value::Table(t) => Reader(Value::Table(t)).deserialize_map(visitor),
            other => Err(de::Error::invalid_type(unexpected(&other), &visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LuaValueError> {
        match self.0 {
            Value::Nil => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LuaValueError> {
        match self.0 {
            Value::Table(t) => {
                let items: Vec<Value> = t.sequence_values().collect::<mlua::Result<_>>().map_err(de::Error::custom)?;
                visitor.visit_seq(de::value::SeqDeserializer::new(items.into_iter().map(Reader)))
            }
            other => Err(de::Error::invalid_type(unexpected(&other), &visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, LuaValueError> {
        match self.0 {
            Value::Table(t) => {
                let pairs: Vec<(Value, Value)> = t.pairs().collect::<mlua::Result<_>>().map_err(de::Error::custom)?;
                visitor.visit_map(Fields { pairs: pairs.into_iter(), value: None })
            }
            other => Err(de::Error::invalid_type(unexpected(&other), &visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, LuaValueError> {
        self.deserialize_map(visitor).map_err(|e| e.in_struct(name))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, LuaValueError> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(s.to_string_lossy().into_deserializer()),
            other => Err(de::Error::invalid_type(unexpected(&other), &"a string naming a value")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct tuple tuple_struct identifier ignored_any
    }
}

/// A table's key-value pairs; remembers the key whose value comes next.
struct Fields {
    pairs: std::vec::IntoIter<(Value, Value)>,
    value: Option<(Value, String)>,
}

impl<'de> MapAccess<'de> for Fields {
    type Error = LuaValueError;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, LuaValueError> {
        let Some((key, value)) = self.pairs.next() else { return Ok(None) };
        let name = key.to_string().unwrap_or_default();
        self.value = Some((value, name));
        seed.deserialize(Reader(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, LuaValueError> {
        let (value, name) = self.value.take().ok_or_else(|| de::Error::custom("a value without its key"))?;
        seed.deserialize(Reader(value)).map_err(|e| e.at_field(&name))
    }
}
