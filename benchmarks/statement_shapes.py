"""Every lineage statement shape run with no ids, as the server runs it: what each costs
before it reads a row, and a check for generic plans that read whole tables.

    .venv/bin/python -m benchmarks.statement_shapes [--database bench_threadline_1m] \\
        [--calls 100] [--passes 3] [--server-from CHECKOUT] [--out FILE]

Each shape of `server.lineage.warmup.lineage_statements()` is prepared on one connection
with the lineage engine's settings (`LINEAGE_TUNING`: generic plans), run a few times to
settle its plan, then `--calls` times per pass with the arguments under which it reads
nothing (`warmup.empty_parameters`); the median over passes of the mean per call is
reported. A shape whose plan follows its ids' indexes costs ~0.2-0.7 ms here whatever the
database's size; one that scans a table costs what the table does (before the twenty-third
set, the levels from a job frontier in one direction: 37-65 ms on the 1M-event database).
`--server-from` measures another checkout's statements (its `server/` first on the path).
"""

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg
import orjson
import uvloop


async def measure(database: str, calls: int, passes: int) -> list[dict[str, Any]]:
    # Imported here so that --server-from can put another checkout first on the path.
    from benchmarks import env
    from server.app import LINEAGE_TUNING
    from server.lineage.warmup import empty_parameters, lineage_statements

    conn = await asyncpg.connect(env.db_url(database, "postgresql"), server_settings=LINEAGE_TUNING)
    try:
        statements = lineage_statements()
        arguments = []
        for statement in statements:
            params = empty_parameters(statement)
            arguments.append([params[name] for name in statement.names])
        for statement, args in zip(statements, arguments, strict=True):
            for _ in range(8):  # the generic plan is built on the sixth execution at latest
                await conn.fetch(statement.sql, *args)
        times: list[list[float]] = [[] for _ in statements]
        for _ in range(passes):
            for i, (statement, args) in enumerate(zip(statements, arguments, strict=True)):
                began = time.perf_counter()
                for _ in range(calls):
                    await conn.fetch(statement.sql, *args)
                times[i].append((time.perf_counter() - began) / calls * 1000)
    finally:
        await conn.close()
    return [
        {"shape": i, "ms": round(statistics.median(t), 3), "sql": " ".join(s.sql.split())}
        for i, (s, t) in enumerate(zip(statements, times, strict=True))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--database", default="bench_threadline_1m")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--server-from", type=Path, help="another checkout's statements")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.server_from:
        sys.path.insert(0, str(args.server_from))
    shapes = uvloop.run(measure(args.database, args.calls, args.passes))
    for shape in shapes:
        print(f"{shape['shape']:3d} {shape['ms']:8.3f} ms  {shape['sql'][:100]}")
    total = sum(s["ms"] for s in shapes)
    print(f"{len(shapes)} shapes, {total:.2f} ms in all, slowest {max(s['ms'] for s in shapes)} ms")
    if args.out:
        result = {
            "database": args.database,
            "server_from": str(args.server_from or ""),
            "calls": args.calls,
            "passes": args.passes,
            "shapes": shapes,
        }
        args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))


if __name__ == "__main__":
    main()
