"""Query parameters, request bodies and responses of the link endpoints."""

from datetime import datetime
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from server.common.schemas import (
    DatasetRefResponse,
    Id,
    JobRefResponse,
    Model,
    RunRefResponse,
    UtcTime,
)
from server.pagination import PageQuery
from server.runs.schemas import check_windows


class LinkSearchQuery(PageQuery):
    source_dataset_id: Id | None = Field(
        default=None, description="Links from this dataset (give this or target_dataset_id)."
    )
    target_dataset_id: Id | None = Field(
        default=None, description="Links to this dataset (give this or source_dataset_id)."
    )
    seen_since: UtcTime | None = Field(
        default=None, description="Only links observed at or after this time."
    )
    seen_until: UtcTime | None = Field(
        default=None, description="Only links observed before this time."
    )

    @model_validator(mode="after")
    def _one_end(self) -> Self:
        if (self.source_dataset_id is None) == (self.target_dataset_id is None):
            raise ValueError("give exactly one of source_dataset_id and target_dataset_id")
        check_windows(self, "seen")
        return self


class LinkResponse(Model):
    source: DatasetRefResponse
    target: DatasetRefResponse
    first_seen: datetime = Field(description="First time an operation read source, wrote target.")
    last_seen: datetime = Field(description="Last time an operation read source, wrote target.")


class LinkPageResponse(BaseModel):
    items: list[LinkResponse] = Field(description="Ordered by the other end's dataset id.")
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")


class LinkKey(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source_dataset_id: Id
    target_dataset_id: Id


class LinkProcessesRequest(BaseModel):
    """Which jobs and runs made these links (Google's batchSearchLinkProcesses)."""

    model_config = ConfigDict(extra="forbid")

    links: list[LinkKey] = Field(min_length=1, max_length=100, description="Up to 100 links.")
    seen_since: UtcTime | None = Field(default=None, description="Observed at/after this.")
    seen_until: UtcTime | None = Field(default=None, description="Observed before this.")
    runs_per_link: int = Field(
        default=5, ge=0, le=50, description="Latest runs listed per job and link."
    )
    cursor: str | None = Field(default=None, max_length=2048, description="Next page token.")
    limit: int | None = Field(default=None, ge=1, description="Jobs per page.")

    @model_validator(mode="after")
    def _window(self) -> Self:
        check_windows(self, "seen")
        return self


class ProcessLinkResponse(Model):
    source_dataset_id: int
    target_dataset_id: int
    first_seen: datetime
    last_seen: datetime
    runs: list[RunRefResponse] = Field(description="Latest runs of the job that made it.")


class LinkProcessResponse(Model):
    job: JobRefResponse
    links: list[ProcessLinkResponse]


class LinkProcessPageResponse(BaseModel):
    items: list[LinkProcessResponse] = Field(description="Ordered by job id.")
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")
