"""A real `threadline-server` process over its own database, for property tests of the API.

The database is separate from the session's test database because the fuzzer also
calls the location admin endpoints (PATCH, POST, DELETE, merge): the admin URL is set,
so those endpoints answer instead of 503, and whatever they change stays in this
database, which is dropped at the end.
"""

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from consumer.ingest import ingest_payloads
from tests.served import server_over_own_database
from tests.server.world import world_batches
from tests.services import Services

FUZZ_TOKEN = "fuzz-token-" + uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class ServedApi:
    base_url: str
    database_url: str
    log: Path


async def _seed(url: str) -> None:
    engine = create_async_engine(url)
    try:
        for batch in world_batches():
            result = await ingest_payloads(engine, batch)
            assert not result.rejects, result.rejects
    finally:
        await engine.dispose()


def _settings(url: str) -> dict[str, str]:
    """The admin endpoints on (they write to the fuzz database as its owner), a request time
    limit, and bearer tokens."""
    return {
        "THREADLINE__SERVER__ADMIN_DATABASE_URL": url,
        "THREADLINE__SERVER__REQUEST_TIMEOUT_S": os.environ.get("THREADLINE_FUZZ_TIMEOUT_S", "20"),
        "THREADLINE__AUTH__ENABLED": "true",
        "THREADLINE__AUTH__STATIC_TOKENS": f'["{FUZZ_TOKEN}"]',
    }


@pytest.fixture(scope="session")
def served_api(
    test_services: Services, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedApi]:
    """The server as deployed (read-only role) plus the admin URL, on a free loopback port."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    with server_over_own_database(test_services, "threadline_fuzz", _seed, log, _settings) as (
        base_url,
        url,
    ):
        yield ServedApi(base_url, url, log)
