"""Airflow: a DAG run and its task runs, linked by the parent (and root) facets.

Task events carry the `airflow` run facet (dag, dagRun, taskInstance, task);
DAG events carry `airflowDagRun`. Try number is the attempt, the DAG owner the
user who started it, the task instance's log URL the persistent log URL.
"""

from consumer.decode import Event
from consumer.extract.facets import Json, obj, text
from consumer.extract.runs import Placement, generic
from consumer.records import Extracted
from shared.enums import JobType


def extract_airflow(out: Extracted, event: Event) -> Placement:
    kind = (text(obj(event.job_facets, "jobType"), "jobType") or "").upper()
    facet = obj(event.run_facets, "airflow") or obj(event.run_facets, "airflowDagRun")
    is_dag = kind == "DAG" or (not kind and "taskInstance" not in facet)
    return generic(
        out,
        event,
        JobType.AIRFLOW_DAG if is_dag else JobType.AIRFLOW_TASK,
        external_id=text(obj(facet, "dagRun"), "run_id"),
        attempt=_try_number(obj(facet, "taskInstance")),
        user=text(obj(facet, "dag"), "owner") or text(obj(facet, "task"), "owner"),
        persistent_log_url=text(obj(facet, "taskInstance"), "log_url"),
    )


def _try_number(instance: Json) -> int | None:
    value = instance.get("try_number")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None
