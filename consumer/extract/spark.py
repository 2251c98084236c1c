"""Spark: the application is a run; each SQL execution / Spark job is an operation under it.

The OpenLineage Spark listener sends application-level events (jobType
APPLICATION) and job-level events (SQL_JOB, JOB, RDD_JOB) whose parent facet
names the application run. A job-level event alone creates the application
run: older listeners send no APPLICATION events, and a batch may hold a job's
events without its application's. Job-level events also carry application
details (applicationId, Dataproc appId, `spark.app.id`) that some listener
versions leave out of the application events (OpenLineage issue 3846), so they
enrich the application run too. Logical plans (`spark.logicalPlan`,
`spark_unknown`) are never read: they are large and not part of the model.
"""

import re
from typing import Any

from consumer.decode import Event
from consumer.extract.facets import first_of_list, obj, small_int, text
from consumer.extract.runs import (
    MAX_NAME,
    Parent,
    Placement,
    as_operation,
    bare_run,
    generic,
    parent_of,
    typed_job,
)
from consumer.records import Extracted
from shared.enums import JobType

OPERATION_TYPES = frozenset({"SQL_JOB", "JOB", "RDD_JOB"})
_SPACES = re.compile(r"\s+")


def extract_spark(out: Extracted, event: Event) -> Placement:
    job_type = (text(obj(event.job_facets, "jobType"), "jobType") or "").upper()
    if job_type in OPERATION_TYPES and (parent := parent_of(out, event)) is not None:
        return _operation(out, event, parent, job_type)
    has_io = bool(event.inputs or event.outputs)
    return generic(
        out, event, JobType.SPARK_APPLICATION, operation_row=has_io, **application_fields(event)
    )


def application_fields(event: Event) -> dict[str, Any]:
    """Run fields of the application from whichever facets this event carries."""
    details = obj(event.run_facets, "spark_applicationDetails")
    properties = obj(event.run_facets, "spark_properties", "properties")
    ui_url = first_of_list(text(details, "proxyUrl")) or first_of_list(text(details, "uiWebUrl"))
    return {
        "external_id": text(details, "applicationId")
        or text(obj(event.run_facets, "gcp_dataproc_spark"), "appId")
        or text(properties, "spark.app.id"),
        "user": text(details, "userName"),
        "running_log_url": ui_url,
        "persistent_log_url": first_of_list(text(details, "historyUrl")),
    }


def _operation(out: Extracted, event: Event, parent: Parent, job_type: str) -> Placement:
    """A job-level event: an operation of the application run named by its parent facet."""
    typed_job(out, parent.job, JobType.SPARK_APPLICATION)
    out.runs.append(bare_run(event, parent.run_id, parent.job, **application_fields(event)))
    details = obj(event.run_facets, "spark_jobDetails")
    return as_operation(
        out,
        event,
        parent,
        name=operation_name(event.job_name or "", parent.job[2]),
        type=job_type,
        position=small_int(details, "jobId"),
        group=text(details, "jobGroup"),
        description=text(details, "jobDescription"),
    )


def operation_name(job_name: str, application: str) -> str | None:
    """`app.execute_insert_into_hive_table.t1` -> `execute_insert_into_hive_table.t1`.

    The listener names a job-level event `<application>.<plan node>[.<table>]`,
    sometimes with a raw multi-line query in it: the prefix is dropped and
    whitespace runs become one space.
    """
    name = _SPACES.sub(" ", job_name).strip()
    return (name.removeprefix(application + ".") or name)[:MAX_NAME] or None
