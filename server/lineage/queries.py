"""All SQL of the lineage graph: one expansion query per level, then bulk node loaders.

Expansion statements are built once per shape from SQL templates (identifiers come
from a closed set of tables and columns, values are always bound parameters) and cached. Every
statement filters by frontier arrays (`= ANY(:ids)`), so one round trip serves a level
however wide it is.
"""

from dataclasses import dataclass
from functools import cache
from typing import Any

from server.lineage.grouping import group_io_rows
from server.lineage.model import NodeId, NodeKind, TimeWindow
from server.lineage.node_queries import symlink_closure_ctes
from server.lineage.sql import Connection, Record, Statement, fetch
from shared.models import expand_column_sets

# The column of input/output/column_lineage naming each process level.
PROCESS_COLUMN = {
    NodeKind.OPERATION: "operation_id",
    NodeKind.RUN: "run_id",
    NodeKind.JOB: "job_id",
}
PROCESS_COLUMNS = frozenset(PROCESS_COLUMN.values())
UUID_PROCESS_COLUMNS = frozenset({PROCESS_COLUMN[NodeKind.OPERATION], PROCESS_COLUMN[NodeKind.RUN]})
DOWN, UP = "down", "up"  # also the names of the frontier parameters


@dataclass(frozen=True, slots=True)
class IOPart:
    """One side of a level: rows of `table` whose `where` column is in the frontier."""

    table: str  # "input" or "output"
    direction: str  # DOWN or UP: also the bound frontier parameter
    where: str  # dataset_id or a process column
    group: str  # the process column of the requested granularity


# One side of an I/O level: the frontier's rows of one table aggregated per (dataset,
# process). sum(bigint) is numeric in PostgreSQL; counters fit bigint, and callers want ints.
_IO_AGGREGATE = """
SELECT '{dir}' AS dir, dataset_id, {group} AS process_id,
       sum(num_rows)::bigint AS num_rows, sum(num_bytes)::bigint AS num_bytes,
       sum(num_files)::bigint AS num_files, {types} AS types,
       min(created_at) AS first_seen_at, max(last_event_time) AS last_seen_at, {schema}
FROM {table}
WHERE {where} = ANY({frontier}) AND created_at <= :until AND last_event_time >= :since{pairs}
GROUP BY dataset_id, {group}
"""
# The schema of the group's most recent row that has one (equal times: the greater id), as a
# plain aggregate: the greatest [time in microseconds, schema id]. Runs and operations have
# one or a few rows per (dataset, process), and an ordered aggregate (`array_agg(... ORDER
# BY ...)[1]`) set up a sort for each group: on the 40k benchmark database the level
# statements take 4-8% less this way, the responses byte-identical. (The dataset level's
# groups, ~17 rows each, were 4% slower with it: it keeps its ordered aggregates.)
_SCHEMA_BY_MAX = (
    "(max(ARRAY[(extract(epoch FROM last_event_time) * 1000000)::bigint, schema_id])"
    " FILTER (WHERE schema_id IS NOT NULL))[2] AS schema_id"
)
# A job has a row per run, hundreds over its history: ordering them all (and spilling the
# sort to disk) cost twice the scan. Instead the group keeps the time of its latest
# schema and one index probe per group fetches it; the probe's created_at bounds are the
# group's own (a fact, not an assumption) and prune it to the group's partitions.
_SCHEMA_BY_PROBE = (
    "max(last_event_time) FILTER (WHERE schema_id IS NOT NULL) AS schema_seen_at,"
    " max(created_at) AS last_created_at"
)
_IO_PROBED = """
SELECT g.dir, g.dataset_id, g.process_id, g.num_rows, g.num_bytes, g.num_files, g.types,
       g.first_seen_at, g.last_seen_at,
       (SELECT max(x.schema_id) FROM {table} AS x
        WHERE x.dataset_id = g.dataset_id AND x.{group} = g.process_id
          AND x.last_event_time = g.schema_seen_at AND x.schema_id IS NOT NULL
          AND x.created_at BETWEEN g.first_seen_at AND g.last_created_at) AS schema_id
FROM ({aggregate}) AS g
"""


