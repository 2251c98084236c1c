"""All SQL of the lineage graph: one expansion query per level, then bulk node loaders.

Expansion statements are built once per shape from the ORM tables (identifiers come
from a closed set of columns, values are always bound parameters) and cached. Every
statement filters by frontier arrays (`= ANY(:ids)`), so one round trip serves a level
however wide it is.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    BigInteger,
    ColumnElement,
    CompoundSelect,
    FromClause,
    Integer,
    Row,
    Select,
    Table,
    TextClause,
    any_,
    bindparam,
    func,
    literal_column,
    null,
    select,
    text,
    type_coerce,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY, aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession

from server.lineage.model import NodeId, NodeKind, TimeWindow
from shared.models import ColumnLineage, Input, Output

INPUT: Table = Input.__table__  # type: ignore[assignment]  # declarative tables are Tables
OUTPUT: Table = Output.__table__  # type: ignore[assignment]
COLUMN_LINEAGE: Table = ColumnLineage.__table__  # type: ignore[assignment]
# The column of input/output/column_lineage naming each process level.
PROCESS_COLUMN = {
    NodeKind.OPERATION: "operation_id",
    NodeKind.RUN: "run_id",
    NodeKind.JOB: "job_id",
}
PROCESS_COLUMNS = frozenset(PROCESS_COLUMN.values())
DOWN, UP = "down", "up"  # also the names of the frontier parameters


@dataclass(frozen=True, slots=True)
class IOPart:
    """One side of a level: rows of `table` whose `where` column is in the frontier."""

    table: str  # "input" or "output"
    direction: str  # DOWN or UP: also the bound frontier parameter
    where: str  # dataset_id or a process column
    group: str  # the process column of the requested granularity


def _window(table: FromClause) -> list[ColumnElement[bool]]:
    return [
        table.c.created_at <= bindparam("until"),
        table.c.last_event_time >= bindparam("since"),
    ]


def _total(column: ColumnElement[Any]) -> ColumnElement[Any]:
    # sum(bigint) is numeric in PostgreSQL; counters fit bigint, and callers want ints.
    return func.sum(column).cast(BigInteger)


def _latest_schema(table: FromClause) -> ColumnElement[Any]:
    """The schema of the group's most recent row that has one."""
    ordered = aggregate_order_by(table.c.schema_id, table.c.last_event_time.desc())
    schemas = func.array_agg(ordered).filter(table.c.schema_id.isnot(None))
    return type_coerce(schemas, ARRAY(BigInteger))[1]


def _io_select(part: IOPart) -> Select[Any]:
    table = OUTPUT if part.table == "output" else INPUT
    if part.where not in PROCESS_COLUMNS | {"dataset_id"} or part.group not in PROCESS_COLUMNS:
        raise ValueError(f"not a lineage column: {part}")
    types = func.bit_or(table.c.types) if table is OUTPUT else null().cast(Integer)
    return (
        select(
            literal_column(f"'{part.direction}'").label("dir"),
            table.c.dataset_id,
            table.c[part.group].label("process_id"),
            _total(table.c.num_rows).label("num_rows"),
            _total(table.c.num_bytes).label("num_bytes"),
            _total(table.c.num_files).label("num_files"),
            types.label("types"),
            func.min(table.c.created_at).label("first_seen_at"),
            func.max(table.c.last_event_time).label("last_seen_at"),
            _latest_schema(table).label("schema_id"),
        )
        .where(table.c[part.where] == any_(bindparam(part.direction)), *_window(table))
        .group_by(table.c.dataset_id, table.c[part.group])
    )


def _level(parts: Sequence[Select[Any]]) -> CompoundSelect[Any]:
    # No ORDER BY: the service orders what it keeps; the LIMIT only bounds a runaway level.
    return union_all(*parts).limit(bindparam("row_limit"))


@cache
def io_level_statement(parts: tuple[IOPart, ...]) -> CompoundSelect[Any]:
    """Inputs/outputs of a frontier aggregated per (dataset, process); one part per direction."""
    return _level([_io_select(p) for p in parts])


