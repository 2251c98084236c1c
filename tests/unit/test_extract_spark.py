"""Spark: the application is a run, SQL executions are its operations (real listener events)."""

from typing import Any
from uuid import UUID

import pytest

from consumer.extract.spark import operation_name
from consumer.records import Extracted, OperationRecord, RunRecord
from shared.enums import OutputType, Status, SymlinkType
from tests.corpus import edited, extracted, payloads_of

pytestmark = pytest.mark.unit

RENTGEN = "data-rentgen/events_spark.jsonl"  # application + one SQL execution, Hive -> ClickHouse
DATAPROC = "compatibility-tests/spark_dataproc_hive_app__{}.json"
RENTGEN_APP = UUID("01908224-8410-79a2-8de6-a769ad6944c9")
RENTGEN_SQL = UUID("01908225-1fd7-746b-910c-70d24f2898b1")


def run(out: Extracted, run_id: UUID) -> RunRecord:
    [record] = [r for r in out.runs if r.id == run_id]
    return record


def operation(out: Extracted, op_id: UUID) -> OperationRecord:
    [record] = [o for o in out.operations if o.id == op_id]
    return record


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            payloads_of(RENTGEN)[0],
            ("local-1719136537510", "myuser", "http://127.0.0.1:4040", None),
        ),
        (
            payloads_of(DATAPROC.format(1))[0],
            (
                "local-1729156674719",
                "root",
                "http://dataproc-producer-test-m.us-west1-a.c.gcp-open-lineage-testing.internal:44003",
                "http://dataproc-producer-test-m:18080/history/local-1729156674719",
            ),
        ),
    ],
    ids=["data-rentgen", "dataproc"],
)
def test_application_run_details(payload: bytes, expected: tuple[Any, ...]) -> None:
    out = extracted(payload)
    [app] = out.runs
    assert (app.external_id, app.user, app.running_log_url, app.persistent_log_url) == expected
    assert [j.type for j in out.jobs] == ["SPARK_APPLICATION"]


def test_sql_execution_is_an_operation_of_the_application() -> None:
    out = extracted(*payloads_of(RENTGEN)[1:4])  # START, RUNNING, COMPLETE of the execution
    op = operation(out, RENTGEN_SQL)
    assert (op.run_id, op.name, op.type, op.status) == (
        RENTGEN_APP,
        "execute_save_into_data_source_command",
        "SQL_JOB",
        Status.SUCCEEDED,
    )
    assert (op.position, op.description) == (3, "Hive -> Clickhouse")
    assert op.sql_query == "select id, name from schema.table where id = 1"
    # The application run exists (UNKNOWN until its own events arrive) with the job's type.
    assert run(out, RENTGEN_APP).status == Status.UNKNOWN
    assert {(j.name, j.type) for j in out.jobs} == {("spark_session", "SPARK_APPLICATION")}
    assert {r.id for r in out.runs} == {RENTGEN_APP}  # the execution is no run of its own


def test_inputs_through_hive_table_symlinks_and_output_statistics() -> None:
    out = extracted(*payloads_of(RENTGEN)[1:4])
    table = ("hive", "test-hadoop:9083", "mydatabase.source_table")
    path = ("hdfs", "test-hadoop:9820", "/user/hive/warehouse/mydatabase.db/source_table")
    [read] = [io for io in out.ios if io.direction == 0]
    [wrote] = [io for io in out.ios if io.direction == 1]
    assert (read.dataset, read.run_id, read.operation_id) == (table, RENTGEN_APP, RENTGEN_SQL)
    assert {(s.source, s.target, s.type) for s in out.symlinks} == {
        (path, table, SymlinkType.METASTORE),
        (table, path, SymlinkType.WAREHOUSE),
    }
    assert wrote.dataset == ("clickhouse", "localhost:8123", "mydb.myschema.mytable")
    assert (wrote.num_rows, wrote.num_bytes, wrote.output_types) == (
        10_000,  # RUNNING said 100, COMPLETE 10000: the maximum
        5_000_000,
        OutputType.OVERWRITE,
    )


def test_the_application_events_complete_the_application_run() -> None:
    out = extracted(*payloads_of(RENTGEN))
    app = run(out, RENTGEN_APP)
    assert (app.status, app.external_id, app.user) == (
        Status.SUCCEEDED,
        "local-1719136537510",
        "myuser",
    )
    assert app.started_at is not None
    assert app.ended_at is not None


