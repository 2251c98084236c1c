//! Threadline's native decode + extract: one Kafka payload -> the `Extracted` records that
//! `consumer.decode` + `consumer.extract` make of it, or None ("decline").
//!
//! It reads the common case only: RunEvents whose envelope is plainly valid, from the
//! generic, Spark and Airflow paths. Anything else (another integration, a dataset or job
//! event, a reject, an odd spelling) is declined and the Python path handles it, so the
//! records are the Python path's in every case: `tests/unit/test_native_parity.py`
//! compares the two on the benchmark streams, the real-event corpus and mutations of it.
//! Names, schemas and SQL verbs go through the Python functions themselves (memoised on
//! both sides), so the naming rules have one implementation.
//!
//! `merge.rs` holds `Merger`, the combining rules of `consumer/merge.py` over the same
//! Python records; `rekey.rs` its `rekey`, that of `consumer/rekey.py`. `render.rs` holds the
//! lineage server's `Renderer` (a graph's JSON body), `graph.rs` its relations.

mod envelope;
mod facets;
mod graph;
mod integrations;
mod io;
mod json;
mod merge;
mod pyobjects;
mod rekey;
mod render;
mod runs;
mod times;
mod uuids;

use facets::{stop, Obj, Stop, R};
use pyo3::exceptions::PyKeyError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDateTime, PyDict, PyList, PyString, PyTuple, PyTzInfo};
pub use pyobjects::{int_value, text_value};
use pyobjects::{set_slot, to_python_object, Class};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Memo sizes: past these the memo is emptied (a stream's names come straight back).
const MEMO_ENTRIES: usize = 16_384;
const SCHEMA_MEMO_BYTES: usize = 4 << 20;
const COLUMN_SET_MEMO_BYTES: usize = 4 << 20;

/// A location as `job_location` / `dataset_location` give it, with its key parts.
pub struct Location {
    record: PyObject,
    key: PyObject, // (type, name)
    type_: String,
    name: String,
}

/// A natural key of a dataset or job: the Python tuple and its three parts.
pub struct Key {
    pub tuple: PyObject,
    pub location: PyObject, // (type, name), for a JobRecord
    pub type_: String,
    pub location_name: String,
    pub name: String,
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.type_ == other.type_
            && self.location_name == other.location_name
            && self.name == other.name
    }
}

struct DatasetHit {
    location: PyObject,
    record: PyObject,
    key: Rc<Key>,
}

/// The records of one event, by `Extracted` field.
#[derive(Default)]
pub struct Out {
    pub locations: Vec<PyObject>,
    pub datasets: Vec<PyObject>,
    pub symlinks: Vec<PyObject>,
    pub jobs: Vec<PyObject>,
    pub schemas: Vec<PyObject>,
    pub runs: Vec<PyObject>,
    pub operations: Vec<PyObject>,
    pub ios: Vec<PyObject>,
    pub column_lineage: Vec<PyObject>,
}

/// Python values the records hold, taken from the Python side at construction so both
/// paths put the very same objects (enum members, classes) into records.
struct Types {
    extracted: Class,
    symlink: Class,
    job: Class,
    run: Class,
    operation: Class,
    io: Class,
    column_lineage: Class,
    uuid: PyObject,
    safe_unknown: PyObject,
    utc: Py<PyTzInfo>,
    job_types: HashMap<String, PyObject>,
    directions: [PyObject; 2],
    metastore: PyObject,
    warehouse: PyObject,
    path_families: HashSet<String>,
}

/// The extractors' own tables, from the Python modules that define them (one source).
pub struct Rules {
    /// consumer.extract.PRODUCERS: (producer URL fragment, integration).
    pub producers: Vec<(String, String)>,
    /// consumer.extract.EXTRACTORS: integrations with a mapping of their own.
    pub integrations: HashSet<String>,
    /// consumer.extract.spark.OPERATION_TYPES.
    pub spark_operation_types: HashSet<String>,
    /// consumer.extract.airflow.ANONYMOUS_OWNERS.
    pub anonymous_owners: HashSet<String>,
    /// consumer.extract.datasets.LIFECYCLE, as OutputType bits.
    pub lifecycle: HashMap<String, i64>,
}

/// The Python functions that own a rule (naming, schema digests, SQL verbs, eventTimes).
struct Hooks {
    dataset: PyObject,
    job_location: PyObject,
    schema: PyObject,
    sql_output_type: PyObject,
    parse_time: PyObject,
    column_set_id: PyObject,
}

