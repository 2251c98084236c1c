"""merge: the records of a batch combined by natural key, with the rules below.

The same rules run again in SQL when a record meets the stored row
(`consumer.write.sql`), so merging in memory first only saves round trips.
Every rule is a join: commutative, associative and idempotent, so any arrival
order, any duplication and any split into batches give the same rows.

- status only moves forward: UNKNOWN < STARTED < SUCCEEDED < FAILED < KILLED,
  so a late START never regresses a finished run or operation;
- started_at takes the earliest, ended_at the latest, created_at the earliest;
- inputs/outputs of a run are the union over its events (keyed by operation and
  dataset): a later event with fewer never removes any;
- counters (rows, bytes, files) take the maximum; output and column-lineage
  kinds are bit sets, unioned; an operation's position takes the least (the
  first Spark job of a SQL execution); checkpoint snapshots take the greatest;
- descriptive fields (user, external id, log URLs, names, SQL, schema, parent,
  job) take the greatest non-null value: text by code point, references by
  their natural key (job by location and name, user by name, schema by digest).

Why not "the latest non-null by eventTime": a row keeps one last_event_time, not
one per field, and with one time per row that rule is order-dependent. Events
at t1 (user A), t3 (no user) and t2 (user B): t1, t3, t2 keeps A (t2 < t3, the
row's time), while t1, t2, t3 gives B. Producers send the same descriptive
values in every event of a run (extractors derive each field the same way from
every event that has it), so the greatest value is the latest in practice;
where they do differ, the greatest is at least the same whatever the order.

Results are sorted by key so every transaction locks rows in the same order.
"""

from collections.abc import Callable, Hashable, Iterable
from dataclasses import fields, replace
from typing import Any, TypeVar

from consumer.records import (
    ColumnLineageRecord,
    DatasetKey,
    DatasetRecord,
    Extracted,
    IORecord,
    JobDatasetRecord,
    JobRecord,
    LocationKey,
    LocationRecord,
    OperationRecord,
    RunRecord,
    SymlinkRecord,
)

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

RUN_DESCRIPTIVE = (
    "job",
    "parent_run_id",
    "user",
    "start_reason",
    "ended_reason",
    "external_id",
    "attempt",
    "running_log_url",
    "persistent_log_url",
    "checkpoints",
    "root_run_id",
)
OPERATION_DESCRIPTIVE = (
    "run_id",
    "name",
    "type",
    "group",
    "description",
    "sql_query",
    "ended_reason",
)


def greatest(a: Any, b: Any) -> Any:
    """The greater non-null value (None when both are None)."""
    return b if a is None else a if b is None else max(a, b)


def least(a: Any, b: Any) -> Any:
    """The lesser non-null value (None when both are None)."""
    return b if a is None else a if b is None else min(a, b)


def _descriptive(a: T, b: T, names: Iterable[str]) -> dict[str, Any]:
    return {n: greatest(getattr(a, n), getattr(b, n)) for n in names}


def merge_runs(a: RunRecord, b: RunRecord) -> RunRecord:
    return replace(
        a,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
        status=max(a.status, b.status),
        started_at=least(a.started_at, b.started_at),
        ended_at=greatest(a.ended_at, b.ended_at),
        **_descriptive(a, b, RUN_DESCRIPTIVE),
    )


def merge_operations(a: OperationRecord, b: OperationRecord) -> OperationRecord:
    return replace(
        a,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
        status=max(a.status, b.status),
        started_at=least(a.started_at, b.started_at),
        ended_at=greatest(a.ended_at, b.ended_at),
        position=least(a.position, b.position),
        **_descriptive(a, b, OPERATION_DESCRIPTIVE),
    )


def merge_ios(a: IORecord, b: IORecord) -> IORecord:
    return replace(
        a,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
        schema=greatest(a.schema, b.schema),
        num_rows=greatest(a.num_rows, b.num_rows),
        num_bytes=greatest(a.num_bytes, b.num_bytes),
        num_files=greatest(a.num_files, b.num_files),
        output_types=a.output_types | b.output_types,
    )


def merge_jobs(a: JobRecord, b: JobRecord) -> JobRecord:
    """A known type beats UNKNOWN (then the greater); the parent is the greatest non-null."""
    types = {a.type, b.type} - {"UNKNOWN"}
    return replace(
        a,
        type=max(types) if types else "UNKNOWN",
        parent=greatest(a.parent, b.parent),
        event_time=max(a.event_time, b.event_time),
    )


