//! The lineage server's relations natively: a level's relations made (`add_relations`,
//! `server/lineage/levels.py`: ~1.2 µs per edge in Python, ~1,500 edges in a large RUN graph
//! from a job), and the graph's relations ordered (`order_relations`,
//! `server/lineage/assemble.py`: the I/O relations whose two ends are kept, sorted by (kind,
//! source, target) as `model.order_key` sorts nodes; ~0.7 ms of Python sort keys for ~1,100
//! relations).

use crate::render::{fields, uuid_bits, UnsupportedValueError};
use crate::uuids::checked_bits;
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PySet, PyString, PyTuple, PyType};
use std::cmp::Ordering;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// A node's order: its kind's text, then its id (an integer, or a UUID as its integer).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct NodeOrder {
    kind: u8,
    id: Id,
}

/// The kinds' texts (`NodeKind`, `RelationKind`) in Python's string order: a kind sorts as
/// its position here. Any other text is declined.
const KINDS: [&str; 6] = ["DATASET", "INPUT", "JOB", "OPERATION", "OUTPUT", "RUN"];

fn kind(value: &Bound<'_, PyAny>) -> PyResult<u8> {
    let text = value.downcast::<PyString>()?.to_str()?;
    match KINDS.iter().position(|k| *k == text) {
        Some(at) => Ok(at as u8),
        None => Err(declined("kind")),
    }
}

/// Ids compare within one kind, where they share a type (`model.NodeRef`).
#[derive(PartialEq, Eq)]
enum Id {
    Int(i64),
    Uuid(u128),
}

impl PartialOrd for Id {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Id {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Id::Int(a), Id::Int(b)) => a.cmp(b),
            (Id::Uuid(a), Id::Uuid(b)) => a.cmp(b),
            // Never within one kind; a stable, total order all the same.
            (Id::Int(_), Id::Uuid(_)) => Ordering::Less,
            (Id::Uuid(_), Id::Int(_)) => Ordering::Greater,
        }
    }
}

fn declined(what: &str) -> PyErr {
    UnsupportedValueError::new_err(what.to_owned())
}

fn node_order(node: &Bound<'_, PyAny>, uuid: &Bound<'_, PyAny>) -> PyResult<NodeOrder> {
    let node = fields(node.downcast::<PyTuple>()?, 2)?;
    let kind = kind(&node[0])?;
    let id = &node[1];
    let id = if let Some(bits) = checked_bits(id) {
        Id::Uuid(bits) // asyncpg's UUID, read in place
    } else if id.is_instance_of::<PyInt>() {
        Id::Int(id.extract().map_err(|_| declined("integer id"))?)
    } else if id.is_instance(uuid)? {
        Id::Uuid(uuid_bits(id, uuid)?)
    } else {
        return Err(declined("node id"));
    };
    Ok(NodeOrder { kind, id })
}

/// `assemble.ordered_relations`: the relations with neither end in `unloaded`, sorted by
/// (kind, source, target); the same relation objects in the same order. `uuid` is uuid.UUID.
#[pyfunction]
pub fn order_relations<'py>(
    relations: &Bound<'py, PyList>,
    unloaded: &Bound<'py, PyAny>,
    uuid: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let mut kept = Vec::with_capacity(relations.len());
    let check = unloaded.len()? > 0; // nearly always empty: no lookups then
    for relation in relations.iter() {
        let ends = fields(relation.downcast::<PyTuple>()?, 3)?;
        let (source, target) = (&ends[1], &ends[2]);
        if check && (unloaded.contains(source)? || unloaded.contains(target)?) {
            continue;
        }
        let key = (
            kind(&ends[0])?,
            node_order(source, uuid)?,
            node_order(target, uuid)?,
        );
        kept.push((key, relation));
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0)); // stable, as Python's sort
    PyList::new(
        relations.py(),
        kept.into_iter().map(|(_, relation)| relation),
    )
}

/// `Traversal.admit`'s new nodes (`server/lineage/traversal.py`): the refs not in `nodes`,
/// once each (the first of equal refs, as a set keeps it), sorted as `model.order_key`
/// sorts them; ~0.5 µs a ref in Python, thousands of refs in a large RUN graph. Refs whose
/// ids it does not order as Python does (past 64 bits, neither an integer nor a UUID, or
/// both within one kind) are sorted by Python: `sorted(set(candidates), key=key)`.
#[pyfunction]
pub fn fresh_refs<'py>(
    refs: &Bound<'py, PyAny>,
    nodes: &Bound<'py, PyDict>,
    uuid: &Bound<'py, PyAny>,
    key: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let py = refs.py();
    let mut candidates = Vec::new();
    for found in refs.try_iter()? {
        let found = found?;
        if !nodes.contains(&found)? {
            candidates.push(found);
        }
    }
    match ordered(&candidates, uuid) {
        Some(sorted) => PyList::new(py, sorted),
        None => {
            let unique = PySet::new(py, &candidates)?;
            let sorted = py.import("builtins")?.getattr("sorted")?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("key", key)?;
            Ok(sorted
                .call((unique,), Some(&kwargs))?
                .downcast_into::<PyList>()?)
        }
    }
}

