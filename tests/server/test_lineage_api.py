"""The lineage endpoint contract: parameters, several start nodes, errors (never a 5xx)."""

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads
from server.lineage import render, routes
from server.lineage.model import LineageGraph
from server.lineage.schemas import LineageResponse
from shared.uuids import uuid7_time
from tests.server.conftest import open_client, reader_api_client, server_settings
from tests.server.lineage_conftest import LineageWorld, columns_world, lineage_client, lineage_world
from tests.server.lineage_events import dataset, run_event, uuid7
from tests.server.lineage_scenarios import APP_RUN, CYCLE_A, CYCLE_B, OP1, RAW_TABLE, WIN_SRC
from tests.server.test_lineage_spark import graph, lineage

pytestmark = pytest.mark.db
# fixtures used by name
__all__ = ["columns_world", "lineage_client", "lineage_world", "reader_api_client"]

PROBLEM = "application/problem+json"


async def _get(client: httpx.AsyncClient, **params: Any) -> httpx.Response:
    return await client.get("/v1/lineage", params=params)


def _dataset(world: LineageWorld, name: str = RAW_TABLE) -> dict[str, Any]:
    return {"start_node_type": "DATASET", "start_node_id": world.datasets[name]}


@pytest.mark.parametrize(
    "bad",
    [
        {"depth": 0},
        {"depth": 51},
        {"depth": "deep"},
        {"direction": "SIDEWAYS"},
        {"granularity": "TABLE"},
        {"start_node_type": "COLUMN"},
        {"start_node_id": "not-a-number"},
        {"start_node_id": "0"},
        {"start_node_id": "-3"},
        {"start_node_id": str(2**63)},
        {"start_node_id": str(uuid.uuid4())},
        {"start_node_type": "RUN", "start_node_id": "1"},
        {"start_node_type": "RUN", "start_node_id": "018f332c-b8c0-78b6-97b7-50923ceb3ff"},
        {"start_node_type": "OPERATION", "start_node_id": "x" * 65},
        {"start_node_type": "RUN", "start_node_id": str(APP_RUN), "granularity": "JOB"},
        {"start_node_type": "OPERATION", "start_node_id": str(OP1), "granularity": "RUN"},
        {"start_node_type": "RUN", "start_node_id": str(APP_RUN), "granularity": "DATASET"},
        {"since": "2024-05-02T00:00:00Z", "until": "2024-05-01T00:00:00Z"},
        {"since": "yesterday"},
        {"until": "0001-01-01T00:00:00+01:00"},
        {"max_nodes": 0},
        {"include_column_lineage": "perhaps"},
        {"colour": "blue"},
    ],
)
async def test_bad_request_is_422_problem(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld, bad: dict[str, Any]
) -> None:
    response = await _get(lineage_client, **{**_dataset(lineage_world), **bad})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["status"] == 422


async def test_missing_start_node_is_422(lineage_client: httpx.AsyncClient) -> None:
    response = await _get(lineage_client, start_node_type="DATASET")
    assert response.status_code == 422


@pytest.mark.parametrize(
    ("kind", "node_id"),
    [
        ("DATASET", "987654321"),
        ("JOB", "987654321"),
        ("RUN", str(uuid.uuid4())),
        ("OPERATION", str(uuid.uuid4())),
        ("RUN", "ffffffff-ffff-7fff-bfff-ffffffffffff"),  # a UUIDv7 beyond year 9999
    ],
)
async def test_unknown_start_node_is_404(
    lineage_client: httpx.AsyncClient, kind: str, node_id: str
) -> None:
    response = await _get(lineage_client, start_node_type=kind, start_node_id=node_id)
    assert response.status_code == 404, response.text
    assert response.headers["content-type"] == PROBLEM
    assert node_id in response.json()["detail"]


