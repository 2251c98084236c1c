"""Real consumer processes, a paced producer and lag probes for the fault scenarios."""

import asyncio
import contextlib
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError

from tests.faults.events import Message
from tests.faults.private import ROOT, clean_environ

CONSUMER_BIN = ROOT / ".venv" / "bin" / "threadline-consumer"


@dataclass(frozen=True, slots=True)
class Target:
    """Where one scenario's consumers read from and write to."""

    database_url: str  # postgresql+asyncpg://...
    bootstrap: str
    topic: str
    group_id: str
    log_dir: Path

    @property
    def dead_letter_topic(self) -> str:
        return f"{self.topic}.dead-letter"


async def create_topics(bootstrap: str, topic: str, partitions: int = 8) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(topic, partitions, 1, topic_configs={"max.message.bytes": str(32 << 20)}),
                NewTopic(
                    f"{topic}.dead-letter", 1, 1, topic_configs={"max.message.bytes": str(32 << 20)}
                ),
            ]
        )
    finally:
        await admin.close()


def consumer_env(target: Target, **extra: str) -> dict[str, str]:
    env = clean_environ()
    env.update(
        THREADLINE__DATABASE__URL=target.database_url,
        THREADLINE__KAFKA__BOOTSTRAP_SERVERS=target.bootstrap,
        THREADLINE__KAFKA__TOPIC=target.topic,
        THREADLINE__KAFKA__GROUP_ID=target.group_id,
        THREADLINE__KAFKA__DEAD_LETTER_TOPIC=target.dead_letter_topic,
        THREADLINE__KAFKA__BATCH_TIMEOUT_MS="200",
        THREADLINE__CONSUMER__RETRY_CAP_S="2",
        THREADLINE__METRICS__PORT="0",
        THREADLINE__LOG__JSON_FORMAT="false",
    )
    env.update(extra)
    return env


@dataclass
class Worker:
    """One `threadline-consumer` process, restartable; its output goes to a log file."""

    target: Target
    name: str
    env_extra: dict[str, str] = field(default_factory=dict)
    process: asyncio.subprocess.Process | None = None
    starts: int = 0

    async def start(self) -> None:
        self.starts += 1
        log = (self.target.log_dir / f"{self.name}.log").open("ab")
        log.write(f"--- start #{self.starts} at {time.time():.3f}\n".encode())
        log.flush()
        self.process = await asyncio.create_subprocess_exec(
            str(CONSUMER_BIN),
            env=consumer_env(self.target, **self.env_extra),
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            stdin=asyncio.subprocess.DEVNULL,
        )
        log.close()

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def kill(self) -> None:
        """SIGKILL: no shutdown hook, no offset commit, no leave-group."""
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.process.wait(), 20)
        except TimeoutError:
            await self.kill()

    def log_tail(self, chars: int = 3000) -> str:
        path = self.target.log_dir / f"{self.name}.log"
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""


@dataclass
class Producer:
    """Sends the messages at a steady pace, re-sending any that fail (broker down).

    A re-send may duplicate a message in the topic; that is allowed: the
    consumer's writes are idempotent, so a duplicate must not change the database.
    """

    bootstrap: str
    topic: str
    messages: Sequence[Message]
    rate_per_s: float
    sent: int = 0
    resends: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=self.bootstrap, acks="all", linger_ms=20, request_timeout_ms=15000
        )
        await _retry(producer.start)
        try:
            started = time.monotonic()
            chunk = 200
            for offset in range(0, len(self.messages), chunk):
                await self._send_chunk(producer, self.messages[offset : offset + chunk])
                ahead = (offset + chunk) / self.rate_per_s - (time.monotonic() - started)
                if ahead > 0:
                    await asyncio.sleep(ahead)
            self.done.set()  # only once every message was acknowledged
        finally:
            with contextlib.suppress(KafkaError):
                await producer.stop()

    async def _send_chunk(self, producer: AIOKafkaProducer, chunk: Sequence[Message]) -> None:
        pending = list(chunk)
        while pending:
            outcomes = await asyncio.gather(*(self._send(producer, m) for m in pending))
            failed = [m for m, ok in zip(pending, outcomes, strict=True) if not ok]
            self.sent += len(pending) - len(failed)
            self.resends += len(failed)
            pending = failed
            if failed:
                await asyncio.sleep(0.5)

    async def _send(self, producer: AIOKafkaProducer, message: Message) -> bool:
        """True once the broker acknowledged the message; False to send it again."""
        try:
            delivery = await producer.send(self.topic, message.value, key=message.key)
            await delivery
        except KafkaError:
            return False
        return True


