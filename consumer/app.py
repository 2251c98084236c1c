"""The FastStream app: a Kafka batch subscriber running the pipeline, plus dead letters.

Delivery is at-least-once. The subscriber's ack policy is MANUAL: `BatchHandler`
commits exactly a batch's own offsets once its database transaction committed
and its rejects reached the dead-letter topic (it writes one batch while it
prepares the next); when a batch fails, its partitions are rewound to its first
offsets and it is read again. Redelivery is safe because every write is an
idempotent, order-independent upsert (see consumer.merge).
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.errors import IllegalStateError, KafkaError
from faststream import FastStream
from faststream.kafka import KafkaBroker, KafkaMessage
from faststream.middlewares import AckPolicy
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.decode import Reject
from consumer.http import StatusServer
from consumer.ingest import BatchResult, Pipeline, Prepared
from consumer.kafka_reads import set_read_buffer
from consumer.metrics import Metrics
from consumer.retry import Backoff
from consumer.security import kafka_security
from consumer.settings import ConsumerSettings
from consumer.write import Writer
from consumer.write.dimensions import seed_aliases
from shared.db import create_engine

log = logging.getLogger("threadline.consumer")


async def _no_decode(_message: Any) -> None:
    """Skip FastStream's body decoding: the pipeline reads the raw record bytes itself."""


def dead_letter_headers(record: ConsumerRecord[Any, Any], reject: Reject) -> dict[str, str]:
    return {
        "x-threadline-reason": reject.reason,
        "x-threadline-detail": reject.detail,
        "x-original-topic": record.topic,
        "x-original-partition": str(record.partition),
        "x-original-offset": str(record.offset),
    }


@dataclass(frozen=True, slots=True)
class BatchOffsets:
    """A batch's first and last offset per partition."""

    first: dict[TopicPartition, int]
    last: dict[TopicPartition, int]

    @classmethod
    def of(cls, records: Sequence[ConsumerRecord[Any, Any]]) -> "BatchOffsets":
        first: dict[tuple[str, int], int] = {}
        last: dict[tuple[str, int], int] = {}
        for r in records:
            key, offset = (r.topic, r.partition), r.offset
            if key not in first:
                first[key] = last[key] = offset
            elif offset < first[key]:
                first[key] = offset
            elif offset > last[key]:
                last[key] = offset
        return cls(
            {TopicPartition(*k): o for k, o in first.items()},
            {TopicPartition(*k): o for k, o in last.items()},
        )

    async def commit(self, consumer: Any) -> None:
        """Commit exactly this batch's offsets (the consumer's position may be further on)."""
        if not self.last:
            return
        try:
            await consumer.commit({tp: offset + 1 for tp, offset in self.last.items()})
        except KafkaError as exc:
            # Written, not committed: a rebalance moved a partition, or the broker refused
            # for now. The batch is read again by whoever reads from the last commit (every
            # write is idempotent), or covered by this consumer's next commit.
            log.warning("batch written but its offsets not committed: %s", exc)

    def resumes_after(self, other: "BatchOffsets") -> bool:
        """Whether this batch starts past `other`'s start on a partition they share."""
        return any(offset > other.first.get(tp, offset) for tp, offset in self.first.items())

    def rewind(self, consumer: Any, *earlier: "BatchOffsets") -> None:
        """Read the batch again: each partition back to its first offset in the batch, or
        in an `earlier` batch, whichever comes first (partitions of those included)."""
        first = dict(self.first)
        for other in earlier:
            for tp, offset in other.first.items():
                first[tp] = min(offset, first.get(tp, offset))
        for tp, offset in first.items():
            # A partition no longer ours: its new owner reads on from the last commit.
            with contextlib.suppress(IllegalStateError):
                consumer.seek(tp, offset)


@dataclass(frozen=True, slots=True)
class InFlight:
    """The background write of one batch; its result says whether it was committed."""

    task: "asyncio.Task[bool]"
    offsets: BatchOffsets


