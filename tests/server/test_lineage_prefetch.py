"""A graph's runs loaded on a spare connection while the expansion goes on
(server.lineage.prefetch): the same graphs as on one connection, nothing held when no
connection is idle, and the spare connection given back when a graph fails."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import httpx
import pytest

from server import deps
from server.app import LINEAGE_TUNING, create_app
from server.lineage import node_queries, prefetch, service, sql
from server.lineage.model import (
    Direction,
    Granularity,
    LineageRequest,
    NodeKind,
    TimeWindow,
)
from server.lineage.render import render_json
from tests.server.conftest import BASE_URL, server_settings
from tests.server.lineage_conftest import LineageWorld, conn, lineage_world

pytestmark = pytest.mark.db
__all__ = ["conn", "lineage_world"]  # fixtures used by name

GRANULARITIES = [Granularity.RUN, Granularity.OPERATION, Granularity.JOB]


class Spares:
    """A spare connection (or None: no idle one), counting the graphs that took it."""

    def __init__(self, connection: asyncpg.Connection | None) -> None:
        self.connection = connection
        self.taken = 0
        self.open = 0

    @asynccontextmanager
    async def __call__(self) -> AsyncIterator[asyncpg.Connection | None]:
        self.taken += 1
        self.open += 1
        try:
            yield self.connection
        finally:
            self.open -= 1


@pytest.fixture
async def second(database_url: str, lineage_world: LineageWorld) -> AsyncIterator[Any]:
    url = database_url.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url, server_settings=LINEAGE_TUNING)
    await sql.set_time_codec(connection)
    yield connection
    await connection.close()


def request_for(dataset_id: int, granularity: Granularity) -> LineageRequest:
    return LineageRequest(
        start_kind=NodeKind.DATASET,
        start_ids=(dataset_id,),
        direction=Direction.BOTH,
        depth=4,
        granularity=granularity,
        window=TimeWindow(),
        include_column_lineage=False,
        max_nodes=100,
    )


@pytest.fixture
def every_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every graph with a run before its second level prefetches (the world's are small)."""
    monkeypatch.setattr(prefetch, "MIN_PREFETCH_RUNS", 1)


@pytest.mark.usefixtures("every_graph")
@pytest.mark.parametrize("granularity", GRANULARITIES)
async def test_graphs_are_the_same_with_runs_loaded_meanwhile(
    conn: sql.Connection,
    second: asyncpg.Connection,
    lineage_world: LineageWorld,
    granularity: Granularity,
) -> None:
    spares, idle = Spares(second), Spares(None)
    compared = 0
    for dataset_id in sorted(lineage_world.datasets.values()):
        request = request_for(dataset_id, granularity)
        alone = render_json(await service.get_lineage(conn, request))
        assert render_json(await service.get_lineage(conn, request, spares)) == alone
        assert render_json(await service.get_lineage(conn, request, idle)) == alone
        compared += 1
    assert compared > 10
    assert spares.open == idle.open == 0
    if granularity is Granularity.RUN:  # runs come from the levels only at RUN granularity
        assert spares.taken > 5
        assert idle.taken == spares.taken


async def test_small_graphs_take_no_spare_connection(
    conn: sql.Connection, second: asyncpg.Connection, lineage_world: LineageWorld
) -> None:
    spares = Spares(second)
    for dataset_id in lineage_world.datasets.values():
        await service.get_lineage(conn, request_for(dataset_id, Granularity.RUN), spares)
    assert spares.taken == 0  # none has MIN_PREFETCH_RUNS runs


@pytest.fixture
def loading(monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Set once runs begin to load; the load then stays in flight (30 s) for the test to act."""
    begun = asyncio.Event()
    listed = node_queries.list_runs

    async def slow_runs(*args: Any, **kwargs: Any) -> Any:
        begun.set()
        await asyncio.sleep(30)
        return await listed(*args, **kwargs)

    monkeypatch.setattr(node_queries, "list_runs", slow_runs)
    return begun


@pytest.mark.usefixtures("every_graph")
async def test_a_graph_that_fails_gives_its_spare_connection_back(
    conn: sql.Connection,
    second: asyncpg.Connection,
    lineage_world: LineageWorld,
    monkeypatch: pytest.MonkeyPatch,
    loading: asyncio.Event,
) -> None:
    level = service._level

    async def failing_level(*args: Any, **kwargs: Any) -> Any:
        if len(args) > 4:  # the start datasets' level: as it is
            return await level(*args, **kwargs)
        await loading.wait()
        raise asyncpg.QueryCanceledError("canceling statement due to statement timeout")

    monkeypatch.setattr(service, "_level", failing_level)
    spares = Spares(second)
    start = lineage_world.datasets["lin.raw_orders"]
    with pytest.raises(asyncpg.QueryCanceledError):
        await asyncio.wait_for(
            service.get_lineage(conn, request_for(start, Granularity.RUN), spares), timeout=10
        )
    assert spares.taken == 1
    assert spares.open == 0  # cancelled and given back, not left loading
    assert await second.fetchval("SELECT 1") == 1


@pytest.mark.usefixtures("every_graph")
async def test_a_cancelled_graph_is_cancelled_and_gives_its_spare_connection_back(
    conn: sql.Connection,
    second: asyncpg.Connection,
    lineage_world: LineageWorld,
    loading: asyncio.Event,
) -> None:
    spares = Spares(second)
    start = lineage_world.datasets["lin.raw_orders"]
    graph = asyncio.create_task(
        service.get_lineage(conn, request_for(start, Granularity.RUN), spares)
    )
    await asyncio.wait_for(loading.wait(), timeout=10)
    graph.cancel()  # as the server's time limit cancels a request
    with pytest.raises(asyncio.CancelledError):
        await graph
    assert spares.taken == 1
    assert spares.open == 0
    assert await second.fetchval("SELECT 1") == 1


async def test_a_spare_is_never_one_a_request_would_wait_for(database_url: str) -> None:
    app = create_app(server_settings(database_url))  # two kept and two more: four at most
    held = app.state.databases.lineage_held
    request: Any = type("R", (), {"app": app})()
    try:
        async with deps.lineage_connection(request) as first:
            async with deps.spare_lineage_connection(request) as spare:
                assert spare is not None
                assert spare is not first
                assert held.count == 2
            held.count = held.limit - 1  # one idle left: a spare takes it
            async with deps.spare_lineage_connection(request) as spare:
                assert spare is not None
                assert held.count == held.limit
            held.count = held.limit  # the others are taken, or waited for
            async with deps.spare_lineage_connection(request) as spare:
                assert spare is None
                assert held.count == held.limit
            held.count = 1
        assert held.count == 0
    finally:
        await app.state.databases.dispose()


@pytest.mark.usefixtures("every_graph")
async def test_lineage_through_the_api_gives_every_connection_back(
    database_url: str, lineage_world: LineageWorld
) -> None:
    app = create_app(server_settings(database_url))
    transport = httpx.ASGITransport(app=app)
    start = lineage_world.datasets["lin.raw_orders"]
    params: dict[str, str | int] = {
        "start_node_type": "DATASET",
        "start_node_id": start,
        "granularity": "RUN",
        "depth": 4,
    }
    try:
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            answers = await asyncio.gather(
                *(client.get("/v1/lineage", params=params) for _ in range(6))
            )
        assert {a.status_code for a in answers} == {200}
        assert len({a.content for a in answers}) == 1
        assert app.state.databases.lineage_held.count == 0
    finally:
        await app.state.databases.dispose()
