"""API harness: dataset lineage latency p50/p95/p99 by depth and granularity, one system at a time.

    .venv/bin/python -m benchmarks.api --system threadline --database bench_threadline_ingest \
        --starts-from bench_threadline_ingest --samples 40

Starts the system's own HTTP server on a free port (Threadline: `threadline-server` reading as
the read-only role; Data.Rentgen: its uvicorn server with the dummy auth provider and a token),
then, for every depth x granularity, asks for the lineage graph of the same start datasets one
request at a time (a few warm-up requests first) and records the latency the client sees
(HTTP + JSON included; through httpx, or `--client raw`'s lean socket) and the graph size.
Before timing, the harness freezes its own objects (`--client-gc frozen`, the default since
the eighteenth set): benchmarks/README.md, "Eighteenth set", says why. Equal semantics on
both sides: start node a dataset, direction BOTH (`--direction` for one way), the same
`since` (Data.Rentgen requires one: the day before the first event), no `until`, no column
lineage; depth counts relation hops the same way in both.

Start datasets are chosen (seeded) among datasets that have both inputs and outputs in the
`--starts-from` Threadline database and are matched to the other system by their natural key
(location type, location name, dataset name).
"""

import argparse
import asyncio
import gc
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks import env
from benchmarks.generate import T0
from benchmarks.raw_http import RawClient, target
from benchmarks.systems import free_port

DEPTHS = (1, 3, 5, 10)
GRANULARITIES = ("RUN", "JOB", "DATASET")
SINCE = (T0 - timedelta(days=1)).isoformat()

# Start nodes with lineage both ways, by natural key. Datasets: (location type, location
# name, name) in both schemas. Jobs: (location name, name): the two systems type free-form
# job namespaces differently ("namespace" vs "unknown"), but name them alike.
STARTS_SQL = {
    "DATASET": """
SELECT l.type, l.name AS location, d.name FROM dataset d JOIN location l ON l.id = d.location_id
WHERE EXISTS (SELECT FROM input i WHERE i.dataset_id = d.id)
  AND EXISTS (SELECT FROM output o WHERE o.dataset_id = d.id)
ORDER BY d.id
""",
    "JOB": """
SELECT l.name AS location, j.name FROM job j JOIN location l ON l.id = j.location_id
WHERE EXISTS (SELECT FROM input i WHERE i.job_id = j.id)
  AND EXISTS (SELECT FROM output o WHERE o.job_id = j.id)
ORDER BY j.id
""",
    # Runs: the run id itself, the same UUID in both systems (it comes from the events).
    "RUN": """
SELECT r.id::text FROM run r
WHERE EXISTS (SELECT FROM input i WHERE i.run_id = r.id)
  AND EXISTS (SELECT FROM output o WHERE o.run_id = r.id)
ORDER BY r.id
""",
    # Operations: the operation id, the same UUID in both systems (an event's own run id
    # under its parent run's).
    "OPERATION": """
SELECT o.id::text FROM operation o
WHERE EXISTS (SELECT FROM input i WHERE i.operation_id = o.id)
  AND EXISTS (SELECT FROM output x WHERE x.operation_id = o.id)
ORDER BY o.id
""",
}
ID_SQL = {
    "DATASET": """
SELECT d.id FROM dataset d JOIN location l ON l.id = d.location_id
WHERE l.type = $1 AND l.name = $2 AND d.name = $3
""",
    "JOB": """
SELECT j.id FROM job j JOIN location l ON l.id = j.location_id WHERE l.name = $1 AND j.name = $2
""",
    "RUN": "SELECT id::text FROM run WHERE id = $1::uuid",
    "OPERATION": "SELECT id::text FROM operation WHERE id = $1::uuid",
}


@dataclass(frozen=True, slots=True)
class Server:
    proc: subprocess.Popen[bytes]
    base_url: str
    headers: dict[str, str]


async def start_nodes(
    starts_from: str, samples: int, seed: int, kind: str
) -> list[tuple[str, ...]]:
    conn = await env.connect(starts_from)
    try:
        rows = await conn.fetch(STARTS_SQL[kind])
    finally:
        await conn.close()
    keys = [tuple(r.values()) for r in rows]
    return random.Random(seed).sample(keys, min(samples, len(keys)))


async def ids_for(
    system: str, database: str, keys: list[tuple[str, ...]], kind: str
) -> list[int | str]:
    """Each start node's id in `database`: an integer, or a run's or operation's UUID as text."""
    conn = await env.connect(database)
    try:
        ids: list[int | str] = []
        for key in keys:
            found = await conn.fetchval(ID_SQL[kind], *key)
            if found is None:
                raise LookupError(f"{system} has no {kind.lower()} {key}")
            ids.append(found if isinstance(found, str) else int(found))
        return ids
    finally:
        await conn.close()


