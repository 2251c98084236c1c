"""Where a lineage request's time goes, and the part of it no server code can take off.

    .venv/bin/python -m benchmarks.lineage_floor [--database bench_tl_40k] [--depth 3] \\
        [--case DATASET:RUN ...] [--passes 3] [--max-nodes N] \\
        [--out benchmarks/results/lineage-floor.json]

Per case (start node kind : granularity) over the API harness's start nodes (`api.start_nodes`,
seed 7), direction BOTH, all history (the harness's `since`), no node cap unless
`--max-nodes` sets one (the server's and the statements' alike), each request measured three
ways:

- `client_ms`: what `api.py` records, the harness's httpx GET plus `response.json()`, its
  objects frozen after the warm pass as `api.py` freezes them; `json_ms` is the
  `response.json()` part;
- `server_ms`: the same request over a raw keep-alive socket (the server and the loopback,
  no client library), alternated with the client's request;
- `postgres_ms`: PostgreSQL's execution time for the statements the service ran for that
  graph, each prepared and run again as `EXPLAIN (ANALYZE, TIMING OFF) EXECUTE` with its
  own arguments: the generic plan the server's connections run, planning left out (before
  the twenty-second set, `EXPLAIN` of the statement with bound arguments, which plans a
  custom plan: on the 40k database 3-40% slower to execute, the most for the smallest
  graphs); each statement runs three times and its median counts.

`floor_ms` = `postgres_ms` + (`client_ms` - `server_ms`): the database's work for the graph
and the client's own cost for the request and its body. A server that took no time of its
own would still be measured at that. Percentiles are over every request of every pass (the
floor's per start node, from its medians). An unknown path's cost (`not_found`) is the
request's fixed part.
"""

import argparse
import asyncio
import gc
import os
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast
from uuid import UUID

import asyncpg
import httpx
import orjson
from pydantic import SecretStr

from benchmarks import api, env
from benchmarks.raw_http import RawClient, target
from server.app import create_lineage_engine
from server.lineage import service
from server.lineage.model import (
    UUID_KINDS,
    Direction,
    Granularity,
    LineageRequest,
    NodeId,
    NodeKind,
    TimeWindow,
)
from shared.settings import DatabaseSettings

CASES = (
    "DATASET:RUN",
    "DATASET:JOB",
    "DATASET:DATASET",
    "JOB:JOB",
    "JOB:RUN",
    "RUN:RUN",
    "RUN:OPERATION",
)
NOT_FOUND_PATH = "/v1/no-such-path"
EXPLAINS = 3  # runs of each statement; its median execution time counts


@dataclass(frozen=True, slots=True)
class Case:
    kind: str
    granularity: str

    @classmethod
    def parse(cls, text: str) -> "Case":
        kind, _, granularity = text.partition(":")
        return cls(NodeKind(kind).value, Granularity(granularity).value)


def _ms(since: float) -> float:
    return (time.perf_counter() - since) * 1000


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(api.percentile(values, 50), 2),
        "p95": round(api.percentile(values, 95), 2),
        "max": round(max(values), 2),
    }


async def _over_http(
    base_url: str, ids: list[int | str], case: Case, depth: int, passes: int
) -> dict[int | str, dict[str, list[float]]]:
    """Per start node: client, json and server milliseconds of every pass (after a warm one)."""
    found: dict[int | str, dict[str, list[float]]] = {i: {} for i in ids}
    raw = RawClient(base_url)
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=300) as client:
            for turn in range(passes + 1):
                if turn == 1:  # after the warm pass, as api.py: the harness's objects frozen
                    gc.collect()
                    gc.freeze()
                for node_id in ids:
                    path, params = api.lineage_request(
                        "threadline", node_id, (depth, case.granularity, api.SINCE), case.kind
                    )
                    began = time.perf_counter()
                    response = await client.get(path, params=params)
                    parsing = time.perf_counter()
                    response.json()
                    client_ms, json_ms = _ms(began), _ms(parsing)
                    if response.status_code != 200:
                        raise RuntimeError(f"{case} {node_id}: {response.status_code}")
                    began = time.perf_counter()
                    raw.get(target(path, params))
                    server_ms = _ms(began)
                    if turn:
                        times = found[node_id]
                        for name, value in (
                            ("client", client_ms),
                            ("json", json_ms),
                            ("server", server_ms),
                        ):
                            times.setdefault(name, []).append(value)
    finally:
        raw.close()
    return found


async def _not_found(base_url: str, count: int = 60) -> dict[str, dict[str, float]]:
    """The fixed cost of a request: an unknown path through the client and the raw socket."""
    client_times, server_times = [], []
    raw = RawClient(base_url)
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            for turn in range(count + 5):
                began = time.perf_counter()
                (await client.get(NOT_FOUND_PATH)).json()
                client_ms = _ms(began)
                began = time.perf_counter()
                raw.get(NOT_FOUND_PATH)
                if turn >= 5:
                    client_times.append(client_ms)
                    server_times.append(_ms(began))
    finally:
        raw.close()
    return {"client_ms": _summary(client_times), "server_ms": _summary(server_times)}


def _literal(value: Any) -> str:
    """`value` as an SQL literal of unknown type (the prepared statement's parameter types
    apply): the arguments the service binds, which EXECUTE cannot take as parameters."""
    if value is None:
        return "NULL"
    if isinstance(value, list | tuple):
        items = ("NULL" if v is None else '"' + str(v).replace('"', '\\"') + '"' for v in value)
        value = "{" + ",".join(items) + "}"
    elif isinstance(value, datetime):
        value = value.isoformat()
    return "'" + str(value).replace("'", "''") + "'"


