"""SQL of the write stage: set-based upserts, one statement per table.

Dimension rows arrive as unnest()ed parameter arrays; the many time-series rows (runs,
operations, inputs, outputs, column lineage) as one jsonb document each (`json_rows`).

Each ON CONFLICT clause applies the merge rules of `consumer.merge` to the
stored row, so a record meeting an earlier state gives the same result as if
both had been merged in memory (GREATEST/LEAST skip NULLs, like merge.greatest).
Surrogate ids depend on insertion order, so where ids break a tie their natural
keys are compared instead.
"""

from shared.models import OPERATION_FIELDS, RUN_FIELDS

TEXT_COLUMNS = frozenset(
    {
        "start_reason",
        "ended_reason",
        "external_id",
        "running_log_url",
        "persistent_log_url",
        "name",
        "type",
        "group",
        "description",
        "sql_query",
    }
)


# The greater of two ids by natural key, in the order of the in-memory keys.
JOB_BY_KEY = (
    "SELECT j.id FROM job j JOIN location l ON l.id = j.location_id WHERE j.id IN ({a}, {b})"
    ' ORDER BY l.type COLLATE "C" DESC, l.name COLLATE "C" DESC, j.name COLLATE "C" DESC LIMIT 1'
)
USER_BY_NAME = (
    'SELECT id FROM user_account WHERE id IN ({a}, {b}) ORDER BY name COLLATE "C" DESC LIMIT 1'
)
SCHEMA_BY_DIGEST = "SELECT id FROM schema WHERE id IN ({a}, {b}) ORDER BY digest DESC LIMIT 1"

# A job's parent: the one with the greater natural key wins, as in consumer.merge.
LINK_JOB_PARENTS = f"""
UPDATE job SET parent_job_id = p.parent FROM unnest($1::bigint[], $2::bigint[]) AS p(id, parent)
WHERE job.id = p.id AND job.id <> p.parent
  AND (job.parent_job_id IS NULL OR job.parent_job_id <> p.parent
       AND p.parent = ({JOB_BY_KEY.format(a="p.parent", b="job.parent_job_id")}))
"""  # noqa: S608 - constant column names only; every value is a bound parameter

# A location takes the smallest name among the records that reach it (each record is
# named after its own smallest address), so its name never depends on arrival order.
# A name held by another location (an operator's doing) is left alone.
NAME_LOCATION = """
UPDATE location SET name = $2 WHERE id = $1 AND name COLLATE "C" > $2 COLLATE "C"
  AND NOT EXISTS (SELECT 1 FROM location o WHERE o.type = location.type AND o.name = $2)
"""


def _newer(col: str, i: int, table: str, tie: str) -> str:
    """Whether the new value of field `col` (element i of field_times) wins: it is
    non-null and from a later event, or from an event as late and greater (`tie`)."""
    new, old = f'excluded."{col}"', f'{table}."{col}"'
    new_at, old_at = f"excluded.field_times[{i}]", f"{table}.field_times[{i}]"
    return (
        f"({new} IS NOT NULL AND ({old} IS NULL OR {new_at} > {old_at}"
        f" OR {new_at} = {old_at} AND {new} <> {old} AND {tie}))"
    )


def _tie(col: str, table: str, ranked: dict[str, str]) -> str:
    new, old = f'excluded."{col}"', f'{table}."{col}"'
    if col in ranked:  # surrogate ids: compare natural keys, as merge() does
        return f"{new} = ({ranked[col].format(a=old, b=new)})"
    c = ' COLLATE "C"' if col in TEXT_COLUMNS else ""
    return f"{new}{c} > {old}{c}"


def latest(fields: tuple[str, ...], table: str, ranked: dict[str, str]) -> str:
    """SET clauses: each field takes the latest non-null value, and field_times its time."""
    newer = [_newer(c, i, table, _tie(c, table, ranked)) for i, c in enumerate(fields, 1)]
    sets = [
        f'"{c}" = CASE WHEN {w} THEN excluded."{c}" ELSE {table}."{c}" END'
        for c, w in zip(fields, newer, strict=True)
    ]
    times = ", ".join(
        f"CASE WHEN {w} THEN excluded.field_times[{i}] ELSE {table}.field_times[{i}] END"
        for i, w in enumerate(newer, 1)
    )
    return ",\n  ".join([*sets, f"field_times = ARRAY[{times}]::timestamptz[]"])