async def window_start(database: str, days: int) -> str:
    """`days` before the newest run in the database (both schemas have run.created_at)."""
    conn = await env.connect(database)
    try:
        newest: datetime = await conn.fetchval("SELECT max(created_at) FROM run")
    finally:
        await conn.close()
    return (newest - timedelta(days=days)).isoformat()


def reader_url(database: str) -> str:
    """Threadline's server reads as the read-only role, as in production."""
    return env.db_url(database).replace(
        f"{env.PG_USER}:{env.PG_PASSWORD}@", "threadline_reader:threadline_reader@"
    )


def launch(
    system: str,
    database: str,
    run_dir: Path,
    max_nodes: int | None,
    server_from: Path | None = None,
) -> Server:
    """The system's server; `server_from`: Threadline's from that checkout's sources (their
    packages first on the path, this tree's virtual environment and native module)."""
    port = free_port()
    if system == "threadline":
        cmd = [str(env.VENV_BIN / "threadline-server")]
        extra = {
            "THREADLINE__DATABASE__URL": reader_url(database),
            "THREADLINE__SERVER__PORT": str(port),
            "THREADLINE__SERVER__MAX_LINEAGE_DEPTH": "10",
            "THREADLINE__LOG__LEVEL": "WARNING",
        }
        if max_nodes:
            extra["THREADLINE__SERVER__MAX_LINEAGE_NODES"] = str(max_nodes)
        if server_from is not None:
            extra["PYTHONPATH"] = str(server_from.resolve())
    else:
        cmd = [env.RENTGEN_PYTHON, "-m", "data_rentgen.server", "--host", "127.0.0.1"]
        cmd += ["--port", str(port)]
        extra = {
            "DATA_RENTGEN__DATABASE__URL": env.db_url(database),
            "DATA_RENTGEN__AUTH__ACCESS_TOKEN__SECRET_KEY": "benchmark-secret",
            "DATA_RENTGEN__AUTH__PERSONAL_TOKENS__ENABLED": "false",
            "DATA_RENTGEN__SERVER__STATIC_FILES__ENABLED": "false",
            "DATA_RENTGEN_CONFIG_FILE": "/nonexistent.yml",
        }
    log = (run_dir / f"server-{system}.log").open("wb")
    proc = subprocess.Popen(
        cmd, env={**os.environ, **extra}, stdout=log, stderr=subprocess.STDOUT, cwd=env.SCRATCH
    )
    return Server(proc, f"http://127.0.0.1:{port}", {})


def stop(server: Server) -> None:
    """Stop the server as its service manager would, and wait for it to exit."""
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=30)


async def wait_ready(server: Server, system: str) -> Server:
    path = "/health" if system == "threadline" else "/monitoring/ping"
    async with httpx.AsyncClient(base_url=server.base_url) as client:
        for _ in range(240):
            if server.proc.poll() is not None:
                raise RuntimeError(f"{system} server exited with {server.proc.returncode}")
            try:
                if (await client.get(path)).status_code < 500:
                    break
            except httpx.TransportError:
                pass  # not listening yet: poll again
            await asyncio.sleep(0.25)
        if system != "data-rentgen":
            return server
        form = {"username": "bench", "password": "bench"}
        token = (await client.post("/v1/auth/token", data=form)).json()["access_token"]
    return Server(server.proc, server.base_url, {"Authorization": f"Bearer {token}"})


def lineage_request(
    system: str,
    node_id: int | str,
    case: tuple[int, str, str],
    kind: str = "DATASET",
    *,
    columns: bool = False,
    direction: str = "BOTH",
) -> tuple[str, Any]:
    depth, granularity, since = case
    params: dict[str, Any] = {
        "start_node_id": node_id,
        "direction": direction,  # the same values in both APIs
        "depth": depth,
        "granularity": granularity,
        "since": since,
    }
    if columns:  # the same parameter in both APIs
        params["include_column_lineage"] = "true"
    if system == "threadline":
        params["start_node_type"] = kind
        return "/v1/lineage", params
    if kind == "OPERATION":
        # Data.Rentgen's operation lineage has no granularity parameter (it refuses one): it
        # is OPERATION, as the harness asks of Threadline.
        if granularity != "OPERATION":
            raise ValueError(f"Data.Rentgen answers operation lineage at OPERATION only: {case}")
        del params["granularity"]
    return f"/v1/{kind.lower()}s/lineage", params


def graph_size(body: dict[str, Any]) -> tuple[int, bool]:
    nodes = body.get("nodes", {})
    size = sum(len(v) for v in nodes.values())
    return size, bool(body.get("truncated", False))


