"""A real `threadline-server` process, for tests of the API as it is deployed (uvicorn over
the loopback, not the in-process ASGI client)."""

import asyncio
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import create_database, drop_database, with_credentials
from tests.faults.private import ROOT, clean_environ
from tests.services import HOW_TO_START, Services

SERVER_BIN = ROOT / ".venv" / "bin" / "threadline-server"
START_BOUND_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_healthy(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
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


@contextmanager
def running_server(settings: dict[str, str], log: Path) -> Iterator[str]:
    """The server with these THREADLINE__ variables (none from this process's environment)
    and a free port, its output in `log`; its base URL once healthy. Stopped on exit."""
    port = free_port()
    env = clean_environ() | settings | {"THREADLINE__SERVER__PORT": str(port)}
    with log.open("wb") as out:
        process = subprocess.Popen([str(SERVER_BIN)], env=env, stdout=out, stderr=out)
    try:
        base_url = f"http://127.0.0.1:{port}"
        wait_healthy(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()


@contextmanager
def server_over_own_database(
    services: Services,
    prefix: str,
    seed: Callable[[str], Coroutine[Any, Any, None]],
    log: Path,
    settings: Callable[[str], dict[str, str]] | None = None,
) -> Iterator[tuple[str, str]]:
    """A database of its own, migrated and filled by `seed(url)`, and the server over it as
    deployed (the read-only role; `settings(url)` adds to that): (base URL, database URL).
    The database is dropped on exit."""
    if not services.reader_user:
        pytest.fail(f"the read-only role is not configured; {HOW_TO_START}", pytrace=False)
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    url = create_database(services, name)
    try:
        asyncio.run(seed(url))
        reader = with_credentials(url, services.reader_user, services.reader_password)
        env = {"THREADLINE__DATABASE__URL": reader, "THREADLINE__LOG__LEVEL": "WARNING"}
        with running_server(env | (settings(url) if settings else {}), log) as base_url:
            yield base_url, url
    finally:
        drop_database(services, name)
