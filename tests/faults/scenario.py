"""One fault scenario: a paced producer, N real consumer processes, the fault, the verdict.

The verdict compares the scenario's database with the reference (a clean single
pass of the same events) table by table, checks that the group committed every
offset, that no valid event was dead-lettered and that no worker died on its own.
"""

import asyncio
import contextlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from tests.faults.dump import derived_differences, differences, dump
from tests.faults.events import Message
from tests.faults.harness import (
    LagProbe,
    Producer,
    Target,
    Worker,
    database_ports,
    dead_letters,
    stop_all,
)
from tests.faults.private import PrivateServices
from tests.faults.reference import Reference, plain_url

BATCH_LINE = b" batch size="
START_LINE = b"--- start #"


@dataclass
class Scenario:
    target: Target
    services: PrivateServices
    messages: Sequence[Message]
    rate_per_s: float
    workers: int = 1
    producer: Producer = field(init=False)
    pool: list[Worker] = field(init=False)
    probe: LagProbe = field(init=False)
    task: asyncio.Task[None] | None = None
    started: float = field(default_factory=time.monotonic)
    killed_by_us: set[int] = field(default_factory=set)
    monitor: asyncpg.Connection | None = None

    def __post_init__(self) -> None:
        t = self.target
        self.producer = Producer(t.bootstrap, t.topic, self.messages, self.rate_per_s)
        self.pool = [Worker(t, f"worker-{i}") for i in range(self.workers)]
        self.probe = LagProbe(t.bootstrap, t.topic, t.group_id)

    async def __aenter__(self) -> "Scenario":
        self.started = time.monotonic()
        for worker in self.pool:
            await worker.start()
        self.task = asyncio.create_task(self.producer.run())
        return self

    async def __aexit__(self, *_: object) -> None:
        await stop_all(self.pool)
        await self.probe.close()
        if self.monitor is not None:
            await self.monitor.close()
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    # -- observing workers ----------------------------------------------------

    def batches_since_start(self, worker: Worker) -> int:
        path = self.target.log_dir / f"{worker.name}.log"
        if not path.exists():
            return 0
        text = path.read_bytes()
        return text[text.rfind(START_LINE) :].count(BATCH_LINE)

    async def wait_for_batches(self, worker: Worker, count: int, within_s: float) -> float:
        """Seconds until `worker` has logged `count` batches since its last start.

        Also returns once the group has nothing left to read (no batch can come then).
        """
        started = time.monotonic()
        while time.monotonic() - started < within_s:
            self.assert_alive()
            if self.batches_since_start(worker) >= count:
                return time.monotonic() - started
            if self.producer.done.is_set() and await self.probe.lag() == 0:
                return time.monotonic() - started
            await asyncio.sleep(0.1)
        raise TimeoutError(
            f"{worker.name} logged no batch within {within_s}s:\n{worker.log_tail()}"
        )

    async def wait_all_partitions_advance(self, committed: dict[int, int], within_s: float) -> None:
        """Until every partition has been committed past `committed` (or has nothing left)."""
        started = time.monotonic()
        while time.monotonic() - started < within_s:
            self.assert_alive()
            found = await self.probe.offsets()
            if found is not None:
                ends, now = found
                stuck = [
                    p
                    for p, end in ends.items()
                    if now.get(p, 0) <= committed.get(p, 0) and now.get(p, 0) < end
                ]
                if not stuck:
                    return
            await asyncio.sleep(0.2)
        raise TimeoutError(f"partitions still not consumed after {within_s}s")

    def assert_alive(self) -> None:
        if self.task is not None and self.task.done() and self.task.exception() is not None:
            raise AssertionError(f"the producer failed: {self.task.exception()!r}")
        for worker in self.pool:
            if worker.pid not in self.killed_by_us and not worker.alive():
                raise AssertionError(f"{worker.name} exited by itself:\n{worker.log_tail()}")

    async def kill(self, worker: Worker) -> None:
        self.killed_by_us.add(worker.pid)
        await worker.kill()

    async def in_transaction(self, worker: Worker) -> bool:
        """True while one of `worker`'s database connections has an open transaction."""
        ports = database_ports(worker.pid, self.services.pg_port)
        if not ports:
            return False
        try:
            if self.monitor is None or self.monitor.is_closed():
                self.monitor = await asyncpg.connect(self.services.pg_admin_url, timeout=5)
            busy = await self.monitor.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE client_port = ANY($1::int[])"
                " AND xact_start IS NOT NULL",
                sorted(ports),
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            self.monitor = None
            return False
        return bool(busy)

    async def wait_in_transaction(self, worker: Worker, within_s: float) -> bool:
        """Poll (every few ms) until `worker` has a batch transaction open; False on timeout."""
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if await self.in_transaction(worker):
                return True
            await asyncio.sleep(0.002)
        return False

    # -- the verdict ----------------------------------------------------------

    async def finish(self, within_s: float) -> float:
        """Seconds until the producer is done and the group committed every offset."""
        started = time.monotonic()
        while time.monotonic() - started < within_s:
            self.assert_alive()
            if self.producer.done.is_set() and await self.probe.lag() == 0:
                return time.monotonic() - started
            await asyncio.sleep(0.5)
        tails = "\n".join(w.log_tail(1500) for w in self.pool)
        raise TimeoutError(f"still lagging ({await self.probe.lag()}) after {within_s}s:\n{tails}")

    async def verdict(self, reference: Reference) -> dict[str, Any]:
        if self.task is not None:
            await self.task  # surfaces a producer failure
        self.assert_alive()
        await stop_all(self.pool)
        url = plain_url(self.target.database_url)
        actual = await dump(url)
        diff = differences(reference.snapshot, actual) | await derived_differences(url)
        return {
            "events": len(self.messages),
            "resent": self.producer.resends,
            "dead_letters": await dead_letters(
                self.target.bootstrap, self.target.dead_letter_topic
            ),
            "lost_rows": sum(d.get("missing", 0) for d in diff.values()),
            "extra_rows": sum(d.get("extra", 0) + d.get("duplicated", 0) for d in diff.values()),
            "differences": diff,
            "scenario_s": round(time.monotonic() - self.started, 1),
        }
