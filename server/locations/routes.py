"""HTTP handlers for locations (thin: parameters in schemas, work in service).

Reads use the read-only session; the admin writes use the admin engine, which exists only
when THREADLINE__SERVER__ADMIN_DATABASE_URL is set (else they answer 503).
"""

from typing import Annotated

from fastapi import APIRouter, Body, Path, Query

from server.common.schemas import BIGINT_MAX
from server.deps import AdminEngineDep, SessionDep, SettingsDep
from server.errors import ADMIN_UNAVAILABLE, CONFLICT, NOT_FOUND, ResponsesDoc
from server.locations import service
from server.locations.schemas import (
    AddressCreate,
    LocationDetailResponse,
    LocationListQuery,
    LocationMerge,
    LocationMergeResponse,
    LocationPageResponse,
    LocationUpdate,
)

router = APIRouter(prefix="/locations", tags=["locations"])
LocationId = Annotated[int, Path(ge=1, le=BIGINT_MAX, description="Location id.")]
WRITE_ERRORS: ResponsesDoc = {**NOT_FOUND, **CONFLICT, **ADMIN_UNAVAILABLE}


@router.get("", summary="List and search locations")
async def list_locations(
    query: Annotated[LocationListQuery, Query()], session: SessionDep, settings: SettingsDep
) -> LocationPageResponse:
    page = await service.list_locations(session, query, settings.server)
    return LocationPageResponse.model_validate(page, from_attributes=True)


@router.get("/{location_id}", summary="Location detail with addresses", responses=NOT_FOUND)
async def get_location(location_id: LocationId, session: SessionDep) -> LocationDetailResponse:
    return LocationDetailResponse.model_validate(await service.get_location(session, location_id))


@router.patch("/{location_id}", summary="Set the external id (admin)", responses=WRITE_ERRORS)
async def update_location(
    location_id: LocationId, body: Annotated[LocationUpdate, Body()], engine: AdminEngineDep
) -> LocationDetailResponse:
    detail = await service.set_external_id(engine, location_id, body.external_id)
    return LocationDetailResponse.model_validate(detail)


@router.post("/{location_id}/addresses", summary="Add an address (admin)", responses=WRITE_ERRORS)
async def add_address(
    location_id: LocationId, body: Annotated[AddressCreate, Body()], engine: AdminEngineDep
) -> LocationDetailResponse:
    detail = await service.add_address(engine, location_id, body.url)
    return LocationDetailResponse.model_validate(detail)


@router.delete(
    "/{location_id}/addresses/{address_id}",
    summary="Remove an address (admin)",
    responses=WRITE_ERRORS,
)
async def remove_address(
    location_id: LocationId,
    address_id: Annotated[int, Path(ge=1, le=BIGINT_MAX)],
    engine: AdminEngineDep,
) -> LocationDetailResponse:
    detail = await service.remove_address(engine, location_id, address_id)
    return LocationDetailResponse.model_validate(detail)


@router.post(
    "/{location_id}/merge",
    summary="Merge another location into this one (admin)",
    responses=WRITE_ERRORS,
)
async def merge_location(
    location_id: LocationId, body: Annotated[LocationMerge, Body()], engine: AdminEngineDep
) -> LocationMergeResponse:
    result = await service.merge(engine, body.source_location_id, location_id)
    return LocationMergeResponse.model_validate(result)
