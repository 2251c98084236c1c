"""Time-series rows (runs, operations, inputs, outputs, column lineage) and their anchors."""

import asyncio
from dataclasses import astuple
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg
import orjson

from consumer.merge import OPERATION_FIELDS, RUN_FIELDS, field_times, schema_time
from consumer.records import Checkpoints, Extracted
from consumer.write import sql
from consumer.write.dimensions import IdCache
from shared.enums import IODirection


async def anchor(conn: asyncpg.Connection, batch: Extracted) -> dict[UUID, datetime]:
    """created_at of every non-UUIDv7 run/operation id: the earliest eventTime ever seen.

    When the anchor moves earlier, rows already stored under the later time are
    moved (rehomed) so that every event of one run lands in the same row.
    """
    earliest: dict[UUID, datetime] = {}
    pairs = [(r.id, r.created_at) for r in batch.runs]
    pairs += [(o.id, o.created_at) for o in batch.operations]
    for entity, at in pairs:
        if entity.version != 7:  # a UUIDv7 carries its own time
            earliest[entity] = min(at, earliest.get(entity, at))
    if not earliest:
        return {}
    ids = sorted(earliest)  # one lock order for every worker
    inserted = await conn.fetch(sql.INSERT_ANCHORS, ids, [earliest[i] for i in ids])
    final = {row["id"]: earliest[row["id"]] for row in inserted}
    known = [i for i in ids if i not in final]
    if known:
        stored = {r["id"]: r["created_at"] for r in await conn.fetch(sql.LOCK_ANCHORS, known)}
        final.update((i, min(earliest[i], stored[i])) for i in known)
        await _move(conn, [(i, earliest[i], stored[i]) for i in known if earliest[i] < stored[i]])
    return final


async def _move(conn: asyncpg.Connection, moves: list[tuple[UUID, datetime, datetime]]) -> None:
    """Move anchors (id, new time, old time) earlier, and every row stored under the old."""
    if not moves:
        return
    ids, times, old = (list(column) for column in zip(*moves, strict=True))
    await conn.execute(sql.MOVE_ANCHORS, ids, times)
    for statement in sql.REHOME:
        await conn.execute(statement, ids, times, old)


class Sender:
    """A transaction's time-series statements, run one after another as before, with the
    next one's rows built while PostgreSQL runs the previous one.

    Building a statement's rows (tuples, then one orjson document) is ~4 us per benchmark
    event over the five statements, ~8 ms of an 1,800-event batch; run in turn with the
    statements, it left PostgreSQL idle. Nothing else changes: one statement at a time on
    the connection, in the same order, in the same transaction; an error is raised by the
    next `send` or by `done`.
    """

    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn
        self._running: asyncio.Task[str] | None = None

    async def send(self, statement: str, *args: Any) -> None:
        """Start `statement` once the previous one has finished."""
        await self.done()
        self._running = asyncio.ensure_future(self._conn.execute(statement, *args))
        # One step of the task sends the statement; the caller then builds the next rows.
        await asyncio.sleep(0)

    async def done(self) -> None:
        """Wait for the statement started last; its error is raised here."""
        running, self._running = self._running, None
        if running is not None:
            await running

    async def settle(self) -> None:
        """Wait for the statement started last, its outcome dropped: the caller is raising
        another error, and the connection must be idle before the transaction rolls back."""
        running, self._running = self._running, None
        if running is not None:
            await asyncio.gather(running, return_exceptions=True)


# A row's partition time: its id's anchor, else (every UUIDv7 id, so nearly always) its own
# created_at. Written inline in each row builder as
#     anchors.get(id, created_at) if anchors else created_at
# because a UUID's hash is Python code: the lookup cost ~1.5 CPU-us per benchmark event
# though a UUIDv7 stream has no anchors at all.


