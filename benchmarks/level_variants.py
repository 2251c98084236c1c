"""A large graph's level from runs, as the server runs it and in three variants.

    .venv/bin/python -m benchmarks.level_variants [--database bench_threadline_1m] \\
        [--depth 5] [--max-nodes 2000] [--samples 10] [--repeat 11] \\
        --out benchmarks/results/level-variants.json

For each of the API harness's first `--samples` start datasets (seed 7, all history), the
capped RUN graph (`--depth`, `--max-nodes`: 5 and the production cap, 2,000 nodes) is
built in process as the server builds it, recording its statements. Each statement whose
frontier is runs (the level from runs: `run_id = ANY(...)` on `output` and `input`) is then
fetched `--repeat` times (median) on a connection of the server's lineage engine, in these
forms:

- `server`: as the server runs it: the level materialised, limited, and stacked with the
  symlink closure of the datasets it reached;
- `plain`: the server's level alone (its two selects, window and row limit, taken from
  its statement): what the symlink closure and the materialised CTE cost;
- `routed`: the same selects, each run looked up only in the partition of `input` and
  `output` that holds its run row (`tableoid` of `run`: its created_at's quarter), one
  select per partition naming it. A prototype of what a time bound per run would save:
  the write path does not guarantee that a run's I/O rows share its partition (an
  operation's created_at is its own), so `rows` is reported for each form;
- `plain, binary times`: `plain` on a connection that decodes timestamptz from PostgreSQL's
  binary form to integer microseconds (asyncpg's tuple codec), no datetime made. Until the
  thirty-fourth session the lineage engine decoded PostgreSQL's text into datetimes, and
  this measured what the times cost to produce and decode; it now decodes the same binary
  form into datetimes natively, so this measures what making the datetimes costs.
"""

import argparse
import operator
import re
import statistics
import time
from datetime import timedelta
from typing import Any, cast

import asyncpg
import uvloop

from benchmarks import env
from benchmarks.fetch_split import (
    Recording,
    envelope,
    graph_parser,
    graph_request,
    lineage_connection,
    start_datasets,
    write,
)
from server.app import LINEAGE_TUNING
from server.lineage import service
from server.lineage.model import Granularity
from server.lineage.sql import PG_EPOCH, TEXT_TIMES
from server.runtime import tune_server_gc

# The routed prototype's select (the server's own row-by-row select, `queries._IO_ROWS`, on
# one partition): names from the constants below and the catalogue; values are bound.
_ROUTED = (
    "SELECT '{direction}' AS dir, dataset_id, run_id AS process_id, num_rows, num_bytes, "
    "num_files, {types} AS types, created_at AS first_seen_at, last_event_time AS last_seen_at, "
    "schema_id FROM {table} WHERE run_id = ANY(${ids}) AND created_at <= $1 "
    "AND last_event_time >= $2"
)
RUN = Granularity.RUN
_SIDES = (  # (direction, table, types): the level from runs' two selects, as the server's
    ("down", "output", "types"),
    ("up", "input", "NULL::integer"),
)
# The server's statement for such a level: its level, materialised, then the closure.
_LEVEL = re.compile(r"level AS MATERIALIZED \((?P<level>.*?)\n\), \nreach", re.DOTALL)


def plain_level(server_sql: str) -> str:
    """The server's level alone (its own selects, window and row limit, `$5`): without the
    symlink closure and the materialised CTE it is stacked on."""
    found = _LEVEL.search(server_sql)
    if found is None:
        raise ValueError("not a level from runs with its symlink closure")
    return f"SELECT * FROM ({found['level']}) AS level LIMIT $5"  # noqa: S608 - the server's


