"""SQL loading the nodes of a lineage graph in bulk: one query per kind (and parent hop).

Runs and operations are partitioned by created_at and keyed by (created_at, id). A UUIDv7
id carries its created_at (the consumer stores `shared.uuids.uuid7_time`), and any other id
is stored under its anchor (`uuid_anchor`), so both are fetched by primary key in one
partition each; an id neither finds falls back to the id index, which probes every
partition.
"""

from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any
from uuid import UUID

from server.lineage.sql import Connection, Record, Statement, fetch
from shared.uuids import uuid7_millis

# Every symlink reachable from the datasets `seeds` selects, as CTEs ending in `{prefix}links`
# (`{prefix}reach` holds the datasets): the caller admits them hop by hop. The consumer
# writes both directions, so following `from` finds them all. OFFSET 0 keeps each step a
# lookup in the (from, to) unique index: joined freely, the generic plan hashes the whole
# symlink table, several times the cost for a few datasets. Also run together with a
# lineage level (queries.py), under a prefix when a statement holds two closures.
_SYMLINK_CLOSURE_CTES = """
{reach}(id) AS (
    {seeds}
    UNION
    SELECT l.to_dataset_id FROM {reach} CROSS JOIN LATERAL (
        SELECT to_dataset_id FROM dataset_symlink WHERE from_dataset_id = {reach}.id OFFSET 0
    ) AS l
),
{links} AS (
    SELECT l.* FROM {reach} CROSS JOIN LATERAL (
        SELECT from_dataset_id, to_dataset_id, type FROM dataset_symlink
        WHERE from_dataset_id = {reach}.id OFFSET 0
    ) AS l
)"""


def symlink_closure_ctes(seeds: str, prefix: str = "") -> str:
    """The closure CTEs `{prefix}reach` and `{prefix}links` of the datasets `seeds` selects."""
    return _SYMLINK_CLOSURE_CTES.format(seeds=seeds, reach=f"{prefix}reach", links=f"{prefix}links")


_CLOSURE_OF_IDS = """
WITH RECURSIVE {ctes}
SELECT * FROM links
"""
_SYMLINK_CLOSURE = Statement.named(
    _CLOSURE_OF_IDS.format(ctes=symlink_closure_ctes("SELECT unnest(CAST(:ids AS bigint[]))"))
)


async def list_symlink_closure(conn: Connection, dataset_ids: list[int]) -> list[Record]:
    """Symlinks of the datasets, of their symlinked datasets, and so on."""
    return await fetch(conn, _SYMLINK_CLOSURE, ids=dataset_ids)


# Each dataset with the schema the graph shows for it (NULL: none). The fields come as JSON
# text: the driver's JSONB codec parses them with the standard library's json, several
# times slower than orjson (assemble parses them). OFFSET 0 keeps each key a primary-key
# lookup: joined freely, the generic plan hashed the whole dataset and schema tables (0.3 ms
# more for 5 datasets on the benchmark's 1,285, and growing with the catalogue).
_DATASET_ROWS = """
SELECT t.* FROM unnest(CAST(:ids AS bigint[]), CAST(:schemas AS bigint[])) AS k(id, schema_id)
CROSS JOIN LATERAL (
    SELECT d.id, d.name, d.format,
           l.id AS location_id, l.type AS location_type, l.name AS location_name,
           s.id AS schema_id, s.fields::text AS schema_fields
    FROM dataset AS d
    JOIN location AS l ON l.id = d.location_id
    LEFT JOIN schema AS s ON s.id = k.schema_id
    WHERE d.id = k.id
    OFFSET 0
) AS t
"""
_DATASETS = Statement.named(_DATASET_ROWS)


async def list_datasets(
    conn: Connection, ids: list[int], schemas: list[int | None]
) -> list[Record]:
    """Datasets by id, each with the schema of the same position in `schemas`."""
    return await fetch(conn, _DATASETS, ids=ids, schemas=schemas)


# The jobs and their ancestors up to :hops parent hops: the caller admits them hop by hop
# as the node cap allows. OFFSET 0 keeps every step a primary-key lookup (as in the symlink
# closure: the generic plan would scan the job table per step).
_JOB_CTES = """
up(id, hop) AS (
    SELECT unnest(CAST(:job_ids AS bigint[])), 0
    UNION
    SELECT p.parent_job_id, up.hop + 1 FROM up CROSS JOIN LATERAL (
        SELECT parent_job_id FROM job
        WHERE id = up.id AND parent_job_id IS NOT NULL AND up.hop < :hops OFFSET 0
    ) AS p
),
jobs AS (
    SELECT t.* FROM (SELECT DISTINCT id FROM up) AS u CROSS JOIN LATERAL (
        SELECT j.id, j.name, j.type, j.parent_job_id,
               l.id AS location_id, l.type AS location_type, l.name AS location_name
        FROM job AS j JOIN location AS l ON l.id = j.location_id
        WHERE j.id = u.id OFFSET 0
    ) AS t
)"""
# A graph's jobs (with ancestors) and its datasets in one round trip, stacked as a level
# and its symlinks are (queries.py): job columns first, NULL on the dataset rows, whose
# columns follow from position JOB_COLUMNS.
_STACKED = """
WITH RECURSIVE {jobs},
datasets AS ({datasets})
SELECT jobs.*, datasets.* FROM jobs FULL JOIN datasets ON false
"""
_JOBS_AND_DATASETS = Statement.named(_STACKED.format(jobs=_JOB_CTES, datasets=_DATASET_ROWS))
JOB_COLUMNS = 7


