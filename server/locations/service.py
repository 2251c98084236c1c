"""Location views and the admin writes, each write in one transaction on the admin engine."""

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession

from server.common.listing import list_page
from server.errors import ConflictError, InvalidInputError, NotFoundError
from server.locations import queries
from server.locations.merge import MergeCounts, merge_locations
from server.locations.queries import LocationDetail, LocationSummary
from server.locations.schemas import LocationListQuery
from server.pagination import Keyset, Page
from server.settings import ServerOptions
from shared.naming import parse_namespace

BY_ID = Keyset("locations.id", (int,))
BY_RANK = Keyset("locations.search", (int, float, int, int))


@dataclass(frozen=True, slots=True)
class MergeResult:
    location: LocationDetail
    merged: MergeCounts


async def list_locations(
    session: AsyncSession, query: LocationListQuery, options: ServerOptions
) -> Page[LocationSummary]:
    return await list_page(session, query, options, (BY_ID, BY_RANK), queries.list_locations)


async def get_location(db: queries.Executor, location_id: int) -> LocationDetail:
    found = await queries.get_location(db, location_id)
    if found is None:
        raise NotFoundError("location", location_id)
    return found


async def _locked_type(conn: AsyncConnection, location_id: int) -> str:
    found = await queries.lock_locations(conn, [location_id])
    if location_id not in found:
        raise NotFoundError("location", location_id)
    return found[location_id]


def _canonical_addresses(url: str, location_type: str) -> tuple[str, ...]:
    """The address(es) the consumer would record for this namespace; 422 on a type clash."""
    namespace = parse_namespace(url)
    if namespace.location_type != location_type:
        raise InvalidInputError(
            f"url: {url!r} is a {namespace.location_type!r} namespace, "
            f"but the location is of type {location_type!r}"
        )
    return namespace.addresses


async def add_address(engine: AsyncEngine, location_id: int, url: str) -> LocationDetail:
    """Add an address (idempotent); 409 when it already belongs to another location."""
    async with engine.begin() as conn:
        urls = _canonical_addresses(url, await _locked_type(conn, location_id))
        await queries.add_addresses(conn, location_id, urls)
        owners = await queries.list_address_owners(conn, urls)
        taken = {u: owner for u, owner in owners.items() if owner != location_id}
        if taken:
            address, owner = sorted(taken.items())[0]
            raise ConflictError(
                f"address {address} belongs to location {owner}; merge the locations instead"
            )
        return await get_location(conn, location_id)


async def remove_address(engine: AsyncEngine, location_id: int, address_id: int) -> LocationDetail:
    """Remove an address; 409 for the last one, which the consumer needs to find the location."""
    async with engine.begin() as conn:
        await _locked_type(conn, location_id)
        location = await get_location(conn, location_id)
        if all(a.id != address_id for a in location.addresses):
            raise NotFoundError(f"address of location {location_id}", address_id)
        if len(location.addresses) == 1:
            raise ConflictError("a location keeps at least one address: events find it by one")
        await queries.delete_address(conn, location_id, address_id)
        return await get_location(conn, location_id)


async def set_external_id(
    engine: AsyncEngine, location_id: int, external_id: str | None
) -> LocationDetail:
    async with engine.begin() as conn:
        if not await queries.set_external_id(conn, location_id, external_id):
            raise NotFoundError("location", location_id)
        return await get_location(conn, location_id)


async def merge(engine: AsyncEngine, source: int, target: int) -> MergeResult:
    """Merge `source` into `target` in one transaction; 409 for a location into itself."""
    if source == target:
        raise ConflictError(f"cannot merge location {target} into itself")
    async with engine.begin() as conn:
        found = await queries.lock_locations(conn, [source, target])
        for location_id in (target, source):
            if location_id not in found:
                raise NotFoundError("location", location_id)
        counts = await merge_locations(conn, source, target)
        return MergeResult(await get_location(conn, target), counts)