async def test_one_unknown_among_known_is_404(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    ids = [lineage_world.datasets[CYCLE_A], 987654321]
    response = await _get(lineage_client, start_node_type="DATASET", start_node_id=ids)
    assert response.status_code == 404


async def test_depth_above_server_limit_is_422(database_url: str) -> None:
    settings = server_settings(database_url, server={"max_lineage_depth": 3})
    async with open_client(settings) as client:
        response = await _get(client, start_node_type="DATASET", start_node_id="1", depth=4)
    assert response.status_code == 422
    assert "at most 3" in response.json()["detail"]


async def test_several_start_nodes_get_and_post(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    ids = [lineage_world.datasets[CYCLE_A], lineage_world.datasets[WIN_SRC]]
    query = {"start_node_type": "DATASET", "direction": "DOWNSTREAM", "granularity": "DATASET"}
    got = await _get(lineage_client, **query, start_node_id=ids)
    posted = await lineage_client.post("/v1/lineage", json={**query, "start_node_id": ids})
    assert got.status_code == posted.status_code == 200, posted.text
    assert got.json() == posted.json()
    compact = lineage_world.compact(got.json())
    edge = (None, None, None, "APPEND")
    assert compact == graph(
        nodes={CYCLE_A, CYCLE_B, WIN_SRC, "win.public.dst"},
        dataset_lineage={
            (CYCLE_A, CYCLE_B): edge,
            (WIN_SRC, "win.public.dst"): (600, 6000, 6, "APPEND"),
        },
    )


@pytest.mark.parametrize(
    "body",
    [
        {"start_node_type": "DATASET", "start_node_id": [True]},
        {"start_node_type": "DATASET", "start_node_id": []},
        {"start_node_type": "DATASET", "start_node_id": [1.5]},
        {"start_node_type": "RUN", "start_node_id": [12]},
        {"start_node_type": "DATASET", "start_node_id": list(range(1, 1002))},
        {"start_node_type": "DATASET", "start_node_id": [1], "depth": None},
        {"start_node_type": "DATASET", "start_node_id": [1], "unknown": 1},
    ],
)
async def test_bad_post_body_is_422(lineage_client: httpx.AsyncClient, body: Any) -> None:
    response = await lineage_client.post("/v1/lineage", json=body)
    assert response.status_code == 422, response.text


async def test_more_start_nodes_than_the_cap_is_422(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    ids = list(lineage_world.datasets.values())[:3]
    response = await _get(lineage_client, start_node_type="DATASET", start_node_id=ids, max_nodes=2)
    assert response.status_code == 422


async def test_naive_times_are_utc(
    lineage_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    base = {**_dataset(lineage_world, WIN_SRC), "direction": "DOWNSTREAM", "granularity": "JOB"}
    naive = await _get(lineage_client, **base, since="2024-05-03T07:00:00")
    aware = await _get(lineage_client, **base, since="2024-05-03T09:00:00+02:00")
    assert naive.status_code == 200
    assert naive.json() == aware.json()


async def test_read_only_role_can_build_graphs(
    reader_api_client: httpx.AsyncClient, lineage_world: LineageWorld
) -> None:
    got = await lineage(reader_api_client, lineage_world, RAW_TABLE, depth=3, granularity="RUN")
    assert "app_run" in got["nodes"]


async def test_openapi_documents_the_endpoint(lineage_client: httpx.AsyncClient) -> None:
    paths = (await lineage_client.get("/openapi.json")).json()["paths"]
    assert {"get", "post"} <= set(paths["/v1/lineage"])


_VALUES = st.one_of(
    st.text(max_size=40),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.uuids().map(str),
    st.sampled_from(["DATASET", "JOB", "RUN", "OPERATION", "BOTH", "UPSTREAM", "DATASET"]),
    st.datetimes().map(lambda d: d.isoformat()),
)
_KINDS = st.sampled_from(["DATASET", "JOB", "RUN", "OPERATION"])
_IDS = st.one_of(
    st.integers(min_value=1, max_value=60).map(str), st.just(str(APP_RUN)), st.just(str(OP1))
)
_OPTIONAL = dict.fromkeys(
    ("direction", "depth", "granularity", "since", "until", "max_nodes"), _VALUES
)
# Mostly well-formed start nodes, so that the odd values reach the graph code too.
_PARAMS = st.fixed_dictionaries(
    {"start_node_type": _KINDS, "start_node_id": st.one_of(_IDS, _VALUES)},
    optional={
        **_OPTIONAL,
        "depth": st.one_of(st.integers(-2, 60).map(str), _VALUES),
        "include_column_lineage": st.sampled_from(["true", "false", "1", "maybe"]),
    },
)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(params=st.one_of(_PARAMS, st.dictionaries(st.text(max_size=20), _VALUES, max_size=4)))
async def test_no_request_is_a_server_error(
    lineage_client: httpx.AsyncClient, params: dict[str, str]
) -> None:
    response = await _get(lineage_client, **params)
    assert response.status_code in {200, 404, 422}, (params, response.text)


@pytest.mark.parametrize(
    ("start", "granularity"),
    [("lin.raw_orders", "OPERATION"), ("lin.raw_orders", "DATASET"), ("col.public.orders", "JOB")],
)
async def test_body_matches_the_documented_schema(
    lineage_client: httpx.AsyncClient, columns_world: LineageWorld, start: str, granularity: str
) -> None:
    # The body is built without pydantic (render.py): it must be exactly what the model says.
    params = {
        **_dataset(columns_world, start),
        "depth": 4,
        "granularity": granularity,
        "include_column_lineage": "true",
    }
    body = (await _get(lineage_client, **params)).json()
    assert body["nodes"]["datasets"]
    model = LineageResponse.model_validate(body)
    assert model.model_dump(mode="json", by_alias=True) == body


@pytest.mark.parametrize("granularity", ["OPERATION", "RUN", "JOB", "DATASET"])
async def test_a_large_body_comes_in_pieces_with_the_same_bytes(
    lineage_client: httpx.AsyncClient,
    lineage_world: LineageWorld,
    monkeypatch: pytest.MonkeyPatch,
    granularity: str,
) -> None:
    params = {**_dataset(lineage_world), "depth": 4, "granularity": granularity}
    whole = await _get(lineage_client, **params)
    assert whole.headers["content-length"] == str(len(whole.content))
    given: list[bytes] = []

    def spied(graph: LineageGraph) -> Iterator[bytes]:
        for piece in render.render_chunks(graph, step=1, chunk_bytes=1):
            given.append(piece)
            yield piece

    monkeypatch.setattr(render, "STREAM_MIN_ITEMS", 1)  # every graph here is small
    monkeypatch.setattr(routes, "render_chunks", spied)
    streamed = await _get(lineage_client, **params)
    assert streamed.status_code == 200
    assert "content-length" not in streamed.headers
    assert streamed.headers["content-type"] == "application/json"
    assert "x-request-id" in streamed.headers
    assert streamed.content == whole.content
    assert len(given) > 3


async def test_run_dated_past_2242_is_found(
    engine: AsyncEngine, lineage_client: httpx.AsyncClient
) -> None:
    """The consumer dates a UUIDv7 with float seconds, exact to the millisecond only up
    to year 2242; the lineage loaders compute the exact time, miss such a run by key and
    must find it by id."""
    at = datetime(2500, 3, 1, 12, 0, 0, 123_000, tzinfo=UTC)
    run_id = uuid7(at, seed=2500)
    assert uuid7_time(run_id) != at  # the case: the stored created_at is not exact
    source, target = dataset("far-future", "in"), dataset("far-future", "out")
    events = [
        run_event(kind, at, run_id, ("far-future", "job"), inputs=[source], outputs=[target])
        for kind in ("START", "COMPLETE")
    ]
    assert not (await ingest_payloads(engine, events)).rejects
    by_run = await _get(
        lineage_client, start_node_type="RUN", start_node_id=str(run_id), granularity="RUN"
    )
    assert by_run.status_code == 200, by_run.text
    nodes = by_run.json()["nodes"]
    assert [run["id"] for run in nodes["runs"]] == [str(run_id)]
    source_id = next(d["id"] for d in nodes["datasets"] if d["name"] == "in")
    by_dataset = await _get(
        lineage_client, start_node_type="DATASET", start_node_id=source_id, granularity="RUN"
    )
    assert [run["id"] for run in by_dataset.json()["nodes"]["runs"]] == [str(run_id)]
