"""DATASET levels from a dataset-to-dataset edge table instead of the input/output join.

    .venv/bin/python -m benchmarks.edge_table_probe [--database bench_tl_40k] [--depth 3] \\
        [--samples 30] [--repeat 11] --out benchmarks/results/edge-table-probe.json

A prototype's measurement, not a product path (benchmarks/README.md, thirty-seventh set).
A scratch table is built in `--database` from `input` joined to `output` (one row per
operation's input and output pair, with both sides' times and schemas and the output's
counters), with an index per direction that holds every column a level reads. For each of
the API harness's first `--samples` start datasets (seed 7, all history, no node cap) the
DATASET graph is built in process as the server builds it, recording its statements; each
dataset level (the start's and the later ones) is then fetched `--repeat` times (median)
as the server runs it and as the same statement over the edge table, alternated, and both
forms' rows are compared. The table is dropped at the end. What it leaves out: the write
path's cost of keeping such a table, which every change to an operation's inputs or
outputs would have to recompute.
"""

import argparse
import statistics
import time
from typing import Any, cast

import asyncpg
import uvloop

from benchmarks import env
from benchmarks.fetch_split import (
    envelope,
    graph_parser,
    graph_request,
    lineage_connection,
    start_datasets,
    write,
)
from server.lineage import queries, service
from server.lineage.model import Granularity
from server.lineage.sql import Statement, fetch
from server.runtime import tune_server_gc

_BUILD = (
    """CREATE TABLE probe_dataset_edge AS
    SELECT i.created_at, i.operation_id, i.dataset_id AS source_dataset_id,
           o.dataset_id AS target_dataset_id, o.num_rows, o.num_bytes, o.num_files, o.types,
           i.last_event_time AS source_seen_at, o.last_event_time AS target_seen_at,
           i.schema_id AS source_schema_id, o.schema_id AS target_schema_id
    FROM input AS i JOIN output AS o
      ON o.operation_id = i.operation_id AND o.created_at = i.created_at""",
    """CREATE INDEX ON probe_dataset_edge (source_dataset_id, source_seen_at) INCLUDE (created_at,
    target_dataset_id, num_rows, num_bytes, num_files, types, target_seen_at,
    source_schema_id, target_schema_id)""",
    """CREATE INDEX ON probe_dataset_edge (target_dataset_id, target_seen_at) INCLUDE (created_at,
    source_dataset_id, num_rows, num_bytes, num_files, types, source_seen_at,
    source_schema_id, target_schema_id)""",
    "VACUUM ANALYZE probe_dataset_edge",
)
# `queries._DATASET_LEVEL`'s columns and filters, over the table: the frontier's side is
# the near one, both sides' times are the rows' own.
_LEVEL = """
SELECT '{dir}' AS dir, source_dataset_id AS source_id, target_dataset_id AS target_id,
       sum(num_rows)::bigint AS num_rows, sum(num_bytes)::bigint AS num_bytes,
       sum(num_files)::bigint AS num_files, bit_or(types) AS types,
       min(created_at) AS first_seen_at, max(target_seen_at) AS last_seen_at,
       (array_agg(source_schema_id ORDER BY source_seen_at DESC)
            FILTER (WHERE source_schema_id IS NOT NULL))[1] AS source_schema_id,
       (array_agg(target_schema_id ORDER BY target_seen_at DESC)
            FILTER (WHERE target_schema_id IS NOT NULL))[1] AS target_schema_id
FROM probe_dataset_edge
WHERE {near}_dataset_id = ANY({frontier}) AND created_at <= :until
  AND {near}_seen_at >= :since AND {far}_seen_at >= :since
GROUP BY source_dataset_id, target_dataset_id
"""
_SIDES = {queries.DOWN: ("source", "target"), queries.UP: ("target", "source")}


