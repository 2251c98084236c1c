"""Private Kafka + PostgreSQL instances for tests that kill and restart them.

Fault and security tests must never touch the shared services on 19092/55432
that every other test uses: they start their own through `scripts/services.sh`
with their own state dir and ports, and stop (and delete) them at the end.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.services import Services, port_open

ROOT = Path(__file__).resolve().parents[2]
SERVICES_SH = ROOT / "scripts" / "services.sh"
START_TIMEOUT_S = 240


def clean_environ() -> dict[str, str]:
    """os.environ without any Threadline variable (they point at the shared services)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("THREADLINE")}


@dataclass
class PrivateServices:
    """One Kafka broker and one PostgreSQL cluster of our own, on loopback."""

    name: str
    kafka_port: int
    controller_port: int
    pg_port: int
    kafka_extra_properties: str = ""
    # PostgreSQL durability as in production: THREADLINE_PG_FAST=1 turns synchronous_commit
    # off, and an immediate shutdown then loses the last commits the consumer already
    # acknowledged to Kafka; a crash test must not measure that test-only trade-off.
    pg_fast: bool = False
    state_dir: Path = field(init=False)

    def __post_init__(self) -> None:
        # Under /tmp and world-traversable, so PostgreSQL (run as user "threadline"
        # when we are root) keeps its cluster inside it and one rmtree removes all.
        self.state_dir = Path(tempfile.mkdtemp(prefix=f"threadline-{self.name}-"))
        self.state_dir.chmod(0o755)

    @property
    def kafka_bootstrap(self) -> str:
        return f"127.0.0.1:{self.kafka_port}"

    @property
    def pg_admin_url(self) -> str:
        return f"postgresql://threadline:threadline@127.0.0.1:{self.pg_port}/postgres"

    def services(self) -> Services:
        return Services(
            self.pg_admin_url, self.kafka_bootstrap, "threadline_reader", "threadline_reader"
        )

    def _env(self) -> dict[str, str]:
        env = clean_environ()
        env.update(
            THREADLINE_STATE_DIR=str(self.state_dir),
            THREADLINE_KAFKA_PORT=str(self.kafka_port),
            THREADLINE_KAFKA_CONTROLLER_PORT=str(self.controller_port),
            THREADLINE_PG_PORT=str(self.pg_port),
            THREADLINE_PG_FAST="1" if self.pg_fast else "0",
            THREADLINE_KAFKA_START_TIMEOUT=str(START_TIMEOUT_S - 30),
        )
        if self.kafka_extra_properties:
            env["THREADLINE_KAFKA_EXTRA_PROPERTIES"] = self.kafka_extra_properties
        return env

    def _services_sh(self, *args: str, timeout: float = START_TIMEOUT_S) -> None:
        result = subprocess.run(
            [str(SERVICES_SH), *args],
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"services.sh {' '.join(args)} failed:\n{result.stderr[-3000:]}")

    def start(self, which: str = "") -> None:
        if not which:
            self._wait_ports_free(within_s=30)
        self._services_sh("start", *([which] if which else []))

    def _wait_ports_free(self, within_s: float) -> None:
        ports = (self.kafka_port, self.controller_port, self.pg_port)
        deadline = time.monotonic() + within_s
        while busy := [p for p in ports if port_open("127.0.0.1", p)]:
            if time.monotonic() > deadline:
                raise RuntimeError(f"ports {busy} stay busy: a previous run left services behind?")
            time.sleep(1)

    def stop(self, which: str = "") -> None:
        self._services_sh("stop", *([which] if which else []), timeout=120)

    def destroy(self) -> None:
        """Stop both services (whatever state they are in) and delete every file."""
        for which in ("kafka", "postgres"):
            try:
                self.stop(which)
            except (RuntimeError, subprocess.TimeoutExpired):
                self._kill_pidfile(self.state_dir / which / f"{which}.pid", signal.SIGKILL)
        shutil.rmtree(self.state_dir, ignore_errors=True)

    # -- faults ---------------------------------------------------------------

    def kafka_pid(self) -> int:
        return int((self.state_dir / "kafka" / "kafka.pid").read_text().strip())

    def postgres_pid(self) -> int:
        return int((self.state_dir / "postgres" / "postgres.pid").read_text().strip())

    def kill_kafka(self) -> None:
        """SIGKILL the broker JVM (no controlled shutdown, no log flush)."""
        self._kill_pidfile(self.state_dir / "kafka" / "kafka.pid", signal.SIGKILL)

    def crash_postgres(self) -> None:
        """SIGQUIT to the postmaster: PostgreSQL's immediate shutdown (crash recovery on start)."""
        self._kill_pidfile(self.state_dir / "postgres" / "postgres.pid", signal.SIGQUIT)
        # The data dir still has postmaster.pid; pg_ctl start copes (the pid is dead).

    @staticmethod
    def _kill_pidfile(pidfile: Path, sig: signal.Signals, within_s: float = 60) -> None:
        try:
            pid = int(pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + within_s
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (it is not our child to reap)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status
