"""The generic path and what every integration shares: datasets, symlinks, schemas, statistics,
output kinds, column lineage, Dataset/JobEvents, and never raising on odd facets."""

from typing import Any
from uuid import UUID

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from consumer.decode import DecodeError
from consumer.extract import extract, integration
from consumer.extract.datasets import input_stats, output_stats, output_types, sql_output_type
from shared.enums import ColumnLineageType, JobType, OutputType, Status, SymlinkType
from tests.corpus import decoded, edited, extracted, payloads_of

pytestmark = pytest.mark.unit

UNKNOWN_PRODUCER = "data-rentgen/events_unknown.jsonl"  # START, RUNNING, COMPLETE
BASE: dict[str, Any] = {
    "eventType": "COMPLETE",
    "eventTime": "2024-05-01T00:00:00Z",
    "producer": "https://example.com/custom-scheduler",
    "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"},
    "job": {"namespace": "scheduler", "name": "nightly"},
}


def event(**changes: Any) -> bytes:
    return orjson.dumps({**BASE, **changes})


def test_any_producer_gets_a_run_with_one_operation_holding_its_io() -> None:
    out = extracted(*payloads_of(UNKNOWN_PRODUCER))
    [run] = out.runs
    [operation] = out.operations
    assert (run.id, run.status, operation.id, operation.run_id) == (
        UUID("01908224-8410-79a2-8de6-a769ad6944c9"),
        Status.SUCCEEDED,
        run.id,
        run.id,
    )
    assert [(j.key, j.type) for j in out.jobs] == [
        (("unknown", "unknown", "somejob"), JobType.UNKNOWN)
    ]
    assert {(io.direction, io.dataset[0]) for io in out.ios} == {(0, "hive"), (1, "clickhouse")}
    assert {io.operation_id for io in out.ios} == {run.id}


def test_a_dataset_event_records_the_dataset_and_its_schema() -> None:
    out = extracted(*payloads_of("marquez/event_dataset_event.json"))
    assert [d.key for d in out.datasets] == [
        ("namespace", "my-dataset-namespace", "my-dataset-name")
    ]
    assert [s.fields[0]["name"] for s in out.schemas] == ["col_a"]
    assert (out.runs, out.jobs) == ([], [])


def test_a_job_event_records_declared_lineage() -> None:
    out = extracted(*payloads_of("openlineage-spec-examples/client_python_serde_job_event.json"))
    assert [j.key for j in out.jobs] == [("namespace", "openlineage", "name")]
    assert {(r.direction, r.dataset[2]) for r in out.job_datasets} == {
        (0, "dataset_a"),
        (1, "dataset_b"),
    }
    assert out.runs == []


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE TABLE t AS SELECT 1", OutputType.CREATE),
        ("insert overwrite table t select 1", OutputType.OVERWRITE),
        ("INSERT INTO t VALUES (1)", OutputType.APPEND),
        ("-- nightly\n/* merge */ MERGE INTO t USING s ON ...", OutputType.APPEND),
        ("  truncate table t", OutputType.TRUNCATE),
        ("DROP TABLE IF EXISTS t1;", OutputType.DROP),
        ("ALTER TABLE t ADD COLUMN c int", OutputType.ALTER),
        ("select 1", None),
        ("", None),
        (None, None),
    ],
)
def test_output_kind_from_the_sql_verb(sql: str | None, expected: OutputType | None) -> None:
    assert sql_output_type(sql) == expected


@pytest.mark.parametrize(
    ("lifecycle", "sql", "expected"),
    [
        ("OVERWRITE", "INSERT INTO t VALUES (1)", OutputType.OVERWRITE),  # the facet wins
        ("rename", None, OutputType.RENAME),
        ("SOMETHING_NEW", "CREATE TABLE t (a int)", OutputType.CREATE),  # unknown: the SQL
        (None, None, OutputType.APPEND),  # nothing said: an append
    ],
)
def test_output_kind_from_lifecycle_state_change(
    lifecycle: str | None, sql: str | None, expected: OutputType
) -> None:
    facets = {"lifecycleStateChange": {"lifecycleStateChange": lifecycle}} if lifecycle else {}
    assert output_types({"facets": facets}, sql) == expected


