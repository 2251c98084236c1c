//! `consumer.rekey.rekey` over the same Python records: when alias resolution shows that two
//! location keys of a merged batch are one location, every record naming a moved key is
//! rebuilt with the canonical one and each kind that changed is merged again (by the same
//! `by_key` as `Merger::merge`). Keys are looked up in a Python dict, so equality is
//! Python's; each distinct key object is looked up once. In Python this was ~4-5 CPU-µs
//! per benchmark event, inside the batch's write transaction (benchmarks/README.md).

use crate::merge::{Merger, RULES};
use crate::Class;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::collections::HashMap;

/// How a record field names a location (the movers of `_Rekey`).
#[derive(Clone, Copy)]
enum Names {
    /// A location key: replaced by `moved[value]`.
    Location,
    /// A dataset or job key, (location type, location name, name).
    Key,
    /// A key, or None.
    OptionalKey,
}

/// Per `Extracted` field, the record fields that name a location. Location records are
/// keyed by their own type and name (`Moves::location_record`).
const MOVERS: [(&str, &[(&str, Names)]); 7] = [
    ("datasets", &[("location", Names::Location)]),
    (
        "symlinks",
        &[("source", Names::Key), ("target", Names::Key)],
    ),
    (
        "jobs",
        &[
            ("location", Names::Location),
            ("parent", Names::OptionalKey),
        ],
    ),
    ("runs", &[("job", Names::Key)]),
    ("ios", &[("job", Names::Key), ("dataset", Names::Key)]),
    (
        "column_lineage",
        &[
            ("job", Names::Key),
            ("source", Names::Key),
            ("target", Names::Key),
        ],
    ),
    (
        "job_datasets",
        &[("job", Names::Key), ("dataset", Names::Key)],
    ),
];

struct Moves<'py> {
    moved: Bound<'py, PyDict>,
    /// A key object (by address: the batch holds it alive meanwhile) -> its new key, or
    /// None when its location did not move.
    keys: HashMap<usize, Option<PyObject>>,
}

impl<'py> Moves<'py> {
    /// `_Rekey.key`: (to type, to name, name) if the key's location moved, else None.
    fn key(&mut self, key: &Bound<'py, PyAny>) -> PyResult<Option<PyObject>> {
        let py = key.py();
        let address = key.as_ptr() as usize;
        if let Some(found) = self.keys.get(&address) {
            return Ok(found.as_ref().map(|k| k.clone_ref(py)));
        }
        let location = PyTuple::new(py, [key.get_item(0)?, key.get_item(1)?])?;
        let moved = match self.moved.get_item(location)? {
            None => None,
            Some(to) => Some(
                PyTuple::new(py, [to.get_item(0)?, to.get_item(1)?, key.get_item(2)?])?
                    .into_any()
                    .unbind(),
            ),
        };
        let memo = moved.as_ref().map(|k| k.clone_ref(py));
        self.keys.insert(address, memo);
        Ok(moved)
    }

    /// The new value of a field that names a location, None if it stays.
    fn field(&mut self, value: &Bound<'py, PyAny>, names: Names) -> PyResult<Option<PyObject>> {
        match names {
            Names::Location => Ok(self.moved.get_item(value)?.map(Bound::unbind)),
            Names::OptionalKey if value.is_none() => Ok(None),
            Names::Key | Names::OptionalKey => self.key(value),
        }
    }

    /// `_Rekey.location`: the record with its own (type, name) moved, or None.
    fn location_record(
        &self,
        cls: &Class,
        record: &Bound<'py, PyAny>,
    ) -> PyResult<Option<PyObject>> {
        let py = record.py();
        let key = record.getattr(pyo3::intern!(py, "key"))?;
        let Some(to) = self.moved.get_item(key)? else {
            return Ok(None);
        };
        let (kind, name) = (to.get_item(0)?.unbind(), to.get_item(1)?.unbind());
        let changes = [("type", kind), ("name", name)];
        Ok(Some(rebuilt(cls, record, &changes)?))
    }
}

