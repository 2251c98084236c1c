"""merge functions: a merged input/output keeps the schema with the greater digest

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-21

0002's IO move kept the target row's schema_id on conflict, so the schema of a
merged row depended on which location was merged into which: the consumer's
order-independence property test found it. The consumer's rule (greatest schema
digest) now applies here too.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

IO_MOVE = """
  INSERT INTO {t} AS x (created_at, operation_id, dataset_id, run_id, job_id, schema_id,
                        num_rows, num_bytes, num_files, last_event_time{extra_cols})
  SELECT created_at, operation_id, p_target, run_id, job_id, schema_id,
         num_rows, num_bytes, num_files, last_event_time{extra_cols}
  FROM {t} WHERE dataset_id = p_source
  ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET
    schema_id = (SELECT s.id FROM schema s WHERE s.id IN (x.schema_id, excluded.schema_id)
                 ORDER BY s.digest DESC LIMIT 1),
    num_rows = GREATEST(x.num_rows, excluded.num_rows),
    num_bytes = GREATEST(x.num_bytes, excluded.num_bytes),
    num_files = GREATEST(x.num_files, excluded.num_files),
    last_event_time = GREATEST(x.last_event_time, excluded.last_event_time){extra_set};
  DELETE FROM {t} WHERE dataset_id = p_source;
"""

CLL_MOVE = """
  INSERT INTO column_lineage AS x (created_at, operation_id, source_dataset_id, source_column,
      target_dataset_id, target_column, run_id, job_id, types, last_event_time)
  SELECT created_at, operation_id, {src}, source_column, {tgt}, target_column,
         run_id, job_id, types, last_event_time
  FROM column_lineage WHERE {col} = p_source
  ON CONFLICT (created_at, operation_id, source_dataset_id, source_column, target_dataset_id,
               target_column) DO UPDATE SET
    types = x.types | excluded.types,
    last_event_time = GREATEST(x.last_event_time, excluded.last_event_time);
  DELETE FROM column_lineage WHERE {col} = p_source;
"""

JOB_DATASET_MOVE = """
  INSERT INTO job_dataset AS x (job_id, dataset_id, direction, first_seen_at, last_seen_at)
  SELECT job_id, p_target, direction, first_seen_at, last_seen_at
  FROM job_dataset WHERE dataset_id = p_source
  ON CONFLICT (job_id, dataset_id, direction) DO UPDATE SET
    first_seen_at = LEAST(x.first_seen_at, excluded.first_seen_at),
    last_seen_at = GREATEST(x.last_seen_at, excluded.last_seen_at);
  DELETE FROM job_dataset WHERE dataset_id = p_source;
"""


def merge_datasets(io_move: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION threadline_merge_datasets(p_target bigint, p_source bigint)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_target = p_source THEN RETURN; END IF;
  {io_move.format(t="input", extra_cols="", extra_set="")}
  {io_move.format(t="output", extra_cols=", types", extra_set=", types = x.types | excluded.types")}
  {CLL_MOVE.format(src="p_target", tgt="target_dataset_id", col="source_dataset_id")}
  {CLL_MOVE.format(src="source_dataset_id", tgt="p_target", col="target_dataset_id")}
  {JOB_DATASET_MOVE}
  INSERT INTO dataset_symlink (from_dataset_id, to_dataset_id, type)
    SELECT CASE WHEN from_dataset_id = p_source THEN p_target ELSE from_dataset_id END,
           CASE WHEN to_dataset_id = p_source THEN p_target ELSE to_dataset_id END, type
    FROM dataset_symlink WHERE p_source IN (from_dataset_id, to_dataset_id)
    ON CONFLICT DO NOTHING;
  DELETE FROM dataset_symlink
    WHERE p_source IN (from_dataset_id, to_dataset_id) OR from_dataset_id = to_dataset_id;
  UPDATE dataset SET format = COALESCE(dataset.format, s.format)
    FROM dataset s WHERE dataset.id = p_target AND s.id = p_source;
  DELETE FROM dataset WHERE id = p_source;
END
$fn$;
"""


def upgrade() -> None:
    op.execute(merge_datasets(IO_MOVE))


def downgrade() -> None:
    # 0002's version: the target row's schema_id wins on conflict.
    op.execute(merge_datasets(IO_MOVE.replace(
        """    schema_id = (SELECT s.id FROM schema s WHERE s.id IN (x.schema_id, excluded.schema_id)
                 ORDER BY s.digest DESC LIMIT 1),
""", "")))