#[pyclass(unsendable, module = "threadline_native")]
pub struct Extractor {
    types: Types,
    hooks: Hooks,
    pub rules: Rules,
    /// The records of the event being read.
    out: Out,
    uuids: HashMap<u128, PyObject>,
    millis: HashMap<u64, PyObject>,
    job_locations: HashMap<String, Rc<Location>>,
    /// (namespace, name) -> the job's location record and key: a stream names the same
    /// jobs in event after event.
    jobs: HashMap<(String, String), (PyObject, Rc<Key>)>,
    /// (key, job type, parent key) addresses -> the keys (held, so that their addresses stay
    /// theirs) and the JobRecord: records are immutable and hold no time, so one object
    /// serves every event that names the job alike (and merge passes it over when met again).
    job_records: HashMap<(usize, usize, usize), JobHit>,
    datasets: HashMap<(String, String, Option<String>), Rc<DatasetHit>>,
    schemas: HashMap<Vec<u8>, (PyObject, PyObject)>,
    schema_bytes: usize,
    sql_types: HashMap<String, Option<i64>>,
    /// (path key, table key) addresses -> the keys (held) and their two symlink records.
    links: HashMap<(usize, usize), SymlinkPair>,
    /// Column sets met -> their tuple and id (`columns.column_set_id`, asked once per set):
    /// a stream names the same few sets in event after event.
    column_sets: HashMap<Vec<io::Member>, (PyObject, PyObject)>,
    /// The column names' bytes the memo holds: sets of wide tables are large.
    column_set_bytes: usize,
}

type SymlinkPair = (Rc<Key>, Rc<Key>, [PyObject; 2]);
type JobHit = (Rc<Key>, Option<Rc<Key>>, PyObject);

fn item(config: &Bound<'_, PyDict>, key: &str) -> PyResult<PyObject> {
    Ok(config
        .get_item(key)?
        .ok_or_else(|| PyKeyError::new_err(key.to_string()))?
        .unbind())
}

#[pymethods]
impl Extractor {
    /// `config`: the record classes, enum members and hooks (see consumer/native.py).
    #[new]
    fn new(py: Python<'_>, config: &Bound<'_, PyDict>) -> PyResult<Self> {
        let utc = item(config, "utc")?
            .bind(py)
            .downcast::<PyTzInfo>()?
            .clone()
            .unbind();
        let directions = item(config, "directions")?;
        let directions = directions.bind(py);
        let types = Types {
            extracted: Class::new(py, item(config, "Extracted")?)?,
            symlink: Class::new(py, item(config, "SymlinkRecord")?)?,
            job: Class::new(py, item(config, "JobRecord")?)?,
            run: Class::new(py, item(config, "RunRecord")?)?,
            operation: Class::new(py, item(config, "OperationRecord")?)?,
            io: Class::new(py, item(config, "IORecord")?)?,
            column_lineage: Class::new(py, item(config, "ColumnLineageRecord")?)?,
            uuid: item(config, "UUID")?,
            safe_unknown: item(config, "safe_unknown")?,
            utc,
            job_types: item(config, "job_types")?.extract(py)?,
            directions: [
                directions.get_item(0)?.unbind(),
                directions.get_item(1)?.unbind(),
            ],
            metastore: item(config, "metastore")?,
            warehouse: item(config, "warehouse")?,
            path_families: item(config, "path_families")?.extract(py)?,
        };
        let hooks = Hooks {
            dataset: item(config, "dataset")?,
            job_location: item(config, "job_location")?,
            schema: item(config, "schema")?,
            sql_output_type: item(config, "sql_output_type")?,
            parse_time: item(config, "parse_time")?,
            column_set_id: item(config, "column_set_id")?,
        };
        let rules = Rules {
            producers: item(config, "producers")?.extract(py)?,
            integrations: item(config, "integrations")?.extract(py)?,
            spark_operation_types: item(config, "spark_operation_types")?.extract(py)?,
            anonymous_owners: item(config, "anonymous_owners")?.extract(py)?,
            lifecycle: item(config, "lifecycle")?.extract(py)?,
        };
        Ok(Extractor {
            types,
            hooks,
            rules,
            out: Out::default(),
            uuids: HashMap::new(),
            millis: HashMap::new(),
            job_locations: HashMap::new(),
            jobs: HashMap::new(),
            job_records: HashMap::new(),
            datasets: HashMap::new(),
            schemas: HashMap::new(),
            schema_bytes: 0,
            sql_types: HashMap::new(),
            links: HashMap::new(),
            column_sets: HashMap::new(),
            column_set_bytes: 0,
        })
    }