def column_pairs(body: dict[str, Any]) -> tuple[int, int]:
    """(direct, indirect) column lineage in a body of either API: direct as distinct
    (datasets, source column, target column); indirect as distinct (datasets, source column),
    Data.Rentgen's indirect lineage naming no target column."""
    relations = body.get("relations", {})
    direct: set[tuple[str, ...]] = set()
    indirect: set[tuple[str, ...]] = set()
    for edge in relations.get("direct_column_lineage", []):
        pair = (str(edge["from"]["id"]), str(edge["to"]["id"]))
        fields = edge["fields"]
        if isinstance(fields, dict):  # Data.Rentgen: {target: [sources]}
            direct.update((*pair, s["field"], t) for t, sources in fields.items() for s in sources)
        else:
            direct.update((*pair, f["source_column"], f["target_column"]) for f in fields)
    for edge in relations.get("indirect_column_lineage", []):
        pair = (str(edge["from"]["id"]), str(edge["to"]["id"]))
        indirect.update((*pair, f.get("field", f.get("source_column"))) for f in edge["fields"])
    return len(direct), len(indirect)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


# A GET as the harness times it: (status, parsed body), the parsing included.
Get = Callable[[str, dict[str, Any]], Awaitable[tuple[int, Any]]]


@asynccontextmanager
async def http_client(server: Server, kind: str) -> AsyncIterator[Get]:
    """`kind` "httpx" (every set before the twenty-fourth): httpx's client, its own work ~1-2
    ms per request; "raw": one keep-alive socket (`raw_http`), ~0.1 ms. Both parse the body
    with the standard library's `json.loads`, as httpx's `Response.json()` does."""
    if kind == "raw":
        raw = RawClient(server.base_url, server.headers)

        async def raw_get(path: str, params: dict[str, Any]) -> tuple[int, Any]:
            # A blocking call is fine here: one request at a time (`--concurrency` 1 only).
            status, body = raw.request(target(path, params))
            return status, json.loads(body)

        try:
            yield raw_get
        finally:
            raw.close()
        return
    async with httpx.AsyncClient(
        base_url=server.base_url, headers=server.headers, timeout=300
    ) as client:

        async def httpx_get(path: str, params: dict[str, Any]) -> tuple[int, Any]:
            response = await client.get(path, params=params)
            return response.status_code, response.json()

        yield httpx_get


async def measure(
    server: Server, system: str, ids: list[int | str], args: argparse.Namespace
) -> list[dict[str, Any]]:
    cases, warmup = [], args.warmup
    async with http_client(server, args.client) as get:
        for granularity in args.granularities:
            for depth in args.depths:
                case = (depth, granularity, args.since)
                for node_id in ids[:warmup]:
                    path, params = lineage_request(
                        system,
                        node_id,
                        case,
                        args.start_kind,
                        columns=args.column_lineage,
                        direction=args.direction,
                    )
                    await get(path, params)
                if args.client_gc == "frozen":
                    # The harness's own objects (modules, clients: ~47k) leave the collector's
                    # view. Otherwise the full collections that parsing large bodies sets off
                    # scan them all: a median 17 ms in 16 of 240 parses of RUN graphs from jobs
                    # (client_split.py). That pause is the client's, not the server's latency.
                    # The parsed bodies are still collected, as any client's would be.
                    gc.collect()
                    gc.freeze()
                cases.append(
                    await _case(
                        get,
                        system,
                        ids,
                        case,
                        args.start_kind,
                        columns=args.column_lineage,
                        concurrency=args.concurrency,
                        direction=args.direction,
                    )
                )
                sys.stderr.write(
                    f"{system} {granularity} depth {depth}: {cases[-1]['p50_ms']} ms\n"
                )
    return cases


async def _case(
    get: Get,
    system: str,
    ids: list[int | str],
    case: tuple[int, str, str],
    kind: str,
    *,
    columns: bool = False,
    concurrency: int = 1,
    direction: str = "BOTH",
) -> dict[str, Any]:
    depth, granularity, _ = case
    latencies, sizes, truncated, errors = [], [], 0, 0
    direct, indirect = [], []
    pending = iter(ids)

    async def client_loop() -> None:
        # Each client sends its next request when its last answer is parsed; `concurrency`
        # clients share the start nodes, each asked for once.
        nonlocal truncated, errors
        for node_id in pending:
            path, params = lineage_request(
                system, node_id, case, kind, columns=columns, direction=direction
            )
            began = time.perf_counter()
            status, body = await get(path, params)
            latencies.append((time.perf_counter() - began) * 1000)
            if status != 200:
                errors += 1
                continue
            size, cut = graph_size(body)
            sizes.append(size)
            truncated += cut
            if columns:
                pairs = column_pairs(body)
                direct.append(pairs[0])
                indirect.append(pairs[1])

    began_all = time.perf_counter()
    await asyncio.gather(*(client_loop() for _ in range(concurrency)))
    wall = time.perf_counter() - began_all
    result: dict[str, Any] = {
        "granularity": granularity,
        "depth": depth,
        "samples": len(latencies),
        "errors": errors,
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "p99_ms": round(percentile(latencies, 99), 1),
        "mean_ms": round(statistics.fmean(latencies), 1),
        "max_ms": round(max(latencies), 1),
        "nodes_median": statistics.median(sizes) if sizes else 0,
        "nodes_max": max(sizes) if sizes else 0,
        "truncated": truncated,
        "column_lineage": columns,
        "concurrency": concurrency,
        "requests_per_s": round(len(latencies) / wall, 1),
    }
    if columns:
        result.update(direct_columns_total=sum(direct), indirect_columns_total=sum(indirect))
    return result


