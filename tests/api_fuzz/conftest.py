"""A real `threadline-server` process over its own database, for property tests of the API.

The database is separate from the session's test database because the fuzzer also
calls the location admin endpoints (PATCH, POST, DELETE, merge): the admin URL is set,
so those endpoints answer instead of 503, and whatever they change stays in this
database, which is dropped at the end.
"""

import asyncio
import os
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from sqlalchemy.ext.asyncio import create_async_engine

from consumer.ingest import ingest_payloads
from tests.conftest import create_database, drop_database, with_credentials
from tests.faults.private import ROOT, clean_environ
from tests.server.world import world_batches
from tests.services import HOW_TO_START, Services

FUZZ_TOKEN = "fuzz-token-" + uuid.uuid4().hex
SERVER_BIN = ROOT / ".venv" / "bin" / "threadline-server"
START_BOUND_S = 60.0


@dataclass(frozen=True, slots=True)
class ServedApi:
    base_url: str
    database_url: str
    log: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _seed(url: str) -> None:
    engine = create_async_engine(url)
    try:
        for batch in world_batches():
            result = await ingest_payloads(engine, batch)
            assert not result.rejects, result.rejects
    finally:
        await engine.dispose()


def _wait_healthy(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_BOUND_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"threadline-server exited:\n{log.read_text()[-3000:]}", pytrace=False)
        try:
            if httpx.get(f"{base_url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass  # not listening yet: poll again
        time.sleep(0.3)
    pytest.fail(f"threadline-server not healthy after {START_BOUND_S}s", pytrace=False)


@pytest.fixture(scope="session")
def served_api(
    test_services: Services, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServedApi]:
    """The server as deployed (read-only role) plus the admin URL, on a free loopback port."""
    if not test_services.reader_user:
        pytest.fail(f"the read-only role is not configured; {HOW_TO_START}", pytrace=False)
    name = f"threadline_fuzz_{uuid.uuid4().hex[:10]}"
    url = create_database(test_services, name)
    process: subprocess.Popen[bytes] | None = None
    try:
        asyncio.run(_seed(url))
        port = _free_port()
        log = tmp_path_factory.mktemp("server") / "server.log"
        env = clean_environ() | {
            "THREADLINE__DATABASE__URL": with_credentials(
                url, test_services.reader_user, test_services.reader_password
            ),
            "THREADLINE__SERVER__ADMIN_DATABASE_URL": url,
            "THREADLINE__SERVER__PORT": str(port),
            "THREADLINE__SERVER__REQUEST_TIMEOUT_S": os.environ.get(
                "THREADLINE_FUZZ_TIMEOUT_S", "20"
            ),
            "THREADLINE__LOG__LEVEL": "WARNING",
            "THREADLINE__AUTH__ENABLED": "true",
            "THREADLINE__AUTH__STATIC_TOKENS": f'["{FUZZ_TOKEN}"]',
        }
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(SERVER_BIN)], env=env, stdout=out, stderr=subprocess.STDOUT
            )
        base_url = f"http://127.0.0.1:{port}"
        _wait_healthy(base_url, process, log)
        yield ServedApi(base_url, url, log)
    finally:
        if process is not None:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        drop_database(test_services, name)