    /// The records of `payload` (an `Extracted`), or None: the Python path decides.
    fn extract(&mut self, py: Python<'_>, payload: &[u8], max_bytes: usize) -> Option<PyObject> {
        self.guarded(py, payload, max_bytes).ok()
    }

    /// Why `extract` declines `payload`, or None if it does not (for tests and tools).
    fn decline_reason(
        &mut self,
        py: Python<'_>,
        payload: &[u8],
        max_bytes: usize,
    ) -> Option<String> {
        let Err(Stop { reason, error }) = self.guarded(py, payload, max_bytes) else {
            return None;
        };
        Some(match error {
            Some(error) => format!("{reason}: {error}"),
            None => reason.to_string(),
        })
    }
}

impl Extractor {
    /// `run`, with a panic (a bug here) declined like any other event this side does not
    /// read, so that the Python path still handles it and the consumer never stops on it.
    fn guarded(&mut self, py: Python<'_>, payload: &[u8], max_bytes: usize) -> R<PyObject> {
        let run = std::panic::AssertUnwindSafe(|| self.run(py, payload, max_bytes));
        std::panic::catch_unwind(run).unwrap_or_else(|_| Err(stop("panic")))
    }

    fn run(&mut self, py: Python<'_>, payload: &[u8], max_bytes: usize) -> R<PyObject> {
        if payload.len() > max_bytes {
            return Err(stop("too large"));
        }
        // PostgreSQL text cannot hold NUL: decode rejects an escaped one. A SIMD substring
        // search: the 6-byte window scan it replaced was ~1 µs of a benchmark event's ~15.
        if memchr::memmem::find(payload, b"\\u0000").is_some() {
            return Err(stop("NUL character"));
        }
        let raw = json::parse(payload).ok_or_else(|| stop("invalid JSON"))?;
        let raw = raw.as_object().ok_or_else(|| stop("not an object"))?;
        let env = envelope::read(raw)?;
        let event = runs::Event {
            run: self.uuid(py, env.run_id)?,
            time: self.event_time(py, env.time.as_ref(), env.time_text)?,
            env,
        };
        // Records accumulate in `self.out`; a declined event leaves some there, dropped here.
        self.out = Out::default();
        let placement = integrations::extract(self, py, &event)?;
        io::add_io(self, py, &event, &placement)?;
        let out = std::mem::take(&mut self.out);
        self.extracted(py, out)
    }

    fn extracted(&self, py: Python<'_>, out: Out) -> R<PyObject> {
        let lists = [
            out.locations,
            out.datasets,
            out.symlinks,
            out.jobs,
            out.schemas,
            out.runs,
            out.operations,
            out.ios,
            out.column_lineage,
            Vec::new(), // job_datasets: JobEvents only
            Vec::new(), // users: never filled by extract
        ];
        let mut args = Vec::with_capacity(lists.len());
        for list in lists {
            args.push(PyList::new(py, list)?.into_any().unbind());
        }
        Ok(self.types.extracted.make(py, args)?)
    }

    /// A `uuid.UUID` with this value, made as `UUID(hex)` makes it (its `int` and its
    /// `is_safe` slots) without the Python-level parsing; memoised.
    pub fn uuid(&mut self, py: Python<'_>, id: u128) -> R<PyObject> {
        if let Some(found) = self.uuids.get(&id) {
            return Ok(found.clone_ref(py));
        }
        let cls = self.types.uuid.bind(py);
        let made = cls.call_method1(intern!(py, "__new__"), (cls,))?;
        let Ok(value) = id.into_pyobject(py);
        set_slot(py, &made, intern!(py, "int"), value.as_any())?;
        set_slot(
            py,
            &made,
            intern!(py, "is_safe"),
            self.types.safe_unknown.bind(py),
        )?;
        if self.uuids.len() >= MEMO_ENTRIES {
            self.uuids.clear();
        }
        self.uuids.insert(id, made.clone().unbind());
        Ok(made.unbind())
    }

