"""Query parameters and responses of the job endpoints."""

from datetime import datetime

from pydantic import BaseModel, Field

from server.common.schemas import (
    SCORE_DESCRIPTION,
    DatasetRefResponse,
    Id,
    JobRefResponse,
    LocationRefResponse,
    Model,
    QueryModel,
    RunRefResponse,
)
from server.datasets.schemas import IODirectionName
from server.pagination import PageQuery
from shared.enums import JobType


class JobListQuery(PageQuery):
    search: str | None = Field(
        default=None, min_length=1, max_length=200, description="Fuzzy, ranked name search."
    )
    location_id: Id | None = Field(default=None, description="Only this location.")
    location_type: str | None = Field(
        default=None, max_length=100, description="Only locations of this type."
    )
    location_name: str | None = Field(
        default=None, max_length=1000, description="Only the location with this exact name."
    )
    type: list[JobType] | None = Field(
        default=None, description="Only these job types (repeat the parameter for several)."
    )
    parent_job_id: Id | None = Field(default=None, description="Only children of this job.")


class JobByNameQuery(QueryModel):
    namespace: str = Field(min_length=1, max_length=1024, description="OpenLineage job namespace.")
    name: str = Field(min_length=1, max_length=4096, description="OpenLineage job name.")


class JobSummaryResponse(JobRefResponse):
    parent_job_id: int | None = Field(description="Parent job (DAG of a task...), if any.")
    score: float | None = Field(description=SCORE_DESCRIPTION)


class JobPageResponse(BaseModel):
    items: list[JobSummaryResponse]
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")


class JobDatasetResponse(Model):
    dataset: DatasetRefResponse
    direction: IODirectionName = Field(description="INPUT: the job reads it; OUTPUT: writes it.")
    first_seen: datetime = Field(description="First time seen (runs or declared lineage).")
    last_seen: datetime = Field(description="Last time seen (runs or declared lineage).")


class JobDetailResponse(Model):
    id: int
    name: str
    type: str
    location: LocationRefResponse
    parent: JobRefResponse | None = Field(description="Parent job (Airflow DAG of a task...).")
    children: list[JobRefResponse] = Field(description="Child jobs (up to 200).")
    last_run: RunRefResponse | None = Field(description="The most recently created run.")
    runs: list[RunRefResponse] = Field(
        description="Run history, newest first (up to 20; page on with /v1/runs?job_id=)."
    )
    datasets: list[JobDatasetResponse] = Field(
        description="Datasets it reads or writes, most recently seen first (up to 200)."
    )