@pytest.mark.parametrize(
    ("dataset", "expected"),
    [
        (
            {"inputFacets": {"inputStatistics": {"rowCount": 4, "size": 90, "fileCount": 2}}},
            (4, 90, 2),
        ),
        ({"inputFacets": {"dataQualityMetrics": {"rowCount": 4, "bytes": 90}}}, (4, 90, None)),
        (
            {"inputFacets": {"inputStatistics": {"rowCount": -1, "size": 2.0, "fileCount": True}}},
            (None, 2, None),
        ),
        ({"inputFacets": {"inputStatistics": {"rowCount": 2**64}}}, (None, None, None)),
        ({"inputFacets": "broken"}, (None, None, None)),
    ],
)
def test_input_statistics(dataset: dict[str, Any], expected: tuple[int | None, ...]) -> None:
    assert input_stats(dataset) == expected


def test_output_statistics() -> None:
    dataset = {"outputFacets": {"outputStatistics": {"rowCount": 7, "size": 512, "fileCount": 1}}}
    assert output_stats(dataset) == (7, 512, 1)


def test_schemas_are_deduplicated_by_digest() -> None:
    fields = [
        {"name": "id", "type": "int", "description": "key"},
        {"name": "s", "type": "struct", "fields": [{"name": "x", "type": "int"}]},
    ]
    reordered = [{"type": "int", "description": "key", "name": "id", "extra": 1}, fields[1]]
    outputs = [
        {"namespace": "s3://a", "name": "one", "facets": {"schema": {"fields": fields}}},
        {"namespace": "s3://b", "name": "two", "facets": {"schema": {"fields": reordered}}},
        {"namespace": "s3://c", "name": "three", "facets": {"schema": {"fields": fields[:1]}}},
    ]
    out = extracted(event(outputs=outputs))
    digests = [io.schema for io in sorted(out.ios, key=lambda io: io.dataset)]
    assert digests[0] == digests[1] != digests[2]  # s3 a, b, c
    assert len({s.digest for s in out.schemas}) == 2


def test_a_repeated_schema_gives_the_record_a_fresh_one_would() -> None:
    fields = [{"name": "id", "type": "int"}, {"name": "tags", "type": "array", "fields": []}]
    outputs = [{"namespace": "s3://a", "name": "one", "facets": {"schema": {"fields": fields}}}]
    first, again = (extract(decoded(event(outputs=outputs))) for _ in range(2))
    assert first.schemas == again.schemas
    assert [s.fields for s in first.schemas] == [s.fields for s in again.schemas]
    assert first.schemas[0].fields == (
        {"name": "id", "type": "int"},
        {"name": "tags", "type": "array"},
    )


def test_a_schema_nested_past_the_encoders_depth_limit_still_reads() -> None:
    # orjson.loads takes 1024 levels, orjson.dumps only 255: the schema memo's key fails.
    junk = "[" * 300 + "]" * 300
    fields = f'[{{"name": "id", "type": "int", "junk": {junk}}}]'
    dataset = (
        f'{{"namespace": "s3://a", "name": "one", "facets": {{"schema": {{"fields": {fields}}}}}}}'
    )
    payload = event().replace(b'"producer"', f'"outputs": [{dataset}], "producer"'.encode(), 1)
    out = extract(decoded(payload))
    assert [s.fields for s in out.schemas] == [({"name": "id", "type": "int"},)]


@pytest.mark.parametrize(
    ("transformations", "expected"),
    [
        (None, ColumnLineageType.DIRECT),  # spec 1-0: no transformations, direct
        ([{"type": "DIRECT", "subtype": "IDENTITY"}], ColumnLineageType.DIRECT),
        ([{"type": "INDIRECT", "subtype": "FILTER"}], ColumnLineageType.INDIRECT),
        (
            [{"type": "DIRECT"}, {"type": "INDIRECT"}],
            ColumnLineageType.DIRECT | ColumnLineageType.INDIRECT,
        ),
    ],
)
def test_column_lineage_kinds(transformations: list[dict[str, str]] | None, expected: int) -> None:
    source: dict[str, Any] = {"namespace": "s3://a", "name": "in", "field": "x"}
    if transformations is not None:
        source["transformations"] = transformations
    facet = {"fields": {"y": {"inputFields": [source]}}}
    out = extracted(
        event(outputs=[{"namespace": "s3://b", "name": "out", "facets": {"columnLineage": facet}}])
    )
    [edge] = out.column_lineage
    assert (edge.source, edge.columns) == (("s3", "a", "in"), (("x", "y", expected),))


