"""Operation views: pages and detail."""

from dataclasses import dataclass, fields
from datetime import datetime
from uuid import UUID

from sqlalchemy.ext.asyncio import AsyncSession

from server.common.queries import list_dataset_refs
from server.common.refs import DatasetRef, JobRef
from server.errors import NotFoundError
from server.operations import queries
from server.operations.queries import OperationRow
from server.operations.schemas import OperationListQuery
from server.pagination import Keyset, Page, make_page, resolve_limit
from server.runs.queries import list_runs_by_id
from server.runs.service import RunSummary, summarize
from server.settings import ServerOptions
from shared.enums import ColumnLineageType, OutputType

NEWEST_FIRST = Keyset("operations.created_at", (datetime, UUID))


@dataclass(frozen=True, slots=True)
class OperationIO:
    dataset: DatasetRef
    num_rows: int | None
    num_bytes: int | None
    num_files: int | None
    schema_id: int | None
    last_event_time: datetime
    types: list[str]


@dataclass(frozen=True, slots=True)
class ColumnEdge:
    source_dataset_id: int
    source_column: str
    target_dataset_id: int
    target_column: str
    types: list[str]


@dataclass(frozen=True, slots=True)
class OperationDetail(OperationRow):
    run: RunSummary
    job: JobRef
    inputs: list[OperationIO]
    outputs: list[OperationIO]
    column_lineage: list[ColumnEdge]


async def list_operations(
    session: AsyncSession, query: OperationListQuery, options: ServerOptions
) -> Page[OperationRow]:
    scope = query.scope()
    after = NEWEST_FIRST.decode(query.cursor, scope)
    limit = resolve_limit(query.limit, options)
    rows = await queries.list_operations(session, query, after, limit)
    return make_page(rows, limit, NEWEST_FIRST, scope, lambda r: (r.created_at, r.id))


async def _io(session: AsyncSession, op: OperationRow, *, outputs: bool) -> list[OperationIO]:
    rows = await queries.list_operation_io(session, op, outputs=outputs)
    refs = await list_dataset_refs(session, {r.dataset_id for r in rows})
    return [
        OperationIO(
            dataset=refs[r.dataset_id],
            types=[str(k.name) for k in OutputType if k & r.types],
            **{
                f.name: getattr(r, f.name)
                for f in fields(r)
                if f.name not in {"types", "dataset_id"}
            },
        )
        for r in rows
        if r.dataset_id in refs
    ]


async def _columns(session: AsyncSession, op: OperationRow) -> list[ColumnEdge]:
    rows = await queries.list_column_edges(session, op)
    return [
        ColumnEdge(
            r.source_dataset_id,
            r.source_column,
            r.target_dataset_id,
            r.target_column,
            [str(k.name) for k in ColumnLineageType if k & r.types],
        )
        for r in rows
    ]


async def get_operation_detail(session: AsyncSession, operation_id: UUID) -> OperationDetail:
    op = await queries.get_operation(session, operation_id)
    if op is None:
        raise NotFoundError("operation", operation_id)
    runs = await summarize(session, await list_runs_by_id(session, [op.run_id]))
    if not runs:
        # Operations arrive with their run in one transaction; a missing run is data damage.
        raise NotFoundError("run of operation", op.run_id)
    return OperationDetail(
        **{f.name: getattr(op, f.name) for f in fields(OperationRow)},
        run=runs[0],
        job=runs[0].job,
        inputs=await _io(session, op, outputs=False),
        outputs=await _io(session, op, outputs=True),
        column_lineage=await _columns(session, op),
    )