    /// The eventTime as a UTC datetime: made here for the common spelling, else read by
    /// `consumer.decode.parse_time` itself (other offsets, none, 7-9 fraction digits), whose
    /// DecodeError declines the event.
    fn event_time(&self, py: Python<'_>, time: Option<&envelope::Time>, text: &str) -> R<PyObject> {
        let Some(t) = time else {
            return Ok(self.hooks.parse_time.bind(py).call1((text,))?.unbind());
        };
        let utc = self.types.utc.bind(py);
        let made = PyDateTime::new(
            py,
            t.year,
            t.month,
            t.day,
            t.hour,
            t.minute,
            t.second,
            t.micro,
            Some(utc),
        )
        .map_err(|_| stop("eventTime out of range"))?;
        Ok(made.into_any().unbind())
    }

    /// `created_at(id, event_time)` of runs.py: a UUIDv7's own time, else the eventTime.
    pub fn created_at(&mut self, py: Python<'_>, id: u128, time: &PyObject) -> R<PyObject> {
        let Some(ms) = facets::v7_millis(id) else {
            return Ok(time.clone_ref(py));
        };
        if let Some(found) = self.millis.get(&ms) {
            return Ok(found.clone_ref(py));
        }
        // `shared.uuids.from_millis`: datetime.fromtimestamp(millis / 1000, tz=UTC), the same
        // call through the C API (the same float: millis < 2^53 and IEEE division), without
        // its Python frame and lru_cache, ~2% of the consumer once per distinct millisecond.
        let seconds = ms as f64 / 1000.0;
        let made = PyDateTime::from_timestamp(py, seconds, Some(self.types.utc.bind(py)))
            .map_err(|_| stop("UUIDv7 time out of range"))?
            .into_any()
            .unbind();
        if self.millis.len() >= MEMO_ENTRIES {
            self.millis.clear();
        }
        self.millis.insert(ms, made.clone_ref(py));
        Ok(made)
    }

    /// `job_location(namespace)` of datasets.py, memoised with its key parts.
    pub fn job_location(&mut self, py: Python<'_>, namespace: &str) -> R<Rc<Location>> {
        if let Some(found) = self.job_locations.get(namespace) {
            return Ok(found.clone());
        }
        let record = self.hooks.job_location.bind(py).call1((namespace,))?;
        let type_ = record.getattr(intern!(py, "type"))?;
        let name = record.getattr(intern!(py, "name"))?;
        let location = Rc::new(Location {
            type_: type_.extract()?,
            name: name.extract()?,
            key: PyTuple::new(py, [type_, name])?.into_any().unbind(),
            record: record.unbind(),
        });
        if self.job_locations.len() >= MEMO_ENTRIES {
            self.job_locations.clear();
        }
        self.job_locations
            .insert(namespace.to_string(), location.clone());
        Ok(location)
    }

    /// A job's location record and key from its namespace and name (`add_job` of runs.py),
    /// memoised. An invalid name (`key_part`) declines, and is not memoised.
    pub fn job(&mut self, py: Python<'_>, namespace: &str, name: &str) -> R<(PyObject, Rc<Key>)> {
        let memo_key = (namespace.to_string(), name.to_string());
        if let Some((record, key)) = self.jobs.get(&memo_key) {
            return Ok((record.clone_ref(py), key.clone()));
        }
        let location = self.job_location(py, namespace)?;
        let name = facets::key_part(name)?;
        let parts = [
            location.key.bind(py).get_item(0)?,
            location.key.bind(py).get_item(1)?,
            PyString::new(py, name).into_any(),
        ];
        let key = Rc::new(Key {
            tuple: PyTuple::new(py, parts)?.into_any().unbind(),
            location: location.key.clone_ref(py),
            type_: location.type_.clone(),
            location_name: location.name.clone(),
            name: name.to_string(),
        });
        if self.jobs.len() >= MEMO_ENTRIES {
            self.jobs.clear();
        }
        let record = location.record.clone_ref(py);
        self.jobs
            .insert(memo_key, (record.clone_ref(py), key.clone()));
        Ok((record, key))
    }

