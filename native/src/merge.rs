//! `consumer.merge.merge` over the same Python records: the records of a batch combined by
//! natural key with the rules of `consumer/merge.py` (read its docstring for them), sorted
//! by key. Keys are the same Python tuples `merge.RULES` makes, kept in a Python dict and
//! sorted by Python, so grouping and order cannot drift; only the combining moves here, a
//! Python function call and a record `__init__` per repeated key before. Every value
//! comparison is Python's own (`max`/`min`/tuple order), on the same objects.

use crate::{item, Class};
use pyo3::exceptions::PyRuntimeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyString, PyTuple};
use std::collections::HashSet;

#[pyclass(unsendable, module = "threadline_native")]
pub struct Merger {
    pub(crate) extracted: Class,
    pub(crate) location: Class,
    pub(crate) dataset: Class,
    pub(crate) symlink: Class,
    pub(crate) job: Class,
    pub(crate) run: Class,
    operation: Class,
    pub(crate) io: Class,
    pub(crate) column_lineage: Class,
    pub(crate) job_dataset: Class,
    unknown: Py<PyString>,
    /// merge.RULES's key functions (attrgetters), in RULES order.
    pub(crate) keys: Vec<PyObject>,
    run_fields: Vec<Py<PyString>>,
    operation_fields: Vec<Py<PyString>>,
}

type Combine = fn(&Merger, Python<'_>, &Bound<'_, PyAny>, &Bound<'_, PyAny>) -> PyResult<PyObject>;

// (Extracted field, combine rule, kept) in the order of merge.RULES, whose key functions
// (`config["keys"]`) make the same keys here. `kept`: a record that is already part of a
// merged one changes nothing, the merged record kept as it is (`combine(c, a)` is `c` when
// `c` came from `a`: locations keep the union of addresses, datasets the greatest format,
// symlinks the greatest type, jobs the known (then greater) type and the greatest parent,
// schemas the first); the other rules build a new record (times kept per field) even from
// the same.
pub(crate) const RULES: [(&str, Combine, bool); 10] = [
    ("locations", Merger::locations, true),
    ("datasets", Merger::greater_format, true),
    ("symlinks", Merger::greater_type, true),
    ("jobs", Merger::jobs, true),
    ("schemas", Merger::keep_first, true),
    ("runs", Merger::runs, false),
    ("operations", Merger::operations, false),
    ("ios", Merger::ios, false),
    ("column_lineage", Merger::column_lineage, false),
    ("job_datasets", Merger::job_datasets, false),
];

// merge.RUN_FIELDS and merge.OPERATION_FIELDS come from Python (`config`); these are the
// positions `_run` and `merge_operations` unpack them at, checked against the names given.
const RUN_FIELDS: [&str; 10] = [
    "job",
    "parent_run_id",
    "root_run_id",
    "user",
    "start_reason",
    "ended_reason",
    "external_id",
    "attempt",
    "running_log_url",
    "persistent_log_url",
];
const OPERATION_FIELDS: [&str; 7] = [
    "run_id",
    "name",
    "type",
    "group",
    "description",
    "sql_query",
    "ended_reason",
];

/// `obj.name`, the name interned once per call site.
macro_rules! at {
    ($obj:expr, $name:literal) => {
        $obj.getattr(intern!($obj.py(), $name))
    };
}

/// `f(a.name, b.name)`: a rule over the same attribute of both records.
macro_rules! pair {
    ($f:ident, $a:expr, $b:expr, $name:literal) => {
        $f(at!($a, $name)?, at!($b, $name)?)
    };
}

/// Python's `a == b` as tuple comparison uses it (the same object is equal).
fn same(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(a.is(b) || a.eq(b)?)
}

/// `max(a, b)`: b only if b > a.
fn max<'py>(a: Bound<'py, PyAny>, b: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    Ok(if b.gt(&a)? { b } else { a })
}

/// `min(a, b)`: b only if b < a.
fn min<'py>(a: Bound<'py, PyAny>, b: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    Ok(if b.lt(&a)? { b } else { a })
}

/// `greatest`: the greater non-null value.
fn greatest<'py>(a: Bound<'py, PyAny>, b: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if a.is_none() {
        return Ok(b);
    }
    if b.is_none() {
        return Ok(a);
    }
    max(a, b)
}

