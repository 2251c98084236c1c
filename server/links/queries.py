"""SQL of the link endpoints: an operation that read A and wrote B makes the link A -> B.

The consumer gives producers without sub-operations exactly one operation per run, so
operation granularity is as precise as each producer allows (a Spark application's SQL jobs
do not link each other's inputs and outputs). Self-links (A -> A) are left out.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Select, and_, func, select, tuple_
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from shared.models import Input, Output

_I = aliased(Input, name="i")
_O = aliased(Output, name="o")


@dataclass(frozen=True, slots=True)
class LinkRow:
    source_id: int
    target_id: int
    first_seen: datetime
    last_seen: datetime


@dataclass(frozen=True, slots=True)
class ProcessLinkRow:
    job_id: int
    source_id: int
    target_id: int
    first_seen: datetime
    last_seen: datetime


def _links(*columns: Any, since: datetime | None, until: datetime | None) -> Select[Any]:
    stmt = (
        select(*columns)
        .select_from(_I)
        .join(_O, and_(_O.created_at == _I.created_at, _O.operation_id == _I.operation_id))
        .where(_O.dataset_id != _I.dataset_id)
    )
    if since is not None:
        stmt = stmt.where(_I.created_at >= since)
    if until is not None:
        stmt = stmt.where(_I.created_at < until)
    return stmt


_FIRST = func.min(_O.created_at).label("first_seen")
_LAST = func.max(func.greatest(_I.last_event_time, _O.last_event_time)).label("last_seen")


async def list_links(
    session: AsyncSession,
    *,
    source_id: int | None,
    target_id: int | None,
    window: tuple[datetime | None, datetime | None],
    after: int | None,
    limit: int,
) -> list[LinkRow]:
    """Links from a source (or to a target), one row per other end, ordered by its id."""
    fixed, other = (_I.dataset_id, _O.dataset_id) if source_id else (_O.dataset_id, _I.dataset_id)
    stmt = _links(other.label("other"), _FIRST, _LAST, since=window[0], until=window[1])
    stmt = stmt.where(fixed == (source_id or target_id))
    if after is not None:
        stmt = stmt.where(other > after)
    stmt = stmt.group_by(other).order_by(other).limit(limit + 1)
    rows = (await session.execute(stmt)).all()
    if source_id:
        return [LinkRow(source_id, r.other, r.first_seen, r.last_seen) for r in rows]
    return [LinkRow(r.other, target_id or 0, r.first_seen, r.last_seen) for r in rows]


async def list_link_job_ids(
    session: AsyncSession,
    pairs: Sequence[tuple[int, int]],
    window: tuple[datetime | None, datetime | None],
    after: int | None,
    limit: int,
) -> list[int]:
    """Jobs that made any of the links, by id; LIMIT n+1 to probe for more."""
    stmt = _links(_O.job_id, since=window[0], until=window[1])
    stmt = stmt.where(tuple_(_I.dataset_id, _O.dataset_id).in_(list(pairs)))
    if after is not None:
        stmt = stmt.where(_O.job_id > after)
    stmt = stmt.group_by(_O.job_id).order_by(_O.job_id).limit(limit + 1)
    return list((await session.execute(stmt)).scalars())


async def list_process_links(
    session: AsyncSession,
    pairs: Sequence[tuple[int, int]],
    job_ids: Sequence[int],
    window: tuple[datetime | None, datetime | None],
) -> list[ProcessLinkRow]:
    columns = (_O.job_id, _I.dataset_id.label("src"), _O.dataset_id.label("tgt"), _FIRST, _LAST)
    stmt = _links(*columns, since=window[0], until=window[1]).where(
        tuple_(_I.dataset_id, _O.dataset_id).in_(list(pairs)), _O.job_id.in_(list(job_ids))
    )
    stmt = stmt.group_by(_O.job_id, _I.dataset_id, _O.dataset_id).order_by(
        _O.job_id, _I.dataset_id, _O.dataset_id
    )
    rows = (await session.execute(stmt)).all()
    return [ProcessLinkRow(r.job_id, r.src, r.tgt, r.first_seen, r.last_seen) for r in rows]


async def list_link_runs(
    session: AsyncSession,
    pairs: Sequence[tuple[int, int]],
    job_ids: Sequence[int],
    window: tuple[datetime | None, datetime | None],
    per_link: int,
) -> list[tuple[int, int, int, UUID]]:
    """(job, source, target, run): the latest `per_link` runs per job and link."""
    seen = func.max(_O.created_at)
    rank = (
        func.row_number()
        .over(partition_by=(_O.job_id, _I.dataset_id, _O.dataset_id), order_by=seen.desc())
        .label("rank")
    )
    columns = (_O.job_id, _I.dataset_id.label("src"), _O.dataset_id.label("tgt"), _O.run_id, rank)
    inner = (
        _links(*columns, since=window[0], until=window[1])
        .where(tuple_(_I.dataset_id, _O.dataset_id).in_(list(pairs)), _O.job_id.in_(list(job_ids)))
        .group_by(_O.job_id, _I.dataset_id, _O.dataset_id, _O.run_id)
        .subquery()
    )
    stmt = select(inner.c.job_id, inner.c.src, inner.c.tgt, inner.c.run_id).where(
        inner.c.rank <= per_link
    )
    stmt = stmt.order_by(inner.c.job_id, inner.c.src, inner.c.tgt, inner.c.rank)
    return [(r.job_id, r.src, r.tgt, r.run_id) for r in (await session.execute(stmt)).all()]
