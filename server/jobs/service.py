"""Job views assembled from queries: pages, lookup by name, detail."""

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from server.common.listing import list_page
from server.common.queries import list_dataset_refs, list_job_refs
from server.common.refs import DatasetRef, JobRef, LocationRef, RunRef
from server.datasets.schemas import IODirectionName
from server.errors import NotFoundError
from server.jobs import queries
from server.jobs.queries import JobSummary
from server.jobs.schemas import JobByNameQuery, JobListQuery
from server.pagination import Keyset, Page
from server.settings import ServerOptions
from shared.enums import IODirection
from shared.naming import parse_job_namespace

BY_ID = Keyset("jobs.id", (int,))
BY_RANK = Keyset("jobs.search", (int, float, int, int))


@dataclass(frozen=True, slots=True)
class JobDataset:
    dataset: DatasetRef
    direction: IODirectionName
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class JobDetail:
    id: int
    name: str
    type: str
    location: LocationRef
    parent: JobRef | None
    children: list[JobRef]
    last_run: RunRef | None
    runs: list[RunRef]
    datasets: list[JobDataset]


async def list_jobs(
    session: AsyncSession, query: JobListQuery, options: ServerOptions
) -> Page[JobSummary]:
    return await list_page(session, query, options, (BY_ID, BY_RANK), queries.list_jobs)


async def find_job_id(session: AsyncSession, query: JobByNameQuery) -> int:
    """Resolve an OpenLineage job (namespace, name) with the consumer's naming rules."""
    namespace = parse_job_namespace(query.namespace)
    location = (namespace.location_type, namespace.location_name)
    name = query.name.strip()
    found = await queries.get_job_id_by_name(session, namespace.addresses, location, name)
    if found is None:
        raise NotFoundError("job", f"{query.namespace} {query.name}")
    return found


async def _datasets(session: AsyncSession, job_id: int) -> list[JobDataset]:
    uses = await queries.list_dataset_uses(session, job_id)
    refs = await list_dataset_refs(session, {u.dataset_id for u in uses})
    return [
        JobDataset(
            refs[u.dataset_id],
            IODirectionName(IODirection(u.direction).name),
            u.first_seen,
            u.last_seen,
        )
        for u in uses
        if u.dataset_id in refs
    ]


async def get_job_detail(session: AsyncSession, job_id: int) -> JobDetail:
    job = await queries.get_job(session, job_id)
    if job is None:
        raise NotFoundError("job", job_id)
    parents = await list_job_refs(session, [job.parent_job_id] if job.parent_job_id else [])
    runs = await queries.list_recent_runs(session, job_id)
    return JobDetail(
        id=job.id,
        name=job.name,
        type=job.type,
        location=job.location,
        parent=parents.get(job.parent_job_id) if job.parent_job_id else None,
        children=await queries.list_child_jobs(session, job_id),
        last_run=runs[0] if runs else None,
        runs=runs,
        datasets=await _datasets(session, job_id),
    )
