"""Dimension rows (locations, datasets, jobs, users, schemas): natural keys -> ids, in bulk.

Ids are cached across batches (`IdCache`); only keys never seen by this
process reach the database. Inserts use ON CONFLICT DO NOTHING and a second
SELECT for rows another worker created, so existing rows are never locked.
The ids of the column sets stored are cached here too (`consumer.write.column_sets`).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import orjson

from consumer.merge import greatest
from consumer.records import (
    DatasetKey,
    Extracted,
    JobKey,
    JobRecord,
    LocationKey,
    LocationRecord,
    SchemaRecord,
)
from consumer.write import sql
from shared.naming import parse_namespace


@dataclass(slots=True)
class IdCache:
    """Natural key -> id maps that outlive a batch; cleared whenever locations merge."""

    locations: dict[LocationKey, int] = field(default_factory=dict)
    addresses: dict[str, int] = field(default_factory=dict)
    datasets: dict[DatasetKey, int] = field(default_factory=dict)
    formats: dict[DatasetKey, str] = field(default_factory=dict)  # the greatest stored
    jobs: dict[JobKey, tuple[int, str, int | None]] = field(default_factory=dict)
    users: dict[str, int] = field(default_factory=dict)
    schemas: dict[Any, int] = field(default_factory=dict)
    # (from_dataset_id, to_dataset_id) pairs stored: a stored pair never changes (its first
    # type stays), so a batch sends only the pairs new to this process.
    symlinks: set[tuple[int, int]] = field(default_factory=set)
    # Ids (as ints) of the column sets stored, or written in this transaction.
    column_sets: set[int] = field(default_factory=set)

    def clear(self) -> None:
        parts = (self.locations, self.addresses, self.datasets, self.formats, self.jobs)
        for part in (*parts, self.symlinks, self.column_sets):
            part.clear()


# -- new rows, one worker at a time -------------------------------------------

# Workers that write batches bringing the same new dimension rows at the same time (every
# worker's first batches: locations, datasets and jobs none has stored yet) wait on each
# other's uncommitted rows through unique keys and foreign keys in different statements, and
# deadlocked: PostgreSQL cancels one after deadlock_timeout (1 s) and it retries. Two
# consumers lost ~1.4 s that way in a 2.6 s benchmark run. A batch that brings a dimension
# row this process has not cached takes this transaction lock before writing any, so such
# batches are written one at a time; batches whose dimensions are all cached (nearly every
# batch past the first few) never take it. The lock lasts the batch's transaction (one per
# batch, DESIGN.md): a stream that brought new tables in nearly every batch would have its
# workers write one at a time.
NEW_ROWS_LOCK = "SELECT pg_advisory_xact_lock(hashtext('threadline_new_dimension_rows'))"


def new_locations(batch: Extracted, cache: IdCache) -> bool:
    """Whether resolving the batch's locations may write location or address rows."""
    return not all(_cached(r, cache) for r in batch.locations)


def new_dimension_rows(batch: Extracted, cache: IdCache) -> bool:
    """Whether the batch (its locations resolved and canonical) may write dataset, format,
    symlink, job, user, schema or column-set rows."""
    datasets = cache.datasets
    if any(r.key not in datasets for r in batch.datasets):
        return True
    formats = cache.formats
    if any(r.format is not None and r.format != formats.get(r.key) for r in batch.datasets):
        return True
    pairs = ((datasets[s.source], datasets[s.target]) for s in batch.symlinks)
    if any(pair not in cache.symlinks for pair in pairs):
        return True
    if any(_job_changed(j, cache) for j in batch.jobs):
        return True
    users = {*batch.users, *(r.user for r in batch.runs if r.user)}
    if any(name not in cache.users for name in users):
        return True
    if any(s.digest not in cache.schemas for s in batch.schemas):
        return True
    sets = cache.column_sets
    return any(r.columns_id.int not in sets for r in batch.column_lineage)


# -- locations ---------------------------------------------------------------


async def resolve_locations(
    conn: asyncpg.Connection, records: Sequence[LocationRecord], cache: IdCache
) -> bool:
    """Map every location key to an id, merging locations an event shows to be one.

    Returns True when a merge happened (callers then drop their id caches).
    """
    todo = [r for r in records if not _cached(r, cache)]
    merged = False
    for record in todo:
        merged |= await _resolve_one(conn, record, cache)
    for record in records:
        cache.locations.setdefault(record.key, cache.addresses[min(record.addresses)])
    return merged