def json_rows(types: tuple[str, ...], times: int = 0) -> str:
    """SELECT list and FROM reading the rows of one jsonb parameter ($1), an array of row
    arrays: element i cast to types[i], then `times` per-field times packed into one
    field_times array.

    One document instead of one parameter array per column: orjson encodes a batch's rows in
    C, where asyncpg encodes each array element in Python-level code (the largest single
    cost of the consumer's write). PostgreSQL parses the document instead, and it works
    beside the consumer, which writes one batch while it decodes the next.
    """
    cells = [
        f"NULLIF(e->{i}, 'null')" if t == "jsonb" else f"(e->>{i})::{t}"
        for i, t in enumerate(types)
    ]
    if times:
        packed = ", ".join(f"(e->>{i})::timestamptz" for i in range(len(types), len(types) + times))
        cells.append(f"ARRAY[{packed}]::timestamptz[]")
    # Constant casts and positions only; the rows are the bound parameter.
    return f"SELECT {', '.join(cells)} FROM jsonb_array_elements($1::jsonb) AS e"  # noqa: S608


_RUN_COLUMNS = """created_at, id, job_id, parent_run_id, status, started_at, ended_at,
  started_by_user_id, start_reason, ended_reason, external_id, attempt, running_log_url,
  persistent_log_url, last_event_time, root_run_id, checkpoints"""
_RUN_TYPES = (
    "timestamptz", "uuid", "bigint", "uuid", "smallint", "timestamptz", "timestamptz",
    "bigint", "text", "text", "text", "int", "text", "text", "timestamptz", "uuid", "jsonb",
)  # fmt: skip

UPSERT_RUNS = f"""
INSERT INTO run AS r ({_RUN_COLUMNS}, field_times)
{json_rows(_RUN_TYPES, len(RUN_FIELDS))}
ON CONFLICT (created_at, id) DO UPDATE SET
  status = GREATEST(r.status, excluded.status),
  started_at = LEAST(r.started_at, excluded.started_at),
  ended_at = GREATEST(r.ended_at, excluded.ended_at),
  checkpoints = GREATEST(r.checkpoints, excluded.checkpoints),
  {latest(RUN_FIELDS, "r", {"job_id": JOB_BY_KEY, "started_by_user_id": USER_BY_NAME})},
  last_event_time = GREATEST(r.last_event_time, excluded.last_event_time)
"""

_OPERATION_COLUMNS = """created_at, id, run_id, name, type, status, position, "group",
  description, sql_query, started_at, ended_at, last_event_time, ended_reason"""
_OPERATION_TYPES = (
    "timestamptz", "uuid", "uuid", "text", "text", "smallint", "int", "text", "text", "text",
    "timestamptz", "timestamptz", "timestamptz", "text",
)  # fmt: skip

UPSERT_OPERATIONS = f"""
INSERT INTO operation AS o ({_OPERATION_COLUMNS}, field_times)
{json_rows(_OPERATION_TYPES, len(OPERATION_FIELDS))}
ON CONFLICT (created_at, id) DO UPDATE SET
  status = GREATEST(o.status, excluded.status),
  started_at = LEAST(o.started_at, excluded.started_at),
  ended_at = GREATEST(o.ended_at, excluded.ended_at),
  position = LEAST(o.position, excluded.position),
  {latest(OPERATION_FIELDS, "o", {})},
  last_event_time = GREATEST(o.last_event_time, excluded.last_event_time)
"""

_IO_COLUMNS = """(created_at, operation_id, dataset_id, run_id, job_id, schema_id, schema_time,
  num_rows, num_bytes, num_files, last_event_time{extra})"""
_IO_TYPES = (
    "timestamptz", "uuid", "bigint", "uuid", "bigint", "bigint", "timestamptz", "bigint",
    "bigint", "bigint", "timestamptz",
)  # fmt: skip
# The later schema wins; as late, the one with the greater digest (as merge.merge_ios).
_SCHEMA_BY_DIGEST = SCHEMA_BY_DIGEST.format(a="x.schema_id", b="excluded.schema_id")
_SCHEMA_NEWER = f"""excluded.schema_id IS NOT NULL AND (x.schema_id IS NULL
    OR excluded.schema_time > x.schema_time
    OR excluded.schema_time = x.schema_time AND excluded.schema_id <> x.schema_id
       AND excluded.schema_id = ({_SCHEMA_BY_DIGEST}))"""
# Whose operation it is, should events disagree: the run and job of the latest event;
# equal times: the greater run id, then the greater job by natural key (merge.owner_of_latest).
# last_event_time is the latest event's time on both sides (every SET sees the old row).
_OWNER_LATER = f"""excluded.last_event_time > x.last_event_time
    OR excluded.last_event_time = x.last_event_time AND (excluded.run_id > x.run_id
       OR excluded.run_id = x.run_id AND excluded.job_id <> x.job_id
          AND excluded.job_id = ({JOB_BY_KEY.format(a="x.job_id", b="excluded.job_id")}))"""
