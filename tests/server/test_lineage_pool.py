"""The lineage engine keeps every connection it opens: a used connection has the lineage
statements prepared, a fresh one prepares them again (server.app.create_lineage_engine)."""

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from server.app import create_lineage_engine
from shared.settings import DatabaseSettings

pytestmark = pytest.mark.db


@pytest.fixture
async def lineage_engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    settings = DatabaseSettings(url=SecretStr(database_url), pool_size=2, max_overflow=3)
    engine = create_lineage_engine(settings, "threadline-test-lineage-pool")
    yield engine
    await engine.dispose()


async def _backends_at_once(engine: AsyncEngine, count: int) -> set[int]:
    """The backend pids of `count` connections held at the same time."""
    held = asyncio.Event()
    pids: list[int] = []

    async def hold() -> None:
        async with engine.connect() as conn:
            pids.append((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())
            if len(pids) == count:
                held.set()
            await held.wait()

    await asyncio.wait_for(asyncio.gather(*(hold() for _ in range(count))), timeout=30)
    return set(pids)


async def test_connections_past_the_pool_size_are_kept(lineage_engine: AsyncEngine) -> None:
    first = await _backends_at_once(lineage_engine, 5)
    assert len(first) == 5
    assert lineage_engine.pool.checkedin() == 5  # type: ignore[attr-defined]
    # Five clients again: the same five backends, none closed and opened anew.
    assert await _backends_at_once(lineage_engine, 5) == first


async def test_a_request_past_the_kept_connections_waits_for_one(
    lineage_engine: AsyncEngine,
) -> None:
    first = await _backends_at_once(lineage_engine, 5)
    release = asyncio.Event()
    ready = asyncio.Event()
    busy: list[int] = []

    async def hold() -> None:
        async with lineage_engine.connect() as conn:
            busy.append((await conn.execute(text("SELECT pg_backend_pid()"))).scalar_one())
            if len(busy) == 5:
                ready.set()
            await release.wait()

    holders = asyncio.gather(*(hold() for _ in range(5)))
    await asyncio.wait_for(ready.wait(), timeout=30)
    sixth = asyncio.ensure_future(_backends_at_once(lineage_engine, 1))
    await asyncio.sleep(0.3)
    assert not sixth.done()  # no sixth connection opened: it waits
    release.set()
    await holders
    assert await asyncio.wait_for(sixth, timeout=30) <= first