# The same side's rows one by one, in the aggregate's columns, for the granularities whose
# groups are nearly all of one row: an operation has one row per dataset (the primary key),
# a run one per operation that read or wrote it. `grouping.group_io_rows` then groups them
# as the aggregate does. On the 1M-event benchmark database PostgreSQL's grouping was a
# quarter to a half of such a level's time: a capped depth-5 RUN graph's three levels took
# 6.8 / 28.2 / 13.9 ms aggregated and 4.2 / 20.9 / 6.6 ms row by row (the same groups;
# benchmarks/README.md, twenty-ninth set).
_IO_ROWS = """
SELECT '{dir}' AS dir, dataset_id, {group} AS process_id, num_rows, num_bytes, num_files,
       {types} AS types, created_at AS first_seen_at, last_event_time AS last_seen_at, schema_id
FROM {table}
WHERE {where} = ANY({frontier}) AND created_at <= :until AND last_event_time >= :since
"""
# The process columns whose levels come row by row (`list_io_level`): a job's groups hold
# a row per run, hundreds, and stay aggregated in SQL.
ROW_BY_ROW = frozenset({PROCESS_COLUMN[NodeKind.OPERATION], PROCESS_COLUMN[NodeKind.RUN]})


# JOB granularity reads the summaries of job_edge (migration 0013): one row per (dataset,
# job, direction) where the level summed a row per run, hundreds for a daily job. A summary
# answers for its pair when no row of the pair falls outside the window (its bounds inside
# it) and it is not stale; the other pairs of the frontier are summed from their rows as
# before. On the 1M-event benchmark database at depth 5, JOB graphs from datasets answered in
# 14.6 ms p95 against 76.1 (from jobs 21.7 against 74.4); at depth 3 on 40k events, 6.6
# against 7.0 ms (benchmarks/README.md, forty-first set).
# _SUMMARIES: a level's summaries (`table`: job_edge or dataset_edge) in the frontier that
# cover the window, then the level's rows' form (`rows`) for the pairs that are not covered,
# which reads its frontier and pairs from `uncovered`. That is nearly always empty: the
# rows' part then reads nothing (an empty array).
_SUMMARIES = """(
WITH e AS (
  SELECT * FROM {table} WHERE {near} = ANY({frontier}){only}
), uncovered AS (
  SELECT {keys} FROM e
  WHERE e.stale OR e.last_created_at > :until OR e.earliest_seen_at < :since
)
SELECT '{dir}' AS dir, {columns},
       CASE WHEN rows_known > 0 THEN num_rows END AS num_rows,
       CASE WHEN bytes_known > 0 THEN num_bytes END AS num_bytes,
       CASE WHEN files_known > 0 THEN num_files END AS num_files,
       types, first_seen_at, last_seen_at, {schemas}
FROM e WHERE NOT e.stale AND e.last_created_at <= :until AND e.earliest_seen_at >= :since
UNION ALL
{rows}
)"""
_UNCOVERED_FRONTIER = "ARRAY(SELECT {where} FROM uncovered)"
_UNCOVERED_PAIRS = "\n  AND (dataset_id, job_id) IN (SELECT dataset_id, job_id FROM uncovered)"
_DIRECTION_CODE = {"input": 0, "output": 1}  # shared.enums.IODirection
_JOB_EDGE_KEYS = frozenset({"dataset_id", PROCESS_COLUMN[NodeKind.JOB]})


