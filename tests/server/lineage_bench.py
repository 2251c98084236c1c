"""Time lineage requests on a seeded database (lineage_bench_seed.sql); not a test.

    python -m tests.server.lineage_bench postgresql+asyncpg://.../threadline_lineage_bench

Each case runs one GET /v1/lineage per start dataset through the whole app (validation,
SQL, assembly, JSON) and prints p50 / p95 / max in milliseconds with the graph sizes.
"""

import asyncio
import statistics
import sys
import time
from typing import Any

import httpx
from pydantic import SecretStr

from server.app import create_app
from server.settings import ServerOptions, ServerSettings
from shared.settings import DatabaseSettings

CASES = [
    (granularity, depth, window)
    for window in (None, ("2024-06-01T00:00:00Z", "2024-06-08T00:00:00Z"))
    for granularity in ("RUN", "DATASET", "JOB")
    for depth in (1, 3, 5)
]
# Lineage datasets of layers 0-4 (ids 1..250) have up- and downstream lineage.
STARTS = list(range(3, 250, 5))


async def _case(client: httpx.AsyncClient, granularity: str, depth: int, window: Any) -> str:
    timings, sizes, truncated = [], [], 0
    for start in STARTS:
        params: dict[str, Any] = {
            "start_node_type": "DATASET",
            "start_node_id": start,
            "direction": "BOTH",
            "depth": depth,
            "granularity": granularity,
        }
        if window:
            params["since"], params["until"] = window
        began = time.perf_counter()
        response = await client.get("/v1/lineage", params=params)
        timings.append((time.perf_counter() - began) * 1000)
        body = response.json()
        sizes.append(sum(len(v) for v in body["nodes"].values()))
        truncated += body["truncated"]
    p95 = statistics.quantiles(timings, n=20)[18]
    return (
        f"{granularity:8} depth {depth} {'week' if window else 'year'}: "
        f"p50 {statistics.median(timings):6.1f} p95 {p95:6.1f} max {max(timings):6.1f} ms; "
        f"nodes median {statistics.median(sizes):5.0f} max {max(sizes):5d}; "
        f"truncated {truncated}/{len(STARTS)}\n"
    )


async def main(url: str) -> None:
    settings = ServerSettings(
        database=DatabaseSettings(url=SecretStr(url)),
        server=ServerOptions(max_lineage_depth=50),
    )
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        await _case(client, "RUN", 3, None)  # warm the pool and the plan caches
        for case in CASES:
            sys.stdout.write(await _case(client, *case))
    await app.state.databases.dispose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
