"""write: one transaction per batch; set-based upserts in foreign-key order.

Order: locations (alias resolution and merges) -> datasets -> symlinks -> jobs
-> users -> schemas -> column sets -> anchors -> runs -> operations -> inputs/outputs ->
column lineage -> declared job lineage. Every statement writes rows sorted by
key (see `consumer.merge`), so concurrent workers lock rows in the same order.
"""

import logging
from datetime import datetime

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.native import native_rekeyer
from consumer.records import Extracted, LocationKey
from consumer.rekey import rekey
from consumer.write import column_sets, dimensions, timeseries
from consumer.write.dimensions import IdCache
from consumer.write.partitions import Partitions, quarters

log = logging.getLogger("threadline.consumer")


class Writer:
    """Writes merged batches; keeps natural-key -> id caches across batches."""

    def __init__(self, engine: AsyncEngine, *, native: bool = True) -> None:
        self.engine = engine
        self.cache = IdCache()
        self.partitions = Partitions()
        # The native rekey when built (and `native`): the same records for a fraction of
        # the CPU, inside the batch's transaction; rekey.py when it is missing or fails.
        self.native_rekey = native_rekeyer() if native else None

    async def write(self, batch: Extracted) -> None:
        """Write one merged batch in one transaction (ids cached only once it commits)."""
        async with self.engine.connect() as sa_conn:
            raw = await sa_conn.get_raw_connection()
            conn: asyncpg.Connection = raw.driver_connection  # type: ignore[assignment]
            await self.partitions.ensure(conn, quarters(_times(batch)))
            try:
                async with conn.transaction():
                    await self._write(conn, batch)
            except BaseException:
                # Ids learnt in a rolled-back transaction may not exist: forget them all.
                self.cache = IdCache()
                raise

    async def _write(self, conn: asyncpg.Connection, batch: Extracted) -> None:
        # New dimension rows are written one worker at a time (dimensions.NEW_ROWS_LOCK);
        # the lock is taken before the first such row, and at most once per transaction.
        locked = dimensions.new_locations(batch, self.cache)
        if locked:
            await conn.execute(dimensions.NEW_ROWS_LOCK)
        if await dimensions.resolve_locations(conn, batch.locations, self.cache):
            # A merge deleted rows that cached ids may point at.
            self.cache = IdCache()
            await dimensions.resolve_locations(conn, batch.locations, self.cache)
        batch = self._canonical(batch)
        if not locked and dimensions.new_dimension_rows(batch, self.cache):
            await conn.execute(dimensions.NEW_ROWS_LOCK)
        await dimensions.resolve_datasets(conn, batch, self.cache)
        await dimensions.write_symlinks(conn, batch, self.cache)
        await dimensions.resolve_jobs(conn, batch, self.cache)
        await dimensions.resolve_users(conn, batch, self.cache)
        await dimensions.resolve_schemas(conn, batch, self.cache)
        await column_sets.write_column_sets(conn, batch, self.cache)
        anchors = await timeseries.anchor(conn, batch)
        sender = timeseries.Sender(conn)
        try:
            await timeseries.write_runs(sender, batch, self.cache, anchors)
            await timeseries.write_operations(sender, batch, anchors)
            await timeseries.write_ios(sender, batch, self.cache, anchors)
            await timeseries.write_column_lineage(sender, batch, self.cache, anchors)
            await timeseries.write_job_datasets(sender, batch, self.cache)
            await sender.done()
        except BaseException:
            await sender.settle()
            raise

    def _canonical(self, batch: Extracted) -> Extracted:
        """Re-key the batch when two of its location keys turned out to be one location."""
        cache = self.cache
        first: dict[int, LocationKey] = {}
        canon: dict[LocationKey, LocationKey] = {}
        for key in sorted(r.key for r in batch.locations):
            location_id = cache.locations[key]
            canon[key] = first.setdefault(location_id, key)
        if all(k == v for k, v in canon.items()):
            return batch
        cache.locations.update({k: cache.locations[v] for k, v in canon.items()})
        if self.native_rekey is not None:
            try:
                return self.native_rekey(batch, canon)
            except Exception:
                log.exception("native rekey failed: re-keying this batch in Python")
        return rekey(batch, canon)


def _times(batch: Extracted) -> list[datetime]:
    return [r.created_at for r in batch.runs] + [o.created_at for o in batch.operations]
