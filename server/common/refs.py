"""References to entities, embedded in other entities' views (a dataset's location...)."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from shared.enums import Status


@dataclass(frozen=True, slots=True)
class LocationRef:
    id: int
    type: str
    name: str


@dataclass(frozen=True, slots=True)
class DatasetRef:
    id: int
    name: str
    format: str | None
    location: LocationRef


@dataclass(frozen=True, slots=True)
class JobRef:
    id: int
    name: str
    type: str
    location: LocationRef


@dataclass(frozen=True, slots=True)
class RunRef:
    id: UUID
    job_id: int
    status: Status
    created_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    external_id: str | None
    attempt: int | None
