"""per-field event times: descriptive fields take the latest non-null value

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-21

Until now a run's, an operation's and an input/output's descriptive fields took
the greatest non-null value, because a row kept one last_event_time and with one
time per row "the latest non-null" depends on arrival order (t1 alice, t3 no
user, t2 bob). Each such field now keeps the eventTime of the event its value
came from: run.field_times / operation.field_times (one element per field, in
the order below; NULL where the field is NULL) and input/output.schema_time. The
merge keeps the value with the greatest (time, value), which is both "the latest
non-null" and order-independent.

Existing rows get their row's last_event_time for every non-null field: the best
that is known of them.

The dataset merge function moves inputs/outputs between datasets; on conflict it
now keeps the schema by (schema_time, digest) as the consumer does.
"""

import importlib
from collections.abc import Sequence
from types import ModuleType

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# A frozen copy of shared.models.RUN_FIELDS / OPERATION_FIELDS at this revision.
RUN_FIELDS = (
    "job_id",
    "parent_run_id",
    "root_run_id",
    "started_by_user_id",
    "start_reason",
    "ended_reason",
    "external_id",
    "attempt",
    "running_log_url",
    "persistent_log_url",
)
OPERATION_FIELDS = ("run_id", "name", "type", "group", "description", "sql_query", "ended_reason")

IO_MOVE = """
  INSERT INTO {t} AS x (created_at, operation_id, dataset_id, run_id, job_id, schema_id,
                        schema_time, num_rows, num_bytes, num_files, last_event_time{extra_cols})
  SELECT created_at, operation_id, p_target, run_id, job_id, schema_id,
         schema_time, num_rows, num_bytes, num_files, last_event_time{extra_cols}
  FROM {t} WHERE dataset_id = p_source
  ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET
    schema_id = CASE WHEN {newer} THEN excluded.schema_id ELSE x.schema_id END,
    schema_time = CASE WHEN {newer} THEN excluded.schema_time ELSE x.schema_time END,
    num_rows = GREATEST(x.num_rows, excluded.num_rows),
    num_bytes = GREATEST(x.num_bytes, excluded.num_bytes),
    num_files = GREATEST(x.num_files, excluded.num_files),
    last_event_time = GREATEST(x.last_event_time, excluded.last_event_time){extra_set};
  DELETE FROM {t} WHERE dataset_id = p_source;
"""

# The moved row's schema wins when it is later, or as late and of a greater digest.
SCHEMA_NEWER = """excluded.schema_id IS NOT NULL AND (x.schema_id IS NULL
      OR excluded.schema_time > x.schema_time
      OR excluded.schema_time = x.schema_time AND excluded.schema_id <> x.schema_id
         AND (SELECT s.digest FROM schema s WHERE s.id = excluded.schema_id)
           > (SELECT s.digest FROM schema s WHERE s.id = x.schema_id))"""


def _backfill(table: str, fields: tuple[str, ...]) -> str:
    times = ", ".join(
        f'CASE WHEN "{f}" IS NULL THEN NULL ELSE last_event_time END' for f in fields
    )
    return f"UPDATE {table} SET field_times = ARRAY[{times}]::timestamptz[]"


def upgrade() -> None:
    # By import_module: 0006's module name starts with a digit.
    merge_datasets = _module_0006().merge_datasets
    for table, fields in (("run", RUN_FIELDS), ("operation", OPERATION_FIELDS)):
        op.add_column(table, sa.Column("field_times", postgresql.ARRAY(sa.DateTime(True))))
        op.execute(_backfill(table, fields))
    for table in ("input", "output"):
        op.add_column(table, sa.Column("schema_time", sa.DateTime(True)))
        op.execute(
            f"UPDATE {table} SET schema_time = last_event_time WHERE schema_id IS NOT NULL"
        )
    op.execute(merge_datasets(IO_MOVE.replace("{newer}", SCHEMA_NEWER)))


def downgrade() -> None:
    module = _module_0006()
    op.execute(module.merge_datasets(module.IO_MOVE))
    for table in ("input", "output"):
        op.drop_column(table, "schema_time")
    for table in ("run", "operation"):
        op.drop_column(table, "field_times")


def _module_0006() -> ModuleType:
    return importlib.import_module("migrations.versions.0006_merge_schema_by_digest")
