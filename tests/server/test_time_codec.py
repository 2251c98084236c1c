"""The lineage connections' timestamptz codec: the native decoder of the binary form gives the
datetimes PostgreSQL's text form gives through `datetime.fromisoformat`, and the encoder
sends what PostgreSQL reads back unchanged."""

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from server.app import LINEAGE_TUNING
from server.lineage import native, sql

FIRST = datetime(1, 1, 1, tzinfo=UTC)
LAST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
EDGES = [
    FIRST,
    LAST,
    sql.PG_EPOCH,
    sql.PG_EPOCH - timedelta(microseconds=1),
    datetime(1970, 1, 1, tzinfo=UTC),
    datetime(1900, 2, 28, 23, 59, 59, 999_999, tzinfo=UTC),
    datetime(2000, 2, 29, 12, tzinfo=UTC),
    datetime(2024, 2, 29, 0, 0, 0, 1, tzinfo=UTC),
    datetime(2026, 1, 5, 19, 43, 47, 582_000, tzinfo=UTC),
]


def _times(count: int) -> list[datetime]:
    rng = random.Random(11)
    span = (LAST - FIRST) // timedelta(microseconds=1)
    return EDGES + [FIRST + timedelta(microseconds=rng.randrange(span)) for _ in range(count)]


@pytest.mark.unit
def test_the_native_decoder_reads_what_the_encoder_writes() -> None:
    decode = native.time_decoder()
    assert decode is not None  # the module is installed: the server decodes natively
    assert sql.DECODE_BINARY_TIME is not None
    for value in _times(20_000):
        made = decode(sql.encode_binary_time(value))
        assert made == value
        assert made.tzinfo is UTC
        assert made.isoformat() == value.isoformat()


@pytest.mark.unit
def test_a_naive_time_is_encoded_as_utc() -> None:
    aware = datetime(2026, 1, 5, 19, 43, 47, 582_000, tzinfo=UTC)
    assert sql.encode_binary_time(aware.replace(tzinfo=None)) == sql.encode_binary_time(aware)


@pytest.mark.unit
def test_the_native_decoder_refuses_what_datetime_cannot_hold() -> None:
    decode = native.time_decoder()
    assert decode is not None
    for infinite in (b"\x7f\xff\xff\xff\xff\xff\xff\xff", b"\x80\x00\x00\x00\x00\x00\x00\x00"):
        with pytest.raises(ValueError, match="infinite"):
            decode(infinite)
    with pytest.raises(ValueError, match="8 bytes"):
        decode(b"\x00" * 7)
    after_last = (LAST - sql.PG_EPOCH) // timedelta(microseconds=1) + 1
    past_9999 = after_last.to_bytes(8, "big", signed=True)
    with pytest.raises(ValueError, match="year"):
        decode(past_9999)


@pytest.fixture
async def connection(database_url: str) -> AsyncIterator[asyncpg.Connection]:
    url = database_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(url, server_settings=LINEAGE_TUNING)
    yield conn
    await conn.close()


@pytest.mark.db
async def test_times_through_postgresql_are_the_text_forms(connection: asyncpg.Connection) -> None:
    """Each value sent as a parameter comes back as itself, and as the datetime its text
    form gives (the codec the server used before, and without the module)."""
    times = _times(2_000)
    await sql.set_time_codec(connection)
    rows = await connection.fetch(
        "SELECT t, t::text AS text FROM unnest($1::timestamptz[]) AS t", times
    )
    assert [row["t"] for row in rows] == times
    assert [row["t"] for row in rows] == [datetime.fromisoformat(row["text"]) for row in rows]
