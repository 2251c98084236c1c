//! Jobs, runs, parents and operations of a RunEvent: the twin of `consumer/extract/runs.py`
//! (read that module's docstring for the mapping itself).

use crate::envelope::Envelope;
use crate::facets::{obj, text_of, truncate, uuid_at, R};
use crate::{int_value, text_value, Extractor, Key};
use pyo3::prelude::*;
use std::rc::Rc;

/// `MAX_NAME` of runs.py.
pub const MAX_NAME: usize = 2000;

/// A decoded event and the Python objects every record of it shares.
pub struct Event<'a> {
    pub env: Envelope<'a>,
    pub run: PyObject,
    pub time: PyObject,
}

/// `Placement`: where the event's inputs and outputs attach.
pub struct Placement {
    pub operation: PyObject,
    pub created_at: PyObject,
    pub run: PyObject,
    pub job: Rc<Key>,
    pub sql: Option<String>,
}

/// `Parent`: a run named by a parent (or root) facet, and its job.
pub struct Parent {
    pub id: u128,
    pub run: PyObject,
    pub job: Rc<Key>,
}

/// Run fields an integration sets (`**run_fields` / `**fields` in runs.py): a value
/// replaces the default only when it is there (`present`).
#[derive(Default)]
pub struct RunFields {
    pub user: Option<String>,
    pub start_reason: Option<String>,
    pub external_id: Option<String>,
    pub attempt: Option<i64>,
    pub running_log_url: Option<String>,
    pub persistent_log_url: Option<String>,
}

/// Operation fields an integration sets (`operation=` / `**fields`), as `RunFields`.
#[derive(Default)]
pub struct OperationFields {
    pub name: Option<String>,
    pub type_: Option<String>,
    pub position: Option<i64>,
    pub group: Option<String>,
    pub description: Option<String>,
}

const STARTING: [&str; 2] = ["START", "RUNNING"];
const ENDING: [&str; 3] = ["COMPLETE", "FAIL", "ABORT"];
const FAILING: [&str; 2] = ["FAIL", "ABORT"];

fn is(kind: &Option<String>, set: &[&str]) -> bool {
    kind.as_deref().is_some_and(|k| set.contains(&k))
}

/// `status_of(event)`: Status of the eventType (shared/enums.py values).
fn status(kind: &Option<String>) -> i64 {
    match kind.as_deref().unwrap_or("OTHER") {
        "START" | "RUNNING" => 1,
        "COMPLETE" => 2,
        "FAIL" => 3,
        "ABORT" => 4,
        _ => 0,
    }
}

/// `add_job`: record a job of the namespace's location; its key.
pub fn add_job(
    x: &mut Extractor,
    py: Python<'_>,
    namespace: &str,
    name: &str,
    job_type: &str,
    parent: Option<&Rc<Key>>,
) -> R<Rc<Key>> {
    let (location, key) = x.job(py, namespace, name)?;
    x.out.locations.push(location);
    typed_job(x, py, &key, job_type, parent)?;
    Ok(key)
}

/// `typed_job`: record (again) a job already keyed; a job is never its own parent.
pub fn typed_job(
    x: &mut Extractor,
    py: Python<'_>,
    key: &Rc<Key>,
    job_type: &str,
    parent: Option<&Rc<Key>>,
) -> R<()> {
    let parent = parent.filter(|p| Key::ne(p, key)); // by natural key, not address
    let record = x.job_record(py, key, job_type, parent)?;
    x.out.jobs.push(record);
    Ok(())
}

/// `parent_of`: the direct parent of the event's run (else its root), each recorded.
pub fn parent_of(x: &mut Extractor, py: Python<'_>, ev: &Event) -> R<Option<Parent>> {
    let facet = obj(ev.env.run_facets, &["parent"]);
    let direct = referenced_run(x, py, ev, facet)?;
    let root = referenced_run(x, py, ev, obj(facet, &["root"]))?;
    Ok(direct.or(root))
}

fn referenced_run(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    facet: Option<&crate::facets::Obj<'_>>,
) -> R<Option<Parent>> {
    let id = uuid_at(obj(facet, &["run"]), "runId")?;
    let job = obj(facet, &["job"]);
    let (namespace, name) = (text_of(job, "namespace")?, text_of(job, "name")?);
    let (Some(id), Some(namespace), Some(name)) = (id, namespace, name) else {
        return Ok(None);
    };
    if id == ev.env.run_id {
        return Ok(None);
    }
    let job = add_job(x, py, &namespace, &name, "UNKNOWN", None)?;
    let run = x.uuid(py, id)?;
    let record = bare_run(x, py, ev, id, &job, RunFields::default())?;
    x.out.runs.push(record);
    Ok(Some(Parent { id, run, job }))
}

/// `bare_run`: a run known only by reference, UNKNOWN status, no times of its own.
pub fn bare_run(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    id: u128,
    job: &Key,
    fields: RunFields,
) -> R<PyObject> {
    let record = RunRecord {
        status: 0,
        ..RunRecord::default()
    };
    run_record(x, py, ev, id, job, record, fields)
}

/// The fields of `RunRecord` past id, created_at, job and event_time.
#[derive(Default)]
struct RunRecord {
    status: i64,
    parent_run_id: Option<PyObject>,
    started: bool,
    ended: bool,
    ended_reason: Option<String>,
    root_run_id: Option<PyObject>,
}

