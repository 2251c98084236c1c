"""Catalogue lists: filters, fuzzy ranked search, cursor pagination (stable, no duplicates)."""

from typing import Any

import httpx
import pytest

from tests.server import world as w
from tests.server.conftest import World

pytestmark = pytest.mark.db


async def _all_pages(client: httpx.AsyncClient, path: str, **params: Any) -> list[dict[str, Any]]:
    """Every item of a listing, following next_cursor; fails on a repeated item."""
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        response = await client.get(path, params={**params, "cursor": cursor} if cursor else params)
        assert response.status_code == 200, response.text
        body = response.json()
        items += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    keys = [item["id"] for item in items]
    assert len(keys) == len(set(keys)), "an item appeared on two pages"
    return items


async def test_datasets_of_a_location_page_by_page(
    api_client: httpx.AsyncClient, world: World
) -> None:
    pg = world.locations["cat-db.example:5432"]
    paged = await _all_pages(api_client, "/v1/datasets", location_id=pg, limit=1)
    whole = (await api_client.get("/v1/datasets", params={"location_id": pg})).json()
    assert [d["id"] for d in paged] == [d["id"] for d in whole["items"]]
    assert {d["name"] for d in paged} == {w.ORDERS, w.CUSTOMERS, w.ORDER_ITEMS}
    assert whole["next_cursor"] is None


async def test_dataset_filters_by_location_type_and_name(
    api_client: httpx.AsyncClient, world: World
) -> None:
    items = await _all_pages(
        api_client, "/v1/datasets", location_type="hive", location_name="cat-metastore.example:9083"
    )
    assert {d["name"] for d in items} == {w.ORDERS_DAILY, w.SUMMARY}
    assert all(d["location"]["type"] == "hive" for d in items)


async def test_dataset_filter_by_format(api_client: httpx.AsyncClient, world: World) -> None:
    """The storage facet's file format is stored (lower-cased) and filters the catalogue."""
    parquet = await _all_pages(api_client, "/v1/datasets", format="parquet")
    assert [(d["name"], d["format"]) for d in parquet] == [(w.SUMMARY, "parquet")]
    assert await _all_pages(api_client, "/v1/datasets", format="orc") == []


async def test_fuzzy_search_finds_orders_daily_first(
    api_client: httpx.AsyncClient, world: World
) -> None:
    response = await api_client.get("/v1/datasets", params={"search": "ordrs daily"})
    names = [d["name"] for d in response.json()["items"]]
    assert names[0] == w.ORDERS_DAILY
    assert w.CUSTOMERS not in names
    scores = [d["score"] for d in response.json()["items"]]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < score <= 1 for score in scores)  # fuzzy hits only: no substring of it


async def test_substring_hits_rank_above_fuzzy_ones(
    api_client: httpx.AsyncClient, world: World
) -> None:
    items = (await api_client.get("/v1/datasets", params={"search": "orders daily"})).json()
    names = [d["name"] for d in items["items"]]
    # Every name holding the words in order, shortest (closest fit) first.
    assert names[:3] == [w.ORDERS_DAILY, w.ARCHIVE, w.ORDERS_DAILY_PATH]
    scores = [d["score"] for d in items["items"]]
    assert scores == sorted(scores, reverse=True)
    assert scores[0] > 1


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("orders_daily", w.ORDERS_DAILY),
        ("orders daily", w.ORDERS_DAILY),
        ("ORDERS DAILY", w.ORDERS_DAILY),
        ("sales.orders-daily", w.ORDERS_DAILY),
        ("summary", w.SUMMARY),
        ("ordr summry", w.SUMMARY),
        ("customers", w.CUSTOMERS),
    ],
)
async def test_search_variants(
    api_client: httpx.AsyncClient, world: World, query: str, expected: str
) -> None:
    cat = [world.locations["cat-db.example:5432"], world.locations["cat-metastore.example:9083"]]
    response = await api_client.get("/v1/datasets", params={"search": query})
    names = [d["name"] for d in response.json()["items"] if d["location"]["id"] in cat]
    assert names[0] == expected, names


async def test_search_pages_keep_rank_order(api_client: httpx.AsyncClient, world: World) -> None:
    paged = await _all_pages(api_client, "/v1/datasets", search="orders", limit=2)
    whole = await _all_pages(api_client, "/v1/datasets", search="orders", limit=500)
    assert [d["id"] for d in paged] == [d["id"] for d in whole]
    assert len(paged) >= 5


