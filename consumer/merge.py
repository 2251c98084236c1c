"""merge: the records of a batch combined by natural key, with the rules below.

The same rules run again in SQL when a record meets the stored row
(`consumer.write.sql`), so merging in memory first only saves round trips:

- status only moves forward: UNKNOWN < STARTED < SUCCEEDED < FAILED < KILLED,
  so a late START never regresses a finished run;
- started_at takes the earliest, ended_at the latest, created_at the earliest;
- inputs/outputs of a run are the union over its events (keyed by operation and
  dataset): a later event with fewer never removes any;
- counters (rows, bytes, files) take the maximum; output and column-lineage
  kinds are bit sets, unioned;
- descriptive fields take the latest non-null value by eventTime; on equal
  eventTimes the greater value wins, so the result never depends on arrival order.

Results are sorted by key so every transaction locks rows in the same order.
"""

from collections.abc import Callable, Hashable, Iterable
from dataclasses import fields, replace
from datetime import datetime
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
)
OPERATION_DESCRIPTIVE = ("run_id", "name", "type", "position", "group", "description", "sql_query")


def latest(a: Any, a_time: datetime, b: Any, b_time: datetime) -> Any:
    """The later non-null value; on a tie in time, the greater one (order-independent)."""
    if a is None or b is None:
        return b if a is None else a
    if a_time != b_time:
        return a if a_time > b_time else b
    return max(a, b)


def _least(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def _greatest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else max(a, b)


def _max_int(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def _descriptive(a: T, b: T, names: Iterable[str], a_t: datetime, b_t: datetime) -> dict[str, Any]:
    return {n: latest(getattr(a, n), a_t, getattr(b, n), b_t) for n in names}


def merge_runs(a: RunRecord, b: RunRecord) -> RunRecord:
    return replace(
        a,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
        status=max(a.status, b.status),
        started_at=_least(a.started_at, b.started_at),
        ended_at=_greatest(a.ended_at, b.ended_at),
        **_descriptive(a, b, RUN_DESCRIPTIVE, a.event_time, b.event_time),
    )


def merge_operations(a: OperationRecord, b: OperationRecord) -> OperationRecord:
    return replace(
        a,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
        status=max(a.status, b.status),
        started_at=_least(a.started_at, b.started_at),
        ended_at=_greatest(a.ended_at, b.ended_at),
        **_descriptive(a, b, OPERATION_DESCRIPTIVE, a.event_time, b.event_time),
    )


def merge_ios(a: IORecord, b: IORecord) -> IORecord:
    return replace(
        a,
        created_at=min(a.created_at, b.created_at),
        event_time=max(a.event_time, b.event_time),
        schema=latest(a.schema, a.event_time, b.schema, b.event_time),
        num_rows=_max_int(a.num_rows, b.num_rows),
        num_bytes=_max_int(a.num_bytes, b.num_bytes),
        num_files=_max_int(a.num_files, b.num_files),
        output_types=a.output_types | b.output_types,
    )


def merge_jobs(a: JobRecord, b: JobRecord) -> JobRecord:
    """A known type beats UNKNOWN (then the greater); the parent is the latest non-null."""
    types = {a.type, b.type} - {"UNKNOWN"}
    return replace(
        a,
        type=max(types) if types else "UNKNOWN",
        parent=latest(a.parent, a.event_time, b.parent, b.event_time),
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
        symlinks=_by_key(every.symlinks, lambda r: r.key, _keep_first),
        jobs=_by_key(every.jobs, lambda r: r.key, merge_jobs),
        schemas=_by_key(every.schemas, lambda r: r.digest, _keep_first),
        runs=_by_key(every.runs, lambda r: r.id, merge_runs),
        operations=_by_key(every.operations, lambda r: r.id, merge_operations),
        ios=_by_key(every.ios, lambda r: r.key, merge_ios),
        column_lineage=_by_key(every.column_lineage, lambda r: r.key, _merge_column_lineage),
        job_datasets=_by_key(every.job_datasets, lambda r: r.key, merge_job_datasets),
    )


def _latest_format(a: DatasetRecord, b: DatasetRecord) -> DatasetRecord:
    formats = [f for f in (a.format, b.format) if f]
    return replace(a, format=max(formats)) if formats else a


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
    )
    return merge([out])
