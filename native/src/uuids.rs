//! asyncpg's UUIDs with their hash filled in natively (`UuidHashes`, used by
//! `server/lineage/native.py`).
//!
//! asyncpg decodes every uuid value into a new `asyncpg.pgproto.pgproto.UUID`, whose
//! `__hash__` is `hash(self.int)`, cached in the object after its first call; that first
//! call builds a 128-bit `int` from a new `bytes` object, ~0.35 µs. A RUN graph of 2,000
//! nodes over all history brings ~17,000 of them (one per level row and run row), each
//! first hashed by a dict of the traversal: ~6 ms of its ~75 ms of server time. Here the
//! same value is computed from the UUID's 16 bytes and stored where `__hash__` caches it,
//! so `__hash__` returns it at once. The class is a Cython extension type whose fields
//! are not public: `UuidHashes::new` checks the layout it writes on probes (the bytes at
//! their place, the cache slot empty and then filled with the hash this code computes)
//! and refuses any other, and the server then runs without it.
//!
//! Once a class has passed those checks, the body writer and the graph's orderings read
//! its instances' 128 bits here too (`checked_bits`), in place of asking Python for a new
//! `bytes` object per UUID (~40 ns, ~30,000 times for such a graph).

use crate::render::UnsupportedValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyType};
use std::sync::OnceLock;

/// The Cython object: PyObject_HEAD, `char _data[16]`, `object _int`, `object _hash`,
/// `object __weakref__` (asyncpg/pgproto/uuid.pyx).
const DATA_AT: usize = std::mem::size_of::<ffi::PyObject>();
const HASH_AT: usize = DATA_AT + 16 + std::mem::size_of::<*mut ffi::PyObject>();
const SIZE: usize = HASH_AT + 2 * std::mem::size_of::<*mut ffi::PyObject>();

/// CPython's hash of a non-negative integer: its value modulo the Mersenne prime 2^61 - 1
/// (`sys.hash_info.modulus`), never -1 for such a value.
const MODULUS: u128 = (1 << 61) - 1;

fn int_hash(bits: u128) -> ffi::Py_hash_t {
    (bits % MODULUS) as ffi::Py_hash_t
}

/// The class whose layout `UuidHashes::new` checked, once one has passed.
static CHECKED: OnceLock<Py<PyType>> = OnceLock::new();

/// The 128 bits of `value` if it is an instance of exactly the checked class (its `int`,
/// as its `bytes` would give them); None for any other value, or before a class passed.
pub fn checked_bits(value: &Bound<'_, PyAny>) -> Option<u128> {
    let kind = CHECKED.get()?;
    if !value.get_type().is(kind.bind(value.py())) {
        return None;
    }
    // SAFETY: an instance of the class whose layout was checked.
    Some(unsafe { UuidHashes::bits(value.as_ptr()) })
}

/// Fills the hash of asyncpg's UUIDs in rows (see the module's comment).
#[pyclass(frozen)]
pub struct UuidHashes {
    kind: Py<PyType>,
}

impl UuidHashes {
    /// The UUID's 16 bytes, big-endian: its `int`.
    ///
    /// SAFETY: `value` is an instance of exactly the checked type (its layout).
    unsafe fn bits(value: *mut ffi::PyObject) -> u128 {
        let data = (value as *const u8).add(DATA_AT) as *const [u8; 16];
        u128::from_be_bytes(*data)
    }

    /// SAFETY: as for `bits`.
    unsafe fn hash_slot(value: *mut ffi::PyObject) -> *mut *mut ffi::PyObject {
        (value as *mut u8).add(HASH_AT) as *mut *mut ffi::PyObject
    }

    /// Store the hash of `value` where its `__hash__` caches it, unless one is there.
    fn fill(&self, value: &Bound<'_, PyAny>) -> PyResult<()> {
        if !value.get_type().is(self.kind.bind(value.py())) {
            return Ok(());
        }
        let ptr = value.as_ptr();
        // SAFETY: an instance of the checked type; the slot holds a strong reference (None
        // until the first hash), replaced here by a new one under the GIL.
        unsafe {
            let slot = Self::hash_slot(ptr);
            if *slot != ffi::Py_None() {
                return Ok(());
            }
            let hash = ffi::PyLong_FromSsize_t(int_hash(Self::bits(ptr)));
            if hash.is_null() {
                return Err(PyErr::fetch(value.py()));
            }
            let old = std::mem::replace(&mut *slot, hash);
            ffi::Py_DECREF(old);
        }
        Ok(())
    }

    /// Whether `probe`, a fresh instance, has the layout `fill` writes: its bytes and an
    /// empty cache where they are expected, then, once Python hashed it, this code's hash
    /// there.
    fn fits(kind: &Bound<'_, PyType>, probe: &Bound<'_, PyAny>) -> PyResult<bool> {
        if !probe.get_type().is(kind) {
            return Ok(false);
        }
        let bytes = probe.getattr("bytes")?;
        let Ok(bytes) = <[u8; 16]>::try_from(bytes.downcast::<PyBytes>()?.as_bytes()) else {
            return Ok(false);
        };
        let ptr = probe.as_ptr();
        // SAFETY: the type's instances are SIZE bytes (checked by the caller): the reads stay
        // inside the object.
        let (bits, empty) = unsafe { (Self::bits(ptr), *Self::hash_slot(ptr) == ffi::Py_None()) };
        if bits != u128::from_be_bytes(bytes) || !empty {
            return Ok(false);
        }
        let hash = probe.hash()?;
        // SAFETY: as above; the slot now holds the cached hash, an int (or still None).
        let cached = unsafe { *Self::hash_slot(ptr) };
        // SAFETY: a live object of the probe's (the probe holds it).
        let cached = unsafe { Bound::from_borrowed_ptr(probe.py(), cached) };
        let ours = int_hash(bits) as isize;
        Ok(hash == ours && cached.extract::<isize>().is_ok_and(|value| value == ours))
    }
}

#[pymethods]
impl UuidHashes {
    /// For asyncpg's UUID class `kind`, checked on `probes` (fresh instances of it, never
    /// hashed); declined (UnsupportedValueError) unless every probe fits.
    #[new]
    fn new(kind: Bound<'_, PyType>, probes: Bound<'_, PyList>) -> PyResult<Self> {
        // SAFETY: reading a field of a live type object.
        let size = unsafe { (*kind.as_type_ptr()).tp_basicsize } as usize;
        let mut fits = size == SIZE && !probes.is_empty();
        for probe in probes.iter() {
            fits = fits && Self::fits(&kind, &probe)?;
        }
        if !fits {
            return Err(UnsupportedValueError::new_err("asyncpg UUID layout"));
        }
        // The first class to pass stays the checked one (there is one asyncpg per process).
        let _ = CHECKED.set(kind.clone().unbind());
        Ok(Self {
            kind: kind.unbind(),
        })
    }

    /// Fill the hash of the UUIDs (of the checked class) at `columns` of each row; other
    /// values are left as they are.
    fn fill_rows(&self, rows: &Bound<'_, PyAny>, columns: Vec<isize>) -> PyResult<()> {
        for row in rows.try_iter()? {
            let row = row?;
            for &column in &columns {
                self.fill(&row.get_item(column)?)?;
            }
        }
        Ok(())
    }
}