/// `least`: the lesser non-null value.
fn least<'py>(a: Bound<'py, PyAny>, b: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if a.is_none() {
        return Ok(b);
    }
    if b.is_none() {
        return Ok(a);
    }
    min(a, b)
}

/// `(tb, vb) > (ta, va)` as Python compares tuples.
fn later(
    tb: &Bound<'_, PyAny>,
    vb: &Bound<'_, PyAny>,
    ta: &Bound<'_, PyAny>,
    va: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    if !same(tb, ta)? {
        return tb.gt(ta);
    }
    if !same(vb, va)? {
        return vb.gt(va);
    }
    Ok(false)
}

/// `owner_of_latest(a, b)`: (event_time, run_id, job) of a >= b's, as tuples compare.
fn owns(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<bool> {
    let pairs = [
        (at!(a, "event_time")?, at!(b, "event_time")?),
        (at!(a, "run_id")?, at!(b, "run_id")?),
        (at!(a, "job")?, at!(b, "job")?),
    ];
    for (x, y) in pairs {
        if !same(&x, &y)? {
            return x.ge(&y);
        }
    }
    Ok(true)
}

/// `_latest`: per field, the value of the later event (then the greater value), and the
/// tuple of their times.
fn latest<'py>(
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    names: &[Py<PyString>],
) -> PyResult<(Vec<Bound<'py, PyAny>>, Bound<'py, PyAny>)> {
    let py = a.py();
    let times = |r: &Bound<'py, PyAny>| -> PyResult<Vec<Bound<'py, PyAny>>> {
        let given = at!(r, "field_times")?;
        if given.is_truthy()? {
            return given.try_iter()?.collect();
        }
        let at = at!(r, "event_time")?;
        Ok(vec![at; names.len()])
    };
    let (times_a, times_b) = (times(a)?, times(b)?);
    let mut values = Vec::with_capacity(names.len());
    let mut chosen = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let (va, vb) = (a.getattr(name.bind(py))?, b.getattr(name.bind(py))?);
        let (ta, tb) = (&times_a[i], &times_b[i]);
        if !vb.is_none() && (va.is_none() || later(tb, &vb, ta, &va)?) {
            values.push(vb);
            chosen.push(tb.clone());
        } else if va.is_none() {
            values.push(py.None().into_bound(py));
            chosen.push(py.None().into_bound(py));
        } else {
            values.push(va);
            chosen.push(ta.clone());
        }
    }
    Ok((values, PyTuple::new(py, chosen)?.into_any()))
}

/// Python's field order (`config[key]`), interned; it must be the one the rules unpack.
fn fields(
    py: Python<'_>,
    config: &Bound<'_, PyDict>,
    key: &str,
    expected: &[&str],
) -> PyResult<Vec<Py<PyString>>> {
    let names: Vec<String> = item(config, key)?.extract(py)?;
    if names != expected {
        return Err(PyRuntimeError::new_err(format!(
            "{key} changed in Python: {names:?}"
        )));
    }
    Ok(names
        .iter()
        .map(|n| PyString::intern(py, n).unbind())
        .collect())
}

fn make(cls: &Class, py: Python<'_>, values: Vec<Bound<'_, PyAny>>) -> PyResult<PyObject> {
    cls.make(py, values.into_iter().map(Bound::unbind).collect())
}

#[pymethods]
impl Merger {
    /// `config`: the record classes (see consumer/native.py).
    #[new]
    fn new(py: Python<'_>, config: &Bound<'_, PyDict>) -> PyResult<Self> {
        let class = |key: &str| -> PyResult<Class> { Class::new(py, item(config, key)?) };
        Ok(Merger {
            extracted: class("Extracted")?,
            location: class("LocationRecord")?,
            dataset: class("DatasetRecord")?,
            symlink: class("SymlinkRecord")?,
            job: class("JobRecord")?,
            run: class("RunRecord")?,
            operation: class("OperationRecord")?,
            io: class("IORecord")?,
            column_lineage: class("ColumnLineageRecord")?,
            job_dataset: class("JobDatasetRecord")?,
            unknown: PyString::intern(py, "UNKNOWN").unbind(),
            keys: item(config, "keys")?.extract(py)?,
            run_fields: fields(py, config, "run_fields", &RUN_FIELDS)?,
            operation_fields: fields(py, config, "operation_fields", &OPERATION_FIELDS)?,
        })
    }