def _cached(record: LocationRecord, cache: IdCache) -> bool:
    ids = {cache.addresses.get(a) for a in record.addresses}
    return len(ids) == 1 and None not in ids


async def _resolve_one(conn: asyncpg.Connection, record: LocationRecord, cache: IdCache) -> bool:
    owners = await _owners(conn, record.addresses)
    merged = False
    if not owners:
        target = await _create_location(conn, record)
    else:
        target = await _survivor(conn, set(owners.values()))
        merged = await _merge_into(conn, target, set(owners.values()))
    await conn.execute(
        "INSERT INTO address (location_id, url) SELECT $1, unnest($2::text[])"
        " ON CONFLICT (url) DO NOTHING",
        target,
        sorted(record.addresses),
    )
    # Another worker may have claimed an address meanwhile: merge what it made.
    owners = await _owners(conn, record.addresses)
    merged |= await _merge_into(conn, target, set(owners.values()))
    # Named after its smallest address, whichever address was seen first.
    await conn.execute(sql.NAME_LOCATION, target, record.name)
    for address in record.addresses:
        cache.addresses[address] = target
    cache.locations[record.key] = target
    return merged


async def _owners(conn: asyncpg.Connection, addresses: frozenset[str]) -> dict[str, int]:
    rows = await conn.fetch(
        "SELECT url, location_id FROM address WHERE url = ANY($1::text[])", sorted(addresses)
    )
    return {r["url"]: r["location_id"] for r in rows}


async def _create_location(conn: asyncpg.Connection, record: LocationRecord) -> int:
    row = await conn.fetchrow(
        "INSERT INTO location (type, name) VALUES ($1, $2)"
        " ON CONFLICT (type, name) DO UPDATE SET type = excluded.type RETURNING id",
        record.type,
        record.name,
    )
    return _id(row)


async def _survivor(conn: asyncpg.Connection, ids: set[int]) -> int:
    """Of several locations that are one, keep the smallest (type, name): order-independent."""
    row = await conn.fetchrow(
        'SELECT id FROM location WHERE id = ANY($1::bigint[]) ORDER BY type, name COLLATE "C"'
        " LIMIT 1",
        sorted(ids),
    )
    return _id(row)


def _id(row: asyncpg.Record | None) -> int:
    if row is None:
        raise LookupError("expected a row with an id")
    return int(row["id"])


async def _merge_into(conn: asyncpg.Connection, target: int, ids: set[int]) -> bool:
    """Merge every other location of `ids` into target (datasets, jobs and addresses move)."""
    others = sorted(ids - {target})
    for source in others:
        await conn.execute("SELECT threadline_merge_locations($1, $2)", target, source)
    return bool(others)


async def seed_aliases(conn: asyncpg.Connection, groups: Sequence[Sequence[str]]) -> None:
    """Operator-declared alias groups: each group's addresses become one location."""
    cache = IdCache()
    for group in groups:
        spaces = [parse_namespace(ns) for ns in group]
        addresses = frozenset(a for ns in spaces for a in ns.addresses)
        first = min(spaces, key=lambda ns: (ns.location_type, ns.location_name))
        record = LocationRecord(first.location_type, first.location_name, addresses)
        await _resolve_one(conn, record, cache)


# -- datasets, jobs, users, schemas -----------------------------------------


