"""Sorted dumps of every model table with surrogate ids replaced by natural keys.

Two databases that received the same events hold the same facts but may have
numbered their locations, datasets, jobs, users and schemas differently, so
each id column is replaced by its row's natural key (location type/name,
dataset and job by location and name, user by name, schema by digest) and
identity ids are left out. The column list comes from the ORM models, so a
column added to a table is compared without touching this file.
"""

from typing import Any

from sqlalchemy import Column, Table, text
from sqlalchemy.ext.asyncio import AsyncEngine

from shared.models import Base

Dump = dict[str, list[tuple[Any, ...]]]
# Summaries the database derives from other tables (migrations 0013, 0014): their time bounds
# depend on the order rows changed in, not only on the rows. tests/edges.py checks
# them against the rows instead.
FACTS = [t for t in Base.metadata.sorted_tables if not t.info.get("derived")]
DERIVED = [t for t in Base.metadata.sorted_tables if t.info.get("derived")]

_LOCATION = "(SELECT l.type || ' ' || l.name FROM location l WHERE l.id = {})"
_DATASET = (
    "(SELECT l.type || ' ' || l.name || ' ' || d.name FROM dataset d"
    " JOIN location l ON l.id = d.location_id WHERE d.id = {})"
)
_JOB = (
    "(SELECT l.type || ' ' || l.name || ' ' || j.name FROM job j"
    " JOIN location l ON l.id = j.location_id WHERE j.id = {})"
)
NATURAL = {
    "location_id": _LOCATION,
    "dataset_id": _DATASET,
    "from_dataset_id": _DATASET,
    "to_dataset_id": _DATASET,
    "source_dataset_id": _DATASET,
    "target_dataset_id": _DATASET,
    "job_id": _JOB,
    "parent_job_id": _JOB,
    "started_by_user_id": "(SELECT name FROM user_account WHERE id = {})",
    "schema_id": "(SELECT digest::text FROM schema WHERE id = {})",
}


def _expression(table: Table, column: Column[Any]) -> str | None:
    if column.identity is not None:
        return None  # a surrogate id: its row is identified by the other columns
    quoted = f'{table.name}."{column.name}"'
    if column.name in NATURAL:
        return NATURAL[column.name].format(quoted)
    return f"{quoted}::text" if column.name == "fields" else quoted


def table_query(table: Table) -> str:
    """SELECT of one table with id columns replaced by natural keys."""
    expressions = [e for c in table.columns if (e := _expression(table, c)) is not None]
    return f"SELECT {', '.join(expressions)} FROM {table.name}"  # noqa: S608 - model names


def column_index(table: str, column: str) -> int:
    """Where a column is in the dumped rows of a table."""
    model = Base.metadata.tables[table]
    names = [c.name for c in model.columns if _expression(model, c) is not None]
    return names.index(column)


async def dump(engine: AsyncEngine) -> Dump:
    """Every model table but the derived ones, rows as tuples, sorted (NULLs and mixed types
    compare as text)."""
    result: Dump = {}
    async with engine.begin() as conn:
        # The id subqueries over dozens of partitions cost enough for the planner to JIT-compile
        # them: ~300 ms per table, for a few rows.
        await conn.execute(text("SET LOCAL jit = off"))
        for table in FACTS:
            rows = (await conn.execute(text(table_query(table)))).all()
            result[table.name] = sorted((_hashable(r) for r in rows), key=repr)
    return result


def _hashable(row: Any) -> tuple[Any, ...]:
    """The row as a tuple, arrays (field_times) as tuples too, so rows can go in sets."""
    return tuple(tuple(v) if isinstance(v, list) else v for v in row)


async def empty(engine: AsyncEngine) -> None:
    """Delete every row; much faster than TRUNCATE of dozens of partitions for small tables."""
    async with engine.begin() as conn:
        # The derived tables last: deleting rows of the others marks their summaries.
        for table in [*reversed(FACTS), *DERIVED]:
            await conn.execute(text(f"DELETE FROM {table.name}"))  # noqa: S608 - model names


def differences(a: Dump, b: Dump, limit: int = 5) -> list[str]:
    """Human-readable differences between two dumps, for assertion messages."""
    lines = []
    for name in sorted(a.keys() | b.keys()):
        only_a = sorted(set(a.get(name, [])) - set(b.get(name, [])), key=repr)
        only_b = sorted(set(b.get(name, [])) - set(a.get(name, [])), key=repr)
        lines += [f"{name} only in first: {row}" for row in only_a[:limit]]
        lines += [f"{name} only in second: {row}" for row in only_b[:limit]]
        if len(a.get(name, [])) != len(b.get(name, [])):
            lines.append(f"{name}: {len(a.get(name, []))} rows vs {len(b.get(name, []))}")
    return lines
