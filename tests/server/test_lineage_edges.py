"""Lineage at JOB and DATASET granularity reads the summaries of `job_edge` and
`dataset_edge` where they cover the asked window, and the input and output rows elsewhere:
the graphs are the same either way."""

from datetime import timedelta

import asyncpg
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from server.lineage import service
from server.lineage.model import Direction, Granularity, LineageRequest, NodeKind, TimeWindow
from server.lineage.render import render_json
from server.lineage.sql import Connection
from tests.edges import edge_mismatches
from tests.server.lineage_conftest import LineageWorld, conn, lineage_world
from tests.server.lineage_events import T0

pytestmark = pytest.mark.db
__all__ = ["conn", "lineage_world"]  # fixtures used by name

DAY = timedelta(days=1)
WINDOWS = {
    "all history": TimeWindow(),
    "since a day and a half": TimeWindow(since=T0 + 1.5 * DAY),
    "until a day and a half": TimeWindow(until=T0 + 1.5 * DAY),
    "two hours": TimeWindow(since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=3)),
    "after everything": TimeWindow(since=T0 + 30 * DAY),
}


class _RollbackError(Exception):
    """Leaves the transaction that marked every summary stale."""


async def _graph(
    conn: Connection, granularity: Granularity, kind: NodeKind, start: int, window: TimeWindow
) -> bytes:
    request = LineageRequest(
        start_kind=kind,
        start_ids=(start,),
        direction=Direction.BOTH,
        depth=3,
        granularity=granularity,
        window=window,
        include_column_lineage=False,
        max_nodes=1000,
    )
    return render_json(await service.get_lineage(conn, request))


async def _from_rows(
    conn: Connection, granularity: Granularity, kind: NodeKind, start: int, window: TimeWindow
) -> bytes:
    """The graph with no summary usable (all stale), in a transaction rolled back after."""
    assert isinstance(conn, asyncpg.Connection)
    try:
        async with conn.transaction():
            await conn.execute("SET TRANSACTION READ WRITE")  # the lineage tuning's default: off
            await conn.execute("UPDATE job_edge SET stale = true")
            await conn.execute("UPDATE dataset_edge SET stale = true")
            graph = await _graph(conn, granularity, kind, start, window)
            raise _RollbackError
    except _RollbackError:
        return graph


async def test_the_scenarios_summaries_equal_their_rows(
    engine: AsyncEngine, lineage_world: LineageWorld
) -> None:
    async with engine.connect() as db:
        assert await edge_mismatches(db) == {}


@pytest.mark.parametrize("granularity", [Granularity.JOB, Granularity.DATASET])
@pytest.mark.parametrize("name", WINDOWS)
async def test_graphs_are_the_same_from_summaries_and_from_rows(
    conn: Connection, lineage_world: LineageWorld, name: str, granularity: Granularity
) -> None:
    window = WINDOWS[name]
    starts = [(NodeKind.DATASET, i) for i in sorted(lineage_world.datasets.values())]
    starts += [(NodeKind.JOB, i) for i in sorted(lineage_world.jobs.values())]
    with_edges = 0
    for kind, start in starts:
        summarised = await _graph(conn, granularity, kind, start, window)
        from_rows = await _from_rows(conn, granularity, kind, start, window)
        assert summarised == from_rows, (kind, start)
        with_edges += b'"inputs":[]' not in summarised or b'"dataset_lineage":[]' not in summarised
    assert (with_edges == 0) == (name == "after everything")
