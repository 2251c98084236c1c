"""HTTP handlers for runs (thin: parameters in schemas, work in service)."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query

from server.deps import SessionDep, SettingsDep
from server.errors import NOT_FOUND
from server.runs import service
from server.runs.schemas import RunDetailResponse, RunListQuery, RunPageResponse

router = APIRouter(prefix="/runs", tags=["runs"])


@router.get("", summary="List runs with filters, newest first")
async def list_runs(
    query: Annotated[RunListQuery, Query()], session: SessionDep, settings: SettingsDep
) -> RunPageResponse:
    page = await service.list_runs(session, query, settings.server)
    return RunPageResponse.model_validate(page, from_attributes=True)


@router.get("/{run_id}", summary="Run detail as a DataProcessInstance", responses=NOT_FOUND)
async def get_run(run_id: UUID, session: SessionDep) -> RunDetailResponse:
    return RunDetailResponse.model_validate(await service.get_run_detail(session, run_id))