def _io_select(part: IOPart, frontier: str, *, grouped: bool) -> str:
    if part.table not in ("input", "output"):
        raise ValueError(f"not a lineage table: {part}")
    if part.where not in PROCESS_COLUMNS | {"dataset_id"} or part.group not in PROCESS_COLUMNS:
        raise ValueError(f"not a lineage column: {part}")
    if part.direction not in (DOWN, UP):
        raise ValueError(f"not a direction: {part}")
    if not grouped and part.group not in ROW_BY_ROW:
        raise ValueError(f"not a row-by-row level: {part}")
    probed = part.group == PROCESS_COLUMN[NodeKind.JOB]
    # From datasets or jobs; a level from a start run or operation sums that process's rows.
    summarised = probed and part.where in _JOB_EDGE_KEYS
    types = ("bit_or(types)" if grouped else "types") if part.table == "output" else "NULL::integer"
    aggregate = (_IO_AGGREGATE if grouped else _IO_ROWS).format(
        dir=part.direction,
        frontier=_UNCOVERED_FRONTIER.format(where=part.where) if summarised else frontier,
        group=part.group,
        types=types,
        schema=_SCHEMA_BY_PROBE if probed else _SCHEMA_BY_MAX,
        table=part.table,
        where=part.where,
        pairs=_UNCOVERED_PAIRS if summarised else "",
    )
    if not probed:
        return aggregate
    rows = _IO_PROBED.format(table=part.table, group=part.group, aggregate=aggregate)
    if not summarised:
        return rows
    return _SUMMARIES.format(
        table="job_edge",
        near=part.where,
        frontier=frontier,
        only=f" AND direction = {_DIRECTION_CODE[part.table]}",
        keys="dataset_id, job_id",
        dir=part.direction,
        columns="dataset_id, job_id AS process_id",
        schemas="schema_id",
        rows=rows,
    )


# A level that reaches datasets brings their symlink closure in the same round trip: its
# own rows, then one row per symlink (FULL JOIN ... ON false stacks the two, each with its
# own columns and types, NULL in the other's). `dir` is NULL exactly on the symlink rows.
# The row limit applies outside the level's CTE. Inside it, the planner took the limit, a
# bound parameter, to keep 10% of the rows and chose plans that return the first rows
# soonest: from a job frontier, the whole input or output table read in dataset order,
# 37-80 ms for every level on the 1M-event benchmark database against ~0.3 through the
# job index (benchmarks/README.md, twenty-third set). The closure is then of all the
# level's datasets, more than the limited rows reach only for a level that the limit cut:
# the service admits the symlinks of the datasets it keeps, and flags the graph truncated.
_WITH_SYMLINKS = """
WITH RECURSIVE level AS MATERIALIZED ({level}), {ctes}
SELECT level.*, links.* FROM (SELECT * FROM level LIMIT :row_limit) AS level
FULL JOIN links ON false
"""
# An array's elements, not the level's rows: PostgreSQL sizes the closure's hash table
# (UNION) by its row estimate, ~100x the seeds' estimate. The level's, from the tables'
# statistics, came to 144,329 rows on the 1M-event benchmark database: a few MB cleared on
# every execution, ~20% of an empty level's time. unnest() of a subquery's array is
# estimated at 10 rows, and the table grows as it must.
_LEVEL_SEEDS = "SELECT unnest(ARRAY(SELECT {reached} FROM level))"
# The first level from start datasets also brings the start's symlink closure, and expands
# all of it: the service uses the rows only if that is the frontier the start's symlinks
# give it (one round trip less per request; otherwise it fetches the level again).
_FROM_START = """
WITH RECURSIVE {ctes}
SELECT level.*, links.* FROM (SELECT * FROM level LIMIT :row_limit) AS level
FULL JOIN {links} AS links ON false
"""
_START_SEEDS = "SELECT unnest(CAST(:start AS bigint[]))"
# An array (computed once, then an index condition like a bound one), not `= ANY
# (subquery)`, which the planner may turn into a join.
_START_FRONTIER_IDS = "ARRAY(SELECT id FROM start_reach)"


def _frontier(direction: str, *, from_start: bool) -> str:
    return _START_FRONTIER_IDS if from_start else f":{direction}"


