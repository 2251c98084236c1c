"""Immutable records passed from extract to merge to write, keyed by natural keys.

Records never carry database ids: `write` resolves natural keys to ids in bulk.
Every record has `event_time`, the OpenLineage eventTime it was seen at. A run's
or operation's descriptive fields may come from different events once merged, so
`field_times` keeps, per field of `consumer.merge.RUN_FIELDS` /
`OPERATION_FIELDS`, the eventTime its value came from (None until a merge: then
every non-null field is as old as `event_time`).

Extract and merge build about ten records per event: `shared.frozen.fast_init` gives each
record class a faster __init__ (they stay frozen).
"""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from shared.frozen import fast_init
from shared.naming import Namespace

LocationKey = tuple[str, str]  # (location type, location name)
DatasetKey = tuple[str, str, str]  # (location type, location name, dataset name)
JobKey = tuple[str, str, str]  # (location type, location name, job name)


def location_key(ns: Namespace) -> LocationKey:
    return (ns.location_type, ns.location_name)


@fast_init
@dataclass(frozen=True, slots=True)
class LocationRecord:
    type: str
    name: str
    addresses: frozenset[str]

    @property
    def key(self) -> LocationKey:
        return (self.type, self.name)


@fast_init
@dataclass(frozen=True, slots=True)
class DatasetRecord:
    location: LocationKey
    name: str
    format: str | None = None

    @property
    def key(self) -> DatasetKey:
        return (*self.location, self.name)


@fast_init
@dataclass(frozen=True, slots=True)
class SymlinkRecord:
    source: DatasetKey
    target: DatasetKey
    type: str

    @property
    def key(self) -> tuple[DatasetKey, DatasetKey]:
        return (self.source, self.target)


@fast_init
@dataclass(frozen=True, slots=True)
class JobRecord:
    location: LocationKey
    name: str
    type: str
    parent: JobKey | None

    @property
    def key(self) -> JobKey:
        return (*self.location, self.name)


@fast_init
@dataclass(frozen=True, slots=True)
class SchemaRecord:
    digest: UUID
    fields: tuple[Any, ...] = field(compare=False, hash=False)


@fast_init
@dataclass(frozen=True, slots=True, order=True)
class Checkpoints:
    """A streaming run's checkpoint counters (Flink `checkpoints` run facet).

    Field order is the merge order: the snapshot with the greatest total (then
    completed, ...) is the latest, as the counters only grow while a job runs.
    """

    total: int
    completed: int
    failed: int
    restored: int
    in_progress: int


@fast_init
@dataclass(frozen=True, slots=True)
class RunRecord:
    id: UUID
    created_at: datetime  # from the UUIDv7, else the eventTime (anchored at write)
    job: JobKey
    event_time: datetime
    status: int
    parent_run_id: UUID | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    user: str | None = None
    start_reason: str | None = None
    ended_reason: str | None = None
    external_id: str | None = None
    attempt: int | None = None
    running_log_url: str | None = None
    persistent_log_url: str | None = None
    checkpoints: Checkpoints | None = None
    root_run_id: UUID | None = None
    field_times: tuple[datetime | None, ...] | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class OperationRecord:
    id: UUID
    created_at: datetime
    run_id: UUID
    event_time: datetime
    status: int
    name: str | None = None
    type: str | None = None
    position: int | None = None
    group: str | None = None
    description: str | None = None
    sql_query: str | None = None
    ended_reason: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    field_times: tuple[datetime | None, ...] | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class IORecord:
    """One input (direction 0) or output (direction 1) of an operation."""

    direction: int
    operation_id: UUID
    created_at: datetime
    run_id: UUID
    job: JobKey
    dataset: DatasetKey
    event_time: datetime
    schema: UUID | None = None
    schema_time: datetime | None = None  # when `schema` was seen; None: at event_time
    num_rows: int | None = None
    num_bytes: int | None = None
    num_files: int | None = None
    output_types: int = 0

    @property
    def key(self) -> tuple[int, UUID, DatasetKey]:
        return (self.direction, self.operation_id, self.dataset)


# One column edge of a set: (source column, target column, DIRECT/INDIRECT bits).
ColumnMember = tuple[str, str, int]
# The edges one event gives between one source and one target dataset, sorted by code
# point and each (source column, target column) once: stored once as a `column_set`.
ColumnSet = tuple[ColumnMember, ...]


@fast_init
@dataclass(frozen=True, slots=True)
class ColumnLineageRecord:
    """The column edges one operation's events gave from `source` to `target`, as one set.

    Sets are made per event and are part of the key: a later event naming other columns
    adds a record (a row) of its own rather than changing this one, so the stored rows do
    not depend on which events shared a batch. The run and job are those of the latest
    event that named this exact set.
    """

    operation_id: UUID
    created_at: datetime
    run_id: UUID
    job: JobKey
    source: DatasetKey
    target: DatasetKey
    columns: ColumnSet
    columns_id: UUID  # the set's digest (`consumer.extract.columns.column_set_id`)
    event_time: datetime

    @property
    def key(self) -> tuple[UUID, DatasetKey, DatasetKey, UUID]:
        return (self.operation_id, self.source, self.target, self.columns_id)


@fast_init
@dataclass(frozen=True, slots=True)
class JobDatasetRecord:
    """Declared lineage from a JobEvent: a job's input or output without a run."""

    job: JobKey
    dataset: DatasetKey
    direction: int
    first_seen: datetime
    last_seen: datetime

    @property
    def key(self) -> tuple[JobKey, DatasetKey, int]:
        return (self.job, self.dataset, self.direction)


@dataclass(slots=True)
class Extracted:
    """Everything one event (or, after merge, one batch) contributes."""

    locations: list[LocationRecord] = field(default_factory=list)
    datasets: list[DatasetRecord] = field(default_factory=list)
    symlinks: list[SymlinkRecord] = field(default_factory=list)
    jobs: list[JobRecord] = field(default_factory=list)
    schemas: list[SchemaRecord] = field(default_factory=list)
    runs: list[RunRecord] = field(default_factory=list)
    operations: list[OperationRecord] = field(default_factory=list)
    ios: list[IORecord] = field(default_factory=list)
    column_lineage: list[ColumnLineageRecord] = field(default_factory=list)
    job_datasets: list[JobDatasetRecord] = field(default_factory=list)
    # Every user name seen, including those a merged run no longer names: a user is
    # recorded once seen, whichever value the run's merge rule keeps.
    users: list[str] = field(default_factory=list)