    /// All records of `parts` (Extracted objects) merged by key and sorted by key. A panic
    /// (a bug here) is a RuntimeError, so that the caller can merge in Python instead.
    fn merge(&self, py: Python<'_>, parts: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let run = std::panic::AssertUnwindSafe(|| self.merge_all(py, parts));
        std::panic::catch_unwind(run)
            .unwrap_or_else(|_| Err(PyRuntimeError::new_err("native merge panicked")))
    }

    /// `consumer.rekey.rekey(batch, canon)` (see rekey.rs); a panic is a RuntimeError.
    fn rekey(
        &self,
        py: Python<'_>,
        batch: &Bound<'_, PyAny>,
        canon: &Bound<'_, PyDict>,
    ) -> PyResult<PyObject> {
        let run = std::panic::AssertUnwindSafe(|| crate::rekey::rekey(self, py, batch, canon));
        std::panic::catch_unwind(run)
            .unwrap_or_else(|_| Err(PyRuntimeError::new_err("native rekey panicked")))
    }
}

impl Merger {
    fn merge_all(&self, py: Python<'_>, parts: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let parts: Vec<Bound<'_, PyAny>> = parts.try_iter()?.collect::<PyResult<_>>()?;
        let mut fields: Vec<PyObject> = Vec::with_capacity(RULES.len() + 1);
        for (rule, (field, _, _)) in RULES.into_iter().enumerate() {
            let field = PyString::intern(py, field);
            let mut lists = Vec::with_capacity(parts.len());
            for part in &parts {
                lists.push(part.getattr(&field)?);
            }
            fields.push(self.by_key(py, rule, &lists)?);
        }
        // Every user any run record names, not only those the merged runs keep.
        let users = PySet::empty(py)?;
        for part in &parts {
            for user in at!(part, "users")?.try_iter()? {
                users.add(user?)?;
            }
            for run in at!(part, "runs")?.try_iter()? {
                let run = run?;
                let user = at!(run, "user")?;
                if user.is_truthy()? {
                    users.add(user)?;
                }
            }
        }
        let users = PyList::new(py, users.iter())?;
        users.sort()?;
        fields.push(users.into_any().unbind());
        self.extracted.make(py, fields)
    }
}

