#!/usr/bin/env bash
# Data.Rentgen through the same harness: ingest (1 and 2 consumers, 20k events), then the
# lineage API on a ~40k-event database built by its own consumer. Results: benchmarks/results/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PY=.venv/bin/python
$PY -m benchmarks.ingest --system data-rentgen --consumers 1 2 \
  --events-file /tmp/bench-data/events-20k.ndjson --out benchmarks/results/ingest.json
$PY -m benchmarks.ingest --system data-rentgen --consumers 1 \
  --events-file /tmp/bench-data/events-40k.ndjson --database bench_dr_40k
# Start datasets come from the Threadline 40k database (benchmarks/run_all.sh builds it first).
$PY -m benchmarks.api --system data-rentgen --database bench_dr_40k --starts-from bench_tl_40k \
  --events-in-database 40029 --samples 20 --warmup 2 --out benchmarks/results/api-data-rentgen-40k.json
$PY -m benchmarks.api --system data-rentgen --database bench_dr_40k --starts-from bench_tl_40k \
  --start-kind JOB --granularities JOB RUN --depths 1 3 5 --samples 20 --warmup 2 \
  --out benchmarks/results/api-data-rentgen-40k-jobs.json
