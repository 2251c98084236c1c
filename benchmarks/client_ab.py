"""What the harness's HTTP client adds: one server per system, the same lineage requests sent
through httpx and through `raw_http`'s socket, alternated request by request.

    .venv/bin/python -m benchmarks.client_ab [--passes 6] [--depth 3] [--out FILE] \\
        DATASET:DATASET DATASET:JOB JOB:JOB

Each case is START_KIND:GRANULARITY over the API harness's 30 start nodes (seed 7,
`api.start_nodes`), direction BOTH, all history, Threadline without a node cap, as
`depth3_rounds.sh` asks. Threadline runs on `bench_tl_40k`, then Data.Rentgen on
`bench_dr_40k`; within a system every request goes through both clients back to back, the
order swapped each pass, so both clients see the same minutes of the machine. Both parse the
body with `json.loads`; the harness's objects are frozen before timing (`api.py`).
"""

import argparse
import asyncio
import gc
import statistics
import sys
import time
from contextlib import AsyncExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import api, env

DATABASES = {"threadline": "bench_tl_40k", "data-rentgen": "bench_dr_40k"}
CLIENTS = ("httpx", "raw")


async def _timed(get: api.Get, path: str, params: dict[str, Any]) -> float:
    """Milliseconds for one GET through `get` (the body parsed); a non-200 is an error."""
    began = time.perf_counter()
    status, _ = await get(path, params)
    if status != 200:
        raise RuntimeError(f"{path} {params}: {status}")
    return (time.perf_counter() - began) * 1000


def _summary(latencies: dict[str, list[float]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, values in latencies.items():
        result[name] = {
            "p50_ms": round(api.percentile(values, 50), 2),
            "p95_ms": round(api.percentile(values, 95), 2),
            "mean_ms": round(statistics.fmean(values), 2),
        }
    # The same request's two times, taken back to back: what httpx adds, request by request.
    added = [a - b for a, b in zip(latencies["httpx"], latencies["raw"], strict=True)]
    result["httpx_added_median_ms"] = round(statistics.median(added), 2)
    return result


async def _case(
    server: api.Server, system: str, case: str, depth: int, passes: int
) -> dict[str, Any]:
    kind, granularity = case.split(":")
    keys = await api.start_nodes("bench_tl_40k", 30, 7, kind)
    ids = await api.ids_for(system, DATABASES[system], keys, kind)
    requests = [api.lineage_request(system, i, (depth, granularity, api.SINCE), kind) for i in ids]
    latencies: dict[str, list[float]] = {name: [] for name in CLIENTS}
    async with AsyncExitStack() as stack:
        gets = {
            name: await stack.enter_async_context(api.http_client(server, name)) for name in CLIENTS
        }
        for path, params in requests[:3]:  # warm-up
            for get in gets.values():
                await _timed(get, path, params)
        gc.collect()
        gc.freeze()
        for done in range(passes):
            order = CLIENTS if done % 2 else CLIENTS[::-1]
            for path, params in requests:
                for name in order:
                    latencies[name].append(await _timed(gets[name], path, params))
        gc.unfreeze()
    return {"system": system, "case": case, "depth": depth, **_summary(latencies)}


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    run_dir = env.RUNS_DIR / f"client-ab-{datetime.now(UTC):%Y%m%dT%H%M%S}"
    run_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for system, database in DATABASES.items():
        cap = 1_000_000 if system == "threadline" else None
        server = api.launch(system, database, run_dir, cap, None)
        try:
            server = await api.wait_ready(server, system)
            for case in args.cases:
                results.append(await _case(server, system, case, args.depth, args.passes))
                got = results[-1]
                sys.stderr.write(
                    f"{system} {case}: httpx {got['httpx']['p50_ms']} / {got['httpx']['p95_ms']}"
                    f" ms, raw {got['raw']['p50_ms']} / {got['raw']['p95_ms']} ms\n"
                )
        finally:
            api.stop(server)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--passes", type=int, default=6)
    parser.add_argument("--out", type=Path)
    parser.add_argument("cases", nargs="+", help="START_KIND:GRANULARITY")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    env.emit({"passes": args.passes, "cases": results}, args.out)


if __name__ == "__main__":
    main()