    /// `JobRecord(location, name, type, parent)` of the job `key`, memoised by the keys'
    /// and the type's addresses (the type is one of `job_types`' members).
    pub fn job_record(
        &mut self,
        py: Python<'_>,
        key: &Rc<Key>,
        job_type: &str,
        parent: Option<&Rc<Key>>,
    ) -> R<PyObject> {
        let kind = self.job_type(py, job_type)?;
        let memo_key = (
            Rc::as_ptr(key) as usize,
            kind.as_ptr() as usize,
            parent.map_or(0, |p| Rc::as_ptr(p) as usize),
        );
        if let Some((_, _, record)) = self.job_records.get(&memo_key) {
            return Ok(record.clone_ref(py));
        }
        let args = vec![
            key.location.clone_ref(py),
            key.tuple.bind(py).get_item(2)?.unbind(),
            kind,
            parent.map_or_else(|| py.None(), |p| p.tuple.clone_ref(py)),
        ];
        let record = self.types.job.make(py, args)?;
        if self.job_records.len() >= MEMO_ENTRIES {
            self.job_records.clear();
        }
        let held = (key.clone(), parent.cloned(), record.clone_ref(py));
        self.job_records.insert(memo_key, held);
        Ok(record)
    }

    /// `((source, target, types), ...)` of a canonical set and its id, memoised.
    pub fn column_set(
        &mut self,
        py: Python<'_>,
        members: Vec<io::Member>,
    ) -> R<(PyObject, PyObject)> {
        if let Some((tuple, id)) = self.column_sets.get(&members) {
            return Ok((tuple.clone_ref(py), id.clone_ref(py)));
        }
        let items = members
            .iter()
            .map(|(source, target, types)| (source.as_str(), target.as_str(), *types))
            .collect::<Vec<_>>();
        let tuple = PyTuple::new(py, items)?.into_any().unbind();
        let id = self.hooks.column_set_id.call1(py, (tuple.clone_ref(py),))?;
        let bytes: usize = members.iter().map(|(s, t, _)| s.len() + t.len() + 8).sum();
        if self.column_sets.len() >= MEMO_ENTRIES
            || self.column_set_bytes + bytes > COLUMN_SET_MEMO_BYTES
        {
            self.column_sets.clear();
            self.column_set_bytes = 0;
        }
        self.column_set_bytes += bytes;
        let held = (tuple.clone_ref(py), id.clone_ref(py));
        self.column_sets.insert(members, held);
        Ok((tuple, id))
    }

    /// `_dataset(namespace, name, format)` of datasets.py: (location, record, key),
    /// memoised. Its DecodeError (a name too long for an index key) declines.
    fn dataset(
        &mut self,
        py: Python<'_>,
        namespace: &str,
        name: &str,
        format: Option<&str>,
    ) -> R<Rc<DatasetHit>> {
        let memo_key = (
            namespace.to_string(),
            name.to_string(),
            format.map(str::to_string),
        );
        if let Some(found) = self.datasets.get(&memo_key) {
            return Ok(found.clone());
        }
        let found = self
            .hooks
            .dataset
            .bind(py)
            .call1((namespace, name, format))?;
        let key = found.get_item(2)?;
        let hit = Rc::new(DatasetHit {
            location: found.get_item(0)?.unbind(),
            record: found.get_item(1)?.unbind(),
            key: Rc::new(Key {
                type_: key.get_item(0)?.extract()?,
                location_name: key.get_item(1)?.extract()?,
                name: key.get_item(2)?.extract()?,
                location: py.None(), // a dataset key is never a job's location
                tuple: key.unbind(),
            }),
        });
        if self.datasets.len() >= MEMO_ENTRIES {
            self.datasets.clear();
        }
        self.datasets.insert(memo_key, hit.clone());
        Ok(hit)
    }

    /// `dataset_key(out, namespace, name, format)`: record the dataset and its location.
    pub fn dataset_key(
        &mut self,
        py: Python<'_>,
        namespace: &str,
        name: &str,
        format: Option<&str>,
    ) -> R<Rc<Key>> {
        let hit = self.dataset(py, namespace, name, format)?;
        self.out.locations.push(hit.location.clone_ref(py));
        self.out.datasets.push(hit.record.clone_ref(py));
        Ok(hit.key.clone())
    }

    pub fn is_path_family(&self, location_type: &str) -> bool {
        self.types.path_families.contains(location_type)
    }

