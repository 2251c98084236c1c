//! The lineage server's large body sections as JSON bytes: runs, operations, parent relations
//! and I/O relations (`server/lineage/render.py` splices them into the document;
//! `server/lineage/native.py` makes the `Renderer`).
//!
//! Each section is written byte for byte as `server.lineage.render.render_json` writes it
//! (orjson with `OPT_UTC_Z`): a RUN graph of ~1,600 runs spent ~4 ms of its ~30 building a
//! dict per node and relation and serialising them. Anything this writer does not know
//! exactly (a float, a time zone other than UTC, an integer past 64 bits, text that is not
//! UTF-8) raises `UnsupportedValueError`, and the caller renders the whole body the Python
//! way, which stays the definition: `tests/server/test_native_render.py` compares the two.

use crate::uuids::checked_bits;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyBytes, PyDateAccess, PyDateTime, PyDict, PyInt, PyList, PyString, PyTimeAccess,
    PyTuple, PyTzInfoAccess,
};
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Mutex;

create_exception!(
    threadline_native,
    UnsupportedValueError,
    PyException,
    "A value the native writer does not render as orjson would: render in Python."
);

type W = Vec<u8>;

/// Past this size the buffer is freed after use rather than kept for the next list.
const KEPT_BUFFER_BYTES: usize = 8 << 20;

fn unsupported(what: &str) -> PyErr {
    UnsupportedValueError::new_err(what.to_owned())
}

/// How a node field is written: as any value, as an id's text (`str(id)`), as an optional
/// id's, or as a status's name.
#[derive(Clone, Copy)]
enum As {
    Value,
    Id,
    OptionalId,
    Status,
}

/// A node field: its key (with the separator or brace before it), its position in the node
/// tuple, and how it is written.
type Field = (&'static [u8], usize, As);

/// `render._runs`'s object per `model.RunNode`.
const RUN_FIELDS: [Field; 9] = [
    (b"{\"id\":", 0, As::Id),
    (b",\"job_id\":", 1, As::Value),
    (b",\"parent_run_id\":", 2, As::OptionalId),
    (b",\"status\":", 3, As::Status),
    (b",\"created_at\":", 4, As::Value),
    (b",\"started_at\":", 5, As::Value),
    (b",\"ended_at\":", 6, As::Value),
    (b",\"external_id\":", 7, As::Value),
    (b",\"attempt\":", 8, As::Value),
];

/// `render._operations`'s object per `model.OperationNode`.
const OPERATION_FIELDS: [Field; 11] = [
    (b"{\"id\":", 0, As::Id),
    (b",\"run_id\":", 1, As::Id),
    (b",\"name\":", 2, As::Value),
    (b",\"type\":", 3, As::Value),
    (b",\"status\":", 4, As::Status),
    (b",\"position\":", 5, As::Value),
    (b",\"group\":", 6, As::Value),
    (b",\"description\":", 7, As::Value),
    (b",\"created_at\":", 8, As::Value),
    (b",\"started_at\":", 9, As::Value),
    (b",\"ended_at\":", 10, As::Value),
];

/// A list section of the body: its items are the tuples of one Python list.
#[derive(Clone, Copy)]
enum Section {
    Runs,
    Operations,
    Parents,
    /// The I/O relations of one kind (a `RelationKind` value) among the graph's relations.
    Io(&'static str),
}

impl Section {
    /// The section a name given to `Renderer.items` stands for.
    fn named(name: &str) -> PyResult<Self> {
        Ok(match name {
            "runs" => Section::Runs,
            "operations" => Section::Operations,
            "parents" => Section::Parents,
            "inputs" => Section::Io("INPUT"),
            "outputs" => Section::Io("OUTPUT"),
            "dataset_lineage" => Section::Io("DATASET"),
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "not a list section: {name}"
                )))
            }
        })
    }
}

