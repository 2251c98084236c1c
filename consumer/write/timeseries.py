"""Time-series rows (runs, operations, inputs, outputs, column lineage) and their anchors."""

from collections.abc import Sequence
from dataclasses import astuple
from datetime import datetime
from uuid import UUID

import asyncpg
import orjson

from consumer.merge import OPERATION_FIELDS, RUN_FIELDS, Times, field_times, schema_time
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
    ids = sorted(earliest)
    seen = {r["id"]: r["created_at"] for r in await conn.fetch(sql.LOCK_ANCHORS, ids)}
    rows = await conn.fetch(sql.UPSERT_ANCHORS, ids, [earliest[i] for i in ids])
    final = {r["id"]: r["created_at"] for r in rows}
    moved = sorted(i for i, at in final.items() if i not in seen or at < seen[i])
    if moved:
        # Unseen ids are included: another worker may have written rows under its own,
        # later anchor before ours won the LEAST.
        for statement in sql.REHOME:
            await conn.execute(statement, moved, [final[i] for i in moved])
    return final


def _at(anchors: dict[UUID, datetime], entity: UUID, fallback: datetime) -> datetime:
    return anchors.get(entity, fallback)


async def write_runs(
    conn: asyncpg.Connection, batch: Extracted, cache: IdCache, anchors: dict[UUID, datetime]
) -> None:
    runs = batch.runs
    if not runs:
        return
    await conn.execute(
        sql.UPSERT_RUNS,
        [_at(anchors, r.id, r.created_at) for r in runs],
        [r.id for r in runs],
        [cache.jobs[r.job][0] for r in runs],
        [r.parent_run_id for r in runs],
        [r.status for r in runs],
        [r.started_at for r in runs],
        [r.ended_at for r in runs],
        [cache.users.get(r.user) if r.user else None for r in runs],
        [r.start_reason for r in runs],
        [r.ended_reason for r in runs],
        [r.external_id for r in runs],
        [r.attempt for r in runs],
        [r.running_log_url for r in runs],
        [r.persistent_log_url for r in runs],
        [r.event_time for r in runs],
        [r.root_run_id for r in runs],
        [_checkpoints(r.checkpoints) for r in runs],
        *_time_columns([field_times(r, RUN_FIELDS) for r in runs], len(RUN_FIELDS)),
    )


def _time_columns(times: list[Times], count: int) -> list[list[datetime | None]]:
    """Per-record field times as one parameter array per field (unnest() takes columns)."""
    return [[t[i] for t in times] for i in range(count)]


def _checkpoints(value: Checkpoints | None) -> str | None:
    """[total, completed, failed, restored, in_progress]: jsonb arrays of equal length
    compare element by element, so GREATEST in SQL picks the snapshot merge() picks."""
    return None if value is None else orjson.dumps(astuple(value)).decode()


async def write_operations(
    conn: asyncpg.Connection, batch: Extracted, anchors: dict[UUID, datetime]
) -> None:
    ops = batch.operations
    if not ops:
        return
    await conn.execute(
        sql.UPSERT_OPERATIONS,
        [_at(anchors, o.id, o.created_at) for o in ops],
        [o.id for o in ops],
        [o.run_id for o in ops],
        [o.name for o in ops],
        [o.type for o in ops],
        [o.status for o in ops],
        [o.position for o in ops],
        [o.group for o in ops],
        [o.description for o in ops],
        [o.sql_query for o in ops],
        [o.started_at for o in ops],
        [o.ended_at for o in ops],
        [o.event_time for o in ops],
        [o.ended_reason for o in ops],
        *_time_columns([field_times(o, OPERATION_FIELDS) for o in ops], len(OPERATION_FIELDS)),
    )


async def write_ios(
    conn: asyncpg.Connection, batch: Extracted, cache: IdCache, anchors: dict[UUID, datetime]
) -> None:
    for direction, statement in (
        (IODirection.INPUT, sql.UPSERT_INPUTS),
        (IODirection.OUTPUT, sql.UPSERT_OUTPUTS),
    ):
        ios = [r for r in batch.ios if r.direction == direction]
        if not ios:
            continue
        columns: list[Sequence[object]] = [
            [_at(anchors, r.operation_id, r.created_at) for r in ios],
            [r.operation_id for r in ios],
            [cache.datasets[r.dataset] for r in ios],
            [r.run_id for r in ios],
            [cache.jobs[r.job][0] for r in ios],
            [cache.schemas.get(r.schema) if r.schema else None for r in ios],
            [schema_time(r) for r in ios],
            [r.num_rows for r in ios],
            [r.num_bytes for r in ios],
            [r.num_files for r in ios],
            [r.event_time for r in ios],
        ]
        if direction == IODirection.OUTPUT:
            columns.append([r.output_types for r in ios])
        await conn.execute(statement, *columns)


async def write_column_lineage(
    conn: asyncpg.Connection, batch: Extracted, cache: IdCache, anchors: dict[UUID, datetime]
) -> None:
    rows = batch.column_lineage
    if not rows:
        return
    await conn.execute(
        sql.UPSERT_COLUMN_LINEAGE,
        [_at(anchors, r.operation_id, r.created_at) for r in rows],
        [r.operation_id for r in rows],
        [cache.datasets[r.source] for r in rows],
        [r.source_column for r in rows],
        [cache.datasets[r.target] for r in rows],
        [r.target_column for r in rows],
        [r.run_id for r in rows],
        [cache.jobs[r.job][0] for r in rows],
        [r.types for r in rows],
        [r.event_time for r in rows],
    )


async def write_job_datasets(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    rows = batch.job_datasets
    if not rows:
        return
    await conn.execute(
        sql.UPSERT_JOB_DATASETS,
        [cache.jobs[r.job][0] for r in rows],
        [cache.datasets[r.dataset] for r in rows],
        [r.direction for r in rows],
        [r.first_seen for r in rows],
        [r.last_seen for r in rows],
    )
