"""The generic path: any producer's RunEvent becomes a job, a run, one operation and its I/O.

Integration modules (spark, airflow, ...) reuse these pieces and refine the
records (job type, external id, user, log URLs, run -> operation mapping).
"""

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

from consumer.decode import EVENT_STATUS, Event
from consumer.extract.columns import add_column_lineage
from consumer.extract.datasets import (
    add_dataset,
    add_location,
    input_stats,
    output_stats,
    output_types,
    schema_of,
)
from consumer.extract.facets import obj, text
from consumer.records import Extracted, IORecord, JobKey, JobRecord, OperationRecord, RunRecord
from shared.enums import IODirection, JobType, Status
from shared.naming import parse_job_namespace
from shared.uuids import uuid7_time

STARTING = frozenset({"START", "RUNNING"})
ENDING = frozenset({"COMPLETE", "FAIL", "ABORT"})
MAX_NAME = 2000


@dataclass(frozen=True, slots=True)
class Placement:
    """Where an event's inputs and outputs attach: an operation of a run of a job."""

    operation_id: UUID
    created_at: datetime
    run_id: UUID
    job: JobKey
    sql: str | None = None


def created_at(run_id: UUID, event_time: datetime) -> datetime:
    """A UUIDv7's own time; otherwise the eventTime (the writer anchors it to the earliest)."""
    return uuid7_time(run_id) or event_time


def status_of(event: Event) -> int:
    return int(EVENT_STATUS.get(event.event_type or "OTHER", Status.UNKNOWN))


def add_job(
    out: Extracted, namespace: str, name: str, job_type: str, parent: JobKey | None, at: datetime
) -> JobKey:
    ns = parse_job_namespace(namespace)
    add_location(out, ns)
    record = JobRecord((ns.location_type, ns.location_name), name[:MAX_NAME], job_type, parent, at)
    out.jobs.append(record)
    return record.key


def parent_of(out: Extracted, event: Event) -> tuple[UUID, JobKey] | None:
    """The parent run id and job from the parent facet (the job recorded as UNKNOWN type)."""
    facet = obj(event.run_facets, "parent")
    run_id, namespace = text(obj(facet, "run"), "runId"), text(obj(facet, "job"), "namespace")
    name = text(obj(facet, "job"), "name")
    if not (run_id and namespace and name):
        return None
    try:
        parent_id = UUID(run_id)
    except ValueError:
        return None
    return parent_id, add_job(out, namespace, name, JobType.UNKNOWN, None, event.event_time)


def error_message(event: Event) -> str | None:
    return text(obj(event.run_facets, "errorMessage"), "message")


def base_run(event: Event, run_id: UUID, job: JobKey, parent_run: UUID | None) -> RunRecord:
    kind = event.event_type or "OTHER"
    return RunRecord(
        id=run_id,
        created_at=created_at(run_id, event.event_time),
        job=job,
        event_time=event.event_time,
        status=status_of(event),
        parent_run_id=parent_run,
        started_at=event.event_time if kind in STARTING else None,
        ended_at=event.event_time if kind in ENDING else None,
        ended_reason=error_message(event) if kind == "FAIL" else None,
        start_reason=text(obj(event.run_facets, "nominalTime"), "nominalStartTime"),
    )


def base_operation(event: Event, op_id: UUID, run_id: UUID, **overrides: Any) -> OperationRecord:
    """The operation an event describes; non-None `overrides` replace the defaults."""
    kind = event.event_type or "OTHER"
    record = OperationRecord(
        id=op_id,
        created_at=created_at(op_id, event.event_time),
        run_id=run_id,
        event_time=event.event_time,
        status=status_of(event),
        name=(event.job_name or "")[:MAX_NAME] or None,
        sql_query=text(obj(event.job_facets, "sql"), "query"),
        description=text(obj(event.job_facets, "documentation"), "description"),
        started_at=event.event_time if kind in STARTING else None,
        ended_at=event.event_time if kind in ENDING else None,
    )
    return _with(record, overrides)


def generic(out: Extracted, event: Event, job_type: str, **run_fields: Any) -> Placement:
    """A run of the event's job with one operation (id = run id) holding its I/O."""
    if event.run_id is None or not event.job_namespace or not event.job_name:
        raise ValueError("generic() needs a RunEvent (decode guarantees its envelope)")
    parent = parent_of(out, event)
    job = add_job(
        out,
        event.job_namespace,
        event.job_name,
        job_type,
        parent[1] if parent else None,
        event.event_time,
    )
    run = base_run(event, event.run_id, job, parent[0] if parent else None)
    out.runs.append(_with(run, run_fields))
    operation = base_operation(event, event.run_id, event.run_id)
    out.operations.append(operation)
    return Placement(event.run_id, operation.created_at, event.run_id, job, operation.sql_query)


R = TypeVar("R", RunRecord, OperationRecord)


def _with(record: R, fields: dict[str, Any]) -> R:
    """The record with every non-None field of `fields` replaced."""
    changes = {k: v for k, v in fields.items() if v is not None}
    return replace(record, **changes) if changes else record


def add_io(out: Extracted, event: Event, at: Placement) -> None:
    """Inputs and outputs of the event, attached to `at`, with schema, stats, column lineage."""
    for dataset in event.inputs:
        _add_one(out, event, at, dataset, IODirection.INPUT)
    for dataset in event.outputs:
        _add_one(out, event, at, dataset, IODirection.OUTPUT)


def _add_one(out: Extracted, event: Event, at: Placement, dataset: Any, direction: int) -> None:
    key = add_dataset(out, dataset)
    is_output = direction == IODirection.OUTPUT
    rows, size, files = output_stats(dataset) if is_output else input_stats(dataset)
    out.ios.append(
        IORecord(
            direction=direction,
            operation_id=at.operation_id,
            created_at=at.created_at,
            run_id=at.run_id,
            job=at.job,
            dataset=key,
            event_time=event.event_time,
            schema=schema_of(out, dataset),
            num_rows=rows,
            num_bytes=size,
            num_files=files,
            output_types=output_types(dataset, at.sql) if is_output else 0,
        )
    )
    if is_output:
        where = (at.operation_id, at.created_at, at.run_id, at.job, event.event_time)
        add_column_lineage(out, dataset, key, where)