_OWNER_SET = f"""
  run_id = CASE WHEN {_OWNER_LATER} THEN excluded.run_id ELSE x.run_id END,
  job_id = CASE WHEN {_OWNER_LATER} THEN excluded.job_id ELSE x.job_id END,"""
_IO_SET = f"""{_OWNER_SET}
  schema_id = CASE WHEN {_SCHEMA_NEWER} THEN excluded.schema_id ELSE x.schema_id END,
  schema_time = CASE WHEN {_SCHEMA_NEWER} THEN excluded.schema_time ELSE x.schema_time END,
  num_rows = GREATEST(x.num_rows, excluded.num_rows),
  num_bytes = GREATEST(x.num_bytes, excluded.num_bytes),
  num_files = GREATEST(x.num_files, excluded.num_files),
  last_event_time = GREATEST(x.last_event_time, excluded.last_event_time)"""

UPSERT_INPUTS = f"""
INSERT INTO input AS x {_IO_COLUMNS.format(extra="")}
{json_rows(_IO_TYPES)}
ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET {_IO_SET}
"""

UPSERT_OUTPUTS = f"""
INSERT INTO output AS x {_IO_COLUMNS.format(extra=", types")}
{json_rows((*_IO_TYPES, "int"))}
ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET {_IO_SET},
  types = x.types | excluded.types
"""

_COLUMN_LINEAGE_TYPES = (
    "timestamptz", "uuid", "bigint", "bigint", "uuid", "uuid", "bigint", "timestamptz",
)  # fmt: skip
UPSERT_COLUMN_LINEAGE = f"""
INSERT INTO column_lineage AS x (created_at, operation_id, source_dataset_id, target_dataset_id,
  column_set_id, run_id, job_id, last_event_time)
{json_rows(_COLUMN_LINEAGE_TYPES)}
ON CONFLICT (created_at, operation_id, source_dataset_id, target_dataset_id, column_set_id)
  DO UPDATE SET {_OWNER_SET}
  last_event_time = GREATEST(x.last_event_time, excluded.last_event_time)
"""

UPSERT_JOB_DATASETS = """
INSERT INTO job_dataset AS x (job_id, dataset_id, direction, first_seen_at, last_seen_at)
SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[], $4::timestamptz[],
  $5::timestamptz[])
ON CONFLICT (job_id, dataset_id, direction) DO UPDATE SET
  first_seen_at = LEAST(x.first_seen_at, excluded.first_seen_at),
  last_seen_at = GREATEST(x.last_seen_at, excluded.last_seen_at)
"""

# Anchors of non-UUIDv7 ids: the earliest eventTime ever seen wins. New ids are inserted
# first: an id this statement inserts has no rows anywhere yet, so nothing moves for it (a
# stream's ids are nearly all new). An id that conflicts waits for the transaction that
# inserted it, and is then locked with its stored time (LOCK_ANCHORS) before it moves.
INSERT_ANCHORS = """
INSERT INTO uuid_anchor (id, created_at)
SELECT * FROM unnest($1::uuid[], $2::timestamptz[])
ON CONFLICT (id) DO NOTHING
RETURNING id
"""

LOCK_ANCHORS = "SELECT id, created_at FROM uuid_anchor WHERE id = ANY($1::uuid[]) FOR UPDATE"

MOVE_ANCHORS = """
UPDATE uuid_anchor AS a SET created_at = m.at
FROM unnest($1::uuid[], $2::timestamptz[]) AS m(id, at)
WHERE a.id = m.id
"""

# Moving a non-v7 run/operation to an earlier anchor moves its rows between partitions.
# One set-based statement per table for all the batch's moved anchors. Every row of an
# id is stored under its current anchor (each move brings all of them along), so the old
# time bounds the search to a primary-key prefix: without it, column_lineage (no index
# on operation_id alone) was scanned whole for every batch, 0.2-0.6 s on a 1M-event
# database.
_REHOME = """UPDATE {table} AS t SET created_at = a.at
FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[]) AS a(id, at, old)
WHERE t.created_at = a.old AND t.{column} = a.id"""
REHOME = tuple(
    _REHOME.format(table=table, column=column)
    for table, column in (
        ("run", "id"),
        ("operation", "id"),
        ("input", "operation_id"),
        ("output", "operation_id"),
        ("column_lineage", "operation_id"),
    )
)

# A dataset keeps the greatest format any event gave it, compared by code point like the
# in-memory rule (COLLATE "C"); rows whose format would not change are not rewritten.
STORE_DATASET_FORMATS = """
UPDATE dataset AS d SET format = k.format
FROM unnest($1::bigint[], $2::text[]) AS k(id, format)
WHERE d.id = k.id AND (d.format IS NULL OR d.format COLLATE "C" < k.format COLLATE "C")
"""
