"""Start-up prepares every statement a lineage graph may run (server.lineage.warmup): after
it, no request of any shape prepares another on that connection."""

import itertools
import logging

import pytest
from pydantic import SecretStr
from sqlalchemy import text

from server.app import create_app, create_lineage_engine
from server.lineage import service, sql
from server.lineage.model import (
    PROCESS_LEVELS,
    Direction,
    Granularity,
    LineageRequest,
    NodeId,
    NodeKind,
    TimeWindow,
)
from server.lineage.warmup import (
    lineage_statements,
    prepare_statements,
    warm_lineage_connections,
)
from shared.settings import DatabaseSettings
from tests.server.conftest import server_settings
from tests.server.lineage_conftest import LineageWorld, conn, lineage_world
from tests.server.lineage_scenarios import APP_JOB, APP_RUN, DAILY

pytestmark = pytest.mark.db
__all__ = ["conn", "lineage_world"]  # fixtures used by name

PREPARED = "SELECT count(*) FROM pg_prepared_statements"


async def _starts(conn: sql.Connection, world: LineageWorld) -> dict[NodeKind, NodeId]:
    operation = await conn.fetchval("SELECT id FROM operation WHERE run_id = $1 LIMIT 1", APP_RUN)
    return {
        NodeKind.DATASET: world.datasets[DAILY],
        NodeKind.JOB: world.jobs[APP_JOB[1]],
        NodeKind.RUN: APP_RUN,
        NodeKind.OPERATION: operation,
    }


def _available(kind: NodeKind, granularity: Granularity) -> bool:
    """The API's rule (LineageQuery): from a process, its own granularity or a finer one."""
    if kind is NodeKind.DATASET:
        return True
    if granularity is Granularity.DATASET:
        return False
    return PROCESS_LEVELS.index(NodeKind(granularity.value)) <= PROCESS_LEVELS.index(kind)


async def test_every_request_shape_runs_prepared_statements(
    conn: sql.Connection, lineage_world: LineageWorld
) -> None:
    starts = await _starts(conn, lineage_world)
    await prepare_statements(conn)
    prepared = await conn.fetchval(PREPARED)
    assert prepared >= len(lineage_statements())
    shapes = itertools.product(
        starts.items(), Granularity, Direction, (0, 1, 3), (False, True), (1, 2000)
    )
    for (kind, start), granularity, direction, depth, columns, max_nodes in shapes:
        if not _available(kind, granularity):
            continue
        request = LineageRequest(
            start_kind=kind,
            start_ids=(start,),
            direction=direction,
            depth=depth,
            granularity=granularity,
            window=TimeWindow(),
            include_column_lineage=columns,
            max_nodes=max_nodes,
        )
        await service.get_lineage(conn, request)
        assert await conn.fetchval(PREPARED) == prepared, request


async def test_start_up_warms_distinct_kept_connections(database_url: str) -> None:
    settings = DatabaseSettings(url=SecretStr(database_url), pool_size=2, max_overflow=1)
    engine = create_lineage_engine(settings, "threadline-test-warmup")
    try:
        await warm_lineage_connections(engine, 3)
        assert engine.pool.checkedin() == 3  # type: ignore[attr-defined]
        for _ in range(3):  # each of the three, taken in turn, has them all
            async with engine.connect() as c:
                assert (await c.execute(text(PREPARED))).scalar_one() >= len(lineage_statements())
    finally:
        await engine.dispose()


async def test_the_app_starts_with_its_lineage_connections_prepared(database_url: str) -> None:
    app = create_app(server_settings(database_url))  # pool 2, overflow 2
    try:
        async with app.router.lifespan_context(app):
            assert app.state.databases.lineage.pool.checkedin() == 4
    finally:
        await app.state.databases.dispose()


async def test_the_app_starts_when_the_database_is_unreachable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    unreachable = "postgresql+asyncpg://threadline:x@127.0.0.1:9/threadline"
    app = create_app(server_settings(unreachable))
    with caplog.at_level(logging.WARNING, logger="threadline.server"):
        async with app.router.lifespan_context(app):
            # Started, serving, with no lineage connection to keep.
            assert app.state.databases.lineage.pool.checkedin() == 0
    assert "lineage connections not prepared at start-up" in caplog.text
