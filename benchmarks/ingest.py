"""Ingest harness: produce N events to Kafka, time until every row is committed.

    .venv/bin/python -m benchmarks.ingest --system threadline --consumers 1 2 \
        --events-file /tmp/bench-data/events-20k.ndjson

Per run: a fresh database (migrated), a fresh 8-partition topic (deleted after the run, with
its dead-letter topics) and consumer group; K consumer processes are started and the harness
waits until the group is Stable with K members. Then
the clock starts at the first produce, and stops at the first poll (every 50 ms) where the
database holds every run and operation finished and every output (the stream's totals, see
`benchmarks.systems`). Reported: wall time and events/s, consumer CPU seconds (all processes,
startup excluded), peak RSS per consumer (VmHWM), and the CPU PostgreSQL and Kafka used meanwhile.
"""

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer

from benchmarks import env, procstat
from benchmarks.generate import read_meta, read_ndjson
from benchmarks.systems import SYSTEMS, System, progress

POLL_S = 0.05
STALL_S = 180.0


@dataclass(slots=True)
class Consumers:
    """K consumer processes of one system, their logs and startup CPU."""

    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    startup_cpu: list[float] = field(default_factory=list)

    def start(self, system: System, k: int, topic: str, database: str, run_dir: Path) -> None:
        for i in range(k):
            cmd, extra = system.consumer(i, topic, topic, database)
            log = (run_dir / f"consumer-{i}.log").open("wb")
            proc = subprocess.Popen(
                cmd,
                env={**os.environ, **extra},
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=env.SCRATCH,
                start_new_session=True,
            )
            self.procs.append(proc)

    def check_alive(self) -> None:
        for proc in self.procs:
            if proc.poll() is not None:
                raise RuntimeError(f"consumer {proc.args!r} exited with {proc.returncode}")

    def usage(self) -> list[procstat.Usage]:
        return [procstat.usage(p.pid) for p in self.procs]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def wait_stable(consumers: Consumers, group: str, k: int, limit_s: float = 180) -> float:
    """Seconds until the group is Stable with k members (consumers subscribed and assigned)."""
    began = time.perf_counter()
    while time.perf_counter() - began < limit_s:
        consumers.check_alive()
        try:
            state, members = await env.group_members(group)
        except Exception:  # the coordinator may not know the group yet
            state, members = "unknown", 0
        if state == "Stable" and members == k:
            return time.perf_counter() - began
        await asyncio.sleep(0.25)
    raise TimeoutError(f"group {group} not Stable with {k} members after {limit_s}s")


async def produce(topic: str, pairs: list[tuple[bytes, bytes]], *, keyed: bool = True) -> float:
    """Send every event (keyed like the OpenLineage clients, or without a key: spread over
    the partitions at random); seconds until all acknowledged."""
    producer = AIOKafkaProducer(
        bootstrap_servers=env.KAFKA,
        linger_ms=5,
        max_batch_size=1024 * 1024,
        max_request_size=32 * 1024 * 1024,
    )
    await producer.start()
    began = time.perf_counter()
    try:
        futures = [
            await producer.send(topic, value, key=key if keyed else None) for key, value in pairs
        ]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()
    return time.perf_counter() - began


async def wait_committed(
    system: System, database: str, expected: dict[str, int], consumers: Consumers
) -> dict[str, int]:
    """Poll until every expected count is reached; raise if progress stalls."""
    conn = await env.connect(database)
    last: dict[str, int] = {}
    last_change = time.perf_counter()
    try:
        while True:
            counts = await progress(conn, system)
            if all(counts[k] >= v for k, v in expected.items()):
                return counts
            if counts != last:
                last, last_change = counts, time.perf_counter()
            elif time.perf_counter() - last_change > STALL_S:
                raise TimeoutError(f"no progress for {STALL_S}s: {counts} of {expected}")
            consumers.check_alive()
            await asyncio.sleep(POLL_S)
    finally:
        await conn.close()


