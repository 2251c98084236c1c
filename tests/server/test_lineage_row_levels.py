"""RUN and OPERATION levels come row by row and are grouped by the server: the same rows,
relations and graphs as PostgreSQL's aggregate gives, and a level at its row limit
aggregated in SQL as before."""

from collections.abc import Sequence
from datetime import timedelta
from functools import partial
from typing import Any
from uuid import UUID

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from server.lineage import grouping, queries, service
from server.lineage.model import (
    Direction,
    Granularity,
    LineageRequest,
    NodeId,
    NodeKind,
    TimeWindow,
)
from server.lineage.queries import DOWN, UP
from server.lineage.render import render_json
from server.lineage.sql import Connection, Statement, fetch
from tests.server.lineage_conftest import LineageWorld, conn, lineage_world, world_names
from tests.server.lineage_events import SPARK, T0, dataset, minutes, run_event, spark_type, uuid7

pytestmark = pytest.mark.db
__all__ = ["conn", "lineage_world"]  # fixtures used by name

# A Spark application whose two SQL jobs both read one table and append to another: at RUN
# granularity each of its edges is a group of two rows, with different counters and schemas.
NS = "postgres://lin-appends:5432"
SOURCE, TARGET = "appends.public.events", "appends.public.totals"
APP_JOB = ("lin-appends", "appender")
APP_RUN = uuid7(T0 + timedelta(hours=9), 71)
OPERATIONS = [uuid7(T0 + timedelta(hours=9, minutes=1 + i), 72 + i) for i in range(2)]


def appending_app() -> list[bytes]:
    at = T0 + timedelta(hours=9)
    kind = spark_type("APPLICATION")
    events = [run_event("START", at, APP_RUN, APP_JOB, producer=SPARK, job_type=kind)]
    for i, op in enumerate(OPERATIONS):
        job = (APP_JOB[0], f"{APP_JOB[1]}.append_{i}")
        stats = (10 * (i + 1), 1000 * (i + 1), i + 1)
        events.append(
            run_event(
                "COMPLETE",
                at + minutes(1 + i),
                op,
                job,
                producer=SPARK,
                job_type=spark_type("SQL_JOB"),
                parent=(APP_RUN, *APP_JOB),
                inputs=[dataset(NS, SOURCE, fields=["id", f"v{i}"])],
                outputs=[dataset(NS, TARGET, fields=["id", f"t{i}"], stats=stats, output=True)],
            )
        )
    events.append(
        run_event("COMPLETE", at + minutes(5), APP_RUN, APP_JOB, producer=SPARK, job_type=kind)
    )
    return events


@pytest.fixture(scope="module")
async def appends(engine: AsyncEngine, lineage_world: LineageWorld) -> LineageWorld:
    result = await ingest_payloads(engine, appending_app())
    assert not result.rejects, result.rejects
    return await world_names(engine)


def _rows(rows: Sequence[Any]) -> list[tuple[Any, ...]]:
    """A level's rows as comparable tuples (its ten columns), in a fixed order."""
    return sorted((tuple(r[:10]) for r in rows), key=repr)


async def _both_ways(
    conn: Connection,
    monkeypatch: pytest.MonkeyPatch,
    kind: NodeKind,
    process: NodeKind,
    frontier: dict[str, list[NodeId]],
    row_limit: int = 1000,
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The level grouped by the server, and aggregated by PostgreSQL."""
    parts = service.io_parts(kind, process, tuple(frontier))
    window = TimeWindow()
    grouped = await queries.list_io_level(conn, parts, frontier, window, row_limit)
    with monkeypatch.context() as patched:
        patched.setattr(queries, "ROW_BY_ROW", frozenset())
        aggregated = await queries.list_io_level(conn, parts, frontier, window, row_limit)
    return _rows(grouped.rows), _rows(aggregated.rows)


@pytest.mark.parametrize("process", [NodeKind.RUN, NodeKind.OPERATION])
async def test_levels_from_datasets_are_the_aggregates_rows(
    conn: Connection, appends: LineageWorld, monkeypatch: pytest.MonkeyPatch, process: NodeKind
) -> None:
    frontier: dict[str, list[NodeId]] = {
        DOWN: [appends.datasets[SOURCE]],
        UP: [appends.datasets[TARGET]],
    }
    grouped, aggregated = await _both_ways(conn, monkeypatch, NodeKind.DATASET, process, frontier)
    assert grouped == aggregated
    assert len(grouped) == (2 if process is NodeKind.RUN else 4)


async def test_a_runs_level_merges_its_operations_rows(
    conn: Connection, appends: LineageWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    frontier: dict[str, list[NodeId]] = {DOWN: [APP_RUN], UP: [APP_RUN]}
    grouped, aggregated = await _both_ways(conn, monkeypatch, NodeKind.RUN, NodeKind.RUN, frontier)
    assert grouped == aggregated
    written = next(r for r in grouped if r[0] == DOWN)
    assert written[1] == appends.datasets[TARGET]
    assert written[3:6] == (30, 3000, 3)  # both appends' counters summed


@pytest.mark.parametrize("row_limit", [1, 2, 3])
async def test_a_level_that_reaches_its_row_limit_is_aggregated_in_sql(
    conn: Connection, appends: LineageWorld, monkeypatch: pytest.MonkeyPatch, row_limit: int
) -> None:
    # The run's outputs are two rows of one group: with a limit of 1 or 2 the rows reach it
    # and the level is asked for again, aggregated; with 3 they are all the level's rows.
    statements: list[str] = []

    async def counted(conn: Connection, statement: Statement, **params: Any) -> Any:
        statements.append(statement.sql)
        return await fetch(conn, statement, **params)

    monkeypatch.setattr(queries, "fetch", counted)
    frontier: dict[str, list[NodeId]] = {DOWN: [APP_RUN]}
    grouped, aggregated = await _both_ways(
        conn, monkeypatch, NodeKind.RUN, NodeKind.RUN, frontier, row_limit
    )
    assert grouped == aggregated
    assert len(grouped) == 1
    assert len(statements) == (2 if row_limit < 3 else 1) + 1  # + the aggregated reference


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
@pytest.mark.parametrize("granularity", [Granularity.RUN, Granularity.OPERATION])
@pytest.mark.parametrize("start", [SOURCE, TARGET])
async def test_graphs_are_the_same_as_from_the_aggregate(
    conn: Connection,
    appends: LineageWorld,
    monkeypatch: pytest.MonkeyPatch,
    granularity: Granularity,
    start: str,
    native: bool,
) -> None:
    if not native:  # the Python grouping, as a server without the native module runs it
        monkeypatch.setattr(
            queries, "group_io_rows", partial(grouping.group_io_rows, native_group=None)
        )
    request = LineageRequest(
        start_kind=NodeKind.DATASET,
        start_ids=(appends.datasets[start],),
        direction=Direction.BOTH,
        depth=3,
        granularity=granularity,
        window=TimeWindow(),
        include_column_lineage=False,
        max_nodes=100,
    )
    grouped = render_json(await service.get_lineage(conn, request))
    with monkeypatch.context() as patched:
        patched.setattr(queries, "ROW_BY_ROW", frozenset())
        aggregated = render_json(await service.get_lineage(conn, request))
    assert grouped == aggregated
    assert str(UUID(str(APP_RUN))) in grouped.decode()