def merge_locations(a: LocationRecord, b: LocationRecord) -> LocationRecord:
    return replace(a, addresses=a.addresses | b.addresses)


def merge_job_datasets(a: JobDatasetRecord, b: JobDatasetRecord) -> JobDatasetRecord:
    return replace(
        a, first_seen=min(a.first_seen, b.first_seen), last_seen=max(a.last_seen, b.last_seen)
    )


def _by_key(records: Iterable[T], key: Callable[[T], K], combine: Callable[[T, T], T]) -> list[T]:
    merged: dict[K, T] = {}
    for record in records:
        k = key(record)
        merged[k] = combine(merged[k], record) if k in merged else record
    return [merged[k] for k in sorted(merged, key=_sort_key)]


def _sort_key(key: Any) -> Any:
    # Keys mix str/UUID/int tuples; str() makes them comparable, and stays stable.
    return str(key)


def _keep_first(a: T, _b: T) -> T:
    return a


def merge(batch: Iterable[Extracted]) -> Extracted:
    """All records of a batch merged by key and sorted by key."""
    parts = list(batch)
    every = Extracted(
        **{f.name: [r for p in parts for r in getattr(p, f.name)] for f in fields(Extracted)}
    )
    return Extracted(
        locations=_by_key(every.locations, lambda r: r.key, merge_locations),
        datasets=_by_key(every.datasets, lambda r: r.key, _latest_format),
        symlinks=_by_key(every.symlinks, lambda r: r.key, _greater_type),
        jobs=_by_key(every.jobs, lambda r: r.key, merge_jobs),
        schemas=_by_key(every.schemas, lambda r: r.digest, _keep_first),
        runs=_by_key(every.runs, lambda r: r.id, merge_runs),
        operations=_by_key(every.operations, lambda r: r.id, merge_operations),
        ios=_by_key(every.ios, lambda r: r.key, merge_ios),
        column_lineage=_by_key(every.column_lineage, lambda r: r.key, _merge_column_lineage),
        job_datasets=_by_key(every.job_datasets, lambda r: r.key, merge_job_datasets),
        users=sorted({*every.users, *(r.user for r in every.runs if r.user)}),
    )


def _latest_format(a: DatasetRecord, b: DatasetRecord) -> DatasetRecord:
    return replace(a, format=greatest(a.format, b.format))


def _greater_type(a: SymlinkRecord, b: SymlinkRecord) -> SymlinkRecord:
    return a if a.type >= b.type else b


def _merge_column_lineage(a: ColumnLineageRecord, b: ColumnLineageRecord) -> ColumnLineageRecord:
    return replace(
        a,
        types=a.types | b.types,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
    )


def rekey(batch: Extracted, canon: dict[LocationKey, LocationKey]) -> Extracted:
    """The batch with location keys replaced by their canonical keys, merged again.

    Used when alias resolution shows two keys of one batch are the same location,
    so that no statement touches one row twice.
    """

    def ds(key: DatasetKey) -> DatasetKey:
        loc = canon.get((key[0], key[1]), (key[0], key[1]))
        return (loc[0], loc[1], key[2])

    job = ds  # job keys have the same (location type, location name, name) shape

    out = Extracted(
        locations=[
            replace(r, type=canon.get(r.key, r.key)[0], name=canon.get(r.key, r.key)[1])
            for r in batch.locations
        ],
        datasets=[replace(r, location=canon.get(r.location, r.location)) for r in batch.datasets],
        symlinks=[replace(r, source=ds(r.source), target=ds(r.target)) for r in batch.symlinks],
        jobs=[
            replace(
                r,
                location=canon.get(r.location, r.location),
                parent=job(r.parent) if r.parent else None,
            )
            for r in batch.jobs
        ],
        schemas=batch.schemas,
        runs=[replace(r, job=job(r.job)) for r in batch.runs],
        operations=batch.operations,
        ios=[replace(r, job=job(r.job), dataset=ds(r.dataset)) for r in batch.ios],
        column_lineage=[
            replace(r, job=job(r.job), source=ds(r.source), target=ds(r.target))
            for r in batch.column_lineage
        ],
        job_datasets=[
            replace(r, job=job(r.job), dataset=ds(r.dataset)) for r in batch.job_datasets
        ],
        users=batch.users,
    )
    return merge([out])