async def list_jobs_and_datasets(
    conn: Connection,
    job_ids: list[int],
    hops: int,
    dataset_ids: list[int],
    schemas: list[int | None],
) -> tuple[list[Record], list[Record]]:
    """Jobs by id with their ancestors up to `hops` parent hops, and the datasets as
    `list_datasets` gives them (their columns from position JOB_COLUMNS)."""
    params = {"job_ids": job_ids, "hops": hops, "ids": dataset_ids, "schemas": schemas}
    jobs: list[Record] = []
    datasets: list[Record] = []
    for row in await fetch(conn, _JOBS_AND_DATASETS, **params):
        (jobs if row[0] is not None else datasets).append(row)
    return jobs, datasets


# OFFSET 0 keeps the LATERAL a per-key primary-key lookup (run-time partition pruning);
# flattened, the planner may hash-join the whole table. created_at comes as the id's Unix
# milliseconds: a timestamptz array cost asyncpg ~1 us more per id to encode, and Python
# as much to date (1.5 ms for a thousand runs). It is exact, as `uuid7_time` is up to year
# 2242 (float seconds after that); a key it misses is looked up by id (assemble._by_id).
# Any other id is stored under its anchor (`uuid_anchor`, the consumer's): one primary-key
# lookup there gives the key. By id alone, the id index is probed in every partition.
_BY_KEY = """
SELECT t.* FROM unnest(CAST(:millis AS bigint[]), CAST(:ids AS uuid[])) AS k(millis, id)
CROSS JOIN LATERAL (
    SELECT {columns} FROM {table} AS x
    WHERE x.created_at = timestamptz 'epoch' + k.millis * interval '1 millisecond'
      AND x.id = k.id
    OFFSET 0
) AS t
UNION ALL
SELECT t.* FROM uuid_anchor AS a CROSS JOIN LATERAL (
    SELECT {columns} FROM {table} AS x
    WHERE x.created_at = a.created_at AND x.id = a.id
    OFFSET 0
) AS t
WHERE a.id = ANY(:anchored)
UNION ALL
SELECT {columns} FROM {table} AS x WHERE x.id = ANY(:other)
"""
# In the field order of model.RunNode / model.OperationNode, which are built from the rows.
_RUN_COLUMNS = (
    "x.id, x.job_id, x.parent_run_id, x.status, x.created_at, x.started_at, x.ended_at, "
    "x.external_id, x.attempt"
)
_OPERATION_COLUMNS = (
    'x.id, x.run_id, x.name, x.type, x.status, x.position, x."group", x.description, '
    "x.created_at, x.started_at, x.ended_at"
)
_RUNS = Statement.named(_BY_KEY.format(columns=_RUN_COLUMNS, table="run"), uuids=(0, 2))
_OPERATIONS = Statement.named(
    _BY_KEY.format(columns=_OPERATION_COLUMNS, table="operation"), uuids=(0, 1)
)
# Every statement of this module (server.lineage.warmup prepares them on new connections).
STATEMENTS = (_SYMLINK_CLOSURE, _DATASETS, _JOBS_AND_DATASETS, _RUNS, _OPERATIONS)


def _keys(ids: Collection[UUID]) -> dict[str, list[Any]]:
    """UUIDv7 ids a datetime can date with their milliseconds (looked up by key), and the
    others (by their anchor)."""
    millis: list[int] = []
    keyed: list[UUID] = []
    anchored: list[UUID] = []
    for value in ids:
        at = uuid7_millis(value)
        if at is None:
            anchored.append(value)
        else:
            millis.append(at)
            keyed.append(value)
    return {"millis": millis, "ids": keyed, "anchored": anchored, "other": []}


def _by_id_only(ids: Collection[UUID]) -> dict[str, list[Any]]:
    return {"millis": [], "ids": [], "anchored": [], "other": list(ids)}


async def list_runs(
    conn: Connection, ids: Collection[UUID], *, by_key: bool = True
) -> list[Record]:
    """Runs by id; `by_key=False` looks them up by id alone (a retry for ids the keys missed)."""
    return await fetch(conn, _RUNS, **(_keys(ids) if by_key else _by_id_only(ids)))


async def list_operations(
    conn: Connection, ids: Collection[UUID], *, by_key: bool = True
) -> list[Record]:
    return await fetch(conn, _OPERATIONS, **(_keys(ids) if by_key else _by_id_only(ids)))


Loader = Callable[..., Awaitable[Sequence[Record]]]


async def rows_by_id(conn: Connection, load: Loader, ids: Collection[UUID]) -> dict[UUID, Record]:
    """Rows of `load` (list_runs, list_operations) by id; ids the primary-key shortcuts (the
    UUIDv7 time, the anchor) missed are looked up by id alone."""
    rows = {row[0]: row for row in await load(conn, ids)}
    missed = [i for i in ids if i not in rows]
    if missed:
        rows.update({row[0]: row for row in await load(conn, missed, by_key=False)})
    return rows