def _py_spy(pid: int, run_dir: Path) -> subprocess.Popen[bytes]:
    """Sample the server while it answers (raw collapsed stacks, see profile_summary)."""
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
            str(run_dir / "py-spy-server.txt"),
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def run(args: argparse.Namespace) -> dict[str, Any]:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    run_dir = env.RUNS_DIR / f"api-{args.system}-{stamp}"
    run_dir.mkdir(parents=True, exist_ok=True)
    keys = await start_nodes(args.starts_from, args.samples, args.seed, args.start_kind)
    if args.window_days:
        args.since = await window_start(args.database, args.window_days)
    ids = await ids_for(args.system, args.database, keys, args.start_kind)
    server = launch(args.system, args.database, run_dir, args.max_nodes, args.server_from)
    spy: subprocess.Popen[bytes] | None = None
    try:
        server = await wait_ready(server, args.system)
        load = os.getloadavg()
        spy = _py_spy(server.proc.pid, run_dir) if args.profile else None
        cases = await measure(server, args.system, ids, args)
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=60)
        stop(server)
    return {
        "system": args.system,
        "database": args.database,
        "events_in_database": args.events_in_database,
        "since": args.since,
        "window_days": args.window_days,
        "max_nodes": args.max_nodes,
        "server_from": str(args.server_from) if args.server_from else None,
        "start_kind": args.start_kind,
        "direction": args.direction,
        "warmup": args.warmup,
        "start_nodes": [list(k) for k in keys],
        "load_avg_at_start": [round(x, 2) for x in load],
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        "at": stamp,
        "client_gc": args.client_gc,
        "client": args.client,
        "cases": cases,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--system", choices=["threadline", "data-rentgen"], required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--starts-from", required=True, help="Threadline database to pick from")
    parser.add_argument("--events-in-database", type=int, default=0)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-nodes", type=int, help="Threadline node cap (default: server's)")
    parser.add_argument("--since", default=SINCE, help="window start (default: all history)")
    parser.add_argument("--window-days", type=int, help="since = N days before the newest run")
    parser.add_argument("--start-kind", choices=sorted(STARTS_SQL), default="DATASET")
    parser.add_argument(
        "--direction",
        choices=["BOTH", "DOWNSTREAM", "UPSTREAM"],
        default="BOTH",
        help="lineage direction, the same in both APIs (default BOTH: every set before the"
        " twenty-third)",
    )
    parser.add_argument("--depths", type=int, nargs="+", default=list(DEPTHS))
    parser.add_argument("--granularities", nargs="+", default=list(GRANULARITIES))
    parser.add_argument("--profile", action="store_true", help="py-spy the server (raw stacks)")
    parser.add_argument(
        "--column-lineage", action="store_true", help="include column lineage (both systems)"
    )
    parser.add_argument(
        "--client-gc",
        choices=["frozen", "default"],
        default="frozen",
        help="freeze the harness's own objects before timing (default) or leave CPython's GC"
        " as it is (the sets before the eighteenth)",
    )
    parser.add_argument(
        "--client",
        choices=["httpx", "raw"],
        default="httpx",
        help="the HTTP client: httpx (default, every set before the twenty-fourth) or one"
        " keep-alive socket with ~0.1 ms of its own per request (one client only)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="clients asking at once, each for its next start node when answered (default 1:"
        " one request at a time, every set before the twenty-first)",
    )
    parser.add_argument(
        "--server-from",
        type=Path,
        help="run Threadline's server from another checkout's sources (A/B rounds)",
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.client == "raw" and args.concurrency != 1:
        parser.error("--client raw sends one request at a time: --concurrency 1 only")
    result = asyncio.run(run(args))
    env.emit(result, args.out)


if __name__ == "__main__":
    main()
