"""Where a large graph's statements spend their time: PostgreSQL and the wire, or decoding.

    .venv/bin/python -m benchmarks.fetch_split [--database bench_threadline_1m] \\
        [--granularity RUN] [--depth 5] [--max-nodes 2000] [--samples 10] \\
        --out benchmarks/results/fetch-split.json

In process, no HTTP, on a connection of the server's lineage engine (its settings, its
statement cache). For each of the API harness's first `--samples` start datasets (seed 7,
all history) it builds the graph as the server does, recording every statement the service
runs. Then, per statement, the median of `--repeat` runs of:

- `fetch`: the statement as the server runs it (prepared, generic plan), its rows decoded by
  asyncpg into Records;
- `copy`: `COPY (the statement) TO STDOUT (FORMAT binary)`, its arguments written into it
  as literals (a simple query: planned each time, for those values), the bytes kept and
  not decoded: PostgreSQL's work and the wire's, with nothing built on the client.

The difference bounds what any client-side decoder, native or not, could save on these
statements (thirty-second set). Also the service's and the body's time per graph (second
fastest of three).
"""

import argparse
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import asyncpg
import orjson
import uvloop
from pydantic import SecretStr

from benchmarks import api, env
from server.app import create_lineage_engine
from server.lineage import service
from server.lineage.model import Direction, Granularity, LineageRequest, NodeKind, TimeWindow
from server.lineage.render import render_json
from server.runtime import tune_server_gc
from shared.settings import DatabaseSettings


class Recording:
    """Stands in for the connection: runs each statement on it and keeps (sql, args)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.statements: list[tuple[str, tuple[Any, ...]]] = []

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        self.statements.append((sql, args))
        return await self.conn.fetch(sql, *args)


def _literal(value: Any, type_name: str) -> str:
    """`value` as SQL text of `type_name` (ids, id arrays, times, limits: no other kinds)."""
    if value is None:
        return f"NULL::{type_name}"
    if isinstance(value, list | tuple):
        items = ",".join("NULL" if v is None else f'"{v}"' for v in value)
        return f"'{{{items}}}'::{type_name}"
    if isinstance(value, int):
        return str(value)
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return "'" + text.replace("'", "''") + f"'::{type_name}"


async def inlined(conn: asyncpg.Connection, sql: str, args: tuple[Any, ...]) -> str:
    """`sql` with its `$n` parameters replaced by `args` as typed literals."""
    prepared = await conn.prepare(sql)
    types = [
        t.name.removeprefix("_") + "[]" if t.kind == "array" else t.name
        for t in prepared.get_parameters()
    ]
    for n in range(len(args), 0, -1):  # $12 before $1
        sql = sql.replace(f"${n}", _literal(args[n - 1], types[n - 1]))
    return sql


async def median_ms(run: Callable[[], Awaitable[int]], repeat: int) -> tuple[float, int]:
    """Median wall ms of `repeat` calls and the last call's result."""
    times, result = [], 0
    for _ in range(repeat):
        began = time.perf_counter()
        result = await run()
        times.append((time.perf_counter() - began) * 1000)
    return round(statistics.median(times), 2), result


async def split_statement(
    conn: asyncpg.Connection, sql: str, args: tuple[Any, ...], repeat: int
) -> dict[str, Any]:
    async def fetch() -> int:
        return len(await conn.fetch(sql, *args))

    copy_sql = await inlined(conn, sql, args)

    async def copy() -> int:
        size = 0

        async def count(chunk: bytes) -> None:
            nonlocal size
            size += len(chunk)

        await conn.copy_from_query(copy_sql, output=count, format="binary")
        return size

    fetch_ms, rows = await median_ms(fetch, repeat)
    copy_ms, size = await median_ms(copy, repeat)
    return {"rows": rows, "bytes": size, "fetch_ms": fetch_ms, "copy_ms": copy_ms}


