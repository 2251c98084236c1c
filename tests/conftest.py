"""Session-wide fixtures: a fresh, migrated PostgreSQL database per test run."""

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from shared.migrate import alembic_config, grant_reader
from shared.models import Base
from tests.services import Services, services


def with_database(url: str, database: str, *, driver: str = "postgresql+asyncpg") -> str:
    parts = urlsplit(url)
    return urlunsplit((driver, parts.netloc, f"/{database}", parts.query, ""))


def with_credentials(url: str, user: str, password: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, f"{user}:{password}@{host}", parts.path, parts.query, ""))


async def _admin(url: str, sql: str) -> None:
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


def create_database(svc: Services, name: str) -> str:
    """CREATE DATABASE name, migrate it to head, grant the reader role; return its URL."""
    asyncio.run(_admin(svc.pg_admin_url, f'CREATE DATABASE "{name}"'))
    url = with_database(svc.pg_admin_url, name)
    command.upgrade(alembic_config(url), "head")
    if svc.reader_user:
        asyncio.run(grant_reader(url, svc.reader_user))
    return url


def drop_database(svc: Services, name: str) -> None:
    asyncio.run(_admin(svc.pg_admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def test_services() -> Services:
    return services()


@pytest.fixture(scope="session")
def database_url(test_services: Services) -> Iterator[str]:
    """A fresh database for this test run, migrated with Alembic to head."""
    name = f"threadline_test_{uuid.uuid4().hex[:12]}"
    url = create_database(test_services, name)
    yield url
    drop_database(test_services, name)


@pytest.fixture(scope="session")
async def engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    eng = create_async_engine(database_url, pool_size=5, max_overflow=5)
    yield eng
    await eng.dispose()


DATA_TABLES = [t.name for t in Base.metadata.sorted_tables]


async def truncate_all(engine: AsyncEngine) -> None:
    """Empty every model table (pipeline tests start from nothing)."""
    async with engine.begin() as conn:
        await conn.execute(text(f"TRUNCATE {', '.join(DATA_TABLES)} RESTART IDENTITY CASCADE"))


@pytest.fixture
async def clean_engine(engine: AsyncEngine) -> AsyncEngine:
    await truncate_all(engine)
    return engine


TIERS = ("unit", "db", "kafka", "e2e")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test belongs to exactly one tier; an untiered test would be silently deselected."""
    untiered = [i.nodeid for i in items if not any(i.get_closest_marker(t) for t in TIERS)]
    if untiered:
        raise pytest.UsageError(f"tests without a tier marker {TIERS}: {untiered[:10]}")
