//! A parsed JSON document as the extractors read it: objects keep document order (a repeated
//! key keeps its first place and its last value, as a Python dict built by orjson does),
//! strings borrow from the payload unless they hold escapes. serde_json's own `Value` with
//! `preserve_order` hashed every key (SipHash, an IndexMap per object): ~30% of the native
//! extract. Objects are small, so lookups scan.

use serde::de::{Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

pub enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

#[derive(Default)]
pub struct Object<'a>(Vec<(Cow<'a, str>, Json<'a>)>);

impl<'a> Object<'a> {
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }
}

impl<'a> Json<'a> {
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// A byte string equal for two values exactly when the values are equal (memo keys).
    pub fn key_into(&self, out: &mut Vec<u8>) {
        match self {
            Json::Null => out.push(b'z'),
            Json::Bool(b) => out.push(if *b { b't' } else { b'f' }),
            Json::Number(n) => {
                // The variant first: 1 (an int) and 1.0 (a float) are different Python values.
                out.push(if n.is_f64() { b'd' } else { b'i' });
                push_text(out, &n.to_string());
            }
            Json::String(s) => {
                out.push(b's');
                push_text(out, s);
            }
            Json::Array(items) => {
                out.push(b'[');
                out.extend_from_slice(&(items.len() as u64).to_le_bytes());
                items.iter().for_each(|item| item.key_into(out));
            }
            Json::Object(object) => object.key_into(out),
        }
    }
}

impl Object<'_> {
    pub fn key_into(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        out.extend_from_slice(&(self.0.len() as u64).to_le_bytes());
        for (key, value) in &self.0 {
            push_text(out, key);
            value.key_into(out);
        }
    }
}

fn push_text(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u64).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// Parse a payload (serde_json's parser: the same numbers, escapes and errors as before);
/// None if it is not a JSON document. The whole payload is checked as UTF-8 first
/// (orjson.loads refuses invalid UTF-8 anywhere too), in one pass over its bytes: read from a
/// slice, serde_json checked every string on its own, ~5% of the native extract.
pub fn parse(payload: &[u8]) -> Option<Json<'_>> {
    let text = std::str::from_utf8(payload).ok()?;
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Json::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

// Past this many keys an object finds repeated keys through a map instead of a scan.
const SCAN_KEYS: usize = 32;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json<'de>, E> {
        Number::from_f64(v)
            .map(Json::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
        let mut index: HashMap<Cow<'de, str>, usize> = HashMap::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let value: Json<'de> = map.next_value()?;
            let found = if entries.len() < SCAN_KEYS {
                entries.iter().position(|(k, _)| *k == key)
            } else {
                if index.is_empty() {
                    index.extend(entries.iter().enumerate().map(|(i, (k, _))| (k.clone(), i)));
                }
                index.get(&key).copied()
            };
            match found {
                Some(at) => entries[at].1 = value, // a repeated key: its first place, last value
                None => {
                    if !index.is_empty() {
                        index.insert(key.clone(), entries.len());
                    }
                    entries.push((key, value));
                }
            }
        }
        Ok(Json::Object(Object(entries)))
    }
}

/// An object key, borrowed from the payload when it holds no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
}
