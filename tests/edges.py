"""The invariant of the summary tables (`job_edge`, migration 0013; `dataset_edge`, 0014),
as queries: what their summaries get wrong.

Every (dataset, job, direction) that has input or output rows, and every (source, target)
pair of datasets an operation read and wrote, has a summary; a summary that is not stale
holds exactly what the rows sum to (what lineage at JOB or DATASET granularity computes
from them: sums, bit mask, first and last times, latest schemas), and time bounds that
contain the rows'. A stale summary only has to exist: readers use the rows for it.
"""

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

# The latest schema of rows aliased {t}: the greatest [time in microseconds, schema id].
_LATEST = """(max(ARRAY[(extract(epoch FROM {t}.last_event_time) * 1000000)::bigint,
  {t}.schema_id]) FILTER (WHERE {t}.schema_id IS NOT NULL))[2]"""
_JOB_ROWS = """
SELECT dataset_id, {direction} AS direction, job_id, sum(num_rows) AS num_rows,
       sum(num_bytes) AS num_bytes, sum(num_files) AS num_files, {types} AS types,
       min(created_at) AS first_seen_at, max(created_at) AS last_created_at,
       max(last_event_time) AS last_seen_at, min(last_event_time) AS earliest_seen_at,
       {latest} AS schema_id
FROM {table} AS x GROUP BY dataset_id, job_id
"""
_DATASET_ROWS = f"""
SELECT i.dataset_id AS source_id, o.dataset_id AS target_id, sum(o.num_rows) AS num_rows,
       sum(o.num_bytes) AS num_bytes, sum(o.num_files) AS num_files, bit_or(o.types) AS types,
       min(o.created_at) AS first_seen_at, max(o.created_at) AS last_created_at,
       max(o.last_event_time) AS last_seen_at,
       LEAST(min(i.last_event_time), min(o.last_event_time)) AS earliest_seen_at,
       {_LATEST.format(t="i")} AS source_schema_id, {_LATEST.format(t="o")} AS target_schema_id
FROM input AS i JOIN output AS o ON o.operation_id = i.operation_id
 AND o.created_at = i.created_at
GROUP BY i.dataset_id, o.dataset_id
"""  # noqa: S608 - constant expressions
# The rows' aggregate `r` against the summaries `e` (joined on `keys`, whose first is never
# NULL in either): a pair without a summary, or a live summary that differs.
_MISMATCHES = """
WITH r AS ({rows})
SELECT r.*, e.*
FROM r FULL JOIN {table} AS e USING ({keys})
WHERE e.{key} IS NULL
   OR NOT e.stale AND (
     r.{key} IS NULL
     OR CASE WHEN e.rows_known > 0 THEN e.num_rows END IS DISTINCT FROM r.num_rows
     OR CASE WHEN e.bytes_known > 0 THEN e.num_bytes END IS DISTINCT FROM r.num_bytes
     OR CASE WHEN e.files_known > 0 THEN e.num_files END IS DISTINCT FROM r.num_files
     OR e.types IS DISTINCT FROM r.types
     OR e.first_seen_at IS DISTINCT FROM r.first_seen_at
     OR e.last_seen_at IS DISTINCT FROM r.last_seen_at
     OR e.last_created_at < r.last_created_at
     OR e.earliest_seen_at > r.earliest_seen_at{schemas})
"""
_SCHEMA_DIFFERS = "\n     OR e.{c} IS DISTINCT FROM r.{c}"
JOB_MISMATCHES = _MISMATCHES.format(
    rows=_JOB_ROWS.format(
        direction=0, types="NULL::int", table="input", latest=_LATEST.format(t="x")
    )
    + " UNION ALL "
    + _JOB_ROWS.format(
        direction=1, types="bit_or(types)", table="output", latest=_LATEST.format(t="x")
    ),
    table="job_edge",
    keys="dataset_id, direction, job_id",
    key="dataset_id",
    schemas=_SCHEMA_DIFFERS.format(c="schema_id"),
)
DATASET_MISMATCHES = _MISMATCHES.format(
    rows=_DATASET_ROWS,
    table="dataset_edge",
    keys="source_id, target_id",
    key="source_id",
    schemas="".join(_SCHEMA_DIFFERS.format(c=c) for c in ("source_schema_id", "target_schema_id")),
)
MISMATCHES = {"job_edge": JOB_MISMATCHES, "dataset_edge": DATASET_MISMATCHES}


async def edge_mismatches(conn: AsyncConnection) -> dict[str, list[dict[str, Any]]]:
    """Per summary table, the summaries (with their rows' aggregate) that break the
    invariant: none, if kept."""
    found = {}
    for table, sql in MISMATCHES.items():
        rows = [dict(row) for row in (await conn.execute(text(sql))).mappings()]
        if rows:
            found[table] = rows
    return found
