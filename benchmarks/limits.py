"""Physical limits of this machine for the benchmark stream, without any lineage logic.

    .venv/bin/python -m benchmarks.limits --events-file /tmp/bench-data/events-20k.ndjson \
        --rows-from bench_threadline_ingest

1. kafka: one aiokafka consumer reading the whole stream from a fresh topic (batches of up to
   2,000, as the consumer does), a) bytes only, b) plus orjson.loads of every value: the
   fastest any Python consumer on this machine can decode the stream.
2. parse: orjson.loads of the same values from memory (no Kafka), on one core.
3. postgres: the rows a Threadline ingest of the same stream stored (read back from
   `--rows-from`), written into a fresh migrated database a) with COPY, b) with plain
   INSERT ... SELECT FROM unnest() in 2,000-event-sized chunks (Threadline's statement shape
   without ON CONFLICT): the fastest PostgreSQL takes those rows, as events/s of the stream.
"""

import argparse
import asyncio
import os
import time
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from benchmarks import env
from benchmarks.generate import read_meta, read_ndjson
from benchmarks.systems import Threadline

# Foreign-key order; time-series tables are partitioned (partitions made first).
TABLES = (
    "location",
    "address",
    "dataset",
    "dataset_symlink",
    "job",
    "user_account",
    "schema",
    "column_set",
    "run",
    "operation",
    "input",
    "output",
    "column_lineage",
)


def _cpu() -> float:
    times = os.times()
    return times.user + times.system


async def kafka_limit(pairs: list[tuple[bytes, bytes]], *, parse: bool) -> dict[str, float]:
    topic = f"bench-limits-{datetime.now(UTC):%Y%m%dT%H%M%S%f}"
    await env.create_topic(topic)
    producer = AIOKafkaProducer(
        bootstrap_servers=env.KAFKA, linger_ms=5, max_batch_size=1 << 20, max_request_size=1 << 25
    )
    await producer.start()
    futures = [await producer.send(topic, v, key=k) for k, v in pairs]
    await asyncio.gather(*futures)
    await producer.stop()
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=env.KAFKA,
        group_id=topic,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=32 << 20,
        enable_auto_commit=False,
    )
    await consumer.start()
    seen, began, cpu0 = 0, time.perf_counter(), _cpu()
    try:
        while seen < len(pairs):
            batches = await consumer.getmany(timeout_ms=500, max_records=2000)
            for records in batches.values():
                for record in records:
                    if parse:
                        orjson.loads(record.value)
                    seen += 1
            await consumer.commit()
    finally:
        await consumer.stop()
    wall, cpu = time.perf_counter() - began, _cpu() - cpu0
    return {"events_per_s": round(seen / wall, 1), "wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def parse_limit(pairs: list[tuple[bytes, bytes]]) -> dict[str, float]:
    values = [v for _, v in pairs]
    began = time.perf_counter()
    for value in values:
        orjson.loads(value)
    wall = time.perf_counter() - began
    return {"events_per_s": round(len(values) / wall, 1), "wall_s": round(wall, 3)}


async def _fresh_target(database: str, source: asyncpg.Connection) -> asyncpg.Connection:
    await Threadline().prepare(database, env.SCRATCH)
    target = await env.connect(database)
    quarters = await source.fetch(
        "SELECT DISTINCT date_trunc('quarter', created_at)::date AS m FROM run"
        " UNION SELECT DISTINCT date_trunc('quarter', created_at)::date FROM operation"
    )
    for row in quarters:
        await target.execute("SELECT threadline_ensure_partition($1)", row["m"])
    return target


async def postgres_limit(source_db: str, method: str, events: int) -> dict[str, Any]:
    source = await env.connect(source_db)
    data = {t: await source.fetch(f"SELECT * FROM {t}") for t in TABLES}  # noqa: S608
    target = await _fresh_target(f"bench_limits_{method}", source)
    await source.close()
    rows = sum(len(r) for r in data.values())
    per_table: dict[str, float] = {}
    began = time.perf_counter()
    try:
        for table, records in data.items():
            if not records:
                continue
            t0 = time.perf_counter()
            columns = list(records[0].keys())
            if method == "copy":
                async with target.transaction():
                    rows_ = [tuple(r) for r in records]
                    await target.copy_records_to_table(table, records=rows_, columns=columns)
            else:
                await _insert_unnest(target, table, columns, records, events)
            per_table[table] = round(time.perf_counter() - t0, 3)
    finally:
        await target.close()
    wall = time.perf_counter() - began
    return {
        "rows": rows,
        "wall_s": round(wall, 3),
        "rows_per_s": round(rows / wall, 1),
        "events_per_s": round(events / wall, 1),
        "per_table_s": per_table,
    }


async def _insert_unnest(
    conn: asyncpg.Connection, table: str, columns: list[str], records: list[Any], events: int
) -> None:
    """Plain INSERT ... SELECT FROM unnest(), chunked like 2,000-event batches."""
    types = await conn.fetch(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS t FROM pg_attribute a"
        " WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped",
        table,
    )
    type_of = {r["attname"]: r["t"] for r in types}
    # unnest() of a 2-D array yields elements, not rows: an array column (run.field_times)
    # travels as the text of each array and is cast back in the SELECT.
    nested = {c for c in columns if type_of[c].endswith("[]")}
    arrays = ", ".join(
        f"${i + 1}::{'text' if c in nested else type_of[c]}[]" for i, c in enumerate(columns)
    )
    names = ", ".join(f'"{c}"' for c in columns)
    values = ", ".join(f'"{c}"::{type_of[c]}' if c in nested else f'"{c}"' for c in columns)
    statement = f"INSERT INTO {table} ({names}) SELECT {values} FROM unnest({arrays}) AS u({names})"  # noqa: S608
    chunk = max(1, len(records) * 2000 // max(events, 1))
    for start in range(0, len(records), chunk):
        part = records[start : start + chunk]
        args = [
            [_array_text(r[c]) for r in part] if c in nested else [r[c] for r in part]
            for c in columns
        ]
        async with conn.transaction():
            await conn.execute(statement, *args)


def _array_text(values: list[Any] | None) -> str | None:
    """PostgreSQL's text form of a one-dimensional array (timestamps, numbers, NULLs)."""
    if values is None:
        return None
    items = (
        "NULL" if v is None else f'"{v.isoformat() if hasattr(v, "isoformat") else v}"'
        for v in values
    )
    return "{" + ",".join(items) + "}"


async def run(events_file: Path, rows_from: str | None) -> dict[str, Any]:
    meta = read_meta(events_file)
    pairs = list(read_ndjson(events_file))
    result: dict[str, Any] = {
        "events": meta["events"],
        "bytes": meta["bytes"],
        "events_file": str(events_file),
        "load_avg_at_start": [round(x, 2) for x in os.getloadavg()],
        "machine": asdict(env.Machine.now()),
        "at": datetime.now(UTC).strftime("%Y%m%dT%H%M%S"),
    }
    result["parse_only"] = parse_limit(pairs)
    result["kafka_consume"] = await kafka_limit(pairs, parse=False)
    result["kafka_consume_parse"] = await kafka_limit(pairs, parse=True)
    if rows_from:
        result["postgres_copy"] = await postgres_limit(rows_from, "copy", meta["events"])
        result["postgres_insert"] = await postgres_limit(rows_from, "insert", meta["events"])
    result["load_avg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events-file", type=Path, required=True)
    parser.add_argument("--rows-from", help="database of a finished Threadline ingest run")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = asyncio.run(run(args.events_file, args.rows_from))
    env.emit(result, args.out)


if __name__ == "__main__":
    main()
