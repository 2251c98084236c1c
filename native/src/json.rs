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
    let value = Placed(Place::Top).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// Where a value sits, as far as building the document goes. The run facets no extractor
/// reads (`consumer/extract/spark.py`: Spark's logical plan and its unknown-node dump, often
/// most of a real Spark event's bytes: 13 of 21 KB in the corpus's `spark_cll__5`) are
/// parsed and checked as strictly as any value, but not built: they stand as null. Only
/// the objects on the way to them (the event, its run, the run's facets) look at their keys.
#[derive(Clone, Copy)]
enum Place {
    Top,
    Run,
    RunFacets,
}

const UNREAD_RUN_FACETS: [&str; 2] = ["spark.logicalPlan", "spark_unknown"];

/// How the value under a key of an object at a `Place` is read.
enum Next {
    Placed(Place),
    Plain,
    Unbuilt,
}

impl Place {
    fn under(self, key: &str) -> Next {
        match (self, key) {
            (Place::Top, "run") => Next::Placed(Place::Run),
            (Place::Run, "facets") => Next::Placed(Place::RunFacets),
            (Place::RunFacets, key) if UNREAD_RUN_FACETS.contains(&key) => Next::Unbuilt,
            _ => Next::Plain,
        }
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

/// A value at a `Place`: built as `JsonVisitor` builds it, but for its object's keys.
#[derive(Clone, Copy)]
struct Placed(Place);

impl<'de> DeserializeSeed<'de> for Placed {
    type Value = Json<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Placed {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Json<'de>, E> {
        JsonVisitor.visit_unit()
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Json<'de>, E> {
        JsonVisitor.visit_bool(v)
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Json<'de>, E> {
        JsonVisitor.visit_i64(v)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Json<'de>, E> {
        JsonVisitor.visit_u64(v)
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json<'de>, E> {
        JsonVisitor.visit_f64(v)
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Json<'de>, E> {
        JsonVisitor.visit_borrowed_str(v)
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Json<'de>, E> {
        JsonVisitor.visit_str(v)
    }
    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Json<'de>, E> {
        JsonVisitor.visit_string(v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Json<'de>, A::Error> {
        JsonVisitor.visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Json<'de>, A::Error> {
        object(map, |key, map| match self.0.under(key) {
            Next::Placed(place) => map.next_value_seed(Placed(place)),
            Next::Plain => map.next_value(),
            Next::Unbuilt => map.next_value_seed(Checked).map(|()| Json::Null),
        })
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
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Json<'de>, A::Error> {
        object(map, |_, map| map.next_value())
    }
}

/// An object's entries in document order, each value read by `value`: a repeated key keeps
/// its first place and its last value. Inlined into both visitors, so that the general
/// one stays the plain loop it was.
#[inline(always)]
fn object<'de, A: MapAccess<'de>>(
    mut map: A,
    mut value: impl FnMut(&str, &mut A) -> Result<Json<'de>, A::Error>,
) -> Result<Json<'de>, A::Error> {
    let mut entries: Vec<(Cow<'de, str>, Json<'de>)> = Vec::new();
    let mut index: HashMap<Cow<'de, str>, usize> = HashMap::new();
    while let Some(key) = map.next_key_seed(KeySeed)? {
        let value = value(&key, &mut map)?;
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

/// A value parsed and checked exactly as `JsonVisitor` checks it (the same strings, escapes,
/// numbers and nesting limit are refused), without building it.
struct Checked;

impl<'de> DeserializeSeed<'de> for Checked {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(Checked)
    }
}

impl<'de> Visitor<'de> for Checked {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("JSON")
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // JsonVisitor refuses what Number::from_f64 refuses.
        Number::from_f64(v)
            .map(|_| ())
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Checked)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key_seed(Checked)?.is_some() {
            map.next_value_seed(Checked)?;
        }
        Ok(())
    }
}
