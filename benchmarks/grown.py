"""Ingest into a grown database: an events file through the consumer's pipeline into a copy
of a large one (e.g. the 1M-event database), to see costs that grow with the tables.

    .venv/bin/python -m benchmarks.grown --template bench_threadline_1m \
        --events-file /tmp/bench-data/events-20k-v4.ndjson [--reverse] [--out RESULT.json]

The copy (`CREATE DATABASE ... TEMPLATE`) is made fresh for each run and dropped after it.
The write path is the consumer's (decode -> extract -> merge -> write, 2,000-event batches,
one transaction each) without Kafka, as in `seed.py`. `--reverse` delivers the batches in
reverse order, so that runs whose events span two batches meet their later events first
(with non-UUIDv7 run ids, their anchors then move earlier and their rows with them).
Prints events/s, the consumer's CPU, its PostgreSQL backend's CPU (and the whole server's,
background writers included), and each batch's seconds.
"""

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import SecretStr

from benchmarks import env, procstat
from benchmarks.generate import read_meta, read_ndjson
from benchmarks.ingest import service_pid
from consumer.ingest import DEFAULT_MAX_EVENT_BYTES, Pipeline
from consumer.retry import Backoff
from consumer.write import Writer
from shared.db import create_engine
from shared.runtime import tune_gc
from shared.settings import DatabaseSettings

BATCH = 2000
APPLICATION = "threadline-bench-grown"


async def copy_database(template: str, name: str) -> None:
    """A fresh copy of `template`; the checkpoint writes the copy out before the clock starts."""
    await env.recreate_database(name, template)
    conn = await env.connect("postgres")
    try:
        await conn.execute("CHECKPOINT")
    finally:
        await conn.close()


async def backend_cpu_seconds(database: str) -> float:
    """CPU of the pipeline's own PostgreSQL backends (not the checkpointer, autovacuum...)."""
    conn = await env.connect(database)
    try:
        pids = await conn.fetch(
            "SELECT pid FROM pg_stat_activity WHERE application_name = $1", APPLICATION
        )
    finally:
        await conn.close()
    return sum(procstat.cpu_seconds(row["pid"]) for row in pids)


def batches(values: list[bytes], *, reverse: bool) -> list[list[bytes]]:
    cut = [values[i : i + BATCH] for i in range(0, len(values), BATCH)]
    return cut[::-1] if reverse else cut


async def ingest(database: str, work: list[list[bytes]]) -> dict[str, Any]:
    """Every batch through one pipeline; wall, consumer CPU and PostgreSQL CPU."""
    settings = DatabaseSettings(url=SecretStr(env.db_url(database)), statement_timeout_ms=0)
    engine = create_engine(settings, application_name=APPLICATION)
    pipeline = Pipeline(Writer(engine), max_event_bytes=DEFAULT_MAX_EVENT_BYTES, backoff=Backoff())
    pg_pid = service_pid("postgres")
    pg0 = procstat.tree_cpu_seconds(pg_pid) if pg_pid else 0.0
    began, cpu0, seconds, events = time.perf_counter(), time.process_time(), [], 0
    for batch in work:
        start = time.perf_counter()
        result = await pipeline.run(batch)
        if result.rejects:
            raise RuntimeError(f"rejected events: {list(result.rejects.values())[:3]}")
        seconds.append(round(time.perf_counter() - start, 3))
        events += result.size
    wall = time.perf_counter() - began
    backend = await backend_cpu_seconds(database)  # the engine's, connected at the first batch
    await engine.dispose()
    return {
        "events": events,
        "wall_s": round(wall, 2),
        "events_per_s": round(events / wall, 1),
        "consumer_cpu_s": round(time.process_time() - cpu0, 2),
        "backend_cpu_s": round(backend, 2),
        "postgres_cpu_s": round(procstat.tree_cpu_seconds(pg_pid) - pg0, 2) if pg_pid else None,
        "batch_s": seconds,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    values = [value for _, value in read_ndjson(args.events_file)]
    database = f"{args.template}_grown"
    await copy_database(args.template, database)
    try:
        measured = await ingest(database, batches(values, reverse=args.reverse))
    finally:
        await env.drop_database(database)
    return {
        "template": args.template,
        "events_file": str(args.events_file),
        "run_ids": read_meta(args.events_file).get("run_ids", "v7"),
        "reverse": args.reverse,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        **measured,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--template", required=True, help="the grown database to copy")
    parser.add_argument("--events-file", type=Path, required=True)
    parser.add_argument("--reverse", action="store_true", help="batches in reverse order")
    parser.add_argument("--out", type=Path, help="append the result to this JSON list")
    args = parser.parse_args()
    tune_gc()  # as the consumer runs
    result = asyncio.run(run(args))
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    if args.out:
        previous = orjson.loads(args.out.read_bytes()) if args.out.exists() else []
        args.out.write_bytes(orjson.dumps([*previous, result], option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
