"""The FastStream app: a Kafka batch subscriber running the pipeline, plus dead letters.

Delivery is at-least-once. The subscriber's ack policy is NACK_ON_ERROR: the
offsets of a batch are committed only after the handler returns, i.e. after
its database transaction committed and its rejects reached the dead-letter
topic; on an exception the partitions are rewound to the batch's first offsets
and the batch is read again. Redelivery is safe because every write is an
idempotent, order-independent upsert (see consumer.merge).
"""

import logging
import time
from collections.abc import Sequence
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition
from faststream import FastStream
from faststream.kafka import KafkaBroker, KafkaMessage
from faststream.middlewares import AckPolicy
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.decode import Reject
from consumer.http import StatusServer
from consumer.ingest import BatchResult, Pipeline
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


class BatchHandler:
    """decode -> extract -> merge -> write for one Kafka batch, then dead letters and metrics."""

    def __init__(
        self, pipeline: Pipeline, broker: KafkaBroker, settings: ConsumerSettings, metrics: Metrics
    ) -> None:
        self.pipeline = pipeline
        self.broker = broker
        self.dead_letter_topic = settings.kafka.dead_letter_topic
        self.metrics = metrics

    async def __call__(self, message: KafkaMessage) -> None:
        started = time.perf_counter()
        records: Sequence[ConsumerRecord[Any, Any]] = message.raw_message
        result = await self.pipeline.run([r.value or b"" for r in records])
        for index, reject in sorted(result.rejects.items()):
            await self._dead_letter(records[index], reject)
        self._observe(message, records, result, time.perf_counter() - started)

    async def _dead_letter(self, record: ConsumerRecord[Any, Any], reject: Reject) -> None:
        await self.broker.publish(
            record.value or b"",
            self.dead_letter_topic,
            key=record.key,
            headers=dead_letter_headers(record, reject),
        )
        self.metrics.rejected.labels(reject.reason).inc()

    def _observe(
        self,
        message: KafkaMessage,
        records: Sequence[ConsumerRecord[Any, Any]],
        result: BatchResult,
        seconds: float,
    ) -> None:
        m = self.metrics
        m.consumed.inc(result.size)
        m.written.inc(result.written)
        m.db_retries.inc(result.db_retries)
        m.batch_size.observe(result.size)
        m.batch_seconds.observe(seconds)
        m.last_batch_at = time.time()
        m.last_batch.set(m.last_batch_at)
        lag = _lag(message, records)
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


def _lag(message: KafkaMessage, records: Sequence[ConsumerRecord[Any, Any]]) -> dict[int, int]:
    """Records behind the high watermark per partition, where the client knows it."""
    consumer = getattr(message, "consumer", None)
    last: dict[TopicPartition, int] = {}
    for r in records:
        last[TopicPartition(r.topic, r.partition)] = max(
            r.offset, last.get(TopicPartition(r.topic, r.partition), -1)
        )
    lag = {}
    for tp, offset in last.items():
        high = (
            consumer.highwater(tp)
            if consumer is not None and hasattr(consumer, "highwater")
            else None
        )
        if high is not None:
            lag[tp.partition] = max(0, high - offset - 1)
    return lag


def create_app(settings: ConsumerSettings, engine: AsyncEngine | None = None) -> FastStream:
    """The consumer app, its dependencies closed over (no globals)."""
    engine = engine or create_engine(settings.database, application_name="threadline-consumer")
    kafka = settings.kafka
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
        Writer(engine), max_event_bytes=settings.consumer.max_event_bytes, backoff=backoff
    )
    handler = BatchHandler(pipeline, broker, settings, metrics)

    @broker.subscriber(
        kafka.topic,
        batch=True,
        group_id=kafka.group_id,
        # At-least-once: commit only after the batch's DB transaction committed.
        ack_policy=AckPolicy.NACK_ON_ERROR,
        auto_offset_reset=kafka.auto_offset_reset,
        max_records=kafka.max_records,
        batch_timeout_ms=kafka.batch_timeout_ms,
        max_partition_fetch_bytes=kafka.max_partition_fetch_bytes,
        fetch_max_bytes=kafka.fetch_max_bytes,
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
