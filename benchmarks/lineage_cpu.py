"""Lineage service + rendering in-process, for instruction counts (callgrind) and CPU time.

    .venv/bin/python -m benchmarks.lineage_cpu [--granularity RUN] [--depth 3] [--repeat 1]

Runs `--repeat` passes over the API harness's 30 start datasets (`api.start_nodes`, seed
7) of the 40k database, no HTTP: each request's graph is built by
`server.lineage.service` on a pooled asyncpg connection and rendered to JSON. Prints CPU ms
per request. On this VM timings move by 10-30% between runs; instruction counts do not:

    for r in 1 2; do valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python -m benchmarks.lineage_cpu --repeat $r 2>&1 | grep Collected; done

(second total - first total) / 30 = instructions per request, start-up excluded. To measure
a variant, put a copy of `server/` and `shared/` first on PYTHONPATH and run from another
directory (`python -m` puts the current one before PYTHONPATH):
`cd /tmp && PYTHONPATH=<copy>:<repo> <repo>/.venv/bin/python -m benchmarks.lineage_cpu`.
"""

import argparse
import time
from typing import cast

import asyncpg
import uvloop
from pydantic import SecretStr

from benchmarks import api, env
from benchmarks.fetch_split import graph_request
from server.app import create_lineage_engine
from server.lineage import service
from server.lineage.model import Granularity
from server.lineage.render import render_json
from server.runtime import tune_server_gc
from shared.settings import DatabaseSettings


async def run(database: str, granularity: Granularity, depth: int, repeat: int) -> float:
    """CPU seconds per request over `repeat` passes of the 30 start datasets."""
    settings = DatabaseSettings(url=SecretStr(env.db_url(database)))
    engine = create_lineage_engine(settings, "lineage-cpu")  # the server's own
    try:
        # The HTTP harness's own 30 start datasets (seed 7).
        keys = await api.start_nodes(database, 30, 7, "DATASET")
        picks = [int(i) for i in await api.ids_for("threadline", database, keys, "DATASET")]
        cpu = time.process_time()
        for _ in range(repeat):
            for start in picks:
                request = graph_request(start, granularity, depth, 1_000_000)
                async with engine.connect() as conn:
                    raw = (await conn.get_raw_connection()).driver_connection
                    driver = cast(asyncpg.Connection, raw)
                    render_json(await service.get_lineage(driver, request))
        return (time.process_time() - cpu) / (30 * repeat)
    finally:
        await engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="bench_tl_40k")
    parser.add_argument("--granularity", type=Granularity, default=Granularity.RUN)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    tune_server_gc()
    # The server's event loop (server.__main__), so the counts are the server's.
    per_request = uvloop.run(run(args.database, args.granularity, args.depth, args.repeat))
    print(f"{args.granularity} depth {args.depth}: {per_request * 1000:.2f} CPU-ms per request")


if __name__ == "__main__":
    main()
