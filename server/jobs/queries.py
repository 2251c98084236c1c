"""SQL of the job endpoints."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from server.common.queries import RUN_COLUMNS, location_columns, location_ref, run_ref, uses_query
from server.common.refs import JobRef, LocationRef, RunRef
from server.common.search import Hit, list_named
from server.jobs.schemas import JobListQuery
from shared.models import Address, Job, Location, Run

CHILDREN_LIMIT = 200
RUNS_LIMIT = 20
DATASETS_LIMIT = 200


@dataclass(frozen=True, slots=True)
class JobSummary:
    id: int
    name: str
    type: str
    location: LocationRef
    parent_job_id: int | None
    score: float | None


@dataclass(frozen=True, slots=True)
class DatasetUse:
    dataset_id: int
    direction: int
    first_seen: datetime
    last_seen: datetime


def _filtered(query: JobListQuery) -> Select[Any]:
    columns = (Job.id, Job.name, Job.type, Job.parent_job_id, *location_columns())
    stmt = select(*columns).join(Location, Location.id == Job.location_id)
    if query.location_id is not None:
        stmt = stmt.where(Job.location_id == query.location_id)
    if query.location_type is not None:
        stmt = stmt.where(Location.type == query.location_type)
    if query.location_name is not None:
        stmt = stmt.where(Location.name == query.location_name)
    if query.type:
        stmt = stmt.where(Job.type.in_([t.value for t in query.type]))
    if query.parent_job_id is not None:
        stmt = stmt.where(Job.parent_job_id == query.parent_job_id)
    return stmt


async def list_jobs(
    session: AsyncSession, query: JobListQuery, after: tuple[Any, ...] | None, limit: int
) -> list[Hit[JobSummary]]:
    """One page in id order, or in search rank order; LIMIT n+1 to probe for more."""
    columns = (Job.name, Job.id)
    return await list_named(
        session, _filtered(query), columns, query.search, after, limit, _summary
    )


def _summary(r: Any, score: float | None) -> JobSummary:
    return JobSummary(r.id, r.name, r.type, location_ref(r), r.parent_job_id, score)


async def get_job(session: AsyncSession, job_id: int) -> JobSummary | None:
    r = (await session.execute(_filtered(JobListQuery()).where(Job.id == job_id))).one_or_none()
    return None if r is None else _summary(r, None)


async def get_job_id_by_name(
    session: AsyncSession, addresses: tuple[str, ...], location: tuple[str, str], name: str
) -> int | None:
    """The job at any of the location's addresses (or its type+name) with this name."""
    by_address = select(Address.location_id).where(Address.url.in_(addresses))
    by_key = select(Location.id).where(tuple_(Location.type, Location.name) == tuple_(*location))
    stmt = (
        select(Job.id)
        .where(Job.location_id.in_(by_address.union(by_key)), Job.name == name)
        .order_by(Job.id)
        .limit(1)
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def list_child_jobs(session: AsyncSession, job_id: int) -> list[JobRef]:
    stmt = (
        select(Job.id, Job.name, Job.type, *location_columns())
        .join(Location, Location.id == Job.location_id)
        .where(Job.parent_job_id == job_id)
        .order_by(Job.name, Job.id)
        .limit(CHILDREN_LIMIT)
    )
    rows = (await session.execute(stmt)).all()
    return [JobRef(r.id, r.name, r.type, location_ref(r)) for r in rows]


async def list_recent_runs(session: AsyncSession, job_id: int) -> list[RunRef]:
    # (job_id, created_at) is indexed: newest first without sorting the job's history.
    stmt = (
        select(*RUN_COLUMNS)
        .where(Run.job_id == job_id)
        .order_by(Run.created_at.desc(), Run.id.desc())
        .limit(RUNS_LIMIT)
    )
    return [run_ref(r) for r in (await session.execute(stmt)).all()]


_DATASET_USES = uses_query(by="job_id", other="dataset_id")


async def list_dataset_uses(session: AsyncSession, job_id: int) -> list[DatasetUse]:
    """Datasets the job reads (0) or writes (1): observed in runs or declared by JobEvents."""
    params = {"job_id": job_id, "limit": DATASETS_LIMIT}
    rows = (await session.execute(_DATASET_USES, params)).all()
    return [DatasetUse(r.dataset_id, r.direction, r.first_seen, r.last_seen) for r in rows]
