"""Column sets: the column edges one event gave between two datasets, stored once each.

A set's id is its digest, so a worker names a set without a round trip and two workers
writing the same set write the same row. The digest is unambiguous (each name written with
its length, so no column name can pass for a separator) and the same in SQL: migration 0012
computes it for the rows it regroups.
"""

import hashlib
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


def column_set_id(columns: ColumnSet) -> UUID:
    """MD5 of `len:source len:target types;` per member, in the set's (sorted) order."""
    text = "".join(f"{len(s)}:{s} {len(t)}:{t} {types};" for s, t, types in columns)
    return UUID(bytes=hashlib.md5(text.encode(), usedforsecurity=False).digest())


async def write_column_sets(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    """Store the batch's sets this process has not stored; every set then has its id cached."""
    known = cache.column_sets
    fresh: dict[ColumnSet, UUID] = {}
    for record in batch.column_lineage:
        columns = record.columns
        if columns not in known and columns not in fresh:
            fresh[columns] = column_set_id(columns)
    if not fresh:
        return
    ids: list[UUID] = []
    sources: list[str] = []
    targets: list[str] = []
    types: list[int] = []
    for columns, set_id in sorted(fresh.items(), key=lambda item: item[1]):
        for source, target, bits in columns:
            ids.append(set_id)
            sources.append(source)
            targets.append(target)
            types.append(bits)
    await conn.execute(INSERT_COLUMN_SETS, ids, sources, targets, types)
    known.update(fresh)