/// The body's sections of a `LineageGraph`, written as orjson writes them.
#[pyclass(module = "threadline_native")]
pub struct Renderer {
    status_names: Py<PyDict>, // Status value -> name
    output_types: PyObject,   // render.output_type_names: bits -> [name, ...]
    uuid: PyObject,           // uuid.UUID (asyncpg's UUID is a subclass)
    utc: PyObject,            // datetime.UTC, the tzinfo of every stored time
    /// Each list is written here and copied out once: a fresh megabyte per request cost
    /// page faults (~15% of the writing).
    buffer: Mutex<W>,
}

#[pymethods]
impl Renderer {
    #[new]
    fn new(config: &Bound<'_, PyDict>) -> PyResult<Self> {
        let get = |key: &str| -> PyResult<PyObject> {
            config
                .get_item(key)?
                .map(Bound::unbind)
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(key.to_owned()))
        };
        let py = config.py();
        Ok(Renderer {
            status_names: get("status_names")?
                .downcast_bound::<PyDict>(py)?
                .clone()
                .unbind(),
            output_types: get("output_type_names")?,
            uuid: get("UUID")?,
            utc: get("utc")?,
            buffer: Mutex::new(Vec::new()),
        })
    }

    /// Items `lo..hi` of `items` as `render.render_json` writes them inside the list
    /// `section` names ("runs", "operations", "parents"; "inputs", "outputs" or
    /// "dataset_lineage": only the relations of that kind among those items), without the
    /// list's brackets: a comma before each, but not before the list's first (`first`: none
    /// written in it yet). `render.native_body` writes each list in one call,
    /// `render.render_chunks` a large body's lists a slice at a time.
    #[pyo3(signature = (section, items, lo, hi, *, first))]
    fn items<'py>(
        &self,
        py: Python<'py>,
        section: &str,
        items: &Bound<'py, PyList>,
        lo: usize,
        hi: usize,
        first: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let section = Section::named(section)?;
        let mut out = self
            .buffer
            .try_lock()
            .map_err(|_| unsupported("buffer in use"))?;
        out.clear();
        let slice = items.get_slice(lo, hi);
        self.write_items(&mut out, section, &slice, first)?;
        let written = PyBytes::new(py, &out);
        if out.capacity() > KEPT_BUFFER_BYTES {
            *out = Vec::new();
        }
        Ok(written)
    }
}

impl Renderer {
    /// The items of `items` in `section`, each after a comma but the first when `first`;
    /// whether any was written. A relation of no known kind is declined (Python raises the
    /// KeyError).
    fn write_items(
        &self,
        out: &mut W,
        section: Section,
        items: &Bound<'_, PyList>,
        first: bool,
    ) -> PyResult<bool> {
        let mut types = HashMap::new(); // output types' names, written once per call
        let mut wrote = false;
        for item in items.iter() {
            let item = item.downcast::<PyTuple>()?;
            if let Section::Io(kind) = section {
                let this = fields(item, 1)?[0].downcast::<PyString>()?.to_str()?;
                if this != kind {
                    if !matches!(this, "INPUT" | "OUTPUT" | "DATASET") {
                        return Err(unsupported("relation kind"));
                    }
                    continue;
                }
            }
            if wrote || !first {
                out.push(b',');
            }
            wrote = true;
            match section {
                Section::Runs => self.node(out, item, &RUN_FIELDS)?,
                Section::Operations => self.node(out, item, &OPERATION_FIELDS)?,
                Section::Parents => {
                    let ends = fields(item, 2)?;
                    self.ends(out, &ends[0], &ends[1])?;
                    out.push(b'}');
                }
                Section::Io(kind) => self.relation(out, item, kind, &mut types)?,
            }
        }
        Ok(wrote)
    }

