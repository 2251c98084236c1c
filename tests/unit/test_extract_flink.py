"""Flink: a (streaming) job run, RUNNING events with checkpoints, Kafka sources and sinks."""

from typing import Any
from uuid import UUID

import pytest

from consumer.extract.flink import checkpoints
from consumer.records import Checkpoints
from shared.enums import JobType, Status
from tests.corpus import edited, extracted, payloads_of

pytestmark = pytest.mark.unit

RENTGEN = "data-rentgen/events_flink.jsonl"  # START, RUNNING, COMPLETE
JOB_ID = "b825f524-49d6-4dd8-bffd-3e5742c528d0"


def test_job_run_with_web_ui_links() -> None:
    out = extracted(*payloads_of(RENTGEN))
    [run] = out.runs
    assert (run.id, run.status, run.external_id) == (
        UUID("01965ca5-85bc-789d-93a1-9e4e48bd37b3"),
        Status.SUCCEEDED,
        JOB_ID,
    )
    assert run.running_log_url == f"http://localhost:18081/#/job/running/{JOB_ID}"
    assert run.persistent_log_url == f"http://localhost:18081/#/job/completed/{JOB_ID}"
    assert [j.type for j in out.jobs] == [JobType.FLINK_JOB]


def test_running_keeps_the_run_started() -> None:
    start, running, _ = payloads_of(RENTGEN)
    [run] = extracted(running, start).runs
    assert (run.status, run.ended_at) == (Status.STARTED, None)
    assert run.started_at is not None


def test_kafka_topics_are_not_replaced_by_catalog_tables() -> None:
    out = extracted(*payloads_of(RENTGEN))
    assert {(io.direction, io.dataset) for io in out.ios} == {
        (0, ("kafka", "kafka-host1:9092", "input_topic")),
        (1, ("kafka", "kafka-host2:9092", "output_topic")),
    }
    assert out.symlinks == []


COUNTERS = {"completed": 12, "failed": 1, "in-progress": 1, "restored": 0, "total": 14}


def with_checkpoints(counters: dict[str, Any]) -> bytes:
    def change(doc: dict[str, Any]) -> None:
        doc["run"]["facets"]["checkpoints"] = counters

    return edited(payloads_of(RENTGEN)[1], change)


def test_checkpoint_counters_of_running_events() -> None:
    [run] = extracted(with_checkpoints(COUNTERS)).runs
    assert run.checkpoints == Checkpoints(
        total=14, completed=12, failed=1, restored=0, in_progress=1
    )


def test_the_latest_checkpoint_snapshot_wins_in_any_order() -> None:
    later = {**COUNTERS, "completed": 20, "total": 22, "in-progress": 0}
    for events in ([COUNTERS, later], [later, COUNTERS]):
        [run] = extracted(*(with_checkpoints(c) for c in events)).runs
        assert run.checkpoints == Checkpoints(22, 20, 1, 0, 0)


@pytest.mark.parametrize(
    ("facet", "expected"),
    [
        ({}, None),
        ({"completed": "${json-unit.any-number}"}, None),  # the Flink test templates
        ({"completed": 3}, Checkpoints(0, 3, 0, 0, 0)),
        ({"total": -1, "failed": 2}, Checkpoints(0, 0, 2, 0, 0)),
    ],
)
def test_checkpoint_facets(facet: dict[str, Any], expected: Checkpoints | None) -> None:
    assert checkpoints(facet) == expected


def test_namespace_that_is_no_web_address_gives_no_links() -> None:
    def renamed(doc: dict[str, Any]) -> None:
        doc["job"]["namespace"] = "flink_job_namespace"

    [run] = extracted(edited(payloads_of(RENTGEN)[0], renamed)).runs
    assert (run.external_id, run.running_log_url, run.persistent_log_url) == (JOB_ID, None, None)