def test_column_lineage_sets_per_source_dataset() -> None:
    """One set per source dataset of an output, sorted by code point, an edge named twice
    once with its types OR-ed."""

    def field(name: str, field: str, kind: str) -> dict[str, Any]:
        return {"namespace": "s3://a", "name": name, "field": field,
                "transformations": [{"type": kind}]}  # fmt: skip

    z = [field("in", "b", "DIRECT"), field("other", "q", "DIRECT"), field("in", "b", "INDIRECT")]
    facet = {
        "fields": {
            "z": {"inputFields": z},  # "b" -> "z" twice: one member, DIRECT | INDIRECT
            "Y": {"inputFields": [field("in", "a", "DIRECT"), field("in", "b", "DIRECT")]},
            "\u00e9": {"inputFields": [field("in", "a", "DIRECT")]},
        },
        "dataset": [field("in", "a", "INDIRECT"), field("in", "b", "INDIRECT")],
    }
    out = extracted(
        event(outputs=[{"namespace": "s3://b", "name": "out", "facets": {"columnLineage": facet}}])
    )
    sets = {edge.source: edge.columns for edge in out.column_lineage}
    assert sets == {
        ("s3", "a", "in"): (
            ("a", "", ColumnLineageType.INDIRECT),
            ("a", "Y", ColumnLineageType.DIRECT),
            ("a", "\u00e9", ColumnLineageType.DIRECT),
            ("b", "", ColumnLineageType.INDIRECT),
            ("b", "Y", ColumnLineageType.DIRECT),
            ("b", "z", ColumnLineageType.DIRECT | ColumnLineageType.INDIRECT),
        ),
        ("s3", "a", "other"): (("q", "z", ColumnLineageType.DIRECT),),
    }


def symlinked(namespace: str, name: str, kind: str | None) -> dict[str, Any]:
    ident = (
        {"namespace": "hive://ms:9083", "name": "db.t"}
        if kind != "LOCATION"
        else {"namespace": "s3://b", "name": "warehouse/t"}
    )
    if kind:
        ident["type"] = kind
    return {"namespace": namespace, "name": name, "facets": {"symlinks": {"identifiers": [ident]}}}


@pytest.mark.parametrize(
    ("dataset", "stored", "linked"),
    [
        (symlinked("s3://b", "warehouse/t", "TABLE"), ("hive", "ms:9083", "db.t"), True),
        (
            symlinked("s3://b", "warehouse/t", None),
            ("hive", "ms:9083", "db.t"),
            True,
        ),  # type defaults to TABLE
        (symlinked("hive://ms:9083", "db.t", "LOCATION"), ("hive", "ms:9083", "db.t"), True),
        (symlinked("kafka://k:9092", "topic", "TABLE"), ("kafka", "k:9092", "topic"), False),
    ],
    ids=["path-with-table", "untyped", "table-with-location", "topic-with-catalog-table"],
)
def test_symlinks(dataset: dict[str, Any], stored: tuple[str, str, str], linked: bool) -> None:
    out = extracted(event(outputs=[dataset]))
    [io] = out.ios
    assert io.dataset == stored
    path, table = ("s3", "b", "warehouse/t"), ("hive", "ms:9083", "db.t")
    expected = {(path, table, SymlinkType.METASTORE), (table, path, SymlinkType.WAREHOUSE)}
    assert {(s.source, s.target, s.type) for s in out.symlinks} == (expected if linked else set())


def test_column_lineage_sources_are_stored_under_the_same_key_as_the_inputs() -> None:
    source = {"namespace": "s3://b", "name": "warehouse/t", "field": "x"}
    facet = {"fields": {"y": {"inputFields": [source]}}}
    payload = event(
        inputs=[symlinked("s3://b", "warehouse/t", "TABLE")],
        outputs=[{"namespace": "s3://c", "name": "out", "facets": {"columnLineage": facet}}],
    )
    [edge] = extracted(payload).column_lineage
    assert edge.source == ("hive", "ms:9083", "db.t")