fn run_record(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    id: u128,
    job: &Key,
    r: RunRecord,
    f: RunFields,
) -> R<PyObject> {
    let time = || ev.time.clone_ref(py);
    let args = vec![
        x.uuid(py, id)?,
        x.created_at(py, id, &ev.time)?,
        job.tuple.clone_ref(py),
        time(),
        int_value(py, Some(r.status)),
        r.parent_run_id.unwrap_or_else(|| py.None()),
        if r.started { time() } else { py.None() },
        if r.ended { time() } else { py.None() },
        text_value(py, f.user.as_deref()),
        text_value(py, f.start_reason.as_deref()),
        text_value(py, r.ended_reason.as_deref()),
        text_value(py, f.external_id.as_deref()),
        int_value(py, f.attempt),
        text_value(py, f.running_log_url.as_deref()),
        text_value(py, f.persistent_log_url.as_deref()),
        py.None(), // checkpoints: Flink only
        r.root_run_id.unwrap_or_else(|| py.None()),
        py.None(), // field_times: set by merge
    ];
    Ok(x.types.run.make(py, args)?)
}

/// `base_run`: the run the event describes.
fn base_run(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    job: &Key,
    parent: Option<&Parent>,
    fields: RunFields,
) -> R<PyObject> {
    let kind = &ev.env.event_type;
    let record = RunRecord {
        status: status(kind),
        parent_run_id: parent.map(|p| p.run.clone_ref(py)),
        started: is(kind, &STARTING),
        ended: is(kind, &ENDING),
        ended_reason: if is(kind, &FAILING) {
            error_message(ev)?
        } else {
            None
        },
        root_run_id: root_run_id(x, py, ev)?,
    };
    run_record(x, py, ev, ev.env.run_id, job, record, fields)
}

/// `_root_run_id`: the root run of the parent facet, unless it is the event's own run.
fn root_run_id(x: &mut Extractor, py: Python<'_>, ev: &Event) -> R<Option<PyObject>> {
    let root = uuid_at(obj(ev.env.run_facets, &["parent", "root", "run"]), "runId")?;
    match root {
        Some(id) if id != ev.env.run_id => Ok(Some(x.uuid(py, id)?)),
        _ => Ok(None),
    }
}

/// `error_message`: errorMessage (spec), else the Spark listener's `spark.exception`.
fn error_message(ev: &Event) -> R<Option<String>> {
    let facets = ev.env.run_facets;
    if let Some(message) = text_of(obj(facets, &["errorMessage"]), "message")? {
        return Ok(Some(message.into_owned()));
    }
    Ok(text_of(obj(facets, &["spark.exception"]), "message")?.map(|m| m.into_owned()))
}

/// `base_operation`: the operation the event describes; (record, created_at, sql).
fn base_operation(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    run: &PyObject,
    f: OperationFields,
) -> R<(PyObject, PyObject, Option<String>)> {
    let kind = &ev.env.event_type;
    let time = || ev.time.clone_ref(py);
    let id = ev.env.run_id;
    let created_at = x.created_at(py, id, &ev.time)?;
    let job_facets = ev.env.job_facets;
    let default_name = truncate(ev.env.job_name, MAX_NAME);
    let name = f
        .name
        .as_deref()
        .or((!default_name.is_empty()).then_some(default_name));
    let sql = text_of(obj(job_facets, &["sql"]), "query")?.map(|s| s.into_owned());
    let documentation = text_of(obj(job_facets, &["documentation"]), "description")?;
    let description = f.description.as_deref().or(documentation.as_deref());
    let ended_reason = if is(kind, &FAILING) {
        error_message(ev)?
    } else {
        None
    };
    let args = vec![
        x.uuid(py, id)?,
        created_at.clone_ref(py),
        run.clone_ref(py),
        time(),
        int_value(py, Some(status(kind))),
        text_value(py, name),
        text_value(py, f.type_.as_deref()),
        int_value(py, f.position),
        text_value(py, f.group.as_deref()),
        text_value(py, description),
        text_value(py, sql.as_deref()),
        text_value(py, ended_reason.as_deref()),
        if is(kind, &STARTING) {
            time()
        } else {
            py.None()
        },
        if is(kind, &ENDING) { time() } else { py.None() },
        py.None(), // field_times: set by merge
    ];
    let record = x.types.operation.make(py, args)?;
    Ok((record, created_at, sql))
}

/// `generic`: a run of the event's job with one operation (id = run id) holding its I/O;
/// `operation_row` false records no operation.
pub fn generic(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    job_type: &str,
    operation: OperationFields,
    operation_row: bool,
    fields: RunFields,
) -> R<Placement> {
    let parent = parent_of(x, py, ev)?;
    let (namespace, name) = (ev.env.job_namespace, ev.env.job_name);
    let parent_job = parent.as_ref().map(|p| &p.job);
    let job = add_job(x, py, namespace, name, job_type, parent_job)?;
    let run = base_run(x, py, ev, &job, parent.as_ref(), fields)?;
    x.out.runs.push(run);
    let (record, created_at, sql) = base_operation(x, py, ev, &ev.run, operation)?;
    if operation_row {
        x.out.operations.push(record);
    }
    Ok(Placement {
        operation: ev.run.clone_ref(py),
        created_at,
        run: ev.run.clone_ref(py),
        job,
        sql,
    })
}

/// `as_operation`: the event as an operation (id = its run id) of its parent's run.
pub fn as_operation(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    parent: &Parent,
    fields: OperationFields,
) -> R<Placement> {
    let (record, created_at, sql) = base_operation(x, py, ev, &parent.run, fields)?;
    x.out.operations.push(record);
    Ok(Placement {
        operation: ev.run.clone_ref(py),
        created_at,
        run: parent.run.clone_ref(py),
        job: parent.job.clone(),
        sql,
    })
}