async def test_short_search_matches_substrings(api_client: httpx.AsyncClient, world: World) -> None:
    response = await api_client.get(
        "/v1/jobs", params={"search": "et", "location_name": "cat-spark"}
    )
    assert [j["name"] for j in response.json()["items"]] == ["cat_orders_etl"]


async def test_jobs_filter_by_type_and_parent(api_client: httpx.AsyncClient, world: World) -> None:
    tasks = await _all_pages(
        api_client, "/v1/jobs", type="AIRFLOW_TASK", parent_job_id=world.jobs["cat_orders"]
    )
    assert {j["name"] for j in tasks} == {"cat_orders.load", "cat_orders.transform"}
    assert all(j["parent_job_id"] == world.jobs["cat_orders"] for j in tasks)
    spark = await _all_pages(
        api_client, "/v1/jobs", type=["SPARK_APPLICATION", "AIRFLOW_DAG"], location_type="namespace"
    )
    names = {j["name"] for j in spark}
    assert {"cat_orders", "cat_orders_etl", "cat_report_reader"} <= names
    assert "cat_orders.load" not in names


async def test_runs_newest_first_across_pages(api_client: httpx.AsyncClient, world: World) -> None:
    runs = await _all_pages(api_client, "/v1/runs", limit=3)
    keys = [(r["created_at"], r["id"]) for r in runs]
    assert keys == sorted(keys, reverse=True)
    assert {str(w.DAG_RUN), str(w.SPARK_APP), str(w.CLEANUP)} <= {r["id"] for r in runs}


async def test_runs_filters(api_client: httpx.AsyncClient, world: World) -> None:
    async def ids(**params: Any) -> set[str]:
        return {r["id"] for r in await _all_pages(api_client, "/v1/runs", **params)}

    assert await ids(parent_run_id=str(w.DAG_RUN)) == {
        str(w.LOAD_TRY_1),
        str(w.LOAD_TRY_2),
        str(w.TRANSFORM),
    }
    load = world.jobs["cat_orders.load"]
    assert await ids(job_id=load, status="FAILED") == {str(w.LOAD_TRY_1)}
    assert await ids(job_id=load, status=["FAILED", "SUCCEEDED"]) == {
        str(w.LOAD_TRY_1),
        str(w.LOAD_TRY_2),
    }
    assert await ids(started_by="etl-bot") == {str(w.SPARK_APP)}
    assert await ids(external_id=w.APP_ID) == {str(w.SPARK_APP)}
    ingest = world.jobs["cat_ingest"]
    day_two = {"started_since": "2024-06-04T00:00:00Z", "started_until": "2024-06-05T00:00:00Z"}
    assert await ids(job_id=ingest, **day_two) == {str(w.INGEST_2)}
    assert await ids(job_id=ingest, ended_until="2024-06-04T00:00:00Z") == {str(w.INGEST_1)}
    assert await ids(job_id=ingest, created_since="2024-06-03T00:00:00Z") == {
        str(w.INGEST_1),
        str(w.INGEST_2),
    }
    killed = await ids(status="KILLED", job_type="UNKNOWN")
    assert str(w.CLEANUP) in killed


async def test_operations_of_a_run(api_client: httpx.AsyncClient, world: World) -> None:
    ops = await _all_pages(api_client, "/v1/operations", run_id=str(w.SPARK_APP), limit=1)
    # The application's own events (no I/O) describe the run only: its SQL jobs are the operations.
    assert {o["id"] for o in ops} == {str(w.SQL_A), str(w.SQL_B)}
    sql_jobs = [o for o in ops if o["type"] == "SQL_JOB"]
    assert {(o["id"], o["position"]) for o in sql_jobs} == {(str(w.SQL_A), 0), (str(w.SQL_B), 1)}
    done = await _all_pages(api_client, "/v1/operations", run_id=str(w.SPARK_APP), status="FAILED")
    assert done == []


async def test_locations_search_and_type(api_client: httpx.AsyncClient, world: World) -> None:
    found = (await api_client.get("/v1/locations", params={"search": "cat metastore"})).json()
    assert found["items"][0]["id"] == world.locations["cat-metastore.example:9083"]
    hdfs = await _all_pages(api_client, "/v1/locations", type="hdfs")
    assert world.locations["cat-nn1.example:8020"] in {loc["id"] for loc in hdfs}
    assert all(loc["type"] == "hdfs" for loc in hdfs)
