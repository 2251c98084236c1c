"""Fault injection with real processes: consumers, the broker and the database are killed
while events stream in; afterwards the database must equal the reference (a clean single
pass of the same events): nothing lost, nothing doubled; the consumers recover by
themselves within a bound; no valid event reaches the dead-letter topic.

Each scenario has a hard timeout and stops every process it started. Measurements go to
build/reliability/faults.jsonl (see docs/reliability.md).
"""

import asyncio
import random
import time
from typing import Any

import pytest

from tests.faults.events import Message
from tests.faults.harness import Target
from tests.faults.private import PrivateServices
from tests.faults.reference import Reference
from tests.faults.report import Report
from tests.faults.scenario import Scenario

pytestmark = pytest.mark.kafka

CONSUMER_KILLS = 10
# A restarted consumer waits for the killed member's session (10 s) to expire before the
# group rebalances, then reads again: 60 s is a generous bound for "recovered by itself".
RESUME_BOUND_S = 60.0
# The first batches of fresh workers on a backlog are the slowest (new partitions, cold
# id caches, every new non-v7 id rehomed one statement at a time): a separate, looser bound.
FIRST_BATCH_BOUND_S = 180.0
CATCH_UP_BOUND_S = 240.0


def _record(
    report: Report, scenario: str, fault: str, outcome: dict[str, Any], **extra: Any
) -> None:
    report.add(
        scenario=scenario,
        fault=fault,
        **{k: v for k, v in outcome.items() if k != "differences"},
        **extra,
    )


def _assert_equal_to_reference(outcome: dict[str, Any]) -> None:
    assert outcome["differences"] == {}, (
        f"database differs from the reference: {outcome['differences']}"
    )
    assert outcome["dead_letters"] == 0, "valid events reached the dead-letter topic"


@pytest.mark.timeout(900)
async def test_consumer_killed_repeatedly(
    target: Target,
    fault_services: PrivateServices,
    fault_events: list[Message],
    reference: Reference,
    report: Report,
) -> None:
    """(a) kill -9 the consumer at random points, at least 10 times, restarting it each time."""
    rng = random.Random(7)
    resumes: list[float] = []
    mid_batch = 0
    rate = len(fault_events) / 150
    async with Scenario(target, fault_services, fault_events, rate) as run:
        worker = run.pool[0]
        for kill in range(CONSUMER_KILLS):
            await run.wait_for_batches(worker, 1, RESUME_BOUND_S)
            await asyncio.sleep(rng.uniform(0.2, 4.0))
            # Every other kill waits (up to 5 s) for an open batch transaction, so the
            # random points include the worst one: rows written, nothing committed.
            if kill % 2 and await run.wait_in_transaction(worker, 5.0):
                mid_batch += 1
            else:
                mid_batch += await run.in_transaction(worker)
            await run.kill(worker)
            await worker.start()
            resumes.append(await run.wait_for_batches(worker, 1, RESUME_BOUND_S))
        catch_up = await run.finish(CATCH_UP_BOUND_S)
        outcome = await run.verdict(reference)
    median = sorted(resumes)[len(resumes) // 2]
    recovery = f"resume max {max(resumes):.1f}, median {median:.1f}; drain {catch_up:.1f}"
    _record(
        report,
        "consumer_kill",
        f"consumer `kill -9` x{CONSUMER_KILLS} at random points"
        f" ({mid_batch} inside a DB transaction), restarted each time",
        outcome,
        recovery_s=recovery,
    )
    _assert_equal_to_reference(outcome)
    assert max(resumes) < RESUME_BOUND_S


@pytest.mark.timeout(600)
async def test_broker_restart(
    target: Target,
    fault_services: PrivateServices,
    fault_events: list[Message],
    reference: Reference,
    report: Report,
) -> None:
    """(b) kill -9 the Kafka broker mid-stream and start it again; the consumer keeps running."""
    rate = len(fault_events) / 45
    async with Scenario(target, fault_services, fault_events, rate) as run:
        await run.wait_for_batches(run.pool[0], 3, FIRST_BATCH_BOUND_S)
        fault_services.kill_kafka()
        await asyncio.sleep(2)
        await asyncio.to_thread(fault_services.start, "kafka")
        back = time.monotonic()
        before = run.batches_since_start(run.pool[0])
        await run.wait_for_batches(run.pool[0], before + 1, RESUME_BOUND_S)
        resumed = time.monotonic() - back
        catch_up = await run.finish(CATCH_UP_BOUND_S)
        outcome = await run.verdict(reference)
    _record(
        report,
        "broker_restart",
        "Kafka broker `kill -9` mid-stream, restarted (consumer and producer keep running)",
        outcome,
        recovery_s=f"resume {resumed:.1f}; drain {catch_up:.1f}",
    )
    _assert_equal_to_reference(outcome)


@pytest.mark.timeout(600)
async def test_postgres_restart(
    target: Target,
    fault_services: PrivateServices,
    fault_events: list[Message],
    reference: Reference,
    report: Report,
) -> None:
    """(c) crash PostgreSQL (immediate shutdown) mid-stream and start it again."""
    rate = len(fault_events) / 45
    async with Scenario(target, fault_services, fault_events, rate) as run:
        await run.wait_for_batches(run.pool[0], 3, FIRST_BATCH_BOUND_S)
        fault_services.crash_postgres()
        await asyncio.sleep(3)
        await asyncio.to_thread(fault_services.start, "postgres")
        back = time.monotonic()
        before = run.batches_since_start(run.pool[0])
        await run.wait_for_batches(run.pool[0], before + 1, RESUME_BOUND_S)
        resumed = time.monotonic() - back
        catch_up = await run.finish(CATCH_UP_BOUND_S)
        outcome = await run.verdict(reference)
    _record(
        report,
        "postgres_restart",
        "PostgreSQL crash (SIGQUIT: immediate shutdown) mid-stream, restarted 3 s later",
        outcome,
        recovery_s=f"resume {resumed:.1f}; drain {catch_up:.1f}",
    )
    _assert_equal_to_reference(outcome)


@pytest.mark.timeout(600)
async def test_worker_killed_mid_batch(
    target: Target,
    fault_services: PrivateServices,
    fault_events: list[Message],
    reference: Reference,
    report: Report,
) -> None:
    """(d) three workers in one group; kill -9 one while its batch transaction is open."""
    rate = len(fault_events) / 45
    async with Scenario(target, fault_services, fault_events, rate, workers=3) as run:
        victim = run.pool[1]
        await run.wait_for_batches(victim, 1, FIRST_BATCH_BOUND_S)
        opened = await run.wait_in_transaction(victim, RESUME_BOUND_S)
        assert opened, "the victim never had a batch transaction open"
        at_kill = await run.probe.offsets()
        await run.kill(victim)
        killed = time.monotonic()
        assert at_kill is not None
        await run.wait_all_partitions_advance(at_kill[1], RESUME_BOUND_S * 2)
        resumed = time.monotonic() - killed
        catch_up = await run.finish(CATCH_UP_BOUND_S)
        outcome = await run.verdict(reference)
    _record(
        report,
        "worker_kill_mid_batch",
        "3 workers; one `kill -9`ed inside its batch transaction, not restarted",
        outcome,
        recovery_s=f"every partition moving again {resumed:.1f}; drain {catch_up:.1f}",
    )
    _assert_equal_to_reference(outcome)
