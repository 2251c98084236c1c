-- Synthetic lineage for timing the lineage queries (not a test; see lineage_bench.py).
-- Run on an empty, migrated database:
--   psql "$URL" -v scale=1 -f tests/server/lineage_bench_seed.sql
--
-- Shape at scale 1 (one year, 2024-01 .. 2024-12, monthly partitions):
--   10 layers x 50 lineage datasets + 4,500 datasets with no lineage, 500 Hive path twins
--   550 jobs: 500 workers in 9 layers (each reads 2 datasets of layer L, writes 2 of L+1)
--             and 50 Airflow DAGs; 100 runs per job -> 50,000 worker runs + 5,000 DAG runs
--   one operation per run (id = run id, as for non-Spark producers)
--   100,000 inputs + 100,000 outputs, 100,000 column lineage rows (one column set)
-- Each lineage dataset is read and written by ~2 jobs, so one dataset at RUN granularity
-- has ~200 run neighbours over the year (a week holds ~4).

\set ON_ERROR_STOP on
\if :{?scale}
\else
  \set scale 1
\endif

SELECT threadline_ensure_partition(make_date(2024, m, 1)) FROM generate_series(1, 12) AS m;

INSERT INTO location (type, name)
SELECT t, 'bench-' || t || '-' || i
FROM unnest(ARRAY['postgres', 'hdfs', 'hive', 'kafka', 'namespace']) AS t, generate_series(1, 2) AS i;

INSERT INTO schema (digest, fields)
SELECT md5('schema' || s)::uuid,
       jsonb_build_array(jsonb_build_object('name', 'c' || s, 'type', 'string'))
FROM generate_series(1, 20) AS s;

-- Datasets 1..5000 (1..500 carry lineage), then 500 Hive path twins of datasets 1..500.
INSERT INTO dataset (id, location_id, name)
OVERRIDING SYSTEM VALUE
SELECT d, 1 + d % 2, 'bench.public.t' || lpad(d::text, 5, '0')
FROM generate_series(1, 5000) AS d;
INSERT INTO dataset (id, location_id, name)
OVERRIDING SYSTEM VALUE
SELECT 5000 + d, 3, '/warehouse/bench/t' || d FROM generate_series(1, 500) AS d;
SELECT setval(pg_get_serial_sequence('dataset', 'id'), 5500);

INSERT INTO dataset_symlink (from_dataset_id, to_dataset_id, type)
SELECT 5000 + d, d, 'METASTORE' FROM generate_series(1, 500) AS d
UNION ALL
SELECT d, 5000 + d, 'WAREHOUSE' FROM generate_series(1, 500) AS d;

