"""BatchHandler: one batch written while the next is prepared, offsets committed per batch.

The Kafka client and the pipeline are stand-ins that record what the handler asks of them;
the fault tests (tests/faults) run the same handler against a real broker and database with
consumers killed mid-batch.
"""

import asyncio
from typing import Any

import pytest
from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.errors import CommitFailedError, IllegalStateError

from consumer.app import BatchHandler
from consumer.ingest import BatchResult, Prepared
from consumer.metrics import Metrics
from consumer.settings import ConsumerSettings

pytestmark = pytest.mark.unit

TOPIC = "lineage"


def _record(partition: int, offset: int) -> ConsumerRecord[Any, Any]:
    return ConsumerRecord(TOPIC, partition, offset, 0, 0, None, b"{}", None, 0, 2, [])


class Message:
    def __init__(self, consumer: "Consumer", *at: tuple[int, int]) -> None:
        self.raw_message = tuple(_record(p, o) for p, o in at)
        self.consumer = consumer


class Consumer:
    """Records commits and seeks; `assigned` limits what it may seek, as aiokafka does."""

    def __init__(self, assigned: set[int] | None = None) -> None:
        self.log: list[tuple[str, dict[int, int]]] = []
        self.assigned = assigned
        self.fail_commit = False

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        if self.fail_commit:
            raise CommitFailedError("rebalanced")
        self.log.append(("commit", {tp.partition: o for tp, o in offsets.items()}))

    def seek(self, tp: TopicPartition, offset: int) -> None:
        if self.assigned is not None and tp.partition not in self.assigned:
            raise IllegalStateError("not assigned")
        self.log.append(("seek", {tp.partition: offset}))


class Pipeline:
    """Each write waits for the test to release it (or raises what the test set)."""

    def __init__(self) -> None:
        self.prepared = 0
        self.writes: list[asyncio.Event] = []
        self.started: list[int] = []
        self.fail: set[int] = set()

    async def prepare(self, payloads: list[bytes]) -> Prepared:
        self.prepared += 1
        return Prepared(BatchResult(size=len(payloads)), [], None)

    async def write(self, prepared: Prepared) -> BatchResult:
        number = len(self.started)
        self.started.append(number)
        release = asyncio.Event()
        self.writes.append(release)
        await release.wait()
        if number in self.fail:
            raise RuntimeError("the dead-letter topic is unreachable")
        return prepared.result


def _handler(pipeline: Pipeline) -> BatchHandler:
    return BatchHandler(pipeline, None, ConsumerSettings(), Metrics())  # type: ignore[arg-type]


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_batch_is_prepared_while_the_previous_one_is_written() -> None:
    pipeline, consumer = Pipeline(), Consumer()
    handler = _handler(pipeline)
    await handler(Message(consumer, (0, 10), (0, 11), (1, 5)))  # type: ignore[arg-type]
    await _settle()
    assert pipeline.started == [0]
    assert consumer.log == []
    second = asyncio.create_task(handler(Message(consumer, (0, 12), (1, 6))))  # type: ignore[arg-type]
    await _settle()
    assert pipeline.prepared == 2
    assert pipeline.started == [0]
    pipeline.writes[0].set()
    await second
    await _settle()
    # Exactly the first batch's own offsets, though the consumer has read further.
    assert consumer.log == [("commit", {0: 12, 1: 6})]
    assert pipeline.started == [0, 1]
    pipeline.writes[1].set()
    await handler.drain()
    assert consumer.log[-1] == ("commit", {0: 13, 1: 7})


async def test_a_failed_batch_and_the_one_read_after_it_are_read_again() -> None:
    pipeline, consumer = Pipeline(), Consumer()
    pipeline.fail = {0}
    handler = _handler(pipeline)
    await handler(Message(consumer, (0, 10), (0, 11), (1, 5)))  # type: ignore[arg-type]
    second = asyncio.create_task(handler(Message(consumer, (0, 12), (2, 40))))  # type: ignore[arg-type]
    await _settle()
    pipeline.writes[0].set()
    await second
    # The failed batch rewinds its partitions; the next batch is dropped unwritten, and no
    # partition is moved past the failed batch's start (partition 0 stays at 10, not 12).
    assert pipeline.started == [0]
    assert ("commit", {0: 12, 1: 6}) not in consumer.log
    seeks: dict[int, int] = {}
    for kind, offsets in consumer.log:
        assert kind == "seek"
        seeks.update(offsets)
    assert seeks == {0: 10, 1: 5, 2: 40}
    # The batches read again are written and committed as usual.
    third = asyncio.create_task(handler(Message(consumer, (0, 10), (0, 11), (1, 5))))  # type: ignore[arg-type]
    await _settle()
    pipeline.writes[1].set()
    await third
    await handler.drain()
    assert consumer.log[-1] == ("commit", {0: 12, 1: 6})


async def test_a_failed_batch_skips_partitions_no_longer_assigned() -> None:
    pipeline, consumer = Pipeline(), Consumer(assigned={1})
    pipeline.fail = {0}
    handler = _handler(pipeline)
    await handler(Message(consumer, (0, 10), (1, 5)))  # type: ignore[arg-type]
    await _settle()
    pipeline.writes[0].set()
    await handler.drain()
    assert consumer.log == [("seek", {1: 5})]


async def test_an_offset_commit_refused_after_the_write_is_not_a_failure() -> None:
    pipeline, consumer = Pipeline(), Consumer()
    consumer.fail_commit = True
    handler = _handler(pipeline)
    await handler(Message(consumer, (0, 10)))  # type: ignore[arg-type]
    await _settle()
    pipeline.writes[0].set()
    await handler.drain()
    # Written: nothing is rewound; whoever reads from the last commit reads it again.
    assert consumer.log == []
    second = asyncio.create_task(handler(Message(consumer, (0, 11))))  # type: ignore[arg-type]
    await _settle()
    assert pipeline.started == [0, 1]
    pipeline.writes[1].set()
    await second


async def test_batches_handled_after_drain_are_written_before_the_handler_returns() -> None:
    pipeline, consumer = Pipeline(), Consumer()
    handler = _handler(pipeline)
    await handler.drain()
    call = asyncio.create_task(handler(Message(consumer, (3, 7))))  # type: ignore[arg-type]
    await _settle()
    assert not call.done()
    assert pipeline.started == [0]
    pipeline.writes[0].set()
    await call
    assert consumer.log == [("commit", {3: 8})]


async def test_the_failed_batch_read_again_after_its_rewind_is_written_at_once() -> None:
    pipeline, consumer = Pipeline(), Consumer()
    pipeline.fail = {0}
    handler = _handler(pipeline)
    await handler(Message(consumer, (0, 10), (1, 5)))  # type: ignore[arg-type]
    await _settle()
    pipeline.writes[0].set()
    await _settle()
    assert consumer.log == [("seek", {0: 10}), ("seek", {1: 5})]
    # The next batch starts where the failed one did (fetched after the rewind): not dropped.
    again = asyncio.create_task(handler(Message(consumer, (0, 10), (0, 11), (1, 5))))  # type: ignore[arg-type]
    await _settle()
    assert pipeline.started == [0, 1]
    pipeline.writes[1].set()
    await again
    await handler.drain()
    assert consumer.log[-1] == ("commit", {0: 12, 1: 6})
