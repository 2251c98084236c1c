"""Conventions: problem+json, 422 for bad input, request ids in logs, CORS, auth, timeouts,
health, and the committed OpenAPI document."""

import asyncio
import io
import logging
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import orjson
import pytest

from server.app import create_app
from server.observability import configure_logging
from server.settings import ServerSettings
from shared.db import sync_url
from shared.settings import LogSettings
from tests.server.conftest import World, open_client, server_settings

pytestmark = pytest.mark.db

OPENAPI = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
PROBLEM = "application/problem+json"


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("/v1/runs/not-a-uuid", "run_id"),
        ("/v1/operations/1234", "operation_id"),
        ("/v1/runs?status=DONE", "status"),
        ("/v1/jobs?type=SPARK", "type"),
        ("/v1/runs?parent_run_id=xyz", "parent_run_id"),
        ("/v1/datasets?limit=0", "limit"),
        ("/v1/datasets?limit=501", "limit"),
        ("/v1/datasets?cursor=%%%", "cursor"),
        ("/v1/datasets?cursor=eyJrIjoxfQ", "cursor"),
        ("/v1/datasets?unknown=1", "unknown"),
        ("/v1/datasets/0", "dataset_id"),
        ("/v1/datasets/9223372036854775808", "dataset_id"),
        ("/v1/datasets?location_id=-4", "location_id"),
        ("/v1/datasets?search=", "search"),
        ("/v1/datasets?search=a%00b", "search"),
        ("/v1/runs?started_since=2024-06-01T00:00:00", "started_since"),
        (
            "/v1/runs?started_since=2024-06-02T00:00:00Z&started_until=2024-06-01T00:00:00Z",
            "started_since",
        ),
        ("/v1/datasets/by-name?namespace=x", "name"),
        ("/v1/runs?started_since=9999-12-31T23:00:00-05:00", "started_since"),
        ("/v1/operations?created_until=0001-01-01T00:30:00%2B05:00", "created_until"),
    ],
)
async def test_bad_input_is_a_422_problem(
    api_client: httpx.AsyncClient, path: str, where: str
) -> None:
    response = await api_client.get(path)
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert (body["status"], body["title"]) == (422, "Invalid request")
    assert where in body["detail"]
    assert body["type"].startswith("https://")
    assert body["request_id"] == response.headers["x-request-id"]


async def test_cursor_of_another_endpoint_or_filter_is_rejected(
    api_client: httpx.AsyncClient, world: World
) -> None:
    page = (await api_client.get("/v1/runs", params={"limit": 1})).json()
    assert page["next_cursor"]
    elsewhere = await api_client.get("/v1/operations", params={"cursor": page["next_cursor"]})
    assert elsewhere.status_code == 422
    assert "another endpoint" in elsewhere.json()["detail"]
    refiltered = await api_client.get(
        "/v1/runs", params={"cursor": page["next_cursor"], "status": "FAILED"}
    )
    assert refiltered.status_code == 422
    assert "different filters" in refiltered.json()["detail"]


async def test_unknown_route_and_method_are_problems(api_client: httpx.AsyncClient) -> None:
    missing = await api_client.get("/v1/nothing-here")
    assert (missing.status_code, missing.headers["content-type"]) == (404, PROBLEM)
    wrong = await api_client.delete("/v1/datasets")
    assert (wrong.status_code, wrong.headers["content-type"]) == (405, PROBLEM)


@pytest.mark.parametrize("path", ["/v1/datasets/%2F", "/v1/datasets/", "/v1/lineage/"])
async def test_a_path_ending_in_a_slash_is_a_404_not_a_redirect(
    api_client: httpx.AsyncClient, path: str
) -> None:
    # A key "/" escaped in the path once came back as a 307 (the fuzz test found it).
    response = await api_client.get(path)
    assert (response.status_code, response.headers["content-type"]) == (404, PROBLEM)


async def test_request_id_is_echoed_or_made(api_client: httpx.AsyncClient) -> None:
    given = await api_client.get("/health", headers={"X-Request-ID": "trace-42"})
    assert given.headers["x-request-id"] == "trace-42"
    made = await api_client.get("/health", headers={"X-Request-ID": "bad id\twith spaces"})
    assert made.headers["x-request-id"] != "bad id\twith spaces"
    assert len(made.headers["x-request-id"]) == 32


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    stream = io.StringIO()
    configure_logging(LogSettings(level="INFO", json_format=True), stream)
    yield stream
    root.handlers[:], root.level = saved


async def test_every_log_line_carries_the_request_id(
    database_url: str, log_stream: io.StringIO
) -> None:
    app = create_app(server_settings(database_url))

    @app.get("/test-only/log")
    async def log_something() -> dict[str, bool]:
        logging.getLogger("somewhere.deep").warning("working on it")
        return {"ok": True}

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        await client.get("/test-only/log", headers={"X-Request-ID": "req-7"})
        await client.get("/v1/runs/nope", headers={"X-Request-ID": "req-8"})
    await app.state.databases.dispose()
    # httpx logs on the client side of the test, outside any request.
    lines = [orjson.loads(line) for line in log_stream.getvalue().splitlines()]
    lines = [line for line in lines if line["logger"] != "httpx"]
    assert {(line["logger"], line["request_id"]) for line in lines} >= {
        ("somewhere.deep", "req-7"),
        ("threadline.server.access", "req-7"),
        ("threadline.server.access", "req-8"),
    }
    assert all(line["request_id"] in {"req-7", "req-8"} for line in lines)


