"""Engine and session factories over `DatabaseSettings`."""

from collections.abc import Mapping
from typing import Any

from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from shared.settings import DatabaseSettings


def create_engine(
    settings: DatabaseSettings,
    *,
    application_name: str,
    parameters: Mapping[str, str] | None = None,
    autocommit: bool = False,
    pre_ping: bool = True,
    lifo: bool = False,
) -> AsyncEngine:
    """An asyncpg engine with the configured pool and a per-statement timeout.

    `parameters` are PostgreSQL settings sent in each connection's start-up packet, so
    they cost no round trip. `autocommit` drops the BEGIN and ROLLBACK round trips around
    every session: for readers, whose statements see a fresh snapshot each under READ
    COMMITTED anyway. `pre_ping=False` drops the round trip that tests each connection at
    checkout; the caller must then check the connection itself. `lifo` hands out the
    connection returned last first, instead of the one returned longest ago.
    """
    server_settings = {"application_name": application_name, **(parameters or {})}
    if settings.statement_timeout_ms:
        server_settings["statement_timeout"] = str(settings.statement_timeout_ms)
    options: dict[str, Any] = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
    return create_async_engine(
        settings.url.get_secret_value(),
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_pre_ping=pre_ping,
        pool_use_lifo=lifo,
        echo=settings.echo,
        connect_args={"server_settings": server_settings},
        **options,
    )


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)


def sync_url(url: str) -> str:
    """The same URL for a synchronous driver-less use (psql, Alembic offline)."""
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)