impl Merger {
    /// `by_key` of merge.py: the records of `lists` merged by RULES[rule]'s key with its
    /// rule, sorted by key (a new list).
    pub(crate) fn by_key(
        &self,
        py: Python<'_>,
        rule: usize,
        lists: &[Bound<'_, PyAny>],
    ) -> PyResult<PyObject> {
        let (_, combine, kept) = RULES[rule];
        let key_of = self.keys[rule].bind(py);
        let merged = PyDict::new(py);
        // The rules marked `kept` in RULES are joins that keep a record met again as it is:
        // a record object already merged (memoised locations, datasets and symlinks come back
        // in event after event; the records are alive meanwhile, so an address is one
        // object) would change nothing, and is passed over before its key is even made.
        let mut met: HashSet<usize> = HashSet::new();
        for list in lists {
            for record in list.try_iter()? {
                let record = record?;
                if kept && !met.insert(record.as_ptr() as usize) {
                    continue;
                }
                let key = key_of.call1((&record,))?;
                let kept = match merged.get_item(&key)? {
                    None => record.unbind(),
                    Some(seen) => combine(self, py, &seen, &record)?,
                };
                merged.set_item(key, kept)?;
            }
        }
        let keys = merged.keys();
        keys.sort()?;
        let sorted = PyList::empty(py);
        for key in keys.iter() {
            if let Some(value) = merged.get_item(&key)? {
                sorted.append(value)?;
            }
        }
        Ok(sorted.into_any().unbind())
    }

    fn keep_first(
        &self,
        _py: Python<'_>,
        a: &Bound<'_, PyAny>,
        _b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        Ok(a.clone().unbind())
    }

    /// `merge_locations`.
    fn locations(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let (addresses_a, addresses_b) = (at!(a, "addresses")?, at!(b, "addresses")?);
        if addresses_a.ge(&addresses_b)? {
            return Ok(a.clone().unbind());
        }
        let union = addresses_a.call_method1(intern!(py, "__or__"), (addresses_b,))?;
        make(
            &self.location,
            py,
            vec![at!(a, "type")?, at!(a, "name")?, union],
        )
    }

    /// `_greater_format`.
    fn greater_format(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let (format_a, format_b) = (at!(a, "format")?, at!(b, "format")?);
        if format_b.is_none() || format_b.eq(&format_a)? {
            return Ok(a.clone().unbind());
        }
        make(
            &self.dataset,
            py,
            vec![
                at!(a, "location")?,
                at!(a, "name")?,
                greatest(format_a, format_b)?,
            ],
        )
    }

    /// `_greater_type`.
    fn greater_type(
        &self,
        _py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let keep = if at!(a, "type")?.ge(at!(b, "type")?)? {
            a
        } else {
            b
        };
        Ok(keep.clone().unbind())
    }

    /// `merge_jobs`: a known type beats UNKNOWN (then the greater); the greatest parent.
    fn jobs(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let (type_a, type_b) = (at!(a, "type")?, at!(b, "type")?);
        let unknown = self.unknown.bind(py);
        let kind = if type_a.eq(&type_b)? {
            type_a
        } else if type_a.eq(unknown)? {
            type_b
        } else if type_b.eq(unknown)? {
            type_a
        } else {
            max(type_a, type_b)?
        };
        let parent = pair!(greatest, a, b, "parent")?;
        if same(&kind, &at!(a, "type")?)? && same(&parent, &at!(a, "parent")?)? {
            return Ok(a.clone().unbind()); // the common case: the same job again
        }
        let values = vec![at!(a, "location")?, at!(a, "name")?, kind, parent];
        make(&self.job, py, values)
    }

    /// `merge_runs`: the reference shortcut, else the general rule.
    fn runs(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        if same(&at!(b, "job")?, &at!(a, "job")?)? && self.is_reference(b)? {
            return self.run_reference(py, a, b);
        }
        let (values, times) = latest(a, b, &self.run_fields)?;
        self.run_record(py, a, b, values, times)
    }

    /// `_merge_reference`: b names a's run and job and nothing else.
    fn run_reference(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let values: Vec<Bound<'_, PyAny>> = self
            .run_fields
            .iter()
            .map(|n| a.getattr(n.bind(py)))
            .collect::<PyResult<_>>()?;
        let at = at!(a, "event_time")?;
        let given = at!(a, "field_times")?;
        let mut times: Vec<Bound<'_, PyAny>> = if given.is_truthy()? {
            given.try_iter()?.collect::<PyResult<_>>()?
        } else {
            values
                .iter()
                .map(|v| {
                    if v.is_none() {
                        py.None().into_bound(py)
                    } else {
                        at.clone()
                    }
                })
                .collect()
        };
        let mut replaced = !given.is_truthy()?;
        let b_time = at!(b, "event_time")?;
        if !times[0].is_none() && b_time.gt(&times[0])? {
            times[0] = b_time.clone();
            replaced = true;
        }
        let unchanged = !replaced && at!(a, "created_at")?.le(at!(b, "created_at")?)?;
        if unchanged && at.ge(&b_time)? && at!(a, "status")?.ge(at!(b, "status")?)? {
            return Ok(a.clone().unbind());
        }
        let times = if replaced {
            PyTuple::new(py, times)?.into_any()
        } else {
            given
        };
        self.run_record(py, a, b, values, times)
    }

    /// `_run`: the merged run of a and b, given the descriptive fields' values and times.
    fn run_record(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        values: Vec<Bound<'_, PyAny>>,
        times: Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let v = |i: usize| values[i].clone();
        let record = vec![
            at!(a, "id")?,
            pair!(min, a, b, "created_at")?,
            v(0),
            pair!(max, a, b, "event_time")?,
            pair!(max, a, b, "status")?,
            v(1),
            pair!(least, a, b, "started_at")?,
            pair!(greatest, a, b, "ended_at")?,
            v(3),
            v(4),
            v(5),
            v(6),
            v(7),
            v(8),
            v(9),
            pair!(greatest, a, b, "checkpoints")?,
            v(2),
            times,
        ];
        make(&self.run, py, record)
    }