/// `replace(record, **changes)`: a new record of `cls`, every other field the same object.
fn rebuilt(
    cls: &Class,
    record: &Bound<'_, PyAny>,
    changes: &[(&str, PyObject)],
) -> PyResult<PyObject> {
    let py = record.py();
    let mut values = Vec::with_capacity(cls.fields().len());
    for field in cls.fields() {
        let field = field.bind(py);
        let name = field.to_str()?;
        match changes.iter().find(|(changed, _)| *changed == name) {
            Some((_, value)) => values.push(value.clone_ref(py)),
            None => values.push(record.getattr(field)?.unbind()),
        }
    }
    cls.make(py, values)
}

/// `rekey(batch, canon)` of rekey.py: the batch itself when no key moved.
pub fn rekey(
    m: &Merger,
    py: Python<'_>,
    batch: &Bound<'_, PyAny>,
    canon: &Bound<'_, PyDict>,
) -> PyResult<PyObject> {
    let moved = PyDict::new(py);
    for (from, to) in canon.iter() {
        if !from.eq(&to)? {
            moved.set_item(from, to)?;
        }
    }
    if moved.is_empty() {
        return Ok(batch.clone().unbind());
    }
    let mut moves = Moves {
        moved,
        keys: HashMap::new(),
    };
    let mut values = Vec::with_capacity(m.extracted.fields().len());
    for field in m.extracted.fields() {
        let field = field.bind(py);
        let records = batch.getattr(field)?;
        let name = field.to_str()?;
        let (list, changed) = changed_kind(m, &mut moves, name, &records)?;
        values.push(if changed.is_empty() {
            records.unbind()
        } else {
            let rule = RULES
                .iter()
                .position(|(kind, _, _)| *kind == name)
                .expect("every moved kind has a merge rule");
            // Past a quarter rebuilt, keying and sorting them all costs less than placing
            // each rebuilt record by binary search.
            if changed.len() * 4 > list.len() {
                m.by_key(py, rule, &[list.into_any()])?
            } else {
                remerge(m, py, rule, &list, &changed)?
            }
        });
    }
    m.extracted.make(py, values)
}

/// The records of kind `name` with moved keys replaced, and the positions of those that
/// changed (none: the list is not needed).
fn changed_kind<'py>(
    m: &Merger,
    moves: &mut Moves<'py>,
    name: &str,
    records: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Vec<usize>)> {
    let py = records.py();
    let out = PyList::empty(py);
    let mut changed = Vec::new();
    if name == "locations" {
        for (i, record) in records.try_iter()?.enumerate() {
            let record = record?;
            match moves.location_record(&m.location, &record)? {
                Some(new) => {
                    changed.push(i);
                    out.append(new)?;
                }
                None => out.append(record)?,
            }
        }
        return Ok((out, changed));
    }
    let Some((_, fields)) = MOVERS.iter().find(|(kind, _)| *kind == name) else {
        return Ok((out, changed));
    };
    let cls = match name {
        "datasets" => &m.dataset,
        "symlinks" => &m.symlink,
        "jobs" => &m.job,
        "runs" => &m.run,
        "ios" => &m.io,
        "column_lineage" => &m.column_lineage,
        _ => &m.job_dataset,
    };
    let names: Vec<Bound<'py, PyString>> = fields
        .iter()
        .map(|(f, _)| PyString::intern(py, f))
        .collect();
    for (i, record) in records.try_iter()?.enumerate() {
        let record = record?;
        let mut changes: Vec<(&str, PyObject)> = Vec::new();
        for ((field, names_of), field_name) in fields.iter().zip(&names) {
            let value = record.getattr(field_name)?;
            if let Some(new) = moves.field(&value, *names_of)? {
                changes.push((field, new));
            }
        }
        if changes.is_empty() {
            out.append(record)?;
        } else {
            changed.push(i);
            out.append(rebuilt(cls, &record, &changes)?)?;
        }
    }
    Ok((out, changed))
}

