"""Column sets: the column edges one event gave between two datasets, stored once each.

A set's id is its digest (`consumer.extract.columns.column_set_id`, made with the record),
so a worker names a set without a round trip and two workers writing the same set write the
same row.
"""

from uuid import UUID

import asyncpg

from consumer.records import ColumnSet, Extracted
from consumer.write.dimensions import IdCache

# One row per set from its members flattened in order: asyncpg has no ragged arrays. Sets
# are new rows of a dimension, written under dimensions.NEW_ROWS_LOCK and in id order.
INSERT_COLUMN_SETS = """
INSERT INTO column_set (id, source_columns, target_columns, types)
SELECT id, array_agg(source ORDER BY n), array_agg(target ORDER BY n), array_agg(types ORDER BY n)
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::int[]) WITH ORDINALITY
  AS m(id, source, target, types, n)
GROUP BY id
ORDER BY id
ON CONFLICT (id) DO NOTHING
"""


async def write_column_sets(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    """Store the batch's sets this process has not stored."""
    known = cache.column_sets
    fresh: dict[int, tuple[UUID, ColumnSet]] = {}
    for record in batch.column_lineage:
        set_id = record.columns_id
        if set_id.int not in known:
            fresh[set_id.int] = (set_id, record.columns)
    if not fresh:
        return
    ids: list[UUID] = []
    sources: list[str] = []
    targets: list[str] = []
    types: list[int] = []
    for _, (set_id, columns) in sorted(fresh.items()):
        for source, target, bits in columns:
            ids.append(set_id)
            sources.append(source)
            targets.append(target)
            types.append(bits)
    await conn.execute(INSERT_COLUMN_SETS, ids, sources, targets, types)
    known.update(fresh)
