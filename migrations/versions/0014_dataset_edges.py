"""dataset edges: per (source dataset, target dataset) summaries of operations' input/output pairs

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28

Lineage at DATASET granularity joined each input row of a level's datasets to the output
rows of its operation, one index probe per input row, for a few edges per level (395 rows
for 23 edges in the 40k-event benchmark database's largest graph). `dataset_edge` keeps,
per pair of datasets that one operation read and wrote, what that join sums: the outputs'
counters, bit mask and times, the latest schema of each side, and the pairs' time bounds.
Statement-level triggers keep it as `job_edge` (migration 0013) is kept:

- an inserted input row pairs with the outputs its operation already has, an inserted
  output row with all its operation's inputs (the consumer writes a batch's inputs first);
  both sides of an operation share its created_at, which prunes the lookup to a partition;
- an updated output row adds the difference of its counters to each of its pairs; an
  updated input row only moves its pairs' times and source schema. Updates pair rows by
  operation alone: an anchor move updates the inputs, then the outputs;
- a schema replaced at the same time, or a deleted row (merges), leaves the pair stale.

Readers use a summary only when it is not stale and covers the window; the rows otherwise
(`server.lineage.queries`). Filled from the existing rows with both tables locked, by
`threadline_rebuild_edges()`, which refills both summary tables: what an operator runs
after dropping old partitions (a dropped partition fires no trigger).
"""

import importlib
from collections.abc import Sequence
from types import ModuleType

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

def _module(name: str) -> ModuleType:
    # By import_module: the module names start with a digit.
    return importlib.import_module(f"migrations.versions.{name}")


# The summary columns, merge rules and the job summaries' fill, as 0013 has them.
JOB_EDGES = _module("0013_job_edges")

TABLE = f"""
CREATE TABLE dataset_edge (
  source_id bigint NOT NULL,
  target_id bigint NOT NULL,{JOB_EDGES.SUMMARY_COLUMNS}
  source_schema_seen_at timestamptz,
  source_schema_id bigint,
  target_schema_seen_at timestamptz,
  target_schema_id bigint,
  stale boolean NOT NULL,
  CONSTRAINT pk_dataset_edge PRIMARY KEY (source_id, target_id)
) WITH (fillfactor = 30)
"""
INDEX = "CREATE INDEX ix_dataset_edge_target_id ON dataset_edge (target_id)"

_LATEST = JOB_EDGES.LATEST_SCHEMA
_SCHEMAS = ",".join(JOB_EDGES.NEWER_SCHEMA.format(p=side) for side in ("source_", "target_"))
UPSERT = f"""
INSERT INTO dataset_edge AS e (source_id, target_id, num_rows, rows_known, num_bytes,
  bytes_known, num_files, files_known, types, first_seen_at, last_created_at, last_seen_at,
  earliest_seen_at, source_schema_seen_at, source_schema_id, target_schema_seen_at,
  target_schema_id, stale)
SELECT source_id, target_id, coalesce(sum(num_rows), 0), sum(rk), coalesce(sum(num_bytes), 0),
       sum(bk), coalesce(sum(num_files), 0), sum(fk), bit_or(types), min(created_at),
       max(created_at), max(o_seen), LEAST(min(i_seen), min(o_seen)),
       max(i_seen) FILTER (WHERE i_schema IS NOT NULL),
       {_LATEST.format(seen="i_seen", schema="i_schema")},
       max(o_seen) FILTER (WHERE o_schema IS NOT NULL),
       {_LATEST.format(seen="o_seen", schema="o_schema")},
       bool_or(lost)
FROM ({{contributions}}) AS c
GROUP BY source_id, target_id
ORDER BY source_id, target_id
ON CONFLICT (source_id, target_id) DO UPDATE SET{JOB_EDGES.SUMMARY_SET}
  types = coalesce(e.types | excluded.types, e.types, excluded.types),{_SCHEMAS}
"""
# A contribution: source_id, target_id, the output's counters (negated for an old version)
# and whether each is known, its types and created_at, each side's time and schema, lost.
_PAIRS = """
SELECT i.dataset_id AS source_id, o.dataset_id AS target_id, {sign}o.num_rows AS num_rows,
       {sign}o.num_bytes AS num_bytes, {sign}o.num_files AS num_files,
       {sign}(o.num_rows IS NOT NULL)::int AS rk, {sign}(o.num_bytes IS NOT NULL)::int AS bk,
       {sign}(o.num_files IS NOT NULL)::int AS fk, {o}.types AS types,
       {o}.created_at AS created_at, {i}.last_event_time AS i_seen, {i}.schema_id AS i_schema,
       {o}.last_event_time AS o_seen, {o}.schema_id AS o_schema, {lost} AS lost
FROM {inputs} AS i JOIN {outputs} AS o ON o.operation_id = i.operation_id{same_time}"""
_SAME_TIME = " AND o.created_at = i.created_at"
# The old version of an updated row: its pair stale if it lost a schema (replaced without
# a later time). `x`: the row's new version. An old version's times, types and schema may
# enter the aggregates with the new one's: they are never later, nor more bits.
_LOST = """(x.schema_id IS DISTINCT FROM {v}.schema_id AND {v}.schema_id IS NOT NULL
       AND x.last_event_time <= {v}.last_event_time)"""
