"""Airflow: a DAG run and its task runs, linked by the parent (and root) facets.

DAG events carry `airflowDagRun` (START) or `airflowState` (COMPLETE/FAIL);
task events carry `airflow` (dag, dagRun, task, taskInstance), but COMPLETE
events of some provider versions carry only the parent facet. So every field
is read from whichever facet is there, and the operation name falls back to
the job name without its DAG prefix, which is the task id again.

- run: external id = dagRun.run_id, start reason = dagRun.run_type (MANUAL,
  SCHEDULED, BACKFILL, ...), user = the task's else the DAG's owner;
- task run: attempt = try number, persistent log URL = taskInstance.log_url;
- task operation: name = task id, description = operator class,
  position = map index (unmapped tasks have -1: none), group = task group id.
"""

from typing import Any

from consumer.decode import Event
from consumer.extract.facets import Json, obj, small_int, text
from consumer.extract.runs import Placement, generic
from consumer.records import Extracted
from shared.enums import JobType

# Owners that name nobody: Airflow's default owner and the secrets masker's "***".
ANONYMOUS_OWNERS = frozenset({"airflow", ""})


def extract_airflow(out: Extracted, event: Event) -> Placement:
    facet = obj(event.run_facets, "airflow") or obj(event.run_facets, "airflowDagRun")
    dag_run = obj(facet, "dagRun")
    run_type = text(dag_run, "run_type", limit=100)
    common: dict[str, Any] = {
        "external_id": text(dag_run, "run_id"),
        "start_reason": run_type.upper() if run_type else None,
        "user": owner(obj(facet, "task")) or owner(obj(facet, "dag")),
    }
    if _is_dag(event, facet):
        return generic(out, event, JobType.AIRFLOW_DAG, **common)
    instance = obj(facet, "taskInstance")
    return generic(
        out,
        event,
        JobType.AIRFLOW_TASK,
        operation=_task_operation(event, facet),
        attempt=small_int(instance, "try_number"),
        persistent_log_url=text(instance, "log_url"),
        **common,
    )


def _is_dag(event: Event, facet: Json) -> bool:
    kind = (text(obj(event.job_facets, "jobType"), "jobType") or "").upper()
    if kind:
        return kind == "DAG"
    return "taskInstance" not in facet and not obj(event.run_facets, "parent")


def _task_operation(event: Event, facet: Json) -> dict[str, object]:
    task = obj(facet, "task")
    parent_job = obj(event.run_facets, "parent", "job")
    dag_id = text(parent_job, "name") or text(obj(facet, "dag"), "dag_id")
    job_name = event.job_name or ""
    fallback = job_name.removeprefix(f"{dag_id}.") if dag_id else job_name
    return {
        "name": text(task, "task_id") or fallback or None,
        "description": text(task, "operator_class"),
        "position": small_int(obj(facet, "taskInstance"), "map_index"),
        "group": text(obj(task, "task_group"), "group_id"),
    }


def owner(facet: Json) -> str | None:
    """An owner that names someone: not Airflow's default, not masked (`***`)."""
    name = (text(facet, "owner", limit=200) or "").strip()
    if name.lower() in ANONYMOUS_OWNERS or not name.strip("*"):
        return None
    return name