async def split_graph(
    conn: asyncpg.Connection, request: LineageRequest, repeat: int
) -> dict[str, Any]:
    passes = []
    for _ in range(3):
        recording = Recording(conn)
        began = time.perf_counter()
        graph = await service.get_lineage(cast(asyncpg.Connection, recording), request)
        built = time.perf_counter()
        body = render_json(graph)
        passes.append(((built - began) * 1000, (time.perf_counter() - built) * 1000, recording))
    passes.sort(key=lambda p: p[0] + p[1])
    service_ms, body_ms, recording = passes[1]
    statements = [
        await split_statement(conn, sql, args, repeat) for sql, args in recording.statements
    ]
    return {
        "start_id": request.start_ids[0],
        "nodes": len(graph.datasets) + len(graph.jobs) + len(graph.runs) + len(graph.operations),
        "body_bytes": len(body),
        "service_ms": round(service_ms, 2),
        "body_ms": round(body_ms, 2),
        "statements": statements,
        "fetch_ms": round(sum(s["fetch_ms"] for s in statements), 2),
        "copy_ms": round(sum(s["copy_ms"] for s in statements), 2),
    }


async def start_datasets(database: str, samples: int) -> list[int]:
    """The API harness's first `samples` start datasets (seed 7), by Threadline id."""
    keys = await api.start_nodes(database, samples, 7, "DATASET")
    return [int(i) for i in await api.ids_for("threadline", database, keys, "DATASET")]


def graph_request(
    start: int, granularity: Granularity, depth: int, max_nodes: int
) -> LineageRequest:
    """The harness's request from one start dataset: both directions, all history."""
    return LineageRequest(
        start_kind=NodeKind.DATASET,
        start_ids=(start,),
        direction=Direction.BOTH,
        depth=depth,
        granularity=granularity,
        window=TimeWindow(),
        include_column_lineage=False,
        max_nodes=max_nodes,
    )


@asynccontextmanager
async def lineage_connection(database: str, name: str) -> AsyncIterator[asyncpg.Connection]:
    """A connection of an engine made as the server makes its lineage engine (its settings,
    its statement cache), disposed of on exit."""
    settings = DatabaseSettings(url=SecretStr(env.db_url(database)))
    engine = create_lineage_engine(settings, name)
    try:
        async with engine.connect() as sa_conn:
            raw = (await sa_conn.get_raw_connection()).driver_connection
            yield cast(asyncpg.Connection, raw)
    finally:
        await engine.dispose()


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ids = await start_datasets(args.database, args.samples)
    graphs = []
    async with lineage_connection(args.database, "fetch-split") as conn:
        for start in ids:
            request = graph_request(start, args.granularity, args.depth, args.max_nodes)
            graphs.append(await split_graph(conn, request, args.repeat))
            g = graphs[-1]
            print(
                f"dataset {start}: {g['nodes']} nodes, service {g['service_ms']} ms, "
                f"body {g['body_ms']} ms; {len(g['statements'])} statements: "
                f"fetch {g['fetch_ms']} ms, copy {g['copy_ms']} ms"
            )
    return envelope(args, repeat=args.repeat, graphs=graphs)


def graph_parser(description: str) -> argparse.ArgumentParser:
    """The options of the in-process graph tools: which graphs, and where the result goes."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database", default="bench_threadline_1m")
    parser.add_argument("--granularity", type=Granularity, default=Granularity.RUN)
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--max-nodes", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True)
    return parser


def envelope(args: argparse.Namespace, **found: Any) -> dict[str, Any]:
    """A result: the graphs asked for, when and where, and what was `found`."""
    return {
        "database": args.database,
        "granularity": args.granularity,
        "depth": args.depth,
        "max_nodes": args.max_nodes,
        "at": datetime.now(UTC).strftime("%Y%m%dT%H%M%S"),
        "machine": asdict(env.Machine.now()),
        **found,
    }


def write(args: argparse.Namespace, result: dict[str, Any]) -> None:
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")


def main() -> None:
    parser = graph_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    tune_server_gc()
    write(args, uvloop.run(run(args)))


if __name__ == "__main__":
    main()
