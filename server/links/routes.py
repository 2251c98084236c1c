"""HTTP handlers for links (thin: parameters in schemas, work in service)."""

from typing import Annotated

from fastapi import APIRouter, Body, Query

from server.deps import SessionDep, SettingsDep
from server.links import service
from server.links.schemas import (
    LinkPageResponse,
    LinkProcessesRequest,
    LinkProcessPageResponse,
    LinkSearchQuery,
)

router = APIRouter(prefix="/links", tags=["links"])


@router.get("", summary="Search dataset -> dataset links from a source or to a target")
async def search_links(
    query: Annotated[LinkSearchQuery, Query()], session: SessionDep, settings: SettingsDep
) -> LinkPageResponse:
    page = await service.search_links(session, query, settings.server)
    return LinkPageResponse.model_validate(page, from_attributes=True)


@router.post("/processes", summary="Jobs and runs that made a batch of links")
async def search_link_processes(
    body: Annotated[LinkProcessesRequest, Body()], session: SessionDep, settings: SettingsDep
) -> LinkProcessPageResponse:
    page = await service.search_link_processes(session, body, settings.server)
    return LinkProcessPageResponse.model_validate(page, from_attributes=True)
