"""Hive: queries are operations of their session's run (data-rentgen's captured hook event)."""

from typing import Any
from uuid import UUID

import pytest

from consumer.extract.hive import session_uuid
from shared.enums import ColumnLineageType, JobType, OutputType, Status, SymlinkType
from tests.corpus import edited, extracted, payloads_of

pytestmark = pytest.mark.unit

[QUERY] = payloads_of("data-rentgen/events_hive.jsonl")
SESSION_ID = "0ba6765b-3019-4172-b748-63c257158d20"
QUERY_RUN = UUID("0197833d-6cec-7609-a80f-8f4e0f8a5b1f")
TARGET = ("hive", "test-hadoop:9083", "mydatabase.target_table")
SOURCE = ("hive", "test-hadoop:9083", "mydatabase.source_table")


def test_the_session_is_a_run_with_a_deterministic_id() -> None:
    out = extracted(QUERY)
    [session] = out.runs
    assert session.id == session_uuid(SESSION_ID) == extracted(QUERY).runs[0].id
    assert session.id.version == 5
    assert (session.job, session.status, session.user, session.external_id) == (
        ("hive", "test-hadoop:10000", "myuser@11.22.33.44"),
        Status.STARTED,
        "myuser",
        SESSION_ID,
    )
    assert session.started_at == session.created_at
    assert session.started_at is not None
    assert session.started_at.isoformat() == "2025-06-18T13:32:03.229000+00:00"
    assert [j.type for j in out.jobs] == [JobType.HIVE_SESSION]


def test_the_query_is_an_operation_of_the_session() -> None:
    out = extracted(QUERY)
    [query] = out.operations
    assert (query.id, query.run_id, query.status, query.type) == (
        QUERY_RUN,
        session_uuid(SESSION_ID),
        Status.SUCCEEDED,
        "CREATETABLE_AS_SELECT",
    )
    assert (query.name, query.description) == (
        "createtable_as_select.mydatabase.target_table",
        "hive_20250618133205_44f7bc13-4538-42c7-a5be-8edb36c39a45",
    )
    assert {(io.direction, io.dataset, io.output_types) for io in out.ios} == {
        (0, SOURCE, 0),
        (1, TARGET, OutputType.CREATE),  # from the SQL: create table ... as select
    }


def test_location_symlinks_link_tables_to_their_paths() -> None:
    out = extracted(QUERY)
    path = ("hdfs", "test-hadoop:9820", "/user/hive/warehouse/mydatabase.db/target_table")
    links = {(s.source, s.target, s.type) for s in out.symlinks}
    assert {(TARGET, path, SymlinkType.WAREHOUSE), (path, TARGET, SymlinkType.METASTORE)} <= links


def test_column_lineage_direct_and_indirect() -> None:
    [columns] = [
        c.columns
        for c in extracted(QUERY).column_lineage
        if (c.source, c.target) == (SOURCE, TARGET)
    ]
    assert columns == (  # one set, sorted by (source, target) column
        ("customer_id", "", ColumnLineageType.INDIRECT),  # dataset-level (a JOIN key)
        ("customer_id", "customer_id", ColumnLineageType.DIRECT),
        ("dt", "dt", ColumnLineageType.DIRECT),
        ("total_spent", "total_spent", ColumnLineageType.DIRECT),
    )


def _session(doc: dict[str, Any], **changes: Any) -> None:
    doc["run"]["facets"]["hive_session"].update(changes)


@pytest.mark.parametrize(
    ("change", "job_name", "user"),
    [
        ({"username": "anonymous"}, "anonymous@11.22.33.44", None),
        ({"clientIp": None}, "myuser@unknown", "myuser"),
    ],
)
def test_session_job_names_and_users(
    change: dict[str, Any], job_name: str, user: str | None
) -> None:
    [session] = extracted(edited(QUERY, lambda doc: _session(doc, **change))).runs
    assert (session.job[2], session.user) == (job_name, user)


def test_a_custom_job_name_names_the_session_job() -> None:
    def named(doc: dict[str, Any]) -> None:
        doc["job"]["name"] = "nightly_etl"

    [session] = extracted(edited(QUERY, named)).runs
    assert session.job == ("hive", "test-hadoop:10000", "nightly_etl")


def test_a_query_without_session_facet_is_a_run_of_its_own() -> None:
    def sessionless(doc: dict[str, Any]) -> None:
        del doc["run"]["facets"]["hive_session"]

    out = extracted(edited(QUERY, sessionless))
    [run] = out.runs
    assert run.id == QUERY_RUN
    assert [j.type for j in out.jobs] == [JobType.HIVE_QUERY]
