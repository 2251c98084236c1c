"""Query parameters and responses of the operation endpoints."""

from datetime import datetime
from typing import Self
from uuid import UUID

from pydantic import BaseModel, Field, model_validator

from server.common.schemas import (
    DatasetRefResponse,
    JobRefResponse,
    Model,
    RunStatus,
    StatusName,
    UtcTime,
)
from server.pagination import PageQuery
from server.runs.schemas import RunSummaryResponse, check_windows


class OperationListQuery(PageQuery):
    run_id: UUID | None = Field(default=None, description="Only operations of this run.")
    status: list[RunStatus] | None = Field(default=None, description="Only these statuses.")
    created_since: UtcTime | None = Field(default=None, description="created_at >= this.")
    created_until: UtcTime | None = Field(default=None, description="created_at < this.")

    @model_validator(mode="after")
    def _windows(self) -> Self:
        check_windows(self, "created")
        return self


class OperationSummaryResponse(Model):
    id: UUID = Field(
        description="Operation id (a Spark SQL job's runId; the run id when the "
        "producer has no sub-operations)."
    )
    run_id: UUID
    created_at: datetime
    name: str | None
    type: str | None
    status: StatusName
    position: int | None = Field(description="Order within the run (Spark job id).")
    group: str | None
    description: str | None
    started_at: datetime | None
    ended_at: datetime | None


class OperationPageResponse(BaseModel):
    items: list[OperationSummaryResponse] = Field(description="Newest first (created_at, id).")
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")


class OperationIOResponse(Model):
    dataset: DatasetRefResponse
    num_rows: int | None
    num_bytes: int | None
    num_files: int | None
    schema_id: int | None
    last_event_time: datetime


class OperationOutputResponse(OperationIOResponse):
    types: list[str] = Field(description="CREATE, ALTER, RENAME, APPEND, OVERWRITE, DROP...")


class ColumnEdgeResponse(Model):
    source_dataset_id: int
    source_column: str
    target_dataset_id: int
    target_column: str
    types: list[str] = Field(description="DIRECT and/or INDIRECT.")


class OperationDetailResponse(OperationSummaryResponse):
    sql_query: str | None
    ended_reason: str | None = Field(description="Error message of a failed operation.")
    last_event_time: datetime
    run: RunSummaryResponse
    job: JobRefResponse
    inputs: list[OperationIOResponse]
    outputs: list[OperationOutputResponse]
    column_lineage: list[ColumnEdgeResponse] = Field(description="Up to 2000 column edges.")
