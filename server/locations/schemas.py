"""Query parameters, request bodies and responses of the location endpoints."""

from pydantic import BaseModel, ConfigDict, Field

from server.common.schemas import SCORE_DESCRIPTION, Id, LocationRefResponse, Model
from server.pagination import PageQuery


class LocationListQuery(PageQuery):
    search: str | None = Field(
        default=None, min_length=1, max_length=200, description="Fuzzy, ranked name search."
    )
    type: str | None = Field(default=None, max_length=100, description="Only this type.")


class LocationSummaryResponse(LocationRefResponse):
    external_id: str | None = Field(description="Id in an external catalogue, if set.")
    score: float | None = Field(description=SCORE_DESCRIPTION)


class LocationPageResponse(BaseModel):
    items: list[LocationSummaryResponse]
    next_cursor: str | None = Field(description="Cursor of the next page; null on the last.")


class AddressResponse(Model):
    id: int = Field(description="Address id (to remove it).")
    url: str = Field(description="Canonical namespace the location was reached at.")


class LocationDetailResponse(LocationRefResponse):
    external_id: str | None = Field(description="Id in an external catalogue, if set.")
    addresses: list[AddressResponse] = Field(description="Every address, by URL.")


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AddressCreate(Body):
    url: str = Field(
        min_length=1,
        max_length=1024,
        pattern=r"^[^\x00]*$",
        description="A namespace (hdfs://nn2:8020, kafka://b1:9092,b2:9092...); it is "
        "normalised as the consumer does, and must be of the location's type.",
    )


class LocationUpdate(Body):
    external_id: str | None = Field(
        max_length=1000, pattern=r"^[^\x00]*$", description="New external id; null clears it."
    )


class LocationMerge(Body):
    source_location_id: Id = Field(
        description="Location merged into this one: its addresses, datasets and jobs move "
        "here, same-named datasets/jobs are unified, and it is deleted."
    )


class MergeCountsResponse(Model):
    addresses: int = Field(description="Addresses moved.")
    datasets_moved: int = Field(description="Datasets moved as they were.")
    datasets_merged: int = Field(description="Datasets unified with a same-named one.")
    jobs_moved: int = Field(description="Jobs moved as they were.")
    jobs_merged: int = Field(description="Jobs unified with a same-named one.")


class LocationMergeResponse(Model):
    location: LocationDetailResponse
    merged: MergeCountsResponse
