"""The reference database: the same events ingested once, cleanly, by the real pipeline."""

import time
import uuid
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import create_async_engine

from consumer.ingest import Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from tests.conftest import create_database
from tests.faults.dump import Dump
from tests.faults.events import Message
from tests.faults.private import PrivateServices

REFERENCE_BATCH = 2000


def new_database(private: PrivateServices, prefix: str) -> str:
    """A fresh migrated database on the private server; its postgresql+asyncpg URL."""
    return create_database(private.services(), f"{prefix}_{uuid.uuid4().hex[:8]}")


def plain_url(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://", 1)


@dataclass(frozen=True, slots=True)
class Reference:
    snapshot: Dump
    seconds: float


async def ingest_once(url: str, messages: list[Message]) -> float:
    """The reference: one clean pass of every message, in order, through the real pipeline."""
    engine = create_async_engine(url)
    pipeline = Pipeline(Writer(engine), max_event_bytes=16 << 20, backoff=Backoff())
    started = time.perf_counter()
    try:
        for offset in range(0, len(messages), REFERENCE_BATCH):
            batch = [m.value for m in messages[offset : offset + REFERENCE_BATCH]]
            result = await pipeline.run(batch)
            assert not result.rejects, f"the reference stream must be valid: {result.rejects}"
    finally:
        await engine.dispose()
    return time.perf_counter() - started