@pytest.mark.parametrize(
    ("job_facets", "producer", "expected"),
    [
        ({"jobType": {"integration": "spark"}}, "", "SPARK"),
        ({}, "https://github.com/OpenLineage/OpenLineage/tree/1.2.2/integration/spark", "SPARK"),
        ({}, "https://github.com/apache/airflow/tree/providers-openlineage/1.14.0", "AIRFLOW"),
        ({}, "https://github.com/debezium/debezium/v3.2.0.CR1", "DEBEZIUM"),
        ({}, "https://example.com/mine", "GENERIC"),
        ({"jobType": {"integration": 5}}, "", "5"),
    ],
)
def test_integration_detection(job_facets: dict[str, Any], producer: str, expected: str) -> None:
    job = {"namespace": "n", "name": "j", "facets": job_facets}
    assert integration(decoded(event(job=job, producer=producer))) == expected


def test_a_failed_run_keeps_its_error_message() -> None:
    def failed(doc: dict[str, Any]) -> None:
        doc["eventType"] = "FAIL"
        doc["run"]["facets"] = {
            "errorMessage": {"message": "boom", "programmingLanguage": "python"}
        }

    [run] = extracted(edited(event(), failed)).runs
    assert (run.status, run.ended_reason) == (Status.FAILED, "boom")


# Decode rejects NUL (PostgreSQL text cannot hold it); JSON cannot carry lone surrogates.
TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), max_size=8)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False)
    | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)
FACET_NAMES = st.sampled_from(
    [
        "parent",
        "spark_applicationDetails",
        "airflow",
        "hive_session",
        "hive_query",
        "checkpoints",
        "flink_job",
        "dbt_run",
        "jobType",
        "sql",
        "symlinks",
        "schema",
        "columnLineage",
        "errorMessage",
    ]
)
FACETS = st.dictionaries(FACET_NAMES, JSON | st.dictionaries(TEXT, JSON, max_size=3), max_size=4)


@settings(max_examples=100)
@given(
    run_facets=FACETS,
    job_facets=FACETS,
    dataset_facets=FACETS,
    integration_name=st.sampled_from(["SPARK", "AIRFLOW", "DBT", "FLINK", "HIVE", "DEBEZIUM", "X"]),
)
def test_extract_never_raises_on_odd_facets(
    run_facets: dict[str, Any],
    job_facets: dict[str, Any],
    dataset_facets: dict[str, Any],
    integration_name: str,
) -> None:
    job_facets["jobType"] = {"integration": integration_name, "jobType": "SQL_JOB"}
    dataset = {"namespace": "s3://b", "name": "k", "facets": dataset_facets}
    payload = event(
        run={"runId": BASE["run"]["runId"], "facets": run_facets},
        job={"namespace": "n", "name": "j", "facets": job_facets},
        inputs=[dataset],
        outputs=[dataset],
    )
    out = extract(decoded(payload))
    assert out.ios


@pytest.mark.parametrize(
    ("namespace", "name", "what"),
    [
        ("s3://bucket", "x" * 2001, "dataset name"),
        ("ns-" + "中" * 700, "table", "namespace"),  # a free-form word of 2103 bytes
    ],
)
def test_a_name_too_long_for_an_index_is_rejected_every_time(
    namespace: str, name: str, what: str
) -> None:
    # Dataset keys are memoised: a failed check must not be remembered as a key.
    payload = event(inputs=[{"namespace": namespace, "name": name}])
    for _ in range(2):
        with pytest.raises(DecodeError, match=what) as caught:
            extract(decoded(payload))
        assert caught.value.reject.reason == "name_too_long"


def test_a_parent_run_id_dated_after_year_9999_is_no_parent() -> None:
    """A UUIDv7 parent id with the greatest 48-bit time (year 10889) cannot be stored; the
    event still counts, without that parent (its own run id would be rejected by decode)."""
    far = str(UUID(int=((2**48 - 1) << 80) | (7 << 76) | (2 << 62) | 1))
    parent = {"run": {"runId": far}, "job": {"namespace": "scheduler", "name": "dag"}}
    out = extracted(event(run={**BASE["run"], "facets": {"parent": parent}}))
    assert [(r.id, r.parent_run_id) for r in out.runs] == [(UUID(BASE["run"]["runId"]), None)]
