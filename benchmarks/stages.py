"""CPU cost of each consumer stage on the benchmark stream, in-process (no Kafka).

    .venv/bin/python -m benchmarks.stages --events-file /tmp/bench-data/events-20k.ndjson \
        [--write-db bench_threadline_stages] [--repeat 3]

Runs decode -> extract -> merge (and, with --write-db, the writer against a fresh migrated
database) over the stream in 2,000-event batches and prints CPU microseconds per event of
each stage (process CPU time, the best of --repeat runs, so a busy machine inflates it less
than wall time). With the native module built, also its decode + extract (`native`, the
Python path taking what it declines) and its merge of what that made (`native_merge`).
To measure a proposed change to `consumer/` without touching the shared tree, copy
`consumer/` and `shared/` elsewhere, edit the copy and run with PYTHONPATH=<copy> so the
copy is imported instead.
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from pydantic import SecretStr

import consumer
from benchmarks import env
from benchmarks.generate import read_ndjson
from benchmarks.systems import Threadline
from consumer.decode import Reject, decode
from consumer.extract import extract
from consumer.merge import merge
from consumer.native import NativeExtract, NativeMerge, native_extractor, native_merger
from consumer.records import Extracted
from consumer.write import Writer
from shared.db import create_engine
from shared.runtime import tune_gc
from shared.settings import DatabaseSettings

BATCH = 2000


def python_stages(values: list[bytes]) -> tuple[dict[str, float], list[Extracted]]:
    """CPU seconds of decode, extract and merge over all batches; the merged batches."""
    spent = {"decode": 0.0, "extract": 0.0, "merge": 0.0}
    merged = []
    for start in range(0, len(values), BATCH):
        chunk = values[start : start + BATCH]
        t0 = time.process_time()
        events = [decode(v, 1 << 24) for v in chunk]
        t1 = time.process_time()
        parts = [extract(e) for e in events if not isinstance(e, Reject)]
        t2 = time.process_time()
        merged.append(merge(parts))
        t3 = time.process_time()
        spent["decode"] += t1 - t0
        spent["extract"] += t2 - t1
        spent["merge"] += t3 - t2
    return spent, merged


def native_stages(
    values: list[bytes], native: NativeExtract, native_merge: NativeMerge
) -> dict[str, float]:
    """CPU seconds of the native decode + extract (Python for what it declines) and merge."""
    spent = {"native": 0.0, "native_merge": 0.0}
    for start in range(0, len(values), BATCH):
        chunk = values[start : start + BATCH]
        t0 = time.process_time()
        parts = []
        for value in chunk:
            part = native(value, 1 << 24)
            if part is None:
                event = decode(value, 1 << 24)
                part = None if isinstance(event, Reject) else extract(event)
            if part is not None:
                parts.append(part)
        t1 = time.process_time()
        native_merge(parts)
        spent["native"] += t1 - t0
        spent["native_merge"] += time.process_time() - t1
    return spent


async def write_stage(batches: list[Extracted], database: str) -> dict[str, float]:
    """Process CPU and wall seconds of Writer.write over the merged batches (fresh database)."""
    await Threadline().prepare(database, env.SCRATCH)
    engine = create_engine(
        DatabaseSettings(url=SecretStr(env.db_url(database))), application_name="bench-stages"
    )
    writer = Writer(engine)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for batch in batches:
        await writer.write(batch)
    spent = {"write_cpu": time.process_time() - cpu0, "write_wall": time.perf_counter() - wall0}
    await engine.dispose()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events-file", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write-db", help="also time the writer against this (fresh) database")
    parser.add_argument(
        "--default-gc", action="store_true", help="CPython's GC settings, not the consumer's"
    )
    args = parser.parse_args()
    values = [v for _, v in read_ndjson(args.events_file)]
    if not args.default_gc:
        tune_gc()  # as consumer/__main__.py does
    best: dict[str, float] = {}
    batches: list[Extracted] = []
    native, native_merge = native_extractor(), native_merger()
    for _ in range(args.repeat):
        spent, batches = python_stages(values)
        if native is not None and native_merge is not None:
            spent.update(native_stages(values, native, native_merge))
        best = {k: min(v, best.get(k, v)) for k, v in spent.items()}
    if args.write_db:
        best.update(asyncio.run(write_stage(batches, args.write_db)))
    result: dict[str, Any] = {
        "consumer_from": str(Path(consumer.__file__).parent),
        "gc": "default" if args.default_gc else "tuned",
        "events": len(values),
        "us_per_event": {k: round(v / len(values) * 1e6, 1) for k, v in best.items()},
        "python_stages_events_per_cpu_s": round(
            len(values) / sum(best[k] for k in ("decode", "extract", "merge")), 1
        ),
    }
    sys.stdout.write(orjson.dumps(result).decode() + "\n")


if __name__ == "__main__":
    main()