/// The refs sorted by their order, the first of equal ones kept; None where an id has no
/// order here or one kind has ids of both types (Python would compare them as integers).
fn ordered<'a, 'py>(
    refs: &'a [Bound<'py, PyAny>],
    uuid: &Bound<'py, PyAny>,
) -> Option<Vec<&'a Bound<'py, PyAny>>> {
    let mut keyed = Vec::with_capacity(refs.len());
    for found in refs {
        keyed.push((node_order(found, uuid).ok()?, found));
    }
    keyed.sort_by(|a, b| a.0.cmp(&b.0)); // stable: equal refs stay in iteration order
    keyed.dedup_by(|later, earlier| later.0 == earlier.0);
    let mixed = keyed.windows(2).any(|pair| {
        let (a, b) = (&pair[0].0, &pair[1].0);
        a.kind == b.kind && matches!((&a.id, &b.id), (Id::Int(_), Id::Uuid(_)))
    });
    (!mixed).then(|| keyed.into_iter().map(|(_, found)| found).collect())
}

/// `Level.add_relations` (`server/lineage/levels.py`): for each edge (kind, source, target,
/// row) whose two ends are in `nodes` and whose (kind, source, target) is not yet in
/// `relations`, `relations[key] = relation(kind, source, target, *row[3:6], output types,
/// *row[7:9])`, the output types None for an `input` edge. `relation` is `IORelation`.
#[pyfunction]
pub fn add_relations<'py>(
    edges: &Bound<'py, PyList>,
    nodes: &Bound<'py, PyDict>,
    relations: &Bound<'py, PyDict>,
    relation: &Bound<'py, PyType>,
    input: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = edges.py();
    for edge in edges.iter() {
        let edge = fields(edge.downcast::<PyTuple>()?, 4)?;
        let (kind, source, target) = (&edge[0], &edge[1], &edge[2]);
        if !nodes.contains(source)? || !nodes.contains(target)? {
            continue;
        }
        let key = PyTuple::new(py, [kind, source, target])?;
        if relations.contains(&key)? {
            continue;
        }
        let row = &edge[3];
        let types = if kind.is(input) {
            py.None().into_bound(py)
        } else {
            item(row, 6)?
        };
        let values = [
            kind.clone(),
            source.clone(),
            target.clone(),
            item(row, 3)?,
            item(row, 4)?,
            item(row, 5)?,
            types,
            item(row, 7)?,
            item(row, 8)?,
        ];
        relations.set_item(key, tuple_of(relation, values)?)?;
    }
    Ok(())
}

/// `tuple.__new__(cls, values)` for a tuple subclass without fields of its own (a
/// NamedTuple), as tuple's own `__new__` makes one: the class's allocation, then the items.
fn tuple_of<'py, const N: usize>(
    cls: &Bound<'py, PyType>,
    values: [Bound<'py, PyAny>; N],
) -> PyResult<Bound<'py, PyAny>> {
    let py = cls.py();
    if !cls.is_subclass_of::<PyTuple>()? {
        return Err(PyTypeError::new_err("not a tuple class"));
    }
    let type_ptr = cls.as_type_ptr();
    // SAFETY: `cls` is a tuple subclass, so its tp_alloc makes a tuple-shaped object of N
    // NULL items; each is set once, with a reference the tuple then owns.
    unsafe {
        let alloc = (*type_ptr).tp_alloc.unwrap_or(ffi::PyType_GenericAlloc);
        let made = alloc(type_ptr, N as ffi::Py_ssize_t);
        if made.is_null() {
            return Err(PyErr::fetch(py));
        }
        for (i, value) in values.into_iter().enumerate() {
            ffi::PyTuple_SET_ITEM(made, i as ffi::Py_ssize_t, value.into_ptr());
        }
        Ok(Bound::from_owned_ptr(py, made))
    }
}

/// A level's containers: `Level.edges`, `.reached` and `.members` (defaultdicts of lists by
/// direction), `.schemas`.
type LevelParts<'py> = (
    Bound<'py, PyList>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyList>,
);

