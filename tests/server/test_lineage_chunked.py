"""A large lineage body through a real `threadline-server` (uvicorn): sent chunked, without a
Content-Length, and read whole and byte for byte by httpx and by the benchmarks' raw client,
one request at a time and several at once.

Its own database: a job with more runs than `render.STREAM_MIN_ITEMS` asks for, so that its
graphs are sent in pieces (the session database's graphs are all small, and its catalogue
tests count what it holds).
"""

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from benchmarks.raw_http import RawClient, target
from consumer.ingest import ingest_payloads
from server.lineage import render
from server.lineage.schemas import LineageResponse
from tests.served import server_over_own_database
from tests.server.conftest import open_client, server_settings
from tests.server.lineage_events import T0, dataset, run_event, uuid7
from tests.services import Services

pytestmark = pytest.mark.db

RUNS = 1_100  # a run, its input and its output per event: well over STREAM_MIN_ITEMS
NAMESPACE = "hdfs://nn1.wide.corp:8020"
SOURCE, TARGET = "/raw/wide_events", "/curated/wide_daily"


@dataclass(frozen=True, slots=True)
class Served:
    base_url: str
    database_url: str


def _events() -> list[bytes]:
    events = []
    for i in range(RUNS):
        at = T0 + timedelta(minutes=i)
        events.append(
            run_event(
                "COMPLETE",
                at,
                uuid7(at, i),
                ("wide", "nightly_rollup"),
                inputs=[dataset(NAMESPACE, SOURCE, stats=(i, 10 * i, 1))],
                outputs=[dataset(NAMESPACE, TARGET, stats=(i, 5 * i, 1), output=True)],
            )
        )
    return events


async def _seed(url: str) -> None:
    engine = create_async_engine(url)
    try:
        result = await ingest_payloads(engine, _events())
        assert not result.rejects, result.rejects
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
def served(test_services: Services, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The server as deployed (read-only role) over a database of its own."""
    log = tmp_path_factory.mktemp("wide-server") / "server.log"
    with server_over_own_database(test_services, "threadline_wide", _seed, log) as (base, url):
        yield Served(base, url)


async def _params(client: httpx.AsyncClient, granularity: str) -> dict[str, Any]:
    found = await client.get(
        "/v1/datasets/by-name", params={"namespace": NAMESPACE, "name": SOURCE}
    )
    found.raise_for_status()
    return {
        "start_node_type": "DATASET",
        "start_node_id": found.json()["id"],
        "granularity": granularity,
        "depth": 2,
    }


@pytest.mark.parametrize("granularity", ["RUN", "OPERATION"])
async def test_a_large_body_comes_chunked_and_whole(served: Served, granularity: str) -> None:
    async with httpx.AsyncClient(base_url=served.base_url, timeout=60) as client:
        params = await _params(client, granularity)
        response = await client.get("/v1/lineage", params=params)
    assert response.status_code == 200
    assert response.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in response.headers
    body = response.json()
    assert len(body["nodes"][f"{granularity.lower()}s"]) == RUNS  # one operation per run
    assert len(body["relations"]["inputs"]) == len(body["relations"]["outputs"]) == RUNS
    model = LineageResponse.model_validate(body)
    assert model.model_dump(mode="json", by_alias=True) == body
    # The same bytes as the app writes in process, and as the benchmarks' client reads them.
    async with open_client(server_settings(served.database_url)) as local:
        assert (await local.get("/v1/lineage", params=params)).content == response.content
    raw = RawClient(served.base_url)
    try:
        assert raw.request(target("/v1/lineage", params)) == (200, response.content)
    finally:
        raw.close()


async def test_large_bodies_asked_at_once_come_whole(served: Served) -> None:
    async with httpx.AsyncClient(base_url=served.base_url, timeout=60) as client:
        asked = [await _params(client, g) for g in ("RUN", "OPERATION", "RUN", "OPERATION")]
        alone = [(await client.get("/v1/lineage", params=p)).content for p in asked[:2]]
        together = await asyncio.gather(*(client.get("/v1/lineage", params=p) for p in asked))
    assert [r.content for r in together] == alone * 2
    assert all(len(body) > render.CHUNK_BYTES for body in alone)  # several pieces each
