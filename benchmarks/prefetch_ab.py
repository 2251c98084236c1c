"""Large graphs built with and without a spare connection for their runs, in process.

    .venv/bin/python -m benchmarks.prefetch_ab [--database bench_threadline_1m] \\
        [--start-kind DATASET] [--granularity RUN] [--depth 5] [--max-nodes 2000] \\
        [--samples 30] [--passes 6] --out benchmarks/results/prefetch-ab.json

For each of the API harness's start nodes (seed 7, all history), the graph is built as the
server builds it on a connection of its lineage engine, `--passes` times with a second such
connection offered as the spare (`server.lineage.prefetch`) and as many times without, the
two alternated (which goes first swapped each pass), after one build each way that is not
timed. Records per graph the median service ms both ways, whether a prefetch began, and
whether the two bodies were the same (thirty-fifth set).
"""

import argparse
import statistics
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import uvloop

from benchmarks import api
from benchmarks.fetch_split import envelope, lineage_connection, write
from server.lineage import prefetch, render, service
from server.lineage.model import (
    Direction,
    Granularity,
    LineageRequest,
    NodeKind,
    TimeWindow,
)
from server.runtime import tune_server_gc


class Offered:
    """A spare connection, counting the builds that took it."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.taken = 0

    @asynccontextmanager
    async def __call__(self) -> AsyncIterator[asyncpg.Connection | None]:
        self.taken += 1
        yield self.conn


async def _graph(
    conn: asyncpg.Connection, spare: Offered, request: LineageRequest, passes: int
) -> dict[str, Any]:
    bodies = [
        render.render_json(await service.get_lineage(conn, request, offered))
        for offered in (None, spare)
    ]
    spare.taken = 0
    timed: dict[bool, list[float]] = {False: [], True: []}
    for done in range(passes):
        for offered in (True, False) if done % 2 else (False, True):
            began = time.perf_counter()
            await service.get_lineage(conn, request, spare if offered else None)
            timed[offered].append((time.perf_counter() - began) * 1000)
    return {
        "start_id": str(request.start_ids[0]),
        "body_bytes": len(bodies[0]),
        "same_body": bodies[0] == bodies[1],
        "prefetched": spare.taken > 0,
        "alone_ms": round(statistics.median(timed[False]), 2),
        "with_spare_ms": round(statistics.median(timed[True]), 2),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    keys = await api.start_nodes(args.database, args.samples, 7, args.start_kind)
    ids = await api.ids_for("threadline", args.database, keys, args.start_kind)
    graphs = []
    async with (
        lineage_connection(args.database, "prefetch-ab") as conn,
        lineage_connection(args.database, "prefetch-ab-spare") as spare_conn,
    ):
        spare = Offered(spare_conn)
        for node_id in ids:
            request = LineageRequest(
                start_kind=NodeKind(args.start_kind),
                start_ids=(int(node_id),),  # dataset and job ids are integers
                direction=Direction.BOTH,
                depth=args.depth,
                granularity=args.granularity,
                window=TimeWindow(),
                include_column_lineage=False,
                max_nodes=args.max_nodes,
            )
            graphs.append(await _graph(conn, spare, request, args.passes))
            g = graphs[-1]
            print(
                f"{args.start_kind.lower()} {node_id}: {g['alone_ms']} -> {g['with_spare_ms']} ms"
                f"{' (prefetched)' if g['prefetched'] else ''}"
            )
    alone = sum(g["alone_ms"] for g in graphs)
    offered = sum(g["with_spare_ms"] for g in graphs)
    print(f"all {len(graphs)} graphs: {alone:.1f} -> {offered:.1f} ms")
    return envelope(
        args,
        start_kind=args.start_kind,
        passes=args.passes,
        min_prefetch_runs=prefetch.MIN_PREFETCH_RUNS,
        alone_ms_sum=round(alone, 1),
        with_spare_ms_sum=round(offered, 1),
        graphs=graphs,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_threadline_1m")
    parser.add_argument("--start-kind", choices=["DATASET", "JOB"], default="DATASET")
    parser.add_argument("--granularity", type=Granularity, default=Granularity.RUN)
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--max-nodes", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--passes", type=int, default=6)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    tune_server_gc()
    write(args, uvloop.run(run(args)))


if __name__ == "__main__":
    main()
