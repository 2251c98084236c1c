"""dbt: an invocation (`dbt run`, `dbt test`, ...) is a run; its nodes are operations of it.

dbt-ol sends events for the invocation (jobType JOB, job `dbt-<command>-<project>`)
and for every node it runs (jobType MODEL, TEST, SNAPSHOT, SEED, ...) with a
parent facet naming the invocation run. A node event becomes an operation
(id = its own run id) of the invocation run: name = the node's job name,
type = the node kind, SQL = its compiled query; its inputs and outputs belong
to that operation. The invocation's external id is `dbt_run.invocation_id`;
node events carry it too, so they complete an invocation run they create
from the parent facet before (or without) the invocation's own events.
Node events without a parent facet (older dbt-ol) stay runs of a DBT_MODEL job.
"""

from consumer.decode import Event
from consumer.extract.facets import obj, text
from consumer.extract.runs import Placement, as_operation, bare_run, generic, parent_of, typed_job
from consumer.records import Extracted
from shared.enums import JobType

INVOCATION = "JOB"


def extract_dbt(out: Extracted, event: Event) -> Placement:
    kind = (text(obj(event.job_facets, "jobType"), "jobType", limit=100) or INVOCATION).upper()
    invocation_id = text(obj(event.run_facets, "dbt_run"), "invocation_id")
    if kind != INVOCATION and (parent := parent_of(out, event)) is not None:
        typed_job(out, parent.job, JobType.DBT_JOB)
        out.runs.append(bare_run(event, parent.run_id, parent.job, external_id=invocation_id))
        return as_operation(out, event, parent, type=kind)
    job_type = JobType.DBT_JOB if kind == INVOCATION else JobType.DBT_MODEL
    return generic(out, event, job_type, external_id=invocation_id)
