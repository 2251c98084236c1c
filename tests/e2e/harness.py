"""The e2e pipeline of one test module: topic -> in-process consumer -> database -> API.

`Pipeline` owns a fresh topic (+ dead-letter topic), a consumer group, a fresh database and
an API client over it; `run_job` starts one producer process (a Spark job, `airflow dags
test`) and `drained` waits until the consumer has committed everything on the topic, i.e.
until its database transactions for those events are committed (offsets are committed
only after the batch's transaction, see consumer.app).
"""

import asyncio
import os
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

ROOT = Path(__file__).resolve().parents[2]
SPARK_CONF_DIR = Path(__file__).resolve().parent / "spark-conf"
# Recommended topic settings (README.md, "Connect your producers"), so the tests run against them.
PARTITIONS = 8
TOPIC_CONFIG = {"max.message.bytes": str(32 * 1024 * 1024)}
POLL_S = 0.25


@dataclass(frozen=True, slots=True)
class JobResult:
    """A finished producer process: exit status, wall time, where its output went."""

    argv: tuple[str, ...]
    returncode: int
    seconds: float
    log: Path

    def tail(self, lines: int = 60) -> str:
        text = self.log.read_text(errors="replace").splitlines()
        return "\n".join([f"$ {' '.join(self.argv)} -> rc {self.returncode}", *text[-lines:]])


async def create_topics(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(topic, PARTITIONS, 1, topic_configs=TOPIC_CONFIG),
                NewTopic(f"{topic}.dead-letter", 1, 1, topic_configs=TOPIC_CONFIG),
            ]
        )
    finally:
        await admin.close()


async def delete_topics(bootstrap: str, topic: str) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics([topic, f"{topic}.dead-letter"])
    finally:
        await admin.close()


async def run_process(
    argv: Sequence[str], env: Mapping[str, str], log: Path, timeout_s: float
) -> JobResult:
    """Run a command to completion (its own process group, killed on timeout)."""
    started = time.monotonic()
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=ROOT, env=dict(env), stdout=out, stderr=out, start_new_session=True
        )
        try:
            returncode = await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            os.killpg(proc.pid, signal.SIGKILL)  # the group we started: python + its JVM
            await proc.wait()
            returncode = -signal.SIGKILL
    return JobResult(tuple(argv), returncode, time.monotonic() - started, log)


@dataclass(slots=True)
class Pipeline:
    bootstrap: str
    topic: str
    group_id: str
    namespace: str
    work: Path
    job_env: dict[str, str]
    api: httpx.AsyncClient
    results: list[JobResult] = field(default_factory=list)

    @property
    def dead_letter_topic(self) -> str:
        return f"{self.topic}.dead-letter"

    async def run_job(
        self, job: str, *args: str, timeout_s: float = 300, env: Mapping[str, str] | None = None
    ) -> JobResult:
        """`python -m tests.e2e.jobs.<job> args...`: one Spark application."""
        argv = (sys.executable, "-m", f"tests.e2e.jobs.{job}", *args)
        log = self.work / "logs" / f"{job}-{len(self.results)}.log"
        result = await run_process(argv, {**self.job_env, **(env or {})}, log, timeout_s)
        self.results.append(result)
        return result

    async def drained(self, within_s: float = 120) -> None:
        """Wait until the consumer group has committed every record now on the topic."""
        partitions = [TopicPartition(self.topic, p) for p in range(PARTITIONS)]
        ends = await end_offsets(self.bootstrap, partitions)
        admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap)
        await admin.start()
        try:
            deadline = time.monotonic() + within_s
            while time.monotonic() < deadline:
                committed = await admin.list_consumer_group_offsets(self.group_id)
                behind = {
                    tp.partition: end - (committed[tp].offset if tp in committed else 0)
                    for tp, end in ends.items()
                    if end > (committed[tp].offset if tp in committed else 0)
                }
                if not behind:
                    return
                await asyncio.sleep(POLL_S)
        finally:
            await admin.close()
        raise TimeoutError(f"consumer still behind on {self.topic} after {within_s}s: {behind}")

    async def dead_letters(self) -> int:
        ends = await end_offsets(self.bootstrap, [TopicPartition(self.dead_letter_topic, 0)])
        return sum(ends.values())

    async def records(self) -> list[ConsumerRecord[bytes, bytes]]:
        """Every record on the topic, in partition/offset order."""
        return await read_topic(self.bootstrap, self.topic)


async def end_offsets(
    bootstrap: str, partitions: list[TopicPartition]
) -> dict[TopicPartition, int]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        ends: dict[TopicPartition, int] = await consumer.end_offsets(partitions)
        return ends
    finally:
        await consumer.stop()


async def read_topic(bootstrap: str, topic: str) -> list[ConsumerRecord[bytes, bytes]]:
    partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
    ends = await end_offsets(bootstrap, partitions)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    records: list[ConsumerRecord[bytes, bytes]] = []
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        async with asyncio.timeout(30):
            while len(records) < sum(ends.values()):
                batch = await consumer.getmany(timeout_ms=500)
                records.extend(r for rs in batch.values() for r in rs)
    finally:
        await consumer.stop()
    return sorted(records, key=lambda r: (r.partition, r.offset))