class BatchHandler:
    """decode -> extract -> merge -> write for each Kafka batch, then dead letters, the
    batch's offsets and metrics.

    One batch's write overlaps the next batch's CPU stages: the handler prepares batch N+1
    while batch N is written in the background, waits for N, then starts N+1's write and
    returns. PostgreSQL and the consumer's interpreter work at the same time instead of in
    turn. At most one write is in flight, and a batch's offsets (exactly its own records')
    are committed only after its transaction committed and its rejects reached the dead-letter
    topic, so delivery stays at-least-once. A batch that fails is read again: its partitions
    are rewound to its first offsets, and a batch prepared meanwhile from records after it
    is dropped and rewound too.
    """

    def __init__(
        self, pipeline: Pipeline, broker: KafkaBroker, settings: ConsumerSettings, metrics: Metrics
    ) -> None:
        self.pipeline = pipeline
        self.broker = broker
        self.dead_letter_topic = settings.kafka.dead_letter_topic
        self.metrics = metrics
        self._in_flight: InFlight | None = None
        self._closing = False

    async def __call__(self, message: KafkaMessage) -> None:
        started = time.perf_counter()
        records: Sequence[ConsumerRecord[Any, Any]] = message.raw_message
        consumer: Any = message.consumer
        batch = BatchOffsets.of(records)
        try:
            prepared = await self.pipeline.prepare([r.value or b"" for r in records])
        except Exception:
            batch.rewind(consumer)
            raise
        previous, self._in_flight = self._in_flight, None
        if (
            previous is not None
            and not await previous.task
            and batch.resumes_after(previous.offsets)
        ):
            # The previous batch failed and was rewound, but this one was fetched before the
            # rewind: drop it, and make sure no partition resumes past the failed batch's start.
            # (A batch read after the rewind starts where the failed one did: it is written.)
            batch.rewind(consumer, previous.offsets)
            return
        finish = self._finish(consumer, records, batch, prepared, started)
        if self._closing:
            await finish
        else:
            self._in_flight = InFlight(asyncio.create_task(finish), batch)

    async def drain(self) -> None:
        """Shutdown: wait for the write in flight; batches still handled are written inline."""
        self._closing = True
        if self._in_flight is not None:
            # Not taken from the handler: a batch it is preparing still waits for this one.
            await self._in_flight.task

    async def _finish(
        self,
        consumer: Any,
        records: Sequence[ConsumerRecord[Any, Any]],
        batch: BatchOffsets,
        prepared: Prepared,
        started: float,
    ) -> bool:
        """Write, dead letters, commit: True once done; False if the batch was rewound.

        Never raises (but when cancelled): the handler of the next batch reads the result."""
        try:
            result = await self.pipeline.write(prepared)
            for index, reject in sorted(result.rejects.items()):
                await self._dead_letter(records[index], reject)
        except Exception:
            log.exception("batch failed; its partitions are rewound to read it again")
            batch.rewind(consumer)
            return False
        await batch.commit(consumer)
        try:
            self._observe(consumer, batch, result, time.perf_counter() - started)
        except Exception:  # metrics only: the batch is written and committed
            log.exception("batch metrics failed")
        return True

    async def _dead_letter(self, record: ConsumerRecord[Any, Any], reject: Reject) -> None:
        await self.broker.publish(
            record.value or b"",
            self.dead_letter_topic,
            key=record.key,
            headers=dead_letter_headers(record, reject),
        )
        self.metrics.rejected.labels(reject.reason).inc()

    def _observe(
        self, consumer: Any, batch: BatchOffsets, result: BatchResult, seconds: float
    ) -> None:
        m = self.metrics
        m.consumed.inc(result.size)
        m.written.inc(result.written)
        m.db_retries.inc(result.db_retries)
        m.batch_size.observe(result.size)
        m.batch_seconds.observe(seconds)
        m.last_batch_at = time.time()
        m.last_batch.set(m.last_batch_at)
        lag = _lag(consumer, batch.last)
        for partition, behind in lag.items():
            m.lag.labels(str(partition)).set(behind)
        log.info(
            "batch size=%d written=%d rejected=%d retries=%d ms=%.1f lag=%d",
            result.size,
            result.written,
            len(result.rejects),
            result.db_retries,
            seconds * 1000,
            sum(lag.values()),
            extra={
                "batch_size": result.size,
                "written": result.written,
                "rejected": len(result.rejects),
                "db_retries": result.db_retries,
                "duration_ms": round(seconds * 1000, 1),
            },
        )


