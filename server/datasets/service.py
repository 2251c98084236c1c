"""Dataset views assembled from queries: pages, lookup by name, detail."""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from server.common.listing import list_page
from server.common.queries import list_dataset_refs, list_job_refs
from server.common.refs import DatasetRef, JobRef
from server.datasets import queries
from server.datasets.queries import DatasetSummary, LocationDetail, SchemaVersion
from server.datasets.schemas import DatasetByNameQuery, DatasetListQuery, IODirectionName
from server.errors import NotFoundError
from server.pagination import Keyset, Page
from server.settings import ServerOptions
from shared.enums import IODirection
from shared.naming import normalize_dataset_name, parse_namespace

BY_ID = Keyset("datasets.id", (int,))
BY_RANK = Keyset("datasets.search", (int, float, int, int))


@dataclass(frozen=True, slots=True)
class Symlink:
    type: str
    dataset: DatasetRef


@dataclass(frozen=True, slots=True)
class DatasetJob:
    job: JobRef
    direction: IODirectionName
    first_seen: object
    last_seen: object


@dataclass(frozen=True, slots=True)
class DatasetDetail:
    id: int
    name: str
    format: str | None
    location: LocationDetail
    symlinks: list[Symlink]
    schemas: list[SchemaVersion]
    jobs: list[DatasetJob]


async def list_datasets(
    session: AsyncSession, query: DatasetListQuery, options: ServerOptions
) -> Page[DatasetSummary]:
    return await list_page(session, query, options, (BY_ID, BY_RANK), queries.list_datasets)


async def find_dataset_id(session: AsyncSession, query: DatasetByNameQuery) -> int:
    """Resolve an OpenLineage (namespace, name) with the consumer's own naming rules."""
    namespace = parse_namespace(query.namespace)
    name = normalize_dataset_name(namespace.location_type, query.name)
    location = (namespace.location_type, namespace.location_name)
    found = await queries.get_dataset_id_by_name(session, namespace.addresses, location, name)
    if found is None:
        raise NotFoundError("dataset", f"{query.namespace} {query.name}")
    return found


async def get_dataset_detail(session: AsyncSession, dataset_id: int) -> DatasetDetail:
    dataset = await queries.get_dataset(session, dataset_id)
    if dataset is None:
        raise NotFoundError("dataset", dataset_id)
    location = await queries.get_location_detail(session, dataset.location.id)
    links = await queries.list_symlinks(session, dataset_id)
    uses = await queries.list_job_uses(session, dataset_id)
    linked = await list_dataset_refs(session, {target for _, target in links})
    jobs = await list_job_refs(session, {use.job_id for use in uses})
    return DatasetDetail(
        id=dataset.id,
        name=dataset.name,
        format=dataset.format,
        location=location,
        symlinks=[Symlink(kind, linked[target]) for kind, target in links if target in linked],
        schemas=await queries.list_schema_history(session, dataset_id),
        jobs=[
            DatasetJob(
                jobs[u.job_id],
                IODirectionName(IODirection(u.direction).name),
                u.first_seen,
                u.last_seen,
            )
            for u in uses
            if u.job_id in jobs
        ],
    )
