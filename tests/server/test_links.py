"""Link search (dataset -> dataset through one job) and the processes behind links."""

from typing import Any

import httpx
import pytest

from tests.server import world as w
from tests.server.conftest import World

pytestmark = pytest.mark.db


async def _links(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/v1/links", params=params)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_links_from_a_source(api_client: httpx.AsyncClient, world: World) -> None:
    body = await _links(api_client, source_dataset_id=world.datasets[w.ORDERS])
    assert [(lk["source"]["name"], lk["target"]["name"]) for lk in body["items"]] == [
        (w.ORDERS, w.ORDERS_DAILY)
    ]
    link = body["items"][0]
    assert link["first_seen"] == "2024-06-04T07:42:00Z"
    assert link["last_seen"] == "2024-06-04T07:45:00Z"


async def test_links_to_a_target(api_client: httpx.AsyncClient, world: World) -> None:
    body = await _links(api_client, target_dataset_id=world.datasets[w.ARCHIVE])
    assert [lk["source"]["name"] for lk in body["items"]] == [w.SUMMARY]


async def test_links_page_and_window(api_client: httpx.AsyncClient, world: World) -> None:
    daily = world.datasets[w.ORDERS_DAILY]
    first = await _links(api_client, source_dataset_id=daily, limit=1)
    assert len(first["items"]) == 1
    assert first["next_cursor"] is None  # sales.orders_daily feeds only the summary
    empty = await _links(api_client, source_dataset_id=daily, seen_until="2024-06-04T07:00:00Z")
    assert empty["items"] == []


async def test_links_need_exactly_one_end(api_client: httpx.AsyncClient, world: World) -> None:
    both = {"source_dataset_id": 1, "target_dataset_id": 2}
    for params in ({}, both):
        response = await api_client.get("/v1/links", params=params)
        assert response.status_code == 422
        assert "exactly one" in response.json()["detail"]


async def test_processes_behind_links(api_client: httpx.AsyncClient, world: World) -> None:
    links = [
        {
            "source_dataset_id": world.datasets[w.ORDERS],
            "target_dataset_id": world.datasets[w.ORDERS_DAILY],
        },
        {
            "source_dataset_id": world.datasets[w.SUMMARY],
            "target_dataset_id": world.datasets[w.ARCHIVE],
        },
    ]
    response = await api_client.post("/v1/links/processes", json={"links": links, "limit": 1})
    assert response.status_code == 200, response.text
    first = response.json()
    assert [p["job"]["name"] for p in first["items"]] == ["cat_orders_etl"]
    (made,) = first["items"][0]["links"]
    assert made["source_dataset_id"] == world.datasets[w.ORDERS]
    assert [r["id"] for r in made["runs"]] == [str(w.SPARK_APP)]
    assert first["next_cursor"] is not None
    body: dict[str, Any] = {"links": links, "limit": 1, "cursor": first["next_cursor"]}
    second = (await api_client.post("/v1/links/processes", json=body)).json()
    assert [p["job"]["name"] for p in second["items"]] == ["cat_report_reader"]
    assert second["next_cursor"] is None
    changed = {**body, "runs_per_link": 1}
    mismatch = await api_client.post("/v1/links/processes", json=changed)
    assert mismatch.status_code == 422
    assert "different filters" in mismatch.json()["detail"]


async def test_processes_validation(api_client: httpx.AsyncClient) -> None:
    too_many = [{"source_dataset_id": i, "target_dataset_id": i + 1} for i in range(1, 102)]
    bodies: list[dict[str, Any]] = [
        {"links": []},
        {"links": too_many},
        {"links": [{"source_dataset_id": 1}]},
    ]
    for body in bodies:
        response = await api_client.post("/v1/links/processes", json=body)
        assert response.status_code == 422, body
        assert response.headers["content-type"] == "application/problem+json"