/// `by_key(records, key, combine)` of RULES[rule] for a kind that was merged (its keys
/// distinct and sorted) before the records at `changed` were rebuilt: the others keep their
/// keys and order, so only the rebuilt ones are keyed, combined with the records of their
/// new keys (in list order, as `by_key` meets them) and put in their sorted places. A
/// column-lineage list of thousands re-keys a few dozen records.
fn remerge(
    m: &Merger,
    py: Python<'_>,
    rule: usize,
    records: &Bound<'_, PyList>,
    changed: &[usize],
) -> PyResult<PyObject> {
    let key_of = m.keys[rule].bind(py);
    let combine = RULES[rule].1;
    let mut is_changed = vec![false; records.len()];
    changed.iter().for_each(|&i| is_changed[i] = true);
    let kept: Vec<usize> = (0..records.len()).filter(|&i| !is_changed[i]).collect();
    let mut kept_keys: HashMap<usize, PyObject> = HashMap::new();
    // Per new key, in order of first appearance: its place among `kept` (the first kept
    // record with a greater key), the kept record of the same key, and the rebuilt records.
    let groups = PyDict::new(py);
    let mut members: Vec<(usize, Option<usize>, Vec<usize>)> = Vec::new();
    for &i in changed {
        let key = key_of.call1((records.get_item(i)?,))?;
        if let Some(group) = groups.get_item(&key)? {
            let group: usize = group.extract()?;
            members[group].2.push(i);
            continue;
        }
        let (mut lo, mut hi) = (0, kept.len());
        let mut met = None;
        while lo < hi {
            let mid = (lo + hi) / 2;
            let at = kept[mid];
            let probe = match kept_keys.get(&at) {
                Some(found) => found.bind(py).clone(),
                None => {
                    let made = key_of.call1((records.get_item(at)?,))?;
                    kept_keys.insert(at, made.clone().unbind());
                    made
                }
            };
            if probe.eq(&key)? {
                met = Some(at);
                lo = mid;
                break;
            }
            if probe.lt(&key)? {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        groups.set_item(&key, members.len())?;
        members.push((lo, met, vec![i]));
    }
    // Each group's record: its records combined in list order.
    let mut folded: Vec<PyObject> = Vec::with_capacity(members.len());
    let mut meets: HashMap<usize, usize> = HashMap::new();
    for (group, (_, met, rebuilt)) in members.iter().enumerate() {
        let mut order = rebuilt.clone();
        if let Some(k) = met {
            order.push(*k);
            meets.insert(*k, group);
        }
        order.sort_unstable();
        let mut record = records.get_item(order[0])?;
        for &i in &order[1..] {
            record = combine(m, py, &record, &records.get_item(i)?)?.into_bound(py);
        }
        folded.push(record.unbind());
    }
    // Groups that meet no kept record go before the kept record at their place, by key.
    let placed = PyList::empty(py);
    for (group, (place, met, _)) in members.iter().enumerate() {
        if met.is_none() {
            let key = key_of.call1((folded[group].bind(py),))?;
            placed.append((*place, key, group))?;
        }
    }
    placed.sort()?;
    let mut placed_at = Vec::with_capacity(placed.len());
    for entry in placed.iter() {
        placed_at.push((
            entry.get_item(0)?.extract::<usize>()?,
            entry.get_item(2)?.extract::<usize>()?,
        ));
    }
    let out = PyList::empty(py);
    let mut next = placed_at.iter().peekable();
    for place in 0..=kept.len() {
        while let Some(&(_, group)) = next.next_if(|(at, _)| *at == place) {
            out.append(folded[group].bind(py))?;
        }
        let Some(&k) = kept.get(place) else { break };
        match meets.get(&k) {
            Some(&group) => out.append(folded[group].bind(py))?,
            None => out.append(records.get_item(k)?)?,
        }
    }
    Ok(out.into_any().unbind())
}