/// The objects a level's rows become: (NodeRef, NodeKind.DATASET, the process kind,
/// RelationKind.INPUT, RelationKind.OUTPUT).
type LevelRefs<'py> = (
    Bound<'py, PyType>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
    Bound<'py, PyAny>,
);

/// `levels.io_level`'s loop (`server/lineage/levels.py`, ~1 µs per row in Python, ~1,500
/// rows a level in a large RUN graph from a job): each row (direction, dataset id, process
/// id, ..., last_seen_at at 8, schema id at 9) becomes an edge, a reached node, a member
/// when `finer`, appended to `level`'s containers in the Python code's order, and each
/// dataset's latest schema among the rows, as the Python code keeps it. A direction other
/// than "down" and "up" is declined (Python's KeyError), and so are times that do not
/// compare (Python's TypeError): the caller then fills a fresh level in Python.
#[pyfunction]
pub fn fill_io_level<'py>(
    rows: &Bound<'py, PyAny>,
    level: LevelParts<'py>,
    from_datasets: bool,
    finer: bool,
    refs: LevelRefs<'py>,
) -> PyResult<()> {
    let py = rows.py();
    let (edges, reached, members, schemas) = level;
    let (node_ref, dataset_kind, process, input, output) = refs;
    // A level names few datasets many times (every run of a job writes the same ones).
    let datasets = PyDict::new(py);
    // The lists of reached[direction] and members[direction], "down" then "up", once made.
    let mut reached_lists: [Option<Bound<'py, PyAny>>; 2] = [None, None];
    let mut member_lists: [Option<Bound<'py, PyAny>>; 2] = [None, None];
    // Each dataset's latest (dataset id, seen, schema id) of the level's rows: later rows win
    // ties, as in Traversal.note_schemas, which takes these in place of one per row (a large
    // RUN level has thousands of rows and a few dozen datasets).
    let latest = PyDict::new(py);
    for row in rows.try_iter()? {
        let row = row?;
        let direction = item(&row, 0)?;
        // Python's KeyError for any other direction, text or not: declined, Python raises it.
        let side = match direction.downcast::<PyString>().map(|text| text.to_str()) {
            Ok(Ok("down")) => 0,
            Ok(Ok("up")) => 1,
            _ => return Err(declined("direction")),
        };
        let (dataset_id, process_id) = (item(&row, 1)?, item(&row, 2)?);
        let dataset = match datasets.get_item(&dataset_id)? {
            Some(found) => found,
            None => {
                let made = tuple_of(&node_ref, [dataset_kind.clone(), dataset_id.clone()])?;
                datasets.set_item(&dataset_id, &made)?;
                made
            }
        };
        let proc = tuple_of(&node_ref, [process.clone(), process_id])?;
        let schema_id = item(&row, 9)?;
        if !schema_id.is_none() {
            let seen = item(&row, 8)?;
            // Only each dataset's latest: the rows Traversal.note_schemas would keep.
            let newer = match latest.get_item(&dataset_id)? {
                // Times that do not compare never come from PostgreSQL (timestamptz).
                Some(kept) => match seen.ge(kept.downcast::<PyTuple>()?.get_item(1)?) {
                    Ok(newer) => newer,
                    Err(_) => return Err(declined("schema time")),
                },
                None => true,
            };
            if newer {
                let kept = PyTuple::new(py, [dataset_id.clone(), seen, schema_id])?;
                latest.set_item(dataset_id, kept)?;
            }
        }
        // Did the process read the dataset? Downstream from datasets, upstream from processes.
        let edge = if (side == 0) == from_datasets {
            [input.clone(), dataset.clone(), proc.clone(), row]
        } else {
            [output.clone(), proc.clone(), dataset.clone(), row]
        };
        edges.append(PyTuple::new(py, edge)?)?;
        let reached_list = list_of(&mut reached_lists[side], &reached, &direction)?;
        if from_datasets {
            reached_list.downcast::<PyList>()?.append(proc)?;
            continue;
        }
        reached_list.downcast::<PyList>()?.append(dataset)?;
        if finer {
            let member_list = list_of(&mut member_lists[side], &members, &direction)?;
            member_list.downcast::<PyList>()?.append(proc)?;
        }
    }
    for kept in latest.values() {
        schemas.append(kept)?;
    }
    Ok(())
}

/// `grouping.group_io_rows` (`server/lineage/grouping.py`): a RUN or OPERATION level's rows,
/// fetched one by one (thousands in a large graph), one per (direction, dataset, process) in
/// the order of each group's first row. A group of one row is that row; a larger one is
/// what `merged(rows)`, the Python function that defines the aggregate, makes of it: made
/// here (`merge_rows`), or by `merged` itself where a value is not one a level holds.
/// Directions other than "down" and "up", dataset ids that are not 64-bit integers, and two
/// processes of one direction and dataset with equal hashes are declined: the caller then
/// groups in Python.
#[pyfunction]
pub fn group_io_rows<'py>(
    rows: &Bound<'py, PyAny>,
    merged: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let py = rows.py();
    // (side, dataset id, the process's hash) -> its group's place in `groups`.
    let mut places: HashMap<(u8, i64, isize), usize> = HashMap::new();
    // Each group's first row, then its other rows (none, and no allocation, for most).
    let mut groups: Vec<(Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>)> = Vec::new();
    for row in rows.try_iter()? {
        let row = row?;
        let side = match item(&row, 0)?
            .downcast::<PyString>()
            .map(|text| text.to_str())
        {
            Ok(Ok("down")) => 0,
            Ok(Ok("up")) => 1,
            _ => return Err(declined("direction")),
        };
        let dataset: i64 = item(&row, 1)?
            .extract()
            .map_err(|_| declined("dataset id"))?;
        let process = item(&row, 2)?;
        match places.entry((side, dataset, process.hash()?)) {
            Entry::Occupied(place) => {
                let (first, more) = &mut groups[*place.get()];
                if !item(first, 2)?.eq(&process)? {
                    return Err(declined("process hash"));
                }
                more.push(row);
            }
            Entry::Vacant(place) => {
                place.insert(groups.len());
                groups.push((row, Vec::new()));
            }
        }
    }
    let found = PyList::empty(py);
    for (first, more) in groups {
        if more.is_empty() {
            found.append(first)?;
        } else {
            let group = PyList::new(py, [first])?;
            for row in more {
                group.append(row)?;
            }
            // Natively where every value is one the rows of a level hold; anything else
            // (or an error) is Python's `merged` to decide.
            match merge_rows(&group) {
                Ok(Some(row)) => found.append(row)?,
                _ => found.append(merged.call1((group,))?)?,
            }
        }
    }
    Ok(found)
}

/// `grouping.merged(group)` (`server/lineage/grouping.py`) for the rows of `group`: the
/// counters and output types summed / OR-ed over the rows that have them (None if none has),
/// the earliest creation and the latest event, and the schema of the latest row that has
/// one (equal times: the greater id), compared as Python compares them (the first of equals
/// kept). None where a counter or the types is not a 64-bit integer.
fn merge_rows<'py>(group: &Bound<'py, PyList>) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = group.py();
    let first = group.get_item(0)?;
    let mut sums: [Option<i128>; 3] = [None; 3];
    let mut types: Option<i64> = None;
    let mut earliest: Option<Bound<'py, PyAny>> = None;
    let mut latest: Option<Bound<'py, PyAny>> = None;
    let mut schema: Option<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = None;
    for row in group.iter() {
        for (sum, at) in sums.iter_mut().zip(3..6) {
            let value = item(&row, at)?;
            if value.is_none() {
                continue;
            }
            let Ok(value) = value.extract::<i64>() else {
                return Ok(None);
            };
            *sum = Some(sum.unwrap_or(0) + i128::from(value));
        }
        let bits = item(&row, 6)?;
        if !bits.is_none() {
            let Ok(bits) = bits.extract::<i64>() else {
                return Ok(None);
            };
            types = Some(types.unwrap_or(0) | bits);
        }
        let created = item(&row, 7)?;
        if earliest
            .as_ref()
            .map_or(Ok(true), |kept| created.lt(kept))?
        {
            earliest = Some(created);
        }
        let seen = item(&row, 8)?;
        let schema_id = item(&row, 9)?;
        if !schema_id.is_none() {
            // max((seen, schema_id)): the later time, then the greater id.
            let later = match &schema {
                None => true,
                Some((kept_seen, kept_id)) => {
                    if seen.eq(kept_seen)? {
                        schema_id.gt(kept_id)?
                    } else {
                        seen.gt(kept_seen)?
                    }
                }
            };
            if later {
                schema = Some((seen.clone(), schema_id));
            }
        }
        if latest.as_ref().map_or(Ok(true), |kept| seen.gt(kept))? {
            latest = Some(seen);
        }
    }
    let none = || py.None().into_bound(py);
    let int = |value: Option<i128>| -> PyResult<Bound<'py, PyAny>> {
        Ok(match value {
            Some(value) => value.into_pyobject(py)?.into_any(),
            None => none(),
        })
    };
    let row = [
        item(&first, 0)?,
        item(&first, 1)?,
        item(&first, 2)?,
        int(sums[0])?,
        int(sums[1])?,
        int(sums[2])?,
        int(types.map(i128::from))?,
        earliest.unwrap_or_else(none),
        latest.unwrap_or_else(none),
        schema.map_or_else(none, |(_, id)| id),
    ];
    Ok(Some(PyTuple::new(py, row)?))
}

