"""GET /v1/lineage parses its query itself (server.lineage.schemas.lineage_query_from): it
must accept, refuse and report exactly what FastAPI's `Annotated[LineageQuery, Query()]`
does. Both run in one small app; every query string goes to both."""

from typing import Annotated, Any

import httpx
import pytest
from fastapi import FastAPI, Query, Request
from hypothesis import given, settings
from hypothesis import strategies as st

from server.errors import install_error_handlers
from server.lineage.schemas import LineageQuery, lineage_query_from

pytestmark = pytest.mark.unit

_NAMES = (
    "start_node_type",
    "start_node_id",
    "direction",
    "depth",
    "granularity",
    "since",
    "until",
    "include_column_lineage",
    "max_nodes",
)
_VALUES = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["DATASET", "JOB", "RUN", "OPERATION", "BOTH", "UPSTREAM", "true", "0"]),
    st.integers(min_value=-(2**64), max_value=2**64).map(str),
    st.uuids().map(str),
    st.datetimes().map(lambda d: d.isoformat()),
)
# Any parameter may repeat (a list field takes them all, another its last) or be unknown.
_QUERIES = st.lists(
    st.tuples(st.one_of(st.sampled_from(_NAMES), st.text(max_size=8)), _VALUES), max_size=10
)
_VALID = st.fixed_dictionaries(
    {
        "start_node_type": st.sampled_from(["DATASET", "JOB"]),
        "start_node_id": st.lists(st.integers(1, 2**40).map(str), min_size=1, max_size=3),
    },
    optional={
        "direction": st.sampled_from(["BOTH", "UPSTREAM", "DOWNSTREAM"]),
        "depth": st.integers(1, 50).map(str),
        "granularity": st.sampled_from(["RUN", "JOB", "OPERATION"]),
        "since": st.datetimes().map(lambda d: d.isoformat()),
        "include_column_lineage": st.sampled_from(["true", "false", "1", "off"]),
        "max_nodes": st.integers(1, 10**6).map(str),
    },
).map(lambda d: [(k, v) for k, vs in d.items() for v in (vs if isinstance(vs, list) else [vs])])


def _app() -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/fastapi")
    async def by_fastapi(query: Annotated[LineageQuery, Query()]) -> dict[str, Any]:
        return query.model_dump(mode="json")

    @app.get("/ours")
    async def by_us(request: Request) -> dict[str, Any]:
        return lineage_query_from(request.query_params).model_dump(mode="json")

    return app


# One app for every example (hypothesis runs a test's examples in one call of it).
_CLIENT = httpx.AsyncClient(transport=httpx.ASGITransport(_app()), base_url="http://test")


def _answer(response: httpx.Response) -> tuple[int, Any]:
    body = response.json()
    if response.status_code == 422:
        return 422, body["errors"]
    return response.status_code, body


async def _same(query: list[tuple[str, str]]) -> tuple[int, Any]:
    params = tuple(query)  # a tuple: its item type is covariant, as httpx declares it
    theirs = _answer(await _CLIENT.get("/fastapi", params=params))
    ours = _answer(await _CLIENT.get("/ours", params=params))
    assert ours == theirs, query
    return ours


@settings(max_examples=400, deadline=None)
@given(query=_QUERIES)
async def test_any_query_is_parsed_as_fastapi_parses_it(query: list[tuple[str, str]]) -> None:
    await _same(query)


@settings(max_examples=150, deadline=None)
@given(query=_VALID)
async def test_valid_queries_give_the_same_model(query: list[tuple[str, str]]) -> None:
    status, _ = await _same(query)
    assert status == 200


@pytest.mark.parametrize(
    "query",
    [
        [],
        [("start_node_type", "DATASET")],
        [("start_node_type", "DATASET"), ("start_node_id", "1"), ("start_node_id", "x")],
        [("start_node_type", "DATASET"), ("start_node_id", "1"), ("depth", "2"), ("depth", "x")],
        [("start_node_type", "DATASET"), ("start_node_id", "1"), ("colour", "a"), ("colour", "b")],
    ],
)
async def test_examples(query: list[tuple[str, str]]) -> None:
    status, errors = await _same(query)
    assert status == 422
    assert all(error["loc"][0] == "query" for error in errors)
