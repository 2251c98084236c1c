"""The batch pipeline without Kafka: decode -> extract -> merge -> write, with bad-event isolation.

The Kafka handler (`consumer.app`) runs `Pipeline.prepare` and `Pipeline.write` (one
batch's write overlapping the next batch's preparation); the tests and tools run
`Pipeline.run`, which is the two in turn, so what the tests ingest is exactly what the
consumer writes.
"""

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import asyncpg
from sqlalchemy.ext.asyncio import AsyncEngine

from consumer.decode import DecodeError, Event, Reject, decode
from consumer.extract import extract
from consumer.merge import merge
from consumer.native import native_extractor, native_merger
from consumer.records import Extracted
from consumer.retry import Backoff, is_transient
from consumer.write import Writer

log = logging.getLogger("threadline.consumer")

DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024
# The CPU stages are synchronous: yield to the event loop every few events, so that
# aiokafka's heartbeat and the previous batch's write (`consumer.app` overlaps the two)
# make progress meanwhile. Each yield lets that write send its next statement; at ~150 µs
# per event, 16 events keep the delay per statement near 2 ms.
YIELD_EVERY = 16


@dataclass(slots=True)
class BatchResult:
    """What happened to each message of a batch: written, or rejected with a reason."""

    size: int
    written: int = 0
    rejects: dict[int, Reject] = field(default_factory=dict)
    db_retries: int = 0


@dataclass(slots=True)
class Prepared:
    """A batch after the CPU stages: its valid events by index, merged, and its rejects."""

    result: BatchResult
    items: list[tuple[int, Extracted]]
    merged: Extracted | None  # all of `items` merged; None when there are none


class Pipeline:
    def __init__(
        self, writer: Writer, *, max_event_bytes: int, backoff: Backoff, native: bool = True
    ) -> None:
        self.writer = writer
        self.max_event_bytes = max_event_bytes
        self.backoff = backoff
        # The native decode + extract and merge (when built and `native`): the same records
        # for about a third of the CPU; what the native step declines, and everything when
        # the module is missing, takes the Python path.
        self.native = native_extractor() if native else None
        self.native_merge = native_merger() if native else None

    async def run(self, payloads: Sequence[bytes]) -> BatchResult:
        """Process one batch; returns once every valid event is committed to the database."""
        return await self.write(await self.prepare(payloads))

    async def prepare(self, payloads: Sequence[bytes]) -> Prepared:
        """decode -> extract -> merge: CPU only, no database."""
        result = BatchResult(size=len(payloads))
        items: list[tuple[int, Extracted]] = []
        for index, payload in enumerate(payloads):
            if index % YIELD_EVERY == YIELD_EVERY - 1:
                await asyncio.sleep(0)
            outcome = self._extract(payload)
            if isinstance(outcome, Reject):
                result.rejects[index] = outcome
            else:
                items.append((index, outcome))
        merged = self._merge([e for _, e in items]) if items else None
        return Prepared(result, items, merged)

    async def write(self, prepared: Prepared) -> BatchResult:
        """Write a prepared batch; returns once every valid event is committed."""
        result = prepared.result
        await self._write_isolating(prepared.items, result, prepared.merged)
        result.written = result.size - len(result.rejects)
        return result

    def _merge(self, parts: list[Extracted]) -> Extracted:
        """merge(parts), natively when built: the same records (held by
        tests/unit/test_native_parity.py); a failure there merges in Python instead."""
        if self.native_merge is not None:
            try:
                return self.native_merge(parts)
            except Exception:
                log.exception("native merge failed: merging this batch in Python")
        return merge(parts)

    def _extract(self, payload: bytes) -> Extracted | Reject:
        if self.native is not None:
            records = self.native(payload, self.max_event_bytes)
            if records is not None:
                return records
        event = decode(payload, self.max_event_bytes)
        if isinstance(event, Reject):
            return event
        return _extract_safely(event)

    async def _write_isolating(
        self, items: list[tuple[int, Extracted]], result: BatchResult, merged: Extracted | None
    ) -> None:
        """Write all; if the database refuses the data, bisect to find and reject the culprits.

        `merged`: `items` already merged (the whole batch), else None (the halves)."""
        if not items:
            return
        batch = merged if merged is not None else self._merge([e for _, e in items])
        error = await self._write_with_retries(batch, result)
        if error is None:
            return
        if len(items) == 1:
            result.rejects[items[0][0]] = Reject("database_refused", _describe(error))
            return
        middle = len(items) // 2
        await self._write_isolating(items[:middle], result, None)
        await self._write_isolating(items[middle:], result, None)

    async def _write_with_retries(self, batch: Extracted, result: BatchResult) -> Exception | None:
        """None once written; the error when the database refuses the data itself.

        Transient errors (lost connection, deadlock, serialisation failure, a
        restarting server) are retried with backoff and never returned: the
        offsets of this batch are not committed until it is written.
        """
        attempt = 0
        while True:
            try:
                await self.writer.write(batch)
            except Exception as exc:
                if not is_transient(exc):
                    return exc
                attempt += 1
                result.db_retries += 1
                delay = self.backoff.delay(attempt)
                log.warning("transient database error, retry %d in %.1fs: %s", attempt, delay, exc)
                await asyncio.sleep(delay)
            else:
                return None


def _extract_safely(event: Event) -> Extracted | Reject:
    try:
        return extract(event)
    except DecodeError as exc:  # a precise reject found while extracting (name_too_long)
        return exc.reject
    except Exception as exc:
        log.exception("extract failed for a decodable event")
        return Reject("extract_failed", f"{type(exc).__name__}: {exc}"[:500])


def _describe(error: Exception) -> str:
    code = getattr(error, "sqlstate", None) if isinstance(error, asyncpg.PostgresError) else None
    prefix = f"SQLSTATE {code}: " if code else ""
    return f"{prefix}{type(error).__name__}: {error}"[:1000]


async def ingest_payloads(engine: AsyncEngine, payloads: Sequence[bytes]) -> BatchResult:
    """Run payloads through a fresh pipeline (tests and tools; the consumer keeps one)."""
    pipeline = Pipeline(Writer(engine), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff())
    return await pipeline.run(payloads)
