"""ORM models of the lineage model (DESIGN.md §3); the migrations create exactly these.

Dimension tables (location, address, dataset, symlink, job, user, schema) have
bigint identity ids resolved by natural key. Time-series tables (run, operation,
input, output, column_lineage) are range-partitioned by `created_at` (quarterly,
plus a default partition) and keyed by (created_at, natural key): PostgreSQL
only enforces uniqueness on partitioned tables when the key includes the
partition column. They carry no foreign keys to each other: the consumer writes
a run, its operations and their inputs/outputs in one transaction, and the
partition key can move for non-v7 ids (see `uuid_anchor`).
"""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    DateTime,
    ForeignKey,
    Identity,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, UUID
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

PARTITIONED = {"postgresql_partition_by": "RANGE (created_at)"}
TIME_SERIES_TABLES = ("run", "operation", "input", "output", "column_lineage")

TZ = DateTime(timezone=True)

# Descriptive columns that take the latest non-null value, in the order of the
# elements of run.field_times / operation.field_times (append only: stored arrays
# are positional).
RUN_FIELDS = (
    "job_id",
    "parent_run_id",
    "root_run_id",
    "started_by_user_id",
    "start_reason",
    "ended_reason",
    "external_id",
    "attempt",
    "running_log_url",
    "persistent_log_url",
)
OPERATION_FIELDS = ("run_id", "name", "type", "group", "description", "sql_query", "ended_reason")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: dict[Any, Any] = {  # noqa: RUF012 - SQLAlchemy reads it as a class attr
        datetime: TZ,
        uuid.UUID: UUID(as_uuid=True),
        str: Text,
        int: BigInteger,
    }


def _trgm(table: str, column: str) -> Index:
    """A trigram GIN index for fuzzy, ranked name search (pg_trgm)."""
    return Index(
        f"ix_{table}_{column}_trgm",
        column,
        postgresql_using="gin",
        postgresql_ops={column: "gin_trgm_ops"},
    )


class Location(Base):
    __tablename__ = "location"
    __table_args__ = (UniqueConstraint("type", "name"), _trgm("location", "name"))

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    type: Mapped[str]
    name: Mapped[str]
    external_id: Mapped[str | None]


