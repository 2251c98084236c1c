"""merge: the records of a batch combined by natural key, with the rules below.

The same rules run again in SQL when a record meets the stored row
(`consumer.write.sql`), so merging in memory first only saves round trips.
Every rule is a join: commutative, associative and idempotent, so any arrival
order, any duplication and any split into batches give the same rows.

- status only moves forward: UNKNOWN < STARTED < SUCCEEDED < FAILED < KILLED,
  so a late START never regresses a finished run or operation;
- started_at takes the earliest, ended_at the latest, created_at the earliest;
- inputs/outputs of a run are the union over its events (keyed by operation and
  dataset): a later event with fewer never removes any; an input/output or column
  set names the run and job of its latest event (equal times: the greater run id,
  then job key), should events disagree about whose operation it is;
- column lineage comes as sets, one per (operation, source, target) per event,
  and the set is part of the key: an event naming other columns adds a set of its
  own (the reads take the union), so no set changes once made;
- counters (rows, bytes, files) take the maximum; output kinds are bit sets,
  unioned; an operation's position takes the least (the first Spark job of a SQL
  execution); checkpoint snapshots take the greatest;
- descriptive fields (a run's job, parent, root, user, reasons, external id,
  attempt and log URLs; an operation's run, name, type, group, description,
  SQL and reason; an input's/output's schema) take the latest non-null value:
  the one seen in the event with the latest eventTime among those that have
  the field. Each field keeps that eventTime (`field_times`, `schema_time`), so
  a later event without the field never erases it and an earlier one that
  arrives last never overwrites it. Equal times fall back to the greater value
  (text by code point, references by natural key: job by location and name,
  user by name, schema by digest), which keeps the rule a join.

Jobs and datasets are dimensions without event times: a job's type is a known
type over UNKNOWN (then the greater), its parent the greatest by natural key (a
task's DAG, a Spark job's application: it does not change between events), a
dataset's format (the storage facet's file format, else its storage layer,
lower-cased) the greatest by code point: one table is written in one format.

Why per-field times: with one time per row "the latest non-null" depends on
arrival order. Events at t1 (user A), t3 (no user) and t2 (user B): t1, t3, t2
would keep A (t2 is older than the row's t3) while t1, t2, t3 gives B. The max
of (time, value) over the events that have a value is B in every order.

Results are sorted by key so every transaction locks rows in the same order.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields, replace
from datetime import datetime
from itertools import chain
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import UUID

from consumer.records import (
    ColumnLineageRecord,
    DatasetRecord,
    Extracted,
    IORecord,
    JobDatasetRecord,
    JobRecord,
    LocationRecord,
    OperationRecord,
    RunRecord,
    SymlinkRecord,
)
from shared import models

if TYPE_CHECKING:
    from _typeshed import SupportsRichComparison

T = TypeVar("T")
Times = tuple[datetime | None, ...]
K = TypeVar("K", bound="SupportsRichComparison")

# Descriptive fields that take the latest non-null value, by record attribute, in the
# order of the elements of `field_times` (the columns of shared.models.RUN_FIELDS /
# OPERATION_FIELDS, where two references are named by their natural key here).
_RECORD_NAMES = {"job_id": "job", "started_by_user_id": "user"}
RUN_FIELDS = tuple(_RECORD_NAMES.get(c, c) for c in models.RUN_FIELDS)
OPERATION_FIELDS = models.OPERATION_FIELDS


def greatest(a: Any, b: Any) -> Any:
    """The greater non-null value (None when both are None)."""
    return b if a is None else a if b is None else max(a, b)


def least(a: Any, b: Any) -> Any:
    """The lesser non-null value (None when both are None)."""
    return b if a is None else a if b is None else min(a, b)


def field_times(record: RunRecord | OperationRecord, names: tuple[str, ...]) -> Times:
    """When each descriptive field's value was seen (None where the field is None)."""
    if record.field_times is not None:
        return record.field_times
    at = record.event_time
    return tuple(None if getattr(record, n) is None else at for n in names)


def _latest(a: Any, b: Any, names: tuple[str, ...], get: Callable[[Any], tuple[Any, ...]]) -> Any:
    """Per field, the value of the later event (then the greater value); and the times.

    Returns the values in `names` order followed by the tuple of their times.
    """
    n = len(names)
    times_a = a.field_times or (a.event_time,) * n  # unmerged: every field seen at event_time
    times_b = b.field_times or (b.event_time,) * n
    out: list[Any] = []
    times: list[datetime | None] = []
    for value_a, value_b, time_a, time_b in zip(get(a), get(b), times_a, times_b, strict=True):
        if value_b is not None and (value_a is None or (time_b, value_b) > (time_a, value_a)):
            out.append(value_b)
            times.append(time_b)
        elif value_a is None:
            out.append(None)
            times.append(None)
        else:
            out.append(value_a)
            times.append(time_a)
    out.append(tuple(times))
    return out


