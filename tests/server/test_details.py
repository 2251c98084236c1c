"""Detail views: dataset, job, run (as a DataProcessInstance), operation; lookups by name."""

from typing import Any
from uuid import UUID

import httpx
import pytest

from tests.server import world as w
from tests.server.conftest import World

pytestmark = pytest.mark.db


async def _get(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    response = await client.get(path, params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_dataset_detail(api_client: httpx.AsyncClient, world: World) -> None:
    detail = await _get(api_client, f"/v1/datasets/{world.datasets[w.ORDERS_DAILY]}")
    assert detail["location"]["addresses"] == ["hive://cat-metastore.example:9083"]
    assert detail["symlinks"] == [
        {
            "type": "WAREHOUSE",
            "dataset": {
                "id": world.datasets[w.ORDERS_DAILY_PATH],
                "name": w.ORDERS_DAILY_PATH,
                "format": None,
                "location": {
                    "id": world.locations["cat-nn1.example:8020"],
                    "type": "hdfs",
                    "name": "cat-nn1.example:8020",
                },
            },
        }
    ]
    uses = {(u["job"]["name"], u["direction"]) for u in detail["jobs"]}
    assert uses == {("cat_orders_etl", "INPUT"), ("cat_orders_etl", "OUTPUT")}
    assert [f["name"] for f in detail["schemas"][0]["fields"]] == ["order_id", "total"]


async def test_dataset_schema_history_newest_first(
    api_client: httpx.AsyncClient, world: World
) -> None:
    detail = await _get(api_client, f"/v1/datasets/{world.datasets[w.ORDERS]}")
    history = [[f["name"] for f in s["fields"]] for s in detail["schemas"]]
    assert history == [["id", "amount", "currency"], ["id", "amount"]]
    assert detail["schemas"][0]["last_seen"] > detail["schemas"][1]["last_seen"]
    jobs = {(u["job"]["name"], u["direction"]): u for u in detail["jobs"]}
    assert set(jobs) == {("cat_ingest", "OUTPUT"), ("cat_orders_etl", "INPUT")}
    writer = jobs[("cat_ingest", "OUTPUT")]
    assert writer["first_seen"] < writer["last_seen"]


async def test_declared_lineage_shows_in_dataset_and_job(
    api_client: httpx.AsyncClient, world: World
) -> None:
    customers = await _get(api_client, f"/v1/datasets/{world.datasets[w.CUSTOMERS]}")
    assert [(u["job"]["name"], u["direction"]) for u in customers["jobs"]] == [
        ("cat_declared", "INPUT")
    ]
    job = await _get(api_client, f"/v1/jobs/{world.jobs['cat_declared']}")
    assert {(d["dataset"]["name"], d["direction"]) for d in job["datasets"]} == {
        (w.CUSTOMERS, "INPUT"),
        (w.ARCHIVE, "OUTPUT"),
    }
    assert job["runs"] == []
    assert job["last_run"] is None


@pytest.mark.parametrize(
    ("namespace", "name", "expected"),
    [
        ("hdfs://cat-nn1.example:8020", w.ORDERS_DAILY_PATH, w.ORDERS_DAILY_PATH),
        # Another spelling of the same namenode, a trailing slash and a partition directory.
        ("hdfs://CAT-NN1.example", w.ORDERS_DAILY_PATH + "/day=2024-06-04/", w.ORDERS_DAILY_PATH),
        ("postgresql://cat-db.example", w.ORDERS, w.ORDERS),
        ("hive://cat-metastore.example:9083", w.ORDERS_DAILY, w.ORDERS_DAILY),
    ],
)
async def test_dataset_by_openlineage_name(
    api_client: httpx.AsyncClient, world: World, namespace: str, name: str, expected: str
) -> None:
    detail = await _get(api_client, "/v1/datasets/by-name", namespace=namespace, name=name)
    assert detail["id"] == world.datasets[expected]


async def test_job_detail_with_children_and_runs(
    api_client: httpx.AsyncClient, world: World
) -> None:
    dag = await _get(api_client, f"/v1/jobs/{world.jobs['cat_orders']}")
    assert dag["type"] == "AIRFLOW_DAG"
    assert dag["parent"] is None
    assert [c["name"] for c in dag["children"]] == ["cat_orders.load", "cat_orders.transform"]
    assert dag["last_run"]["id"] == str(w.DAG_RUN)
    load = await _get(api_client, f"/v1/jobs/{world.jobs['cat_orders.load']}")
    assert load["parent"]["name"] == "cat_orders"
    assert [(r["id"], r["status"], r["attempt"]) for r in load["runs"]] == [
        (str(w.LOAD_TRY_2), "SUCCEEDED", 2),
        (str(w.LOAD_TRY_1), "FAILED", 1),
    ]


async def test_spark_job_detail_lists_its_datasets(
    api_client: httpx.AsyncClient, world: World
) -> None:
    etl = await _get(api_client, f"/v1/jobs/{world.jobs['cat_orders_etl']}")
    assert etl["type"] == "SPARK_APPLICATION"
    assert {(d["dataset"]["name"], d["direction"]) for d in etl["datasets"]} == {
        (w.ORDERS, "INPUT"),
        (w.ORDERS_DAILY, "INPUT"),
        (w.ORDERS_DAILY, "OUTPUT"),
        (w.SUMMARY, "OUTPUT"),
    }


async def test_job_by_openlineage_name(api_client: httpx.AsyncClient, world: World) -> None:
    detail = await _get(
        api_client, "/v1/jobs/by-name", namespace=w.AIRFLOW_NS, name="cat_orders.transform"
    )
    assert detail["id"] == world.jobs["cat_orders.transform"]


async def test_task_run_as_data_process_instance(
    api_client: httpx.AsyncClient, world: World
) -> None:
    run = await _get(api_client, f"/v1/runs/{w.TRANSFORM}")
    assert (run["state"], run["result"], run["attempt"]) == ("COMPLETE", "SUCCESS", 1)
    assert run["duration_ms"] == 30 * 60 * 1000
    assert run["job"]["name"] == "cat_orders.transform"
    assert run["parent_run"]["id"] == str(w.DAG_RUN)
    assert run["parent_run"]["job"]["type"] == "AIRFLOW_DAG"
    assert [c["id"] for c in run["child_runs"]] == [str(w.SPARK_APP)]
    assert run["persistent_log_url"].endswith("task_id=transform")
    assert run["started_by"] == "data-team"
    # The Spark application it launched did the reading and writing.
    assert {(i["dataset"]["name"], i["run_id"]) for i in run["inputs"]} == {
        (w.ORDERS, str(w.SPARK_APP)),
        (w.ORDERS_DAILY, str(w.SPARK_APP)),
    }
    outputs = {o["dataset"]["name"]: o for o in run["outputs"]}
    assert outputs[w.ORDERS_DAILY]["types"] == ["OVERWRITE"]
    assert outputs[w.ORDERS_DAILY]["num_rows"] == 900
    assert outputs[w.SUMMARY]["types"] == ["APPEND"]
    upstream = [(u["run"]["id"], u["dataset_ids"]) for u in run["upstream_runs"]]
    assert upstream == [(str(w.INGEST_2), [world.datasets[w.ORDERS]])]
    downstream = [(d["run"]["id"], d["dataset_ids"]) for d in run["downstream_runs"]]
    assert downstream == [(str(w.READER), [world.datasets[w.SUMMARY]])]


async def test_spark_application_run(api_client: httpx.AsyncClient, world: World) -> None:
    run = await _get(api_client, f"/v1/runs/{w.SPARK_APP}")
    assert run["external_id"] == w.APP_ID
    assert run["started_by"] == "etl-bot"
    assert run["running_log_url"] == f"http://driver.example:4040/{w.APP_ID}"
    assert run["persistent_log_url"] == f"http://history.example:18080/history/{w.APP_ID}"
    assert run["parent_run"]["id"] == str(w.TRANSFORM)
    reader = await _get(api_client, f"/v1/runs/{w.READER}")
    assert [(u["run"]["id"], u["dataset_ids"]) for u in reader["upstream_runs"]] == [
        (str(w.SPARK_APP), [world.datasets[w.SUMMARY]])
    ]


@pytest.mark.parametrize(
    ("run_id", "state", "result"),
    [
        (w.LOAD_TRY_1, "COMPLETE", "UP_FOR_RETRY"),
        (w.LOAD_TRY_2, "COMPLETE", "SUCCESS"),
        (w.CLEANUP, "COMPLETE", "SKIPPED"),
        (w.STREAMING, "RUNNING", None),
        (w.DAG_RUN, "COMPLETE", "SUCCESS"),
    ],
)
async def test_run_result_mapping(
    api_client: httpx.AsyncClient, world: World, run_id: UUID, state: str, result: str | None
) -> None:
    run = await _get(api_client, f"/v1/runs/{run_id}")
    assert (run["state"], run["result"]) == (state, result)


async def test_failed_try_carries_its_error(api_client: httpx.AsyncClient, world: World) -> None:
    run = await _get(api_client, f"/v1/runs/{w.LOAD_TRY_1}")
    assert run["status"] == "FAILED"
    assert run["ended_reason"] == w.LOAD_ERROR
    assert run["duration_ms"] == 3 * 60 * 1000


async def test_dag_run_gathers_its_descendants_io(
    api_client: httpx.AsyncClient, world: World
) -> None:
    run = await _get(api_client, f"/v1/runs/{w.DAG_RUN}")
    assert {o["dataset"]["name"] for o in run["outputs"]} == {w.ORDERS_DAILY, w.SUMMARY}
    assert {c["id"] for c in run["child_runs"]} == {
        str(w.LOAD_TRY_1),
        str(w.LOAD_TRY_2),
        str(w.TRANSFORM),
    }


async def test_operation_detail_with_column_lineage(
    api_client: httpx.AsyncClient, world: World
) -> None:
    op = await _get(api_client, f"/v1/operations/{w.SQL_A}")
    assert (op["type"], op["position"], op["status"]) == ("SQL_JOB", 0, "SUCCEEDED")
    assert op["run"]["id"] == str(w.SPARK_APP)
    assert op["job"]["name"] == "cat_orders_etl"
    assert [(i["dataset"]["name"], i["num_rows"]) for i in op["inputs"]] == [(w.ORDERS, 1100)]
    assert [(o["dataset"]["name"], o["num_files"]) for o in op["outputs"]] == [(w.ORDERS_DAILY, 4)]
    edges = {(e["source_column"], e["target_column"], *e["types"]) for e in op["column_lineage"]}
    assert edges == {
        ("id", "order_id", "DIRECT"),
        ("amount", "total", "DIRECT"),
        ("currency", "total", "INDIRECT"),
    }
    sql = await _get(api_client, f"/v1/operations/{w.SQL_B}")
    assert sql["sql_query"].startswith("INSERT INTO reports.orders_summary")


@pytest.mark.parametrize(
    "path",
    [
        "/v1/datasets/987654321",
        "/v1/jobs/987654321",
        "/v1/locations/987654321",
        "/v1/runs/01900000-0000-7000-8000-000000000000",
        "/v1/operations/01900000-0000-7000-8000-000000000000",
        "/v1/datasets/by-name?namespace=hdfs://nowhere:8020&name=/x",
        "/v1/jobs/by-name?namespace=nowhere&name=x",
    ],
)
async def test_unknown_ids_are_404_problems(api_client: httpx.AsyncClient, path: str) -> None:
    response = await api_client.get(path)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == 404
    assert "does not exist" in body["detail"]
