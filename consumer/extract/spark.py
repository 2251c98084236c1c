"""Spark: the application is a run; each SQL execution / Spark job is an operation under it.

The OpenLineage Spark listener sends application-level events (jobType
APPLICATION) and job-level events (SQL_JOB, JOB, RDD_JOB) whose parent facet
names the application run; older listeners send only job-level events.
"""

from consumer.decode import Event
from consumer.extract.facets import obj, text
from consumer.extract.runs import (
    Placement,
    add_job,
    base_operation,
    created_at,
    generic,
    parent_of,
)
from consumer.records import Extracted, RunRecord
from shared.enums import JobType, Status

OPERATION_TYPES = frozenset({"SQL_JOB", "JOB", "RDD_JOB"})


def extract_spark(out: Extracted, event: Event) -> Placement:
    job_type = (text(obj(event.job_facets, "jobType"), "jobType") or "").upper()
    if job_type in OPERATION_TYPES and (placement := _operation(out, event)) is not None:
        return placement
    details = obj(event.run_facets, "spark_applicationDetails")
    dataproc = obj(event.run_facets, "gcp_dataproc_spark")
    return generic(
        out,
        event,
        JobType.SPARK_APPLICATION,
        external_id=text(details, "applicationId") or text(dataproc, "appId"),
        user=text(details, "userName"),
        running_log_url=text(details, "uiWebUrl"),
        persistent_log_url=text(details, "historyUrl"),
    )


def _operation(out: Extracted, event: Event) -> Placement | None:
    """A job-level event: an operation of the application run named by its parent facet."""
    parent = parent_of(out, event)
    if parent is None or event.run_id is None:
        return None
    app_run_id = parent[0]
    # Re-record the application job with its real type (parent_of records UNKNOWN).
    app_job = add_job(out, *_job_names(event), JobType.SPARK_APPLICATION, None, event.event_time)
    out.runs.append(
        RunRecord(
            id=app_run_id,
            created_at=created_at(app_run_id, event.event_time),
            job=app_job,
            event_time=event.event_time,
            status=int(Status.UNKNOWN),
        )
    )
    details = obj(event.run_facets, "spark_jobDetails")
    operation = base_operation(
        event,
        event.run_id,
        app_run_id,
        type=text(obj(event.job_facets, "jobType"), "jobType"),
        position=_int(text(details, "jobId")),
        group=text(details, "jobGroup"),
        description=text(details, "jobDescription"),
    )
    out.operations.append(operation)
    return Placement(event.run_id, operation.created_at, app_run_id, app_job, operation.sql_query)


def _job_names(event: Event) -> tuple[str, str]:
    job = obj(event.run_facets, "parent", "job")
    return text(job, "namespace") or "", text(job, "name") or ""


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 10 else None