_OLD_VERSION = " JOIN n AS x ON x.operation_id = {v}.operation_id AND x.dataset_id = {v}.dataset_id"


def _pairs(inputs: str, outputs: str, **parts: str) -> str:
    values = {"sign": "", "i": "i", "o": "o", "lost": "false", "same_time": "", **parts}
    return _PAIRS.format(inputs=inputs, outputs=outputs, **values)


def _old(side: str) -> str:
    """An old version's contribution: `side` ("i" or "o") is the updated table's alias."""
    return _LOST.format(v=side)


CONTRIBUTIONS = {
    ("input", "insert"): _pairs("n", "output", same_time=_SAME_TIME),
    ("output", "insert"): _pairs("input", "n", same_time=_SAME_TIME),
    # An output's new version, and its old one with its counters taken back.
    ("output", "update"): _pairs("input", "n")
    + " UNION ALL "
    + _pairs("input", "o", sign="-", lost=_old("o"))
    + _OLD_VERSION.format(v="o"),
    # An input's new times and schema (no counters); its old version to mark a lost schema.
    ("input", "update"): _pairs("n", "output", sign="0 * ")
    + " UNION ALL "
    + _pairs("o", "output", sign="0 * ", lost=_old("i"))
    + _OLD_VERSION.format(v="i"),
}
STALE = """
UPDATE dataset_edge SET stale = true
WHERE {column} IN (SELECT DISTINCT dataset_id FROM o) AND NOT stale"""
SIDE = {"input": "source_id", "output": "target_id"}


def _body(table: str, event: str) -> str:
    if event == "delete":
        return STALE.format(column=SIDE[table])
    return UPSERT.format(contributions=CONTRIBUTIONS[table, event])


def _rebuild() -> str:
    """threadline_rebuild_edges(): both summary tables emptied and filled from the rows,
    which no one writes meanwhile (the lock waits for writers and holds new ones back)."""
    fills = [JOB_EDGES.upsert(t, JOB_EDGES.rows(t, t)) for t in JOB_EDGES.TABLES]
    fills.append(UPSERT.format(contributions=_pairs("input", "output", same_time=_SAME_TIME)))
    body = ";\n".join(
        ["LOCK TABLE input, output IN SHARE MODE", "DELETE FROM job_edge", *fills[:2]]
        + ["DELETE FROM dataset_edge", fills[2]]
    )
    return f"""
CREATE FUNCTION threadline_rebuild_edges() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
{body};
END $$
"""


def upgrade() -> None:
    op.execute(TABLE)
    op.execute(INDEX)
    for table in SIDE:
        for event, tables in JOB_EDGES.EVENTS.items():
            names = {"summary": "dataset_edge", "table": table, "event": event}
            op.execute(JOB_EDGES.FUNCTION.format(body=_body(table, event), **names))
            op.execute(JOB_EDGES.TRIGGER.format(tables=tables, event_upper=event.upper(), **names))
    op.execute(_rebuild())
    op.execute("SELECT threadline_rebuild_edges()")


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS threadline_rebuild_edges()")
    for table in SIDE:
        for event in JOB_EDGES.EVENTS:
            op.execute(f"DROP TRIGGER IF EXISTS dataset_edge_{event} ON {table}")
            op.execute(f"DROP FUNCTION IF EXISTS threadline_dataset_edge_{table}_{event}()")
    op.execute("DROP TABLE IF EXISTS dataset_edge")
