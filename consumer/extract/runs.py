"""Jobs, runs, parents and operations of a RunEvent: the generic mapping integrations refine.

Generic: a RunEvent is a run of its job with one operation (id = run id) that
holds its inputs and outputs. An integration either refines that run (Airflow,
Flink, Debezium call `generic` with extra fields) or makes the event an
operation of its parent's run (Spark job-level events, dbt nodes: `as_operation`).

Parents: the parent facet names the direct parent run and its job; both are
recorded (the run with UNKNOWN status, which any real event of it overrides)
so the link holds even when the parent's own events never arrive. The root
(`parent.root`, ParentRunFacet 1-1) is recorded the same way, but the model
keeps only the direct parent (`run.parent_run_id`), so the root becomes the
parent only when the facet names no direct parent run (spec examples do that).
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from consumer.decode import EVENT_STATUS, Event
from consumer.extract.datasets import job_location
from consumer.extract.facets import Json, key_part, obj, text, uuid_at
from consumer.records import Extracted, JobKey, JobRecord, OperationRecord, RunRecord
from shared.enums import JobType, Status
from shared.frozen import fast_init
from shared.uuids import uuid7_time

STARTING = frozenset({"START", "RUNNING"})
ENDING = frozenset({"COMPLETE", "FAIL", "ABORT"})
FAILING = frozenset({"FAIL", "ABORT"})
MAX_NAME = 2000


@fast_init
@dataclass(frozen=True, slots=True)
class Placement:
    """Where an event's inputs and outputs attach: an operation of a run of a job."""

    operation_id: UUID
    created_at: datetime
    run_id: UUID
    job: JobKey
    sql: str | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Parent:
    """A run named by a parent (or root) facet, and its job."""

    run_id: UUID
    job: JobKey


def created_at(run_id: UUID, event_time: datetime) -> datetime:
    """A UUIDv7's own time; otherwise the eventTime (the writer anchors it to the earliest)."""
    return uuid7_time(run_id) or event_time


def status_of(event: Event) -> int:
    return int(EVENT_STATUS.get(event.event_type or "OTHER", Status.UNKNOWN))


def add_job(
    out: Extracted, namespace: str, name: str, job_type: str, parent: JobKey | None
) -> JobKey:
    location = job_location(namespace)
    out.locations.append(location)
    key = (location.type, location.name, key_part(name, "job name"))
    return typed_job(out, key, job_type, parent)


def typed_job(out: Extracted, key: JobKey, job_type: str, parent: JobKey | None = None) -> JobKey:
    """Record (again) a job already keyed, e.g. a parent job once its type is known."""
    parent = None if parent == key else parent  # a job is never its own parent
    out.jobs.append(JobRecord((key[0], key[1]), key[2], job_type, parent))
    return key


def parent_of(out: Extracted, event: Event) -> Parent | None:
    """The direct parent of the event's run (else its root), each recorded as a run of its job."""
    facet = obj(event.run_facets, "parent")
    direct = _referenced_run(out, event, facet)
    root = _referenced_run(out, event, obj(facet, "root"))
    return direct or root


def _referenced_run(out: Extracted, event: Event, facet: Json) -> Parent | None:
    run_id = uuid_at(obj(facet, "run"), "runId")
    namespace, name = text(obj(facet, "job"), "namespace"), text(obj(facet, "job"), "name")
    if run_id is None or run_id == event.run_id or not (namespace and name):
        return None
    job = add_job(out, namespace, name, JobType.UNKNOWN, None)
    out.runs.append(bare_run(event, run_id, job))
    return Parent(run_id, job)


def bare_run(event: Event, run_id: UUID, job: JobKey, **fields: Any) -> RunRecord:
    """A run known only by reference (a parent): UNKNOWN status, no times of its own."""
    return RunRecord(
        id=run_id,
        created_at=created_at(run_id, event.event_time),
        job=job,
        event_time=event.event_time,
        status=int(Status.UNKNOWN),
        **present(fields),
    )