    /// One object of `render._runs(nodes)` or `render._operations(nodes)`: the node tuple's
    /// `fields`.
    fn node(&self, out: &mut W, node: &Bound<'_, PyTuple>, named: &[Field]) -> PyResult<()> {
        let values = node.as_slice(); // borrowed, as `fields` reads them
        for &(name, at, how) in named {
            out.extend_from_slice(name);
            let value = values.get(at).ok_or_else(|| unsupported("tuple length"))?;
            match how {
                As::Value => self.value(out, value)?,
                As::Id => self.text_of(out, value)?,
                As::OptionalId => self.optional_text_of(out, value)?,
                As::Status => self.status(out, value)?,
            }
        }
        out.push(b'}');
        Ok(())
    }

    /// A relation object's first two keys: `{"from": ref, "to": ref` (render._Refs).
    fn ends(
        &self,
        out: &mut W,
        source: &Bound<'_, PyAny>,
        target: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        out.extend_from_slice(b"{\"from\":");
        self.node_ref(out, source)?;
        out.extend_from_slice(b",\"to\":");
        self.node_ref(out, target)
    }

    /// One relation of `kind` of `render._io(relations)`.
    fn relation(
        &self,
        out: &mut W,
        relation: &Bound<'_, PyTuple>,
        kind: &str,
        types: &mut HashMap<Option<i64>, W>,
    ) -> PyResult<()> {
        let f = fields(relation, 9)?; // model.IORelation's
        self.ends(out, &f[1], &f[2])?;
        let counters_and_times: [(&[u8], usize); 5] = [
            (b",\"num_rows\":", 3),
            (b",\"num_bytes\":", 4),
            (b",\"num_files\":", 5),
            (b",\"first_seen_at\":", 7),
            (b",\"last_seen_at\":", 8),
        ];
        for (name, i) in counters_and_times {
            out.extend_from_slice(name);
            self.value(out, &f[i])?;
        }
        if kind != "INPUT" {
            out.extend_from_slice(b",\"types\":");
            self.output_types(out, &f[6], types)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// `render.output_type_names(bits)`, memoised per body.
    fn output_types(
        &self,
        out: &mut W,
        bits: &Bound<'_, PyAny>,
        types: &mut HashMap<Option<i64>, W>,
    ) -> PyResult<()> {
        let key = if bits.is_none() {
            None
        } else {
            Some(int(bits)?)
        };
        let written = match types.entry(key) {
            Entry::Occupied(found) => found.into_mut(),
            Entry::Vacant(slot) => {
                let names = self.output_types.bind(bits.py()).call1((bits,))?;
                let mut written = Vec::new();
                self.value(&mut written, &names)?;
                slot.insert(written)
            }
        };
        out.extend_from_slice(written);
        Ok(())
    }

    /// `{"kind": ref.kind, "id": id}`, a UUID id as its text (render._Refs).
    fn node_ref(&self, out: &mut W, node: &Bound<'_, PyAny>) -> PyResult<()> {
        let node = fields(node.downcast::<PyTuple>()?, 2)?;
        out.extend_from_slice(b"{\"kind\":");
        self.value(out, &node[0])?;
        out.extend_from_slice(b",\"id\":");
        self.value(out, &node[1])?;
        out.push(b'}');
        Ok(())
    }

    /// `names[status]`: the Status name of a stored value.
    fn status(&self, out: &mut W, status: &Bound<'_, PyAny>) -> PyResult<()> {
        match self.status_names.bind(status.py()).get_item(status)? {
            Some(name) => self.value(out, &name),
            None => Err(unsupported("status")), // Python raises the KeyError
        }
    }

    /// `str(value)` of an id: a UUID's canonical text, or text as it is.
    fn text_of(&self, out: &mut W, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.is_uuid(value)? {
            return self.uuid_text(out, value);
        }
        if value.is_instance_of::<PyString>() {
            return self.value(out, value);
        }
        Err(unsupported("id"))
    }

    fn optional_text_of(&self, out: &mut W, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if value.is_none() {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        self.text_of(out, value)
    }

    fn is_uuid(&self, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        if checked_bits(value).is_some() {
            return Ok(true); // asyncpg's UUID, a subclass: no walk over its bases
        }
        value.is_instance(self.uuid.bind(value.py()))
    }

    /// `str(value)` of a UUID as a JSON string (render._id), from its 128 bits.
    fn uuid_text(&self, out: &mut W, value: &Bound<'_, PyAny>) -> PyResult<()> {
        uuid(out, uuid_bits(value, self.uuid.bind(value.py()))?);
        Ok(())
    }

    /// A JSON value as orjson writes it (`OPT_UTC_Z`), UUIDs as their text (the `default`
    /// hook of render_json); anything else is `UnsupportedValueError`.
    fn value(&self, out: &mut W, value: &Bound<'_, PyAny>) -> PyResult<()> {
        // The commonest values first, by their exact type (a pointer comparison): a large
        // RUN graph's relations hold ~50,000 integers, texts and Nones.
        // SAFETY: the type of a live object, and the addresses of two static types.
        let (kind, int, text) = unsafe {
            (
                ffi::Py_TYPE(value.as_ptr()),
                std::ptr::addr_of_mut!(ffi::PyLong_Type),
                std::ptr::addr_of_mut!(ffi::PyUnicode_Type),
            )
        };
        if kind == int {
            return integer(out, value);
        }
        if value.is_none() {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        if kind == text {
            // SAFETY: exactly a str.
            let text = unsafe { value.downcast_unchecked::<PyString>() };
            string(out, text.to_str().map_err(|_| unsupported("text"))?);
            return Ok(());
        }
        // Then the stored times, by their exact type: the subtype checks below walk a type's
        // bases for every value that is not of theirs.
        if let Ok(time) = value.downcast_exact::<PyDateTime>() {
            return self.datetime(out, time);
        }
        // Then asyncpg's UUIDs, by their exact class: the ids of a RUN graph's relations.
        if let Some(bits) = checked_bits(value) {
            uuid(out, bits);
            return Ok(());
        }
        if let Ok(text) = value.downcast::<PyString>() {
            // A str subclass: the kinds' StrEnums.
            let text = text.to_str().map_err(|_| unsupported("text"))?;
            string(out, text);
        } else if let Ok(flag) = value.downcast::<PyBool>() {
            out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
        } else if value.is_instance_of::<PyInt>() {
            integer(out, value)?;
        } else if let Ok(time) = value.downcast::<PyDateTime>() {
            self.datetime(out, time)?;
        } else if let Ok(list) = value.downcast::<PyList>() {
            out.push(b'[');
            for (i, item) in list.iter().enumerate() {
                sep(out, i);
                self.value(out, &item)?;
            }
            out.push(b']');
        } else if self.is_uuid(value)? {
            self.uuid_text(out, value)?;
        } else {
            return Err(unsupported("type"));
        }
        Ok(())
    }

    /// RFC 3339 as orjson writes a datetime: microseconds only when not zero, `Z` for UTC,
    /// no offset for a naive time.
    fn datetime(&self, out: &mut W, time: &Bound<'_, PyDateTime>) -> PyResult<()> {
        let zone = match time.get_tzinfo() {
            None => &b""[..],
            Some(tz) if tz.is(self.utc.bind(time.py())) => b"Z",
            Some(_) => return Err(unsupported("time zone")),
        };
        // Written into a stack buffer and copied once: ~6,000 times in a large RUN graph.
        let mut text = *b"\"0000-00-00T00:00:00.000000";
        digits(&mut text[1..5], time.get_year() as u32); // 1..=9999
        digits(&mut text[6..8], time.get_month().into());
        digits(&mut text[9..11], time.get_day().into());
        digits(&mut text[12..14], time.get_hour().into());
        digits(&mut text[15..17], time.get_minute().into());
        digits(&mut text[18..20], time.get_second().into());
        let micros = time.get_microsecond();
        let end = if micros == 0 {
            20
        } else {
            digits(&mut text[21..27], micros);
            27
        };
        out.extend_from_slice(&text[..end]);
        out.extend_from_slice(zone);
        out.push(b'"');
        Ok(())
    }
}

/// A UUID's 128 bits, its `int`: asyncpg's read in place once its layout is checked
/// (`uuids::checked_bits`), a uuid.UUID's own, another subclass's from its 16 `bytes`.
pub fn uuid_bits(value: &Bound<'_, PyAny>, uuid: &Bound<'_, PyAny>) -> PyResult<u128> {
    if let Some(bits) = checked_bits(value) {
        return Ok(bits);
    }
    let py = value.py();
    if value.get_type().is(uuid) {
        return value.getattr(intern!(py, "int"))?.extract();
    }
    // Anything but 16 bytes there is declined: the caller's Python code then decides.
    let bytes = value.getattr(intern!(py, "bytes"));
    let bits = bytes.as_ref().ok().and_then(|found| {
        let found = found.downcast::<PyBytes>().ok()?;
        <[u8; 16]>::try_from(found.as_bytes()).ok()
    });
    bits.map(u128::from_be_bytes)
        .ok_or_else(|| unsupported("UUID bytes"))
}

/// A tuple's items in place, borrowed (no reference counting per field: a large RUN graph
/// reads ~100,000 of them); one shorter than `at_least` is declined.
pub fn fields<'a, 'py>(
    tuple: &'a Bound<'py, PyTuple>,
    at_least: usize,
) -> PyResult<&'a [Bound<'py, PyAny>]> {
    let items = tuple.as_slice();
    if items.len() < at_least {
        return Err(unsupported("tuple length"));
    }
    Ok(items)
}

/// An integer as orjson writes it: up to 64 bits, signed or not; any larger is declined.
fn integer(out: &mut W, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if let Ok(small) = value.extract::<i64>() {
        out.extend_from_slice(itoa::Buffer::new().format(small).as_bytes());
    } else if let Ok(large) = value.extract::<u64>() {
        out.extend_from_slice(itoa::Buffer::new().format(large).as_bytes());
    } else {
        return Err(unsupported("integer"));
    }
    Ok(())
}

fn int(value: &Bound<'_, PyAny>) -> PyResult<i64> {
    value.extract::<i64>().map_err(|_| unsupported("integer"))
}

/// `value` as decimal digits filling `slot`, zero-padded (the caller knows it fits).
#[inline(always)]
fn digits(slot: &mut [u8], mut value: u32) {
    for place in slot.iter_mut().rev() {
        *place = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[inline(always)]
fn sep(out: &mut W, i: usize) {
    if i > 0 {
        out.push(b',');
    }
}

/// A UUID's canonical text: 8-4-4-4-12 lowercase hex digits.
fn uuid(out: &mut W, bits: u128) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 38];
    text[0] = b'"';
    text[37] = b'"';
    let mut at = 1;
    for (i, byte) in bits.to_be_bytes().into_iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            text[at] = b'-';
            at += 1;
        }
        text[at] = HEX[(byte >> 4) as usize];
        text[at + 1] = HEX[(byte & 0xF) as usize];
        at += 2;
    }
    out.extend_from_slice(&text);
}

/// A JSON string as orjson escapes it: `"` and `\`, the short forms of \b \t \n \f \r, any
/// other control character as `\u00XX`; everything else as its UTF-8 bytes.
fn string(out: &mut W, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let short: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            0x0c => b"\\f",
            b'\r' => b"\\r",
            0x00..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        if short.is_empty() {
            out.extend_from_slice(b"\\u00");
            out.push(HEX[(b >> 4) as usize]);
            out.push(HEX[(b & 0xF) as usize]);
        } else {
            out.extend_from_slice(short);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}
