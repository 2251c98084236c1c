"""Lineage SQL runs on the asyncpg connection itself, not through SQLAlchemy's execution layer.

A graph takes four to ten statements, some of thousands of rows. On top of asyncpg,
SQLAlchemy's execute (compiled-cache lookup, parameter and result processing, Row objects)
cost ~0.3 ms per statement on this project's benchmark machine, about a fifth of a small
graph's server time. The statements stay written with named `:parameters` and are numbered
once, when built, into asyncpg's `$n`; asyncpg prepares each once per connection (its
statement cache), so LINEAGE_TUNING's generic plans apply as before.
"""

import re
import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import asyncpg
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine

from server.lineage import native

Connection = asyncpg.Connection
Record = asyncpg.Record

# `:name`, but not the second colon of a `::type` cast nor a colon after a word character
# (`'12:30'`). The lineage SQL has no other colons (no quoted text holding one).
PARAMETER = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class Statement:
    """SQL with asyncpg's `$n` parameters and the name each number stands for; `uuids`: the
    columns of run and operation ids, which the service hashes (as dict keys)."""

    sql: str
    names: tuple[str, ...]
    uuids: tuple[int, ...] = ()

    @classmethod
    def named(cls, sql: str, uuids: tuple[int, ...] = ()) -> "Statement":
        """Number the `:name` parameters of `sql` in order of first use."""
        names: list[str] = []

        def number(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"

        return cls(PARAMETER.sub(number, sql), tuple(names), uuids)


# asyncpg makes a new UUID object per value, which computes its hash (~0.35 us) the first
# time a dict looks it up: ~17,000 in a large RUN graph. Computed natively as the rows come
# (~0.04 us), when the module is installed (server/lineage/native.py).
FILL_UUID_HASHES = native.uuid_hashes()


async def fetch(conn: Connection, statement: Statement, **params: Any) -> list[Record]:
    """All rows of `statement` with `params` bound by name (a missing one is a KeyError)."""
    rows = await conn.fetch(statement.sql, *(params[name] for name in statement.names))
    if statement.uuids and FILL_UUID_HASHES is not None:
        FILL_UUID_HASHES(rows, statement.uuids)
    return rows


# A large graph carries thousands of timestamps (three per run, two per relation row).
# asyncpg's binary decoder builds each as epoch + timedelta, ~0.9 us here. The native
# module's decoder reads the same 8 bytes in ~0.15 us. Without the module, PostgreSQL's text
# form through `datetime.fromisoformat` (C), which costs PostgreSQL ~0.1 us more per value
# to write (~3 ms of a 2,000-node RUN graph's statements on 1M events). The text form is
# pinned by these settings, sent with every connection's start-up packet (ISO dates, UTC
# offsets: "2026-01-05 10:11:12.123456+00"); every value the consumer stores is a Python
# datetime, so every stored value decodes either way (no BC dates, no infinity).
TEXT_TIMES = {"DateStyle": "ISO", "TimeZone": "UTC"}
DECODE_BINARY_TIME = native.time_decoder()
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def encode_binary_time(value: datetime) -> bytes:
    """`value` as PostgreSQL's binary timestamptz: microseconds since 2000-01-01 UTC. A naive
    value is taken as UTC, as PostgreSQL takes its text under TEXT_TIMES."""
    aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    delta = aware - PG_EPOCH
    return struct.pack("!q", (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds)


async def set_time_codec(conn: asyncpg.Connection) -> None:
    """Decode and encode timestamptz on `conn` (made with TEXT_TIMES) natively from its
    binary form, or without the module through its text form."""
    if DECODE_BINARY_TIME is not None:
        await conn.set_type_codec(
            "timestamptz",
            schema="pg_catalog",
            encoder=encode_binary_time,
            decoder=DECODE_BINARY_TIME,
            format="binary",
        )
        return
    await conn.set_type_codec(
        "timestamptz",
        schema="pg_catalog",
        encoder=datetime.isoformat,
        decoder=datetime.fromisoformat,
        format="text",
    )


def decode_times(engine: AsyncEngine) -> None:
    """Every new connection of `engine` (made with TEXT_TIMES) decodes and encodes
    timestamptz as `set_time_codec` sets it."""

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.run_async(set_time_codec)