-- Jobs 1..500 are workers, 501..550 Airflow DAGs (worker j's parent DAG is 501 + j % 50).
INSERT INTO job (id, location_id, name, type, parent_job_id)
OVERRIDING SYSTEM VALUE
SELECT j, 9, 'bench_dag_' || j, 'AIRFLOW_DAG', NULL FROM generate_series(501, 550) AS j;
INSERT INTO job (id, location_id, name, type, parent_job_id)
OVERRIDING SYSTEM VALUE
SELECT j, 9 + j % 2, 'bench_job_' || j, 'SPARK_APPLICATION', 501 + j % 50
FROM generate_series(1, 500) AS j;
SELECT setval(pg_get_serial_sequence('job', 'id'), 550);

-- A UUIDv7 carrying `ts` (whole milliseconds), as real OpenLineage producers send.
CREATE FUNCTION pg_temp.uuid7(ts timestamptz, seed text) RETURNS uuid
LANGUAGE sql IMMUTABLE AS $$
  SELECT (lpad(to_hex(floor(extract(epoch FROM ts) * 1000)::bigint), 12, '0')
          || '7' || substr(md5(seed), 1, 3) || '8' || substr(md5(seed), 4, 15))::uuid
$$;

-- Run k (1..100 * scale) of job j; DAG runs of job 501+j%50 parent the worker runs.
CREATE TEMP TABLE bench_run AS
SELECT j AS job_id, k, created_at, pg_temp.uuid7(created_at, j || '-' || k) AS id
FROM generate_series(1, 550) AS j, generate_series(1, 100 * :scale) AS k,
     LATERAL (SELECT timestamptz '2024-01-01 00:00+00'
                     + (k - 1) * interval '3.6 days' / :scale + j * interval '1 minute'
                     AS created_at) AS t;

INSERT INTO run (created_at, id, job_id, parent_run_id, status, started_at, ended_at,
                 external_id, attempt, last_event_time)
SELECT r.created_at, r.id, r.job_id, dag.id,
       2, r.created_at, r.created_at + interval '10 minutes', 'ext-' || r.k, 1,
       r.created_at + interval '10 minutes'
FROM bench_run AS r
LEFT JOIN bench_run AS dag ON r.job_id <= 500 AND dag.job_id = 501 + r.job_id % 50 AND dag.k = r.k;

INSERT INTO operation (created_at, id, run_id, name, status, started_at, ended_at, last_event_time)
SELECT created_at, id, id, 'op', 2, created_at, created_at + interval '10 minutes',
       created_at + interval '10 minutes'
FROM bench_run WHERE job_id <= 500;

-- Worker j is in layer L = (j - 1) % 9: reads 2 of the 50 datasets of layer L, writes 2 of L+1.
CREATE TEMP TABLE bench_io AS
SELECT j AS job_id, 0 AS direction, ((j - 1) % 9) * 50 + (j * 7) % 50 + 1 AS dataset_id
FROM generate_series(1, 500) AS j
UNION
SELECT j, 0, ((j - 1) % 9) * 50 + (j * 13 + 3) % 50 + 1 FROM generate_series(1, 500) AS j
UNION
SELECT j, 1, ((j - 1) % 9 + 1) * 50 + (j * 11) % 50 + 1 FROM generate_series(1, 500) AS j
UNION
SELECT j, 1, ((j - 1) % 9 + 1) * 50 + (j * 17 + 5) % 50 + 1 FROM generate_series(1, 500) AS j;

INSERT INTO input (created_at, operation_id, dataset_id, run_id, job_id, schema_id,
                   num_rows, num_bytes, num_files, last_event_time)
SELECT r.created_at, r.id, io.dataset_id, r.id, r.job_id, 1 + io.dataset_id % 20,
       1000 + r.k, 100000 + r.k, 1 + r.k % 5, r.created_at + interval '10 minutes'
FROM bench_run AS r JOIN bench_io AS io ON io.job_id = r.job_id AND io.direction = 0;

INSERT INTO output (created_at, operation_id, dataset_id, run_id, job_id, schema_id,
                    num_rows, num_bytes, num_files, last_event_time, types)
SELECT r.created_at, r.id, io.dataset_id, r.id, r.job_id, 1 + io.dataset_id % 20,
       900 + r.k, 90000 + r.k, 1 + r.k % 3, r.created_at + interval '10 minutes', 8
FROM bench_run AS r JOIN bench_io AS io ON io.job_id = r.job_id AND io.direction = 1;

-- One column set, c1 -> c1 DIRECT; its id is its digest (consumer/extract/columns.py).
INSERT INTO column_set (id, source_columns, target_columns, types)
SELECT encode(substring(sha256('2:c1 2:c1 1;') FROM 1 FOR 16), 'hex')::uuid, '{c1}', '{c1}', '{1}';

INSERT INTO column_lineage (created_at, operation_id, source_dataset_id, target_dataset_id,
                            column_set_id, run_id, job_id, last_event_time)
SELECT o.created_at, o.operation_id, i.dataset_id, o.dataset_id, (SELECT id FROM column_set),
       o.run_id, o.job_id, o.last_event_time
FROM output AS o
JOIN input AS i ON i.operation_id = o.operation_id AND i.created_at = o.created_at
WHERE i.dataset_id % 2 = o.dataset_id % 2;

ANALYZE;
