"""Fixtures of the lineage tests: the scenarios ingested through the consumer pipeline once,
their ids looked up by name, and API clients (tests/server/conftest.py's `open_client`).

Test modules import these fixtures by name (pytest finds fixtures in a test module's
namespace); they are session-scoped because ingesting is the slow part and the graphs are
only read.
"""

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg
import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from server.app import LINEAGE_TUNING
from server.lineage import sql
from server.lineage.schemas import MAX_DEPTH
from tests.server.conftest import open_client, server_settings
from tests.server.lineage_scenarios import RUN_LABELS, all_events, column_kinds

SMALL_CAP = 10


@dataclass(frozen=True, slots=True)
class LineageWorld:
    """Ids of the ingested scenarios, by dataset / job name (names are unique across them)."""

    datasets: dict[str, int]
    jobs: dict[str, int]

    def label(self, ref: dict[str, Any]) -> str:
        """A node reference of a response as a readable name: dataset name, job:name, run label."""
        kind, node_id = ref["kind"], ref["id"]
        if kind == "DATASET":
            return next(name for name, i in self.datasets.items() if i == node_id)
        if kind == "JOB":
            return "job:" + next(name for name, i in self.jobs.items() if i == node_id)
        return RUN_LABELS.get(UUID(node_id), str(node_id))

    def compact(self, body: dict[str, Any]) -> dict[str, Any]:
        """A response as sets of readable nodes and relations (with their aggregates)."""
        rel, nodes = body["relations"], body["nodes"]
        edge = self._edge
        return {
            "nodes": {
                self.label({"kind": k.upper()[:-1], "id": n["id"]}) for k in nodes for n in nodes[k]
            },
            "parents": {edge(r) for r in rel["parents"]},
            "symlinks": {(*edge(r), r["type"]) for r in rel["symlinks"]},
            "inputs": {edge(r): _counts(r) for r in rel["inputs"]},
            "outputs": {edge(r): (*_counts(r), *r["types"]) for r in rel["outputs"]},
            "dataset_lineage": {
                edge(r): (*_counts(r), *r["types"]) for r in rel["dataset_lineage"]
            },
            "truncated": body["truncated"],
        }

    def _edge(self, relation: dict[str, Any]) -> tuple[str, str]:
        return (self.label(relation["from"]), self.label(relation["to"]))


def _counts(relation: dict[str, Any]) -> tuple[int | None, int | None, int | None]:
    return (relation["num_rows"], relation["num_bytes"], relation["num_files"])


@pytest.fixture(scope="session")
async def lineage_world(engine: AsyncEngine) -> LineageWorld:
    for batch in all_events():
        await _ingest(engine, batch)
    return await world_names(engine)


@pytest.fixture(scope="session")
async def columns_world(lineage_world: LineageWorld, engine: AsyncEngine) -> LineageWorld:
    """lineage_world plus column lineage with OpenLineage 1.x transformation types."""
    await _ingest(engine, column_kinds())
    return await world_names(engine)


async def _ingest(engine: AsyncEngine, batch: list[bytes]) -> None:
    result = await ingest_payloads(engine, batch)
    assert not result.rejects, result.rejects


async def world_names(engine: AsyncEngine) -> LineageWorld:
    async with engine.connect() as conn:
        datasets = await conn.execute(
            text(
                "SELECT d.id, d.name FROM dataset AS d JOIN location AS l "
                "ON l.id = d.location_id WHERE l.name LIKE 'lin-%'"
            )
        )
        jobs = await conn.execute(
            text(
                "SELECT j.id, j.name FROM job AS j JOIN location AS l "
                "ON l.id = j.location_id WHERE l.name LIKE 'lin-%'"
            )
        )
        return LineageWorld({r.name: r.id for r in datasets}, {r.name: r.id for r in jobs})


@pytest.fixture(scope="session")
async def lineage_client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The app with the depth limit the issue asks for (1-50)."""
    settings = server_settings(database_url, server={"max_lineage_depth": MAX_DEPTH})
    async with open_client(settings) as client:
        yield client


@pytest.fixture(scope="session")
async def small_cap_client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    """The app with a node cap of SMALL_CAP from its settings."""
    options = {"max_lineage_depth": MAX_DEPTH, "max_lineage_nodes": SMALL_CAP}
    settings = server_settings(database_url, server=options)
    async with open_client(settings) as client:
        yield client


@pytest.fixture
async def conn(database_url: str, lineage_world: LineageWorld) -> AsyncIterator[sql.Connection]:
    """A connection to the lineage world set up as the server's lineage engine sets up its own."""
    url = database_url.replace("postgresql+asyncpg://", "postgresql://")
    connection = await asyncpg.connect(url, server_settings=LINEAGE_TUNING)
    await sql.set_time_codec(connection)
    yield connection
    await connection.close()
