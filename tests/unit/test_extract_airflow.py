"""Airflow: DAG runs and task runs linked by the parent facet (real provider events)."""

from typing import Any
from uuid import UUID

import pytest

from consumer.extract.airflow import owner
from consumer.records import Extracted, RunRecord
from shared.enums import JobType, Status
from tests.corpus import edited, extracted, payloads_of

pytestmark = pytest.mark.unit

BQ = [f"compatibility-tests/airflow__line_0{i}.json" for i in range(1, 9)]  # DAG BQ, 3 tasks
DAG_RUN = UUID("01936893-9751-7a91-a2a0-a51101a3970c")
UPLOAD = UUID("01936893-9751-7b3c-8f76-8ac6d0e5f8a3")
RENTGEN = "data-rentgen/events_airflow.jsonl"
MANUAL_RUN = "manual__2024-11-26T13:05:23.281750+00:00"


def run(out: Extracted, run_id: UUID) -> RunRecord:
    [record] = [r for r in out.runs if r.id == run_id]
    return record


def test_dag_run() -> None:
    out = extracted(*payloads_of(*BQ))
    dag = run(out, DAG_RUN)
    assert (dag.status, dag.external_id, dag.start_reason, dag.user) == (
        Status.SUCCEEDED,
        MANUAL_RUN,
        "MANUAL",
        None,  # the DAG's owner is "airflow", Airflow's default: nobody
    )
    assert dag.parent_run_id is None
    assert ("namespace", "airflow", "BQ", JobType.AIRFLOW_DAG) in {
        (*j.key, j.type) for j in out.jobs
    }


def test_task_runs_are_children_of_the_dag_run() -> None:
    out = extracted(*payloads_of(*BQ))
    tasks = [r for r in out.runs if r.parent_run_id == DAG_RUN]
    assert {t.job[2] for t in tasks} == {"BQ.upload", "BQ.copy", "BQ.download"}
    upload = run(out, UPLOAD)
    assert (upload.attempt, upload.status, upload.external_id) == (1, Status.SUCCEEDED, MANUAL_RUN)
    assert upload.persistent_log_url is not None
    assert upload.persistent_log_url.startswith("http://localhost:8080/dags/BQ/grid?dag_run_id=")
    jobs = {j.key: j for j in out.jobs}
    task_job = jobs[("namespace", "airflow", "BQ.upload")]
    assert (task_job.type, task_job.parent) == (
        JobType.AIRFLOW_TASK,
        ("namespace", "airflow", "BQ"),
    )


def test_task_operation_and_its_io() -> None:
    out = extracted(*payloads_of(BQ[1], BQ[2]))  # upload: START, COMPLETE
    [op] = [o for o in out.operations if o.id == UPLOAD]
    assert (op.run_id, op.name, op.description, op.position) == (
        UPLOAD,
        "upload",
        "GCSToBigQueryOperator",
        None,
    )
    assert {(io.direction, io.dataset) for io in out.ios} == {
        (0, ("gs", "mock-bucket", "copied.csv")),
        (0, ("gs", "mock-bucket", "test.csv")),
        (1, ("bigquery", "bigquery", "mock-project.test.upload")),
    }
    assert all(io.schema is not None for io in out.ios)


def test_a_complete_event_without_the_task_facet_keeps_the_task_name() -> None:
    """data-rentgen: the task's COMPLETE carries only the parent facet."""
    [_, start, complete, _] = payloads_of(RENTGEN)
    for payload in (start, complete):
        [op] = extracted(payload).operations
        assert op.name == "mytask"
    task = extracted(start, complete).runs
    assert {(r.job[2], r.user, r.attempt) for r in task} >= {("mydag.mytask", "myuser", 1)}


def test_root_facet_records_the_root_run_and_the_direct_parent_stays() -> None:
    root = {
        "run": {"runId": "01936893-0000-7000-8000-000000000001"},
        "job": {"namespace": "airflow", "name": "outer"},
    }

    def nested(doc: dict[str, Any]) -> None:
        doc["run"]["facets"]["parent"]["root"] = root

    out = extracted(edited(payloads_of(BQ[1])[0], nested))
    assert run(out, UPLOAD).parent_run_id == DAG_RUN
    outer = run(out, UUID(root["run"]["runId"]))
    assert (outer.status, outer.job) == (Status.UNKNOWN, ("namespace", "airflow", "outer"))


def test_root_is_the_parent_when_the_facet_names_no_direct_parent_run() -> None:
    """openlineage-spec-examples/spark_serde_openlineage-event: parent job, root run only."""
    out = extracted(*payloads_of("openlineage-spec-examples/spark_serde_openlineage-event.json"))
    child = run(out, UUID("5f24c93c-2ce9-49dc-82e7-95ab4915242f"))
    assert child.parent_run_id == UUID("5f24c93c-1a1a-49dc-82e7-95ab4915242f")


@pytest.mark.parametrize(
    ("facet", "expected"),
    [
        ({"owner": "myuser"}, "myuser"),
        ({"owner": "airflow"}, None),
        ({"owner": "***"}, None),
        ({"owner": " "}, None),
        ({}, None),
        ({"owner": "data-team, alice"}, "data-team, alice"),
    ],
)
def test_owners(facet: dict[str, Any], expected: str | None) -> None:
    assert owner(facet) == expected


def test_try_number_is_the_attempt() -> None:
    def retried(doc: dict[str, Any]) -> None:
        doc["run"]["facets"]["airflow"]["taskInstance"]["try_number"] = 3

    assert run(extracted(edited(payloads_of(BQ[1])[0], retried)), UPLOAD).attempt == 3
