"""HTTP handlers for datasets (thin: parameters in schemas, work in service)."""

from typing import Annotated

from fastapi import APIRouter, Path, Query

from server.common.schemas import BIGINT_MAX
from server.datasets import service
from server.datasets.schemas import (
    DatasetByNameQuery,
    DatasetDetailResponse,
    DatasetListQuery,
    DatasetPageResponse,
)
from server.deps import SessionDep, SettingsDep
from server.errors import NOT_FOUND

router = APIRouter(prefix="/datasets", tags=["datasets"])


@router.get("", summary="List and search datasets")
async def list_datasets(
    query: Annotated[DatasetListQuery, Query()], session: SessionDep, settings: SettingsDep
) -> DatasetPageResponse:
    page = await service.list_datasets(session, query, settings.server)
    return DatasetPageResponse.model_validate(page, from_attributes=True)


@router.get(
    "/by-name", summary="Find a dataset by OpenLineage namespace and name", responses=NOT_FOUND
)
async def get_dataset_by_name(
    query: Annotated[DatasetByNameQuery, Query()], session: SessionDep
) -> DatasetDetailResponse:
    dataset_id = await service.find_dataset_id(session, query)
    detail = await service.get_dataset_detail(session, dataset_id)
    return DatasetDetailResponse.model_validate(detail)


@router.get("/{dataset_id}", summary="Dataset detail", responses=NOT_FOUND)
async def get_dataset(
    dataset_id: Annotated[int, Path(ge=1, le=BIGINT_MAX)], session: SessionDep
) -> DatasetDetailResponse:
    detail = await service.get_dataset_detail(session, dataset_id)
    return DatasetDetailResponse.model_validate(detail)