async def routed_level(conn: asyncpg.Connection, args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """One select per partition of each side, with the runs whose run row is in it (the
    server's arguments: down, until, since, up, limit)."""
    down, until, since, up, limit = args
    rows = await conn.fetch(
        "SELECT id, tableoid::regclass::text FROM run WHERE id = ANY($1)", [*down, *up]
    )
    partition = {row[0]: row[1].removeprefix("run_") for row in rows}
    selects: list[str] = []
    params: list[Any] = [until, since]
    for (direction, table, types), ids in zip(_SIDES, (down, up), strict=True):
        for suffix in sorted({partition[i] for i in ids if i in partition}):
            params.append([i for i in ids if partition.get(i) == suffix])
            where = {"table": f"{table}_{suffix}", "ids": len(params)}
            selects.append(_ROUTED.format(direction=direction, types=types, **where))
    params.append(limit)
    union = " UNION ALL ".join(selects)
    sql = f"SELECT * FROM ({union}) AS level LIMIT ${len(params)}"  # noqa: S608 - _ROUTED
    return sql, params


async def timed(conn: asyncpg.Connection, sql: str, args: list[Any], repeat: int) -> dict[str, Any]:
    """Median fetch ms of `repeat` runs (after one not timed) and the rows fetched."""
    rows = await conn.fetch(sql, *args)
    spent = []
    for _ in range(repeat):
        began = time.perf_counter()
        rows = await conn.fetch(sql, *args)
        spent.append((time.perf_counter() - began) * 1000)
    return {"fetch_ms": round(statistics.median(spent), 2), "rows": len(rows)}


async def binary_times_connection(database: str) -> asyncpg.Connection:
    """The lineage engine's settings, timestamptz as binary microseconds (not text)."""
    tuning = {k: v for k, v in LINEAGE_TUNING.items() if k not in TEXT_TIMES}
    conn = await asyncpg.connect(env.db_url(database, "postgresql"), server_settings=tuning)
    await conn.set_type_codec(
        "timestamptz",
        schema="pg_catalog",
        encoder=lambda at: ((at - PG_EPOCH) // timedelta(microseconds=1),),
        decoder=operator.itemgetter(0),
        format="tuple",
    )
    return conn


def _from_runs(sql: str, args: tuple[Any, ...]) -> bool:
    """A level from runs in both directions, row by row (not the aggregated retry)."""
    return "FROM output\nWHERE run_id = ANY(" in sql and "GROUP BY" not in sql and len(args) == 5


async def variants(
    conn: asyncpg.Connection,
    binary: asyncpg.Connection,
    sql: str,
    args: tuple[Any, ...],
    repeat: int,
) -> dict[str, Any]:
    """Every form of one level from runs, with the server's arguments."""
    routed, routed_args = await routed_level(conn, args)
    return {
        "runs": len(args[0]) + len(args[3]),
        "server": await timed(conn, sql, list(args), repeat),
        "plain": await timed(conn, plain_level(sql), list(args), repeat),
        "routed": await timed(conn, routed, routed_args, repeat),
        "plain, binary times": await timed(binary, plain_level(sql), list(args), repeat),
    }


def _forms(level: dict[str, Any]) -> str:
    found = (f"{k} {v['fetch_ms']} ms ({v['rows']} rows)" for k, v in level.items() if k != "runs")
    return f"{level['runs']} runs: " + ", ".join(found)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ids = await start_datasets(args.database, args.samples)
    binary = await binary_times_connection(args.database)
    levels = []
    try:
        async with lineage_connection(args.database, "level-variants") as conn:
            for start in ids:
                recording = Recording(conn)
                request = graph_request(start, RUN, args.depth, args.max_nodes)
                await service.get_lineage(cast(Any, recording), request)
                for sql, sql_args in recording.statements:
                    if _from_runs(sql, sql_args):
                        level = await variants(conn, binary, sql, sql_args, args.repeat)
                        levels.append({"start_id": start, **level})
                        print(f"dataset {start}: {_forms(level)}")
    finally:
        await binary.close()
    return envelope(args, repeat=args.repeat, levels=levels)


def main() -> None:
    parser = graph_parser(__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    if args.granularity is not Granularity.RUN:
        parser.error("--granularity: RUN only (the level from runs is what varies)")
    tune_server_gc()
    write(args, uvloop.run(run(args)))


if __name__ == "__main__":
    main()
