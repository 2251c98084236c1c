"""API clients over `create_app` for the server tests (the lineage tests use them too).

- `api_client`: the app over the test database with the owner role, admin endpoints
  enabled on the same URL.
- `reader_api_client`: the app as deployed: read-only role `threadline_reader`, no admin URL.
- `open_client(settings)`: any other configuration (auth, CORS, small pages...).

httpx's ASGITransport runs no lifespan, so the engines are disposed here at teardown.
"""

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from consumer.ingest import ingest_payloads
from server.app import create_app
from server.settings import ServerOptions, ServerSettings
from shared.settings import DatabaseSettings
from tests.conftest import create_database, drop_database, with_credentials
from tests.server.world import world_batches
from tests.services import HOW_TO_START, Services

BASE_URL = "http://threadline.test"


def server_settings(database_url: str, *, admin: bool = False, **sections: Any) -> ServerSettings:
    """Settings for `database_url`; `admin` also points the admin endpoints at it."""
    options = dict(sections.pop("server", {}))
    if admin:
        options.setdefault("admin_database_url", SecretStr(database_url))
    return ServerSettings(
        database=DatabaseSettings(url=SecretStr(database_url), pool_size=2, max_overflow=2),
        server=ServerOptions(**options),
        **sections,
    )


@asynccontextmanager
async def open_client(settings: ServerSettings) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url=BASE_URL) as client:
            yield client
    finally:
        await app.state.databases.dispose()


def reader_url(database_url: str, services: Services) -> str:
    if not services.reader_user:
        pytest.fail(
            "THREADLINE_SERVICES_READER_USER is not set: the read-only role tests need it; "
            + HOW_TO_START,
            pytrace=False,
        )
    return with_credentials(database_url, services.reader_user, services.reader_password)


# The read-API tests build their worlds once and read them many times, so they get a
# database of their own: pipeline tests elsewhere truncate or add rows in the shared one.
@pytest.fixture(scope="session")
def database_url(test_services: Services) -> Iterator[str]:
    name = f"threadline_server_{uuid.uuid4().hex[:12]}"
    yield create_database(test_services, name)
    drop_database(test_services, name)


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    eng = create_async_engine(database_url, pool_size=5, max_overflow=5)
    yield eng
    await eng.dispose()


@pytest.fixture(scope="session")
async def api_client(database_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with open_client(server_settings(database_url, admin=True)) as client:
        yield client


@pytest.fixture(scope="session")
async def reader_api_client(
    database_url: str, test_services: Services
) -> AsyncIterator[httpx.AsyncClient]:
    settings = server_settings(reader_url(database_url, test_services))
    async with open_client(settings) as client:
        yield client


@dataclass(frozen=True, slots=True)
class World:
    """Ids of the catalogue world (tests/server/world.py) by name."""

    datasets: dict[str, int]
    jobs: dict[str, int]
    locations: dict[str, int]


_NAMES = """
    SELECT '{kind}' AS kind, t.name, t.id FROM {kind} AS t
    JOIN location AS l ON l.id = t.location_id WHERE l.name LIKE 'cat-%'
"""


@pytest.fixture(scope="session")
async def world(engine: AsyncEngine) -> World:
    """The catalogue world, ingested once per run through the consumer pipeline."""
    for batch in world_batches():
        result = await ingest_payloads(engine, batch)
        assert not result.rejects, result.rejects
    async with engine.connect() as conn:
        rows = await conn.execute(
            text(_NAMES.format(kind="dataset") + " UNION ALL " + _NAMES.format(kind="job"))
        )
        found: dict[str, dict[str, int]] = {"dataset": {}, "job": {}}
        for row in rows:
            found[row.kind][row.name] = row.id
        locations = await conn.execute(
            text("SELECT name, id FROM location WHERE name LIKE 'cat-%'")
        )
        return World(found["dataset"], found["job"], {r.name: r.id for r in locations})
