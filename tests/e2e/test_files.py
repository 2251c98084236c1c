"""Job a: CSV + Parquet -> join, aggregate -> Parquet, asserted through the read API."""

import getpass
from pathlib import Path

import pytest

from tests.e2e.api import Api, Json, by_name, dataset_names
from tests.e2e.conftest import NAMESPACE
from tests.e2e.harness import JobResult, Pipeline
from tests.e2e.jobs.names import FILES_APP as APP_NAME

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
async def files_job(pipeline: Pipeline) -> JobResult:
    result = await pipeline.run_job("files_job")
    assert result.returncode == 0, result.tail()
    await pipeline.drained()
    return result


def data(pipeline: Pipeline, *parts: str) -> str:
    return str(pipeline.work / "files" / Path(*parts))


def size(path: str) -> int:
    return Path(path).stat().st_size


async def app_run(api: Api) -> Json:
    job = await api.job(NAMESPACE, APP_NAME)
    return await api.run(job["last_run"]["id"])


async def test_every_event_is_accepted_and_keyed_by_the_application(
    pipeline: Pipeline, files_job: JobResult
) -> None:
    assert await pipeline.dead_letters() == 0
    records = await pipeline.records()
    # START/COMPLETE of the application plus START/RUNNING/COMPLETE of each SQL job.
    assert len(records) >= 6
    # OpenLineage >= 1.13: key run:{root job namespace}/{root job name}, so the whole
    # application lands on one partition, in the order the listener sent it.
    assert {r.key for r in records} == {f"run:{NAMESPACE}/{APP_NAME}".encode()}
    assert len({r.partition for r in records}) == 1


async def test_application_is_a_spark_run(api: Api, files_job: JobResult) -> None:
    job = await api.job(NAMESPACE, APP_NAME)
    assert job["type"] == "SPARK_APPLICATION"
    assert (job["location"]["type"], job["location"]["name"]) == ("namespace", NAMESPACE)
    run = await api.run(job["last_run"]["id"])
    assert (run["status"], run["state"], run["result"]) == ("SUCCEEDED", "COMPLETE", "SUCCESS")
    assert run["external_id"].startswith("local-")  # spark_applicationDetails.applicationId
    assert run["started_by"] == getpass.getuser()
    assert run["started_at"] is not None
    assert run["ended_at"] is not None
    assert run["duration_ms"] > 0


async def test_operations_with_their_inputs_outputs_and_row_counts(
    api: Api, pipeline: Pipeline, files_job: JobResult
) -> None:
    run = await app_run(api)
    operations = await api.spark_operations(run["id"])
    assert [(o["type"], o["status"]) for o in operations] == [("SQL_JOB", "SUCCEEDED")] * 2
    to_parquet = await api.operation(by_name(operations, "lake_orders")["id"])
    [csv_in] = to_parquet["inputs"]
    assert csv_in["dataset"]["name"] == data(pipeline, "raw", "orders.csv")
    # Spark reports no input row counts for files, only bytes and files read.
    assert (csv_in["num_rows"], csv_in["num_files"]) == (None, 1)
    assert csv_in["num_bytes"] == size(data(pipeline, "raw", "orders.csv"))
    [parquet_out] = to_parquet["outputs"]
    assert parquet_out["dataset"]["name"] == data(pipeline, "lake", "orders")
    assert (parquet_out["num_rows"], parquet_out["types"]) == (6, ["OVERWRITE"])
    assert parquet_out["num_files"] >= 1
    assert parquet_out["num_bytes"] > 0
    report = await api.operation(by_name(operations, "lake_customer_totals")["id"])
    assert dataset_names(report["inputs"]) == {
        data(pipeline, "raw", "customers.csv"),
        data(pipeline, "lake", "orders"),
    }
    [totals] = report["outputs"]
    assert totals["dataset"]["name"] == data(pipeline, "lake", "customer_totals")
    assert (totals["num_rows"], totals["types"]) == (3, ["OVERWRITE"])
    assert report["run"]["id"] == run["id"]


async def test_column_lineage_of_the_aggregate(
    api: Api, pipeline: Pipeline, files_job: JobResult
) -> None:
    operations = await api.spark_operations((await app_run(api))["id"])
    report = await api.operation(by_name(operations, "lake_customer_totals")["id"])
    orders = await api.dataset("file", data(pipeline, "lake", "orders"))
    edges = {
        (e["source_dataset_id"], e["source_column"], e["target_column"]): e["types"]
        for e in report["column_lineage"]
    }
    assert "DIRECT" in edges[(orders["id"], "amount", "total")]
    # The join key feeds the whole output indirectly (dataset-level, no target column).
    assert "INDIRECT" in edges[(orders["id"], "customer_id", "")]


async def test_datasets_are_local_files_with_schemas(
    api: Api, pipeline: Pipeline, files_job: JobResult
) -> None:
    for parts in (("raw", "orders.csv"), ("raw", "customers.csv"), ("lake", "orders")):
        dataset = await api.dataset("file", data(pipeline, *parts))
        assert dataset["name"] == data(pipeline, *parts)
        assert (dataset["location"]["type"], dataset["location"]["name"]) == ("file", "file")
    totals = await api.dataset("file", data(pipeline, "lake", "customer_totals"))
    fields = [(f["name"], f["type"]) for f in totals["schemas"][0]["fields"]]
    assert fields == [("country", "string"), ("orders", "long"), ("total", "double")]
    assert [(j["job"]["name"], j["direction"]) for j in totals["jobs"]] == [(APP_NAME, "OUTPUT")]


async def test_lineage_graph_through_both_steps(
    api: Api, pipeline: Pipeline, files_job: JobResult
) -> None:
    totals = await api.dataset("file", data(pipeline, "lake", "customer_totals"))
    graph = await api.lineage(
        "DATASET", totals["id"], direction="UPSTREAM", depth=4, granularity="OPERATION"
    )
    assert not graph["truncated"]
    names = {d["name"] for d in graph["nodes"]["datasets"]}
    assert names == {
        data(pipeline, "raw", "orders.csv"),
        data(pipeline, "raw", "customers.csv"),
        data(pipeline, "lake", "orders"),
        data(pipeline, "lake", "customer_totals"),
    }
    assert len(graph["nodes"]["operations"]) == 2
    flat = await api.lineage(
        "DATASET", totals["id"], direction="UPSTREAM", depth=2, granularity="DATASET"
    )
    ids = {d["id"]: d["name"].rsplit("/", 1)[-1] for d in flat["nodes"]["datasets"]}
    edges = {
        (ids[e["from"]["id"]], ids[e["to"]["id"]]) for e in flat["relations"]["dataset_lineage"]
    }
    assert edges == {
        ("orders.csv", "orders"),
        ("orders", "customer_totals"),
        ("customers.csv", "customer_totals"),
    }
