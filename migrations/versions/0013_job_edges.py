"""job edges: per (dataset, job, direction) summaries of the input and output rows

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28

Lineage at JOB granularity summed every input or output row of each (dataset, job) pair a
level reached: a daily job has a row per run, and a level read them all. `job_edge` keeps
those sums, kept exact by statement-level triggers on `input` and `output` from their
transition tables (one upsert per statement, the rows grouped by pair):

- inserted rows add to their pair's sums, counts, bit masks and time bounds;
- updated rows add the difference between their new and old values (the consumer only
  raises counters and moves times one way), and mark their old pair `stale` if they
  changed jobs or had their schema replaced at the same time, which sums cannot undo;
- deleted rows (dataset and job merges) mark their pairs `stale`.

A reader uses a summary only when it is not stale and its time bounds lie inside the
asked window (`server.lineage.queries`), and the rows otherwise. The summaries are
filled from the existing rows with both tables locked against writes, so they start
exact. `fillfactor` 30: nearly every write updates a summary in place (HOT). Through the
consumer's pipeline without Kafka (`grown.py`) ingest lost ~6% with it and ~9% without;
through Kafka, 1.6-4.8% (benchmarks/README.md, forty-first set).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# What every summary table keeps besides its keys and schemas (0014's dataset_edge too).
SUMMARY_COLUMNS = """
  num_rows bigint NOT NULL,
  rows_known bigint NOT NULL,
  num_bytes bigint NOT NULL,
  bytes_known bigint NOT NULL,
  num_files bigint NOT NULL,
  files_known bigint NOT NULL,
  types integer,
  first_seen_at timestamptz,
  last_created_at timestamptz,
  last_seen_at timestamptz,
  earliest_seen_at timestamptz,"""
TABLE = f"""
CREATE TABLE job_edge (
  dataset_id bigint NOT NULL,
  direction smallint NOT NULL,
  job_id bigint NOT NULL,{SUMMARY_COLUMNS}
  schema_seen_at timestamptz,
  schema_id bigint,
  stale boolean NOT NULL,
  CONSTRAINT pk_job_edge PRIMARY KEY (dataset_id, direction, job_id)
) WITH (fillfactor = 30)
"""
INDEX = "CREATE INDEX ix_job_edge_job_id ON job_edge (job_id, direction)"

# How a summary takes a statement's grouped contributions `excluded` (0014's too): sums and
# counts added, bounds widened, the stale flag kept once set.
SUMMARY_SET = """
  num_rows = e.num_rows + excluded.num_rows,
  rows_known = e.rows_known + excluded.rows_known,
  num_bytes = e.num_bytes + excluded.num_bytes,
  bytes_known = e.bytes_known + excluded.bytes_known,
  num_files = e.num_files + excluded.num_files,
  files_known = e.files_known + excluded.files_known,
  first_seen_at = LEAST(e.first_seen_at, excluded.first_seen_at),
  last_created_at = GREATEST(e.last_created_at, excluded.last_created_at),
  last_seen_at = GREATEST(e.last_seen_at, excluded.last_seen_at),
  earliest_seen_at = LEAST(e.earliest_seen_at, excluded.earliest_seen_at),
  stale = e.stale OR excluded.stale,"""
# The latest schema of rows: the greatest [time in microseconds, schema id], so the greater
# id on equal times, what the JOB level's probe returns; and how a summary takes a newer one
# (`{p}`: the columns' prefix).
LATEST_SCHEMA = """(max(ARRAY[(extract(epoch FROM {seen}) * 1000000)::bigint, {schema}])
          FILTER (WHERE {schema} IS NOT NULL))[2]"""
NEWER_SCHEMA = """
  {p}schema_id = CASE
    WHEN excluded.{p}schema_seen_at IS NULL THEN e.{p}schema_id
    WHEN e.{p}schema_seen_at IS NULL OR excluded.{p}schema_seen_at > e.{p}schema_seen_at
      THEN excluded.{p}schema_id
    WHEN excluded.{p}schema_seen_at = e.{p}schema_seen_at
      THEN GREATEST(e.{p}schema_id, excluded.{p}schema_id)
    ELSE e.{p}schema_id END,
  {p}schema_seen_at = GREATEST(e.{p}schema_seen_at, excluded.{p}schema_seen_at)"""
# One upsert of the grouped contributions `c` (a row's values, or the negated counters of
# a row's old version).
UPSERT = f"""
INSERT INTO job_edge AS e (dataset_id, direction, job_id, num_rows, rows_known, num_bytes,
  bytes_known, num_files, files_known, types, first_seen_at, last_created_at, last_seen_at,
  earliest_seen_at, schema_seen_at, schema_id, stale)
