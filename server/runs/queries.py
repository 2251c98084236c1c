"""SQL of the run endpoints."""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Select, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from server.runs.schemas import RunListQuery
from shared.models import Job, Run, User

CHILDREN_LIMIT = 200
FAMILY_DEPTH = 3  # DAG run -> task run -> Spark application run -> (operations)
FAMILY_LIMIT = 1000
IO_LIMIT = 1000
LINKED_LIMIT = 100


@dataclass(frozen=True, slots=True)
class RunRow:
    id: UUID
    job_id: int
    status: int
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    external_id: str | None
    attempt: int | None
    parent_run_id: UUID | None
    started_by: str | None
    start_reason: str | None
    ended_reason: str | None
    running_log_url: str | None
    persistent_log_url: str | None
    last_event_time: datetime


@dataclass(frozen=True, slots=True)
class IORow:
    dataset_id: int
    run_id: UUID
    num_rows: int | None
    num_bytes: int | None
    num_files: int | None
    schema_id: int | None
    first_seen: datetime
    last_seen: datetime
    types: int


def _select_runs() -> Select[Any]:
    columns = [c for c in Run.__table__.columns if c.key != "started_by_user_id"]
    return select(*columns, User.name.label("started_by")).outerjoin(
        User, User.id == Run.started_by_user_id
    )


def _row(r: Any) -> RunRow:
    return RunRow(**{name: getattr(r, name) for name in RunRow.__dataclass_fields__})


def _windows(query: RunListQuery) -> list[Any]:
    bounds = (
        (Run.created_at, query.created_since, query.created_until),
        (Run.started_at, query.started_since, query.started_until),
        (Run.ended_at, query.ended_since, query.ended_until),
    )
    conditions: list[Any] = []
    for column, since, until in bounds:
        conditions += [column >= since] if since is not None else []
        conditions += [column < until] if until is not None else []
    return conditions


def _filters(query: RunListQuery) -> list[Any]:
    conditions = _windows(query)
    if query.job_id is not None:
        conditions.append(Run.job_id == query.job_id)
    if query.job_type:
        types = [t.value for t in query.job_type]
        conditions.append(Run.job_id.in_(select(Job.id).where(Job.type.in_(types))))
    if query.parent_run_id is not None:
        conditions.append(Run.parent_run_id == query.parent_run_id)
    if query.status:
        conditions.append(Run.status.in_([s.to_status().value for s in query.status]))
    if query.started_by is not None:
        users = select(User.id).where(User.name == query.started_by)
        conditions.append(Run.started_by_user_id.in_(users))
    if query.external_id is not None:
        conditions.append(Run.external_id == query.external_id)
    return conditions


async def list_runs(
    session: AsyncSession, query: RunListQuery, after: tuple[Any, ...] | None, limit: int
) -> list[RunRow]:
    """Newest first on the (created_at, id) primary key; LIMIT n+1 to probe for more."""
    stmt = _select_runs().where(*_filters(query))
    if after is not None:
        stmt = stmt.where(tuple_(Run.created_at, Run.id) < tuple_(*after))
    stmt = stmt.order_by(Run.created_at.desc(), Run.id.desc()).limit(limit + 1)
    return [_row(r) for r in (await session.execute(stmt)).all()]


async def get_run(session: AsyncSession, run_id: UUID) -> RunRow | None:
    stmt = _select_runs().where(Run.id == run_id).order_by(Run.created_at).limit(1)
    row = (await session.execute(stmt)).one_or_none()
    return None if row is None else _row(row)


async def list_runs_by_id(session: AsyncSession, ids: Sequence[UUID]) -> list[RunRow]:
    if not ids:
        return []
    stmt = _select_runs().where(Run.id.in_(list(ids))).order_by(Run.created_at, Run.id)
    return [_row(r) for r in (await session.execute(stmt)).all()]


async def list_child_runs(session: AsyncSession, run_id: UUID) -> list[RunRow]:
    stmt = (
        _select_runs()
        .where(Run.parent_run_id == run_id)
        .order_by(Run.created_at, Run.id)
        .limit(CHILDREN_LIMIT)
    )
    return [_row(r) for r in (await session.execute(stmt)).all()]


async def has_later_attempt(session: AsyncSession, run: RunRow) -> bool:
    """A run of the same job under the same parent run, with a higher attempt or created later."""
    if run.parent_run_id is None:
        return False
    later = (
        Run.attempt > run.attempt
        if run.attempt is not None
        else tuple_(Run.created_at, Run.id) > tuple_(run.created_at, run.id)
    )
    stmt = select(Run.id).where(
        Run.parent_run_id == run.parent_run_id, Run.job_id == run.job_id, Run.id != run.id, later
    )
    return (await session.execute(stmt.limit(1))).first() is not None


