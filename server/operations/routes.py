"""HTTP handlers for operations (thin: parameters in schemas, work in service)."""

from typing import Annotated
from uuid import UUID

from fastapi import APIRouter, Query

from server.deps import SessionDep, SettingsDep
from server.errors import NOT_FOUND
from server.operations import service
from server.operations.schemas import (
    OperationDetailResponse,
    OperationListQuery,
    OperationPageResponse,
)

router = APIRouter(prefix="/operations", tags=["operations"])


@router.get("", summary="List operations, newest first")
async def list_operations(
    query: Annotated[OperationListQuery, Query()], session: SessionDep, settings: SettingsDep
) -> OperationPageResponse:
    page = await service.list_operations(session, query, settings.server)
    return OperationPageResponse.model_validate(page, from_attributes=True)


@router.get("/{operation_id}", summary="Operation detail", responses=NOT_FOUND)
async def get_operation(operation_id: UUID, session: SessionDep) -> OperationDetailResponse:
    detail = await service.get_operation_detail(session, operation_id)
    return OperationDetailResponse.model_validate(detail)
