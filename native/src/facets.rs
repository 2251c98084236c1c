//! Defensive readers over parsed JSON, the twins of `consumer/extract/facets.py`.
//!
//! Each returns exactly what its Python twin returns, or `Err(Stop)` ("decline") where
//! matching Python would mean re-implementing something subtle: a float read as text
//! (Python's float repr), case changes and whitespace of non-ASCII text (Unicode tables).
//! A declined event goes down the Python path, which gives the same records, slower.

use crate::json::{Json, Object};
use std::borrow::Cow;

pub type Obj<'a> = Object<'a>;

/// Why an event left the native path: a fixed reason, or the Python error a hook raised.
pub struct Stop {
    pub reason: &'static str,
    pub error: Option<pyo3::PyErr>,
}

pub type R<T> = Result<T, Stop>;

pub fn stop(reason: &'static str) -> Stop {
    Stop {
        reason,
        error: None,
    }
}

impl From<pyo3::PyErr> for Stop {
    fn from(error: pyo3::PyErr) -> Self {
        Stop {
            reason: "python",
            error: Some(error),
        }
    }
}

/// `MAX_TEXT` of facets.py: descriptive strings are cut to this many characters.
pub const MAX_TEXT: usize = 10_000;
const BIGINT_MAX: f64 = 9_223_372_036_854_775_808.0; // 2^63: the first float past bigint
const INT_MAX: i64 = 2_147_483_647;
/// What Python's `str.isspace` (and `re`'s `\s`) match among ASCII characters.
const PY_SPACE: &[u8] = b" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f";

/// `obj(value, *path)`: the object at `path`, None standing for Python's empty dict.
pub fn obj<'a>(value: Option<&'a Obj<'a>>, path: &[&str]) -> Option<&'a Obj<'a>> {
    let mut current = value?;
    for key in path {
        current = current.get(key)?.as_object()?;
    }
    Some(current)
}

/// The object if it is non-empty: a dict's truth value in Python's `a or b`.
pub fn truthy<'a>(value: Option<&'a Obj<'a>>) -> Option<&'a Obj<'a>> {
    value.filter(|m| !m.is_empty())
}

/// `text(value, key, limit)`: a non-empty string cut to `limit` characters; an integer
/// as its digits; None otherwise. A float declines (Python's repr is not reproduced).
pub fn text<'a>(value: Option<&'a Obj<'a>>, key: &str, limit: usize) -> R<Option<Cow<'a, str>>> {
    match value.and_then(|m| m.get(key)) {
        Some(Json::String(s)) if s.is_empty() => Ok(None),
        Some(Json::String(s)) => Ok(Some(Cow::Borrowed(truncate(s, limit)))),
        Some(Json::Number(n)) if n.is_f64() => Err(stop("float read as text")),
        Some(Json::Number(n)) => Ok(Some(Cow::Owned(n.to_string()))),
        _ => Ok(None),
    }
}

/// `text` with the default limit.
pub fn text_of<'a>(value: Option<&'a Obj<'a>>, key: &str) -> R<Option<Cow<'a, str>>> {
    text(value, key, MAX_TEXT)
}

/// The first `limit` characters (code points, as Python slices a str).
pub fn truncate(s: &str, limit: usize) -> &str {
    if s.len() <= limit {
        return s; // at most `limit` bytes, so at most `limit` characters
    }
    match s.char_indices().nth(limit) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// `items(value, key)`: the object elements of a list field.
pub fn items<'a>(value: Option<&'a Obj<'a>>, key: &str) -> Vec<&'a Obj<'a>> {
    match value.and_then(|m| m.get(key)) {
        Some(Json::Array(list)) => list.iter().filter_map(Json::as_object).collect(),
        _ => Vec::new(),
    }
}

/// `count(value, *keys)`: the first non-negative integer that fits a bigint.
pub fn count(value: Option<&Obj<'_>>, keys: &[&str]) -> Option<i64> {
    let m = value?;
    for key in keys {
        let Some(Json::Number(n)) = m.get(key) else {
            continue;
        };
        if let Some(u) = n.as_u64() {
            if u <= i64::MAX as u64 {
                return Some(u as i64);
            }
        } else if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
            // Python: an integral float becomes an int, then the range check applies.
            if f.fract() == 0.0 && (0.0..BIGINT_MAX).contains(&f) {
                return Some(f as i64);
            }
        }
    }
    None
}

