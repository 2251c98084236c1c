"""Symlinks (a path and the table it backs) are stored once; a batch sends only new pairs."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import orjson
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import Pipeline
from consumer.records import Extracted
from consumer.retry import Backoff
from consumer.write import Writer, dimensions

pytestmark = pytest.mark.db

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
HDFS, HIVE = "hdfs://nn1:8020", "hive://metastore:9083"


def event(minute: int, *tables: str) -> bytes:
    """A COMPLETE event writing each table's warehouse path, symlinked to the table."""
    outputs = [
        {
            "namespace": HDFS,
            "name": f"/warehouse/{table}",
            "facets": {
                "symlinks": {"identifiers": [{"namespace": HIVE, "name": table, "type": "TABLE"}]}
            },
        }
        for table in tables
    ]
    return orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": (T0 + timedelta(minutes=minute)).isoformat(),
            "producer": "https://example.com/threadline-tests",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": "tests", "name": "writer"},
            "outputs": outputs,
        }
    )


SYMLINKS = """
SELECT f.name, t.name, s.type FROM dataset_symlink s
JOIN dataset f ON f.id = s.from_dataset_id JOIN dataset t ON t.id = s.to_dataset_id
ORDER BY 1, 2
"""


async def test_known_symlinks_are_not_sent_again(
    clean_engine: AsyncEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = Writer(clean_engine)
    pipeline = Pipeline(writer, max_event_bytes=1 << 20, backoff=Backoff())

    async def run(*payloads: bytes) -> None:
        result = await pipeline.run(list(payloads))
        assert not result.rejects, result.rejects

    await run(event(0, "db.orders"))
    assert len(writer.cache.symlinks) == 2  # the path -> table pair and the table -> path pair

    sent: list[int] = []
    execute = asyncpg.Connection.execute

    async def recording(self: asyncpg.Connection, sql: str, *args: Any, **kwargs: Any) -> str:
        if "dataset_symlink" in sql:
            sent.append(len(args[0]))
        return await execute(self, sql, *args, **kwargs)

    monkeypatch.setattr(asyncpg.Connection, "execute", recording)
    await run(event(1, "db.orders"))
    assert sent == []  # nothing new: no statement at all
    await run(event(2, "db.orders", "db.customers"))
    assert sent == [2]  # only the new table's pair, both ways
    async with clean_engine.connect() as conn:
        stored = [tuple(r) for r in (await conn.execute(text(SYMLINKS))).all()]
    assert stored == [
        ("/warehouse/db.customers", "db.customers", "METASTORE"),
        ("/warehouse/db.orders", "db.orders", "METASTORE"),
        ("db.customers", "/warehouse/db.customers", "WAREHOUSE"),
        ("db.orders", "/warehouse/db.orders", "WAREHOUSE"),
    ]


async def test_a_rolled_back_batch_forgets_its_symlinks(clean_engine: AsyncEngine) -> None:
    """Pairs learnt in a transaction that did not commit may not exist: sent again."""
    writer = Writer(clean_engine)
    pipeline = Pipeline(writer, max_event_bytes=1 << 20, backoff=Backoff())
    prepared = await pipeline.prepare([event(0, "db.orders")])
    assert prepared.merged is not None
    merged: Extracted = prepared.merged

    async def failing(conn: asyncpg.Connection, batch: Extracted) -> None:
        await dimensions.resolve_locations(conn, batch.locations, writer.cache)
        await dimensions.resolve_datasets(conn, batch, writer.cache)
        await dimensions.write_symlinks(conn, batch, writer.cache)
        raise RuntimeError("the batch failed after its symlinks")

    original = writer._write
    writer._write = failing  # type: ignore[method-assign]
    with pytest.raises(RuntimeError):
        await writer.write(merged)
    assert writer.cache.symlinks == set()
    writer._write = original  # type: ignore[method-assign]
    await pipeline.write(prepared)
    async with clean_engine.connect() as conn:
        assert len((await conn.execute(text(SYMLINKS))).all()) == 2