def _lag(consumer: Any, last: dict[TopicPartition, int]) -> dict[int, int]:
    """Records behind the high watermark per partition, where the client knows it."""
    lag = {}
    for tp, offset in last.items():
        high = consumer.highwater(tp) if hasattr(consumer, "highwater") else None
        if high is not None:
            lag[tp.partition] = max(0, high - offset - 1)
    return lag


def create_app(settings: ConsumerSettings, engine: AsyncEngine | None = None) -> FastStream:
    """The consumer app, its dependencies closed over (no globals)."""
    engine = engine or create_engine(settings.database, application_name="threadline-consumer")
    kafka = settings.kafka
    set_read_buffer(kafka.read_buffer_bytes)
    broker = KafkaBroker(
        kafka.bootstrap_servers,
        client_id=kafka.client_id,
        security=kafka_security(kafka),
        max_request_size=kafka.max_request_size,
        logger=None,
    )
    metrics = Metrics()
    backoff = Backoff(settings.consumer.retry_base_s, settings.consumer.retry_cap_s)
    pipeline = Pipeline(
        Writer(engine, native=settings.consumer.native_extract),
        max_event_bytes=settings.consumer.max_event_bytes,
        backoff=backoff,
        native=settings.consumer.native_extract,
    )
    handler = BatchHandler(pipeline, broker, settings, metrics)

    @broker.subscriber(
        kafka.topic,
        batch=True,
        group_id=kafka.group_id,
        # At-least-once: BatchHandler commits each batch's own offsets after its DB
        # transaction committed, and rewinds a batch that failed.
        ack_policy=AckPolicy.MANUAL,
        auto_offset_reset=kafka.auto_offset_reset,
        max_records=kafka.max_records,
        batch_timeout_ms=kafka.batch_timeout_ms,
        max_partition_fetch_bytes=kafka.max_partition_fetch_bytes,
        fetch_max_bytes=kafka.fetch_max_bytes,
        fetch_max_wait_ms=kafka.fetch_max_wait_ms,
        session_timeout_ms=kafka.session_timeout_ms,
        decoder=_no_decode,
    )
    async def on_batch(message: KafkaMessage) -> None:
        await handler(message)

    app = FastStream(broker)
    status = StatusServer(metrics, _health(engine, metrics))

    @app.on_startup
    async def start() -> None:
        async with engine.connect() as sa_conn:
            raw = await sa_conn.get_raw_connection()
            await seed_aliases(raw.driver_connection, settings.consumer.aliases)  # type: ignore[arg-type]
            await sa_conn.commit()
        if settings.metrics.port:
            await status.start(settings.metrics.host, settings.metrics.port)

    @app.on_shutdown
    async def drain() -> None:
        await handler.drain()  # before the broker stops: the last batch's offsets commit

    @app.after_shutdown
    async def stop() -> None:
        await status.stop()
        await engine.dispose()

    return app


def _health(engine: AsyncEngine, metrics: Metrics) -> Any:
    async def check() -> dict[str, object]:
        try:
            async with engine.connect() as conn:
                await conn.execute(text("SELECT 1"))
        except Exception as exc:  # reported, not raised
            return {"status": "degraded", "database": str(exc)[:200]}
        return {"status": "ok", "database": "ok", "last_batch_at": metrics.last_batch_at}

    return check