@dataclass(frozen=True, slots=True)
class LevelRows:
    """A level's rows and the symlinks (from_dataset_id, to_dataset_id, type) reachable
    from the datasets it reached (and from the start datasets, if it started there)."""

    rows: list[Record]
    symlinks: list[Record]


def _with_symlinks(
    level: str, reached: str | None, *, from_start: bool, uuids: tuple[int, ...] = ()
) -> Statement:
    """`level`, limited to `:row_limit` rows, with the symlink closures it brings: of the
    datasets it reached (`reached` selects them from `level`; None: it reaches processes)
    and of the start datasets; `uuids` as `Statement.named`'s."""
    reached_ctes = reached and symlink_closure_ctes(_LEVEL_SEEDS.format(reached=reached))
    if not from_start:
        if reached_ctes is None:
            # A plain statement from a dataset frontier: its first-rows plans follow the
            # frontier's own index (dataset_id), and the limit stays where it was.
            return Statement.named(f"{level} LIMIT :row_limit", uuids)
        return Statement.named(_WITH_SYMLINKS.format(level=level, ctes=reached_ctes), uuids)
    ctes = [
        symlink_closure_ctes(_START_SEEDS, prefix="start_"),
        f"level AS MATERIALIZED ({level})",
    ]
    links = "start_links"
    if reached_ctes is not None:
        ctes.append(reached_ctes)
        links = "(SELECT * FROM start_links UNION SELECT * FROM links)"
    return Statement.named(_FROM_START.format(ctes=", ".join(ctes), links=links), uuids)


@cache
def io_level_statement(
    parts: tuple[IOPart, ...], *, from_start: bool = False, grouped: bool = True
) -> Statement:
    """Inputs/outputs of a frontier aggregated per (dataset, process); one part per direction.

    From processes, the level reaches datasets: their symlinks come with it. `from_start`:
    the frontier is the symlink closure of the `start` datasets, which comes with it. Not
    `grouped`: the rows one by one (`ROW_BY_ROW` processes only)."""
    # No ORDER BY: the service orders what it keeps; the LIMIT only bounds a runaway level.
    selects = (
        _io_select(p, _frontier(p.direction, from_start=from_start), grouped=grouped) for p in parts
    )
    level = " UNION ALL ".join(selects)
    reaches_datasets = not all(p.where == "dataset_id" for p in parts)
    # Run and operation ids (process_id, the third column) are UUIDs; a job's are integers.
    uuids = (2,) if all(p.group in UUID_PROCESS_COLUMNS for p in parts) else ()
    reached = "dataset_id" if reaches_datasets else None
    return _with_symlinks(level, reached, from_start=from_start, uuids=uuids)


# Dataset -> dataset through one operation. Inputs and outputs of an operation share its
# created_at (the consumer writes both from the operation), so the other side is a primary
# key lookup in one partition. OFFSET 0 keeps the LATERAL a per-row nested loop: joined
# freely, the planner may hash a whole table instead. Each side's schema is its latest row's
# (equal times: the greater id, as dataset_edge keeps it).
_DATASET_SIDES = {
    DOWN: ("i", "o", "input", "output"),  # frontier side alias, other side, their tables
    UP: ("o", "i", "output", "input"),
}
_DATASET_LEVEL = """
SELECT '{dir}' AS dir, i.dataset_id AS source_id, o.dataset_id AS target_id,
       sum(o.num_rows)::bigint AS num_rows, sum(o.num_bytes)::bigint AS num_bytes,
       sum(o.num_files)::bigint AS num_files, bit_or(o.types) AS types,
       min(o.created_at) AS first_seen_at, max(o.last_event_time) AS last_seen_at,
       (array_agg(i.schema_id ORDER BY i.last_event_time DESC, i.schema_id DESC)
            FILTER (WHERE i.schema_id IS NOT NULL))[1] AS source_schema_id,
       (array_agg(o.schema_id ORDER BY o.last_event_time DESC, o.schema_id DESC)
            FILTER (WHERE o.schema_id IS NOT NULL))[1] AS target_schema_id
FROM {near_table} AS {near}
CROSS JOIN LATERAL (
    SELECT * FROM {far_table} AS x
    WHERE x.operation_id = {near}.operation_id AND x.created_at = {near}.created_at
      AND x.last_event_time >= :since
    OFFSET 0
) AS {far}
WHERE {near}.dataset_id = ANY({frontier}) AND {near}.created_at <= :until
  AND {near}.last_event_time >= :since{pairs}
GROUP BY i.dataset_id, o.dataset_id
"""
# The summaries of dataset_edge (migration 0014) answer for the pairs they cover, as
# job_edge's do for JOB levels; the rows are joined for the others.
_UNCOVERED_DATASET_PAIRS = (
    "\n  AND (i.dataset_id, o.dataset_id) IN (SELECT source_id, target_id FROM uncovered)"
)