    /// `_SCHEMAS.get(fields)` of datasets.py: (record, digest), memoised by the fields'
    /// JSON here too (a hit is the record the same list gives).
    pub fn schema(&mut self, py: Python<'_>, fields: &[&Obj<'_>]) -> R<(PyObject, PyObject)> {
        let mut memo_key = Vec::new();
        fields
            .iter()
            .for_each(|field| field.key_into(&mut memo_key));
        if let Some((record, digest)) = self.schemas.get(&memo_key) {
            return Ok((record.clone_ref(py), digest.clone_ref(py)));
        }
        let list = PyList::empty(py);
        for field in fields {
            list.append(to_python_object(py, field)?)?;
        }
        let record = self.hooks.schema.bind(py).call1((list,))?;
        let digest = record.getattr(intern!(py, "digest"))?.unbind();
        if self.schema_bytes + memo_key.len() > SCHEMA_MEMO_BYTES {
            self.schemas.clear();
            self.schema_bytes = 0;
        }
        self.schema_bytes += memo_key.len();
        let record = record.unbind();
        self.schemas
            .insert(memo_key, (record.clone_ref(py), digest.clone_ref(py)));
        Ok((record, digest))
    }

    /// `sql_output_type(sql)` of datasets.py as an int, memoised by the SQL text.
    pub fn sql_output_type(&mut self, py: Python<'_>, sql: Option<&str>) -> R<Option<i64>> {
        let Some(sql) = sql else { return Ok(None) };
        if let Some(found) = self.sql_types.get(sql) {
            return Ok(*found);
        }
        let found: Option<i64> = self
            .hooks
            .sql_output_type
            .bind(py)
            .call1((sql,))?
            .extract()?;
        if self.sql_types.len() >= MEMO_ENTRIES {
            self.sql_types.clear();
        }
        self.sql_types.insert(sql.to_string(), found);
        Ok(found)
    }

    pub fn job_type(&self, py: Python<'_>, name: &str) -> R<PyObject> {
        let found = self
            .types
            .job_types
            .get(name)
            .ok_or_else(|| stop("job type"))?;
        Ok(found.clone_ref(py))
    }

    pub fn direction(&self, py: Python<'_>, output: bool) -> PyObject {
        self.types.directions[usize::from(output)].clone_ref(py)
    }

    /// The two symlink records of a path and its table (path -METASTORE-> table, table
    /// -WAREHOUSE-> path), memoised by the two keys (held, so that their addresses stay
    /// theirs): a stream names the same tables in event after event, and merge then meets
    /// the very same records, which it keeps without comparing them.
    pub fn symlinks(
        &mut self,
        py: Python<'_>,
        path: &Rc<Key>,
        table: &Rc<Key>,
    ) -> R<[PyObject; 2]> {
        let memo_key = (Rc::as_ptr(path) as usize, Rc::as_ptr(table) as usize);
        if let Some((_, _, records)) = self.links.get(&memo_key) {
            return Ok([records[0].clone_ref(py), records[1].clone_ref(py)]);
        }
        let records = [
            self.symlink(py, path, table, false)?,
            self.symlink(py, table, path, true)?,
        ];
        if self.links.len() >= MEMO_ENTRIES {
            self.links.clear();
        }
        let kept = [records[0].clone_ref(py), records[1].clone_ref(py)];
        self.links
            .insert(memo_key, (path.clone(), table.clone(), kept));
        Ok(records)
    }

    fn symlink(&self, py: Python<'_>, source: &Key, target: &Key, warehouse: bool) -> R<PyObject> {
        let kind = if warehouse {
            &self.types.warehouse
        } else {
            &self.types.metastore
        };
        let args = vec![
            source.tuple.clone_ref(py),
            target.tuple.clone_ref(py),
            kind.clone_ref(py),
        ];
        Ok(self.types.symlink.make(py, args)?)
    }
}

#[pymodule]
fn threadline_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Extractor>()?;
    m.add_class::<merge::Merger>()?;
    m.add_class::<render::Renderer>()?;
    m.add_class::<uuids::UuidHashes>()?;
    m.add_class::<times::TimeDecoder>()?;
    m.add_function(wrap_pyfunction!(graph::order_relations, m)?)?;
    m.add_function(wrap_pyfunction!(graph::add_relations, m)?)?;
    m.add_function(wrap_pyfunction!(graph::fill_io_level, m)?)?;
    m.add_function(wrap_pyfunction!(graph::group_io_rows, m)?)?;
    m.add_function(wrap_pyfunction!(graph::fresh_refs, m)?)?;
    m.add_function(wrap_pyfunction!(graph::parent_relations, m)?)?;
    m.add(
        "UnsupportedValueError",
        m.py().get_type::<render::UnsupportedValueError>(),
    )?;
    Ok(())
}
