"""Job b: a Hive-enabled session with managed tables (embedded Derby metastore).

The listener names a managed table by its warehouse path and adds a TABLE symlink with
the metastore name; Threadline stores the lineage under the table and links the two
datasets both ways (path -METASTORE-> table, table -WAREHOUSE-> path).
"""

import pytest

from tests.e2e.api import Api, Json
from tests.e2e.conftest import NAMESPACE
from tests.e2e.harness import JobResult, Pipeline
from tests.e2e.jobs.names import HIVE_APP as APP_NAME
from tests.e2e.jobs.names import HIVE_DATABASE as DATABASE

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
async def hive_job(pipeline: Pipeline) -> JobResult:
    result = await pipeline.run_job("hive_job")
    assert result.returncode == 0, result.tail()
    await pipeline.drained()
    return result


def warehouse(pipeline: Pipeline) -> str:
    return str(pipeline.work / "warehouse")


async def table(api: Api, pipeline: Pipeline, name: str) -> Json:
    """A table by the symlink the listener sends: namespace file:<warehouse>, db.table."""
    return await api.dataset(f"file:{warehouse(pipeline)}", f"{DATABASE}.{name}")


async def path(api: Api, pipeline: Pipeline, name: str) -> Json:
    return await api.dataset("file", f"{warehouse(pipeline)}/{DATABASE}.db/{name}")


def refs(detail: Json) -> set[tuple[str, int]]:
    return {(s["type"], s["dataset"]["id"]) for s in detail["symlinks"]}


async def writes(api: Api) -> list[tuple[str, str, list[str], int | None]]:
    """(operation name suffix, dataset, output types, rows) of every write, oldest first."""
    run = (await api.job(NAMESPACE, APP_NAME))["last_run"]
    found = []
    for operation in await api.spark_operations(run["id"]):
        detail = await api.operation(operation["id"])
        suffix = str(detail["name"]).removeprefix(f"{APP_NAME}.")
        found += [
            (suffix, o["dataset"]["name"].rsplit("/", 1)[-1], o["types"], o["num_rows"])
            for o in detail["outputs"]
        ]
    return found


async def test_table_and_warehouse_path_are_symlinked(
    api: Api, pipeline: Pipeline, hive_job: JobResult
) -> None:
    for name in ("sales", "sales_by_region"):
        by_table, by_path = await table(api, pipeline, name), await path(api, pipeline, name)
        assert by_table["id"] != by_path["id"]
        assert by_table["name"] == f"{DATABASE}.{name}"
        assert refs(by_table) == {("WAREHOUSE", by_path["id"])}
        assert refs(by_path) == {("METASTORE", by_table["id"])}


async def test_managed_table_is_created_appended_and_overwritten(
    api: Api, hive_job: JobResult
) -> None:
    sales = [w for w in await writes(api) if w[1] == f"{DATABASE}.sales"]
    assert sales == [
        (
            "execute_create_data_source_table_command.e2e_shop_sales",
            "e2e_shop.sales",
            ["CREATE"],
            None,
        ),
        (
            "execute_insert_into_hadoop_fs_relation_command.e2e_shop_db_sales",
            "e2e_shop.sales",
            ["APPEND"],
            2,
        ),
        (
            "execute_insert_into_hadoop_fs_relation_command.e2e_shop_db_sales",
            "e2e_shop.sales",
            ["OVERWRITE"],
            4,
        ),
    ]


async def test_table_is_read_back(api: Api, pipeline: Pipeline, hive_job: JobResult) -> None:
    sales, by_region = (
        await table(api, pipeline, "sales"),
        await table(api, pipeline, "sales_by_region"),
    )
    run = (await api.job(NAMESPACE, APP_NAME))["last_run"]
    reads = []
    for operation in await api.spark_operations(run["id"]):
        detail = await api.operation(operation["id"])
        reads += [
            (i["dataset"]["id"], [o["dataset"]["id"] for o in detail["outputs"]])
            for i in detail["inputs"]
        ]
    assert (sales["id"], [by_region["id"]]) in reads  # CREATE TABLE ... AS SELECT
    assert (by_region["id"], []) in reads  # spark.table(...).collect()


async def test_lineage_between_tables_follows_symlinks(
    api: Api, pipeline: Pipeline, hive_job: JobResult
) -> None:
    by_region = await table(api, pipeline, "sales_by_region")
    graph = await api.lineage(
        "DATASET", by_region["id"], direction="UPSTREAM", depth=1, granularity="DATASET"
    )
    names = {d["id"]: d["name"].rsplit("/", 1)[-1] for d in graph["nodes"]["datasets"]}
    edges = {
        (names[e["from"]["id"]], names[e["to"]["id"]])
        for e in graph["relations"]["dataset_lineage"]
    }
    assert (f"{DATABASE}.sales", f"{DATABASE}.sales_by_region") in edges
    symlinks = {
        (names[s["from"]["id"]], names[s["to"]["id"]], s["type"])
        for s in graph["relations"]["symlinks"]
    }
    assert (f"{DATABASE}.sales_by_region", "sales_by_region", "WAREHOUSE") in symlinks
