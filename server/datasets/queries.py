"""SQL of the dataset endpoints."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from server.common.queries import location_columns, location_ref, uses_query
from server.common.refs import DatasetRef, LocationRef
from server.common.search import Hit, list_named
from server.datasets.schemas import DatasetListQuery
from shared.models import Address, Dataset, DatasetSymlink, Location

HISTORY_LIMIT = 50
JOBS_LIMIT = 200


@dataclass(frozen=True, slots=True)
class DatasetSummary:
    id: int
    name: str
    format: str | None
    location: LocationRef
    score: float | None


@dataclass(frozen=True, slots=True)
class LocationDetail:
    id: int
    type: str
    name: str
    external_id: str | None
    addresses: list[str]


@dataclass(frozen=True, slots=True)
class SchemaVersion:
    schema_id: int
    fields: list[dict[str, Any]]
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class JobUse:
    job_id: int
    direction: int
    first_seen: datetime
    last_seen: datetime


def _filtered(query: DatasetListQuery, *extra: Any) -> Select[Any]:
    stmt = select(Dataset.id, Dataset.name, Dataset.format, *location_columns(), *extra).join(
        Location, Location.id == Dataset.location_id
    )
    if query.location_id is not None:
        stmt = stmt.where(Dataset.location_id == query.location_id)
    if query.location_type is not None:
        stmt = stmt.where(Location.type == query.location_type)
    if query.location_name is not None:
        stmt = stmt.where(Location.name == query.location_name)
    if query.format is not None:
        stmt = stmt.where(Dataset.format == query.format)
    return stmt


async def list_datasets(
    session: AsyncSession, query: DatasetListQuery, after: tuple[Any, ...] | None, limit: int
) -> list[Hit[DatasetSummary]]:
    """One page in id order, or in search rank order; LIMIT n+1 to probe for more."""
    columns = (Dataset.name, Dataset.id)
    return await list_named(
        session, _filtered(query), columns, query.search, after, limit, _summary
    )


def _summary(r: Any, score: float | None) -> DatasetSummary:
    return DatasetSummary(r.id, r.name, r.format, location_ref(r), score)


async def get_dataset(session: AsyncSession, dataset_id: int) -> DatasetRef | None:
    stmt = (
        select(Dataset.id, Dataset.name, Dataset.format, *location_columns())
        .join(Location, Location.id == Dataset.location_id)
        .where(Dataset.id == dataset_id)
    )
    row = (await session.execute(stmt)).one_or_none()
    return None if row is None else DatasetRef(row.id, row.name, row.format, location_ref(row))


async def get_dataset_id_by_name(
    session: AsyncSession, addresses: tuple[str, ...], location: tuple[str, str], name: str
) -> int | None:
    """The dataset at any of the location's addresses (or its type+name) with this name."""
    by_address = select(Address.location_id).where(Address.url.in_(addresses))
    by_key = select(Location.id).where(tuple_(Location.type, Location.name) == tuple_(*location))
    stmt = (
        select(Dataset.id)
        .where(Dataset.location_id.in_(by_address.union(by_key)), Dataset.name == name)
        .order_by(Dataset.id)
        .limit(1)
    )
    return (await session.execute(stmt)).scalar_one_or_none()


async def get_location_detail(session: AsyncSession, location_id: int) -> LocationDetail:
    loc = (await session.execute(select(Location).where(Location.id == location_id))).scalar_one()
    stmt = select(Address.url).where(Address.location_id == location_id).order_by(Address.url)
    urls = list((await session.execute(stmt)).scalars())
    return LocationDetail(loc.id, loc.type, loc.name, loc.external_id, urls)


async def list_symlinks(session: AsyncSession, dataset_id: int) -> list[tuple[str, int]]:
    # The consumer writes both directions, so the outgoing side is the whole picture.
    stmt = (
        select(DatasetSymlink.type, DatasetSymlink.to_dataset_id)
        .where(DatasetSymlink.from_dataset_id == dataset_id)
        .order_by(DatasetSymlink.to_dataset_id)
    )
    return [(r.type, r.to_dataset_id) for r in (await session.execute(stmt)).all()]


_SCHEMA_HISTORY = text(
    """
    SELECT s.id AS schema_id, s.fields, h.first_seen, h.last_seen
    FROM (
        SELECT io.schema_id, min(io.created_at) AS first_seen,
               max(io.last_event_time) AS last_seen
        FROM (
            SELECT schema_id, created_at, last_event_time FROM input
            WHERE dataset_id = :dataset_id AND schema_id IS NOT NULL
            UNION ALL
            SELECT schema_id, created_at, last_event_time FROM output
            WHERE dataset_id = :dataset_id AND schema_id IS NOT NULL
        ) AS io
        GROUP BY io.schema_id
    ) AS h
    JOIN schema AS s ON s.id = h.schema_id
    ORDER BY h.last_seen DESC, s.id DESC
    LIMIT :limit
    """
)


async def list_schema_history(session: AsyncSession, dataset_id: int) -> list[SchemaVersion]:
    """Every schema the dataset was read or written with, newest last-seen first."""
    params = {"dataset_id": dataset_id, "limit": HISTORY_LIMIT}
    rows = (await session.execute(_SCHEMA_HISTORY, params)).all()
    return [SchemaVersion(r.schema_id, r.fields, r.first_seen, r.last_seen) for r in rows]


_JOB_USES = uses_query(by="dataset_id", other="job_id")


async def list_job_uses(session: AsyncSession, dataset_id: int) -> list[JobUse]:
    """Jobs reading (0) or writing (1) the dataset: observed in runs or declared by JobEvents."""
    params = {"dataset_id": dataset_id, "limit": JOBS_LIMIT}
    rows = (await session.execute(_JOB_USES, params)).all()
    return [JobUse(r.job_id, r.direction, r.first_seen, r.last_seen) for r in rows]
