"""Request dependencies: a database session and the settings, taken from the app being served.

`create_app` builds the engines and puts them on `app.state`; nothing here is a module-level
global, so two apps (tests: writer and reader) can run side by side in one process.
"""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Annotated, cast

import asyncpg
from fastapi import Depends, Request
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker

from server.errors import AdminUnavailableError
from server.settings import ServerSettings


@dataclass(slots=True)
class Held:
    """How many of the lineage engine's `limit` connections requests hold or wait for. Only
    the event loop's thread changes it, so a check and the change after it agree."""

    limit: int
    count: int = 0


@dataclass(frozen=True, slots=True)
class Databases:
    """The read-only engines (catalogue; lineage, tuned for graph walks) and the optional
    writing one for admin."""

    reader: AsyncEngine
    reader_sessions: async_sessionmaker[AsyncSession]
    lineage: AsyncEngine
    admin: AsyncEngine | None
    lineage_held: Held

    async def dispose(self) -> None:
        for engine in (self.reader, self.lineage, self.admin):
            if engine is not None:
                await engine.dispose()


def _databases(request: Request) -> Databases:
    return cast(Databases, request.app.state.databases)


# Dependencies are coroutines even where they do not await: FastAPI runs a plain
# `def` dependency in its thread pool, a hop that cost ~1-2 ms on every request.
async def get_settings(request: Request) -> ServerSettings:
    return cast(ServerSettings, request.app.state.settings)


async def get_session(request: Request) -> AsyncIterator[AsyncSession]:
    """A session on the read-only engine; its transaction is rolled back at the end."""
    async with _databases(request).reader_sessions() as session:
        yield session


@asynccontextmanager
async def lineage_connection(request: Request) -> AsyncIterator[asyncpg.Connection]:
    """The asyncpg connection of a pooled connection of the read-only engine tuned for
    lineage graph walks (autocommit; see server.lineage.sql for why not a session).

    A context manager, not a dependency: server.lineage.routes says why."""
    async with _counted_lineage_connection(_databases(request)) as conn:
        yield conn


@asynccontextmanager
async def spare_lineage_connection(request: Request) -> AsyncIterator[asyncpg.Connection | None]:
    """Another lineage connection for the same request if one is idle now, else None: never
    one that this or another request would wait for (server.lineage.prefetch).

    Every lineage connection a request takes comes through here or `lineage_connection`,
    which count them before the pool is asked (the start-up warm-up holds them all before
    any request): while fewer are counted than it keeps, the pool has one to give at once,
    and a request that would wait for one is already counted."""
    databases = _databases(request)
    if databases.lineage_held.count >= databases.lineage_held.limit:
        yield None
        return
    async with _counted_lineage_connection(databases) as conn:
        yield conn


@asynccontextmanager
async def _counted_lineage_connection(databases: Databases) -> AsyncIterator[asyncpg.Connection]:
    """A lineage connection, counted in `lineage_held` from before the pool is asked until
    it is back."""
    held = databases.lineage_held
    held.count += 1
    try:
        async with databases.lineage.connect() as conn:
            yield await _open_driver_connection(conn, held.limit)
    finally:
        held.count -= 1


async def _open_driver_connection(conn: AsyncConnection, pooled: int) -> asyncpg.Connection:
    """The connection's asyncpg connection, replaced while it is closed.

    Instead of the pool's ping (a round trip, ~0.4 ms of a ~9 ms graph request): asyncpg
    marks a connection closed as soon as the event loop reads the server's goodbye, which
    a PostgreSQL restart or a terminated backend sends to every idle pooled connection.
    Each closed one is dropped from the pool; at most every pooled one can be."""
    for _ in range(pooled + 1):
        raw = await conn.get_raw_connection()
        # SQLAlchemy types the driver's connection loosely; on this engine it is asyncpg's.
        driver = cast(asyncpg.Connection, raw.driver_connection)
        if not driver.is_closed():
            return driver
        await conn.invalidate()
    raise ConnectionError("no open database connection after replacing every pooled one")


async def get_admin_engine(request: Request) -> AsyncEngine:
    engine = _databases(request).admin
    if engine is None:
        raise AdminUnavailableError
    return engine


SessionDep = Annotated[AsyncSession, Depends(get_session)]
SettingsDep = Annotated[ServerSettings, Depends(get_settings)]
AdminEngineDep = Annotated[AsyncEngine, Depends(get_admin_engine)]
