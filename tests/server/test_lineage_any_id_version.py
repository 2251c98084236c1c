"""The lineage scenarios with UUIDv4 run ids give the graphs they give with UUIDv7 ids.

A UUIDv7 carries the creation time that keys a run or operation row; any other id is
stored under its anchor (`uuid_anchor`), through which the lineage service finds it in
one partition. Rows without an anchor (none is ever deleted: this stands for data written
some other way) are still found, by id alone. Every scenario is ingested a second time, in
a database of its own, with each run id replaced by a UUIDv4, and the same requests must
give the same graphs, node for node.
"""

import hashlib
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any
from uuid import UUID

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from consumer.ingest import ingest_payloads
from tests.conftest import create_database, drop_database
from tests.server.conftest import open_client, server_settings
from tests.server.lineage_conftest import (
    LineageWorld,
    lineage_client,
    lineage_world,
    world_names,
)
from tests.server.lineage_scenarios import COL_RUN, OP1, OP2, RUN_LABELS, all_events
from tests.services import Services

pytestmark = pytest.mark.db
__all__ = ["lineage_client", "lineage_world"]  # fixtures used by name

UUID_TEXT = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}")


def as_v4(value: UUID) -> UUID:
    digest = bytearray(hashlib.blake2b(value.bytes, digest_size=16).digest())
    digest[6] = (digest[6] & 0x0F) | 0x40
    digest[8] = (digest[8] & 0x3F) | 0x80
    return UUID(bytes=bytes(digest))


V4 = {as_v4(run): run for run in RUN_LABELS}


def with_v4_ids(payload: bytes) -> bytes:
    return UUID_TEXT.sub(lambda m: str(as_v4(UUID(m.group().decode()))).encode(), payload)


@pytest.fixture(scope="module")
def v4_database_url(test_services: Services) -> Iterator[str]:
    name = f"threadline_v4_{uuid.uuid4().hex[:12]}"
    yield create_database(test_services, name)
    drop_database(test_services, name)


@pytest.fixture(scope="module")
async def v4_engine(v4_database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(v4_database_url, pool_size=2)
    for batch in all_events():
        result = await ingest_payloads(engine, [with_v4_ids(e) for e in batch])
        assert not result.rejects, result.rejects
    yield engine
    await engine.dispose()


@pytest.fixture(scope="module")
async def v4_client(
    v4_database_url: str, v4_engine: AsyncEngine
) -> AsyncIterator[httpx.AsyncClient]:
    async with open_client(server_settings(v4_database_url)) as client:
        yield client


def _requests(world: LineageWorld) -> Iterator[tuple[str, Any, str, dict[str, Any]]]:
    """(start kind, start, granularity, params) over every start node of the scenarios."""
    starts: list[tuple[str, Any]] = [("DATASET", name) for name in sorted(world.datasets)]
    starts += [("JOB", name) for name in sorted(world.jobs)]
    operations = {OP1, OP2}
    starts += [("OPERATION", op) for op in sorted(operations)]
    # COL_RUN is columns_world's, not ingested here.
    starts += [("RUN", run) for run in RUN_LABELS if run not in {*operations, COL_RUN}]
    finer = {
        "DATASET": ("OPERATION", "RUN", "JOB", "DATASET"),
        "JOB": ("RUN", "JOB"),
        "RUN": ("OPERATION", "RUN"),
        "OPERATION": ("OPERATION",),
    }
    for kind, start in starts:
        for granularity in finer[kind]:
            for depth in (1, 3):
                yield kind, start, granularity, {"depth": depth, "direction": "BOTH"}


async def _graph(
    client: httpx.AsyncClient, world: LineageWorld, kind: str, start: Any, **params: Any
) -> dict[str, Any]:
    node = {"DATASET": world.datasets, "JOB": world.jobs}.get(kind)
    node_id = node[start] if node is not None else start
    query = {"start_node_type": kind, "start_node_id": str(node_id), **params}
    response = await client.get("/v1/lineage", params=query)
    assert response.status_code == 200, response.text
    return world.compact(response.json())


def _relabel(value: Any) -> Any:
    """A compacted v4 graph with each v4 run id written as its scenario label."""
    if isinstance(value, str):
        try:
            run = V4.get(UUID(value))
        except ValueError:
            return value
        return value if run is None else RUN_LABELS[run]
    if isinstance(value, dict):
        return {_relabel(k): _relabel(v) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return {_relabel(v) for v in value}
    if isinstance(value, tuple):
        return tuple(_relabel(v) for v in value)
    return value


async def _compare(
    lineage_client: httpx.AsyncClient,
    lineage_world: LineageWorld,
    v4_client: httpx.AsyncClient,
    v4_world: LineageWorld,
) -> int:
    compared = 0
    for kind, start, granularity, params in _requests(lineage_world):
        v4_start = as_v4(start) if isinstance(start, UUID) else start
        expected = await _graph(
            lineage_client, lineage_world, kind, start, granularity=granularity, **params
        )
        got = await _graph(v4_client, v4_world, kind, v4_start, granularity=granularity, **params)
        assert _relabel(got) == expected, (kind, start, granularity, params)
        compared += 1
    return compared


async def test_uuid_v4_runs_give_the_same_graphs_with_and_without_anchors(
    lineage_client: httpx.AsyncClient,
    lineage_world: LineageWorld,
    v4_client: httpx.AsyncClient,
    v4_engine: AsyncEngine,
) -> None:
    v4_world = await world_names(v4_engine)
    assert await _compare(lineage_client, lineage_world, v4_client, v4_world) > 100
    async with v4_engine.begin() as conn:
        await conn.execute(text("DELETE FROM uuid_anchor"))
    assert await _compare(lineage_client, lineage_world, v4_client, v4_world) > 100