async def resolve_datasets(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    """Map every dataset key to an id, then store the formats new to this process."""
    await _insert_datasets(conn, batch, cache)
    await _store_formats(conn, batch, cache)


async def _insert_datasets(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    missing = sorted({r.key for r in batch.datasets} - cache.datasets.keys())
    if not missing:
        return
    locs = [cache.locations[(t, n)] for t, n, _ in missing]
    names = [name for _, _, name in missing]
    await conn.execute(
        "INSERT INTO dataset (location_id, name) SELECT * FROM unnest($1::bigint[], $2::text[])"
        " ON CONFLICT (location_id, name) DO NOTHING",
        locs,
        names,
    )
    rows = await conn.fetch(
        "SELECT d.id, d.location_id, d.name FROM dataset d"
        " JOIN unnest($1::bigint[], $2::text[]) AS k(loc, name)"
        " ON d.location_id = k.loc AND d.name = k.name",
        locs,
        names,
    )
    by_loc_name = {(r["location_id"], r["name"]): r["id"] for r in rows}
    for key, loc in zip(missing, locs, strict=True):
        cache.datasets[key] = by_loc_name[(loc, key[2])]


async def _store_formats(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    """A dataset keeps the greatest format any event gave it (a join: order-independent,
    as the merge rule and the location merge function). Rows are locked in id order."""
    new = sorted(
        (cache.datasets[r.key], r.format, r.key)
        for r in batch.datasets
        if r.format is not None and r.format != cache.formats.get(r.key)
    )
    if not new:
        return
    await conn.execute(sql.STORE_DATASET_FORMATS, [i for i, _, _ in new], [f for _, f, _ in new])
    for _, fmt, key in new:
        cache.formats[key] = greatest(cache.formats.get(key), fmt)


async def write_symlinks(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    """Insert the batch's symlinks this process has not stored yet (most batches name the
    same tables again: every batch sent them all, ~5% of the write's PostgreSQL time)."""
    datasets, known = cache.datasets, cache.symlinks
    rows = [(datasets[s.source], datasets[s.target], s.type) for s in batch.symlinks]
    new = [r for r in rows if (r[0], r[1]) not in known]
    if not new:
        return
    await conn.execute(
        "INSERT INTO dataset_symlink (from_dataset_id, to_dataset_id, type)"
        " SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[]) ON CONFLICT DO NOTHING",
        [r[0] for r in new],
        [r[1] for r in new],
        [r[2] for r in new],
    )
    known.update((source, target) for source, target, _ in new)


async def resolve_jobs(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    """Upsert jobs whose type or parent is new to this process, then their parent links."""
    stale = [j for j in batch.jobs if _job_changed(j, cache)]
    if not stale:
        return
    rows = await conn.fetch(
        "INSERT INTO job AS j (location_id, name, type)"
        " SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])"
        " ON CONFLICT (location_id, name) DO UPDATE SET type = CASE"
        "   WHEN excluded.type = 'UNKNOWN' THEN j.type WHEN j.type = 'UNKNOWN' THEN excluded.type"
        '   ELSE GREATEST(j.type COLLATE "C", excluded.type COLLATE "C") END'
        " RETURNING id, location_id, name, type, parent_job_id",
        [cache.locations[j.location] for j in stale],
        [j.name for j in stale],
        [j.type for j in stale],
    )
    ids = {(r["location_id"], r["name"]): r for r in rows}
    for job in stale:
        row = ids[(cache.locations[job.location], job.name)]
        cache.jobs[job.key] = (row["id"], row["type"], row["parent_job_id"])
    await _link_parents(conn, [j for j in stale if j.parent is not None], cache)


def _job_changed(job: JobRecord, cache: IdCache) -> bool:
    known = cache.jobs.get(job.key)
    if known is None:
        return True
    _, known_type, known_parent = known
    type_changes = job.type != "UNKNOWN" and job.type != known_type
    parent_entry = cache.jobs.get(job.parent) if job.parent is not None else None
    parent = parent_entry[0] if parent_entry else None
    return type_changes or (job.parent is not None and parent != known_parent)


async def _link_parents(conn: asyncpg.Connection, jobs: list[JobRecord], cache: IdCache) -> None:
    pairs = sorted(
        {(cache.jobs[j.key][0], cache.jobs[j.parent][0]) for j in jobs if j.parent in cache.jobs}
    )
    if not pairs:
        return
    await conn.execute(
        sql.LINK_JOB_PARENTS,
        [c for c, _ in pairs],
        [p for _, p in pairs],
    )
    for job in jobs:
        if job.parent in cache.jobs:
            job_id, job_type, _ = cache.jobs[job.key]
            cache.jobs[job.key] = (job_id, job_type, cache.jobs[job.parent][0])


async def resolve_users(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    names = sorted({*batch.users, *(r.user for r in batch.runs if r.user)} - cache.users.keys())
    if not names:
        return
    await conn.execute(
        "INSERT INTO user_account (name) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING", names
    )
    rows = await conn.fetch("SELECT id, name FROM user_account WHERE name = ANY($1)", names)
    cache.users.update({r["name"]: r["id"] for r in rows})


async def resolve_schemas(conn: asyncpg.Connection, batch: Extracted, cache: IdCache) -> None:
    fresh: list[SchemaRecord] = [s for s in batch.schemas if s.digest not in cache.schemas]
    if not fresh:
        return
    digests = [s.digest for s in fresh]
    await conn.execute(
        "INSERT INTO schema (digest, fields) SELECT * FROM unnest($1::uuid[], $2::jsonb[])"
        " ON CONFLICT (digest) DO NOTHING",
        digests,
        [orjson.dumps(s.fields).decode() for s in fresh],
    )
    rows = await conn.fetch("SELECT id, digest FROM schema WHERE digest = ANY($1)", digests)
    cache.schemas.update({r["digest"]: r["id"] for r in rows})