    /// `merge_operations`.
    fn operations(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let (values, times) = latest(a, b, &self.operation_fields)?;
        let v = |i: usize| values[i].clone();
        let record = vec![
            at!(a, "id")?,
            pair!(min, a, b, "created_at")?,
            v(0),
            pair!(max, a, b, "event_time")?,
            pair!(max, a, b, "status")?,
            v(1),
            v(2),
            pair!(least, a, b, "position")?,
            v(3),
            v(4),
            v(5),
            v(6),
            pair!(least, a, b, "started_at")?,
            pair!(greatest, a, b, "ended_at")?,
            times,
        ];
        make(&self.operation, py, record)
    }

    /// `merge_ios`: the latest schema (then the greater digest), its owner's run and job.
    fn ios(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let (schema_a, schema_b) = (at!(a, "schema")?, at!(b, "schema")?);
        let (time_a, time_b) = (schema_time(a)?, schema_time(b)?);
        let (schema, time) = if !schema_b.is_none()
            && (schema_a.is_none() || later(&time_b, &schema_b, &time_a, &schema_a)?)
        {
            (schema_b, time_b)
        } else {
            (schema_a, time_a)
        };
        let owner = if owns(a, b)? { a } else { b };
        let record = vec![
            at!(a, "direction")?,
            at!(a, "operation_id")?,
            pair!(min, a, b, "created_at")?,
            at!(owner, "run_id")?,
            at!(owner, "job")?,
            at!(a, "dataset")?,
            pair!(max, a, b, "event_time")?,
            schema,
            time,
            pair!(greatest, a, b, "num_rows")?,
            pair!(greatest, a, b, "num_bytes")?,
            pair!(greatest, a, b, "num_files")?,
            at!(a, "output_types")?
                .call_method1(intern!(py, "__or__"), (at!(b, "output_types")?,))?,
        ];
        make(&self.io, py, record)
    }

    /// `_merge_column_lineage`.
    fn column_lineage(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let a_owns = owns(a, b)?;
        if at!(a, "created_at")?.le(at!(b, "created_at")?)? && a_owns {
            return Ok(a.clone().unbind());
        }
        let owner = if a_owns { a } else { b };
        let record = vec![
            at!(a, "operation_id")?,
            pair!(min, a, b, "created_at")?,
            at!(owner, "run_id")?,
            at!(owner, "job")?,
            at!(a, "source")?,
            at!(a, "target")?,
            at!(a, "columns")?,
            at!(a, "columns_id")?,
            pair!(max, a, b, "event_time")?,
        ];
        make(&self.column_lineage, py, record)
    }

    /// `merge_job_datasets`.
    fn job_datasets(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
    ) -> PyResult<PyObject> {
        let record = vec![
            at!(a, "job")?,
            at!(a, "dataset")?,
            at!(a, "direction")?,
            pair!(min, a, b, "first_seen")?,
            pair!(max, a, b, "last_seen")?,
        ];
        make(&self.job_dataset, py, record)
    }

    /// `_is_reference(run)`: a run named only as a parent or root: a job and nothing else.
    fn is_reference(&self, run: &Bound<'_, PyAny>) -> PyResult<bool> {
        let others = [
            at!(run, "field_times")?,
            at!(run, "started_at")?,
            at!(run, "ended_at")?,
            at!(run, "checkpoints")?,
        ];
        if others.iter().any(|v| !v.is_none()) {
            return Ok(false);
        }
        let mut nones = 0;
        for name in &self.run_fields {
            if run.getattr(name.bind(run.py()))?.is_none() {
                nones += 1;
            }
        }
        Ok(nones == RUN_FIELDS.len() - 1)
    }
}

/// `schema_time(record)`: when the record's schema was seen (None without a schema).
fn schema_time<'py>(record: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if at!(record, "schema")?.is_none() {
        return Ok(record.py().None().into_bound(record.py()));
    }
    let given = at!(record, "schema_time")?;
    if given.is_none() {
        return at!(record, "event_time");
    }
    Ok(given)
}