@cache
def dataset_level_statement(directions: tuple[str, ...], *, from_start: bool = False) -> Statement:
    """Dataset -> dataset edges through operations that read one and wrote the other, with
    the symlinks of the datasets reached (`from_start`: as `io_level_statement`)."""
    parts = []
    for direction in directions:
        near, far, near_table, far_table = _DATASET_SIDES[direction]
        near_id = "source_id" if direction == DOWN else "target_id"
        rows = _DATASET_LEVEL.format(
            dir=direction,
            frontier=_UNCOVERED_FRONTIER.format(where=near_id),
            near=near,
            far=far,
            near_table=near_table,
            far_table=far_table,
            pairs=_UNCOVERED_DATASET_PAIRS,
        )
        frontier = _frontier(direction, from_start=from_start)
        parts.append(
            _SUMMARIES.format(
                table="dataset_edge",
                near=near_id,
                frontier=frontier,
                only="",
                keys="source_id, target_id",
                dir=direction,
                columns="source_id, target_id",
                schemas="source_schema_id, target_schema_id",
                rows=rows,
            )
        )
    level = " UNION ALL ".join(parts)
    reached = f"CASE dir WHEN '{DOWN}' THEN target_id ELSE source_id END"
    return _with_symlinks(level, reached, from_start=from_start)


def _level_params(
    frontier: dict[str, list[NodeId]], window: TimeWindow, row_limit: int, start: list[int] | None
) -> dict[str, Any]:
    params = {**frontier, "since": window.since, "until": window.until, "row_limit": row_limit}
    return params if start is None else {**params, "start": start}


async def list_io_level(
    conn: Connection,
    parts: tuple[IOPart, ...],
    frontier: dict[str, list[NodeId]],
    window: TimeWindow,
    row_limit: int,
    start: list[int] | None = None,
) -> LevelRows:
    """One I/O level, at most `row_limit` rows aggregated per (dataset, process); with
    `start` (dataset ids), of their symlink closure instead of `frontier`, the closure's
    symlinks with it.

    A RUN or OPERATION level comes row by row and is grouped here. Fewer rows than the limit
    are all of the level's rows, so their groups are exactly the aggregate's; a level that
    reaches the limit is asked for again aggregated, the limit then cutting groups as it
    always has."""
    params = _level_params(frontier, window, row_limit, start)
    from_start = start is not None
    if all(p.group in ROW_BY_ROW for p in parts):
        stmt = io_level_statement(parts, from_start=from_start, grouped=False)
        found = _split(await fetch(conn, stmt, **params))
        if len(found.rows) < row_limit:
            return LevelRows(group_io_rows(found.rows), found.symlinks)
    stmt = io_level_statement(parts, from_start=from_start)
    return _split(await fetch(conn, stmt, **params))


async def list_dataset_level(
    conn: Connection,
    frontier: dict[str, list[NodeId]],
    window: TimeWindow,
    row_limit: int,
    start: list[int] | None = None,
) -> LevelRows:
    """One dataset level; `start` as in `list_io_level`."""
    stmt = dataset_level_statement(tuple(frontier), from_start=start is not None)
    return _split(await fetch(conn, stmt, **_level_params(frontier, window, row_limit, start)))


