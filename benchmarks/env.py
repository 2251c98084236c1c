"""Where the benchmark's own Kafka and PostgreSQL live, and small helpers around them.

The benchmarks run against their own service instances (see benchmarks/README.md):

    THREADLINE_STATE_DIR=/tmp/threadline-bench THREADLINE_KAFKA_PORT=39092 \
    THREADLINE_KAFKA_CONTROLLER_PORT=39093 THREADLINE_PG_PORT=57432 scripts/services.sh start

so that other people's tests and fault-injection restarts never touch the measured ones.
"""

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import orjson
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

ROOT = Path(__file__).resolve().parent.parent
KAFKA = os.environ.get("BENCH_KAFKA", "127.0.0.1:39092")
PG_HOSTPORT = os.environ.get("BENCH_PG", "127.0.0.1:57432")
PG_USER = "threadline"
PG_PASSWORD = "threadline"  # noqa: S105 - the local benchmark cluster's fixed password
SCRATCH = Path(tempfile.gettempdir())  # /tmp: services, venvs and run logs live outside the repo
STATE_DIR = Path(os.environ.get("THREADLINE_STATE_DIR", str(SCRATCH / "threadline-bench")))
PY_SPY = os.environ.get("PY_SPY", str(SCRATCH / "bench-tools" / "bin" / "py-spy"))
RENTGEN_PYTHON = os.environ.get("RENTGEN_PYTHON", str(SCRATCH / "rentgen-venv" / "bin" / "python"))
# Threadline's consumer and migrations; another checkout's venv measures that code with this
# harness (benchmarks/ingest_rounds.sh's baseline).
VENV_BIN = Path(os.environ.get("BENCH_THREADLINE_VENV", str(ROOT / ".venv"))) / "bin"
RUNS_DIR = Path(os.environ.get("BENCH_RUNS_DIR", str(SCRATCH / "bench-runs")))
RESULTS_DIR = ROOT / "benchmarks" / "results"


def db_url(database: str, driver: str = "postgresql+asyncpg") -> str:
    return f"{driver}://{PG_USER}:{PG_PASSWORD}@{PG_HOSTPORT}/{database}"


async def connect(database: str) -> asyncpg.Connection:
    return await asyncpg.connect(db_url(database, "postgresql"))


async def recreate_database(name: str, template: str | None = None) -> None:
    """A fresh database, empty or a copy of `template` (dropping connections to the old one)."""
    copy = f' TEMPLATE "{template}"' if template else ""
    conn = await connect("postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"{copy} OWNER {PG_USER}')
    finally:
        await conn.close()


async def drop_database(name: str) -> None:
    conn = await connect("postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


async def create_topic(name: str, partitions: int = 8) -> None:
    """A fresh topic shaped like the production one (8 partitions, 32 MiB messages)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=KAFKA)
    await admin.start()
    try:
        topic = NewTopic(
            name,
            num_partitions=partitions,
            replication_factor=1,
            topic_configs={"max.message.bytes": str(32 * 1024 * 1024)},
        )
        await admin.create_topics([topic])
    finally:
        await admin.close()


async def delete_topics(prefix: str) -> list[str]:
    """Delete the topic `prefix` and those named `prefix.<suffix>` (its dead-letter topics):
    a run's topic is never read again, and ~150 MB each filled the disk over many runs."""
    admin = AIOKafkaAdminClient(bootstrap_servers=KAFKA)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t == prefix or t.startswith(f"{prefix}.")]
        if names:
            await admin.delete_topics(names)
        return names
    finally:
        await admin.close()


async def group_members(group: str) -> tuple[str, int]:
    """(state, member count) of a consumer group, e.g. ("Stable", 2)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=KAFKA)
    await admin.start()
    try:
        responses = await admin.describe_consumer_groups([group])
    finally:
        await admin.close()
    description: Any = responses[0].groups[0]
    return str(description[2]), len(description[5])


def run_checked(cmd: list[str], env: dict[str, str] | None = None, log: Path | None = None) -> None:
    """Run a setup command; on failure show its output."""
    merged = {**os.environ, **(env or {})}
    result = subprocess.run(cmd, env=merged, capture_output=True, text=True, check=False)
    if log is not None:
        log.write_text(result.stdout + result.stderr)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stdout}\n{result.stderr}")


@dataclass(frozen=True, slots=True)
class Machine:
    """Facts printed next to every result so a number always says where it came from."""

    cpus: int
    cpu_model: str
    mem_gib: float
    load_before: tuple[float, float, float]

    @classmethod
    def now(cls) -> "Machine":
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "unknown",
        )
        mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
        return cls(os.cpu_count() or 0, model, round(mem_kib / 2**20, 1), os.getloadavg())


def busy_processes(threshold: float = 20.0, seconds: float = 1.0) -> list[str]:
    """Processes (not ours) that used more than `threshold`% of a core over `seconds`."""
    own = {os.getpid()}
    before = _cpu_by_pid()
    time.sleep(seconds)
    after = _cpu_by_pid()
    hz = os.sysconf("SC_CLK_TCK")
    busy = []
    for pid, (ticks, name) in after.items():
        used = (ticks - before.get(pid, (ticks, name))[0]) / hz / seconds * 100
        if used > threshold and pid not in own:
            busy.append(f"{pid} {name} {used:.0f}%")
    return busy


def _cpu_by_pid() -> dict[int, tuple[int, str]]:
    out = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        out[int(stat.parent.name)] = (int(fields[11]) + int(fields[12]), name)
    return out


def emit(result: Any, out: Path | None) -> None:
    """A harness's result: indented JSON on standard output and, with `out`, in that file."""
    text = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    sys.stdout.write(text.decode() + "\n")
    if out:
        out.write_bytes(text)
