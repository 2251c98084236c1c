//! The lineage server's relation order (`server/lineage/assemble.py`, `_attach_relations`):
//! the I/O relations whose two ends are kept, sorted by (kind, source, target) as
//! `model.order_key` sorts nodes. A RUN graph's ~1,100-1,800 relations cost ~0.8 ms of Python
//! sort keys (two tuples and two UUID integers per relation).

use crate::render::UnsupportedValueError;
use pyo3::prelude::*;
use pyo3::types::{PyInt, PyList, PyString, PyTuple};
use std::cmp::Ordering;

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
    let node = node.downcast::<PyTuple>()?;
    let kind = kind(&node.get_item(0)?)?;
    let id = node.get_item(1)?;
    let id = if id.is_instance_of::<PyInt>() {
        Id::Int(id.extract().map_err(|_| declined("integer id"))?)
    } else if id.is_instance(uuid)? {
        Id::Uuid(id.getattr("int")?.extract()?)
    } else {
        return Err(declined("node id"));
    };
    Ok(NodeOrder { kind, id })
}

/// `sorted((r for r in relations if r.source in keep and r.target in keep), key=...)` of
/// `_attach_relations`: the same relation objects in the same order. `uuid` is uuid.UUID.
#[pyfunction]
pub fn order_relations<'py>(
    relations: &Bound<'py, PyList>,
    keep: &Bound<'py, PyAny>,
    uuid: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyList>> {
    let mut kept = Vec::with_capacity(relations.len());
    for relation in relations.iter() {
        let fields = relation.downcast::<PyTuple>()?;
        let (source, target) = (fields.get_item(1)?, fields.get_item(2)?);
        if !keep.contains(&source)? || !keep.contains(&target)? {
            continue;
        }
        let key = (
            kind(&fields.get_item(0)?)?,
            node_order(&source, uuid)?,
            node_order(&target, uuid)?,
        );
        kept.push((key, relation));
    }
    kept.sort_by(|a, b| a.0.cmp(&b.0)); // stable, as Python's sort
    PyList::new(
        relations.py(),
        kept.into_iter().map(|(_, relation)| relation),
    )
}