def _split(rows: list[Record]) -> LevelRows:
    """Level rows and symlink rows (`dir`, the first column, is NULL on the latter)."""
    # Two comprehensions, not a loop: a RUN graph's level has thousands of rows.
    level = [row for row in rows if row[0] is not None]
    if len(level) == len(rows):
        return LevelRows(level, [])
    return LevelRows(level, [row for row in rows if row[0] is None])


# Column lineage between the graph's datasets. At a process granularity: one row per
# process and column pair, among the graph's processes; the service keeps the rows whose
# own process read the source and wrote the target in the graph. At DATASET granularity
# the service checks each row's dataset pair only, so the rows come aggregated over every
# process (one per operation that wrote a pair was ~17x as many on the 40k benchmark
# database). The process check stays in Python: done in SQL with the graph's pairs as
# unnest()ed arrays, the generic plan, guessing ten pairs, chose a nested loop over ~5,000
# on the analysed 1M database (0.85 s p50; benchmarks/README.md, twentieth set). A row
# holds one column set (migration 0012) with the time of the latest event that named it:
# under a window, an edge carries the kinds of the sets named within it (not those only
# named before its start). The rows are first reduced to one per (pair, process, set)
# with its latest time, and only those sets are expanded, an edge that several hold
# becoming one row, types OR-ed and the latest time kept. Expanding every row
# instead took twice as long for a depth-3 JOB graph on 1M events (48 vs 24 ms; 17,715
# rows, 45,784 members, 106 edges).
_COLUMN_LINEAGE = """
SELECT g.source_dataset_id, g.target_dataset_id, g.process_id,
       m.source_column, m.target_column, bit_or(m.types) AS types,
       max(g.last_seen_at) AS last_seen_at
FROM (
  SELECT source_dataset_id, target_dataset_id, {process} AS process_id, column_set_id,
         max(last_event_time) AS last_seen_at
  FROM column_lineage
  WHERE source_dataset_id = ANY(:datasets) AND target_dataset_id = ANY(:datasets){processes}
    AND created_at <= :until AND last_event_time >= :since
  GROUP BY source_dataset_id, target_dataset_id, {group}column_set_id
) AS g
{expand}
GROUP BY g.source_dataset_id, g.target_dataset_id, g.process_id, m.source_column,
         m.target_column
"""


@cache
def column_lineage_statement(process_column: str | None) -> Statement:
    """Column lineage between graph datasets: per process of `process_column` and through
    the graph's processes, or over every process (None: process_id is NULL)."""
    if process_column is None:
        sql = _COLUMN_LINEAGE.format(
            process="NULL::bigint", processes="", group="", expand=expand_column_sets("g")
        )
        return Statement.named(sql)
    if process_column not in PROCESS_COLUMNS:
        raise ValueError(f"not a process column: {process_column}")
    sql = _COLUMN_LINEAGE.format(
        process=process_column,
        processes=f" AND {process_column} = ANY(:processes)",
        group=f"{process_column}, ",
        expand=expand_column_sets("g"),
    )
    return Statement.named(sql)


async def list_column_lineage(
    conn: Connection,
    process_column: str | None,
    datasets: list[int],
    processes: list[NodeId] | None,
    window: TimeWindow,
) -> list[Record]:
    """Column lineage rows (source_dataset_id, target_dataset_id, process_id, source_column,
    target_column, types, last_seen_at): per process of `process_column` among `processes`,
    or, with `process_column` None, aggregated over every process (DATASET graphs)."""
    if (process_column is None) != (processes is None):
        raise ValueError("processes go with a process column, and only with one")
    stmt = column_lineage_statement(process_column)
    params: dict[str, Any] = {"datasets": datasets, "since": window.since, "until": window.until}
    if processes is not None:
        params["processes"] = processes
    return await fetch(conn, stmt, **params)
