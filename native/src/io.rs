//! Inputs and outputs of a RunEvent with their datasets, symlinks, schemas, statistics,
//! output kinds and column lineage: the twins of `consumer/extract/io.py`, the record
//! part of `datasets.py`, and `columns.py`. Names and schemas go through datasets.py's
//! own functions (`Extractor::dataset_key`, `Extractor::schema`).

use crate::facets::{count, items, key_part, lower, obj, strip, text_of, truthy, upper, Obj, R};
use crate::json::Json;
use crate::runs::{Event, Placement};
use crate::{int_value, Extractor, Key};
use pyo3::prelude::*;
use std::collections::HashMap;
use std::rc::Rc;

const MAX_FORMAT_LENGTH: usize = 100;
const APPEND: i64 = 8;
const DIRECT: i64 = 1;
const INDIRECT: i64 = 2;

/// `add_io`: the event's inputs and outputs, attached where the integration placed them.
pub fn add_io(x: &mut Extractor, py: Python<'_>, ev: &Event, at: &Placement) -> R<()> {
    let mut stored: HashMap<(&str, &str), Rc<Key>> = HashMap::new();
    let mut keyed: Vec<(bool, &Obj<'_>, Rc<Key>)> = Vec::new();
    for (output, datasets) in [(false, &ev.env.inputs), (true, &ev.env.outputs)] {
        for dataset in datasets {
            let key = add_dataset(x, py, dataset)?;
            stored.insert(
                (name_of(dataset, "namespace"), name_of(dataset, "name")),
                key.clone(),
            );
            keyed.push((output, dataset, key));
        }
    }
    for (output, dataset, key) in keyed {
        let record = io_record(x, py, ev, at, dataset, &key, output)?;
        x.out.ios.push(record);
        if output {
            add_column_lineage(x, py, ev, at, dataset, &key, &stored)?;
        }
    }
    Ok(())
}

/// A dataset's namespace or name: strings, as the envelope checked.
fn name_of<'a>(dataset: &'a Obj<'a>, key: &str) -> &'a str {
    dataset.get(key).and_then(Json::as_str).unwrap_or("")
}

fn io_record(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    at: &Placement,
    dataset: &Obj<'_>,
    key: &Key,
    output: bool,
) -> R<PyObject> {
    let (rows, size, files) = if output {
        output_stats(dataset)
    } else {
        input_stats(dataset)
    };
    let schema = schema_of(x, py, dataset)?;
    let types = if output {
        output_types(x, py, dataset, at.sql.as_deref())?
    } else {
        0
    };
    let args = vec![
        x.direction(py, output),
        at.operation.clone_ref(py),
        at.created_at.clone_ref(py),
        at.run.clone_ref(py),
        at.job.tuple.clone_ref(py),
        key.tuple.clone_ref(py),
        ev.time.clone_ref(py),
        schema.unwrap_or_else(|| py.None()),
        py.None(), // schema_time: set by merge
        int_value(py, rows),
        int_value(py, size),
        int_value(py, files),
        int_value(py, Some(types)),
    ];
    Ok(x.types.io.make(py, args)?)
}

/// `add_dataset`: record a dataset with its symlinks; the key its lineage is stored under
/// (a path with a TABLE symlink is stored as the table).
fn add_dataset(x: &mut Extractor, py: Python<'_>, dataset: &Obj<'_>) -> R<Rc<Key>> {
    let format = dataset_format(dataset)?;
    let (namespace, name) = (name_of(dataset, "namespace"), name_of(dataset, "name"));
    let key = x.dataset_key(py, namespace, name, format.as_deref())?;
    for ident in items(obj(Some(dataset), &["facets", "symlinks"]), "identifiers") {
        let kind = upper(text_of(Some(ident), "type")?.as_deref().unwrap_or("TABLE"))?;
        let linked = kind == "TABLE" || kind == "LOCATION";
        if !linked || (kind == "TABLE" && !x.is_path_family(&key.type_)) {
            continue;
        }
        let (namespace, name) = (
            text_of(Some(ident), "namespace")?,
            text_of(Some(ident), "name")?,
        );
        let (Some(namespace), Some(name)) = (namespace, name) else {
            continue;
        };
        let other = x.dataset_key(py, &namespace, &name, None)?;
        if other == key {
            continue;
        }
        if kind == "LOCATION" {
            link(x, py, &other, &key)?;
            continue;
        }
        link(x, py, &key, &other)?;
        return Ok(other);
    }
    Ok(key)
}

/// `_link`: path -METASTORE-> table and table -WAREHOUSE-> path.
fn link(x: &mut Extractor, py: Python<'_>, path: &Rc<Key>, table: &Rc<Key>) -> R<()> {
    let [there, back] = x.symlinks(py, path, table)?;
    x.out.symlinks.push(there);
    x.out.symlinks.push(back);
    Ok(())
}

/// `dataset_format`: the storage facet's file format, else its storage layer, lower-cased.
fn dataset_format(dataset: &Obj<'_>) -> R<Option<String>> {
    let storage = obj(Some(dataset), &["facets", "storage"]);
    for field in ["fileFormat", "storageLayer"] {
        let value = lower(strip(text_of(storage, field)?.as_deref().unwrap_or(""))?)?;
        if !value.is_empty() && value.len() <= MAX_FORMAT_LENGTH {
            return Ok(Some(value)); // ASCII: bytes are characters
        }
    }
    Ok(None)
}

/// `schema_of`: record the dataset's schema (once per distinct field list); its digest.
fn schema_of(x: &mut Extractor, py: Python<'_>, dataset: &Obj<'_>) -> R<Option<PyObject>> {
    let fields = items(obj(Some(dataset), &["facets", "schema"]), "fields");
    if fields.is_empty() {
        return Ok(None);
    }
    let (record, digest) = x.schema(py, &fields)?;
    x.out.schemas.push(record);
    Ok(Some(digest))
}

/// `input_stats`: (rows, bytes, files) from inputStatistics or the older dataQualityMetrics.
fn input_stats(dataset: &Obj<'_>) -> (Option<i64>, Option<i64>, Option<i64>) {
    let facets = obj(Some(dataset), &["inputFacets"]);
    let stats =
        truthy(obj(facets, &["inputStatistics"])).or_else(|| obj(facets, &["dataQualityMetrics"]));
    (
        count(stats, &["rowCount"]),
        count(stats, &["size", "bytes"]),
        count(stats, &["fileCount"]),
    )
}

fn output_stats(dataset: &Obj<'_>) -> (Option<i64>, Option<i64>, Option<i64>) {
    let stats = obj(Some(dataset), &["outputFacets", "outputStatistics"]);
    (
        count(stats, &["rowCount"]),
        count(stats, &["size", "bytes"]),
        count(stats, &["fileCount"]),
    )
}

/// `output_types`: from lifecycleStateChange, else the SQL statement's verb, else APPEND.
fn output_types(x: &mut Extractor, py: Python<'_>, dataset: &Obj<'_>, sql: Option<&str>) -> R<i64> {
    let facet = obj(Some(dataset), &["facets", "lifecycleStateChange"]);
    if let Some(change) = text_of(facet, "lifecycleStateChange")? {
        let change = upper(&change)?;
        if let Some(bits) = x.rules.lifecycle.get(&change) {
            return Ok(*bits);
        }
    }
    Ok(x.sql_output_type(py, sql)?
        .filter(|bits| *bits != 0)
        .unwrap_or(APPEND))
}

/// `add_column_lineage`: one record per source dataset of one output, its column edges
/// as one set. `stored` maps the event's own (namespace, name) pairs to their keys, so a
/// source path stored as its table is the table here too.
fn add_column_lineage(
    x: &mut Extractor,
    py: Python<'_>,
    ev: &Event,
    at: &Placement,
    dataset: &Obj<'_>,
    target: &Key,
    stored: &HashMap<(&str, &str), Rc<Key>>,
) -> R<()> {
    let facet = obj(Some(dataset), &["facets", "columnLineage"]);
    let mut edges: Vec<(&str, &Obj<'_>)> = Vec::new();
    if let Some(fields) = obj(facet, &["fields"]) {
        for (column, spec) in fields.iter() {
            for source in items(spec.as_object(), "inputFields") {
                edges.push((key_part(column)?, source));
            }
        }
    }
    for source in items(facet, "dataset") {
        edges.push(("", source)); // dataset-level indirect lineage: no target column
    }
    // (source key, members) in the order the sources first appear, as the Python dict.
    let mut sets: Vec<(Rc<Key>, Vec<Member>)> = Vec::new();
    for (column, source) in edges {
        let (namespace, name) = (
            text_of(Some(source), "namespace")?,
            text_of(Some(source), "name")?,
        );
        let (Some(namespace), Some(name)) = (namespace, name) else {
            continue;
        };
        let source_key = match stored.get(&(namespace.as_ref(), name.as_ref())) {
            Some(key) => key.clone(),
            None => x.dataset_key(py, &namespace, &name, None)?,
        };
        let field = text_of(Some(source), "field")?;
        let source_column = key_part(field.as_deref().unwrap_or(""))?.to_string();
        let member = (
            source_column,
            column.to_string(),
            transformation_types(source)?,
        );
        match sets.iter_mut().find(|(key, _)| **key == *source_key) {
            Some((_, members)) => members.push(member),
            None => sets.push((source_key, vec![member])),
        }
    }
    for (source_key, members) in sets {
        let (columns, columns_id) = x.column_set(py, canonical(members))?;
        let args = vec![
            at.operation.clone_ref(py),
            at.created_at.clone_ref(py),
            at.run.clone_ref(py),
            at.job.tuple.clone_ref(py),
            source_key.tuple.clone_ref(py),
            target.tuple.clone_ref(py),
            columns,
            columns_id,
            ev.time.clone_ref(py),
        ];
        x.out
            .column_lineage
            .push(x.types.column_lineage.make(py, args)?);
    }
    Ok(())
}

/// (source column, target column, DIRECT/INDIRECT bits): one column edge of a set.
pub type Member = (String, String, i64);

/// `column_set`: sorted by (source, target) column by code point (UTF-8 bytes sort alike),
/// an edge named twice once with its types OR-ed.
fn canonical(mut members: Vec<Member>) -> Vec<Member> {
    members.sort_unstable();
    let mut out: Vec<Member> = Vec::with_capacity(members.len());
    for member in members {
        match out.last_mut() {
            Some(last) if last.0 == member.0 && last.1 == member.1 => last.2 |= member.2,
            _ => out.push(member),
        }
    }
    out
}

/// `_types`: DIRECT/INDIRECT bits; a spec 1-0 facet (no transformations) counts as DIRECT.
fn transformation_types(source: &Obj<'_>) -> R<i64> {
    let mut bits = 0;
    for transformation in items(Some(source), "transformations") {
        let kind = upper(
            text_of(Some(transformation), "type")?
                .as_deref()
                .unwrap_or(""),
        )?;
        bits |= if kind == "INDIRECT" { INDIRECT } else { DIRECT };
    }
    Ok(if bits == 0 { DIRECT } else { bits })
}
