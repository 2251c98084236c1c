"""column lineage stored as column sets: one row per operation, dataset pair and set

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27

A row of `column_lineage` held one column edge (source column -> target column) of one
operation. Nearly every event names the same few edges again, so rows and their index
entries were most of what PostgreSQL wrote for the time-series tables: 43% of its write
CPU on the benchmark stream (benchmarks/README.md, twenty-seventh session). The edges one
event gives from one source dataset to one target are now a set, stored once in
`column_set` under its digest, and `column_lineage` keeps one row per (operation, source,
target, set): 33,718 rows became ~9,400 rows and ~1,100 sets on the benchmark stream.

Sets are made per event, so the rows do not depend on which events shared a batch. An edge
two sets hold is read as one edge: types OR-ed, latest time kept. A row's run and job are
those of the latest event that named its set (before: of the latest event that named the
edge), so when the events of one operation disagree about its run, an edge can show under
each of the runs whose events named it. A set's row keeps the time of the latest event
that named it, so under a time window an edge carries the kinds of the sets named within
the window; before, an edge named within it carried every kind its operation gave it.

The upgrade regroups the stored edges into one set per (operation, source, target, run,
job, last event time), which keeps every edge's types, times and owner as they were. The
downgrade expands the sets again, an edge that two rows hold taking the types of both,
the latest time and the latest row's run and job (the merge rule). Both rewrite every
column-lineage row in the migration's transaction. The dataset merge function moves rows
with their set ids.
"""

import importlib
from collections.abc import Sequence
from types import ModuleType

from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The members' order and the digest, as consumer/extract/columns.py computes them.
_ORDER = 'source_column COLLATE "C", target_column COLLATE "C"'
_MEMBER = (
    "length(source_column) || ':' || source_column || ' ' || length(target_column) || ':'"
    " || target_column || ' ' || types || ';'"
)

UPGRADE = f"""
CREATE TABLE column_set (
  id uuid NOT NULL,
  source_columns text[] NOT NULL,
  target_columns text[] NOT NULL,
  types integer[] NOT NULL,
  CONSTRAINT pk_column_set PRIMARY KEY (id)
);
CREATE TEMPORARY TABLE column_groups ON COMMIT DROP AS
SELECT created_at, operation_id, source_dataset_id, target_dataset_id, run_id, job_id,
       last_event_time,
       encode(substring(sha256(convert_to(string_agg({_MEMBER}, '' ORDER BY {_ORDER}), 'UTF8'))
                        FROM 1 FOR 16), 'hex')::uuid AS column_set_id,
       array_agg(source_column ORDER BY {_ORDER}) AS source_columns,
       array_agg(target_column ORDER BY {_ORDER}) AS target_columns,
       array_agg(types ORDER BY {_ORDER}) AS types
FROM column_lineage
GROUP BY created_at, operation_id, source_dataset_id, target_dataset_id, run_id, job_id,
         last_event_time;
INSERT INTO column_set (id, source_columns, target_columns, types)
SELECT DISTINCT ON (column_set_id) column_set_id, source_columns, target_columns, types
FROM column_groups ORDER BY column_set_id;
TRUNCATE column_lineage;
ALTER TABLE column_lineage DROP CONSTRAINT pk_column_lineage;
DROP INDEX ix_column_lineage_target;
ALTER TABLE column_lineage DROP COLUMN source_column, DROP COLUMN target_column,
  DROP COLUMN types, ADD COLUMN column_set_id uuid NOT NULL;
ALTER TABLE column_lineage ADD CONSTRAINT pk_column_lineage PRIMARY KEY
  (created_at, operation_id, source_dataset_id, target_dataset_id, column_set_id);
CREATE INDEX ix_column_lineage_target_dataset_id ON column_lineage (target_dataset_id);
INSERT INTO column_lineage (created_at, operation_id, source_dataset_id, target_dataset_id,
  column_set_id, run_id, job_id, last_event_time)
SELECT created_at, operation_id, source_dataset_id, target_dataset_id, column_set_id, run_id,
       job_id, last_event_time
FROM column_groups;
"""

