"""Query parameters and responses of the dataset endpoints."""

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from server.common.schemas import (
    SCORE_DESCRIPTION,
    DatasetRefResponse,
    Id,
    JobRefResponse,
    LocationRefResponse,
    Model,
    QueryModel,
)
from server.pagination import PageQuery


class DatasetListQuery(PageQuery):
    search: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Fuzzy name search (`ordrs daily` finds `orders_daily`); ranks results.",
    )
    location_id: Id | None = Field(default=None, description="Only this location.")
    location_type: str | None = Field(
        default=None, max_length=100, description="Only locations of this type (hdfs, s3...)."
    )
    location_name: str | None = Field(
        default=None, max_length=1000, description="Only the location with this exact name."
    )
    format: str | None = Field(default=None, max_length=100, description="Only this format.")


class DatasetByNameQuery(QueryModel):
    namespace: str = Field(
        min_length=1, max_length=1024, description="OpenLineage dataset namespace."
    )
    name: str = Field(min_length=1, max_length=4096, description="OpenLineage dataset name.")


class DatasetSummaryResponse(DatasetRefResponse):
    score: float | None = Field(description=SCORE_DESCRIPTION)


class DatasetPageResponse(BaseModel):
    items: list[DatasetSummaryResponse]
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")


class IODirectionName(StrEnum):
    INPUT = "INPUT"
    OUTPUT = "OUTPUT"


class SymlinkResponse(Model):
    type: str = Field(description="METASTORE or WAREHOUSE.")
    dataset: DatasetRefResponse


class SchemaVersionResponse(Model):
    schema_id: int = Field(description="Schema id (one per distinct field list).")
    fields: list[dict[str, Any]] = Field(description="Fields: name, type, description, fields.")
    first_seen: datetime = Field(description="First time a run read or wrote this schema.")
    last_seen: datetime = Field(description="Last time a run read or wrote this schema.")


class DatasetJobResponse(Model):
    job: JobRefResponse
    direction: IODirectionName = Field(description="INPUT: the job reads it; OUTPUT: writes it.")
    first_seen: datetime = Field(description="First time seen (runs or declared lineage).")
    last_seen: datetime = Field(description="Last time seen (runs or declared lineage).")


class LocationDetailRefResponse(LocationRefResponse):
    external_id: str | None = Field(description="Id in an external catalogue, if set.")
    addresses: list[str] = Field(description="Every address the location was reached at.")


class DatasetDetailResponse(Model):
    id: int
    name: str
    format: str | None
    location: LocationDetailRefResponse
    symlinks: list[SymlinkResponse] = Field(description="Hive table <-> warehouse path links.")
    schemas: list[SchemaVersionResponse] = Field(
        description="Schema history, most recently seen first (up to 50)."
    )
    jobs: list[DatasetJobResponse] = Field(
        description="Jobs that read or write it, most recently seen first (up to 200)."
    )
