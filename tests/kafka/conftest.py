"""Kafka-tier fixtures: a unique topic per test, a producer, a consumer app in-process."""

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from consumer.settings import ConsumerSettings, KafkaSettings, MetricsSettings
from shared.settings import DatabaseSettings
from tests.services import Services

Produce = Callable[[Sequence[bytes]], Awaitable[None]]


@pytest.fixture
def kafka_bootstrap(test_services: Services) -> str:
    return test_services.kafka_bootstrap


async def create_topic(bootstrap: str, name: str, partitions: int = 4) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1)])
    finally:
        await admin.close()


@pytest.fixture
async def topic(kafka_bootstrap: str) -> str:
    name = f"test-openlineage-{uuid.uuid4().hex[:10]}"
    await create_topic(kafka_bootstrap, name)
    await create_topic(kafka_bootstrap, f"{name}.dead-letter", partitions=1)
    return name


@pytest.fixture
async def produce(kafka_bootstrap: str, topic: str) -> AsyncIterator[Produce]:
    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, max_request_size=33554432)
    await producer.start()

    async def send(values: Sequence[bytes]) -> None:
        for value in values:
            await producer.send(topic, value, key=b"run:test")
        await producer.flush()

    yield send
    await producer.stop()


def consumer_settings(database_url: str, bootstrap: str, topic: str) -> ConsumerSettings:
    return ConsumerSettings(
        database=DatabaseSettings(url=database_url),  # type: ignore[arg-type]
        kafka=KafkaSettings(
            bootstrap_servers=bootstrap,
            topic=topic,
            group_id=f"{topic}-group",
            dead_letter_topic=f"{topic}.dead-letter",
            batch_timeout_ms=200,
        ),
        metrics=MetricsSettings(port=0),
    )


async def read_all(bootstrap: str, topic: str, expected: int, within_s: float = 30) -> list[object]:
    """Every record of a topic from the start (at least `expected` of them, or a timeout)."""
    reader = AIOKafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    await reader.start()
    records: list[object] = []
    try:
        async with asyncio.timeout(within_s):
            while len(records) < expected:
                batch = await reader.getmany(timeout_ms=500)
                records.extend(r for rs in batch.values() for r in rs)
    except TimeoutError:
        pass  # fewer records than expected: the caller asserts on what came
    finally:
        await reader.stop()
    return records


async def wait_until(check: Callable[[], Awaitable[bool]], within_s: float = 60) -> None:
    """Poll a database condition (no event to wait on) until it holds, or fail."""
    for _ in range(int(within_s / POLL_S)):
        if await check():
            return
        await asyncio.sleep(POLL_S)
    raise TimeoutError(f"condition not met within {within_s}s")


POLL_S = 0.25
