"""Where a lineage graph's server time goes, step by step, in process.

    .venv/bin/python -m benchmarks.lineage_phases [--database bench_threadline_1m] \\
        [--granularity RUN] [--depth 5] [--max-nodes 2000] [--samples 10] [--passes 7] \\
        [--start 602 ...] [--out benchmarks/results/lineage-phases.json]

For each of the API harness's first `--samples` start datasets (seed 7, all history), or
the `--start` dataset ids, the graph is built `--passes` times on a connection of the
server's lineage engine, as the server builds it on one connection (no spare connection for
its runs: `prefetch_ab.py` measures that), and rendered. The service's steps are
wrapped with timers (wall time, inclusive: a step's time includes the steps and statements
it calls) and every statement's fetch is timed, so that `outside_sql_ms` is what the
server's Python and native steps take of the service. Medians per step over the passes,
after one pass not timed. The wrappers cost ~1 us per call; the steps they wrap are
called a few times per level.
"""

import argparse
import inspect
import statistics
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any, ParamSpec, TypeVar, cast

import asyncpg
import uvloop

from benchmarks.fetch_split import (
    envelope,
    graph_parser,
    graph_request,
    lineage_connection,
    start_datasets,
    write,
)
from server.lineage import assemble, levels, node_queries, queries, render, service, traversal
from server.lineage.model import LineageRequest
from server.runtime import tune_server_gc

P = ParamSpec("P")
R = TypeVar("R")
SQL = "statements (fetch)"
# (owner, attribute): the steps timed. Functions are looked up through the module that
# calls them (service imports io_level, queries imports group_io_rows).
STEPS: tuple[tuple[Any, str], ...] = (
    (service, "_start_level"),
    (service, "_level"),
    (queries, "list_io_level"),
    (queries, "group_io_rows"),
    (service, "io_level"),
    (levels.Level, "add_relations"),
    (traversal.Traversal, "admit"),
    (traversal.Traversal, "claim"),
    (service, "_expand"),
    (service, "assemble_graph"),
    (assemble, "_runs"),
    (node_queries, "rows_by_id"),  # assemble._by_id before the thirty-fifth session
    (assemble, "_jobs_and_datasets"),
    (assemble, "_present"),
    (assemble, "_attach_relations"),
)


class Timings:
    """Seconds per step label, for the request being built."""

    def __init__(self) -> None:
        self.spent: defaultdict[str, float] = defaultdict(float)

    def wrap(self, label: str, func: Callable[P, R]) -> Callable[P, R]:
        def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            began = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                self.spent[label] += time.perf_counter() - began

        return timed

    def wrap_async(self, label: str, func: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        async def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            began = time.perf_counter()
            try:
                return await func(*args, **kwargs)
            finally:
                self.spent[label] += time.perf_counter() - began

        return timed

    def install(self) -> None:
        """Wrap every step of STEPS in place (for the rest of the process)."""
        for owner, name in STEPS:
            func = getattr(owner, name)
            prefix = owner.__name__.rsplit(".", 1)[-1] if isinstance(owner, ModuleType) else ""
            label = f"{prefix or owner.__name__}.{name}"
            is_async = inspect.iscoroutinefunction(func)
            setattr(owner, name, (self.wrap_async if is_async else self.wrap)(label, func))


class TimedConnection:
    """Stands in for the connection: times each statement's fetch into `timings`."""

    def __init__(self, conn: asyncpg.Connection, timings: Timings) -> None:
        self.conn = conn
        self.timings = timings

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        began = time.perf_counter()
        try:
            return await self.conn.fetch(sql, *args)
        finally:
            self.timings.spent[SQL] += time.perf_counter() - began


async def measure(
    conn: asyncpg.Connection, request: LineageRequest, timings: Timings, passes: int
) -> dict[str, Any]:
    """Median ms per step over `passes` builds of `request`'s graph (one more first)."""
    runs: list[dict[str, float]] = []
    nodes = relations = body_bytes = 0
    for done in range(passes + 1):
        timings.spent.clear()
        began = time.perf_counter()
        graph = await service.get_lineage(cast(Any, TimedConnection(conn, timings)), request)
        built = time.perf_counter()
        body = render.render_json(graph)
        ended = time.perf_counter()
        if not done:
            continue  # the first pass prepares statements and warms the cache
        step: dict[str, float] = {k: v * 1000 for k, v in timings.spent.items()}
        step["service"] = (built - began) * 1000
        step["render"] = (ended - built) * 1000
        step["outside_sql_ms"] = step["service"] - step.get(SQL, 0.0)
        runs.append(step)
        nodes = len(graph.datasets) + len(graph.jobs) + len(graph.runs) + len(graph.operations)
        relations, body_bytes = len(graph.relations), len(body)
    medians = {k: statistics.median([r.get(k, 0.0) for r in runs]) for k in runs[0]}
    return {
        "start_id": request.start_ids[0],
        "nodes": nodes,
        "relations": relations,
        "body_bytes": body_bytes,
        "median_ms": {k: round(v, 2) for k, v in sorted(medians.items(), key=lambda kv: -kv[1])},
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ids = list(args.start) if args.start else await start_datasets(args.database, args.samples)
    timings = Timings()
    timings.install()
    graphs = []
    async with lineage_connection(args.database, "lineage-phases") as conn:
        for start in ids:
            request = graph_request(start, args.granularity, args.depth, args.max_nodes)
            graphs.append(await measure(conn, request, timings, args.passes))
            g = graphs[-1]
            top = ", ".join(f"{k} {v}" for k, v in list(g["median_ms"].items())[:6])
            print(f"dataset {start}: {g['nodes']} nodes, {g['relations']} relations: {top}")
    return envelope(args, passes=args.passes, graphs=graphs)


def main() -> None:
    parser = graph_parser(__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=7)
    parser.add_argument("--start", type=int, nargs="*", help="dataset ids (default: --samples)")
    args = parser.parse_args()
    if args.passes < 1:
        parser.error("--passes: at least 1")
    tune_server_gc()
    write(args, uvloop.run(run(args)))


if __name__ == "__main__":
    main()
