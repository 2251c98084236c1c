"""Prepare every lineage statement on the lineage connections when the server starts.

A connection prepares each statement shape the first time a graph needs it, and PostgreSQL
builds the shape's generic plan (LINEAGE_TUNING) on its first execution. On the 40k-event
benchmark database a graph on a fresh connection took ~25 ms more than the same graph on a
used one, and concurrent clients open one connection each: without this, the first requests
after every start, one per connection, paid it (benchmarks/README.md, twenty-first set).
Each shape runs once with empty arrays, which return no rows.
"""

import asyncio
from contextlib import AsyncExitStack
from typing import Any, cast

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from server.lineage import node_queries, queries
from server.lineage.model import NodeKind, TimeWindow
from server.lineage.queries import DOWN, PROCESS_COLUMN, UP
from server.lineage.service import io_parts
from server.lineage.sql import Statement, fetch

# The directions a level may run in: the frontier's, in the order the service keeps them.
_DIRECTIONS = ((DOWN,), (UP,), (DOWN, UP))
_PROCESSES = tuple(PROCESS_COLUMN)  # the process kinds: OPERATION, RUN, JOB
# The non-array parameters; every other one is an array of ids (empty here).
_WINDOW = TimeWindow()
_SCALARS: dict[str, Any] = {
    "since": _WINDOW.since,
    "until": _WINDOW.until,
    "row_limit": 1,
    "hops": 0,
}


def lineage_statements() -> list[Statement]:
    """Every statement shape a lineage graph may run, each once."""
    found: list[Statement] = []
    for directions in _DIRECTIONS:
        found += (queries.dataset_level_statement(directions, from_start=s) for s in (False, True))
        for process in _PROCESSES:
            parts = io_parts(NodeKind.DATASET, process, directions)
            # Aggregated in SQL, and (RUN, OPERATION) row by row, as list_io_level asks.
            shapes = (True, False) if PROCESS_COLUMN[process] in queries.ROW_BY_ROW else (True,)
            for grouped in shapes:
                found += (
                    queries.io_level_statement(parts, from_start=s, grouped=grouped)
                    for s in (False, True)
                )
                # A level from processes: the granularity's own, or the start nodes' kind.
                found += (
                    queries.io_level_statement(io_parts(kind, process, directions), grouped=grouped)
                    for kind in _PROCESSES
                )
    found += (queries.column_lineage_statement(PROCESS_COLUMN[p]) for p in _PROCESSES)
    found.append(queries.column_lineage_statement(None))
    found += node_queries.STATEMENTS
    return list(dict.fromkeys(found))


def empty_parameters(statement: Statement) -> dict[str, Any]:
    """Arguments under which `statement` reads nothing: no ids, the widest window."""
    return {name: _SCALARS.get(name, []) for name in statement.names}


async def prepare_statements(conn: asyncpg.Connection) -> None:
    for statement in lineage_statements():
        await fetch(conn, statement, **empty_parameters(statement))


async def warm_lineage_connections(engine: AsyncEngine, connections: int) -> None:
    """Open `connections` connections of the lineage engine, all held at once so that they
    are distinct ones (its pool keeps them), and prepare every lineage statement on each."""
    async with AsyncExitStack() as held:
        drivers = []
        for _ in range(connections):
            conn = await held.enter_async_context(engine.connect())
            raw = await conn.get_raw_connection()
            drivers.append(cast(asyncpg.Connection, raw.driver_connection))
        await asyncio.gather(*(prepare_statements(driver) for driver in drivers))
