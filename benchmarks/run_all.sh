#!/usr/bin/env bash
# Every measurement of benchmarks/README.md, in order. Check the machine is quiet first:
#   uptime (1-min load < 0.5) and `ps aux --sort=-%cpu | head` (no tests, Spark, builds).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=.venv/bin/python
R=benchmarks/results
benchmarks/setup.sh
# Ingest: Threadline, 1 and 2 consumer processes, 20k events.
$PY -m benchmarks.ingest --system threadline --consumers 1 2 \
  --events-file /tmp/bench-data/events-20k.ndjson --out $R/ingest.json
# The same with the Python decode + extract only (the native step's A/B).
THREADLINE__CONSUMER__NATIVE_EXTRACT=false $PY -m benchmarks.ingest --system threadline \
  --consumers 1 2 --events-file /tmp/bench-data/events-20k.ndjson --out $R/ingest.json
# In process: each stage's CPU per event (native too), records per event, the real corpus.
$PY -m benchmarks.stages --events-file /tmp/bench-data/events-20k.ndjson > $R/stages-native.json
$PY -m benchmarks.floor --events-file /tmp/bench-data/events-20k.ndjson --out $R/floor-20k.json
# The same events with UUIDv4 run ids, and without Kafka keys (random partitions).
$PY -m benchmarks.ingest --system threadline --consumers 1 2 \
  --events-file /tmp/bench-data/events-20k-v4.ndjson --out $R/ingest.json
$PY -m benchmarks.ingest --system threadline --consumers 1 2 --unkeyed \
  --events-file /tmp/bench-data/events-20k.ndjson --out $R/ingest-unkeyed.json
# Physical limits for the same stream (needs the rows of the last Threadline ingest).
$PY -m benchmarks.limits --events-file /tmp/bench-data/events-20k.ndjson \
  --rows-from bench_threadline_ingest --out $R/limits-20k.json
# ~40k-event database through Kafka and the consumer; lineage latencies.
$PY -m benchmarks.ingest --system threadline --consumers 1 \
  --events-file /tmp/bench-data/events-40k.ndjson --database bench_tl_40k
$PY -m benchmarks.api --system threadline --database bench_tl_40k --starts-from bench_tl_40k \
  --events-in-database 40029 --samples 30 --max-nodes 1000000 --out $R/api-threadline-40k.json
$PY -m benchmarks.api --system threadline --database bench_tl_40k --starts-from bench_tl_40k \
  --start-kind JOB --granularities JOB RUN --depths 1 3 5 --samples 20 --max-nodes 1000000 \
  --out $R/api-threadline-40k-jobs.json
# 1M-event database (through consumer.ingest.Pipeline, two processes) and its latencies.
$PY -m benchmarks.seed --events 1000000 --database bench_threadline_1m --workers 2
$PY -m benchmarks.api --system threadline --database bench_threadline_1m \
  --starts-from bench_threadline_1m --events-in-database 1000000 --samples 30 \
  --out $R/api-threadline-1m.json
$PY -m benchmarks.api --system threadline --database bench_threadline_1m \
  --starts-from bench_threadline_1m --events-in-database 1000000 --samples 30 --window-days 7 \
  --out $R/api-threadline-1m-7d.json
# Ingest into a copy of the 1M-event database: new UUIDv7 ids, UUIDv4 ids (backwards too).
for f in v7-fresh v4; do
  $PY -m benchmarks.grown --template bench_threadline_1m \
    --events-file /tmp/bench-data/events-20k-$f.ndjson --out $R/grown-1m.json
done
$PY -m benchmarks.grown --template bench_threadline_1m --reverse \
  --events-file /tmp/bench-data/events-20k-v4.ndjson --out $R/grown-1m.json
# The 1M-event stream with UUIDv4 run ids, and its RUN lineage over 7 days.
$PY -m benchmarks.seed --events 1000000 --database bench_tl_1m_v4 --workers 2 --run-ids v4
$PY -m benchmarks.api --system threadline --database bench_tl_1m_v4 \
  --starts-from bench_threadline_1m --events-in-database 1000000 --samples 30 --window-days 7 \
  --depths 5 --granularities RUN JOB --max-nodes 1000000 --out $R/api-threadline-1m-v4-7d.json
# Data.Rentgen, same harness.
benchmarks/rentgen/run.sh
# Depth-3 lineage of both systems, alternated in three rounds (the target's ratio).
benchmarks/depth3_rounds.sh 3
# Data.Rentgen's 1M-event database from Kafka, then depth 5 on both 1M databases in rounds.
benchmarks/rentgen/run_1m.sh
benchmarks/depth5_1m_rounds.sh 3
$PY -m benchmarks.report
