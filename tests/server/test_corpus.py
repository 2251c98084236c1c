"""Real OpenLineage events (the shared corpus) through the consumer, then every endpoint.

Whatever the producers sent, each listing pages through to the end and each entity's
detail answers 200: no 500 from real-world data shapes.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import ingest_payloads

pytestmark = pytest.mark.db

CORPUS = Path("/work/shared/corpus/events")
DETAIL_SAMPLE = 300


def corpus_payloads() -> Iterator[bytes]:
    """Each event of the corpus as its own payload (.json: object or array; .jsonl: lines)."""
    for path in sorted(CORPUS.rglob("*.json*")):
        raw = path.read_bytes()
        if path.suffix == ".jsonl":
            yield from (line for line in raw.splitlines() if line.strip())
            continue
        doc = orjson.loads(raw)
        for event in doc if isinstance(doc, list) else [doc]:
            yield orjson.dumps(event)


def load_corpus() -> list[bytes]:
    if not CORPUS.is_dir():
        pytest.fail(f"the shared corpus is missing at {CORPUS}", pytrace=False)
    return list(corpus_payloads())


@pytest.fixture(scope="module")
async def corpus(engine: AsyncEngine) -> int:
    payloads = load_corpus()
    result = await ingest_payloads(engine, payloads)
    assert result.written > len(payloads) // 2, result.rejects
    return result.written


async def _crawl(client: httpx.AsyncClient, path: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 37}
    while True:
        response = await client.get(path, params=params)
        assert response.status_code == 200, (path, response.text)
        body = response.json()
        items += body["items"]
        if body["next_cursor"] is None:
            return items
        params["cursor"] = body["next_cursor"]


@pytest.mark.parametrize("kind", ["datasets", "jobs", "runs", "operations", "locations"])
async def test_every_listed_entity_has_a_detail(
    api_client: httpx.AsyncClient, corpus: int, kind: str
) -> None:
    items = await _crawl(api_client, f"/v1/{kind}")
    assert items
    for item in items[:DETAIL_SAMPLE]:
        response = await api_client.get(f"/v1/{kind}/{item['id']}")
        assert response.status_code == 200, (kind, item["id"], response.text)


async def test_links_of_every_dataset(api_client: httpx.AsyncClient, corpus: int) -> None:
    datasets = await _crawl(api_client, "/v1/datasets")
    found = 0
    for dataset in datasets[:DETAIL_SAMPLE]:
        for end in ("source_dataset_id", "target_dataset_id"):
            response = await api_client.get("/v1/links", params={end: dataset["id"]})
            assert response.status_code == 200, response.text
            found += len(response.json()["items"])
    assert found > 0


async def test_search_over_real_names(api_client: httpx.AsyncClient, corpus: int) -> None:
    for query in ("shakespeare", "wordcount", "orders", "public", "a", "%_\\"):
        for kind in ("datasets", "jobs", "locations"):
            response = await api_client.get(f"/v1/{kind}", params={"search": query})
            assert response.status_code == 200, (kind, query, response.text)
