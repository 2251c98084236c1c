//! The envelope checks of `consumer/decode.py`, for RunEvents that pass them plainly.
//!
//! Every check that fails declines the event (it is never rejected here): the Python
//! decoder then rejects it with its precise reason, or accepts what this side was too
//! strict for (a spelling of eventTime or runId it does not read, a blank-looking name).

use crate::facets::{obj, stop, surely_not_blank, upper, v7_time_fits, Obj, R};
use crate::json::Json;

/// A decoded RunEvent, borrowing from the parsed document.
pub struct Envelope<'a> {
    pub run_id: u128,
    pub event_type: Option<String>, // upper-cased, one of EVENT_STATUS
    /// The eventTime as sent, and read here when it has the common spelling (else None:
    /// `consumer.decode.parse_time` reads it).
    pub time_text: &'a str,
    pub time: Option<Time>,
    pub producer: &'a str,
    pub run_facets: Option<&'a Obj<'a>>,
    pub job_facets: Option<&'a Obj<'a>>,
    pub job_namespace: &'a str,
    pub job_name: &'a str,
    pub inputs: Vec<&'a Obj<'a>>,
    pub outputs: Vec<&'a Obj<'a>>,
}

/// An eventTime in UTC, as `datetime.fromisoformat(...).astimezone(UTC)` reads it.
pub struct Time {
    pub year: i32,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub micro: u32,
}

const EVENT_TYPES: [&str; 6] = ["START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER"];

pub fn read<'a>(raw: &'a Obj<'a>) -> R<Envelope<'a>> {
    // decode._kind: only RunEvents are read here (dataset and job events are rare).
    let run_kind = raw.contains_key("run")
        || (raw.contains_key("eventType")
            && !raw.contains_key("job")
            && !raw.contains_key("dataset"));
    if !run_kind {
        return Err(stop("not a RunEvent"));
    }
    let run = raw
        .get("run")
        .and_then(Json::as_object)
        .ok_or_else(|| stop("run"))?;
    let job = raw
        .get("job")
        .and_then(Json::as_object)
        .ok_or_else(|| stop("job"))?;
    let time_text = required(raw, "eventTime")?;
    Ok(Envelope {
        run_id: run_id(run)?,
        job_namespace: required(job, "namespace")?,
        job_name: required(job, "name")?,
        event_type: event_type(raw.get("eventType"))?,
        time_text,
        time: event_time(time_text),
        producer: raw.get("producer").and_then(Json::as_str).unwrap_or(""),
        run_facets: obj(Some(run), &["facets"]),
        job_facets: obj(Some(job), &["facets"]),
        inputs: datasets(raw.get("inputs"))?,
        outputs: datasets(raw.get("outputs"))?,
    })
}

/// `_required_str`: a string that is surely not blank and holds no template placeholder.
fn required<'a>(m: &'a Obj<'a>, key: &str) -> R<&'a str> {
    match m.get(key) {
        Some(Json::String(s)) if surely_not_blank(s) && !placeholder(s) => Ok(s.as_ref()),
        _ => Err(stop("required field")),
    }
}

/// Anything that might be a placeholder (`{{ ... }}`, `${json-unit...}`) is left to Python.
fn placeholder(s: &str) -> bool {
    s.contains("{{") || s.contains("${json-unit.")
}

fn run_id(run: &Obj<'_>) -> R<u128> {
    let text = required(run, "runId")?;
    let id = crate::facets::parse_uuid(text).ok_or_else(|| stop("runId spelling"))?;
    if id == 0 || id == u128::MAX || !v7_time_fits(id) {
        return Err(stop("runId value"));
    }
    Ok(id)
}

fn event_type(value: Option<&Json<'_>>) -> R<Option<String>> {
    match value {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if !placeholder(s) => {
            let kind = upper(s)?;
            if EVENT_TYPES.contains(&kind.as_str()) {
                Ok(Some(kind))
            } else {
                Err(stop("eventType"))
            }
        }
        _ => Err(stop("eventType")),
    }
}

fn datasets<'a>(value: Option<&'a Json<'a>>) -> R<Vec<&'a Obj<'a>>> {
    match value {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(list)) => list
            .iter()
            .map(|item| {
                let d = item.as_object().ok_or_else(|| stop("dataset"))?;
                required(d, "namespace")?;
                required(d, "name")?;
                Ok(d)
            })
            .collect(),
        _ => Err(stop("datasets")),
    }
}

/// `_common_time`: `YYYY-MM-DDTHH:MM:SS[.f{1,6}](Z|+00:00)`, the spelling nearly every
/// producer sends; None for any other, and for years 1 and 9999 (decode refuses the
/// extremes), which `parse_time` then reads or rejects.
fn event_time(s: &str) -> Option<Time> {
    common_time(s).ok()
}

fn common_time(s: &str) -> R<Time> {
    let b = s.as_bytes();
    let digits = |from: usize, to: usize| -> R<u32> {
        let part = b.get(from..to).ok_or_else(|| stop("eventTime"))?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(stop("eventTime"));
        }
        Ok(part.iter().fold(0, |acc, d| acc * 10 + u32::from(d - b'0')))
    };
    let separators = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')];
    if b.len() < 20 || separators.iter().any(|&(at, c)| b[at] != c) {
        return Err(stop("eventTime"));
    }
    let mut rest = &b[19..];
    let mut micro = 0;
    if rest.first() == Some(&b'.') {
        let n = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > 6 {
            return Err(stop("eventTime fraction"));
        }
        micro = digits(20, 20 + n)? * 10u32.pow(6 - n as u32);
        rest = &rest[1 + n..];
    }
    if rest != b"Z" && rest != b"+00:00" {
        return Err(stop("eventTime offset"));
    }
    let year = digits(0, 4)? as i32;
    if year <= 1 || year >= 9999 {
        return Err(stop("eventTime extreme"));
    }
    Ok(Time {
        year,
        month: digits(5, 7)? as u8,
        day: digits(8, 10)? as u8,
        hour: digits(11, 13)? as u8,
        minute: digits(14, 16)? as u8,
        second: digits(17, 19)? as u8,
        micro,
    })
}
