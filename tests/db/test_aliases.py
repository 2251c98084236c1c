"""One system reached through several addresses is one location, with one row per dataset and job.

An event that names a Kafka bootstrap list shows that locations seen apart are
one cluster: the writer merges them (threadline_merge_locations) with their
datasets and jobs, leaving no duplicates behind. Loopback spellings and default
ports need no merge at all: they name the same address.
"""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.ingest import Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from tests.conftest import truncate_all
from tests.db.dump import dump

pytestmark = pytest.mark.db

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def event(namespace: str, dataset: str, minute: int, job_namespace: str = "tests") -> bytes:
    """A COMPLETE event of job `writer` in `job_namespace` writing `dataset` in `namespace`."""
    return orjson.dumps(
        {
            "eventType": "COMPLETE",
            "eventTime": (T0 + timedelta(minutes=minute)).isoformat(),
            "producer": "https://example.com/threadline-tests",
            "run": {"runId": str(uuid.uuid4())},
            "job": {"namespace": job_namespace, "name": "writer"},
            "outputs": [{"namespace": namespace, "name": dataset}],
        }
    )


async def ingest(engine: AsyncEngine, batches: list[list[bytes]]) -> None:
    pipeline = Pipeline(Writer(engine), max_event_bytes=1 << 20, backoff=Backoff())
    for batch in batches:
        result = await pipeline.run(batch)
        assert not result.rejects, result.rejects


async def rows(engine: AsyncEngine, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    async with engine.connect() as conn:
        return [tuple(r) for r in (await conn.execute(text(sql), params)).all()]


ADDRESSES = "SELECT l.type, l.name, a.url FROM address a JOIN location l ON l.id = a.location_id"
DATASETS = "SELECT d.location_id, d.name FROM dataset d WHERE d.name = :name"
JOBS = "SELECT j.location_id, j.name FROM job j WHERE j.name = 'writer'"
OUTPUT_DATASETS = "SELECT DISTINCT dataset_id FROM output"

KAFKA_A, KAFKA_B, KAFKA_AB = "kafka://a:9092", "kafka://b:9092", "kafka://a:9092,b:9092"


@pytest.mark.parametrize("one_batch", [False, True], ids=["three-batches", "one-batch"])
async def test_a_bootstrap_list_merges_the_brokers_seen_apart(
    clean_engine: AsyncEngine, one_batch: bool
) -> None:
    events = [
        event(KAFKA_A, "orders", 0, job_namespace=KAFKA_A),
        event(KAFKA_B, "orders", 1, job_namespace=KAFKA_B),
        event(KAFKA_AB, "orders", 2, job_namespace=KAFKA_AB),
    ]
    await ingest(clean_engine, [events] if one_batch else [[e] for e in events])
    assert sorted(await rows(clean_engine, ADDRESSES)) == [
        ("kafka", "a:9092", KAFKA_A),
        ("kafka", "a:9092", KAFKA_B),
    ]
    assert len(await rows(clean_engine, DATASETS, name="orders")) == 1
    assert len(await rows(clean_engine, JOBS)) == 1
    assert len(await rows(clean_engine, OUTPUT_DATASETS)) == 1
    assert len(await rows(clean_engine, "SELECT id FROM run")) == 3


async def test_separate_brokers_stay_apart_until_an_event_joins_them(
    clean_engine: AsyncEngine,
) -> None:
    await ingest(clean_engine, [[event(KAFKA_A, "orders", 0)], [event(KAFKA_B, "orders", 1)]])
    assert len(await rows(clean_engine, "SELECT id FROM location WHERE type = 'kafka'")) == 2
    assert len(await rows(clean_engine, DATASETS, name="orders")) == 2


@pytest.mark.parametrize(
    "order",
    [(KAFKA_A, KAFKA_B, KAFKA_AB), (KAFKA_B, KAFKA_AB, KAFKA_A), (KAFKA_AB, KAFKA_B, KAFKA_A)],
    ids=["a-b-ab", "b-ab-a", "ab-b-a"],
)
async def test_the_merged_location_is_the_same_whatever_the_order(
    clean_engine: AsyncEngine, order: tuple[str, ...]
) -> None:
    await ingest(clean_engine, [[event(ns, "orders", i)] for i, ns in enumerate(order)])
    first = await dump(clean_engine)
    await ingest_reference(clean_engine)
    reference = await dump(clean_engine)
    assert (first["location"], first["address"], first["dataset"]) == (
        reference["location"],
        reference["address"],
        reference["dataset"],
    )


async def ingest_reference(engine: AsyncEngine) -> None:
    """The three addresses in one event, in an emptied database."""
    await truncate_all(engine)
    await ingest(engine, [[event(KAFKA_AB, "orders", 0)]])


@pytest.mark.parametrize(
    "spellings",
    [
        ("postgres://localhost:5432", "postgres://127.0.0.1"),
        ("postgresql://127.0.0.1:5432", "postgres://[::1]:5432"),
        ("postgres://localhost", "jdbc:postgresql://127.0.0.1:5432/shop"),
    ],
)
async def test_loopback_and_default_port_spellings_land_on_the_same_datasets(
    clean_engine: AsyncEngine, spellings: tuple[str, str]
) -> None:
    first, second = spellings
    await ingest(clean_engine, [[event(first, "shop.public.orders", 0)]])
    await ingest(clean_engine, [[event(second, "shop.public.orders", 1)]])
    assert await rows(clean_engine, ADDRESSES + " WHERE l.type = 'postgres'") == [
        ("postgres", "localhost:5432", "postgres://localhost:5432")
    ]
    assert len(await rows(clean_engine, DATASETS, name="shop.public.orders")) == 1
    assert len(await rows(clean_engine, OUTPUT_DATASETS)) == 1
