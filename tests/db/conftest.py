"""Fixtures of the database tier."""

from collections.abc import AsyncIterator

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine


@pytest.fixture(scope="module")
async def fast_engine(database_url: str) -> AsyncIterator[AsyncEngine]:
    """The test database without waiting for the WAL flush at each commit (the rows matter)."""
    settings = {"server_settings": {"synchronous_commit": "off", "jit": "off"}}
    fast = create_async_engine(database_url, pool_size=4, connect_args=settings)
    yield fast
    await fast.dispose()