class Address(Base):
    __tablename__ = "address"

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    location_id: Mapped[int] = mapped_column(
        ForeignKey("location.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(unique=True)


class Dataset(Base):
    __tablename__ = "dataset"
    __table_args__ = (UniqueConstraint("location_id", "name"), _trgm("dataset", "name"))

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    location_id: Mapped[int] = mapped_column(ForeignKey("location.id", ondelete="CASCADE"))
    name: Mapped[str]
    format: Mapped[str | None]


class DatasetSymlink(Base):
    """Hive table <-> warehouse path; the consumer always writes both directions."""

    __tablename__ = "dataset_symlink"
    __table_args__ = (UniqueConstraint("from_dataset_id", "to_dataset_id"),)

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    from_dataset_id: Mapped[int] = mapped_column(ForeignKey("dataset.id", ondelete="CASCADE"))
    to_dataset_id: Mapped[int] = mapped_column(
        ForeignKey("dataset.id", ondelete="CASCADE"), index=True
    )
    type: Mapped[str]


class Job(Base):
    __tablename__ = "job"
    __table_args__ = (UniqueConstraint("location_id", "name"), _trgm("job", "name"))

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    location_id: Mapped[int] = mapped_column(ForeignKey("location.id", ondelete="CASCADE"))
    name: Mapped[str]
    type: Mapped[str] = mapped_column(server_default="UNKNOWN", index=True)
    parent_job_id: Mapped[int | None] = mapped_column(
        ForeignKey("job.id", ondelete="SET NULL"), index=True
    )


class User(Base):
    __tablename__ = "user_account"

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    name: Mapped[str] = mapped_column(unique=True)


class Schema(Base):
    """A dataset schema, stored once per distinct field list (digest = UUIDv5 of its JSON)."""

    __tablename__ = "schema"

    id: Mapped[int] = mapped_column(Identity(), primary_key=True)
    digest: Mapped[uuid.UUID] = mapped_column(unique=True)
    fields: Mapped[Any] = mapped_column(JSONB)


class JobDataset(Base):
    """Declared lineage from JobEvents (a job's inputs/outputs without a run)."""

    __tablename__ = "job_dataset"

    job_id: Mapped[int] = mapped_column(ForeignKey("job.id", ondelete="CASCADE"), primary_key=True)
    dataset_id: Mapped[int] = mapped_column(
        ForeignKey("dataset.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    direction: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    first_seen_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]


class UuidAnchor(Base):
    """created_at of runs/operations whose id is not a UUIDv7: the earliest eventTime seen.

    A UUIDv7 carries its own time; any other version is anchored here so every
    event of that run lands in the same partition row, whatever order they come in.
    """

    __tablename__ = "uuid_anchor"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    created_at: Mapped[datetime]


class Run(Base):
    __tablename__ = "run"
    __table_args__ = (
        Index("ix_run_job_id_created_at", "job_id", "created_at"),
        Index("ix_run_started_at", "started_at"),
        PARTITIONED,
    )

    created_at: Mapped[datetime] = mapped_column(primary_key=True)
    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, index=True)
    job_id: Mapped[int] = mapped_column(index=False)
    parent_run_id: Mapped[uuid.UUID | None] = mapped_column(index=True)
    status: Mapped[int] = mapped_column(SmallInteger, server_default="0", index=True)
    started_at: Mapped[datetime | None]
    ended_at: Mapped[datetime | None]
    started_by_user_id: Mapped[int | None]
    start_reason: Mapped[str | None]
    ended_reason: Mapped[str | None]
    external_id: Mapped[str | None]
    attempt: Mapped[int | None] = mapped_column(Integer)
    running_log_url: Mapped[str | None]
    persistent_log_url: Mapped[str | None]
    last_event_time: Mapped[datetime]
    # The root of the parent chain (e.g. the Airflow DAG run of a Spark app's task).
    root_run_id: Mapped[uuid.UUID | None] = mapped_column(index=True)
    # Streaming runs (Flink): [total, completed, failed, restored, in_progress] checkpoints.
    checkpoints: Mapped[Any | None] = mapped_column(JSONB)
    # eventTime of the event each RUN_FIELDS value came from (NULL where the field is).
    field_times: Mapped[list[datetime | None] | None] = mapped_column(ARRAY(TZ))


class Operation(Base):
    __tablename__ = "operation"
    __table_args__ = (PARTITIONED,)

    created_at: Mapped[datetime] = mapped_column(primary_key=True)
    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, index=True)
    run_id: Mapped[uuid.UUID] = mapped_column(index=True)
    name: Mapped[str | None]
    type: Mapped[str | None]
    status: Mapped[int] = mapped_column(SmallInteger, server_default="0")
    position: Mapped[int | None] = mapped_column(Integer)
    group: Mapped[str | None]
    description: Mapped[str | None]
    sql_query: Mapped[str | None]
    ended_reason: Mapped[str | None]
    started_at: Mapped[datetime | None]
    ended_at: Mapped[datetime | None]
    last_event_time: Mapped[datetime]
    # eventTime of the event each OPERATION_FIELDS value came from.
    field_times: Mapped[list[datetime | None] | None] = mapped_column(ARRAY(TZ))


class _DatasetIO:
    """Columns shared by input and output: one row per (operation, dataset)."""

    created_at: Mapped[datetime] = mapped_column(primary_key=True)
    operation_id: Mapped[uuid.UUID] = mapped_column(primary_key=True, index=True)
    dataset_id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[uuid.UUID] = mapped_column(index=True)
    job_id: Mapped[int]  # indexed by _by_job
    schema_id: Mapped[int | None]
    # eventTime of the event schema_id came from: the latest schema wins.
    schema_time: Mapped[datetime | None]
    num_rows: Mapped[int | None]
    num_bytes: Mapped[int | None]
    num_files: Mapped[int | None]
    last_event_time: Mapped[datetime]


_COUNTERS = ("schema_id", "num_rows", "num_bytes", "num_files")


def _covering(table: str, name: str, lead: str, include: tuple[str, ...]) -> Index:
    """(lead, last_event_time) carrying what a lineage level reads: index-only walks."""
    return Index(
        f"ix_{table}_{name}_seen", lead, "last_event_time", postgresql_include=list(include)
    )


def _by_dataset(table: str, *extra: str) -> Index:
    """Lineage walks from a dataset within a time window without touching the heap."""
    keys = ("created_at", "operation_id", "run_id", "job_id")
    return _covering(table, "dataset", "dataset_id", (*keys, *_COUNTERS, *extra))


def _by_job(table: str, *extra: str) -> Index:
    """Lineage at JOB granularity walks from a job within a time window, index-only (0008)."""
    return _covering(table, "job", "job_id", ("dataset_id", "created_at", *_COUNTERS, *extra))


class Input(_DatasetIO, Base):
    __tablename__ = "input"
    __table_args__ = (_by_dataset("input"), _by_job("input"), PARTITIONED)


class Output(_DatasetIO, Base):
    __tablename__ = "output"
    __table_args__ = (_by_dataset("output", "types"), _by_job("output", "types"), PARTITIONED)

    types: Mapped[int] = mapped_column(Integer, server_default="0")


class _Summary:
    """Columns a summary table keeps (JobEdge, DatasetEdge): sums with how many rows had a
    value (a sum of none is NULL, as SQL's `sum`), the outputs' bit mask, time bounds, and
    whether readers must use the rows instead (`stale`)."""

    num_rows: Mapped[int]
    rows_known: Mapped[int]
    num_bytes: Mapped[int]
    bytes_known: Mapped[int]
    num_files: Mapped[int]
    files_known: Mapped[int]
    types: Mapped[int | None] = mapped_column(Integer)  # outputs only, as output.types
    # Nullable so that an upsert whose rows only left a summary (NULL aggregates) reaches
    # its ON CONFLICT branch; every stored summary has them.
    first_seen_at: Mapped[datetime | None]
    last_created_at: Mapped[datetime | None]
    last_seen_at: Mapped[datetime | None]
    earliest_seen_at: Mapped[datetime | None]
    stale: Mapped[bool]


# Kept by triggers, updated in place by nearly every write: room on each page for the new
# versions (HOT updates). Derived from other tables: tests compare them to those.
_SUMMARY_TABLE = {"postgresql_with": {"fillfactor": 30}, "info": {"derived": True}}


class JobEdge(_Summary, Base):
    """What a job read from or wrote to a dataset, summed over every input or output row of
    that (dataset, job, direction): kept by triggers on `input` and `output` (migration
    0013), read by lineage at JOB granularity instead of those rows.

    `last_created_at` and `earliest_seen_at` bound the rows' times (never tighter than the
    rows: a row's created_at only moves earlier, its last_event_time only later), so a
    summary is the whole answer for a time window they fall inside. `stale`: a row left
    the summary in a way sums cannot follow (its job changed, it was deleted by a merge,
    its schema was replaced at the same time); readers use the rows for it instead.
    """

    __tablename__ = "job_edge"

    dataset_id: Mapped[int] = mapped_column(primary_key=True)
    direction: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    job_id: Mapped[int] = mapped_column(primary_key=True)
    schema_seen_at: Mapped[datetime | None]
    schema_id: Mapped[int | None]

    __table_args__ = (Index("ix_job_edge_job_id", "job_id", "direction"), _SUMMARY_TABLE)


class DatasetEdge(_Summary, Base):
    """What operations that read `source_id` and wrote `target_id` wrote there, summed over
    those operations (the outputs' counters, bit mask and times; each side's latest schema):
    kept by triggers on `input` and `output` (migration 0014), read by lineage at DATASET
    granularity instead of joining the rows. Bounds and `stale` as in JobEdge."""

    __tablename__ = "dataset_edge"

    source_id: Mapped[int] = mapped_column(primary_key=True)
    target_id: Mapped[int] = mapped_column(primary_key=True, index=True)
    source_schema_seen_at: Mapped[datetime | None]
    source_schema_id: Mapped[int | None]
    target_schema_seen_at: Mapped[datetime | None]
    target_schema_id: Mapped[int | None]

    __table_args__ = (_SUMMARY_TABLE,)


class ColumnSet(Base):
    """The column edges one event gave from one dataset to another, stored once per set.

    `id` is the set's digest (SHA-256 cut to a UUID, `consumer.extract.columns.column_set_id`),
    so a worker names a set without a round trip. The arrays are parallel, sorted by
    (source, target) column by code point, each pair once (migration 0012).
    """

    __tablename__ = "column_set"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    source_columns: Mapped[list[str]] = mapped_column(ARRAY(Text))
    target_columns: Mapped[list[str]] = mapped_column(ARRAY(Text))
    types: Mapped[list[int]] = mapped_column(ARRAY(Integer))


def expand_column_sets(row: str) -> str:
    """FROM items joining the column-lineage rows aliased `row` to their sets (`s`), one
    row of `m` (source_column, target_column, types) per member: how the reads expand sets."""
    return f"""JOIN column_set s ON s.id = {row}.column_set_id
CROSS JOIN LATERAL unnest(s.source_columns, s.target_columns, s.types)
  AS m(source_column, target_column, types)"""


class ColumnLineage(Base):
    """An operation's column edges from one dataset to another, one row per distinct set
    its events named; an edge's types and times are those of every row holding it."""

    __tablename__ = "column_lineage"
    __table_args__ = (PARTITIONED,)

    created_at: Mapped[datetime] = mapped_column(primary_key=True)
    operation_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    source_dataset_id: Mapped[int] = mapped_column(primary_key=True, index=True)
    target_dataset_id: Mapped[int] = mapped_column(primary_key=True, index=True)
    column_set_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    # Not indexed: no statement reads column lineage by run (migration 0010).
    run_id: Mapped[uuid.UUID]
    job_id: Mapped[int]
    last_event_time: Mapped[datetime]
