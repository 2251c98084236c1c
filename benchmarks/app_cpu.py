"""Lineage requests through the whole ASGI app in process (FastAPI, middleware, handler), no
uvicorn and no HTTP client: the server's CPU per request, framework included.

    .venv/bin/python -m benchmarks.app_cpu [--start-kind DATASET] [--granularity DATASET] \\
        [--repeat 1]

`--repeat` passes over the API harness's 30 start nodes (`api.start_nodes`, seed 7) of the
40k database, depth 3, direction BOTH, all history (the harness's `since`), after one
warm-up pass. `benchmarks.lineage_cpu` measures the graph work alone; the difference is
what FastAPI's routing, dependencies and middleware cost. Instruction counts repeat where
timings do not:

    for r in 1 3; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python -m benchmarks.app_cpu --repeat $r 2>&1 | grep Collected; done

(third total - first total) / 60 = instructions per request, start-up excluded.
"""

import argparse
import os
import time
from typing import Any
from urllib.parse import urlencode

import uvloop
from fastapi import FastAPI
from starlette.types import Message

from benchmarks import api
from server.app import create_app
from server.runtime import tune_server_gc
from server.settings import ServerSettings


def _app(database: str) -> FastAPI:
    # The settings `api.launch` gives the benchmark's server, read as the server reads them.
    os.environ["THREADLINE__DATABASE__URL"] = api.reader_url(database)
    os.environ["THREADLINE__SERVER__MAX_LINEAGE_DEPTH"] = "10"
    os.environ["THREADLINE__SERVER__MAX_LINEAGE_NODES"] = "1000000"
    return create_app(ServerSettings())


async def _get(app: FastAPI, path: str, params: dict[str, Any]) -> int:
    """One GET through the app; its status."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": urlencode(params, doseq=True).encode(),
        "headers": [(b"host", b"bench"), (b"accept", b"*/*")],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return int(sent[0]["status"])


async def run(database: str, kind: str, granularity: str, repeat: int) -> float:
    """CPU seconds per request over `repeat` passes of the 30 start nodes."""
    keys = await api.start_nodes(database, 30, 7, kind)
    ids = await api.ids_for("threadline", database, keys, kind)
    case = (3, granularity, api.SINCE)
    requests = [api.lineage_request("threadline", node, case, kind) for node in ids]
    app = _app(database)
    for path, params in requests:  # warm-up: pool connections, prepared statements
        await _get(app, path, params)
    cpu = time.process_time()
    for _ in range(repeat):
        for path, params in requests:
            status = await _get(app, path, params)
            if status != 200:
                raise RuntimeError(f"{path} {params}: HTTP {status}")
    return (time.process_time() - cpu) / (len(requests) * repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_tl_40k")
    parser.add_argument("--start-kind", choices=["DATASET", "JOB"], default="DATASET")
    parser.add_argument("--granularity", default="DATASET")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    tune_server_gc()
    # The server's event loop (server.__main__), so the counts are the server's.
    per_request = uvloop.run(run(args.database, args.start_kind, args.granularity, args.repeat))
    label = f"{args.start_kind} {args.granularity} depth 3"
    print(f"{label}: {per_request * 1000:.2f} CPU-ms per request")


if __name__ == "__main__":
    main()