def service_pid(kind: str) -> int | None:
    """The benchmark's own Kafka JVM / postmaster (for their CPU during the run)."""
    try:
        pid = int((env.STATE_DIR / kind / f"{kind}.pid").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if Path(f"/proc/{pid}").exists() else None


async def run_once(
    system: System,
    k: int,
    events_file: Path,
    *,
    profile: bool = False,
    database: str | None = None,
    keyed: bool = True,
) -> dict[str, Any]:
    meta = read_meta(events_file)
    pairs = list(read_ndjson(events_file))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    run_dir = env.RUNS_DIR / f"ingest-{system.name}-{k}c-{stamp}"
    run_dir.mkdir(parents=True, exist_ok=True)
    database = database or f"bench_{system.name.replace('-', '_')}_ingest"
    topic = f"bench-{system.name}-{k}c-{stamp}"
    await system.prepare(database, run_dir)
    await env.create_topic(topic)
    expected = system.expected(meta)
    consumers = Consumers()
    consumers.start(system, k, topic, database, run_dir)
    spies: list[subprocess.Popen[bytes]] = []
    try:
        stable_s = await wait_stable(consumers, topic, k)
        consumers.startup_cpu = [u.cpu_s for u in consumers.usage()]
        pg_pid, kafka_pid = service_pid("postgres"), service_pid("kafka")
        pg_cpu0 = procstat.tree_cpu_seconds(pg_pid) if pg_pid else 0.0
        kafka_cpu0 = procstat.cpu_seconds(kafka_pid) if kafka_pid else 0.0
        if profile:
            spies = [_py_spy(p.pid, run_dir / f"py-spy-{i}") for i, p in enumerate(consumers.procs)]
        load = os.getloadavg()
        began = time.perf_counter()
        producing = asyncio.create_task(produce(topic, pairs, keyed=keyed))
        counts = await wait_committed(system, database, expected, consumers)
        wall = time.perf_counter() - began
        usage = consumers.usage()
        produce_s = await producing
        pg_cpu = (procstat.tree_cpu_seconds(pg_pid) - pg_cpu0) if pg_pid else None
        if pg_cpu is not None and pg_cpu < 0:  # a backend exited unreaped between the reads
            pg_cpu = None
        kafka_cpu = (procstat.cpu_seconds(kafka_pid) - kafka_cpu0) if kafka_pid else None
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
        consumers.stop()
        for spy in spies:
            spy.wait(timeout=60)
        await env.delete_topics(topic)
    cpu = [u.cpu_s - s for u, s in zip(usage, consumers.startup_cpu, strict=True)]
    result = {
        "system": system.name,
        "version": system.version(),
        "consumers": k,
        "events": meta["events"],
        "bytes": meta["bytes"],
        "events_file": str(events_file),
        "seed": meta["seed"],
        "keyed": keyed,
        # Settings the consumers got from this environment (THREADLINE__CONSUMER__NATIVE_EXTRACT=
        # false: the Python decode + extract only, for A/B rounds).
        "settings": {k: v for k, v in os.environ.items() if k.startswith("THREADLINE__")},
        "wall_s": round(wall, 3),
        "events_per_s": round(meta["events"] / wall, 1),
        "produce_s": round(produce_s, 3),
        "group_stable_after_s": round(stable_s, 2),
        "consumer_cpu_s": [round(c, 2) for c in cpu],
        "consumer_cpu_per_1k_events_s": round(sum(cpu) / meta["events"] * 1000, 4),
        "consumer_peak_rss_mb": [round(u.peak_rss_mb, 1) for u in usage],
        "postgres_cpu_s": round(pg_cpu, 2) if pg_cpu is not None else None,
        "kafka_cpu_s": round(kafka_cpu, 2) if kafka_cpu is not None else None,
        "final_counts": counts,
        "expected_counts": expected,
        "load_avg_at_start": [round(x, 2) for x in load],
        "machine": asdict(env.Machine.now()),
        "database": database,
        "run_dir": str(run_dir),
        "at": stamp,
    }
    (run_dir / "result.json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    return result


def _py_spy(pid: int, prefix: Path) -> subprocess.Popen[bytes]:
    """Sample the consumer while it ingests (stopped with SIGINT once the rows are in)."""
    return subprocess.Popen(
        [
            env.PY_SPY,
            "record",
            "--pid",
            str(pid),
            "--rate",
            "200",
            "--format",
            "raw",
            "--output",
            f"{prefix}.txt",
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(prefix.parent / f"{prefix.name}.log").open("wb"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--system", choices=sorted(SYSTEMS), required=True)
    parser.add_argument("--consumers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--events-file", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="py-spy the consumers (raw)")
    parser.add_argument("--database", help="keep the result in this database (default: scratch)")
    parser.add_argument("--out", type=Path, help="append results to this JSON file")
    parser.add_argument(
        "--unkeyed", action="store_true", help="produce without Kafka keys (random partitions)"
    )
    parser.add_argument("--label", help="what this run is, kept in its result (rounds scripts)")
    args = parser.parse_args()
    results = []
    for k in args.consumers:
        for _ in range(args.repeat):
            system = SYSTEMS[args.system]
            run = run_once(
                system,
                k,
                args.events_file,
                profile=args.profile,
                database=args.database,
                keyed=not args.unkeyed,
            )
            result = asyncio.run(run)
            if args.label:
                result = {"label": args.label, **result}
            sys.stdout.write(orjson.dumps(result).decode() + "\n")
            sys.stdout.flush()
            results.append(result)
    if args.out:
        previous = orjson.loads(args.out.read_bytes()) if args.out.exists() else []
        args.out.write_bytes(orjson.dumps(previous + results, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