/// `small_int(value, key)`: a non-negative integer (or digit string) that fits an int.
pub fn small_int(value: Option<&Obj<'_>>, key: &str) -> Option<i64> {
    match value.and_then(|m| m.get(key))? {
        Json::String(s)
            if !s.is_empty() && s.len() < 11 && s.bytes().all(|b| b.is_ascii_digit()) =>
        {
            s.parse::<i64>().ok().filter(|v| *v <= INT_MAX)
        }
        Json::Number(n) => n
            .as_u64()
            .filter(|v| *v <= INT_MAX as u64)
            .map(|v| v as i64),
        _ => None,
    }
}

/// Python's `s.strip()`, for ASCII text (other text declines).
pub fn strip(s: &str) -> R<&str> {
    if !s.is_ascii() {
        return Err(stop("non-ASCII strip"));
    }
    Ok(s.trim_matches(|c: char| PY_SPACE.contains(&(c as u8))))
}

/// Python's `s.upper()`, for ASCII text (other text declines).
pub fn upper(s: &str) -> R<String> {
    if !s.is_ascii() {
        return Err(stop("non-ASCII upper"));
    }
    Ok(s.to_ascii_uppercase())
}

/// Python's `s.lower()`, for ASCII text (other text declines).
pub fn lower(s: &str) -> R<String> {
    if !s.is_ascii() {
        return Err(stop("non-ASCII lower"));
    }
    Ok(s.to_ascii_lowercase())
}

/// Python's `re.sub(r"\s+", " ", s)`, for ASCII text (other text declines).
pub fn collapse_spaces(s: &str) -> R<String> {
    if !s.is_ascii() {
        return Err(stop("non-ASCII spaces"));
    }
    let mut out = String::with_capacity(s.len());
    let mut in_space = false;
    for b in s.bytes() {
        if PY_SPACE.contains(&b) {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(b as char);
            in_space = false;
        }
    }
    Ok(out)
}

/// True when Python's `s.strip()` is surely non-empty (an ASCII character that is not a
/// space); text of spaces and non-ASCII characters only is left to Python.
pub fn surely_not_blank(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii() && !PY_SPACE.contains(&b))
}

/// `first_of_list(value)`: the first entry of a comma-separated list, stripped.
pub fn first_of_list(value: Option<Cow<'_, str>>) -> R<Option<String>> {
    let Some(value) = value else { return Ok(None) };
    let first = strip(value.split(',').next().unwrap_or(""))?;
    Ok((!first.is_empty()).then(|| first.to_string()))
}

/// `key_part(value, what)`: a name that keys a unique index must fit `MAX_KEY_BYTES`
/// UTF-8 bytes; a longer one is a reject, which the Python path gives.
pub fn key_part(value: &str) -> R<&str> {
    if value.len() > 2000 {
        return Err(stop("name too long"));
    }
    Ok(value)
}

/// A canonical `8-4-4-4-12` hex UUID; anything else (which Python's `UUID()` may still
/// read) declines, so only the unambiguous spelling is parsed here.
pub fn parse_uuid(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut value: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        let digit = (c as char).to_digit(16)?;
        value = (value << 4) | digit as u128;
    }
    Some(value)
}

const V7_MASK: u128 = (0xF << 76) | (0x3 << 62);
const V7_BITS: u128 = (0x7 << 76) | (0x2 << 62);
const MAX_MILLIS: u128 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/// The Unix milliseconds of a UUIDv7 (shared/uuids.py `uuid7_time`), else None.
pub fn v7_millis(value: u128) -> Option<u64> {
    (value & V7_MASK == V7_BITS).then_some((value >> 80) as u64)
}

/// `v7_time_fits`: False only for a UUIDv7 dated after year 9999.
pub fn v7_time_fits(value: u128) -> bool {
    v7_millis(value).is_none_or(|ms| (ms as u128) <= MAX_MILLIS)
}

/// `uuid_at(value, key)` (facets.py): a UUID-valued field; a non-canonical string declines.
pub fn uuid_at(value: Option<&Obj<'_>>, key: &str) -> R<Option<u128>> {
    let Some(raw) = text(value, key, 100)? else {
        return Ok(None);
    };
    let id = parse_uuid(&raw).ok_or_else(|| stop("non-canonical UUID"))?;
    Ok(v7_time_fits(id).then_some(id))
}
