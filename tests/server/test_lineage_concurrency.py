"""At most `lineage_concurrency` graphs are computed at once; the other requests wait their
turn and are all answered (server.lineage.routes)."""

import asyncio
from typing import Any

import pytest

from server.lineage import service
from server.lineage.model import LineageGraph
from server.lineage.sql import Connection
from tests.server.conftest import open_client, server_settings
from tests.server.lineage_conftest import LineageWorld, lineage_world
from tests.server.lineage_scenarios import DAILY

pytestmark = pytest.mark.db
__all__ = ["lineage_world"]  # fixtures used by name


async def test_graphs_beyond_the_limit_wait_their_turn(
    database_url: str, lineage_world: LineageWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    computing = 0
    most = 0
    real = service.get_lineage

    async def tracked(conn: Connection, request: Any) -> LineageGraph:
        nonlocal computing, most
        computing += 1
        most = max(most, computing)
        try:
            await asyncio.sleep(0.05)  # long enough for every request to have arrived
            return await real(conn, request)
        finally:
            computing -= 1

    monkeypatch.setattr(service, "get_lineage", tracked)
    settings = server_settings(database_url, server={"lineage_concurrency": 2})
    params: dict[str, str | int] = {
        "start_node_type": "DATASET",
        "start_node_id": lineage_world.datasets[DAILY],
        "depth": 2,
        "granularity": "RUN",
    }
    async with open_client(settings) as client:
        responses = await asyncio.gather(
            *(client.get("/v1/lineage", params=params) for _ in range(7))
        )
    assert [r.status_code for r in responses] == [200] * 7
    assert len({r.content for r in responses}) == 1
    assert most == 2
