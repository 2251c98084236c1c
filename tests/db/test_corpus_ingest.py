"""The whole corpus through the pipeline: what must be stored is, the rest is rejected precisely.

Then the stored model is checked for one representative of each integration.
"""

import uuid
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.extract.hive import session_uuid
from consumer.ingest import BatchResult, ingest_payloads
from shared.enums import OutputType, Status
from tests.conftest import truncate_all
from tests.corpus import corpus_events, expected_reject, ingestable

pytestmark = pytest.mark.db


@pytest.fixture(scope="module")
async def corpus(engine: AsyncEngine) -> tuple[AsyncEngine, BatchResult]:
    await truncate_all(engine)
    result = await ingest_payloads(engine, [e.payload for e in corpus_events()])
    return engine, result


async def rows(engine: AsyncEngine, sql: str, **params: Any) -> list[dict[str, Any]]:
    async with engine.connect() as conn:
        return [dict(r) for r in (await conn.execute(text(sql), params)).mappings()]


async def test_every_ingestable_event_is_written(corpus: tuple[AsyncEngine, BatchResult]) -> None:
    _, result = corpus
    events = corpus_events()
    must_store = set(ingestable())
    wanted = {i for i, e in enumerate(events) if e in must_store}
    assert len(events) == 219
    assert not wanted & result.rejects.keys(), {events[i].id: result.rejects[i] for i in wanted}
    assert result.written == len(wanted) == 144


async def test_rejects_are_templates_or_incomplete_with_precise_reasons(
    corpus: tuple[AsyncEngine, BatchResult],
) -> None:
    _, result = corpus
    events = corpus_events()
    for index, event in enumerate(events):
        expected = expected_reject(event)
        reject = result.rejects.get(index)
        assert (reject is None) == (expected is None), (event.id, reject)
        if reject is not None and expected is not None:
            assert (reject.reason, expected[1] in reject.detail) == (expected[0], True), event.id
    reasons = Counter(r.reason for r in result.rejects.values())
    assert reasons == {
        "placeholder": 50,
        "missing_field": 23,
        "invalid_run_id": 1,
        "unknown_kind": 1,
    }


# Natural keys in query results: "<location type> <location name> <name>".
DATASET = "(SELECT l.type || ' ' || l.name || ' ' || d.name FROM dataset d"
DATASET += " JOIN location l ON l.id = d.location_id WHERE d.id = {})"
RUN_SQL = """
SELECT r.*, l.type || ' ' || l.name || ' ' || j.name AS job, j.type, u.name AS user
FROM run r JOIN job j ON j.id = r.job_id JOIN location l ON l.id = j.location_id
LEFT JOIN user_account u ON u.id = r.started_by_user_id WHERE r.id = :id
"""
IO_SQL = f"""
SELECT o.name AS operation, o.type AS operation_type, o.status, x.*,
  {DATASET.format("x.dataset_id")} AS dataset
FROM {{table}} x JOIN operation o ON o.id = x.operation_id WHERE x.run_id = :run
"""  # noqa: S608 - constant table names
OPERATIONS_SQL = "SELECT * FROM operation WHERE run_id = :run ORDER BY name"
SYMLINK_SQL = f"""
SELECT {DATASET.format("s.from_dataset_id")} AS source,
  {DATASET.format("s.to_dataset_id")} AS target, s.type FROM dataset_symlink s
"""  # noqa: S608 - constant expressions


def triples(found: list[dict[str, Any]], *keys: str) -> set[tuple[Any, ...]]:
    return {tuple(row[k] for k in keys) for row in found}


async def run_of(engine: AsyncEngine, run_id: str | uuid.UUID) -> dict[str, Any]:
    [run] = await rows(engine, RUN_SQL, id=str(run_id))
    return run