/// `by_direction[direction]` (a defaultdict makes the list), looked up once per direction.
fn list_of<'a, 'py>(
    made: &'a mut Option<Bound<'py, PyAny>>,
    by_direction: &Bound<'py, PyAny>,
    direction: &Bound<'py, PyAny>,
) -> PyResult<&'a Bound<'py, PyAny>> {
    if made.is_none() {
        *made = Some(by_direction.get_item(direction)?);
    }
    Ok(made.as_ref().expect("set just above"))
}

/// `row[at]` through the sequence protocol (an asyncpg Record, or a tuple in tests).
fn item<'py>(row: &Bound<'py, PyAny>, at: ffi::Py_ssize_t) -> PyResult<Bound<'py, PyAny>> {
    // SAFETY: PySequence_GetItem returns a new reference, or NULL with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(row.py(), ffi::PySequence_GetItem(row.as_ptr(), at)) }
}

/// `assemble._parents` (`server/lineage/assemble.py`, ~0.4 µs a relation in Python, ~2,800
/// in a large RUN graph): a ParentRelation (parent, child) per job with a kept parent job,
/// per operation with a kept run, per run with a kept job and per run with a kept parent
/// run, in that order, both ends the refs of `keep` (an iterable of NodeRefs) for those
/// kinds and ids. `jobs` are JobNodes (`id`, `parent_job_id`); `operations` OperationNode
/// tuples (id at 0, run_id at 1); `runs` RunNode tuples (id at 0, job_id at 1,
/// parent_run_id at 2). A node missing from `keep` raises the KeyError Python raises.
#[pyfunction]
pub fn parent_relations<'py>(
    nodes: (Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>),
    keep: &Bound<'py, PyAny>,
    relation: &Bound<'py, PyType>,
) -> PyResult<Bound<'py, PyList>> {
    let py = relation.py();
    let (jobs, operations, runs) = nodes;
    // The kept refs by kind and id: the refs reused, one lookup per parent end.
    let (kept_jobs, kept_runs, kept_operations) =
        (PyDict::new(py), PyDict::new(py), PyDict::new(py));
    for found in keep.try_iter()? {
        let found = found?;
        let pair = found.downcast::<PyTuple>()?;
        let kind = pair.get_item(0)?;
        let by_id = match kind.downcast::<PyString>()?.to_str()? {
            "JOB" => &kept_jobs,
            "RUN" => &kept_runs,
            "OPERATION" => &kept_operations,
            "DATASET" => continue,
            _ => return Err(PyKeyError::new_err(kind.unbind())), // Python's, for no NodeKind
        };
        by_id.set_item(pair.get_item(1)?, &found)?;
    }
    let found = PyList::empty(py);
    let add = |parent: Bound<'py, PyAny>, child: Bound<'py, PyAny>| {
        found.append(tuple_of(relation, [parent, child])?)
    };
    for job in jobs.iter() {
        let parent_id = job.getattr(intern!(py, "parent_job_id"))?;
        if parent_id.is_none() {
            continue;
        }
        if let Some(parent) = kept_jobs.get_item(parent_id)? {
            add(
                parent,
                required(&kept_jobs, &job.getattr(intern!(py, "id"))?)?,
            )?;
        }
    }
    for operation in operations.iter() {
        let operation = operation.downcast::<PyTuple>()?;
        if let Some(parent) = kept_runs.get_item(operation.get_item(1)?)? {
            add(parent, required(&kept_operations, &operation.get_item(0)?)?)?;
        }
    }
    for run in runs.iter() {
        let run = run.downcast::<PyTuple>()?;
        let child = required(&kept_runs, &run.get_item(0)?)?;
        if let Some(parent) = kept_jobs.get_item(run.get_item(1)?)? {
            add(parent, child.clone())?;
        }
        let parent_id = run.get_item(2)?;
        if !parent_id.is_none() {
            if let Some(parent) = kept_runs.get_item(parent_id)? {
                add(parent, child)?;
            }
        }
    }
    Ok(found)
}

/// `by_id[id]`, the KeyError of a missing id as Python's.
fn required<'py>(
    by_id: &Bound<'py, PyDict>,
    id: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    by_id
        .get_item(id)?
        .ok_or_else(|| PyKeyError::new_err(id.clone().unbind()))
}
