"""SQL of the write stage: set-based upserts over unnest()ed arrays, one statement per table.

Each ON CONFLICT clause applies the merge rules of `consumer.merge` to the
stored row, so a record meeting an earlier state gives the same result as if
both had been merged in memory.
"""

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


def latest(col: str, table: str) -> str:
    """SET clause: the later non-null value by last_event_time; a tie takes the greater."""
    # Text compares with COLLATE "C" (code points) so ties resolve as Python's max() does.
    c = ' COLLATE "C"' if col in TEXT_COLUMNS else ""
    return (
        f'"{col}" = CASE WHEN excluded.last_event_time > {table}.last_event_time'
        f' THEN COALESCE(excluded."{col}", {table}."{col}")'
        f" WHEN excluded.last_event_time < {table}.last_event_time"
        f' THEN COALESCE({table}."{col}", excluded."{col}")'
        f' ELSE GREATEST({table}."{col}"{c}, excluded."{col}"{c}) END'
    )


def _latest_all(cols: tuple[str, ...], table: str) -> str:
    return ",\n  ".join(latest(c, table) for c in cols)


RUN_LATEST = (
    "job_id",
    "parent_run_id",
    "started_by_user_id",
    "start_reason",
    "ended_reason",
    "external_id",
    "attempt",
    "running_log_url",
    "persistent_log_url",
)
OPERATION_LATEST = ("run_id", "name", "type", "position", "group", "description", "sql_query")

UPSERT_RUNS = f"""
INSERT INTO run AS r (created_at, id, job_id, parent_run_id, status, started_at, ended_at,
  started_by_user_id, start_reason, ended_reason, external_id, attempt, running_log_url,
  persistent_log_url, last_event_time)
SELECT * FROM unnest($1::timestamptz[], $2::uuid[], $3::bigint[], $4::uuid[], $5::smallint[],
  $6::timestamptz[], $7::timestamptz[], $8::bigint[], $9::text[], $10::text[], $11::text[],
  $12::int[], $13::text[], $14::text[], $15::timestamptz[])
ON CONFLICT (created_at, id) DO UPDATE SET
  status = GREATEST(r.status, excluded.status),
  started_at = LEAST(r.started_at, excluded.started_at),
  ended_at = GREATEST(r.ended_at, excluded.ended_at),
  {_latest_all(RUN_LATEST, "r")},
  last_event_time = GREATEST(r.last_event_time, excluded.last_event_time)
"""  # noqa: S608 - constant column names only; every value is a bound parameter

UPSERT_OPERATIONS = f"""
INSERT INTO operation AS o (created_at, id, run_id, name, type, status, position, "group",
  description, sql_query, started_at, ended_at, last_event_time)
SELECT * FROM unnest($1::timestamptz[], $2::uuid[], $3::uuid[], $4::text[], $5::text[],
  $6::smallint[], $7::int[], $8::text[], $9::text[], $10::text[], $11::timestamptz[],
  $12::timestamptz[], $13::timestamptz[])
ON CONFLICT (created_at, id) DO UPDATE SET
  status = GREATEST(o.status, excluded.status),
  started_at = LEAST(o.started_at, excluded.started_at),
  ended_at = GREATEST(o.ended_at, excluded.ended_at),
  {_latest_all(OPERATION_LATEST, "o")},
  last_event_time = GREATEST(o.last_event_time, excluded.last_event_time)
"""  # noqa: S608 - constant column names only; every value is a bound parameter

_IO_COLUMNS = """(created_at, operation_id, dataset_id, run_id, job_id, schema_id,
  num_rows, num_bytes, num_files, last_event_time{extra})"""
_IO_VALUES = """unnest($1::timestamptz[], $2::uuid[], $3::bigint[], $4::uuid[], $5::bigint[],
  $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::timestamptz[]{extra})"""
_IO_SET = f"""
  {latest("schema_id", "x")},
  num_rows = GREATEST(x.num_rows, excluded.num_rows),
  num_bytes = GREATEST(x.num_bytes, excluded.num_bytes),
  num_files = GREATEST(x.num_files, excluded.num_files),
  last_event_time = GREATEST(x.last_event_time, excluded.last_event_time)"""

UPSERT_INPUTS = f"""
INSERT INTO input AS x {_IO_COLUMNS.format(extra="")}
SELECT * FROM {_IO_VALUES.format(extra="")}
ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET {_IO_SET}
"""  # noqa: S608 - constant column names only; every value is a bound parameter

UPSERT_OUTPUTS = f"""
INSERT INTO output AS x {_IO_COLUMNS.format(extra=", types")}
SELECT * FROM {_IO_VALUES.format(extra=", $11::int[]")}
ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET {_IO_SET},
  types = x.types | excluded.types
"""  # noqa: S608 - constant column names only; every value is a bound parameter

UPSERT_COLUMN_LINEAGE = """
INSERT INTO column_lineage AS x (created_at, operation_id, source_dataset_id, source_column,
  target_dataset_id, target_column, run_id, job_id, types, last_event_time)
SELECT * FROM unnest($1::timestamptz[], $2::uuid[], $3::bigint[], $4::text[], $5::bigint[],
  $6::text[], $7::uuid[], $8::bigint[], $9::int[], $10::timestamptz[])
ON CONFLICT (created_at, operation_id, source_dataset_id, source_column, target_dataset_id,
  target_column) DO UPDATE SET
  types = x.types | excluded.types,
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

# Anchors of non-UUIDv7 ids: the earliest eventTime ever seen wins.
UPSERT_ANCHORS = """
INSERT INTO uuid_anchor AS a (id, created_at)
SELECT * FROM unnest($1::uuid[], $2::timestamptz[])
ON CONFLICT (id) DO UPDATE SET created_at = LEAST(a.created_at, excluded.created_at)
RETURNING id, created_at
"""

LOCK_ANCHORS = "SELECT id, created_at FROM uuid_anchor WHERE id = ANY($1::uuid[]) FOR UPDATE"

# Moving a non-v7 run/operation to an earlier anchor moves its rows between partitions.
REHOME = {
    "run": "UPDATE run SET created_at = $2 WHERE id = $1 AND created_at <> $2",
    "operation": "UPDATE operation SET created_at = $2 WHERE id = $1 AND created_at <> $2",
    "input": "UPDATE input SET created_at = $2 WHERE operation_id = $1 AND created_at <> $2",
    "output": "UPDATE output SET created_at = $2 WHERE operation_id = $1 AND created_at <> $2",
    "column_lineage": (
        "UPDATE column_lineage SET created_at = $2 WHERE operation_id = $1 AND created_at <> $2"
    ),
}
