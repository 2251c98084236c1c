"""The invariant of `job_edge` (migration 0013), as a query: what its summaries get wrong.

Every (dataset, job, direction) that has input or output rows has a summary; a summary
that is not stale holds exactly what the rows sum to (what lineage at JOB granularity
computes from them: sums, bit mask, first and last times, latest schema), and time bounds
that contain the rows'. A stale summary only has to exist: readers use the rows for it.
"""

from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

_ROWS = """
SELECT dataset_id, {direction} AS direction, job_id, sum(num_rows) AS num_rows,
       sum(num_bytes) AS num_bytes, sum(num_files) AS num_files, {types} AS types,
       min(created_at) AS first_seen_at, max(created_at) AS last_created_at,
       max(last_event_time) AS last_seen_at, min(last_event_time) AS earliest_seen_at,
       (max(ARRAY[(extract(epoch FROM last_event_time) * 1000000)::bigint, schema_id])
          FILTER (WHERE schema_id IS NOT NULL))[2] AS schema_id
FROM {table} GROUP BY dataset_id, job_id
"""
MISMATCHES = f"""
WITH r AS ({_ROWS.format(direction=0, types="NULL::int", table="input")}
           UNION ALL {_ROWS.format(direction=1, types="bit_or(types)", table="output")})
SELECT r.*, e.*
FROM r FULL JOIN job_edge AS e USING (dataset_id, direction, job_id)
WHERE e.dataset_id IS NULL
   OR NOT e.stale AND (
     r.dataset_id IS NULL
     OR CASE WHEN e.rows_known > 0 THEN e.num_rows END IS DISTINCT FROM r.num_rows
     OR CASE WHEN e.bytes_known > 0 THEN e.num_bytes END IS DISTINCT FROM r.num_bytes
     OR CASE WHEN e.files_known > 0 THEN e.num_files END IS DISTINCT FROM r.num_files
     OR e.types IS DISTINCT FROM r.types
     OR e.first_seen_at IS DISTINCT FROM r.first_seen_at
     OR e.last_seen_at IS DISTINCT FROM r.last_seen_at
     OR e.schema_id IS DISTINCT FROM r.schema_id
     OR e.last_created_at < r.last_created_at
     OR e.earliest_seen_at > r.earliest_seen_at)
"""  # noqa: S608 - constant tables and expressions


async def job_edge_mismatches(conn: AsyncConnection) -> list[dict[str, Any]]:
    """The summaries (with their rows' aggregate) that break the invariant: none, if kept."""
    return [dict(row) for row in (await conn.execute(text(MISMATCHES))).mappings()]
