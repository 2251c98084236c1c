"""Seed a Threadline database with N generated events through `consumer.ingest.Pipeline`.

    .venv/bin/python -m benchmarks.seed --events 1000000 --database bench_threadline_1m

The same write path as the consumer (decode -> extract -> merge -> write, batches of 2,000,
one transaction each), without Kafka: a million events through the broker would only add the
broker's time to a database that ends up identical. Used for the large API benchmark database.
"""

import argparse
import asyncio
import subprocess
import sys
import time
import zlib

import orjson
from pydantic import SecretStr

from benchmarks import env
from benchmarks.generate import ALIAS_GROUPS, RUN_ID_KINDS, generate
from benchmarks.systems import Threadline
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES, Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from consumer.write.dimensions import seed_aliases
from shared.db import create_engine
from shared.settings import DatabaseSettings

BATCH = 2000


async def seed(
    events: int, seed_value: int, database: str, part: tuple[int, int], run_ids: str = "v7"
) -> dict[str, object]:
    """Write this part's share of the stream: the DAGs whose Kafka key hashes to it."""
    engine = create_engine(
        DatabaseSettings(url=SecretStr(env.db_url(database)), statement_timeout_ms=0),
        application_name="threadline-bench-seed",
    )
    async with engine.connect() as sa_conn:
        raw = await sa_conn.get_raw_connection()
        await seed_aliases(raw.driver_connection, ALIAS_GROUPS)  # type: ignore[arg-type]
        await sa_conn.commit()
    pipeline = Pipeline(Writer(engine), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff())
    pairs, totals = generate(events, seed_value, run_ids)
    began, batch, done = time.perf_counter(), [], 0
    index, parts = part
    for key, value in pairs:
        if zlib.crc32(key) % parts != index:
            continue
        batch.append(value)
        if len(batch) == BATCH:
            done += await _run(pipeline, batch)
            batch = []
            if done % 50_000 < BATCH:
                rate = done / (time.perf_counter() - began)
                sys.stderr.write(f"part {index}: {done} events, {rate:.0f}/s\n")
    if batch:
        done += await _run(pipeline, batch)
    await engine.dispose()
    seconds = round(time.perf_counter() - began, 1)
    return {"database": database, "stream_events": totals.events, "written": done, "s": seconds}


async def _run(pipeline: Pipeline, batch: list[bytes]) -> int:
    result = await pipeline.run(batch)
    if result.rejects:
        raise RuntimeError(f"rejected events: {list(result.rejects.values())[:3]}")
    return result.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", required=True)
    parser.add_argument("--workers", type=int, default=2, help="processes, split by Kafka key")
    parser.add_argument("--run-ids", choices=sorted(RUN_ID_KINDS), default="v7")
    parser.add_argument("--part", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.part is not None:
        part = (args.part, args.workers)
        result = asyncio.run(seed(args.events, args.seed, args.database, part, args.run_ids))
        sys.stdout.write(orjson.dumps(result).decode() + "\n")
        return
    # Like consumers of one group: each process owns the DAGs (Kafka keys) hashed to it.
    asyncio.run(Threadline().prepare(args.database, env.SCRATCH))
    cmd = [sys.executable, "-m", "benchmarks.seed", *sys.argv[1:]]
    procs = [subprocess.Popen([*cmd, "--part", str(i)]) for i in range(args.workers)]
    if any(p.wait() for p in procs):
        raise SystemExit("a seeding process failed")


if __name__ == "__main__":
    main()
