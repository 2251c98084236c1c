"""The thinnest real path: Kafka topic -> FastStream batch consumer -> PostgreSQL -> read back."""

import json
import random
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.app import BatchHandler, create_app
from tests.kafka.conftest import Produce, consumer_settings, read_all, wait_until
from tests.uuids import uuid7

pytestmark = pytest.mark.kafka


def run_event(run_id: uuid.UUID, event_type: str, output: str) -> bytes:
    return json.dumps(
        {
            "eventType": event_type,
            "eventTime": datetime.now(UTC).isoformat(),
            "producer": "https://example.com/threadline-tests",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": str(run_id)},
            "job": {"namespace": "tests", "name": "thin_path_job"},
            "inputs": [{"namespace": "postgres://db.example.com", "name": "shop.public.orders"}],
            "outputs": [{"namespace": "s3://lake", "name": output}],
        }
    ).encode()


async def produce_run_and_bad_event(produce: Produce) -> None:
    """START and COMPLETE of one run, an unparseable message between them."""
    # Of now: random time bits would date one id in ten after year 9999, which decode
    # rejects (`invalid_run_id`); the test failed that often.
    run_id = uuid7(datetime.now(UTC), random.Random())
    await produce(
        [
            run_event(run_id, "START", "daily/orders"),
            b"{not json",
            run_event(run_id, "COMPLETE", "daily/orders"),
        ]
    )


async def _count(engine: AsyncEngine, sql: str) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text(sql))).scalar_one())


async def test_event_reaches_database_and_bad_event_is_dead_lettered(
    clean_engine: AsyncEngine, database_url: str, kafka_bootstrap: str, topic: str, produce: Produce
) -> None:
    await produce_run_and_bad_event(produce)
    app = create_app(consumer_settings(database_url, kafka_bootstrap, topic))
    await app.start()
    try:

        async def stored() -> bool:
            return await _count(clean_engine, "SELECT count(*) FROM run WHERE status = 2") == 1

        await wait_until(stored)
    finally:
        await app.stop()
    assert await _count(clean_engine, "SELECT count(*) FROM dataset") == 2
    assert await _count(clean_engine, "SELECT count(*) FROM output") == 1
    dead = await read_all(kafka_bootstrap, f"{topic}.dead-letter", expected=1)
    assert len(dead) == 1
    headers = dict(dead[0].headers)  # type: ignore[attr-defined]
    assert headers["x-threadline-reason"] == b"invalid_json"
    assert headers["x-original-topic"] == topic.encode()
    assert dead[0].value == b"{not json"  # type: ignore[attr-defined]


async def _committed_to_end(bootstrap: str, topic: str) -> bool:
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=f"{topic}-group")
    await probe.start()
    try:
        parts = [TopicPartition(topic, p) for p in range(4)]
        ends = await probe.end_offsets(parts)
        committed = {tp: await probe.committed(tp) or 0 for tp in parts}
        return all(committed[tp] >= ends[tp] for tp in parts)
    finally:
        await probe.stop()


async def test_a_batch_that_fails_after_its_write_is_read_again_and_committed_once_done(
    clean_engine: AsyncEngine,
    database_url: str,
    kafka_bootstrap: str,
    topic: str,
    produce: Produce,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first dead-letter publish fails (the broker refusing it, say): the batch's
    partitions are rewound, its events read again, written again (idempotently), and the
    offsets committed only once the dead letter is out."""
    failures: list[str] = []
    dead_letter = BatchHandler._dead_letter

    async def fail_first(self: BatchHandler, record: Any, reject: Any) -> None:
        if not failures:
            failures.append(reject.reason)
            raise KafkaError("dead-letter topic unavailable")
        await dead_letter(self, record, reject)

    monkeypatch.setattr(BatchHandler, "_dead_letter", fail_first)
    await produce_run_and_bad_event(produce)
    app = create_app(consumer_settings(database_url, kafka_bootstrap, topic))
    await app.start()
    try:

        async def done() -> bool:
            return await _committed_to_end(kafka_bootstrap, topic)

        await wait_until(done)
    finally:
        await app.stop()
    assert failures == ["invalid_json"]
    assert await _count(clean_engine, "SELECT count(*) FROM run WHERE status = 2") == 1
    assert await _count(clean_engine, "SELECT count(*) FROM output") == 1
    dead = await read_all(kafka_bootstrap, f"{topic}.dead-letter", expected=2, within_s=5)
    assert [d.value for d in dead] == [b"{not json"]  # type: ignore[attr-defined]
