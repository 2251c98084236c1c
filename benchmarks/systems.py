"""The two systems under test, behind one interface: database setup, consumer command, progress.

Both consume the same topic shape on the same broker and write to their own database on the
same PostgreSQL server. Row counts differ by model (Data.Rentgen keeps Spark applications and
Airflow DAG runs as runs without an operation, Threadline gives every run one), so each system
says which totals mean "everything is committed" for a given stream.
"""

import asyncio
import socket
from dataclasses import dataclass
from typing import Any, Protocol

import asyncpg

from benchmarks import env
from benchmarks.generate import ALIAS_GROUPS, T0

# Counts a consumer has finished when they reach the stream's totals: every run and operation
# has seen its final event (ended_at is set by COMPLETE/FAIL only) and every output is stored.
PROGRESS_SQL = """
SELECT (SELECT count(*) FROM run WHERE ended_at IS NOT NULL) AS runs_ended,
       (SELECT count(*) FROM operation WHERE ended_at IS NOT NULL) AS operations_ended,
       (SELECT count(*) FROM output) AS outputs
"""
# Threadline's model of non-Spark operations is still moving; Spark SQL jobs are operations
# in every version, and typed SQL_JOB, so only those are counted there.
THREADLINE_PROGRESS_SQL = """
SELECT (SELECT count(*) FROM run WHERE ended_at IS NOT NULL) AS runs_ended,
       (SELECT count(*) FROM operation WHERE ended_at IS NOT NULL AND type = 'SQL_JOB')
           AS sql_operations_ended,
       (SELECT count(*) FROM output) AS outputs
"""


class System(Protocol):
    @property
    def name(self) -> str: ...

    def version(self) -> str: ...
    async def prepare(self, database: str, run_dir: Any) -> None: ...
    def consumer(
        self, index: int, topic: str, group: str, database: str
    ) -> tuple[list[str], dict[str, str]]: ...
    def expected(self, meta: dict[str, Any]) -> dict[str, int]: ...


async def progress(conn: asyncpg.Connection, system: System) -> dict[str, int]:
    sql = THREADLINE_PROGRESS_SQL if system.name == "threadline" else PROGRESS_SQL
    row = await conn.fetchrow(sql)
    return dict(row) if row else {}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Threadline:
    name: str = "threadline"

    def version(self) -> str:
        return (env.ROOT / "pyproject.toml").read_text().split('version = "', 1)[1].split('"')[0]

    async def prepare(self, database: str, run_dir: Any) -> None:
        await env.recreate_database(database)
        url = env.db_url(database)
        await asyncio.to_thread(
            env.run_checked,
            [str(env.VENV_BIN / "threadline-migrate"), "upgrade", "head"],
            {"THREADLINE__DATABASE__URL": url, "THREADLINE__LOG__LEVEL": "WARNING"},
            run_dir / f"migrate-{database}.log",
        )

    def consumer(
        self, index: int, topic: str, group: str, database: str
    ) -> tuple[list[str], dict[str, str]]:
        import orjson

        return [str(env.VENV_BIN / "threadline-consumer")], {
            "THREADLINE__DATABASE__URL": env.db_url(database),
            "THREADLINE__KAFKA__BOOTSTRAP_SERVERS": env.KAFKA,
            "THREADLINE__KAFKA__TOPIC": topic,
            "THREADLINE__KAFKA__GROUP_ID": group,
            "THREADLINE__KAFKA__DEAD_LETTER_TOPIC": f"{topic}.dead-letter",
            "THREADLINE__KAFKA__CLIENT_ID": f"bench-{index}",
            "THREADLINE__METRICS__PORT": "0",
            # The HA namenode pair and the metastore with/without port are one system each.
            "THREADLINE__CONSUMER__ALIASES": orjson.dumps(ALIAS_GROUPS).decode(),
        }

    def expected(self, meta: dict[str, Any]) -> dict[str, int]:
        return {
            "runs_ended": meta["dag_runs"] + meta["task_runs"] + meta["app_runs"],
            "sql_operations_ended": meta["sql_jobs"],
            "outputs": meta["sql_outputs"],
        }


# Operator-declared aliases in Data.Rentgen: extra addresses of an existing location (its
# consumer finds a location by any of its addresses), the counterpart of Threadline's
# THREADLINE__CONSUMER__ALIASES.
RENTGEN_ALIASES = """
WITH loc AS (
    INSERT INTO location (type, name) VALUES ($1, $2) RETURNING id
)
INSERT INTO address (location_id, url) SELECT loc.id, unnest($3::text[]) FROM loc
"""


@dataclass(frozen=True, slots=True)
class Rentgen:
    name: str = "data-rentgen"

    def version(self) -> str:
        import subprocess

        out = subprocess.run(
            [env.RENTGEN_PYTHON, "-c", "import data_rentgen; print(data_rentgen.__version__)"],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.strip()

    def _env(self, database: str) -> dict[str, str]:
        return {
            "DATA_RENTGEN__DATABASE__URL": env.db_url(database),
            "DATA_RENTGEN_CONFIG_FILE": "/nonexistent.yml",
        }

    async def prepare(self, database: str, run_dir: Any) -> None:
        await env.recreate_database(database)
        python, db_env = env.RENTGEN_PYTHON, self._env(database)
        await asyncio.to_thread(
            env.run_checked,
            [python, "-m", "data_rentgen.db.migrations", "upgrade", "head"],
            db_env,
            run_dir / f"migrate-{database}.log",
        )
        start, end = f"{T0:%Y-%m}-01", f"{T0.year + 2}-01-01"
        await asyncio.to_thread(
            env.run_checked,
            [
                python,
                "-m",
                "data_rentgen.db.scripts.create_partitions",
                "--start",
                start,
                "--end",
                end,
                "--granularity",
                "month",
            ],
            db_env,
            run_dir / f"partitions-{database}.log",
        )
        conn = await env.connect(database)
        try:
            for group in ALIAS_GROUPS:
                first = group[0].lower()
                scheme, host = first.split("://", 1)
                await conn.execute(RENTGEN_ALIASES, scheme, host, [a.lower() for a in group])
        finally:
            await conn.close()

    def consumer(
        self, index: int, topic: str, group: str, database: str
    ) -> tuple[list[str], dict[str, str]]:
        cmd = [env.RENTGEN_PYTHON, "-m", "data_rentgen.consumer"]
        cmd += ["--host", "127.0.0.1", "--port", str(free_port())]
        return cmd, {
            **self._env(database),
            "DATA_RENTGEN__KAFKA__BOOTSTRAP_SERVERS": f'["{env.KAFKA}"]',
            "DATA_RENTGEN__CONSUMER__TOPICS_LIST": f'["{topic}"]',
            "DATA_RENTGEN__CONSUMER__GROUP_ID": group,
            "DATA_RENTGEN__CONSUMER__AUTO_OFFSET_RESET": "earliest",
            "DATA_RENTGEN__PRODUCER__MALFORMED_TOPIC": f"{topic}.malformed",
            "DATA_RENTGEN__PRODUCER__MAIN_TOPIC": topic,
        }

    def expected(self, meta: dict[str, Any]) -> dict[str, int]:
        return {
            "runs_ended": meta["dag_runs"] + meta["task_runs"] + meta["app_runs"],
            # Airflow tasks and Spark SQL jobs are operations; DAGs and applications are not.
            "operations_ended": meta["task_runs"] + meta["sql_jobs"],
            "outputs": meta["sql_outputs"],
        }


SYSTEMS: dict[str, System] = {"threadline": Threadline(), "data-rentgen": Rentgen()}