_RUN_GET = attrgetter(*RUN_FIELDS)
_OPERATION_GET = attrgetter(*OPERATION_FIELDS)

# Merged records are built field by field rather than with dataclasses.replace():
# merging is a third of the consumer's CPU and replace() is several times slower.


_RUN_FIELD_COUNT = len(RUN_FIELDS)


def _is_reference(run: RunRecord) -> bool:
    """A run named only as a parent or root (extract's `bare_run`): a job and nothing else."""
    return (
        run.field_times is None
        and run.started_at is None
        and run.ended_at is None
        and run.checkpoints is None
        and _RUN_GET(run).count(None) == _RUN_FIELD_COUNT - 1  # the job is never None
    )


def merge_runs(a: RunRecord, b: RunRecord) -> RunRecord:
    if b.job == a.job and _is_reference(b):
        return _merge_reference(a, b)
    return merge_run_fields(a, b)


def merge_run_fields(a: RunRecord, b: RunRecord) -> RunRecord:
    """The general rule of merge_runs, field by field."""
    *values, times = _latest(a, b, RUN_FIELDS, _RUN_GET)
    return _run(a, b, values, times)


def _merge_reference(a: RunRecord, b: RunRecord) -> RunRecord:
    """merge_run_fields(a, b) where b is a reference to a's run and job, without `_latest`'s
    per-field loop: every child event names its parent and root, so this is most run merges
    of a batch (92% on the benchmark stream)."""
    values = _RUN_GET(a)
    at = a.event_time
    times = a.field_times or tuple(None if v is None else at for v in values)
    # The job's value is equal on both sides, so b's time wins only if it is later.
    if times[0] is not None and b.event_time > times[0]:
        times = (b.event_time, *times[1:])
    unchanged = times is a.field_times and a.created_at <= b.created_at
    if unchanged and at >= b.event_time and a.status >= b.status:
        return a
    return _run(a, b, values, times)


def _run(a: RunRecord, b: RunRecord, values: Sequence[Any], times: Times) -> RunRecord:
    """The merged run of a and b, given the descriptive fields' merged values and times."""
    (job, parent, root, user, start_reason, ended_reason, external_id, attempt, running_log,
     persistent_log) = values  # fmt: skip
    return RunRecord(
        id=a.id,
        created_at=min(a.created_at, b.created_at),
        job=job,
        event_time=max(a.event_time, b.event_time),
        status=max(a.status, b.status),
        parent_run_id=parent,
        started_at=least(a.started_at, b.started_at),
        ended_at=greatest(a.ended_at, b.ended_at),
        user=user,
        start_reason=start_reason,
        ended_reason=ended_reason,
        external_id=external_id,
        attempt=attempt,
        running_log_url=running_log,
        persistent_log_url=persistent_log,
        checkpoints=greatest(a.checkpoints, b.checkpoints),
        root_run_id=root,
        field_times=times,
    )


def merge_operations(a: OperationRecord, b: OperationRecord) -> OperationRecord:
    run_id, name, type_, group, description, sql_query, ended_reason, times = _latest(
        a, b, OPERATION_FIELDS, _OPERATION_GET
    )
    return OperationRecord(
        id=a.id,
        created_at=min(a.created_at, b.created_at),
        run_id=run_id,
        event_time=max(a.event_time, b.event_time),
        status=max(a.status, b.status),
        name=name,
        type=type_,
        position=least(a.position, b.position),
        group=group,
        description=description,
        sql_query=sql_query,
        ended_reason=ended_reason,
        started_at=least(a.started_at, b.started_at),
        ended_at=greatest(a.ended_at, b.ended_at),
        field_times=times,
    )


def schema_time(record: IORecord) -> datetime | None:
    """When the record's schema was seen (None without a schema)."""
    if record.schema is None:
        return None
    return record.event_time if record.schema_time is None else record.schema_time


def owner_of_latest(a: IORecord | ColumnLineageRecord, b: IORecord | ColumnLineageRecord) -> bool:
    """Whether `a` names the run and job an operation's I/O row keeps: those of its latest
    event, on equal times the greater run id, then the greater job key (as the SQL upsert)."""
    return (a.event_time, a.run_id, a.job) >= (b.event_time, b.run_id, b.job)


def merge_ios(a: IORecord, b: IORecord) -> IORecord:
    time_a, time_b = schema_time(a), schema_time(b)
    schema: UUID | None
    if b.schema is not None and (a.schema is None or (time_b, b.schema) > (time_a, a.schema)):
        schema, time_a = b.schema, time_b
    else:
        schema = a.schema
    owner = a if owner_of_latest(a, b) else b
    return IORecord(
        direction=a.direction,
        operation_id=a.operation_id,
        created_at=min(a.created_at, b.created_at),
        run_id=owner.run_id,
        job=owner.job,
        dataset=a.dataset,
        event_time=max(a.event_time, b.event_time),
        schema=schema,
        schema_time=time_a,
        num_rows=greatest(a.num_rows, b.num_rows),
        num_bytes=greatest(a.num_bytes, b.num_bytes),
        num_files=greatest(a.num_files, b.num_files),
        output_types=a.output_types | b.output_types,
    )