_FAMILY = text(
    """
    WITH RECURSIVE family(id, depth) AS (
        SELECT CAST(:run_id AS uuid), 0
        UNION
        SELECT r.id, f.depth + 1
        FROM family AS f JOIN run AS r ON r.parent_run_id = f.id
        WHERE f.depth < :depth
    )
    SELECT DISTINCT id FROM family LIMIT :limit
    """
)


async def list_run_family(session: AsyncSession, run_id: UUID) -> list[UUID]:
    """The run and its descendants (task runs of a DAG run, the Spark runs they launched)."""
    params = {"run_id": run_id, "depth": FAMILY_DEPTH, "limit": FAMILY_LIMIT}
    return list((await session.execute(_FAMILY, params)).scalars())


def _io_sql(table: str) -> str:
    types = "bit_or(types)" if table == "output" else "0"
    return f"""
        SELECT dataset_id, run_id, sum(num_rows) AS num_rows, sum(num_bytes) AS num_bytes,
               sum(num_files) AS num_files,
               (array_agg(schema_id ORDER BY last_event_time DESC)
                    FILTER (WHERE schema_id IS NOT NULL))[1] AS schema_id,
               min(created_at) AS first_seen, max(last_event_time) AS last_seen,
               {types} AS types
        FROM {table} WHERE run_id = ANY(:run_ids)
        GROUP BY dataset_id, run_id
        ORDER BY dataset_id, run_id
        LIMIT :limit
    """  # noqa: S608 - table is one of two literals chosen below


_INPUTS = text(_io_sql("input"))
_OUTPUTS = text(_io_sql("output"))


async def list_run_io(session: AsyncSession, run_ids: list[UUID], *, outputs: bool) -> list[IORow]:
    """Per (dataset, run): what the runs read or wrote, counters summed over operations."""
    stmt = _OUTPUTS if outputs else _INPUTS
    # One more than shown, so the service can say the list was cut.
    rows = (await session.execute(stmt, {"run_ids": run_ids, "limit": IO_LIMIT + 1})).all()
    return [IORow(**r._mapping) for r in rows]


_UPSTREAM = text(
    """
    WITH reads AS (
        SELECT dataset_id, max(created_at) AS read_at
        FROM input WHERE run_id = ANY(:run_ids) GROUP BY dataset_id
    ), expanded AS (
        SELECT dataset_id, dataset_id AS via, read_at FROM reads
        UNION ALL
        SELECT s.to_dataset_id, r.dataset_id, r.read_at
        FROM reads AS r JOIN dataset_symlink AS s ON s.from_dataset_id = r.dataset_id
    )
    SELECT DISTINCT ON (e.via, o.job_id) e.via AS dataset_id, o.run_id
    FROM expanded AS e
    JOIN output AS o ON o.dataset_id = e.dataset_id AND o.created_at <= e.read_at
    WHERE o.run_id <> ALL(:run_ids)
    ORDER BY e.via, o.job_id, o.created_at DESC
    LIMIT :limit
    """
)

_DOWNSTREAM = text(
    """
    WITH writes AS (
        SELECT dataset_id, min(created_at) AS written_at
        FROM output WHERE run_id = ANY(:run_ids) GROUP BY dataset_id
    ), expanded AS (
        SELECT dataset_id, dataset_id AS via, written_at FROM writes
        UNION ALL
        SELECT s.to_dataset_id, w.dataset_id, w.written_at
        FROM writes AS w JOIN dataset_symlink AS s ON s.from_dataset_id = w.dataset_id
    )
    SELECT DISTINCT ON (e.via, i.job_id) e.via AS dataset_id, i.run_id
    FROM expanded AS e
    JOIN input AS i ON i.dataset_id = e.dataset_id AND i.created_at >= e.written_at
    WHERE i.run_id <> ALL(:run_ids)
    ORDER BY e.via, i.job_id, i.created_at
    LIMIT :limit
    """
)


async def list_linked_runs(
    session: AsyncSession, run_ids: list[UUID], *, upstream: bool
) -> list[tuple[int, UUID]]:
    """(dataset, run) pairs: per dataset of ours (symlinks followed) and per other job, the
    latest run that wrote it before we read it, or the earliest that read it after we wrote it."""
    stmt = _UPSTREAM if upstream else _DOWNSTREAM
    rows = (await session.execute(stmt, {"run_ids": run_ids, "limit": LINKED_LIMIT})).all()
    return [(r.dataset_id, r.run_id) for r in rows]
