"""Three consumer processes in one group, a shuffled and duplicated stream: the state of one."""

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from consumer.ingest import ingest_payloads
from tests.conftest import create_database, drop_database
from tests.corpus import ingestable
from tests.db.dump import differences, dump
from tests.kafka.conftest import create_topic, read_all
from tests.services import Services
from tests.uuids import uuid7

pytestmark = pytest.mark.kafka

WORKERS = 3
PARTITIONS = 6
APPS = 120  # Spark applications, 4 SQL jobs each: ~1,200 events before duplication


def _event(kind: str, at: datetime, run: uuid.UUID, job: str, **extra: Any) -> dict[str, Any]:
    return {
        "eventType": kind,
        "eventTime": at.isoformat(),
        "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.23.0/integration/spark",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": str(run), "facets": extra.pop("run_facets", {})},
        "job": {"namespace": "spark://cluster", "name": job, "facets": extra.pop("job_facets", {})},
        **extra,
    }


def spark_app(rng: random.Random, n: int) -> Iterator[tuple[bytes, bytes]]:
    """One application with START/COMPLETE and four SQL jobs reading/writing shared tables."""
    start = datetime(2026, 10, 1, tzinfo=UTC) + timedelta(minutes=7 * n)
    app_id, app = uuid7(start, rng), f"etl_{n % 17}"
    key = f"run:spark://cluster/{app}".encode()
    app_type = {"jobType": {"integration": "SPARK", "jobType": "APPLICATION"}}
    yield key, _dumps(_event("START", start, app_id, app, job_facets=app_type))
    for j in range(4):
        at = start + timedelta(seconds=10 * (j + 1))
        op = uuid7(at, rng)
        parent = {
            "parent": {
                "run": {"runId": str(app_id)},
                "job": {"namespace": "spark://cluster", "name": app},
            }
        }
        io = {
            "inputs": [{"namespace": "hdfs://nn1:8020", "name": f"/data/t{(n + j) % 40}"}],
            "outputs": [
                {
                    "namespace": "hdfs://nn1:8020",
                    "name": f"/data/t{(n + j + 1) % 40}",
                    "outputFacets": {"outputStatistics": {"rowCount": rng.randint(1, 10**6)}},
                }
            ],
        }
        sql_job = {"jobType": {"integration": "SPARK", "jobType": "SQL_JOB"}}
        for kind in ("START", "COMPLETE"):
            yield (
                key,
                _dumps(
                    _event(
                        kind, at, op, f"{app}.job_{j}", run_facets=parent, job_facets=sql_job, **io
                    )
                ),
            )
    end_kind = "FAIL" if n % 11 == 0 else "COMPLETE"
    yield (
        key,
        _dumps(_event(end_kind, start + timedelta(minutes=1), app_id, app, job_facets=app_type)),
    )


def _dumps(event: dict[str, Any]) -> bytes:
    return json.dumps(event).encode()


def stream(seed: int) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """(shuffled keyed messages with duplicates, the distinct payloads)."""
    rng = random.Random(seed)
    distinct = [kv for n in range(APPS) for kv in spark_app(rng, n)]
    distinct += [(b"run:corpus", e.payload) for e in ingestable()]
    messages = [kv for kv in distinct for _ in range(rng.randint(1, 3))]
    rng.shuffle(messages)
    return messages, [v for _, v in distinct]


def start_worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "consumer"], env=env, stdout=out, stderr=subprocess.STDOUT
        )


async def group_caught_up(bootstrap: str, topic: str, group: str) -> bool:
    probe = AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    await probe.start()
    try:
        parts = [TopicPartition(topic, p) for p in range(PARTITIONS)]
        ends = await probe.end_offsets(parts)
        committed = [await probe.committed(tp) for tp in parts]
    finally:
        await probe.stop()
    return all(c is not None and c >= ends[tp] for c, tp in zip(committed, parts, strict=True))


def worker_logs(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.glob("worker*.log")))


@pytest.fixture
def reference_url(test_services: Services) -> Iterator[str]:
    name = f"threadline_ref_{uuid.uuid4().hex[:10]}"
    yield create_database(test_services, name)
    drop_database(test_services, name)


async def test_three_workers_equal_one_pass(
    clean_engine: AsyncEngine,
    database_url: str,
    reference_url: str,
    test_services: Services,
    tmp_path: Path,
) -> None:
    messages, distinct = stream(seed=20261121)
    reference = create_async_engine(reference_url)
    result = await ingest_payloads(reference, distinct)
    assert result.rejects == {}

    bootstrap = test_services.kafka_bootstrap
    topic = f"test-scale-{uuid.uuid4().hex[:8]}"
    await create_topic(bootstrap, topic, PARTITIONS)
    await create_topic(bootstrap, f"{topic}.dead-letter", 1)
    env = {
        **os.environ,
        "THREADLINE__DATABASE__URL": database_url,
        "THREADLINE__KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "THREADLINE__KAFKA__TOPIC": topic,
        "THREADLINE__KAFKA__GROUP_ID": f"{topic}-group",
        "THREADLINE__KAFKA__DEAD_LETTER_TOPIC": f"{topic}.dead-letter",
        "THREADLINE__KAFKA__MAX_RECORDS": "200",
        "THREADLINE__METRICS__PORT": "0",
    }
    workers = [start_worker(env, tmp_path / f"worker{i}.log") for i in range(WORKERS)]
    try:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=5)
        await producer.start()
        for key, value in messages:
            await producer.send(topic, value, key=key)
        await producer.stop()
        for _ in range(480):
            if await group_caught_up(bootstrap, topic, f"{topic}-group"):
                break
            assert all(w.poll() is None for w in workers), "a worker exited"
            await asyncio.sleep(0.5)
        else:
            pytest.fail("the group did not catch up within 240 s")
    finally:
        for w in workers:
            w.send_signal(signal.SIGTERM)
        for w in workers:
            w.wait(timeout=30)

    assert differences(await dump(reference), await dump(clean_engine)) == []
    await reference.dispose()
    logs = worker_logs(tmp_path)
    assert "Traceback" not in logs
    assert "deadlock" not in logs.lower()
    assert await read_all(bootstrap, f"{topic}.dead-letter", expected=1, within_s=3) == []