def edge_statement(directions: tuple[str, ...], *, from_start: bool) -> Statement:
    """`queries.dataset_level_statement` over the edge table."""
    parts = []
    for direction in directions:
        near, far = _SIDES[direction]
        frontier = queries._frontier(direction, from_start=from_start)
        parts.append(_LEVEL.format(dir=direction, near=near, far=far, frontier=frontier))
    reached = f"CASE dir WHEN '{queries.DOWN}' THEN target_id ELSE source_id END"
    return queries._with_symlinks(" UNION ALL ".join(parts), reached, from_start=from_start)


class Levels:
    """Stands in for the connection: keeps each dataset level's statement and arguments."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn
        self.found: list[tuple[str, tuple[Any, ...]]] = []

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        if "CROSS JOIN LATERAL (\n    SELECT * FROM" in sql:  # _DATASET_LEVEL's join
            self.found.append((sql, args))
        return await self.conn.fetch(sql, *args)


def _shape(sql: str) -> tuple[tuple[str, ...], bool]:
    directions = tuple(d for d in (queries.DOWN, queries.UP) if f"'{d}' AS dir" in sql)
    return directions, "start_reach" in sql


async def _median_ms(conn: asyncpg.Connection, sql: str, args: tuple[Any, ...], n: int) -> float:
    times = []
    for _ in range(n):
        began = time.perf_counter()
        await conn.fetch(sql, *args)
        times.append((time.perf_counter() - began) * 1000)
    return statistics.median(times)


async def _graph(conn: asyncpg.Connection, start: int, args: argparse.Namespace) -> dict[str, Any]:
    levels = Levels(conn)
    request = graph_request(start, Granularity.DATASET, args.depth, args.max_nodes)
    await service.get_lineage(cast(Any, levels), request)
    found = []
    for sql, params in levels.found:
        directions, from_start = _shape(sql)
        server = queries.dataset_level_statement(directions, from_start=from_start)
        if server.sql != sql:
            raise RuntimeError(f"not a dataset level the probe knows: {sql[:80]}")
        edge = edge_statement(directions, from_start=from_start)
        named = dict(zip(server.names, params, strict=True))
        edge_args = tuple(named[name] for name in edge.names)
        same = sorted(map(repr, map(tuple, await conn.fetch(sql, *params)))) == sorted(
            map(repr, map(tuple, await fetch(conn, edge, **named)))
        )
        join_ms = edge_ms = 0.0
        for _ in range(2):  # alternated: both forms on the same minutes
            join_ms += await _median_ms(conn, sql, params, args.repeat) / 2
            edge_ms += await _median_ms(conn, edge.sql, edge_args, args.repeat) / 2
        found.append(
            {"from_start": from_start, "same_rows": same, "join_ms": join_ms, "edge_ms": edge_ms}
        )
    total = {k: round(sum(f[k] for f in found), 3) for k in ("join_ms", "edge_ms")}
    return {"start_id": start, "levels": found, **total}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    ids = await start_datasets(args.database, args.samples)
    owner = await env.connect(args.database)  # the lineage engine connects read-only
    try:
        for sql in _BUILD:
            await owner.execute(sql)
        async with lineage_connection(args.database, "edge-table-probe") as conn:
            graphs = []
            for start in ids:
                graphs.append(await _graph(conn, start, args))
                g = graphs[-1]
                print(f"dataset {start}: levels {g['join_ms']} -> {g['edge_ms']} ms")
    finally:
        await owner.execute("DROP TABLE IF EXISTS probe_dataset_edge")
        await owner.close()
    return envelope(args, graphs=graphs)


def main() -> None:
    parser = graph_parser(__doc__.splitlines()[0])
    parser.set_defaults(database="bench_tl_40k", granularity=Granularity.DATASET, depth=3)
    parser.set_defaults(max_nodes=1_000_000, samples=30)
    parser.add_argument("--repeat", type=int, default=11)
    args = parser.parse_args()
    tune_server_gc()
    write(args, uvloop.run(run(args)))


if __name__ == "__main__":
    main()
