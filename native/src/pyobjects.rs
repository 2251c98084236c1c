//! Python objects made from Rust: record instances by their slots (`Class`), slots set past a
//! class's own `__setattr__`, parsed JSON as the values orjson.loads gives, and optional text
//! and integers.

use crate::facets::Obj;
use crate::json::Json;
use pyo3::exceptions::PyKeyError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

/// A slotted dataclass (the records, `Extracted`) and its fields in order (`__slots__`).
pub struct Class {
    cls: PyObject,
    fields: Vec<Py<PyString>>,
    /// Where each field's slot lies in an instance, when every field is a plain writable
    /// object slot (a `member_descriptor` of type `T_OBJECT_EX`); None: set them by name.
    offsets: Option<Vec<ffi::Py_ssize_t>>,
}

impl Class {
    pub fn new(py: Python<'_>, cls: PyObject) -> PyResult<Self> {
        let names = cls
            .bind(py)
            .getattr(intern!(py, "__slots__"))?
            .extract::<Vec<String>>()?;
        let fields: Vec<Py<PyString>> = names
            .iter()
            .map(|f| PyString::intern(py, f).unbind())
            .collect();
        let offsets = slot_offsets(cls.bind(py), &fields)?;
        Ok(Class {
            cls,
            fields,
            offsets,
        })
    }

    /// The field names, in `__slots__` order (the order `make` takes values in).
    pub fn fields(&self) -> &[Py<PyString>] {
        &self.fields
    }

    /// `cls(*values)`: the instance allocated as `object.__new__` allocates it and its slots
    /// set one by one, which is what the class's `__init__` (shared/frozen.py `fast_init`, or
    /// the dataclass's own) does, without running it: a Python frame per record was a fifth
    /// of the native extract, and setting the slots by name another ~12% of it.
    pub fn make(&self, py: Python<'_>, values: Vec<PyObject>) -> PyResult<PyObject> {
        if values.len() != self.fields.len() {
            return Err(PyKeyError::new_err("record arity"));
        }
        let cls = self.cls.bind(py);
        let Some(offsets) = &self.offsets else {
            let made = cls.call_method1(intern!(py, "__new__"), (cls,))?;
            for (name, value) in self.fields.iter().zip(values) {
                set_slot(py, &made, name.bind(py), value.bind(py))?;
            }
            return Ok(made.unbind());
        };
        // SAFETY: `slot_offsets` checked that the class is a concrete type with an allocator
        // and that each offset is a writable object slot of its instances; the allocator
        // returns a new, zeroed instance, whose slots each take one owned reference here.
        unsafe {
            let tp = cls.as_ptr() as *mut ffi::PyTypeObject;
            let alloc = (*tp).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
            let made = alloc(tp, 0);
            if made.is_null() {
                return Err(PyErr::fetch(py));
            }
            for (offset, value) in offsets.iter().zip(values) {
                let slot = (made as *mut u8).offset(*offset) as *mut *mut ffi::PyObject;
                let old = *slot;
                *slot = value.into_ptr();
                ffi::Py_XDECREF(old);
            }
            Ok(PyObject::from_owned_ptr(py, made))
        }
    }
}

/// The slot offsets of `fields` in instances of `cls`, if every one is a plain writable
/// object slot and `cls` may be instantiated like this (not abstract); else None.
fn slot_offsets(
    cls: &Bound<'_, PyAny>,
    fields: &[Py<PyString>],
) -> PyResult<Option<Vec<ffi::Py_ssize_t>>> {
    let py = cls.py();
    let namespace = cls.getattr(intern!(py, "__dict__"))?;
    let mut offsets = Vec::with_capacity(fields.len());
    // SAFETY: reads a type object's flags and, for objects whose type is exactly
    // member_descriptor, their PyMemberDef (pyo3-ffi types the pointer as PyGetSetDef).
    unsafe {
        let tp = cls.as_ptr() as *mut ffi::PyTypeObject;
        if (*tp).tp_flags & ffi::Py_TPFLAGS_IS_ABSTRACT != 0 {
            return Ok(None);
        }
        for name in fields {
            let descr = namespace.get_item(name.bind(py))?;
            if ffi::Py_TYPE(descr.as_ptr()) != std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type) {
                return Ok(None);
            }
            let member = (*(descr.as_ptr() as *mut ffi::PyMemberDescrObject)).d_member
                as *const ffi::PyMemberDef;
            if (*member).type_code != ffi::Py_T_OBJECT_EX || (*member).flags & ffi::Py_READONLY != 0
            {
                return Ok(None);
            }
            offsets.push((*member).offset);
        }
    }
    Ok(Some(offsets))
}

/// Set a slot through `object.__setattr__` (past a class's own `__setattr__`, as
/// `uuid.UUID.__init__` does).
pub fn set_slot(
    py: Python<'_>,
    target: &Bound<'_, PyAny>,
    name: &Bound<'_, PyString>,
    value: &Bound<'_, PyAny>,
) -> PyResult<()> {
    // SAFETY: three live references held by the caller; the call only reads them.
    let rc = unsafe {
        pyo3::ffi::PyObject_GenericSetAttr(target.as_ptr(), name.as_ptr(), value.as_ptr())
    };
    if rc < 0 {
        return Err(PyErr::fetch(py));
    }
    Ok(())
}

/// The Python value orjson.loads gives for a parsed JSON value.
fn to_python(py: Python<'_>, value: &Json<'_>) -> PyResult<PyObject> {
    Ok(match value {
        Json::Null => py.None(),
        Json::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Json::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any().unbind()
            } else {
                n.as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        Json::String(s) => PyString::new(py, s).into_any().unbind(),
        Json::Array(list) => {
            let made = PyList::empty(py);
            for item in list {
                made.append(to_python(py, item)?)?;
            }
            made.into_any().unbind()
        }
        Json::Object(map) => to_python_object(py, map)?,
    })
}

pub fn to_python_object(py: Python<'_>, map: &Obj<'_>) -> PyResult<PyObject> {
    let made = PyDict::new(py);
    for (key, item) in map.iter() {
        made.set_item(key, to_python(py, item)?)?;
    }
    Ok(made.into_any().unbind())
}

/// Python values of plain Rust ones.
pub fn text_value(py: Python<'_>, value: Option<&str>) -> PyObject {
    value.map_or_else(|| py.None(), |s| PyString::new(py, s).into_any().unbind())
}

pub fn int_value(py: Python<'_>, value: Option<i64>) -> PyObject {
    value.map_or_else(
        || py.None(),
        |i| {
            i.into_pyobject(py)
                .map_or_else(|_| py.None(), |v| v.into_any().unbind())
        },
    )
}
