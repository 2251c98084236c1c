"""dbt: an invocation is a run, its models and tests are operations of it (dbt-ol 1.40 events)."""

from typing import Any
from uuid import UUID

import pytest

from consumer.records import Extracted, RunRecord
from shared.enums import JobType, OutputType, Status
from tests.corpus import edited, extracted, payloads_of

pytestmark = pytest.mark.unit

EVENTS = [f"compatibility-tests/dbt_csv_to_postgres__event_{i:03}.json" for i in range(1, 23)]
RUN_INVOCATION = UUID("019a977e-6c3f-7b18-a638-05655c338077")  # dbt run: events 003-010
TEST_INVOCATION = UUID("019a977e-d881-797a-a406-c0903f03fe57")  # dbt test: events 011-022
STG_ORDERS = UUID("019a977e-cd22-77d8-9146-6bbbbce77b6e")
PROJECT_JOB = ("namespace", "dbt", "dbt-run-openlineage_compatibility_test")


def run(out: Extracted, run_id: UUID) -> RunRecord:
    [record] = [r for r in out.runs if r.id == run_id]
    return record


def test_invocation_run() -> None:
    out = extracted(*payloads_of(*EVENTS[2:10]))
    invocation = run(out, RUN_INVOCATION)
    assert (invocation.job, invocation.status, invocation.external_id) == (
        PROJECT_JOB,
        Status.SUCCEEDED,
        "e49bb33a-4b62-417d-a378-0d218608b125",
    )
    assert [(j.key, j.type) for j in out.jobs] == [(PROJECT_JOB, JobType.DBT_JOB)]
    assert {r.id for r in out.runs} == {RUN_INVOCATION}  # models are no runs of their own


def test_models_are_operations_of_the_invocation_run() -> None:
    out = extracted(*payloads_of(*EVENTS[2:10]))
    models = {o.name: o for o in out.operations if o.type == "MODEL"}
    prefix = "dbt_test.main.openlineage_compatibility_test."
    assert set(models) == {
        prefix + m for m in ("stg_orders", "stg_customers", "customer_analytics")
    }
    stg_orders = models[prefix + "stg_orders"]
    assert (stg_orders.id, stg_orders.run_id, stg_orders.status) == (
        STG_ORDERS,
        RUN_INVOCATION,
        Status.SUCCEEDED,
    )
    assert stg_orders.sql_query is not None
    assert "from" in stg_orders.sql_query
    [wrote] = [io for io in out.ios if io.operation_id == STG_ORDERS and io.direction == 1]
    assert (wrote.dataset, wrote.run_id, wrote.job, wrote.num_rows) == (
        ("postgres", "localhost:5432", "dbt_test.main.stg_orders"),
        RUN_INVOCATION,
        PROJECT_JOB,
        7,
    )
    assert wrote.output_types == OutputType.APPEND  # a SELECT model, no lifecycle facet
    assert {c.target for c in out.column_lineage if c.operation_id == STG_ORDERS} == {wrote.dataset}


def test_tests_are_operations_of_their_invocation() -> None:
    out = extracted(*payloads_of(*EVENTS[10:22]))
    tests = [o for o in out.operations if o.type == "TEST"]
    assert len(tests) == 5
    assert {t.run_id for t in tests} == {TEST_INVOCATION}
    assert {io.direction for io in out.ios} == {0}  # tests read the models they check


def test_a_node_event_alone_creates_its_invocation_run() -> None:
    out = extracted(*payloads_of(EVENTS[6]))  # stg_orders COMPLETE
    invocation = run(out, RUN_INVOCATION)
    assert (invocation.status, invocation.external_id) == (
        Status.UNKNOWN,
        "e49bb33a-4b62-417d-a378-0d218608b125",
    )
    assert [(j.key, j.type) for j in out.jobs] == [(PROJECT_JOB, JobType.DBT_JOB)]


def test_a_node_without_parent_facet_is_a_run_of_a_model_job() -> None:
    def orphan(doc: dict[str, Any]) -> None:
        del doc["run"]["facets"]["parent"]

    out = extracted(edited(payloads_of(EVENTS[6])[0], orphan))
    [model] = out.runs
    assert model.id == STG_ORDERS
    assert [j.type for j in out.jobs] == [JobType.DBT_MODEL]


def test_data_rentgen_dbt_events() -> None:
    out = extracted(*payloads_of("data-rentgen/events_dbt.jsonl"))
    [invocation] = out.runs
    assert (invocation.job, invocation.status) == (
        ("local", "somehost", "dbt-run-demo_project"),
        Status.SUCCEEDED,
    )
    [model] = [o for o in out.operations if o.type == "MODEL"]
    assert model.name == "demo_schema.demo_project.target_table"
    outputs = [io for io in out.ios if io.direction == 1]
    assert [(o.dataset, o.num_rows) for o in outputs] == [
        (("spark", "localhost:10000", "demo_schema.target_table"), 2)
    ]
