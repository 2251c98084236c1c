"""Workers that start at once on the same new locations, datasets and jobs do not deadlock.

Two consumers of one group read different partitions of the same stream, so their first
batches bring the same new dimension rows (the DAGs share tables and jobs). Written at the
same time, those batches waited on each other's uncommitted rows in different statements
and PostgreSQL cancelled one of them as a deadlock (after deadlock_timeout, then retried).
Batches with dimension rows new to their worker are now written one at a time
(`consumer.write.dimensions.NEW_ROWS_LOCK`): no retries, and the tables of one pass.
"""

import asyncio
import zlib

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from benchmarks.generate import ALIAS_GROUPS, generate
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES, Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from consumer.write.dimensions import seed_aliases
from tests.db.dump import differences, dump, empty

pytestmark = pytest.mark.db

BATCH = 150


def partitions(seed: int) -> list[list[bytes]]:
    """The generated stream split in two by its Kafka keys, as two consumers read it."""
    halves: list[list[bytes]] = [[], []]
    pairs, _ = generate(1200, seed, "v7")
    for key, value in pairs:
        halves[zlib.crc32(key) % 2].append(value)
    return halves


async def consume(engine: AsyncEngine, events: list[bytes]) -> int:
    """One worker's batches in turn; the database retries it needed."""
    pipeline = Pipeline(Writer(engine), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff())
    retries = 0
    for start in range(0, len(events), BATCH):
        result = await pipeline.run(events[start : start + BATCH])
        assert not result.rejects, result.rejects
        retries += result.db_retries
    return retries


async def fresh(engine: AsyncEngine) -> None:
    await empty(engine)
    async with engine.connect() as sa_conn:
        raw = await sa_conn.get_raw_connection()
        await seed_aliases(raw.driver_connection, ALIAS_GROUPS)  # type: ignore[arg-type]
        await sa_conn.commit()


@pytest.mark.parametrize("seed", range(3))
async def test_two_workers_starting_together_neither_deadlock_nor_differ(
    fast_engine: AsyncEngine, seed: int
) -> None:
    halves = partitions(seed)
    assert all(halves)
    await fresh(fast_engine)
    await consume(fast_engine, halves[0] + halves[1])
    reference = await dump(fast_engine)
    await fresh(fast_engine)
    retries = await asyncio.gather(*(consume(fast_engine, half) for half in halves))
    assert retries == [0, 0]
    got = await dump(fast_engine)
    assert got == reference, "\n".join(differences(reference, got))
