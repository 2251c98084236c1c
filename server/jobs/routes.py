"""HTTP handlers for jobs (thin: parameters in schemas, work in service)."""

from typing import Annotated

from fastapi import APIRouter, Path, Query

from server.common.schemas import BIGINT_MAX
from server.deps import SessionDep, SettingsDep
from server.errors import NOT_FOUND
from server.jobs import service
from server.jobs.schemas import JobByNameQuery, JobDetailResponse, JobListQuery, JobPageResponse

router = APIRouter(prefix="/jobs", tags=["jobs"])


@router.get("", summary="List and search jobs")
async def list_jobs(
    query: Annotated[JobListQuery, Query()], session: SessionDep, settings: SettingsDep
) -> JobPageResponse:
    page = await service.list_jobs(session, query, settings.server)
    return JobPageResponse.model_validate(page, from_attributes=True)


@router.get("/by-name", summary="Find a job by OpenLineage namespace and name", responses=NOT_FOUND)
async def get_job_by_name(
    query: Annotated[JobByNameQuery, Query()], session: SessionDep
) -> JobDetailResponse:
    job_id = await service.find_job_id(session, query)
    return JobDetailResponse.model_validate(await service.get_job_detail(session, job_id))


@router.get("/{job_id}", summary="Job detail with run history", responses=NOT_FOUND)
async def get_job(
    job_id: Annotated[int, Path(ge=1, le=BIGINT_MAX)], session: SessionDep
) -> JobDetailResponse:
    return JobDetailResponse.model_validate(await service.get_job_detail(session, job_id))