async def test_cors(database_url: str) -> None:
    settings = server_settings(database_url, server={"cors_origins": ["https://ui.example"]})
    async with open_client(settings) as client:
        preflight = await client.options(
            "/v1/datasets",
            headers={"Origin": "https://ui.example", "Access-Control-Request-Method": "GET"},
        )
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://ui.example"
        simple = await client.get("/health", headers={"Origin": "https://ui.example"})
        assert simple.headers["access-control-allow-origin"] == "https://ui.example"
        assert "x-request-id" in simple.headers["access-control-expose-headers"].lower()
        other = await client.get("/health", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers
    async with open_client(server_settings(database_url)) as client:
        off = await client.get("/health", headers={"Origin": "https://ui.example"})
        assert "access-control-allow-origin" not in off.headers


async def test_slow_request_is_a_504_problem(database_url: str) -> None:
    app = create_app(server_settings(database_url, server={"request_timeout_s": 0.05}))

    @app.get("/test-only/slow")
    async def slow() -> dict[str, bool]:
        await asyncio.sleep(1)
        return {"ok": True}

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/test-only/slow")
    await app.state.databases.dispose()
    assert (response.status_code, response.headers["content-type"]) == (504, PROBLEM)


@pytest.mark.parametrize(
    ("table", "path"),
    [
        # Lineage statements run on asyncpg itself, the catalogue's through SQLAlchemy:
        # both kinds of error must come out as the same problem.
        ("dataset_symlink", "/v1/lineage?start_node_type=DATASET&start_node_id=1"),
        ("dataset", "/v1/datasets"),
    ],
)
async def test_statement_timeout_is_a_504_problem(database_url: str, table: str, path: str) -> None:
    settings = server_settings(database_url)
    database = settings.database.model_copy(update={"statement_timeout_ms": 300})
    # A lock held elsewhere makes the request's first statement wait past its timeout.
    locker = await asyncpg.connect(sync_url(database_url))
    try:
        async with locker.transaction():
            await locker.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
            async with open_client(settings.model_copy(update={"database": database})) as client:
                response = await client.get(path)
    finally:
        await locker.close()
    assert (response.status_code, response.headers["content-type"]) == (504, PROBLEM)
    assert response.json()["type"].endswith("/query-timeout")


async def test_lineage_survives_its_pooled_connections_being_closed(database_url: str) -> None:
    """The lineage engine checks its connections without a ping (server.deps): one the
    server closed since it was pooled (a restart, a terminated backend) is replaced."""
    path = "/v1/lineage?start_node_type=DATASET&start_node_id=987654321"
    async with open_client(server_settings(database_url)) as client:
        assert (await client.get(path)).status_code == 404  # pools a connection
        admin = await asyncpg.connect(sync_url(database_url))
        try:
            ended = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE application_name = 'threadline-server-lineage'"
                " AND datname = current_database()"
            )
        finally:
            await admin.close()
        assert ended >= 1
        await asyncio.sleep(0.5)  # the event loop reads the server's goodbye
        response = await client.get(path)
    assert response.status_code == 404, response.text


async def test_health(api_client: httpx.AsyncClient, database_url: str) -> None:
    assert (await api_client.get("/health")).json() == {"status": "ok", "database": "ok"}
    down = database_url.replace(database_url.split("@")[-1].split("/")[0], "127.0.0.1:1")
    async with open_client(server_settings(down)) as client:
        response = await client.get("/health")
    assert (response.status_code, response.headers["content-type"]) == (503, PROBLEM)
    assert "database ping failed" in response.json()["detail"]


def test_committed_openapi_matches_the_code() -> None:
    document = create_app(ServerSettings()).openapi()
    committed = orjson.loads(OPENAPI.read_bytes())
    assert committed == document, "docs/openapi.json drifted: run scripts/dump_openapi.py"


async def test_openapi_is_served(api_client: httpx.AsyncClient) -> None:
    served = (await api_client.get("/openapi.json")).json()
    assert served == orjson.loads(OPENAPI.read_bytes())


NASTY = [
    "%",
    "_",
    "\\",
    "'; DROP TABLE dataset; --",
    "ö/ä.ß-ü",
    "数据集",
    "🙂 orders",
    "a" * 200,
    "\u200b",
    "..//..",
    "[a-z]+",
]


@pytest.mark.parametrize("text", NASTY)
@pytest.mark.parametrize("kind", ["datasets", "jobs", "locations"])
async def test_any_search_text_is_answered(
    api_client: httpx.AsyncClient, kind: str, text: str
) -> None:
    response = await api_client.get(f"/v1/{kind}", params={"search": text})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("text", [*NASTY[:8], "eyJrIjoiZGF0YXNldHMuaWQiLCJmIjoiIiwidiI6W119"])
async def test_any_cursor_text_is_a_422(api_client: httpx.AsyncClient, text: str) -> None:
    response = await api_client.get("/v1/datasets", params={"cursor": text})
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM
