"""Where a lineage request's time goes on the client's side, with and without its collector.

    .venv/bin/python -m benchmarks.client_split [--system threadline] [--start-kind JOB] \\
        [--granularity RUN] [--passes 8] --out benchmarks/results/client-split.json

Starts the system's server as `api.py` does. Then, for `--passes` passes over the same
seeded start nodes, it times three parts of each request:

- the time until the response's headers arrive (the server's whole work: a body is sent
  once rendered);
- reading the body;
- `json.loads` of it, the step inside `api.py`'s `response.json()`.

It also records each of the client's own garbage collections in a parse (a `gc.callbacks`
hook): the generation, and how long it took. It does this twice: first with CPython's
collector as it is, then with the harness's objects frozen (`gc.freeze()`, as `api.py
--client-gc frozen` does). Freezing cannot be undone for the objects it froze, so all the
passes of the first mode run before those of the second.
"""

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import orjson

from benchmarks import api, env

MODES = ("default", "frozen")


class Collections:
    """The collections CPython runs while `active` (generation, ms), via gc.callbacks."""

    def __init__(self) -> None:
        self.active = False
        self.found: list[tuple[int, float]] = []
        self._began = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if not self.active:
            return
        if phase == "start":
            self._began = time.perf_counter()
        else:
            self.found.append((info["generation"], (time.perf_counter() - self._began) * 1e3))


async def _request(
    client: httpx.AsyncClient, path: str, params: dict[str, Any], collections: Collections
) -> dict[str, Any]:
    began = time.perf_counter()
    async with client.stream("GET", path, params=params) as response:
        headers = time.perf_counter()
        body = await response.aread()
        read = time.perf_counter()
    collections.found.clear()
    collections.active = True
    json.loads(body)
    parsed = time.perf_counter()
    collections.active = False
    return {
        "bytes": len(body),
        "headers_ms": round((headers - began) * 1e3, 2),
        "read_ms": round((read - headers) * 1e3, 2),
        "parse_ms": round((parsed - read) * 1e3, 2),
        "collections": [(g, round(ms, 2)) for g, ms in collections.found],
    }


def summary(requests: list[dict[str, Any]]) -> dict[str, Any]:
    parse = [r["parse_ms"] for r in requests]
    total = [r["headers_ms"] + r["read_ms"] + r["parse_ms"] for r in requests]
    full = [ms for r in requests for g, ms in r["collections"] if g == 2]
    return {
        "requests": len(requests),
        "total_p50_ms": round(api.percentile(total, 50), 1),
        "total_p95_ms": round(api.percentile(total, 95), 1),
        "parse_p50_ms": round(api.percentile(parse, 50), 1),
        "parse_p95_ms": round(api.percentile(parse, 95), 1),
        "parse_max_ms": round(max(parse), 1),
        "parses_with_a_full_collection": sum(
            any(g == 2 for g, _ in r["collections"]) for r in requests
        ),
        "full_collection_ms_median": round(statistics.median(full), 1) if full else None,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    keys = await api.start_nodes(args.starts_from, args.samples, args.seed, args.start_kind)
    ids = await api.ids_for(args.system, args.database, keys, args.start_kind)
    run_dir = env.RUNS_DIR / f"client-split-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    run_dir.mkdir(parents=True, exist_ok=True)
    server = api.launch(args.system, args.database, run_dir, args.max_nodes)
    collections = Collections()
    gc.callbacks.append(collections)
    found: dict[str, list[dict[str, Any]]] = {mode: [] for mode in MODES}
    held = 0
    try:
        server = await api.wait_ready(server, args.system)
        case = (args.depth, args.granularity, args.since)
        async with httpx.AsyncClient(
            base_url=server.base_url, headers=server.headers, timeout=300
        ) as client:
            for node_id in ids[: args.warmup]:
                path, params = api.lineage_request(args.system, node_id, case, args.start_kind)
                await client.get(path, params=params)
            for mode in MODES:
                if mode == "frozen":
                    gc.collect()
                    held = len(gc.get_objects())
                    gc.freeze()
                for _ in range(args.passes):
                    for node_id in ids:
                        path, params = api.lineage_request(
                            args.system, node_id, case, args.start_kind
                        )
                        request = await _request(client, path, params, collections)
                        found[mode].append({"id": str(node_id), **request})
    finally:
        gc.callbacks.remove(collections)
        api.stop(server)
    return {
        "system": args.system,
        "database": args.database,
        "start_kind": args.start_kind,
        "granularity": args.granularity,
        "depth": args.depth,
        "passes": args.passes,
        "objects_frozen": held,
        "summary": {mode: summary(found[mode]) for mode in MODES},
        "requests": found,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--system", choices=["threadline", "data-rentgen"], default="threadline")
    parser.add_argument("--database", default="bench_tl_40k")
    parser.add_argument("--starts-from", default="bench_tl_40k")
    parser.add_argument("--start-kind", choices=sorted(api.STARTS_SQL), default="JOB")
    parser.add_argument("--granularity", default="RUN")
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--passes", type=int, default=8)
    parser.add_argument("--max-nodes", type=int, default=1_000_000)
    parser.add_argument("--since", default=api.SINCE)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    text = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    if args.out:
        args.out.write_bytes(text + b"\n")
    sys.stdout.write(orjson.dumps(result["summary"], option=orjson.OPT_INDENT_2).decode() + "\n")


if __name__ == "__main__":
    main()
