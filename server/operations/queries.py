"""SQL of the operation endpoints."""

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from sqlalchemy import Select, literal, select, text, tuple_
from sqlalchemy.ext.asyncio import AsyncSession

from server.operations.schemas import OperationListQuery
from shared.models import Input, Operation, Output, expand_column_sets

COLUMN_EDGES_LIMIT = 2000
IO_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class OperationRow:
    id: UUID
    run_id: UUID
    created_at: datetime
    name: str | None
    type: str | None
    status: int
    position: int | None
    group: str | None
    description: str | None
    started_at: datetime | None
    ended_at: datetime | None
    sql_query: str | None
    ended_reason: str | None
    last_event_time: datetime


@dataclass(frozen=True, slots=True)
class OperationIORow:
    dataset_id: int
    num_rows: int | None
    num_bytes: int | None
    num_files: int | None
    schema_id: int | None
    last_event_time: datetime
    types: int


@dataclass(frozen=True, slots=True)
class ColumnEdgeRow:
    source_dataset_id: int
    source_column: str
    target_dataset_id: int
    target_column: str
    types: int


def _row(r: Any) -> OperationRow:
    return OperationRow(**{name: getattr(r, name) for name in OperationRow.__dataclass_fields__})


def _select() -> Select[Any]:
    return select(*Operation.__table__.columns)


async def list_operations(
    session: AsyncSession, query: OperationListQuery, after: tuple[Any, ...] | None, limit: int
) -> list[OperationRow]:
    """Newest first on the (created_at, id) primary key; LIMIT n+1 to probe for more."""
    stmt = _select()
    if query.run_id is not None:
        stmt = stmt.where(Operation.run_id == query.run_id)
    if query.status:
        stmt = stmt.where(Operation.status.in_([s.to_status().value for s in query.status]))
    if query.created_since is not None:
        stmt = stmt.where(Operation.created_at >= query.created_since)
    if query.created_until is not None:
        stmt = stmt.where(Operation.created_at < query.created_until)
    if after is not None:
        stmt = stmt.where(tuple_(Operation.created_at, Operation.id) < tuple_(*after))
    stmt = stmt.order_by(Operation.created_at.desc(), Operation.id.desc()).limit(limit + 1)
    return [_row(r) for r in (await session.execute(stmt)).all()]


async def get_operation(session: AsyncSession, operation_id: UUID) -> OperationRow | None:
    stmt = _select().where(Operation.id == operation_id).order_by(Operation.created_at).limit(1)
    row = (await session.execute(stmt)).one_or_none()
    return None if row is None else _row(row)


async def list_operation_io(
    session: AsyncSession, operation: OperationRow, *, outputs: bool
) -> list[OperationIORow]:
    table = Output if outputs else Input
    types = Output.types if outputs else literal(0)
    # created_at is the operation's: it pins the partition, the operation id finds the rows.
    stmt = (
        select(
            table.dataset_id,
            table.num_rows,
            table.num_bytes,
            table.num_files,
            table.schema_id,
            table.last_event_time,
            types.label("types"),
        )
        .where(table.created_at == operation.created_at, table.operation_id == operation.id)
        .order_by(table.dataset_id)
        .limit(IO_LIMIT)
    )
    return [OperationIORow(**r._mapping) for r in (await session.execute(stmt)).all()]


# An operation's column edges: its column sets expanded, an edge that two sets hold once
# with their types OR-ed.
_COLUMN_EDGES = text(f"""
SELECT c.source_dataset_id, m.source_column, c.target_dataset_id, m.target_column,
       bit_or(m.types) AS types
FROM column_lineage c
{expand_column_sets("c")}
WHERE c.created_at = :created_at AND c.operation_id = :operation_id
GROUP BY c.target_dataset_id, m.target_column, c.source_dataset_id, m.source_column
ORDER BY c.target_dataset_id, m.target_column, c.source_dataset_id, m.source_column
LIMIT :limit
""")  # noqa: S608 - constant SQL only; every value is a bound parameter


async def list_column_edges(session: AsyncSession, operation: OperationRow) -> list[ColumnEdgeRow]:
    params = {
        "created_at": operation.created_at,
        "operation_id": operation.id,
        "limit": COLUMN_EDGES_LIMIT,
    }
    rows = (await session.execute(_COLUMN_EDGES, params)).all()
    return [ColumnEdgeRow(**r._mapping) for r in rows]
