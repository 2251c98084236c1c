"""Merging one location into another, inside the caller's transaction.

The algorithm lives once, in the database (`threadline_merge_locations`, migration
0002), and the consumer calls the same function when an event shows that two
locations are one cluster: same-named datasets/jobs are unified with every
reference re-pointed (counters take the max, kinds are OR-ed), the rest move.
This module only counts what will happen, for the API's answer, then calls it.
"""

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


@dataclass(frozen=True, slots=True)
class MergeCounts:
    addresses: int
    datasets_moved: int
    datasets_merged: int
    jobs_moved: int
    jobs_merged: int


# Rows of the source location, split by whether the target has the same name.
_COUNTS = text(
    """
    SELECT
      (SELECT count(*) FROM address WHERE location_id = :source) AS addresses,
      (SELECT count(*) FILTER (WHERE t.id IS NULL) FROM dataset s
         LEFT JOIN dataset t ON t.location_id = :target AND t.name = s.name
         WHERE s.location_id = :source) AS datasets_moved,
      (SELECT count(t.id) FROM dataset s
         JOIN dataset t ON t.location_id = :target AND t.name = s.name
         WHERE s.location_id = :source) AS datasets_merged,
      (SELECT count(*) FILTER (WHERE t.id IS NULL) FROM job s
         LEFT JOIN job t ON t.location_id = :target AND t.name = s.name
         WHERE s.location_id = :source) AS jobs_moved,
      (SELECT count(t.id) FROM job s
         JOIN job t ON t.location_id = :target AND t.name = s.name
         WHERE s.location_id = :source) AS jobs_merged
    """
)


async def merge_locations(conn: AsyncConnection, source: int, target: int) -> MergeCounts:
    """Merge `source` into `target` and delete it; the caller holds both rows locked."""
    ids = {"source": source, "target": target}
    row = (await conn.execute(_COUNTS, ids)).one()
    await conn.execute(text("SELECT threadline_merge_locations(:target, :source)"), ids)
    return MergeCounts(
        addresses=row.addresses,
        datasets_moved=row.datasets_moved,
        datasets_merged=row.datasets_merged,
        jobs_moved=row.jobs_moved,
        jobs_merged=row.jobs_merged,
    )