def merge_jobs(a: JobRecord, b: JobRecord) -> JobRecord:
    """A known type beats UNKNOWN (then the greater); the parent is the greatest non-null.
    A join (no times): a job met again, as in event after event of a stream, changes nothing."""
    if a.type == b.type:
        type_ = a.type
    else:
        type_ = (
            b.type
            if a.type == "UNKNOWN"
            else a.type
            if b.type == "UNKNOWN"
            else max(a.type, b.type)
        )
    parent = greatest(a.parent, b.parent)
    if type_ == a.type and parent == a.parent:
        return a  # the common case: the same job again
    return JobRecord(location=a.location, name=a.name, type=type_, parent=parent)


def merge_locations(a: LocationRecord, b: LocationRecord) -> LocationRecord:
    if a.addresses >= b.addresses:
        return a
    return LocationRecord(a.type, a.name, a.addresses | b.addresses)


def merge_job_datasets(a: JobDatasetRecord, b: JobDatasetRecord) -> JobDatasetRecord:
    return replace(
        a, first_seen=min(a.first_seen, b.first_seen), last_seen=max(a.last_seen, b.last_seen)
    )


def by_key(records: Iterable[T], key: Callable[[T], K], combine: Callable[[T, T], T]) -> list[T]:
    """Records merged by key, sorted by key (keys of one kind compare natively)."""
    merged: dict[K, T] = {}
    for record in records:
        k = key(record)
        seen = merged.get(k)
        merged[k] = record if seen is None else combine(seen, record)
    return [merged[k] for k in sorted(merged)]


def _keep_first(a: T, _b: T) -> T:
    return a


def merge(batch: Iterable[Extracted]) -> Extracted:
    """All records of a batch merged by key and sorted by key."""
    parts = list(batch)
    every = {
        f.name: list(chain.from_iterable(map(attrgetter(f.name), parts))) for f in fields(Extracted)
    }
    merged: dict[str, Any] = {
        name: by_key(every[name], key, combine) for name, (key, combine) in RULES.items()
    }
    # Every user any run record names, not only those the merged runs keep.
    merged["users"] = sorted({*every["users"], *(r.user for r in every["runs"] if r.user)})
    return Extracted(**merged)


def _greater_format(a: DatasetRecord, b: DatasetRecord) -> DatasetRecord:
    if b.format is None or b.format == a.format:
        return a  # the common case: the same dataset again
    return replace(a, format=greatest(a.format, b.format))


def _greater_type(a: SymlinkRecord, b: SymlinkRecord) -> SymlinkRecord:
    return a if a.type >= b.type else b


def _merge_column_lineage(a: ColumnLineageRecord, b: ColumnLineageRecord) -> ColumnLineageRecord:
    a_owns = owner_of_latest(a, b)
    if a.created_at <= b.created_at and a_owns:
        return a  # the common case: the same column set again, nothing new
    owner = a if a_owns else b
    return ColumnLineageRecord(
        operation_id=a.operation_id,
        created_at=min(a.created_at, b.created_at),
        run_id=owner.run_id,
        job=owner.job,
        source=a.source,
        target=a.target,
        columns=a.columns,
        columns_id=a.columns_id,
        event_time=max(a.event_time, b.event_time),
    )


# Per record kind: the merge key and the rule that combines two records of one key.
# UUIDs hash and compare in Python code; their .int (same order) in C.
# Keys as C-level attrgetters (a lambda per record was ~5% of the consumer). A nested
# key such as ((location type, location name), name) groups and sorts exactly as the flat
# `record.key` does: tuples compare element by element, and the inner tuples have one length.
RULES: dict[str, tuple[Callable[[Any], Any], Callable[[Any, Any], Any]]] = {
    "locations": (attrgetter("type", "name"), merge_locations),
    "datasets": (attrgetter("location", "name"), _greater_format),
    "symlinks": (attrgetter("source", "target"), _greater_type),
    "jobs": (attrgetter("location", "name"), merge_jobs),
    "schemas": (attrgetter("digest.int"), _keep_first),
    "runs": (attrgetter("id.int"), merge_runs),
    "operations": (attrgetter("id.int"), merge_operations),
    "ios": (attrgetter("direction", "operation_id.int", "dataset"), merge_ios),
    "column_lineage": (
        attrgetter("operation_id.int", "source", "target", "columns_id.int"),
        _merge_column_lineage,
    ),
    "job_datasets": (attrgetter("job", "dataset", "direction"), merge_job_datasets),
}