SELECT dataset_id, {{direction}}, job_id, coalesce(sum(num_rows), 0), sum(rk),
       coalesce(sum(num_bytes), 0), sum(bk), coalesce(sum(num_files), 0), sum(fk),
       {{types}}, min(created_at), max(created_at), max(last_event_time), min(last_event_time),
       max(last_event_time) FILTER (WHERE schema_id IS NOT NULL),
       {LATEST_SCHEMA.format(seen="last_event_time", schema="schema_id")},
       bool_or(lost)
FROM ({{contributions}}) AS c
GROUP BY dataset_id, job_id
ORDER BY dataset_id, job_id
ON CONFLICT (dataset_id, direction, job_id) DO UPDATE SET{SUMMARY_SET}
  types = {{types_set}},{NEWER_SCHEMA.format(p="")}
"""
# Columns of a contribution: dataset_id, job_id, num_rows, num_bytes, num_files, rk, bk, fk
# (1 where the counter is known), types, created_at, last_event_time, schema_id, lost.
ROWS = """
SELECT dataset_id, job_id, num_rows, num_bytes, num_files, (num_rows IS NOT NULL)::int AS rk,
       (num_bytes IS NOT NULL)::int AS bk, (num_files IS NOT NULL)::int AS fk, {types} AS types,
       created_at, last_event_time, schema_id, false AS lost
FROM {source}"""
# An updated row's old version, paired with its new one by (operation, dataset): its
# counters taken back; its pair stale if the row left it (another job) or lost a schema
# (replaced without a later time).
OLD_ROWS = """
SELECT o.dataset_id, o.job_id, -o.num_rows, -o.num_bytes, -o.num_files,
       -(o.num_rows IS NOT NULL)::int, -(o.num_bytes IS NOT NULL)::int,
       -(o.num_files IS NOT NULL)::int, NULL::int, NULL::timestamptz, NULL::timestamptz,
       NULL::bigint,
       m.job_id IS DISTINCT FROM o.job_id
         OR o.schema_id IS NOT NULL AND m.schema_id IS DISTINCT FROM o.schema_id
            AND m.last_event_time <= o.last_event_time
FROM o LEFT JOIN n AS m ON m.operation_id = o.operation_id AND m.dataset_id = o.dataset_id"""
DELETED = """
SELECT DISTINCT dataset_id, job_id, 0::bigint AS num_rows, 0::bigint AS num_bytes,
       0::bigint AS num_files, 0 AS rk, 0 AS bk, 0 AS fk, NULL::int AS types,
       NULL::timestamptz AS created_at, NULL::timestamptz AS last_event_time,
       NULL::bigint AS schema_id, true AS lost
FROM o"""
# A summary table's (`summary`) trigger on `table` for `event`, and its function (0014's too).
FUNCTION = """
CREATE FUNCTION threadline_{summary}_{table}_{event}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{body};
RETURN NULL;
END $$
"""
TRIGGER = """
CREATE TRIGGER {summary}_{event} AFTER {event_upper} ON {table}
REFERENCING {tables} FOR EACH STATEMENT EXECUTE FUNCTION threadline_{summary}_{table}_{event}()
"""
TABLES = {"input": 0, "output": 1}
EVENTS = {
    "insert": "NEW TABLE AS n",
    "update": "OLD TABLE AS o NEW TABLE AS n",
    "delete": "OLD TABLE AS o",
}


def upsert(table: str, contributions: str) -> str:
    output = table == "output"
    return UPSERT.format(
        direction=TABLES[table],
        types="bit_or(types)" if output else "NULL::int",
        types_set="e.types | excluded.types" if output else "NULL",
        contributions=contributions,
    )


def rows(table: str, source: str) -> str:
    return ROWS.format(types="types" if table == "output" else "NULL::int", source=source)


def _contributions(table: str, event: str) -> str:
    if event == "insert":
        return rows(table, "n")
    if event == "update":
        return f"{rows(table, 'n')} UNION ALL {OLD_ROWS}"
    return DELETED


def upgrade() -> None:
    op.execute(TABLE)
    op.execute(INDEX)
    # No writes while the summaries are filled: they start equal to the rows.
    op.execute("LOCK TABLE input, output IN SHARE MODE")
    for table in TABLES:
        for event, tables in EVENTS.items():
            names = {"summary": "job_edge", "table": table, "event": event}
            op.execute(FUNCTION.format(body=upsert(table, _contributions(table, event)), **names))
            op.execute(TRIGGER.format(tables=tables, event_upper=event.upper(), **names))
        op.execute(upsert(table, rows(table, table)))


def downgrade() -> None:
    for table in TABLES:
        for event in EVENTS:
            op.execute(f"DROP TRIGGER IF EXISTS job_edge_{event} ON {table}")
            op.execute(f"DROP FUNCTION IF EXISTS threadline_job_edge_{table}_{event}()")
    op.execute("DROP TABLE IF EXISTS job_edge")