async def _retry(action: object, within_s: float = 120) -> None:
    deadline = time.monotonic() + within_s
    while True:
        try:
            await action()  # type: ignore[operator]
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(1)
        else:
            return


Offsets = dict[int, int]


class LagProbe:
    """Committed offsets of the group against the topic's end offsets.

    The clients are kept between calls (they reconnect by themselves after a broker
    restart) and rebuilt only after an error.
    """

    def __init__(self, bootstrap: str, topic: str, group_id: str) -> None:
        self.bootstrap, self.topic, self.group_id = bootstrap, topic, group_id
        self.clients: tuple[AIOKafkaAdminClient, AIOKafkaConsumer] | None = None

    async def offsets(self) -> tuple[Offsets, Offsets] | None:
        """(end offsets, committed offsets) per partition; None while the broker cannot tell."""
        try:
            async with asyncio.timeout(10):
                return await self._offsets()
        except Exception:
            await self.close()
            return None

    async def lag(self) -> int | None:
        """Messages not yet committed by the group; None while the broker cannot tell."""
        found = await self.offsets()
        if found is None:
            return None
        ends, committed = found
        return sum(max(0, end - committed.get(p, 0)) for p, end in ends.items())

    async def _connect(self) -> tuple[AIOKafkaAdminClient, AIOKafkaConsumer]:
        if self.clients is None:
            admin = AIOKafkaAdminClient(bootstrap_servers=self.bootstrap, request_timeout_ms=5000)
            reader = AIOKafkaConsumer(bootstrap_servers=self.bootstrap, request_timeout_ms=5000)
            self.clients = (admin, reader)
            await admin.start()
            await reader.start()
        return self.clients

    async def _offsets(self) -> tuple[Offsets, Offsets]:
        admin, reader = await self._connect()
        tps = await topic_partitions(admin, self.topic)
        ends = await reader.end_offsets(tps)
        committed = await admin.list_consumer_group_offsets(self.group_id, partitions=tps)
        return (
            {tp.partition: ends[tp] for tp in tps},
            {
                tp.partition: meta.offset
                for tp, meta in committed.items()
                if meta is not None and meta.offset >= 0
            },
        )

    async def close(self) -> None:
        clients, self.clients = self.clients, None
        if clients is None:
            return
        admin, reader = clients
        # aiokafka can raise CancelledError from its own cancelled helper tasks on stop.
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await reader.stop()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await admin.close()


async def dead_letters(bootstrap: str, topic: str) -> int:
    """How many records the dead-letter topic holds."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    reader = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await admin.start()
    await reader.start()
    try:
        tps = await topic_partitions(admin, topic)
        ends = await reader.end_offsets(tps)
        starts = await reader.beginning_offsets(tps)
        return sum(ends[tp] - starts[tp] for tp in tps)
    finally:
        await reader.stop()
        await admin.close()


async def topic_partitions(admin: AIOKafkaAdminClient, topic: str) -> list[TopicPartition]:
    """The topic's partitions, from a metadata request (a bare consumer has none cached)."""
    (found,) = await admin.describe_topics([topic])
    if found["error_code"] != 0 or not found["partitions"]:
        raise RuntimeError(f"topic {topic}: metadata error {found['error_code']}")
    return sorted(TopicPartition(topic, p["partition"]) for p in found["partitions"])


async def stop_all(workers: Sequence[Worker]) -> None:
    for worker in workers:
        with contextlib.suppress(ProcessLookupError):
            await worker.kill()


def database_ports(pid: int, pg_port: int) -> set[int]:
    """Local TCP ports of `pid`'s connections to PostgreSQL (from /proc, no psutil)."""
    inodes = set()
    fd_dir = Path(f"/proc/{pid}/fd")
    with contextlib.suppress(OSError):
        for fd in fd_dir.iterdir():
            with contextlib.suppress(OSError):
                link = str(fd.readlink())
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
    ports = set()
    with contextlib.suppress(OSError):
        for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
            parts = line.split()
            local, remote, inode = parts[1], parts[2], parts[9]
            if inode in inodes and int(remote.split(":")[1], 16) == pg_port:
                ports.add(int(local.split(":")[1], 16))
    return ports
