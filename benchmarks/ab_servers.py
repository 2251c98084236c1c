"""Two Threadline servers side by side, the same lineage requests alternated between them
request by request: an A/B of two checkouts' read paths through HTTP on one drifting VM.

    .venv/bin/python -m benchmarks.ab_servers --baseline /tmp/tl-base \\
        --database bench_threadline_1m --depth 5 --passes 3 \\
        JOB:RUN:DOWNSTREAM JOB:RUN:BOTH DATASET:DATASET:BOTH [--out FILE] [--column-lineage]

Each case is START_KIND:GRANULARITY:DIRECTION over the API harness's 30 start nodes (seed 7,
`api.start_nodes`), all history (`api.SINCE`), the servers' default node cap. Per pass every
start node is asked of both servers, the order swapped each pass, so both see the same
minutes of the machine; `api.py --server-from` runs them one after the other instead, and
this VM's speed drifts by 20-30% within minutes. `--baseline` is another checkout (its
`server/` first on the path, this tree's environment and native module: see the README's
"How to rerun" for a checkout whose native module differs). `--baseline-database` has the
baseline server read another database instead, a copy of `--database` with another schema
(the same ids: the start nodes are looked up in `--database`); either or both may be given.
`--column-lineage` asks both for column lineage too. Each case also counts the first pass's
requests whose bodies differ between the two servers (`bodies_differ`): a change that must
keep the answers (a new schema, a new read path) is checked on the same requests. Each start
node's median per server (`median_ms_per_start`) shows which graphs a change moves.
"""

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks import api, env


async def _case(
    clients: dict[str, httpx.AsyncClient],
    database: str,
    case: str,
    depth: int,
    passes: int,
    *,
    columns: bool,
) -> dict[str, Any]:
    kind, granularity, direction = case.split(":")
    keys = await api.start_nodes(database, 30, 7, kind)
    ids = await api.ids_for("threadline", database, keys, kind)
    requests = [
        api.lineage_request(
            "threadline",
            node,
            (depth, granularity, api.SINCE),
            kind,
            direction=direction,
            columns=columns,
        )
        for node in ids
    ]
    for client in clients.values():  # warm-up
        for path, params in requests[:3]:
            await client.get(path, params=params)
    gc.collect()
    gc.freeze()  # the harness's own objects out of the collector's way (api.py, eighteenth set)
    latencies: dict[str, list[float]] = {name: [] for name in clients}
    per_start: dict[str, dict[str, list[float]]] = {str(n): {c: [] for c in clients} for n in ids}
    order = list(clients)
    differ = 0  # requests whose bodies differ between the servers (first pass)
    for done in range(passes):
        for node, (path, params) in zip(ids, requests, strict=True):
            bodies = []
            for name in order if done % 2 else reversed(order):
                began = time.perf_counter()
                response = await clients[name].get(path, params=params)
                response.raise_for_status()
                bodies.append(response.json())
                latencies[name].append((time.perf_counter() - began) * 1000)
                per_start[str(node)][name].append(latencies[name][-1])
            if done == 0 and bodies[0] != bodies[1]:
                differ += 1
    gc.unfreeze()
    result: dict[str, Any] = {
        "case": case,
        "depth": depth,
        "requests": len(requests) * passes,
        "bodies_differ": differ,
    }
    for name, values in latencies.items():
        result[name] = {
            "p50_ms": round(api.percentile(values, 50), 1),
            "p95_ms": round(api.percentile(values, 95), 1),
        }
    # Each start node's median per server: which graphs a change moves, and by how much.
    result["median_ms_per_start"] = {
        node: {name: round(statistics.median(values), 1) for name, values in times.items()}
        for node, times in per_start.items()
    }
    return result


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    run_dir = env.RUNS_DIR / f"ab-servers-{int(time.time())}"
    run_dir.mkdir(parents=True, exist_ok=True)
    servers = {
        "baseline": api.launch(
            "threadline", args.baseline_database or args.database, run_dir, None, args.baseline
        ),
        "this": api.launch("threadline", args.database, run_dir, None),
    }
    try:
        for server in servers.values():
            await api.wait_ready(server, "threadline")
        clients = {
            name: httpx.AsyncClient(base_url=server.base_url, timeout=300)
            for name, server in servers.items()
        }
        results = []
        for case in args.cases:
            results.append(
                await _case(
                    clients,
                    args.database,
                    case,
                    args.depth,
                    args.passes,
                    columns=args.column_lineage,
                )
            )
            got = results[-1]
            sys.stderr.write(
                f"{case} depth {args.depth}: p50 / p95 baseline {got['baseline']['p50_ms']} /"
                f" {got['baseline']['p95_ms']} ms, this {got['this']['p50_ms']} /"
                f" {got['this']['p95_ms']} ms; bodies differ {got['bodies_differ']}\n"
            )
        for client in clients.values():
            await client.aclose()
        return results
    finally:
        for server in servers.values():
            api.stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, help="the other checkout (default: this one)")
    parser.add_argument("--database", default="bench_tl_40k")
    parser.add_argument("--baseline-database", help="the baseline's database (default: --database)")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--column-lineage", action="store_true", help="ask both for column lineage too"
    )
    parser.add_argument("cases", nargs="+", help="START_KIND:GRANULARITY:DIRECTION")
    args = parser.parse_args()
    if args.baseline is None and args.baseline_database is None:
        parser.error("give --baseline, --baseline-database or both")
    results = asyncio.run(run(args))
    document = {
        "database": args.database,
        "baseline": str(args.baseline or "this checkout"),
        "baseline_database": args.baseline_database or args.database,
        "passes": args.passes,
        "column_lineage": args.column_lineage,
        "cases": results,
    }
    env.emit(document, args.out)


if __name__ == "__main__":
    main()
