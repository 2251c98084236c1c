"""Column lineage from the columnLineage dataset facet (direct and indirect)."""

import hashlib
from collections.abc import Iterator, Mapping
from datetime import datetime
from uuid import UUID

from consumer.extract.datasets import dataset_key
from consumer.extract.facets import Json, items, key_part, obj, text
from consumer.records import ColumnLineageRecord, ColumnSet, DatasetKey, Extracted, JobKey
from shared.enums import ColumnLineageType

# Dataset-level indirect lineage (the facet's "dataset" list) has no target column.
WHOLE_DATASET = ""


# Plain ints: asyncpg would read an IntFlag (iterable since 3.11) as an array, and OR-ing
# IntFlags goes through enum's Python-level __or__ once per transformation of every edge.
_DIRECT = int(ColumnLineageType.DIRECT)
_INDIRECT = int(ColumnLineageType.INDIRECT)


def _types(source: Json) -> int:
    """DIRECT/INDIRECT bits; spec 1-0 facets (no transformations) count as DIRECT."""
    bits = 0
    for transformation in items(source, "transformations"):
        kind = (text(transformation, "type") or "").upper()
        bits |= _INDIRECT if kind == "INDIRECT" else _DIRECT
    return bits or _DIRECT


def _edges(facet: Json) -> Iterator[tuple[str, Json]]:
    """(target column, source field) pairs of the facet, dataset-level ones included."""
    fields = obj(facet, "fields")
    for column, spec in fields.items():
        for source in items(spec, "inputFields"):
            yield key_part(str(column), "column name"), source
    for source in items(facet, "dataset"):
        yield WHOLE_DATASET, source


def add_column_lineage(
    out: Extracted,
    dataset: Json,
    target: DatasetKey,
    where: tuple[UUID, datetime, UUID, JobKey, datetime],
    stored: Mapping[tuple[str, str], DatasetKey],
) -> None:
    """One record per source dataset of one output: its column edges as one set.

    `where` = (op id, created_at, run, job, time). `stored` maps the event's own
    (namespace, name) pairs to the keys they are stored under, so a source path that
    the event stores as its Hive table is the table here too. An edge the facet names
    twice (one source field in two transformations) is one member, its types OR-ed.
    """
    operation_id, created_at, run_id, job, event_time = where
    sets: dict[DatasetKey, dict[tuple[str, str], int]] = {}
    for column, source in _edges(obj(dataset, "facets", "columnLineage")):
        namespace, name = text(source, "namespace"), text(source, "name")
        if not namespace or not name:
            continue
        source_key = stored.get((namespace, name)) or dataset_key(out, namespace, name)
        members = sets.setdefault(source_key, {})
        pair = (key_part(text(source, "field") or WHOLE_DATASET, "column name"), column)
        members[pair] = members.get(pair, 0) | _types(source)
    for source_key, members in sets.items():
        columns = column_set(members)
        out.column_lineage.append(
            ColumnLineageRecord(
                operation_id=operation_id,
                created_at=created_at,
                run_id=run_id,
                job=job,
                source=source_key,
                target=target,
                columns=columns,
                columns_id=column_set_id(columns),
                event_time=event_time,
            )
        )


def column_set(members: Mapping[tuple[str, str], int]) -> ColumnSet:
    """The set's canonical form: members sorted by (source, target) column, by code point."""
    return tuple((source, target, types) for (source, target), types in sorted(members.items()))


def column_set_id(columns: ColumnSet) -> UUID:
    """The set's id: SHA-256 of `len:source len:target types;` per member, in the set's
    order, cut to 128 bits. Each name is written with its length, so no column name can
    pass for a separator; migration 0012 computes the same in SQL."""
    text = "".join(f"{len(s)}:{s} {len(t)}:{t} {types};" for s, t, types in columns)
    return UUID(bytes=hashlib.sha256(text.encode()).digest()[:16])
