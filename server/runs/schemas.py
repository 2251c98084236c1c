"""Query parameters and responses of the run endpoints."""

from datetime import datetime
from enum import StrEnum
from typing import Self
from uuid import UUID

from pydantic import BaseModel, Field, model_validator

from server.common.schemas import (
    DatasetRefResponse,
    Id,
    JobRefResponse,
    Model,
    RunRefResponse,
    RunStatus,
    UtcTime,
)
from server.pagination import PageQuery
from shared.enums import JobType


def check_windows(model: BaseModel, *names: str) -> None:
    """Each `<name>_since` must not be after its `<name>_until`."""
    for name in names:
        since, until = getattr(model, f"{name}_since"), getattr(model, f"{name}_until")
        if since is not None and until is not None and since > until:
            raise ValueError(f"{name}_since must not be after {name}_until")


class RunListQuery(PageQuery):
    job_id: Id | None = Field(default=None, description="Only runs of this job.")
    job_type: list[JobType] | None = Field(
        default=None, description="Only runs of jobs of these types."
    )
    parent_run_id: UUID | None = Field(default=None, description="Only children of this run.")
    status: list[RunStatus] | None = Field(
        default=None, description="Only these statuses (repeat the parameter for several)."
    )
    started_by: str | None = Field(
        default=None, max_length=1000, description="Only runs started by this user name."
    )
    external_id: str | None = Field(
        default=None, max_length=1000, description="Only runs with this producer id."
    )
    created_since: UtcTime | None = Field(default=None, description="created_at >= this.")
    created_until: UtcTime | None = Field(default=None, description="created_at < this.")
    started_since: UtcTime | None = Field(default=None, description="started_at >= this.")
    started_until: UtcTime | None = Field(default=None, description="started_at < this.")
    ended_since: UtcTime | None = Field(default=None, description="ended_at >= this.")
    ended_until: UtcTime | None = Field(default=None, description="ended_at < this.")

    @model_validator(mode="after")
    def _windows(self) -> Self:
        check_windows(self, "created", "started", "ended")
        return self


class RunSummaryResponse(RunRefResponse):
    job: JobRefResponse
    parent_run_id: UUID | None = Field(description="Parent run (DAG run of a task run...).")
    started_by: str | None = Field(description="User who started the run, if known.")


class RunPageResponse(BaseModel):
    items: list[RunSummaryResponse] = Field(description="Newest first (created_at, id).")
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")


class RunState(StrEnum):
    RUNNING = "RUNNING"
    COMPLETE = "COMPLETE"
    UNKNOWN = "UNKNOWN"


class RunResult(StrEnum):
    SUCCESS = "SUCCESS"
    FAILURE = "FAILURE"
    SKIPPED = "SKIPPED"
    UP_FOR_RETRY = "UP_FOR_RETRY"


class RunIOResponse(Model):
    dataset: DatasetRefResponse
    run_id: UUID = Field(description="The run (this one or a descendant) that read/wrote it.")
    num_rows: int | None = Field(description="Rows, summed over the run's operations.")
    num_bytes: int | None = Field(description="Bytes, summed over the run's operations.")
    num_files: int | None = Field(description="Files, summed over the run's operations.")
    schema_id: int | None = Field(description="Latest schema seen (see the dataset's history).")
    first_seen: datetime
    last_seen: datetime


class RunOutputResponse(RunIOResponse):
    types: list[str] = Field(description="CREATE, ALTER, RENAME, APPEND, OVERWRITE, DROP...")


class LinkedRunResponse(Model):
    run: RunSummaryResponse
    dataset_ids: list[int] = Field(description="Datasets through which the runs are linked.")


class RunDetailResponse(RunSummaryResponse):
    """A run viewed as a DataHub DataProcessInstance."""

    state: RunState = Field(description="RUNNING (STARTED), COMPLETE (ended) or UNKNOWN.")
    result: RunResult | None = Field(
        description="SUCCEEDED -> SUCCESS; FAILED -> FAILURE, or UP_FOR_RETRY when a later "
        "attempt of the same job under the same parent run exists; KILLED -> SKIPPED "
        "(stopped from outside: neither succeeded nor failed on its own); null while "
        "running or unknown."
    )
    duration_ms: int | None = Field(description="ended_at - started_at, when both are known.")
    start_reason: str | None
    ended_reason: str | None = Field(description="Error message of a failed run.")
    running_log_url: str | None
    persistent_log_url: str | None
    last_event_time: datetime = Field(description="Time of the latest event of the run.")
    parent_run: RunSummaryResponse | None = Field(description="Parent instance (parent run).")
    child_runs: list[RunSummaryResponse] = Field(description="Child runs (up to 200).")
    inputs: list[RunIOResponse] = Field(description="What it and its descendant runs read.")
    outputs: list[RunOutputResponse] = Field(description="What it and its descendants wrote.")
    inputs_truncated: bool = Field(
        description="True when `inputs` shows only the first 1000; /v1/datasets pages them all."
    )
    outputs_truncated: bool = Field(description="True when `outputs` shows only the first 1000.")
    upstream_runs: list[LinkedRunResponse] = Field(
        description="Latest run of each job that wrote an input before it was read (up to 100)."
    )
    downstream_runs: list[LinkedRunResponse] = Field(
        description="Earliest run of each job that read an output after it was written (up to 100)."
    )
