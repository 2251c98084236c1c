"""Debezium: a streaming connector task whose outputs are change topics (datahub's capture)."""

from typing import Any
from uuid import UUID

import pytest

from consumer.extract.debezium import connector
from shared.enums import JobType, Status
from tests.corpus import decoded, edited, extracted, payloads_of

pytestmark = pytest.mark.unit

[TASK] = payloads_of("datahub/debezium_event.json")


def test_connector_task_run() -> None:
    out = extracted(TASK)
    [run] = out.runs
    assert (run.id, run.job, run.status) == (
        UUID("0197ad84-7a0d-7527-9f8a-a08602319b4d"),
        ("namespace", "dbz-jobs", "debezium.0"),
        Status.STARTED,
    )
    assert run.started_at is not None
    assert [j.type for j in out.jobs] == [JobType.DEBEZIUM]
    [operation] = out.operations
    assert (operation.type, operation.description) == (
        "PostgresConnector",
        "Debezium Postgres Connector Job",
    )
    assert [(io.direction, io.dataset) for io in out.ios] == [
        (1, ("kafka", "kafka:9094", "debezium.public.product"))
    ]
    assert out.schemas  # the nested STRUCT schema of the topic


def test_the_connector_configuration_is_not_kept() -> None:
    assert "database.password" in TASK.decode()
    assert "password" not in repr(extracted(TASK))


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        (["connector.class=io.debezium.connector.mysql.MySqlConnector"], "MySqlConnector"),
        (["a=b", "connector.class=Plain"], "Plain"),
        (["connector.class="], None),
        ("connector.class=x", None),
        ([], None),
    ],
)
def test_connector_class(configs: Any, expected: str | None) -> None:
    def change(doc: dict[str, Any]) -> None:
        doc["run"]["facets"]["debezium_config"]["configs"] = configs

    assert connector(decoded(edited(TASK, change))) == expected