# Dataset -> dataset through one operation. Inputs and outputs of an operation share its
# created_at (the consumer writes both from the operation), so the other side is a primary
# key lookup in one partition. OFFSET 0 keeps the LATERAL a per-row nested loop: joined
# freely, the planner may hash a whole table instead.
_DATASET_SIDES = {
    DOWN: ("i", "o", "input", "output"),  # frontier side alias, other side, their tables
    UP: ("o", "i", "output", "input"),
}
_DATASET_LEVEL = """
SELECT '{dir}' AS dir, i.dataset_id AS source_id, o.dataset_id AS target_id,
       sum(o.num_rows)::bigint AS num_rows, sum(o.num_bytes)::bigint AS num_bytes,
       sum(o.num_files)::bigint AS num_files, bit_or(o.types) AS types,
       min(o.created_at) AS first_seen_at, max(o.last_event_time) AS last_seen_at,
       (array_agg(i.schema_id ORDER BY i.last_event_time DESC)
            FILTER (WHERE i.schema_id IS NOT NULL))[1] AS source_schema_id,
       (array_agg(o.schema_id ORDER BY o.last_event_time DESC)
            FILTER (WHERE o.schema_id IS NOT NULL))[1] AS target_schema_id
FROM {near_table} AS {near}
CROSS JOIN LATERAL (
    SELECT * FROM {far_table} AS x
    WHERE x.operation_id = {near}.operation_id AND x.created_at = {near}.created_at
      AND x.last_event_time >= :since
    OFFSET 0
) AS {far}
WHERE {near}.dataset_id = ANY(:{dir}) AND {near}.created_at <= :until
  AND {near}.last_event_time >= :since
GROUP BY i.dataset_id, o.dataset_id
"""


@cache
def dataset_level_statement(directions: tuple[str, ...]) -> TextClause:
    """Dataset -> dataset edges through operations that read one and wrote the other."""
    parts = []
    for direction in directions:
        near, far, near_table, far_table = _DATASET_SIDES[direction]
        parts.append(
            _DATASET_LEVEL.format(
                dir=direction, near=near, far=far, near_table=near_table, far_table=far_table
            )
        )
    return text(" UNION ALL ".join(parts) + " LIMIT :row_limit")


# Lineage queries are many small index lookups: a parallel plan's worker start-up (tens of
# ms) and JIT compilation cost far more than they save, so both are off for the transaction.
# Generic plans: the statements are prepared once per connection and re-planning them for
# every call (many partitions, many indexes) costs more than the queries themselves.
_TUNE = text(
    "SELECT set_config('max_parallel_workers_per_gather', '0', true),"
    " set_config('jit', 'off', true),"
    " set_config('plan_cache_mode', 'force_generic_plan', true)"
)


async def tune_session(session: AsyncSession) -> None:
    await session.execute(_TUNE)


def _level_params(
    frontier: dict[str, list[NodeId]], window: TimeWindow, row_limit: int
) -> dict[str, Any]:
    return {**frontier, "since": window.since, "until": window.until, "row_limit": row_limit}


async def list_io_level(
    session: AsyncSession,
    parts: tuple[IOPart, ...],
    frontier: dict[str, list[NodeId]],
    window: TimeWindow,
    row_limit: int,
) -> Sequence[Row[Any]]:
    params = _level_params(frontier, window, row_limit)
    rows: Sequence[Row[Any]] = (await session.execute(io_level_statement(parts), params)).all()
    return rows


async def list_dataset_level(
    session: AsyncSession,
    frontier: dict[str, list[NodeId]],
    window: TimeWindow,
    row_limit: int,
) -> Sequence[Row[Any]]:
    stmt = dataset_level_statement(tuple(frontier))
    params = _level_params(frontier, window, row_limit)
    rows: Sequence[Row[Any]] = (await session.execute(stmt, params)).all()
    return rows


@cache
def column_lineage_statement(process_column: str, *, by_process: bool) -> Select[Any]:
    """Column lineage between graph datasets (through graph processes if `by_process`)."""
    if process_column not in PROCESS_COLUMNS:
        raise ValueError(f"not a process column: {process_column}")
    cl = COLUMN_LINEAGE
    processes = [cl.c[process_column] == any_(bindparam("processes"))] if by_process else []
    return (
        select(
            cl.c.source_dataset_id,
            cl.c.target_dataset_id,
            cl.c[process_column].label("process_id"),
            cl.c.source_column,
            cl.c.target_column,
            func.bit_or(cl.c.types).label("types"),
            func.max(cl.c.last_event_time).label("last_seen_at"),
        )
        .where(
            cl.c.source_dataset_id == any_(bindparam("datasets")),
            cl.c.target_dataset_id == any_(bindparam("datasets")),
            *processes,
            *_window(cl),
        )
        .group_by(cl.c.source_dataset_id, cl.c.target_dataset_id, cl.c[process_column])
        .group_by(cl.c.source_column, cl.c.target_column)
    )


async def list_column_lineage(
    session: AsyncSession,
    process_column: str,
    datasets: list[int],
    processes: list[NodeId] | None,
    window: TimeWindow,
) -> Sequence[Row[Any]]:
    """Column lineage rows; `processes=None` leaves the process unfiltered (DATASET graphs)."""
    stmt = column_lineage_statement(process_column, by_process=processes is not None)
    params: dict[str, Any] = {"datasets": datasets, "since": window.since, "until": window.until}
    if processes is not None:
        params["processes"] = processes
    rows: Sequence[Row[Any]] = (await session.execute(stmt, params)).all()
    return rows
