"""Response parts shared by features: entity references and status names."""

import re
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any
from uuid import UUID

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
)

from shared.enums import JobType, Status

BIGINT_MAX = 2**63 - 1
SCORE_DESCRIPTION = (
    "Search score, results come highest first: above 1 when the query's words appear in "
    "the name in order (the larger the share of the name, the higher), else the pg_trgm "
    "word similarity (0-1). Null when not searching."
)
# Ids are PostgreSQL bigints: a larger number is a 422 here, not an overflow in the driver.
Id = Annotated[int, Field(ge=1, le=BIGINT_MAX)]


def _utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError as exc:  # 9999-12-31T23:00-05:00 is in year 10000 once in UTC
        raise ValueError("is outside the supported time range") from exc


_NUMBER = re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*")


def _not_a_number(value: Any) -> Any:
    """pydantic reads "0.5" as Unix seconds; a time parameter must be a date-time string."""
    if isinstance(value, int | float) or (isinstance(value, str) and _NUMBER.fullmatch(value)):
        raise ValueError("must be an ISO 8601 date-time with an offset, not a number")
    return value


# A time parameter: offset required (naive times are ambiguous), normalised to UTC here so
# that one past year 9999 in UTC is a 422 rather than a driver error.
UtcTime = Annotated[AwareDatetime, BeforeValidator(_not_a_number), AfterValidator(_utc)]


class QueryModel(BaseModel):
    """Base of every `...Query`: unknown parameters and NUL characters are 422s."""

    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        # PostgreSQL text cannot hold NUL; caught here it is a clear 422, not a driver error.
        if isinstance(value, str) and "\x00" in value:
            raise ValueError("must not contain NUL characters")
        return value


class RunStatus(StrEnum):
    """Run/operation status names (shared.enums.Status); order UNKNOWN < ... < KILLED."""

    UNKNOWN = Status.UNKNOWN.name
    STARTED = Status.STARTED.name
    SUCCEEDED = Status.SUCCEEDED.name
    FAILED = Status.FAILED.name
    KILLED = Status.KILLED.name

    def to_status(self) -> Status:
        return Status[self.value]


def _status_name(value: Any) -> Any:
    return Status(value).name if isinstance(value, int) else value


StatusName = Annotated[RunStatus, BeforeValidator(_status_name)]
JobTypeName = JobType


class Model(BaseModel):
    """Responses are built from service dataclasses (`model_validate(obj)`)."""

    model_config = ConfigDict(from_attributes=True)


class LocationRefResponse(Model):
    id: int = Field(description="Location id.")
    type: str = Field(description="Location type (postgres, hdfs, kafka, namespace...).")
    name: str = Field(description="Canonical location name (host[:port], bucket...).")


class DatasetRefResponse(Model):
    id: int = Field(description="Dataset id.")
    name: str = Field(description="Dataset name within its location.")
    format: str | None = Field(description="Storage format when known.")
    location: LocationRefResponse


class JobRefResponse(Model):
    id: int = Field(description="Job id.")
    name: str = Field(description="Job name within its location.")
    type: str = Field(description="Job type (SPARK_APPLICATION, AIRFLOW_TASK...).")
    location: LocationRefResponse


class RunRefResponse(Model):
    id: UUID = Field(description="Run id (the OpenLineage runId).")
    job_id: int = Field(description="Job the run belongs to.")
    status: StatusName = Field(description="Run status.")
    created_at: datetime = Field(description="When the run was created (from its UUIDv7).")
    started_at: datetime | None = Field(description="When the run started, if known.")
    ended_at: datetime | None = Field(description="When the run ended, if it has.")
    external_id: str | None = Field(description="Producer's id (Spark app id, Airflow run id).")
    attempt: int | None = Field(description="Attempt number (Airflow try number).")