_EDGE = "created_at, operation_id, source_dataset_id, source_column, target_dataset_id, target_column"
# Each edge takes the run and job of its latest row (`row_time`: in ORDER BY, a bare
# `last_event_time` would name the output column, the edge's greatest time, and every row
# would tie on it).
DOWNGRADE = f"""
CREATE TEMPORARY TABLE column_edges ON COMMIT DROP AS
SELECT DISTINCT ON ({_EDGE}) {_EDGE}, run_id, job_id,
       bit_or(types) OVER edge AS types, max(row_time) OVER edge AS last_event_time
FROM (
  SELECT c.created_at, c.operation_id, c.source_dataset_id, m.source_column,
         c.target_dataset_id, m.target_column, c.run_id, c.job_id, m.types,
         c.last_event_time AS row_time, l.type AS location_type, l.name AS location_name,
         j.name AS job_name
  FROM column_lineage c
  JOIN column_set s ON s.id = c.column_set_id
  CROSS JOIN LATERAL unnest(s.source_columns, s.target_columns, s.types)
    AS m(source_column, target_column, types)
  LEFT JOIN job j ON j.id = c.job_id
  LEFT JOIN location l ON l.id = j.location_id
) AS e
WINDOW edge AS (PARTITION BY {_EDGE})
ORDER BY {_EDGE}, row_time DESC, run_id DESC, location_type COLLATE "C" DESC,
         location_name COLLATE "C" DESC, job_name COLLATE "C" DESC;
TRUNCATE column_lineage;
ALTER TABLE column_lineage DROP CONSTRAINT pk_column_lineage;
DROP INDEX ix_column_lineage_target_dataset_id;
ALTER TABLE column_lineage DROP COLUMN column_set_id,
  ADD COLUMN source_column text NOT NULL, ADD COLUMN target_column text NOT NULL,
  ADD COLUMN types integer NOT NULL DEFAULT 0;
ALTER TABLE column_lineage ADD CONSTRAINT pk_column_lineage PRIMARY KEY ({_EDGE});
CREATE INDEX ix_column_lineage_target ON column_lineage (target_dataset_id, target_column);
INSERT INTO column_lineage (created_at, operation_id, source_dataset_id, source_column,
  target_dataset_id, target_column, run_id, job_id, types, last_event_time)
SELECT {_EDGE}, run_id, job_id, types, last_event_time FROM column_edges;
DROP TABLE column_set;
"""

_SET_KEY = "created_at, operation_id, source_dataset_id, target_dataset_id, column_set_id"


def _set_move(owner_set: str, *, src: str, tgt: str, col: str) -> str:
    """Rows of `p_source` moved to `p_target` with their sets; two rows that meet keep the
    later one's run and job (0009's rule) and the latest time."""
    return f"""
  INSERT INTO column_lineage AS x ({_SET_KEY}, run_id, job_id, last_event_time)
  SELECT created_at, operation_id, {src}, {tgt}, column_set_id, run_id, job_id, last_event_time
  FROM column_lineage WHERE {col} = p_source
  ON CONFLICT ({_SET_KEY}) DO UPDATE SET
{owner_set}    last_event_time = GREATEST(x.last_event_time, excluded.last_event_time);
  DELETE FROM column_lineage WHERE {col} = p_source;
"""


def _function(*, sets: bool) -> str:
    """0009's dataset merge function, its column-lineage moves by set or by edge."""
    m0006 = _module("0006_merge_schema_by_digest")
    m0009 = _module("0009_dataset_format_greatest")
    body: str = m0009._function(greater_format=True, owner_rule=True)
    if not sets:
        return body
    moves = (
        {"src": "p_target", "tgt": "target_dataset_id", "col": "source_dataset_id"},
        {"src": "source_dataset_id", "tgt": "p_target", "col": "target_dataset_id"},
    )
    for names in moves:
        old = m0006.CLL_MOVE.format(**names)
        old = old.replace(m0009.CLL_ANCHOR, m0009.OWNER_SET + m0009.CLL_ANCHOR)
        if old not in body:
            raise RuntimeError("0009's dataset merge function changed: a column move is gone")
        body = body.replace(old, _set_move(m0009.OWNER_SET, **names))
    return body


def upgrade() -> None:
    _run(UPGRADE)
    op.execute(_function(sets=True))


def downgrade() -> None:
    op.execute(_function(sets=False))
    _run(DOWNGRADE)


def _run(script: str) -> None:
    # One statement per call: asyncpg prepares each, and a prepared statement is one command.
    for statement in script.split(";\n"):
        if statement.strip():
            op.execute(statement)


def _module(name: str) -> ModuleType:
    # By import_module: the module names start with a digit.
    return importlib.import_module(f"migrations.versions.{name}")
