"""SQL of the location endpoints: catalogue reads, and the admin writes on a connection."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from server.common.search import Hit, list_named
from server.locations.schemas import LocationListQuery
from shared.models import Address, Location

Executor = AsyncSession | AsyncConnection


@dataclass(frozen=True, slots=True)
class LocationSummary:
    id: int
    type: str
    name: str
    external_id: str | None
    score: float | None


@dataclass(frozen=True, slots=True)
class AddressRow:
    id: int
    url: str


@dataclass(frozen=True, slots=True)
class LocationDetail:
    id: int
    type: str
    name: str
    external_id: str | None
    addresses: list[AddressRow]


def _filtered(query: LocationListQuery) -> Select[Any]:
    columns: tuple[Any, ...] = (Location.id, Location.type, Location.name, Location.external_id)
    stmt = select(*columns)
    if query.type is not None:
        stmt = stmt.where(Location.type == query.type)
    return stmt


async def list_locations(
    session: AsyncSession, query: LocationListQuery, after: tuple[Any, ...] | None, limit: int
) -> list[Hit[LocationSummary]]:
    """One page in id order, or in search rank order; LIMIT n+1 to probe for more."""
    columns = (Location.name, Location.id)
    return await list_named(
        session, _filtered(query), columns, query.search, after, limit, _summary
    )


def _summary(r: Any, score: float | None) -> LocationSummary:
    return LocationSummary(r.id, r.type, r.name, r.external_id, score)


async def get_location(db: Executor, location_id: int) -> LocationDetail | None:
    columns: tuple[Any, ...] = (Location.id, Location.type, Location.name, Location.external_id)
    location = (await db.execute(select(*columns).where(Location.id == location_id))).first()
    if location is None:
        return None
    stmt = select(Address.id, Address.url).where(Address.location_id == location_id)
    addresses = [AddressRow(r.id, r.url) for r in (await db.execute(stmt.order_by(Address.url)))]
    return LocationDetail(
        location.id, location.type, location.name, location.external_id, addresses
    )


async def lock_locations(conn: AsyncConnection, ids: Sequence[int]) -> dict[int, str]:
    """Lock the rows (in id order, so two admins cannot deadlock); id -> type of those found."""
    stmt = (
        select(Location.id, Location.type)
        .where(Location.id.in_(list(ids)))
        .order_by(Location.id)
        .with_for_update()
    )
    return {r.id: r.type for r in await conn.execute(stmt)}


async def list_address_owners(conn: AsyncConnection, urls: Sequence[str]) -> dict[str, int]:
    stmt = select(Address.url, Address.location_id).where(Address.url.in_(list(urls)))
    return {r.url: r.location_id for r in await conn.execute(stmt)}


async def add_addresses(conn: AsyncConnection, location_id: int, urls: Sequence[str]) -> None:
    """Insert the addresses; one another writer took meanwhile is left to the caller's check."""
    rows = [{"location_id": location_id, "url": url} for url in urls]
    stmt = pg_insert(Address).values(rows).on_conflict_do_nothing(index_elements=["url"])
    await conn.execute(stmt)


async def delete_address(conn: AsyncConnection, location_id: int, address_id: int) -> bool:
    stmt = delete(Address).where(Address.id == address_id, Address.location_id == location_id)
    return bool((await conn.execute(stmt.returning(Address.id))).first())


async def set_external_id(conn: AsyncConnection, location_id: int, external_id: str | None) -> bool:
    stmt = (
        update(Location)
        .where(Location.id == location_id)
        .values(external_id=external_id)
        .returning(Location.id)
    )
    return bool((await conn.execute(stmt)).first())
