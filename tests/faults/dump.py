"""Every table of a Threadline database as sorted rows, surrogate ids replaced by natural keys.

Two databases that hold the same lineage compare equal whatever ids their rows
got (ids depend on insertion order, which faults and concurrency change).
"""

from collections.abc import Callable, Mapping
from typing import Any

import asyncpg

from shared.models import Base
from tests.edges import MISMATCHES

Row = tuple[Any, ...]
Dump = dict[str, list[Row]]

# Columns holding a surrogate id of another table -> the table whose natural key replaces it.
REFERENCES = {
    "location_id": "location",
    "dataset_id": "dataset",
    "from_dataset_id": "dataset",
    "to_dataset_id": "dataset",
    "source_dataset_id": "dataset",
    "target_dataset_id": "dataset",
    "job_id": "job",
    "parent_job_id": "job",
    "started_by_user_id": "user_account",
    "schema_id": "schema",
}
SURROGATE = "id"
# Tables derived from the others (job_edge, dataset_edge): checked against their rows
# (tests/edges.py), not against a reference: their time bounds depend on the order rows
# changed in.
FACTS = [t for t in Base.metadata.sorted_tables if not t.info.get("derived")]
DIMENSIONS = ("location", "dataset", "job", "user_account", "schema", "address", "dataset_symlink")


def _keyers(raw: Mapping[str, list[asyncpg.Record]]) -> dict[str, Callable[[Any], Any]]:
    """id -> natural key functions for each dimension table (a job's key needs its location's)."""
    location = {r["id"]: (r["type"], r["name"]) for r in raw["location"]}
    dataset = {r["id"]: (*location[r["location_id"]], r["name"]) for r in raw["dataset"]}
    job = {r["id"]: (*location[r["location_id"]], r["name"]) for r in raw["job"]}
    user = {r["id"]: r["name"] for r in raw["user_account"]}
    schema = {r["id"]: str(r["digest"]) for r in raw["schema"]}
    maps: dict[str, Mapping[Any, Any]] = {
        "location": location,
        "dataset": dataset,
        "job": job,
        "user_account": user,
        "schema": schema,
    }
    return {name: _lookup(m) for name, m in maps.items()}


def _lookup(ids: Mapping[Any, Any]) -> Callable[[Any], Any]:
    # Time-series tables have no foreign keys: an id whose row is gone shows as dangling.
    return lambda i: None if i is None else ids.get(i, ("dangling id", i))


def _row(record: asyncpg.Record, table: str, keyers: dict[str, Callable[[Any], Any]]) -> Row:
    values: list[Any] = []
    for column, value in record.items():
        if table in DIMENSIONS and column == SURROGATE:
            continue
        target = REFERENCES.get(column)
        values.append(keyers[target](value) if target else value)
    return tuple(values)


def _sortable(row: Row) -> tuple[str, ...]:
    return tuple(repr(v) for v in row)


def _select_all(table: str) -> str:
    return f'SELECT * FROM "{table}"'  # noqa: S608 - a model table name, not input


async def dump(url: str) -> Dump:
    """Every model table of the database at `url` (postgresql://...) but the derived ones,
    rows sorted."""
    conn = await asyncpg.connect(url)
    try:
        raw = {t.name: await conn.fetch(_select_all(t.name)) for t in FACTS}
    finally:
        await conn.close()
    keyers = _keyers(raw)
    return {
        table: sorted((_row(r, table, keyers) for r in rows), key=_sortable)
        for table, rows in raw.items()
    }


def differences(expected: Dump, actual: Dump, *, limit: int = 5) -> dict[str, dict[str, Any]]:
    """Per table: how many rows are missing / extra / duplicated, with a few examples."""
    report: dict[str, dict[str, Any]] = {}
    for table in expected.keys() | actual.keys():
        want, got = expected.get(table, []), actual.get(table, [])
        if want == got:
            continue
        want_set, got_set = set(map(_sortable, want)), set(map(_sortable, got))
        report[table] = {
            "expected_rows": len(want),
            "actual_rows": len(got),
            "missing": len(want_set - got_set),
            "extra": len(got_set - want_set),
            "duplicated": len(got) - len(got_set),
            "missing_examples": sorted(want_set - got_set)[:limit],
            "extra_examples": sorted(got_set - want_set)[:limit],
        }
    return report


def row_counts(snapshot: Dump) -> dict[str, int]:
    return {table: len(rows) for table, rows in sorted(snapshot.items())}


async def derived_differences(url: str, *, limit: int = 5) -> dict[str, dict[str, Any]]:
    """The derived tables' rows that disagree with the rows they summarise (none, if kept)."""
    conn = await asyncpg.connect(url)
    try:
        wrong = {table: await conn.fetch(sql) for table, sql in MISMATCHES.items()}
    finally:
        await conn.close()
    return {
        table: {"mismatches": len(rows), "examples": [dict(r) for r in rows[:limit]]}
        for table, rows in wrong.items()
        if rows
    }