async def test_spark_application_with_hive_tables(corpus: tuple[AsyncEngine, BatchResult]) -> None:
    """compatibility-tests/spark_dataproc_hive_app: application -> SQL executions, Hive tables."""
    engine, _ = corpus
    app = "019299c5-12f5-7946-b5b2-c6abab662e20"
    run = await run_of(engine, app)
    assert (run["job"], run["type"], run["status"]) == (
        "namespace default cl_i_test_application",
        "SPARK_APPLICATION",
        Status.SUCCEEDED,
    )
    assert (run["external_id"], run["user"]) == ("local-1729156674719", "root")
    assert run["running_log_url"].endswith(".internal:44003")
    assert (
        run["persistent_log_url"]
        == f"http://dataproc-producer-test-m:18080/history/{run['external_id']}"
    )
    operations = await rows(engine, OPERATIONS_SQL, run=app)
    assert {o["name"] for o in operations if o["type"] == "SQL_JOB"} == {
        "drop_table",
        "execute_create_table_command.warehouse_t1",
        "execute_insert_into_hive_table.warehouse_t1",
        "execute_create_hive_table_as_select_command.default_t2",
        "execute_insert_into_hive_table.warehouse_t2",
    }
    t1 = "hive dataproc-producer-test-m:9083 default.t1"
    outputs = await rows(engine, IO_SQL.format(table="output"), run=app)
    assert triples(outputs, "operation", "dataset", "types", "num_rows") >= {
        ("execute_insert_into_hive_table.warehouse_t1", t1, OutputType.APPEND, 2),
        ("execute_create_table_command.warehouse_t1", t1, OutputType.CREATE, None),
    }
    path = "hdfs dataproc-producer-test-m:8020 /user/hive/warehouse/t1"
    links = triples(await rows(engine, SYMLINK_SQL), "source", "target", "type")
    assert {(path, t1, "METASTORE"), (t1, path, "WAREHOUSE")} <= links


async def test_airflow_dag_and_task_runs(corpus: tuple[AsyncEngine, BatchResult]) -> None:
    """compatibility-tests/airflow__line_01..08: DAG BQ with tasks upload, copy, download."""
    engine, _ = corpus
    dag = await run_of(engine, "01936893-9751-7a91-a2a0-a51101a3970c")
    assert (dag["type"], dag["status"], dag["start_reason"]) == ("AIRFLOW_DAG", 2, "MANUAL")
    assert dag["external_id"] == "manual__2024-11-26T13:05:23.281750+00:00"
    assert dag["user"] is None  # owner "airflow" is Airflow's default, not a person
    tasks = await rows(engine, "SELECT id FROM run WHERE parent_run_id = :p", p=str(dag["id"]))
    task_runs = [await run_of(engine, t["id"]) for t in tasks]
    assert {(t["job"], t["type"], t["attempt"]) for t in task_runs} == {
        (f"namespace airflow BQ.{name}", "AIRFLOW_TASK", 1)
        for name in ("upload", "copy", "download")
    }
    assert all("/dags/BQ/grid?" in t["persistent_log_url"] for t in task_runs)
    upload = "01936893-9751-7b3c-8f76-8ac6d0e5f8a3"
    [operation] = await rows(engine, OPERATIONS_SQL, run=upload)
    assert (operation["name"], operation["description"]) == ("upload", "GCSToBigQueryOperator")
    inputs = await rows(engine, IO_SQL.format(table="input"), run=upload)
    outputs = await rows(engine, IO_SQL.format(table="output"), run=upload)
    assert {i["dataset"] for i in inputs} == {
        "gs mock-bucket copied.csv",
        "gs mock-bucket test.csv",
    }
    assert {o["dataset"] for o in outputs} == {"bigquery bigquery mock-project.test.upload"}
    job = await rows(engine, JOB_PARENT_SQL, name="BQ.upload")
    assert job == [{"parent": "namespace airflow BQ", "type": "AIRFLOW_TASK"}]


JOB_PARENT_SQL = """
SELECT p.type || '' AS type, (SELECT l.type || ' ' || l.name || ' ' || q.name FROM job q
  JOIN location l ON l.id = q.location_id WHERE q.id = p.parent_job_id) AS parent
FROM job p WHERE p.name = :name
"""


async def test_airflow_owner_and_task_name_without_the_task_facet(
    corpus: tuple[AsyncEngine, BatchResult],
) -> None:
    """data-rentgen/events_airflow: the task's COMPLETE event has no `airflow` facet."""
    engine, _ = corpus
    task = await run_of(engine, "01908223-0782-7fc0-9d69-b1df9dac2c60")
    assert (task["user"], task["status"], task["attempt"]) == ("myuser", Status.SUCCEEDED, 1)
    [operation] = await rows(engine, OPERATIONS_SQL, run=str(task["id"]))
    assert (operation["name"], operation["description"]) == ("mytask", "SQLExecuteQueryOperator")


