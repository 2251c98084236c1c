"""Bulk loaders of entity references: one query per kind, whatever the number of ids."""

from collections.abc import Collection
from typing import Any
from uuid import UUID

from sqlalchemy import Row, TextClause, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from server.common.refs import DatasetRef, JobRef, LocationRef, RunRef
from shared.enums import Status
from shared.models import Dataset, Job, Location, Run

LOCATION_COLUMNS = (Location.id, Location.type, Location.name)
RUN_COLUMNS = (
    Run.id,
    Run.job_id,
    Run.status,
    Run.created_at,
    Run.started_at,
    Run.ended_at,
    Run.external_id,
    Run.attempt,
)


def location_ref(row: Row[Any], prefix: str = "location_") -> LocationRef:
    mapping = row._mapping
    return LocationRef(mapping[f"{prefix}id"], mapping[f"{prefix}type"], mapping[f"{prefix}name"])


def location_columns(prefix: str = "location_") -> tuple[Any, ...]:
    return tuple(col.label(f"{prefix}{col.key}") for col in LOCATION_COLUMNS)


def run_ref(row: Any) -> RunRef:
    m = row._mapping
    return RunRef(
        id=m["id"],
        job_id=m["job_id"],
        status=Status(m["status"]),
        created_at=m["created_at"],
        started_at=m["started_at"],
        ended_at=m["ended_at"],
        external_id=m["external_id"],
        attempt=m["attempt"],
    )


async def list_dataset_refs(session: AsyncSession, ids: Collection[int]) -> dict[int, DatasetRef]:
    if not ids:
        return {}
    stmt = (
        select(Dataset.id, Dataset.name, Dataset.format, *location_columns())
        .join(Location, Location.id == Dataset.location_id)
        .where(Dataset.id.in_(list(ids)))
    )
    rows = (await session.execute(stmt)).all()
    return {r.id: DatasetRef(r.id, r.name, r.format, location_ref(r)) for r in rows}


async def list_job_refs(session: AsyncSession, ids: Collection[int]) -> dict[int, JobRef]:
    if not ids:
        return {}
    stmt = (
        select(Job.id, Job.name, Job.type, *location_columns())
        .join(Location, Location.id == Job.location_id)
        .where(Job.id.in_(list(ids)))
    )
    rows = (await session.execute(stmt)).all()
    return {r.id: JobRef(r.id, r.name, r.type, location_ref(r)) for r in rows}


async def list_run_refs(session: AsyncSession, ids: Collection[UUID]) -> dict[UUID, RunRef]:
    if not ids:
        return {}
    stmt = select(*RUN_COLUMNS).where(Run.id.in_(list(ids)))
    return {row.id: run_ref(row) for row in (await session.execute(stmt)).all()}


def uses_query(by: str, other: str) -> TextClause:
    """Datasets a job uses, or jobs using a dataset (`by` = :by, grouped by `other`).

    Direction 0 reads, 1 writes; observed in runs (input/output) or declared by
    JobEvents (job_dataset); newest last-seen first, at most :limit rows.
    """
    return text(
        f"""
    SELECT u.{other}, u.direction, min(u.first_seen) AS first_seen,
           max(u.last_seen) AS last_seen
    FROM (
        SELECT {other}, 0 AS direction, min(created_at) AS first_seen,
               max(last_event_time) AS last_seen
        FROM input WHERE {by} = :{by} GROUP BY {other}
        UNION ALL
        SELECT {other}, 1, min(created_at), max(last_event_time)
        FROM output WHERE {by} = :{by} GROUP BY {other}
        UNION ALL
        SELECT {other}, direction, first_seen_at, last_seen_at
        FROM job_dataset WHERE {by} = :{by}
    ) AS u
    GROUP BY u.{other}, u.direction
    ORDER BY last_seen DESC, u.{other}, u.direction
    LIMIT :limit
    """  # noqa: S608 - two constant column names; values are bound parameters
    )