async def _execution_ms(conn: asyncpg.Connection, name: str, args: tuple[Any, ...]) -> float:
    """Execution time of the prepared statement `name` with `args`: its generic plan, as the
    server's connections run it (LINEAGE_TUNING). `EXPLAIN` of the statement itself with
    bound arguments would plan it anew for them, and such a custom plan can differ (on the
    1M database, sequential scans where the generic plan probes indexes: README,
    "Twenty-second set")."""
    arguments = f"({', '.join(_literal(a) for a in args)})" if args else ""
    plan = await conn.fetch(f"EXPLAIN (ANALYZE, TIMING OFF, SUMMARY ON) EXECUTE {name}{arguments}")
    line = next(row[0] for row in plan if row[0].startswith("Execution Time:"))
    return float(line.split()[2])


class Statements:
    """An asyncpg query logger keeping each statement the connection ran, with its arguments."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, tuple[Any, ...]]] = []

    def __call__(self, record: Any) -> None:
        self.seen.append((record.query, record.args))


def _node_id(case: Case, node_id: int | str) -> NodeId:
    """The harness's id (a run's UUID as text) as the service takes it."""
    return UUID(str(node_id)) if NodeKind(case.kind) in UUID_KINDS else int(node_id)


async def _postgres(
    database: str, ids: list[int | str], case: Case, depth: int, max_nodes: int
) -> dict[int | str, tuple[float, int]]:
    """Per start node: PostgreSQL's execution milliseconds for the graph's statements, and
    how many statements it took."""
    settings = DatabaseSettings(url=SecretStr(env.db_url(database)))
    engine = create_lineage_engine(settings, "lineage-floor")  # the server's own settings
    found: dict[int | str, tuple[float, int]] = {}
    try:
        for node_id in ids:
            request = LineageRequest(
                start_kind=NodeKind(case.kind),
                start_ids=(_node_id(case, node_id),),
                direction=Direction.BOTH,
                depth=depth,
                granularity=Granularity(case.granularity),
                window=TimeWindow(),
                include_column_lineage=False,
                max_nodes=max_nodes,
            )
            async with engine.connect() as conn:
                raw = (await conn.get_raw_connection()).driver_connection
                driver = cast(asyncpg.Connection, raw)
                ran = Statements()
                driver.add_query_logger(ran)
                try:
                    await service.get_lineage(driver, request)
                    await asyncio.sleep(0)  # asyncpg calls the logger soon, not at once
                finally:
                    driver.remove_query_logger(ran)
                total = 0.0
                for number, (query, args) in enumerate(ran.seen):
                    name = f"floor_{number}"
                    await driver.execute(f"PREPARE {name} AS {query}")
                    total += statistics.median(
                        [await _execution_ms(driver, name, args) for _ in range(EXPLAINS)]
                    )
                    await driver.execute(f"DEALLOCATE {name}")  # not ALL: asyncpg's own too
                found[node_id] = (total, len(ran.seen))
    finally:
        await engine.dispose()
    return found


async def measure_case(
    base_url: str, database: str, ids: list[int | str], case: Case, args: argparse.Namespace
) -> dict[str, Any]:
    http = await _over_http(base_url, ids, case, args.depth, args.passes)
    postgres = await _postgres(database, ids, case, args.depth, args.max_nodes)
    floors = [
        postgres[i][0] + statistics.median(t["client"]) - statistics.median(t["server"])
        for i, t in http.items()
    ]
    every = {
        name: [v for t in http.values() for v in t[name]] for name in ("client", "json", "server")
    }
    return {
        "start_kind": case.kind,
        "granularity": case.granularity,
        "depth": args.depth,
        "start_nodes": len(ids),
        "passes": args.passes,
        "client_ms": _summary(every["client"]),
        "json_ms": _summary(every["json"]),
        "server_ms": _summary(every["server"]),
        "postgres_ms": _summary([p for p, _ in postgres.values()]),
        "statements": _summary([float(n) for _, n in postgres.values()]),
        "floor_ms": _summary(floors),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    run_dir = env.RUNS_DIR / f"lineage-floor-{time.strftime('%Y%m%dT%H%M%S')}"
    run_dir.mkdir(parents=True, exist_ok=True)
    cases = [Case.parse(c) for c in args.case]
    server = await api.wait_ready(
        api.launch("threadline", args.database, run_dir, args.max_nodes), "threadline"
    )
    results, load = [], os.getloadavg()
    try:
        fixed = await _not_found(server.base_url)
        for case in cases:
            keys = await api.start_nodes(args.database, args.samples, args.seed, case.kind)
            ids = await api.ids_for("threadline", args.database, keys, case.kind)
            results.append(await measure_case(server.base_url, args.database, ids, case, args))
            sys.stderr.write(f"{case.kind}:{case.granularity} {results[-1]['floor_ms']}\n")
    finally:
        server.proc.terminate()
        server.proc.wait(timeout=30)
    return {
        "database": args.database,
        "max_nodes": args.max_nodes,
        "load_avg_at_start": [round(x, 2) for x in load],
        "load_avg_at_end": [round(x, 2) for x in os.getloadavg()],
        "not_found": fixed,
        "cases": results,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="bench_tl_40k")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--case", nargs="+", default=list(CASES), help="KIND:GRANULARITY")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument(
        "--max-nodes", type=int, default=1_000_000, help="node cap (default: none in effect)"
    )
    parser.add_argument("--out", type=argparse.FileType("wb"))
    args = parser.parse_args()
    result = asyncio.run(run(args))
    text = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    sys.stdout.write(text.decode() + "\n")
    if args.out:
        args.out.write(text)


if __name__ == "__main__":
    main()