async def test_dbt_invocation_with_model_and_test_operations(
    corpus: tuple[AsyncEngine, BatchResult],
) -> None:
    """compatibility-tests/dbt_csv_to_postgres: `dbt run` then `dbt test`, nodes as operations."""
    engine, _ = corpus
    run_invocation = "019a977e-6c3f-7b18-a638-05655c338077"
    run = await run_of(engine, run_invocation)
    assert (run["job"], run["type"], run["status"]) == (
        "namespace dbt dbt-run-openlineage_compatibility_test",
        "DBT_JOB",
        Status.SUCCEEDED,
    )
    assert run["external_id"] == "e49bb33a-4b62-417d-a378-0d218608b125"
    models = await rows(engine, OPERATIONS_SQL, run=run_invocation)
    prefix = "dbt_test.main.openlineage_compatibility_test."
    assert triples(models, "name", "type", "status") == {
        (prefix + name, "MODEL", Status.SUCCEEDED)
        for name in ("stg_orders", "stg_customers", "customer_analytics")
    } | {("dbt-run-openlineage_compatibility_test", None, Status.SUCCEEDED)}
    outputs = await rows(engine, IO_SQL.format(table="output"), run=run_invocation)
    assert ("postgres localhost:5432 dbt_test.main.stg_orders", 7) in triples(
        outputs, "dataset", "num_rows"
    )
    tests = await rows(engine, OPERATIONS_SQL, run="019a977e-d881-797a-a406-c0903f03fe57")
    assert [o["type"] for o in tests].count("TEST") == 5


async def test_flink_streaming_job(corpus: tuple[AsyncEngine, BatchResult]) -> None:
    """data-rentgen/events_flink: START, RUNNING, COMPLETE of one Kafka -> Kafka job."""
    engine, _ = corpus
    job_id = "b825f524-49d6-4dd8-bffd-3e5742c528d0"
    flink = "01965ca5-85bc-789d-93a1-9e4e48bd37b3"
    run = await run_of(engine, flink)
    assert (run["type"], run["status"], run["external_id"]) == ("FLINK_JOB", 2, job_id)
    assert run["running_log_url"] == f"http://localhost:18081/#/job/running/{job_id}"
    assert run["persistent_log_url"] == f"http://localhost:18081/#/job/completed/{job_id}"
    inputs = await rows(engine, IO_SQL.format(table="input"), run=flink)
    outputs = await rows(engine, IO_SQL.format(table="output"), run=flink)
    # The topics, not the Flink catalog tables their TABLE symlinks name.
    assert [i["dataset"] for i in inputs] == ["kafka kafka-host1:9092 input_topic"]
    assert [o["dataset"] for o in outputs] == ["kafka kafka-host2:9092 output_topic"]


async def test_hive_query_in_its_session_run(corpus: tuple[AsyncEngine, BatchResult]) -> None:
    """data-rentgen/events_hive: a CTAS query, an operation of its session's run."""
    engine, _ = corpus
    session = session_uuid("0ba6765b-3019-4172-b748-63c257158d20")
    run = await run_of(engine, session)
    assert (run["job"], run["type"], run["status"], run["user"]) == (
        "hive test-hadoop:10000 myuser@11.22.33.44",
        "HIVE_SESSION",
        Status.STARTED,
        "myuser",
    )
    assert run["started_at"].isoformat() == "2025-06-18T13:32:03.229000+00:00"
    [query] = await rows(engine, OPERATIONS_SQL, run=str(session))
    assert (str(query["id"]), query["type"], query["status"]) == (
        "0197833d-6cec-7609-a80f-8f4e0f8a5b1f",
        "CREATETABLE_AS_SELECT",
        Status.SUCCEEDED,
    )
    target = "hive test-hadoop:9083 mydatabase.target_table"
    outputs = await rows(engine, IO_SQL.format(table="output"), run=str(session))
    assert triples(outputs, "dataset", "types") == {(target, OutputType.CREATE)}
    path = "hdfs test-hadoop:9820 /user/hive/warehouse/mydatabase.db/target_table"
    assert (target, path, "WAREHOUSE") in triples(
        await rows(engine, SYMLINK_SQL), "source", "target", "type"
    )
    columns = await rows(
        engine, "SELECT count(*) AS n FROM column_lineage WHERE run_id = :r", r=str(session)
    )
    assert columns[0]["n"] > 0


async def test_debezium_connector_task(corpus: tuple[AsyncEngine, BatchResult]) -> None:
    """datahub/debezium_event: a streaming connector task writing a change topic."""
    engine, _ = corpus
    task = "0197ad84-7a0d-7527-9f8a-a08602319b4d"
    run = await run_of(engine, task)
    assert (run["job"], run["type"], run["status"]) == (
        "namespace dbz-jobs debezium.0",
        "DEBEZIUM",
        Status.STARTED,
    )
    [operation] = await rows(engine, OPERATIONS_SQL, run=task)
    assert operation["type"] == "PostgresConnector"
    outputs = await rows(engine, IO_SQL.format(table="output"), run=task)
    assert [o["dataset"] for o in outputs] == ["kafka kafka:9094 debezium.public.product"]
    # The connector configuration (with a password in it) is never stored.
    leaked = await rows(engine, "SELECT id FROM operation WHERE description LIKE '%password%'")
    assert not leaked
