"""Hostile request parameters get a 4xx problem, never a 5xx; an over-budget lineage query
answers a truncated graph quickly instead of timing out."""

import json
import random
import time
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from tests.faults.private import ROOT
from tests.faults.report import Report
from tests.server.conftest import open_client, server_settings

pytestmark = pytest.mark.db

PROBLEM = "application/problem+json"
INJECTIONS = ["' OR '1'='1", "1; DROP TABLE run; --", "$(reboot)", "../../etc/passwd", "\u0000"]


@pytest.fixture(scope="module")
async def client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with open_client(server_settings(database_url)) as api:
        yield api


HOSTILE = [
    "/v1/lineage?start_node_type=DATASET&start_node_id=1&depth=1000000",
    "/v1/lineage?start_node_type=DATASET&start_node_id=1&depth=-1",
    "/v1/lineage?start_node_type=DATASET&start_node_id=1&depth=51",
    "/v1/lineage?start_node_type=DATASET&start_node_id=1&max_nodes=0",
    "/v1/lineage?start_node_type=DATASET&start_node_id=1%20OR%201%3D1",
    "/v1/lineage?start_node_type=RUN&start_node_id=not-a-uuid",
    "/v1/lineage?start_node_type=TABLE&start_node_id=1",
    "/v1/lineage?start_node_type=DATASET&" + "&".join(f"start_node_id={i}" for i in range(1001)),
    "/v1/datasets?limit=1000000000",
    "/v1/datasets?limit=-5",
    "/v1/datasets?limit=ten",
    "/v1/runs?limit=99999999999999999999999",
    "/v1/datasets?cursor=" + "A" * 20_000,
    "/v1/datasets?cursor=eyJrIjoiJyBPUiAxPTEgLS0ifQ",
    "/v1/jobs?cursor=%27%3B%20DROP%20TABLE%20job%3B%20--",
    "/v1/runs?cursor=%00%01%02",
    "/v1/links?cursor=bnVsbA",
    "/v1/datasets/99999999999999999999",
    "/v1/runs/00000000-0000-0000-0000-00000000000g",
    "/v1/operations?run_id=%27%20OR%201%3D1",
    "/v1/runs?status=SUCCEEDED%27%20OR%201%3D1",
    "/v1/runs?created_since=0001-01-01T00:00:00Z&created_until=9999-12-31T23:59:59Z&started_since=x",
]


@pytest.mark.parametrize("path", HOSTILE, ids=range(len(HOSTILE)))
async def test_hostile_parameters_are_4xx_problems(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert body["status"] == response.status_code
    assert body["detail"]


@pytest.mark.parametrize("text", INJECTIONS)
async def test_injection_strings_in_names_are_answered_safely(
    client: httpx.AsyncClient, text: str
) -> None:
    for path, params in [
        ("/v1/datasets", {"search": text}),
        ("/v1/jobs", {"search": text}),
        ("/v1/datasets/by-name", {"namespace": text, "name": text}),
        ("/v1/jobs/by-name", {"namespace": "default", "name": text}),
        ("/v1/runs", {"external_id": text}),
    ]:
        response = await client.get(path, params=params)
        assert response.status_code in (200, 404, 422), (path, response.status_code)
        if response.status_code != 200:
            assert response.headers["content-type"] == PROBLEM


def _mesh_events(runs: int, datasets: int, seed: int = 11) -> list[bytes]:
    """Runs reading and writing random datasets of one pool: one big connected graph."""
    rng = random.Random(seed)
    names = [f"mesh.public.t{i:04d}" for i in range(datasets)]
    events = []
    for n in range(runs):
        body = {
            "eventType": "COMPLETE",
            "eventTime": f"2025-04-01T{n % 24:02d}:00:00Z",
            "producer": "https://example.com/threadline-api-budget",
            "run": {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4))},
            "job": {"namespace": "mesh", "name": f"mesh_job_{n % 60}"},
            "inputs": [
                {"namespace": "postgres://mesh:5432", "name": x} for x in rng.sample(names, 8)
            ],
            "outputs": [
                {"namespace": "postgres://mesh:5432", "name": x} for x in rng.sample(names, 4)
            ],
        }
        events.append(json.dumps(body).encode())
    return events


async def test_over_budget_lineage_is_truncated_not_timed_out(
    engine: AsyncEngine, database_url: str
) -> None:
    result = await ingest_payloads(engine, _mesh_events(runs=1500, datasets=1200))
    assert not result.rejects
    settings = server_settings(database_url, server={"request_timeout_s": 20.0})
    async with open_client(settings) as api:
        found = await api.get(
            "/v1/datasets/by-name",
            params={"namespace": "postgres://mesh:5432", "name": "mesh.public.t0000"},
        )
        start = found.json()["id"]
        started = time.monotonic()
        response = await api.get(
            "/v1/lineage",
            params={
                "start_node_type": "DATASET",
                "start_node_id": start,
                "direction": "BOTH",
                "depth": 50,
                "granularity": "DATASET",
                "include_column_lineage": "true",
            },
        )
        seconds = time.monotonic() - started
    assert response.status_code == 200, response.text[:500]
    graph = response.json()
    nodes = sum(len(kind) for kind in graph["nodes"].values())
    relations = sum(len(kind) for kind in graph["relations"].values())
    Report(ROOT / "build" / "reliability" / "api.jsonl").add(
        check="over-budget lineage (DATASET, BOTH, depth 50)",
        nodes=nodes,
        relations=relations,
        bytes=len(response.content),
        truncated=graph["truncated"],
        seconds=round(seconds, 2),
    )
    assert graph["truncated"] is True
    assert 1 < nodes <= settings.server.max_lineage_nodes
    assert seconds < settings.server.request_timeout_s
