"""merge functions: one location/dataset/job merge algorithm for consumer and API

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21

The consumer merges locations when an event reveals that two are one cluster;
the read API's location admin merges them on request. Both call these
functions, so the algorithm exists once, next to the data, and runs in the
caller's transaction. Merged rows follow the consumer's merge rules: counters
take the maximum, kinds are unioned, first/last seen widen.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

IO_MOVE = """
  INSERT INTO {t} AS x (created_at, operation_id, dataset_id, run_id, job_id, schema_id,
                        num_rows, num_bytes, num_files, last_event_time{extra_cols})
  SELECT created_at, operation_id, p_target, run_id, job_id, schema_id,
         num_rows, num_bytes, num_files, last_event_time{extra_cols}
  FROM {t} WHERE dataset_id = p_source
  ON CONFLICT (created_at, operation_id, dataset_id) DO UPDATE SET
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
  SELECT {job}, {dataset}, direction, first_seen_at, last_seen_at
  FROM job_dataset WHERE {col} = p_source
  ON CONFLICT (job_id, dataset_id, direction) DO UPDATE SET
    first_seen_at = LEAST(x.first_seen_at, excluded.first_seen_at),
    last_seen_at = GREATEST(x.last_seen_at, excluded.last_seen_at);
  DELETE FROM job_dataset WHERE {col} = p_source;
"""

MERGE_DATASETS = f"""
CREATE OR REPLACE FUNCTION threadline_merge_datasets(p_target bigint, p_source bigint)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_target = p_source THEN RETURN; END IF;
  {IO_MOVE.format(t="input", extra_cols="", extra_set="")}
  {IO_MOVE.format(t="output", extra_cols=", types", extra_set=", types = x.types | excluded.types")}
  {CLL_MOVE.format(src="p_target", tgt="target_dataset_id", col="source_dataset_id")}
  {CLL_MOVE.format(src="source_dataset_id", tgt="p_target", col="target_dataset_id")}
  {JOB_DATASET_MOVE.format(job="job_id", dataset="p_target", col="dataset_id")}
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

MERGE_JOBS = f"""
CREATE OR REPLACE FUNCTION threadline_merge_jobs(p_target bigint, p_source bigint)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_target = p_source THEN RETURN; END IF;
  UPDATE run SET job_id = p_target WHERE job_id = p_source;
  UPDATE input SET job_id = p_target WHERE job_id = p_source;
  UPDATE output SET job_id = p_target WHERE job_id = p_source;
  UPDATE column_lineage SET job_id = p_target WHERE job_id = p_source;
  UPDATE job SET parent_job_id = p_target WHERE parent_job_id = p_source;
  {JOB_DATASET_MOVE.format(job="p_target", dataset="dataset_id", col="job_id")}
  UPDATE job SET
    type = CASE WHEN job.type = 'UNKNOWN' THEN s.type ELSE job.type END,
    parent_job_id = COALESCE(job.parent_job_id, NULLIF(s.parent_job_id, p_target))
    FROM job s WHERE job.id = p_target AND s.id = p_source;
  DELETE FROM job WHERE id = p_source;
END
$fn$;
"""

MERGE_LOCATIONS = """
CREATE OR REPLACE FUNCTION threadline_merge_locations(p_target bigint, p_source bigint)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  pair record;
BEGIN
  IF p_target = p_source THEN
    RAISE EXCEPTION 'cannot merge location % into itself', p_target USING ERRCODE = '22023';
  END IF;
  -- Same-named datasets/jobs on both sides become one row; the rest just move.
  FOR pair IN SELECT t.id AS target, s.id AS source FROM dataset s
              JOIN dataset t ON t.location_id = p_target AND t.name = s.name
              WHERE s.location_id = p_source ORDER BY s.id LOOP
    PERFORM threadline_merge_datasets(pair.target, pair.source);
  END LOOP;
  UPDATE dataset SET location_id = p_target WHERE location_id = p_source;
  FOR pair IN SELECT t.id AS target, s.id AS source FROM job s
              JOIN job t ON t.location_id = p_target AND t.name = s.name
              WHERE s.location_id = p_source ORDER BY s.id LOOP
    PERFORM threadline_merge_jobs(pair.target, pair.source);
  END LOOP;
  UPDATE job SET location_id = p_target WHERE location_id = p_source;
  UPDATE address SET location_id = p_target WHERE location_id = p_source;
  UPDATE location SET external_id = COALESCE(location.external_id, s.external_id)
    FROM location s WHERE location.id = p_target AND s.id = p_source;
  DELETE FROM location WHERE id = p_source;
END
$fn$;
"""


def upgrade() -> None:
    op.execute(MERGE_DATASETS)
    op.execute(MERGE_JOBS)
    op.execute(MERGE_LOCATIONS)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS threadline_merge_locations(bigint, bigint)")
    op.execute("DROP FUNCTION IF EXISTS threadline_merge_jobs(bigint, bigint)")
    op.execute("DROP FUNCTION IF EXISTS threadline_merge_datasets(bigint, bigint)")