async def write_runs(
    sender: Sender, batch: Extracted, cache: IdCache, anchors: dict[UUID, datetime]
) -> None:
    runs = batch.runs
    if not runs:
        return
    jobs, users = cache.jobs, cache.users
    rows = [
        (
            (anchors.get(r.id, r.created_at) if anchors else r.created_at),
            r.id,
            jobs[r.job][0],
            r.parent_run_id,
            r.status,
            r.started_at,
            r.ended_at,
            users.get(r.user) if r.user else None,
            r.start_reason,
            r.ended_reason,
            r.external_id,
            r.attempt,
            r.running_log_url,
            r.persistent_log_url,
            r.event_time,
            r.root_run_id,
            _checkpoints(r.checkpoints),
            *field_times(r, RUN_FIELDS),
        )
        for r in runs
    ]
    await sender.send(sql.UPSERT_RUNS, _document(rows))


def _document(rows: list[tuple[Any, ...]]) -> str:
    """The rows of one `sql.json_rows` statement. Every time here is aware (UTC);
    OPT_NAIVE_UTC keeps a naive one from being read in the session's time zone."""
    return orjson.dumps(rows, option=orjson.OPT_NAIVE_UTC).decode()


def _checkpoints(value: Checkpoints | None) -> tuple[int, ...] | None:
    """[total, completed, failed, restored, in_progress]: jsonb arrays of equal length
    compare element by element, so GREATEST in SQL picks the snapshot merge() picks."""
    return None if value is None else astuple(value)


async def write_operations(sender: Sender, batch: Extracted, anchors: dict[UUID, datetime]) -> None:
    ops = batch.operations
    if not ops:
        return
    rows = [
        (
            (anchors.get(o.id, o.created_at) if anchors else o.created_at),
            o.id,
            o.run_id,
            o.name,
            o.type,
            o.status,
            o.position,
            o.group,
            o.description,
            o.sql_query,
            o.started_at,
            o.ended_at,
            o.event_time,
            o.ended_reason,
            *field_times(o, OPERATION_FIELDS),
        )
        for o in ops
    ]
    await sender.send(sql.UPSERT_OPERATIONS, _document(rows))


async def write_ios(
    sender: Sender, batch: Extracted, cache: IdCache, anchors: dict[UUID, datetime]
) -> None:
    datasets, jobs, schemas = cache.datasets, cache.jobs, cache.schemas
    for direction, statement in (
        (IODirection.INPUT, sql.UPSERT_INPUTS),
        (IODirection.OUTPUT, sql.UPSERT_OUTPUTS),
    ):
        rows = [
            (
                (anchors.get(r.operation_id, r.created_at) if anchors else r.created_at),
                r.operation_id,
                datasets[r.dataset],
                r.run_id,
                jobs[r.job][0],
                schemas.get(r.schema) if r.schema else None,
                schema_time(r),
                r.num_rows,
                r.num_bytes,
                r.num_files,
                r.event_time,
                *((r.output_types,) if direction == IODirection.OUTPUT else ()),
            )
            for r in batch.ios
            if r.direction == direction
        ]
        if rows:
            await sender.send(statement, _document(rows))


async def write_column_lineage(
    sender: Sender, batch: Extracted, cache: IdCache, anchors: dict[UUID, datetime]
) -> None:
    if not batch.column_lineage:
        return
    datasets, jobs = cache.datasets, cache.jobs
    rows = [
        (
            (anchors.get(r.operation_id, r.created_at) if anchors else r.created_at),
            r.operation_id,
            datasets[r.source],
            datasets[r.target],
            r.columns_id,
            r.run_id,
            jobs[r.job][0],
            r.event_time,
        )
        for r in batch.column_lineage
    ]
    await sender.send(sql.UPSERT_COLUMN_LINEAGE, _document(rows))


async def write_job_datasets(sender: Sender, batch: Extracted, cache: IdCache) -> None:
    rows = batch.job_datasets
    if not rows:
        return
    await sender.send(
        sql.UPSERT_JOB_DATASETS,
        [cache.jobs[r.job][0] for r in rows],
        [cache.datasets[r.dataset] for r in rows],
        [r.direction for r in rows],
        [r.first_seen for r in rows],
        [r.last_seen for r in rows],
    )