def base_run(
    event: Event, run_id: UUID, job: JobKey, parent_run: UUID | None, **overrides: Any
) -> RunRecord:
    """The run an event describes; non-None `overrides` replace the defaults."""
    kind = event.event_type or "OTHER"
    fields: dict[str, Any] = {
        "parent_run_id": parent_run,
        "started_at": event.event_time if kind in STARTING else None,
        "ended_at": event.event_time if kind in ENDING else None,
        "ended_reason": error_message(event) if kind in FAILING else None,
        "root_run_id": _root_run_id(event, run_id),
    }
    return RunRecord(
        id=run_id,
        created_at=created_at(run_id, event.event_time),
        job=job,
        event_time=event.event_time,
        status=status_of(event),
        **(fields | present(overrides)),
    )


def _root_run_id(event: Event, run_id: UUID) -> UUID | None:
    """The root run of the parent facet (ParentRunFacet 1-1: e.g. the Airflow DAG run)."""
    root = uuid_at(obj(event.run_facets, "parent", "root", "run"), "runId")
    return root if root != run_id else None


def error_message(event: Event) -> str | None:
    """errorMessage (spec), else the Spark listener's own `spark.exception` facet."""
    facets = event.run_facets
    return text(obj(facets, "errorMessage"), "message") or text(
        obj(facets, "spark.exception"), "message"
    )


def base_operation(event: Event, op_id: UUID, run_id: UUID, **overrides: Any) -> OperationRecord:
    """The operation an event describes; non-None `overrides` replace the defaults."""
    kind = event.event_type or "OTHER"
    fields: dict[str, Any] = {
        "created_at": created_at(op_id, event.event_time),
        "status": status_of(event),
        "name": (event.job_name or "")[:MAX_NAME] or None,
        "sql_query": text(obj(event.job_facets, "sql"), "query"),
        "description": text(obj(event.job_facets, "documentation"), "description"),
        "started_at": event.event_time if kind in STARTING else None,
        "ended_at": event.event_time if kind in ENDING else None,
        "ended_reason": error_message(event) if kind in FAILING else None,
    }
    return OperationRecord(
        id=op_id, run_id=run_id, event_time=event.event_time, **(fields | present(overrides))
    )


def generic(
    out: Extracted,
    event: Event,
    job_type: str,
    *,
    operation: Mapping[str, Any] | None = None,
    operation_row: bool = True,
    **run_fields: Any,
) -> Placement:
    """A run of the event's job with one operation (id = run id) holding its I/O.

    `operation_row=False` records no operation (a Spark application event without
    I/O describes only the run; its SQL jobs are the operations).
    """
    run_id, namespace, name = _envelope(event)
    parent = parent_of(out, event)
    job = add_job(out, namespace, name, job_type, parent.job if parent else None)
    out.runs.append(base_run(event, run_id, job, parent.run_id if parent else None, **run_fields))
    record = base_operation(event, run_id, run_id, **(operation or {}))
    if operation_row:
        out.operations.append(record)
    return Placement(run_id, record.created_at, run_id, job, record.sql_query)


def as_operation(out: Extracted, event: Event, parent: Parent, **fields: Any) -> Placement:
    """The event as an operation (id = its run id) of its parent's run, which holds its I/O."""
    run_id, _, _ = _envelope(event)
    record = base_operation(event, run_id, parent.run_id, **fields)
    out.operations.append(record)
    return Placement(run_id, record.created_at, parent.run_id, parent.job, record.sql_query)


def _envelope(event: Event) -> tuple[UUID, str, str]:
    if event.run_id is None or not event.job_namespace or not event.job_name:
        raise ValueError("a RunEvent needs runId, job.namespace and job.name (decode checks)")
    return event.run_id, event.job_namespace, event.job_name


def present(fields: Mapping[str, Any]) -> dict[str, Any]:
    """The non-None entries of `fields`: the ones that replace a record's defaults.

    Records are built once with them merged in, not built and then `replace`d: a frozen
    dataclass's `__init__` sets each field through `object.__setattr__`, so building one
    twice per run and operation was a measurable share of extract.
    """
    return {k: v for k, v in fields.items() if v is not None}