def test_a_job_level_event_alone_creates_the_application_run() -> None:
    """datahub/sample_glue: a JOB event of an application that never sent its own events."""
    out = extracted(*payloads_of("datahub/sample_glue.json"))
    app_id = UUID("f03077f2-c077-4472-987e-b89b1c741c86")
    app = run(out, app_id)
    assert (app.status, app.job[2]) == (
        Status.UNKNOWN,
        "simple_app_parquet_with_persist_without_coalesce_s3_demo",
    )
    op = operation(out, UUID("3ad2a5ec-1c8b-4bda-84f4-1492758af65c"))
    assert (op.run_id, op.type, op.name) == (
        app_id,
        "JOB",
        "execute_insert_into_hadoop_fs_relation_command.sample_data_output",
    )
    inputs = {io.dataset for io in out.ios if io.direction == 0}
    assert inputs == {("glue", "us-west-2:123456789012", "my_glue_database.my_glue_table")}


def test_job_level_events_enrich_the_application_run() -> None:
    """Dataproc SQL executions carry the application id in gcp_dataproc_spark."""
    out = extracted(*payloads_of(DATAPROC.format(6), DATAPROC.format(9)))
    app = run(out, UUID("019299c5-12f5-7946-b5b2-c6abab662e20"))
    assert app.external_id == "local-1729156674719"
    [wrote] = [io for io in out.ios if io.direction == 1]
    assert wrote.dataset == ("hive", "dataproc-producer-test-m:9083", "default.t1")
    assert wrote.output_types == OutputType.APPEND  # INSERT INTO, no lifecycle facet


def _app_details(doc: dict[str, Any], **details: Any) -> None:
    facets = doc["run"]["facets"]
    facets.pop("spark_applicationDetails")
    facets["spark_properties"] = {"properties": {"spark.app.id": "app-from-properties"}}
    facets["spark_applicationDetails"] = details


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        ({}, ("app-from-properties", None, None)),
        (
            {"applicationId": "app-1", "uiWebUrl": "http://a:4040,http://b:4040"},
            ("app-1", "http://a:4040", None),
        ),
        (
            {"proxyUrl": "http://proxy/x", "uiWebUrl": "http://a:4040"},
            ("app-from-properties", "http://proxy/x", None),
        ),
        (
            {"historyUrl": "http://h:18080/history/app-1"},
            ("app-from-properties", None, "http://h:18080/history/app-1"),
        ),
    ],
)
def test_application_id_and_url_fallbacks(
    details: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    payload = edited(payloads_of(RENTGEN)[0], lambda doc: _app_details(doc, **details))
    [app] = extracted(payload).runs
    assert (app.external_id, app.running_log_url, app.persistent_log_url) == expected


def test_partition_directories_are_trimmed_from_paths() -> None:
    def partitioned(doc: dict[str, Any]) -> None:
        doc["inputs"] = [
            {"namespace": "hdfs://nn:8020", "name": "/warehouse/sales/dt=2024-01-01/hour=03"}
        ]

    out = extracted(edited(payloads_of(RENTGEN)[1], partitioned))
    assert {d.key for d in out.datasets} >= {("hdfs", "nn:8020", "/warehouse/sales")}
    assert all("dt=" not in d.name for d in out.datasets)


def test_logical_plans_are_never_read() -> None:
    out = extracted(*payloads_of("compatibility-tests/spark_cll__2.json"))
    assert "org.apache.spark.sql.catalyst" not in repr(out)


def test_events_without_job_type_or_parent_are_application_runs() -> None:
    """datahub/sample_spark: an old listener's event (no jobType, no parent facet)."""
    out = extracted(*payloads_of("datahub/sample_spark.json"))
    [app] = out.runs
    assert [j.type for j in out.jobs] == ["SPARK_APPLICATION"]
    assert [o.id for o in out.operations] == [app.id]


@pytest.mark.parametrize(
    ("job_name", "application", "expected"),
    [
        ("app.execute_insert_into_hive_table.t1", "app", "execute_insert_into_hive_table.t1"),
        ("app.select *\n  from t\twhere x", "app", "select * from t where x"),
        ("other.drop_table", "app", "other.drop_table"),
        ("app.", "app", "app."),
        ("", "app", None),
    ],
)
def test_operation_names(job_name: str, application: str, expected: str | None) -> None:
    assert operation_name(job_name, application) == expected
